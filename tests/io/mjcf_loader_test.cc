// The MJCF loader on small models whose answers follow from the MJCF reference by hand:
// default classes and childclass, orientation forms, fromto, joint chains with `pos` and `ref`,
// inertia from geoms, includes, the unsupported-element warning, file-kind detection, and a scene
// with robots: [{mjcf: ...}]. (MuJoCo itself is the oracle in tests/oracle/mjcf_oracle_test.cc.)
#include "coulomb/io/mjcf_loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;
namespace mb = multibody;
using math::Matrix3;
using math::Transform;
using math::Vector3;

constexpr double kPi = 3.14159265358979323846;

struct Loaded {
  mb::Model model;
  MjcfAttachment attachment;
};

Loaded load_string(const std::string& xml, const std::string& dir = ".") {
  mb::ModelBuilder builder("test");
  Loaded out;
  out.attachment = add_mjcf_string(builder, xml, {}, "test.xml", dir);
  out.model = builder.build();
  return out;
}

/// Pose of frame (link) `name` in the world at q.
Transform frame_pose(const mb::Model& model, const Eigen::VectorXd& q, const std::string& name) {
  mb::Workspace ws(model);
  mb::forward_kinematics(model, ws, q);
  const mb::Frame& f = model.frame(model.frame_index(name));
  return ws.X_WB[f.body] * f.X_BF;
}

Matrix3 rot(const Vector3& axis, double angle) { return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix(); }

TEST(MjcfLoaderTest, DefaultClassesInheritAndChildclassApplies) {
  const Loaded l = load_string(R"(
<mujoco>
  <default>
    <joint damping="1" armature="0.5"/>
    <default class="a">
      <joint damping="2"/>
      <default class="b"><joint frictionloss="0.3"/></default>
    </default>
  </default>
  <worldbody>
    <body name="p" childclass="b">
      <joint name="j_b"/>
      <geom type="sphere" size="0.1"/>
      <body name="c" pos="0 0 -1">
        <joint name="j_main" class="main"/>
        <joint name="j_a" class="a" damping="7"/>
        <geom type="sphere" size="0.1"/>
      </body>
    </body>
  </worldbody>
</mujoco>)");
  const auto& m = l.model;
  auto joint = [&](const std::string& n) { return m.body(m.joint_body(n)).joint; };
  EXPECT_EQ(joint("j_b").damping, 2.0);      // from a
  EXPECT_EQ(joint("j_b").friction, 0.3);     // from b
  EXPECT_EQ(joint("j_b").armature, 0.5);     // from main through a and b
  EXPECT_EQ(joint("j_main").damping, 1.0);   // class main explicitly
  EXPECT_EQ(joint("j_main").friction, 0.0);
  EXPECT_EQ(joint("j_a").damping, 7.0);      // explicit beats the class
  EXPECT_EQ(m.nv(), 3);
}

