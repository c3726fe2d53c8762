// CollisionWorld: FCL conventions (normal direction, nearest-point frame, point midway between
// the surfaces), margin, broadphase, filters and determinism.
#include "coulomb/geometry/collision_world.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <tuple>

#include <gtest/gtest.h>

#include "geometry/geometry_test_util.h"

namespace coulomb::testing {
namespace {

using geometry::CollisionOptions;

void expect_vec_near(const Vector3& a, const Vector3& b, double tol) {
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), tol) << "got " << a.transpose() << ", expected " << b.transpose();
}

TEST(CollisionWorldTest, DefaultMarginIsTwoMillimetres) {
  EXPECT_EQ(CollisionOptions{}.margin, 2e-3);
  FreeBodies fb(1);
  CollisionWorld world(fb.model, {make_geometry("ball", 1, Shape::Sphere(0.1))});
  EXPECT_EQ(world.options().margin, 2e-3);
}

// Sphere (radius 0.1) over the ground half-space (index 0, on the world).
struct SpherePlane : ::testing::Test {
  FreeBodies fb{1};
  CollisionWorld world{fb.model, {make_geometry("ground", 0, Shape::HalfSpace()), make_geometry("ball", 1, Shape::Sphere(0.1))}};
  std::vector<ContactPoint> at_height(double z) {
    fb.set_pose(1, at(0.3, -0.2, z));
    fb.apply(world);
    return contacts_of(world);
  }
};

TEST_F(SpherePlane, Penetrating) {
  const auto c = at_height(0.1 - 0.01);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].geometry_a, 0);
  EXPECT_EQ(c[0].geometry_b, 1);
  EXPECT_NEAR(c[0].phi, -0.01, 1e-15);
  expect_vec_near(c[0].n_W, Vector3::UnitZ(), 0.0);  // out of the half-space into the ball
  expect_vec_near(c[0].p_W, Vector3(0.3, -0.2, -0.005), 1e-15);
}

TEST_F(SpherePlane, WithinMarginReportedBeyondNot) {
  auto c = at_height(0.1 + 0.001);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].phi, 0.001, 1e-15);
  expect_vec_near(c[0].p_W, Vector3(0.3, -0.2, 0.0005), 1e-15);
  EXPECT_EQ(at_height(0.1 + 0.0021).size(), 0u);
  EXPECT_EQ(at_height(0.1 + 0.5).size(), 0u);
}

TEST_F(SpherePlane, DeepOverlap) {
  const auto c = at_height(0.02);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].phi, -0.08, 1e-15);
  expect_vec_near(c[0].p_W, Vector3(0.3, -0.2, -0.04), 1e-15);
  // Centre below the surface.
  const auto d = at_height(-0.05);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NEAR(d[0].phi, -0.15, 1e-15);
}

TEST(CollisionWorldTest, HalfSpaceAsGeometryBFlipsTheNormal) {
  FreeBodies fb(1);
  // Tilted plane: rotate the half-space 0.3 rad about x, on the world body, listed second.
  const Transform X_WP = pose(rot_x(0.3), Vector3(0, 0, 0.1));
  CollisionWorld world(fb.model, {make_geometry("ball", 1, Shape::Sphere(0.1)), make_geometry("slope", 0, Shape::HalfSpace(), X_WP)});
  const Vector3 n_plane = X_WP.R.col(2);
  fb.set_pose(1, pose(Matrix3::Identity(), X_WP.p + 0.095 * n_plane));
  fb.apply(world);
  const auto c = contacts_of(world);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].geometry_a, 0);
  EXPECT_EQ(c[0].geometry_b, 1);
  EXPECT_NEAR(c[0].phi, -0.005, 1e-15);
  expect_vec_near(c[0].n_W, -n_plane, 1e-15);  // from the ball (A) into the half-space (B)
  expect_vec_near(c[0].p_W, X_WP.p - 0.0025 * n_plane, 1e-15);
}

// FCL convention: Contact::normal points from o1 into o2, and we pass A as o1. Check with the
// geometries listed in both orders: n_W must always point from the lower index into the
// higher.
TEST(CollisionWorldTest, SphereSphereNormalFromAIntoB) {
  for (bool swap : {false, true}) {
    FreeBodies fb(2);
    std::vector<Geometry> g = {make_geometry("small", 1, Shape::Sphere(0.1)), make_geometry("big", 2, Shape::Sphere(0.2))};
    if (swap) std::swap(g[0], g[1]);
    CollisionWorld world(fb.model, g);
    fb.set_pose(1, at(0, 0, 1));
    fb.set_pose(2, at(0.25, 0, 1));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, -0.05, 1e-12);
    // Surfaces at x = 0.1 (small) and x = 0.05 (big): midway 0.075.
    expect_vec_near(c[0].p_W, Vector3(0.075, 0, 1), 1e-12);
    expect_vec_near(c[0].n_W, swap ? Vector3(-1, 0, 0) : Vector3(1, 0, 0), 1e-12);
  }
}

