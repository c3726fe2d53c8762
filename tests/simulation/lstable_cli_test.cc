// `coulomb simulate --solver lstable` on every example scene (issue 11: "coulomb simulate
// --solver lstable (and scene key solver:) on every example scene; stats.json reports the
// solver's own figures (QP iterations, residuals, failures)"). Each scene runs 0.5 s at its own
// δt, as tests/simulation/simulate_cli_test.cc does under SAP (all twelve take ~5 s in Release:
// the dense QP costs O(rows³) per iteration, 240 rows at most here), exits 0 and writes stats.json with the `lstable` block (docs/user-guide.md, "stats.json"), whose
// numbers are checked against steps.csv (the per-step QP iterations, written every step) and
// against the contacts. The figures themselves (rows, QP/linear-solve steps, failures by status)
// are checked against the Simulator's StepStats and against a forced QP failure.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/simulation_output.h"
#include "coulomb/simulation/simulator.h"

namespace {

namespace fs = std::filesystem;
using coulomb::testing::kCli;
using coulomb::testing::sweep_duration;
using coulomb::testing::run_cli;
using coulomb::testing::RunResult;

std::vector<fs::path> example_scenes() {
  std::vector<fs::path> scenes;
  for (const auto& entry : fs::directory_iterator(fs::path(COULOMB_SOURCE_DIR) / "examples" / "scenes"))
    if (entry.path().extension() == ".yaml") scenes.push_back(entry.path());
  std::sort(scenes.begin(), scenes.end());
  return scenes;
}

// steps.csv's column `name`, one value per row.
std::vector<double> csv_column(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  std::string line, cell;
  std::getline(in, line);
  std::stringstream header(line);
  int column = -1;
  for (int i = 0; std::getline(header, cell, ','); ++i)
    if (cell == name) column = i;
  EXPECT_GE(column, 0) << file << " has no column " << name << ": " << line;
  std::vector<double> values;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream row(line);
    for (int i = 0; std::getline(row, cell, ','); ++i)
      if (i == column) values.push_back(std::stod(cell));
  }
  return values;
}

