// `coulomb bench SCENE.yaml [--steps N] [--states K] [--perturb M] [--json] [the scene overrides of
//  coulomb simulate: --time-step S, --solver, --integrator, --contact-approximation, …]`: how fast coulomb runs a user's own scene
// (the testspeed of MuJoCo, for coulomb). Runs the scene from K starting states (the scene's own,
// then K − 1 copies whose translational coordinates are offset by U[−M, M] m: a pile is chaotic,
// and one trajectory can be lucky or unlucky), times every Simulator::step() call and reports
// steps/s (median and range over the states), iterations, contacts, penetration, failures and
// where the time of a step goes (SimulatorParameters::profile_stages). Nothing is written to disk.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coulomb/io/scene_loader.h"
#include "coulomb/linalg/block_sparse_cholesky.h"
#include "coulomb/simulation/simulator.h"

#include "commands.h"
#include "run_options.h"

namespace coulomb::cli {

namespace {

struct BenchOptions {
  std::string scene;
  std::optional<int> steps;
  int states = 5;
  double perturb = 1e-9;
  RunOverrides run;  // --time-step, --solver, --integrator, … as in `coulomb simulate` (run_options.h)
  bool json = false;
};

// One run from one starting state.
struct RunFigures {
  double seconds = 0.0;  // sum of the step() calls' wall time
  double steps_per_second = 0.0;
  double iterations = 0.0, line_search_iterations = 0.0, free_motion_iterations = 0.0, contacts = 0.0;  // per step
  int iterations_max = 0, contacts_max = 0, failures = 0;
  double max_penetration = 0.0;
  simulation::StepStats::StageTimes stages;  // summed over the steps [s]
};

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// Offsets every translational coordinate (floating joints' x, y, z and prismatic joints) by U[−m, m].
Eigen::VectorXd perturbed_configuration(const multibody::Model& model, const Eigen::VectorXd& q0, double m,
                                        unsigned seed) {
  Eigen::VectorXd q = q0;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-m, m);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& joint = model.body(b).joint;
    if (joint.type == multibody::JointType::kFloating)
      for (int k = 0; k < 3; ++k) q[joint.q_index + k] += u(rng);
    else if (joint.type == multibody::JointType::kPrismatic)
      q[joint.q_index] += u(rng);
  }
  return q;
}

RunFigures run_once(const scene::Scene& scene, const simulation::SimulatorParameters& params, int steps, int state,
                    double perturb) {
  simulation::Simulator sim(scene, params);
  if (state > 0) sim.set_state(perturbed_configuration(scene.model, scene.q0, perturb, static_cast<unsigned>(state)), scene.v0);
  RunFigures f;
  for (int k = 0; k < steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const simulation::StepStats& s = sim.step();
    f.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f.iterations += s.solver_iterations;
    f.line_search_iterations += s.line_search_iterations;
    f.free_motion_iterations += s.free_motion_iterations;
    f.contacts += s.contacts;
    f.iterations_max = std::max(f.iterations_max, s.solver_iterations);
    f.contacts_max = std::max(f.contacts_max, s.contacts);
    f.max_penetration = std::max(f.max_penetration, s.max_penetration);
    if (s.status != solvers::sap::SapSolverStatus::kSuccess) ++f.failures;
    f.stages.contacts += s.stage_time.contacts;
    f.stages.free_motion += s.stage_time.free_motion;
    f.stages.constraints += s.stage_time.constraints;
    f.stages.solve += s.stage_time.solve;
    f.stages.finish += s.stage_time.finish;
  }
  f.steps_per_second = f.seconds > 0.0 ? steps / f.seconds : 0.0;
  for (double* x : {&f.iterations, &f.line_search_iterations, &f.free_motion_iterations, &f.contacts}) *x /= steps;
  return f;
}

std::string with_commas(double x) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(x)));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