TEST(CollisionWorldTest, ExcludedBodyPairsNeverCollide) {
  // Three overlapping spheres on free bodies 1, 2, 3; the pair (3, 1) excluded (either order).
  FreeBodies fb(3);
  CollisionOptions options;
  options.excluded_body_pairs = {{3, 1}};
  CollisionWorld world(fb.model,
                       {make_geometry("a", 1, Shape::Sphere(0.1)), make_geometry("b", 2, Shape::Sphere(0.1)),
                        make_geometry("c", 3, Shape::Sphere(0.1))},
                       options);
  EXPECT_TRUE(world.can_collide(0, 1));
  EXPECT_TRUE(world.can_collide(1, 2));
  EXPECT_FALSE(world.can_collide(0, 2));
  EXPECT_FALSE(world.can_collide(2, 0));
  fb.set_pose(1, at(0, 0, 1));
  fb.set_pose(2, at(0.15, 0, 1));
  fb.set_pose(3, at(0.05, 0.05, 1));
  fb.apply(world);
  for (const auto& c : contacts_of(world)) EXPECT_FALSE(c.geometry_a == 0 && c.geometry_b == 2);
  EXPECT_FALSE(contacts_of(world).empty());
  // A body index outside the model is an error naming the pair.
  options.excluded_body_pairs = {{1, 9}};
  try {
    CollisionWorld bad(fb.model, {make_geometry("a", 1, Shape::Sphere(0.1))}, options);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(1, 9)"), std::string::npos) << e.what();
  }
}

TEST(CollisionWorldTest, SphereSphereWithinMarginUsesDistance) {
  FreeBodies fb(2);
  CollisionWorld world(fb.model, {make_geometry("a", 1, Shape::Sphere(0.1)), make_geometry("b", 2, Shape::Sphere(0.2))});
  const Vector3 dir = Vector3(1, 2, -2) / 3.0;
  fb.set_pose(1, at(5, -3, 2));
  fb.set_pose(2, pose(Matrix3::Identity(), Vector3(5, -3, 2) + (0.3 + 0.0015) * dir));
  fb.apply(world);
  auto c = contacts_of(world);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].phi, 0.0015, 1e-9);
  expect_vec_near(c[0].n_W, dir, 1e-9);
  expect_vec_near(c[0].p_W, Vector3(5, -3, 2) + (0.1 + 0.00075) * dir, 1e-9);
  // Beyond the margin: the broadphase may pair them (boxes are grown by the margin) but no
  // point is reported.
  fb.set_pose(2, pose(Matrix3::Identity(), Vector3(5, -3, 2) + (0.3 + 0.0025) * dir));
  fb.apply(world);
  EXPECT_TRUE(contacts_of(world).empty());
}

// FCL 0.7 documents DistanceResult::nearest_points "in the world coordinates" (some older
// versions returned them in each object's local frame). Both objects far from the origin and
// rotated: a local-frame answer would be off by metres.
TEST(CollisionWorldTest, NearestPointsAreInTheWorldFrame) {
  const Transform X_WA = pose(rot_z(std::numbers::pi / 6) * rot_x(0.2), Vector3(3, -2, 1));
  {
    // Sphere 1 mm beyond the +x face of a box (FCL's sphere–box routine).
    FreeBodies fb(2);
    CollisionWorld world(fb.model, {make_geometry("box", 1, Shape::Box(Vector3(0.2, 0.2, 0.2))),
                                    make_geometry("ball", 2, Shape::Sphere(0.05))});
    fb.set_pose(1, X_WA);
    fb.set_pose(2, X_WA * at(0.1 + 0.001 + 0.05, 0.02, 0.03));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, 0.001, 1e-9);
    expect_vec_near(c[0].n_W, X_WA.R.col(0), 1e-9);
    expect_vec_near(c[0].p_W, X_WA.act(Vector3(0.1005, 0.02, 0.03)), 1e-9);
  }
  {
    // Two crossed cylinders (GJK): B's axis along A's x, its side 1 mm from A's side.
    FreeBodies fb(2);
    CollisionWorld world(fb.model, {make_geometry("a", 1, Shape::Cylinder(0.1, 0.4)),
                                    make_geometry("b", 2, Shape::Cylinder(0.05, 0.3))});
    fb.set_pose(1, X_WA);
    fb.set_pose(2, X_WA * pose(rot_y(std::numbers::pi / 2), Vector3(0, 0.1 + 0.001 + 0.05, 0.05)));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, 0.001, 1e-6);
    expect_vec_near(c[0].n_W, X_WA.R.col(1), 1e-4);
    expect_vec_near(c[0].p_W, X_WA.act(Vector3(0, 0.1005, 0.05)), 1e-5);
  }
}

