// Contact frames, material combination and the contact Jacobian against finite differences of
// the relative velocity of the two material points at the contact.
#include "coulomb/contact/contact_jacobian.h"

#include <gtest/gtest.h>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"
#include "test_models.h"

namespace coulomb::contact {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using math::Vector3;

// v_c = R_WCᵀ (ṗ_B − ṗ_A) for the material points of A and B at p_W, by central differences
// along q(t) = q ⊕ t v.
VectorXd fd_contact_velocities(const multibody::Model& model, const VectorXd& q, const VectorXd& v,
                               const ContactSet& set) {
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  std::vector<Vector3> p_A(set.size()), p_B(set.size());  // in body coordinates
  for (int i = 0; i < set.size(); ++i) {
    const Contact& c = set.contacts[i];
    p_A[i] = ws.X_WB[c.body_a].inverse().act(c.p_W);
    p_B[i] = ws.X_WB[c.body_b].inverse().act(c.p_W);
  }
  const double eps = 1e-6;
  VectorXd qp(model.nq()), qm(model.nq());
  multibody::integrate(model, q, v, eps, qp);
  multibody::integrate(model, q, v, -eps, qm);
  multibody::Workspace wp(model), wm(model);
  multibody::forward_kinematics(model, wp, qp);
  multibody::forward_kinematics(model, wm, qm);
  VectorXd vc(3 * set.size());
  for (int i = 0; i < set.size(); ++i) {
    const Contact& c = set.contacts[i];
    const Vector3 vB = (wp.X_WB[c.body_b].act(p_B[i]) - wm.X_WB[c.body_b].act(p_B[i])) / (2 * eps);
    const Vector3 vA = (wp.X_WB[c.body_a].act(p_A[i]) - wm.X_WB[c.body_a].act(p_A[i])) / (2 * eps);
    vc.segment<3>(3 * i) = c.R_WC.transpose() * (vB - vA);
  }
  return vc;
}

Contact make_contact(int body_a, int body_b, const Vector3& p_W, const Vector3& n_W) {
  Contact c;
  c.body_a = body_a;
  c.body_b = body_b;
  c.p_W = p_W;
  c.n_W = n_W.normalized();
  c.R_WC = contact_frame(c.n_W);
  return c;
}

TEST(ContactFrameTest, RightHandedWithNormalAsZ) {
  std::mt19937 rng(61);
  for (int trial = 0; trial < 100; ++trial) {
    const Vector3 n = testing::random_vector(rng, 3).normalized();
    const math::Matrix3 R = contact_frame(n);
    EXPECT_LT((R.transpose() * R - math::Matrix3::Identity()).norm(), 1e-14);
    EXPECT_NEAR(R.determinant(), 1.0, 1e-14);
    EXPECT_LT((R.col(2) - n).norm(), 1e-15);
  }
  EXPECT_LT((contact_frame(Vector3::UnitZ()).col(2) - Vector3::UnitZ()).norm(), 1e-15);
}

TEST(CombineMaterialsTest, RulesAndErrors) {
  geometry::Geometry a, b;
  a.name = "a";
  b.name = "b";
  const ContactDefaults defaults{0.5, 2e5, 0.02};
  // Neither overrides: the scene's defaults are the pair's values.
  PairMaterial m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.mu, 0.5);
  EXPECT_DOUBLE_EQ(m.stiffness, 2e5);
  EXPECT_DOUBLE_EQ(m.dissipation_time, 0.02);
  // One side overrides: its values.
  b.material.mu = 0.25;
  b.material.stiffness = 1e5;
  b.material.dissipation_time = 0.04;
  m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.mu, 0.25);
  EXPECT_DOUBLE_EQ(m.stiffness, 1e5);
  EXPECT_DOUBLE_EQ(m.dissipation_time, 0.04);
  // Both override: harmonic μ, springs in series, compliance-weighted τ_d.
  a.material.mu = 1.0;
  a.material.stiffness = 3e5;
  a.material.dissipation_time = 0.0;
  m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.mu, 2 * 1.0 * 0.25 / 1.25);
  EXPECT_DOUBLE_EQ(m.stiffness, 3e5 * 1e5 / 4e5);
  EXPECT_DOUBLE_EQ(m.dissipation_time, (0.0 * 1e5 + 0.04 * 3e5) / 4e5);
  a.material.stiffness = INFINITY;  // rigid side
  m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.stiffness, 1e5);
  EXPECT_DOUBLE_EQ(m.dissipation_time, 0.04);
  a.material.mu = -0.1;
  try {
    combine_materials(a, b, defaults);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'a' and 'b'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-0.1"), std::string::npos) << e.what();
  }
}

// The Hunt–Crossley fields: defaults, one override, both (d compliance-weighted like τ_d, v_s the
// smaller), a rigid side, and the errors.
TEST(CombineMaterialsTest, HuntCrossleyDissipationAndStictionTolerance) {
  geometry::Geometry a, b;
  a.name = "a";
  b.name = "b";
  ContactDefaults defaults;
  defaults.stiffness = 2e5;
  defaults.hunt_crossley_dissipation = 5.0;
  defaults.stiction_tolerance = 1e-3;
  PairMaterial m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.hunt_crossley_dissipation, 5.0);
  EXPECT_DOUBLE_EQ(m.stiction_tolerance, 1e-3);
  b.material.hunt_crossley_dissipation = 20.0;
  b.material.stiction_tolerance = 1e-4;
  m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.hunt_crossley_dissipation, 20.0);
  EXPECT_DOUBLE_EQ(m.stiction_tolerance, 1e-4);
  a.material.hunt_crossley_dissipation = 2.0;
  a.material.stiction_tolerance = 5e-4;
  a.material.stiffness = 3e5;  // b uses the default 2e5
  m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.hunt_crossley_dissipation, (2.0 * 2e5 + 20.0 * 3e5) / 5e5);
  EXPECT_DOUBLE_EQ(m.stiction_tolerance, 1e-4);
  a.material.stiffness = INFINITY;  // rigid a: b's d
  m = combine_materials(a, b, defaults);
  EXPECT_DOUBLE_EQ(m.hunt_crossley_dissipation, 20.0);
  a.material.hunt_crossley_dissipation = -1.5;
  try {
    combine_materials(a, b, defaults);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("hunt_crossley_dissipation"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-1.5"), std::string::npos) << e.what();
  }
  a.material.hunt_crossley_dissipation = 1.0;
  a.material.stiction_tolerance = 0.0;
  EXPECT_THROW(combine_materials(a, b, defaults), std::invalid_argument);
}

