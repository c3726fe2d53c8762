// Collision geometry from mesh files: the convex hull of a mesh, the convention MuJoCo and Drake
// follow for point contact, or — for static geometry such as terrain or a table — the file's
// triangles as they are. Files are read with assimp (STL, OBJ, DAE, PLY and every other format
// it reads; node transforms applied), scaled per axis, and their hull is built with Qhull.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "coulomb/geometry/shape.h"
#include "coulomb/math/spatial.h"

namespace coulomb::geometry {

/// A mesh that cannot become collision geometry: missing, unreadable, empty, degenerate (fewer
/// than 4 non-coplanar points), non-finite. what() names the file and the reason.
class MeshError : public std::runtime_error {
 public:
  MeshError(const std::string& file, const std::string& reason)
      : std::runtime_error(file + ": " + reason), file_(file), reason_(reason) {}
  const std::string& file() const { return file_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_, reason_;
};

/// What a hull was built from (for `coulomb inspect`).
struct MeshHullSource {
  std::string file;             ///< the mesh file
  math::Vector3 scale = math::Vector3::Ones();
  int mesh_vertices = 0;        ///< vertices in the file (all its meshes, after the scale)
  int mesh_triangles = 0;       ///< triangles in the file
  int hull_vertices = 0, hull_triangles = 0;
};

/// The convex hull of the mesh file at `path`, every vertex scaled by `scale` (per axis, in the
/// mesh's frame: URDF <mesh scale>), as a ShapeType::kConvexMesh Shape with outward triangles and
/// mesh_file = path [m]. Hulls are cached per (path, scale) for the life of the process (thread
/// safe): a scene with many copies of a link reads its file once. Throws MeshError.
Shape load_convex_hull(const std::string& path, const math::Vector3& scale = math::Vector3::Ones(),
                       MeshHullSource* source = nullptr);

/// The triangles of the mesh file at `path` as they are (not convex, not necessarily closed), every
/// vertex scaled by `scale` (per axis, in the mesh's frame), as a ShapeType::kMesh Shape with
/// mesh_file = path [m]: static geometry (terrain, a table) that CollisionWorld collides with
/// convex shapes. A mirroring scale (negative product) reverses the winding, so normals stay on
/// the same side. Cached per (path, scale) for the life of the process (thread safe). Throws
/// MeshError naming the file and the reason: missing, empty, unreadable, no triangles, a
/// non-finite vertex, only zero-area triangles, a zero or non-finite scale.
Shape load_mesh(const std::string& path, const math::Vector3& scale = math::Vector3::Ones());

/// The convex hull of points (Qhull, triangulated, outward faces, only the hull's vertices kept).
/// `what` names the points in errors. Throws MeshError for fewer than 4 non-coplanar points or
/// non-finite coordinates.
Shape convex_hull(const std::vector<math::Vector3>& points, const std::string& what);

}  // namespace coulomb::geometry
