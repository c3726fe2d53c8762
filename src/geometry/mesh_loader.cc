#include "coulomb/geometry/mesh_loader.h"

#include "mesh_import.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include <Eigen/Eigenvalues>

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

extern "C" {
#include <libqhull_r/libqhull_r.h>
}

namespace coulomb::geometry {

namespace {

// Appends every vertex of every mesh under `node`, in the file's root frame (node transforms
// applied), scaled.
void collect(const aiScene& scene, const aiNode& node, const aiMatrix4x4& parent, const math::Vector3& scale,
             std::vector<math::Vector3>& points, int& triangles) {
  const aiMatrix4x4 T = parent * node.mTransformation;
  for (unsigned m = 0; m < node.mNumMeshes; ++m) {
    const aiMesh& mesh = *scene.mMeshes[node.mMeshes[m]];
    for (unsigned v = 0; v < mesh.mNumVertices; ++v) {
      const aiVector3D p = T * mesh.mVertices[v];
      points.emplace_back(scale.x() * p.x, scale.y() * p.y, scale.z() * p.z);
    }
    for (unsigned f = 0; f < mesh.mNumFaces; ++f) triangles += mesh.mFaces[f].mNumIndices == 3;
  }
  for (unsigned c = 0; c < node.mNumChildren; ++c) collect(scene, *node.mChildren[c], T, scale, points, triangles);
}

// Appends every mesh under `node` as triangles (node transforms applied, scaled): vertices in the
// file's root frame, triangles indexing them; faces that are not triangles (points, lines) are
// skipped. A negative determinant of the scale or a node transform mirrors the mesh, so the
// triangles' winding is reversed then to keep their normals on the same side of the surface.
void collect_triangles(const aiScene& scene, const aiNode& node, const aiMatrix4x4& parent, const math::Vector3& scale,
                       std::vector<math::Vector3>& points, std::vector<std::array<int, 3>>& triangles) {
  const aiMatrix4x4 T = parent * node.mTransformation;
  const bool mirrored = (T.Determinant() < 0.0f) != (scale.x() * scale.y() * scale.z() < 0.0);
  for (unsigned m = 0; m < node.mNumMeshes; ++m) {
    const aiMesh& mesh = *scene.mMeshes[node.mMeshes[m]];
    const int base = static_cast<int>(points.size());
    for (unsigned v = 0; v < mesh.mNumVertices; ++v) {
      const aiVector3D p = T * mesh.mVertices[v];
      points.emplace_back(scale.x() * p.x, scale.y() * p.y, scale.z() * p.z);
    }
    for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
      const aiFace& face = mesh.mFaces[f];
      if (face.mNumIndices != 3) continue;
      std::array<int, 3> t{base + static_cast<int>(face.mIndices[0]), base + static_cast<int>(face.mIndices[1]),
                           base + static_cast<int>(face.mIndices[2])};
      if (mirrored) std::swap(t[1], t[2]);
      triangles.push_back(t);
    }
  }
  for (unsigned c = 0; c < node.mNumChildren; ++c)
    collect_triangles(scene, *node.mChildren[c], T, scale, points, triangles);
}

struct CacheEntry {
  Shape shape;
  MeshHullSource source;
};

}  // namespace

