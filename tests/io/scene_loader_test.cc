// Tests of io::load_scene / io::parse_scene: every example scene in examples/scenes loads with
// the DOF counts and masses expected from its description (recomputed here independently:
// counts of objects, masses from the URDF text), and the schema's semantics (initial
// velocities given in the world frame, actuator defaults, model path resolution, several
// robots, geometry placement and filters) on small inline scenes.
#include "coulomb/io/scene_loader.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "io/io_test_util.h"

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Vector3;
using multibody::JointType;

const std::string kSource = COULOMB_SOURCE_DIR;
const std::string kScenes = kSource + "/examples/scenes/";
const std::string kModelsDir = kSource + "/examples/models/";
const std::string kQuadruped = kModelsDir + "coulomb_quadruped.urdf";
const std::string kA1 = std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf";
constexpr double kInf = std::numeric_limits<double>::infinity();
using coulomb::testing::read_text;
using coulomb::testing::rpy_by_hand;
const auto& urdf_mass_from_text = coulomb::testing::mass_sum_from_text;




const geometry::Geometry& geometry_named(const Scene& scene, const std::string& name) {
  for (const geometry::Geometry& g : scene.geometries)
    if (g.name == name) return g;
  ADD_FAILURE() << "no geometry named " << name;
  static geometry::Geometry none;
  return none;
}

int count_free_bodies(const multibody::Model& model) {
  int n = 0;
  for (const multibody::Body& b : model.bodies()) n += b.joint.type == JointType::kFloating;
  return n;
}

const Actuator* actuator_of(const Scene& scene, const std::string& joint) {
  for (const Actuator& a : scene.actuators)
    if (a.joint == joint) return &a;
  return nullptr;
}

double joint_q(const Scene& scene, const std::string& joint) {
  return scene.q0[scene.model.body(scene.model.joint_body(joint)).joint.q_index];
}

// ---------------------------------------------------------------------------------------
// The example scenes

TEST(SceneLoaderTest, EveryExampleSceneLoadsAndIsChecked) {
  // Every file in examples/scenes must load; the scenes of the issue must be there (each is
  // checked in detail below).
  const std::set<std::string> checked = {"clutter.yaml",      "clutter_no_walls.yaml", "spring_cylinder.yaml",
                                         "incline.yaml",      "sphere_stack.yaml",     "a1_drop.yaml",
                                         "a1_stand.yaml",     "quadruped.yaml",        "four_bar.yaml"};
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kScenes)) {
    if (entry.path().extension() != ".yaml") continue;
    found.insert(entry.path().filename().string());
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(load_scene(entry.path().string()));
  }
  for (const std::string& name : checked) EXPECT_TRUE(found.count(name)) << name << " is missing";
}

void check_clutter(const std::string& file, int fixed_shapes) {
  const Scene scene = load_scene(kScenes + file);
  const multibody::Model& model = scene.model;
  // 40 objects, each a free body: 6 DOFs and 7 coordinates each.
  EXPECT_EQ(model.nv(), 240);
  EXPECT_EQ(model.nq(), 280);
  EXPECT_EQ(count_free_bodies(model), 40);
  EXPECT_EQ(model.num_bodies(), 41);
  int spheres = 0, boxes = 0;
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.body == 0) continue;
    const double mass = model.body(g.body).inertia.mass;
    if (g.shape.type == geometry::ShapeType::kSphere) {
      ++spheres;
      EXPECT_DOUBLE_EQ(g.shape.radius, 0.05);
      EXPECT_NEAR(mass, 0.524, 1e-12);
      // Uniform solid sphere: I = 2/5 m r² about its centre (the body origin).
      EXPECT_NEAR(model.body(g.body).inertia.I_o(0, 0), 0.4 * 0.524 * 0.05 * 0.05, 1e-12);
    } else {
      ASSERT_EQ(g.shape.type, geometry::ShapeType::kBox);
      ++boxes;
      EXPECT_EQ(g.shape.size, Vector3(0.1, 0.1, 0.1));
      EXPECT_NEAR(mass, 1.0, 1e-12);
      EXPECT_NEAR(model.body(g.body).inertia.I_o(2, 2), 1.0 * (0.01 + 0.01) / 12.0, 1e-12);
    }
  }
  EXPECT_EQ(spheres, 20);
  EXPECT_EQ(boxes, 20);
  EXPECT_NEAR(model.total_mass(), 20 * 0.524 + 20 * 1.0, 1e-9);
  int world_shapes = 0;
  for (const geometry::Geometry& g : scene.geometries) world_shapes += g.body == 0;
  EXPECT_EQ(world_shapes, fixed_shapes);
  EXPECT_DOUBLE_EQ(scene.contact.mu, 1.0);
  EXPECT_DOUBLE_EQ(scene.contact.stiffness, 1e12);
  EXPECT_DOUBLE_EQ(scene.contact.dissipation_time, 0.01);
  EXPECT_DOUBLE_EQ(scene.time_step, 0.01);
  EXPECT_DOUBLE_EQ(scene.time_step, scene.contact.dissipation_time);  // τ_d = δt
  // Objects start above the floor (top at z = 0) and apart: no initial overlap along a column.
  std::map<std::pair<long, long>, std::vector<double>> columns;
  for (const multibody::Body& b : model.bodies()) {
    if (b.joint.type != JointType::kFloating) continue;
    const double z = scene.q0[b.joint.q_index + 2];
    EXPECT_GT(z, 0.05);
    const double x = scene.q0[b.joint.q_index], y = scene.q0[b.joint.q_index + 1];
    columns[{std::lround(x / 0.15), std::lround(y / 0.15)}].push_back(z);
  }
  EXPECT_EQ(columns.size(), 4u);
  for (auto& [key, zs] : columns) {
    EXPECT_EQ(zs.size(), 10u);
    std::sort(zs.begin(), zs.end());
    for (size_t k = 1; k < zs.size(); ++k) EXPECT_GT(zs[k] - zs[k - 1], 0.1);  // gaps: they drop
  }
}

TEST(SceneLoaderTest, Clutter) { check_clutter("clutter.yaml", 5); }             // floor + 4 walls
TEST(SceneLoaderTest, ClutterNoWalls) { check_clutter("clutter_no_walls.yaml", 1); }  // floor only

