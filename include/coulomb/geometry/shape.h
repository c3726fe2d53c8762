// Collision shapes and their mass properties.
//
// Every shape is described in its own frame G, which the scene places in a body frame B at
// X_BG. Conventions: a box is centred at G's origin with full edge lengths `size`; a sphere is
// centred at G's origin; a capsule and a cylinder are centred at G's origin with their axis
// along G's z-axis and `length` the length of the cylindrical part (a capsule adds two
// hemispherical caps of `radius`); a half-space is {z ≤ 0} in G (outward normal +z_G, surface
// through G's origin); a convex mesh lists vertices in G coordinates. A (non-convex) mesh is a
// triangle surface in G — terrain, a table — that stays as it is: static geometry (on the world
// body), with no volume or mass, that collides with convex shapes (docs/geometry.md).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "coulomb/math/spatial.h"

namespace coulomb::geometry {

/// The range of shape dimensions coulomb accepts [m]: a sphere, capsule or cylinder radius, a
/// capsule or cylinder length and a box edge must lie in [kMinShapeDimension,
/// kMaxShapeDimension], and every vertex coordinate of a (convex) mesh within
/// ±kMaxShapeDimension. Outside it the geometry is not physical for a simulator of robots and
/// objects, and squares of sizes near 1e155 overflow in the broadphase's bounding volumes
/// (docs/scene-format.md, "Shapes").
inline constexpr double kMinShapeDimension = 1e-6;
inline constexpr double kMaxShapeDimension = 1e6;

enum class ShapeType { kSphere, kBox, kCapsule, kCylinder, kHalfSpace, kConvexMesh, kMesh };

/// "sphere", "box", "capsule", "cylinder", "halfspace", "convex_mesh", "mesh".
const char* shape_type_name(ShapeType type);

struct Shape {
  ShapeType type = ShapeType::kSphere;
  double radius = 0.0;                           ///< sphere, capsule, cylinder [m]
  double length = 0.0;                           ///< capsule (cylindrical part), cylinder [m]
  math::Vector3 size = math::Vector3::Zero();    ///< box: full edge lengths [m]
  std::vector<math::Vector3> vertices;           ///< convex mesh, mesh: vertices in G [m]
  std::vector<std::array<int, 3>> triangles;     ///< convex mesh, mesh: outward-facing triangles
  std::string mesh_file;                         ///< convex mesh, mesh: the file it came from, if any

  static Shape Sphere(double radius);
  static Shape Box(const math::Vector3& size);
  static Shape Capsule(double radius, double length);
  static Shape Cylinder(double radius, double length);
  static Shape HalfSpace();
  static Shape ConvexMesh(std::vector<math::Vector3> vertices, std::vector<std::array<int, 3>> triangles);
  /// A non-convex triangle surface (ShapeType::kMesh): triangles counter-clockwise seen from the
  /// side shapes rest on (the side contacts push them to is chosen per triangle, docs/geometry.md).
  static Shape Mesh(std::vector<math::Vector3> vertices, std::vector<std::array<int, 3>> triangles);

  /// Throws std::invalid_argument naming the field if a dimension is not a finite number in
  /// [kMinShapeDimension, kMaxShapeDimension] m, a vertex coordinate lies outside
  /// ±kMaxShapeDimension m, or a mesh is empty. `context` prefixes the message (e.g. "scene.yaml: body 'ball' shape 0").
  /// A convex mesh must also have ≥ 4 vertices and ≥ 4 triangles, finite vertices, triangle
  /// indices in [0, vertices.size()) and a positive enclosed volume (closed, outward-facing
  /// triangles); the message then names the vertex, triangle entry or volume, and mesh_file.
  /// A (non-convex) mesh needs finite vertices, triangle indices in range and at least one
  /// non-degenerate triangle (area > 1e-12 of its extent squared); it need not be closed.
  /// Fields that the type does not use are not checked.
  void validate(const std::string& context) const;

  /// Volume [m³]; infinite for a half-space. A convex mesh's volume is the signed-tetrahedron
  /// sum over its triangles (call validate() first). Throws std::invalid_argument for a
  /// (non-convex) mesh: a triangle surface bounds no solid known to be closed, so it has no
  /// volume (make its body fixed, or use its convex hull).
  double volume() const;
  /// Spatial inertia about G's origin in G of a solid of uniform `density` [kg/m³]: for the
  /// centred primitives h = 0 and I_o is diagonal (sphere 2/5 m r²; box m/12 (b² + c²), …;
  /// cylinder m (3r² + L²)/12 transverse, m r²/2 axial; capsule: cylinder plus two hemispheres
  /// with their parallel-axis terms); a convex mesh integrates signed tetrahedra (origin,
  /// triangle), so its centre of mass may be anywhere. Throws std::invalid_argument for a
  /// half-space or a (non-convex) mesh (static geometry, no mass), or a negative or non-finite
  /// density.
  math::SpatialInertia mass_properties(double density) const;
};

/// Lowest point [m, world] of `shape` placed at X_WG: exact for sphere, box, capsule and
/// cylinder (when a face or the axis is horizontal, the centre of the lowest face or edge), the
/// lowest vertex of a convex or non-convex mesh. A half-space is unbounded below (z = −infinity).
math::Vector3 lowest_point(const Shape& shape, const math::Transform& X_WG);
/// lowest_point(shape, X_WG).z().
double lowest_height(const Shape& shape, const math::Transform& X_WG);
/// Height [m] where the vertical line through (x, y) leaves `shape` at X_WG upwards — the top
/// a body dropped there would land on — for a half-space (whose outward normal points up), a
/// box and a (non-convex) mesh (the highest point where the line crosses one of its triangles:
/// mesh terrain); std::nullopt when the line misses it, for a wall, and for other shapes.
std::optional<double> top_below(const Shape& shape, const math::Transform& X_WG, double x, double y);

}  // namespace coulomb::geometry
