// The scene description: what is simulated, independent of where it came from. Loaders fill
// it (io::load_scene from YAML, with robots from URDF; later MJCF and SDFormat), the Python
// package can build it in code, and simulation::Simulator is built from it. One Model holds
// every robot and body (each free body its own tree), with the collision geometries, the
// initial state, the actuators, springs, couplers and joint friction and the simulation
// settings. This header includes no loader (../shared/design/ARCHITECTURE.md, layers).
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/geometry/visual_mesh.h"
#include "coulomb/multibody/model.h"

namespace coulomb::scene {

/// A PD actuator on a 1-dof joint (for the simulator: implicit PD with effort limit).
/// τ = clamp(kp (q_target − q) + kd (v_target − v), −effort_limit, effort_limit).
struct Actuator {
  std::string joint;      ///< joint name in the Model
  int q_index = 0;        ///< index of the joint coordinate in q
  int v_index = 0;        ///< index of the joint velocity in v
  double kp = 0.0;        ///< [N·m/rad or N/m]
  double kd = 0.0;        ///< [N·m·s/rad or N·s/m]
  double q_target = 0.0;  ///< set-point [rad or m]
  double v_target = 0.0;  ///< [rad/s or m/s]
  double effort_limit = std::numeric_limits<double>::infinity();  ///< [N·m or N]
};

/// A linear spring-damper on a 1-dof joint (scene key robots[].springs), a passive force for
/// the simulator's k₁ (Castro et al. §II-C: constant diagonal K and D):
/// τ = −stiffness (q − rest_position) − damping v.
struct JointSpring {
  std::string joint;           ///< joint name in the Model
  int q_index = 0;             ///< index of the joint coordinate in q
  int v_index = 0;             ///< index of the joint velocity in v
  double stiffness = 0.0;      ///< [N·m/rad or N/m], ≥ 0
  double damping = 0.0;        ///< [N·m·s/rad or N·s/m], ≥ 0 (in addition to the URDF joint damping)
  double rest_position = 0.0;  ///< [rad or m]
};

/// A coupler between two 1-dof joints of one tree (URDF `<mimic joint multiplier offset>`):
/// q_follower = gear_ratio · q_leader + offset, held by a near-rigid SAP coupler constraint.
struct Coupler {
  std::string joint;         ///< the follower (the URDF joint that has the <mimic>)
  std::string leader;        ///< the joint it mimics
  int q_index = 0, v_index = 0;                ///< follower's coordinate and velocity
  int leader_q_index = 0, leader_v_index = 0;  ///< leader's
  double gear_ratio = 1.0;   ///< ρ (URDF multiplier)
  double offset = 0.0;       ///< [rad or m]
};

/// Dry (Coulomb) friction on a 1-dof joint (URDF `<dynamics friction>`): |τ_f| ≤ friction,
/// opposing the joint velocity; regularized like the friction cone in one dimension.
struct JointFriction {
  std::string joint;
  int q_index = 0, v_index = 0;
  double friction = 0.0;     ///< maximum friction torque or force [N·m or N] > 0
};

/// The kinds of bilateral constraint of the scene's `constraints:` list (docs/user-guide.md).
enum class BilateralType {
  kBall,       ///< point–point: p_WM − p_WF = 0, 3 rows
  kWeld,       ///< frame–frame: 3 rotational rows (log of R_FM) then 3 translational, 6 rows
  kDistance,   ///< |p_WM − p_WF| − length = 0, 1 row
  kRevolute,   ///< joint in maximal form: axes aligned (2 rows) and origins coincide (3 rows)
  kPrismatic,  ///< joint in maximal form: rotation locked (3 rows), motion only along the axis (2 rows)
};
/// "ball", "weld", "distance", "revolute", "prismatic".
const char* to_string(BilateralType type);
/// Number of rows of a constraint of this type (3, 6, 1, 5, 5).
int num_rows(BilateralType type);

/// A holonomic bilateral constraint between a frame F fixed to body A and a frame M fixed to
/// body B (either may be the world, body 0, but not both the same body). Ball and distance use
/// only the frames' origins (the points). Every row is a spring–damper λ = −k φ − b φ̇:
/// stiffness +∞ (the default) is a rigid constraint, which each solver holds in its near-rigid
/// regime; rows are in world axes (rotational rows: rotation vector of M relative to F).
struct BilateralConstraint {
  std::string name;           ///< the scene's `name`, or "constraints[i]"
  BilateralType type = BilateralType::kBall;
  int body_a = 0, body_b = 0;  ///< Model body indices (0 = the world)
  math::Transform X_AF;        ///< frame F in body A's frame (its origin: the point on A)
  math::Transform X_BM;        ///< frame M in body B's frame (its origin: the point on B)
  math::Vector3 axis_F = math::Vector3::UnitZ();  ///< joint axis, unit, in F (revolute, prismatic)
  double length = 0.0;         ///< distance constraint: > 0 [m]
  double stiffness = std::numeric_limits<double>::infinity();  ///< k [N/m; N·m/rad on rotational rows] > 0
  double damping = 0.0;        ///< b [N·s/m; N·m·s/rad on rotational rows] ≥ 0 (finite stiffness only)
};

/// A robot placed in the scene from a URDF or an MJCF file.
struct SceneRobot {
  std::string name;         ///< prefix of its link/joint names ("" for the first unnamed robot)
  std::string urdf_path;    ///< resolved path of the model file (URDF, MJCF or SDF, see model_format)
  std::string model_format = "urdf";  ///< "urdf", "mjcf" or "sdf"
  bool floating = false;
  int root_body = 0;        ///< body index of its root in the Model (0 if welded to the world)
  std::string floating_joint;  ///< name of its floating joint in the Model ("" if welded)
  int id = 0;               ///< its index in Scene::robots = Geometry::robot of its geometries
  std::string robot_name;   ///< the URDF's <robot name>
  std::string root_link;    ///< prefixed name of its root link ("world" if the URDF's root is the world)
  /// Prefixed names of its URDF joints (fixed ones included), depth-first from the root.
  std::vector<std::string> joints;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  ///< what does not change the simulation (io::UrdfModel::notes)
};

struct Scene {
  std::string source;  ///< file the scene came from ("<embedded>" for strings)
  double time_step = 0.01;   ///< [s] > 0
  double duration = 1.0;     ///< [s] > 0
  std::string solver = "sap";               ///< sap | lstable
  std::string lstable_friction = "staggered";  ///< lstable's friction model: staggered | cone (lstable_solver.h)
  std::string integrator = "implicit-euler";  ///< implicit-euler | symplectic-euler | midpoint
  contact::ContactDefaults contact;         ///< defaults for every pair
  geometry::CollisionOptions collision;     ///< margin
  multibody::Model model;                   ///< gravity set from the file
  std::vector<geometry::Geometry> geometries;
  /// What viewers draw (URDF <visual> elements; not simulated). Bodies without visuals are drawn
  /// with their collision geometries.
  std::vector<geometry::VisualGeometry> visuals;
  Eigen::VectorXd q0;  ///< initial configuration, n_q
  Eigen::VectorXd v0;  ///< initial velocities, n_v
  std::vector<Actuator> actuators;  ///< in the order of their velocity index
  std::vector<JointSpring> springs; ///< in the order of their velocity index
  std::vector<Coupler> couplers;    ///< URDF <mimic> joints
  std::vector<JointFriction> joint_frictions;  ///< URDF <dynamics friction> > 0
  std::vector<BilateralConstraint> constraints;  ///< the scene's `constraints:` list, in order
  std::vector<SceneRobot> robots;
  std::string description;          ///< the file's optional `description:` text
  /// Everything worth telling the user that is not an error (every robot's warnings, skipped
  /// mesh collisions, initial joint positions outside their limits).
  std::vector<std::string> warnings;
  /// What does not change the simulation (missing <visual> meshes): printed as notes, listed in
  /// stats.json, never a --strict failure.
  std::vector<std::string> notes;
};

/// What makes a scene's initial state impossible to simulate, found before the first step
/// (check_initial_dynamics): the tree rooted at `root_body` and what is wrong with it.
struct InitialDynamicsProblem {
  int root_body = 0;       ///< the root body of the tree (a floating robot's base, a free body)
  bool velocity = false;   ///< true: the initial velocities; false: the mass properties
  std::string message;     ///< names the body and the value
};

/// Checks what SAP needs of every tree at (q0, v0) and no later check catches with a useful
/// message: the tree's block of M(q0) and its gravity forces g(q0) must be finite (a link mass of
/// 1e308 kg overflows m g; a mass-property problem, velocity = false), a tree with a floating root
/// must have positive total mass and a symmetric positive
/// definite composite spatial inertia at its root (the 6×6 floating block of M(q0); massless
/// links everywhere leave it singular), with smallest eigenvalue above 1e-12 of the largest;
/// every tree's block of M(q0), with its joints' damping and spring stiffness added to the
/// diagonal, must be positive definite (Cholesky; a DOF that moves no mass makes it singular);
/// the kinetic energy ½ v0ᵀ M(q0) v0 [J] and the bias forces C(q0, v0) v0 + g(q0) of each tree
/// must be finite (1e160 rad/s squares to infinity). Returns the first problem, or nothing.
std::optional<InitialDynamicsProblem> check_initial_dynamics(const Scene& scene);

}  // namespace coulomb::scene
