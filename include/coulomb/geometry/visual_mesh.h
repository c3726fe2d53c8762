// Visual geometry: what viewers draw for a body (URDF <visual>), as opposed to the collision
// geometry the simulation uses. Primitives, or triangle meshes read from files with assimp
// (DAE, STL, OBJ, ...; node transforms and the URDF scale applied), with their material colours,
// and a vertex-clustering decimation that brings a mesh to a triangle budget for replay.html.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "coulomb/math/spatial.h"

namespace coulomb::geometry {

/// A visual element attached to a body (scene::Scene::visuals), drawn by viewers only.
struct VisualGeometry {
  enum class Type { kBox, kSphere, kCylinder, kMesh };
  std::string name;                 ///< e.g. "panda_link1/visual0"
  int body = 0;                     ///< body of the Model it moves with (0 = world)
  math::Transform X_BG;             ///< pose of the visual in the body frame
  Type type = Type::kMesh;
  math::Vector3 size = math::Vector3::Zero();  ///< box: full edge lengths [m]
  double radius = 0.0;              ///< sphere, cylinder [m]
  double length = 0.0;              ///< cylinder, along its z axis [m]
  std::string mesh_file;            ///< mesh: the resolved, existing file
  math::Vector3 mesh_scale = math::Vector3::Ones();
  /// The colour: the URDF <material> colour when has_rgba; otherwise meshes use their own
  /// materials' diffuse colours (when the file has them) and everything else this default.
  std::array<double, 4> rgba = {0.7, 0.7, 0.7, 1.0};
  bool has_rgba = false;
};

/// Triangles of one mesh file, grouped by material.
struct VisualMesh {
  struct Part {
    std::vector<math::Vector3> vertices;          ///< in the file's root frame, scaled [m]
    std::vector<std::array<int, 3>> triangles;    ///< counter-clockwise seen from outside
    std::array<double, 4> rgba = {0.7, 0.7, 0.7, 1.0};
    bool has_rgba = false;                        ///< the material gave a diffuse colour
  };
  std::string file;
  math::Vector3 scale = math::Vector3::Ones();
  std::vector<Part> parts;

  int num_triangles() const;
  int num_vertices() const;
  /// Axis-aligned bounding box of every part's vertices (lo, hi); zeros when empty.
  std::array<math::Vector3, 2> bounding_box() const;
};

/// Reads the mesh file at `path` (assimp: triangulated, identical vertices joined, node
/// transforms applied), every vertex scaled by `scale` (per axis). One Part per (node, mesh),
/// with the mesh's material diffuse colour when it has one. Throws MeshError
/// (geometry/mesh_loader.h) for a missing, unreadable or empty file.
VisualMesh load_visual_mesh(const std::string& path, const math::Vector3& scale = math::Vector3::Ones());

/// A copy of `mesh` with at most `max_triangles` triangles in all (when it has more): vertex
/// clustering on a uniform grid over the mesh's bounding box, the finest grid that meets the
/// budget. Each cell's vertices merge into one at their mean, except that coordinates at the
/// bounding box's faces stay on them (the box is kept); triangles that collapse, and duplicates,
/// are dropped. Parts (materials) are decimated on the same grid and kept apart.
VisualMesh decimate(const VisualMesh& mesh, int max_triangles);

}  // namespace coulomb::geometry
