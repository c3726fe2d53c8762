// Jacobians and J̇v against central finite differences of forward kinematics along
// q(t) = q ⊕ t v.
#include "coulomb/multibody/frame_jacobian.h"

#include <gtest/gtest.h>

#include "coulomb/multibody.h"
#include "coulomb/multibody/configuration.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using math::Matrix3;
using math::Vector3;
using math::Vector6;
using math::SpatialInertia;

struct Pose {
  Matrix3 R_WF;
  Vector3 p_WQ;
};

Pose pose_at(const Model& model, Workspace& ws, const VectorXd& q, int body, const Vector3& p_BQ,
             const Matrix3& R_BF) {
  forward_kinematics(model, ws, q);
  return {ws.X_WB[body].R * R_BF, ws.X_WB[body].act(p_BQ)};
}

// [ω; v] of the point Q in the requested frame, by central differences of poses.
Vector6 fd_velocity(const Model& model, Workspace& ws, const VectorXd& q, const VectorXd& v, int body,
                    const Vector3& p_BQ, const Matrix3& R_BF, ReferenceFrame rf, double eps) {
  VectorXd qp(model.nq()), qm(model.nq());
  integrate(model, q, v, eps, qp);
  integrate(model, q, v, -eps, qm);
  const Pose P = pose_at(model, ws, qp, body, p_BQ, R_BF), Mn = pose_at(model, ws, qm, body, p_BQ, R_BF);
  const Pose P0 = pose_at(model, ws, q, body, p_BQ, R_BF);
  const Vector3 w_W = math::so3_log(P.R_WF * Mn.R_WF.transpose()) / (2 * eps);
  const Vector3 v_WQ = (P.p_WQ - Mn.p_WQ) / (2 * eps);
  Vector6 out;
  switch (rf) {
    case ReferenceFrame::kLocalWorldAligned: out << w_W, v_WQ; break;
    case ReferenceFrame::kWorld: out << w_W, v_WQ + P0.p_WQ.cross(w_W); break;
    case ReferenceFrame::kLocal: out << P0.R_WF.transpose() * w_W, P0.R_WF.transpose() * v_WQ; break;
  }
  return out;
}

class FrameJacobianTest : public ::testing::TestWithParam<ReferenceFrame> {};

TEST_P(FrameJacobianTest, MatchesFiniteDifferencesOfForwardKinematics) {
  const ReferenceFrame rf = GetParam();
  std::mt19937 rng(31);
  for (int trial = 0; trial < 6; ++trial) {
    const Model model = testing::make_random_tree(rng, 10, trial % 2 == 0, true);
    Workspace ws(model), ws_fd(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv());
    forward_kinematics(model, ws, q, v);
    MatrixXd J(6, model.nv());
    for (int b = 1; b < model.num_bodies(); ++b) {
      const Vector3 p_BQ = testing::random_vector(rng, 3, 0.3);
      body_point_jacobian(model, ws, b, p_BQ, rf, J);
      const Vector6 fd = fd_velocity(model, ws_fd, q, v, b, p_BQ, Matrix3::Identity(), rf, 1e-6);
      EXPECT_LT((J * v - fd).cwiseAbs().maxCoeff(), 1e-6) << "body " << b;
    }
    // Every frame, including links fused by fixed joints (local frame = the link's own axes).
    for (int f = 1; f < static_cast<int>(model.frames().size()); ++f) {
      const Frame& F = model.frame(f);
      frame_jacobian(model, ws, f, rf, J);
      const Vector6 fd = fd_velocity(model, ws_fd, q, v, F.body, F.X_BF.p, F.X_BF.R, rf, 1e-6);
      EXPECT_LT((J * v - fd).cwiseAbs().maxCoeff(), 1e-6) << "frame " << F.name;
    }
  }
}

