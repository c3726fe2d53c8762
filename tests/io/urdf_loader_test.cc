// Tests of io::load_urdf / io::parse_urdf on the five real models in ../shared/models and on
// small hand-written URDFs. Facts about the real files (masses, collision counts) are
// recomputed here from the file text with trivial regular expressions, independently of
// urdfdom and of the loader.
#include "coulomb/io/urdf_loader.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "io/io_test_util.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Vector3;
using multibody::JointType;

const std::string kModels = std::string(COULOMB_SHARED_DIR) + "/models/";
constexpr double kInf = std::numeric_limits<double>::infinity();
using coulomb::testing::mass_sum_from_text;
using coulomb::testing::read_text;
using coulomb::testing::rpy_by_hand;
using coulomb::testing::text_without_comments;




int count_in_text(const std::string& path, const std::string& pattern) {
  const std::string text = text_without_comments(path);
  const std::regex re(pattern);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

/// Names of the non-fixed joints, in the order the file declares them.
std::vector<std::string> moving_joints_from_text(const std::string& path) {
  const std::string text = text_without_comments(path);
  const std::regex re("<joint\\s+name\\s*=\\s*\"([^\"]+)\"\\s+type\\s*=\\s*\"([a-z]+)\"");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    if ((*it)[2].str() != "fixed") names.push_back((*it)[1].str());
  return names;
}


int body_of_joint(const multibody::Model& model, const std::string& joint) {
  const int b = model.joint_body(joint);
  EXPECT_GE(b, 1) << "no body for joint " << joint;
  return b;
}

// ---------------------------------------------------------------------------------------
// The real models

TEST(UrdfLoaderTest, KukaIiwaFixedBase) {
  const std::string path = kModels + "kuka_iiwa_robot.urdf";
  const UrdfModel urdf = load_urdf(path);
  const multibody::Model& m = urdf.model;
  EXPECT_EQ(urdf.robot_name, "iiwa14");
  EXPECT_EQ(m.name(), "iiwa14");
  ASSERT_EQ(m.nv(), 7);
  EXPECT_EQ(m.nq(), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(m.dof_names()[i], "iiwa_joint_" + std::to_string(i + 1));
    EXPECT_EQ(m.position_names()[i], m.dof_names()[i]);
  }
  // Independent truth: the <mass> values of the file, summed.
  EXPECT_NEAR(m.total_mass(), mass_sum_from_text(path), 1e-12);
  EXPECT_NEAR(m.total_mass(), 30.61, 1e-12);
  EXPECT_EQ(urdf.collisions.size(), 0u);
  EXPECT_TRUE(urdf.warnings.empty());
  // The file writes its revolute joints without <limit>: they are unlimited.
  const multibody::Joint& j1 = m.body(body_of_joint(m, "iiwa_joint_1")).joint;
  EXPECT_EQ(j1.type, JointType::kRevolute);
  EXPECT_EQ(j1.limits.lower, -kInf);
  EXPECT_EQ(j1.limits.upper, kInf);
  EXPECT_EQ(j1.limits.effort, kInf);
  // 7 moving bodies; base and iiwa_link_0 are welded to the world.
  EXPECT_EQ(m.num_bodies(), 8);
  EXPECT_EQ(m.frame(m.frame_index("iiwa_link_0")).body, 0);
}

TEST(UrdfLoaderTest, KukaIiwaJointOriginRpy) {
  // iiwa_joint_2: <origin rpy="1.570796326794897 0 3.141592653589793" xyz="0 0 0.2025"/>.
  const UrdfModel urdf = load_urdf(kModels + "kuka_iiwa_robot.urdf");
  const multibody::Model& m = urdf.model;
  const multibody::Joint& j2 = m.body(body_of_joint(m, "iiwa_joint_2")).joint;
  const Matrix3 expected = rpy_by_hand(1.570796326794897, 0.0, 3.141592653589793);
  EXPECT_LT((j2.X_PJ.R - expected).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((j2.X_PJ.p - Vector3(0, 0, 0.2025)).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(UrdfLoaderTest, A1FixedBase) {
  const std::string path = kModels + "a1.urdf";
  const UrdfModel urdf = load_urdf(path);
  const multibody::Model& m = urdf.model;
  EXPECT_EQ(urdf.robot_name, "a1");
  ASSERT_EQ(m.nv(), 12);
  EXPECT_EQ(m.nq(), 12);
  // Depth-first with children in declaration order = the declaration order of this file.
  EXPECT_EQ(m.dof_names(), moving_joints_from_text(path));
  EXPECT_EQ(m.dof_names().front(), "FR_hip_joint");
  EXPECT_EQ(m.dof_names()[2], "FR_calf_joint");
  EXPECT_EQ(m.dof_names().back(), "RL_calf_joint");
  // MuJoCo's figure; the dummy 'base' link has no inertial and must stay massless.
  EXPECT_NEAR(m.total_mass(), 13.741, 1e-9);
  EXPECT_NEAR(m.total_mass(), mass_sum_from_text(path), 1e-12);
  EXPECT_EQ(static_cast<int>(urdf.collisions.size()), count_in_text(path, "<collision[\\s>]"));
  // Every <visual> mesh of a1 is missing from ../shared/models: one note each (display only),
  // no warning, no failure.
  EXPECT_EQ(static_cast<int>(urdf.notes.size()), count_in_text(path, "<mesh\\s"));
  EXPECT_TRUE(urdf.warnings.empty()) << urdf.warnings.front();
  ASSERT_FALSE(urdf.notes.empty());
  EXPECT_NE(urdf.notes.front().find("trunk.dae"), std::string::npos) << urdf.notes.front();
}

TEST(UrdfLoaderTest, A1LinksWithoutInertialAreMassless) {
  const std::string path = kModels + "a1.urdf";
  const UrdfModel urdf = load_urdf(path);
  const multibody::Model& m = urdf.model;
  // Links declared without <inertial> (a regex over the text: <link name="X"/> or a <link>
  // body with no <inertial>).
  const std::string text = text_without_comments(path);
  const std::regex link_re("<link\\s+name\\s*=\\s*\"([^\"]+)\"\\s*(/>|>([\\s\\S]*?)</link>)");
  int massless = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), link_re); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1].str();
    const std::string body = (*it)[3].str();
    const multibody::Frame& f = m.frame(m.frame_index(name));
    std::smatch mass;
    if (!std::regex_search(body, mass, std::regex("<mass\\s+value\\s*=\\s*\"([^\"]+)\""))) {
      ++massless;
      EXPECT_EQ(f.inertia.mass, 0.0) << name;
      EXPECT_EQ(f.inertia.h, Vector3::Zero()) << name;
      EXPECT_EQ(f.inertia.I_o, Matrix3::Zero()) << name;
    } else {
      EXPECT_EQ(f.inertia.mass, std::stod(mass[1].str())) << name;  // e.g. *_thigh_shoulder: mass 0
    }
  }
  EXPECT_EQ(massless, 1);  // 'base'
  EXPECT_EQ(m.frame(m.frame_index("base")).inertia.mass, 0.0);
}

