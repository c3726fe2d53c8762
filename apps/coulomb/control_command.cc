// `coulomb control SCENE.yaml --controller NAME [--terrain NAME] [--duration S] [--seed N]
//  [--no-html] [--quiet] [-o DIR]`: runs one of Zapolsky & Drumwright's controllers
// (control/controllers.h) on a scene's robot — the Unitree A1 trotting through the paper's
// waypoints, or the Franka Panda holding a box — on one of the paper's terrains
// (control/experiment.h), and writes what `coulomb simulate` writes plus metrics.json and
// series.csv. Also the helpers of control_common.h.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "coulomb/control/experiment.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/simulation_output.h"

#include "commands.h"
#include "control_common.h"
#include "run_output.h"

namespace coulomb::cli {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// control_common.h

std::string controller_names() {
  std::string names;
  for (control::ControllerKind kind : control::all_controller_kinds())
    names += (names.empty() ? "" : ", ") + std::string(control::to_string(kind));
  return names;
}

std::string terrain_names() {
  std::string names;
  for (control::TerrainKind kind :
       {control::TerrainKind::kScene, control::TerrainKind::kRigidLow, control::TerrainKind::kRigidHigh,
        control::TerrainKind::kCompliantLow, control::TerrainKind::kCompliantHigh, control::TerrainKind::kHeightMap})
    names += (names.empty() ? "" : ", ") + std::string(control::to_string(kind));
  return names;
}

control::ControllerKind parse_controller_option(const std::string& name, const std::string& option) {
  for (control::ControllerKind kind : control::all_controller_kinds())
    if (name == control::to_string(kind)) return kind;
  throw UsageError(option + ": unknown controller '" + name + "' (" + controller_names() + ")");
}

control::TerrainKind parse_terrain_option(const std::string& name, const std::string& option) {
  try {
    return control::parse_terrain_kind(name);
  } catch (const std::invalid_argument&) {
    throw UsageError(option + ": unknown terrain '" + name + "' (" + terrain_names() + ")");
  }
}

control::TrotPlannerParameters experiment_trot_parameters() {
  control::TrotPlannerParameters p;
  p.waypoints = control::WaypointParameters::paper(2.0, 0.3);
  return p;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "'");
  return text.str();
}

TerrainScene load_scene_with_terrain(const std::string& path, control::TerrainKind kind,
                                     const control::TerrainParameters& parameters) {
  const std::string text = read_text_file(path);
  std::string directory = fs::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  io::Scene plain = io::parse_scene(text, path, directory);
  control::Terrain terrain = control::make_terrain(kind, plain, parameters);
  if (kind == control::TerrainKind::kScene) return TerrainScene{std::move(plain), std::move(terrain)};
  io::Scene scene = io::parse_scene(control::apply_terrain(text, terrain), path, directory);
  return TerrainScene{std::move(scene), std::move(terrain)};
}