int run_bench(const BenchOptions& o) {
  if (o.steps && *o.steps < 1) throw UsageError("--steps must be >= 1, got " + std::to_string(*o.steps));
  if (o.states < 1) throw UsageError("--states must be >= 1, got " + std::to_string(o.states));
  if (!(o.perturb >= 0.0 && o.perturb <= 1e-3))
    throw UsageError("--perturb must be in [0, 1e-3] m, got " + util::format_number(o.perturb));
  check_run_options(o.run);
  io::Scene scene = io::load_scene_or_model(o.scene);
  simulation::SimulatorParameters params = apply_run_options(o.run, scene, o.scene);
  const std::string solver = simulation::to_string(params.solver);
  params.profile_stages = true;
  params.compute_energy = false;  // not reported here; MuJoCo and Drake do not compute it per step either
  const double steps_for_duration = std::ceil(scene.duration / params.time_step - 1e-9);
  const int steps = o.steps ? *o.steps : static_cast<int>(std::clamp(steps_for_duration, 1.0, 1e6));

  // Progress on stderr: one line rewritten in place on a terminal, a line per state otherwise
  // (a log file or a pipe).
  const bool progress = !o.json && o.states > 1, tty = ::isatty(STDERR_FILENO) != 0;
  std::vector<RunFigures> runs;
  for (int k = 0; k < o.states; ++k) {
    runs.push_back(run_once(scene, params, steps, k, o.perturb));
    if (progress) std::fprintf(stderr, tty ? "\rcoulomb bench: state %d of %d done" : "coulomb bench: state %d of %d done\n",
                               k + 1, o.states);
  }
  if (progress && tty) std::fprintf(stderr, "\n");

  auto collect = [&](auto get) {
    std::vector<double> x;
    for (const RunFigures& r : runs) x.push_back(get(r));
    return x;
  };
  const std::vector<double> sps = collect([](const RunFigures& r) { return r.steps_per_second; });
  const double sps_median = median(sps);
  const double sps_min = *std::min_element(sps.begin(), sps.end()), sps_max = *std::max_element(sps.begin(), sps.end());
  const double iterations = median(collect([](const RunFigures& r) { return r.iterations; }));
  const double line_search = median(collect([](const RunFigures& r) { return r.line_search_iterations; }));
  const double free_motion = median(collect([](const RunFigures& r) { return r.free_motion_iterations; }));
  const double contacts = median(collect([](const RunFigures& r) { return r.contacts; }));
  const double penetration = median(collect([](const RunFigures& r) { return r.max_penetration; }));
  int iterations_max = 0, contacts_max = 0, failures = 0;
  for (const RunFigures& r : runs) {
    iterations_max = std::max(iterations_max, r.iterations_max);
    contacts_max = std::max(contacts_max, r.contacts_max);
    failures += r.failures;
  }
  // Stage shares over all runs: microseconds per step and fraction of the step() time.
  double total = 0.0;
  simulation::StepStats::StageTimes st;
  for (const RunFigures& r : runs) {
    total += r.seconds;
    st.contacts += r.stages.contacts;
    st.free_motion += r.stages.free_motion;
    st.constraints += r.stages.constraints;
    st.solve += r.stages.solve;
    st.finish += r.stages.finish;
  }
  const double other = std::max(0.0, total - st.contacts - st.free_motion - st.constraints - st.solve - st.finish);
  const std::vector<std::pair<std::string, double>> stages = {
      {"contacts", st.contacts}, {"free_motion", st.free_motion}, {"constraints", st.constraints},
      {"solve", st.solve},       {"finish", st.finish},           {"other", other}};
  const double total_steps = static_cast<double>(steps) * runs.size();
  const multibody::Model& model = scene.model;

  if (o.json) {
    nlohmann::json j;
    j["scene"] = o.scene;
    j["nv"] = model.nv();
    j["bodies"] = model.num_bodies() - 1;
    j["time_step"] = params.time_step;
    j["steps"] = steps;
    j["states"] = o.states;
    j["perturbation"] = o.perturb;
    j["solver"] = solver;
    j["contact_approximation"] = contact::to_string(scene.contact.approximation);
    j["steps_per_second"] = {{"median", sps_median}, {"min", sps_min}, {"max", sps_max}, {"per_state", sps}};
    j["real_time_factor"] = sps_median * params.time_step;
    j["iterations_per_step"] = iterations;
    j["iterations_max"] = iterations_max;
    j["line_search_iterations_per_step"] = line_search;
    j["free_motion_iterations_per_step"] = free_motion;
    j["contacts_per_step"] = contacts;
    j["contacts_max"] = contacts_max;
    j["max_penetration"] = penetration;
    j["failures"] = failures;
    j["kernels"] = linalg::BlockSparseCholesky::kernel_copy();
    nlohmann::json js;
    for (const auto& [name, seconds] : stages)
      js[name] = {{"us_per_step", 1e6 * seconds / total_steps}, {"fraction", total > 0 ? seconds / total : 0.0}};
    j["stages"] = js;
    std::cout << j.dump(2) << "\n";
    return failures > 0 ? 3 : 0;
  }
  std::printf("%s: %d dofs, %d bodies, dt %g s, %s, contact approximation %s\n", o.scene.c_str(), model.nv(),
              model.num_bodies() - 1, params.time_step, solver.c_str(),
              contact::to_string(scene.contact.approximation));
  std::printf("%d steps from each of %d starting states (translations perturbed by up to %g m; the first is the scene's own)\n",
              steps, o.states, o.perturb);
  std::printf("linear algebra     %s kernels for the 6 x 6 blocks of free bodies (chosen by the processor)\n",
              linalg::BlockSparseCholesky::kernel_copy());
  std::printf("steps/s            %s (median; range %s - %s), real-time factor %.3g\n", with_commas(sps_median).c_str(),
              with_commas(sps_min).c_str(), with_commas(sps_max).c_str(), sps_median * params.time_step);
  std::printf("iterations/step    %.2f (max %d); line search %.2f; free motion %.2f\n", iterations, iterations_max,
              line_search, free_motion);
  std::printf("contacts/step      %.1f (max %d); max penetration %.3g mm; failed solves %d\n", contacts, contacts_max,
              1e3 * penetration, failures);
  std::printf("where a step's time goes (all states):\n");
  const char* labels[] = {"contacts (kinematics, collision, Jacobians)", "free motion", "constraints (set, problem)",
                          "solve", "finish (results, positions)", "other (controller, timing)"};
  for (size_t k = 0; k < stages.size(); ++k)
    std::printf("  %-44s %8.2f us  %5.1f %%\n", labels[k], 1e6 * stages[k].second / total_steps,
                total > 0 ? 100.0 * stages[k].second / total : 0.0);
  return failures > 0 ? 3 : 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "How fast coulomb runs a scene: steps per second (median and range over several starting\n"
      "states), solver iterations, contacts and penetration, and where a step's time goes\n"
      "(contacts, free motion, constraint assembly, solve, finish). Only the step calls are\n"
      "timed; nothing is written to disk. Runs the scene's duration (or --steps) from the\n"
      "scene's own state and from --states - 1 copies whose translational coordinates are\n"
      "offset by up to --perturb m (piles are chaotic: one trajectory can be lucky).\n\n"
      "Example:\n"
      "  coulomb bench examples/scenes/clutter.yaml --steps 300 --states 5\n\n"
      "Exit status: 0, 1 error, 2 usage error, 3 some solves did not converge.");
  sub->add_option("scene", options->scene,
                  "Scene file (YAML, see docs/scene-format.md), or a model file (URDF, MJCF, SDF) run on a ground plane")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--steps", options->steps, "Steps per starting state (default: the scene's duration / dt)");
  sub->add_option("--states", options->states, "Starting states (the scene's own and perturbed copies)")
      ->capture_default_str();
  sub->add_option("--perturb", options->perturb, "Largest offset of the translational coordinates [m]")
      ->capture_default_str();
  add_run_options(sub, options->run);
  sub->add_flag("--json", options->json, "One JSON object on stdout instead of the table");
  return Command{sub, [options] { return run_bench(*options); }};
}

}  // namespace coulomb::cli
