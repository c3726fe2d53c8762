// ModelBuilder: topology, fusion of welded links, names, and input validation.
#include "coulomb/multibody/model.h"

#include <gtest/gtest.h>

#include "test_models.h"

namespace coulomb::multibody {
namespace {

using math::Matrix3;
using math::SpatialInertia;
using math::Vector3;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ModelTest, FusesWeldedLinksAndNumbersCoordinates) {
  ModelBuilder b("robot");
  b.add_link("base", "world", testing::floating("root"),
             SpatialInertia::FromCenterOfMass(5.0, Vector3::Zero(), Matrix3::Identity()));
  b.add_link("sensor", "base", testing::fixed("sensor_mount", testing::translation(0, 0, 0.5)),
             SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Matrix3::Zero()));
  b.add_link("arm", "sensor", testing::revolute("shoulder", Vector3(0, 0, 2)),
             SpatialInertia::FromCenterOfMass(1.0, Vector3(0.1, 0, 0), Matrix3::Identity() * 0.01));
  const Model model = b.build();
  EXPECT_EQ(model.num_bodies(), 3);  // world, base(+sensor), arm
  EXPECT_EQ(model.nq(), 8);
  EXPECT_EQ(model.nv(), 7);
  EXPECT_EQ(model.frames().size(), 4u);
  EXPECT_DOUBLE_EQ(model.total_mass(), 7.0);
  const Body& base = model.body(model.body_index("base"));
  EXPECT_DOUBLE_EQ(base.inertia.mass, 6.0);
  EXPECT_LT((base.inertia.com() - Vector3(0, 0, 0.5 / 6.0)).norm(), 1e-15);
  const Body& arm = model.body(model.body_index("arm"));
  EXPECT_EQ(arm.parent, model.body_index("base"));
  EXPECT_LT((arm.joint.X_PJ.p - Vector3(0, 0, 0.5)).norm(), 1e-15);  // placement through the fused frame
  EXPECT_LT((arm.joint.axis - Vector3::UnitZ()).norm(), 1e-15);       // axis normalized
  EXPECT_EQ(arm.joint.q_index, 7);
  EXPECT_EQ(arm.joint.v_index, 6);
  EXPECT_EQ(model.frame(model.frame_index("sensor")).body, model.body_index("base"));
  const std::vector<std::string> dofs = {"root.wx", "root.wy", "root.wz", "root.vx", "root.vy", "root.vz", "shoulder"};
  EXPECT_EQ(model.dof_names(), dofs);
  EXPECT_EQ(model.position_names()[3], "root.qw");
  EXPECT_EQ(model.joint_body("shoulder"), model.body_index("arm"));
  EXPECT_EQ(model.joint_body("sensor_mount"), -1);
  const Eigen::VectorXd q0 = model.neutral_configuration();
  EXPECT_EQ(q0[3], 1.0);
  EXPECT_EQ(q0.sum(), 1.0);
}

TEST(ModelTest, ScaleBodyInertiaScalesMassAndInertiaKeepsTheCom) {
  ModelBuilder b("robot");
  b.add_link("base", "world", testing::floating("root"),
             SpatialInertia::FromCenterOfMass(5.0, Vector3(0.1, 0, 0), Matrix3::Identity()));
  b.add_link("sensor", "base", testing::fixed("sensor_mount", testing::translation(0, 0, 0.5)),
             SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Matrix3::Identity() * 0.1));
  b.add_link("arm", "sensor", testing::revolute("shoulder", Vector3(0, 0, 1)),
             SpatialInertia::FromCenterOfMass(1.0, Vector3(0.1, 0, 0), Matrix3::Identity() * 0.01));
  Model model = b.build();
  const int base = model.body_index("base");
  const SpatialInertia before = model.body(base).inertia;
  model.scale_body_inertia(base, 2.0);
  const SpatialInertia& after = model.body(base).inertia;
  EXPECT_DOUBLE_EQ(after.mass, 12.0);  // base and the welded sensor
  EXPECT_LT((after.com() - before.com()).norm(), 1e-15);
  EXPECT_LT((after.inertia_about_com() - 2.0 * before.inertia_about_com()).norm(), 1e-14);
  EXPECT_DOUBLE_EQ(model.total_mass(), 13.0);
  EXPECT_DOUBLE_EQ(model.frame(model.frame_index("sensor")).inertia.mass, 2.0);
  EXPECT_DOUBLE_EQ(model.body(model.body_index("arm")).inertia.mass, 1.0);  // other bodies untouched
  EXPECT_NE(error_of([&] { model.scale_body_inertia(0, 2.0); }).find("body index 0"), std::string::npos);
  EXPECT_NE(error_of([&] { model.scale_body_inertia(base, -1.0); }).find("'base'"), std::string::npos);
}

