// End-to-end tests of `coulomb id` (inverse dynamics with rigid contact and friction): runs the
// built binary (COULOMB_CLI_PATH) and checks its JSON and text output and its exit statuses.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using coulomb::testing::contains;
using coulomb::testing::kCli;
using coulomb::testing::RunResult;
using coulomb::testing::run_cli;
const std::string kModels = std::string(COULOMB_SHARED_DIR) + "/models/";
const std::string kScenes = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/";

/// "a,b,c" from numbers, with full precision.
std::string csv(const std::vector<double>& x) {
  std::ostringstream os;
  os.precision(17);
  for (size_t i = 0; i < x.size(); ++i) os << (i ? "," : "") << x[i];
  return os.str();
}

/// The A1 with hip 0, thigh 0.8, calf −1.5 rad on every leg and its base at height z (the
/// standing pose of examples/scenes/a1_stand.yaml; FR, FL, RR, RL, hip-thigh-calf order).
std::vector<double> a1_stand_q(double z) {
  std::vector<double> q{0, 0, z, 1, 0, 0, 0};
  for (int leg = 0; leg < 4; ++leg)
    for (double x : {0.0, 0.8, -1.5}) q.push_back(x);
  return q;
}

nlohmann::json run_json(const std::vector<std::string>& args, int expected_status = 0) {
  const RunResult r = run_cli(args);
  EXPECT_EQ(r.status, expected_status) << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "):\n" << r.out << "\n" << r.err;
    return nlohmann::json::object();
  }
}

class IdCliTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "the coulomb CLI was not built";
  }
};

