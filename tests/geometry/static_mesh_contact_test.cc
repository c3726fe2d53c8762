// Static non-convex meshes (ShapeType::kMesh, src/geometry/static_mesh_contact.cc) against convex
// shapes: a flat mesh gives the contacts of a half-space at the same height (two triangles, and a
// finely triangulated grid where box corners fall anywhere in the triangles); a sphere on a tilted
// mesh its analytic point and depth; a box in a V-shaped trough touches both faces; the shape's
// validation, top_below, load_mesh and the scene loader (`type: mesh`, errors); and simulations
// on mesh terrain written here as OBJ files: a box at rest at its analytic height, the Solo12
// (STL hulls, ../shared/models) landing on bumpy terrain.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "coulomb/geometry/mesh_loader.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"
#include "geometry/geometry_test_util.h"

namespace coulomb::testing {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("coulomb_static_mesh_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// A flat n × n grid over [−L, L]² at height z (2 n² triangles, counter-clockwise seen from +z).
Shape flat_grid(int n, double L, double z) {
  std::vector<Vector3> v;
  std::vector<std::array<int, 3>> t;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) v.emplace_back(-L + 2 * L * i / n, -L + 2 * L * j / n, z);
  auto id = [n](int i, int j) { return j * (n + 1) + i; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      t.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      t.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  return Shape::Mesh(v, t);
}

std::vector<ContactPoint> sorted(std::vector<ContactPoint> c) {
  std::sort(c.begin(), c.end(), [](const ContactPoint& a, const ContactPoint& b) {
    return std::tie(a.p_W.x(), a.p_W.y(), a.p_W.z()) < std::tie(b.p_W.x(), b.p_W.y(), b.p_W.z());
  });
  return c;
}

// Contacts of `shape` (body 1) at X against `ground` on the world at X_ground.
std::vector<ContactPoint> contacts_on(const Shape& ground, const Transform& X_ground, const Shape& shape,
                                      const Transform& X) {
  FreeBodies fb(1);
  CollisionWorld world(fb.model, {make_geometry("ground", 0, ground, X_ground), make_geometry("shape", 1, shape)});
  fb.set_pose(1, X);
  fb.apply(world);
  return sorted(contacts_of(world));
}

void expect_same(const std::vector<ContactPoint>& got, const std::vector<ContactPoint>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].phi, want[i].phi, 1e-9) << what << " point " << i;
    EXPECT_LT((got[i].p_W - want[i].p_W).norm(), 1e-9) << what << " point " << i;
    EXPECT_LT((got[i].n_W - want[i].n_W).norm(), 1e-9) << what << " point " << i;
  }
}

// A box on a flat mesh gives the half-space's contacts at the same height (4 corners resting flat
// — sunk 1 mm, touching, 1.5 mm above within the margin —, 2 tilted onto an edge), for a mesh of
// 2 triangles and of a 20 × 20 grid (800 triangles, 10 cm cells for a 40 × 20 cm box, so corners
// land anywhere in the triangles, on their edges included), at 200 random positions and headings.
TEST(StaticMeshContactTest, BoxOnFlatMeshHasTheHalfSpacesContacts) {
  const double h = 0.1;
  const Shape box = Shape::Box(Vector3(0.4, 0.2, 0.1));
  const Shape two = flat_grid(1, 1.0, h), grid = flat_grid(20, 1.0, h);
  ASSERT_EQ(two.triangles.size(), 2u);
  ASSERT_EQ(grid.triangles.size(), 800u);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> xy(-0.6, 0.6), yaw(-3.14159, 3.14159);
  int points = 0, edge_cases = 0;
  for (int k = 0; k < 200; ++k) {
    const double gap = std::array<double, 4>{-0.001, 0.0, 0.0015, -0.0005}[static_cast<size_t>(k % 4)];
    const double tilt = k % 5 == 4 ? 0.2 : 0.0;  // onto an edge (φ of the lowest edge = gap)
    const math::Matrix3 R = rot_z(yaw(rng)) * rot_x(tilt);
    const double bottom = 0.5 * (std::abs(R(2, 0)) * 0.4 + std::abs(R(2, 1)) * 0.2 + std::abs(R(2, 2)) * 0.1);
    const Transform X = pose(R, Vector3(xy(rng), xy(rng), h + bottom + gap));
    const auto want = contacts_on(Shape::HalfSpace(), at(0, 0, h), box, X);
    ASSERT_EQ(want.size(), tilt > 0 ? 2u : 4u);
    expect_same(contacts_on(two, {}, box, X), want, "2 triangles, pose " + std::to_string(k));
    expect_same(contacts_on(grid, {}, box, X), want, "20x20 grid, pose " + std::to_string(k));
    points += static_cast<int>(want.size());
    edge_cases += tilt > 0;
  }
  // A corner exactly on a grid line (x = 0.1, y = 0.2: on the edges of four triangles) is reported once.
  const Transform X = at(0.3, 0.3, h + 0.05 - 0.001);
  expect_same(contacts_on(grid, {}, box, X), contacts_on(Shape::HalfSpace(), at(0, 0, h), box, X), "on grid lines");
  std::printf("box on flat meshes: %d points at 200 poses (%d tilted onto an edge) equal to the half-space's\n",
              points, edge_cases);
}

