// URDF loading (via urdfdom): builds a multibody::Model and records collision geometry.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "coulomb/math/spatial.h"
#include "coulomb/multibody/model.h"

namespace coulomb::io {

/// Raised for a URDF that cannot be turned into a Model. what() names the file, the element
/// (link or joint and its name) and the offending value, e.g.
///   "robot.urdf: link 'thigh': <inertial><mass value> is negative: -1.5"
class UrdfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct UrdfOptions {
  /// Attach the root link to the world with a floating joint (7 positions, 6 velocities)
  /// instead of welding it.
  bool floating = false;
  /// Name of that floating joint; its coordinates are named NAME.x … NAME.qz / NAME.wx … NAME.vz.
  std::string floating_joint_name = "root_joint";
};

/// A <collision> element, recorded for the geometry layer (primitives; meshes by file name).
/// Also the record of an SDF <collision> (sdf_loader.h), which adds capsules and planes.
struct UrdfCollision {
  /// kCapsule and kPlane come from SDF files only: a capsule has `radius` and `length` (of its
  /// cylindrical part, along z); a plane is the half-space {z ≤ 0} of its frame X_LG (z = normal).
  enum class Type { kSphere, kBox, kCylinder, kMesh, kCapsule, kPlane };
  std::string link;          ///< link (frame) name it is attached to
  std::string name;          ///< the element's name attribute, may be empty
  Type type = Type::kSphere;
  math::Transform X_LG;      ///< pose of the geometry in the link frame
  math::Vector3 size = math::Vector3::Zero();  ///< box: full edge lengths [m]
  double radius = 0.0;       ///< sphere, cylinder [m]
  double length = 0.0;       ///< cylinder, capsule: along its z axis [m]
  math::Vector3 normal = math::Vector3::UnitZ();  ///< plane: unit normal in the link frame (= X_LG's z axis)
  std::string mesh_filename; ///< mesh: as written in the URDF (package:// unresolved)
  std::string mesh_path;     ///< mesh: the existing file it resolved to (see load_urdf), empty if not found
  math::Vector3 mesh_scale = math::Vector3::Ones();
};

/// A <visual> element: primitive or mesh, its pose in the link frame and its colour.
struct UrdfVisual {
  enum class Type { kSphere, kBox, kCylinder, kMesh };
  std::string link;          ///< link (frame) name it is attached to (prefixed)
  std::string name;          ///< the element's name attribute, may be empty
  Type type = Type::kMesh;
  math::Transform X_LG;      ///< pose of the visual in the link frame (<origin>)
  math::Vector3 size = math::Vector3::Zero();  ///< box: full edge lengths [m]
  double radius = 0.0;       ///< sphere, cylinder [m]
  double length = 0.0;       ///< cylinder [m]
  std::string mesh_filename; ///< mesh: as written in the URDF
  std::string mesh_path;     ///< mesh: the existing file it resolved to (visuals whose mesh is missing are not recorded)
  math::Vector3 mesh_scale = math::Vector3::Ones();
  /// <material><color rgba> (a named material defined at the top level included) when has_rgba;
  /// otherwise meshes take their own materials' colours (geometry::load_visual_mesh).
  double rgba[4] = {0.7, 0.7, 0.7, 1.0};
  bool has_rgba = false;
};

/// A visual colour (from <visual><material><color rgba>), by link, for viewers.
struct UrdfColor {
  std::string link;
  double rgba[4] = {0.7, 0.7, 0.7, 1.0};
};

/// A URDF <mimic>: q_joint = multiplier · q_leader + offset (names prefixed).
struct UrdfMimic {
  std::string joint, leader;
  double multiplier = 1.0, offset = 0.0;
  int line = 0;  ///< of the follower's <joint> in the file
};

struct UrdfModel {
  std::string robot_name;
  multibody::Model model;
  std::vector<UrdfCollision> collisions;
  std::vector<UrdfColor> colors;
  std::vector<UrdfVisual> visuals;    ///< <visual> elements, in file order (missing meshes left out: notes)
  std::vector<std::string> warnings;  ///< what changes the simulation (e.g. a collision mesh not found)
  /// What does not change the simulation: <visual> meshes whose file is missing (viewers draw
  /// the collision shapes instead). `coulomb` prints them as notes; --strict ignores them.
  std::vector<std::string> notes;
  std::vector<UrdfMimic> mimics;  ///< <mimic> joints (UrdfAttachment::mimics)
};

/// Loads the URDF file at `path` (parsed with urdfdom, whose console logging is captured).
///
/// The Model: the root link is welded to the world, or attached by a kFloating joint named
/// options.floating_joint_name when options.floating (a root link named "world" *is* the world
/// frame; floating is then an error). Links are added depth-first from the root, children in
/// the order the file declares their joints, so the coordinate order is that of the file.
/// URDF joint types: revolute and prismatic (with <limit>, or unlimited when it is absent),
/// continuous = revolute with infinite lower/upper (effort/velocity kept), fixed (welded),
/// floating. <dynamics damping friction> is recorded. <inertial> (origin xyz rpy, mass,
/// inertia about the COM in the inertial frame) becomes the link's spatial inertia about its
/// origin in link coordinates; links without <inertial> are massless. <mimic> is checked and
/// recorded (UrdfModel::mimics; a Model alone has no couplers). Robot name → Model::name().
///
/// Geometry: every <collision> becomes a UrdfCollision (pose in the link frame); <visual>
/// material colours go to `colors`. Mesh files are resolved (mesh_path) against the URDF's
/// directory, then each directory of the colon-separated COULOMB_MODEL_PATH; package://PKG/REST
/// is looked for as ANCESTOR/REST for an ancestor directory named PKG of the URDF's directory,
/// as DIR/PKG/REST, and as DIR/SUFFIX for each trailing part SUFFIX of REST. A mesh that is not
/// found is a warning, never an error.
///
/// Throws UrdfError, whose message starts with "<path>:<line>: " (line when known) and names the
/// element and the value, for: unreadable file, malformed XML, a root element other than <robot>,
/// duplicate link or joint names, missing parent or child link, a link with two parent joints,
/// cycles, several roots, a non-root link named "world", negative or non-finite mass, inertia not
/// positive semidefinite or violating the triangle inequality, unknown or unsupported joint type
/// (planar), zero joint axis, lower > upper limit, negative effort/velocity limit, negative damping
/// or friction, negative collision dimensions, a numeric attribute that is not a number, has the
/// wrong count or is not finite (NaN, inf), and anything urdfdom rejects.
/// Thread-safe.
UrdfModel load_urdf(const std::string& path, const UrdfOptions& options = {});

/// As load_urdf, from a string; `source_name` stands for the file name in messages and
/// warnings, and relative mesh paths are resolved against `base_directory`.
UrdfModel parse_urdf(const std::string& xml, const UrdfOptions& options = {},
                     const std::string& source_name = "<string>", const std::string& base_directory = ".");

// ------------------------------------------------------------------------------------------
// Several robots in one Model (the scene loader): add a URDF to an existing ModelBuilder.

struct UrdfAttachOptions {
  /// Attach the root link to the world with a floating joint (see UrdfOptions::floating).
  bool floating = false;
  /// Name of that floating joint, used as is (not prefixed). Must not be empty when floating.
  std::string floating_joint_name = "root_joint";
  /// Prepended to every link and joint name of the URDF (e.g. "a1/"), so that several copies
  /// of a robot can share one Model. The world link "world" is never prefixed.
  std::string prefix;
  /// Welded roots: pose of the root link in the world (the fixed joint's origin). A URDF whose
  /// root link is "world" has its joints from the world (and its world collisions) moved by
  /// it. Ignored when floating: the caller sets the pose in the floating joint's coordinates.
  math::Transform X_W_root = math::Transform::Identity();
};

/// What add_urdf added.
struct UrdfAttachment {
  std::string robot_name;      ///< <robot name>
  std::string root_link;       ///< prefixed name of the root link ("world" if the URDF's root is the world)
  std::string floating_joint;  ///< name of the floating joint, empty when welded
  /// Prefixed names of the URDF's joints (fixed ones included), in the order they were added
  /// (depth-first from the root, children in declaration order).
  std::vector<std::string> joints;
  std::vector<UrdfCollision> collisions;  ///< link names prefixed (UrdfCollision::link)
  std::vector<UrdfColor> colors;          ///< link names prefixed
  std::vector<UrdfVisual> visuals;        ///< link names prefixed
  std::vector<std::string> warnings;
  std::vector<std::string> notes;         ///< as UrdfModel::notes
  /// <mimic> joints, checked: the leader exists in the file, is not the joint itself, the
  /// follower is 1-dof, multiplier and offset finite (UrdfError otherwise). The scene loader
  /// turns them into scene::Coupler constraints (leader 1-dof, same tree: checked there).
  std::vector<UrdfMimic> mimics;
};

/// Adds the URDF file at `path` to `builder` (the same checks, errors and geometry records as
/// load_urdf; names prefixed by options.prefix). On a UrdfError the builder may hold part of
/// the robot and should be discarded. Also throws UrdfError (naming the file) when a prefixed
/// link or joint name is already in the builder.
UrdfAttachment add_urdf(multibody::ModelBuilder& builder, const std::string& path,
                        const UrdfAttachOptions& options = {});

/// As add_urdf, from a string (source_name and base_directory as in parse_urdf).
UrdfAttachment add_urdf_string(multibody::ModelBuilder& builder, const std::string& xml,
                               const UrdfAttachOptions& options = {}, const std::string& source_name = "<string>",
                               const std::string& base_directory = ".");

/// Resolves a model file name as written in a URDF or a scene (relative path, absolute path,
/// file:// or package:// URI) by the search load_urdf uses for meshes: base_directory first,
/// then each directory of the colon-separated COULOMB_MODEL_PATH; package://PKG/REST is looked
/// for as ANCESTOR/REST for an ancestor of base_directory named PKG, as DIR/PKG/REST and as
/// DIR/SUFFIX for each trailing part SUFFIX of REST. Returns the path of an existing regular
/// file, or "" when there is none.
std::string resolve_model_file(const std::string& uri, const std::string& base_directory);

}  // namespace coulomb::io