TEST(SceneLoaderTest, ClutterContainerIsOpenTopAndEightyCentimetres) {
  const Scene scene = load_scene(kScenes + "clutter.yaml");
  double x_min = kInf, x_max = -kInf, z_max = -kInf;
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.body != 0 || g.name == "container/floor") continue;
    const Vector3 c = g.X_BG.p, h = g.shape.size / 2;
    if (g.shape.size.x() < g.shape.size.y()) {  // walls normal to x
      x_min = std::min(x_min, std::abs(c.x()) - h.x());
      x_max = std::max(x_max, std::abs(c.x()) - h.x());
    }
    z_max = std::max(z_max, c.z() + h.z());
  }
  EXPECT_NEAR(x_min, 0.4, 1e-12);  // inner half-width 0.4 m: 80 cm inside
  EXPECT_NEAR(x_max, 0.4, 1e-12);
  EXPECT_NEAR(z_max, 0.8, 1e-12);  // 80 cm high, open top
  const geometry::Geometry& floor = geometry_named(scene, "container/floor");
  EXPECT_NEAR(floor.X_BG.p.z() + floor.shape.size.z() / 2, 0.0, 1e-12);
}

TEST(SceneLoaderTest, SpringCylinder) {
  const Scene scene = load_scene(kScenes + "spring_cylinder.yaml");
  const multibody::Model& model = scene.model;
  EXPECT_EQ(model.nv(), 3);  // x, z, theta
  EXPECT_EQ(model.dof_names(), (std::vector<std::string>{"x", "z", "theta"}));
  EXPECT_NEAR(model.total_mass(), 0.5, 1e-12);
  const multibody::Body& cylinder = model.body(model.body_index("cylinder"));
  EXPECT_NEAR(cylinder.inertia.I_o(1, 1), 0.5 * 0.5 * 0.05 * 0.05, 1e-12);  // ½ m R² about the axis y
  ASSERT_EQ(scene.springs.size(), 1u);
  EXPECT_EQ(scene.springs[0].joint, "x");
  EXPECT_DOUBLE_EQ(scene.springs[0].stiffness, 100.0);
  EXPECT_DOUBLE_EQ(scene.springs[0].rest_position, 0.0);
  EXPECT_EQ(scene.springs[0].v_index, 0);
  EXPECT_DOUBLE_EQ(joint_q(scene, "x"), 0.1);   // released 0.1 m from the spring's rest position
  EXPECT_DOUBLE_EQ(joint_q(scene, "z"), 0.05);  // resting on the ground
  EXPECT_DOUBLE_EQ(scene.time_step, 0.02);
  EXPECT_DOUBLE_EQ(scene.contact.stiffness, 1e4);
  EXPECT_DOUBLE_EQ(scene.contact.dissipation_time, 0.02);
  EXPECT_EQ(scene.integrator, "midpoint");
  // The cylinder's axis is along y: its collision shape's z axis maps to ±y.
  const geometry::Geometry& g = geometry_named(scene, "cylinder/collision0");
  EXPECT_EQ(g.shape.type, geometry::ShapeType::kCylinder);
  EXPECT_NEAR(std::abs((g.X_BG.R * Vector3::UnitZ()).y()), 1.0, 1e-12);
}

// Four-bar linkage: three continuous joints in two trees, one ball constraint between the tips
// of the coupler and the rocker, which coincide at the initial angles (the loop is closed).
TEST(SceneLoaderTest, FourBar) {
  const Scene scene = load_scene(kScenes + "four_bar.yaml");
  const multibody::Model& model = scene.model;
  EXPECT_EQ(model.nv(), 3);
  ASSERT_EQ(scene.constraints.size(), 1u);
  const scene::BilateralConstraint& c = scene.constraints[0];
  EXPECT_EQ(c.name, "loop");
  EXPECT_EQ(c.type, scene::BilateralType::kBall);
  EXPECT_EQ(c.body_a, model.body_index("rocker_link"));
  EXPECT_EQ(c.body_b, model.body_index("coupler_link"));
  EXPECT_NE(model.body(c.body_a).tree, model.body(c.body_b).tree);
  EXPECT_EQ(c.X_AF.p, Vector3(0.3, 0, 0));
  EXPECT_EQ(c.X_BM.p, Vector3(0.35, 0, 0));
  EXPECT_TRUE(std::isinf(c.stiffness));
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0);
  EXPECT_LT((ws.X_WB[c.body_a].act(c.X_AF.p) - ws.X_WB[c.body_b].act(c.X_BM.p)).norm(), 1e-15);
  ASSERT_EQ(scene.actuators.size(), 1u);
  EXPECT_EQ(scene.actuators[0].joint, "crank");
}

// Constraint frames: a link fused into its body by a fixed joint is a frame of that body; the
// frame on B defaults to where the frame on A is at q0; distance defaults to the initial distance;
// stiffness / dissipation_time give damping = k τ_d.
TEST(SceneLoaderTest, ConstraintFramesAndDefaults) {
  const Scene scene = parse_scene(R"(
bodies:
  - {name: box, mass: 2, position: [1, 2, 3], rpy: [0.1, 0.2, 0.3], shapes: [{type: box, size: [0.1, 0.2, 0.3]}]}
  - {name: wall, fixed: true, position: [0, 0, 1], shapes: [{type: box, size: [1, 1, 1]}]}
robots:
  - urdf: )" + kQuadruped + R"(
    floating: true
    position: [0, 0, 1]
constraints:
  - {name: w, type: weld, body_a: FR_foot, body_b: box, frame_a: {position: [0, 0, -0.1], rpy: [0, 0, 1]}}
  - {name: d, type: distance, body_a: wall, point_a: [0.5, 0, 0], body_b: box}
  - {name: j, type: joint, joint_type: prismatic, body_a: world, body_b: box, axis: [0, 0, 2],
     stiffness: 1.0e5, dissipation_time: 0.01}
)");
  const multibody::Model& model = scene.model;
  ASSERT_EQ(scene.constraints.size(), 3u);
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0);
  const int foot = model.frame_index("FR_foot");
  const multibody::Frame& foot_frame = model.frame(foot);
  ASSERT_NE(foot_frame.body, 0);
  EXPECT_NE(model.body(foot_frame.body).name, "FR_foot");  // fused into the calf's body
  const scene::BilateralConstraint& w = scene.constraints[0];
  EXPECT_EQ(w.type, scene::BilateralType::kWeld);
  EXPECT_EQ(w.body_a, foot_frame.body);
  // X_AF = X_B,foot · X_foot,F.
  const math::Transform X_LF(math::rotation_from_rpy(0, 0, 1), Vector3(0, 0, -0.1));
  const math::Transform X_AF = foot_frame.X_BF * X_LF;
  EXPECT_LT((w.X_AF.p - X_AF.p).norm(), 1e-15);
  EXPECT_LT((w.X_AF.R - X_AF.R).norm(), 1e-15);
  // M coincides with F at q0.
  const math::Transform X_WF = ws.X_WB[w.body_a] * w.X_AF, X_WM = ws.X_WB[w.body_b] * w.X_BM;
  EXPECT_LT((X_WF.p - X_WM.p).norm(), 1e-14);
  EXPECT_LT((X_WF.R - X_WM.R).norm(), 1e-14);
  const scene::BilateralConstraint& d = scene.constraints[1];
  EXPECT_EQ(d.body_a, 0);
  EXPECT_LT((d.X_AF.p - Vector3(0.5, 0, 1)).norm(), 1e-15);  // the wall is fused into the world
  EXPECT_LT((d.X_BM.p).norm(), 1e-15);                       // the box's origin
  EXPECT_NEAR(d.length, (Vector3(1, 2, 3) - Vector3(0.5, 0, 1)).norm(), 1e-15);
  const scene::BilateralConstraint& j = scene.constraints[2];
  EXPECT_EQ(j.type, scene::BilateralType::kPrismatic);
  EXPECT_EQ(j.axis_F, Vector3(0, 0, 1));
  EXPECT_DOUBLE_EQ(j.stiffness, 1e5);
  EXPECT_DOUBLE_EQ(j.damping, 1e3);
  const math::Transform X_WM_j = ws.X_WB[j.body_b] * j.X_BM;  // F is the world frame: M starts there
  EXPECT_LT(X_WM_j.p.norm(), 1e-14);
  EXPECT_LT((X_WM_j.R - Matrix3::Identity()).norm(), 1e-14);
}

