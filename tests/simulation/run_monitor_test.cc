// Failing loudly (issue 10): the warnings a run raises instead of passing silently — a body
// without collision geometry, an initial overlap deeper than 5 mm, a body that fell through
// the ground or left the scene — each once, at the time free fall or ballistics predicts; and
// none on clean scenes. lowest_height per shape against hand computations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

int count_containing(const std::vector<std::string>& warnings, const std::string& text) {
  int n = 0;
  for (const std::string& w : warnings) n += w.find(text) != std::string::npos ? 1 : 0;
  return n;
}

std::string all(const std::vector<std::string>& warnings) {
  std::string s;
  for (const std::string& w : warnings) s += w + "\n";
  return s;
}

SimulatorParameters params_for(const scene::Scene& scene) {
  SimulatorParameters p;
  p.time_step = scene.time_step;
  return p;
}

const char* kGround = "  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n";

// A body with mass and inertia but no shapes falls through the ground: one warning at
// construction, one when its origin passes 1 m below the ground — at t = √(2 (z₀ + 1)/g)
// within a step — and no more after that.
TEST(RunMonitorTest, BodyWithoutGeometryFallsThroughOnceAtTheFreeFallTime) {
  const std::string yaml = std::string("time_step: 0.001\nbodies:\n") + kGround +
                           "  - {name: ghost, mass: 1.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [0, 0, 0.5]}\n";
  const scene::Scene scene = io::parse_scene(yaml, "ghost.yaml");
  Simulator sim(scene, params_for(scene));
  ASSERT_EQ(sim.warnings().size(), 1u) << all(sim.warnings());
  EXPECT_EQ(count_containing(sim.warnings(), "body 'ghost' has no collision geometry"), 1);
  const double t_fall = std::sqrt(2.0 * (0.5 + 1.0) / 9.81);
  while (sim.time() < t_fall - 0.01) sim.step();
  EXPECT_EQ(sim.warnings().size(), 1u) << all(sim.warnings());
  while (sim.time() < t_fall + 0.01) sim.step();
  ASSERT_EQ(sim.warnings().size(), 2u) << all(sim.warnings());
  const std::string& w = sim.warnings()[1];
  EXPECT_NE(w.find("body 'ghost' fell off or through the static geometry"), std::string::npos) << w;
  // The check runs at the start of each step on q₀: the reported time is within two steps of
  // the analytic crossing (implicit Euler's position lags free fall by g t δt / 2 ≈ 0.5 mm).
  const double t_reported = std::stod(w.substr(w.find("t = ") + 4));
  EXPECT_NEAR(t_reported, t_fall, 2e-3) << w;
  for (int k = 0; k < 500; ++k) sim.step();
  EXPECT_EQ(sim.warnings().size(), 2u) << all(sim.warnings());
}

// A robot with no collision geometry (the KUKA URDF without <collision>, welded) is reported by
// name and file; the same robot inside a scene that gives it shapes is not.
TEST(RunMonitorTest, RobotWithoutCollisionGeometry) {
  const std::string urdf = std::string(COULOMB_SHARED_DIR) + "/models/kuka_iiwa_robot.urdf";
  const scene::Scene scene = io::parse_scene("robots:\n  - {name: arm, urdf: " + urdf + "}\n", "arm.yaml");
  Simulator sim(scene, params_for(scene));
  EXPECT_EQ(count_containing(sim.warnings(), "robot 'arm'"), 1) << all(sim.warnings());
  EXPECT_EQ(count_containing(sim.warnings(), "kuka_iiwa_robot.urdf"), 1) << all(sim.warnings());
  EXPECT_EQ(count_containing(sim.warnings(), "no collision geometry"), 1) << all(sim.warnings());
}

// Initial overlap: 10 mm deep → one warning naming both geometries and the depth; 3 mm → none.
TEST(RunMonitorTest, InitialOverlapDeeperThanFiveMillimetres) {
  for (double depth : {0.010, 0.003}) {
    const std::string yaml = std::string("time_step: 0.001\nbodies:\n") + kGround +
                             "  - {name: crate, mass: 1.0, shapes: [{type: box, size: [0.2, 0.2, 0.2]}], position: [0, 0, " +
                             std::to_string(0.1 - depth) + "]}\n";
    const scene::Scene scene = io::parse_scene(yaml, "overlap.yaml");
    Simulator sim(scene, params_for(scene));
    EXPECT_TRUE(sim.warnings().empty()) << all(sim.warnings());
    sim.step();
    sim.step();
    if (depth > 0.005) {
      ASSERT_EQ(sim.warnings().size(), 1u) << all(sim.warnings());
      const std::string& w = sim.warnings()[0];
      EXPECT_NE(w.find("initial overlap of 10 mm"), std::string::npos) << w;
      EXPECT_NE(w.find("'crate/shape0' (body 'crate')"), std::string::npos) << w;
      EXPECT_NE(w.find("'ground/shape0'"), std::string::npos) << w;
      EXPECT_NE(w.find("4 contacts"), std::string::npos) << w;  // the four bottom corners
    } else {
      EXPECT_TRUE(sim.warnings().empty()) << all(sim.warnings());
    }
  }
}