// FCL's Contact::pos is not midway between the surfaces for every algorithm (GJK/EPA and the
// sphere–capsule routine put it elsewhere); the world moves it onto the mid-plane.
TEST(CollisionWorldTest, PenetrationPointIsMidwayBetweenSurfaces) {
  {
    FreeBodies fb(2);
    CollisionWorld world(fb.model, {make_geometry("ball", 1, Shape::Sphere(0.5)), make_geometry("capsule", 2, Shape::Capsule(0.2, 1.0))});
    fb.set_pose(1, at(0, 0, 0));
    fb.set_pose(2, at(0, 0.6, 0.1));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, -0.1, 1e-9);
    expect_vec_near(c[0].n_W, Vector3::UnitY(), 1e-9);
    EXPECT_NEAR(c[0].p_W.y(), 0.45, 1e-9);  // ball surface at 0.5, capsule surface at 0.4
  }
  {
    // Two upright cylinders side by side (GJK/EPA): overlap 0.05 along y.
    FreeBodies fb(2);
    CollisionWorld world(fb.model, {make_geometry("c1", 1, Shape::Cylinder(0.3, 0.4)), make_geometry("c2", 2, Shape::Cylinder(0.3, 0.4))});
    fb.set_pose(1, at(0, 0, 0));
    fb.set_pose(2, at(0, 0.55, 0.05));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, -0.05, 1e-4);
    expect_vec_near(c[0].n_W, Vector3::UnitY(), 3e-3);  // libccd EPA on cylinders: ~1e-3 rad
    EXPECT_NEAR(c[0].p_W.y(), 0.275, 1e-4);
  }
}

TEST(CollisionWorldTest, SphereBoxBothOrders) {
  for (bool swap : {false, true}) {
    FreeBodies fb(2);
    std::vector<Geometry> g = {make_geometry("box", 1, Shape::Box(Vector3(1, 1, 1))), make_geometry("ball", 2, Shape::Sphere(0.5))};
    if (swap) std::swap(g[0], g[1]);
    CollisionWorld world(fb.model, g);
    fb.set_pose(1, at(10, 0, 0));
    fb.set_pose(2, at(10.9, 0.1, -0.2));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, -0.1, 1e-9);
    expect_vec_near(c[0].n_W, swap ? Vector3(-1, 0, 0) : Vector3(1, 0, 0), 1e-9);
    expect_vec_near(c[0].p_W, Vector3(10.45, 0.1, -0.2), 1e-9);
  }
}

