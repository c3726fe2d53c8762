// `coulomb bench`: its figures are those of the same run under `coulomb simulate` (which counts
// them independently in stats.json), the stage times add up to the step time, perturbed states
// differ, and bad options are usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace coulomb::cli {
namespace {

namespace fs = std::filesystem;
using coulomb::testing::contains;
using coulomb::testing::run_cli;
using coulomb::testing::RunResult;

const std::string kBoxStack = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/box_stack.yaml";
const std::string kClutter = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/clutter.yaml";

TEST(BenchCliTest, OneStateMatchesSimulateStats) {
  // clutter: contacts appear and change, so iterations and contacts are non-trivial figures.
  const int steps = 60;
  const RunResult b = run_cli({"bench", kClutter, "--steps", std::to_string(steps), "--states", "1", "--json"});
  ASSERT_EQ(b.status, 0) << b.err;
  const nlohmann::json j = nlohmann::json::parse(b.out);
  const fs::path dir = fs::temp_directory_path() / ("coulomb_bench_cli_" + std::to_string(::getpid()));
  const double dt = j.at("time_step").get<double>();
  const RunResult s = run_cli({"simulate", kClutter, "-o", dir.string(), "-q", "--no-html", "--duration",
                               std::to_string(steps * dt)});
  ASSERT_EQ(s.status, 0) << s.err;
  std::ifstream in(dir / "stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in);
  fs::remove_all(dir);
  ASSERT_EQ(stats.at("steps").get<int>(), steps);
  EXPECT_NEAR(j.at("iterations_per_step").get<double>(), stats.at("solver_iterations").at("mean").get<double>(), 1e-12);
  EXPECT_EQ(j.at("iterations_max").get<int>(), stats.at("solver_iterations").at("max").get<int>());
  EXPECT_NEAR(j.at("contacts_per_step").get<double>(), stats.at("contacts").at("mean").get<double>(), 1e-12);
  EXPECT_EQ(j.at("contacts_max").get<int>(), stats.at("contacts").at("max").get<int>());
  EXPECT_DOUBLE_EQ(j.at("max_penetration").get<double>(), stats.at("max_penetration_m").get<double>());
  EXPECT_GT(j.at("iterations_per_step").get<double>(), 0.5);
  EXPECT_EQ(j.at("failures").get<int>(), 0);
  const std::string kernels = j.at("kernels").get<std::string>();
  EXPECT_TRUE(kernels == "avx2-fma" || kernels == "baseline") << kernels;
}

TEST(BenchCliTest, StagesAddUpAndStatesDiffer) {
  const RunResult b = run_cli({"bench", kClutter, "--steps", "80", "--states", "3", "--perturb", "1e-6", "--json"});
  ASSERT_EQ(b.status, 0) << b.err;
  const nlohmann::json j = nlohmann::json::parse(b.out);
  const auto& per_state = j.at("steps_per_second").at("per_state");
  ASSERT_EQ(per_state.size(), 3u);
  for (const auto& x : per_state) EXPECT_GT(x.get<double>(), 0.0);
  const double median = j.at("steps_per_second").at("median").get<double>();
  EXPECT_GE(median, j.at("steps_per_second").at("min").get<double>());
  EXPECT_LE(median, j.at("steps_per_second").at("max").get<double>());
  double fraction = 0.0, solve_and_contacts = 0.0;
  for (const auto& [name, stage] : j.at("stages").items()) {
    EXPECT_GE(stage.at("fraction").get<double>(), 0.0) << name;
    fraction += stage.at("fraction").get<double>();
    if (name == "solve" || name == "contacts") solve_and_contacts += stage.at("fraction").get<double>();
  }
  EXPECT_NEAR(fraction, 1.0, 1e-9);  // "other" closes the sum
  EXPECT_GT(solve_and_contacts, 0.3);  // a pile's time is in collision and SAP, not in the timers
}

TEST(BenchCliTest, TableAndUsageErrors) {
  const RunResult b = run_cli({"bench", kBoxStack, "--steps", "10", "--states", "1"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(contains(b.out, "steps/s")) << b.out;
  EXPECT_TRUE(contains(b.out, "where a step's time goes")) << b.out;
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--steps", "0"}, {"--states", "0"}, {"--perturb", "-1"}, {"--time-step", "0"}, {"--solver", "pgs"}}) {
    const RunResult r = run_cli({"bench", kBoxStack, flag, value});
    EXPECT_EQ(r.status, 2) << flag << " " << value << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, flag)) << r.err;
  }
}

// Progress to a pipe or a log (not a terminal): one whole line per starting state, not the
// terminal's carriage returns (which ran the lines together in a log).
TEST(BenchCliTest, ProgressToALogIsOneLinePerState) {
  const RunResult b = run_cli({"bench", kBoxStack, "--steps", "5", "--states", "3"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(contains(b.err, "coulomb bench: state 1 of 3 done\ncoulomb bench: state 2 of 3 done\n"
                              "coulomb bench: state 3 of 3 done\n")) << b.err;
  EXPECT_FALSE(contains(b.err, "\r")) << b.err;
}

}  // namespace
}  // namespace coulomb::cli