// The A1 standing on the ground (feet touching, at rest, desired accelerations zero): every
// formulation that allows friction stops the robot, so the ground's normal impulses over dt
// carry its weight, Σ f_N = m g dt (the base is unactuated: its momentum balance is exactly
// m (v+ − v) = Σ f − m g dt with v+ = v = 0).
//
// The base height matters at the µm level for rigid contact: a foot φ < 0 in the ground is
// pushed out within the step (v+ = −φ/dt up: 1 cm/s for φ = −10 µm, at 0.3123 m), and the LCP
// formulations let a foot φ > 0 above the ground fall freely for φ/dt before it loads it. The
// documented example (README, docs/user-guide.md, --help) has the base at 0.31231 m, feet
// 0.22 µm above the ground: the QP (v+ = 0 is feasible and of least kinetic energy) carries
// m g dt exactly. The LCPs are checked at the touching height found from its φ (φ = 0 to
// round-off).
TEST_F(IdCliTest, A1StandingCarriesItsWeight) {
  const nlohmann::json dyn = run_json({"dynamics", kModels + "a1.urdf", "--floating", "--json"});
  const double mass = dyn.at("total_mass").get<double>();
  EXPECT_NEAR(mass, 13.741, 1e-3);
  const double dt = 1e-3, g = 9.81;

  // The documented example: solved, four foot contacts at one height, m g dt.
  nlohmann::json j = run_json({"id", kModels + "a1.urdf", "--floating", "--q=" + csv(a1_stand_q(0.31231)), "--dt",
                               "0.001", "--json"});
  ASSERT_EQ(j.at("status"), "solved") << j.dump(1);
  EXPECT_EQ(j.at("formulation"), "qp-coulomb");
  ASSERT_EQ(j.at("contacts").size(), 4u) << j.dump(1);
  double phi_min = 1.0, phi_max = -1.0, normal = 0.0;
  for (const auto& c : j.at("contacts")) {
    phi_min = std::min(phi_min, c.at("phi").get<double>());
    phi_max = std::max(phi_max, c.at("phi").get<double>());
    normal += c.at("impulse")[2].get<double>();
    EXPECT_EQ(c.at("body_a"), "world");
    EXPECT_EQ(c.at("geometry_a"), "ground");
    EXPECT_TRUE(contains(c.at("body_b").get<std::string>(), "calf")) << c.dump();
  }
  ASSERT_LT(phi_max - phi_min, 1e-9) << "the four feet should be at one height";
  EXPECT_GT(phi_min, 0.0);
  EXPECT_LT(phi_min, 1e-6);
  EXPECT_NEAR(normal, mass * g * dt, 1e-6 * mass * g * dt);
  const double z_touch = 0.31231 - 0.5 * (phi_min + phi_max);

  for (const char* formulation : {"qp-coulomb", "lcp-coulomb"}) {
    SCOPED_TRACE(formulation);
    j = run_json({"id", kModels + "a1.urdf", "--floating", "--q=" + csv(a1_stand_q(z_touch)), "--dt", "0.001",
                  "--formulation", formulation, "--json"});
    ASSERT_EQ(j.at("status"), "solved") << j.dump(1);
    EXPECT_EQ(j.at("formulation"), formulation);
    EXPECT_DOUBLE_EQ(j.at("time_step").get<double>(), dt);
    EXPECT_EQ(j.at("actuated").size(), 12u);
    EXPECT_EQ(j.at("tau").size(), 12u);
    EXPECT_EQ(j.at("v_next").size(), 18u);
    EXPECT_EQ(j.at("dof_names").size(), 18u);
    ASSERT_EQ(j.at("contacts").size(), 4u);
    double normal = 0.0, fz = 0.0;
    int active = 0;
    for (const auto& c : j.at("contacts")) {
      normal += c.at("impulse")[2].get<double>();
      fz += c.at("force_W")[2].get<double>();
      active += c.at("active").get<bool>();
      EXPECT_EQ(c.at("active").get<bool>(), c.at("impulse")[2].get<double>() > 0.0) << c.dump();
      EXPECT_EQ(c.at("body_a"), "world");  // the ground (listed first): normal up, impulses on the feet
      EXPECT_EQ(c.at("n_W"), nlohmann::json::array({0.0, 0.0, 1.0}));
    }
    // The QP spreads the load over the four feet; the LCP's solution is one of many (Lemke's
    // pivoting may leave a foot unloaded: three feet can carry the robot).
    EXPECT_GE(active, std::string(formulation) == "qp-coulomb" ? 4 : 3);
    EXPECT_NEAR(normal, mass * g * dt, 1e-6 * mass * g * dt);
    EXPECT_NEAR(fz, mass * g, 1e-6 * mass * g);  // force_W = impulse in the world frame / dt
    for (const auto& x : j.at("v_next")) EXPECT_NEAR(x.get<double>(), 0.0, 1e-9);
    const nlohmann::json& stats = j.at("stats");
    for (const char* key : {"contacts", "unactuated", "lcp_size", "solver_iterations", "stage_two_iterations",
                            "stage_two_dimension", "kept_tangent_rows", "warm_started", "used_fallback",
                            "used_mindiff", "mindiff_leaves", "tracking_residual", "dynamics_residual",
                            "min_normal_velocity", "complementarity_residual", "slip_residual", "kinetic_energy",
                            "solve_time"})
      EXPECT_TRUE(stats.contains(key)) << key;
    EXPECT_EQ(stats.at("contacts"), 4);
    EXPECT_EQ(stats.at("unactuated"), 6);
  }
}

