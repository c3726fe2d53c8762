// Contact manifolds through CollisionWorld: box–plane, box–box (SAT + clipping), capsule–plane,
// cylinder–plane, shapes resting on a box face, convex mesh–plane. Expected points are hand-
// computed from the poses.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "../../src/geometry/contact_manifold.h"
#include "geometry/geometry_test_util.h"

namespace coulomb::testing {
namespace {

constexpr double kPi = std::numbers::pi;

void expect_vec_near(const Vector3& a, const Vector3& b, double tol) {
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), tol) << "got " << a.transpose() << ", expected " << b.transpose();
}

// Checks `c` against `expected` points as sets (exactly equal coordinates may differ by an ulp,
// which reorders CollisionWorld's lexicographic sort), one φ and one normal.
void expect_manifold(const std::vector<ContactPoint>& c, const std::vector<Vector3>& expected, double phi,
                     const Vector3& n, double tol) {
  ASSERT_EQ(c.size(), expected.size());
  std::vector<bool> used(c.size(), false);
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("expected point " + std::to_string(i));
    size_t best = 0;
    double best_distance = 1e300;
    for (size_t j = 0; j < c.size(); ++j) {
      const double d = (c[j].p_W - expected[i]).cwiseAbs().maxCoeff();
      if (!used[j] && d < best_distance) {
        best_distance = d;
        best = j;
      }
    }
    used[best] = true;
    expect_vec_near(c[best].p_W, expected[i], tol);
    EXPECT_NEAR(c[best].phi, phi, tol);
    expect_vec_near(c[best].n_W, n, tol);
  }
}

// One body with one shape over a ground geometry (index 0, on the world).
struct OnGround {
  FreeBodies fb{1};
  CollisionWorld world;
  OnGround(const Geometry& ground, const Shape& shape)
      : world(fb.model, {ground, make_geometry("body", 1, shape)}) {}
  std::vector<ContactPoint> at_pose(const Transform& X_WB) {
    fb.set_pose(1, X_WB);
    fb.apply(world);
    return contacts_of(world);
  }
};

Geometry ground_plane() { return make_geometry("ground", 0, Shape::HalfSpace()); }
// A 4 m × 4 m × 0.2 m slab whose top face is z = 0.
Geometry ground_box() { return make_geometry("ground", 0, Shape::Box(Vector3(4, 4, 0.2)), at(0, 0, -0.1)); }

// Corners (±hx, ±hy, −hz) of a box's bottom face, posed at X, moved by −φ/2 along z.
std::vector<Vector3> bottom_corners(const Transform& X, const Vector3& h, double phi) {
  std::vector<Vector3> p;
  for (double sx : {-1.0, 1.0})
    for (double sy : {-1.0, 1.0}) p.push_back(X.act(Vector3(sx * h.x(), sy * h.y(), -h.z())) - 0.5 * phi * Vector3::UnitZ());
  return p;
}

// ---- box on a half-space ----

TEST(BoxPlaneManifold, FourCornersPenetratingRestingAndWithinMargin) {
  const Vector3 size(0.4, 0.2, 0.1), h = 0.5 * size;
  OnGround s(ground_plane(), Shape::Box(size));
  for (double phi : {-0.001, 0.0, 0.0015}) {
    SCOPED_TRACE(phi);
    const Transform X = at(0.5, -0.3, 0.05 + phi);
    expect_manifold(s.at_pose(X), bottom_corners(X, h, phi), phi, Vector3::UnitZ(), 1e-15);
  }
  EXPECT_TRUE(s.at_pose(at(0.5, -0.3, 0.05 + 0.0025)).empty());
}

TEST(BoxPlaneManifold, TiltedOnAnEdgeGivesTwoPoints) {
  const Vector3 size(0.4, 0.2, 0.1), h = 0.5 * size;
  OnGround s(ground_plane(), Shape::Box(size));
  const double th = kPi / 6;
  // Rotated 30° about x: the lowest edge is (±0.2, −0.1, −0.05), 0.1 sin30° + 0.05 cos30° below
  // the centre.
  const double drop = h.y() * std::sin(th) + h.z() * std::cos(th);
  const Transform X = pose(rot_x(th), Vector3(0.5, -0.3, drop - 0.001));
  const std::vector<Vector3> expected = {X.act(Vector3(-h.x(), -h.y(), -h.z())) + Vector3(0, 0, 0.0005),
                                         X.act(Vector3(h.x(), -h.y(), -h.z())) + Vector3(0, 0, 0.0005)};
  expect_manifold(s.at_pose(X), expected, -0.001, Vector3::UnitZ(), 1e-14);
}

