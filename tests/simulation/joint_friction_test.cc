// URDF <dynamics friction> and <mimic> in the simulator (issue 10): the joint-friction
// constraint's cost, impulse and Hessian against finite differences; a block on a frictional
// slider against the analytic stopping time and distance, stiction under a smaller force (creep
// bounded by the regularization) and the sliding acceleration (f − F)/m; a mimic coupler
// against the reduced one-dof model with effective inertia I₁ + ρ² I₂.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"
#include "coulomb/solvers/sap/sap_joint_friction_constraint.h"

namespace coulomb::simulation {
namespace {

namespace sap = solvers::sap;

// ℓ, γ = −∂ℓ/∂v_c and G = −∂γ/∂v_c by central differences, in stiction and sliding, on both
// sides, and convexity (ℓ'' = G ≥ 0, ℓ above its tangents); the impulse never exceeds F δt.
TEST(JointFrictionTest, ConstraintMatchesFiniteDifferences) {
  sap::JointFrictionParameters p;
  p.friction = 3.0;
  sap::SapJointFrictionConstraint c(0, 2, 1, p);
  const double dt = 1e-3;
  Eigen::MatrixXd W(1, 1);
  W(0, 0) = 0.5;
  c.prepare(dt, W);
  EXPECT_DOUBLE_EQ(c.R()[0], 1e-3 * 0.5);
  EXPECT_DOUBLE_EQ(c.max_impulse(), 3e-3);
  const double v_stick = c.R()[0] * c.max_impulse();  // the stiction velocity R F δt
  Eigen::VectorXd vc(1), gamma(1), g_plus(1), g_minus(1);
  Eigen::MatrixXd G(1, 1);
  for (double v : {-2.0, -1.5 * v_stick, -0.5 * v_stick, 0.0, 0.3 * v_stick, 0.99 * v_stick, 1.01 * v_stick, 5.0}) {
    SCOPED_TRACE(v);
    vc[0] = v;
    Eigen::Ref<Eigen::MatrixXd> Gref(G);
    const double ell = c.calc(vc, gamma, &Gref);
    EXPECT_LE(std::abs(gamma[0]), c.max_impulse() * (1 + 1e-15));
    const double h = std::abs(v) <= 2 * v_stick ? 1e-3 * v_stick : 1e-6 * std::abs(v);  // away from the kinks
    Eigen::VectorXd vp = vc, vm = vc;
    vp[0] += h;
    vm[0] -= h;
    const double lp = c.calc(vp, g_plus, nullptr), lm = c.calc(vm, g_minus, nullptr);
    EXPECT_NEAR(gamma[0], -(lp - lm) / (2 * h), 1e-6 * c.max_impulse());
    EXPECT_NEAR(G(0, 0), -(g_plus[0] - g_minus[0]) / (2 * h), 1e-6 / c.R()[0]);
    EXPECT_GE(G(0, 0), 0.0);
    // Convex: above the tangent at v, at a far point.
    Eigen::VectorXd vf(1), gf(1);
    vf[0] = v + 3 * v_stick;
    EXPECT_GE(c.calc(vf, gf, nullptr), ell - gamma[0] * (vf[0] - v) - 1e-18);
    if (std::abs(v) < v_stick) { EXPECT_DOUBLE_EQ(G(0, 0), 1.0 / c.R()[0]); }
    if (std::abs(v) > v_stick) { EXPECT_DOUBLE_EQ(G(0, 0), 0.0); }
  }
  // F = 0: no impulse at all.
  p.friction = 0.0;
  c.reset(p);
  c.prepare(dt, W);
  vc[0] = 1.0;
  c.calc(vc, gamma, nullptr);
  EXPECT_EQ(gamma[0], 0.0);
  p.friction = -1.0;
  EXPECT_THROW(c.reset(p), std::invalid_argument);
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

// A 2 kg block on a horizontal prismatic joint with 3 N of dry friction (gravity is along z,
// the slider along x).
Simulator slider(double v0, double dt = 1e-3) {
  const std::string urdf = write_file(
      "slider.urdf",
      "<robot name='slider'><link name='base'/><link name='block'><inertial><mass value='2'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='slide' type='prismatic'><parent link='base'/><child link='block'/><axis xyz='1 0 0'/>"
      "<limit lower='-100' upper='100' effort='100' velocity='100'/><dynamics friction='3'/></joint></robot>");
  const scene::Scene scene = io::parse_scene("time_step: " + std::to_string(dt) + "\nrobots:\n  - urdf: " + urdf +
                                                 "\n    joint_velocities: {slide: " + std::to_string(v0) +
                                                 "}\n    actuators: {slide: {kp: 0}}\n",
                                             "slider.yaml");
  EXPECT_EQ(scene.joint_frictions.size(), 1u);
  SimulatorParameters params;
  params.time_step = dt;
  params.sap.rel_tolerance = 1e-10;
  return Simulator(scene, params);
}

TEST(JointFrictionTest, BlockOnSliderStopsAtTheAnalyticTimeAndDistance) {
  const double m = 2.0, F = 3.0, v0 = 1.0;
  Simulator sim = slider(v0);
  double t_stop = -1.0;
  while (sim.time() < 1.0) {
    sim.step();
    if (t_stop < 0.0 && std::abs(sim.v()[0]) < 1e-4) t_stop = sim.time();
  }
  const double t_expected = m * v0 / F, d_expected = m * v0 * v0 / (2 * F);
  std::printf("[ measured ] slider: stops at t = %.4f s (analytic %.4f), distance %.5f m (analytic %.5f)\n", t_stop,
              t_expected, sim.q()[0], d_expected);
  EXPECT_NEAR(t_stop, t_expected, 0.01 * t_expected);
  EXPECT_NEAR(sim.q()[0], d_expected, 0.01 * d_expected);
  EXPECT_LE(std::abs(sim.v()[0]), 1e-6);  // and stays stopped
}

TEST(JointFrictionTest, StictionBelowAndSlidingAboveTheFrictionForce) {
  const double m = 2.0, F = 3.0, dt = 1e-3;
  {
    Simulator sim = slider(0.0, dt);
    sim.set_actuation(0, 2.0);  // f < F: sticks, creeping at most at R f δt = σ (1/m) f δt
    for (int k = 0; k < 1000; ++k) sim.step();
    const double creep_bound = 1e-3 * (1.0 / m) * 2.0 * dt * 1.0;  // × 1 s
    std::printf("[ measured ] slider under 2 N < 3 N: moved %.3e m in 1 s (creep bound %.3e m)\n", sim.q()[0], creep_bound);
    EXPECT_LE(std::abs(sim.q()[0]), 1.05 * creep_bound);
    EXPECT_GE(sim.q()[0], 0.0);
  }
  {
    Simulator sim = slider(0.0, dt);
    sim.set_actuation(0, 5.0);  // f > F: a = (f − F)/m = 1 m/s²
    for (int k = 0; k < 1000; ++k) sim.step();
    const double a = sim.v()[0] / sim.time();
    std::printf("[ measured ] slider under 5 N > 3 N: a = %.6f m/s^2 (analytic %.6f)\n", a, (5.0 - F) / m);
    EXPECT_NEAR(a, (5.0 - F) / m, 0.005 * (5.0 - F) / m);
  }
}

// Two links turning about vertical axes (gravity does no work): link a on the base (I_a = 0.2
// about its axis), link b (1 kg, I_b = 0.05 about its own axis through its centre of mass) on
// a at 1 m from a's axis, its joint mimicking a's with multiplier −2 and offset 0.1. Then b's
// absolute angle is q₁ + q₂ = −q₁ + 0.1 and the kinetic energy ½ (I_a + m_b·1² + I_b) q̇₁²: a
// torque τ on the leader gives q₁ = τ t² / (2 · 1.25).
TEST(JointFrictionTest, MimicCouplerMatchesTheReducedModel) {
  const std::string urdf = write_file(
      "mimic.urdf",
      "<robot name='pair'><link name='base'/>"
      "<link name='a'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.2' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<link name='b'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.05' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='leader' type='continuous'><parent link='base'/><child link='a'/><axis xyz='0 0 1'/></joint>"
      "<joint name='follower' type='continuous'><parent link='a'/><child link='b'/><origin xyz='1 0 0'/><axis xyz='0 0 1'/>"
      "<mimic joint='leader' multiplier='-2' offset='0.1'/></joint></robot>");
  const scene::Scene scene = io::parse_scene("time_step: 0.001\nrobots:\n  - urdf: " + urdf +
                                                 "\n    joint_positions: {follower: 0.1}\n    actuators: {leader: {kp: 0}}\n",
                                             "mimic.yaml");
  ASSERT_EQ(scene.couplers.size(), 1u);
  EXPECT_EQ(scene.couplers[0].gear_ratio, -2.0);
  for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint}) {
    SimulatorParameters params;
    params.time_step = 1e-3;
    params.integrator = integrator;
    params.sap.rel_tolerance = 1e-10;
    Simulator sim(scene, params);
    sim.set_actuation(0, 1.0);
    double violation = 0.0;
    while (sim.time() < 2.0 - 1e-12) {
      sim.step();
      violation = std::max(violation, std::abs(sim.q()[1] - (-2.0 * sim.q()[0] + 0.1)));
    }
    const double expected = 1.0 * 4.0 / (2.0 * (0.2 + 1.0 + 0.05));
    std::printf("[ measured ] mimic, %s: q_leader(2 s) = %.6f rad (reduced model %.6f), max violation %.2e rad\n",
                to_string(integrator), sim.q()[0], expected, violation);
    EXPECT_NEAR(sim.q()[0], expected, 0.01 * expected);
    EXPECT_LE(violation, 1e-4);
  }
}

TEST(JointFrictionTest, MimicErrorsNameTheFileAndJoint) {
  const std::string head =
      "<robot name='pair'><link name='base'/><link name='a'/><link name='b'/>"
      "<joint name='leader' type='continuous'><parent link='base'/><child link='a'/><axis xyz='0 0 1'/></joint>";
  auto error_of = [&](const std::string& mimic) {
    const std::string urdf = write_file("bad_mimic.urdf", head +
        "<joint name='follower' type='continuous'><parent link='base'/><child link='b'/><axis xyz='0 0 1'/>" + mimic +
        "</joint></robot>");
    try {
      io::parse_scene("robots:\n  - urdf: " + urdf + "\n", "m.yaml");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e = error_of("<mimic joint='nope'/>");
  EXPECT_NE(e.find("bad_mimic.urdf"), std::string::npos) << e;
  EXPECT_NE(e.find("'nope'"), std::string::npos) << e;
  e = error_of("<mimic joint='follower'/>");
  EXPECT_NE(e.find("mimics itself"), std::string::npos) << e;
  e = error_of("<mimic joint='leader'/>");  // both hang from the world: two trees
  EXPECT_NE(e.find("follower and leader must move in one kinematic tree"), std::string::npos) << e;
}

}  // namespace
}  // namespace coulomb::simulation
