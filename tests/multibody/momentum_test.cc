// generalized_momentum: p = M(q) v against CRBA, and the momentum-form bias
// β = Ṁ v − C v − ∂V/∂q against an independent construction: Ṁ v by central finite differences of
// CRBA along the motion (q(t) = q ⊕ t v) minus RNEA's bias b = C v + ∂V/∂q. Random trees with
// revolute, prismatic, fixed and floating joints, one or two trees; plus the closed form of a
// free rigid body's rows, γ = [−v_O × P; 0], and the identity vᵀ γ = ½ vᵀ Ṁ v (power balance).
#include "coulomb/multibody/momentum.h"

#include <gtest/gtest.h>

#include "coulomb/multibody/configuration.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/rnea.h"
#include "../../src/linalg/block_kernels.h"  // force_baseline_block_kernels: both copies of the passes
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// The passes are compiled twice (x86-64 baseline; AVX2 + FMA, chosen at run time): both copies
// are checked, and they agree with each other to round-off.
TEST(GeneralizedMomentumTest, MomentumIsMassMatrixTimesVelocityAndBiasMatchesFiniteDifferences) {
  for (bool baseline : {true, false}) {
    linalg::internal::force_baseline_block_kernels(baseline);
    std::mt19937 rng(41);
    for (int trial = 0; trial < 12; ++trial) {
      const Model model = testing::make_random_tree(rng, 12, trial % 2 == 0, trial % 3 == 0);
      Workspace ws(model);
      const VectorXd q = random_configuration(model, rng);
      const VectorXd v = testing::random_vector(rng, model.nv());
      generalized_momentum(model, ws, q, v);
      const VectorXd p = ws.momentum, beta = ws.momentum_bias;
      const MatrixXd M = crba(model, ws, q);
      EXPECT_LT(testing::relative_error(p, M * v), 1e-12) << "trial " << trial;
      // Ṁ v by central differences of M along q(t) = q ⊕ t v.
      const double h = 1e-6;
      VectorXd q_plus(model.nq()), q_minus(model.nq());
      integrate(model, q, v, h, q_plus);
      integrate(model, q, v, -h, q_minus);
      const VectorXd Mdot_v = (MatrixXd(crba(model, ws, q_plus)) - MatrixXd(crba(model, ws, q_minus))) * v / (2 * h);
      const VectorXd b = bias_forces(model, ws, q, v);
      EXPECT_LT(testing::relative_error(beta, Mdot_v - b), 1e-7) << "trial " << trial;
      // Power: vᵀ(Ṁ v − C v) = ½ vᵀ Ṁ v (Ṁ − 2C skew); with gravity: − vᵀ ∂V/∂q.
      const VectorXd g = generalized_gravity(model, ws, q);
      EXPECT_NEAR(v.dot(beta), 0.5 * v.dot(Mdot_v) - v.dot(g), 1e-6 * (1.0 + std::abs(v.dot(Mdot_v))))
          << "trial " << trial;
      // with_bias = false: the same p, bit for bit, and β left as it was (here a marker).
      Workspace ws_p(model);
      ws_p.momentum_bias.setConstant(7.0);
      generalized_momentum(model, ws_p, q, v, /*with_bias=*/false);
      EXPECT_EQ(ws_p.momentum, p) << "trial " << trial;
      EXPECT_EQ(ws_p.momentum_bias, VectorXd::Constant(model.nv(), 7.0)) << "trial " << trial;
      // The other copy of the passes: the same p and β to round-off.
      linalg::internal::force_baseline_block_kernels(!baseline);
      generalized_momentum(model, ws_p, q, v);
      linalg::internal::force_baseline_block_kernels(baseline);
      EXPECT_LT(testing::relative_error(ws_p.momentum, p), 1e-14) << "trial " << trial;
      EXPECT_LT(testing::relative_error(ws_p.momentum_bias, beta), 1e-13) << "trial " << trial;
    }
  }
  linalg::internal::force_baseline_block_kernels(false);
}

TEST(GeneralizedMomentumTest, FreeBodyRowsAreMomentumAboutItsOrigin) {
  std::mt19937 rng(42);
  ModelBuilder builder("free");
  const math::Matrix3 I = testing::random_rotational_inertia(rng);
  const math::Vector3 com(0.1, -0.2, 0.05);
  builder.add_link("body", "world", testing::floating("free"), math::SpatialInertia::FromCenterOfMass(2.5, com, I));
  Model model = builder.build();
  model.set_gravity(math::Vector3(0, 0, 0));
  Workspace ws(model);
  const VectorXd q = random_configuration(model, rng);
  const VectorXd v = testing::random_vector(rng, 6);
  generalized_momentum(model, ws, q, v);
  // Independent: world-frame com, angular momentum about the origin O of the body.
  const math::Quaternion quat(q[3], q[4], q[5], q[6]);
  const math::Matrix3 R = quat.normalized().toRotationMatrix();
  const math::Vector3 w = v.head<3>(), vO = v.tail<3>(), c = R * com;
  const math::Vector3 v_com = vO + w.cross(c);
  const math::Vector3 P = 2.5 * v_com;
  const math::Vector3 L_O = R * I * R.transpose() * w + c.cross(P);
  EXPECT_LT((ws.momentum.head<3>() - L_O).norm(), 1e-12 * (1 + L_O.norm()));
  EXPECT_LT((ws.momentum.tail<3>() - P).norm(), 1e-12 * (1 + P.norm()));
  const math::Vector3 gamma_w = -vO.cross(P);
  EXPECT_LT((ws.momentum_bias.head<3>() - gamma_w).norm(), 1e-12 * (1 + gamma_w.norm()));
  EXPECT_LT(ws.momentum_bias.tail<3>().norm(), 1e-12 * (1 + P.norm()));
}

}  // namespace
}  // namespace coulomb::multibody