TEST(SceneLoaderTest, Incline) {
  const Scene scene = load_scene(kScenes + "incline.yaml");
  EXPECT_EQ(scene.model.nv(), 18);
  EXPECT_NEAR(scene.model.total_mass(), 2.524, 1e-12);
  const geometry::Geometry& incline = geometry_named(scene, "incline/shape0");
  EXPECT_EQ(incline.body, 0);
  // The surface normal (the box's +z) is tilted 15° from vertical.
  const Vector3 n = incline.X_BG.R * Vector3::UnitZ();
  EXPECT_NEAR(std::acos(n.z()), 15.0 * M_PI / 180.0, 1e-9);
  // The objects' centres are 5 cm above the surface plane through the origin.
  for (const char* name : {"box_stick", "box_slide", "ball"}) {
    const multibody::Joint& j = scene.model.body(scene.model.body_index(name)).joint;
    const Vector3 p = scene.q0.segment<3>(j.q_index);
    EXPECT_NEAR(n.dot(p), 0.05, 1e-9) << name;
  }
  EXPECT_DOUBLE_EQ(*geometry_named(scene, "box_slide/shape0").material.mu, 0.1);
  EXPECT_FALSE(geometry_named(scene, "box_stick/shape0").material.mu.has_value());
}

TEST(SceneLoaderTest, SphereStack) {
  const Scene scene = load_scene(kScenes + "sphere_stack.yaml");
  EXPECT_EQ(scene.model.nv(), 24);
  EXPECT_EQ(count_free_bodies(scene.model), 4);
  for (int k = 0; k < 4; ++k) {
    const multibody::Joint& j = scene.model.body(scene.model.body_index("sphere_" + std::to_string(k))).joint;
    EXPECT_NEAR(scene.q0[j.q_index + 2], 0.05 + 0.1 * k, 1e-12);  // touching: centres 2r apart
  }
}

void check_standing_joints(const Scene& scene) {
  for (const char* leg : {"FR", "FL", "RR", "RL"}) {
    EXPECT_DOUBLE_EQ(joint_q(scene, std::string(leg) + "_hip_joint"), 0.0);
    EXPECT_DOUBLE_EQ(joint_q(scene, std::string(leg) + "_thigh_joint"), 0.8);
    EXPECT_DOUBLE_EQ(joint_q(scene, std::string(leg) + "_calf_joint"), -1.5);
  }
}

TEST(SceneLoaderTest, A1Drop) {
  const Scene scene = load_scene(kScenes + "a1_drop.yaml");
  const multibody::Model& model = scene.model;
  EXPECT_EQ(model.nv(), 18);
  EXPECT_EQ(model.nq(), 19);
  EXPECT_NEAR(model.total_mass(), urdf_mass_from_text(kA1), 1e-9);  // the ground is massless
  EXPECT_NEAR(model.total_mass(), 13.741, 1e-9);
  ASSERT_EQ(scene.robots.size(), 1u);
  EXPECT_TRUE(scene.robots[0].floating);
  EXPECT_EQ(scene.robots[0].name, "");
  EXPECT_EQ(scene.robots[0].floating_joint, "root_joint");
  EXPECT_TRUE(fs::equivalent(scene.robots[0].urdf_path, kA1));
  EXPECT_EQ(model.body(scene.robots[0].root_body).name, "base");
  const multibody::Joint& base = model.body(scene.robots[0].root_body).joint;
  EXPECT_EQ(scene.q0.segment<3>(base.q_index), Vector3(0, 0, 0.5));
  EXPECT_EQ(scene.q0.segment<4>(base.q_index + 3), Eigen::Vector4d(1, 0, 0, 0));
  check_standing_joints(scene);
  EXPECT_TRUE(scene.actuators.empty());
  // Collisions: every <collision> of the A1 is a primitive; all become geometries of robot 0.
  const int urdf_collisions = static_cast<int>(load_urdf(kA1).collisions.size());
  int robot_geometries = 0;
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.robot == 0) {
      ++robot_geometries;
      EXPECT_FALSE(g.self_collision);
    }
  }
  EXPECT_EQ(robot_geometries, urdf_collisions);
  // Feet are spheres of radius 0.02 on the calf bodies, 0.2 m below the knee.
  const geometry::Geometry& foot = geometry_named(scene, "FR_foot/collision0");
  EXPECT_EQ(foot.shape.type, geometry::ShapeType::kSphere);
  EXPECT_EQ(model.body(foot.body).name, "FR_calf");
  EXPECT_NEAR((foot.X_BG.p - Vector3(0, 0, -0.2)).norm(), 0.0, 1e-12);
}