TEST(MjcfLoaderTest, OrientationFormsAgree) {
  // One rotation written five ways: 90° about z, then (intrinsic) 90° about the new x.
  const Matrix3 expected = rot(Vector3::UnitZ(), kPi / 2) * rot(Vector3::UnitX(), kPi / 2);
  const Eigen::Quaterniond q(expected);
  const std::string quat = std::to_string(q.w()) + " " + std::to_string(q.x()) + " " + std::to_string(q.y()) + " " +
                           std::to_string(q.z());
  const Eigen::AngleAxisd aa(expected);
  const std::string axisangle = std::to_string(aa.axis().x()) + " " + std::to_string(aa.axis().y()) + " " +
                                std::to_string(aa.axis().z()) + " " + std::to_string(aa.angle() * 180 / kPi);
  const std::string xyaxes = std::to_string(expected(0, 0)) + " " + std::to_string(expected(1, 0)) + " " +
                             std::to_string(expected(2, 0)) + " " + std::to_string(expected(0, 1)) + " " +
                             std::to_string(expected(1, 1)) + " " + std::to_string(expected(2, 1));
  const Loaded l = load_string(R"(
<mujoco>
  <compiler eulerseq="zxy"/>
  <worldbody>
    <body name="by_quat" quat=")" + quat + R"("><geom type="sphere" size="0.1"/></body>
    <body name="by_axisangle" axisangle=")" + axisangle + R"("><geom type="sphere" size="0.1"/></body>
    <body name="by_euler" euler="90 90 0"><geom type="sphere" size="0.1"/></body>
    <body name="by_xyaxes" xyaxes=")" + xyaxes + R"("><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>)");
  const Eigen::VectorXd q0 = l.model.neutral_configuration();
  for (const char* name : {"by_quat", "by_axisangle", "by_euler", "by_xyaxes"})
    EXPECT_LT((frame_pose(l.model, q0, name).R - expected).norm(), 1e-5) << name;
  // zaxis: the minimal rotation taking z to the given axis.
  const Loaded z = load_string(R"(
<mujoco><worldbody><body name="b" zaxis="1 0 0"><geom type="sphere" size="0.1"/></body></worldbody></mujoco>)");
  const Matrix3 Rz = frame_pose(z.model, z.model.neutral_configuration(), "b").R;
  EXPECT_LT((Rz.col(2) - Vector3::UnitX()).norm(), 1e-12);
  EXPECT_LT((Rz - rot(Vector3::UnitY(), kPi / 2)).norm(), 1e-12);
  // Extrinsic (upper-case) sequence: XYZ fixed axes = Z·Y·X.
  const Loaded e = load_string(R"(
<mujoco><compiler angle="radian" eulerseq="XYZ"/><worldbody>
  <body name="b" euler="0.3 -0.2 0.5"><geom type="sphere" size="0.1"/></body></worldbody></mujoco>)");
  const Matrix3 expected_e = rot(Vector3::UnitZ(), 0.5) * rot(Vector3::UnitY(), -0.2) * rot(Vector3::UnitX(), 0.3);
  EXPECT_LT((frame_pose(e.model, e.model.neutral_configuration(), "b").R - expected_e).norm(), 1e-12);
}

TEST(MjcfLoaderTest, JointChainWithAnchorsAndReferenceMatchesMuJoCoKinematics) {
  // Body frame: X_WB(q) = X_W,B0 · T1(q1) · T2(q2), T_k = Trans(p_k) Rot(a_k, q_k − ref_k) Trans(−p_k)
  // for hinges, Trans(a_k (q_k − ref_k)) for slides (MJCF reference, body kinematics).
  const Loaded l = load_string(R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="b" pos="0.1 0.2 0.3" euler="0.1 0.2 0.3">
      <joint name="h" type="hinge" pos="0 0 0.5" axis="1 1 0" ref="0.2"/>
      <joint name="s" type="slide" pos="0.3 0 0" axis="0 0 1" ref="-0.1"/>
      <joint name="h2" type="hinge" pos="0.1 -0.2 0" axis="0 1 0"/>
      <geom type="box" size="0.1 0.2 0.3"/>
    </body>
  </worldbody>
</mujoco>)");
  const mb::Model& m = l.model;
  ASSERT_EQ(m.nv(), 3);
  // The reference positions are the initial coordinates.
  ASSERT_EQ(l.attachment.joints.size(), 3u);
  EXPECT_EQ(l.attachment.joints[0].ref, 0.2);
  EXPECT_EQ(l.attachment.joints[1].ref, -0.1);
  Eigen::VectorXd q(3);
  q << 0.7, 0.25, -1.1;
  const Matrix3 R0 = rot(Vector3::UnitX(), 0.1) * rot(Vector3::UnitY(), 0.2) * rot(Vector3::UnitZ(), 0.3);
  const Transform X0(R0, Vector3(0.1, 0.2, 0.3));
  auto hinge = [](const Vector3& p, const Vector3& a, double angle) {
    return Transform(Matrix3::Identity(), p) * Transform(rot(a, angle), Vector3::Zero()) *
           Transform(Matrix3::Identity(), -p);
  };
  const Transform expected = X0 * hinge(Vector3(0, 0, 0.5), Vector3(1, 1, 0), 0.7 - 0.2) *
                             Transform(Matrix3::Identity(), Vector3(0, 0, 0.25 + 0.1)) *
                             hinge(Vector3(0.1, -0.2, 0), Vector3::UnitY(), -1.1);
  const Transform X = frame_pose(m, q, "b");
  EXPECT_LT((X.R - expected.R).norm(), 1e-12);
  EXPECT_LT((X.p - expected.p).norm(), 1e-12);
  // Mass from the box's geom at density 1000.
  EXPECT_NEAR(m.total_mass(), 1000.0 * 0.2 * 0.4 * 0.6, 1e-9);
}

