// Terrains, metrics JSON and the control loop of control/experiment.h (issue 13).
//
// Independent truths: the compliant stiffness from the A1's mass in its URDF (Model::total_mass,
// the sum of the links' <inertial> masses) and the formula k = m g / (feet · sink); the height
// map's surface from the collision world (a small sphere placed just above the map at random
// (x, y): the nearest point and normal FCL reports give the height of the face under it); the
// per-cell friction from the parsed scene's geometries; metrics.json parsed back by nlohmann.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coulomb/control/experiment.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"

namespace {

namespace fs = std::filesystem;
using namespace coulomb;
using control::TerrainKind;

const std::string kA1Urdf = std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf";

/// The A1 trot scene of the experiments (modelled on examples/scenes/a1_id.yaml), with extra YAML
/// appended to its bodies list.
std::string a1_scene(const std::string& extra_bodies = "", const std::string& ground =
                                                                 "  - name: ground\n    fixed: true\n    shapes: "
                                                                 "[{type: halfspace, normal: [0, 0, 1]}]\n") {
  return "time_step: 0.001\nduration: 1.0\ncontact: {mu: 0.8, stiffness: 1.0e5, dissipation_time: 0.01}\nbodies:\n" +
         ground + extra_bodies +
         "robots:\n"
         "  - urdf: " + kA1Urdf + "\n"
         "    floating: true\n"
         "    position: [0, 0, 0.35]\n"
         "    place_on_ground: true\n"
         "    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: 0.8, RL_thigh_joint: 0.8,\n"
         "                      FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: -1.5, RL_calf_joint: -1.5}\n"
         "    actuators:\n"
         "      all: {kp: 80.0, kd: 2.0}\n";
}

io::Scene parse(const std::string& text) { return io::parse_scene(text, "a1_trot_test.yaml", "."); }

TEST(TerrainTest, NamesRoundTripAndBadNamesListTheValidOnes) {
  for (TerrainKind kind : {TerrainKind::kScene, TerrainKind::kRigidLow, TerrainKind::kRigidHigh,
                           TerrainKind::kCompliantLow, TerrainKind::kCompliantHigh, TerrainKind::kHeightMap})
    EXPECT_EQ(control::parse_terrain_kind(control::to_string(kind)), kind);
  EXPECT_STREQ(control::to_string(TerrainKind::kHeightMap), "heightmap");
  try {
    control::parse_terrain_kind("lava");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* name : {"lava", "scene", "rigid-low", "rigid-high", "compliant-low", "compliant-high", "heightmap"})
      EXPECT_NE(what.find(name), std::string::npos) << what;
  }
  const std::vector<TerrainKind> planar = control::planar_terrains();
  EXPECT_EQ(planar, (std::vector<TerrainKind>{TerrainKind::kRigidLow, TerrainKind::kRigidHigh,
                                              TerrainKind::kCompliantLow, TerrainKind::kCompliantHigh}));
}

TEST(TerrainTest, CompliantStiffnessIsTheWeightOverFeetTimesSink) {
  const io::Scene scene = parse(a1_scene());
  const double m = scene.model.total_mass();  // the A1's links (the ground has no mass)
  ASSERT_GT(m, 10.0);
  ASSERT_LT(m, 15.0);
  const control::Terrain low = control::make_terrain(TerrainKind::kCompliantLow, scene);
  EXPECT_NEAR(low.stiffness, m * 9.81 / (4 * 1e-3), 1e-9 * low.stiffness);
  EXPECT_DOUBLE_EQ(low.mu, 0.1);
  EXPECT_DOUBLE_EQ(low.dissipation_time, 0.01);
  EXPECT_DOUBLE_EQ(low.sap_beta, 1.0);
  EXPECT_DOUBLE_EQ(low.height(0.3, -2.0), 0.0);

  control::TerrainParameters p;
  p.feet_in_stance = 2;
  p.sink = 2.5e-3;
  p.high_mu = 7.0;
  const control::Terrain high = control::make_terrain(TerrainKind::kCompliantHigh, scene, p);
  EXPECT_NEAR(high.stiffness, m * 9.81 / (2 * 2.5e-3), 1e-9 * high.stiffness);
  EXPECT_DOUBLE_EQ(high.mu, 7.0);

  // At rest on four feet, each foot carries m g / 4 and sinks k⁻¹ m g / 4 = 1 mm.
  EXPECT_NEAR(m * 9.81 / 4 / low.stiffness, 1e-3, 1e-12);

  p.sink = 0.0;
  EXPECT_THROW(control::make_terrain(TerrainKind::kCompliantLow, scene, p), std::invalid_argument);
}

