// Contact manifolds: shape against a planar face, and box against box (SAT + clipping).
#include "contact_manifold.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace coulomb::geometry::internal {

using math::Matrix3;
using math::Transform;
using math::Vector3;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// box_box_manifold: an edge–edge axis this close to the chosen face normal (cos 2.56°, the
// collision world's kFaceMinCos for resting on a face) leaves the contact to the face.
constexpr double kEdgeAlongFaceCos = 0.999;

// A cylinder's end disc within 30° of parallel to a face contributes its 8 rim points.
constexpr double kDiscParallelCos = 0.8660254037844387;  // cos 30°
// cos(kπ/4), sin(kπ/4), k = 0..7: the 8 rim points of a cylinder's end disc.
constexpr double kS = 0.70710678118654752440;
constexpr std::array<double, 8> kRimCos = {1.0, kS, 0.0, -kS, -1.0, -kS, 0.0, kS};
constexpr std::array<double, 8> kRimSin = {0.0, kS, 1.0, kS, 0.0, -kS, -1.0, -kS};

// Whether x (on the shape) projects inside a bounded face (with a tiny tolerance so that
// points exactly on the border, e.g. equal boxes stacked, are kept despite rounding).
bool inside_face(const PlanarFace& face, const Vector3& x, double tol) {
  if (!face.bounded) return true;
  if (face.polygon != nullptr) {
    const std::vector<Vector3>& P = *face.polygon;
    const size_t m = P.size();
    for (size_t i = 0; i < m; ++i) {
      const Vector3 edge = P[(i + 1) % m] - P[i];
      if (edge.cross(x - P[i]).dot(face.normal) < -tol * edge.norm()) return false;
    }
    return true;
  }
  const Vector3 r = x - face.center;
  return std::abs(face.u.dot(r)) <= face.half_u + tol && std::abs(face.v.dot(r)) <= face.half_v + tol;
}

// Appends the contact for the surface point x of the shape at height phi over the face.
void emit(const PlanarFace& face, const Vector3& x, double phi, bool face_is_a, std::vector<PairContact>& out) {
  PairContact c;
  c.p_W = x - 0.5 * phi * face.normal;
  c.n_W = face_is_a ? face.normal : Vector3(-face.normal);
  c.phi = phi;
  out.push_back(c);
}

// Candidate surface points for the small fixed-size cases (sphere, capsule, box, cylinder).
struct Candidates {
  std::array<Vector3, 18> x;
  int n = 0;
  void add(const Vector3& p, double merge_tol) {
    for (int i = 0; i < n; ++i) {
      if ((x[static_cast<size_t>(i)] - p).norm() <= merge_tol) return;
    }
    x[static_cast<size_t>(n++)] = p;
  }
};

double sign_or_plus(double s) { return s < 0.0 ? -1.0 : 1.0; }

}  // namespace

int spread_points(const std::vector<Vector3>& points, const std::vector<double>& heights, int m, const Vector3& u,
                  const Vector3& v, std::array<int, 9>& keep, const std::vector<int>* ids) {
  // Ties go to the lower id (the lower position without ids).
  auto before = [&](int j, int k) { return ids != nullptr ? (*ids)[static_cast<size_t>(j)] < (*ids)[static_cast<size_t>(k)] : j < k; };
  int nk = 0;
  auto add = [&](int j) {
    for (int q = 0; q < nk; ++q) {
      if (keep[static_cast<size_t>(q)] == j) return;
    }
    keep[static_cast<size_t>(nk++)] = j;
  };
  int deepest = 0;
  for (int j = 1; j < m; ++j) {
    const double hj = heights[static_cast<size_t>(j)], hd = heights[static_cast<size_t>(deepest)];
    if (hj < hd || (hj == hd && before(j, deepest))) deepest = j;
  }
  add(deepest);
  // The 8 directions are (cos kπ/4, sin kπ/4) in (u, v): their extremes are the extremes of
  // a = u·x, b = v·x, a + b and b − a (each scaled by 1/√2 or 1, which keeps the order), found in
  // one pass; ties go to `before`.
  std::array<int, 8> best{};
  std::array<double, 8> value;
  value.fill(-kInf);
  for (int j = 0; j < m; ++j) {
    const Vector3& x = points[static_cast<size_t>(j)];
    const double a = u.dot(x), b = v.dot(x);
    const std::array<double, 8> d = {a, a + b, b, b - a, -a, -(a + b), -b, a - b};
    for (size_t k = 0; k < 8; ++k) {
      if (d[k] > value[k] || (d[k] == value[k] && before(j, best[k]))) {
        value[k] = d[k];
        best[k] = j;
      }
    }
  }
  for (size_t k = 0; k < 8 && nk < 8; ++k) add(best[k]);
  return nk;
}

void plane_axes(const Vector3& n, Vector3* u, Vector3* v) {
  const Vector3 a = std::abs(n.x()) < 0.6 ? Vector3::UnitX() : (std::abs(n.y()) < 0.6 ? Vector3::UnitY() : Vector3::UnitZ());
  *u = (a - a.dot(n) * n).normalized();
  *v = n.cross(*u);
}