// Sphere–box (the analytic routine): near an edge and a corner the normal points from the
// closest edge/corner point to the centre; a centre inside the box leaves through the nearest
// face; separated within the margin gives φ > 0; beyond it nothing. Box rotated and far from
// the origin, both orders.
TEST(CollisionWorldTest, SphereBoxEdgesCornersAndInside) {
  const Transform X_WB = pose(rot_z(0.4) * rot_x(-0.3), Vector3(-2, 3, 1));
  struct Case {
    Vector3 p_BS;       // sphere centre in the box frame
    double phi;         // expected
    Vector3 n_B;        // expected normal (box into sphere), box frame
    Vector3 surface_B;  // expected box surface point, box frame
  };
  const double r = 0.05, s2 = std::sqrt(0.5), s3 = std::sqrt(1.0 / 3.0);
  const std::vector<Case> cases = {
      {Vector3(0.1 + 0.03 * s2, 0.2 + 0.03 * s2, 0.0), 0.03 - r, Vector3(s2, s2, 0), Vector3(0.1, 0.2, 0.0)},  // edge
      {Vector3(0.1, 0.2, 0.3) + 0.051 * s3 * Vector3(1, 1, 1), 0.001, Vector3(s3, s3, s3), Vector3(0.1, 0.2, 0.3)},  // corner
      {Vector3(0.02, -0.19, 0.1), -0.01 - r, Vector3(0, -1, 0), Vector3(0.02, -0.2, 0.1)},  // centre inside, nearest face −y
      {Vector3(0.0, 0.0, -0.33), -0.02, Vector3(0, 0, -1), Vector3(0.0, 0.0, -0.3)},        // face, penetrating
  };
  for (bool swap : {false, true}) {
    for (const Case& k : cases) {
      SCOPED_TRACE(k.p_BS.transpose());
      FreeBodies fb(2);
      std::vector<Geometry> g = {make_geometry("box", 1, Shape::Box(Vector3(0.2, 0.4, 0.6))), make_geometry("ball", 2, Shape::Sphere(r))};
      if (swap) std::swap(g[0], g[1]);
      CollisionWorld world(fb.model, g);
      fb.set_pose(1, X_WB);  // the box rides on body 1 in both orders
      fb.set_pose(2, pose(Matrix3::Identity(), X_WB.act(k.p_BS)));
      fb.apply(world);
      const auto c = contacts_of(world);
      ASSERT_EQ(c.size(), 1u);
      EXPECT_NEAR(c[0].phi, k.phi, 1e-12);
      const Vector3 n_W = X_WB.R * k.n_B;
      expect_vec_near(c[0].n_W, swap ? Vector3(-n_W) : n_W, 1e-12);
      const Vector3 mid = 0.5 * (X_WB.act(k.surface_B) + X_WB.act(k.p_BS) - r * n_W);
      expect_vec_near(c[0].p_W, mid, 1e-12);
    }
  }
  // Beyond the default margin (2 mm): a corner 3 mm away reports nothing.
  FreeBodies fb(2);
  CollisionWorld world(fb.model, {make_geometry("box", 1, Shape::Box(Vector3(0.2, 0.4, 0.6))), make_geometry("ball", 2, Shape::Sphere(r))});
  fb.set_pose(1, X_WB);
  fb.set_pose(2, pose(Matrix3::Identity(), X_WB.act(Vector3(0.1, 0.2, 0.3) + (r + 0.003) * s3 * Vector3(1, 1, 1))));
  fb.apply(world);
  EXPECT_TRUE(contacts_of(world).empty());
}

TEST(CollisionWorldTest, ConvexMeshAgainstSphereUsesFcl) {
  // A 0.2 m cube given as a mesh (square prism turned 45° so its faces are axis-aligned).
  FreeBodies fb(2);
  CollisionWorld world(fb.model, {make_geometry("cube", 1, prism(4, 0.1 * std::sqrt(2.0), 0.2), pose(rot_z(std::numbers::pi / 4), Vector3::Zero())),
                                  make_geometry("ball", 2, Shape::Sphere(0.05))});
  fb.set_pose(1, at(1, 0, 0));
  for (double phi : {-0.01, 0.001}) {
    SCOPED_TRACE(phi);
    fb.set_pose(2, at(1.02, -0.01, 0.1 + 0.05 + phi));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0].phi, phi, 1e-6);
    expect_vec_near(c[0].n_W, Vector3::UnitZ(), 1e-5);
    expect_vec_near(c[0].p_W, Vector3(1.02, -0.01, 0.1 + 0.5 * phi), 1e-5);
  }
  fb.set_pose(2, at(1.02, -0.01, 0.1 + 0.05 + 0.003));
  fb.apply(world);
  EXPECT_TRUE(contacts_of(world).empty());
}

TEST(CollisionWorldTest, BroadphaseBoxesAreGrownByTheMargin) {
  // Two boxes 1.5 mm apart along x: their tight bounding boxes do not overlap, so the pair is
  // found only because the broadphase boxes are grown by the margin.
  FreeBodies fb(2);
  CollisionWorld world(fb.model, {make_geometry("a", 1, Shape::Box(Vector3(0.2, 0.2, 0.2))), make_geometry("b", 2, Shape::Box(Vector3(0.2, 0.2, 0.2)))});
  fb.set_pose(1, at(1, 1, 1));
  fb.set_pose(2, at(1 + 0.2 + 0.0015, 1.05, 1));
  fb.apply(world);
  const auto c = contacts_of(world);
  ASSERT_EQ(c.size(), 4u);
  for (const ContactPoint& p : c) {
    EXPECT_NEAR(p.phi, 0.0015, 1e-12);
    expect_vec_near(p.n_W, Vector3::UnitX(), 0.0);
    EXPECT_NEAR(p.p_W.x(), 1.10075, 1e-12);
  }
  // The same pair rotated about z (rotated bounding boxes).
  fb.set_pose(1, pose(rot_z(0.2), Vector3(1, 1, 1)));
  fb.set_pose(2, pose(rot_z(0.2), Vector3(1, 1, 1) + (0.2 + 0.0015) * rot_z(0.2).col(0)));
  fb.apply(world);
  const auto r = contacts_of(world);
  ASSERT_EQ(r.size(), 4u);
  for (const ContactPoint& p : r) {
    EXPECT_NEAR(p.phi, 0.0015, 1e-12);
    expect_vec_near(p.n_W, rot_z(0.2).col(0), 1e-12);
  }
  // With a zero margin nothing is reported.
  CollisionOptions zero_margin;
  zero_margin.margin = 0.0;
  CollisionWorld tight(fb.model, world.geometries(), zero_margin);
  tight.update_poses(fb.ws);
  EXPECT_TRUE(contacts_of(tight).empty());
}