// Without contacts (fixed-base iiwa, --no-ground) the torques are the rigid-body inverse
// dynamics τ = M(q) q̈_des + C(q, v) v + g(q) of `coulomb dynamics` (the iiwa has no joint
// damping): at the state of ../shared/models/README.md.
TEST_F(IdCliTest, IiwaWithoutContactsIsRigidBodyInverseDynamics) {
  std::vector<double> q(7), v(7), a(7);
  for (int i = 0; i < 7; ++i) {
    q[i] = 0.1 * (i % 7);
    v[i] = 0.05 * (i % 5);
    a[i] = 0.2 * (i % 3) - 0.1;
  }
  const std::string model = kModels + "kuka_iiwa_robot.urdf";
  const nlohmann::json dyn =
      run_json({"dynamics", model, "--q=" + csv(q), "--v=" + csv(v), "--vdot=" + csv(a), "--json"});
  const std::vector<double> expected = dyn.at("inverse_dynamics").get<std::vector<double>>();
  for (const char* formulation : {"qp-coulomb", "lcp-noslip"}) {
    SCOPED_TRACE(formulation);
    const nlohmann::json j = run_json({"id", model, "--no-ground", "--q=" + csv(q), "--v=" + csv(v),
                                       "--qdd-des=" + csv(a), "--formulation", formulation, "--json"});
    ASSERT_EQ(j.at("status"), "solved") << j.dump(1);
    EXPECT_EQ(j.at("contacts").size(), 0u);
    EXPECT_EQ(j.at("stats").at("unactuated"), 0);
    const std::vector<double> tau = j.at("tau").get<std::vector<double>>();
    ASSERT_EQ(tau.size(), expected.size());
    double scale = 0.0;
    for (double x : expected) scale = std::max(scale, std::abs(x));
    for (size_t i = 0; i < tau.size(); ++i) EXPECT_NEAR(tau[i], expected[i], 1e-9 * scale) << "joint " << i + 1;
    // v+ = v + dt q̈_des with the default dt of 1 ms.
    const std::vector<double> v_next = j.at("v_next").get<std::vector<double>>();
    for (size_t i = 0; i < v_next.size(); ++i) EXPECT_NEAR(v_next[i], v[i] + 1e-3 * a[i], 1e-12);
  }
}

// The scene form: a1_stand.yaml's robot, actuators and initial state, dt = its time_step.
TEST_F(IdCliTest, SceneA1Stand) {
  const RunResult r = run_cli({"id", kScenes + "a1_stand.yaml", "--formulation", "lcp-noslip"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "formulation  lcp-noslip")) << r.out;
  EXPECT_TRUE(contains(r.out, "status       solved")) << r.out;
  EXPECT_TRUE(contains(r.out, "FR_calf_joint")) << r.out;
  EXPECT_TRUE(contains(r.out, "time step    0.001 s")) << r.out;
  const nlohmann::json j = run_json({"id", kScenes + "a1_stand.yaml", "--json", "--mu", "0.5"});
  EXPECT_EQ(j.at("status"), "solved");
  EXPECT_EQ(j.at("actuated").size(), 12u);
  ASSERT_EQ(j.at("contacts").size(), 4u);
  for (const auto& c : j.at("contacts")) EXPECT_EQ(c.at("mu").get<double>(), 0.5);
}

