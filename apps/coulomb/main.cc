// coulomb: command-line front end of the library. Subcommands are registered from their own
// files (see commands.h); this file parses the command line, runs the chosen subcommand and
// maps failures to exit statuses:
//   0  success (and --help, --version)
//   1  an error while running (bad model file, wrong state vector, ...)
//   2  a usage error: found while parsing the command line (unknown option or subcommand,
//      missing argument) or an option's value out of range (cli::UsageError)
//   3  a result with a caveat, printed in full (simulate: unconverged steps, or --strict and a
//      warning; id: an inconsistent desired motion, answered by the closest feasible one)
//      (control: a robot that fell is a measured result, exit 0)
// Errors are printed to stderr as "coulomb: error: <message>".
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

#ifndef COULOMB_VERSION
#error "COULOMB_VERSION is defined by apps/coulomb/CMakeLists.txt from the project version"
#endif

namespace coulomb::cli {

void print_warnings_and_notes(const std::vector<std::string>& warnings, const std::vector<std::string>& notes,
                              const std::string& where_listed) {
  for (const std::string& w : warnings) std::cerr << "coulomb: warning: " << w << "\n";
  constexpr size_t kShown = 2;
  for (size_t i = 0; i < std::min(kShown, notes.size()); ++i) std::cerr << "coulomb: note: " << notes[i] << "\n";
  if (notes.size() > kShown)
    std::cerr << "coulomb: note: … and " << notes.size() - kShown << " more like these"
              << (where_listed.empty() ? "" : " (all in " + where_listed + ")") << "\n";
}

std::string closest_name(const std::string& word, const std::vector<std::string>& names) {
  // Levenshtein distance, two rows.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      current[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(previous, current);
    }
    return previous[b.size()];
  };
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& name : names) {
    const size_t d = distance(word, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace coulomb::cli

namespace {

// Subcommands of the architecture (../shared/design/ARCHITECTURE.md, the CLI) that are not built
// yet, with what they will do.
const std::vector<std::pair<std::string, std::string>> kPlannedCommands = {};

// An unknown or planned subcommand in argv[1]: a clear message and exit status 2, before CLI11
// (which would say only that the argument was not expected). Returns -1 otherwise.
int check_subcommand(int argc, char** argv, const std::vector<std::string>& built) {
  if (argc < 2 || argv[1][0] == '-') return -1;
  const std::string word = argv[1];
  if (std::find(built.begin(), built.end(), word) != built.end()) return -1;
  for (const auto& [name, what] : kPlannedCommands)
    if (word == name) {
      std::cerr << "coulomb: error: 'coulomb " << name << "' (" << what << ") is planned but not built yet\n";
      return 2;
    }
  std::vector<std::string> candidates = built;
  for (const auto& planned : kPlannedCommands) candidates.push_back(planned.first);
  const std::string suggestion = coulomb::cli::closest_name(word, candidates);
  std::cerr << "coulomb: error: unknown subcommand '" << word << "'";
  if (!suggestion.empty()) std::cerr << "; did you mean '" << suggestion << "'?";
  std::cerr << "\nRun 'coulomb --help' for the subcommands.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"coulomb: multibody dynamics with frictional contact.\n"
               "Units are SI (m, kg, s, N, rad); gravity is (0, 0, -9.81) m/s^2.",
               "coulomb"};
  app.set_version_flag("--version", std::string("coulomb ") + COULOMB_VERSION, "Print the version and exit");
  app.require_subcommand(1);
  app.footer("Run 'coulomb SUBCOMMAND --help' for the options of a subcommand.");

  std::vector<coulomb::cli::Command> commands;
  commands.push_back(coulomb::cli::add_dynamics_command(app));
  commands.push_back(coulomb::cli::add_id_command(app));
  commands.push_back(coulomb::cli::add_inspect_command(app));
  commands.push_back(coulomb::cli::add_simulate_command(app));
  commands.push_back(coulomb::cli::add_bench_command(app));
  commands.push_back(coulomb::cli::add_report_command(app));
  commands.push_back(coulomb::cli::add_control_command(app));
  commands.push_back(coulomb::cli::add_experiment_command(app));
  commands.push_back(coulomb::cli::add_fclib_command(app));

  std::vector<std::string> built;
  for (const coulomb::cli::Command& command : commands) built.push_back(command.app->get_name());
  if (const int status = check_subcommand(argc, argv, built); status >= 0) return status;

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
  } catch (const coulomb::cli::UsageError& e) {
    std::cerr << "coulomb: error: " << e.what() << "\n";
    std::cerr << "Run 'coulomb --help' or 'coulomb SUBCOMMAND --help' for usage.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "coulomb: error: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "coulomb: error: no subcommand given\n";
  return 2;
}