TEST(ContactJacobianTest, TwoFreeBoxesMatchFiniteDifferences) {
  std::mt19937 rng(62);
  multibody::ModelBuilder builder("boxes");
  const auto I = math::SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Vector3(0.1, 0.2, 0.25).asDiagonal());
  builder.add_link("box1", "world", testing::floating("box1"), I);
  builder.add_link("box2", "world", testing::floating("box2"), I);
  const multibody::Model model = builder.build();
  for (int trial = 0; trial < 10; ++trial) {
    const VectorXd q = multibody::random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    ContactSet set;
    // Box 2 on box 1, box 1 on the ground, and one the other way round (A = box 2).
    set.contacts.push_back(make_contact(1, 2, testing::random_vector(rng, 3), testing::random_vector(rng, 3)));
    set.contacts.push_back(make_contact(0, 1, testing::random_vector(rng, 3), Vector3::UnitZ()));
    set.contacts.push_back(make_contact(2, 1, testing::random_vector(rng, 3), testing::random_vector(rng, 3)));
    multibody::Workspace ws(model);
    multibody::forward_kinematics(model, ws, q);
    ContactJacobian J;
    contact_jacobian(model, ws, set, J);
    EXPECT_EQ(J.blocks.size(), 5u);  // 2 + 1 + 2
    const VectorXd fd = fd_contact_velocities(model, q, v, set);
    EXPECT_LT((J.dense() * v - fd).cwiseAbs().maxCoeff(), 1e-7);
    VectorXd y(3 * set.size()), x(model.nv());
    J.multiply(v, y);
    EXPECT_LT((y - J.dense() * v).cwiseAbs().maxCoeff(), 1e-14);
    const VectorXd w = testing::random_vector(rng, 3 * set.size());
    J.multiply_transpose(w, x);
    EXPECT_LT((x - J.dense().transpose() * w).cwiseAbs().maxCoeff(), 1e-14);
  }
}

TEST(ContactJacobianTest, A1FeetOnTheGroundMatchFiniteDifferences) {
  const io::UrdfModel a1 = io::load_urdf(std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf", {.floating = true});
  const multibody::Model& model = a1.model;
  std::mt19937 rng(63);
  for (int trial = 0; trial < 10; ++trial) {
    const VectorXd q = multibody::random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    multibody::Workspace ws(model);
    multibody::forward_kinematics(model, ws, q);
    ContactSet set;
    for (const char* foot : {"FR_foot", "FL_foot", "RR_foot", "RL_foot"}) {
      const multibody::Frame& F = model.frame(model.frame_index(foot));
      // The lowest point of the foot sphere (radius 0.02 in a1.urdf) touches the ground plane.
      const Vector3 center = ws.X_WB[F.body].act(F.X_BF.p);
      set.contacts.push_back(make_contact(0, F.body, center - Vector3(0, 0, 0.02), Vector3::UnitZ()));
    }
    // And a foot touching the trunk from a slanted direction (body–body within one tree).
    set.contacts.push_back(make_contact(model.body_index("base"), model.frame(model.frame_index("FL_foot")).body,
                                        ws.X_WB[model.body_index("base")].p, Vector3(0.3, -0.2, 1.0)));
    ContactJacobian J;
    contact_jacobian(model, ws, set, J);
    EXPECT_EQ(J.blocks.size(), 5u);  // the robot is one tree
    EXPECT_LT((J.dense() * v - fd_contact_velocities(model, q, v, set)).cwiseAbs().maxCoeff(), 1e-7);
  }
}

TEST(TreeRangesTest, InterleavedTreesAreRenumberedContiguously) {
  multibody::ModelBuilder builder("interleaved");
  const auto I = math::SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), math::Matrix3::Identity());
  builder.add_link("arm1", "world", testing::revolute("j1", Vector3::UnitZ()), I);
  builder.add_link("box", "world", testing::floating("box"), I);
  builder.add_link("arm2", "arm1", testing::revolute("j2", Vector3::UnitY()), I);
  const multibody::Model model = builder.build();
  const auto trees = tree_ranges(model);
  ASSERT_EQ(trees.size(), 2u);
  EXPECT_EQ(trees[0].v_start, 0);
  EXPECT_EQ(trees[0].nv, 2);
  EXPECT_EQ(trees[1].v_start, 2);
  EXPECT_EQ(trees[1].nv, 6);
  const std::vector<std::string> dofs = {"j1", "j2", "box.wx", "box.wy", "box.wz", "box.vx", "box.vy", "box.vz"};
  EXPECT_EQ(model.dof_names(), dofs);
  EXPECT_EQ(model.body(model.body_index("arm2")).parent, model.body_index("arm1"));
  EXPECT_EQ(model.frame(model.frame_index("arm2")).body, model.body_index("arm2"));
  EXPECT_EQ(model.joint_body("j2"), model.body_index("arm2"));
}

}  // namespace
}  // namespace coulomb::contact
