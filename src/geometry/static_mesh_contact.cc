// Static non-convex mesh against a convex shape: candidate triangles from FCL's BVH, per-triangle
// narrowphase, face points on triangles whose plane is the contact plane.
//
// FCL conventions relied on (checked by tests/geometry/static_mesh_contact_test.cc):
//  - GJKSolver_libccd::shapeTriangleIntersect(shape, tf, P1, P2, P3, &pos, &depth, &normal): the
//    shape is libccd's first object, `normal` a unit vector from the shape into the triangle,
//    depth > 0. (Its sphere routine reports depth < 0; spheres are done here exactly instead.)
//  - shapeTriangleDistance(shape, tf, P1, P2, P3, &d, &p1, &p2): p1 on the shape, p2 on the
//    triangle, both in the world frame (the triangle is given in world coordinates).
#include "static_mesh_contact.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/sphere.h>
#include <fcl/narrowphase/collision.h>

namespace coulomb::geometry::internal {

using math::Transform;
using math::Vector3;

namespace {

// The point of triangle (a, b, c) closest to p (Ericson, Real-Time Collision Detection §5.1.5).
Vector3 closest_on_triangle(const Vector3& p, const Vector3& a, const Vector3& b, const Vector3& c) {
  const Vector3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return a;
  const Vector3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return a + (d1 / (d1 - d3)) * ab;
  const Vector3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return a + (d2 / (d2 - d6)) * ac;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  const double denom = 1.0 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// Calls f with the FCL shape of `shape` (its geometry g).
template <class F>
bool with_fcl_shape(const Shape& shape, const fcl::CollisionGeometryd& g, F&& f) {
  switch (shape.type) {
    case ShapeType::kBox: return f(static_cast<const fcl::Boxd&>(g));
    case ShapeType::kCapsule: return f(static_cast<const fcl::Capsuled&>(g));
    case ShapeType::kCylinder: return f(static_cast<const fcl::Cylinderd&>(g));
    case ShapeType::kConvexMesh: return f(static_cast<const fcl::Convexd&>(g));
    case ShapeType::kSphere:
    case ShapeType::kHalfSpace:
    case ShapeType::kMesh: break;
  }
  throw std::logic_error(std::string("static_mesh_contacts: no triangle narrowphase for ") + shape_type_name(shape.type));
}

double shape_size(const Shape& s) {
  double size = s.size.norm() + s.radius + s.length;
  for (const Vector3& v : s.vertices) size = std::max(size, v.norm());
  return size;
}

}  // namespace

std::shared_ptr<fcl::BVHModel<fcl::OBBRSSd>> make_static_mesh_bvh(const Shape& mesh) {
  std::vector<fcl::Triangle> triangles;
  triangles.reserve(mesh.triangles.size());
  for (const auto& t : mesh.triangles) {
    const Vector3& a = mesh.vertices[static_cast<size_t>(t[0])];
    const Vector3& b = mesh.vertices[static_cast<size_t>(t[1])];
    const Vector3& c = mesh.vertices[static_cast<size_t>(t[2])];
    if (!((b - a).cross(c - a).norm() > 0.0)) continue;
    triangles.emplace_back(static_cast<size_t>(t[0]), static_cast<size_t>(t[1]), static_cast<size_t>(t[2]));
  }
  auto bvh = std::make_shared<fcl::BVHModel<fcl::OBBRSSd>>();
  if (bvh->beginModel(static_cast<int>(triangles.size()), static_cast<int>(mesh.vertices.size())) != fcl::BVH_OK ||
      bvh->addSubModel(mesh.vertices, triangles) != fcl::BVH_OK || bvh->endModel() != fcl::BVH_OK)
    throw std::invalid_argument("mesh" + (mesh.mesh_file.empty() ? std::string() : " '" + mesh.mesh_file + "'") +
                                ": FCL could not build the bounding-volume hierarchy of its " +
                                std::to_string(triangles.size()) + " triangles");
  bvh->computeLocalAABB();
  return bvh;
}

StaticMeshScratch::StaticMeshScratch() : query_box(1.0, 1.0, 1.0), request(1u << 20, false) {}

int static_mesh_contacts(const Shape& mesh, const fcl::BVHModel<fcl::OBBRSSd>& bvh, const Transform& X_WM,
                         const Shape& shape, const fcl::CollisionGeometryd& shape_fcl, const Transform& X_WS,
                         const Vector3& lo, const Vector3& hi, double margin, double min_cos, bool mesh_is_a,
                         StaticMeshScratch& scratch, std::vector<PairContact>& out) {
  // Candidate triangles: those intersecting the shape's grown world box (FCL's BVH traversal).
  scratch.query_box.side = (hi - lo).cwiseMax(Vector3::Constant(1e-12));
  fcl::Transform3d X_box = fcl::Transform3d::Identity();
  X_box.translation() = 0.5 * (lo + hi);
  const fcl::Transform3d X_mesh = to_fcl(X_WM);
  scratch.result.clear();
  fcl::collide(&bvh, X_mesh, &scratch.query_box, X_box, scratch.request, scratch.result);
  const size_t nc = scratch.result.numContacts();
  if (nc == 0) return 0;

  // Narrowphase per candidate triangle.
  const double size = shape_size(shape);
  const fcl::Transform3d X_shape = to_fcl(X_WS);
  scratch.touches.clear();
  for (size_t k = 0; k < nc; ++k) {
    const fcl::Triangle& tri = bvh.tri_indices[scratch.result.getContact(k).b1];
    StaticMeshScratch::Touch touch;
    touch.a = X_WM.act(mesh.vertices[tri[0]]);
    touch.b = X_WM.act(mesh.vertices[tri[1]]);
    touch.c = X_WM.act(mesh.vertices[tri[2]]);
    const Vector3 w = (touch.b - touch.a).cross(touch.c - touch.a);
    if (!(w.norm() > 0.0)) continue;
    touch.normal = w.normalized();
    PairContact& pc = touch.contact;  // from the triangle into the shape, for now
    if (shape.type == ShapeType::kSphere) {
      // Exact: the triangle's closest point q to the centre.
      const Vector3& centre = X_WS.p;
      const Vector3 q = closest_on_triangle(centre, touch.a, touch.b, touch.c);
      const Vector3 d = centre - q;
      const double dist = d.norm();
      const double phi = dist - shape.radius;
      if (phi > margin) continue;
      Vector3 n;
      if (dist > 1e-12 * (1.0 + size)) {
        n = d / dist;
      } else {  // the centre on the triangle: its winding normal
        n = touch.normal;
      }
      pc.n_W = n;
      pc.phi = phi;
      pc.p_W = 0.5 * (q + (centre - shape.radius * n));
    } else {
      Vector3 pos, normal, p1, p2;
      double depth = 0.0, dist = 0.0;
      const Vector3 &a = touch.a, &b = touch.b, &c = touch.c;
      auto& solver = scratch.solver;
      const bool overlap = with_fcl_shape(shape, shape_fcl, [&](const auto& s) {
        return solver.shapeTriangleIntersect(s, X_shape, a, b, c, &pos, &depth, &normal);
      });
      if (overlap) {
        Vector3 n = -normal;  // from the triangle into the shape
        const double len = n.norm();
        n = len > 0.0 && std::isfinite(len) ? Vector3(n / len) : touch.normal;
        // Mid-plane between the triangle's top along n and the shape's bottom.
        const double top = std::max({n.dot(a), n.dot(b), n.dot(c)});
        const double bottom = -support(shape, X_WS, -n);
        const double mid = 0.5 * (top + bottom);
        pc.n_W = n;
        pc.phi = -std::abs(depth);
        pc.p_W = pos + (mid - n.dot(pos)) * n;
      } else {
        with_fcl_shape(shape, shape_fcl, [&](const auto& s) {
          return solver.shapeTriangleDistance(s, X_shape, a, b, c, &dist, &p1, &p2);
        });
        if (!(dist <= margin)) continue;
        Vector3 n = p1 - p2;  // from the triangle into the shape
        if (dist > 0.0 && n.norm() > 1e-12 * (1.0 + size)) {
          n.normalize();
        } else {  // touching within GJK's tolerance: the winding normal, towards the shape
          n = touch.normal.dot(X_WS.p - a) >= 0.0 ? touch.normal : Vector3(-touch.normal);
          dist = std::max(dist, 0.0);
        }
        pc.n_W = n;
        pc.phi = dist;
        pc.p_W = 0.5 * (p1 + p2);
      }
    }
    // The triangle's plane is the contact plane when FCL's normal is its normal, or when the
    // shape's depth below the plane equals FCL's depth for the pair (the least-penetration
    // direction is the plane's normal; this also decides exact touching, φ = 0, where EPA's
    // normal is arbitrary).
    const double height = -support(shape, X_WS, -touch.normal) - touch.normal.dot(touch.a);
    touch.face = touch.normal.dot(pc.n_W) >= min_cos || std::abs(height - pc.phi) <= 1e-7 * (1.0 + size);
    touch.n_fcl = pc.n_W;
    scratch.touches.push_back(touch);
  }
  if (scratch.touches.empty()) return 0;

  // Triangles in the plane of a face triangle are faces too (a sliver under a box's edge, for
  // which EPA's least-penetration direction is sideways).
  const size_t nt = scratch.touches.size();
  for (StaticMeshScratch::Touch& t : scratch.touches) t.seed = t.face;  // only FCL's faces seed others
  for (size_t i = 0; i < nt; ++i) {
    StaticMeshScratch::Touch& ti = scratch.touches[i];
    if (ti.face) continue;
    for (size_t j = 0; j < nt; ++j) {
      const StaticMeshScratch::Touch& tj = scratch.touches[j];
      if (j == i || !tj.seed) continue;
      const Vector3& Nj = tj.normal;
      if (ti.normal.dot(Nj) < min_cos) continue;
      const double offset = std::max({std::abs(Nj.dot(ti.a - tj.a)), std::abs(Nj.dot(ti.b - tj.a)),
                                      std::abs(Nj.dot(ti.c - tj.a))});
      if (offset > margin) continue;
      ti.face = true;
      break;
    }
  }

  // Face points.
  scratch.face_points.clear();
  scratch.fallback.clear();
  for (const StaticMeshScratch::Touch& t : scratch.touches) {
    if (!t.face) continue;
    PlanarFace face;
    face.normal = t.normal;
    scratch.polygon.clear();
    scratch.polygon.push_back(t.a);  // counter-clockwise about the normal
    scratch.polygon.push_back(t.b);
    scratch.polygon.push_back(t.c);
    face.center = (t.a + t.b + t.c) / 3.0;
    plane_axes(face.normal, &face.u, &face.v);
    const double extent =
        std::max({(t.a - face.center).norm(), (t.b - face.center).norm(), (t.c - face.center).norm()});
    face.half_u = face.half_v = extent;
    face.bounded = true;
    face.polygon = &scratch.polygon;
    const int n = face_manifold(shape, X_WS, face, margin, mesh_is_a, scratch.manifold, scratch.face_points);
    if (n == 0 && t.seed) scratch.fallback.push_back(t.contact);  // a smooth side on the face, see below
  }
  // A seed face under no candidate point (a capsule or cylinder whose side, not an end, lies on a
  // bump; a box face over a triangle inside its corners) adds FCL's point when it is deeper than
  // every face point (the bump), or when there are none.
  if (!scratch.fallback.empty()) {
    double shallowest_needed = std::numeric_limits<double>::infinity();
    for (const PairContact& p : scratch.face_points) shallowest_needed = std::min(shallowest_needed, p.phi);
    shallowest_needed -= 1e-5 * (1.0 + size);
    for (PairContact p : scratch.fallback) {
      if (!(p.phi < shallowest_needed)) continue;
      if (!mesh_is_a) p.n_W = -p.n_W;
      scratch.face_points.push_back(p);
    }
  }
  const size_t start = out.size();
  if (!scratch.face_points.empty()) {
    // Merge the points that neighbouring triangles share (the deeper kept).
    const double merge_tol = 1e-9 * (1.0 + size);
    scratch.points.clear();
    scratch.heights.clear();
    size_t kept = 0;
    for (size_t i = 0; i < scratch.face_points.size(); ++i) {
      const PairContact& p = scratch.face_points[i];
      bool merged = false;
      for (size_t j = 0; j < kept; ++j) {
        PairContact& q = scratch.face_points[j];
        if ((q.p_W - p.p_W).norm() > merge_tol) continue;
        if (p.phi < q.phi) q = p;
        merged = true;
        break;
      }
      if (!merged) scratch.face_points[kept++] = p;
    }
    scratch.face_points.resize(kept);
    if (kept <= 8) {
      out.insert(out.end(), scratch.face_points.begin(), scratch.face_points.end());
    } else {
      size_t deepest = 0;
      for (size_t j = 0; j < kept; ++j) {
        scratch.points.push_back(scratch.face_points[j].p_W);
        scratch.heights.push_back(scratch.face_points[j].phi);
        if (scratch.face_points[j].phi < scratch.face_points[deepest].phi) deepest = j;
      }
      Vector3 u, v;
      plane_axes(scratch.face_points[deepest].n_W, &u, &v);
      std::array<int, 9> keep{};
      const int nk = spread_points(scratch.points, scratch.heights, static_cast<int>(kept), u, v, keep);
      for (int q = 0; q < nk; ++q) out.push_back(scratch.face_points[static_cast<size_t>(keep[static_cast<size_t>(q)])]);
    }
    return static_cast<int>(out.size() - start);
  }

  // Edges and vertices: FCL's points, the deepest few, without near-duplicates; normals within
  // 60° of their triangle's (a sliver of a triangle poking sideways into the shape, whose EPA
  // normal is sideways, is an internal edge of the surface, not a contact) unless none is.
  scratch.fallback.clear();
  for (const StaticMeshScratch::Touch& t : scratch.touches)
    if (t.normal.dot(t.n_fcl) >= 0.5) scratch.fallback.push_back(t.contact);
  if (scratch.fallback.empty())
    for (const StaticMeshScratch::Touch& t : scratch.touches) scratch.fallback.push_back(t.contact);
  std::sort(scratch.fallback.begin(), scratch.fallback.end(), [](const PairContact& x, const PairContact& y) {
    if (x.phi != y.phi) return x.phi < y.phi;
    if (x.p_W.x() != y.p_W.x()) return x.p_W.x() < y.p_W.x();
    if (x.p_W.y() != y.p_W.y()) return x.p_W.y() < y.p_W.y();
    return x.p_W.z() < y.p_W.z();
  });
  const double dedup_tol = 1e-6 + 1e-4 * size;
  constexpr size_t kMaxFallback = 4;
  for (const PairContact& p : scratch.fallback) {
    bool near = false;
    for (size_t j = start; j < out.size(); ++j) near = near || (out[j].p_W - p.p_W).norm() <= dedup_tol;
    if (near) continue;
    PairContact c = p;
    if (!mesh_is_a) c.n_W = -c.n_W;
    out.push_back(c);
    if (out.size() - start == kMaxFallback) break;
  }
  return static_cast<int>(out.size() - start);
}

}  // namespace coulomb::geometry::internal
