// MJCF (MuJoCo XML) loading: builds a multibody::Model and records the geometry, contact
// filters, actuators, joint springs and simulation options, so that the scene loader can treat
// an MJCF file like a URDF robot (add_mjcf beside add_urdf). Format reference: the MuJoCo XML
// reference (mujoco.readthedocs.io, "XML Reference", version 2.2), whose defaults are used.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "coulomb/geometry/shape.h"
#include "coulomb/math/spatial.h"
#include "coulomb/multibody/model.h"

namespace coulomb::io {

/// Raised for an MJCF file that cannot be turned into a Model. what() starts with
/// "<file>:<line>: " (the file the element is in, includes followed) and names the element and
/// the offending value, e.g.
///   "robot.xml:12: <geom name='thigh'> attribute 'size': not a number: '0.1x'"
class MjcfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A <geom>, ready for the geometry layer.
struct MjcfGeom {
  std::string link;   ///< link (frame) of the Model it is fixed to (prefixed); "world" for worldbody geoms
  std::string name;   ///< the geom's name (prefixed), or "" when unnamed
  std::string type;   ///< the MJCF type: sphere, capsule, ellipsoid, cylinder, box, plane, mesh
  /// The collision shape: sphere, capsule, cylinder, box as given; plane → half-space (its
  /// +z side is free space, MuJoCo's planes are infinite for collision); ellipsoid → its best-fit
  /// primitive (sphere, or capsule along the longest semi-axis; a warning); mesh → the convex
  /// hull of the mesh file (as MuJoCo collides meshes), scaled by <mesh scale>.
  geometry::Shape shape;
  math::Transform X_LG;  ///< pose of the shape frame in the link frame (fromto applied)
  double mu = 1.0;       ///< sliding friction, the first value of `friction` (MuJoCo default 1)
  int contype = 1, conaffinity = 1;  ///< MuJoCo's collision bit fields
  std::array<double, 4> rgba = {0.5, 0.5, 0.5, 1.0};
  int line = 0;  ///< of the <geom> element
  std::string file;  ///< the file the <geom> is in
};

/// An actuator: <motor> (τ = gear · ctrl) or <position> (τ = gear · kp (ctrl − gear · q)),
/// on a joint transmission.
struct MjcfActuator {
  enum class Type { kMotor, kPosition };
  Type type = Type::kMotor;
  std::string name;   ///< prefixed, or "" when unnamed
  std::string joint;  ///< prefixed joint name
  double gear = 1.0;  ///< first entry of `gear`
  double kp = 0.0;    ///< <position kp>
  bool ctrllimited = false;
  double ctrl_lower = 0.0, ctrl_upper = 0.0;
  bool forcelimited = false;
  double force_lower = 0.0, force_upper = 0.0;
  int line = 0;
};

/// What the Model's JointSpec does not carry about an MJCF joint: its spring, its reference
/// configuration (MuJoCo's qpos0) and where it is.
struct MjcfJoint {
  std::string name;   ///< prefixed (an unnamed joint is "jointK", K its MuJoCo joint index)
  std::string type;   ///< hinge, slide, free
  double stiffness = 0.0;  ///< joint spring [N·m/rad or N/m]: τ = −stiffness (q − springref)
  double springref = 0.0;  ///< [rad or m]
  double ref = 0.0;        ///< reference position = initial q [rad or m] (hinge, slide)
  math::Transform X_W_initial;  ///< free joints: the body's initial pose (MuJoCo's qpos0)
  int line = 0;
};

/// An <equality><connect> (ball: the point `anchor` of body1 stays where it is in body2 at the
/// initial configuration) or <weld> (body1's frame stays where it is relative to body2's at the
/// initial configuration), for the scene's bilateral constraints (held rigidly: MuJoCo's
/// solref/solimp softness is not carried over).
struct MjcfEquality {
  enum class Type { kConnect, kWeld };
  Type type = Type::kConnect;
  std::string name;   ///< prefixed, or "" when unnamed
  std::string body1;  ///< link (prefixed) of body1
  std::string body2;  ///< link (prefixed) of body2; "world" when not given
  math::Vector3 anchor = math::Vector3::Zero();  ///< connect: the point in body1's frame [m]
  int line = 0;
};

struct MjcfAttachOptions {
  /// Prepended to every body, joint, geom and actuator name (e.g. "h1/"). "world" is never prefixed.
  std::string prefix;
  /// Pose of the MJCF's world frame in coulomb's world: moves the worldbody's geoms, the bodies
  /// attached to the world and the free bodies' initial poses.
  math::Transform X_W_root = math::Transform::Identity();
};

/// What add_mjcf added.
struct MjcfAttachment {
  std::string model_name;  ///< <mujoco model>
  /// Prefixed names of the joints, in MuJoCo's order (depth-first over bodies, joints in the
  /// order of the body): the coordinate order of the Model for this file.
  std::vector<MjcfJoint> joints;
  std::vector<std::string> free_joints;  ///< prefixed names of the free joints (kFloating)
  std::vector<std::string> bodies;       ///< prefixed body names (MuJoCo body order, world excluded)
  std::vector<MjcfGeom> geoms;           ///< in file order
  std::vector<MjcfActuator> actuators;   ///< <motor> and <position>, in file order
  std::vector<MjcfEquality> equalities;  ///< <equality><connect> and <weld> (active), in file order
  /// Link pairs (prefixed) whose geoms never collide: each body with its parent body (MuJoCo's
  /// default parent filter; bodies welded to the world are not filtered against it), and every
  /// <contact><exclude body1 body2>.
  std::vector<std::pair<std::string, std::string>> excluded_pairs;
  std::optional<double> timestep;              ///< <option timestep> [s]
  std::optional<math::Vector3> gravity;        ///< <option gravity> [m/s²]
  bool has_plane = false;                      ///< a plane geom on the world body
  /// One warning per file naming every unsupported element found (tendons, equality
  /// constraints, sensors, other actuator types, …) with its line, plus ellipsoids approximated.
  std::vector<std::string> warnings;
};

/// A whole MJCF file as a Model.
struct MjcfModel {
  multibody::Model model;
  MjcfAttachment attachment;
};

/// Adds the MJCF file at `path` to `builder`.
///
/// Model: one link per <body> (name = body name, unnamed bodies "bodyK", K = MuJoCo's body
/// index), added depth-first in file order. A body with no joint is welded to its parent (fused);
/// a body with joints j1 … jn gets a chain of n − 1 massless intermediate links "BODY:JOINT"
/// (one joint each), so that X_PB = X_P,B0 · T1(q1) ⋯ Tn(qn) with Tk the hinge rotation about
/// the axis through the joint's `pos` or the slide translation, exactly as MuJoCo's kinematics;
/// a joint `pos` ≠ 0 or `ref` ≠ 0 adds a welded (fused) offset link. Hinge → kRevolute, slide →
/// kPrismatic, free → kFloating with identity joint frame, so that q = MuJoCo's qpos (position,
/// quaternion w x y z) — but v = [ω_W; v_W] in the world frame (coulomb's convention, joint.h)
/// where MuJoCo's qvel = [v_W; ω_B]. Ball joints are an error (not supported yet).
/// Joint damping → JointSpec::damping, frictionloss → friction, armature → armature, range
/// (with limited / compiler autolimits) → limits (degrees converted when compiler angle is
/// degree, MuJoCo's default).
/// Inertia: <inertial> (pos, quat/euler/…, mass, diaginertia or fullinertia), or computed from
/// the body's geoms as MuJoCo does (compiler inertiafromgeom auto/true/false; geom mass, or
/// density (default 1000 kg/m³) × volume; solid shapes: sphere, capsule, cylinder, ellipsoid,
/// box, and closed meshes by their signed volume).
/// <default> classes with inheritance, class and childclass; orientations quat, axisangle,
/// euler (compiler eulerseq), xyaxes, zaxis; fromto on capsule, cylinder, box, ellipsoid;
/// <include file> (relative to the including file); <compiler angle eulerseq meshdir
/// inertiafromgeom autolimits>; <option timestep gravity>; <contact><exclude>; <asset><mesh>.
/// <equality><connect body1 body2 anchor> and <weld body1 body2> become MjcfEquality records.
/// Elements without effect on the dynamics (visual, asset textures and materials, lights,
/// cameras, sites, keyframes, statistic, size) are read and ignored. Unsupported elements that
/// change the simulation (tendon, equality, sensor, plugin, composite, contact pair, actuators
/// other than motor and position, …) are listed in one warning (with lines).
///
/// Throws MjcfError ("<file>:<line>: <element>: <what>: <value>") for: an unreadable file or
/// malformed XML, a root other than <mujoco>, an unknown element or attribute, a number that is
/// not a finite number or has the wrong count, an unknown keyword, a missing or cyclic include,
/// an unknown default class, duplicate names, a missing mesh file, negative mass, density or
/// size, a free joint not on a top-level body, a plane on a moving body, an
/// actuator on an unknown joint. On an error the builder may hold part of the model.
MjcfAttachment add_mjcf(multibody::ModelBuilder& builder, const std::string& path,
                        const MjcfAttachOptions& options = {});

/// As add_mjcf, from a string; `source_name` stands for the file in messages, includes and
/// meshes are resolved against `base_directory`.
MjcfAttachment add_mjcf_string(multibody::ModelBuilder& builder, const std::string& xml,
                               const MjcfAttachOptions& options = {}, const std::string& source_name = "<string>",
                               const std::string& base_directory = ".");

/// Loads the MJCF file at `path` into a Model of its own (named by <mujoco model>), gravity from
/// <option gravity>. Throws MjcfError.
MjcfModel load_mjcf(const std::string& path);

/// The kind of model file, by its root element (comments and the XML declaration skipped).
enum class ModelFileKind { kUrdf, kMjcf, kSdf, kYaml, kUnknown };
/// Reads the start of the file at `path`: root element <robot> → kUrdf, <mujoco> → kMjcf,
/// <sdf> → kSdf, other XML or binary content or JSON → kUnknown, otherwise kYaml (a scene).
/// Throws std::runtime_error naming the file when it cannot be read.
ModelFileKind detect_model_file_kind(const std::string& path);

}  // namespace coulomb::io