TEST(UrdfLoaderTest, A1FloatingBase) {
  const UrdfModel urdf = load_urdf(kModels + "a1.urdf", UrdfOptions{.floating = true});
  const multibody::Model& m = urdf.model;
  ASSERT_EQ(m.nv(), 18);
  ASSERT_EQ(m.nq(), 19);
  const std::vector<std::string> v_names{"root_joint.wx", "root_joint.wy", "root_joint.wz",
                                         "root_joint.vx", "root_joint.vy", "root_joint.vz"};
  const std::vector<std::string> q_names{"root_joint.x",  "root_joint.y",  "root_joint.z", "root_joint.qw",
                                         "root_joint.qx", "root_joint.qy", "root_joint.qz"};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m.dof_names()[i], v_names[i]);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(m.position_names()[i], q_names[i]);
  EXPECT_EQ(m.dof_names()[6], "FR_hip_joint");
  EXPECT_EQ(m.body(1).joint.type, JointType::kFloating);
  EXPECT_EQ(m.body(1).name, "base");
  EXPECT_NEAR(m.total_mass(), 13.741, 1e-9);
  // The floating body carries the trunk (welded to 'base') and everything welded to it.
  EXPECT_GT(m.body(1).inertia.mass, 6.0);
  EXPECT_EQ(m.neutral_configuration()[3], 1.0);

  UrdfOptions named;
  named.floating = true;
  named.floating_joint_name = "free";
  const UrdfModel renamed = load_urdf(kModels + "a1.urdf", named);
  EXPECT_EQ(renamed.model.dof_names()[0], "free.wx");
  EXPECT_EQ(renamed.model.position_names()[6], "free.qz");
}

