// constraints::bilateral_kinematics: the Jacobian against central finite differences of φ along
// random velocities on random trees (free bodies, revolute/prismatic chains with fused links, the
// world), for every constraint type; φ against closed forms for known relative poses.
#include "coulomb/constraints/bilateral_kinematics.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "coulomb/multibody/configuration.h"
#include "test_models.h"

namespace coulomb::constraints {
namespace {

using math::Matrix3;
using math::Transform;
using math::Vector3;
using scene::BilateralType;

Eigen::VectorXd phi_at(const multibody::Model& model, const scene::BilateralConstraint& c, const Eigen::VectorXd& q) {
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  BilateralKinematicsScratch s;
  Eigen::VectorXd phi(scene::num_rows(c.type));
  Eigen::MatrixXd J(phi.size(), model.nv());
  bilateral_kinematics(model, ws, c, s, phi, J);
  return phi;
}

// J v against (φ(q ⊕ εv) − φ(q ⊖ εv)) / 2ε, relative to max(1, |J v|).
double jacobian_error(const multibody::Model& model, const scene::BilateralConstraint& c, const Eigen::VectorXd& q,
                      const Eigen::VectorXd& v) {
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  BilateralKinematicsScratch s;
  const int rows = scene::num_rows(c.type);
  Eigen::VectorXd phi(rows);
  Eigen::MatrixXd J(rows, model.nv());
  bilateral_kinematics(model, ws, c, s, phi, J);
  const double eps = 1e-6;
  Eigen::VectorXd qp(model.nq()), qm(model.nq());
  multibody::integrate(model, q, v, eps, qp);
  multibody::integrate(model, q, v, -eps, qm);
  const Eigen::VectorXd fd = (phi_at(model, c, qp) - phi_at(model, c, qm)) / (2 * eps);
  const Eigen::VectorXd Jv = J * v;
  return (Jv - fd).cwiseAbs().maxCoeff() / std::max(1.0, Jv.cwiseAbs().maxCoeff());
}

// A constraint of `type` between random bodies, with random frames; when `satisfied`, M is put
// where F is at q (φ = 0) — and for the revolute and prismatic joints then moved along the joint.
scene::BilateralConstraint random_constraint(const multibody::Model& model, BilateralType type, const Eigen::VectorXd& q,
                                             bool satisfied, std::mt19937& rng) {
  scene::BilateralConstraint c;
  c.name = "test";
  c.type = type;
  std::uniform_int_distribution<int> body(0, model.num_bodies() - 1);
  c.body_a = body(rng);
  do c.body_b = body(rng);
  while (c.body_b == c.body_a || c.body_b == 0);
  c.X_AF = coulomb::testing::random_transform(rng);
  c.X_BM = coulomb::testing::random_transform(rng);
  std::normal_distribution<double> n(0.0, 1.0);
  c.axis_F = Vector3(n(rng), n(rng), n(rng)).normalized();
  c.length = 0.7;
  if (satisfied) {
    multibody::Workspace ws(model);
    multibody::forward_kinematics(model, ws, q);
    Transform X_FM;  // identity, or a motion the joint allows
    if (type == BilateralType::kRevolute) X_FM.R = Eigen::AngleAxisd(n(rng), c.axis_F).toRotationMatrix();
    if (type == BilateralType::kPrismatic) X_FM.p = n(rng) * c.axis_F;
    if (type == BilateralType::kDistance) X_FM.p = c.length * Vector3(n(rng), n(rng), n(rng)).normalized();
    c.X_BM = ws.X_WB[c.body_b].inverse() * ws.X_WB[c.body_a] * c.X_AF * X_FM;
  }
  return c;
}

TEST(BilateralKinematicsTest, JacobianMatchesFiniteDifferences) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const multibody::Model model = coulomb::testing::make_random_tree(rng, 6, trial % 2 == 0, true);
    const Eigen::VectorXd q = multibody::random_configuration(model, rng);
    const Eigen::VectorXd v = coulomb::testing::random_vector(rng, model.nv());
    for (BilateralType type : {BilateralType::kBall, BilateralType::kWeld, BilateralType::kDistance,
                               BilateralType::kRevolute, BilateralType::kPrismatic}) {
      SCOPED_TRACE(std::string(scene::to_string(type)) + " trial " + std::to_string(trial));
      // On the constraint manifold every row is exact.
      const scene::BilateralConstraint on = random_constraint(model, type, q, true, rng);
      EXPECT_LT(phi_at(model, on, q).cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_LT(jacobian_error(model, on, q, v), 1e-7);
      // Off it, the rows whose Jacobian is exact everywhere: ball, distance, prismatic's
      // translational rows.
      const scene::BilateralConstraint off = random_constraint(model, type, q, false, rng);
      if (type == BilateralType::kBall || type == BilateralType::kDistance) {
        EXPECT_LT(jacobian_error(model, off, q, v), 1e-7);
      }
    }
  }
}

TEST(BilateralKinematicsTest, ValuesForKnownRelativePoses) {
  multibody::ModelBuilder b("two");
  b.add_link("a", "world", coulomb::testing::floating("a"), math::SpatialInertia::FromCenterOfMass(1, Vector3::Zero(), Matrix3::Identity()));
  b.add_link("b", "world", coulomb::testing::floating("b"), math::SpatialInertia::FromCenterOfMass(1, Vector3::Zero(), Matrix3::Identity()));
  const multibody::Model model = b.build();
  Eigen::VectorXd q = model.neutral_configuration();
  const double alpha = 0.3;
  const Vector3 axis = Vector3(1, 2, 2) / 3.0;
  // B at (0.1, 0.2, 0.3), rotated by α about `axis`; A at the origin rotated by 90° about z.
  const Eigen::Quaterniond qa(Eigen::AngleAxisd(M_PI / 2, Vector3::UnitZ()));
  const Eigen::Quaterniond qb(Eigen::AngleAxisd(alpha, axis) * qa);
  q.segment<3>(0).setZero();
  q.segment<4>(3) << qa.w(), qa.x(), qa.y(), qa.z();
  q.segment<3>(7) = Vector3(0.1, 0.2, 0.3);
  q.segment<4>(10) << qb.w(), qb.x(), qb.y(), qb.z();
  scene::BilateralConstraint c;
  c.body_a = model.body_index("a");
  c.body_b = model.body_index("b");
  c.type = BilateralType::kWeld;
  Eigen::VectorXd phi = phi_at(model, c, q);
  // Rotational rows: the rotation vector of B relative to A, in world axes: α · axis.
  EXPECT_LT((phi.head<3>() - alpha * axis).norm(), 1e-14);
  EXPECT_LT((phi.tail<3>() - Vector3(0.1, 0.2, 0.3)).norm(), 1e-15);
  c.type = BilateralType::kBall;
  EXPECT_LT((phi_at(model, c, q) - Eigen::Vector3d(0.1, 0.2, 0.3)).norm(), 1e-15);
  c.type = BilateralType::kDistance;
  c.length = 0.2;
  EXPECT_NEAR(phi_at(model, c, q)[0], std::sqrt(0.14) - 0.2, 1e-15);
  // Revolute about A's x axis (world y after the 90° turn): the axes' misalignment is the
  // rotation's component ⊥ the axis: |t-rows| = sin of the angle between the axes.
  c.type = BilateralType::kRevolute;
  c.axis_F = Vector3::UnitX();
  phi = phi_at(model, c, q);
  const Vector3 a_F = qa * Vector3::UnitX(), a_M = qb * Vector3::UnitX();
  EXPECT_NEAR(phi.head<2>().norm(), a_F.cross(a_M).norm(), 1e-15);
  EXPECT_LT((phi.tail<3>() - Vector3(0.1, 0.2, 0.3)).norm(), 1e-15);
  // Prismatic along A's x (world y): the translational rows are the offset ⊥ world y.
  c.type = BilateralType::kPrismatic;
  phi = phi_at(model, c, q);
  EXPECT_NEAR(phi.tail<2>().norm(), std::hypot(0.1, 0.3), 1e-15);
  EXPECT_LT((phi.head<3>() - alpha * axis).norm(), 1e-14);
}

TEST(BilateralKinematicsTest, BadSizesThrow) {
  const multibody::Model model = coulomb::testing::make_pendulum(1, 1, 0.01);
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, model.neutral_configuration());
  BilateralKinematicsScratch s;
  scene::BilateralConstraint c;
  c.name = "x";
  c.body_b = 1;
  Eigen::VectorXd phi(2);
  Eigen::MatrixXd J(3, 1);
  EXPECT_THROW(bilateral_kinematics(model, ws, c, s, phi, J), std::invalid_argument);
  c.body_b = 5;
  phi.resize(3);
  EXPECT_THROW(bilateral_kinematics(model, ws, c, s, phi, J), std::invalid_argument);
}

}  // namespace
}  // namespace coulomb::constraints
