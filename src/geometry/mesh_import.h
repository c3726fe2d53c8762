// Internal to src/geometry: reading a mesh file with assimp, shared by the collision hulls
// (mesh_loader.cc) and the visual meshes (visual_mesh.cc).
#pragma once

#include <string>

#include <assimp/Importer.hpp>
#include <assimp/scene.h>

#include "coulomb/math/spatial.h"

namespace coulomb::geometry::internal {

/// Checks that `scale` is finite and non-zero on every axis and that `path` is a non-empty file,
/// then reads it (triangulated, identical vertices joined, a Collada file's up axis ignored: URDF
/// meshes are in the link frame as written, and assimp's y-up conversion would turn a Z_UP DAE by
/// 90°). The scene lives as long as `importer`. Throws MeshError naming the file and the reason.
const aiScene& import_mesh(Assimp::Importer& importer, const std::string& path, const math::Vector3& scale);

}  // namespace coulomb::geometry::internal