TEST(UrdfLoaderTest, PandaPrismaticFingersAndCollisions) {
  const std::string path = kModels + "panda_collision.urdf";
  const UrdfModel urdf = load_urdf(path);
  const multibody::Model& m = urdf.model;
  ASSERT_EQ(m.nv(), 9);
  EXPECT_EQ(m.dof_names(), moving_joints_from_text(path));
  EXPECT_EQ(m.dof_names()[0], "panda_joint1");
  EXPECT_EQ(m.dof_names()[7], "panda_finger_joint1");
  EXPECT_NEAR(m.total_mass(), mass_sum_from_text(path), 1e-12);
  EXPECT_EQ(static_cast<int>(urdf.collisions.size()), count_in_text(path, "<collision[\\s>]"));
  EXPECT_EQ(static_cast<int>(urdf.collisions.size()), 39);

  // <limit effort="100" lower="0.0" upper="0.04" velocity="0.2"/> <dynamics damping="0.3"/>
  const multibody::Joint& finger = m.body(body_of_joint(m, "panda_finger_joint2")).joint;
  EXPECT_EQ(finger.type, JointType::kPrismatic);
  EXPECT_EQ(finger.axis, Vector3(0, -1, 0));
  EXPECT_EQ(finger.limits.lower, 0.0);
  EXPECT_EQ(finger.limits.upper, 0.04);
  EXPECT_EQ(finger.limits.velocity, 0.2);
  EXPECT_EQ(finger.limits.effort, 100.0);
  EXPECT_EQ(finger.damping, 0.3);
  EXPECT_EQ(m.damping()[8], 0.3);

  // panda_finger_joint2 has a <mimic>: recorded (a coupler in scenes), no warning.
  ASSERT_EQ(urdf.mimics.size(), 1u);
  EXPECT_EQ(urdf.mimics[0].joint, "panda_finger_joint2");
  EXPECT_EQ(urdf.mimics[0].leader, "panda_finger_joint1");
  EXPECT_EQ(urdf.mimics[0].multiplier, 1.0);
  EXPECT_EQ(urdf.mimics[0].offset, 0.0);
  for (const std::string& w : urdf.warnings) EXPECT_EQ(w.find("mimic"), std::string::npos) << w;

  int spheres = 0, cylinders = 0;
  for (const UrdfCollision& c : urdf.collisions) {
    spheres += c.type == UrdfCollision::Type::kSphere;
    cylinders += c.type == UrdfCollision::Type::kCylinder;
    EXPECT_TRUE(m.frame_index(c.link) >= 0);
  }
  EXPECT_EQ(spheres, count_in_text(path, "<sphere\\s"));
  EXPECT_EQ(cylinders, count_in_text(path, "<cylinder\\s"));
}

TEST(UrdfLoaderTest, Quadruped) {
  const std::string path = kModels + "quadruped.urdf";
  const UrdfModel urdf = load_urdf(path);
  const multibody::Model& m = urdf.model;
  EXPECT_EQ(m.nv(), 8);
  EXPECT_EQ(m.dof_names(), moving_joints_from_text(path));
  EXPECT_NEAR(m.total_mass(), mass_sum_from_text(path), 1e-12);
  EXPECT_EQ(static_cast<int>(urdf.collisions.size()), count_in_text(path, "<collision[\\s>]"));
  const UrdfModel floating = load_urdf(path, UrdfOptions{.floating = true});
  EXPECT_EQ(floating.model.nv(), 14);
  EXPECT_EQ(floating.model.nq(), 15);
}

