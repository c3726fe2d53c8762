// Helpers for the geometry tests: a model of free bodies whose poses the test sets directly,
// and shorthands for geometries and rotations.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "coulomb/geometry/collision_world.h"
#include "coulomb/multibody.h"
#include "test_models.h"

namespace coulomb::testing {

using geometry::CollisionWorld;
using geometry::ContactPoint;
using geometry::Geometry;
using geometry::Shape;

inline math::Matrix3 rot_x(double a) { return Eigen::AngleAxisd(a, Vector3::UnitX()).toRotationMatrix(); }
inline math::Matrix3 rot_y(double a) { return Eigen::AngleAxisd(a, Vector3::UnitY()).toRotationMatrix(); }
inline math::Matrix3 rot_z(double a) { return Eigen::AngleAxisd(a, Vector3::UnitZ()).toRotationMatrix(); }
inline Transform pose(const math::Matrix3& R, const Vector3& p) { return {R, p}; }
inline Transform at(double x, double y, double z) { return translation(x, y, z); }

inline Geometry make_geometry(const std::string& name, int body, const Shape& shape, const Transform& X_BG = {}) {
  Geometry g;
  g.name = name;
  g.body = body;
  g.shape = shape;
  g.X_BG = X_BG;
  return g;
}

/// A model with `n` free (floating) bodies "body1" … "bodyN" hanging from the world, a
/// workspace and a configuration whose body poses the test sets with set_pose().
struct FreeBodies {
  multibody::Model model;
  multibody::Workspace ws;
  Eigen::VectorXd q;

  static multibody::Model build(int n) {
    multibody::ModelBuilder b("free_bodies");
    for (int i = 1; i <= n; ++i)
      b.add_link("body" + std::to_string(i), "world", floating("joint" + std::to_string(i)),
                 SpatialInertia::FromCenterOfMass(1.0, Vector3::Zero(), Matrix3::Identity()));
    return b.build();
  }
  explicit FreeBodies(int n) : model(build(n)), ws(model), q(model.neutral_configuration()) {}

  /// Sets the world pose of body b (1-based) in q.
  void set_pose(int b, const Transform& X_WB) {
    const int i = model.body(b).joint.q_index;
    q.segment<3>(i) = X_WB.p;
    const Eigen::Quaterniond quat(X_WB.R);
    q[i + 3] = quat.w();
    q[i + 4] = quat.x();
    q[i + 5] = quat.y();
    q[i + 6] = quat.z();
  }
  /// Forward kinematics, then the world's poses.
  void apply(CollisionWorld& world) {
    multibody::forward_kinematics(model, ws, q);
    world.update_poses(ws);
  }
};

/// A right prism with a regular `sides`-gon of circumradius r (a vertex on +x) as cross-section,
/// z from −height/2 to height/2, as a closed outward-facing triangle mesh.
inline Shape prism(int sides, double r, double height) {
  constexpr double kPi = 3.14159265358979323846;
  std::vector<Vector3> v;
  for (int k = 0; k < sides; ++k) {
    const double a = 2 * kPi * k / sides;
    v.emplace_back(r * std::cos(a), r * std::sin(a), -0.5 * height);
  }
  for (int k = 0; k < sides; ++k) {
    const double a = 2 * kPi * k / sides;
    v.emplace_back(r * std::cos(a), r * std::sin(a), 0.5 * height);
  }
  std::vector<std::array<int, 3>> t;
  for (int k = 1; k + 1 < sides; ++k) {
    t.push_back({0, k + 1, k});                          // bottom, facing −z
    t.push_back({sides, sides + k, sides + k + 1});      // top, facing +z
  }
  for (int k = 0; k < sides; ++k) {
    const int k1 = (k + 1) % sides;
    t.push_back({k, k1, sides + k1});
    t.push_back({k, sides + k1, sides + k});
  }
  return Shape::ConvexMesh(v, t);
}

inline std::vector<ContactPoint> contacts_of(const CollisionWorld& world) {
  std::vector<ContactPoint> out;
  world.compute_contacts(out);
  return out;
}

}  // namespace coulomb::testing