// Speculative margins: a ball (r = 0.1) 10 mm above the ground, not reported with the 2 mm
// margin, is reported once its velocity says it reaches the ground within the step:
// extra = max(0, δt (‖v‖ + ‖ω‖ r_b) − margin). The broadphase boxes grow too (two balls).
TEST(CollisionWorldTest, SpeculativeMarginsFollowTheVelocities) {
  FreeBodies fb(2);
  CollisionWorld world(fb.model, {make_geometry("ground", 0, Shape::HalfSpace()), make_geometry("ball", 1, Shape::Sphere(0.1)),
                                  make_geometry("other", 2, Shape::Sphere(0.1))});
  fb.set_pose(1, at(0, 0, 0.1 + 0.01));
  fb.set_pose(2, at(0, 0, 0.5));  // far from everything
  Eigen::VectorXd v = Eigen::VectorXd::Zero(fb.model.nv());
  const double dt = 0.01;
  auto contacts_at = [&](const Eigen::VectorXd& vel) {
    multibody::forward_kinematics(fb.model, fb.ws, fb.q, vel);
    world.set_speculative_margins(fb.ws, dt);
    world.update_poses(fb.ws);
    return contacts_of(world);
  };
  EXPECT_TRUE(contacts_at(v).empty());
  EXPECT_EQ(world.speculative_margin(1), 0.0);
  // Slow (d = 1 mm < margin): nothing extra.
  const int i1 = fb.model.body(1).joint.v_index;
  v[i1 + 5] = -0.1;
  EXPECT_TRUE(contacts_at(v).empty());
  EXPECT_EQ(world.speculative_margin(1), 0.0);
  // Falling at 1.5 m/s: d = 15 mm, extra 13 mm, the pair is reported at φ = 10 mm.
  v[i1 + 5] = -1.5;
  auto c = contacts_at(v);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].phi, 0.01, 1e-12);
  EXPECT_NEAR(world.speculative_margin(1), 0.013, 1e-15);
  EXPECT_EQ(world.speculative_margin(2), 0.0);
  // Spinning in place at 12 rad/s: the ball's points move 12 × 0.1 × 0.01 = 12 mm: reported.
  v.setZero();
  v[i1 + 1] = 12.0;
  c = contacts_at(v);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(world.speculative_margin(1), 0.01, 1e-15);
  // Two balls 11 mm apart, one moving at 0.8 m/s, the other at 0.6 m/s (extras 6 mm and 4 mm):
  // the broadphase boxes (grown by margin + extra each) overlap and the pair is found.
  fb.set_pose(1, at(0, 0, 1.0));
  fb.set_pose(2, at(0.2 + 0.011, 0, 1.0));
  v.setZero();
  v[i1 + 3] = 0.8;
  v[fb.model.body(2).joint.v_index + 3] = -0.6;
  c = contacts_at(v);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].phi, 0.011, 1e-12);
  // Cleared: back to the fixed margin.
  world.clear_speculative_margins();
  world.update_poses(fb.ws);
  EXPECT_TRUE(contacts_of(world).empty());
  EXPECT_THROW(world.set_speculative_margins(fb.ws, 0.0), std::invalid_argument);
  EXPECT_THROW(world.speculative_margin(3), std::out_of_range);
}