TEST(UrdfLoaderTest, DoublePendulum) {
  const std::string path = kModels + "double_pendulum_simple.urdf";
  const UrdfModel urdf = load_urdf(path);
  const multibody::Model& m = urdf.model;
  EXPECT_EQ(urdf.robot_name, "2dof_planar");
  ASSERT_EQ(m.nv(), 2);
  EXPECT_EQ(m.dof_names(), (std::vector<std::string>{"joint1", "joint2"}));
  EXPECT_NEAR(m.total_mass(), mass_sum_from_text(path), 1e-12);
  EXPECT_NEAR(m.total_mass(), 0.6, 1e-12);
  EXPECT_EQ(m.damping(), Eigen::Vector2d(0.05, 0.05));
  ASSERT_EQ(urdf.collisions.size(), 3u);
  const UrdfCollision& c = urdf.collisions[1];  // link1: box 0.025 0.025 0.1 at z = 0.05
  EXPECT_EQ(c.link, "link1");
  EXPECT_EQ(c.type, UrdfCollision::Type::kBox);
  EXPECT_EQ(c.size, Vector3(0.025, 0.025, 0.1));
  EXPECT_EQ(c.X_LG.p, Vector3(0, 0, 0.05));
  EXPECT_TRUE(c.X_LG.R.isIdentity(0.0));
  ASSERT_EQ(urdf.colors.size(), 3u);
  EXPECT_EQ(urdf.colors[0].link, "base_link");
  EXPECT_EQ(urdf.colors[0].rgba[0], 1.0);
  EXPECT_EQ(urdf.colors[0].rgba[1], 0.0);
  EXPECT_EQ(urdf.colors[2].link, "link2");
  EXPECT_EQ(urdf.colors[2].rgba[2], 1.0);
  EXPECT_TRUE(urdf.warnings.empty());
}

TEST(UrdfLoaderTest, EveryModelTotalMassMatchesFileText) {
  for (const char* name : {"a1", "panda_collision", "kuka_iiwa_robot", "quadruped", "double_pendulum_simple"}) {
    const std::string path = kModels + name + ".urdf";
    SCOPED_TRACE(path);
    const UrdfModel urdf = load_urdf(path);
    EXPECT_NEAR(urdf.model.total_mass(), mass_sum_from_text(path), 1e-12);
    // Sum of the frames' own inertias = total mass as well.
    double sum = 0.0;
    for (const multibody::Frame& f : urdf.model.frames()) sum += f.inertia.mass;
    EXPECT_NEAR(sum, urdf.model.total_mass(), 1e-12);
  }
}

// ---------------------------------------------------------------------------------------
// Hand-written URDFs

std::string one_link_urdf(const std::string& joint_xml, const std::string& link_xml) {
  return "<?xml version=\"1.0\"?>\n<robot name=\"t\">\n  <link name=\"base\"/>\n  <link name=\"body\">" + link_xml +
         "</link>\n" + joint_xml + "\n</robot>\n";
}

