// The output folder of a simulation run (run_output.h).
#include "run_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

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

void prepare_output_directory(const std::string& directory) {
  fs::create_directories(directory);
  // A run that fails must not leave a previous run's summary looking like its own: the files
  // written last (stats.json, the HTML pages) go first.
  for (const char* stale : {"stats.json", "report.html", "replay.html", "contacts.csv"})
    fs::remove(fs::path(directory) / stale);
}

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
      trajectory_(dir_ + "/trajectory.csv", scene),
      steps_(std::in_place, dir_ + "/steps.csv"),
      next_output_(options_.output_period) {
  if (options_.contacts) contacts_.emplace(dir_ + "/contacts.csv", scene, time_step_);
  stats_.friction_model = solvers::lstable::to_string(parameters.lstable.friction);
  stats_.energy_initial = scene_energy(scene, q0, v0);
  stats_.energy_final = stats_.energy_initial;
  trajectory_.write(0.0, q0, v0);
  if (options_.html) {
    io::ReplayOptions replay_options;
    replay_options.title = options_.title;
    replay_options.time_step = time_step_;
    replay_.emplace(scene.model, scene.geometries, scene.visuals, replay_options);
    replay_->record(0.0, q0, contact::ContactSet{}, Eigen::VectorXd(), true);
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

void RunOutputs::finish(const std::vector<std::string>& run_warnings, const std::string& solver,
                        const std::string& integrator, const std::string& contact_approximation,
                        const std::string& scene_name) {
  trajectory_.close();
  steps_->close();
  steps_.reset();  // closed before the report reads it
  if (contacts_) contacts_->close();
  stats_.warnings = scene_.warnings;
  stats_.warnings.insert(stats_.warnings.end(), run_warnings.begin(), run_warnings.end());
  stats_.notes = scene_.notes;
  if (replay_) stats_.notes.insert(stats_.notes.end(), replay_->notes().begin(), replay_->notes().end());
  io::write_stats_json(dir_ + "/stats.json", stats_, solver, integrator, time_step_, scene_name, scene_.model.nv(),
                       contact_approximation, &scene_);
  if (replay_) {
    replay_bytes_ = replay_->write(dir_ + "/replay.html");
    report_bytes_ = io::write_report(dir_);
  }
}

int RunOutputs::replay_frames() const { return replay_ ? replay_->num_frames() : 0; }

}  // namespace coulomb::cli