TEST(MjcfLoaderTest, InertiaFromGeomsAndFromto) {
  const Loaded l = load_string(R"(
<mujoco>
  <worldbody>
    <body name="rod">
      <freejoint name="free"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05" density="500"/>
      <geom type="sphere" pos="0 0 1" size="0.1" mass="3"/>
    </body>
  </worldbody>
</mujoco>)");
  const double r = 0.05, h = 0.4;
  const double capsule_mass = 500.0 * kPi * (r * r * h + 4.0 / 3.0 * r * r * r);
  const mb::Body& body = l.model.body(l.model.joint_body("free"));
  EXPECT_NEAR(body.inertia.mass, capsule_mass + 3.0, 1e-12);
  // Centre of mass: capsule at (0.2, 0, 0), sphere at (0, 0, 1).
  EXPECT_LT((body.inertia.com() - Vector3(0.2 * capsule_mass, 0, 3.0) / (capsule_mass + 3.0)).norm(), 1e-12);
  // The capsule's axis is x: its inertia about x is the axisymmetric one, m r²·(…) with no h term.
  const double ms = 4.0 / 3.0 * r * r * r / (r * r * h + 4.0 / 3.0 * r * r * r);
  const double Iaxis = capsule_mass * ((1 - ms) * 0.5 * r * r + ms * 0.4 * r * r);
  const double Isphere = 0.4 * 3.0 * 0.01;
  // I_xx about the body origin: capsule axis (COM on the x axis) + sphere (0.4 m r² + m·1²).
  EXPECT_NEAR(body.inertia.I_o(0, 0), Iaxis + Isphere + 3.0 * 1.0, 1e-12);
  ASSERT_EQ(l.attachment.geoms.size(), 2u);
  EXPECT_EQ(l.attachment.geoms[0].shape.type, geometry::ShapeType::kCapsule);
  EXPECT_NEAR(l.attachment.geoms[0].shape.length, 0.4, 1e-15);
  EXPECT_LT((l.attachment.geoms[0].X_LG.R.col(2) - Vector3::UnitX()).norm(), 1e-12);
  ASSERT_EQ(l.attachment.free_joints.size(), 1u);
}

TEST(MjcfLoaderTest, IncludeSplicesTheIncludedFile) {
  const fs::path dir = fs::temp_directory_path() / "coulomb_mjcf_include_test";
  fs::create_directories(dir / "parts");
  std::ofstream(dir / "parts" / "arm.xml") << R"(<mujoco><worldbody><body name="arm"><joint name="j"/>
    <geom type="sphere" size="0.1"/></body></worldbody></mujoco>)";
  std::ofstream(dir / "main.xml") << R"(<mujoco model="m"><include file="parts/arm.xml"/>
    <actuator><motor joint="j" gear="3"/></actuator></mujoco>)";
  mb::ModelBuilder builder("inc");
  const MjcfAttachment a = add_mjcf(builder, (dir / "main.xml").string());
  EXPECT_EQ(a.model_name, "m");
  ASSERT_EQ(a.actuators.size(), 1u);
  EXPECT_EQ(a.actuators[0].gear, 3.0);
  EXPECT_EQ(builder.build().nv(), 1);
  fs::remove_all(dir);
}

