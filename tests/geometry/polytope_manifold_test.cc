// Contact manifolds of convex hulls against boxes, hulls, capsules and cylinders (issue 14):
// face points by clipping (geometry/contact_manifold.h, polytope_manifold and
// polytope_face_along). The truths are independent of the hull code: a hull of a box's corners
// must touch as the box shape does (box_box_manifold, a separate SAT implementation), and a
// capsule or cylinder on a hull face as it does on a half-space at the face's height; stacks of
// hull cubes under SAP come to rest at the heights the box stack reaches, without rocking.
#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>

#include "coulomb/geometry/mesh_loader.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"
#include "geometry/geometry_test_util.h"

namespace coulomb::testing {
namespace {

// The convex hull (Qhull) of the box's 8 corners, optionally each jittered by up to `noise` [m].
Shape hull_box(const Vector3& size, double noise = 0.0, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vector3> corners;
  for (int i = 0; i < 8; ++i) {
    const Vector3 c(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    corners.push_back(c.cwiseProduct(size) + noise * Vector3(u(rng), u(rng), u(rng)));
  }
  return geometry::convex_hull(corners, "test box corners");
}

std::vector<ContactPoint> sorted_contacts(const Shape& a, const Transform& X_a, const Shape& b, const Transform& X_b) {
  FreeBodies fb(2);
  CollisionWorld world(fb.model, {make_geometry("a", 1, a), make_geometry("b", 2, b)});
  fb.set_pose(1, X_a);
  fb.set_pose(2, X_b);
  fb.apply(world);
  auto c = contacts_of(world);
  std::sort(c.begin(), c.end(), [](const ContactPoint& x, const ContactPoint& y) {
    return std::tie(x.p_W.x(), x.p_W.y(), x.p_W.z()) < std::tie(y.p_W.x(), y.p_W.y(), y.p_W.z());
  });
  return c;
}

// Same contact set: every wanted point has a distinct got point within tol (points are matched
// by position, since sorting by coordinates is not robust to round-off ties).
void expect_same_contacts(const std::vector<ContactPoint>& got, const std::vector<ContactPoint>& want, double tol,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::vector<char> used(got.size(), 0);
  for (size_t i = 0; i < want.size(); ++i) {
    size_t best = got.size();
    double best_d = 1e300;
    for (size_t j = 0; j < got.size(); ++j) {
      const double d = (got[j].p_W - want[i].p_W).norm();
      if (!used[j] && d < best_d) best_d = d, best = j;
    }
    ASSERT_LT(best, got.size()) << what;
    used[best] = 1;
    EXPECT_LT(best_d, tol) << what << " point " << i;
    EXPECT_NEAR(got[best].phi, want[i].phi, tol) << what << " point " << i;
    EXPECT_LT((got[best].n_W - want[i].n_W).norm(), tol) << what << " point " << i;
  }
}

// Poses of the upper body (b) over the lower one (a, at the origin): face on face, offset,
// rotated about the vertical, slightly and strongly tilted (a corner or an edge down).
std::vector<Transform> upper_poses(double half_height_sum, double depth) {
  const double z = half_height_sum - depth;
  return {at(0.0, 0.0, z),
          at(0.03, -0.02, z),
          pose(rot_z(0.7), Vector3(0.01, 0.02, z)),
          pose(rot_z(M_PI / 4), Vector3(0.0, 0.0, z)),
          pose(rot_x(1e-3), Vector3(0.0, 0.01, z)),
          pose(rot_x(0.3) * rot_y(0.2), Vector3(0.0, 0.0, z + 0.02))};
}

TEST(PolytopeManifoldTest, HullOfABoxTouchesAsTheBoxDoes) {
  // Pairs of sizes: the upper smaller, equal, larger than the lower; each pair with every pose,
  // as (hull, box), (box, hull) and (hull, hull), against box–box as the truth.
  const std::vector<std::pair<Vector3, Vector3>> sizes = {
      {Vector3(0.4, 0.3, 0.1), Vector3(0.1, 0.12, 0.08)},
      {Vector3(0.1, 0.1, 0.1), Vector3(0.1, 0.1, 0.1)},
      {Vector3(0.1, 0.08, 0.05), Vector3(0.3, 0.25, 0.06)}};
  int compared = 0, multi = 0;
  for (const auto& [lower, upper] : sizes) {
    for (const Transform& X_up : upper_poses(0.5 * (lower.z() + upper.z()), 1e-3)) {
      const auto truth = sorted_contacts(Shape::Box(lower), {}, Shape::Box(upper), X_up);
      ASSERT_FALSE(truth.empty());
      const std::string what = "lower " + std::to_string(lower.x()) + " upper " + std::to_string(upper.x()) +
                               " at z " + std::to_string(X_up.p.z());
      expect_same_contacts(sorted_contacts(hull_box(lower), {}, Shape::Box(upper), X_up), truth, 1e-9,
                           what + " (hull, box)");
      expect_same_contacts(sorted_contacts(Shape::Box(lower), {}, hull_box(upper), X_up), truth, 1e-9,
                           what + " (box, hull)");
      if (truth.size() > 1) {
        // Hull–hull: FCL's GJK/EPA normal picks the faces; the clipped points are exact.
        expect_same_contacts(sorted_contacts(hull_box(lower), {}, hull_box(upper), X_up), truth, 1e-9,
                             what + " (hull, hull)");
        ++multi;
      }
      ++compared;
    }
  }
  std::printf("[ measured ] %d hull/box poses equal box-box to 1e-9 (%d with several points)\n", compared, multi);
  EXPECT_GE(multi, 10);
}

TEST(PolytopeManifoldTest, OctagonOfTwoSquaresAt45Degrees) {
  // Two equal hull cubes, the upper turned 45° about z: the overlap of the faces is a regular
  // octagon; its 8 vertices are the contact points, at the analytic positions.
  const double h = 0.05, depth = 2e-4;
  const auto c = sorted_contacts(hull_box(Vector3::Constant(2 * h)), {}, hull_box(Vector3::Constant(2 * h)),
                                 pose(rot_z(M_PI / 4), Vector3(0, 0, 2 * h - depth)));
  ASSERT_EQ(c.size(), 8u);
  const double r_side = h, r_corner = h * std::sqrt(2.0);
  for (const ContactPoint& p : c) {
    EXPECT_NEAR(p.phi, -depth, 1e-12);
    EXPECT_LT((p.n_W - Vector3::UnitZ()).norm(), 1e-12);
    EXPECT_NEAR(p.p_W.z(), h - 0.5 * depth, 1e-12);
    // Each vertex lies on a side of one square (|x| or |y| = h) and a side of the other
    // (|x ± y| = h√2).
    const double x = std::abs(p.p_W.x()), y = std::abs(p.p_W.y());
    EXPECT_NEAR(std::max(x, y), r_side, 1e-12);
    EXPECT_NEAR(x + y, r_corner, 1e-12);
  }
}

TEST(PolytopeManifoldTest, FloatNoiseInAnStlStillGivesOneFacePerSide) {
  // Corners jittered by 1e-7 m (float32 STL noise on a 10 cm box): the hull's triangles of one
  // side are not exactly coplanar, but merge into one face, so a box resting on it still gets
  // 4 corner points (not one point per triangle, not a single FCL point).
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const Shape lower = hull_box(Vector3(0.3, 0.3, 0.1), 1e-7, seed);
    const auto c = sorted_contacts(lower, {}, Shape::Box(Vector3(0.1, 0.1, 0.1)), at(0.01, 0.0, 0.1 - 1e-3));
    ASSERT_EQ(c.size(), 4u) << "seed " << seed;
    for (const ContactPoint& p : c) {
      EXPECT_NEAR(p.phi, -1e-3, 3e-7);
      EXPECT_LT((p.n_W - Vector3::UnitZ()).norm(), 1e-5);
    }
  }
}

TEST(PolytopeManifoldTest, ManySidedHullIsReducedToEightSpreadPoints) {
  // A 32-sided prism standing on a box: 32 rim vertices touch; 8 are kept — the deepest and the
  // extremes along 8 directions — so the support polygon spans the whole disc.
  const double r = 0.05, depth = 1e-3;
  const Shape pillar = prism(32, r, 0.1);
  for (const Transform& X : {at(0.0, 0.0, 0.05 + 0.05 - depth), pose(rot_x(2e-3), Vector3(0, 0, 0.1 - depth))}) {
    const auto c = sorted_contacts(Shape::Box(Vector3(0.5, 0.5, 0.1)), {}, pillar, X);
    ASSERT_EQ(c.size(), 8u);
    Vector3 lo = Vector3::Constant(1.0), hi = Vector3::Constant(-1.0);
    for (const ContactPoint& p : c) {
      lo = lo.cwiseMin(p.p_W);
      hi = hi.cwiseMax(p.p_W);
      EXPECT_NEAR(std::hypot(p.p_W.x(), p.p_W.y()), r, 3e-3 * r);  // the 2 mrad tilt shifts the rim 1e-4 m
      EXPECT_LT(p.phi, 0.0);
    }
    EXPECT_NEAR(hi.x() - lo.x(), 2 * r, 1e-9);
    EXPECT_GT(hi.y() - lo.y(), 1.9 * r);
  }
}

TEST(PolytopeManifoldTest, CapsuleAndCylinderOnAHullFaceAsOnAPlane) {
  // A capsule lying and a cylinder standing on the top face of a hull slab touch as they touch
  // the half-space through that face (same points, normals and depths), as long as the points
  // fall on the face.
  const double top = 0.05;
  const Shape slab = hull_box(Vector3(0.6, 0.5, 0.1));
  const Transform X_plane = at(0, 0, top);
  struct Case {
    Shape shape;
    Transform X;
    size_t points;
  };
  const std::vector<Case> cases = {
      {Shape::Capsule(0.02, 0.2), pose(rot_y(M_PI / 2) * rot_x(1e-3), Vector3(0.05, 0.02, top + 0.02 - 5e-4)), 2},
      {Shape::Cylinder(0.04, 0.1), pose(rot_x(2e-3), Vector3(-0.1, 0.1, top + 0.05 - 5e-4)), 8},
      {Shape::Cylinder(0.04, 0.3), pose(rot_x(M_PI / 2) * rot_y(1e-3), Vector3(0.0, 0.0, top + 0.04 - 5e-4)), 2}};
  for (const Case& k : cases) {
    const auto on_hull = sorted_contacts(slab, {}, k.shape, k.X);
    const auto on_plane = sorted_contacts(Shape::HalfSpace(), X_plane, k.shape, k.X);
    EXPECT_EQ(on_hull.size(), k.points) << geometry::shape_type_name(k.shape.type);
    expect_same_contacts(on_hull, on_plane, 1e-9, geometry::shape_type_name(k.shape.type));
  }
  // Off the face's edge: only the part over the face touches it (the capsule's far end hangs
  // beyond x = 0.3 and leaves its one point on the face).
  const auto hanging = sorted_contacts(slab, {}, Shape::Capsule(0.02, 0.2),
                                       pose(rot_y(M_PI / 2), Vector3(0.3, 0.0, top + 0.02 - 5e-4)));
  ASSERT_GE(hanging.size(), 1u);
  for (const ContactPoint& p : hanging) EXPECT_LE(p.p_W.x(), 0.3 + 1e-9);
}

// A YAML convex_mesh shape of the hull of a box with full edge lengths `size`.
std::string convex_mesh_yaml(const Vector3& size) {
  const Shape s = hull_box(size);
  std::ostringstream out;
  out.precision(17);
  out << "{type: convex_mesh, vertices: [";
  for (size_t i = 0; i < s.vertices.size(); ++i)
    out << (i ? ", " : "") << "[" << s.vertices[i].x() << ", " << s.vertices[i].y() << ", " << s.vertices[i].z() << "]";
  out << "], triangles: [";
  for (size_t i = 0; i < s.triangles.size(); ++i)
    out << (i ? ", " : "") << "[" << s.triangles[i][0] << ", " << s.triangles[i][1] << ", " << s.triangles[i][2] << "]";
  out << "]}";
  return out.str();
}

TEST(PolytopeManifoldTest, StackOfHullCubesRestsLikeTheBoxStack) {
  // Three 10 cm cubes stacked on a slab, given as hulls and as boxes, with the upper two turned
  // about the vertical: both stacks come to rest at the same heights (the compliant sinking of
  // 4–8 points per interface), without rocking.
  auto stack = [&](bool hulls) {
    const std::string cube = hulls ? convex_mesh_yaml(Vector3::Constant(0.1)) : "{type: box, size: [0.1, 0.1, 0.1]}";
    const std::string slab = hulls ? convex_mesh_yaml(Vector3(1, 1, 0.1)) : "{type: box, size: [1, 1, 0.1]}";
    std::string yaml = "time_step: 0.005\nbodies:\n  - {name: slab, fixed: true, position: [0, 0, -0.05], shapes: [" +
                       slab + "]}\n";
    const double yaw[3] = {0.0, 0.4, 0.785};
    for (int i = 0; i < 3; ++i)
      yaml += "  - {name: c" + std::to_string(i) + ", mass: 1, position: [0, 0, " + std::to_string(0.05 + 0.1 * i) +
              "], rpy: [0, 0, " + std::to_string(yaw[i]) + "], shapes: [" + cube + "]}\n";
    scene::Scene scene = io::parse_scene(yaml, hulls ? "hull_stack" : "box_stack");
    simulation::SimulatorParameters p;
    p.time_step = scene.time_step;
    simulation::Simulator sim(scene, p);
    double max_w_late = 0.0;
    while (sim.time() < 2.0 - 1e-9) {
      sim.step();
      if (sim.time() > 1.5)
        for (int b = 0; b < 3; ++b) max_w_late = std::max(max_w_late, sim.v().segment<3>(6 * b).norm());
    }
    std::vector<double> z;
    for (int b = 0; b < 3; ++b) z.push_back(sim.q()[7 * b + 2]);
    return std::pair{z, max_w_late};
  };
  const auto [z_hull, w_hull] = stack(true);
  const auto [z_box, w_box] = stack(false);
  std::printf("[ measured ] stack heights hulls %.9f %.9f %.9f, boxes %.9f %.9f %.9f; late |w| %.2e / %.2e rad/s\n",
              z_hull[0], z_hull[1], z_hull[2], z_box[0], z_box[1], z_box[2], w_hull, w_box);
  for (int b = 0; b < 3; ++b) EXPECT_NEAR(z_hull[b], z_box[b], 1e-7) << "cube " << b;
  EXPECT_LT(w_hull, 1e-4);
  EXPECT_LT(w_box, 1e-4);
}

}  // namespace
}  // namespace coulomb::testing
