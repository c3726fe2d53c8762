// Ball joints (JointType::kBall): the algorithms against each other (RNEA, CRBA, ABA), the
// Jacobians against finite differences of forward kinematics, the configuration manifold, and
// the physics of a spherical pendulum (energy over 2 s; the conical pendulum's precession rate
// ω² = g / (L cos θ), a textbook result).
#include <cmath>
#include <iostream>
#include <numbers>
#include <random>

#include <Eigen/Eigenvalues>
#include <gtest/gtest.h>

#include "coulomb/multibody.h"
#include "coulomb/simulation/simulator.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using math::Matrix3;
using math::SpatialInertia;
using math::Transform;
using math::Vector3;

JointSpec ball(const std::string& name, const Transform& X_PJ = {}) {
  JointSpec j;
  j.name = name;
  j.type = JointType::kBall;
  j.X_PJ = X_PJ;
  return j;
}

SpatialInertia random_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> um(0.5, 2.0), uc(-0.3, 0.3);
  return SpatialInertia::FromCenterOfMass(um(rng), Vector3(uc(rng), uc(rng), uc(rng)),
                                          testing::random_rotational_inertia(rng));
}

/// A chain world –ball– a –revolute– b –ball– c –prismatic– d, and a second tree: a free body
/// with a ball-jointed child. Joint frames at random poses.
Model ball_chain(std::mt19937& rng) {
  ModelBuilder builder("ball_chain");
  std::normal_distribution<double> n(0.0, 1.0);
  builder.add_link("a", "world", ball("b0", testing::random_transform(rng)), random_inertia(rng));
  builder.add_link("b", "a", testing::revolute("r1", Vector3(n(rng), n(rng), n(rng)), testing::random_transform(rng)),
                   random_inertia(rng));
  builder.add_link("c", "b", ball("b2", testing::random_transform(rng)), random_inertia(rng));
  builder.add_link("d", "c", testing::prismatic("p3", Vector3(n(rng), n(rng), n(rng)), testing::random_transform(rng)),
                   random_inertia(rng));
  builder.add_link("base", "world", testing::floating("free"), random_inertia(rng));
  builder.add_link("arm", "base", ball("b5", testing::random_transform(rng)), random_inertia(rng));
  return builder.build();
}

