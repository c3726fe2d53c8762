// The output folder of a simulation run, shared by `coulomb simulate` and `coulomb control`:
// trajectory.csv, steps.csv, contacts.csv, stats.json, replay.html and report.html (writers in
// coulomb/io), the progress bar and the file-size text of the summaries.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "coulomb/io/replay_writer.h"
#include "coulomb/io/simulation_output.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::cli {

/// One progress line on stderr ("\r[####   ] t = … / … s   real-time factor …   mean SAP
/// iterations …"), ended by a newline when `final`.
void print_progress(double t, double duration, double wall, double mean_iterations, bool final);

/// "1.2 MB", "340 kB".
std::string human_size(std::size_t bytes);

/// The files a run may write into its output folder (kOutputFiles) and their temporary names
/// while being written ("<name>.partial").
inline constexpr const char* kOutputFiles[] = {"stats.json",  "trajectory.csv", "steps.csv",   "contacts.csv",
                                               "replay.html", "report.html",    "metrics.json", "series.csv"};
std::string partial_name(const std::string& name);

/// Creates `directory` and removes every output file (kOutputFiles, and their ".partial"
/// names) an earlier run left there: none of them can pass for this run's, including those this
/// run does not write (replay.html under --no-html). A symbolic link at one of these names is
/// removed, never written through. Throws std::runtime_error naming the path that cannot be
/// created or removed.
void prepare_output_directory(const std::string& directory);

/// Writes `text` to `path` through "<path>.partial" and a rename, so that `path` is either
/// missing, the previous file, or complete (and a symbolic link at `path` is replaced, not
/// followed). Throws std::runtime_error naming the file.
void write_file_atomically(const std::string& path, const std::string& text);

/// Kinetic + gravitational + joint-spring energy of the scene at (q, v) [J] (as
/// Simulator::energy, for callers holding a const simulator).
double scene_energy(const scene::Scene& scene, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

struct RunOutputOptions {
  std::string directory;      ///< existing folder (prepare_output_directory)
  std::string title;          ///< replay.html's title (the scene's name)
  bool contacts = false;      ///< also contacts.csv
  bool html = true;           ///< replay.html and report.html
  double output_period = 0.0; ///< [s] between written rows (the last step always); 0: every step
};

/// The files of one run (the output-folder contract, docs/user-guide.md "Outputs"): stats.json
/// is written first with status "running"; the CSV files are written under their ".partial"
/// names and renamed when closed; replay.html and report.html follow; stats.json is rewritten
/// last with status "complete". A run that stops early (an exception) leaves status "failed"
/// when the disk still allows it, "running" otherwise, and its CSV files under ".partial".
/// Construct it before the first step with the scene the simulator was
/// built from (or a copy of it: the writers keep a reference to `scene`, which must outlive this
/// object) and the initial state, call record() after every step and finish() at the end (which
/// needs no simulator, so a run whose simulator is gone can still be finished).
class RunOutputs {
 public:
  /// Opens trajectory.csv, steps.csv (and contacts.csv), writes the row of the initial state
  /// (q0, v0) at t = 0 and the replay's first frame. Throws std::runtime_error naming a file that
  /// cannot be written.
  RunOutputs(const scene::Scene& scene, const simulation::SimulatorParameters& parameters, RunOutputOptions options,
             const Eigen::VectorXd& q0, const Eigen::VectorXd& v0);
  /// A run that did not reach finish(): stats.json is rewritten with status "failed" (errors
  /// ignored: the disk may be full).
  ~RunOutputs();
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;
  /// Adds the last step to the statistics and writes its rows when due (always when `last`).
  void record(const simulation::Simulator& sim, bool last);
  /// Closes the CSV files and writes stats.json (with the scene's warnings and notes and the
  /// run's warnings, Simulator::warnings), replay.html and report.html.
  void finish(const std::vector<std::string>& run_warnings, const std::string& solver, const std::string& integrator,
              const std::string& contact_approximation, const std::string& scene_name);

  io::RunStatistics& stats() { return stats_; }
  const io::RunStatistics& stats() const { return stats_; }
  bool html() const { return replay_.has_value(); }
  bool contacts() const { return contacts_.has_value(); }
  std::size_t replay_bytes() const { return replay_bytes_; }
  std::size_t report_bytes() const { return report_bytes_; }
  int replay_frames() const;

 private:
  const scene::Scene& scene_;
  double time_step_ = 0.0;
  RunOutputOptions options_;
  std::string dir_;
  io::TrajectoryWriter trajectory_;
  std::optional<io::StepsWriter> steps_;
  std::optional<io::ContactsWriter> contacts_;
  std::optional<io::ReplayRecorder> replay_;
  io::RunStatistics stats_;
  double next_output_ = 0.0;
  std::size_t replay_bytes_ = 0, report_bytes_ = 0;
  bool finished_ = false;
  // finish()'s names for stats.json (kept for the destructor's "failed").
  std::string solver_, integrator_, contact_approximation_, scene_name_;
  void write_stats(const std::string& status);
};

}  // namespace coulomb::cli