// A sphere on a mesh plane tilted 20° about x: one point at the analytic place, from both sides
// of the margin, also when its lowest point is over a triangle edge (the diagonal).
TEST(StaticMeshContactTest, SphereOnTiltedMeshAnalyticPointAndDepth) {
  const math::Matrix3 R = rot_x(0.349);  // about 20°
  const Transform X_M = pose(R, Vector3(0.1, -0.2, 0.3));
  const Shape plane = flat_grid(4, 1.0, 0.0);
  const Vector3 n = R.col(2);
  const double r = 0.05;
  for (const double phi : {-0.002, -1e-4, 0.0, 0.0015}) {
    for (const Vector3& on_G : {Vector3(0.13, 0.27, 0), Vector3(0.25, 0.25, 0), Vector3(0.5, 0.5, 0)}) {
      const Vector3 on = X_M.act(on_G);  // a point of the plane (the second and third: on edges)
      const Vector3 centre = on + (r + phi) * n;
      const auto c = contacts_on(plane, X_M, Shape::Sphere(r), at(centre.x(), centre.y(), centre.z()));
      ASSERT_EQ(c.size(), 1u) << phi;
      EXPECT_EQ(c[0].geometry_a, 0);
      EXPECT_NEAR(c[0].phi, phi, 1e-12);
      EXPECT_LT((c[0].n_W - n).norm(), 1e-12);
      EXPECT_LT((c[0].p_W - (on + 0.5 * phi * n)).norm(), 1e-12);
    }
  }
  // Beyond the margin: nothing.
  const Vector3 far = X_M.act(Vector3(0.1, 0.1, 0)) + (r + 0.0021) * n;
  EXPECT_TRUE(contacts_on(plane, X_M, Shape::Sphere(r), at(far.x(), far.y(), far.z())).empty());
}

