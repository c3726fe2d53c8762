// Shape factories, validation, volumes and uniform-density mass properties.
#include "coulomb/geometry/shape.h"

#include "../util/format.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace coulomb::geometry {

using math::Matrix3;
using math::SpatialInertia;
using math::Vector3;

const char* shape_type_name(ShapeType type) {
  switch (type) {
    case ShapeType::kSphere: return "sphere";
    case ShapeType::kBox: return "box";
    case ShapeType::kCapsule: return "capsule";
    case ShapeType::kCylinder: return "cylinder";
    case ShapeType::kHalfSpace: return "halfspace";
    case ShapeType::kConvexMesh: return "convex_mesh";
    case ShapeType::kMesh: return "mesh";
  }
  return "unknown";
}

Shape Shape::Sphere(double radius) {
  Shape s;
  s.type = ShapeType::kSphere;
  s.radius = radius;
  return s;
}

Shape Shape::Box(const math::Vector3& size) {
  Shape s;
  s.type = ShapeType::kBox;
  s.size = size;
  return s;
}

Shape Shape::Capsule(double radius, double length) {
  Shape s;
  s.type = ShapeType::kCapsule;
  s.radius = radius;
  s.length = length;
  return s;
}

Shape Shape::Cylinder(double radius, double length) {
  Shape s;
  s.type = ShapeType::kCylinder;
  s.radius = radius;
  s.length = length;
  return s;
}

Shape Shape::HalfSpace() {
  Shape s;
  s.type = ShapeType::kHalfSpace;
  return s;
}

Shape Shape::ConvexMesh(std::vector<math::Vector3> vertices, std::vector<std::array<int, 3>> triangles) {
  Shape s;
  s.type = ShapeType::kConvexMesh;
  s.vertices = std::move(vertices);
  s.triangles = std::move(triangles);
  return s;
}

Shape Shape::Mesh(std::vector<math::Vector3> vertices, std::vector<std::array<int, 3>> triangles) {
  Shape s;
  s.type = ShapeType::kMesh;
  s.vertices = std::move(vertices);
  s.triangles = std::move(triangles);
  return s;
}

