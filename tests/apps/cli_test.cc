// End-to-end tests of the `coulomb` command-line tool: runs the built binary
// (COULOMB_CLI_PATH) through the shell and checks its stdout, stderr and exit status.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using coulomb::testing::kCli;
using coulomb::testing::contains;
using coulomb::testing::RunResult;
using coulomb::testing::run_cli;
using coulomb::testing::shell_quote;
const std::string kModels = std::string(COULOMB_SHARED_DIR) + "/models/";
const std::string kBadDir = std::string(COULOMB_TEST_DATA_DIR) + "/bad_urdf/";



/// "a,b,c" from numbers, with full precision.
std::string csv(const std::vector<double>& x) {
  std::ostringstream os;
  os.precision(17);
  for (size_t i = 0; i < x.size(); ++i) os << (i ? "," : "") << x[i];
  return os.str();
}

class CliTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "the coulomb CLI was not built";
  }
};

// The state of ../shared/models/README.md: q_i = 0.1·(i mod 7), v_i = 0.05·(i mod 5),
// a_i = 0.2·(i mod 3) − 0.1, i = 0..6.
std::vector<std::string> iiwa_state_args() {
  std::vector<double> q(7), v(7), a(7);
  for (int i = 0; i < 7; ++i) {
    q[i] = 0.1 * (i % 7);
    v[i] = 0.05 * (i % 5);
    a[i] = 0.2 * (i % 3) - 0.1;
  }
  return {"--q=" + csv(q), "--v=" + csv(v), "--vdot=" + csv(a)};
}

TEST_F(CliTest, IiwaInverseDynamicsMatchesMujocoFigures) {
  std::vector<std::string> args{"dynamics", kModels + "kuka_iiwa_robot.urdf"};
  for (const std::string& a : iiwa_state_args()) args.push_back(a);
  args.push_back("--json");
  const RunResult r = run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::vector<double> tau = j.at("inverse_dynamics").get<std::vector<double>>();
  const std::vector<double> expected{0.023646060, -1.098808470, -0.137727902, -4.320081239,
                                     0.105160862, -0.343535487, 0.000214662};
  ASSERT_EQ(tau.size(), expected.size());
  for (size_t i = 0; i < tau.size(); ++i) EXPECT_NEAR(tau[i], expected[i], 1e-9) << "joint " << i + 1;
  EXPECT_NEAR(j.at("total_mass").get<double>(), 30.61, 1e-12);
}

TEST_F(CliTest, JsonHasTheContractKeysAndASymmetricMassMatrix) {
  std::vector<std::string> args{"dynamics", kModels + "kuka_iiwa_robot.urdf"};
  for (const std::string& a : iiwa_state_args()) args.push_back(a);
  args.push_back("--json");
  const RunResult r = run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"dof_names", "mass_matrix", "bias", "inverse_dynamics", "total_mass"})
    EXPECT_TRUE(j.contains(key)) << key;
  const auto names = j.at("dof_names").get<std::vector<std::string>>();
  ASSERT_EQ(names.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(names[i], "iiwa_joint_" + std::to_string(i + 1));
  const auto M = j.at("mass_matrix").get<std::vector<std::vector<double>>>();
  ASSERT_EQ(M.size(), names.size());
  for (size_t i = 0; i < M.size(); ++i) {
    ASSERT_EQ(M[i].size(), names.size());
    EXPECT_GT(M[i][i], 0.0);
    for (size_t k = 0; k < M.size(); ++k) EXPECT_NEAR(M[i][k], M[k][i], 1e-12 * (1.0 + std::abs(M[i][k])));
  }
  EXPECT_EQ(j.at("bias").size(), names.size());
  // τ = M v̇ + b, recomputed from the printed figures.
  const auto bias = j.at("bias").get<std::vector<double>>();
  const auto tau = j.at("inverse_dynamics").get<std::vector<double>>();
  const auto vdot = j.at("vdot").get<std::vector<double>>();
  for (size_t i = 0; i < M.size(); ++i) {
    double t = bias[i];
    for (size_t k = 0; k < M.size(); ++k) t += M[i][k] * vdot[k];
    EXPECT_NEAR(tau[i], t, 1e-12);
  }
}