TEST(UrdfLoaderTest, InertialOriginRpyIsApplied) {
  // A link whose inertia is given in a rotated, offset inertial frame.
  const double m = 2.0, roll = 0.3, pitch = -0.5, yaw = 0.7;
  const Vector3 c(0.1, -0.2, 0.3);
  Matrix3 I_frame;  // in the inertial frame, about the COM
  I_frame << 0.1, 0.01, 0.0, 0.01, 0.2, -0.02, 0.0, -0.02, 0.25;
  const std::string xml = one_link_urdf(
      R"(<joint name="j" type="continuous"><parent link="base"/><child link="body"/><axis xyz="0 0 1"/></joint>)",
      R"(<inertial><origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.5 0.7"/><mass value="2"/>
         <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="-0.02" izz="0.25"/></inertial>)");
  const UrdfModel urdf = parse_urdf(xml);
  const multibody::Model& model = urdf.model;

  // Hand computation: rotate into the link frame, then the parallel-axis theorem.
  const Matrix3 R = rpy_by_hand(roll, pitch, yaw);
  const Matrix3 I_com_link = R * I_frame * R.transpose();
  const Matrix3 I_origin = I_com_link + m * (c.squaredNorm() * Matrix3::Identity() - c * c.transpose());

  const math::SpatialInertia& body = model.body(1).inertia;
  EXPECT_EQ(body.mass, m);
  EXPECT_LT((body.h - m * c).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_LT((body.I_o - I_origin).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((body.inertia_about_com() - I_com_link).cwiseAbs().maxCoeff(), 1e-14);
  const math::SpatialInertia& frame = model.frame(model.frame_index("body")).inertia;
  EXPECT_LT((frame.I_o - I_origin).cwiseAbs().maxCoeff(), 1e-14);
  // The rotation changes the result (the test would not notice a dropped rpy otherwise).
  EXPECT_GT((I_com_link - I_frame).cwiseAbs().maxCoeff(), 1e-3);
}

TEST(UrdfLoaderTest, FixedLinkInertiaIsFusedAtItsPose) {
  // A welded link 1 m along x, rotated 90° about z, with a point-like mass: the parent body
  // receives its mass at (1, 0, 0).
  const std::string xml = one_link_urdf(
      R"(<joint name="weld" type="fixed"><parent link="base"/><child link="body"/>
         <origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/></joint>)",
      R"(<inertial><origin xyz="0 0 0"/><mass value="3"/>
         <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>)");
  UrdfOptions floating;
  floating.floating = true;
  const UrdfModel urdf = parse_urdf(xml, floating);
  ASSERT_EQ(urdf.model.num_bodies(), 2);
  const math::SpatialInertia& I = urdf.model.body(1).inertia;
  EXPECT_EQ(I.mass, 3.0);
  EXPECT_LT((I.h - Vector3(3, 0, 0)).norm(), 1e-15);
  EXPECT_NEAR(I.I_o(1, 1), 3.0, 1e-15);
  EXPECT_NEAR(I.I_o(2, 2), 3.0, 1e-15);
  EXPECT_NEAR(I.I_o(0, 0), 0.0, 1e-15);
}

TEST(UrdfLoaderTest, ContinuousJointHasInfiniteLimits) {
  const std::string xml = one_link_urdf(
      R"(<joint name="wheel" type="continuous"><parent link="base"/><child link="body"/><axis xyz="0 1 0"/>
         <limit lower="-1" upper="1" effort="5" velocity="2"/></joint>)",
      "");
  const UrdfModel urdf = parse_urdf(xml);
  const multibody::Joint& j = urdf.model.body(1).joint;
  EXPECT_EQ(j.type, JointType::kRevolute);
  EXPECT_EQ(j.limits.lower, -kInf);
  EXPECT_EQ(j.limits.upper, kInf);
  EXPECT_EQ(j.limits.effort, 5.0);
  EXPECT_EQ(j.limits.velocity, 2.0);
  EXPECT_EQ(j.axis, Vector3(0, 1, 0));
  // The link has no <inertial>: massless.
  EXPECT_EQ(urdf.model.total_mass(), 0.0);
}

TEST(UrdfLoaderTest, RevoluteJointLimitsAndDynamics) {
  const std::string xml = one_link_urdf(
      R"(<joint name="elbow" type="revolute"><parent link="base"/><child link="body"/><axis xyz="1 0 0"/>
         <limit lower="-0.5" upper="1.25" effort="40" velocity="3"/><dynamics damping="0.7" friction="0.2"/></joint>)",
      "");
  const UrdfModel urdf = parse_urdf(xml);
  const multibody::Joint& j = urdf.model.body(1).joint;
  EXPECT_EQ(j.limits.lower, -0.5);
  EXPECT_EQ(j.limits.upper, 1.25);
  EXPECT_EQ(j.limits.effort, 40.0);
  EXPECT_EQ(j.limits.velocity, 3.0);
  EXPECT_EQ(j.damping, 0.7);
  EXPECT_EQ(j.friction, 0.2);
}