TEST(BoxPlaneManifold, OnACornerGivesOnePoint) {
  const Vector3 size(0.4, 0.2, 0.1), h = 0.5 * size;
  OnGround s(ground_plane(), Shape::Box(size));
  const math::Matrix3 R = rot_x(0.3) * rot_y(0.4);
  // Lowest corner: the signs opposite to the signs of the third row of R.
  const Vector3 corner(-std::copysign(h.x(), R(2, 0)), -std::copysign(h.y(), R(2, 1)), -std::copysign(h.z(), R(2, 2)));
  const double drop = -(R * corner).z();
  const Transform X = pose(R, Vector3(0.1, 0.2, drop - 0.0005));
  expect_manifold(s.at_pose(X), {X.act(corner) + Vector3(0, 0, 0.00025)}, -0.0005, Vector3::UnitZ(), 1e-14);
}

// ---- box on box ----

TEST(BoxBoxManifold, StackedOnGroundBoxGivesTheFourCorners) {
  const Vector3 size(0.4, 0.2, 0.1), h = 0.5 * size;
  OnGround s(ground_box(), Shape::Box(size));
  for (double phi : {-0.001, 0.0015}) {
    SCOPED_TRACE(phi);
    const Transform X = pose(rot_z(0.3), Vector3(0.3, 0.2, 0.05 + phi));
    expect_manifold(s.at_pose(X), bottom_corners(X, h, phi), phi, Vector3::UnitZ(), 1e-14);
  }
  EXPECT_TRUE(s.at_pose(at(0.3, 0.2, 0.05 + 0.0021)).empty());
}

TEST(BoxBoxManifold, GroundListedSecondFlipsTheNormal) {
  FreeBodies fb(1);
  const Vector3 size(0.4, 0.2, 0.1), h = 0.5 * size;
  CollisionWorld world(fb.model, {make_geometry("box", 1, Shape::Box(size)), ground_box()});
  const Transform X = at(0.3, 0.2, 0.05 - 0.001);
  fb.set_pose(1, X);
  fb.apply(world);
  expect_manifold(contacts_of(world), bottom_corners(X, h, -0.001), -0.001, -Vector3::UnitZ(), 1e-14);
}

TEST(BoxBoxManifold, OffsetBoxesClipToTheOverlapRectangle) {
  // Two 0.4 × 0.4 × 0.1 boxes; the top one shifted by (0.3, 0.1): the contact polygon is the
  // overlap [0.1, 0.2] × [−0.1, 0.2] of the two faces, smaller than either face.
  FreeBodies fb(2);
  const Shape box = Shape::Box(Vector3(0.4, 0.4, 0.1));
  CollisionWorld world(fb.model, {make_geometry("lower", 1, box), make_geometry("upper", 2, box)});
  fb.set_pose(1, at(0, 0, 0));
  fb.set_pose(2, at(0.3, 0.1, 0.1 - 0.002));
  fb.apply(world);
  const double z = 0.05 - 0.001;
  expect_manifold(contacts_of(world),
                  {Vector3(0.1, -0.1, z), Vector3(0.1, 0.2, z), Vector3(0.2, -0.1, z), Vector3(0.2, 0.2, z)}, -0.002,
                  Vector3::UnitZ(), 1e-15);
}

