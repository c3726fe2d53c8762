// End-to-end: every example scene (examples/scenes/*.yaml) runs through `coulomb simulate`
// (the built binary, COULOMB_CLI_PATH) for 0.5 s with exit status 0, writes stats.json with the
// keys of the contract (../shared/design/ARCHITECTURE.md, "Contracts") and no failed SAP solve,
// and a trajectory.csv with one row per step.
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

#include "cli_runner.h"
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using coulomb::testing::kCli;
using coulomb::testing::run_cli;
using coulomb::testing::RunResult;
using coulomb::testing::shell_quote;
using coulomb::testing::sweep_duration;


std::vector<fs::path> example_scenes() {
  std::vector<fs::path> scenes;
  for (const auto& entry : fs::directory_iterator(fs::path(COULOMB_SOURCE_DIR) / "examples" / "scenes"))
    if (entry.path().extension() == ".yaml") scenes.push_back(entry.path());
  std::sort(scenes.begin(), scenes.end());
  return scenes;
}

TEST(SimulateCliTest, EveryExampleSceneRunsWithoutFailures) {
  if (kCli.empty()) GTEST_SKIP() << "coulomb_cli is not built (COULOMB_CLI_PATH undefined)";
  const std::vector<fs::path> scenes = example_scenes();
  ASSERT_GE(scenes.size(), 8u);
  const fs::path root = fs::temp_directory_path() / ("coulomb_simulate_cli_test_" + std::to_string(::getpid()));
  const double duration = sweep_duration(0.5, 0.05);  // 0.05 s under COULOMB_TEST_SHORT
  for (const fs::path& scene : scenes) {
    SCOPED_TRACE(scene.filename().string());
    const fs::path out = root / scene.stem();
    const fs::path log = root / (scene.stem().string() + ".stderr");
    fs::create_directories(root);
    const std::string command = shell_quote(kCli) + " simulate " + shell_quote(scene.string()) + " -o " +
                                shell_quote(out.string()) + " --duration " + std::to_string(duration) + " -q 2>" + shell_quote(log.string());
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;
    std::stringstream err;
    err << std::ifstream(log).rdbuf();
    EXPECT_EQ(WEXITSTATUS(status), 0) << command << "\n" << err.str();

    std::ifstream stats_file(out / "stats.json");
    ASSERT_TRUE(stats_file.good()) << "no stats.json for " << scene;
    const nlohmann::json stats = nlohmann::json::parse(stats_file);
    // The contract's keys.
    for (const char* key : {"steps", "sim_time_s", "wall_time_s", "real_time_factor", "solver", "integrator",
                            "time_step_s", "max_penetration_m", "failures"})
      EXPECT_TRUE(stats.contains(key)) << key;
    for (const char* key : {"solver_iterations", "momentum_error", "contacts"}) {
      ASSERT_TRUE(stats.contains(key) && stats[key].is_object()) << key;
      EXPECT_TRUE(stats[key].contains("mean")) << key;
      EXPECT_TRUE(stats[key].contains("max")) << key;
    }
    ASSERT_TRUE(stats.contains("energy") && stats["energy"].is_object());
    EXPECT_TRUE(stats["energy"].contains("initial_J"));
    EXPECT_TRUE(stats["energy"].contains("final_J"));

    EXPECT_EQ(stats["failures"].get<int>(), 0);
    const double dt = stats["time_step_s"].get<double>();
    const int steps = stats["steps"].get<int>();
    EXPECT_GT(dt, 0.0);
    EXPECT_EQ(steps, static_cast<int>(std::ceil(duration / dt - 1e-9)));
    EXPECT_NEAR(stats["sim_time_s"].get<double>(), steps * dt, 1e-9);
    EXPECT_EQ(stats["solver"].get<std::string>(), "sap");
    const std::string integrator = stats["integrator"].get<std::string>();
    EXPECT_TRUE(integrator == "implicit-euler" || integrator == "symplectic-euler" || integrator == "midpoint")
        << integrator;
    EXPECT_TRUE(std::isfinite(stats["energy"]["final_J"].get<double>()));
    EXPECT_LE(stats["momentum_error"]["max"].get<double>(), 1e-6 * (1 + 1e-9));  // ε_r default

    // trajectory.csv: a header and one row per step plus the initial state.
    std::ifstream trajectory(out / "trajectory.csv");
    ASSERT_TRUE(trajectory.good());
    std::string line;
    ASSERT_TRUE(std::getline(trajectory, line));
    EXPECT_EQ(line.rfind("t,", 0), 0u) << line;
    int rows = 0;
    while (std::getline(trajectory, line))
      if (!line.empty()) ++rows;
    EXPECT_EQ(rows, steps + 1);
  }
  fs::remove_all(root);
}

