// Scene files (YAML): what is simulated. Schema in ../shared/design/ARCHITECTURE.md ("Scene
// file") and docs/scene-format.md. A Scene is the assembled result: one Model holding every
// robot and body (each free body its own tree), the collision geometries, the initial state,
// the PD actuators and the simulation settings.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/multibody/model.h"

namespace coulomb::io {

/// Raised for a scene that cannot be loaded. what() names the file, the line and the key, e.g.
///   "clutter.yaml:12: bodies[3].shapes[0].radius: must be > 0, got -0.05"
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

/// A robot placed in the scene from a URDF.
struct SceneRobot {
  std::string name;         ///< prefix of its link/joint names ("" for the first unnamed robot)
  std::string urdf_path;    ///< resolved path of the URDF file
  bool floating = false;
  int root_body = 0;        ///< body index of its root in the Model (0 if welded to the world)
  std::string floating_joint;  ///< name of its floating joint in the Model ("" if welded)
  int id = 0;               ///< its index in Scene::robots = Geometry::robot of its geometries
  std::vector<std::string> warnings;
};

struct Scene {
  std::string source;  ///< file the scene came from ("<embedded>" for strings)
  double time_step = 0.01;   ///< [s] > 0
  double duration = 1.0;     ///< [s] > 0
  std::string solver = "sap";               ///< sap | lstable
  std::string integrator = "implicit-euler";  ///< implicit-euler | symplectic-euler | midpoint
  contact::ContactDefaults contact;         ///< defaults for every pair
  geometry::CollisionOptions collision;     ///< margin
  multibody::Model model;                   ///< gravity set from the file
  std::vector<geometry::Geometry> geometries;
  Eigen::VectorXd q0;  ///< initial configuration, n_q
  Eigen::VectorXd v0;  ///< initial velocities, n_v
  std::vector<Actuator> actuators;  ///< in the order of their velocity index
  std::vector<JointSpring> springs; ///< in the order of their velocity index
  std::vector<SceneRobot> robots;
  std::string description;          ///< the file's optional `description:` text
  /// Everything worth telling the user that is not an error (every robot's warnings, skipped
  /// mesh collisions, initial joint positions outside their limits).
  std::vector<std::string> warnings;
};

/// Loads the scene file at `path` (schema: docs/scene-format.md).
///
/// Assembly: the scene's free and fixed `bodies` come first, in file order, then the
/// `robots`. A fixed body is welded to the world at its pose (fused into body 0, kept as a
/// frame of its name); a free body is its own tree, attached by a kFloating joint named after
/// the body, with q = [position, quaternion (w, x, y, z)] and v = [ω; v], the angular velocity
/// and the velocity of the body origin in the WORLD frame, as the file gives them
/// (angular_velocity, linear_velocity). Robot link and joint
/// names are prefixed by "NAME/" when the robot has a `name` (the first unnamed robot keeps
/// the URDF's names, later unnamed ones are named robot1, robot2, … by their index); a floating
/// robot's base joint is "PREFIXroot_joint". Geometry names are "BODY/shapeK" (K = index in
/// the body's shapes) or "BODY/NAME" when the shape has a name, and "LINK/collisionK" or
/// "LINK/NAME" for URDF collisions (LINK prefixed).
///
/// Model paths (robots[].urdf, mesh files) are resolved relative to the scene file's folder,
/// then along the colon-separated COULOMB_MODEL_PATH (io::resolve_model_file).
/// Throws SceneError (file, line, key, value) for unknown keys, missing required keys,
/// wrong types, out-of-range values (dt ≤ 0, mass ≤ 0, μ < 0, …), unknown joint names, and
/// wraps UrdfError from robots.
Scene load_scene(const std::string& path);

/// As load_scene, from YAML text; `source_name` stands for the file in messages and relative
/// paths are resolved against `base_directory`.
Scene parse_scene(const std::string& yaml, const std::string& source_name = "<string>",
                  const std::string& base_directory = ".");

}  // namespace coulomb::io
