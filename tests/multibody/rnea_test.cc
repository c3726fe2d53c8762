// RNEA against closed-form pendulum dynamics and against CRBA (M a + b), with external forces
// against the Jacobian transpose.
#include "coulomb/multibody/rnea.h"

#include <gtest/gtest.h>

#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/frame_jacobian.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::VectorXd;

// Pendulum about +y with the bob at (0, 0, −l) at q = 0: the bob is at (−l sin q, 0, −l cos q),
// so M = I + m l², b = m g l sin q (no velocity-product terms for one joint).
TEST(RneaTest, SinglePendulumClosedForm) {
  const double m = 2.0, l = 0.7, I = 0.03, g = 9.81;
  const Model model = testing::make_pendulum(m, l, I);
  Workspace ws(model);
  for (double q : {-2.0, -0.3, 0.0, 0.4, 1.9}) {
    const double v = 1.3, a = -0.7;
    const VectorXd tau = rnea(model, ws, VectorXd::Constant(1, q), VectorXd::Constant(1, v), VectorXd::Constant(1, a));
    EXPECT_NEAR(tau[0], (I + m * l * l) * a + m * g * l * std::sin(q), 1e-12);
  }
}

// Textbook double pendulum (absolute angles θ1 = q1, θ2 = q1 + q2, gravity along −z).
TEST(RneaTest, DoublePendulumClosedForm) {
  const testing::DoublePendulum p;
  const Model model = p.build();
  Workspace ws(model);
  const double g = 9.81;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const VectorXd q = testing::random_vector(rng, 2, 3.0), v = testing::random_vector(rng, 2, 2.0),
                   a = testing::random_vector(rng, 2, 2.0);
    const double c2 = std::cos(q[1]), s2 = std::sin(q[1]);
    Eigen::Matrix2d M;
    M(0, 0) = p.I1 + p.I2 + p.m1 * p.lc1 * p.lc1 + p.m2 * (p.l1 * p.l1 + p.lc2 * p.lc2 + 2 * p.l1 * p.lc2 * c2);
    M(0, 1) = M(1, 0) = p.I2 + p.m2 * (p.lc2 * p.lc2 + p.l1 * p.lc2 * c2);
    M(1, 1) = p.I2 + p.m2 * p.lc2 * p.lc2;
    const double h = p.m2 * p.l1 * p.lc2 * s2;
    Eigen::Vector2d b;
    b[0] = -h * (2 * v[0] * v[1] + v[1] * v[1]) + p.m1 * g * p.lc1 * std::sin(q[0]) +
           p.m2 * g * (p.l1 * std::sin(q[0]) + p.lc2 * std::sin(q[0] + q[1]));
    b[1] = h * v[0] * v[0] + p.m2 * g * p.lc2 * std::sin(q[0] + q[1]);
    EXPECT_LT((crba(model, ws, q) - M).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LT((bias_forces(model, ws, q, v) - b).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LT((rnea(model, ws, q, v, a) - (M * a + b)).cwiseAbs().maxCoeff(), 1e-12);
  }
}

class RneaRandomTreeTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

// RNEA(q, v, a) = M(q) a + b(q, v), where M comes from CRBA (a different algorithm).
TEST_P(RneaRandomTreeTest, EqualsMassMatrixTimesAccelerationPlusBias) {
  const auto [floating_root, second_tree] = GetParam();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const Model model = testing::make_random_tree(rng, 12, floating_root, second_tree);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd a = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd tau = rnea(model, ws, q, v, a);
    const VectorXd b = bias_forces(model, ws, q, v);
    const Eigen::MatrixXd M = crba(model, ws, q);
    EXPECT_LT(testing::relative_error(tau, M * a + b), 1e-10);
    // The gravity term is the bias at zero velocity.
    EXPECT_LT(testing::relative_error(generalized_gravity(model, ws, q), bias_forces(model, ws, q, VectorXd::Zero(model.nv()))), 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(Trees, RneaRandomTreeTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

// τ(f_ext) = τ(0) − Σ_b J_bᵀ f_b, with J_b the body's local Jacobian at its origin.
TEST(RneaTest, ExternalWrenchesEnterThroughJacobianTranspose) {
  std::mt19937 rng(3);
  const Model model = testing::make_random_tree(rng, 10, true, true);
  Workspace ws(model);
  const VectorXd q = random_configuration(model, rng);
  const VectorXd v = testing::random_vector(rng, model.nv()), a = testing::random_vector(rng, model.nv());
  std::vector<math::SpatialForce> f_ext(model.num_bodies());
  for (auto& f : f_ext) f = math::SpatialForce(testing::random_vector(rng, 6, 5.0));
  VectorXd expected = rnea(model, ws, q, v, a);
  forward_kinematics(model, ws, q);
  Eigen::MatrixXd J(6, model.nv());
  for (int b = 1; b < model.num_bodies(); ++b) {
    body_point_jacobian(model, ws, b, math::Vector3::Zero(), ReferenceFrame::kLocal, J);
    expected -= J.transpose() * f_ext[b].vector();
  }
  EXPECT_LT(testing::relative_error(rnea(model, ws, q, v, a, f_ext), expected), 1e-11);
}

}  // namespace
}  // namespace coulomb::multibody