namespace {

[[noreturn]] void fail(const std::string& context, const std::string& what) {
  std::ostringstream msg;
  if (!context.empty()) msg << context << ": ";
  msg << what;
  throw std::invalid_argument(msg.str());
}

std::string format_double(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

void require_positive(const std::string& context, const char* type, const char* field, double value) {
  if (!(std::isfinite(value) && value > 0.0))
    fail(context, std::string(type) + " " + field + " = " + format_double(value) +
                      " must be positive and finite");
  if (!(value >= kMinShapeDimension && value <= kMaxShapeDimension))
    fail(context, std::string(type) + " " + field + " = " + format_double(value) + " m is outside [" +
                      util::format_number(kMinShapeDimension) + ", " + util::format_number(kMaxShapeDimension) + "] m");
}

// Every vertex coordinate within ±kMaxShapeDimension (checked after finiteness).
void require_vertices_in_range(const std::string& context, const char* type, const std::vector<Vector3>& vertices,
                               const std::string& file) {
  for (size_t i = 0; i < vertices.size(); ++i)
    if (!(vertices[i].cwiseAbs().maxCoeff() <= kMaxShapeDimension))
      fail(context, std::string(type) + " vertices[" + std::to_string(i) + "] = (" + format_double(vertices[i].x()) +
                        ", " + format_double(vertices[i].y()) + ", " + format_double(vertices[i].z()) +
                        ") m lies outside +-" + util::format_number(kMaxShapeDimension) + " m" + file);
}

// Integrals over the solid of a closed, outward-oriented triangle mesh by signed tetrahedra
// (origin, a, b, c): volume V, first moment ∫x dV and second moment C = ∫x xᵀ dV. For one
// tetrahedron with D = a·(b×c) (six times its signed volume):
//   V = D/6,   ∫x dV = D/24 (a+b+c),   ∫x xᵀ dV = D/120 (a aᵀ + b bᵀ + c cᵀ + s sᵀ), s = a+b+c.
struct MeshIntegrals {
  double volume = 0.0;
  Vector3 first = Vector3::Zero();
  Matrix3 second = Matrix3::Zero();
};

MeshIntegrals integrate_mesh(const Shape& s) {
  MeshIntegrals r;
  for (const auto& t : s.triangles) {
    const Vector3& a = s.vertices[static_cast<size_t>(t[0])];
    const Vector3& b = s.vertices[static_cast<size_t>(t[1])];
    const Vector3& c = s.vertices[static_cast<size_t>(t[2])];
    const double D = a.dot(b.cross(c));
    const Vector3 sum = a + b + c;
    r.volume += D / 6.0;
    r.first += (D / 24.0) * sum;
    r.second += (D / 120.0) * (a * a.transpose() + b * b.transpose() + c * c.transpose() + sum * sum.transpose());
  }
  return r;
}

}  // namespace

void Shape::validate(const std::string& context) const {
  const char* name = shape_type_name(type);
  switch (type) {
    case ShapeType::kSphere:
      require_positive(context, name, "radius", radius);
      return;
    case ShapeType::kBox:
      require_positive(context, name, "size.x", size.x());
      require_positive(context, name, "size.y", size.y());
      require_positive(context, name, "size.z", size.z());
      return;
    case ShapeType::kCapsule:
    case ShapeType::kCylinder:
      require_positive(context, name, "radius", radius);
      require_positive(context, name, "length", length);
      return;
    case ShapeType::kHalfSpace:
      return;
    case ShapeType::kConvexMesh: {
      if (vertices.size() < 4)
        fail(context, std::string(name) + " vertices: " + std::to_string(vertices.size()) +
                          " given, a closed mesh needs at least 4" +
                          (mesh_file.empty() ? std::string() : " (file '" + mesh_file + "')"));
      if (triangles.size() < 4)
        fail(context, std::string(name) + " triangles: " + std::to_string(triangles.size()) +
                          " given, a closed mesh needs at least 4" +
                          (mesh_file.empty() ? std::string() : " (file '" + mesh_file + "')"));
      for (size_t i = 0; i < vertices.size(); ++i) {
        if (!vertices[i].allFinite())
          fail(context, std::string(name) + " vertices[" + std::to_string(i) + "] is not finite");
      }
      require_vertices_in_range(context, name, vertices,
                                mesh_file.empty() ? std::string() : " (file '" + mesh_file + "')");
      const int n = static_cast<int>(vertices.size());
      for (size_t i = 0; i < triangles.size(); ++i) {
        for (int k = 0; k < 3; ++k) {
          const int v = triangles[i][static_cast<size_t>(k)];
          if (v < 0 || v >= n)
            fail(context, std::string(name) + " triangles[" + std::to_string(i) + "][" + std::to_string(k) +
                              "] = " + std::to_string(v) + " is not a vertex index in [0, " +
                              std::to_string(n) + ")");
        }
      }
      const double V = integrate_mesh(*this).volume;
      if (!(V > 0.0))
        fail(context, std::string(name) + " volume = " + format_double(V) +
                          " must be positive (are the triangles closed and facing outward?)" +
                          (mesh_file.empty() ? std::string() : " (file '" + mesh_file + "')"));
      return;
    }
    case ShapeType::kMesh: {
      const std::string file = mesh_file.empty() ? std::string() : " (file '" + mesh_file + "')";
      if (vertices.empty() || triangles.empty())
        fail(context, std::string(name) + ": " + std::to_string(vertices.size()) + " vertices and " +
                          std::to_string(triangles.size()) + " triangles given, a mesh needs at least one triangle" +
                          file);
      Vector3 lo = Vector3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
      for (size_t i = 0; i < vertices.size(); ++i) {
        if (!vertices[i].allFinite())
          fail(context, std::string(name) + " vertices[" + std::to_string(i) + "] is not finite" + file);
        lo = lo.cwiseMin(vertices[i]);
        hi = hi.cwiseMax(vertices[i]);
      }
      require_vertices_in_range(context, name, vertices, file);
      const int n = static_cast<int>(vertices.size());
      const double extent = (hi - lo).norm();
      int proper = 0;
      for (size_t i = 0; i < triangles.size(); ++i) {
        for (int k = 0; k < 3; ++k) {
          const int v = triangles[i][static_cast<size_t>(k)];
          if (v < 0 || v >= n)
            fail(context, std::string(name) + " triangles[" + std::to_string(i) + "][" + std::to_string(k) +
                              "] = " + std::to_string(v) + " is not a vertex index in [0, " + std::to_string(n) +
                              ")" + file);
        }
        const Vector3& a = vertices[static_cast<size_t>(triangles[i][0])];
        const Vector3& b = vertices[static_cast<size_t>(triangles[i][1])];
        const Vector3& c = vertices[static_cast<size_t>(triangles[i][2])];
        proper += 0.5 * (b - a).cross(c - a).norm() > 1e-12 * extent * extent;
      }
      if (proper == 0)
        fail(context, std::string(name) + ": degenerate: all " + std::to_string(triangles.size()) +
                          " triangles have zero area (extent " + format_double(extent) + " m)" + file);
      return;
    }
  }
  fail(context, "unknown shape type " + std::to_string(static_cast<int>(type)));
}

double Shape::volume() const {
  constexpr double pi = std::numbers::pi;
  switch (type) {
    case ShapeType::kSphere: return 4.0 / 3.0 * pi * radius * radius * radius;
    case ShapeType::kBox: return size.x() * size.y() * size.z();
    case ShapeType::kCapsule: return pi * radius * radius * length + 4.0 / 3.0 * pi * radius * radius * radius;
    case ShapeType::kCylinder: return pi * radius * radius * length;
    case ShapeType::kHalfSpace: return std::numeric_limits<double>::infinity();
    case ShapeType::kConvexMesh: return integrate_mesh(*this).volume;
    case ShapeType::kMesh:
      throw std::invalid_argument("mesh volume: a non-convex triangle mesh" +
                                  (mesh_file.empty() ? std::string() : " ('" + mesh_file + "')") +
                                  " is static geometry and has no volume (attach it to a fixed body, or use its "
                                  "convex hull)");
  }
  return 0.0;
}

math::SpatialInertia Shape::mass_properties(double density) const {
  if (!(std::isfinite(density) && density >= 0.0))
    throw std::invalid_argument(std::string(shape_type_name(type)) + " mass_properties: density = " +
                                format_double(density) + " must be non-negative and finite");
  constexpr double pi = std::numbers::pi;
  const double r2 = radius * radius;
  switch (type) {
    case ShapeType::kSphere: {
      const double m = density * volume();
      const double I = 0.4 * m * r2;
      return SpatialInertia(m, Vector3::Zero(), Vector3(I, I, I).asDiagonal());
    }
    case ShapeType::kBox: {
      const double m = density * volume();
      const Vector3 s2 = size.cwiseProduct(size);
      return SpatialInertia(m, Vector3::Zero(),
                            Vector3(m / 12.0 * (s2.y() + s2.z()), m / 12.0 * (s2.x() + s2.z()),
                                    m / 12.0 * (s2.x() + s2.y()))
                                .asDiagonal());
    }
    case ShapeType::kCylinder: {
      const double m = density * volume();
      const double Ixx = m * (3.0 * r2 + length * length) / 12.0;
      return SpatialInertia(m, Vector3::Zero(), Vector3(Ixx, Ixx, 0.5 * m * r2).asDiagonal());
    }
    case ShapeType::kCapsule: {
      // Cylinder (mass m_c) plus two hemispheres (mass m_h each). About its own axis a
      // hemisphere has 2/5 m_h r² (half a sphere). About a transverse axis through the capsule
      // centre: the hemisphere's transverse inertia about its flat-face centre is 2/5 m_h r²;
      // its centre of mass sits 3r/8 from that face, so about its centre of mass it is
      // (2/5 − 9/64) m_h r², and shifting to the capsule centre at distance L/2 + 3r/8 gives
      // m_h (2/5 r² + L²/4 + 3 L r / 8).
      const double L = length;
      const double m_c = density * pi * r2 * L;
      const double m_h = density * 2.0 / 3.0 * pi * r2 * radius;
      const double Izz = 0.5 * m_c * r2 + 2.0 * 0.4 * m_h * r2;
      const double Ixx = m_c * (3.0 * r2 + L * L) / 12.0 + 2.0 * m_h * (0.4 * r2 + 0.25 * L * L + 0.375 * L * radius);
      return SpatialInertia(m_c + 2.0 * m_h, Vector3::Zero(), Vector3(Ixx, Ixx, Izz).asDiagonal());
    }
    case ShapeType::kConvexMesh: {
      const MeshIntegrals mi = integrate_mesh(*this);
      // Rotational inertia about G's origin: ρ (tr(C) 1 − C).
      const Matrix3 I_o = density * (mi.second.trace() * Matrix3::Identity() - mi.second);
      return SpatialInertia(density * mi.volume, density * mi.first, 0.5 * (I_o + I_o.transpose()));
    }
    case ShapeType::kHalfSpace:
      throw std::invalid_argument("halfspace mass_properties: a half-space has infinite volume and no mass "
                                  "properties (attach it to a fixed body)");
    case ShapeType::kMesh:
      throw std::invalid_argument("mesh mass_properties: a non-convex triangle mesh" +
                                  (mesh_file.empty() ? std::string() : " ('" + mesh_file + "')") +
                                  " is static geometry and has no mass properties (attach it to a fixed body, or "
                                  "use its convex hull)");
  }
  throw std::invalid_argument("mass_properties: unknown shape type");
}

math::Vector3 lowest_point(const Shape& shape, const math::Transform& X_WG) {
  const math::Vector3 down_G = X_WG.R.transpose() * math::Vector3(0.0, 0.0, -1.0);  // −e_z in G
  auto sign = [](double d) { return std::abs(d) < 1e-12 ? 0.0 : (d > 0.0 ? 1.0 : -1.0); };  // 0: a flat face, its centre
  math::Vector3 p_G = math::Vector3::Zero();
  switch (shape.type) {
    case ShapeType::kSphere:
      return X_WG.p + math::Vector3(0.0, 0.0, -shape.radius);
    case ShapeType::kBox:
      for (int i = 0; i < 3; ++i) p_G[i] = 0.5 * shape.size[i] * sign(down_G[i]);
      return X_WG.p + X_WG.R * p_G;
    case ShapeType::kCapsule:
      p_G.z() = 0.5 * shape.length * sign(down_G.z());
      return X_WG.p + X_WG.R * p_G + math::Vector3(0.0, 0.0, -shape.radius);
    case ShapeType::kCylinder: {
      p_G.z() = 0.5 * shape.length * sign(down_G.z());
      const math::Vector3 rim(down_G.x(), down_G.y(), 0.0);  // down, projected on the disc
      if (rim.norm() > 1e-12) p_G += shape.radius * rim.normalized();
      return X_WG.p + X_WG.R * p_G;
    }
    case ShapeType::kHalfSpace:
      return math::Vector3(X_WG.p.x(), X_WG.p.y(), -std::numeric_limits<double>::infinity());
    case ShapeType::kConvexMesh:
    case ShapeType::kMesh: {
      math::Vector3 lowest = math::Vector3::Constant(std::numeric_limits<double>::infinity());
      for (const math::Vector3& p_GV : shape.vertices) {
        const math::Vector3 p_WV = X_WG.p + X_WG.R * p_GV;
        if (p_WV.z() < lowest.z()) lowest = p_WV;
      }
      return lowest;
    }
  }
  return X_WG.p;
}

double lowest_height(const Shape& shape, const math::Transform& X_WG) { return lowest_point(shape, X_WG).z(); }

std::optional<double> top_below(const Shape& shape, const math::Transform& X_WG, double x, double y) {
  switch (shape.type) {
    case ShapeType::kHalfSpace: {
      const math::Vector3 n = X_WG.R.col(2);  // outward normal
      if (n.z() < 1e-9) return std::nullopt;  // a wall or an overhang: nothing is on top of it
      return X_WG.p.z() - (n.x() * (x - X_WG.p.x()) + n.y() * (y - X_WG.p.y())) / n.z();
    }
    case ShapeType::kBox: {
      // The vertical line through (x, y) in box coordinates, p(t) = o + t d, clipped by the slabs.
      const math::Vector3 o = X_WG.R.transpose() * (math::Vector3(x, y, 0.0) - X_WG.p);
      const math::Vector3 d = X_WG.R.transpose() * math::Vector3::UnitZ();
      double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
      for (int i = 0; i < 3; ++i) {
        const double h = 0.5 * shape.size[i];
        if (std::abs(d[i]) < 1e-15) {
          if (std::abs(o[i]) > h) return std::nullopt;
          continue;
        }
        double t0 = (-h - o[i]) / d[i], t1 = (h - o[i]) / d[i];
        if (t0 > t1) std::swap(t0, t1);
        lo = std::max(lo, t0);
        hi = std::min(hi, t1);
      }
      if (lo > hi) return std::nullopt;
      return hi;  // z of the exit point (the line is world-vertical, t is the world z)
    }
    case ShapeType::kMesh: {
      // The vertical line through (x, y) against every triangle (in G: o + t d, d = R_WGᵀ e_z,
      // t the world z): the highest crossing. Möller–Trumbore with a relative tolerance, so that
      // a line through a shared edge or vertex hits one of the triangles that meet there.
      const math::Vector3 o = X_WG.R.transpose() * (math::Vector3(x, y, 0.0) - X_WG.p);
      const math::Vector3 d = X_WG.R.transpose() * math::Vector3::UnitZ();
      std::optional<double> top;
      for (const auto& t : shape.triangles) {
        const math::Vector3& a = shape.vertices[static_cast<size_t>(t[0])];
        const math::Vector3 e1 = shape.vertices[static_cast<size_t>(t[1])] - a;
        const math::Vector3 e2 = shape.vertices[static_cast<size_t>(t[2])] - a;
        const math::Vector3 p = d.cross(e2);
        const double det = e1.dot(p);
        if (std::abs(det) <= 1e-14 * e1.norm() * e2.norm()) continue;  // vertical triangle (a wall)
        const math::Vector3 s = o - a;
        const double u = s.dot(p) / det;
        const math::Vector3 q = s.cross(e1);
        const double v = d.dot(q) / det;
        constexpr double kEdge = 1e-12;
        if (u < -kEdge || v < -kEdge || u + v > 1.0 + kEdge) continue;
        const double z = e2.dot(q) / det;
        if (!top || z > *top) top = z;
      }
      return top;
    }
    default:
      return std::nullopt;  // other shapes are not grounds (documented)
  }
}

}  // namespace coulomb::geometry