double support(const Shape& shape, const Transform& X_WG, const Vector3& d_W) {
  const Vector3& c = X_WG.p;
  const Matrix3& R = X_WG.R;
  switch (shape.type) {
    case ShapeType::kSphere:
      return c.dot(d_W) + shape.radius * d_W.norm();
    case ShapeType::kBox: {
      const Vector3 d_G = R.transpose() * d_W;
      return c.dot(d_W) + 0.5 * shape.size.cwiseProduct(d_G.cwiseAbs()).sum();
    }
    case ShapeType::kCapsule: {
      const double da = R.col(2).dot(d_W);
      return c.dot(d_W) + 0.5 * shape.length * std::abs(da) + shape.radius * d_W.norm();
    }
    case ShapeType::kCylinder: {
      const double da = R.col(2).dot(d_W);
      const double radial = std::sqrt(std::max(0.0, d_W.squaredNorm() - da * da));
      return c.dot(d_W) + 0.5 * shape.length * std::abs(da) + shape.radius * radial;
    }
    case ShapeType::kConvexMesh:
    case ShapeType::kMesh: {  // a non-convex mesh: the support of its convex hull
      const Vector3 d_G = R.transpose() * d_W;
      double h = -kInf;
      for (const Vector3& v : shape.vertices) h = std::max(h, v.dot(d_G));
      return c.dot(d_W) + h;
    }
    case ShapeType::kHalfSpace:
      return kInf;
  }
  return kInf;
}

void world_aabb(const Shape& shape, const Transform& X_WG, double inflate, Vector3* lo, Vector3* hi) {
  const Vector3& c = X_WG.p;
  const Matrix3& R = X_WG.R;
  Vector3 half = Vector3::Zero();
  switch (shape.type) {
    case ShapeType::kSphere:
      half.setConstant(shape.radius);
      break;
    case ShapeType::kBox:
      half = R.cwiseAbs() * (0.5 * shape.size);
      break;
    case ShapeType::kCapsule:
      half = R.col(2).cwiseAbs() * (0.5 * shape.length) + Vector3::Constant(shape.radius);
      break;
    case ShapeType::kCylinder:
      for (int i = 0; i < 3; ++i) {
        const double a = R(i, 2);
        half[i] = std::abs(a) * 0.5 * shape.length + shape.radius * std::sqrt(std::max(0.0, 1.0 - a * a));
      }
      break;
    case ShapeType::kConvexMesh:
    case ShapeType::kMesh: {
      Vector3 mn = Vector3::Constant(kInf), mx = Vector3::Constant(-kInf);
      for (const Vector3& v : shape.vertices) {
        const Vector3 w = R * v + c;
        mn = mn.cwiseMin(w);
        mx = mx.cwiseMax(w);
      }
      *lo = mn - Vector3::Constant(inflate);
      *hi = mx + Vector3::Constant(inflate);
      return;
    }
    case ShapeType::kHalfSpace:
      *lo = Vector3::Constant(-kInf);
      *hi = Vector3::Constant(kInf);
      return;
  }
  *lo = c - half - Vector3::Constant(inflate);
  *hi = c + half + Vector3::Constant(inflate);
}

PlanarFace halfspace_face(const Transform& X_WG) {
  PlanarFace f;
  f.center = X_WG.p;
  f.normal = X_WG.R.col(2);
  f.u = X_WG.R.col(0);
  f.v = X_WG.R.col(1);
  f.bounded = false;
  return f;
}

bool box_face_along(const Vector3& size, const Transform& X_WG, const Vector3& dir_W, double min_cos,
                    PlanarFace* face) {
  const Vector3 d_G = X_WG.R.transpose() * dir_W;
  int k = 0;
  for (int i = 1; i < 3; ++i) {
    if (std::abs(d_G[i]) > std::abs(d_G[k])) k = i;
  }
  if (std::abs(d_G[k]) < min_cos) return false;
  const double s = sign_or_plus(d_G[k]);
  const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
  face->normal = s * X_WG.R.col(k);
  face->center = X_WG.p + 0.5 * size[k] * face->normal;
  face->u = X_WG.R.col(i1);
  face->v = X_WG.R.col(i2);
  face->half_u = 0.5 * size[i1];
  face->half_v = 0.5 * size[i2];
  face->bounded = true;
  return true;
}

MeshAdjacency mesh_adjacency(const Shape& shape) {
  MeshAdjacency adjacency(shape.vertices.size());
  auto link = [&](int a, int b) {
    std::vector<int>& na = adjacency[static_cast<size_t>(a)];
    if (std::find(na.begin(), na.end(), b) == na.end()) na.push_back(b);
  };
  for (const auto& t : shape.triangles)
    for (int k = 0; k < 3; ++k) {
      link(t[static_cast<size_t>(k)], t[static_cast<size_t>((k + 1) % 3)]);
      link(t[static_cast<size_t>((k + 1) % 3)], t[static_cast<size_t>(k)]);
    }
  return adjacency;
}