TEST_F(CliTest, FloatingA1) {
  const RunResult r = run_cli({"dynamics", kModels + "a1.urdf", "--floating", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto names = j.at("dof_names").get<std::vector<std::string>>();
  ASSERT_EQ(names.size(), 18u);
  EXPECT_EQ(names[0], "root_joint.wx");
  EXPECT_EQ(names[5], "root_joint.vz");
  EXPECT_EQ(names[6], "FR_hip_joint");
  EXPECT_EQ(j.at("nq").get<int>(), 19);
  EXPECT_EQ(j.at("position_names")[3].get<std::string>(), "root_joint.qw");
  EXPECT_NEAR(j.at("total_mass").get<double>(), 13.741, 1e-9);
  const auto M = j.at("mass_matrix").get<std::vector<std::vector<double>>>();
  ASSERT_EQ(M.size(), 18u);
  for (size_t i = 0; i < 18; ++i)
    for (size_t k = 0; k < 18; ++k) EXPECT_NEAR(M[i][k], M[k][i], 1e-12 * (1.0 + std::abs(M[i][k])));
  // The linear block of the floating base is m·1 (total mass, body-frame velocity).
  for (int i = 3; i < 6; ++i) EXPECT_NEAR(M[i][i], 13.741, 1e-9);
  // At rest, the bias on vz is the weight m·g.
  EXPECT_NEAR(j.at("bias")[5].get<double>(), 13.741 * 9.81, 1e-9);
  // Missing visual meshes are notes on stderr (two, then a count), not errors.
  EXPECT_TRUE(contains(r.err, "coulomb: note:")) << r.err;
  EXPECT_TRUE(contains(r.err, "… and 11 more like these")) << r.err;
  EXPECT_FALSE(contains(r.err, "coulomb: warning:")) << r.err;
}

TEST_F(CliTest, TextOutput) {
  std::vector<std::string> args{"dynamics", kModels + "kuka_iiwa_robot.urdf"};
  for (const std::string& a : iiwa_state_args()) args.push_back(a);
  const RunResult r = run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"iiwa_joint_1", "iiwa_joint_7", "mass matrix", "total mass", "30.61", "tau", "bias"})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
  EXPECT_TRUE(contains(r.out, "-4.32008124")) << r.out;  // τ of joint 4
}

TEST_F(CliTest, DefaultsToNeutralStateAtRest) {
  const RunResult r = run_cli({"dynamics", kModels + "double_pendulum_simple.urdf", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("q").get<std::vector<double>>(), std::vector<double>(2, 0.0));
  EXPECT_EQ(j.at("v").get<std::vector<double>>(), std::vector<double>(2, 0.0));
  // With v = v̇ = 0, inverse dynamics equals the bias (gravity only).
  EXPECT_EQ(j.at("inverse_dynamics"), j.at("bias"));
}

TEST_F(CliTest, EveryBadUrdfFailsNamingTheFile) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kBadDir)) {
    if (entry.path().extension() != ".urdf") continue;
    ++files;
    const std::string path = entry.path().string();
    const RunResult r = run_cli({"dynamics", path, "--json"});
    EXPECT_NE(r.status, 0) << path;
    EXPECT_EQ(r.status, 1) << path;
    EXPECT_TRUE(contains(r.err, "coulomb: error: ")) << r.err;
    EXPECT_TRUE(contains(r.err, entry.path().filename().string())) << r.err;
    EXPECT_EQ(r.out, "") << path;
  }
  EXPECT_GE(files, 10);
}