TEST(SceneLoaderTest, A1StandActuators) {
  const Scene scene = load_scene(kScenes + "a1_stand.yaml");
  EXPECT_EQ(scene.model.nv(), 18);
  check_standing_joints(scene);
  ASSERT_EQ(scene.actuators.size(), 12u);
  int previous = -1;
  for (const Actuator& a : scene.actuators) {
    EXPECT_DOUBLE_EQ(a.kp, 80.0);
    EXPECT_DOUBLE_EQ(a.kd, 2.0);
    EXPECT_DOUBLE_EQ(a.q_target, scene.q0[a.q_index]);  // default target: the initial position
    EXPECT_DOUBLE_EQ(a.v_target, 0.0);
    EXPECT_DOUBLE_EQ(a.effort_limit, 33.5);             // default: the URDF's <limit effort>
    EXPECT_GT(a.v_index, previous);                      // in velocity order
    previous = a.v_index;
    EXPECT_EQ(scene.model.body(scene.model.joint_body(a.joint)).joint.v_index, a.v_index);
  }
  // Standing: the base starts with the feet touching the ground (φ within the margin).
  const multibody::Joint& base = scene.model.body(scene.robots[0].root_body).joint;
  const double foot_drop = 0.2 * std::cos(0.8) + 0.2 * std::cos(0.8 - 1.5) + 0.02;
  EXPECT_NEAR(scene.q0[base.q_index + 2] - foot_drop, 0.0, scene.collision.margin);
}

TEST(SceneLoaderTest, Quadruped) {
  const Scene scene = load_scene(kScenes + "quadruped.yaml");
  EXPECT_EQ(scene.model.nv(), 18);
  EXPECT_NEAR(scene.model.total_mass(), urdf_mass_from_text(kQuadruped), 1e-9);
  EXPECT_NEAR(scene.model.total_mass(), 12.88, 1e-9);
  EXPECT_EQ(scene.actuators.size(), 12u);
  check_standing_joints(scene);
  EXPECT_TRUE(scene.warnings.empty()) << scene.warnings.front();
}

// ---------------------------------------------------------------------------------------
// The project's quadruped model

/// Inertia about the centre of a uniform solid shape, in the shape's frame (textbook formulas).
Matrix3 solid_inertia(const UrdfCollision& c, double m) {
  switch (c.type) {
    case UrdfCollision::Type::kBox: {
      const Vector3 s = c.size.cwiseProduct(c.size);
      return (m / 12.0 * Vector3(s.y() + s.z(), s.x() + s.z(), s.x() + s.y())).asDiagonal();
    }
    case UrdfCollision::Type::kCylinder: {
      const double t = m * (3 * c.radius * c.radius + c.length * c.length) / 12.0;
      return Vector3(t, t, 0.5 * m * c.radius * c.radius).asDiagonal();
    }
    case UrdfCollision::Type::kSphere:
      return Matrix3::Identity() * 0.4 * m * c.radius * c.radius;
    default:
      return Matrix3::Zero();
  }
}

TEST(SceneLoaderTest, QuadrupedModelInertiasAreThoseOfItsShapes) {
  const UrdfModel urdf = load_urdf(kQuadruped, {true, "root_joint"});
  const multibody::Model& model = urdf.model;
  EXPECT_EQ(model.nv(), 18);
  EXPECT_EQ(urdf.collisions.size(), 17u);  // trunk + 4 × (hip, thigh, calf, foot)
  int revolute = 0;
  for (const multibody::Body& b : model.bodies()) {
    if (b.joint.type != JointType::kRevolute) continue;
    ++revolute;
    EXPECT_DOUBLE_EQ(b.joint.limits.effort, 33.5) << b.joint.name;
    EXPECT_GT(b.joint.damping, 0.0) << b.joint.name;
    EXPECT_LT(b.joint.limits.lower, b.joint.limits.upper) << b.joint.name;
    const Vector3 axis = b.joint.axis;
    const bool hip = b.joint.name.find("_hip_joint") != std::string::npos;
    EXPECT_EQ(axis, hip ? Vector3::UnitX() : Vector3::UnitY()) << b.joint.name;
  }
  EXPECT_EQ(revolute, 12);
  // Each link's mass is uniform over its single collision shape.
  for (const UrdfCollision& c : urdf.collisions) {
    const multibody::Frame& f = model.frame(model.frame_index(c.link));
    const double m = f.inertia.mass;
    ASSERT_GT(m, 0.0) << c.link;
    const Matrix3 I_com = c.X_LG.R * solid_inertia(c, m) * c.X_LG.R.transpose();
    const math::SpatialInertia expected = math::SpatialInertia::FromCenterOfMass(m, c.X_LG.p, I_com);
    EXPECT_NEAR((f.inertia.h - expected.h).norm(), 0.0, 1e-12) << c.link;
    EXPECT_NEAR((f.inertia.I_o - expected.I_o).norm(), 0.0, 1e-9) << c.link;
  }
  const double trunk = model.frame(model.frame_index("trunk")).inertia.mass;
  EXPECT_DOUBLE_EQ(trunk, 6.0);
}

// ---------------------------------------------------------------------------------------
// Schema semantics on inline scenes

TEST(SceneLoaderTest, DefaultsAndSettings) {
  const Scene scene = parse_scene("bodies: []\n", "empty.yaml");
  EXPECT_DOUBLE_EQ(scene.time_step, 0.01);
  EXPECT_DOUBLE_EQ(scene.duration, 1.0);
  EXPECT_EQ(scene.solver, "sap");
  EXPECT_EQ(scene.integrator, "implicit-euler");
  EXPECT_EQ(scene.model.gravity(), Vector3(0, 0, -9.81));
  EXPECT_DOUBLE_EQ(scene.collision.margin, 2e-3);
  EXPECT_EQ(scene.model.nv(), 0);
  EXPECT_EQ(scene.source, "empty.yaml");
  EXPECT_EQ(scene.model.name(), "empty");

  const Scene s2 = parse_scene(R"(
time_step: 0.002
duration: 3
gravity: [0, 0, -1.62]
solver: lstable
integrator: symplectic-euler
contact: {mu: 0.3, stiffness: 2.0e5, dissipation_time: 0.05}
collision: {margin: 0.005, speculative: true}
description: moon
)");
  EXPECT_DOUBLE_EQ(s2.time_step, 0.002);
  EXPECT_DOUBLE_EQ(s2.duration, 3.0);
  EXPECT_EQ(s2.model.gravity(), Vector3(0, 0, -1.62));
  EXPECT_EQ(s2.solver, "lstable");
  EXPECT_EQ(s2.integrator, "symplectic-euler");
  EXPECT_DOUBLE_EQ(s2.contact.mu, 0.3);
  EXPECT_DOUBLE_EQ(s2.contact.stiffness, 2e5);
  EXPECT_DOUBLE_EQ(s2.contact.dissipation_time, 0.05);
  EXPECT_DOUBLE_EQ(s2.collision.margin, 0.005);
  EXPECT_TRUE(s2.collision.speculative);
  EXPECT_EQ(s2.description, "moon");
}

