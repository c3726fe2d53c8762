// The configuration manifold: q̇ = N(q) v, integration, differences, unit quaternions.
#include "coulomb/multibody/configuration.h"

#include <gtest/gtest.h>

#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

VectorXd configuration_away_from_sign_flip(const Model& model, std::mt19937& rng) {
  for (;;) {
    VectorXd q = random_configuration(model, rng);
    bool ok = true;
    for (const Body& b : model.bodies())
      if (b.joint.type == JointType::kFloating && q[b.joint.q_index + 3] < 0.2) ok = false;
    if (ok) return q;
  }
}

TEST(ConfigurationTest, KinematicMapMatchesFiniteDifferencesOfIntegrate) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 10; ++trial) {
    const Model model = testing::make_random_tree(rng, 6, true, true);
    const VectorXd q = configuration_away_from_sign_flip(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    MatrixXd N(model.nq(), model.nv());
    kinematic_map(model, q, N);
    VectorXd qdot(model.nq());
    velocity_to_qdot(model, q, v, qdot);
    EXPECT_LT((N * v - qdot).cwiseAbs().maxCoeff(), 1e-14);
    const double eps = 1e-6;
    VectorXd qp(model.nq()), qm(model.nq());
    integrate(model, q, v, eps, qp);
    integrate(model, q, v, -eps, qm);
    EXPECT_LT(((qp - qm) / (2 * eps) - qdot).cwiseAbs().maxCoeff(), 1e-8);
  }
}

TEST(ConfigurationTest, DifferenceInvertsIntegrate) {
  std::mt19937 rng(42);
  const Model model = testing::make_random_tree(rng, 6, true, true);
  for (int trial = 0; trial < 20; ++trial) {
    const VectorXd q0 = random_configuration(model, rng);
    const VectorXd dq = testing::random_vector(rng, model.nv(), 1.0);  // rotation angles < π
    VectorXd q1(model.nq()), back(model.nv());
    integrate(model, q0, dq, 1.0, q1);
    difference(model, q0, q1, back);
    EXPECT_LT((back - dq).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(ConfigurationTest, QuaternionsStayUnitOverManySteps) {
  std::mt19937 rng(43);
  const Model model = testing::make_random_tree(rng, 3, true, true);
  VectorXd q = random_configuration(model, rng);
  for (int step = 0; step < 100000; ++step) {
    const VectorXd v = testing::random_vector(rng, model.nv(), 10.0);
    integrate(model, q, v, 1e-3, q);
  }
  for (const Body& b : model.bodies()) {
    if (b.joint.type == JointType::kFloating) {
      EXPECT_NEAR(q.segment<4>(b.joint.q_index + 3).norm(), 1.0, 1e-14);
    }
  }
}

TEST(ConfigurationTest, ConstantBodyTwistIntegratesExactlyForRotation) {
  // A body spinning about a fixed body axis at ω for t seconds is rotated by exp(ω t).
  ModelBuilder b("spinner");
  b.add_link("body", "world", testing::floating("free"),
             math::SpatialInertia::FromCenterOfMass(1.0, math::Vector3::Zero(), math::Matrix3::Identity()));
  const Model model = b.build();
  VectorXd q = model.neutral_configuration();
  VectorXd v = VectorXd::Zero(6);
  v.head<3>() = math::Vector3(0.3, -0.4, 1.2);
  for (int k = 0; k < 1000; ++k) integrate(model, q, v, 1e-3, q);
  const math::Quaternion quat(q[3], q[4], q[5], q[6]);
  EXPECT_LT((quat.toRotationMatrix() - math::so3_exp(v.head<3>() * 1.0)).cwiseAbs().maxCoeff(), 1e-12);
}

}  // namespace
}  // namespace coulomb::multibody
