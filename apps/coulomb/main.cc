// coulomb: command-line front end of the library. Subcommands are registered from their own
// files (see commands.h); this file parses the command line, runs the chosen subcommand and
// maps failures to exit statuses:
//   0  success (and --help, --version)
//   1  an error while running (bad model file, wrong state vector, ...)
//   2  a usage error found while parsing the command line (unknown option, missing argument)
// Errors are printed to stderr as "coulomb: error: <message>".
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

#ifndef COULOMB_VERSION
#error "COULOMB_VERSION is defined by apps/coulomb/CMakeLists.txt from the project version"
#endif

int main(int argc, char** argv) {
  CLI::App app{"coulomb: multibody dynamics with frictional contact.\n"
               "Units are SI (m, kg, s, N, rad); gravity is (0, 0, -9.81) m/s^2.",
               "coulomb"};
  app.set_version_flag("--version", std::string("coulomb ") + COULOMB_VERSION, "Print the version and exit");
  app.require_subcommand(1);
  app.footer("Run 'coulomb SUBCOMMAND --help' for the options of a subcommand.");

  std::vector<coulomb::cli::Command> commands;
  commands.push_back(coulomb::cli::add_dynamics_command(app));
  commands.push_back(coulomb::cli::add_inspect_command(app));
  commands.push_back(coulomb::cli::add_simulate_command(app));
  commands.push_back(coulomb::cli::add_report_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "coulomb: error: " << e.what() << "\n";
    std::cerr << "Run 'coulomb --help' or 'coulomb SUBCOMMAND --help' for usage.\n";
    return 2;
  }

  try {
    for (const coulomb::cli::Command& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const std::exception& e) {
    std::cerr << "coulomb: error: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "coulomb: error: no subcommand given\n";
  return 2;
}