// A duration and time step whose step count does not fit in an int are a clear error (exit 1,
// no output folder), not a double-to-int conversion out of range (undefined behaviour: on
// x86-64 the count became INT_MIN and the run silently took 0 steps, exiting 0).
TEST(SimulateCliTest, TooManyStepsIsAClearError) {
  if (kCli.empty()) GTEST_SKIP() << "coulomb_cli is not built (COULOMB_CLI_PATH undefined)";
  const std::string scene = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/incline.yaml";
  const fs::path root = fs::temp_directory_path() / ("coulomb_simulate_steps_test_" + std::to_string(::getpid()));
  const std::vector<std::vector<std::string>> cases = {
      {"--duration", "1e9", "--time-step", "1e-3"},     // 1e12 steps
      {"--duration", "1", "--time-step", "1e-300"},     // 1e300 steps
      {"--duration", "1e300", "--time-step", "1e-300"}, // the ratio overflows to inf
      {"--duration", "2147483.648", "--time-step", "1e-3"}};  // INT_MAX + 1 steps
  for (const std::vector<std::string>& c : cases) {
    fs::remove_all(root);
    std::vector<std::string> args = {"simulate", scene, "-o", (root / "out").string(), "-q", "--no-html"};
    args.insert(args.end(), c.begin(), c.end());
    const RunResult r = run_cli(args);
    SCOPED_TRACE(c[1] + " s at " + c[3] + " s");
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("steps, more than"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(root / "out" / "stats.json"));
  }
  fs::remove_all(root);
}

// --contact-approximation overrides the scene and is recorded in stats.json; a bad name is a
// clear error; inspect reports the scene's approximation.
TEST(SimulateCliTest, ContactApproximationOption) {
  if (kCli.empty()) GTEST_SKIP() << "coulomb_cli is not built (COULOMB_CLI_PATH undefined)";
  const std::string scene = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/incline.yaml";
  const fs::path root = fs::temp_directory_path() / ("coulomb_simulate_approx_test_" + std::to_string(::getpid()));
  for (const char* name : {"sap", "similar", "lagged"}) {
    fs::remove_all(root);
    const RunResult r = run_cli({"simulate", scene, "-o", (root / "out").string(), "-q", "--no-html", "--duration",
                                 "0.2", "--contact-approximation", name});
    EXPECT_EQ(r.status, 0) << name << "\n" << r.out << r.err;
    std::ifstream stats_file(root / "out" / "stats.json");
    ASSERT_TRUE(stats_file.good()) << name;
    const nlohmann::json stats = nlohmann::json::parse(stats_file);
    EXPECT_EQ(stats["contact_approximation"].get<std::string>(), name);
    EXPECT_EQ(stats["failures"].get<int>(), 0) << name;
  }
  fs::remove_all(root);
  const RunResult bad = run_cli({"simulate", scene, "-o", (root / "out").string(), "-q", "--no-html",
                                 "--contact-approximation", "laged"});
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("'laged'"), std::string::npos) << bad.err;
  fs::remove_all(root);
  const RunResult inspect = run_cli({"inspect", scene});
  EXPECT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("contact_approximation lagged"), std::string::npos) << inspect.out;
}

}  // namespace