// Every example scene, `--solver lstable`, 0.5 s (0.05 s under COULOMB_TEST_SHORT) at the scene's own δt. Exit 0; stats.json says solver lstable, no failures, and its lstable block
// agrees with steps.csv: Σ solver_iterations = qp_iterations.mean × qp_steps (a linear solve
// reports 0 iterations), max = qp_iterations.max; the QP's residual at exit meets the conic QP's
// acceptable tolerance (1e-7); a scene with contacts has rows.
TEST(LStableCliTest, EveryExampleSceneRunsWithLStable) {
  if (kCli.empty()) GTEST_SKIP() << "coulomb_cli is not built (COULOMB_CLI_PATH undefined)";
  const std::vector<fs::path> scenes = example_scenes();
  ASSERT_GE(scenes.size(), 8u);
  const fs::path root = fs::temp_directory_path() / ("coulomb_lstable_cli_test_" + std::to_string(::getpid()));
  for (const fs::path& scene_path : scenes) {
    SCOPED_TRACE(scene_path.filename().string());
    const coulomb::io::Scene scene = coulomb::io::load_scene(scene_path.string());
    const double duration = sweep_duration(0.5, 0.05);
    const int steps = static_cast<int>(std::ceil(duration / scene.time_step - 1e-9));
    const fs::path out = root / scene_path.stem();
    const RunResult r = run_cli({"simulate", scene_path.string(), "-o", out.string(), "-q", "--no-html", "--solver",
                                 "lstable", "--duration", std::to_string(duration)});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    std::ifstream stats_file(out / "stats.json");
    ASSERT_TRUE(stats_file.good()) << "no stats.json for " << scene_path;
    const nlohmann::json stats = nlohmann::json::parse(stats_file);
    EXPECT_EQ(stats["solver"].get<std::string>(), "lstable");
    EXPECT_EQ(stats["steps"].get<int>(), steps);
    EXPECT_EQ(stats["failures"].get<int>(), 0);
    EXPECT_TRUE(std::isfinite(stats["energy"]["final_J"].get<double>()));
    ASSERT_TRUE(stats.contains("lstable") && stats["lstable"].is_object()) << stats.dump(2);
    const nlohmann::json& ls = stats["lstable"];
    for (const char* key : {"rows", "qp_iterations", "residual"}) {
      ASSERT_TRUE(ls.contains(key) && ls[key].contains("mean") && ls[key].contains("max")) << key;
      EXPECT_LE(ls[key]["mean"].get<double>(), ls[key]["max"].get<double>() * (1 + 1e-12)) << key;
    }
    const nlohmann::json& f = ls["failures"];
    EXPECT_EQ(f["qp_not_converged"].get<int>() + f["qp_numerical_error"].get<int>() + f["linear_solve"].get<int>(), 0);
    const int qp_steps = ls["qp_steps"].get<int>(), linear_steps = ls["linear_solve_steps"].get<int>();
    EXPECT_LE(qp_steps + linear_steps, steps);
    EXPECT_LE(ls["residual"]["max"].get<double>(), 1e-7);
    if (stats["contacts"]["max"].get<int>() > 0) {
      EXPECT_GT(qp_steps, 0);  // contacts are unilateral: the QP/SOCP
      EXPECT_GE(ls["rows"]["max"].get<int>(), stats["contacts"]["max"].get<int>());  // ≥ 1 row per contact
    }
    const std::vector<double> iterations = csv_column(out / "steps.csv", "solver_iterations");
    ASSERT_EQ(static_cast<int>(iterations.size()), steps);
    double sum = 0.0, max = 0.0;
    for (double it : iterations) sum += it, max = std::max(max, it);
    EXPECT_NEAR(ls["qp_iterations"]["mean"].get<double>() * qp_steps, sum, 1e-9 * (1 + sum));
    EXPECT_EQ(ls["qp_iterations"]["max"].get<double>(), max);
    std::printf("[ measured ] %s --solver lstable, %d steps: rows mean %.1f max %d, QP steps %d, linear solves %d, "
                "QP iterations mean %.1f max %d, residual max %.1e, wall %.3f s\n",
                scene_path.filename().c_str(), steps, ls["rows"]["mean"].get<double>(), ls["rows"]["max"].get<int>(),
                qp_steps, linear_steps, ls["qp_iterations"]["mean"].get<double>(), ls["qp_iterations"]["max"].get<int>(),
                ls["residual"]["max"].get<double>(), stats["wall_time_s"].get<double>());
  }
  fs::remove_all(root);
}

// The scene key `solver: lstable` alone selects the solver (no --solver), and SAP runs write no
// lstable block; the printed summary names the solver's iterations.
TEST(LStableCliTest, SceneKeySelectsTheSolverAndSapWritesNoLStableBlock) {
  if (kCli.empty()) GTEST_SKIP() << "coulomb_cli is not built (COULOMB_CLI_PATH undefined)";
  const fs::path root = fs::temp_directory_path() / ("coulomb_lstable_key_test_" + std::to_string(::getpid()));
  fs::create_directories(root);
  const fs::path scene = root / "ball.yaml";
  std::ofstream(scene) << "solver: lstable\ntime_step: 0.001\nduration: 0.01\n"
                          "bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: halfspace}]\n"
                          "  - name: ball\n    mass: 1.0\n    shapes: [{type: sphere, radius: 0.05}]\n"
                          "    position: [0, 0, 0.05]\n";
  for (const char* solver : {"", "sap"}) {
    std::vector<std::string> args = {"simulate", scene.string(), "-o", (root / "out").string(), "--no-html"};
    if (*solver) args.insert(args.end(), {"--solver", solver});
    const RunResult r = run_cli(args);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const nlohmann::json stats = nlohmann::json::parse(std::ifstream(root / "out" / "stats.json"));
    EXPECT_EQ(stats["solver"].get<std::string>(), *solver ? "sap" : "lstable");
    EXPECT_EQ(stats.contains("lstable"), *solver == '\0') << stats.dump(2);
    // The summary line names the solver's iterations.
    EXPECT_TRUE(coulomb::testing::contains(
        r.out, *solver ? "SAP iterations per step" : "lstable QP iterations per step: mean"))
        << r.out;
    if (*solver == '\0') {
      EXPECT_TRUE(coulomb::testing::contains(r.out, "(10 QP steps, 0 linear solves)")) << r.out;
    }
    if (*solver == '\0') {
      // A resting ball: one frictional contact, 3 rows, a QP every step.
      EXPECT_EQ(stats["lstable"]["qp_steps"].get<int>(), 10);
      EXPECT_EQ(stats["lstable"]["rows"]["max"].get<int>(), 3);
      EXPECT_EQ(stats["lstable"]["rows"]["mean"].get<double>(), 3.0);
    }
  }
  fs::remove_all(root);
}