TEST(ModelTest, RejectsBadLinks) {
  ModelBuilder b("bad");
  const SpatialInertia I = SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Matrix3::Identity());
  b.add_link("a", "world", testing::revolute("ja", Vector3::UnitX()), I);
  EXPECT_NE(error_of([&] { b.add_link("a", "world", testing::revolute("jx", Vector3::UnitX()), I); }).find("duplicate link name 'a'"), std::string::npos);
  EXPECT_NE(error_of([&] { b.add_link("b", "nowhere", testing::revolute("jb", Vector3::UnitX()), I); }).find("unknown parent link 'nowhere'"), std::string::npos);
  EXPECT_NE(error_of([&] { b.add_link("c", "a", testing::revolute("ja", Vector3::UnitX()), I); }).find("duplicate joint name 'ja'"), std::string::npos);
  EXPECT_NE(error_of([&] { b.add_link("d", "a", testing::revolute("jd", Vector3::Zero()), I); }).find("axis is zero"), std::string::npos);
  JointSpec bad_limits = testing::revolute("je", Vector3::UnitX());
  bad_limits.limits.lower = 1.0;
  bad_limits.limits.upper = -1.0;
  EXPECT_NE(error_of([&] { b.add_link("e", "a", bad_limits, I); }).find("lower 1 > upper -1"), std::string::npos);
  EXPECT_NE(error_of([&] { b.add_link("f", "a", testing::revolute("jf", Vector3::UnitX()), SpatialInertia(-1.0, Vector3::Zero(), Matrix3::Zero())); }).find("mass -1"), std::string::npos);
}

TEST(ModelTest, ValidateInertia) {
  EXPECT_NO_THROW(validate_inertia(1.0, Vector3(1, 2, 3).asDiagonal(), "ok"));
  EXPECT_NO_THROW(validate_inertia(0.0, Matrix3::Zero(), "massless"));
  EXPECT_NE(error_of([] { validate_inertia(-2.0, Matrix3::Identity(), "link 'x'"); }).find("link 'x': negative mass -2"), std::string::npos);
  EXPECT_NE(error_of([] { validate_inertia(1.0, Vector3(1, -1, 1).asDiagonal(), "L"); }).find("not positive semidefinite"), std::string::npos);
  EXPECT_NE(error_of([] { validate_inertia(1.0, Vector3(1, 1, 3).asDiagonal(), "L"); }).find("triangle inequality"), std::string::npos);
  Matrix3 asym = Matrix3::Identity();
  asym(0, 1) = 0.5;
  EXPECT_NE(error_of([&] { validate_inertia(1.0, asym, "L"); }).find("not symmetric"), std::string::npos);
  EXPECT_NE(error_of([] { validate_inertia(std::nan(""), Matrix3::Identity(), "L"); }).find("not finite"), std::string::npos);
}

TEST(ModelTest, CheckStateNamesTheBadCoordinate) {
  ModelBuilder b("m");
  b.add_link("a", "world", testing::revolute("elbow", Vector3::UnitX()),
             SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Matrix3::Identity()));
  const Model model = b.build();
  Eigen::VectorXd q(1);
  q << std::nan("");
  EXPECT_NE(error_of([&] { model.check_configuration(q); }).find("q[0] (elbow) is not finite"), std::string::npos);
  EXPECT_NE(error_of([&] { model.check_configuration(Eigen::VectorXd::Zero(2)); }).find("nq = 1"), std::string::npos);
  EXPECT_NE(error_of([&] { model.check_velocity(Eigen::VectorXd::Constant(1, INFINITY), "vdot"); }).find("vdot[0] (elbow)"), std::string::npos);
}

}  // namespace
}  // namespace coulomb::multibody
