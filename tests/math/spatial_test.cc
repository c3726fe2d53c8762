// Spatial algebra: every operator against its 6×6 matrix form and against first principles.
#include "coulomb/math/spatial.h"

#include <gtest/gtest.h>

#include <random>

#include "test_models.h"

namespace coulomb::math {
namespace {

class SpatialTest : public ::testing::Test {
 protected:
  std::mt19937 rng{42};
  Vector6 random6() { return testing::random_vector(rng, 6); }
};

TEST_F(SpatialTest, TransformActionsMatchMatrices) {
  for (int trial = 0; trial < 20; ++trial) {
    const Transform X = testing::random_transform(rng, 2.0);
    const SpatialMotion m(random6());
    const SpatialForce f(random6());
    EXPECT_LT((X.act(m).vector() - X.motion_matrix() * m.vector()).norm(), 1e-12);
    EXPECT_LT((X.act(f).vector() - X.force_matrix() * f.vector()).norm(), 1e-12);
    // Inverse actions undo the actions.
    EXPECT_LT((X.act_inv(X.act(m)).vector() - m.vector()).norm(), 1e-12);
    EXPECT_LT((X.act_inv(X.act(f)).vector() - f.vector()).norm(), 1e-12);
    EXPECT_LT((X.inverse().act(m).vector() - X.act_inv(m).vector()).norm(), 1e-12);
    // Force transform is the inverse transpose of the motion transform (power invariance).
    EXPECT_LT((X.force_matrix() - X.motion_matrix().inverse().transpose()).norm(), 1e-11);
    EXPECT_NEAR(X.act(m).dot(X.act(f)), m.dot(f), 1e-12);
  }
}

TEST_F(SpatialTest, TransformCompositionAndPoints) {
  const Transform X_AB = testing::random_transform(rng, 2.0), X_BC = testing::random_transform(rng, 2.0);
  const Vector3 p_C = random6().head<3>();
  EXPECT_LT(((X_AB * X_BC).act(p_C) - X_AB.act(X_BC.act(p_C))).norm(), 1e-12);
  EXPECT_LT(((X_AB * X_AB.inverse()).p).norm(), 1e-12);
  EXPECT_LT(((X_AB * X_BC).motion_matrix() - X_AB.motion_matrix() * X_BC.motion_matrix()).norm(), 1e-12);
}

TEST_F(SpatialTest, CrossProductsMatchFeatherstoneMatrices) {
  const SpatialMotion a(random6()), b(random6());
  const SpatialForce f(random6());
  Matrix6 crm;  // Featherstone Eq. (2.31)
  crm << skew(a.w), Matrix3::Zero(), skew(a.v), skew(a.w);
  const Matrix6 crf = -crm.transpose();
  EXPECT_LT((a.cross(b).vector() - crm * b.vector()).norm(), 1e-12);
  EXPECT_LT((a.cross(f).vector() - crf * f.vector()).norm(), 1e-12);
  EXPECT_NEAR(a.cross(a).vector().norm(), 0.0, 1e-14);
}

TEST_F(SpatialTest, InertiaFromPointMassesAndTransforms) {
  // A body made of point masses: I_o = Σ m (|r|² 1 − r rᵀ), h = Σ m r.
  std::uniform_real_distribution<double> um(0.1, 2.0);
  SpatialInertia sum;
  double mass = 0;
  Vector3 h = Vector3::Zero();
  Matrix3 I = Matrix3::Zero();
  for (int k = 0; k < 5; ++k) {
    const double m = um(rng);
    const Vector3 r = random6().head<3>();
    sum += SpatialInertia::FromCenterOfMass(m, r, Matrix3::Zero());
    mass += m;
    h += m * r;
    I += m * (r.squaredNorm() * Matrix3::Identity() - r * r.transpose());
  }
  EXPECT_NEAR(sum.mass, mass, 1e-14);
  EXPECT_LT((sum.h - h).norm(), 1e-13);
  EXPECT_LT((sum.I_o - I).norm(), 1e-12);
  // Moving the body: transform of the inertia equals the sum of transformed points, and the
  // matrix form obeys I_A = X_Bᴬ* I_B X_Aᴮ.
  const Transform X = testing::random_transform(rng, 2.0);
  const Matrix6 expected = X.force_matrix() * sum.matrix() * X.inverse().motion_matrix();
  EXPECT_LT((X.act(sum).matrix() - expected).norm(), 1e-11);
  // Momentum and kinetic energy.
  const SpatialMotion V(random6());
  EXPECT_LT(((sum * V).vector() - sum.matrix() * V.vector()).norm(), 1e-12);
  EXPECT_NEAR(sum.kinetic_energy(V), 0.5 * V.vector().dot(sum.matrix() * V.vector()), 1e-12);
  EXPECT_LT((sum.com() - h / mass).norm(), 1e-13);
}

TEST_F(SpatialTest, RotationsExpLogRpy) {
  for (int trial = 0; trial < 20; ++trial) {
    const Vector3 theta = random6().head<3>() * 1.5;
    const Matrix3 R = so3_exp(theta);
    EXPECT_LT((R - Eigen::AngleAxisd(theta.norm(), theta.normalized()).toRotationMatrix()).norm(), 1e-12);
    EXPECT_LT((so3_log(R) - theta).norm(), 1e-10);
    EXPECT_LT((rotation_about_axis(theta.normalized(), theta.norm()) - R).norm(), 1e-12);
  }
  EXPECT_LT((quaternion_exp(Vector3(1e-12, 0, 0)).coeffs() - Eigen::Vector4d(0.5e-12, 0, 0, 1)).norm(), 1e-18);
  // URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll). Yaw of 90° maps x to y.
  EXPECT_LT((rotation_from_rpy(0, 0, M_PI / 2) * Vector3::UnitX() - Vector3::UnitY()).norm(), 1e-15);
  EXPECT_LT((rotation_from_rpy(M_PI / 2, 0, 0) * Vector3::UnitY() - Vector3::UnitZ()).norm(), 1e-15);
  const Matrix3 R = rotation_from_rpy(0.3, -0.2, 0.7);
  const Matrix3 expected = rotation_about_axis(Vector3::UnitZ(), 0.7) * rotation_about_axis(Vector3::UnitY(), -0.2) *
                           rotation_about_axis(Vector3::UnitX(), 0.3);
  EXPECT_LT((R - expected).norm(), 1e-15);
}

}  // namespace
}  // namespace coulomb::math