// A V-shaped trough along x (faces at ±30°, 2 triangles each, the floor line y = 0 at z = 0): a
// box of width w lowered until its bottom edges are 1 mm (along z) inside the faces touches each
// face at its two bottom corners, with that face's normal and φ = −1 mm · cos 30°.
TEST(StaticMeshContactTest, BoxInVTroughTouchesBothFaces) {
  const double s = std::tan(M_PI / 6), L = 1.0;
  // y from −1 to 1; z = |y| tan 30°.
  const Shape trough = Shape::Mesh({{-L, -1, s}, {L, -1, s}, {-L, 0, 0}, {L, 0, 0}, {-L, 1, s}, {L, 1, s}},
                                   {{0, 1, 3}, {0, 3, 2}, {2, 3, 5}, {2, 5, 4}});
  const double w = 0.3, depth = 0.001;
  const Shape box = Shape::Box(Vector3(0.4, w, 0.2));
  const double bottom = 0.5 * w * s - depth;  // z of the bottom face
  const auto c = contacts_on(trough, {}, box, at(0.05, 0, bottom + 0.1));
  const Vector3 n_left(0, std::sin(M_PI / 6), std::cos(M_PI / 6)), n_right(0, -std::sin(M_PI / 6), std::cos(M_PI / 6));
  const double phi = -depth * std::cos(M_PI / 6);
  ASSERT_EQ(c.size(), 4u);
  int left = 0, right = 0;
  for (const ContactPoint& p : c) {
    EXPECT_NEAR(p.phi, phi, 1e-12);
    const bool is_left = p.p_W.y() < 0;
    const Vector3& n = is_left ? n_left : n_right;
    EXPECT_LT((p.n_W - n).norm(), 1e-12);
    const Vector3 corner(p.p_W.x() < 0.05 ? -0.15 : 0.25, is_left ? -0.5 * w : 0.5 * w, bottom);
    EXPECT_LT((p.p_W - (corner - 0.5 * phi * n)).norm(), 1e-12) << p.p_W.transpose();
    (is_left ? left : right)++;
  }
  EXPECT_EQ(left, 2);
  EXPECT_EQ(right, 2);
}

// A capsule lying across a ridge (a roof along x, faces at ±20°) touches the ridge line only:
// no face takes it, so the points are FCL's, at the ridge, normal vertical, φ = −1 mm.
TEST(StaticMeshContactTest, CapsuleAcrossARidgeUsesFclsEdgePoints) {
  const double s = std::tan(0.349);
  const Shape roof = Shape::Mesh({{-1, -1, -s}, {1, -1, -s}, {-1, 0, 0}, {1, 0, 0}, {-1, 1, -s}, {1, 1, -s}},
                                 {{0, 1, 3}, {0, 3, 2}, {2, 3, 5}, {2, 5, 4}});
  const double r = 0.03;
  // Axis along y (across the ridge), 1 mm into it.
  const auto c = contacts_on(roof, {}, Shape::Capsule(r, 0.4), pose(rot_x(M_PI / 2), Vector3(0.2, 0, r - 0.001)));
  ASSERT_GE(c.size(), 1u);
  ASSERT_LE(c.size(), 4u);
  for (const ContactPoint& p : c) {
    // EPA's accuracy (tolerance 1e-6); its point anywhere in the overlap, which reaches
    // √(2 r δ) ≈ 7.7 mm along x and δ / tan 20° ≈ 2.7 mm along y from the deepest point.
    EXPECT_NEAR(p.phi, -0.001, 1e-5);
    EXPECT_LT((p.n_W - Vector3::UnitZ()).norm(), 1e-3);
    EXPECT_NEAR(p.p_W.y(), 0.0, 3e-3);
    EXPECT_NEAR(p.p_W.x(), 0.2, 8e-3);
  }
}

