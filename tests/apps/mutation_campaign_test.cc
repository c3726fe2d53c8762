// Findings of the black-box mutation campaign (scripts/mutate_cli.py, docs/reliability.md,
// "Mutation campaign through the CLI"), each reproduced here on the built `coulomb` binary with
// the mutant written into the test: the campaign's mutant number, what it changed, what coulomb
// did, and what it does since the fix.
#include <unistd.h>

#include <cmath>
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

class MutationCampaignTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "the coulomb CLI was not built";
    dir_ = fs::temp_directory_path() / ("coulomb_mutation_" + std::to_string(::getpid()) + "_" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// A two-link arm; MASS is the upper link's mass.
const char* kArmUrdf = R"(<robot name="arm">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><origin xyz="1 0 0"/><mass value="MASS"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
</robot>
)";

// Campaign URDF mutant 45 (panda_collision.urdf, a <mass value> set to 1e308): inspect and
// simulate said "the initial velocities of the tree rooted at body 'panda_link1' (largest |v| 0)
// give kinetic energy 0 J: not finite", blaming velocities that were zero; `dynamics --floating`
// printed "bias[root_joint.wx] = -nan is not finite: the values given to --q, --v are too large"
// without the file, though no --q or --v was given. m g overflows: the error is the mass.
TEST_F(MutationCampaignTest, HugeLinkMassIsReportedAsAMassProblemNamingTheFile) {
  const std::string huge = write("huge.urdf", replace_all(kArmUrdf, "MASS", "1e308"));
  for (const char* command : {"inspect", "simulate"}) {
    std::vector<std::string> args = {command, huge};
    if (std::string(command) == "simulate") args.insert(args.end(), {"-o", (dir_ / "out").string(), "-q", "--no-html"});
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: error: " + huge)) << r.err;
    EXPECT_TRUE(contains(r.err, "the gravity forces of the tree rooted at body 'upper' at the initial configuration "
                                "are not finite in double precision (largest body mass 1e+308 kg)"))
        << r.err;
    EXPECT_FALSE(contains(r.err, "velocities")) << r.err;
  }
  for (bool floating : {false, true}) {
    std::vector<std::string> args = {"dynamics", huge, "--json"};
    if (floating) args.push_back("--floating");
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(contains(r.err, "coulomb: error: " + huge + ": ")) << r.err;
    EXPECT_TRUE(contains(r.err, "or the model's masses, inertias or lengths, are too large")) << r.err;
  }
  // 1e6 kg: m g = 9.81e6 N is representable; the gravity torque of the welded arm at q = 0 is
  // m g times the COM's lever arm 1 m about the shoulder (y axis): 9.81e6 N m. (1e308 kg: m g l
  // = 9.81e308 N m overflows double, whose largest value is 1.8e308.)
  const std::string heavy = write("heavy.urdf", replace_all(kArmUrdf, "MASS", "1e6"));
  EXPECT_EQ(run_cli({"inspect", heavy}).status, 0);
  const RunResult ok = run_cli({"dynamics", heavy, "--json"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_NEAR(j.at("bias")[0].get<double>(), -1e6 * 9.81 * 1.0, 1e-9 * 1e6 * 9.81);
}

// examples/models/spring_cylinder.urdf with its only mass (the cylinder's) set to 0: the
// prismatic carriages x and z move no mass. Campaign URDF mutant 118 (`zero_mass`): inspect
// accepted it and simulate exited 1 with "SapProblem: A block 0 is not positive definite" (no
// file). Since, the load refuses it naming the DOF; joint damping makes the step's matrix
// M + δt D positive definite, and the model runs.
TEST_F(MutationCampaignTest, TreeThatMovesNoMassIsRejectedAtLoadTime) {
  const std::string urdf = R"(<robot name="spring_cylinder">
  <link name="world"/>
  <joint name="x" type="prismatic"><parent link="world"/><child link="carriage_x"/><axis xyz="1 0 0"/>DAMPING</joint>
  <link name="carriage_x"/>
  <joint name="z" type="prismatic"><parent link="carriage_x"/><child link="carriage_z"/><axis xyz="0 0 1"/>DAMPING</joint>
  <link name="carriage_z"/>
  <joint name="theta" type="continuous"><parent link="carriage_z"/><child link="cylinder"/><axis xyz="0 1 0"/></joint>
  <link name="cylinder">
    <collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.05" length="0.1"/></geometry></collision>
    <inertial><mass value="0"/><inertia ixx="7.291666667e-4" ixy="0" ixz="0" iyy="6.25e-4" iyz="0" izz="7.291666667e-4"/></inertial>
  </link>
</robot>
)";
  const std::string massless = write("massless.urdf", replace_all(urdf, "DAMPING", ""));
  for (const char* command : {"inspect", "simulate"}) {
    std::vector<std::string> args = {command, massless};
    if (std::string(command) == "simulate") args.insert(args.end(), {"-o", (dir_ / "out").string(), "-q", "--no-html"});
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: error: " + massless)) << r.err;
    EXPECT_TRUE(contains(r.err, "the mass matrix of the tree rooted at body 'carriage_x' is singular at the initial "
                                "configuration: 'x' moves no mass"))
        << r.err;
    EXPECT_FALSE(contains(r.err, "SapProblem")) << r.err;
  }
  const std::string damped = write("damped.urdf", replace_all(urdf, "DAMPING", "<dynamics damping=\"1\"/>"));
  EXPECT_EQ(run_cli({"inspect", damped}).status, 0);
  const RunResult r = run_cli({"simulate", damped, "-o", (dir_ / "damped").string(), "-q", "--no-html", "--duration", "0.1"});
  EXPECT_EQ(r.status, 0) << r.err;
  const nlohmann::json stats = nlohmann::json::parse(read(dir_ / "damped" / "stats.json"));
  EXPECT_EQ(stats.at("status"), "complete");
  EXPECT_EQ(stats.at("failures"), 0);
}

// Campaign scene mutant 49 (mesh_terrain.yaml, the Solo12's HL_HFE joint_positions set to 1e6;
// limits ±10 rad): SAP's limit constraint takes the whole violation back in one step, and at the
// velocities that gives (a radian or more per step) the free motion's chord iteration diverged:
// simulate exited 1 with "SapProblem: A block 4 is not finite", naming neither the scene nor the
// step. The same with a two-link arm 47 rad past its limit, and even 1 rad past. Newton's method
// with the exact Jacobian now takes over from the chord iteration
// (MomentumConservationTest.FreeFloatingA1AtARadianPerStepConservesMomentum), and the runs go
// to their end.
TEST_F(MutationCampaignTest, JointFarPastItsLimitRunsToTheEnd) {
  write("arm.urdf", replace_all(kArmUrdf, "MASS", "1"));
  for (const char* shoulder : {"4", "50", "1.0e6"}) {
    const std::string scene = write(std::string("past_limit_") + shoulder + ".yaml",
                                    "time_step: 0.001\nduration: 0.05\n"
                                    "bodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
                                    "robots:\n  - urdf: arm.urdf\n    floating: true\n    position: [0, 0, 0.3]\n"
                                    "    joint_positions: {shoulder: " + std::string(shoulder) + "}\n");
    const fs::path out = dir_ / (std::string("out_") + shoulder);
    const RunResult r = run_cli({"simulate", scene, "-o", out.string(), "-q", "--no-html"});
    EXPECT_TRUE(r.status == 0 || r.status == 3) << shoulder << ": " << r.err;
    const nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
    EXPECT_EQ(stats.at("status"), "complete") << shoulder;
    EXPECT_EQ(stats.at("steps"), 50) << shoulder;
    EXPECT_FALSE(contains(read(out / "trajectory.csv"), "nan")) << shoulder;
  }
}

// Whatever a step throws, the message names the scene, the step and the time, and stats.json
// says "failed". Reproducer: a ball shot at 1e6 m/s leaves the range the replay stores positions
// in (|x| < 214 km) at step 22.
TEST_F(MutationCampaignTest, AFailingStepNamesTheSceneTheStepAndTheTime) {
  const std::string scene = write("fly.yaml",
                                  "time_step: 0.01\nduration: 0.5\ngravity: [0, 0, 0]\n"
                                  "bodies:\n  - name: ball\n    mass: 1.0\n    shapes: [{type: sphere, radius: 0.1}]\n"
                                  "    position: [0, 0, 1]\n    linear_velocity: [0, 0, 1.0e6]\n");
  const fs::path out = dir_ / "out";
  const RunResult r = run_cli({"simulate", scene, "-o", out.string(), "-q"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + scene + ": the simulation failed at step 22 of 50 (t = 0.22 s): "
                              "replay: position 220001 m"))
      << r.err;
  const nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
  EXPECT_EQ(stats.at("status"), "failed");
}

// Campaign URDF mutant 416 (ur5_robot.urdf, forearm_link's mass 2.275 -> 1e12 kg): every SAP
// solve failed with an infinite momentum error (status line-search-failure in steps.csv, exit
// status 3), and stats.json wrote momentum_error {mean: null, max: null} (nlohmann's NaN/inf).
// Since, the mean and max are over the steps whose momentum error is finite, recomputed here
// from steps.csv, and non_finite_steps counts the others.
TEST_F(MutationCampaignTest, StatsJsonStaysNumericWhenSolvesReportAnInfiniteMomentumError) {
  const std::string shared = COULOMB_SHARED_DIR;
  const std::string ur5 = read(shared + "/models/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf");
  ASSERT_TRUE(contains(ur5, "<mass value=\"2.275\"/>"));
  const std::string heavy = write(
      "ur5_heavy_forearm.urdf",
      replace_all(replace_all(ur5, "<mass value=\"2.275\"/>", "<mass value=\"1e12\"/>"), "package://example-robot-data/",
                  shared + "/models/example-robot-data/"));
  const fs::path out = dir_ / "out";
  // At the default ε_r = 1e-6 whether the first step (48 mm initial overlap on a 10¹² kg link)
  // converges within 100 iterations is a matter of round-off: it failed until the free bodies'
  // 6 × 6 product kernels (the UR5's tree has 6 velocities) and converges since. At ε_r = 1e-12
  // it stalls near 2e-6 and fails either way, which is what this test needs.
  const RunResult r = run_cli(
      {"simulate", heavy, "-o", out.string(), "-q", "--no-html", "--duration", "0.1", "--rel-tolerance", "1e-12"});
  ASSERT_TRUE(r.status == 0 || r.status == 3) << r.err;
  const nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
  ASSERT_TRUE(stats.at("momentum_error").at("mean").is_number()) << stats.dump();
  ASSERT_TRUE(stats.at("momentum_error").at("max").is_number()) << stats.dump();
  // steps.csv: the finite momentum errors, and how many are not.
  std::istringstream csv(read(out / "steps.csv"));
  std::string line;
  std::getline(csv, line);
  int finite = 0, non_finite = 0, failed = 0;
  double sum = 0.0, max = 0.0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 9u) << line;
    const double e = std::stod(cells[4]);  // momentum_error
    if (cells[8] != "success") ++failed;    // status
    if (std::isfinite(e)) {
      ++finite;
      sum += e;
      max = std::max(max, e);
    } else {
      ++non_finite;
      EXPECT_NE(cells[8], "success") << line;
    }
  }
  EXPECT_EQ(finite + non_finite, stats.at("steps").get<int>());
  // Its momentum error is the finite 1.5e239 since SAP takes the norms of an overflowing
  // gradient with stableNorm (SapSolverTest.MomentumErrorOfAnOverflowingProblemIsNotNaN); the
  // solves still fail.
  EXPECT_GT(failed, 0) << "the mutant no longer makes SAP fail: find another reproducer";
  EXPECT_EQ(stats.at("momentum_error").at("non_finite_steps").get<int>(), non_finite);
  EXPECT_EQ(stats.at("failures").get<int>(), failed);
  EXPECT_EQ(r.status, failed > 0 ? 3 : 0);
  EXPECT_NEAR(stats.at("momentum_error").at("mean").get<double>(), finite > 0 ? sum / finite : 0.0, 1e-6 * (1 + max));
  EXPECT_NEAR(stats.at("momentum_error").at("max").get<double>(), max, 1e-6 * (1 + max));
}

