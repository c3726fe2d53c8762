#include "coulomb/geometry/visual_mesh.h"

#include "mesh_import.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "coulomb/geometry/mesh_loader.h"

namespace coulomb::geometry {

int VisualMesh::num_triangles() const {
  int n = 0;
  for (const Part& p : parts) n += static_cast<int>(p.triangles.size());
  return n;
}

int VisualMesh::num_vertices() const {
  int n = 0;
  for (const Part& p : parts) n += static_cast<int>(p.vertices.size());
  return n;
}

std::array<math::Vector3, 2> VisualMesh::bounding_box() const {
  math::Vector3 lo = math::Vector3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
  bool any = false;
  for (const Part& p : parts)
    for (const math::Vector3& v : p.vertices) {
      lo = lo.cwiseMin(v);
      hi = hi.cwiseMax(v);
      any = true;
    }
  if (!any) return {math::Vector3::Zero(), math::Vector3::Zero()};
  return {lo, hi};
}

namespace {

void collect_parts(const aiScene& scene, const aiNode& node, const aiMatrix4x4& parent, const math::Vector3& scale,
                   std::vector<VisualMesh::Part>& parts) {
  const aiMatrix4x4 T = parent * node.mTransformation;
  for (unsigned m = 0; m < node.mNumMeshes; ++m) {
    const aiMesh& mesh = *scene.mMeshes[node.mMeshes[m]];
    VisualMesh::Part part;
    part.vertices.reserve(mesh.mNumVertices);
    for (unsigned v = 0; v < mesh.mNumVertices; ++v) {
      const aiVector3D p = T * mesh.mVertices[v];
      part.vertices.emplace_back(scale.x() * p.x, scale.y() * p.y, scale.z() * p.z);
    }
    // A mirroring scale (or node transform) flips the winding: flip it back.
    const double det = scale.x() * scale.y() * scale.z() * T.Determinant();
    for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
      const aiFace& face = mesh.mFaces[f];
      if (face.mNumIndices != 3) continue;
      std::array<int, 3> t{int(face.mIndices[0]), int(face.mIndices[1]), int(face.mIndices[2])};
      if (det < 0.0) std::swap(t[1], t[2]);
      part.triangles.push_back(t);
    }
    if (mesh.mMaterialIndex < scene.mNumMaterials) {
      aiColor4D c;
      if (scene.mMaterials[mesh.mMaterialIndex]->Get(AI_MATKEY_COLOR_DIFFUSE, c) == AI_SUCCESS) {
        part.rgba = {std::clamp<double>(c.r, 0, 1), std::clamp<double>(c.g, 0, 1), std::clamp<double>(c.b, 0, 1),
                     std::clamp<double>(c.a, 0, 1)};
        float opacity = 1.0f;
        if (scene.mMaterials[mesh.mMaterialIndex]->Get(AI_MATKEY_OPACITY, opacity) == AI_SUCCESS)
          part.rgba[3] = std::clamp<double>(opacity, 0, 1) * part.rgba[3];
        if (!(part.rgba[3] > 0.0)) part.rgba[3] = 1.0;  // exporters write 0 for "unset"
        part.has_rgba = true;
      }
    }
    if (!part.triangles.empty()) parts.push_back(std::move(part));
  }
  for (unsigned c = 0; c < node.mNumChildren; ++c) collect_parts(scene, *node.mChildren[c], T, scale, parts);
}

// One clustering of `mesh` on a grid of cells of edge h from `lo`.
VisualMesh cluster(const VisualMesh& mesh, const math::Vector3& lo, const math::Vector3& hi, double h) {
  VisualMesh out;
  out.file = mesh.file;
  out.scale = mesh.scale;
  const auto cells = [&](int c) { return static_cast<std::int64_t>(std::floor((hi[c] - lo[c]) / h)) + 1; };
  const std::int64_t nx = cells(0), ny = cells(1);
  const double tol = 1e-12 * std::max(1.0, (hi - lo).norm());
  for (const VisualMesh::Part& part : mesh.parts) {
    std::unordered_map<std::int64_t, int> cell_index;
    std::vector<int> map(part.vertices.size());
    std::vector<math::Vector3> sum, mn, mx;
    std::vector<int> count;
    for (size_t v = 0; v < part.vertices.size(); ++v) {
      const math::Vector3& p = part.vertices[v];
      std::int64_t key = 0;
      for (int c = 2; c >= 0; --c) {
        const std::int64_t i = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((p[c] - lo[c]) / h)), 0, cells(c) - 1);
        key = c == 2 ? i : key * (c == 1 ? ny : nx) + i;
      }
      auto [it, inserted] = cell_index.emplace(key, static_cast<int>(sum.size()));
      if (inserted) {
        sum.push_back(math::Vector3::Zero());
        mn.push_back(p);
        mx.push_back(p);
        count.push_back(0);
      }
      const int k = it->second;
      sum[k] += p;
      mn[k] = mn[k].cwiseMin(p);
      mx[k] = mx[k].cwiseMax(p);
      ++count[k];
      map[v] = k;
    }
    VisualMesh::Part q;
    q.rgba = part.rgba;
    q.has_rgba = part.has_rgba;
    std::vector<int> used(sum.size(), -1);
    std::unordered_set<std::uint64_t> seen;
    for (const std::array<int, 3>& t : part.triangles) {
      std::array<int, 3> c{map[t[0]], map[t[1]], map[t[2]]};
      if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) continue;
      std::array<int, 3> s = c;
      std::sort(s.begin(), s.end());
      const std::uint64_t key = (std::uint64_t(s[0]) * 2097152u + std::uint64_t(s[1])) * 2097152u + std::uint64_t(s[2]);
      if (!seen.insert(key).second) continue;
      std::array<int, 3> tri;
      for (int k = 0; k < 3; ++k) {
        int& u = used[c[k]];
        if (u < 0) {
          u = static_cast<int>(q.vertices.size());
          math::Vector3 p = sum[c[k]] / count[c[k]];
          for (int a = 0; a < 3; ++a) {  // keep the bounding box
            if (mn[c[k]][a] <= lo[a] + tol) p[a] = lo[a];
            if (mx[c[k]][a] >= hi[a] - tol) p[a] = hi[a];
          }
          q.vertices.push_back(p);
        }
        tri[k] = u;
      }
      q.triangles.push_back(tri);
    }
    if (!q.triangles.empty()) out.parts.push_back(std::move(q));
  }
  return out;
}

}  // namespace