// Command-line mistakes exit 2 naming the option, before the model is read.
TEST_F(IdCliTest, UsageErrors) {
  const std::string model = kModels + "a1.urdf";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--formulation", "lcp-slip"}, "--formulation"},
      {{"--dt", "0"}, "--dt must be a finite number > 0 s"},
      {{"--dt", "-1e-3"}, "--dt must be"},
      {{"--mu", "-1"}, "--mu must be a finite number >= 0"},
      {{"--friction-edges", "2"}, "--friction-edges must be in 3 … 64"},
      {{"--max-distance", "-1"}, "--max-distance"},
      {{"--mindiff"}, "--mindiff applies to --formulation lcp-coulomb"},
      {{"--formulation", "lcp-noslip", "--one-stage"}, "--one-stage applies to"},
      {{"--no-ground", "--ground-height", "1"}, "exclude each other"},
      {{"--no-such-option"}, "--no-such-option"}};
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args{"id", model, "--floating"};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << flags[0] << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: error: ")) << r.err;
    EXPECT_TRUE(contains(r.err, message)) << flags[0] << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
  const RunResult r = run_cli({"id", kScenes + "a1_stand.yaml", "--ground-height", "0.1"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--ground-height applies to a URDF model")) << r.err;
}

// Vectors of the wrong size and unreadable files are errors (exit 1) naming the option / file.
TEST_F(IdCliTest, WrongSizesAndMissingFiles) {
  RunResult r = run_cli({"id", kModels + "a1.urdf", "--floating", "--q", "0,0,0.3"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: --q has 3 values but the model has 19")) << r.err;
  r = run_cli({"id", kModels + "a1.urdf", "--floating", "--v", "0"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "--v has 1 value but the model has 18")) << r.err;
  r = run_cli({"id", kModels + "a1.urdf", "--floating", "--qdd-des", "1,2,3"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "--qdd-des has 3 values but the model has 12 actuated coordinates")) << r.err;
  r = run_cli({"id", kModels + "no_such_model.urdf"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "no_such_model.urdf")) << r.err;
}

// An infeasible request: the A1 with its base WELDED to the world (no --floating: every
// coordinate is actuated, none is free), feet touching the ground, and the calves accelerated so
// that the feet move down into it. The prescribed motion fixes v+ completely, and no contact
// impulse can change a prescribed velocity (it is absorbed by the actuators), so the feet's
// normal velocity N v+ + φ/dt < 0 whatever the impulses: non-penetration cannot hold. The QP
// formulations report Stage I infeasible (exit 1, JSON still printed); the no-slip LCP answers
// with the closest feasible motion (inconsistent: a warning with the tracking residual, exit 3).
TEST_F(IdCliTest, InfeasibleRequest) {
  // Welded at the origin, the feet's lowest points are about 0.3123 m below the trunk; find the
  // touching height from φ with the ground 2.7 mm lower (--max-distance 1 cm widens the
  // collision margin so that these contacts are found; with complementarity (the LCP) the
  // separated feet carry nothing, whereas the QP formulations may push on separated contacts
  // within --max-distance, digest §10.9).
  std::vector<double> q;
  for (int leg = 0; leg < 4; ++leg)
    for (double x : {0.0, 0.8, -1.5}) q.push_back(x);
  const std::string model = kModels + "a1.urdf";
  nlohmann::json j =
      run_json({"id", model, "--q=" + csv(q), "--ground-height", "-0.315", "--max-distance", "0.01", "--formulation",
                "lcp-coulomb", "--json"});
  EXPECT_EQ(j.at("status"), "solved");
  ASSERT_EQ(j.at("contacts").size(), 4u) << j.dump(1);
  for (const auto& c : j.at("contacts")) EXPECT_EQ(c.at("impulse")[2].get<double>(), 0.0) << c.dump();
  const double ground = -0.315 + j.at("contacts")[0].at("phi").get<double>();
  // Calves extending at 50 rad/s² (calf angle −1.5 → straighter) drive the feet down.
  const std::vector<double> qdd{0, 0, 50, 0, 0, 50, 0, 0, 50, 0, 0, 50};
  const std::vector<std::string> base{"id", model, "--q=" + csv(q), "--ground-height=" + csv({ground}),
                                      "--qdd-des=" + csv(qdd)};

  std::vector<std::string> args = base;
  args.push_back("--json");
  RunResult r = run_cli(args);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: error: inverse dynamics infeasible: ")) << r.err;
  j = nlohmann::json::parse(r.out);  // printed before the error
  EXPECT_EQ(j.at("status"), "infeasible");
  EXPECT_FALSE(j.at("message").get<std::string>().empty());

  args = base;
  r = run_cli(args);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "status       infeasible")) << r.out;
  EXPECT_TRUE(contains(r.err, "infeasible")) << r.err;

  args = base;
  args.insert(args.end(), {"--formulation", "lcp-noslip"});
  r = run_cli(args);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "coulomb: warning: the desired motion is not reachable")) << r.err;
  EXPECT_TRUE(contains(r.err, "tracking residual")) << r.err;
  EXPECT_TRUE(contains(r.out, "status       inconsistent")) << r.out;
}

TEST_F(IdCliTest, HelpExplainsFormulationsAndExitStatuses) {
  const RunResult r = run_cli({"id", "--help"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* text : {"qp-coulomb", "qp-noslip", "lcp-coulomb", "lcp-noslip", "--qdd-des", "--friction-edges",
                           "--one-stage", "--mindiff", "--ground-height", "--no-ground", "--max-distance",
                           "Exit status", "points from A", "the one B receives", "examples/scenes/a1_stand.yaml"})
    EXPECT_TRUE(contains(r.out, text)) << text;
}

}  // namespace