TEST(BoxBoxManifold, RotatedFortyFiveDegreesGivesTheOctagon) {
  FreeBodies fb(2);
  const Shape box = Shape::Box(Vector3(0.4, 0.4, 0.1));
  CollisionWorld world(fb.model, {make_geometry("lower", 1, box), make_geometry("upper", 2, box)});
  fb.set_pose(1, at(1, 2, 0));
  fb.set_pose(2, pose(rot_z(kPi / 4), Vector3(1, 2, 0.1 - 0.001)));
  fb.apply(world);
  const auto c = contacts_of(world);
  // Square |x|, |y| ≤ 0.2 ∩ the same square turned 45°: an octagon with vertices where x = ±0.2
  // meets |x ± y| = 0.2 √2, i.e. (±0.2, ±(0.2√2 − 0.2)) and (±(0.2√2 − 0.2), ±0.2).
  const double a = 0.2, b = 0.2 * std::sqrt(2.0) - 0.2, z = 0.05 - 0.0005;
  std::vector<Vector3> expected;
  for (double s1 : {-1.0, 1.0})
    for (double s2 : {-1.0, 1.0}) {
      expected.push_back(Vector3(1 + s1 * a, 2 + s2 * b, z));
      expected.push_back(Vector3(1 + s1 * b, 2 + s2 * a, z));
    }
  expect_manifold(c, expected, -0.001, Vector3::UnitZ(), 1e-14);
  for (const ContactPoint& p : c) {
    const Vector3 r = p.p_W - Vector3(1, 2, 0);
    EXPECT_LE(std::max(std::abs(r.x()), std::abs(r.y())), 0.2 + 1e-14);                         // lower face
    EXPECT_LE(std::max(std::abs(r.x() + r.y()), std::abs(r.x() - r.y())) / std::sqrt(2.0), 0.2 + 1e-14);  // upper face
  }
}

TEST(BoxBoxManifold, TiltedOnAnEdgeAndOnACorner) {
  const Vector3 size(0.2, 0.2, 0.2), h = 0.5 * size;
  OnGround s(ground_box(), Shape::Box(size));
  {
    // 45° about y: resting on the edge x = 0 (local (±0.1, ·, −0.1) ends) along y.
    const Transform X = pose(rot_y(kPi / 4), Vector3(0.3, 0.2, 0.1 * std::sqrt(2.0) - 0.001));
    const auto c = s.at_pose(X);
    expect_manifold(c, {Vector3(0.3, 0.1, 0.0005 - 0.001), Vector3(0.3, 0.3, 0.0005 - 0.001)}, -0.001,
                    Vector3::UnitZ(), 1e-12);
  }
  {
    const math::Matrix3 R = rot_x(0.3) * rot_y(0.4);
    const Vector3 corner(-std::copysign(h.x(), R(2, 0)), -std::copysign(h.y(), R(2, 1)), -std::copysign(h.z(), R(2, 2)));
    const Transform X = pose(R, Vector3(0.1, 0.2, -(R * corner).z() - 0.001));
    expect_manifold(s.at_pose(X), {X.act(corner) + Vector3(0, 0, 0.0005)}, -0.001, Vector3::UnitZ(), 1e-12);
  }
}

TEST(BoxBoxManifold, CrossedEdgesGiveOnePoint) {
  // Lower cube turned 45° about y (top edge along y), upper cube turned 45° about x (bottom
  // edge along x): the edges cross above the origin, overlapping by 1 mm.
  FreeBodies fb(2);
  const Shape cube = Shape::Box(Vector3(0.2, 0.2, 0.2));
  CollisionWorld world(fb.model, {make_geometry("lower", 1, cube), make_geometry("upper", 2, cube)});
  const double e = 0.1 * std::sqrt(2.0);  // centre-to-edge distance
  fb.set_pose(1, pose(rot_y(kPi / 4), Vector3(0, 0, 0)));
  fb.set_pose(2, pose(rot_x(kPi / 4), Vector3(0, 0, 2 * e - 0.001)));
  fb.apply(world);
  expect_manifold(contacts_of(world), {Vector3(0, 0, e - 0.0005)}, -0.001, Vector3::UnitZ(), 1e-12);
  // Separated by 1 mm: the separated edge–edge case goes to FCL's distance query.
  fb.set_pose(2, pose(rot_x(kPi / 4), Vector3(0, 0, 2 * e + 0.001)));
  fb.apply(world);
  expect_manifold(contacts_of(world), {Vector3(0, 0, e + 0.0005)}, 0.001, Vector3::UnitZ(), 1e-6);
}