TEST(TerrainTest, RigidTerrainsAreNearRigidSap) {
  const io::Scene scene = parse(a1_scene());
  const control::Terrain low = control::make_terrain(TerrainKind::kRigidLow, scene);
  const control::Terrain high = control::make_terrain(TerrainKind::kRigidHigh, scene);
  EXPECT_DOUBLE_EQ(low.mu, 0.1);
  EXPECT_DOUBLE_EQ(high.mu, 100.0);
  for (const control::Terrain& t : {low, high}) {
    EXPECT_DOUBLE_EQ(t.stiffness, 1e10);
    EXPECT_DOUBLE_EQ(t.dissipation_time, 0.0);
    EXPECT_DOUBLE_EQ(t.sap_beta, 0.01);
    EXPECT_FALSE(t.description.empty());
  }
  const control::Terrain own = control::make_terrain(TerrainKind::kScene, scene);
  EXPECT_TRUE(own.bodies_yaml.empty());
  EXPECT_FALSE(static_cast<bool>(own.height));
  EXPECT_DOUBLE_EQ(own.mu, 0.8);
  EXPECT_DOUBLE_EQ(own.stiffness, 1e5);

  const simulation::SimulatorParameters sp = control::control_simulator_parameters(scene, low);
  EXPECT_DOUBLE_EQ(sp.time_step, 0.001);
  EXPECT_EQ(sp.integrator, simulation::Integrator::kImplicitEuler);
  EXPECT_EQ(sp.solver, simulation::Solver::kSap);
  EXPECT_DOUBLE_EQ(sp.regularization.beta, 0.01);
  EXPECT_LE(sp.sap.rel_tolerance, 1e-8);
}

TEST(TerrainTest, ApplyTerrainReplacesTheGroundAndSetsTheContactDefaults) {
  const std::string text =
      a1_scene("  - name: wall\n    fixed: true\n    position: [3, 0, 0]\n    shapes: [{type: box, size: [0.1, 1, 1]}]\n",
               "  - name: ground\n    fixed: true\n    shapes: [{type: box, size: [4, 4, 0.2], position: [0, 0, -0.1]}]\n");
  const io::Scene before = parse(text);
  EXPECT_EQ(control::apply_terrain(text, control::make_terrain(TerrainKind::kScene, before)), text);

  const control::Terrain terrain = control::make_terrain(TerrainKind::kRigidLow, before);
  const io::Scene after = parse(control::apply_terrain(text, terrain));
  EXPECT_EQ(after.contact.approximation, contact::ContactApproximation::kSap);
  EXPECT_DOUBLE_EQ(after.contact.mu, 0.1);
  EXPECT_DOUBLE_EQ(after.contact.stiffness, 1e10);
  EXPECT_DOUBLE_EQ(after.contact.dissipation_time, 0.0);
  int grounds = 0, walls = 0;
  for (const geometry::Geometry& g : after.geometries) {
    if (g.name.rfind("ground/", 0) == 0) {
      ++grounds;
      EXPECT_EQ(g.shape.type, geometry::ShapeType::kHalfSpace) << g.name;
      EXPECT_EQ(g.body, 0);
    }
    if (g.name.rfind("wall/", 0) == 0) ++walls;
  }
  EXPECT_EQ(grounds, 1);
  EXPECT_EQ(walls, 1);
  // The robot is still there, standing on the new ground.
  EXPECT_EQ(after.model.nv(), before.model.nv());
  EXPECT_NEAR(after.q0[2], before.q0[2], 1e-9);

  EXPECT_THROW(control::apply_terrain("- a\n- b\n", terrain), std::invalid_argument);
}