TEST(SceneLoaderTest, WorldFrameInitialVelocityOfAFreeBody) {
  const double r = 0.3, p = -0.5, y = 1.2;
  std::ostringstream yaml;
  yaml.precision(17);
  yaml << "bodies:\n"
       << "  - name: brick\n"
       << "    mass: 2.0\n"
       << "    shapes: [{type: box, size: [0.2, 0.1, 0.05]}]\n"
       << "    position: [1, 2, 3]\n"
       << "    rpy: [" << r << ", " << p << ", " << y << "]\n"
       << "    linear_velocity: [0.5, -1.0, 2.0]\n"
       << "    angular_velocity: [3.0, 0.25, -1.5]\n";
  const Scene scene = parse_scene(yaml.str());
  const multibody::Model& model = scene.model;
  const multibody::Joint& j = model.body(model.body_index("brick")).joint;
  EXPECT_EQ(j.name, "brick");
  EXPECT_EQ(j.type, JointType::kFloating);
  const Matrix3 R = rpy_by_hand(r, p, y);
  const Vector3 v_W(0.5, -1.0, 2.0), w_W(3.0, 0.25, -1.5);
  EXPECT_NEAR((scene.q0.segment<3>(j.q_index) - Vector3(1, 2, 3)).norm(), 0.0, 1e-15);
  const Eigen::Vector4d q = scene.q0.segment<4>(j.q_index + 3);
  const math::Quaternion quat(q[0], q[1], q[2], q[3]);
  EXPECT_NEAR(quat.norm(), 1.0, 1e-15);
  EXPECT_NEAR((quat.toRotationMatrix() - R).norm(), 0.0, 1e-14);
  // A free body's floating joint stores v = [ω; v] in its joint frame, the world (joint.h).
  EXPECT_NEAR((scene.v0.segment<3>(j.v_index) - w_W).norm(), 0.0, 1e-14);
  EXPECT_NEAR((scene.v0.segment<3>(j.v_index + 3) - v_W).norm(), 0.0, 1e-14);
  // Round trip through forward kinematics: the body's spatial velocity in the world frame.
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0, scene.v0);
  const int b = model.body_index("brick");
  EXPECT_NEAR((ws.X_WB[b].R * ws.V_B[b].w - w_W).norm(), 0.0, 1e-13);
  EXPECT_NEAR((ws.X_WB[b].R * ws.V_B[b].v - v_W).norm(), 0.0, 1e-13);
  EXPECT_NEAR((ws.X_WB[b].p - Vector3(1, 2, 3)).norm(), 0.0, 1e-14);
}

TEST(SceneLoaderTest, QuaternionOrientationIsNormalized) {
  const Scene scene = parse_scene(R"(
bodies:
  - {name: b, mass: 1, shapes: [{type: sphere, radius: 0.1}], quaternion: [2, 0, 0, 2]}
)");
  const multibody::Joint& j = scene.model.body(1).joint;
  const Eigen::Vector4d q = scene.q0.segment<4>(j.q_index + 3);
  EXPECT_NEAR((q - Eigen::Vector4d(std::sqrt(0.5), 0, 0, std::sqrt(0.5))).norm(), 0.0, 1e-15);
}

TEST(SceneLoaderTest, InertiaFromShapesAtUniformDensity) {
  // Two equal spheres at x = ±0.1: 1 kg each.
  const Scene scene = parse_scene(R"(
bodies:
  - name: dumbbell
    mass: 2.0
    shapes:
      - {type: sphere, radius: 0.05, position: [0.1, 0, 0]}
      - {type: sphere, radius: 0.05, position: [-0.1, 0, 0]}
  - name: weird
    mass: 3.0
    inertia: [0.1, 0.2, 0.25, 0.01, 0, 0]
    com: [0, 0, 0.5]
)");
  const math::SpatialInertia& I = scene.model.body(scene.model.body_index("dumbbell")).inertia;
  EXPECT_NEAR(I.mass, 2.0, 1e-15);
  EXPECT_NEAR(I.h.norm(), 0.0, 1e-15);
  const double sphere = 0.4 * 1.0 * 0.05 * 0.05;
  EXPECT_NEAR(I.I_o(0, 0), 2 * sphere, 1e-12);
  EXPECT_NEAR(I.I_o(1, 1), 2 * (sphere + 1.0 * 0.01), 1e-12);
  EXPECT_NEAR(I.I_o(2, 2), 2 * (sphere + 1.0 * 0.01), 1e-12);
  const math::SpatialInertia& W = scene.model.body(scene.model.body_index("weird")).inertia;
  EXPECT_NEAR(W.mass, 3.0, 1e-15);
  EXPECT_NEAR((W.com() - Vector3(0, 0, 0.5)).norm(), 0.0, 1e-15);
  Matrix3 expected;
  expected << 0.1, 0.01, 0, 0.01, 0.2, 0, 0, 0, 0.25;
  EXPECT_NEAR((W.inertia_about_com() - expected).norm(), 0.0, 1e-14);
  // A body without shapes has no geometry.
  for (const geometry::Geometry& g : scene.geometries) EXPECT_NE(g.name.rfind("weird", 0), 0u);
}