TEST_F(CliTest, MissingModelFile) {
  const RunResult r = run_cli({"dynamics", kModels + "no_such_model.urdf"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "coulomb: error: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "no_such_model.urdf")) << r.err;
}

TEST_F(CliTest, HelpMentionsEveryOption) {
  const RunResult top = run_cli({"--help"});
  EXPECT_EQ(top.status, 0);
  for (const char* s : {"dynamics", "--version", "--help"}) EXPECT_TRUE(contains(top.out, s)) << s << top.out;

  const RunResult r = run_cli({"dynamics", "--help"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* s : {"MODEL", "--floating", "--q", "--v", "--vdot", "--json",
                        // units and coordinate conventions
                        "rad", "rad/s", "m/s", "N*m", "kg",
                        "qw, qx, qy, qz", "wx, wy, wz, vx, vy, vz", "root link frame", "neutral"})
    EXPECT_TRUE(contains(r.out, s)) << "help lacks \"" << s << "\":\n" << r.out;
}

TEST_F(CliTest, Version) {
  const RunResult r = run_cli({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out, "coulomb ")) << r.out;
}

TEST_F(CliTest, WrongStateSizeIsAClearError) {
  const std::string model = kModels + "kuka_iiwa_robot.urdf";
  RunResult r = run_cli({"dynamics", model, "--q", "0.1,0.2,0.3,0.4,0.5,0.6"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "coulomb: error: --q has 6 values but the model has 7")) << r.err;
  EXPECT_EQ(r.out, "");

  r = run_cli({"dynamics", model, "--v", "1,2,3,4,5,6,7,8"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "--v has 8 values but the model has 7")) << r.err;

  r = run_cli({"dynamics", kModels + "a1.urdf", "--floating", "--vdot", "0,0,0"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "--vdot has 3 values but the model has 18")) << r.err;

  r = run_cli({"dynamics", model, "--v", "0,0,abc,0,0,0,0"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "--v: value 3 is not a number: 'abc'")) << r.err;

  r = run_cli({"dynamics", model, "--q", "0,0,nan,0,0,0,0"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "--q: value 3 is not finite")) << r.err;

  r = run_cli({"dynamics", kModels + "a1.urdf", "--floating", "--q", "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "quaternion")) << r.err;
}

TEST_F(CliTest, UsageErrors) {
  RunResult r = run_cli({"dynamics"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "coulomb: error: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "MODEL")) << r.err;

  r = run_cli({});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "coulomb: error: ")) << r.err;

  r = run_cli({"dynamics", kModels + "kuka_iiwa_robot.urdf", "--no-such-option"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--no-such-option")) << r.err;
}

// Issue 10 ("CLI: usage mistakes exit 2"): an option value out of range or an unknown name is a
// command-line mistake (exit 2, naming the option), found before the scene is loaded; a
// misspelt subcommand gets a suggestion.
TEST_F(CliTest, OptionValuesOutOfRangeAreUsageErrors) {
  const std::string scene = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/incline.yaml";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--integrator", "rk4"}, "--integrator: unknown integrator 'rk4'"},
      {{"--time-step", "0"}, "--time-step must be a finite number > 0 s"},
      {{"--time-step", "nan"}, "--time-step"},
      {{"--duration", "-1"}, "--duration must be a finite number > 0 s"},
      {{"--rel-tolerance", "-1"}, "--rel-tolerance must be in (0, 1)"},
      {{"--rel-tolerance", "1"}, "--rel-tolerance must be in (0, 1)"},
      {{"--contact-approximation", "laged"}, "--contact-approximation"},
      {{"--solver", "lstabel"}, "--solver: unknown solver 'lstabel' (sap, lstable)"},
      {{"--solver", "pgs"}, "--solver: unknown solver 'pgs'"}};
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"simulate", scene, "-o", "/nonexistent-dir/never-created", "-q", "--no-html"};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << flags[0] << " " << flags[1] << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: error: ")) << r.err;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
  }
}

TEST_F(CliTest, UnknownAndPlannedSubcommands) {
  RunResult r = run_cli({"simualte"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "unknown subcommand 'simualte'; did you mean 'simulate'?")) << r.err;
  r = run_cli({"inspcet", "x.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "did you mean 'inspect'?")) << r.err;
  r = run_cli({"frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "unknown subcommand 'frobnicate'")) << r.err;
  EXPECT_FALSE(contains(r.err, "did you mean")) << r.err;
  // `fclib` was the last planned subcommand; it is built now and needs its FILE argument.
  r = run_cli({"fclib"});
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(contains(r.err, "is planned but not built yet")) << r.err;
  EXPECT_TRUE(contains(r.err, "files")) << r.err;
}

// Warnings of the run reach stderr once each; the run succeeds without --strict and exits 3
// with it, and both write the whole output (stats.json included).
TEST_F(CliTest, RunWarningsAndStrict) {
  const fs::path dir = fs::temp_directory_path() / ("coulomb_cli_strict_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path scene = dir / "ghost.yaml";
  std::ofstream(scene) << "time_step: 0.01\nduration: 1.0\nbodies:\n"
                          "  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
                          "  - {name: ghost, mass: 1.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [0, 0, 0.5]}\n";
  for (bool strict : {false, true}) {
    std::vector<std::string> args = {"simulate", scene.string(), "-o", (dir / "out").string(), "-q", "--no-html"};
    if (strict) args.push_back("--strict");
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, strict ? 3 : 0) << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: warning: body 'ghost' has no collision geometry")) << r.err;
    // Falls 1 m below the ground after √(2·1.5/g) = 0.55 s: reported once.
    const auto first = r.err.find("'ghost' fell off or through");
    EXPECT_NE(first, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("'ghost' fell off or through", first + 1), std::string::npos) << r.err;
    EXPECT_EQ(contains(r.err, "--strict: 2 warnings"), strict) << r.err;
    EXPECT_TRUE(fs::exists(dir / "out" / "stats.json"));
    EXPECT_TRUE(fs::exists(dir / "out" / "trajectory.csv"));
  }
  fs::remove_all(dir);
}

// --output-rate thins trajectory.csv and steps.csv to every 1/HZ s (the first and last states
// always); --contacts adds contacts.csv; the summary in stats.json still counts every step.
TEST_F(CliTest, OutputRateAndContacts) {
  const fs::path dir = fs::temp_directory_path() / ("coulomb_cli_rate_" + std::to_string(::getpid()));
  const std::string scene = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/incline.yaml";  // δt = 5 ms
  const RunResult r = run_cli({"simulate", scene, "-o", dir.string(), "-q", "--no-html", "--duration", "1",
                               "--output-rate", "10", "--contacts"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto lines = [](const fs::path& p) {
    std::ifstream in(p);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  EXPECT_EQ(lines(dir / "trajectory.csv"), 1 + 1 + 10);  // header, t = 0, t = 0.1 … 1.0
  EXPECT_EQ(lines(dir / "steps.csv"), 1 + 10);
  EXPECT_GT(lines(dir / "contacts.csv"), 10);
  std::ifstream in(dir / "stats.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("steps").get<int>(), 200);
  const RunResult bad = run_cli({"simulate", scene, "-o", dir.string(), "-q", "--no-html", "--output-rate", "0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(contains(bad.err, "--output-rate must be a finite number > 0 Hz")) << bad.err;
  fs::remove_all(dir);
}

}  // namespace
