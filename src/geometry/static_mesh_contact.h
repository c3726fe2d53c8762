// Contacts between a static non-convex triangle mesh (ShapeType::kMesh: terrain, a table) and a
// convex shape (private to src/geometry; used by CollisionWorld).
//
// The mesh's triangles live in an FCL bounding-volume hierarchy (fcl::BVHModel<fcl::OBBRSSd>).
// For a pair, the triangles that may touch the shape are those that intersect the shape's world
// bounding box grown by the margin (one FCL collide() of the BVH against that box). Each of them
// is tested against the shape with FCL's narrowphase (libccd GJK/EPA; exact routines for a
// sphere): overlap gives a normal and a depth, otherwise GJK's distance within the margin gives
// the nearest points. A triangle whose plane is the contact plane gives face points exactly as a
// box face does (face_manifold on the triangle as a bounded polygon); the rules, and the fallback
// to FCL's points at edges and vertices, are in docs/geometry.md ("Static meshes").
#pragma once

#include <memory>
#include <vector>

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision_request.h>
#include <fcl/narrowphase/collision_result.h>
#include <fcl/narrowphase/detail/gjk_solver_libccd.h>

#include "contact_manifold.h"
#include "coulomb/geometry/shape.h"
#include "coulomb/math/spatial.h"

namespace coulomb::geometry::internal {

/// X as an FCL transform (rotation R, translation p).
inline fcl::Transform3d to_fcl(const math::Transform& X) {
  fcl::Transform3d T = fcl::Transform3d::Identity();
  T.linear() = X.R;
  T.translation() = X.p;
  return T;
}

/// The triangles of a kMesh shape (G frame) in an FCL BVH of OBBRSS nodes. Degenerate triangles
/// (zero area) are left out. Throws std::invalid_argument if FCL rejects the model.
std::shared_ptr<fcl::BVHModel<fcl::OBBRSSd>> make_static_mesh_bvh(const Shape& mesh);

/// Buffers of static_mesh_contacts(), kept by the caller so that repeated calls allocate nothing
/// of their own once warmed up (FCL's narrowphase still allocates its libccd objects per call).
struct StaticMeshScratch {
  StaticMeshScratch();
  fcl::Boxd query_box;                 ///< the shape's grown world box, as an FCL box
  fcl::CollisionRequestd request;      ///< every intersecting triangle, no contact data
  fcl::CollisionResultd result;
  fcl::detail::GJKSolver_libccd<double> solver;

  /// One touching triangle: its world vertices, unit normal (winding), FCL's contact with it.
  struct Touch {
    math::Vector3 a, b, c, normal;
    math::Vector3 n_fcl;  ///< unit, from the triangle into the shape
    PairContact contact;  ///< FCL's point: n_W = n_fcl (from the mesh into the shape)
    bool face = false;    ///< its plane is the contact plane
    bool seed = false;    ///< face by its own FCL result (not by lying in another face's plane)
  };
  std::vector<Touch> touches;
  std::vector<PairContact> face_points, fallback;
  std::vector<math::Vector3> polygon, points;
  std::vector<double> heights;
  ManifoldScratch manifold;
};

/// Contact points between the static mesh M (`mesh`, its BVH `bvh`, pose X_WM) and the convex
/// shape S (`shape`, not a half-space or a mesh; its FCL geometry `shape_fcl`, pose X_WS, its
/// world box [lo, hi] grown by at least `margin`), appended to `out` as PairContacts from A into
/// B, where A is the mesh when mesh_is_a (else the shape). Returns the number appended.
///
/// A triangle touches S when FCL finds them overlapping (normal n_t from the triangle into S,
/// φ_t = −depth) or GJK's distance is ≤ margin (n_t along the nearest points, φ_t = distance).
/// Triangles are one-sided: their winding normal N (counter-clockwise) points to the side contacts
/// push S to. The plane of a touching triangle is a contact plane ("face") when N·n_t ≥ min_cos,
/// or when the height h of S's lowest point along −N over the plane equals φ_t within
/// 1e-7·(1 + size of S) (the least-penetration direction is N: decides exact touching, where
/// EPA's normal is arbitrary), or when it lies in the plane of such a triangle (N·N' ≥ min_cos,
/// its vertices within the margin of that plane) — so that a triangle poking a sliver under a box
/// face, for which EPA reports a sideways normal, still gives the corner above it. Face
/// triangles give face_manifold points
/// (the shape's candidate points above the triangle, within the margin, the triangle a bounded
/// convex polygon); a triangle that is a face by its own FCL result but under none of those
/// points (a capsule's or cylinder's side on a bump) adds FCL's point when it is deeper than every
/// face point by 1e-5·(1 + size of S), or when there are none; points of neighbouring triangles
/// closer than 1e-9·(1 + size of S) are merged
/// (the deeper kept), and more than 8 are reduced to the deepest and the extremes along 8
/// directions of the plane normal to the deepest point's normal (spread_points). When no face
/// gives a point (S touches edges or vertices), FCL's points are used — those whose normal is
/// within 60° of their triangle's N (a sliver poking sideways into S is an internal edge of the
/// surface, not a contact), all of them if none is —: the deepest first, then in order of depth
/// those farther than 1e-6 + 1e-4·(size of S) from every kept one, at most 4.
int static_mesh_contacts(const Shape& mesh, const fcl::BVHModel<fcl::OBBRSSd>& bvh, const math::Transform& X_WM,
                         const Shape& shape, const fcl::CollisionGeometryd& shape_fcl, const math::Transform& X_WS,
                         const math::Vector3& lo, const math::Vector3& hi, double margin, double min_cos,
                         bool mesh_is_a, StaticMeshScratch& scratch, std::vector<PairContact>& out);

}  // namespace coulomb::geometry::internal
