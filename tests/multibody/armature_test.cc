// Joint armature (Joint::armature, MJCF <joint armature>): crba adds it to M's diagonal, rnea adds
// armature ⊙ v̇, aba includes it in the articulated joint inertia. Checked against each other
// (CRBA columns = RNEA differences, ABA inverts RNEA, p = M v, T = ½ vᵀ M v) and against the
// analytic one-joint pendulum.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include "coulomb/multibody/aba.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/momentum.h"
#include "coulomb/multibody/rnea.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

TEST(ArmatureTest, PendulumMassMatrixIsInertiaPlusArmature) {
  // Point-like pendulum about y: I_o = Iyy + m l², plus the armature.
  const double m = 2.0, l = 0.5, Iyy = 0.1, armature = 0.37;
  ModelBuilder b("pendulum");
  JointSpec j = testing::revolute("hinge", math::Vector3::UnitY());
  j.armature = armature;
  math::Matrix3 I = math::Matrix3::Identity() * 0.05;
  I(1, 1) = Iyy;
  b.add_link("bob", "world", j, math::SpatialInertia::FromCenterOfMass(m, math::Vector3(0, 0, -l), I));
  const Model model = b.build();
  ASSERT_EQ(model.armature().size(), 1);
  EXPECT_EQ(model.armature()[0], armature);
  Workspace ws(model);
  const VectorXd q = VectorXd::Constant(1, 0.3), v = VectorXd::Constant(1, -1.2), a = VectorXd::Constant(1, 0.8);
  const double M_expected = Iyy + m * l * l + armature;
  EXPECT_NEAR(crba(model, ws, q)(0, 0), M_expected, 1e-14);
  // τ = M a + m g l sin q (gravity −z, bob below the axis).
  EXPECT_NEAR(rnea(model, ws, q, v, a)[0], M_expected * 0.8 + m * 9.81 * l * std::sin(0.3), 1e-12);
  EXPECT_NEAR(aba(model, ws, q, v, VectorXd::Zero(1))[0], -m * 9.81 * l * std::sin(0.3) / M_expected, 1e-12);
}

TEST(ArmatureTest, CrbaEqualsRneaColumnsAndAbaInvertsRnea) {
  std::mt19937 rng(71);
  for (int trial = 0; trial < 8; ++trial) {
    const Model model = testing::make_random_tree(rng, 12, trial % 2 == 0, trial % 4 == 1, 0.5);
    ASSERT_TRUE(model.has_armature());
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd a = testing::random_vector(rng, model.nv(), 2.0);
    const int nv = model.nv();
    const MatrixXd M = crba(model, ws, q);
    // Column k of M = rnea(q, 0, e_k) − rnea(q, 0, 0).
    const VectorXd g = rnea(model, ws, q, VectorXd::Zero(nv), VectorXd::Zero(nv));
    MatrixXd M_rnea(nv, nv);
    for (int k = 0; k < nv; ++k) M_rnea.col(k) = rnea(model, ws, q, VectorXd::Zero(nv), VectorXd::Unit(nv, k)) - g;
    EXPECT_LT(testing::relative_error(M, M_rnea), 1e-10) << "trial " << trial;
    // τ = M a + b and ABA inverts it.
    const VectorXd tau = rnea(model, ws, q, v, a);
    const VectorXd b = bias_forces(model, ws, q, v);
    EXPECT_LT(testing::relative_error(M * a + b, tau), 1e-10) << "trial " << trial;
    EXPECT_LT(testing::relative_error(aba(model, ws, q, v, tau), a), 1e-10) << "trial " << trial;
    // p = M v and T = ½ vᵀ M v.
    generalized_momentum(model, ws, q, v);
    EXPECT_LT(testing::relative_error(ws.momentum, M * v), 1e-10) << "trial " << trial;
    EXPECT_NEAR(kinetic_energy(model, ws, q, v), 0.5 * v.dot(M * v), 1e-10 * v.dot(M * v));
  }
}

TEST(ArmatureTest, AddsExactlyTheDiagonal) {
  // The same random tree with and without armature (same seed): M differs by diag(armature).
  std::mt19937 rng_a(5), rng_b(5);
  const Model with = testing::make_random_tree(rng_a, 10, true, true, 0.3);
  const Model without = testing::make_random_tree(rng_b, 10, true, true);
  ASSERT_FALSE(without.has_armature());
  ASSERT_EQ(with.nv(), without.nv());
  std::mt19937 rng(6);
  const VectorXd q = random_configuration(with, rng);
  Workspace ws_a(with), ws_b(without);
  const MatrixXd D = crba(with, ws_a, q) - crba(without, ws_b, q);
  EXPECT_LT((D - MatrixXd(with.armature().asDiagonal())).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT(with.armature().minCoeff(), 0.0);
}

TEST(ArmatureTest, NegativeArmatureIsRejected) {
  ModelBuilder b("bad");
  JointSpec j = testing::revolute("hinge", math::Vector3::UnitZ());
  j.armature = -0.1;
  try {
    b.add_link("l", "world", j, math::SpatialInertia::Zero());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("armature"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-0.1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coulomb::multibody
