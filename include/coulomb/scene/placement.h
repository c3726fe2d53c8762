// Where a scene's robots are at a configuration: each robot's lowest collision point and the
// ground below a point. Used by `coulomb inspect` (each robot's lowest point and its height
// above the ground) and by the scene key robots[].place_on_ground.
#pragma once

#include <optional>
#include <vector>

#include "coulomb/math/spatial.h"
#include "coulomb/scene/scene.h"

namespace coulomb::scene {

/// The lowest point of a robot's collision geometry.
struct CollisionPoint {
  bool found = false;                          ///< false: the robot has no collision geometry
  math::Vector3 p_W = math::Vector3::Zero();   ///< [m], world (geometry::lowest_point)
  int geometry = -1;                           ///< index into Scene::geometries
  int body = 0;                                ///< the body it belongs to
};

/// The lowest collision point of robot `robot` (Geometry::robot == robot) with the bodies at
/// X_WB (one pose per body of scene.model, e.g. Workspace::X_WB after forward kinematics).
CollisionPoint lowest_collision_point(const Scene& scene, const std::vector<math::Transform>& X_WB, int robot);

/// The ground under (x, y) [m]: the highest top of the static geometries (body 0) that the
/// vertical line through (x, y) meets — upward-facing half-spaces and boxes
/// (geometry::top_below); std::nullopt when there is none.
std::optional<double> ground_height(const Scene& scene, double x, double y);

}  // namespace coulomb::scene
