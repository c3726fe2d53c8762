#include "coulomb/scene/placement.h"

#include <algorithm>

namespace coulomb::scene {

CollisionPoint lowest_collision_point(const Scene& scene, const std::vector<math::Transform>& X_WB, int robot) {
  CollisionPoint out;
  for (size_t i = 0; i < scene.geometries.size(); ++i) {
    const geometry::Geometry& g = scene.geometries[i];
    if (g.robot != robot || g.shape.type == geometry::ShapeType::kHalfSpace) continue;
    const math::Vector3 p = geometry::lowest_point(g.shape, X_WB[g.body] * g.X_BG);
    if (!out.found || p.z() < out.p_W.z()) {
      out.found = true;
      out.p_W = p;
      out.geometry = static_cast<int>(i);
      out.body = g.body;
    }
  }
  return out;
}

std::optional<double> ground_height(const Scene& scene, double x, double y) {
  std::optional<double> top;
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.body != 0) continue;
    if (const std::optional<double> z = geometry::top_below(g.shape, g.X_BG, x, y)) top = top ? std::max(*top, *z) : *z;
  }
  return top;
}

}  // namespace coulomb::scene
