// Placing robots (issue 10): lowest points of every shape, the ground below a point,
// robots[].place_on_ground against forward kinematics of the A1's feet, and rpy_from_rotation.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "coulomb/geometry/shape.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody.h"
#include "coulomb/scene/placement.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::scene {
namespace {

using geometry::Shape;
using math::Matrix3;
using math::Transform;
using math::Vector3;

void expect_near(const Vector3& a, const Vector3& b, double tol) {
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), tol) << a.transpose() << " vs " << b.transpose();
}

// Lowest points against hand computation: rotated 0.3 rad about x, at (0.5, −1, 2).
TEST(PlacementTest, LowestPointPerShape) {
  const double c = std::cos(0.3), s = std::sin(0.3);
  const Transform X(math::rotation_from_rpy(0.3, 0, 0), Vector3(0.5, -1.0, 2.0));
  expect_near(geometry::lowest_point(Shape::Sphere(0.25), X), Vector3(0.5, -1.0, 1.75), 1e-15);
  // Box (1, 0.4, 0.2): the lowest vertex has y_G = +0.2 (z_W = y_G sin + z_G cos), z_G = −0.1;
  // x is a tie (horizontal edge): its middle.
  expect_near(geometry::lowest_point(Shape::Box(Vector3(1.0, 0.4, 0.2)), X),
              X.act(Vector3(0.0, -0.2, -0.1)), 1e-15);
  EXPECT_NEAR(geometry::lowest_height(Shape::Box(Vector3(1.0, 0.4, 0.2)), X), 2.0 - 0.2 * s - 0.1 * c, 1e-15);
  // Capsule: the lower end of the axis, then r straight down. Cylinder: the lower disc's rim.
  expect_near(geometry::lowest_point(Shape::Capsule(0.1, 0.6), X), X.act(Vector3(0, 0, -0.3)) - Vector3(0, 0, 0.1), 1e-15);
  expect_near(geometry::lowest_point(Shape::Cylinder(0.1, 0.6), X), X.act(Vector3(0, -0.1, -0.3)), 1e-15);
  EXPECT_NEAR(geometry::lowest_height(Shape::Cylinder(0.1, 0.6), X), 2.0 - 0.3 * c - 0.1 * s, 1e-15);
  // An upright cylinder: the centre of its bottom face.
  expect_near(geometry::lowest_point(Shape::Cylinder(0.1, 0.6), Transform(Matrix3::Identity(), Vector3(1, 2, 3))),
              Vector3(1, 2, 2.7), 1e-15);
}

// The ground below a point: a tilted half-space's plane height, a rotated box's top face (the
// exit of the vertical line), misses, and walls.
TEST(PlacementTest, TopBelow) {
  const double a = 0.2;  // half-space tilted about y: normal (sin a, 0, cos a) through (0, 0, 1)
  const Transform X_plane(math::rotation_from_rpy(0, a, 0), Vector3(0, 0, 1));
  EXPECT_NEAR(*geometry::top_below(Shape::HalfSpace(), X_plane, 2.0, 5.0), 1.0 - 2.0 * std::tan(a), 1e-14);
  const Transform X_wall(math::rotation_from_rpy(0, std::numbers::pi / 2, 0), Vector3::Zero());
  EXPECT_FALSE(geometry::top_below(Shape::HalfSpace(), X_wall, 0.0, 0.0));
  // A 2 × 2 × 0.2 box centred at z = −0.1, yawed 45°: top at 0 inside, nothing outside.
  const Transform X_box(math::rotation_from_rpy(0, 0, std::numbers::pi / 4), Vector3(0, 0, -0.1));
  EXPECT_NEAR(*geometry::top_below(Shape::Box(Vector3(2, 2, 0.2)), X_box, 1.3, 0.0), 0.0, 1e-15);  // inside the diamond
  EXPECT_FALSE(geometry::top_below(Shape::Box(Vector3(2, 2, 0.2)), X_box, 1.3, 0.3));               // outside it
  // The same box rolled by 0.1 rad: the top along the line x = 0, y = 0.5 is at 0.1 tan-free
  // geometry: z = −0.1 + (0.1 − 0.5 s)/c in the box frame's top plane.
  const double r = 0.1;
  const Transform X_rolled(math::rotation_from_rpy(r, 0, 0), Vector3(0, 0, -0.1));
  EXPECT_NEAR(*geometry::top_below(Shape::Box(Vector3(2, 2, 0.2)), X_rolled, 0.0, 0.5),
              -0.1 + (0.1 + 0.5 * std::sin(r)) / std::cos(r), 1e-14);
  EXPECT_FALSE(geometry::top_below(Shape::Sphere(1.0), Transform(), 0.0, 0.0));
}