// lstable's friction model: the scene key lstable_friction, --lstable-friction overriding it,
// stats.json's lstable.friction_model, and usage errors for an unknown model (exit 2 for the
// flag, 1 naming the scene key for the file).
TEST(LStableCliTest, FrictionModelFromSceneKeyAndFlag) {
  if (kCli.empty()) GTEST_SKIP() << "coulomb_cli is not built (COULOMB_CLI_PATH undefined)";
  const fs::path root = fs::temp_directory_path() / ("coulomb_lstable_friction_test_" + std::to_string(::getpid()));
  fs::create_directories(root);
  const std::string body = "solver: lstable\ntime_step: 0.001\nduration: 0.01\n"
                           "bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: halfspace}]\n"
                           "  - name: box\n    mass: 1.0\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
                           "    position: [0, 0, 0.05]\n    linear_velocity: [1, 0, 0]\n";
  std::ofstream(root / "default.yaml") << body;
  std::ofstream(root / "cone.yaml") << "lstable_friction: cone\n" << body;
  std::ofstream(root / "bad.yaml") << "lstable_friction: polyhedral\n" << body;
  auto model_of = [&](const std::vector<std::string>& extra, const char* scene) {
    std::vector<std::string> args = {"simulate", (root / scene).string(), "-o", (root / "out").string(), "--no-html", "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    const nlohmann::json stats = nlohmann::json::parse(std::ifstream(root / "out" / "stats.json"));
    EXPECT_TRUE(stats["lstable"].contains("friction_passes")) << stats.dump(2);
    return stats["lstable"]["friction_model"].get<std::string>();
  };
  EXPECT_EQ(model_of({}, "default.yaml"), "staggered");
  EXPECT_EQ(model_of({}, "cone.yaml"), "cone");
  EXPECT_EQ(model_of({"--lstable-friction", "staggered"}, "cone.yaml"), "staggered");
  const RunResult flag = run_cli({"simulate", (root / "default.yaml").string(), "-o", (root / "out2").string(),
                                  "--lstable-friction", "polyhedral"});
  EXPECT_EQ(flag.status, 2) << flag.out << flag.err;
  EXPECT_TRUE(coulomb::testing::contains(flag.err, "polyhedral")) << flag.err;
  const RunResult key = run_cli({"simulate", (root / "bad.yaml").string(), "-o", (root / "out3").string()});
  EXPECT_EQ(key.status, 1) << key.out << key.err;
  EXPECT_TRUE(coulomb::testing::contains(key.err, "lstable_friction")) << key.err;
  fs::remove_all(root);
}

}  // namespace