// Campaign scene mutants 1064 and 1172 (sphere_stack.yaml, clutter_320.yaml: a body's mass set to
// 1e308): inspect exited 1 with "sphere mass_properties: density = inf must be non-negative and
// finite", naming neither the file nor the key. The density mass / volume of the shapes
// overflowed; the loader now says so at the body's `mass`.
TEST_F(MutationCampaignTest, BodyMassWhoseDensityOverflowsIsRejectedAtItsKey) {
  const auto scene = [&](const std::string& mass) {
    return write("ball_" + mass + ".yaml", "bodies:\n  - name: ball\n    mass: " + mass +
                                             "\n    shapes: [{type: sphere, radius: 0.05}]\n    position: [0, 0, 1]\n");
  };
  const std::string huge = scene("1e308");
  const RunResult r = run_cli({"inspect", huge});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + huge + ":3: bodies[0].mass: body 'ball': 1e+308 kg over its "
                              "shapes' volume "))
      << r.err;
  EXPECT_TRUE(contains(r.err, "gives a density that is not finite in double precision")) << r.err;
  // 1e300 kg in a sphere of 5 cm: density 1.9e303 kg/m^3, representable; inspect reports the mass.
  const RunResult ok = run_cli({"inspect", scene("1e300"), "--json"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_NEAR(j.at("bodies")[0].at("mass").get<double>(), 1e300, 1e-12 * 1e300);
}

// Campaign scene mutants 1700 and 2040 (a body at z = -1e308, a robot at y = -1e6 m): the replay
// stores positions as 0.1 mm integers (|x| < 214 km), and simulate exited 1 with "replay:
// position -1000000.000000 m is not finite or too far from the origin ..." (a 300-digit number
// for 1e308), naming neither the scene nor the way out, and left stats.json saying "running".
TEST_F(MutationCampaignTest, BodyBeyondTheReplayRangeFailsNamingTheSceneAndTheWayOut) {
  const std::string far = write("far.yaml", "time_step: 0.01\nduration: 0.05\nbodies:\n  - name: ball\n    mass: 1\n"
                                            "    shapes: [{type: sphere, radius: 0.05}]\n    position: [0, -1.0e6, 1]\n");
  const fs::path out = dir_ / "out";
  const RunResult r = run_cli({"simulate", far, "-o", out.string(), "-q"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + far + ": the outputs of the initial state: replay: position -1000000 m "
                              "is not finite or too far from the origin"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb simulate --no-html")) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read(out / "stats.json")).at("status"), "failed");
  // Without the replay the run completes, the ball where the file put it at t = 0.
  const RunResult ok = run_cli({"simulate", far, "-o", out.string(), "-q", "--no-html"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(read(out / "stats.json")).at("status"), "complete");
  std::istringstream csv(read(out / "trajectory.csv"));
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header.substr(0, 20), "t,ball.x,ball.y,ball");
  EXPECT_EQ(first.substr(0, 14), "0,0,-1000000,1");
}

// Campaign scene mutant 2609 (clutter_160.yaml, a wall's shapes[2].name set to shapes[1]'s
// "wall_px"): accepted, the second geometry silently renamed "walls/wall_px#2", though
// docs/scene-format.md says shape names are unique within the body. Now an error at the name.
TEST_F(MutationCampaignTest, DuplicateShapeNameInABodyIsRejected) {
  const auto scene = [&](const std::string& second) {
    return write("walls_" + second + ".yaml",
                 "bodies:\n  - name: walls\n    fixed: true\n    shapes:\n"
                 "      - {name: wall_px, type: box, size: [0.1, 1, 1], position: [1, 0, 0]}\n"
                 "      - {name: " + second + ", type: box, size: [0.1, 1, 1], position: [-1, 0, 0]}\n");
  };
  const std::string dup = scene("wall_px");
  const RunResult r = run_cli({"inspect", dup});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + dup + ":6: bodies[0].shapes[1].name: duplicate shape name 'wall_px' "
                              "in body 'walls' (also bodies[0].shapes[0])"))
      << r.err;
  const RunResult ok = run_cli({"inspect", scene("wall_nx"), "--json"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  ASSERT_EQ(j.at("geometries").size(), 2u);
  EXPECT_EQ(j.at("geometries")[0].at("name"), "walls/wall_px");
  EXPECT_EQ(j.at("geometries")[1].at("name"), "walls/wall_nx");
}

// Campaign scene mutant 2525 (four_bar.yaml, the crank actuator's velocity_target set to 1e308,
// kd 20, effort_limit .inf): accepted; the PD force kd (velocity_target - v) = 2e309 N m
// overflowed, and trajectory.csv's crank.tau held inf. Now refused at the actuator.
TEST_F(MutationCampaignTest, ActuatorWhosePdForceOverflowsIsRejected) {
  const auto scene = [&](const std::string& velocity_target) {
    return write("four_bar_" + velocity_target + ".yaml",
                 "time_step: 0.001\nduration: 0.01\nrobots:\n  - urdf: " + std::string(COULOMB_SOURCE_DIR) +
                     "/examples/models/four_bar.urdf\n    actuators:\n      crank: {kp: 0.0, kd: 20.0, velocity_target: " +
                     velocity_target + ", effort_limit: .inf}\n");
  };
  const std::string bad = scene("1e308");
  const RunResult r = run_cli({"inspect", bad});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + bad + ":6: robots[0].actuators.crank: joint 'crank': the PD force "
                              "kp |target - q0| + kd |velocity_target - v0| = inf is not finite"))
      << r.err;
  // The example's 1 rev/s runs.
  const fs::path out = dir_ / "out";
  const RunResult ok = run_cli({"simulate", scene("6.283185307179586"), "-o", out.string(), "-q", "--no-html"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// Campaign scene mutant 16405 (iiwa_hold.yaml, the actuators' kp set to 5e-324, a subnormal):
// accepted, and every row of trajectory.csv held tau = inf: the PD constraint's compliance
// R = 1 / (dt (dt kp + kd)) overflowed. Gains that small now apply their PD law explicitly
// (Simulator::pd_is_implicit), and move the arm as no gains do: the same trajectory as kp = 0.
TEST_F(MutationCampaignTest, SubnormalPdGainsActAsNoGains) {
  const std::string seed = read(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/iiwa_hold.yaml");
  const std::string gains = "all: {kp: 0.0, kd: 0.0}";
  ASSERT_TRUE(contains(seed, gains));
  const auto run = [&](const std::string& name, const std::string& new_gains) {
    const std::string scene = write(name + ".yaml", replace_all(replace_all(seed, gains, "all: {" + new_gains + "}"),
                                                                "../../../shared", COULOMB_SHARED_DIR));
    const fs::path out = dir_ / name;
    const RunResult r = run_cli({"simulate", scene, "-o", out.string(), "-q", "--no-html", "--duration", "0.2"});
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    const std::string trajectory = read(out / "trajectory.csv");
    EXPECT_FALSE(contains(trajectory, "nan")) << name << ": trajectory.csv holds NaN";
    EXPECT_FALSE(contains(trajectory, "inf")) << name << ": trajectory.csv holds inf";
    std::vector<std::vector<double>> rows;
    std::istringstream lines(trajectory);
    std::string line;
    std::getline(lines, line);  // header
    while (std::getline(lines, line)) {
      std::vector<double> row;
      std::istringstream cells(line);
      std::string cell;
      while (std::getline(cells, cell, ',')) row.push_back(std::strtod(cell.c_str(), nullptr));
      rows.push_back(row);
    }
    return rows;
  };
  const auto reference = run("zero_gains", "kp: 0.0, kd: 0.0");
  ASSERT_GT(reference.size(), 100u);
  const std::vector<std::string> tiny = {"kp: 5e-324, kd: 0.0", "kp: 0.0, kd: 1e-300", "kp: 1e-200, kd: 1e-20"};
  for (size_t k = 0; k < tiny.size(); ++k) {
    const std::string& gains_of_mutant = tiny[k];
    const auto rows = run("tiny_gains_" + std::to_string(k), gains_of_mutant);
    ASSERT_EQ(rows.size(), reference.size()) << gains_of_mutant;
    double worst = 0.0;
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].size(), reference[i].size());
      for (size_t j = 0; j < rows[i].size(); ++j)
        worst = std::max(worst, std::abs(rows[i][j] - reference[i][j]) / (1.0 + std::abs(reference[i][j])));
    }
    EXPECT_LE(worst, 1e-12) << gains_of_mutant << ": differs from kp = kd = 0";
  }
}

// Campaign scene mutants 4619 and 6534 (panda_box.yaml with its robot entry duplicated: two
// Pandas in one place, every link overlapping its twin by up to 180 mm): every SAP solve failed
// ("linear-solver-failure", exit 3) and trajectory.csv's panda_link1.contact_fx..fz held nan from
// the second row. Contacts on the common axis of the two link1s have a Jacobian that vanishes
// (W_ii = 0), which made the friction cone's R_t = σ w = 0 and its impulse 0/0. Now the steps
// solve and every output is finite (SapSolverTest.ContactWithZeroJacobianMovesNothingAndStaysFinite
// is the unit test).
TEST_F(MutationCampaignTest, TwoRobotsInOnePlaceGiveFiniteContactForces) {
  const std::string shared = COULOMB_SHARED_DIR;
  const std::string seed = read(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/panda_box.yaml");
  const std::string line = "  - urdf: ../../../shared/models/panda_collision.urdf\n";
  ASSERT_TRUE(contains(seed, line));
  // Mutant 4619: the robot's first line duplicated (a Panda in its zero pose, then the example's).
  const std::string robot = "  - urdf: " + shared + "/models/panda_collision.urdf\n";
  const std::string scene = write("two_pandas.yaml", replace_all(seed, line, robot + robot));
  const fs::path out = dir_ / "out";
  const RunResult r = run_cli({"simulate", scene, "-o", out.string(), "-q", "--no-html", "--duration", "0.01"});
  ASSERT_TRUE(r.status == 0 || r.status == 3) << r.err;
  const std::string trajectory = read(out / "trajectory.csv");
  ASSERT_TRUE(contains(trajectory, "panda_link1.contact_fx")) << trajectory.substr(0, 200);
  EXPECT_FALSE(contains(trajectory, "nan")) << "trajectory.csv holds NaN";
  EXPECT_FALSE(contains(trajectory, "inf")) << "trajectory.csv holds inf";
  const std::string steps = read(out / "steps.csv");
  EXPECT_FALSE(contains(steps, "nan")) << steps;
  EXPECT_FALSE(contains(steps, "linear-solver-failure")) << steps;
}

// Campaign note: an error or warning about a URDF run on its own (`coulomb inspect M.urdf`, which
// wraps the file in a one-robot scene) carried that generated scene's line and key: "M.urdf:5:
// robots[0].urdf: …", line 5 of no file the user has. Now a loader error keeps the file's own
// line, and a check of the whole model names the file alone.
TEST_F(MutationCampaignTest, ModelFileRunOnItsOwnNamesNoGeneratedSceneLine) {
  const std::string bad = write("bad_mass.urdf", replace_all(kArmUrdf, "MASS", "nan"));
  const RunResult r = run_cli({"inspect", bad});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + bad + ":7: link 'upper'")) << r.err;
  EXPECT_FALSE(contains(r.err, "robots[0]")) << r.err;
  // A default position outside the joint's limits: a scene-level warning, about the file.
  const std::string outside = write("outside.urdf", replace_all(replace_all(kArmUrdf, "MASS", "1"),
                                                                "lower=\"-3\"", "lower=\"0.5\""));
  const RunResult w = run_cli({"inspect", outside});
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_TRUE(contains(w.err + w.out, outside + ": initial position 0 of joint 'shoulder'")) << w.err << w.out;
  EXPECT_FALSE(contains(w.err + w.out, "robots[0]")) << w.err << w.out;
  // The same files inside a scene keep the scene's line and key.
  write("arm_bad.urdf", replace_all(kArmUrdf, "MASS", "nan"));
  const std::string scene = write("s.yaml", "robots:\n  - urdf: arm_bad.urdf\n");
  const RunResult s = run_cli({"inspect", scene});
  EXPECT_EQ(s.status, 1);
  EXPECT_TRUE(contains(s.err, scene + ":2: robots[0].urdf: ")) << s.err;
}

// Campaign scene mutants 13621 and 15340 (quadruped.yaml, a1_drop.yaml: the ground box's shape
// position set to ±1e308): `coulomb inspect` died with SIGSEGV in FCL's broadphase. Mutants 11869
// and 16295 (a free body at z = ±1e308): stats.json's energy was infinite. A position is now
// refused at its key when a coordinate lies beyond 1e6 m, the range of shape sizes.
TEST_F(MutationCampaignTest, PositionsBeyondAThousandKilometresAreRefusedAtTheirKey) {
  const std::string shape = write("far_shape.yaml",
                                  "bodies:\n  - name: ground\n    fixed: true\n"
                                  "    shapes: [{type: box, size: [4, 4, 0.2], position: [0, -1e308, -0.1]}]\n"
                                  "  - {name: ball, mass: 1, shapes: [{type: sphere, radius: 0.1}], position: [0, 0, 1]}\n");
  const std::string body = write("far_body.yaml",
                                 "bodies:\n  - {name: ball, mass: 1, shapes: [{type: sphere, radius: 0.1}], "
                                 "position: [0, 0, -1.0e308]}\n");
  for (const auto& [file, key] : {std::pair{shape, "bodies[0].shapes[0].position"}, std::pair{body, "bodies[0].position"}}) {
    for (const char* command : {"inspect", "simulate"}) {
      std::vector<std::string> args = {command, file};
      if (std::string(command) == "simulate") args.insert(args.end(), {"-o", (dir_ / "out").string(), "-q", "--no-html"});
      const RunResult r = run_cli(args);
      EXPECT_EQ(r.status, 1) << file << " " << command << ": " << r.err;
      EXPECT_TRUE(contains(r.err, std::string(key) + ": each coordinate must lie within 1e6 m of the origin")) << r.err;
    }
  }
  // 1e6 m itself is accepted.
  const std::string edge = write("edge.yaml", "bodies:\n  - {name: ball, mass: 1, shapes: [{type: sphere, radius: 0.1}], "
                                              "position: [0, -1.0e6, 1]}\n");
  EXPECT_EQ(run_cli({"inspect", edge}).status, 0);
}

// Campaign URDF mutant 16928 (a1.urdf, a <collision><origin xyz> set to "0 1e308 0"): `coulomb
// inspect` died with SIGSEGV in FCL's broadphase, as the scene mutants above did. A URDF <origin
// xyz> is now refused at its line beyond 1e6 m, and any model (URDF, MJCF, SDF) whose bodies or
// collision shapes lie beyond 1e6 m of the world origin at the initial configuration is refused
// naming the file and the body (scene::check_initial_dynamics).
TEST_F(MutationCampaignTest, ModelOffsetsBeyondAThousandKilometresAreRefused) {
  const std::string arm = replace_all(kArmUrdf, "MASS", "1");
  const std::string sphere = "<geometry><sphere radius=\"0.05\"/>";
  ASSERT_TRUE(contains(arm, sphere));
  const std::string collision = write("far_collision.urdf", replace_all(arm, sphere, "<origin xyz=\"0 1e308 0\"/>" + sphere));
  const std::string joint = write("far_joint.urdf", replace_all(arm, "<origin xyz=\"0 0 0.2\"/>", "<origin xyz=\"0 0 -2e6\"/>"));
  for (const auto& [file, line] : {std::pair{collision, ":8: link 'upper': <collision><origin xyz> = '0 1e308 0'"},
                                    std::pair{joint, ":11: joint 'shoulder': <origin xyz> = '0 0 -2e6'"}}) {
    for (const char* command : {"inspect", "simulate"}) {
      std::vector<std::string> args = {command, file};
      if (std::string(command) == "simulate") args.insert(args.end(), {"-o", (dir_ / "out").string(), "-q", "--no-html"});
      const RunResult r = run_cli(args);
      EXPECT_EQ(r.status, 1) << file << " " << command << ": " << r.err;
      EXPECT_TRUE(contains(r.err, "coulomb: error: " + file + line + ": each coordinate must lie within 1e6 m")) << r.err;
    }
  }
  // MJCF: a free body's pos and a jointed body's pos far away.
  const std::string mjcf = read(std::string(COULOMB_SOURCE_DIR) + "/examples/models/mjcf_arm.xml");
  const std::string box = "<body name=\"box\" pos=\"0.6 0 0.3\"", upper = "<body name=\"upper\" pos=\"0 0 0.1\">";
  ASSERT_TRUE(contains(mjcf, box) && contains(mjcf, upper));
  const std::string far_box = write("far_box.xml", replace_all(mjcf, box, "<body name=\"box\" pos=\"0.6 1e308 0.3\""));
  const RunResult b = run_cli({"inspect", far_box});
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_TRUE(contains(b.err, "coulomb: error: " + far_box + ": body 'box' is at (0.6, 1e+308, 0.3) m in the world at "
                              "the initial configuration: positions must lie within 1e6 m of the world origin"))
      << b.err;
  const std::string far_upper = write("far_upper.xml", replace_all(mjcf, upper, "<body name=\"upper\" pos=\"0 0 3e6\">"));
  const RunResult u = run_cli({"inspect", far_upper});
  EXPECT_EQ(u.status, 1) << u.err;
  EXPECT_TRUE(contains(u.err, far_upper + ": body 'upper")) << u.err;
  // SDF: a model's pose far away; the message names the SDF file, not the generated scene.
  const std::string sdf = read(std::string(COULOMB_SOURCE_DIR) + "/examples/models/sdf/playground.sdf");
  const std::string pose = "<pose>0 1 0 0 0 0</pose>";
  ASSERT_TRUE(contains(sdf, pose));
  fs::copy(std::string(COULOMB_SOURCE_DIR) + "/examples/models/sdf/tumbler", dir_ / "tumbler", fs::copy_options::recursive);
  const std::string far_sdf = write("far.sdf", replace_all(sdf, pose, "<pose>0 1e308 0 0 0 0</pose>"));
  const RunResult f = run_cli({"inspect", far_sdf});
  EXPECT_EQ(f.status, 1) << f.err;
  EXPECT_TRUE(contains(f.err, "coulomb: error: " + far_sdf + ": body 'cartpole/cart' is at (0, 1e+308, 1) m")) << f.err;
  EXPECT_FALSE(contains(f.err, "robots[0]")) << f.err;
  // Within the range, the same models load.
  EXPECT_EQ(run_cli({"inspect", write("near.urdf", replace_all(arm, "<origin xyz=\"0 0 0.2\"/>", "<origin xyz=\"0 0 1e6\"/>"))}).status, 0);
  EXPECT_EQ(run_cli({"inspect", write("near.xml", replace_all(mjcf, box, "<body name=\"box\" pos=\"0.6 9e5 0.3\""))}).status, 0);
}

}  // namespace
