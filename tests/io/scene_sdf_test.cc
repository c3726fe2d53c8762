// Scenes with SDFormat robots (`robots: [{sdf: ...}]`) and io::load_sdf_scene.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody.h"
#include "coulomb/simulation/simulator.h"
#include "io/io_test_util.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Vector3;

const std::string kExampleScene = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/sdf_playground.yaml";
const std::string kSdfData = std::string(COULOMB_TEST_DATA_DIR) + "/sdf";

class ScopedModelPath {
 public:
  explicit ScopedModelPath(const std::string& value) {
    if (const char* old = std::getenv("COULOMB_MODEL_PATH")) {
      had_ = true;
      old_ = old;
    }
    setenv("COULOMB_MODEL_PATH", value.c_str(), 1);
  }
  ~ScopedModelPath() {
    if (had_)
      setenv("COULOMB_MODEL_PATH", old_.c_str(), 1);
    else
      unsetenv("COULOMB_MODEL_PATH");
  }

 private:
  bool had_ = false;
  std::string old_;
};

int count_shapes(const Scene& scene, geometry::ShapeType type) {
  int n = 0;
  for (const geometry::Geometry& g : scene.geometries) n += g.shape.type == type;
  return n;
}

TEST(SceneSdfTest, ExamplePlaygroundLoads) {
  const Scene scene = load_scene(kExampleScene);
  const multibody::Model& model = scene.model;
  // One robot per model of the world (so that the models collide with each other).
  ASSERT_EQ(scene.robots.size(), 3u);
  EXPECT_EQ(scene.robots[0].name, "ground");
  EXPECT_FALSE(scene.robots[0].floating);
  EXPECT_EQ(scene.robots[1].name, "cartpole");
  EXPECT_FALSE(scene.robots[1].floating);
  EXPECT_EQ(scene.robots[1].root_link, "world");
  EXPECT_EQ(scene.robots[1].joints, (std::vector<std::string>{"cartpole/slider", "cartpole/hinge"}));
  EXPECT_EQ(scene.robots[2].robot_name, "tumbler");
  EXPECT_TRUE(scene.robots[2].floating);
  EXPECT_EQ(scene.robots[2].floating_joint, "tumbler/root_joint");
  EXPECT_EQ(scene.robots[2].root_link, "tumbler/block");
  EXPECT_EQ(scene.robots[2].root_body, model.joint_body("tumbler/root_joint"));
  // Cart-pole (slider + hinge) and the free tumbler (its handle welded to the block).
  EXPECT_EQ(model.nv(), 2 + 6);
  const multibody::Joint& hinge = model.body(model.joint_body("cartpole/hinge")).joint;
  const multibody::Joint& slider = model.body(model.joint_body("cartpole/slider")).joint;
  EXPECT_EQ(scene.q0[hinge.q_index], 0.6);
  EXPECT_EQ(slider.type, multibody::JointType::kPrismatic);
  EXPECT_EQ(slider.limits.lower, -1.0);
  EXPECT_EQ(slider.damping, 0.5);
  // The rail frame is 1 m above the model origin (0, 1, 0): the slider's joint frame.
  EXPECT_LE((slider.X_PJ.p - Vector3(0, 1, 1)).norm(), 1e-15);
  // The pole pivots at the cart (its frame 0.5 m below): a body at the joint frame.
  EXPECT_EQ(model.body(model.joint_body("cartpole/hinge")).name, "cartpole/pole::hinge");
  EXPECT_LE((model.frame(model.frame_index("cartpole/pole")).X_BF.p - Vector3(0, 0, -0.5)).norm(), 1e-15);
  // The tumbler starts at its <pose> 0 0 0.6 0.4 0.3 0 (R = Rz(0) Ry(0.3) Rx(0.4)).
  const multibody::Joint& base = model.body(model.joint_body("tumbler/root_joint")).joint;
  EXPECT_LE((scene.q0.segment<3>(base.q_index) - Vector3(0, 0, 0.6)).norm(), 1e-15);
  const math::Quaternion quat(scene.q0[base.q_index + 3], scene.q0[base.q_index + 4], scene.q0[base.q_index + 5],
                              scene.q0[base.q_index + 6]);
  EXPECT_LE((quat.toRotationMatrix() - testing::rpy_by_hand(0.4, 0.3, 0.0)).cwiseAbs().maxCoeff(), 1e-15);
  // Geometry: the ground plane on the world body, box + capsule of the tumbler, the pole's sphere.
  EXPECT_EQ(count_shapes(scene, geometry::ShapeType::kHalfSpace), 1);
  EXPECT_EQ(count_shapes(scene, geometry::ShapeType::kBox), 1);
  EXPECT_EQ(count_shapes(scene, geometry::ShapeType::kCapsule), 1);
  EXPECT_EQ(count_shapes(scene, geometry::ShapeType::kSphere), 1);
  for (const geometry::Geometry& g : scene.geometries)
    if (g.shape.type == geometry::ShapeType::kHalfSpace) { EXPECT_EQ(g.body, 0); }
  EXPECT_EQ(model.total_mass(), 2 + 0.5 + 1 + 0.2);  // the static ground's links weigh nothing
}