TEST(MjcfLoaderTest, UnsupportedElementsAreListedInOneWarning) {
  const Loaded l = load_string(R"(
<mujoco>
  <worldbody>
    <body name="a"><joint name="j"/><geom type="sphere" size="0.1"/><site name="s"/></body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="j" coef="1"/></fixed></tendon>
  <equality><joint joint1="j"/></equality>
  <sensor><jointpos joint="j"/></sensor>
  <actuator><velocity joint="j"/></actuator>
</mujoco>)");
  ASSERT_EQ(l.attachment.warnings.size(), 1u);
  const std::string& w = l.attachment.warnings[0];
  for (const char* s : {"<tendon> (line 6)", "<joint> (line 7)", "<sensor> (line 8)", "<velocity> (line 9)"})
    EXPECT_NE(w.find(s), std::string::npos) << w;
}

TEST(MjcfLoaderTest, ConnectAndWeldBecomeSceneConstraints) {
  const fs::path dir = fs::temp_directory_path() / "coulomb_mjcf_equality_test";
  fs::create_directories(dir);
  std::ofstream(dir / "linkage.xml") << R"(<mujoco><compiler angle="radian"/>
  <worldbody>
    <body name="crank" pos="0 0 1"><joint name="c" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/></body>
    <body name="rocker" pos="0.5 0 1" euler="0 0.3 0"><joint name="r" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 -0.3 0 0" size="0.02"/></body>
  </worldbody>
  <equality>
    <connect name="pin" body1="crank" body2="rocker" anchor="0.2 0 0"/>
    <weld body1="rocker"/>
    <connect body1="crank" anchor="0 0 0" active="false"/>
  </equality>
</mujoco>)";
  std::ofstream(dir / "scene.yaml") << "robots: [{mjcf: linkage.xml}]\n";
  const Scene scene = load_scene((dir / "scene.yaml").string());
  const mb::Model& m = scene.model;
  ASSERT_EQ(scene.constraints.size(), 2u);  // the inactive connect is not held
  mb::Workspace ws(m);
  mb::forward_kinematics(m, ws, scene.q0);
  const auto& pin = scene.constraints[0];
  EXPECT_EQ(pin.name, "pin");
  EXPECT_EQ(pin.type, scene::BilateralType::kBall);
  EXPECT_EQ(pin.body_a, m.frame(m.frame_index("crank")).body);
  EXPECT_EQ(pin.body_b, m.frame(m.frame_index("rocker")).body);
  // The anchor (0.2, 0, 0) of the crank, at (0.2, 0, 1) in the world, on both bodies at q0.
  const Vector3 p_F = (ws.X_WB[pin.body_a] * pin.X_AF).p, p_M = (ws.X_WB[pin.body_b] * pin.X_BM).p;
  EXPECT_LT((p_F - Vector3(0.2, 0, 1)).norm(), 1e-12);
  EXPECT_LT((p_M - p_F).norm(), 1e-12);
  const auto& weld = scene.constraints[1];
  EXPECT_EQ(weld.type, scene::BilateralType::kWeld);
  EXPECT_EQ(weld.body_b, 0);  // body2 omitted: the world
  const Transform X_WF = ws.X_WB[weld.body_a] * weld.X_AF, X_WM = ws.X_WB[weld.body_b] * weld.X_BM;
  EXPECT_LT((X_WF.R - X_WM.R).norm() + (X_WF.p - X_WM.p).norm(), 1e-12);
  EXPECT_LT((X_WF.R - rot(Vector3::UnitY(), 0.3)).norm(), 1e-12);
  fs::remove_all(dir);
}