// Worlds with more than 2048 candidate pairs use FCL's dynamic AABB tree instead of the pair
// list. 70 balls (2415 pairs) in a row, 1.5 mm apart: exactly the 69 neighbouring pairs are
// reported, at φ = 1.5 mm, before and after the row moves (the tree is refitted).
TEST(CollisionWorldTest, LargeWorldsUseTheTreeBroadphaseWithTheSameResults) {
  const int n = 70;
  FreeBodies fb(n);
  std::vector<geometry::Geometry> g;
  for (int i = 1; i <= n; ++i) g.push_back(make_geometry("ball" + std::to_string(1000 + i), i, Shape::Sphere(0.1)));
  CollisionWorld world(fb.model, g);
  for (const Vector3& offset : {Vector3(0, 0, 1), Vector3(3, -2, 5)}) {
    for (int i = 1; i <= n; ++i) fb.set_pose(i, at(offset.x() + (i - 1) * 0.2015, offset.y(), offset.z()));
    fb.apply(world);
    const auto c = contacts_of(world);
    ASSERT_EQ(static_cast<int>(c.size()), n - 1);
    for (size_t k = 0; k < c.size(); ++k) {
      EXPECT_EQ(c[k].geometry_b, c[k].geometry_a + 1);
      EXPECT_NEAR(c[k].phi, 0.0015, 1e-12);
      expect_vec_near(c[k].n_W, Vector3::UnitX(), 1e-12);
    }
  }
}

TEST(CollisionWorldTest, PosesFollowTheBodies) {
  FreeBodies fb(1);
  const Transform X_BG = pose(rot_y(0.4), Vector3(0.1, 0.2, 0.3));
  CollisionWorld world(fb.model, {make_geometry("g", 1, Shape::Sphere(0.1), X_BG)});
  const Transform X_WB = pose(rot_z(1.0), Vector3(1, 2, 3));
  fb.set_pose(1, X_WB);
  fb.apply(world);
  const Transform expected = X_WB * X_BG;
  EXPECT_LE((world.pose(0).R - expected.R).cwiseAbs().maxCoeff(), 1e-14);
  expect_vec_near(world.pose(0).p, expected.p, 1e-14);
  EXPECT_THROW(world.pose(1), std::out_of_range);
}

TEST(CollisionWorldTest, ConstructorRejectsBadGeometry) {
  FreeBodies fb(1);
  try {
    CollisionWorld world(fb.model, {make_geometry("ball", 1, Shape::Sphere(-0.1))});
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("geometry 'ball'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("radius"), std::string::npos) << e.what();
  }
  try {
    CollisionWorld world(fb.model, {make_geometry("ball", 5, Shape::Sphere(0.1))});
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("body = 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CollisionWorld(fb.model, {make_geometry("x", 1, Shape::Sphere(0.1)), make_geometry("x", 0, Shape::Sphere(0.1))}),
               std::invalid_argument);
  CollisionOptions negative_margin;
  negative_margin.margin = -1.0;
  EXPECT_THROW(CollisionWorld(fb.model, {make_geometry("x", 1, Shape::Sphere(0.1))}, negative_margin),
               std::invalid_argument);
}

// ---- filters ----

TEST(CollisionWorldTest, GroupAndMaskFilter) {
  FreeBodies fb(2);
  Geometry a = make_geometry("a", 1, Shape::Sphere(0.1));
  Geometry b = make_geometry("b", 2, Shape::Sphere(0.1));
  a.group = 0b01;
  b.group = 0b10;
  b.mask = 0b10;  // b ignores group 1
  CollisionWorld world(fb.model, {a, b});
  fb.set_pose(2, at(0.15, 0, 0));
  fb.apply(world);
  EXPECT_FALSE(world.can_collide(0, 1));
  EXPECT_TRUE(contacts_of(world).empty());
  b.mask = 0b11;
  CollisionWorld world2(fb.model, {a, b});
  world2.update_poses(fb.ws);
  EXPECT_TRUE(world2.can_collide(0, 1));
  EXPECT_EQ(contacts_of(world2).size(), 1u);
}

TEST(CollisionWorldTest, SameBodyAndWorldPairsNeverCollide) {
  FreeBodies fb(1);
  CollisionWorld world(fb.model, {make_geometry("ground", 0, Shape::HalfSpace()), make_geometry("table", 0, Shape::Box(Vector3(1, 1, 1))),
                                  make_geometry("a", 1, Shape::Sphere(0.1)), make_geometry("b", 1, Shape::Sphere(0.1))});
  fb.apply(world);  // everything overlapping at the origin
  EXPECT_FALSE(world.can_collide(0, 1));  // world–world
  EXPECT_FALSE(world.can_collide(2, 3));  // same body
  EXPECT_FALSE(world.can_collide(2, 2));
  EXPECT_TRUE(world.can_collide(0, 2));   // floating body against the world
  EXPECT_THROW(world.can_collide(0, 4), std::out_of_range);
  for (const ContactPoint& c : contacts_of(world)) {
    EXPECT_TRUE(world.can_collide(c.geometry_a, c.geometry_b));
    EXPECT_LT(c.geometry_a, c.geometry_b);
  }
}

TEST(CollisionWorldTest, ParentAndChildJoinedByAJointDoNotCollide) {
  // world —revolute→ link1 —revolute→ link2; link3 floating.
  multibody::ModelBuilder mb("chain");
  const SpatialInertia I = SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Matrix3::Identity());
  mb.add_link("link1", "world", revolute("j1", Vector3::UnitY()), I);
  mb.add_link("link2", "link1", revolute("j2", Vector3::UnitY()), I);
  mb.add_link("link3", "world", floating("j3"), I);
  const multibody::Model model = mb.build();
  const int b1 = model.body_index("link1"), b2 = model.body_index("link2"), b3 = model.body_index("link3");
  CollisionWorld world(model, {make_geometry("ground", 0, Shape::Sphere(0.1)), make_geometry("g1", b1, Shape::Sphere(0.1)),
                               make_geometry("g2", b2, Shape::Sphere(0.1)), make_geometry("g3", b3, Shape::Sphere(0.1))});
  EXPECT_FALSE(world.can_collide(0, 1));  // world–link1 (revolute)
  EXPECT_FALSE(world.can_collide(1, 2));  // link1–link2
  EXPECT_TRUE(world.can_collide(0, 2));   // world–link2: not adjacent
  EXPECT_TRUE(world.can_collide(0, 3));   // floating joint joins nothing
  EXPECT_TRUE(world.can_collide(1, 3));
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, model.neutral_configuration());
  world.update_poses(ws);  // all four at the origin
  std::vector<std::pair<int, int>> pairs;
  for (const ContactPoint& c : contacts_of(world)) pairs.emplace_back(c.geometry_a, c.geometry_b);
  const std::vector<std::pair<int, int>> expected = {{0, 2}, {0, 3}, {1, 3}, {2, 3}};
  EXPECT_EQ(pairs, expected);
}

