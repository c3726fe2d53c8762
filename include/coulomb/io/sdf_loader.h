// SDFormat loading (via libsdformat 12, the parser of Gazebo and Drake): builds multibody::Model
// trees from the <model>s of an SDF file (a single <model> or a <world> of several, with
// <include>s) and records their collision and visual geometry in the URDF loader's records.
// Format specification: http://sdformat.org/spec (SDF 1.9 for libsdformat 12).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/math/spatial.h"
#include "coulomb/multibody/model.h"

namespace coulomb::io {

/// Raised for an SDF file that cannot be turned into a Model. what() starts with
/// "<file>:<line>: " (the file that holds the element, which may be an included model's file;
/// line when known) and names the element and the offending value, e.g.
///   "robot.sdf:12: model 'arm' link 'upper': <inertial><mass> is not a number: '1.x5'"
class SdfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SdfAttachOptions {
  /// How each model is attached to the world:
  ///  - kAsFile: as the file says. A <static> model is welded at its pose; a model with a joint
  ///    whose parent is "world" hangs from the world by that joint; any other model is free: its
  ///    root link is attached by a kFloating joint.
  ///  - kFloating: every non-static model free (a model jointed to the world is an error).
  ///  - kWelded: every model's root link welded to the world at its pose.
  enum class Base { kAsFile, kFloating, kWelded };
  Base base = Base::kAsFile;
  /// Prepended to every link and joint name (e.g. "cell/"). The models of a <world> are further
  /// prefixed by "MODEL/" (their <model name>, or the <include><name>); the single <model> of a
  /// model file is not.
  std::string prefix;
  /// Pose in the world of the file's world frame (for a model file: of the frame its <model
  /// <pose>> is given in). Applied to every model.
  math::Transform X_W_file = math::Transform::Identity();
};

/// One <model> of the file, as added.
struct SdfModelAttachment {
  std::string name;            ///< <model name> (or <include><name>)
  std::string prefix;          ///< prefix of its link and joint names (options.prefix [+ "MODEL/"])
  bool is_static = false;      ///< <static>true</static>
  std::string root_link;       ///< prefixed name of its root link (the link that is no joint's child)
  /// Name of its floating joint (PREFIX + "root_joint"), empty when welded or jointed to the world.
  /// Its q is [p_WR, quat_WR (w, x, y, z)] and starts at X_W_root (see add_sdf).
  std::string floating_joint;
  math::Transform X_W_root;    ///< pose of the root link in the world, from the file (and X_W_file)
  std::vector<std::string> joints;  ///< prefixed joint names (fixed included), depth-first from the root
  std::vector<UrdfCollision> collisions;  ///< this model's (also in SdfAttachment::collisions)
  std::vector<UrdfColor> colors;          ///< this model's
  std::vector<UrdfVisual> visuals;        ///< this model's
};

/// What add_sdf added. Link names in the geometry records are prefixed; a static model's links
/// are frames fused into the world body.
struct SdfAttachment {
  std::string name;  ///< <world name>, or the <model name> of a model file
  bool is_world = false;  ///< the file's root is a <world>
  std::vector<SdfModelAttachment> models;  ///< in file order (<include>s where they appear)
  std::vector<std::string> joints;         ///< every model's joints, model by model
  /// <collision> elements: box, sphere, cylinder, capsule, mesh (resolved mesh_path), plane
  /// (kPlane, the half-space below it; X_LG has the plane's normal as its z axis).
  std::vector<UrdfCollision> collisions;
  std::vector<UrdfColor> colors;    ///< <visual><material><diffuse> by link
  std::vector<UrdfVisual> visuals;  ///< box, sphere, cylinder, mesh visuals (others are notes)
  std::vector<std::string> warnings;
  std::vector<std::string> notes;   ///< what does not change the simulation (as UrdfModel::notes)
  math::Vector3 gravity{0.0, 0.0, -9.81};  ///< <world><gravity> [m/s²] (the default for a model file)
};

/// Adds the SDF file at `path` to `builder`: every <model> of it (the root <model>, or each
/// <model> and <include> of the root <world>) becomes one kinematic tree.
///
/// Parsing: libsdformat 12 (sdf::Root::Load) with unrecognized elements as errors and a find-file
/// callback that resolves `model://NAME/REST` and other URIs of <include><uri> against the file's
/// directory, then each directory of the colon-separated COULOMB_MODEL_PATH (an included model
/// directory holds model.config naming its SDF file, or model.sdf). Poses are resolved by
/// libsdformat's pose graph (SemanticPose().Resolve: <pose relative_to>, <frame>s, joint frames).
///
/// Each model: the links form a tree through the model's joints (each link the child of at most
/// one joint). Its root link is attached as SdfAttachOptions::base says; links are added
/// depth-first from the root, children in the order the file declares their joints. A link's
/// <inertial> (mass [kg], <inertia> about the centre of mass in the inertial frame [kg·m²], its
/// <pose> in the link frame) becomes its spatial inertia; SDF's defaults apply (a link without
/// <inertial> has 1 kg and unit inertia, as the spec says). Joints: revolute (<axis><xyz> in its
/// expressed-in frame, <limit lower upper effort velocity>, ±1e16 and negative effort/velocity
/// meaning unlimited as in SDF, <dynamics damping friction>), continuous (revolute, unlimited),
/// prismatic, fixed (the child is fused into its parent's body, kept as a frame) and ball
/// (multibody::JointType::kBall). A joint whose frame is not at its child link's origin gets a body
/// named "CHILD::JOINT" at the joint frame, the child link being a frame of it.
///
/// Throws SdfError (file:line, element, value) for: an unreadable file, malformed XML, an
/// unrecognized element, a numeric element that is not a finite number (<pose>, <mass>,
/// <inertia>, <xyz>, <limit>, <dynamics>, geometry sizes, …), a negative mass or an inertia that
/// is not positive semidefinite or violates the triangle inequality, a <collision> mesh that is
/// not found, an <include> that cannot be resolved, a link that is the child of two joints or a
/// joint cycle (kinematic loop), several root links in a model, a nested <model>, joint types
/// gearbox, revolute2, screw and universal, a zero joint axis, lower > upper, negative damping or
/// friction, negative geometry sizes, a name already in the builder, and any other error
/// libsdformat reports. On an SdfError the builder may hold part of the file and should be
/// discarded.
SdfAttachment add_sdf(multibody::ModelBuilder& builder, const std::string& path,
                      const SdfAttachOptions& options = {});

/// A Model of its own from an SDF file (add_sdf into a fresh builder named after the file's
/// stem), with the initial configuration the file gives (floating roots at their poses).
struct SdfModel {
  multibody::Model model;
  Eigen::VectorXd q0;  ///< n_q: neutral, floating joints at SdfModelAttachment::X_W_root
  SdfAttachment attachment;
};

/// Loads the SDF file at `path` (see add_sdf). Model gravity = the world's <gravity>.
SdfModel load_sdf(const std::string& path, const SdfAttachOptions& options = {});

/// True when `path` names an SDF file: its first element is <sdf> (read from the file's first
/// 4 KiB). For callers that choose a loader by content.
bool is_sdf_file(const std::string& path);

}  // namespace coulomb::io