int face_manifold(const Shape& shape, const Transform& X_WS, const PlanarFace& face, double margin, bool face_is_a,
                  ManifoldScratch& scratch, std::vector<PairContact>& out, const MeshAdjacency* adjacency,
                  int* start_vertex) {
  const size_t start = out.size();
  const Vector3& n = face.normal;
  const Matrix3& R = X_WS.R;
  const Vector3& c = X_WS.p;
  // Lateral tolerance for the bounded-face test and the duplicate merge.
  const double scale = 1.0 + std::max(face.half_u, face.half_v) + shape.size.maxCoeff() + shape.radius + shape.length;
  const double tol = 1e-12 * scale;
  auto height = [&](const Vector3& x) { return n.dot(x - face.center); };

  if (shape.type == ShapeType::kConvexMesh) {
    scratch.indices.clear();
    scratch.heights.clear();
    const int nv = static_cast<int>(shape.vertices.size());
    // n·(R v + c − p₀) = (Rᵀn)·v + n·(c − p₀): one dot product per vertex.
    const Vector3 n_G = R.transpose() * n;
    const double offset = n.dot(c - face.center);
    auto vertex_height = [&](int i) { return n_G.dot(shape.vertices[static_cast<size_t>(i)]) + offset; };
    if (adjacency != nullptr && !face.bounded && static_cast<int>(adjacency->size()) == nv && nv > 0) {
      // Down to the lowest vertex (a local minimum of a linear function on a convex polytope's
      // graph is the global one), then across the connected set of vertices within the margin.
      int v = (start_vertex != nullptr && *start_vertex >= 0 && *start_vertex < nv) ? *start_vertex : 0;
      double hv = vertex_height(v);
      for (bool moved = true; moved;) {
        moved = false;
        for (int w : (*adjacency)[static_cast<size_t>(v)]) {
          const double hw = vertex_height(w);
          if (hw < hv) {
            v = w;
            hv = hw;
            moved = true;
          }
        }
      }
      if (start_vertex != nullptr) *start_vertex = v;
      if (hv <= margin) {
        // Visit marks by generation: no clearing of nv marks per call.
        if (scratch.visited.size() < static_cast<size_t>(nv)) scratch.visited.resize(static_cast<size_t>(nv), 0);
        if (++scratch.generation == 0) {  // wrapped: reset the marks once
          std::fill(scratch.visited.begin(), scratch.visited.end(), 0u);
          scratch.generation = 1;
        }
        const unsigned gen = scratch.generation;
        scratch.stack.clear();
        scratch.stack.push_back(v);
        scratch.visited[static_cast<size_t>(v)] = gen;
        while (!scratch.stack.empty()) {
          const int i = scratch.stack.back();
          scratch.stack.pop_back();
          scratch.indices.push_back(i);
          scratch.heights.push_back(vertex_height(i));
          for (int w : (*adjacency)[static_cast<size_t>(i)]) {
            if (scratch.visited[static_cast<size_t>(w)] == gen) continue;
            scratch.visited[static_cast<size_t>(w)] = gen;
            if (vertex_height(w) <= margin) scratch.stack.push_back(w);
          }
        }
        // In walk order: the selection below breaks ties by vertex index, so the contacts are
        // those of the full scan whatever the order (and compute_contacts sorts its output).
      }
    } else {
      for (int i = 0; i < nv; ++i) {
        const Vector3 x = R * shape.vertices[static_cast<size_t>(i)] + c;
        const double phi = height(x);
        if (phi <= margin && inside_face(face, x, tol)) {
          scratch.indices.push_back(i);
          scratch.heights.push_back(phi);
        }
      }
    }
    const int m = static_cast<int>(scratch.indices.size());
    // The spread is chosen in the mesh's frame G (dir_W·(R x + c) = (Rᵀ dir_W)·x + const, the same
    // order), so only the kept vertices are transformed to W.
    scratch.points.clear();
    for (int i : scratch.indices) scratch.points.push_back(shape.vertices[static_cast<size_t>(i)]);
    auto world_vertex = [&](int j) -> Vector3 { return R * scratch.points[static_cast<size_t>(j)] + c; };
    if (m <= 8) {  // all of them, in ascending vertex order (the walk visits them in any order)
      // Insertion sort of at most 8 (std::sort's 16-element insertion threshold made GCC warn
      // that it reads past the array, -Warray-bounds, though it never does).
      std::array<int, 8> order{};
      for (int j = 0; j < m; ++j) {
        int q = j;
        for (; q > 0 && scratch.indices[static_cast<size_t>(order[static_cast<size_t>(q - 1)])] >
                            scratch.indices[static_cast<size_t>(j)];
             --q)
          order[static_cast<size_t>(q)] = order[static_cast<size_t>(q - 1)];
        order[static_cast<size_t>(q)] = j;
      }
      for (int q = 0; q < m; ++q) {
        const int j = order[static_cast<size_t>(q)];
        emit(face, world_vertex(j), scratch.heights[static_cast<size_t>(j)], face_is_a, out);
      }
      return m;
    }
    // More than 8: the deepest vertex, then the extreme vertices along 8 directions of the face
    // plane (first index wins ties), without repeats, at most 8.
    std::array<int, 9> keep{};
    const int nk =
        spread_points(scratch.points, scratch.heights, m, R.transpose() * face.u, R.transpose() * face.v, keep, &scratch.indices);
    for (int q = 0; q < nk; ++q) {
      const int j = keep[static_cast<size_t>(q)];
      emit(face, world_vertex(j), scratch.heights[static_cast<size_t>(j)], face_is_a, out);
    }
    return nk;
  }

  Candidates cand;
  switch (shape.type) {
    case ShapeType::kSphere:
      cand.add(c - shape.radius * n, tol);
      break;
    case ShapeType::kCapsule: {
      // For each end e of the segment: if it is the lower end (or level), the lowest point of
      // its cap sphere, e − r n; if it is the higher end, the end of the lowest generator line
      // of the cylindrical part, e − r ŵ with ŵ the unit component of n normal to the axis
      // (e − r n would lie inside the capsule). Lying flat both are e − r n.
      const Vector3 axis = R.col(2);
      const Vector3 w = n - n.dot(axis) * axis;
      const double wn = w.norm();
      for (double side : {-1.0, 1.0}) {
        const Vector3 e = c + side * 0.5 * shape.length * axis;
        const bool higher = side * n.dot(axis) > 0.0;
        cand.add(higher && wn > 1e-12 ? Vector3(e - (shape.radius / wn) * w) : Vector3(e - shape.radius * n), tol);
      }
      break;
    }
    case ShapeType::kBox: {
      const Vector3 h = 0.5 * shape.size;
      for (int i = 0; i < 8; ++i) {
        const Vector3 corner((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z());
        cand.add(R * corner + c, tol);
      }
      break;
    }
    case ShapeType::kCylinder: {
      const Vector3 axis = R.col(2);
      const Vector3 e1 = R.col(0), e2 = R.col(1);
      // Direction of the lowest rim point: −n projected on the disc plane. Undefined when the
      // disc is parallel to the face (then every rim point is equally low).
      const Vector3 w = -n + n.dot(axis) * axis;
      const double wn = w.norm();
      const bool has_lowest = wn > 1e-9;
      // The 8 body-fixed rim points describe a disc resting (nearly) flat on the face. For a
      // disc far from parallel (a cylinder lying on its side or tilted) only the lowest rim
      // point is a contact: body-fixed rim points would come and go as the cylinder rolls,
      // switching the contact count between 2 and 4 every 45° (normal stiffness doubling).
      const bool disc_nearly_parallel = std::abs(n.dot(axis)) >= kDiscParallelCos;
      for (double side : {-1.0, 1.0}) {
        const Vector3 cd = c + side * 0.5 * shape.length * axis;
        if (has_lowest) cand.add(cd + (shape.radius / wn) * w, 1e-9 * scale);
        if (disc_nearly_parallel)
          for (size_t k = 0; k < 8; ++k)
            cand.add(cd + shape.radius * (kRimCos[k] * e1 + kRimSin[k] * e2), 1e-9 * scale);
      }
      break;
    }
    case ShapeType::kConvexMesh:
    case ShapeType::kHalfSpace:
    case ShapeType::kMesh:  // static: never rests on a face (static_mesh_contact.h)
      return 0;
  }
  for (int i = 0; i < cand.n; ++i) {
    const Vector3& x = cand.x[static_cast<size_t>(i)];
    const double phi = height(x);
    if (phi <= margin && inside_face(face, x, tol)) emit(face, x, phi, face_is_a, out);
  }
  return static_cast<int>(out.size() - start);
}

namespace {

// Polygon with at most 4 + 4 vertices (a quadrilateral clipped by 4 half-planes gains at most
// one vertex per plane).
struct Polygon {
  std::array<Vector3, 8> x;
  int n = 0;
};

// Sutherland–Hodgman step: keeps the part of `in` with dir·(x − origin) ≤ limit. A vertex
// within `tol` outside the plane counts as on it (kept as is, no extra intersection point),
// so that vertices lying on a side plane, as for equal faces stacked, stay single vertices.
void clip(const Polygon& in, const Vector3& dir, const Vector3& origin, double limit, double tol, Polygon& out) {
  out.n = 0;
  for (int i = 0; i < in.n; ++i) {
    const Vector3& a = in.x[static_cast<size_t>(i)];
    const Vector3& b = in.x[static_cast<size_t>((i + 1) % in.n)];
    const double da = dir.dot(a - origin) - limit;
    const double db = dir.dot(b - origin) - limit;
    const bool a_in = da <= tol, b_in = db <= tol;
    if (a_in && out.n < 8) out.x[static_cast<size_t>(out.n++)] = a;
    // The edge crosses the plane from strictly inside to outside or back: add the crossing.
    if (((a_in && !b_in && da < 0.0) || (!a_in && b_in && db < 0.0)) && out.n < 8)
      out.x[static_cast<size_t>(out.n++)] = a + (da / (da - db)) * (b - a);
  }
}

// Closest points between segments p(s) = p0 + s d0, |s| ≤ e0 and q(t) = q0 + t d1, |t| ≤ e1
// (d0, d1 unit).
void closest_points_segments(const Vector3& p0, const Vector3& d0, double e0, const Vector3& q0, const Vector3& d1,
                             double e1, Vector3* p, Vector3* q) {
  const Vector3 r = p0 - q0;
  const double b = d0.dot(d1), c = d0.dot(r), f = d1.dot(r);
  const double denom = 1.0 - b * b;
  double s = denom > 1e-12 ? (b * f - c) / denom : 0.0;
  s = std::clamp(s, -e0, e0);
  double t = std::clamp(b * s + f, -e1, e1);
  s = std::clamp(b * t - c, -e0, e0);
  *p = p0 + s * d0;
  *q = q0 + t * d1;
}

}  // namespace

BoxBoxStatus box_box_manifold(const Vector3& size_a, const Transform& X_WA, const Vector3& size_b,
                              const Transform& X_WB, double margin, std::vector<PairContact>& out) {
  const Vector3 ha = 0.5 * size_a, hb = 0.5 * size_b;
  const Matrix3& RA = X_WA.R;
  const Matrix3& RB = X_WB.R;
  const Vector3 t = X_WB.p - X_WA.p;
  const double scale = std::max(ha.maxCoeff(), hb.maxCoeff());

  // The 15 axes of the separating-axis test, in A's frame (Gottschalk's OBB overlap test): with
  // C = R_Aᵀ R_B (C(i, j) = a_i · b_j) and T = R_Aᵀ t, every projection radius is a sum of
  // |C(i, j)| h terms, so one 3 × 3 product replaces two per axis. The edge axes use b_j × b_m =
  // ±b_l of B's orthonormal frame. Separation > 0: a gap along that axis.
  const Matrix3 C = RA.transpose() * RB;
  const Matrix3 absC = C.cwiseAbs();
  const Vector3 T = RA.transpose() * t;

  double sep_a = -kInf, sep_b = -kInf, sep_e = -kInf;
  int face_a = 0, face_b = 0, edge_i = 0, edge_j = 0;
  for (int k = 0; k < 3; ++k) {  // A's face normals a_k
    const double s = std::abs(T[k]) - ha[k] - absC.row(k).dot(hb);
    if (s > margin) return BoxBoxStatus::kSeparated;
    if (s > sep_a) {
      sep_a = s;
      face_a = k;
    }
  }
  for (int k = 0; k < 3; ++k) {  // B's face normals b_k
    const double s = std::abs(C.col(k).dot(T)) - absC.col(k).dot(ha) - hb[k];
    if (s > margin) return BoxBoxStatus::kSeparated;
    if (s > sep_b) {
      sep_b = s;
      face_b = k;
    }
  }
  double edge_len = 1.0;
  for (int i = 0; i < 3; ++i) {  // a_i × b_j = R_A (e_i × C(:, j)), whose entry i is 0
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const double len = std::sqrt(C(i1, j) * C(i1, j) + C(i2, j) * C(i2, j));
      if (len < 1e-6) continue;  // parallel edges: covered by the face axes
      const double ra = ha[i1] * absC(i2, j) + ha[i2] * absC(i1, j);
      const double rb = hb[j1] * absC(i, j2) + hb[j2] * absC(i, j1);
      const double s = (std::abs(T[i2] * C(i1, j) - T[i1] * C(i2, j)) - ra - rb) / len;
      if (s > margin) return BoxBoxStatus::kSeparated;
      if (s > sep_e) {
        sep_e = s;
        edge_i = i;
        edge_j = j;
        edge_len = len;
      }
    }
  }

  // Prefer A's faces, then B's, then edges, unless the other is clearly better.
  const bool use_b = sep_b > sep_a + 1e-9 * scale + 1e-3 * std::abs(sep_a);
  const double sep_face = use_b ? sep_b : sep_a;
  bool use_edge = sep_e > sep_face + 1e-6 * scale + 0.05 * std::abs(sep_face);
  // An edge axis within 2.6° of the face normal (|cos| ≥ kEdgeAlongFaceCos) is a box resting
  // with an edge or a face on the other's face: one box's edge lies (nearly) in the other's face
  // plane, so a_i × b_j is (nearly) that face's normal and the two gaps are equal up to the tilt.
  // The face manifold is then the contact (the edge's two ends, or the whole clipped face); the
  // edge axis's one closest point is not. Choosing by the gaps alone, the choice flipped from
  // step to step on a settled pile (at 0.08 mm penetration the edge gap won by 6 µm, past the
  // 5 % bias): 5 points, then 1, then 5 again, each flip a jolt to the solver's warm start
  // (docs/sap.md, "Settled piles").
  Vector3 edge_axis = Vector3::Zero();
  if (use_edge) {
    edge_axis = RA.col(edge_i).cross(RB.col(edge_j)) / edge_len;
    const Vector3 n_face = use_b ? RB.col(face_b) : RA.col(face_a);
    if (std::abs(n_face.dot(edge_axis)) >= kEdgeAlongFaceCos) use_edge = false;
  }

  if (use_edge) {
    if (sep_e >= 0.0) return BoxBoxStatus::kFallback;  // separated edge–edge: general distance
    const Vector3 n = sign_or_plus(t.dot(edge_axis)) * edge_axis;  // from A into B
    // Supporting edge of A along +n and of B along −n.
    Vector3 pa = X_WA.p, pb = X_WB.p;
    for (int k = 0; k < 3; ++k) {
      if (k != edge_i) pa += ha[k] * sign_or_plus(RA.col(k).dot(n)) * RA.col(k);
      if (k != edge_j) pb -= hb[k] * sign_or_plus(RB.col(k).dot(n)) * RB.col(k);
    }
    Vector3 ca, cb;
    closest_points_segments(pa, RA.col(edge_i), ha[edge_i], pb, RB.col(edge_j), hb[edge_j], &ca, &cb);
    PairContact c;
    c.p_W = 0.5 * (ca + cb);
    c.n_W = n;
    c.phi = sep_e;
    out.push_back(c);
    return BoxBoxStatus::kContacts;
  }

  // Face contact. Reference box R (its face axis k), incident box I.
  const Matrix3& RR = use_b ? RB : RA;
  const Matrix3& RI = use_b ? RA : RB;
  const Vector3& hR = use_b ? hb : ha;
  const Vector3& hI = use_b ? ha : hb;
  const Vector3& cR = use_b ? X_WB.p : X_WA.p;
  const Vector3& cI = use_b ? X_WA.p : X_WB.p;
  const int k = use_b ? face_b : face_a;
  const Vector3 n = sign_or_plus(t.dot(RR.col(k))) * RR.col(k);  // from A into B
  const Vector3 n_ref = use_b ? Vector3(-n) : n;                   // out of R, towards I
  const Vector3 face_center = cR + hR[k] * n_ref;
  const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  const Vector3 u = RR.col(k1), v = RR.col(k2);

  // Incident face: the face of I most anti-parallel to n_ref (first axis wins ties).
  int m = 0;
  for (int i = 1; i < 3; ++i) {
    if (std::abs(RI.col(i).dot(n_ref)) > std::abs(RI.col(m).dot(n_ref))) m = i;
  }
  const double sigma = RI.col(m).dot(n_ref) > 0.0 ? -1.0 : 1.0;
  const Vector3 ci = cI + sigma * hI[m] * RI.col(m);
  const Vector3 a1 = hI[(m + 1) % 3] * RI.col((m + 1) % 3);
  const Vector3 a2 = hI[(m + 2) % 3] * RI.col((m + 2) % 3);
  Polygon p0, p1;
  p0.n = 4;
  p0.x[0] = ci + a1 + a2;
  p0.x[1] = ci - a1 + a2;
  p0.x[2] = ci - a1 - a2;
  p0.x[3] = ci + a1 - a2;
  // Clip against the reference face's four side planes.
  const double tol = 1e-12 * (1.0 + scale);
  clip(p0, u, face_center, hR[k1], tol, p1);
  clip(p1, -u, face_center, hR[k1], tol, p0);
  clip(p0, v, face_center, hR[k2], tol, p1);
  clip(p1, -v, face_center, hR[k2], tol, p0);

  const size_t start = out.size();
  for (int i = 0; i < p0.n; ++i) {
    const Vector3& x = p0.x[static_cast<size_t>(i)];
    const double depth = n_ref.dot(x - face_center);
    if (depth > margin) continue;
    // Merge clipped vertices that coincide (degenerate slivers).
    bool duplicate = false;
    for (size_t q = start; q < out.size(); ++q) {
      if ((out[q].p_W + 0.5 * out[q].phi * n_ref - x).norm() <= 1e-9 * (1.0 + scale)) duplicate = true;
    }
    if (duplicate) continue;
    PairContact c;
    c.p_W = x - 0.5 * depth * n_ref;
    c.n_W = n;
    c.phi = depth;
    out.push_back(c);
  }
  return out.size() > start ? BoxBoxStatus::kContacts : BoxBoxStatus::kFallback;
}