TEST(BallJointTest, CoordinatesAndNames) {
  std::mt19937 rng(1);
  const Model model = ball_chain(rng);
  EXPECT_EQ(model.nq(), 4 + 1 + 4 + 1 + 7 + 4);
  EXPECT_EQ(model.nv(), 3 + 1 + 3 + 1 + 6 + 3);
  const Joint& j = model.body(model.joint_body("b0")).joint;
  EXPECT_EQ(j.nq, 4);
  EXPECT_EQ(j.nv, 3);
  EXPECT_STREQ(joint_type_name(JointType::kBall), "ball");
  EXPECT_EQ(model.position_names()[j.q_index], "b0.qw");
  EXPECT_EQ(model.position_names()[j.q_index + 3], "b0.qz");
  EXPECT_EQ(model.dof_names()[j.v_index], "b0.wx");
  EXPECT_EQ(model.dof_names()[j.v_index + 2], "b0.wz");
  const VectorXd q0 = model.neutral_configuration();
  EXPECT_EQ(q0[j.q_index], 1.0);
  EXPECT_EQ(q0.segment<3>(j.q_index + 1), Vector3::Zero());
  VectorXd bad = q0;
  bad.segment<4>(j.q_index).setZero();
  EXPECT_THROW(model.check_configuration(bad), std::invalid_argument);
  // Rotating the ball joint by a quaternion rotates the child about the joint origin.
  Workspace ws(model);
  VectorXd q = q0;
  const math::Quaternion quat(Eigen::AngleAxisd(0.7, Vector3(1, 2, 3).normalized()));
  q.segment<4>(j.q_index) << quat.w(), quat.x(), quat.y(), quat.z();
  forward_kinematics(model, ws, q);
  const int a = model.joint_body("b0");
  EXPECT_LE((ws.X_PB[a].p - j.X_PJ.p).norm(), 1e-15);
  EXPECT_LE((ws.X_PB[a].R - j.X_PJ.R * quat.toRotationMatrix()).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(BallJointTest, RneaCrbaAbaAgree) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 10; ++trial) {
    const Model model = ball_chain(rng);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd a = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd tau = rnea(model, ws, q, v, a);
    const MatrixXd M = crba(model, ws, q);
    const VectorXd b = bias_forces(model, ws, q, v);
    EXPECT_LE(testing::relative_error(M * a + b, tau), 1e-10) << "trial " << trial;
    EXPECT_LE((M - M.transpose()).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_GT(Eigen::SelfAdjointEigenSolver<MatrixXd>(M).eigenvalues().minCoeff(), 0.0);
    const VectorXd a_aba = aba(model, ws, q, v, tau);
    EXPECT_LE(testing::relative_error(a_aba, a), 1e-10) << "trial " << trial;
  }
}

TEST(BallJointTest, GeneralizedMomentumAndItsBiasMatchCrbaAndFiniteDifferences) {
  // p = M v, and β = Ṁ v − C v − ∂V/∂q with Ṁ v by central differences of CRBA along q ⊕ t v.
  std::mt19937 rng(6);
  for (int trial = 0; trial < 5; ++trial) {
    const Model model = ball_chain(rng);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv());
    generalized_momentum(model, ws, q, v);
    const VectorXd p = ws.momentum, beta = ws.momentum_bias;
    const MatrixXd M = crba(model, ws, q);
    EXPECT_LT(testing::relative_error(p, M * v), 1e-12) << "trial " << trial;
    const double h = 1e-6;
    VectorXd q_plus(model.nq()), q_minus(model.nq());
    integrate(model, q, v, h, q_plus);
    integrate(model, q, v, -h, q_minus);
    const VectorXd Mdot_v = (MatrixXd(crba(model, ws, q_plus)) - MatrixXd(crba(model, ws, q_minus))) * v / (2 * h);
    const VectorXd b = bias_forces(model, ws, q, v);
    EXPECT_LT(testing::relative_error(beta, Mdot_v - b), 1e-7) << "trial " << trial;
  }
}

TEST(BallJointTest, FrameJacobiansMatchFiniteDifferencesOfForwardKinematics) {
  std::mt19937 rng(3);
  const double eps = 1e-6;
  for (int trial = 0; trial < 5; ++trial) {
    const Model model = ball_chain(rng);
    Workspace ws(model), ws_fd(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv());
    forward_kinematics(model, ws, q);
    MatrixXd J(6, model.nv());
    VectorXd qp(model.nq()), qm(model.nq());
    integrate(model, q, v, eps, qp);
    integrate(model, q, v, -eps, qm);
    for (const char* link : {"a", "b", "c", "d", "arm"}) {
      const int f = model.frame_index(link);
      frame_jacobian(model, ws, f, ReferenceFrame::kLocalWorldAligned, J);
      const math::Vector6 Jv = J * v;
      forward_kinematics(model, ws_fd, qp);
      const Transform Xp = ws_fd.X_WB[model.frame(f).body] * model.frame(f).X_BF;
      forward_kinematics(model, ws_fd, qm);
      const Transform Xm = ws_fd.X_WB[model.frame(f).body] * model.frame(f).X_BF;
      const Vector3 w_fd = math::so3_log(Xp.R * Xm.R.transpose()) / (2 * eps);
      const Vector3 v_fd = (Xp.p - Xm.p) / (2 * eps);
      EXPECT_LE((Jv.head<3>() - w_fd).norm(), 1e-7 * std::max(1.0, w_fd.norm())) << link << " trial " << trial;
      EXPECT_LE((Jv.tail<3>() - v_fd).norm(), 1e-7 * std::max(1.0, v_fd.norm())) << link << " trial " << trial;
    }
  }
}

