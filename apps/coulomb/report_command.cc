// `coulomb report DIR`: regenerates DIR/report.html (the stats.json summary and plots of the
// steps.csv series) from a `coulomb simulate` output folder.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "coulomb/io/report_writer.h"

#include "commands.h"

namespace coulomb::cli {

namespace {

struct ReportOptions {
  std::string directory;
  bool quiet = false;
};

int run_report(const ReportOptions& o) {
  if (!std::filesystem::is_directory(o.directory))
    throw std::invalid_argument(o.directory + ": not a folder (give the output folder of `coulomb simulate`)");
  const std::size_t bytes = io::write_report(o.directory);
  if (!o.quiet) {
    char size[32];
    std::snprintf(size, sizeof size, "%.0f kB", bytes / 1e3);
    std::cout << "wrote " << (std::filesystem::path(o.directory) / "report.html").string() << " (" << size << ")\n";
  }
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Regenerate DIR/report.html from a `coulomb simulate` output folder: the stats.json summary\n"
      "at the top, then plots over time of the steps.csv series (SAP and line-search iterations,\n"
      "contacts, momentum error, max penetration, energy, wall time per step). One self-contained\n"
      "file (uPlot inlined) that opens offline; links replay.html when the folder has one.\n"
      "Runs with more than 20000 steps are plotted in buckets of consecutive steps (largest value).");
  sub->add_option("dir", options->directory, "Output folder of `coulomb simulate` (with steps.csv and stats.json)")
      ->required();
  sub->add_flag("-q,--quiet", options->quiet, "Print nothing on success");
  return Command{sub, [options] { return run_report(*options); }};
}

}  // namespace coulomb::cli