Polytope make_polytope(const Shape& shape) {
  Polytope P;
  if (shape.type == ShapeType::kBox) {
    const Vector3 h = 0.5 * shape.size;
    for (int i = 0; i < 8; ++i)
      P.vertices_G.emplace_back((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z());
    // Corner i has bit k set when its coordinate k is +h[k]. Face ±k: the 4 corners with bit k
    // equal to (+: 1, −: 0), ordered counter-clockwise about the outward normal.
    for (int k = 0; k < 3; ++k) {
      const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      for (int sgn : {1, -1}) {
        PolytopeFace f;
        f.normal_G = Vector3::Zero();
        f.normal_G[k] = sgn;
        f.offset = h[k];
        const int base = sgn > 0 ? (1 << k) : 0;
        // (k1, k2) square corners in counter-clockwise order about +k: (−,−), (+,−), (+,+), (−,+).
        const int order[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
        for (int q = 0; q < 4; ++q) {
          const int qq = sgn > 0 ? q : 3 - q;  // reversed about −k
          f.vertices.push_back(base | (order[qq][0] << k1) | (order[qq][1] << k2));
        }
        P.faces.push_back(std::move(f));
      }
    }
    P.size = h.norm();
    return P;
  }
  if (shape.type != ShapeType::kConvexMesh) return P;
  P.vertices_G = shape.vertices;
  for (const Vector3& x : shape.vertices) P.size = std::max(P.size, x.norm());
  constexpr double kSameNormalCos = 1.0 - 5e-7;  // about 0.057°
  const double plane_tol = 1e-6 * std::max(P.size, 1e-9);
  // Coplanar triangles that share an edge are joined (union–find, each component keeping the
  // plane of its first triangle, so that a gently curved surface does not chain into one face):
  // linear in the number of triangles.
  const size_t T = shape.triangles.size();
  std::vector<Vector3> tri_w(T), tri_n(T);
  std::vector<char> valid(T, 0);
  for (size_t i = 0; i < T; ++i) {
    const auto& t = shape.triangles[i];
    const Vector3& a = shape.vertices[static_cast<size_t>(t[0])];
    tri_w[i] = (shape.vertices[static_cast<size_t>(t[1])] - a).cross(shape.vertices[static_cast<size_t>(t[2])] - a);
    const double len = tri_w[i].norm();
    if (len > 0.0) valid[i] = 1, tri_n[i] = tri_w[i] / len;
  }
  std::vector<std::array<int, 3>> edges;  // (lower vertex, higher vertex, triangle)
  edges.reserve(3 * T);
  for (size_t i = 0; i < T; ++i)
    for (int k = 0; k < 3; ++k) {
      const int u = shape.triangles[i][static_cast<size_t>(k)], v = shape.triangles[i][static_cast<size_t>((k + 1) % 3)];
      edges.push_back({std::min(u, v), std::max(u, v), static_cast<int>(i)});
    }
  std::sort(edges.begin(), edges.end());
  std::vector<int> root(T);
  for (size_t i = 0; i < T; ++i) root[i] = static_cast<int>(i);
  auto find = [&](int i) {
    while (root[static_cast<size_t>(i)] != i) i = root[static_cast<size_t>(i)] = root[static_cast<size_t>(root[static_cast<size_t>(i)])];
    return i;
  };
  auto coplanar = [&](int r, int q) {  // triangle q on the plane of component root r
    const Vector3& a_r = shape.vertices[static_cast<size_t>(shape.triangles[static_cast<size_t>(r)][0])];
    const Vector3& a_q = shape.vertices[static_cast<size_t>(shape.triangles[static_cast<size_t>(q)][0])];
    return tri_n[static_cast<size_t>(r)].dot(tri_n[static_cast<size_t>(q)]) >= kSameNormalCos &&
           std::abs(tri_n[static_cast<size_t>(r)].dot(a_q - a_r)) <= plane_tol;
  };
  for (size_t e = 0; e + 1 < edges.size(); ++e) {
    for (size_t g = e + 1; g < edges.size() && edges[g][0] == edges[e][0] && edges[g][1] == edges[e][1]; ++g) {
      const int i = edges[e][2], j = edges[g][2];
      if (!valid[static_cast<size_t>(i)] || !valid[static_cast<size_t>(j)]) continue;
      const int ri = find(i), rj = find(j);
      if (ri == rj || !coplanar(std::min(ri, rj), std::max(ri, rj))) continue;
      root[static_cast<size_t>(std::max(ri, rj))] = std::min(ri, rj);  // the lower index is the root
    }
  }
  // Faces in the order of their first triangle.
  std::vector<int> face_of(T, -1);
  std::vector<Vector3> weighted;    // per face: area-weighted normal sum
  std::vector<std::vector<int>> members;
  for (size_t i = 0; i < T; ++i) {
    if (!valid[i]) continue;
    const int r = find(static_cast<int>(i));
    int& f = face_of[static_cast<size_t>(r)];
    if (f < 0) {
      f = static_cast<int>(members.size());
      members.emplace_back();
      weighted.push_back(Vector3::Zero());
    }
    weighted[static_cast<size_t>(f)] += tri_w[i];
    for (int vtx : shape.triangles[i]) members[static_cast<size_t>(f)].push_back(vtx);
  }
  for (size_t f = 0; f < members.size(); ++f) {
    std::vector<int>& m = members[f];  // each vertex once
    std::sort(m.begin(), m.end());
    m.erase(std::unique(m.begin(), m.end()), m.end());
    PolytopeFace face;
    face.normal_G = weighted[f].normalized();
    Vector3 centroid = Vector3::Zero();
    face.offset = -kInf;
    for (int i : members[f]) {
      centroid += shape.vertices[static_cast<size_t>(i)];
      face.offset = std::max(face.offset, face.normal_G.dot(shape.vertices[static_cast<size_t>(i)]));
    }
    centroid /= static_cast<double>(members[f].size());
    Vector3 u, v;
    plane_axes(face.normal_G, &u, &v);
    std::vector<std::pair<double, int>> by_angle;
    for (int i : members[f]) {
      const Vector3 r = shape.vertices[static_cast<size_t>(i)] - centroid;
      by_angle.emplace_back(std::atan2(v.dot(r), u.dot(r)), i);
    }
    std::sort(by_angle.begin(), by_angle.end());
    for (const auto& [angle, i] : by_angle) face.vertices.push_back(i);
    P.faces.push_back(std::move(face));
  }
  return P;
}

namespace {

// The face of `p` whose normal is best aligned with d_G (G frame); its cosine in *cos_out.
size_t best_face(const Polytope& p, const Vector3& d_G, double* cos_out) {
  size_t best = 0;
  double best_cos = -kInf;
  for (size_t f = 0; f < p.faces.size(); ++f) {
    const double c = p.faces[f].normal_G.dot(d_G);
    if (c > best_cos) {
      best_cos = c;
      best = f;
    }
  }
  *cos_out = best_cos;
  return best;
}

}  // namespace

bool polytope_face_along(const Polytope& polytope, const Transform& X_WG, const Vector3& dir_W, double min_cos,
                         std::vector<Vector3>& polygon_W, PlanarFace* face) {
  if (polytope.faces.empty()) return false;
  double best_cos = 0.0;
  const size_t best = best_face(polytope, X_WG.R.transpose() * dir_W, &best_cos);
  if (best_cos < min_cos) return false;
  const PolytopeFace& pf = polytope.faces[best];
  polygon_W.clear();
  Vector3 center = Vector3::Zero();
  for (int i : pf.vertices) {
    polygon_W.push_back(X_WG.act(polytope.vertices_G[static_cast<size_t>(i)]));
    center += polygon_W.back();
  }
  center /= static_cast<double>(polygon_W.size());
  face->normal = X_WG.R * pf.normal_G;
  // The face plane through the supporting offset (vertices of merged faces may sit slightly
  // below it).
  face->center = center + (pf.offset + X_WG.p.dot(face->normal) - face->normal.dot(center)) * face->normal;
  plane_axes(face->normal, &face->u, &face->v);
  double extent = 0.0;
  for (const Vector3& x : polygon_W) extent = std::max(extent, (x - center).norm());
  face->half_u = face->half_v = extent;
  face->bounded = true;
  face->polygon = &polygon_W;
  return true;
}

namespace {

// Sutherland–Hodgman on a polygon of any size: keeps the part of `in` with dir·(x − origin) ≤ 0.
// A vertex within `tol` outside counts as on the plane (kept as is, no extra crossing point).
void clip_polygon(const std::vector<Vector3>& in, const Vector3& dir, const Vector3& origin, double tol,
                  std::vector<Vector3>& out) {
  out.clear();
  const size_t n = in.size();
  for (size_t i = 0; i < n; ++i) {
    const Vector3& a = in[i];
    const Vector3& b = in[(i + 1) % n];
    const double da = dir.dot(a - origin);
    const double db = dir.dot(b - origin);
    const bool a_in = da <= tol, b_in = db <= tol;
    if (a_in) out.push_back(a);
    if ((a_in && !b_in && da < 0.0) || (!a_in && b_in && db < 0.0)) out.push_back(a + (da / (da - db)) * (b - a));
  }
}

}  // namespace

int polytope_manifold(const Polytope& a, const Transform& X_WA, const Polytope& b, const Transform& X_WB,
                      const Vector3& n_W, double phi, double margin, double min_cos, ManifoldScratch& scratch,
                      std::vector<PairContact>& out) {
  if (a.faces.empty() || b.faces.empty()) return 0;
  // Best-aligned faces: A's along +n, B's along −n.
  double cos_a = 0.0, cos_b = 0.0;
  const size_t fa = best_face(a, X_WA.R.transpose() * n_W, &cos_a);
  const size_t fb = best_face(b, X_WB.R.transpose() * Vector3(-n_W), &cos_b);
  if (std::max(cos_a, cos_b) < min_cos) return 0;
  // Between two candidate faces, the one with the larger separation (the shallower overlap along
  // its normal, as the separating-axis test picks), A's unless B's is clearly better.
  auto separation = [](const Transform& X_F, const PolytopeFace& f, const Polytope& other,
                       const Transform& X_O) {
    const Vector3 N = X_F.R * f.normal_G;
    const Vector3 N_O = X_O.R.transpose() * N;
    double lowest = kInf;
    for (const Vector3& x : other.vertices_G) lowest = std::min(lowest, N_O.dot(x));
    return lowest + N.dot(X_O.p) - (f.offset + N.dot(X_F.p));
  };
  bool ref_is_a = cos_a >= min_cos;
  if (ref_is_a && cos_b >= min_cos) {
    const double sep_a = separation(X_WA, a.faces[fa], b, X_WB);
    const double sep_b = separation(X_WB, b.faces[fb], a, X_WA);
    ref_is_a = !(sep_b > sep_a + 1e-9 * (1.0 + std::max(a.size, b.size)) + 1e-3 * std::abs(sep_a));
  }
  const Polytope& ref = ref_is_a ? a : b;
  const Polytope& inc = ref_is_a ? b : a;
  const Transform& X_R = ref_is_a ? X_WA : X_WB;
  const Transform& X_I = ref_is_a ? X_WB : X_WA;
  const PolytopeFace& rf = ref.faces[ref_is_a ? fa : fb];
  const Vector3 N = X_R.R * rf.normal_G;  // out of the reference polytope, towards the other
  const Vector3 p_ref = X_R.p + rf.offset * N;  // a point of the reference plane (after N·X_R.p)
  // Incident face: most anti-parallel to N.
  double cos_i = 0.0;
  const PolytopeFace& inc_face = inc.faces[best_face(inc, X_I.R.transpose() * Vector3(-N), &cos_i)];
  scratch.clip_a.clear();
  for (int i : inc_face.vertices) scratch.clip_a.push_back(X_I.act(inc.vertices_G[static_cast<size_t>(i)]));
  const double scale = 1.0 + std::max(a.size, b.size);
  const double tol = 1e-12 * scale;
  // The reference polygon in W and its side planes (outward directions N × edge reversed).
  scratch.polygon.clear();
  for (int i : rf.vertices) scratch.polygon.push_back(X_R.act(ref.vertices_G[static_cast<size_t>(i)]));
  const size_t m = scratch.polygon.size();
  for (size_t i = 0; i < m && !scratch.clip_a.empty(); ++i) {
    const Vector3& p0 = scratch.polygon[i];
    const Vector3 edge = scratch.polygon[(i + 1) % m] - p0;
    const double len = edge.norm();
    if (!(len > tol)) continue;
    const Vector3 outward = edge.cross(N) / len;  // counter-clockwise about N: N × edge points in
    clip_polygon(scratch.clip_a, outward, p0, tol, scratch.clip_b);
    std::swap(scratch.clip_a, scratch.clip_b);
  }
  // Depths; drop repeats (degenerate slivers).
  scratch.points.clear();
  scratch.heights.clear();
  for (const Vector3& x : scratch.clip_a) {
    const double depth = N.dot(x - p_ref);
    if (depth > margin) continue;
    bool duplicate = false;
    for (const Vector3& y : scratch.points) {
      if ((x - y).norm() <= 1e-9 * scale) duplicate = true;
    }
    if (duplicate) continue;
    scratch.points.push_back(x);
    scratch.heights.push_back(depth);
  }
  const int count = static_cast<int>(scratch.points.size());
  if (count == 0) return 0;
  const double deepest = *std::min_element(scratch.heights.begin(), scratch.heights.end());
  if (deepest > phi + std::max(1e-6, 0.1 * std::abs(phi))) return 0;
  PlanarFace face;
  face.normal = N;
  plane_axes(N, &face.u, &face.v);
  auto put = [&](int j) { emit(face, scratch.points[static_cast<size_t>(j)], scratch.heights[static_cast<size_t>(j)], ref_is_a, out); };
  if (count <= 8) {
    for (int j = 0; j < count; ++j) put(j);
    return count;
  }
  std::array<int, 9> keep{};
  const int nk = spread_points(scratch.points, scratch.heights, count, face.u, face.v, keep);
  for (int q = 0; q < nk; ++q) put(keep[static_cast<size_t>(q)]);
  return nk;
}

bool sphere_box_point(double radius, const math::Vector3& p_WS, const math::Vector3& size, const math::Transform& X_WB,
                      double margin, PairContact* contact) {
  const math::Vector3 h = 0.5 * size;
  const math::Vector3 p_BS = X_WB.R.transpose() * (p_WS - X_WB.p);  // centre in box coordinates
  const math::Vector3 q_B = p_BS.cwiseMax(-h).cwiseMin(h);          // closest box point
  math::Vector3 n_B;
  double phi;
  math::Vector3 surface_B;  // the box's surface point
  const math::Vector3 d = p_BS - q_B;
  const double dist = d.norm();
  if (dist > 0.0) {  // centre outside the box
    phi = dist - radius;
    if (phi > margin) return false;
    n_B = d / dist;
    surface_B = q_B;
  } else {  // inside (or on the surface): leave through the nearest face
    int axis = 0;
    double depth = h[0] - std::abs(p_BS[0]);
    for (int i = 1; i < 3; ++i) {
      const double di = h[i] - std::abs(p_BS[i]);
      if (di < depth) {
        depth = di;
        axis = i;
      }
    }
    n_B = math::Vector3::Zero();
    n_B[axis] = p_BS[axis] < 0.0 ? -1.0 : 1.0;
    phi = -depth - radius;
    surface_B = p_BS;
    surface_B[axis] = n_B[axis] * h[axis];
  }
  const math::Vector3 n_W = X_WB.R * n_B;
  const math::Vector3 box_point_W = X_WB.p + X_WB.R * surface_B;
  contact->n_W = n_W;
  contact->phi = phi;
  contact->p_W = 0.5 * (box_point_W + (p_WS - radius * n_W));
  return true;
}

}  // namespace coulomb::geometry::internal