namespace coulomb::simulation {
namespace {

// StepStats' lstable fields are the solver's own results, and RunStatistics sums them as
// stats.json reports them. A pendulum-like case with only bilateral rows (a PD actuator without
// an effort limit, limits off) is one linear solve per step; a resting sphere is a QP per step;
// a QP capped at 1 interior-point iteration does not converge and is counted as such.
TEST(LStableStats, StepStatsCarryTheSolversFiguresAndRunStatisticsSumsThem) {
  const std::string ball =
      "time_step: 0.001\nbodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: halfspace}]\n"
      "  - name: ball\n    mass: 1.0\n    shapes: [{type: sphere, radius: 0.05}]\n    position: [0, 0, 0.05]\n";
  {
    SimulatorParameters params;
    params.time_step = 1e-3;
    params.solver = Solver::kLStable;
    Simulator sim(io::parse_scene(ball, "ball"), params);
    io::RunStatistics run;
    int iterations = 0, iterations_max = 0;
    double residual_max = 0.0;
    for (int k = 0; k < 20; ++k) {
      const StepStats& s = sim.step();
      const solvers::lstable::LStableResults& r = sim.last_lstable_results();
      EXPECT_EQ(s.constraint_rows, r.num_rows);
      EXPECT_EQ(s.constraint_rows, 3 * s.contacts);
      EXPECT_TRUE(s.used_qp);
      EXPECT_EQ(s.solver_iterations, r.qp_iterations);
      EXPECT_EQ(s.solver_residual, r.residual);
      EXPECT_EQ(s.lstable_status, solvers::lstable::LStableStatus::kSuccess);
      iterations += s.solver_iterations;
      iterations_max = std::max(iterations_max, s.solver_iterations);
      residual_max = std::max(residual_max, s.solver_residual);
      run.add(s);
    }
    EXPECT_EQ(run.qp_steps, 20);
    EXPECT_EQ(run.linear_solve_steps, 0);
    EXPECT_EQ(run.qp_iterations_sum, iterations);
    EXPECT_EQ(run.qp_iterations_max, iterations_max);
    EXPECT_EQ(run.residual_max, residual_max);
    EXPECT_EQ(run.rows_max, 3);
    EXPECT_EQ(run.failures, 0);
    // The same scene under SAP leaves the lstable fields at zero.
    params.solver = Solver::kSap;
    Simulator sap(io::parse_scene(ball, "ball"), params);
    const StepStats& s = sap.step();
    EXPECT_EQ(s.constraint_rows, 0);
    EXPECT_FALSE(s.used_qp);
  }
  {
    // A QP capped at one iteration: kQpNotConverged, counted as a failure and by its kind.
    SimulatorParameters params;
    params.time_step = 1e-3;
    params.solver = Solver::kLStable;
    params.lstable.qp.max_iterations = 1;
    Simulator sim(io::parse_scene(ball, "ball"), params);
    io::RunStatistics run;
    for (int k = 0; k < 5; ++k) run.add(sim.step());
    EXPECT_EQ(run.qp_not_converged, 5);
    EXPECT_EQ(run.failures, 5);
    EXPECT_EQ(sim.last_step().lstable_status, solvers::lstable::LStableStatus::kQpNotConverged);
  }
  {
    // Bilateral rows only: the spring cylinder's prismatic joint held by a PD actuator, no
    // contact (no ground), no limits → one linear solve per step, no QP iterations.
    const std::string yaml = "time_step: 0.001\ngravity: [0, 0, 0]\nrobots:\n  - urdf: " +
                             std::string(COULOMB_SOURCE_DIR) + "/examples/models/spring_cylinder.urdf\n"
                             "    actuators:\n      x: {kp: 100, kd: 1}\n";
    io::Scene scene = io::parse_scene(yaml, "pd");
    ASSERT_EQ(scene.actuators.size(), 1u);
    ASSERT_FALSE(std::isfinite(scene.actuators[0].effort_limit));  // unbounded: a bilateral row
    SimulatorParameters params;
    params.time_step = 1e-3;
    params.solver = Solver::kLStable;
    params.joint_limits = false;
    Simulator sim(std::move(scene), params);
    io::RunStatistics run;
    for (int k = 0; k < 5; ++k) run.add(sim.step());
    EXPECT_GT(run.linear_solve_steps, 0);
    EXPECT_EQ(run.qp_steps, 0);
    EXPECT_EQ(run.qp_iterations_sum, 0);
    EXPECT_EQ(run.failures, 0);
  }
}

}  // namespace
}  // namespace coulomb::simulation