TEST(SceneSdfTest, ExamplePlaygroundSimulates) {
  Scene scene = load_scene(kExampleScene);
  const multibody::Model& model = scene.model;
  const multibody::Joint& base = model.body(model.joint_body("tumbler/root_joint")).joint;
  const double z0 = scene.q0[base.q_index + 2];
  const double dt = scene.time_step;
  simulation::SimulatorParameters p;
  p.time_step = dt;
  simulation::Simulator sim(std::move(scene), p);
  // Free fall until the lowest corner (≈ 0.17 m below the centre) nears the ground (t ≈ 0.28 s):
  // implicit Euler gives v_n = −g n δt and z_n = z₀ − g δt² n (n + 1) / 2 exactly.
  const double g = 9.81;
  for (int n = 1; n <= 40; ++n) {
    sim.step();
    EXPECT_NEAR(sim.q()[base.q_index + 2], z0 - g * dt * dt * n * (n + 1) / 2.0, 1e-9) << "step " << n;
  }
  // Then it lands and tumbles, and stays above the ground; nothing fails.
  while (sim.time() < 1.0 - 1e-9) {
    sim.step();
    ASSERT_TRUE(sim.q().allFinite());
  }
  EXPECT_GT(sim.q()[base.q_index + 2], 0.05);
  EXPECT_LT(sim.q()[base.q_index + 2], 0.3);
}

TEST(SceneSdfTest, FloatingWeldedPoseAndPrefix) {
  const std::string bot = kSdfData + "/models/box_bot/model.sdf";
  {
    const Scene scene = parse_scene("robots:\n  - {name: a, sdf: '" + bot +
                                    "', floating: false, position: [1, 2, 3], joint_positions: {spin: 0.25}}\n");
    const multibody::Model& model = scene.model;
    EXPECT_EQ(model.nv(), 1);
    const multibody::Frame& chassis = model.frame(model.frame_index("a/chassis"));
    EXPECT_EQ(chassis.body, 0);
    // The scene's position moves the file's frame; the model's <pose> 0 0 0.5 stays within it.
    EXPECT_LE((chassis.X_BF.p - Vector3(1, 2, 3.5)).norm(), 1e-15);
    EXPECT_EQ(scene.q0[model.body(model.joint_body("a/spin")).joint.q_index], 0.25);
    EXPECT_FALSE(scene.robots[0].floating);
  }
  {
    const Scene scene = parse_scene("robots:\n  - {sdf: '" + bot + "', linear_velocity: [0, 0, 2]}\n");
    const multibody::Model& model = scene.model;
    EXPECT_EQ(model.nv(), 7);  // as the file says: a free model
    const multibody::Joint& base = model.body(model.joint_body("root_joint")).joint;
    EXPECT_EQ(scene.q0[base.q_index + 2], 0.5);
    EXPECT_EQ(scene.v0[base.v_index + 5], 2.0);
    EXPECT_TRUE(scene.robots[0].floating);
  }
  // A welded robot has no base velocity.
  try {
    parse_scene("robots:\n  - {sdf: '" + bot + "', floating: false, linear_velocity: [0, 0, 2]}\n", "s.yaml");
    FAIL() << "expected SceneError";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find("robots[0].linear_velocity"), std::string::npos) << e.what();
  }
}

