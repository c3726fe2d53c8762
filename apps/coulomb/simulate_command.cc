// `coulomb simulate [SCENE.yaml] [-o DIR] [--duration S] [--time-step S] [--solver sap|lstable]
//  [--integrator implicit-euler|symplectic-euler|midpoint] [--contact-approximation sap|similar|lagged]
//  [--no-html] [--quiet]`
// (contract: ../shared/design/ARCHITECTURE.md). Runs the scene forward with SAP and writes
// trajectory.csv, steps.csv and stats.json into DIR, and (unless --no-html) the 3-D replay
// replay.html and the plots report.html.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "coulomb/io/replay_writer.h"
#include "coulomb/io/report_writer.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/simulation_output.h"
#include "coulomb/simulation/simulator.h"

#include "commands.h"
#include "embedded.h"
#include "run_options.h"
#include "run_output.h"

namespace coulomb::cli {

namespace fs = std::filesystem;

namespace {

struct SimulateOptions {
  std::string scene;
  std::string output = "coulomb-out";
  std::optional<double> duration, output_rate;
  RunOverrides run;  // --time-step, --solver, --integrator, … (run_options.h)
  bool contacts = false;
  bool no_html = false;
  bool quiet = false;
  bool strict = false;
};

// The embedded default scene, loaded through a temporary folder that mirrors the repository's
// layout (scenes/default.yaml refers to ../models/coulomb_quadruped.urdf).
io::Scene load_embedded_scene() {
  const fs::path dir = fs::temp_directory_path() / ("coulomb-embedded-" + std::to_string(::getpid()));
  fs::create_directories(dir / "scenes");
  fs::create_directories(dir / "models");
  {
    std::ofstream(dir / "models" / "coulomb_quadruped.urdf") << kEmbeddedQuadrupedUrdf;
  }
  try {
    io::Scene scene = io::parse_scene(kEmbeddedDefaultScene, "<embedded default scene>", (dir / "scenes").string());
    fs::remove_all(dir);
    return scene;
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
}

int run_simulate(const SimulateOptions& o) {
  // Options are checked as options (UsageError, exit 2) before the scene is loaded; values from
  // the scene were checked by the loader against the scene's keys.
  check_run_options(o.run);
  if (o.duration && !(*o.duration > 0.0 && std::isfinite(*o.duration)))
    throw UsageError("--duration must be a finite number > 0 s, got " + util::format_number(*o.duration));
  if (o.output_rate && !(*o.output_rate > 0.0 && std::isfinite(*o.output_rate)))
    throw UsageError("--output-rate must be a finite number > 0 Hz, got " + util::format_number(*o.output_rate));
  io::Scene scene = o.scene.empty() ? load_embedded_scene() : io::load_scene_or_model(o.scene);
  const std::string scene_name = o.scene.empty() ? "<embedded default scene>" : o.scene;
  print_warnings_and_notes(scene.warnings, scene.notes, "stats.json");

  const simulation::SimulatorParameters params = apply_run_options(o.run, scene, scene_name);
  const std::string solver = simulation::to_string(params.solver);
  const std::string contact_approximation = contact::to_string(scene.contact.approximation);
  const double duration = o.duration.value_or(scene.duration);
  // The step count as a double first: converting a double outside int's range to int is undefined
  // behaviour (on x86-64 it gave INT_MIN, so a 1e9 s run silently took 0 steps and exited 0).
  const double steps_needed = std::ceil(duration / params.time_step - 1e-9);
  if (!(steps_needed <= static_cast<double>(std::numeric_limits<int>::max()))) {
    std::ostringstream message;
    // Name where each value came from: the option, or the scene file's key.
    message << (o.duration ? "--duration " : scene_name + ": duration ") << duration << " s at "
            << (o.run.time_step ? "--time-step " : "time_step ") << params.time_step << " s needs " << steps_needed
            << " steps, more than the " << std::numeric_limits<int>::max() << " a run can take";
    throw std::invalid_argument(message.str());
  }
  const int num_steps = static_cast<int>(steps_needed);

  const bool progress = !o.quiet && ::isatty(STDERR_FILENO);
  bool progress_line_open = false;  // the progress bar's line has no newline yet
  prepare_output_directory(o.output);
  const std::string dir = fs::path(o.output).string();
  simulation::Simulator sim(std::move(scene), params);
  // Warnings of the run (simulation/run_monitor.h), printed as they are raised.
  std::size_t warnings_printed = 0;
  auto print_new_warnings = [&] {
    for (; warnings_printed < sim.warnings().size(); ++warnings_printed) {
      if (progress_line_open) std::fprintf(stderr, "\n");
      progress_line_open = false;
      std::cerr << "coulomb: warning: " << sim.warnings()[warnings_printed] << "\n";
    }
  };
  print_new_warnings();
  RunOutputOptions output_options;
  output_options.directory = dir;
  output_options.title = scene_name;
  output_options.contacts = o.contacts;
  output_options.html = !o.no_html;
  // --output-rate: a row when t has reached the next output time (and always the last step).
  output_options.output_period = o.output_rate ? 1.0 / *o.output_rate : 0.0;
  // The outputs open with the initial state (the replay cannot store a body beyond ±214 km):
  // a failure names the scene.
  RunOutputs outputs = [&]() -> RunOutputs {
    try {
      return RunOutputs(sim.scene(), sim.parameters(), output_options, sim.q(), sim.v());
    } catch (const std::exception& e) {
      throw std::runtime_error(scene_name + ": the outputs of the initial state: " + e.what());
    }
  }();
  const io::RunStatistics& stats = outputs.stats();

  auto last_print = std::chrono::steady_clock::now();
  int k = 0;
  try {
    for (; k < num_steps; ++k) {
      const simulation::StepStats& s = sim.step();
      outputs.record(sim, k + 1 == num_steps);
      if (sim.warnings().size() > warnings_printed) print_new_warnings();
      if (progress && std::chrono::steady_clock::now() - last_print > std::chrono::milliseconds(100)) {
        print_progress(s.time, duration, stats.wall_time, stats.iterations_sum / stats.steps, false);
        progress_line_open = true;
        last_print = std::chrono::steady_clock::now();
      }
    }
  } catch (const std::exception& e) {
    // A step that throws (a state no solver can take, e.g. velocities that overflowed) or an
    // output that cannot store the state: the message names the scene, the step and the time;
    // stats.json then says "failed" (RunOutputs' destructor).
    if (progress_line_open) std::fprintf(stderr, "\n");
    std::ostringstream message;
    message << scene_name << ": the simulation failed at step " << k + 1 << " of " << num_steps << " (t = " << sim.time()
            << " s): " << e.what();
    throw std::runtime_error(message.str());
  }
  if (progress) print_progress(stats.sim_time, duration, stats.wall_time, stats.iterations_sum / std::max(1, stats.steps), true);
  outputs.finish(sim.warnings(), solver, simulation::to_string(params.integrator), contact_approximation, scene_name);
  const bool contacts = outputs.contacts();
  const std::size_t replay_bytes = outputs.replay_bytes(), report_bytes = outputs.report_bytes();
  if (!o.quiet) {
    std::cout << "simulated " << stats.sim_time << " s of " << scene_name << " (" << sim.model().nv() << " dofs) in "
              << stats.steps << " steps of " << params.time_step << " s, " << stats.wall_time << " s wall time (real-time factor "
              << (stats.wall_time > 0 ? stats.sim_time / stats.wall_time : 0.0) << ")\n"
              << (solver == "lstable" ? "lstable QP iterations per step" : "SAP iterations per step") << ": mean "
              << stats.iterations_sum / std::max(1, stats.steps) << ", max " << stats.iterations_max
              << (solver == "lstable" ? " (" + std::to_string(stats.qp_steps) + " QP steps, " +
                                            std::to_string(stats.linear_solve_steps) + " linear solves)"
                                      : std::string())
              << "; contacts: mean " << stats.contacts_sum / std::max(1, stats.steps)
              << ", max " << stats.contacts_max << "; max penetration " << stats.max_penetration << " m; failures "
              << stats.failures << "\n"
              << "wrote " << dir << "/trajectory.csv, " << dir << "/steps.csv, " << (contacts ? dir + "/contacts.csv, " : "")
              << dir << "/stats.json\n";
    if (outputs.html())
      std::cout << "wrote " << dir << "/replay.html (" << human_size(replay_bytes) << ", " << outputs.replay_frames()
                << " frames; open it in a browser) and " << dir << "/report.html (" << human_size(report_bytes)
                << ")\n";
  }
  const std::size_t num_warnings = sim.scene().warnings.size() + sim.warnings().size();
  if (stats.failures > 0) return 3;
  if (o.strict && num_warnings > 0) {
    std::cerr << "coulomb: --strict: " << num_warnings << " warning" << (num_warnings == 1 ? "" : "s")
              << " (listed above and in " << dir << "/stats.json); exit status 3\n";
    return 3;
  }
  return 0;
}

}  // namespace

Command add_simulate_command(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand(
      "simulate",
      "Simulate a scene forward in time with SAP (Castro, Permenter, Han): compliant frictional\n"
      "contact as an unconstrained convex problem solved by Newton's method, inside a theta-method\n"
      "two-stage time stepper. With no SCENE, runs the embedded default scene (the project's\n"
      "quadruped standing under PD control with 40 objects dropped around it).\n\n"
      "Writes into DIR:\n"
      "  trajectory.csv  t, then per body B: B.x,B.y,B.z (m), B.qw..B.qz (orientation), B.vx..B.vz\n"
      "                  (m/s), B.wx..B.wz (rad/s), all in the world frame; then per 1-dof joint J:\n"
      "                  J.q, J.v; per actuated joint J.tau (N m or N, applied); per body with\n"
      "                  collision geometry B.contact_fx..fz (net contact force, world, N)\n"
      "  contacts.csv    with --contacts: one row per contact and written step\n"
      "  steps.csv       per step: SAP and line-search iterations, contacts, momentum error,\n"
      "                  max penetration (m), energy (J), wall time (s), solver status\n"
      "  stats.json      summary: steps, times, real-time factor, iterations, momentum error,\n"
      "                  contacts, max penetration, failures, initial and final energy\n"
      "  replay.html     3-D replay, one self-contained file that opens offline in a browser:\n"
      "                  every body with its collision shapes, play/pause, time slider, speed\n"
      "                  0.25x-4x, orbit/pan/zoom, contact points and impulse arrows; at most\n"
      "                  60 frames per simulated second, positions stored to 0.1 mm\n"
      "  report.html     stats.json summary and plots of the steps.csv series over time\n"
      "                  (regenerate with `coulomb report DIR`)\n"
      "Warnings (stderr, once each): a robot or body without collision geometry, an initial\n"
      "overlap deeper than 5 mm, a body that fell more than 1 m below every static geometry or\n"
      "left the scene, URDF elements that are read but not simulated.\n"
      "Exit status: 0 success, 1 error, 2 usage error, 3 some SAP solves did not converge\n"
      "(counted as failures in stats.json; the run still completes), or with --strict any warning.");
  sub->add_option("scene", options->scene, "Scene file (YAML, see docs/scene-format.md), or a model file run on its own on a ground plane "
                  "(MJCF <mujoco> or URDF <robot>, recognized by content); default: the embedded scene")
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", options->output, "Output folder (created if missing)")->capture_default_str();
  sub->add_option("--duration", options->duration, "Simulated time [s] (default: the scene's duration)");
  add_run_options(sub, options->run);
  sub->add_option("--output-rate", options->output_rate,
                  "Write trajectory.csv, steps.csv, contacts.csv and replay frames at most HZ times per simulated "
                  "second (the first and last states always; stats.json still sums every step). Default: every step");
  sub->add_flag("--contacts", options->contacts,
                "Also write contacts.csv: per written step and contact, the bodies, geometries, point, normal, "
                "signed distance, normal and tangential impulse, force, slip speed and region");
  sub->add_flag("--strict", options->strict,
                "Exit with status 3 if the run raised any warning (the outputs are still written)");
  sub->add_flag("--no-html", options->no_html, "Do not write replay.html and report.html");
  sub->add_flag("-q,--quiet", options->quiet, "No progress bar and no summary (the progress bar is also off when stderr is not a terminal)");
  return Command{sub, [options] { return run_simulate(*options); }};
}

}  // namespace coulomb::cli