TEST(CollisionWorldTest, SameRobotWithoutSelfCollision) {
  FreeBodies fb(3);
  Geometry a = make_geometry("a", 1, Shape::Sphere(0.1));
  Geometry b = make_geometry("b", 2, Shape::Sphere(0.1));
  Geometry c = make_geometry("c", 3, Shape::Sphere(0.1));
  a.robot = b.robot = 0;
  c.robot = 1;
  {
    CollisionWorld world(fb.model, {a, b, c});
    EXPECT_FALSE(world.can_collide(0, 1));
    EXPECT_TRUE(world.can_collide(0, 2));
    EXPECT_TRUE(world.can_collide(1, 2));
  }
  a.self_collision = b.self_collision = true;
  {
    CollisionWorld world(fb.model, {a, b, c});
    EXPECT_TRUE(world.can_collide(0, 1));
    fb.apply(world);
    EXPECT_EQ(contacts_of(world).size(), 3u);
  }
}

// ---- determinism ----

std::vector<Geometry> clutter(std::mt19937& rng, int bodies) {
  std::uniform_real_distribution<double> u(0.05, 0.12);
  std::vector<Geometry> g = {make_geometry("ground", 0, Shape::HalfSpace()),
                             make_geometry("table", 0, Shape::Box(Vector3(2, 2, 0.2)), at(0, 0, -0.1))};
  for (int b = 1; b <= bodies; ++b) {
    Shape s;
    switch (b % 5) {
      case 0: s = Shape::Sphere(u(rng)); break;
      case 1: s = Shape::Box(Vector3(2 * u(rng), 2 * u(rng), 2 * u(rng))); break;
      case 2: s = Shape::Capsule(0.5 * u(rng), 2 * u(rng)); break;
      case 3: s = Shape::Cylinder(u(rng), 2 * u(rng)); break;
      default: s = Shape::Box(Vector3(2 * u(rng), 2 * u(rng), 2 * u(rng))); break;
    }
    g.push_back(make_geometry("g" + std::to_string(b), b, s));
  }
  return g;
}

void random_pile(std::mt19937& rng, FreeBodies& fb, int bodies) {
  std::uniform_real_distribution<double> xy(-0.25, 0.25), z(0.0, 0.3);
  for (int b = 1; b <= bodies; ++b) {
    Transform X = random_transform(rng, 0.25);
    X.p = Vector3(xy(rng), xy(rng), z(rng));
    fb.set_pose(b, X);
  }
}