TEST(SceneLoaderTest, FixedBodiesAreFusedIntoTheWorld) {
  const Scene scene = parse_scene(R"(
bodies:
  - name: table
    fixed: true
    position: [1, 0, 0.5]
    rpy: [0, 0, 1.5707963267948966]
    shapes:
      - {type: box, size: [1, 0.6, 0.05], position: [0.2, 0, 0]}
      - {name: leg, type: cylinder, radius: 0.02, length: 0.5, position: [0, 0, -0.25]}
  - name: floor
    fixed: true
    shapes: [{type: halfspace, normal: [0, 1, 1]}]
)");
  EXPECT_EQ(scene.model.num_bodies(), 1);
  EXPECT_EQ(scene.model.nv(), 0);
  EXPECT_EQ(scene.model.frame(scene.model.frame_index("table")).body, 0);
  const geometry::Geometry& top = geometry_named(scene, "table/shape0");
  EXPECT_EQ(top.body, 0);
  // Pose of the shape = body pose * shape pose: (0.2, 0, 0) rotated 90° about z → (0, 0.2, 0).
  EXPECT_NEAR((top.X_BG.p - Vector3(1, 0.2, 0.5)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((top.X_BG.R * Vector3::UnitX() - Vector3::UnitY()).norm(), 0.0, 1e-12);
  const geometry::Geometry& leg = geometry_named(scene, "table/leg");
  EXPECT_NEAR((leg.X_BG.p - Vector3(1, 0, 0.25)).norm(), 0.0, 1e-12);
  EXPECT_EQ(leg.shape.type, geometry::ShapeType::kCylinder);
  const geometry::Geometry& floor = geometry_named(scene, "floor/shape0");
  EXPECT_EQ(floor.shape.type, geometry::ShapeType::kHalfSpace);
  EXPECT_NEAR((floor.X_BG.R * Vector3::UnitZ() - Vector3(0, 1, 1).normalized()).norm(), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(scene.model.total_mass(), 0.0);  // fixed bodies without a mass are massless
}

// contact_approximation and the Hunt–Crossley keys, at the top level and per body; defaults.
TEST(SceneLoaderTest, ContactApproximationAndHuntCrossleyKeys) {
  const Scene defaults = parse_scene("time_step: 0.01\n");
  EXPECT_EQ(defaults.contact.approximation, contact::ContactApproximation::kLagged);  // docs/contact.md, "Default parameters"
  EXPECT_DOUBLE_EQ(defaults.contact.hunt_crossley_dissipation, 10.0);
  EXPECT_DOUBLE_EQ(defaults.contact.stiction_tolerance, 1e-4);
  const Scene scene = parse_scene(R"(
contact_approximation: lagged
contact: {mu: 0.4, hunt_crossley_dissipation: 3.5, stiction_tolerance: 2.0e-4}
bodies:
  - name: a
    mass: 1
    shapes: [{type: sphere, radius: 0.05}]
    contact: {hunt_crossley_dissipation: 0, stiction_tolerance: 1.0e-3}
)");
  EXPECT_EQ(scene.contact.approximation, contact::ContactApproximation::kLagged);
  EXPECT_DOUBLE_EQ(scene.contact.hunt_crossley_dissipation, 3.5);
  EXPECT_DOUBLE_EQ(scene.contact.stiction_tolerance, 2e-4);
  const geometry::Geometry& a0 = geometry_named(scene, "a/shape0");
  EXPECT_DOUBLE_EQ(*a0.material.hunt_crossley_dissipation, 0.0);
  EXPECT_DOUBLE_EQ(*a0.material.stiction_tolerance, 1e-3);
  EXPECT_FALSE(a0.material.dissipation_time.has_value());
  EXPECT_EQ(parse_scene("contact_approximation: similar\n").contact.approximation,
            contact::ContactApproximation::kSimilar);
}

TEST(SceneLoaderTest, MaterialsFiltersAndColours) {
  const Scene scene = parse_scene(R"(
bodies:
  - name: a
    mass: 1
    shapes: [{type: capsule, radius: 0.05, length: 0.2}, {type: sphere, radius: 0.05, color: [0, 1, 0]}]
    contact: {mu: 0.2, stiffness: .inf, dissipation_time: 0.0}
    collision_group: 0x4
    collision_mask: 10
    color: [1, 0, 0, 0.5]
  - {name: b, mass: 1, shapes: [{type: convex_mesh, vertices: [[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]],
                                  triangles: [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]}]}
)");
  const geometry::Geometry& a0 = geometry_named(scene, "a/shape0");
  EXPECT_EQ(a0.shape.type, geometry::ShapeType::kCapsule);
  EXPECT_DOUBLE_EQ(*a0.material.mu, 0.2);
  EXPECT_EQ(*a0.material.stiffness, kInf);
  EXPECT_DOUBLE_EQ(*a0.material.dissipation_time, 0.0);
  EXPECT_EQ(a0.group, 4u);
  EXPECT_EQ(a0.mask, 10u);
  EXPECT_EQ(a0.robot, -1);
  EXPECT_EQ(a0.rgba, (std::array<double, 4>{1, 0, 0, 0.5}));
  EXPECT_EQ(geometry_named(scene, "a/shape1").rgba, (std::array<double, 4>{0, 1, 0, 1}));
  const geometry::Geometry& b0 = geometry_named(scene, "b/shape0");
  EXPECT_EQ(b0.group, 1u);
  EXPECT_EQ(b0.mask, 0xFFFFFFFFu);
  EXPECT_FALSE(b0.material.mu.has_value());
  EXPECT_EQ(b0.shape.type, geometry::ShapeType::kConvexMesh);
  EXPECT_EQ(b0.shape.vertices.size(), 4u);
  // Tetrahedron of volume 1/6000 m³ holding 1 kg: its COM is at the vertex average.
  EXPECT_NEAR((scene.model.body(scene.model.body_index("b")).inertia.com() - Vector3(0.025, 0.025, 0.025)).norm(), 0.0,
              1e-12);
}

TEST(SceneLoaderTest, ActuatorDefaultsAndOverrides) {
  const std::string yaml = R"(
robots:
  - urdf: )" + kQuadruped + R"(
    floating: true
    position: [0, 0, 0.4]
    joint_positions: {FR_calf_joint: -1.5, FL_calf_joint: -1.2}
    joint_velocities: {FR_calf_joint: 0.5}
    actuators:
      all: {kp: 50, kd: 1}
      FR_calf_joint: {kp: 100, effort_limit: 20}
      RL_hip_joint: {target: 0.1, velocity_target: 0.2}
      FL_calf_joint: {effort_limit: .inf}
)";
  const Scene scene = parse_scene(yaml);
  ASSERT_EQ(scene.actuators.size(), 12u);
  const Actuator* fr_calf = actuator_of(scene, "FR_calf_joint");
  ASSERT_NE(fr_calf, nullptr);
  EXPECT_DOUBLE_EQ(fr_calf->kp, 100);
  EXPECT_DOUBLE_EQ(fr_calf->kd, 1);              // from "all"
  EXPECT_DOUBLE_EQ(fr_calf->q_target, -1.5);     // the initial position
  EXPECT_DOUBLE_EQ(fr_calf->effort_limit, 20);
  EXPECT_DOUBLE_EQ(scene.v0[fr_calf->v_index], 0.5);
  const Actuator* rl_hip = actuator_of(scene, "RL_hip_joint");
  EXPECT_DOUBLE_EQ(rl_hip->kp, 50);
  EXPECT_DOUBLE_EQ(rl_hip->q_target, 0.1);
  EXPECT_DOUBLE_EQ(rl_hip->v_target, 0.2);
  EXPECT_DOUBLE_EQ(rl_hip->effort_limit, 33.5);  // the URDF's <limit effort>
  EXPECT_EQ(actuator_of(scene, "FL_calf_joint")->effort_limit, kInf);
  EXPECT_DOUBLE_EQ(actuator_of(scene, "FL_calf_joint")->q_target, -1.2);
  const Actuator* fl_thigh = actuator_of(scene, "FL_thigh_joint");
  EXPECT_DOUBLE_EQ(fl_thigh->kp, 50);
  EXPECT_DOUBLE_EQ(fl_thigh->kd, 1);
  EXPECT_DOUBLE_EQ(fl_thigh->q_target, 0.0);
  // The default calf positions (0) of RR and RL are outside the calf limits: warnings.
  int calf_warnings = 0;
  for (const std::string& w : scene.warnings)
    calf_warnings += w.find("_calf_joint' (default) is outside its limits") != std::string::npos;
  EXPECT_EQ(calf_warnings, 2);

  // Without "all", only the listed joints are actuated; kd defaults to 0.
  const Scene one = parse_scene(R"(
robots:
  - urdf: )" + kQuadruped + R"(
    actuators: {FR_hip_joint: {kp: 10}}
)");
  ASSERT_EQ(one.actuators.size(), 1u);
  EXPECT_EQ(one.actuators[0].joint, "FR_hip_joint");
  EXPECT_DOUBLE_EQ(one.actuators[0].kd, 0.0);
  EXPECT_DOUBLE_EQ(one.actuators[0].q_target, 0.0);
}

TEST(SceneLoaderTest, SeveralNamedRobotsShareOneModel) {
  const std::string yaml = R"(
bodies:
  - {name: ground, fixed: true, shapes: [{type: box, size: [4, 4, 0.2], position: [0, 0, -0.1]}]}
robots:
  - name: alpha
    urdf: )" + kQuadruped + R"(
    floating: true
    position: [0, 0, 0.4]
    self_collision: true
    joint_positions: {FR_thigh_joint: 0.7, alpha/FL_thigh_joint: 0.6}
    actuators: {FR_thigh_joint: {kp: 5}}
    collision_group: 2
  - name: beta
    urdf: )" + kQuadruped + R"(
    position: [1, 0, 0.4]
    rpy: [0, 0, 3.141592653589793]
    joint_positions: {FR_thigh_joint: 0.9}
    contact: {mu: 0.4}
    color: [0, 0, 1, 1]
)";
  const Scene scene = parse_scene(yaml, "robots.yaml");
  const multibody::Model& model = scene.model;
  EXPECT_EQ(model.nv(), 18 + 12);  // alpha floating, beta welded
  EXPECT_NEAR(model.total_mass(), 2 * 12.88, 1e-9);
  ASSERT_EQ(scene.robots.size(), 2u);
  EXPECT_EQ(scene.robots[0].name, "alpha");
  EXPECT_EQ(scene.robots[0].floating_joint, "alpha/root_joint");
  EXPECT_EQ(model.body(scene.robots[0].root_body).name, "alpha/trunk");
  EXPECT_EQ(scene.robots[1].root_body, 0);
  EXPECT_DOUBLE_EQ(joint_q(scene, "alpha/FR_thigh_joint"), 0.7);
  EXPECT_DOUBLE_EQ(joint_q(scene, "alpha/FL_thigh_joint"), 0.6);
  EXPECT_DOUBLE_EQ(joint_q(scene, "beta/FR_thigh_joint"), 0.9);
  ASSERT_EQ(scene.actuators.size(), 1u);
  EXPECT_EQ(scene.actuators[0].joint, "alpha/FR_thigh_joint");
  // beta's trunk is welded at its pose: a frame of the world body.
  const multibody::Frame& trunk = model.frame(model.frame_index("beta/trunk"));
  EXPECT_EQ(trunk.body, 0);
  EXPECT_NEAR((trunk.X_BF.p - Vector3(1, 0, 0.4)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((trunk.X_BF.R - rpy_by_hand(0, 0, M_PI)).norm(), 0.0, 1e-12);
  int alpha_geometries = 0, beta_geometries = 0;
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.robot == 0) {
      ++alpha_geometries;
      EXPECT_TRUE(g.self_collision);
      EXPECT_EQ(g.group, 2u);
      EXPECT_EQ(g.name.rfind("alpha/", 0), 0u) << g.name;
    } else if (g.robot == 1) {
      ++beta_geometries;
      EXPECT_FALSE(g.self_collision);
      EXPECT_DOUBLE_EQ(*g.material.mu, 0.4);
      EXPECT_EQ(g.rgba, (std::array<double, 4>{0, 0, 1, 1}));
    }
  }
  EXPECT_EQ(alpha_geometries, 17);
  EXPECT_EQ(beta_geometries, 17);
  // URDF colours are kept when the robot has no colour of its own.
  const std::array<double, 4> hip_rgba = geometry_named(scene, "alpha/FR_hip/collision0").rgba;
  const std::array<double, 4> urdf_rgba = {0.9, 0.45, 0.1, 1};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(hip_rgba[k], urdf_rgba[k], 1e-7);  // urdfdom keeps floats
  // The welded trunk's box sits at the robot's pose in the world body.
  const geometry::Geometry& beta_trunk = geometry_named(scene, "beta/trunk/collision0");
  EXPECT_EQ(beta_trunk.body, 0);
  EXPECT_NEAR((beta_trunk.X_BG.p - Vector3(1, 0, 0.4)).norm(), 0.0, 1e-15);

  // Unnamed robots: the first keeps the URDF names, later ones are named by their index.
  const Scene unnamed = parse_scene("robots:\n  - {urdf: " + kQuadruped + "}\n  - {urdf: " + kQuadruped +
                                    ", position: [1, 0, 0]}\n");
  EXPECT_EQ(unnamed.robots[0].name, "");
  EXPECT_EQ(unnamed.robots[1].name, "robot1");
  EXPECT_GE(unnamed.model.joint_body("FR_hip_joint"), 1);
  EXPECT_GE(unnamed.model.joint_body("robot1/FR_hip_joint"), 1);
}

TEST(SceneLoaderTest, WorldRootedUrdfIsMovedByTheRobotPose) {
  const Scene scene = parse_scene(R"(
robots:
  - urdf: )" + kModelsDir + R"(spring_cylinder.urdf
    position: [0, 2, 0]
)");
  // The joints hanging from the world move with the pose: the cylinder's frame at q = 0.
  multibody::Workspace ws(scene.model);
  multibody::forward_kinematics(scene.model, ws, scene.q0);
  EXPECT_NEAR((ws.X_WB[scene.model.body_index("cylinder")].p - Vector3(0, 2, 0)).norm(), 0.0, 1e-15);
}

TEST(SceneLoaderTest, ModelPathsResolveAlongCoulombModelPath) {
  const fs::path dir = fs::temp_directory_path() / ("coulomb_scene_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path scene_file = dir / "robot.yaml";
  std::ofstream(scene_file) << "robots:\n  - urdf: coulomb_quadruped.urdf\n    floating: true\n";
  const fs::path package_file = dir / "package.yaml";
  std::ofstream(package_file) << "robots:\n  - urdf: package://models/coulomb_quadruped.urdf\n";

  unsetenv("COULOMB_MODEL_PATH");
  EXPECT_THROW(load_scene(scene_file.string()), SceneError);  // not next to the scene file
  EXPECT_THROW(load_scene(package_file.string()), SceneError);

  const std::string search = "/nonexistent:" + kModelsDir;
  setenv("COULOMB_MODEL_PATH", search.c_str(), 1);
  const Scene scene = load_scene(scene_file.string());
  EXPECT_EQ(scene.model.nv(), 18);
  EXPECT_TRUE(fs::equivalent(scene.robots[0].urdf_path, kQuadruped));

  // package://PKG/REST is looked for as DIR/PKG/REST along the search path.
  const std::string examples = kSource + "/examples";
  setenv("COULOMB_MODEL_PATH", examples.c_str(), 1);
  const Scene from_package = load_scene(package_file.string());
  EXPECT_TRUE(fs::equivalent(from_package.robots[0].urdf_path, kQuadruped));
  EXPECT_EQ(from_package.model.nv(), 12);
  unsetenv("COULOMB_MODEL_PATH");

  // Relative to the scene file first: a copy next to it wins.
  fs::copy_file(kQuadruped, dir / "coulomb_quadruped.urdf");
  EXPECT_TRUE(fs::equivalent(load_scene(scene_file.string()).robots[0].urdf_path, dir / "coulomb_quadruped.urdf"));
  fs::remove_all(dir);
}

TEST(SceneLoaderTest, WorkedExampleOfTheDocsLoads) {
  // The YAML block after "## A worked example" in docs/scene-format.md, with paths relative
  // to examples/scenes.
  const std::string doc = read_text(kSource + "/docs/scene-format.md");
  const size_t section = doc.find("## A worked example");
  ASSERT_NE(section, std::string::npos);
  const size_t begin = doc.find("```yaml\n", section);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```", begin + 8);
  const std::string yaml = doc.substr(begin + 8, end - begin - 8);
  const Scene scene = parse_scene(yaml, "worked_example.yaml", kScenes);
  EXPECT_EQ(scene.model.nv(), 48);
  EXPECT_EQ(scene.robots.size(), 2u);
  EXPECT_EQ(scene.actuators.size(), 12u);
  EXPECT_DOUBLE_EQ(actuator_of(scene, "a/FR_calf_joint")->kp, 120.0);
  EXPECT_DOUBLE_EQ(actuator_of(scene, "a/FR_calf_joint")->effort_limit, 25.0);
  EXPECT_DOUBLE_EQ(actuator_of(scene, "a/FL_calf_joint")->effort_limit, 33.5);
  EXPECT_EQ(scene.model.frame(scene.model.frame_index("ice")).body, 0);
}

// ---------------------------------------------------------------------------------------
// add_urdf: several URDFs in one builder

TEST(UrdfAttachTest, PrefixesPosesAndCollisions) {
  multibody::ModelBuilder builder("two");
  UrdfAttachOptions first;
  first.prefix = "left/";
  first.floating = true;
  first.floating_joint_name = "left/base";
  const UrdfAttachment a = add_urdf(builder, kQuadruped, first);
  UrdfAttachOptions second;
  second.prefix = "right/";
  second.X_W_root = math::Transform(rpy_by_hand(0, 0, 0.5), Vector3(1, 2, 3));
  const UrdfAttachment b = add_urdf(builder, kQuadruped, second);
  EXPECT_EQ(a.robot_name, "coulomb_quadruped");
  EXPECT_EQ(a.root_link, "left/trunk");
  EXPECT_EQ(a.floating_joint, "left/base");
  EXPECT_EQ(b.floating_joint, "");
  EXPECT_EQ(a.joints.size(), 16u);  // 12 revolute + 4 fixed feet
  EXPECT_EQ(a.joints.front(), "left/FR_hip_joint");
  EXPECT_EQ(a.collisions.size(), 17u);
  EXPECT_EQ(a.collisions.front().link, "left/trunk");
  EXPECT_EQ(b.colors.front().link, "right/trunk");
  const multibody::Model model = builder.build();
  EXPECT_EQ(model.nv(), 18 + 12);
  EXPECT_GE(model.joint_body("left/base"), 1);
  const multibody::Frame& trunk = model.frame(model.frame_index("right/trunk"));
  EXPECT_EQ(trunk.body, 0);
  EXPECT_NEAR((trunk.X_BF.p - Vector3(1, 2, 3)).norm(), 0.0, 1e-15);

  // Adding the same URDF twice without prefixes is an error naming the file and the link.
  multibody::ModelBuilder clash("clash");
  add_urdf(clash, kQuadruped);
  try {
    add_urdf(clash, kQuadruped);
    ADD_FAILURE();
  } catch (const UrdfError& e) {
    EXPECT_NE(std::string(e.what()).find("coulomb_quadruped.urdf:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("link name 'trunk' is already in the model"), std::string::npos) << e.what();
  }
}

TEST(UrdfAttachTest, ResolveModelFile) {
  unsetenv("COULOMB_MODEL_PATH");
  EXPECT_TRUE(fs::equivalent(resolve_model_file("coulomb_quadruped.urdf", kModelsDir), kQuadruped));
  EXPECT_TRUE(fs::equivalent(resolve_model_file(kQuadruped, "/"), kQuadruped));
  EXPECT_TRUE(fs::equivalent(resolve_model_file("file://" + kQuadruped, "/"), kQuadruped));
  EXPECT_EQ(resolve_model_file("no_such.urdf", kModelsDir), "");
  EXPECT_EQ(resolve_model_file("coulomb_quadruped.urdf", "/"), "");
}

}  // namespace
}  // namespace coulomb::io
