// Scene files (YAML): what is simulated. Schema in ../shared/design/ARCHITECTURE.md ("Scene
// file") and docs/scene-format.md. A Scene is the assembled result: one Model holding every
// robot and body (each free body its own tree), the collision geometries, the initial state,
// the PD actuators and the simulation settings.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/scene/scene.h"

namespace coulomb::io {

/// Raised for a scene that cannot be loaded. what() names the file, the line and the key, e.g.
///   "clutter.yaml:12: bodies[3].shapes[0].radius: must be > 0, got -0.05"
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The scene description types live in the scene layer (coulomb/scene/scene.h) so that the
/// simulator does not depend on the loaders; these names keep io::Scene etc. working.
using scene::Actuator;
using scene::Coupler;
using scene::JointFriction;
using scene::JointSpring;
using scene::Scene;
using scene::SceneRobot;

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

/// Loads `path` as a scene, or runs a model file on its own, by the file's content
/// (io::detect_model_file_kind, not its extension):
///  - a YAML scene: load_scene(path);
///  - an MJCF file (root <mujoco>): the scene `robots: [{mjcf: FILE}]`, plus a ground half-space
///    (top at z = 0) unless the MJCF has a plane geom of its own; free joints float, the
///    <option timestep gravity> apply;
///  - a URDF file (root <robot>): `robots: [{urdf: FILE}]` (welded at the origin, the default of
///    robots[].floating) on a ground half-space;
///  - an SDFormat file (root <sdf>): load_sdf_scene(path);
///  - anything else (other XML, JSON, binary): SceneError naming the file and the formats read.
/// Scene settings not given by the model file keep the scene defaults (docs/scene-format.md).
Scene load_scene_or_model(const std::string& path);

/// As load_scene, from YAML text; `source_name` stands for the file in messages and relative
/// paths are resolved against `base_directory`.
Scene parse_scene(const std::string& yaml, const std::string& source_name = "<string>",
                  const std::string& base_directory = ".");

/// A scene made of one SDF file alone, for `coulomb simulate FILE.sdf`: the scene
///   robots: [{sdf: FILE}]          (every model attached as the file says, see sdf_loader.h)
///   gravity: the <world>'s <gravity> (a model file: (0, 0, −9.81))
/// plus a fixed body `ground` with a half-space at z = 0 when no <collision> of the file is a
/// <plane>; every other setting is the scene default (time_step 0.01 s, duration 1 s, SAP).
/// Throws SceneError naming the file (wrapping SdfError with its file, line and element).
Scene load_sdf_scene(const std::string& path);

}  // namespace coulomb::io
