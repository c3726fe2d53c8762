// The output folder of a simulation run (run_output.h).
#include "run_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "coulomb/io/report_writer.h"
#include "coulomb/multibody/energy.h"

namespace coulomb::cli {

namespace fs = std::filesystem;

void print_progress(double t, double duration, double wall, double mean_iterations, bool final) {
  const int width = 30;
  const double fraction = duration > 0 ? std::min(1.0, t / duration) : 1.0;
  const int filled = static_cast<int>(std::lround(fraction * width));
  std::fprintf(stderr, "\r[%s%s] t = %6.2f / %.2f s   real-time factor %6.2f   mean SAP iterations %5.2f",
               std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(), t, duration,
               wall > 0 ? t / wall : 0.0, mean_iterations);
  if (final) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

std::string human_size(std::size_t bytes) {
  char text[32];
  if (bytes >= 1000 * 1000)
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(text, sizeof text, "%.0f kB", bytes / 1e3);
  return text;
}

std::string partial_name(const std::string& name) { return name + ".partial"; }

void prepare_output_directory(const std::string& directory) {
  fs::create_directories(directory);
  // A run that fails must not leave a previous run's files looking like its own, and a link
  // planted at an output name must not redirect a write outside the folder: every output name
  // (and its temporary name) is removed first — fs::remove deletes a link, not its target.
  for (const char* name : kOutputFiles)
    for (const std::string& file : {std::string(name), partial_name(name)}) {
      std::error_code ec;
      fs::remove(fs::path(directory) / file, ec);
      if (ec) throw std::runtime_error((fs::path(directory) / file).string() + ": cannot remove the file of an earlier run: " + ec.message());
    }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string partial = partial_name(path);
  std::error_code ec;
  fs::remove(partial, ec);  // a link there is removed, not followed
  {
    std::FILE* f = std::fopen(partial.c_str(), "wbx");  // x: O_EXCL, never through a link
    if (f == nullptr) throw std::runtime_error(partial + ": cannot open for writing");
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed) throw std::runtime_error(partial + ": write failed (disk full?); " + path + " was not written");
  }
  fs::rename(partial, path, ec);
  if (ec) throw std::runtime_error(path + ": cannot rename " + partial + " to it: " + ec.message());
}

namespace {

// Renames a closed "<name>.partial" to its final name.
void publish(const std::string& path) {
  std::error_code ec;
  fs::rename(partial_name(path), path, ec);
  if (ec) throw std::runtime_error(path + ": cannot rename " + partial_name(path) + " to it: " + ec.message());
}

}  // namespace

double scene_energy(const scene::Scene& scene, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  multibody::Workspace ws(scene.model);
  double E = multibody::kinetic_energy(scene.model, ws, q, v) + multibody::potential_energy(scene.model, ws, q);
  for (const scene::JointSpring& s : scene.springs) {
    const double x = q[s.q_index] - s.rest_position;
    E += 0.5 * s.stiffness * x * x;
  }
  return E;
}

RunOutputs::RunOutputs(const scene::Scene& scene, const simulation::SimulatorParameters& parameters,
                       RunOutputOptions options, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0)
    : scene_(scene),
      time_step_(parameters.time_step),
      options_(std::move(options)),
      dir_(fs::path(options_.directory).string()),
      trajectory_(partial_name(dir_ + "/trajectory.csv"), scene),
      steps_(std::in_place, partial_name(dir_ + "/steps.csv")),
      next_output_(options_.output_period) {
  if (options_.contacts) contacts_.emplace(partial_name(dir_ + "/contacts.csv"), scene, time_step_);
  stats_.friction_model = solvers::lstable::to_string(parameters.lstable.friction);
  stats_.energy_initial = scene_energy(scene, q0, v0);
  stats_.energy_final = stats_.energy_initial;
  scene_name_ = options_.title;
  write_stats("running");
  try {
    trajectory_.write(0.0, q0, v0);
    if (options_.html) {
      io::ReplayOptions replay_options;
      replay_options.title = options_.title;
      replay_options.time_step = time_step_;
      replay_.emplace(scene.model, scene.geometries, scene.visuals, replay_options);
      replay_->record(0.0, q0, contact::ContactSet{}, Eigen::VectorXd(), true);
    }
  } catch (...) {  // e.g. a body the replay cannot store: no destructor runs, so say it here
    try {
      write_stats("failed");
    } catch (...) {
    }
    throw;
  }
}

void RunOutputs::record(const simulation::Simulator& sim, bool last) {
  const simulation::StepStats& s = sim.last_step();
  stats_.add(s);
  const double dt = time_step_;
  // output_period: a row when t has reached the next output time (and always the last step).
  if (last || s.time >= next_output_ - 1e-9 * dt) {
    if (options_.output_period > 0.0)
      while (next_output_ <= s.time + 1e-9 * dt) next_output_ += options_.output_period;
    steps_->write(s);
    trajectory_.write(s.time, sim.q(), sim.v(), &sim.last_results());
    if (contacts_) contacts_->write(s.time, sim.last_results());
    if (replay_) replay_->record(s.time, sim.q(), sim.contacts(), sim.contact_impulses(), last);
  }
}

void RunOutputs::write_stats(const std::string& status) {
  stats_.status = status;
  const std::string partial = partial_name(dir_ + "/stats.json");
  std::error_code ec;
  fs::remove(partial, ec);
  io::write_stats_json(partial, stats_, solver_, integrator_, time_step_, scene_name_, scene_.model.nv(),
                       contact_approximation_.empty() ? "sap" : contact_approximation_, &scene_);
  publish(dir_ + "/stats.json");
}

RunOutputs::~RunOutputs() {
  if (finished_) return;
  try {
    write_stats("failed");
  } catch (...) {  // the disk may be full: stats.json then still says "running"
  }
}

void RunOutputs::finish(const std::vector<std::string>& run_warnings, const std::string& solver,
                        const std::string& integrator, const std::string& contact_approximation,
                        const std::string& scene_name) {
  solver_ = solver;
  integrator_ = integrator;
  contact_approximation_ = contact_approximation;
  scene_name_ = scene_name;
  trajectory_.close();
  publish(dir_ + "/trajectory.csv");
  steps_->close();
  steps_.reset();  // closed before the report reads it
  publish(dir_ + "/steps.csv");
  if (contacts_) {
    contacts_->close();
    publish(dir_ + "/contacts.csv");
  }
  stats_.warnings = scene_.warnings;
  stats_.warnings.insert(stats_.warnings.end(), run_warnings.begin(), run_warnings.end());
  stats_.notes = scene_.notes;
  if (replay_) stats_.notes.insert(stats_.notes.end(), replay_->notes().begin(), replay_->notes().end());
  write_stats("running");  // the whole summary, for report.html; "complete" once the pages are written
  if (replay_) {
    replay_bytes_ = replay_->write(partial_name(dir_ + "/replay.html"));
    publish(dir_ + "/replay.html");
    report_bytes_ = io::write_report(dir_);
  }
  write_stats("complete");
  finished_ = true;
}

int RunOutputs::replay_frames() const { return replay_ ? replay_->num_frames() : 0; }

}  // namespace coulomb::cli