TEST(UrdfLoaderTest, PrismaticJoint) {
  const std::string xml = one_link_urdf(
      R"(<joint name="slide" type="prismatic"><parent link="base"/><child link="body"/>
         <origin xyz="0.5 0 0" rpy="0 0 0"/><axis xyz="0 3 4"/>
         <limit lower="-0.1" upper="0.3" effort="200" velocity="0.5"/></joint>)",
      R"(<inertial><mass value="1.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)");
  const UrdfModel urdf = parse_urdf(xml);
  const multibody::Model& m = urdf.model;
  ASSERT_EQ(m.nv(), 1);
  EXPECT_EQ(m.dof_names()[0], "slide");
  const multibody::Joint& j = m.body(1).joint;
  EXPECT_EQ(j.type, JointType::kPrismatic);
  EXPECT_LT((j.axis - Vector3(0, 0.6, 0.8)).norm(), 1e-15);  // normalized
  EXPECT_EQ(j.limits.lower, -0.1);
  EXPECT_EQ(j.limits.upper, 0.3);
  EXPECT_EQ(j.X_PJ.p, Vector3(0.5, 0, 0));
  EXPECT_EQ(m.total_mass(), 1.5);
}

TEST(UrdfLoaderTest, PrismaticJointWithoutLimitIsUnlimited) {
  const std::string xml = one_link_urdf(
      R"(<joint name="slide" type="prismatic"><parent link="base"/><child link="body"/><axis xyz="1 0 0"/></joint>)",
      "");
  const UrdfModel urdf = parse_urdf(xml);
  const multibody::Joint& j = urdf.model.body(1).joint;
  EXPECT_EQ(j.type, JointType::kPrismatic);
  EXPECT_EQ(j.limits.lower, -kInf);
  EXPECT_EQ(j.limits.upper, kInf);
}

TEST(UrdfLoaderTest, UrdfFloatingJoint) {
  const std::string xml = one_link_urdf(
      R"(<joint name="free" type="floating"><parent link="base"/><child link="body"/><origin xyz="0 0 1"/></joint>)",
      R"(<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)");
  const multibody::Model m = parse_urdf(xml).model;
  EXPECT_EQ(m.nq(), 7);
  EXPECT_EQ(m.nv(), 6);
  EXPECT_EQ(m.dof_names()[0], "free.wx");
  EXPECT_EQ(m.body(1).joint.type, JointType::kFloating);
  EXPECT_EQ(m.body(1).joint.X_PJ.p, Vector3(0, 0, 1));
}

TEST(UrdfLoaderTest, ChildrenFollowJointDeclarationOrderDepthFirst) {
  // Joints declared b_joint, a_joint, c_joint (not alphabetical); c hangs below b.
  const std::string xml = R"(<robot name="order">
    <link name="root"/><link name="a"/><link name="b"/><link name="c"/>
    <joint name="zeta" type="continuous"><parent link="root"/><child link="b"/></joint>
    <joint name="alpha" type="continuous"><parent link="root"/><child link="a"/></joint>
    <joint name="mid" type="continuous"><parent link="b"/><child link="c"/></joint>
  </robot>)";
  const multibody::Model m = parse_urdf(xml).model;
  EXPECT_EQ(m.dof_names(), (std::vector<std::string>{"zeta", "mid", "alpha"}));
  for (int b = 1; b < m.num_bodies(); ++b) EXPECT_LT(m.body(b).parent, b);
}

TEST(UrdfLoaderTest, RootLinkNamedWorldIsTheWorld) {
  const std::string xml = R"(<robot name="w">
    <link name="world"/><link name="arm"/>
    <joint name="j" type="revolute"><parent link="world"/><child link="arm"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  </robot>)";
  const multibody::Model m = parse_urdf(xml).model;
  EXPECT_EQ(m.nv(), 1);
  EXPECT_EQ(m.body(1).parent, 0);
  UrdfOptions floating;
  floating.floating = true;
  EXPECT_THROW(parse_urdf(xml, floating), UrdfError);
}