TEST_P(FrameJacobianTest, TimeDerivativeProductMatchesFiniteDifferences) {
  const ReferenceFrame rf = GetParam();
  std::mt19937 rng(32);
  for (int trial = 0; trial < 6; ++trial) {
    const Model model = testing::make_random_tree(rng, 10, trial % 2 == 1, true);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv());
    const double eps = 1e-6;
    VectorXd qp(model.nq()), qm(model.nq());
    integrate(model, q, v, eps, qp);
    integrate(model, q, v, -eps, qm);
    MatrixXd Jp(6, model.nv()), Jm(6, model.nv());
    for (int f = 1; f < static_cast<int>(model.frames().size()); ++f) {
      forward_kinematics(model, ws, qp);
      frame_jacobian(model, ws, f, rf, Jp);
      forward_kinematics(model, ws, qm);
      frame_jacobian(model, ws, f, rf, Jm);
      const Vector6 fd = (Jp - Jm) * v / (2 * eps);
      forward_kinematics(model, ws, q, v);
      const Vector6 jdot_v = frame_jacobian_time_derivative_product(model, ws, f, rf);
      EXPECT_LT((jdot_v - fd).cwiseAbs().maxCoeff(), 1e-6) << "frame " << model.frame(f).name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllFrames, FrameJacobianTest,
                         ::testing::Values(ReferenceFrame::kWorld, ReferenceFrame::kLocalWorldAligned,
                                           ReferenceFrame::kLocal));

TEST(PointJacobianTest, IsTheTranslationalPartOfTheWorldAlignedJacobian) {
  std::mt19937 rng(33);
  const Model model = testing::make_random_tree(rng, 8, true, true);
  Workspace ws(model);
  forward_kinematics(model, ws, random_configuration(model, rng));
  MatrixXd J6(6, model.nv()), J3(3, model.nv());
  for (int b = 1; b < model.num_bodies(); ++b) {
    const Vector3 p_BQ(0.1, -0.2, 0.3);
    body_point_jacobian(model, ws, b, p_BQ, ReferenceFrame::kLocalWorldAligned, J6);
    point_jacobian(model, ws, b, p_BQ, J3);
    EXPECT_EQ((J6.bottomRows<3>() - J3).cwiseAbs().maxCoeff(), 0.0);
  }
}

// accumulate_point_jacobian (the contact Jacobians' kernel) against finite differences of
// forward kinematics, where its floating and ball columns take R_WJ = R_WP R_PJ: floating and
// ball joints whose joint frame is rotated in the parent (X_PJ random), at the root and on a
// moving parent, under a random rotation R and a column offset; it adds to what J holds.
TEST(PointJacobianTest, AccumulatedRowsMatchFiniteDifferencesOnRotatedJointFrames) {
  std::mt19937 rng(35);
  std::normal_distribution<double> n(0.0, 1.0);
  auto inertia = [&] { return SpatialInertia::FromCenterOfMass(1.5, Vector3(0.1, -0.05, 0.02), testing::random_rotational_inertia(rng)); };
  for (int trial = 0; trial < 4; ++trial) {
    ModelBuilder builder("rotated_joint_frames");
    // A first tree of two velocities: J covers the second tree's columns only (column_offset 2).
    builder.add_link("pre0", "world", testing::revolute("p0", Vector3(n(rng), n(rng), n(rng))), inertia());
    builder.add_link("pre1", "pre0", testing::revolute("p1", Vector3(n(rng), n(rng), n(rng)), testing::random_transform(rng)),
                     inertia());
    JointSpec root = testing::floating("root");
    root.X_PJ = testing::random_transform(rng);
    builder.add_link("base", "world", root, inertia());
    builder.add_link("arm", "base", testing::revolute("r", Vector3(n(rng), n(rng), n(rng)), testing::random_transform(rng)),
                     inertia());
    JointSpec hand = testing::floating("hand_joint");
    hand.X_PJ = testing::random_transform(rng);
    builder.add_link("hand", "arm", hand, inertia());
    JointSpec wrist = hand;
    wrist.name = "wrist";
    wrist.type = JointType::kBall;
    wrist.X_PJ = testing::random_transform(rng);
    builder.add_link("finger", "hand", wrist, inertia());
    const Model model = builder.build();
    Workspace ws(model), ws_fd(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv());
    forward_kinematics(model, ws, q);
    const Matrix3 R = math::so3_exp(testing::random_vector(rng, 3, 3.0));
    const int offset = 2;  // J covers the second tree's columns 2 … n_v − 1
    ASSERT_EQ(model.body(model.joint_body("root")).joint.v_index, offset);
    VectorXd v_tail = v;
    v_tail.head(offset).setZero();
    for (int b = 3; b < model.num_bodies(); ++b) {
      const Vector3 p_BQ = testing::random_vector(rng, 3, 0.3);
      const Vector3 p_WQ = ws.X_WB[b].act(p_BQ);
      MatrixXd J = MatrixXd::Ones(3, model.nv() - offset);  // accumulates onto ones
      accumulate_point_jacobian(model, ws, b, p_WQ, R, J, offset);
      const Vector6 fd = fd_velocity(model, ws_fd, q, v_tail, b, p_BQ, Matrix3::Identity(),
                                     ReferenceFrame::kLocalWorldAligned, 1e-6);
      const Vector3 expected = R * fd.tail<3>() + MatrixXd::Ones(3, model.nv() - offset) * v_tail.tail(model.nv() - offset);
      EXPECT_LT((J * v_tail.tail(model.nv() - offset) - expected).cwiseAbs().maxCoeff(), 1e-6) << "body " << b;
    }
  }
  MatrixXd J6(6, 6);
  const Model model = testing::make_random_tree(rng, 3, true, false);
  Workspace ws(model);
  forward_kinematics(model, ws, model.neutral_configuration());
  EXPECT_THROW(accumulate_point_jacobian(model, ws, 1, Vector3::Zero(), Matrix3::Identity(), J6), std::invalid_argument);
  MatrixXd J3(3, model.nv());  // a column of the body's path outside J's range
  EXPECT_THROW(accumulate_point_jacobian(model, ws, 1, Vector3::Zero(), Matrix3::Identity(), J3, 1), std::invalid_argument);
}

}  // namespace
}  // namespace coulomb::multibody
