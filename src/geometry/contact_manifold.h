// Contact manifolds for resting contacts (private to src/geometry; used by CollisionWorld).
//
// FCL reports one deepest point per pair, which lets a box resting on the ground rock on a
// single point. The functions here generate several points for the pairs where a face rests
// on a face: any shape against a planar face (a half-space, or one face of a box or of a convex
// hull), box against box (separating-axis test + Sutherland–Hodgman clipping of the incident face
// against the reference face), and convex polytopes (hulls, boxes) against each other by the same
// clipping on their polygonal faces. Conventions are those of geometry::ContactPoint: everything in
// the world frame W, n_W a unit vector from A into B, φ the signed distance (< 0 overlapping),
// p_W midway between the two surfaces along n_W. The rules per pair are in docs/geometry.md.
#pragma once

#include <array>
#include <vector>

#include "coulomb/geometry/shape.h"
#include "coulomb/math/spatial.h"

namespace coulomb::geometry::internal {

/// A contact between geometries A and B before the geometry indices are attached.
struct PairContact {
  math::Vector3 p_W = math::Vector3::Zero();   ///< midway between the surfaces [m]
  math::Vector3 n_W = math::Vector3::UnitZ();  ///< unit normal from A into B
  double phi = 0.0;                            ///< signed distance [m]
};

/// Sphere (radius r, centre p_WS) against a box (full edge lengths `size`, pose X_WB): the
/// closest point of the box to the centre (clamped in box coordinates; a centre inside the box
/// leaves through the nearest face, ties to the lowest axis, +). φ = distance − r (negative
/// inside), n_W from the box into the sphere, p_W midway between the sphere's surface point
/// p_WS − r n and the box's surface point. Returns false (nothing written) when φ > margin.
/// Exact and allocation-free (FCL's sphere–box routine allocates a contact list per call).
bool sphere_box_point(double radius, const math::Vector3& p_WS, const math::Vector3& size, const math::Transform& X_WB,
                      double margin, PairContact* contact);

/// A planar face in W: the plane through `center` with unit outward normal `normal`. When
/// `bounded`, the face is the rectangle {center + s u + t v : |s| ≤ half_u, |t| ≤ half_v}
/// (u, v unit, orthogonal to normal and to each other), or, when `polygon` is set, the convex
/// polygon with those vertices (world frame, counter-clockwise about `normal`, in the plane;
/// half_u, half_v then bound its extent from `center` and only scale tolerances); otherwise the
/// whole plane (the boundary of a half-space).
struct PlanarFace {
  math::Vector3 center = math::Vector3::Zero();
  math::Vector3 normal = math::Vector3::UnitZ();
  math::Vector3 u = math::Vector3::UnitX();
  math::Vector3 v = math::Vector3::UnitY();
  double half_u = 0.0, half_v = 0.0;
  bool bounded = false;
  const std::vector<math::Vector3>* polygon = nullptr;  ///< not owned; null: the rectangle
};

/// One face of a convex polytope, in the polytope's frame G: coplanar triangles merged.
struct PolytopeFace {
  math::Vector3 normal_G = math::Vector3::UnitZ();  ///< unit, outward
  double offset = 0.0;                              ///< normal_G·x for x on the face [m]
  std::vector<int> vertices;                        ///< counter-clockwise about normal_G
};

/// A box or a convex mesh as vertices and polygonal faces (G frame).
struct Polytope {
  std::vector<math::Vector3> vertices_G;
  std::vector<PolytopeFace> faces;
  double size = 0.0;  ///< largest vertex distance from G's origin [m] (scales tolerances)
  bool empty() const { return faces.empty(); }
};

/// The polytope of a box (8 corners, 6 quadrilaterals) or of a convex mesh (its vertices; its
/// triangles merged into faces when their normals agree within about 0.06° and their planes
/// within 1e-6 of the mesh's size, which absorbs the float noise of STL files). Empty for the
/// other shapes.
Polytope make_polytope(const Shape& shape);

/// Per-call scratch buffers, kept by the caller so that repeated calls do not allocate.
struct ManifoldScratch {
  std::vector<int> indices;
  std::vector<double> heights;
  // Convex meshes with vertex adjacency: the walk's stack and visited marks.
  std::vector<int> stack;
  std::vector<unsigned> visited;  ///< == generation: visited in the current walk
  unsigned generation = 0;
  std::vector<math::Vector3> points;  ///< positions of `indices` (face_manifold: in the mesh frame G)
  // Polytope manifolds: polygons being clipped, and a face's world polygon.
  std::vector<math::Vector3> clip_a, clip_b, polygon;
};

/// At most 8 of m > 8 points (world positions points[0, m), heights heights[0, m)) spread over a
/// plane with in-plane unit axes u, v: the deepest (lowest height), then the extreme point along
/// 8 directions cos(kπ/4) u + sin(kπ/4) v, without repeats. Ties go to the lower ids[j] when
/// `ids` is given (e.g. vertex indices, so that the choice does not depend on the points' order),
/// else to the lower position. Writes the kept positions to `keep` and returns their count (≤ 8).
int spread_points(const std::vector<math::Vector3>& points, const std::vector<double>& heights, int m,
                  const math::Vector3& u, const math::Vector3& v, std::array<int, 9>& keep,
                  const std::vector<int>* ids = nullptr);

/// Unit vectors u, v completing the unit n to a right-handed frame (u, v, n).
void plane_axes(const math::Vector3& n, math::Vector3* u, math::Vector3* v);

/// Vertex adjacency of a convex mesh (from its triangles): neighbours of every vertex.
using MeshAdjacency = std::vector<std::vector<int>>;
MeshAdjacency mesh_adjacency(const Shape& shape);

/// Support function h_S(d) = max_{x ∈ S} d·x [m·|d|] of `shape` posed at X_WG (d in W, any
/// length). Not defined for a half-space (returns +∞).
double support(const Shape& shape, const math::Transform& X_WG, const math::Vector3& d_W);

/// World-frame axis-aligned bounding box of `shape` at X_WG, grown by `inflate` [m] on every
/// side. A half-space gets an infinite box.
void world_aabb(const Shape& shape, const math::Transform& X_WG, double inflate, math::Vector3* lo,
                math::Vector3* hi);

/// The boundary of a half-space posed at X_WG: the plane z_G = 0 with normal +z_G (unbounded).
PlanarFace halfspace_face(const math::Transform& X_WG);

/// The face of the box (full edge lengths `size`, pose X_WG) whose outward normal is closest to
/// the unit direction dir_W. Returns false (and leaves *face untouched) when that normal makes
/// dir_W·normal < min_cos, i.e. when dir_W points at an edge or a corner rather than a face.
bool box_face_along(const math::Vector3& size, const math::Transform& X_WG, const math::Vector3& dir_W,
                    double min_cos, PlanarFace* face);

/// Contact points of a convex `shape` (pose X_WS; not a half-space) against a planar `face`
/// that belongs to geometry A when face_is_a (else to B). Candidate points x on the shape's
/// surface:
///  - sphere: its lowest point;
///  - capsule: for each end of its segment, the lowest surface point over that end (the bottom
///    of the cap sphere for the lower end, the end of the lowest generator line for the
///    higher end);
///  - box: its 8 corners;
///  - cylinder: for each end disc, the lowest rim point plus 8 evenly spaced rim points
///    (angles kπ/4 from x_G), duplicates merged;
///  - convex mesh: its vertices.
/// Each candidate has height φ = normal·(x − center); candidates with φ > margin, or (bounded
/// face) whose projection falls outside the rectangle, are dropped. A convex mesh keeping more
/// than 8 points is reduced to its deepest vertex and the extreme vertices along 8 directions
/// of the face plane (at most 8, deterministic). Each survivor appends
/// PairContact{p = x − φ/2·normal, n = ±normal (from A into B), φ}. Returns the number of
/// points appended.
/// `adjacency` (convex meshes against an unbounded face, optional): the vertices within the
/// margin are found by walking the vertex graph down to the lowest vertex and then across the
/// vertices below the margin (a sublevel set of a linear function on a convex polytope's graph is
/// connected), instead of testing every vertex; same contacts. `start_vertex` (optional): where
/// the walk starts, updated to the lowest vertex found (a warm start for the next call).
int face_manifold(const Shape& shape, const math::Transform& X_WS, const PlanarFace& face, double margin,
                  bool face_is_a, ManifoldScratch& scratch, std::vector<PairContact>& out,
                  const MeshAdjacency* adjacency = nullptr, int* start_vertex = nullptr);

/// The face of `polytope` (pose X_WG) whose outward normal is closest to the unit direction
/// dir_W, as a bounded PlanarFace whose `polygon` points at `polygon_W` (filled with its world
/// vertices). Returns false (nothing written) when dir_W·normal < min_cos.
bool polytope_face_along(const Polytope& polytope, const math::Transform& X_WG, const math::Vector3& dir_W,
                         double min_cos, std::vector<math::Vector3>& polygon_W, PlanarFace* face);

/// Convex polytope A (pose X_WA) against convex polytope B, given the unit normal n_W (from A
/// into B) of their deepest point (from a general query): face-contact points by clipping, as
/// box_box_manifold does for boxes. The reference face is A's face best aligned with n_W or B's
/// best aligned with −n_W (A's unless B's is clearly better); if its normal is not within
/// acos(min_cos) of ±n_W the contact is at an edge or vertex and nothing is written. The
/// incident face is the other polytope's face most anti-parallel to the reference normal; its
/// polygon is clipped against the side planes of the reference polygon (Sutherland–Hodgman),
/// and each clipped vertex x with depth φ = N·(x − reference plane) ≤ margin gives
/// PairContact{x − φ/2 N, ±N (from A into B), φ}; more than 8 are reduced to the deepest and the
/// extremes along 8 directions of the reference plane. When the deepest point found is
/// shallower than `phi` (the query's depth) by more than max(1e-6 m, 0.1 |phi|), the face
/// points do not describe the overlap and nothing is written. Returns the number of points.
int polytope_manifold(const Polytope& a, const math::Transform& X_WA, const Polytope& b, const math::Transform& X_WB,
                      const math::Vector3& n_W, double phi, double margin, double min_cos, ManifoldScratch& scratch,
                      std::vector<PairContact>& out);

enum class BoxBoxStatus {
  kSeparated,  ///< some separating axis shows a gap > margin: no contact
  kContacts,   ///< points appended to out
  kFallback,   ///< the closest features are not face–face or a penetrating edge–edge pair
               ///< (e.g. separated edge–edge, corner–corner): use a general distance query
};

/// Box A (full edge lengths size_a, pose X_WA) against box B. Separating-axis test over the
/// 15 axes (3 face normals of each box, 9 edge–edge cross products); face axes are preferred
/// over edge axes, and A's faces over B's, unless the other is clearly better (relative
/// tolerances); an edge axis within 2.56° of the chosen face's normal never wins (an edge lying
/// on the face: its gap equals the face's up to the tilt, and the face manifold holds the
/// edge's two ends). Face axis: the reference face is that face of the chosen box, the incident
/// face is the face of the other box most anti-parallel to it; the incident quadrilateral is
/// clipped against the reference face's four side planes (Sutherland–Hodgman) and every
/// clipped vertex with depth ≤ margin below/above the reference plane gives a point (at most
/// 8; 4 for aligned face-on-face). Penetrating edge axis: one point midway between the closest
/// points of the two supporting edges, φ = the separation along that axis.
BoxBoxStatus box_box_manifold(const math::Vector3& size_a, const math::Transform& X_WA,
                              const math::Vector3& size_b, const math::Transform& X_WB, double margin,
                              std::vector<PairContact>& out);

}  // namespace coulomb::geometry::internal