// The separating-axis gaps of boxes A and B (half sizes ha, hb) straight from the definition,
// in the world frame: along each unit axis L, |t·L| − Σ h_A,i |a_i·L| − Σ h_B,j |b_j·L|. The
// largest over the 6 face normals and over the 9 edge cross products (nearly parallel edge
// pairs, |a_i × b_j| < 1e-6, skipped).
struct SatGaps {
  double face = -1e300, edge = -1e300;
};
SatGaps sat_gaps(const Transform& XA, const Vector3& ha, const Transform& XB, const Vector3& hb) {
  const Vector3 t = XB.p - XA.p;
  auto gap = [&](const Vector3& L) {
    double r = std::abs(t.dot(L));
    for (int k = 0; k < 3; ++k) r -= ha[k] * std::abs(XA.R.col(k).dot(L)) + hb[k] * std::abs(XB.R.col(k).dot(L));
    return r;
  };
  SatGaps g;
  for (int k = 0; k < 3; ++k) g.face = std::max({g.face, gap(XA.R.col(k)), gap(XB.R.col(k))});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Vector3 L = XA.R.col(i).cross(XB.R.col(j));
      if (L.norm() >= 1e-6) g.edge = std::max(g.edge, gap(L.normalized()));
    }
  return g;
}

// box_box_manifold's separating-axis test runs in A's frame on C = R_Aᵀ R_B. The truth here is
// the test in the world frame, straight from the definition: each of the 15 axes L (unit), the
// gap |t·L| − Σ h_A,i |a_i·L| − Σ h_B,j |b_j·L|. Random sizes, orientations and offsets, a
// third of them with parallel faces, a third with a common edge direction (parallel edges: no
// edge axis). "Separated" must agree with the largest gap > margin wherever that gap is not
// within 1e-12 m of the margin, and a penetrating edge–edge contact's φ must equal the largest
// gap over the edge axes.
TEST(BoxBoxManifold, SeparatingAxisTestMatchesTheWorldFrameDefinition) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> size(0.02, 0.4), offset(-0.25, 0.25), angle(0.0, 2 * kPi);
  int separated = 0, touching = 0, edge_points = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Vector3 sa(size(rng), size(rng), size(rng)), sb(size(rng), size(rng), size(rng));
    const Transform XA = random_transform(rng, 0.0);
    Transform XB = random_transform(rng, 0.0);
    if (trial % 3 == 1) XB.R = XA.R * rot_z(angle(rng));  // parallel faces
    if (trial % 3 == 2) XB.R = XA.R * rot_x(angle(rng));  // A's and B's x edges parallel
    XB.p = Vector3(offset(rng), offset(rng), offset(rng));
    const double margin = trial % 2 == 0 ? 0.0 : 1e-3;
    const SatGaps gaps = sat_gaps(XA, 0.5 * sa, XB, 0.5 * sb);
    const double max_edge_gap = gaps.edge, max_gap = std::max(gaps.face, gaps.edge);
    if (std::abs(max_gap - margin) < 1e-12) continue;
    std::vector<geometry::internal::PairContact> out;
    const auto status = geometry::internal::box_box_manifold(sa, XA, sb, XB, margin, out);
    EXPECT_EQ(status == geometry::internal::BoxBoxStatus::kSeparated, max_gap > margin)
        << "trial " << trial << ": largest gap " << max_gap << ", margin " << margin;
    if (status == geometry::internal::BoxBoxStatus::kSeparated) {
      ++separated;
      continue;
    }
    ++touching;
    if (status == geometry::internal::BoxBoxStatus::kContacts && out.size() == 1 && max_edge_gap < 0.0 &&
        std::abs(out[0].phi - max_edge_gap) < 1e-9) {
      ++edge_points;
    }
  }
  std::printf("[ measured ] %d separated, %d touching, %d edge-edge points at the largest edge gap\n", separated,
              touching, edge_points);
  EXPECT_GT(separated, 500);
  EXPECT_GT(touching, 500);
  EXPECT_GT(edge_points, 20);
}