// The height map's vertex heights on the grid around the start (the base starts at x = y = 0).
std::vector<double> vertex_heights(const control::Terrain& t, double extent, double cell) {
  std::vector<double> h;
  const int n = static_cast<int>(std::lround(2 * extent / cell));
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) h.push_back(t.height(-extent + i * cell, -extent + j * cell));
  return h;
}

TEST(TerrainTest, HeightMapIsReproducibleFlatAtTheStartAndSpansTheBumpHeight) {
  const io::Scene scene = parse(a1_scene());
  const control::Terrain a = control::make_terrain(TerrainKind::kHeightMap, scene);
  const control::Terrain b = control::make_terrain(TerrainKind::kHeightMap, scene);
  EXPECT_EQ(a.bodies_yaml, b.bodies_yaml);
  control::TerrainParameters p;
  p.seed = 2;
  const control::Terrain c = control::make_terrain(TerrainKind::kHeightMap, scene, p);
  EXPECT_NE(a.bodies_yaml, c.bodies_yaml);

  // Default bump height: 1/5 of the A1's leg (thigh 0.2 m + calf 0.2 m in its URDF).
  const std::vector<double> h = vertex_heights(a, 1.5, 0.1);
  EXPECT_NEAR(*std::max_element(h.begin(), h.end()) - *std::min_element(h.begin(), h.end()), 0.08, 1e-12);
  EXPECT_DOUBLE_EQ(*std::min_element(h.begin(), h.end()), 0.0);
  // Flat where the robot stands (its feet are within 0.25 m of the base) and beyond the map.
  for (double x : {-0.25, 0.0, 0.25})
    for (double y : {-0.2, 0.0, 0.2}) EXPECT_EQ(a.height(x, y), 0.0) << x << " " << y;
  EXPECT_EQ(a.height(5.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(a.sap_beta, 0.01);
  EXPECT_DOUBLE_EQ(a.mu, 0.8);  // (0.1 + 1.5) / 2

  p.seed = 1;
  p.bump_height = 0.03;
  const control::Terrain d = control::make_terrain(TerrainKind::kHeightMap, scene, p);
  const std::vector<double> hd = vertex_heights(d, 1.5, 0.1);
  EXPECT_NEAR(*std::max_element(hd.begin(), hd.end()), 0.03, 1e-12);

  p.cell = -1.0;
  EXPECT_THROW(control::make_terrain(TerrainKind::kHeightMap, scene, p), std::invalid_argument);
}

TEST(TerrainTest, HeightMapHeightIsTheCollisionGeometrysSurfaceAndEachCellHasItsFriction) {
  // A margin just above the probe's gap, so that only the faces right under it are reported.
  const std::string text = "collision: {margin: 0.0006}\n" +
                           a1_scene("  - name: probe\n    mass: 0.1\n    position: [0, 0, 2]\n    shapes: [{type: "
                                    "sphere, radius: 0.004}]\n");
  const io::Scene plain = parse(text);
  control::TerrainParameters p;
  p.seed = 7;
  const control::Terrain terrain = control::make_terrain(TerrainKind::kHeightMap, plain, p);
  const io::Scene scene = parse(control::apply_terrain(text, terrain));

  // Friction per cell: every prism has its own μ in [mu_min, mu_max].
  std::set<double> mus;
  int prisms = 0, probe = -1;
  for (size_t g = 0; g < scene.geometries.size(); ++g) {
    const geometry::Geometry& geom = scene.geometries[g];
    if (geom.name.rfind("probe/", 0) == 0) probe = static_cast<int>(g);
    if (geom.name.rfind("terrain_", 0) != 0) continue;
    ++prisms;
    EXPECT_EQ(geom.body, 0);
    EXPECT_EQ(geom.shape.type, geometry::ShapeType::kConvexMesh);
    ASSERT_TRUE(geom.material.mu.has_value()) << geom.name;
    EXPECT_GE(*geom.material.mu, 0.1);
    EXPECT_LE(*geom.material.mu, 1.5);
    mus.insert(*geom.material.mu);
  }
  EXPECT_GT(prisms, 500);
  EXPECT_GT(mus.size(), static_cast<size_t>(prisms) * 9 / 10);
  ASSERT_GE(probe, 0);

  // The surface under random (x, y): a 4 mm sphere 0.5 mm above the map there.
  const multibody::Model& model = scene.model;
  const int body = model.body_index("probe");
  const int qi = model.body(body).joint.q_index;
  geometry::CollisionWorld world(model, scene.geometries, scene.collision);
  multibody::Workspace ws(model);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> coordinate(-1.45, 1.45);
  std::vector<geometry::ContactPoint> contacts;
  int used = 0;
  double worst = 0.0;
  for (int sample = 0; sample < 400; ++sample) {
    const double x = coordinate(rng), y = coordinate(rng);
    const double r = 0.004, gap = 5e-4;
    Eigen::VectorXd q = scene.q0;
    q.segment<3>(qi) = Eigen::Vector3d(x, y, terrain.height(x, y) + r + gap);
    multibody::forward_kinematics(model, ws, q);
    world.update_poses(ws);
    world.compute_contacts(contacts);
    std::vector<geometry::ContactPoint> mine;
    for (const geometry::ContactPoint& c : contacts) {
      const int other = c.geometry_a == probe ? c.geometry_b : c.geometry_b == probe ? c.geometry_a : -1;
      if (other >= 0 && scene.geometries[other].body == 0) mine.push_back(c);
    }
    ASSERT_FALSE(mine.empty()) << "no contact at " << x << ", " << y;
    if (mine.size() != 1) continue;  // near an edge between two faces: the face under (x, y) is ambiguous
    const geometry::ContactPoint& c = mine.front();
    Eigen::Vector3d n = c.n_W;
    if (c.geometry_a == probe) n = -n;  // from the terrain up into the probe
    ASSERT_GT(n.z(), 0.3);
    const Eigen::Vector3d surface = c.p_W - 0.5 * c.phi * n;  // the terrain's nearest point
    const double truth = surface.z() - (n.x() * (x - surface.x()) + n.y() * (y - surface.y())) / n.z();
    worst = std::max(worst, std::abs(truth - terrain.height(x, y)));
    EXPECT_NEAR(truth, terrain.height(x, y), 2e-6) << x << ", " << y;
    ++used;
  }
  EXPECT_GT(used, 300);
  RecordProperty("worst_height_error_m", std::to_string(worst));
}

TEST(ControlMetricsTest, JsonRoundTripWithNaNAsNull) {
  control::ControlMetrics m;
  m.controller = "id-qp-mu";
  m.terrain = "rigid-low";
  m.duration = 30.0;
  m.steps = 30000;
  m.joint_position_error = 0.031;
  m.joint_velocity_error = 1.94;
  m.torque_rate = 52.5;
  m.torque_step = 0.0525;
  m.torque = 0.2;
  m.max_torque_rate = 1e4;
  m.normal_force_error = 3.8;
  m.normal_force_error_relative = 0.1253;
  m.mean_normal_force = 117.0;
  m.fell = true;
  m.fall_time = 12.5;
  m.fall_reason = "tilt 63° > 60°";
  m.distance = 4.5;
  m.net_displacement = 0.3;
  m.mean_forward_speed = 0.15;
  m.controller_time_mean = 4e-5;
  m.controller_time_max = 3e-4;
  m.id_not_solved = 2;
  m.simulator_failures = 1;
  m.waypoints_reached = 7;
  m.box_dropped = false;
  m.box_drop_time = std::numeric_limits<double>::quiet_NaN();
  m.box_hold_ratio = std::numeric_limits<double>::quiet_NaN();
  const nlohmann::json j = nlohmann::json::parse(control::to_json(m));
  ASSERT_TRUE(j.is_object());
  const std::vector<std::string> keys{
      "controller", "terrain", "duration", "steps", "joint_position_error", "joint_velocity_error", "torque_rate",
      "torque_step", "torque", "max_torque_rate", "normal_force_error", "normal_force_error_relative",
      "mean_normal_force", "fell", "fall_time", "fall_reason", "distance", "net_displacement", "mean_forward_speed",
      "controller_time_mean", "controller_time_max", "id_not_solved", "simulator_failures", "waypoints_reached",
      "box_dropped", "box_drop_time", "box_hold_ratio"};
  EXPECT_EQ(j.size(), keys.size());
  for (const std::string& k : keys) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["controller"], "id-qp-mu");
  EXPECT_EQ(j["terrain"], "rigid-low");
  EXPECT_EQ(j["steps"].get<long long>(), 30000);
  EXPECT_DOUBLE_EQ(j["joint_position_error"].get<double>(), 0.031);
  EXPECT_DOUBLE_EQ(j["joint_velocity_error"].get<double>(), 1.94);
  EXPECT_DOUBLE_EQ(j["torque_rate"].get<double>(), 52.5);
  EXPECT_DOUBLE_EQ(j["normal_force_error_relative"].get<double>(), 0.1253);
  EXPECT_TRUE(j["fell"].get<bool>());
  EXPECT_DOUBLE_EQ(j["fall_time"].get<double>(), 12.5);
  EXPECT_EQ(j["fall_reason"].get<std::string>(), "tilt 63° > 60°");
  EXPECT_EQ(j["id_not_solved"].get<long long>(), 2);
  EXPECT_EQ(j["waypoints_reached"].get<int>(), 7);
  EXPECT_FALSE(j["box_dropped"].get<bool>());
  EXPECT_TRUE(j["box_drop_time"].is_null());
  EXPECT_TRUE(j["box_hold_ratio"].is_null());
  // Full precision.
  m.torque = 0.1 + 0.2;
  EXPECT_EQ(nlohmann::json::parse(control::to_json(m))["torque"].get<double>(), 0.1 + 0.2);
}

TEST(ControlRunTest, GainsPerRobotKind) {
  const control::ControlGains trot = control::default_gains("trot");
  EXPECT_TRUE(trot.balance);
  const control::ControlGains arm = control::default_gains("arm");
  EXPECT_FALSE(arm.balance);
  EXPECT_GT(arm.kp, 0.0);
  EXPECT_THROW(control::default_gains("hexapod"), std::invalid_argument);
}

TEST(ControlRunTest, UnsupportedRobotIsAClearError) {
  const std::string text = "time_step: 0.001\nbodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
                           "  - {name: ball, mass: 1, position: [0, 0, 0.5], shapes: [{type: sphere, radius: 0.1}]}\n";
  io::Scene scene = io::parse_scene(text);
  const control::Terrain terrain = control::make_terrain(TerrainKind::kScene, scene);
  try {
    control::run_control(std::move(scene), terrain, {});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("supported"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("A1"), std::string::npos) << e.what();
  }
}

// A fall ends the run at once (fall_height above the start height: the first step already fails).
TEST(ControlRunTest, FallEndsTheRun) {
  const std::string text = a1_scene();
  const io::Scene plain = parse(text);
  const control::Terrain terrain = control::make_terrain(TerrainKind::kRigidHigh, plain);
  control::ControlRunOptions options;
  options.controller = control::ControllerKind::kPid;
  options.terrain = TerrainKind::kRigidHigh;
  options.duration = 0.05;
  options.fall_height = 10.0;
  int calls = 0;
  options.on_step = [&](const simulation::Simulator&, const control::TrackingController&) { ++calls; };
  const control::ControlRun run = control::run_control(parse(control::apply_terrain(text, terrain)), terrain, options);
  EXPECT_TRUE(run.metrics.fell);
  EXPECT_EQ(run.metrics.steps, 1);
  EXPECT_EQ(calls, 1);
  EXPECT_NEAR(run.metrics.fall_time, 0.001, 1e-12);
  EXPECT_NE(run.metrics.fall_reason.find("base height"), std::string::npos) << run.metrics.fall_reason;
  EXPECT_EQ(run.reference_kind, "trot");
}

// A short stand (the trot starts after TrotPlannerParameters::start_delay = 0.2 s): every step is
// measured and recorded; the feet carry the robot's weight.
TEST(ControlRunTest, ShortRunMeasuresEveryStep) {
  const std::string text = a1_scene();
  const io::Scene plain = parse(text);
  const double weight = plain.model.total_mass() * 9.81;
  const control::Terrain terrain = control::make_terrain(TerrainKind::kRigidHigh, plain);
  for (control::ControllerKind kind : {control::ControllerKind::kPid, control::ControllerKind::kIdQpCoulomb}) {
    control::ControlRunOptions options;
    options.controller = kind;
    options.terrain = TerrainKind::kRigidHigh;
    options.duration = 0.1;
    long long calls = 0;
    options.on_step = [&](const simulation::Simulator& sim, const control::TrackingController& c) {
      ++calls;
      EXPECT_EQ(sim.step_count(), calls);
      EXPECT_EQ(c.kind(), kind);
    };
    const control::ControlRun run = control::run_control(parse(control::apply_terrain(text, terrain)), terrain, options);
    const control::ControlMetrics& m = run.metrics;
    SCOPED_TRACE(control::to_string(kind));
    EXPECT_EQ(m.controller, control::to_string(kind));
    EXPECT_EQ(m.terrain, "rigid-high");
    EXPECT_EQ(m.steps, 100);
    EXPECT_EQ(calls, 100);
    EXPECT_NEAR(m.duration, 0.1, 1e-9);
    EXPECT_FALSE(m.fell) << m.fall_reason;
    EXPECT_TRUE(std::isnan(m.fall_time));
    EXPECT_GE(m.joint_position_error, 0.0);
    EXPECT_LT(m.joint_position_error, 0.1);
    EXPECT_TRUE(std::isfinite(m.joint_velocity_error));
    EXPECT_GT(m.torque, 0.0);
    EXPECT_TRUE(std::isfinite(m.torque_rate));
    EXPECT_NEAR(m.torque_rate, m.torque_step / 0.001, 1e-9 * (1.0 + m.torque_rate));
    EXPECT_NEAR(m.mean_normal_force, weight, 0.3 * weight);
    EXPECT_GT(m.controller_time_mean, 0.0);
    EXPECT_GE(m.controller_time_max, m.controller_time_mean);
    EXPECT_LT(m.distance, 0.05);
    if (control::is_predictive(kind)) {
      EXPECT_TRUE(std::isfinite(m.normal_force_error));
      EXPECT_GE(m.normal_force_error, 0.0);
    } else {
      EXPECT_TRUE(std::isnan(m.normal_force_error));
    }
    const control::ControlSeries& s = run.series;
    ASSERT_EQ(s.t.size(), 100u);
    for (const auto* v : {&s.joint_position_error, &s.joint_velocity_error, &s.torque_rate, &s.predicted_normal,
                          &s.simulated_normal, &s.base_x, &s.base_y, &s.base_z})
      EXPECT_EQ(v->size(), 100u);
    EXPECT_DOUBLE_EQ(s.t.front(), 0.0);
    EXPECT_NEAR(s.t.back(), 0.099, 1e-9);
    EXPECT_TRUE(std::isnan(s.torque_rate.front()));  // no Δτ before the first step
    EXPECT_NEAR(s.base_z.front(), plain.q0[2], 1e-12);
  }
}

}  // namespace