void write_metrics_json(const std::string& path, const control::ControlMetrics& metrics) {
  std::ofstream out(path);
  out << control::to_json(metrics);
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

void write_series_csv(const std::string& path, const control::ControlSeries& s, const std::string& reference_kind,
                      double rate) {
  io::CsvFile out(path);
  const std::string p = reference_kind == "arm" ? "box" : "base";
  out.text("t,joint_position_error,joint_velocity_error,torque_rate,predicted_normal,simulated_normal," + p + "_x," +
           p + "_y," + p + "_z");
  out.end_row();
  const size_t n = s.t.size();
  if (n == 0) {
    out.close();
    return;
  }
  const double dt = n > 1 ? (s.t.back() - s.t.front()) / static_cast<double>(n - 1) : 1.0;
  const size_t bucket = std::max<size_t>(1, static_cast<size_t>(std::floor(1.0 / (rate * dt) + 1e-9)));
  auto cell = [&out](double x) {
    out.comma();
    if (std::isfinite(x)) out.number(x);
  };
  auto mean = [](const std::vector<double>& v, size_t a, size_t b) {
    double sum = 0.0;
    size_t count = 0;
    for (size_t i = a; i < b && i < v.size(); ++i)
      if (std::isfinite(v[i])) {
        sum += v[i];
        ++count;
      }
    return count > 0 ? sum / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
  };
  auto largest = [](const std::vector<double>& v, size_t a, size_t b) {
    double m = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = a; i < b && i < v.size(); ++i)
      if (std::isfinite(v[i]) && !(v[i] <= m)) m = v[i];
    return m;
  };
  auto first = [](const std::vector<double>& v, size_t a) {
    return a < v.size() ? v[a] : std::numeric_limits<double>::quiet_NaN();
  };
  for (size_t a = 0; a < n; a += bucket) {
    const size_t b = std::min(n, a + bucket);
    out.number(s.t[a]);
    cell(mean(s.joint_position_error, a, b));
    cell(mean(s.joint_velocity_error, a, b));
    cell(largest(s.torque_rate, a, b));
    cell(mean(s.predicted_normal, a, b));
    cell(mean(s.simulated_normal, a, b));
    cell(first(s.base_x, a));
    cell(first(s.base_y, a));
    cell(first(s.base_z, a));
    out.end_row();
  }
  out.close();
}

// ---------------------------------------------------------------------------------------------
// coulomb control