TEST(BallJointTest, KinematicMapIsTheDerivativeOfIntegrate) {
  std::mt19937 rng(4);
  const Model model = ball_chain(rng);
  const VectorXd q = random_configuration(model, rng);
  const VectorXd v = testing::random_vector(rng, model.nv());
  MatrixXd N(model.nq(), model.nv());
  kinematic_map(model, q, N);
  VectorXd qdot(model.nq()), qp(model.nq()), qm(model.nq());
  velocity_to_qdot(model, q, v, qdot);
  const double eps = 1e-6;
  integrate(model, q, v, eps, qp);
  integrate(model, q, v, -eps, qm);
  const VectorXd fd = (qp - qm) / (2 * eps);
  EXPECT_LE((N * v - fd).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LE((qdot - fd).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(BallJointTest, IntegrateDifferenceRoundTrip) {
  std::mt19937 rng(5);
  const Model model = ball_chain(rng);
  for (int trial = 0; trial < 20; ++trial) {
    const VectorXd q0 = random_configuration(model, rng);
    const VectorXd dq = testing::random_vector(rng, model.nv(), 1.0);  // rotations below π
    VectorXd q1(model.nq()), back(model.nv()), q1_again(model.nq());
    integrate(model, q0, dq, 1.0, q1);
    difference(model, q0, q1, back);
    EXPECT_LE((back - dq).cwiseAbs().maxCoeff(), 1e-12) << "trial " << trial;
    // And integrate(q0, difference(q0, q2)) = q2 for any q2 (quaternions up to sign: w ≥ 0).
    VectorXd q2 = random_configuration(model, rng);
    difference(model, q0, q2, back);
    integrate(model, q0, back, 1.0, q1_again);
    normalize_configuration(model, q2);
    EXPECT_LE((q1_again - q2).cwiseAbs().maxCoeff(), 1e-12) << "trial " << trial;
  }
  // The unit-norm and w ≥ 0 convention of normalize_configuration.
  VectorXd q = model.neutral_configuration();
  const Joint& j = model.body(model.joint_body("b2")).joint;
  q.segment<4>(j.q_index) << -2, 0, 0, 0;
  normalize_configuration(model, q);
  EXPECT_EQ(q.segment<4>(j.q_index), Eigen::Vector4d(1, 0, 0, 0));
}

// ------------------------------------------------------------------------------------------
// A spherical pendulum: a ball joint at (0, 0, 2), the bob a solid sphere (radius 5 cm, 1 kg)
// whose centre is L = 0.8 m below the joint.

constexpr double kL = 0.8, kMass = 1.0, kRadius = 0.05, kG = 9.81;

Model spherical_pendulum() {
  ModelBuilder builder("spherical_pendulum");
  const double i = 0.4 * kMass * kRadius * kRadius;
  builder.add_link("bob", "world", ball("pivot", testing::translation(0, 0, 2)),
                   SpatialInertia::FromCenterOfMass(kMass, Vector3(0, 0, -kL), i * Matrix3::Identity()));
  return builder.build();
}

/// Bob tilted by θ about x, spinning about the world's z axis at rate ω (joint frame = world).
void conical_state(const Model& model, double theta, double omega, VectorXd& q, VectorXd& v) {
  q = model.neutral_configuration();
  v = VectorXd::Zero(model.nv());
  const math::Quaternion quat(Eigen::AngleAxisd(theta, Vector3::UnitX()));
  q.segment<4>(0) << quat.w(), quat.x(), quat.y(), quat.z();
  v[2] = omega;
}

TEST(BallJointTest, ConicalPendulumSteadyPrecession) {
  // Steady precession: the rod's tension balances gravity and the centripetal force when
  // ω² = g / (L cos θ) (the spherical inertia of the bob adds no gyroscopic torque). Then ω is
  // constant in the world frame: forward dynamics gives zero acceleration, and any other rate
  // does not.
  const Model model = spherical_pendulum();
  Workspace ws(model);
  VectorXd q, v;
  for (const double theta : {0.2, 0.5, 1.0}) {
    const double omega = std::sqrt(kG / (kL * std::cos(theta)));
    conical_state(model, theta, omega, q, v);
    const VectorXd vdot = aba(model, ws, q, v, VectorXd::Zero(3));
    EXPECT_LE(vdot.norm(), 1e-12) << "theta " << theta;
    conical_state(model, theta, 1.1 * omega, q, v);
    EXPECT_GT(aba(model, ws, q, v, VectorXd::Zero(3)).norm(), 0.1) << "theta " << theta;
  }

  // Simulated over 2 s (no contact, midpoint rule, δt = 1 ms): the bob keeps its polar angle
  // and its azimuth advances at ω.
  const double theta = 0.5, omega = std::sqrt(kG / (kL * std::cos(theta)));
  scene::Scene scene;
  scene.model = spherical_pendulum();
  conical_state(scene.model, theta, omega, scene.q0, scene.v0);
  simulation::SimulatorParameters p;
  p.time_step = 1e-3;
  p.integrator = simulation::Integrator::kMidpoint;
  simulation::Simulator sim(scene, p);
  Workspace wsim(scene.model);
  double max_polar_error = 0.0;
  while (sim.time() < 2.0 - 1e-9) {
    sim.step();
    forward_kinematics(scene.model, wsim, sim.q());
    const Vector3 r = wsim.X_WB[1].act(Vector3(0, 0, -kL)) - Vector3(0, 0, 2);
    max_polar_error = std::max(max_polar_error, std::abs(std::acos(-r.z() / r.norm()) - theta));
  }
  forward_kinematics(scene.model, wsim, sim.q());
  const Vector3 r = wsim.X_WB[1].act(Vector3(0, 0, -kL)) - Vector3(0, 0, 2);
  // At t = 0 the bob is at azimuth atan2(y, x) of (0, L sin θ, ·) = π/2.
  double dphi = std::atan2(r.y(), r.x()) - (std::numbers::pi / 2 + omega * sim.time());
  dphi = std::remainder(dphi, 2 * std::numbers::pi);
  std::cout << "[   INFO   ] conical pendulum, 2 s: max polar-angle error " << max_polar_error
            << " rad, azimuth error " << dphi << " rad\n";
  EXPECT_LE(max_polar_error, 1e-4);
  EXPECT_LE(std::abs(dphi), 1e-3) << "after " << sim.time() << " s (" << omega * sim.time() / (2 * std::numbers::pi)
                                  << " turns)";
}

TEST(BallJointTest, SphericalPendulumConservesEnergy) {
  // Released from a tilt of 1 rad with a sideways spin (no damping, no contact): the total
  // energy stays constant; midpoint rule with δt = 1 ms over 2 s.
  scene::Scene scene;
  scene.model = spherical_pendulum();
  scene.q0 = scene.model.neutral_configuration();
  const math::Quaternion quat(Eigen::AngleAxisd(1.0, Vector3(1, 0.3, 0).normalized()));
  scene.q0.segment<4>(0) << quat.w(), quat.x(), quat.y(), quat.z();
  scene.v0 = Vector3(0.5, -1.0, 2.0);
  Workspace ws(scene.model);
  auto energy = [&](const VectorXd& q, const VectorXd& v) {
    return kinetic_energy(scene.model, ws, q, v) + potential_energy(scene.model, ws, q);
  };
  const double e0 = energy(scene.q0, scene.v0);
  // The energy scale: the swing's kinetic plus potential energy above the lowest point.
  const double scale = kinetic_energy(scene.model, ws, scene.q0, scene.v0) + kMass * kG * kL * (1 - std::cos(1.0));
  simulation::SimulatorParameters p;
  p.time_step = 1e-3;
  p.integrator = simulation::Integrator::kMidpoint;
  simulation::Simulator sim(scene, p);
  double max_drift = 0.0;
  while (sim.time() < 2.0 - 1e-9) {
    sim.step();
    max_drift = std::max(max_drift, std::abs(energy(sim.q(), sim.v()) - e0));
  }
  std::cout << "[   INFO   ] spherical pendulum, 2 s: max |E - E0| / scale = " << max_drift / scale << "\n";
  EXPECT_LE(max_drift / scale, 1e-3) << "max |E − E0| = " << max_drift << " J of " << scale << " J";
  // The bob moved (the test is not vacuous): it swung through a range of heights.
  EXPECT_GT(scale, 1.0);
}

}  // namespace
}  // namespace coulomb::multibody