TEST(UrdfLoaderTest, FloatingJointNameClashIsAnError) {
  const std::string xml = one_link_urdf(
      R"(<joint name="root_joint" type="continuous"><parent link="base"/><child link="body"/></joint>)", "");
  UrdfOptions floating;
  floating.floating = true;
  try {
    parse_urdf(xml, floating, "clash.urdf");
    FAIL() << "expected UrdfError";
  } catch (const UrdfError& e) {
    EXPECT_NE(std::string(e.what()).find("root_joint"), std::string::npos) << e.what();
  }
}

TEST(UrdfLoaderTest, MessagesNameSourceLineAndValue) {
  const std::string xml = one_link_urdf(
      R"(<joint name="j" type="continuous"><parent link="base"/><child link="body"/></joint>)",
      R"(<inertial><mass value="-2.5"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>)");
  try {
    parse_urdf(xml, {}, "my_robot.urdf");
    FAIL() << "expected UrdfError";
  } catch (const UrdfError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("my_robot.urdf:4: ", 0), 0u) << what;  // file:line: first
    EXPECT_NE(what.find("link 'body'"), std::string::npos) << what;
    EXPECT_NE(what.find("-2.5"), std::string::npos) << what;
  }
}

TEST(UrdfLoaderTest, UnreadableFile) {
  const std::string missing = std::string(COULOMB_TEST_DATA_DIR) + "/no_such_robot.urdf";
  try {
    load_urdf(missing);
    FAIL() << "expected UrdfError";
  } catch (const UrdfError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_robot.urdf"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_urdf(COULOMB_TEST_DATA_DIR), UrdfError);  // a directory
  EXPECT_THROW(parse_urdf(""), UrdfError);
  EXPECT_THROW(parse_urdf("<notarobot/>"), UrdfError);
  EXPECT_THROW(parse_urdf("<robot name=\"empty\"></robot>"), UrdfError);
}

TEST(UrdfLoaderTest, ParserPrintsNothing) {
  // urdfdom's own console logging is captured, not printed.
  const std::string bad = one_link_urdf(
      R"(<joint name="j" type="continuous"><parent link="base"/><child link="body"/></joint>)",
      R"(<inertial><mass value="1"/></inertial>)");  // urdfdom: no <inertia> element
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(parse_urdf(bad, {}, "quiet.urdf"), UrdfError);
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(err, "");
  EXPECT_EQ(out, "");
}

// <transmission> is read but not simulated: a 1:1 SimpleTransmission changes nothing (one
// note for all of them), a reduction or another type would (a warning naming it and its line).
TEST(UrdfLoaderTest, TransmissionsAreNotesOrWarnings) {
  const std::string head =
      "<robot name='r'><link name='base'/><link name='arm'><inertial><mass value='1'/>"
      "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='j' type='continuous'><parent link='base'/><child link='arm'/><axis xyz='0 0 1'/></joint>\n";
  auto transmission = [](const std::string& name, const std::string& type, const std::string& reduction) {
    return "<transmission name='" + name + "'><type>" + type + "</type><joint name='j'/><actuator name='m'>"
           "<mechanicalReduction>" + reduction + "</mechanicalReduction></actuator></transmission>\n";
  };
  const std::string simple = "transmission_interface/SimpleTransmission";
  UrdfModel urdf = parse_urdf(head + transmission("t1", simple, "1") + transmission("t2", simple, "1") + "</robot>", {}, "tr.urdf");
  EXPECT_TRUE(urdf.warnings.empty());
  ASSERT_EQ(urdf.notes.size(), 1u);
  EXPECT_NE(urdf.notes[0].find("2 <transmission> elements (1:1 simple) not read"), std::string::npos) << urdf.notes[0];
  urdf = parse_urdf(head + transmission("geared", simple, "50") + transmission("diff", "transmission_interface/DifferentialTransmission", "1") +
                        "</robot>", {}, "tr.urdf");
  ASSERT_EQ(urdf.warnings.size(), 2u);
  EXPECT_NE(urdf.warnings[0].find("tr.urdf:2: <transmission 'geared'>"), std::string::npos) << urdf.warnings[0];
  EXPECT_NE(urdf.warnings[0].find("mechanicalReduction 50"), std::string::npos) << urdf.warnings[0];
  EXPECT_NE(urdf.warnings[1].find("DifferentialTransmission"), std::string::npos) << urdf.warnings[1];
  EXPECT_TRUE(urdf.notes.empty());
}

TEST(UrdfLoaderTest, MeshResolution) {
  // A package with meshes: <tmp>/mypkg/urdf/robot.urdf and <tmp>/mypkg/meshes/part.obj.
  const fs::path root = fs::temp_directory_path() / ("coulomb_urdf_mesh_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "mypkg" / "urdf");
  fs::create_directories(root / "mypkg" / "meshes");
  fs::create_directories(root / "elsewhere" / "shared");
  std::ofstream(root / "mypkg" / "meshes" / "part.obj") << "# empty\n";
  std::ofstream(root / "elsewhere" / "shared" / "tool.stl") << "solid\n";
  const std::string xml = R"(<robot name="meshy">
    <link name="base">
      <visual><geometry><mesh filename="package://mypkg/meshes/part.obj"/></geometry></visual>
      <visual><geometry><mesh filename="../meshes/part.obj"/></geometry></visual>
      <visual><geometry><mesh filename="package://mypkg/meshes/missing.obj"/></geometry></visual>
      <collision name="hull"><origin xyz="0 0 0.5"/>
        <geometry><mesh filename="package://mypkg/meshes/part.obj" scale="2 2 2"/></geometry></collision>
      <collision><geometry><mesh filename="shared/tool.stl"/></geometry></collision>
    </link>
  </robot>)";
  const std::string base = (root / "mypkg" / "urdf").string();
  unsetenv("COULOMB_MODEL_PATH");
  UrdfModel urdf = parse_urdf(xml, {}, "meshy.urdf", base);
  ASSERT_EQ(urdf.collisions.size(), 2u);
  EXPECT_EQ(urdf.collisions[0].name, "hull");
  EXPECT_EQ(urdf.collisions[0].type, UrdfCollision::Type::kMesh);
  EXPECT_EQ(urdf.collisions[0].mesh_filename, "package://mypkg/meshes/part.obj");
  EXPECT_EQ(urdf.collisions[0].mesh_scale, Vector3(2, 2, 2));
  EXPECT_EQ(urdf.collisions[0].X_LG.p, Vector3(0, 0, 0.5));
  EXPECT_TRUE(fs::equivalent(urdf.collisions[0].mesh_path, root / "mypkg" / "meshes" / "part.obj"));
  EXPECT_EQ(urdf.collisions[1].mesh_path, "");  // not on the search path yet
  // The unresolved collision mesh is a warning, the missing visual mesh a note; nothing else.
  ASSERT_EQ(urdf.warnings.size(), 1u);
  ASSERT_EQ(urdf.notes.size(), 1u);
  const std::string all = urdf.notes[0] + "\n" + urdf.warnings[0];
  EXPECT_NE(all.find("<visual> mesh 'package://mypkg/meshes/missing.obj' not found"), std::string::npos) << all;
  EXPECT_NE(all.find("<collision> mesh 'shared/tool.stl' not found"), std::string::npos) << all;
  EXPECT_EQ(all.find("part.obj"), std::string::npos) << all;

  // COULOMB_MODEL_PATH (colon separated) is searched after the URDF's directory.
  const std::string search = "/nonexistent:" + (root / "elsewhere").string();
  setenv("COULOMB_MODEL_PATH", search.c_str(), 1);
  urdf = parse_urdf(xml, {}, "meshy.urdf", base);
  unsetenv("COULOMB_MODEL_PATH");
  EXPECT_TRUE(fs::equivalent(urdf.collisions[1].mesh_path, root / "elsewhere" / "shared" / "tool.stl"));
  EXPECT_EQ(urdf.warnings.size(), 0u);  // the collision mesh is found now
  EXPECT_EQ(urdf.notes.size(), 1u);     // the visual mesh is still missing
  fs::remove_all(root);
}

}  // namespace
}  // namespace coulomb::io