namespace {

struct ControlOptions {
  std::string scene;
  std::string controller;
  std::string terrain = "scene";
  std::string output = "control-out";
  std::optional<double> duration;
  unsigned seed = 1;
  bool no_html = false;
  bool quiet = false;
};

std::string format(double x, const char* spec = "%.4g") {
  char text[64];
  std::snprintf(text, sizeof text, spec, x);
  return text;
}

int run_control_command(const ControlOptions& o) {
  const control::ControllerKind controller = parse_controller_option(o.controller, "--controller");
  const control::TerrainKind terrain_kind = parse_terrain_option(o.terrain, "--terrain");
  if (o.duration && !(*o.duration > 0.0 && std::isfinite(*o.duration)))
    throw UsageError("--duration must be a finite number > 0 s, got " + util::format_number(*o.duration));

  control::TerrainParameters terrain_parameters;
  terrain_parameters.seed = o.seed;
  TerrainScene loaded = load_scene_with_terrain(o.scene, terrain_kind, terrain_parameters);
  print_warnings_and_notes(loaded.scene.warnings, loaded.scene.notes, "stats.json");
  const control::Terrain& terrain = loaded.terrain;

  control::ControlRunOptions options;
  options.controller = controller;
  options.terrain = terrain_kind;
  options.terrain_parameters = terrain_parameters;
  options.duration = o.duration.value_or(loaded.scene.duration);
  options.trot = experiment_trot_parameters();
  options.record_series = true;
  const simulation::SimulatorParameters params = control::control_simulator_parameters(loaded.scene, terrain);
  const double duration = options.duration;
  const long long num_steps = static_cast<long long>(std::ceil(duration / params.time_step - 1e-9));

  prepare_output_directory(o.output);
  const std::string dir = fs::path(o.output).string();
  for (const char* stale : {"metrics.json", "series.csv"}) fs::remove(fs::path(dir) / stale);
  // The writers keep this copy (the run's simulator, and its scene, end with run_control).
  const io::Scene scene = loaded.scene;
  RunOutputOptions output_options;
  output_options.directory = dir;
  output_options.title = o.scene + " (" + control::to_string(controller) + ", " + control::to_string(terrain_kind) + ")";
  output_options.contacts = true;
  output_options.html = !o.no_html;
  RunOutputs outputs(scene, params, output_options, scene.q0, scene.v0);

  const bool progress = !o.quiet && ::isatty(STDERR_FILENO);
  bool progress_line_open = false;
  std::vector<std::string> run_warnings;
  auto last_print = std::chrono::steady_clock::now();
  const auto start = std::chrono::steady_clock::now();
  options.on_step = [&](const simulation::Simulator& sim, const control::TrackingController&) {
    outputs.record(sim, sim.step_count() >= num_steps);
    for (size_t i = run_warnings.size(); i < sim.warnings().size(); ++i) {
      if (progress_line_open) std::fprintf(stderr, "\n");
      progress_line_open = false;
      std::cerr << "coulomb: warning: " << sim.warnings()[i] << "\n";
      run_warnings.push_back(sim.warnings()[i]);
    }
    if (progress && std::chrono::steady_clock::now() - last_print > std::chrono::milliseconds(100)) {
      const io::RunStatistics& stats = outputs.stats();
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      print_progress(sim.time(), duration, wall, stats.iterations_sum / std::max(1, stats.steps), false);
      progress_line_open = true;
      last_print = std::chrono::steady_clock::now();
    }
  };
  const control::ControlRun run = control::run_control(std::move(loaded.scene), terrain, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) {
    const io::RunStatistics& stats = outputs.stats();
    print_progress(stats.sim_time, duration, wall, stats.iterations_sum / std::max(1, stats.steps), true);
  }
  outputs.finish(run_warnings, "sap", simulation::to_string(params.integrator),
                 contact::to_string(scene.contact.approximation), o.scene);
  write_metrics_json(dir + "/metrics.json", run.metrics);
  write_series_csv(dir + "/series.csv", run.series, run.reference_kind);

  if (!o.quiet) {
    const control::ControlMetrics& m = run.metrics;
    std::cout << "controlled " << o.scene << " (" << run.reference_kind << ") with " << control::to_string(controller)
              << " [" << control::paper_label(controller) << "] on " << control::to_string(terrain_kind) << " ("
              << terrain.description << ")\n"
              << "  " << format(m.duration) << " s in " << m.steps << " steps of " << params.time_step << " s, "
              << format(wall, "%.1f") << " s wall time\n"
              << "  joint tracking: position " << format(m.joint_position_error) << " rad, velocity "
              << format(m.joint_velocity_error) << " rad/s\n"
              << "  torques: E|tau| " << format(m.torque) << " N m, E|dtau|/dt " << format(m.torque_rate)
              << " N m/s (max " << format(m.max_torque_rate) << ")\n";
    if (std::isfinite(m.normal_force_error))
      std::cout << "  normal force prediction error " << format(m.normal_force_error) << " N ("
                << format(100.0 * m.normal_force_error_relative, "%.2f") << " % of the simulator's "
                << format(m.mean_normal_force) << " N)\n";
    if (run.reference_kind == "trot")
      std::cout << "  base: path " << format(m.distance) << " m, net " << format(m.net_displacement)
                << " m, mean forward speed " << format(m.mean_forward_speed) << " m/s, waypoints reached "
                << m.waypoints_reached << "\n";
    if (run.reference_kind == "arm")
      std::cout << "  box: " << (m.box_dropped ? "DROPPED at t = " + format(m.box_drop_time) + " s" : std::string("held"))
                << ", hold ratio " << format(m.box_hold_ratio) << "\n";
    std::cout << "  controller time: mean " << format(1e6 * m.controller_time_mean, "%.1f") << " us, max "
              << format(1e6 * m.controller_time_max, "%.1f") << " us; ID not solved " << m.id_not_solved
              << "; simulator steps not converged " << m.simulator_failures << "\n";
    if (m.fell) std::cout << "  FELL at t = " << format(m.fall_time) << " s: " << m.fall_reason << "\n";
    std::cout << "wrote " << dir << "/metrics.json, series.csv, trajectory.csv, contacts.csv, steps.csv, stats.json"
              << (outputs.html() ? ", replay.html (" + human_size(outputs.replay_bytes()) + "), report.html" : "")
              << "\n";
  }
  if (run.metrics.fell && o.quiet)
    std::cerr << "coulomb: the robot fell at t = " << format(run.metrics.fall_time) << " s (" << run.metrics.fall_reason
              << ")\n";
  return 0;
}

}  // namespace