TEST(StaticMeshContactTest, ShapeValidationTopBelowAndFilters) {
  EXPECT_STREQ(geometry::shape_type_name(geometry::ShapeType::kMesh), "mesh");
  const Shape grid = flat_grid(2, 1.0, 0.0);
  EXPECT_NO_THROW(grid.validate("ctx"));
  auto message = [](const Shape& s) {
    try {
      s.validate("ctx");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(Shape::Mesh({}, {})).find("at least one triangle"), std::string::npos);
  EXPECT_NE(message(Shape::Mesh({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{0, 1, 2}})).find("degenerate"), std::string::npos);
  EXPECT_NE(message(Shape::Mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 1, 3}})).find("triangles[0][2] = 3"),
            std::string::npos);
  EXPECT_NE(message(Shape::Mesh({{0, 0, NAN}, {1, 0, 0}, {0, 1, 0}}, {{0, 1, 2}})).find("vertices[0] is not finite"),
            std::string::npos);
  // No volume, no mass.
  EXPECT_THROW(grid.volume(), std::invalid_argument);
  EXPECT_THROW(grid.mass_properties(1000), std::invalid_argument);
  // top_below: the plane's height under (x, y) for the tilted plane; nothing outside it.
  const math::Matrix3 R = rot_x(0.3);
  const Transform X = pose(R, Vector3(0, 0, 0.5));
  const Vector3 n = R.col(2);
  const auto z = geometry::top_below(grid, X, 0.2, 0.3);
  ASSERT_TRUE(z.has_value());
  EXPECT_NEAR(*z, 0.5 - (n.x() * 0.2 + n.y() * 0.3) / n.z(), 1e-12);
  EXPECT_FALSE(geometry::top_below(grid, X, 2.0, 0.0).has_value());
  EXPECT_NEAR(*geometry::top_below(flat_grid(2, 1.0, 0.1), {}, 0.5, 0.0), 0.1, 1e-15);  // on an edge
  EXPECT_NEAR(geometry::lowest_height(grid, X), 0.5 - std::sin(0.3), 1e-12);
  // A static mesh only on the world; it never pairs with a half-space or another mesh.
  FreeBodies fb(1);
  EXPECT_THROW(CollisionWorld(fb.model, {make_geometry("m", 1, grid)}), std::invalid_argument);
  CollisionWorld world(fb.model, {make_geometry("m", 0, grid), make_geometry("plane", 1, Shape::HalfSpace()),
                                  make_geometry("ball", 1, Shape::Sphere(0.1))});
  EXPECT_FALSE(world.can_collide(0, 1));
  EXPECT_TRUE(world.can_collide(0, 2));
}

std::string write_text(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

// OBJ of an n × n grid over [−L, L]² with heights z(x, y).
template <class Z>
std::string write_terrain(const std::string& name, int n, double L, Z z) {
  std::string obj = "# terrain\n";
  char line[128];
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const double x = -L + 2 * L * i / n, y = -L + 2 * L * j / n;
      std::snprintf(line, sizeof line, "v %.9g %.9g %.9g\n", x, y, z(x, y));
      obj += line;
    }
  auto id = [n](int i, int j) { return j * (n + 1) + i + 1; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      std::snprintf(line, sizeof line, "f %d %d %d\nf %d %d %d\n", id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j),
                    id(i + 1, j + 1), id(i, j + 1));
      obj += line;
    }
  return write_text(name, obj);
}

TEST(StaticMeshContactTest, LoadMeshKeepsTheTrianglesAndNamesBadFiles) {
  const std::string file = write_terrain("terrain4.obj", 4, 1.0, [](double x, double) { return 0.25 * x; });
  const Shape m = geometry::load_mesh(file, Vector3(2, 2, 2));
  EXPECT_EQ(m.type, geometry::ShapeType::kMesh);
  EXPECT_EQ(m.triangles.size(), 32u);
  EXPECT_EQ(m.mesh_file, file);
  // Outward (up) triangles, scaled: the plane z = x/4 (scale 2 on every axis keeps the slope).
  for (const auto& t : m.triangles) {
    const Vector3 w = (m.vertices[t[1]] - m.vertices[t[0]]).cross(m.vertices[t[2]] - m.vertices[t[0]]);
    EXPECT_GT(w.z(), 0.0);
    EXPECT_NEAR(w.normalized().dot(Vector3(-0.25, 0, 1).normalized()), 1.0, 1e-7);
  }
  auto message = [](const std::string& path) {
    try {
      geometry::load_mesh(path);
    } catch (const geometry::MeshError& e) {
      EXPECT_EQ(e.file(), path);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message((temp_dir() / "none.obj").string()).find("no such file"), std::string::npos);
  EXPECT_NE(message(write_text("line.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n")).find("degenerate"),
            std::string::npos);
}

const char* kBoxOnTerrain = R"(
time_step: 0.002
duration: 1.0
contact: {mu: 0.8, stiffness: 1.0e6, dissipation_time: 0.01}
bodies:
  - name: terrain
    fixed: true
    shapes: [{type: mesh, file: TERRAIN, scale: [1, 1, 1], convex: false}]
  - name: box
    mass: 2.0
    shapes: [{type: box, size: [0.2, 0.16, 0.1]}]
    position: [0.27, -0.31, 0.35]
    rpy: [0, 0, 0.4]
)";

