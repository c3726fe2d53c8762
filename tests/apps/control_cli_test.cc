// End-to-end tests of `coulomb control` and `coulomb experiment id-tables`: runs the built binary
// (COULOMB_CLI_PATH) and checks exit statuses, messages and the files written.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;

using coulomb::testing::contains;
using coulomb::testing::kCli;
using coulomb::testing::RunResult;
using coulomb::testing::run_cli;

class ControlCliTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "the coulomb CLI was not built";
    dir_ = fs::temp_directory_path() /
           ("coulomb_control_cli_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // The A1 trot scene of the experiments (as examples/scenes/a1_id.yaml).
    scene_ = (dir_ / "a1_trot.yaml").string();
    std::ofstream(scene_) << "time_step: 0.001\nduration: 1.0\n"
                             "contact: {mu: 0.8, stiffness: 1.0e5, dissipation_time: 0.01}\n"
                             "bodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
                             "robots:\n  - urdf: "
                          << COULOMB_SHARED_DIR
                          << "/models/a1.urdf\n"
                             "    floating: true\n    position: [0, 0, 0.35]\n    place_on_ground: true\n"
                             "    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: 0.8, "
                             "RL_thigh_joint: 0.8, FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: -1.5, "
                             "RL_calf_joint: -1.5}\n"
                             "    actuators:\n      all: {kp: 80.0, kd: 2.0}\n";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string scene_;
};

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(ControlCliTest, BadControllerOrTerrainIsAUsageErrorListingTheValidNames) {
  RunResult r = run_cli({"control", scene_, "--controller", "mpc", "-o", (dir_ / "out").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: --controller: unknown controller 'mpc'")) << r.err;
  for (const char* name : {"id-qp-mu", "id-qp-inf", "id-lcp-mu", "id-lcp-inf", "pid", "id-t-1", "id-t-2"})
    EXPECT_TRUE(contains(r.err, name)) << name << "\n" << r.err;

  r = run_cli({"control", scene_, "--controller", "pid", "--terrain", "ice", "-o", (dir_ / "out").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--terrain: unknown terrain 'ice'")) << r.err;
  for (const char* name : {"scene", "rigid-low", "rigid-high", "compliant-low", "compliant-high", "heightmap"})
    EXPECT_TRUE(contains(r.err, name)) << name << "\n" << r.err;

  r = run_cli({"control", scene_, "-o", (dir_ / "out").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--controller")) << r.err;

  r = run_cli({"control", scene_, "--controller", "pid", "--duration", "-1", "-o", (dir_ / "out").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--duration")) << r.err;
}

TEST_F(ControlCliTest, HelpExplainsControllersAndTerrains) {
  const RunResult r = run_cli({"control", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* text : {"id-qp-mu", "ID(t_i)_{QP,mu}", "pid", "id-t-2", "rigid-low", "compliant-high", "heightmap",
                           "metrics.json", "--seed", "--no-html"})
    EXPECT_TRUE(contains(r.out, text)) << text;
  const RunResult e = run_cli({"experiment", "id-tables", "--help"});
  EXPECT_EQ(e.status, 0);
  for (const char* text : {"--jobs", "--controllers", "--terrains", "--duration", "table3", "--scene"})
    EXPECT_TRUE(contains(e.out, text)) << text;
}

// Needs the real controllers and trot planner (issue 13's other parts).
TEST_F(ControlCliTest, ShortRunWritesMetricsAndTheSimulationOutputs) {
  const fs::path out = dir_ / "out";
  const RunResult r = run_cli({"control", scene_, "--controller", "id-qp-mu", "--terrain", "rigid-high", "--duration",
                               "0.2", "--no-html", "-o", out.string()});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "joint tracking")) << r.out;
  for (const char* file : {"metrics.json", "series.csv", "trajectory.csv", "contacts.csv", "steps.csv", "stats.json"})
    EXPECT_TRUE(fs::exists(out / file)) << file;
  EXPECT_FALSE(fs::exists(out / "replay.html"));
  const nlohmann::json m = nlohmann::json::parse(read(out / "metrics.json"));
  for (const char* key :
       {"controller", "terrain", "duration", "steps", "joint_position_error", "joint_velocity_error", "torque_rate",
        "torque_step", "torque", "max_torque_rate", "normal_force_error", "normal_force_error_relative",
        "mean_normal_force", "fell", "fall_time", "fall_reason", "distance", "net_displacement", "mean_forward_speed",
        "controller_time_mean", "controller_time_max", "id_not_solved", "simulator_failures", "waypoints_reached",
        "box_dropped", "box_drop_time", "box_hold_ratio"})
    EXPECT_TRUE(m.contains(key)) << key;
  EXPECT_EQ(m["controller"], "id-qp-mu");
  EXPECT_EQ(m["terrain"], "rigid-high");
  EXPECT_EQ(m["steps"].get<long long>(), 200);
  EXPECT_FALSE(m["fell"].get<bool>());
  EXPECT_TRUE(m["fall_time"].is_null());
  EXPECT_TRUE(m["normal_force_error"].is_number());
  const nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
  EXPECT_EQ(stats["steps"].get<int>(), 200);
  EXPECT_EQ(stats["contact_approximation"], "sap");
  // trajectory.csv: the initial row and one per step.
  std::ifstream trajectory(out / "trajectory.csv");
  int lines = 0;
  for (std::string line; std::getline(trajectory, line);) ++lines;
  EXPECT_EQ(lines, 1 + 1 + 200);
  // series.csv at 100 rows per second.
  std::ifstream series(out / "series.csv");
  std::string header;
  std::getline(series, header);
  EXPECT_EQ(header,
            "t,joint_position_error,joint_velocity_error,torque_rate,predicted_normal,simulated_normal,base_x,base_y,"
            "base_z");
  int rows = 0;
  for (std::string line; std::getline(series, line);) ++rows;
  EXPECT_EQ(rows, 20);
}

// The experiment driver on a tiny selection: two controllers, one terrain, 50 ms.
TEST_F(ControlCliTest, ExperimentWritesTablesAndRunFolders) {
  const fs::path out = dir_ / "exp";
  const RunResult r = run_cli({"experiment", "id-tables", "-o", out.string(), "--scene", scene_, "--panda-scene",
                               (dir_ / "no_panda.yaml").string(), "--duration", "0.05", "--controllers",
                               "pid,id-qp-mu", "--terrains", "rigid-low", "--jobs", "2", "--no-plots"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.err, "arm runs were skipped")) << r.err;
  for (const char* file : {"table3.md", "table3.csv", "table4.md", "table4.csv", "table5.md", "table5.csv",
                           "heightmap.md", "arm.md", "runs.csv", "runs.json", "summary.md", "plots.py",
                           "waypoints.csv", "runs/pid_rigid-low/metrics.json", "runs/pid_rigid-low/series.csv",
                           "runs/id-qp-mu_rigid-low/metrics.json"})
    EXPECT_TRUE(fs::exists(out / file)) << file;
  const std::string table3 = read(out / "table3.md");
  EXPECT_TRUE(contains(table3, "| PID |")) << table3;
  EXPECT_TRUE(contains(table3, "ID(t_i)_{QP,μ}")) << table3;
  const nlohmann::json runs = nlohmann::json::parse(read(out / "runs.json"));
  ASSERT_EQ(runs.size(), 2u);
  const nlohmann::json m = nlohmann::json::parse(read(out / "runs/pid_rigid-low/metrics.json"));
  EXPECT_EQ(m["steps"].get<long long>(), 50);

  const RunResult bad = run_cli({"experiment", "id-tables", "-o", out.string(), "--controllers", "pid,foo"});
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_TRUE(contains(bad.err, "unknown controller 'foo'")) << bad.err;
}

}  // namespace