Shape convex_hull(const std::vector<math::Vector3>& points, const std::string& what) {
  if (points.size() < 4)
    throw MeshError(what, std::to_string(points.size()) + " points; a convex hull needs at least 4 non-coplanar ones");
  std::vector<coordT> coords(3 * points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    if (!points[i].allFinite()) throw MeshError(what, "vertex " + std::to_string(i) + " is not finite");
    for (int c = 0; c < 3; ++c) coords[3 * i + c] = points[i][c];
  }
  // Degenerate (flat or collinear) point sets: Qhull would report a precision error; check first
  // with the points' extent along their principal axes so that the message says what is wrong.
  math::Vector3 mean = math::Vector3::Zero();
  for (const math::Vector3& p : points) mean += p;
  mean /= static_cast<double>(points.size());
  math::Matrix3 C = math::Matrix3::Zero();
  double extent = 0.0;
  for (const math::Vector3& p : points) {
    C += (p - mean) * (p - mean).transpose();
    extent = std::max(extent, (p - mean).norm());
  }
  const Eigen::SelfAdjointEigenSolver<math::Matrix3> eig(C / static_cast<double>(points.size()));
  const double thinnest = std::sqrt(std::max(eig.eigenvalues()[0], 0.0));
  if (!(extent > 0.0) || thinnest < 1e-9 * extent)
    throw MeshError(what, "degenerate: all " + std::to_string(points.size()) +
                              " vertices lie on a plane or a line (thickness " + std::to_string(thinnest) +
                              " m), so there is no solid to collide with");

  qhT qh_storage;
  qhT* qh = &qh_storage;
  QHULL_LIB_CHECK
  qh_zero(qh, nullptr);
  char options[] = "qhull Qt";  // triangulated output
  std::FILE* errors = std::tmpfile();
  const int status = qh_new_qhull(qh, 3, static_cast<int>(points.size()), coords.data(), False, options, nullptr, errors);
  std::string message;
  if (status != 0 && errors) {
    std::rewind(errors);
    char buffer[512];
    const size_t n = std::fread(buffer, 1, sizeof buffer - 1, errors);
    buffer[n] = 0;
    message = buffer;
  }
  if (errors) std::fclose(errors);
  Shape out;
  if (status == 0) {
    std::unordered_map<int, int> index;  // Qhull point id → our vertex index
    std::vector<math::Vector3> vertices;
    std::vector<std::array<int, 3>> triangles;
    vertexT* vertex;
    FORALLvertices {
      const int id = qh_pointid(qh, vertex->point);
      index[id] = static_cast<int>(vertices.size());
      vertices.push_back(points[id]);
    }
    math::Vector3 centroid = math::Vector3::Zero();
    for (const math::Vector3& v : vertices) centroid += v;
    centroid /= static_cast<double>(vertices.size());
    facetT* facet;
    FORALLfacets {
      std::array<int, 3> t{};
      int k = 0;
      vertexT** vertexp;
      FOREACHvertex_(facet->vertices) {
        if (k < 3) t[k] = index.at(qh_pointid(qh, vertex->point));
        ++k;
      }
      if (k != 3) continue;
      // Outward: the triangle's normal points away from the hull's centroid.
      const math::Vector3 n = (vertices[t[1]] - vertices[t[0]]).cross(vertices[t[2]] - vertices[t[0]]);
      if (n.dot(vertices[t[0]] - centroid) < 0.0) std::swap(t[1], t[2]);
      triangles.push_back(t);
    }
    out = Shape::ConvexMesh(std::move(vertices), std::move(triangles));
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong, totlong;
  qh_memfreeshort(qh, &curlong, &totlong);
  if (status != 0) throw MeshError(what, "Qhull could not build the convex hull: " + message);
  return out;
}

namespace internal {

const aiScene& import_mesh(Assimp::Importer& importer, const std::string& path, const math::Vector3& scale) {
  if (!scale.allFinite() || !(scale.cwiseAbs().minCoeff() > 0.0))
    throw MeshError(path, "scale (" + std::to_string(scale.x()) + ", " + std::to_string(scale.y()) + ", " +
                              std::to_string(scale.z()) + ") must be finite and non-zero on every axis");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw MeshError(path, "no such file");
  if (std::filesystem::file_size(path, ec) == 0) throw MeshError(path, "the file is empty");
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  const aiScene* scene = importer.ReadFile(path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices);
  if (!scene || !scene->mRootNode) throw MeshError(path, std::string("cannot read the mesh: ") + importer.GetErrorString());
  return *scene;
}

}  // namespace internal

namespace {

// Every scaled vertex within ±kMaxShapeDimension (shape.h) before the hull or the mesh is built:
// a huge `scale` or a file in the wrong unit would otherwise overflow in the broadphase.
void check_vertex_range(const std::vector<math::Vector3>& points, const std::string& path, const math::Vector3& scale) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].allFinite() && points[i].cwiseAbs().maxCoeff() <= kMaxShapeDimension) continue;
    std::ostringstream reason;
    reason.precision(9);
    reason << "vertex " << i << " at (" << points[i].x() << ", " << points[i].y() << ", " << points[i].z()
           << ") m after scale (" << scale.x() << ", " << scale.y() << ", " << scale.z() << ") lies outside +-"
           << kMaxShapeDimension << " m (or is not finite)";
    throw MeshError(path, reason.str());
  }
}

}  // namespace

Shape load_convex_hull(const std::string& path, const math::Vector3& scale, MeshHullSource* source) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, double, double, double>, CacheEntry> cache;
  const auto key = std::make_tuple(path, scale.x(), scale.y(), scale.z());
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) {
      if (source) *source = it->second.source;
      return it->second.shape;
    }
  }
  Assimp::Importer importer;
  const aiScene& scene = internal::import_mesh(importer, path, scale);
  std::vector<math::Vector3> points;
  int triangles = 0;
  collect(scene, *scene.mRootNode, aiMatrix4x4(), scale, points, triangles);
  if (points.empty()) throw MeshError(path, "the file has no vertices");
  check_vertex_range(points, path, scale);
  CacheEntry entry;
  entry.shape = convex_hull(points, path);
  entry.shape.mesh_file = path;
  entry.source.file = path;
  entry.source.scale = scale;
  entry.source.mesh_vertices = static_cast<int>(points.size());
  entry.source.mesh_triangles = triangles;
  entry.source.hull_vertices = static_cast<int>(entry.shape.vertices.size());
  entry.source.hull_triangles = static_cast<int>(entry.shape.triangles.size());
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.emplace(key, std::move(entry));
  if (source) *source = it->second.source;
  return it->second.shape;
}

Shape load_mesh(const std::string& path, const math::Vector3& scale) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, double, double, double>, Shape> cache;
  const auto key = std::make_tuple(path, scale.x(), scale.y(), scale.z());
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  Assimp::Importer importer;
  const aiScene& scene = internal::import_mesh(importer, path, scale);
  std::vector<math::Vector3> points;
  std::vector<std::array<int, 3>> triangles;
  collect_triangles(scene, *scene.mRootNode, aiMatrix4x4(), scale, points, triangles);
  if (points.empty()) throw MeshError(path, "the file has no vertices");
  if (triangles.empty()) throw MeshError(path, "the file has no triangles");
  check_vertex_range(points, path, scale);
  Shape shape = Shape::Mesh(std::move(points), std::move(triangles));
  shape.mesh_file = path;
  try {
    shape.validate("");
  } catch (const std::invalid_argument& e) {
    std::string reason = e.what();
    const std::string prefix = "mesh: ";
    if (reason.rfind(prefix, 0) == 0) reason = reason.substr(prefix.size());
    const std::string suffix = " (file '" + path + "')";
    if (reason.size() >= suffix.size() && reason.compare(reason.size() - suffix.size(), suffix.size(), suffix) == 0)
      reason.resize(reason.size() - suffix.size());
    throw MeshError(path, reason);
  }
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(shape)).first->second;
}

}  // namespace coulomb::geometry