std::string replace(std::string s, const std::string& key, const std::string& value) {
  s.replace(s.find(key), key.size(), value);
  return s;
}

// A box dropped on mesh terrain (an OBJ written here: a 12 × 12 grid, a flat plateau at 0.1 m
// where the box lands, slopes around it) comes to rest on its bottom face at the analytic height:
// plateau + half the box + the compliant sink m g / (4 k) per corner.
TEST(StaticMeshContactTest, BoxDroppedOnMeshTerrainRestsAtTheAnalyticHeight) {
  const std::string terrain = write_terrain("plateau.obj", 12, 1.2, [](double x, double y) {
    return 0.1 - 0.15 * std::max(0.0, std::max(std::abs(x), std::abs(y)) - 0.6);
  });
  const std::string yaml = replace(kBoxOnTerrain, "TERRAIN", terrain);
  scene::Scene scene = io::parse_scene(yaml, "box_on_terrain.yaml", temp_dir().string());
  ASSERT_EQ(scene.geometries[0].shape.type, geometry::ShapeType::kMesh);
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  simulation::Simulator sim(std::move(scene), p);
  while (sim.time() < 1.0 - 1e-9) sim.step();
  const double k = 1.0e6, m = 2.0, g = 9.81;
  const double expected = 0.1 + 0.05 - m * g / (4 * k);
  const Eigen::VectorXd q = sim.q();
  std::printf("box on mesh terrain: z = %.9f m, analytic %.9f m, %d contacts, |v| %.2e\n", q[2], expected,
              sim.last_step().contacts, sim.v().norm());
  EXPECT_NEAR(q[2], expected, 1e-6);
  EXPECT_EQ(sim.last_step().contacts, 4);
  EXPECT_LT(sim.v().norm(), 1e-4);
  // Still where it landed (no sliding on the flat plateau), heading unchanged.
  EXPECT_NEAR(q[0], 0.27, 1e-4);
  EXPECT_NEAR(q[1], -0.31, 1e-4);
}

// The Solo12 (STL collision hulls) dropped from 0.3 m above bumpy mesh terrain (amplitude 2 cm)
// lands on its feet and stays above it: no contact deeper than 1 mm at any step, at rest after 2 s
// with the base well above the terrain, the feet the only links touching it.
TEST(StaticMeshContactTest, Solo12LandsOnBumpyMeshTerrain) {
  const std::string terrain = write_terrain("bumps.obj", 24, 1.2, [](double x, double y) {
    return 0.02 * std::sin(5 * x) * std::cos(4 * y);
  });
  const std::string solo = std::string(COULOMB_SHARED_DIR) +
                           "/models/example-robot-data/robots/solo_description/robots/solo12.urdf";
  const std::string yaml = "time_step: 0.001\nduration: 2.0\ncontact: {mu: 0.8, stiffness: 1.0e5, dissipation_time: 0.01}\n"
                           "bodies:\n  - name: terrain\n    fixed: true\n    shapes: [{type: mesh, file: " + terrain +
                           ", convex: false}]\n"
                           "robots:\n  - urdf: " + solo + "\n    floating: true\n    position: [0.1, 0.05, 0.32]\n"
                           "    joint_positions: {FL_HFE: 0.8, FR_HFE: 0.8, HL_HFE: -0.8, HR_HFE: -0.8,"
                           " FL_KFE: -1.6, FR_KFE: -1.6, HL_KFE: 1.6, HR_KFE: 1.6}\n"
                           "    actuators:\n      all: {kp: 5.0, kd: 0.1}\n";
  scene::Scene scene = io::parse_scene(yaml, "solo_on_terrain.yaml", temp_dir().string());
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  simulation::Simulator sim(std::move(scene), p);
  double deepest = 0.0;
  while (sim.time() < 2.0 - 1e-9) deepest = std::max(deepest, sim.step().max_penetration);
  std::set<int> bodies;
  for (const simulation::ContactResult& c : sim.last_results().contacts) bodies.insert(c.body_a == 0 ? c.body_b : c.body_a);
  std::printf("Solo12 on bumpy mesh terrain: deepest %.3g m, base z %.4f m, %zu contacts on %zu bodies, |v| %.2e\n",
              deepest, sim.q()[2], sim.last_results().contacts.size(), bodies.size(), sim.v().norm());
  EXPECT_LT(deepest, 1e-3);
  EXPECT_GT(sim.q()[2], 0.02 + 0.1);
  EXPECT_LT(sim.v().norm(), 0.05);
  EXPECT_EQ(bodies.size(), 4u);  // the four lower legs (feet)
  for (int b : bodies) {
    const std::string& name = sim.model().body(b).name;
    EXPECT_TRUE(name.find("LOWER_LEG") != std::string::npos || name.find("FOOT") != std::string::npos) << name;
  }
}