TEST(SceneSdfTest, BallJointInitialState) {
  const std::string file = kSdfData + "/ball_pendulum.sdf";
  const Scene scene = parse_scene("robots:\n  - sdf: '" + file +
                                  "'\n    joint_positions: {pivot: [2, 0, 0, 2]}\n    joint_velocities: {pivot: [0.1, 0.2, 0.3]}\n");
  const multibody::Joint& j = scene.model.body(scene.model.joint_body("pivot")).joint;
  // The quaternion is normalized: [2, 0, 0, 2] / √8 (90° about z).
  EXPECT_NEAR(scene.q0[j.q_index], std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(scene.q0[j.q_index + 3], std::sqrt(0.5), 1e-15);
  EXPECT_EQ(scene.v0.segment<3>(j.v_index), Vector3(0.1, 0.2, 0.3));
  try {
    parse_scene("robots:\n  - sdf: '" + file + "'\n    joint_positions: {pivot: 0.3}\n", "s.yaml");
    FAIL() << "expected SceneError";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:3: robots[0].joint_positions.pivot: expected a list of 4 numbers"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_scene("robots:\n  - sdf: '" + file + "'\n    joint_positions: {pivot: [0, 0, 0, 0]}\n", "s.yaml");
    FAIL() << "expected SceneError";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find("is zero"), std::string::npos) << e.what();
  }
}

TEST(SceneSdfTest, SdfErrorsAreWrappedWithTheirFileAndLine) {
  const std::string bad = std::string(COULOMB_TEST_DATA_DIR) + "/bad_sdf/negative_mass.sdf";
  try {
    parse_scene("robots:\n  - sdf: '" + bad + "'\n", "scene.yaml");
    FAIL() << "expected SceneError";
  } catch (const SceneError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("scene.yaml:2: robots[0].sdf: " + bad + ":8:", 0), 0u) << msg;
    EXPECT_NE(msg.find("-2.5"), std::string::npos) << msg;
  }
  try {
    parse_scene("robots:\n  - {sdf: no_such_world.sdf}\n", "scene.yaml");
    FAIL() << "expected SceneError";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find("SDF file 'no_such_world.sdf' not found"), std::string::npos) << e.what();
  }
}

TEST(SceneSdfTest, LoadSdfSceneAddsAGroundOnlyWithoutAPlane) {
  const ScopedModelPath path(kSdfData + "/models");
  {
    const Scene scene = load_sdf_scene(kSdfData + "/models/box_bot/model.sdf");
    EXPECT_EQ(count_shapes(scene, geometry::ShapeType::kHalfSpace), 1);  // the added ground
    EXPECT_EQ(scene.model.nv(), 7);
    simulation::Simulator sim(scene, simulation::SimulatorParameters{});
    for (int n = 0; n < 20; ++n) sim.step();
    EXPECT_TRUE(sim.q().allFinite());
  }
  {
    const Scene scene = load_sdf_scene(kSdfData + "/worlds/two_models.sdf");
    EXPECT_EQ(count_shapes(scene, geometry::ShapeType::kHalfSpace), 1);  // the world's own plane
    EXPECT_EQ(scene.model.gravity(), Vector3(0, 0, -9.8));
    EXPECT_EQ(scene.model.nv(), 15);
  }
  EXPECT_THROW(load_sdf_scene(std::string(COULOMB_TEST_DATA_DIR) + "/bad_sdf/kinematic_loop.sdf"), SceneError);
}

}  // namespace
}  // namespace coulomb::io