// A ball joint is a kBall joint about its `pos`: a spherical pendulum whose bob is a sphere of
// radius r and density 1000 one metre below the pivot has, at the identity, the mass matrix
// I_com + m (|d|² 1 − d dᵀ) = diag(2/5 m r² + m, 2/5 m r² + m, 2/5 m r²) (parallel axes).
TEST(MjcfLoaderTest, BallJointIsASphericalJointAboutItsPos) {
  const Loaded l = load_string(
      "<mujoco><worldbody><body name='b' pos='0 0 2'>\n<joint name='sh' type='ball' pos='0 0 0.5'/>"
      "<geom type='sphere' size='0.1' pos='0 0 -0.5'/></body></worldbody></mujoco>");
  const mb::Model& model = l.model;
  ASSERT_EQ(model.nq(), 4);
  ASSERT_EQ(model.nv(), 3);
  const int b = model.joint_body("sh");
  EXPECT_EQ(model.body(b).joint.type, mb::JointType::kBall);
  mb::Workspace ws(model);
  const Eigen::VectorXd q = model.neutral_configuration();
  const Eigen::MatrixXd M = mb::crba(model, ws, q);
  const double r = 0.1, m = 1000.0 * 4.0 / 3.0 * M_PI * r * r * r, Ic = 0.4 * m * r * r;
  EXPECT_NEAR(M(0, 0), Ic + m, 1e-12);
  EXPECT_NEAR(M(1, 1), Ic + m, 1e-12);
  EXPECT_NEAR(M(2, 2), Ic, 1e-12);
  EXPECT_NEAR(M(0, 1), 0.0, 1e-12);
  // Gravity: tilted by 0.3 rad about x, the bob one metre from the pivot feels m g sin 0.3.
  Eigen::VectorXd qt = q;
  qt.segment<4>(model.body(b).joint.q_index) << std::cos(0.15), std::sin(0.15), 0.0, 0.0;
  const Eigen::VectorXd g = mb::generalized_gravity(model, ws, qt);
  EXPECT_NEAR(std::abs(g[0]), m * 9.81 * std::sin(0.3), 1e-9 * m);
  // The joint's body has its origin at the pivot, 2.5 m up, at any rotation.
  mb::forward_kinematics(model, ws, qt);
  EXPECT_LT((ws.X_WB[b].p - Vector3(0, 0, 2.5)).norm(), 1e-12);
}

TEST(MjcfLoaderTest, DetectsFileKindByContent) {
  const fs::path dir = fs::temp_directory_path() / "coulomb_mjcf_kind_test";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  EXPECT_EQ(detect_model_file_kind(write("a.txt", "<?xml version='1.0'?>\n<!-- c -->\n<robot name='r'/>")),
            ModelFileKind::kUrdf);
  EXPECT_EQ(detect_model_file_kind(write("b.yaml", "<!-- x --><mujoco/>")), ModelFileKind::kMjcf);
  EXPECT_EQ(detect_model_file_kind(write("c.xml", "<sdf version='1.9'/>")), ModelFileKind::kSdf);
  EXPECT_EQ(detect_model_file_kind(write("d.xml", "time_step: 0.01\n")), ModelFileKind::kYaml);
  EXPECT_EQ(detect_model_file_kind(write("e.json", "{\"a\": 1}")), ModelFileKind::kUnknown);
  EXPECT_EQ(detect_model_file_kind(write("f.bin", std::string("\x7f" "ELF\x02\x01\x01\0\0", 9))),
            ModelFileKind::kUnknown);
  EXPECT_EQ(detect_model_file_kind(write("g.xml", "<html/>")), ModelFileKind::kUnknown);
  fs::remove_all(dir);
}