// Scene errors name the scene file, the key path, the body and the reason.
TEST(StaticMeshContactTest, SceneMeshErrorsNameFileFieldAndReason) {
  const std::string terrain = write_terrain("small.obj", 2, 1.0, [](double, double) { return 0.0; });
  auto error = [](const std::string& yaml) {
    try {
      io::parse_scene(yaml, "mesh_scene.yaml", temp_dir().string());
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string missing = error("bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: mesh, file: nope.obj}]\n");
  for (const char* part : {"mesh_scene.yaml:4", "bodies[0].shapes[0].file", "'ground'", "nope.obj", "not found"})
    EXPECT_NE(missing.find(part), std::string::npos) << part << " in: " << missing;
  const std::string free_body = error("bodies:\n  - name: slab\n    mass: 1\n    shapes: [{type: mesh, file: small.obj, "
                                      "convex: false}]\n");
  for (const char* part : {"mesh_scene.yaml:4", "bodies[0].shapes[0].convex", "'slab'", "small.obj", "fixed: true"})
    EXPECT_NE(free_body.find(part), std::string::npos) << part << " in: " << free_body;
  write_text("flat_line.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
  const std::string degenerate = error("bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: mesh, file: "
                                       "flat_line.obj, convex: false}]\n");
  for (const char* part : {"bodies[0].shapes[0].file", "flat_line.obj", "degenerate"})
    EXPECT_NE(degenerate.find(part), std::string::npos) << part << " in: " << degenerate;
  const std::string bad_scale = error("bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: mesh, file: small.obj, "
                                      "scale: [1, 0, 1], convex: false}]\n");
  EXPECT_NE(bad_scale.find("bodies[0].shapes[0].scale"), std::string::npos) << bad_scale;
  // convex: true (the default) on a free body: its hull (the flat grid has none: degenerate).
  const std::string hull = error("bodies:\n  - name: b\n    mass: 1\n    shapes: [{type: mesh, file: small.obj}]\n");
  EXPECT_NE(hull.find("degenerate"), std::string::npos) << hull;
  // A closed mesh as a free body's hull loads; the relative path resolves against the scene's directory.
  write_text("tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  const scene::Scene ok = io::parse_scene("bodies:\n  - name: b\n    mass: 1\n    shapes: [{type: mesh, file: tet.obj, scale: 0.5}]\n",
                                          "ok.yaml", temp_dir().string());
  ASSERT_EQ(ok.geometries.size(), 1u);
  EXPECT_EQ(ok.geometries[0].shape.type, geometry::ShapeType::kConvexMesh);
  EXPECT_NEAR(ok.geometries[0].shape.volume(), 0.125 / 6.0, 1e-12);
}

}  // namespace
}  // namespace coulomb::testing