TEST(CollisionWorldTest, RecomputingGivesBitwiseIdenticalSortedOutput) {
  std::mt19937 rng(7);
  const int n = 20;
  FreeBodies fb(n);
  CollisionWorld world(fb.model, clutter(rng, n));
  random_pile(rng, fb, n);
  fb.apply(world);
  std::vector<ContactPoint> c1, c2;
  world.compute_contacts(c1);
  ASSERT_GT(c1.size(), 20u);
  // Move everything away and back: same poses, same answer, bit for bit.
  const Eigen::VectorXd q = fb.q;
  fb.set_pose(1, at(100, 100, 100));
  fb.apply(world);
  fb.q = q;
  fb.apply(world);
  world.compute_contacts(c2);
  ASSERT_EQ(c1.size(), c2.size());
  for (size_t i = 0; i < c1.size(); ++i) {
    EXPECT_EQ(c1[i].geometry_a, c2[i].geometry_a);
    EXPECT_EQ(c1[i].geometry_b, c2[i].geometry_b);
    EXPECT_EQ(std::memcmp(c1[i].p_W.data(), c2[i].p_W.data(), sizeof(double) * 3), 0);
    EXPECT_EQ(std::memcmp(c1[i].n_W.data(), c2[i].n_W.data(), sizeof(double) * 3), 0);
    EXPECT_EQ(std::memcmp(&c1[i].phi, &c2[i].phi, sizeof(double)), 0);
  }
  // Sorted by (geometry_a, geometry_b, p_W), and every point within the margin.
  for (size_t i = 0; i < c1.size(); ++i) {
    EXPECT_LT(c1[i].geometry_a, c1[i].geometry_b);
    EXPECT_LE(c1[i].phi, world.options().margin);
    EXPECT_NEAR(c1[i].n_W.norm(), 1.0, 1e-12);
    if (i == 0) continue;
    const auto key = [](const ContactPoint& c) {
      return std::make_tuple(c.geometry_a, c.geometry_b, c.p_W.x(), c.p_W.y(), c.p_W.z());
    };
    EXPECT_LE(key(c1[i - 1]), key(c1[i]));
  }
}

TEST(CollisionWorldTest, ShuffledInsertionOrderGivesTheSameContacts) {
  std::mt19937 rng(11);
  const int n = 20;
  FreeBodies fb(n);
  const std::vector<Geometry> geometries = clutter(rng, n);
  random_pile(rng, fb, n);
  multibody::forward_kinematics(fb.model, fb.ws, fb.q);

  CollisionWorld world(fb.model, geometries);
  world.update_poses(fb.ws);
  std::vector<Geometry> shuffled = geometries;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  CollisionWorld world2(fb.model, shuffled);
  world2.update_poses(fb.ws);

  // Contacts keyed by the unordered name pair; normals are flipped into a canonical order.
  using Key = std::pair<std::string, std::string>;
  auto collect = [](const CollisionWorld& w) {
    std::map<Key, std::vector<ContactPoint>> m;
    for (ContactPoint c : contacts_of(w)) {
      std::string na = w.geometries()[static_cast<size_t>(c.geometry_a)].name;
      std::string nb = w.geometries()[static_cast<size_t>(c.geometry_b)].name;
      if (nb < na) {
        std::swap(na, nb);
        c.n_W = -c.n_W;
      }
      m[{na, nb}].push_back(c);
    }
    return m;
  };
  const auto m1 = collect(world), m2 = collect(world2);
  ASSERT_GT(m1.size(), 10u);
  ASSERT_EQ(m1.size(), m2.size());
  // The narrowphase sees each pair in name order whatever the insertion order, so the points
  // are the same bit for bit.
  for (const auto& [key, points] : m1) {
    ASSERT_TRUE(m2.count(key)) << key.first << "–" << key.second;
    const auto& other = m2.at(key);
    ASSERT_EQ(points.size(), other.size()) << key.first << "–" << key.second;
    for (size_t i = 0; i < points.size(); ++i) {
      EXPECT_EQ(points[i].p_W, other[i].p_W) << key.first << "–" << key.second;
      EXPECT_EQ(points[i].n_W, other[i].n_W) << key.first << "–" << key.second;
      EXPECT_EQ(points[i].phi, other[i].phi) << key.first << "–" << key.second;
    }
  }
}

}  // namespace
}  // namespace coulomb::testing