TEST(PlacementTest, RpyFromRotationRoundTrips) {
  for (double roll : {-3.0, -0.4, 0.0, 0.7, 3.1})
    for (double pitch : {-1.5, -0.3, 0.0, 0.9, 1.5})
      for (double yaw : {-2.9, 0.0, 1.2}) {
        const Vector3 rpy = math::rpy_from_rotation(math::rotation_from_rpy(roll, pitch, yaw));
        expect_near(rpy, Vector3(roll, pitch, yaw), 1e-12);
      }
  // Gimbal lock: the rotation is reproduced.
  const Matrix3 R = math::rotation_from_rpy(0.4, std::numbers::pi / 2, -0.3);
  const Vector3 rpy = math::rpy_from_rotation(R);
  EXPECT_LE((math::rotation_from_rpy(rpy.x(), rpy.y(), rpy.z()) - R).norm(), 1e-12);
}

// robots[].place_on_ground: the A1 given 0.7 m up and a yaw lands with its lowest foot sphere
// exactly on a box ground whose top is at z = 0.05 (forward kinematics of the feet), and
// standing under PD from there it settles by less than a centimetre (no drop, no launch).
TEST(PlacementTest, PlaceOnGroundPutsTheLowestFootOnTheGround) {
  const std::string a1 = std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf";
  const std::string yaml =
      "time_step: 0.001\nbodies:\n"
      "  - {name: ground, fixed: true, shapes: [{type: box, size: [4, 4, 0.1], position: [0, 0, 0]}]}\n"
      "robots:\n  - urdf: " + a1 + "\n    floating: true\n    position: [0.1, 0.2, 0.7]\n    rpy: [0, 0, 0.3]\n"
      "    place_on_ground: true\n"
      "    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: 0.8, RL_thigh_joint: 0.8,\n"
      "                      FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: -1.5, RL_calf_joint: -1.5}\n"
      "    actuators: {all: {kp: 80, kd: 2}}\n";
  const io::Scene scene = io::parse_scene(yaml, "placed.yaml");
  multibody::Workspace ws(scene.model);
  multibody::forward_kinematics(scene.model, ws, scene.q0);
  double lowest = INFINITY;
  for (const char* foot : {"FR_foot", "FL_foot", "RR_foot", "RL_foot"}) {
    const multibody::Frame& f = scene.model.frame(scene.model.frame_index(foot));
    lowest = std::min(lowest, (ws.X_WB[f.body] * f.X_BF).p.z() - 0.02);  // foot spheres: r = 0.02 m
  }
  EXPECT_NEAR(lowest, 0.05, 1e-12);
  EXPECT_NEAR(scene.q0[0], 0.1, 0.0);  // x, y untouched
  EXPECT_NEAR(scene.q0[1], 0.2, 0.0);
  simulation::SimulatorParameters params;
  params.time_step = scene.time_step;
  simulation::Simulator sim(scene, params);
  const double z0 = sim.q()[2];
  double max_dz = 0.0;
  for (int k = 0; k < 500; ++k) {
    sim.step();
    max_dz = std::max(max_dz, std::abs(sim.q()[2] - z0));
  }
  std::printf("[ measured ] A1 placed on the ground: base moves at most %.4f m in 0.5 s\n", max_dz);
  EXPECT_LT(max_dz, 0.01);
  EXPECT_TRUE(sim.warnings().empty());
}

TEST(PlacementTest, PlaceOnGroundErrors) {
  const std::string a1 = std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf";
  const std::string ground = "bodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n";
  auto error_of = [](const std::string& yaml) {
    try {
      io::parse_scene(yaml, "bad.yaml");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e = error_of(ground + "robots:\n  - {urdf: " + a1 + ", place_on_ground: true}\n");
  EXPECT_NE(e.find("place_on_ground"), std::string::npos) << e;
  EXPECT_NE(e.find("only a floating robot"), std::string::npos) << e;
  e = error_of(ground + "robots:\n  - {urdf: " + a1 + ", floating: true, place_on_ground: 3}\n");
  EXPECT_NE(e.find("place_on_ground"), std::string::npos) << e;
  e = error_of("robots:\n  - {urdf: " + a1 + ", floating: true, place_on_ground: true}\n");  // no ground
  EXPECT_NE(e.find("no static geometry"), std::string::npos) << e;
  e = error_of(ground + "robots:\n  - {urdf: " + std::string(COULOMB_SHARED_DIR) +
               "/models/kuka_iiwa_robot.urdf, floating: true, place_on_ground: true}\n");
  EXPECT_NE(e.find("no collision geometry"), std::string::npos) << e;
}

}  // namespace
}  // namespace coulomb::scene