// A box resting on another's top face, nearly flat: equal cubes, B yawed (its corners overhang
// A's face), tilted by up to 0.5°, its lowest corner 10–200 µm below A's top plane. One of B's
// bottom edges then crosses A's top edge nearly in A's plane, and the edge axis a_i × b_j
// through them is within the tilt of A's face normal, with a gap that can beat the face's by a
// few µm (a settled clutter_320 pile met 79 against 85 µm). That must not turn the contact into
// one edge–edge point: B's whole bottom face is within the 2 mm margin, so the manifold is the
// clipped face (at least 3 points, A's normal). On that pile the choice by the gaps alone
// flipped between 5 points and 1 from one step to the next, and the Newton iterations per step
// were 13.6 with the flips and 6.0 without.
TEST(BoxBoxManifold, BoxRestingNearlyFlatOnABoxKeepsItsFaceManifold) {
  const Vector3 size(0.1, 0.1, 0.1), h = 0.5 * size;
  const double margin = 2e-3;
  int poses = 0, edge_axis_closer = 0;
  for (double yaw : {0.2, 0.43, 0.7, 1.1})
    for (double tilt_deg : {0.02, 0.1, 0.3, 0.5})
      for (double tilt_dir : {0.0, 0.9, 2.0, 4.0})
        for (double depth : {1e-5, 8e-5, 2e-4}) {
          const double tilt = tilt_deg * kPi / 180.0;
          const math::Matrix3 R =
              Eigen::AngleAxisd(tilt, Vector3(std::cos(tilt_dir), std::sin(tilt_dir), 0.0)).toRotationMatrix() *
              rot_z(yaw);
          double lowest = 1e300;
          for (int c = 0; c < 8; ++c) {
            const Vector3 corner((c & 1 ? 1 : -1) * h.x(), (c & 2 ? 1 : -1) * h.y(), (c & 4 ? 1 : -1) * h.z());
            lowest = std::min(lowest, (R * corner).z());
          }
          const Transform XA = pose(math::Matrix3::Identity(), Vector3::Zero());
          const Transform XB = pose(R, Vector3(0.01, -0.004, h.z() - depth - lowest));
          const SatGaps gaps = sat_gaps(XA, h, XB, h);
          const double face_gap = gaps.face, edge_gap = gaps.edge;
          if (edge_gap > face_gap) ++edge_axis_closer;
          std::vector<geometry::internal::PairContact> out;
          const auto status = geometry::internal::box_box_manifold(size, XA, size, XB, margin, out);
          SCOPED_TRACE(::testing::Message() << "yaw " << yaw << ", tilt " << tilt_deg << "° towards " << tilt_dir
                                            << ", depth " << depth << ", face gap " << face_gap << ", edge gap "
                                            << edge_gap);
          ++poses;
          ASSERT_EQ(status, geometry::internal::BoxBoxStatus::kContacts);
          EXPECT_GE(out.size(), 3u);
          double deepest = 1e300;
          for (const auto& c : out) {
            deepest = std::min(deepest, c.phi);
            EXPECT_GT(std::abs(c.n_W.z()), std::cos(tilt) - 1e-12) << "normal " << c.n_W.transpose();
          }
          // The face manifold's deepest point lies between the face gap (B's lowest corner, which
          // may overhang A) and the largest gap, and it penetrates when the boxes overlap (some
          // poses are separated: B's lowest corner overhangs A and the rest is above A's plane;
          // there the distance along A's normal exceeds the largest gap by the tilt's second
          // order, 5e-6 of it at most here).
          const double largest = std::max(face_gap, edge_gap);
          EXPECT_GE(deepest, face_gap - 1e-12);
          EXPECT_LE(deepest, largest + 1e-4 * std::abs(largest) + 1e-12);
          if (largest < -1e-9) {
            EXPECT_LT(deepest, 0.0);
          }
          if (largest > 1e-9) {
            EXPECT_GT(deepest, 0.0);
          }
        }
  std::printf("[ measured ] %d poses, the edge axis's gap above the faces' on %d\n", poses, edge_axis_closer);
  EXPECT_GT(edge_axis_closer, 5);  // the case the preference has to resolve does occur
}

// ---- capsule and cylinder on a half-space ----

TEST(CapsulePlaneManifold, LyingFlatTwoPointsStandingOne) {
  OnGround s(ground_plane(), Shape::Capsule(0.05, 0.3));
  {
    const Transform X = pose(rot_y(kPi / 2), Vector3(0.2, 0.1, 0.05 - 0.001));  // axis along x
    expect_manifold(s.at_pose(X), {Vector3(0.05, 0.1, -0.0005), Vector3(0.35, 0.1, -0.0005)}, -0.001,
                    Vector3::UnitZ(), 1e-15);
  }
  {
    const Transform X = at(0.2, 0.1, 0.15 + 0.05 - 0.001);
    expect_manifold(s.at_pose(X), {Vector3(0.2, 0.1, -0.0005)}, -0.001, Vector3::UnitZ(), 1e-15);
  }
  // Lying flat 1 mm above the ground: both caps within the margin.
  const Transform X = pose(rot_y(kPi / 2), Vector3(0.2, 0.1, 0.05 + 0.001));
  expect_manifold(s.at_pose(X), {Vector3(0.05, 0.1, 0.0005), Vector3(0.35, 0.1, 0.0005)}, 0.001, Vector3::UnitZ(),
                  1e-15);
}

