// Collision meshes (geometry/mesh_loader.h): files written here (ASCII STL and OBJ) read by
// assimp, their convex hulls built by Qhull, checked against closed forms and against the
// primitive shapes they stand for; errors for missing, empty and flat meshes; a URDF with a mesh
// collision through the scene loader; and the Solo12 (STL meshes, ../shared/models) dropped on
// the ground.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "coulomb/geometry/mesh_loader.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/multibody/configuration.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/simulation/simulator.h"
#include "geometry/geometry_test_util.h"
#include "../../src/geometry/contact_manifold.h"  // internal: the walk against the full scan

namespace coulomb::testing {
namespace {

namespace fs = std::filesystem;
using geometry::MeshError;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("coulomb_mesh_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// An ASCII STL of the box [−a, a] × [−b, b] × [−c, c]: 12 triangles, outward.
std::string write_box_stl(const std::string& name, double a, double b, double c) {
  const fs::path p = temp_dir() / name;
  std::ofstream out(p);
  const Vector3 v[8] = {{-a, -b, -c}, {a, -b, -c}, {a, b, -c}, {-a, b, -c}, {-a, -b, c}, {a, -b, c}, {a, b, c}, {-a, b, c}};
  const int f[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                        {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};
  out << "solid box\n";
  for (const auto& t : f) {
    const Vector3 n = (v[t[1]] - v[t[0]]).cross(v[t[2]] - v[t[0]]).normalized();
    out << " facet normal " << n.x() << " " << n.y() << " " << n.z() << "\n  outer loop\n";
    for (int k = 0; k < 3; ++k) out << "   vertex " << v[t[k]].x() << " " << v[t[k]].y() << " " << v[t[k]].z() << "\n";
    out << "  endloop\n endfacet\n";
  }
  out << "endsolid box\n";
  return p.string();
}

std::string write_text(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

TEST(MeshLoaderTest, BoxStlBecomesTheBoxHull) {
  // Half sizes exact in single precision (assimp stores vertices as floats, as STL files do).
  const std::string file = write_box_stl("box.stl", 0.0625, 0.125, 0.25);
  geometry::MeshHullSource source;
  const Shape hull = geometry::load_convex_hull(file, Vector3(1, 1, 1), &source);
  EXPECT_EQ(hull.type, geometry::ShapeType::kConvexMesh);
  EXPECT_EQ(hull.vertices.size(), 8u);
  EXPECT_EQ(hull.triangles.size(), 12u);
  EXPECT_EQ(hull.mesh_file, file);
  EXPECT_EQ(source.mesh_triangles, 12);
  EXPECT_EQ(source.hull_vertices, 8);
  // Volume and inertia equal the box's (closed form through Shape::Box).
  const Shape box = Shape::Box(Vector3(0.125, 0.25, 0.5));
  EXPECT_NEAR(hull.volume(), 0.125 * 0.25 * 0.5, 1e-12);
  const auto hm = hull.mass_properties(1000.0), bm = box.mass_properties(1000.0);
  EXPECT_NEAR(hm.mass, bm.mass, 1e-9);
  EXPECT_LT((hm.I_o - bm.I_o).norm(), 1e-9);
  EXPECT_LT((hm.h - bm.h).norm(), 1e-9);
}

TEST(MeshLoaderTest, ScaleIsAppliedPerAxisAndHullsAreCached) {
  const std::string file = write_box_stl("unit.stl", 0.5, 0.5, 0.5);
  const Shape a = geometry::load_convex_hull(file, Vector3(2, 3, 4));
  EXPECT_NEAR(a.volume(), 24.0, 1e-12);
  double xmax = 0, ymax = 0, zmax = 0;
  for (const Vector3& v : a.vertices) xmax = std::max(xmax, v.x()), ymax = std::max(ymax, v.y()), zmax = std::max(zmax, v.z());
  EXPECT_DOUBLE_EQ(xmax, 1.0);
  EXPECT_DOUBLE_EQ(ymax, 1.5);
  EXPECT_DOUBLE_EQ(zmax, 2.0);
  // Cached: deleting the file does not matter for the same (path, scale).
  fs::remove(file);
  EXPECT_NEAR(geometry::load_convex_hull(file, Vector3(2, 3, 4)).volume(), 24.0, 1e-12);
  EXPECT_THROW(geometry::load_convex_hull(file, Vector3(1, 1, 1)), MeshError);
}

TEST(MeshLoaderTest, InteriorPointsAreNotHullVertices) {
  // A tetrahedron in OBJ with two points inside it (as faces that reference them).
  const std::string file = write_text("tet.obj",
                                      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 0.1 0.1 0.1\nv 0.2 0.1 0.05\n"
                                      "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\nf 5 6 1\n");
  const Shape hull = geometry::load_convex_hull(file);
  EXPECT_EQ(hull.vertices.size(), 4u);
  EXPECT_EQ(hull.triangles.size(), 4u);
  EXPECT_NEAR(hull.volume(), 1.0 / 6.0, 1e-12);
}

TEST(MeshLoaderTest, BadMeshesAreErrorsNamingFileAndReason) {
  auto message = [](const std::string& path) {
    try {
      geometry::load_convex_hull(path);
    } catch (const MeshError& e) {
      EXPECT_EQ(e.file(), path);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message((temp_dir() / "missing.stl").string()).find("no such file"), std::string::npos);
  EXPECT_NE(message(write_text("empty.stl", "")).find("empty"), std::string::npos);
  // A flat square (two triangles in z = 0): no solid.
  EXPECT_NE(message(write_text("flat.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n")).find("degenerate"),
            std::string::npos);
  EXPECT_NE(message(write_text("junk.stl", "this is not a mesh\n")).find("mesh"), std::string::npos);
}

// The acceptance's "a cube given as an STL must produce the same contacts as the box shape to
// 1e-9": a tilted cube resting on a half-space, and a cube on a box, as mesh and as box.
TEST(MeshLoaderTest, StlCubeHasTheBoxShapesContacts) {
  // Half size 1/16 m: exact in single precision, as the file's floats are.
  const Shape mesh = geometry::load_convex_hull(write_box_stl("cube.stl", 0.0625, 0.0625, 0.0625));
  const Shape box = Shape::Box(Vector3(0.125, 0.125, 0.125));
  for (const Transform& X : {at(0.01, 0.02, 0.0615), pose(rot_x(0.3) * rot_z(0.2), Vector3(0, 0, 0.075))}) {
    auto contacts = [&](const Shape& s, const Shape& other, const Transform& X_other) {
      FreeBodies fb(1);
      CollisionWorld world(fb.model, {make_geometry("floor", 0, other, X_other), make_geometry("cube", 1, s)});
      fb.set_pose(1, X);
      fb.apply(world);
      auto c = contacts_of(world);
      std::sort(c.begin(), c.end(), [](const ContactPoint& a, const ContactPoint& b) {
        return std::tie(a.p_W.x(), a.p_W.y(), a.p_W.z()) < std::tie(b.p_W.x(), b.p_W.y(), b.p_W.z());
      });
      return c;
    };
    for (const auto& [other, X_other] : {std::pair{Shape::HalfSpace(), Transform{}},
                                         std::pair{Shape::Box(Vector3(1, 1, 0.2)), at(0, 0, -0.1)}}) {
      const auto cm = contacts(mesh, other, X_other), cb = contacts(box, other, X_other);
      ASSERT_EQ(cm.size(), cb.size());
      ASSERT_GT(cm.size(), 0u);
      for (size_t i = 0; i < cm.size(); ++i) {
        EXPECT_NEAR(cm[i].phi, cb[i].phi, 1e-9);
        EXPECT_LT((cm[i].p_W - cb[i].p_W).norm(), 1e-9);
        EXPECT_LT((cm[i].n_W - cb[i].n_W).norm(), 1e-9);
      }
    }
  }
}

TEST(MeshLoaderTest, UrdfMeshCollisionThroughTheSceneLoader) {
  const std::string stl = write_box_stl("link.stl", 0.05, 0.05, 0.05);
  auto urdf = [&](const std::string& mesh) {
    return write_text("mesh_robot.urdf",
                      "<robot name=\"r\"><link name=\"base\"><inertial><mass value=\"1\"/>"
                      "<inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
                      "<collision><geometry><mesh filename=\"" + mesh + "\" scale=\"1 1 2\"/></geometry></collision>"
                      "</link></robot>\n");
  };
  const std::string path = urdf(stl);
  const scene::Scene scene = io::parse_scene("robots:\n  - urdf: " + path + "\n    floating: true\n    position: [0, 0, 1]\n");
  ASSERT_EQ(scene.geometries.size(), 1u);
  EXPECT_EQ(scene.geometries[0].shape.type, geometry::ShapeType::kConvexMesh);
  EXPECT_NEAR(scene.geometries[0].shape.volume(), 0.1 * 0.1 * 0.2, 1e-9);  // the file's floats
  // A flat mesh: an error naming the URDF, the link, the file and why.
  const std::string flat = write_text("flat2.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n");
  const std::string bad = urdf(flat);
  try {
    io::parse_scene("robots:\n  - urdf: " + bad + "\n");
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(bad), std::string::npos) << m;
    EXPECT_NE(m.find("base"), std::string::npos) << m;
    EXPECT_NE(m.find("flat2.obj"), std::string::npos) << m;
    EXPECT_NE(m.find("degenerate"), std::string::npos) << m;
  }
}

// The Solo12 (STL collision meshes) dropped from 0.3 m with folded legs lands on its feet' hulls:
// no contact deeper than 1 mm at any step, 4–8 points per touching foot, the base at rest above
// the ground after 2 s.
TEST(MeshLoaderTest, Solo12LandsOnItsMeshFeet) {
  scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/solo12_drop.yaml");
  int hulls = 0;
  for (const Geometry& g : scene.geometries) hulls += g.shape.type == geometry::ShapeType::kConvexMesh;
  EXPECT_GE(hulls, 16);
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  simulation::Simulator sim(std::move(scene), p);
  double deepest = 0.0;
  while (sim.time() < 2.0 - 1e-9) {
    const simulation::StepStats& s = sim.step();
    deepest = std::max(deepest, s.max_penetration);
  }
  std::map<int, int> per_geometry;
  for (const simulation::ContactResult& c : sim.last_results().contacts) ++per_geometry[c.geometry_b];
  std::printf("Solo12 drop: deepest penetration %.3g m, base z %.4f m, %zu contacts on %zu geometries\n", deepest,
              sim.q()[2], sim.last_results().contacts.size(), per_geometry.size());
  EXPECT_LT(deepest, 1e-3);
  EXPECT_GT(sim.q()[2], 0.1);
  EXPECT_LT(sim.v().norm(), 0.05);
  EXPECT_EQ(per_geometry.size(), 4u);
  for (const auto& [g, n] : per_geometry) {
    EXPECT_GE(n, 3) << g;
    EXPECT_LE(n, 8) << g;
  }
}

}  // namespace
}  // namespace coulomb::testing

namespace coulomb::testing {
namespace {

// The walk on the hull's vertex graph (CollisionWorld's path for a mesh on a half-space) finds the
// same contacts as testing every vertex, at 2000 random poses of a real link's hull (the Solo12's
// lower leg, 287 vertices) near the plane, warm-started from the previous pose as in a simulation.
TEST(MeshLoaderTest, VertexWalkFindsTheSameContactsAsTheFullScan) {
  const std::string file = std::string(COULOMB_SHARED_DIR) +
                           "/models/example-robot-data/robots/solo_description/meshes/stl/with_foot/"
                           "solo_lower_leg_left_side.stl";
  const Shape hull = geometry::load_convex_hull(file);
  const geometry::internal::MeshAdjacency adjacency = geometry::internal::mesh_adjacency(hull);
  const geometry::internal::PlanarFace face = geometry::internal::halfspace_face(Transform{});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-3.2, 3.2), height(-0.01, 0.2);
  geometry::internal::ManifoldScratch s1, s2;
  std::vector<geometry::internal::PairContact> full, walk;
  int start = 0, touching = 0;
  for (int k = 0; k < 2000; ++k) {
    const Transform X = pose(rot_z(angle(rng)) * rot_y(angle(rng)) * rot_x(angle(rng)), Vector3(0.01, -0.02, height(rng)));
    full.clear();
    walk.clear();
    const int nf = geometry::internal::face_manifold(hull, X, face, 0.002, true, s1, full);
    const int nw = geometry::internal::face_manifold(hull, X, face, 0.002, true, s2, walk, &adjacency, &start);
    ASSERT_EQ(nf, nw) << "pose " << k;
    for (int i = 0; i < nf; ++i) {
      // The same vertices; heights computed as (Rᵀn)·v + n·c rather than n·(R v + c): equal to rounding.
      EXPECT_LT((full[static_cast<size_t>(i)].p_W - walk[static_cast<size_t>(i)].p_W).norm(), 1e-12) << "pose " << k;
      EXPECT_NEAR(full[static_cast<size_t>(i)].phi, walk[static_cast<size_t>(i)].phi, 1e-12) << "pose " << k;
    }
    touching += nf > 0;
  }
  EXPECT_GT(touching, 100);  // the poses do touch the plane
}

}  // namespace
}  // namespace coulomb::testing

namespace coulomb::testing {
namespace {

// Hull against hull and against a sphere, hand-computed: a 12.5 cm cube hull resting 1 mm deep
// on another (offset sideways), and a sphere of radius 5 cm 2 mm into its top face. Hull–hull
// gives one point today (FCL's EPA, the deepest), not a face manifold.
TEST(MeshLoaderTest, HullHullAndHullSphereDepthsAndNormals) {
  const Shape cube = geometry::load_convex_hull(write_box_stl("cube2.stl", 0.0625, 0.0625, 0.0625));
  {
    FreeBodies fb(2);
    CollisionWorld world(fb.model, {make_geometry("lower", 1, cube), make_geometry("upper", 2, cube)});
    fb.set_pose(1, at(0, 0, 0));
    fb.set_pose(2, at(0.03, 0.01, 0.125 - 0.001));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_GE(c.size(), 1u);
    std::printf("hull-hull: %zu contact points\n", c.size());
    for (const ContactPoint& p : c) {
      EXPECT_NEAR(p.phi, -0.001, 1e-9);
      EXPECT_LT((p.n_W - Vector3::UnitZ()).norm(), 1e-9);
      EXPECT_NEAR(p.p_W.z(), 0.0625 - 0.0005, 1e-9);
    }
  }
  {
    FreeBodies fb(2);
    CollisionWorld world(fb.model, {make_geometry("cube", 1, cube), make_geometry("ball", 2, Shape::Sphere(0.05))});
    fb.set_pose(1, at(0, 0, 0));
    fb.set_pose(2, at(0.01, -0.02, 0.0625 + 0.05 - 0.002));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    // FCL's GJK/EPA on a convex polytope: converged to its tolerance, not to round-off.
    EXPECT_NEAR(c[0].phi, -0.002, 1e-6);
    EXPECT_LT((c[0].n_W - Vector3::UnitZ()).norm(), 1e-5);
  }
}

}  // namespace
}  // namespace coulomb::testing

namespace coulomb::testing {
namespace {

// The contact Jacobian of a mesh robot by finite differences: the Solo12 resting on its hulls;
// for each contact, the velocity of the body-fixed point under J v equals the central difference
// of that point's world position along q ⊕ ±ε v (ε = 1e-6), for a random v.
TEST(MeshLoaderTest, ContactJacobianOfAMeshRobotMatchesFiniteDifferences) {
  scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/solo12_drop.yaml");
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  simulation::Simulator sim(scene, p);
  while (sim.time() < 1.0 - 1e-9) sim.step();
  const multibody::Model& model = sim.model();
  const Eigen::VectorXd q = sim.q();
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  CollisionWorld world(model, scene.geometries, scene.collision);
  world.update_poses(ws);
  contact::ContactSet set;
  contact::gather_contacts(world, scene.contact, set);
  ASSERT_GE(set.size(), 4);
  contact::ContactJacobian J;
  contact::contact_jacobian(model, ws, set, J);
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  Eigen::VectorXd v(model.nv());
  for (int i = 0; i < model.nv(); ++i) v[i] = normal(rng);
  Eigen::VectorXd Jv(3 * set.size());
  J.multiply(v, Jv);
  const double eps = 1e-6;
  Eigen::VectorXd qp(model.nq()), qm(model.nq());
  multibody::integrate(model, q, v, eps, qp);
  multibody::integrate(model, q, v, -eps, qm);
  multibody::Workspace wp(model), wm(model);
  multibody::forward_kinematics(model, wp, qp);
  multibody::forward_kinematics(model, wm, qm);
  double worst = 0.0;
  for (int i = 0; i < set.size(); ++i) {
    const contact::Contact& c = set.contacts[static_cast<size_t>(i)];
    // The point of body B at p_W (A is the ground): body-fixed coordinates, moved with q.
    const Vector3 p_B = ws.X_WB[static_cast<size_t>(c.body_b)].inverse().act(c.p_W);
    const Vector3 fd = (wp.X_WB[static_cast<size_t>(c.body_b)].act(p_B) - wm.X_WB[static_cast<size_t>(c.body_b)].act(p_B)) / (2 * eps);
    const Vector3 fd_C = c.R_WC.transpose() * fd;
    worst = std::max(worst, (fd_C - Jv.segment<3>(3 * i)).norm() / std::max(1.0, fd.norm()));
  }
  std::printf("Solo12 contact Jacobian: %d contacts, worst |J v − finite difference| %.2e\n", set.size(), worst);
  EXPECT_LT(worst, 1e-6);
}

}  // namespace
}  // namespace coulomb::testing

namespace coulomb::testing {
namespace {

double max_abs(const Eigen::VectorXd& x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }

// The example-robot-data Panda (STL collision hulls) under PD holds the ready pose with the static
// error of a PD against gravity: kp (target − q) = g(q) per joint, within 1 % of g/kp.
TEST(MeshLoaderTest, MeshPandaUnderPdHoldsItsPoseAgainstGravity) {
  scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/panda_mesh.yaml");
  const std::vector<scene::Actuator> actuators = scene.actuators;
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  simulation::Simulator sim(scene, p);
  while (sim.time() < 4.0 - 1e-9) sim.step();
  EXPECT_LT(max_abs(sim.v()), 1e-4);
  multibody::Workspace ws(sim.model());
  const Eigen::VectorXd g = multibody::rnea(sim.model(), ws, sim.q(), Eigen::VectorXd::Zero(sim.model().nv()),
                                            Eigen::VectorXd::Zero(sim.model().nv()));
  int checked = 0;
  for (const scene::Actuator& a : actuators) {
    if (a.joint.find("finger") != std::string::npos) continue;
    const double expected = g[a.v_index] / a.kp;
    const double error = a.q_target - sim.q()[a.q_index];
    std::printf("%s: error %.6g rad, g/kp %.6g rad\n", a.joint.c_str(), error, expected);
    if (std::abs(g[a.v_index]) < 0.5) continue;
    EXPECT_NEAR(error, expected, 0.01 * std::abs(expected)) << a.joint;
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

// The UR5 (STL collision hulls), limp, folds under gravity onto the ground and comes to rest
// there: at rest after 3 s, touching the ground, less than 1 mm deep.
TEST(MeshLoaderTest, LimpUr5ComesToRestOnTheGround) {
  scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/ur5.yaml");
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  simulation::Simulator sim(scene, p);
  double deepest = 0.0;
  while (sim.time() < 3.0 - 1e-9) deepest = std::max(deepest, sim.step().max_penetration);
  int ground = 0;
  for (const simulation::ContactResult& c : sim.last_results().contacts) ground += c.body_a == 0 || c.body_b == 0;
  const double resting = sim.last_step().max_penetration;
  std::printf("UR5: deepest %.3g m (impact), resting %.3g m, |v| max %.3g, %d ground contacts at 3 s\n", deepest,
              resting, max_abs(sim.v()), ground);
  // The scene's contact is compliant (k = 1e5 N/m per point): the impact sinks a few millimetres.
  EXPECT_LT(deepest, 5e-3);
  EXPECT_LT(resting, 1e-3);
  EXPECT_LT(max_abs(sim.v()), 0.05);
  EXPECT_GT(ground, 0);
}

}  // namespace
}  // namespace coulomb::testing