// A ball thrown sideways at 100 m/s without gravity leaves the scene's bounds (its start, grown
// by 100 m) between t = 1.0 and 1.0 + 2 δt; a fall warning is not raised (it does not fall).
TEST(RunMonitorTest, BodyLeavingTheSceneBounds) {
  const std::string yaml = std::string("time_step: 0.01\ngravity: [0, 0, 0]\nbodies:\n") + kGround +
                           "  - {name: ball, mass: 1.0, shapes: [{type: sphere, radius: 0.1}], position: [0, 0, 1],"
                           " linear_velocity: [100, 0, 0]}\n";
  const scene::Scene scene = io::parse_scene(yaml, "throw.yaml");
  Simulator sim(scene, params_for(scene));
  while (sim.time() < 0.99) sim.step();
  EXPECT_TRUE(sim.warnings().empty()) << all(sim.warnings());
  while (sim.time() < 1.2) sim.step();
  ASSERT_EQ(sim.warnings().size(), 1u) << all(sim.warnings());
  const std::string& w = sim.warnings()[0];
  EXPECT_NE(w.find("body 'ball' left the scene"), std::string::npos) << w;
  const double t_reported = std::stod(w.substr(w.find("t = ") + 4));
  EXPECT_GT(t_reported, 1.0);
  EXPECT_LE(t_reported, 1.0 + 0.021);
}

// Clean scenes stay silent: the A1 standing and the clutter pile, 1 s each.
TEST(RunMonitorTest, CleanScenesRaiseNoWarning) {
  for (const char* name : {"a1_stand.yaml", "clutter.yaml"}) {
    const scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/" + name);
    Simulator sim(scene, params_for(scene));
    while (sim.time() < 1.0) sim.step();
    EXPECT_TRUE(sim.warnings().empty()) << name << ": " << all(sim.warnings());
  }
}

// Monitoring can be switched off.
TEST(RunMonitorTest, Disabled) {
  const std::string yaml = std::string("bodies:\n") + kGround +
                           "  - {name: ghost, mass: 1.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [0, 0, -5]}\n";
  const scene::Scene scene = io::parse_scene(yaml, "ghost.yaml");
  SimulatorParameters p = params_for(scene);
  p.monitor.enabled = false;
  Simulator sim(scene, p);
  sim.step();
  EXPECT_TRUE(sim.warnings().empty());
}

// lowest_height against hand computations, rotated poses included.
TEST(RunMonitorTest, LowestHeightPerShape) {
  using geometry::Shape;
  const double c = std::cos(0.3), s = std::sin(0.3);
  math::Transform X;  // rotated 0.3 rad about x, at height 2
  X.R << 1, 0, 0, 0, c, -s, 0, s, c;
  X.p = math::Vector3(0.5, -1.0, 2.0);
  EXPECT_DOUBLE_EQ(geometry::lowest_height(Shape::Sphere(0.25), X), 1.75);
  // Box (a, b, h) rotated about x: lowest vertex at 2 − (b/2 |sin| + h/2 cos).
  EXPECT_NEAR(geometry::lowest_height(Shape::Box(math::Vector3(1.0, 0.4, 0.2)), X), 2.0 - (0.2 * s + 0.1 * c), 1e-15);
  // Capsule (r, L): 2 − L/2 cos − r. Cylinder: 2 − L/2 cos − r sin.
  EXPECT_NEAR(geometry::lowest_height(Shape::Capsule(0.1, 0.6), X), 2.0 - 0.3 * c - 0.1, 1e-15);
  EXPECT_NEAR(geometry::lowest_height(Shape::Cylinder(0.1, 0.6), X), 2.0 - 0.3 * c - 0.1 * s, 1e-15);
  // A cylinder lying on its side (axis horizontal): its rim, r below the centre.
  math::Transform side;
  side.R << 1, 0, 0, 0, 0, -1, 0, 1, 0;
  EXPECT_NEAR(geometry::lowest_height(Shape::Cylinder(0.1, 0.6), side), -0.1, 1e-15);
  EXPECT_EQ(geometry::lowest_height(Shape::HalfSpace(), X), -std::numeric_limits<double>::infinity());
  // A tetrahedron rotated −0.3 rad about x: vertex (0, 1, 0) goes down by sin 0.3.
  const Shape tet = Shape::ConvexMesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}});
  math::Transform X_back = X;
  X_back.R = X.R.transpose();
  EXPECT_NEAR(geometry::lowest_height(tet, X_back), 2.0 - s, 1e-15);
}

}  // namespace
}  // namespace coulomb::simulation