TEST(CylinderPlaneManifold, FlatFaceDownGivesEightRimPoints) {
  const double r = 0.1, L = 0.2, yaw = 0.1;
  OnGround s(ground_plane(), Shape::Cylinder(r, L));
  for (double phi : {-0.001, 0.0015}) {
    SCOPED_TRACE(phi);
    const Vector3 c(0.3, -0.4, 0.5 * L + phi);
    std::vector<Vector3> expected;
    for (int k = 0; k < 8; ++k) {
      const double a = yaw + k * kPi / 4;
      expected.push_back(Vector3(c.x() + r * std::cos(a), c.y() + r * std::sin(a), 0.5 * phi));
    }
    expect_manifold(s.at_pose(pose(rot_z(yaw), c)), expected, phi, Vector3::UnitZ(), 1e-15);
  }
}

TEST(CylinderPlaneManifold, OnItsSideGivesTheTwoEndsOfTheLineContact) {
  const double r = 0.1, L = 0.2;
  OnGround s(ground_plane(), Shape::Cylinder(r, L));
  const Transform X = pose(rot_x(kPi / 2), Vector3(0.3, -0.4, r - 0.001));  // axis along −y
  expect_manifold(s.at_pose(X), {Vector3(0.3, -0.5, -0.0005), Vector3(0.3, -0.3, -0.0005)}, -0.001, Vector3::UnitZ(),
                  1e-15);
}

TEST(CylinderPlaneManifold, TiltedGivesTheLowestRimPoint) {
  const double r = 0.1, L = 0.2, th = 0.3;
  OnGround s(ground_plane(), Shape::Cylinder(r, L));
  // Tilted about x: the lowest point is (0, −r, −L/2) in the cylinder frame.
  const double drop = r * std::sin(th) + 0.5 * L * std::cos(th);
  const Transform X = pose(rot_x(th), Vector3(0.3, -0.4, drop - 0.001));
  expect_manifold(s.at_pose(X), {X.act(Vector3(0, -r, -0.5 * L)) + Vector3(0, 0, 0.0005)}, -0.001, Vector3::UnitZ(),
                  1e-14);
}

// ---- shapes resting on a box face (FCL normal, then a face manifold) ----

TEST(BoxFaceManifold, CylinderAndCapsuleOnAGroundBox) {
  {
    const double r = 0.1, L = 0.2;
    OnGround s(ground_box(), Shape::Cylinder(r, L));
    const auto c = s.at_pose(at(0.3, -0.4, 0.5 * L - 0.001));
    ASSERT_EQ(c.size(), 8u);
    for (const ContactPoint& p : c) {
      EXPECT_NEAR(p.phi, -0.001, 1e-12);
      expect_vec_near(p.n_W, Vector3::UnitZ(), 1e-12);
      EXPECT_NEAR(p.p_W.z(), -0.0005, 1e-12);
      EXPECT_NEAR(std::hypot(p.p_W.x() - 0.3, p.p_W.y() + 0.4), r, 1e-12);
    }
    const auto side = s.at_pose(pose(rot_x(kPi / 2), Vector3(0.3, -0.4, r - 0.001)));
    expect_manifold(side, {Vector3(0.3, -0.5, -0.0005), Vector3(0.3, -0.3, -0.0005)}, -0.001, Vector3::UnitZ(), 1e-9);
  }
  {
    OnGround s(ground_box(), Shape::Capsule(0.05, 0.3));
    const auto c = s.at_pose(pose(rot_y(kPi / 2), Vector3(0.2, 0.1, 0.05 - 0.001)));
    expect_manifold(c, {Vector3(0.05, 0.1, -0.0005), Vector3(0.35, 0.1, -0.0005)}, -0.001, Vector3::UnitZ(), 1e-9);
  }
}

