// CollisionWorld: geometries attached to the bodies of a Model, a broadphase over them (FCL's
// dynamic AABB tree, or a fixed list of candidate pairs in small worlds),
// and narrowphase contact points with contact manifolds for resting face contacts.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coulomb/geometry/shape.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::geometry {

/// Per-geometry contact material; unset fields take the scene's contact defaults.
struct ContactMaterial {
  std::optional<double> mu;                ///< Coulomb friction coefficient, ≥ 0
  std::optional<double> stiffness;         ///< contact stiffness k [N/m], > 0
  std::optional<double> dissipation_time;  ///< SAP dissipation time scale τ_d [s], ≥ 0
  std::optional<double> hunt_crossley_dissipation;  ///< Hunt–Crossley d [s/m], ≥ 0 (similar, lagged)
  std::optional<double> stiction_tolerance;         ///< regularized-friction v_s [m/s], > 0 (similar, lagged)
};

/// A shape fixed to a body of the model.
struct Geometry {
  std::string name;            ///< unique within the world
  int body = 0;                ///< body of the Model it moves with (0 = world)
  math::Transform X_BG;        ///< pose of the shape frame G in the body frame
  Shape shape;
  ContactMaterial material;
  /// Collision filtering: geometries a and b may collide only if
  /// (a.group & b.mask) != 0 and (b.group & a.mask) != 0.
  std::uint32_t group = 1;
  std::uint32_t mask = 0xFFFFFFFFu;
  /// Geometries with the same non-negative `robot` id and `self_collision == false` never
  /// collide with each other (per-robot self-collision switch). −1: not part of a robot.
  int robot = -1;
  bool self_collision = false;
  std::array<double, 4> rgba = {0.7, 0.7, 0.7, 1.0};  ///< display colour
};

/// One contact point between two geometries, A and B, in the world frame.
struct ContactPoint {
  int geometry_a = -1, geometry_b = -1;  ///< indices into CollisionWorld::geometries(), a < b
  math::Vector3 p_W = math::Vector3::Zero();  ///< contact point [m]: midway between the two surfaces
  math::Vector3 n_W = math::Vector3::UnitZ(); ///< unit normal pointing from A into B
  double phi = 0.0;  ///< signed distance [m]: > 0 separated, < 0 overlapping (−penetration depth)
};

struct CollisionOptions {
  /// Report pairs whose signed distance is at most `margin` [m], so that solvers see contacts
  /// about to happen. Default 2 mm.
  double margin = 2e-3;
  /// Speculative contact: the simulator widens each body's margin by the distance its geometry
  /// can travel in the step (CollisionWorld::set_speculative_margins). Off by default; see
  /// docs/contact.md for what it costs and gains.
  bool speculative = false;
  /// Pairs of Model body indices whose geometries never collide (MJCF <contact><exclude> and
  /// MuJoCo's parent–child filter across a chain of joints; order within a pair does not matter).
  /// Indices must lie in [0, model.num_bodies()) (std::invalid_argument otherwise).
  std::vector<std::pair<int, int>> excluded_body_pairs;
};

class CollisionWorld {
 public:
  /// Takes the geometries (validated: throws std::invalid_argument naming the geometry).
  /// Pairs on the same body, and pairs on a parent and a child body joined by a joint, never
  /// collide. Geometry on the world (body 0) never collides with other world geometry.
  /// Also throws std::invalid_argument for a duplicate non-empty name, a body index outside
  /// [0, model.num_bodies()), an X_BG that is not a finite rotation + translation, a (non-convex)
  /// ShapeType::kMesh on a body other than the world (static meshes only), or a negative or
  /// non-finite options.margin. Keeps no reference to `model`. Until the first
  /// update_poses() every body is taken to be at the identity pose.
  CollisionWorld(const multibody::Model& model, std::vector<Geometry> geometries, CollisionOptions options = {});
  ~CollisionWorld();
  CollisionWorld(CollisionWorld&&) noexcept;
  CollisionWorld& operator=(CollisionWorld&&) noexcept;

  const std::vector<Geometry>& geometries() const { return geometries_; }
  const CollisionOptions& options() const { return options_; }

  /// Moves every geometry to the body poses in ws.X_WB (call forward_kinematics first) and
  /// refreshes the broadphase, whose boxes are the geometries' world bounding boxes grown by
  /// options().margin. Throws std::invalid_argument if ws.X_WB lacks a geometry's body.
  void update_poses(const multibody::Workspace& ws);

  /// Speculative contact margins (velocity-dependent). For each body b with geometry,
  /// d_b = δt (‖v_Bo‖ + ‖ω_B‖ r_b) [m] bounds how far any point of b moves in one step of
  /// δt = `time_step` [s] at the velocities in ws.V_B (forward_kinematics with v); r_b [m] bounds
  /// the distance of b's geometry from b's origin. The extra margin is max(0, d_b − margin): a
  /// pair (a, b) is then reported when φ ≤ margin + extra_a + extra_b, so a body falling fast is
  /// caught by the contact it will reach within the step instead of sinking into it for a step,
  /// while slow bodies (a resting pile) keep exactly the fixed margin. The broadphase boxes grow
  /// by the same amount at the next update_poses(). Throws std::invalid_argument for δt ≤ 0 or a
  /// workspace without body velocities.
  void set_speculative_margins(const multibody::Workspace& ws, double time_step);
  /// Back to the fixed options().margin for every body.
  void clear_speculative_margins();
  /// The extra margin of body b [m] (0 when none is set).
  double speculative_margin(int body) const;

  /// Pose X_WG of geometry g in the world after the last update_poses(). Throws
  /// std::out_of_range for a bad index.
  const math::Transform& pose(int g) const;

  /// All contact points with φ ≤ margin (plus the two bodies' speculative margins, if set) at the
  /// current poses, sorted by (geometry_a,
  /// geometry_b) and then by point coordinates, so that runs are reproducible. Face contacts
  /// (box–plane, box–box, cylinder flat face–plane, …) give a manifold of ≥ 4 points at the
  /// corners of the clipped contact polygon. `out` is cleared first.
  /// The manifold rules per shape pair are in docs/geometry.md. Each pair is evaluated with its
  /// two geometries in name order (then n_W is flipped if needed), so the points of a pair do
  /// not depend on the order in which geometries were listed. Half-space–half-space pairs are
  /// never reported. A static (non-convex) mesh against a convex shape: face points on the
  /// triangles the shape rests on (as on a box face), else FCL's points at edges and vertices. Uses scratch buffers inside the world: do not call concurrently on one
  /// CollisionWorld.
  void compute_contacts(std::vector<ContactPoint>& out) const;

  /// Whether geometries a and b may collide (filters above). In detail: false if a == b; if
  /// the group/mask test fails; if both are on the same body (including world–world); if one
  /// body is the other's parent and the joint between them is not a floating joint (a free
  /// body still collides with the world); if both have the same robot id ≥ 0 and not both have
  /// self_collision set; if their bodies are an options().excluded_body_pairs pair; if both are static meshes or half-spaces (a mesh never collides with a
  /// half-space or another mesh). Throws std::out_of_range for a bad index.
  bool can_collide(int a, int b) const;

 private:
  struct Impl;
  std::vector<Geometry> geometries_;
  CollisionOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coulomb::geometry