TEST(MjcfLoaderTest, SceneRobotFromMjcf) {
  const fs::path dir = fs::temp_directory_path() / "coulomb_mjcf_scene_test";
  fs::create_directories(dir);
  std::ofstream(dir / "bot.xml") << R"(<mujoco model="bot">
  <compiler angle="radian"/>
  <option timestep="0.004" gravity="0 0 -5"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="base" pos="0 0 1">
      <freejoint name="root"/>
      <geom name="torso" type="box" size="0.1 0.1 0.1" friction="0.6"/>
      <body name="leg" pos="0 0 -0.2">
        <joint name="hip" axis="0 1 0" stiffness="4" springref="0.1" ref="0.05"/>
        <joint name="knee" axis="0 1 0" pos="0 0 0.1"/>
        <geom name="shin" type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      </body>
    </body>
  </worldbody>
  <contact><exclude body1="base" body2="leg"/></contact>
  <actuator>
    <motor joint="hip" gear="10" ctrllimited="true" ctrlrange="-1 1"/>
    <position joint="knee" kp="5" gear="2" forcelimited="true" forcerange="-3 3"/>
  </actuator>
</mujoco>)";
  std::ofstream(dir / "scene.yaml") << "robots:\n  - {name: b, mjcf: bot.xml, position: [1, 0, 0]}\n";
  const Scene scene = load_scene((dir / "scene.yaml").string());
  const mb::Model& m = scene.model;
  EXPECT_EQ(scene.time_step, 0.004);
  EXPECT_EQ(m.gravity().z(), -5.0);
  ASSERT_EQ(scene.robots.size(), 1u);
  EXPECT_TRUE(scene.robots[0].floating);
  EXPECT_EQ(scene.robots[0].model_format, "mjcf");
  // Initial state: the free body where the file puts it, moved by the robot's position; hip at ref.
  const auto& root = m.body(m.joint_body("b/root")).joint;
  EXPECT_EQ(scene.q0.segment<3>(root.q_index), Vector3(1, 0, 1));
  EXPECT_EQ(scene.q0[m.body(m.joint_body("b/hip")).joint.q_index], 0.05);
  // Actuators: motor → pure force limited to gear·ctrlrange; position → kp gear², limit gear·forcerange.
  ASSERT_EQ(scene.actuators.size(), 2u);
  EXPECT_EQ(scene.actuators[0].joint, "b/hip");
  EXPECT_EQ(scene.actuators[0].kp, 0.0);
  EXPECT_EQ(scene.actuators[0].effort_limit, 10.0);
  EXPECT_EQ(scene.actuators[1].kp, 20.0);
  EXPECT_EQ(scene.actuators[1].effort_limit, 6.0);
  ASSERT_EQ(scene.springs.size(), 1u);
  EXPECT_EQ(scene.springs[0].stiffness, 4.0);
  EXPECT_EQ(scene.springs[0].rest_position, 0.1);
  // Geometry: floor half-space on the world, friction, exclusions (explicit and parent-child).
  int found = 0;
  for (const auto& g : scene.geometries) {
    if (g.name == "b/floor") {
      ++found;
      EXPECT_EQ(g.body, 0);
      EXPECT_EQ(g.shape.type, geometry::ShapeType::kHalfSpace);
      EXPECT_EQ(g.X_BG.p, Vector3(1, 0, 0));
    }
    if (g.name == "b/torso") {
      ++found;
      EXPECT_EQ(*g.material.mu, 0.6);
      EXPECT_TRUE(g.self_collision);
    }
  }
  EXPECT_EQ(found, 2);
  const int base = m.frame(m.frame_index("b/base")).body, leg = m.frame(m.frame_index("b/leg")).body;
  int pairs = 0;
  for (const auto& [a, b] : scene.collision.excluded_body_pairs)
    if ((a == base && b == leg) || (a == leg && b == base)) ++pairs;
  EXPECT_EQ(pairs, 2);  // MuJoCo's parent filter and the explicit <exclude>
  fs::remove_all(dir);
}

}  // namespace
}  // namespace coulomb::io