TEST(BoxFaceManifold, PointsOffTheFaceAreDropped) {
  // A capsule lying across the edge of a 0.4 m box: only the cap over the face remains.
  FreeBodies fb(1);
  CollisionWorld world(fb.model, {make_geometry("table", 0, Shape::Box(Vector3(0.4, 0.4, 0.2)), at(0, 0, -0.1)),
                                  make_geometry("capsule", 1, Shape::Capsule(0.05, 0.3))});
  fb.set_pose(1, pose(rot_y(kPi / 2), Vector3(0.2, 0.0, 0.05 - 0.001)));  // caps at x = 0.05 and 0.35
  fb.apply(world);
  expect_manifold(contacts_of(world), {Vector3(0.05, 0.0, -0.0005)}, -0.001, Vector3::UnitZ(), 1e-9);
}

// ---- convex meshes ----

TEST(ConvexMeshManifold, BoxMeshOnPlaneAndOnGroundBox) {
  const Shape cube = prism(4, 0.1 * std::sqrt(2.0), 0.2);  // a square prism, corners on the axes
  ASSERT_NO_THROW(cube.validate("cube"));
  const Transform X = pose(rot_z(kPi / 4), Vector3(0.3, 0.2, 0.1 - 0.001));  // corners at (±0.1, ±0.1)
  const std::vector<Vector3> expected = {Vector3(0.2, 0.1, -0.0005), Vector3(0.2, 0.3, -0.0005),
                                         Vector3(0.4, 0.1, -0.0005), Vector3(0.4, 0.3, -0.0005)};
  OnGround plane(ground_plane(), cube);
  expect_manifold(plane.at_pose(X), expected, -0.001, Vector3::UnitZ(), 1e-14);
  OnGround box(ground_box(), cube);
  expect_manifold(box.at_pose(X), expected, -0.001, Vector3::UnitZ(), 1e-9);
}

TEST(ConvexMeshManifold, ManyVerticesAreReducedToEightExtremes) {
  const Shape p = prism(16, 0.1, 0.2);
  ASSERT_NO_THROW(p.validate("prism"));
  OnGround s(ground_plane(), p);
  const auto c = s.at_pose(at(0.3, 0.2, 0.1 - 0.001));
  ASSERT_EQ(c.size(), 8u);
  std::vector<Vector3> got;
  for (const ContactPoint& q : c) {
    EXPECT_NEAR(q.phi, -0.001, 1e-15);
    EXPECT_NEAR(std::hypot(q.p_W.x() - 0.3, q.p_W.y() - 0.2), 0.1, 1e-12);  // all on the rim
    got.push_back(q.p_W);
  }
  // The extremes along 8 directions of the half-space's frame: every other vertex.
  std::vector<Vector3> expected;
  for (int k = 0; k < 16; k += 2) {
    const double a = 2 * kPi * k / 16;
    expected.push_back(Vector3(0.3 + 0.1 * std::cos(a), 0.2 + 0.1 * std::sin(a), -0.0005));
  }
  expect_manifold(c, expected, -0.001, Vector3::UnitZ(), 1e-14);
}

// ---- properties over random poses ----

// Exact signed distance from a world point to a shape posed at X (box, capsule, cylinder).
double signed_distance(const Shape& s, const Transform& X, const Vector3& p_W) {
  const Vector3 x = X.inverse().act(p_W);
  switch (s.type) {
    case geometry::ShapeType::kBox: {
      const Vector3 q = x.cwiseAbs() - 0.5 * s.size;
      return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
    }
    case geometry::ShapeType::kCapsule: {
      const double z = std::clamp(x.z(), -0.5 * s.length, 0.5 * s.length);
      return (x - Vector3(0, 0, z)).norm() - s.radius;
    }
    case geometry::ShapeType::kCylinder: {
      const double dr = std::hypot(x.x(), x.y()) - s.radius, dz = std::abs(x.z()) - 0.5 * s.length;
      return std::min(std::max(dr, dz), 0.0) + std::hypot(std::max(dr, 0.0), std::max(dz, 0.0));
    }
    default:
      return std::nan("");
  }
}

// Lowest world z of a shape posed at X.
double lowest_z(const Shape& s, const Transform& X) {
  const Vector3 a = X.R.col(2);
  switch (s.type) {
    case geometry::ShapeType::kBox:
      return X.p.z() - 0.5 * (X.R.row(2).cwiseAbs().dot(s.size));
    case geometry::ShapeType::kCapsule:
      return X.p.z() - 0.5 * s.length * std::abs(a.z()) - s.radius;
    case geometry::ShapeType::kCylinder:
      return X.p.z() - 0.5 * s.length * std::abs(a.z()) - s.radius * std::sqrt(std::max(0.0, 1.0 - a.z() * a.z()));
    default:
      return std::nan("");
  }
}