VisualMesh load_visual_mesh(const std::string& path, const math::Vector3& scale) {
  Assimp::Importer importer;
  const aiScene& scene = internal::import_mesh(importer, path, scale);
  VisualMesh out;
  out.file = path;
  out.scale = scale;
  collect_parts(scene, *scene.mRootNode, aiMatrix4x4(), scale, out.parts);
  if (out.parts.empty()) throw MeshError(path, "the file has no triangles");
  for (const VisualMesh::Part& p : out.parts)
    for (const math::Vector3& v : p.vertices)
      if (!v.allFinite()) throw MeshError(path, "a vertex is not finite");
  return out;
}

VisualMesh decimate(const VisualMesh& mesh, int max_triangles) {
  if (mesh.num_triangles() <= max_triangles) return mesh;
  const auto [lo, hi] = mesh.bounding_box();
  const double extent = (hi - lo).maxCoeff();
  if (!(extent > 0.0) || max_triangles <= 0) {
    VisualMesh empty;
    empty.file = mesh.file;
    empty.scale = mesh.scale;
    return empty;
  }
  // The finest grid (cells along the longest axis) within the budget: bisection on the
  // resolution; the triangle count grows (nearly monotonically) with it.
  int good = 1, bad = 4096;
  VisualMesh best = cluster(mesh, lo, hi, extent / good);
  while (bad - good > 1) {
    const int mid = (good + bad) / 2;
    VisualMesh m = cluster(mesh, lo, hi, extent / mid);
    if (m.num_triangles() <= max_triangles) {
      good = mid;
      best = std::move(m);
    } else {
      bad = mid;
    }
  }
  return best;
}

}  // namespace coulomb::geometry