Command add_control_command(CLI::App& app) {
  auto options = std::make_shared<ControlOptions>();
  CLI::App* sub = app.add_subcommand(
      "control",
      "Run one of Zapolsky & Drumwright's controllers (\"Inverse Dynamics with Rigid Contact and\n"
      "Friction\", section 7) on the robot of a scene, on one of the paper's terrains.\n\n"
      "Robots (chosen from the scene):\n"
      "  Unitree A1 (floating, FL_/FR_/RL_/RR_ hip/thigh/calf joints): trots through the paper's five\n"
      "    waypoints scaled by 2 at 0.3 m/s (gait cycle 0.3 s, duty factor 0.75).\n"
      "  Franka Panda (panda_* joints) with a free body 'box': the arm follows a 3 Hz sinusoid\n"
      "    while the fingers hold the box.\n"
      "Controllers (--controller):\n"
      "  id-qp-mu    ID(t_i)_{QP,mu}: predictive inverse dynamics, convex two-stage QP, Coulomb friction\n"
      "  id-qp-inf   ID(t_i)_{QP,inf}: the same without slip\n"
      "  id-lcp-mu   ID(t_i)_{LCP,mu}: complementarity (Lemke), Coulomb friction\n"
      "  id-lcp-inf  ID(t_i)_{LCP,inf}: complementarity, no slip (modified PPM)\n"
      "  pid         joint PID on the simulator's implicit PD\n"
      "  id-t-1      ID with the contact forces the simulator applied one step before\n"
      "  id-t-2      the same, two steps before\n"
      "Terrains (--terrain):\n"
      "  scene           the scene's own ground and contact settings (default)\n"
      "  rigid-low       rigid half-space, mu 0.1 (SAP, k 1e10 N/m, near-rigid beta 0.01)\n"
      "  rigid-high      rigid half-space, mu 100 (the paper's infinity)\n"
      "  compliant-low   half-space with k = m g / (4 x 1 mm), tau_d 0.01 s, mu 0.1\n"
      "  compliant-high  the same with mu 100\n"
      "  heightmap       rigid piecewise-linear bumps up to 1/5 of the leg length, mu ~ U(0.1, 1.5)\n"
      "                  per triangle (--seed), flat where the robot starts\n\n"
      "Writes into DIR what `coulomb simulate --contacts` writes (trajectory.csv, contacts.csv,\n"
      "steps.csv, stats.json, and unless --no-html replay.html and report.html), plus\n"
      "  metrics.json  joint position/velocity errors (rad, rad/s), torque E|tau| (N m) and rate\n"
      "                E|dtau|/dt (N m/s), normal-force prediction error (N, relative; predictive\n"
      "                controllers), fall (time, reason), base path, controller time (s), box drop\n"
      "                (arm): the keys of control::ControlMetrics, NaN as null\n"
      "  series.csv    the same over time (at most 100 rows per simulated second)\n"
      "A fall (base below 40 % of its initial height, or tilted more than 60 degrees) ends the run;\n"
      "it is a result: printed, recorded in metrics.json, exit status 0.\n"
      "Exit status: 0 the run completed (fallen or not), 1 error, 2 usage error.");
  sub->add_option("scene", options->scene, "Scene file (YAML, docs/scene-format.md)")->required()->check(CLI::ExistingFile);
  sub->add_option("--controller", options->controller, "Controller: " + controller_names())->required();
  sub->add_option("--terrain", options->terrain, "Terrain: " + terrain_names())->capture_default_str();
  sub->add_option("--duration", options->duration, "Simulated time [s] (default: the scene's duration)");
  sub->add_option("--seed", options->seed, "Seed of the height map's bumps and friction")->capture_default_str();
  sub->add_option("-o,--output", options->output, "Output folder (created if missing)")->capture_default_str();
  sub->add_flag("--no-html", options->no_html, "Do not write replay.html and report.html");
  sub->add_flag("-q,--quiet", options->quiet, "No progress bar and no summary");
  return Command{sub, [options] { return run_control_command(*options); }};
}

}  // namespace coulomb::cli