TEST(ManifoldProperties, ShapesOnAPlaneReportTheirLowestPointAndPointsOnTheSurface) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.05, 0.3), depth(-0.01, 0.002);
  const double margin = 2e-3;
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Shape s;
    switch (trial % 3) {
      case 0: s = Shape::Box(Vector3(u(rng), u(rng), u(rng))); break;
      case 1: s = Shape::Capsule(0.5 * u(rng), u(rng)); break;
      default: s = Shape::Cylinder(u(rng), u(rng)); break;
    }
    OnGround g(ground_plane(), s);
    Transform X = random_transform(rng, 0.5);
    if (trial % 10 == 0) X.R = Matrix3::Identity();  // exactly flat
    const double phi_min = depth(rng);
    X.p.z() += phi_min - lowest_z(s, X);
    const auto c = g.at_pose(X);
    ASSERT_FALSE(c.empty()) << "trial " << trial;
    double got_min = 1e300;
    for (const ContactPoint& p : c) {
      EXPECT_LE(p.phi, margin);
      EXPECT_EQ(p.n_W, Vector3::UnitZ());
      EXPECT_NEAR(p.p_W.z(), 0.5 * p.phi, 1e-12);                                          // midway
      EXPECT_NEAR(signed_distance(s, X, p.p_W + 0.5 * p.phi * p.n_W), 0.0, 1e-12) << "trial " << trial;  // on the shape
      got_min = std::min(got_min, p.phi);
      ++checked;
    }
    EXPECT_NEAR(got_min, phi_min, 1e-12) << "trial " << trial;
  }
  EXPECT_GT(checked, 300);
}

TEST(ManifoldProperties, BoxBoxPointsLieOnBothBoxes) {
  // A and B at random sizes and orientations; B slid along a random direction until it just
  // touches A (bisection on "any contact"), then pushed in by up to 5 mm. Every point must have
  // p − φ/2 n on A's surface and p + φ/2 n on B's surface.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.05, 0.3), push(0.0, 0.005);
  int checked = 0, multi = 0;
  for (int trial = 0; trial < 200; ++trial) {
    FreeBodies fb(2);
    const Shape sa = Shape::Box(Vector3(u(rng), u(rng), u(rng))), sb = Shape::Box(Vector3(u(rng), u(rng), u(rng)));
    CollisionWorld world(fb.model, {make_geometry("a", 1, sa), make_geometry("b", 2, sb)});
    const Transform XA = random_transform(rng, 0.0);
    Transform XB = random_transform(rng, 0.0);
    if (trial % 4 == 0) XB.R = XA.R * rot_z(u(rng));  // parallel faces: face manifolds
    const Vector3 dir = random_transform(rng, 1.0).R.col(0);
    auto contacts_at = [&](double s) {
      XB.p = s * dir;
      fb.set_pose(1, XA);
      fb.set_pose(2, XB);
      fb.apply(world);
      return contacts_of(world);
    };
    double lo = 0.0, hi = 1.0;  // contact at lo, none at hi
    for (int k = 0; k < 50; ++k) {
      const double mid = 0.5 * (lo + hi);
      (contacts_at(mid).empty() ? hi : lo) = mid;
    }
    const double s = lo - 2e-3 - push(rng);
    const auto c = contacts_at(s);
    ASSERT_FALSE(c.empty());
    if (c.size() > 1) ++multi;
    for (const ContactPoint& p : c) {
      EXPECT_NEAR(signed_distance(sa, XA, p.p_W - 0.5 * p.phi * p.n_W), 0.0, 1e-12) << "trial " << trial;
      EXPECT_NEAR(signed_distance(sb, XB, p.p_W + 0.5 * p.phi * p.n_W), 0.0, 1e-12) << "trial " << trial;
      EXPECT_NEAR(p.n_W.norm(), 1.0, 1e-12);
      EXPECT_GT(p.n_W.dot(XB.p - XA.p), 0.0);  // from A towards B
      EXPECT_LE(p.phi, 2e-3);
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
  EXPECT_GT(multi, 40);  // the parallel-face trials give manifolds
}

}  // namespace
}  // namespace coulomb::testing
