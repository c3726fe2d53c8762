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
struct UrdfCollision {
  enum class Type { kSphere, kBox, kCylinder, kMesh };
  std::string link;          ///< link (frame) name it is attached to
  std::string name;          ///< the element's name attribute, may be empty
  Type type = Type::kSphere;
  math::Transform X_LG;      ///< pose of the geometry in the link frame
  math::Vector3 size = math::Vector3::Zero();  ///< box: full edge lengths [m]
  double radius = 0.0;       ///< sphere, cylinder [m]
  double length = 0.0;       ///< cylinder, along its z axis [m]
  std::string mesh_filename; ///< mesh: as written in the URDF (package:// unresolved)
  math::Vector3 mesh_scale = math::Vector3::Ones();
};

/// A visual colour (from <visual><material><color rgba>), by link, for viewers.
struct UrdfColor {
  std::string link;
  double rgba[4] = {0.7, 0.7, 0.7, 1.0};
};

struct UrdfModel {
  std::string robot_name;
  multibody::Model model;
  std::vector<UrdfCollision> collisions;
  std::vector<UrdfColor> colors;
  std::vector<std::string> warnings;  ///< e.g. skipped <visual> meshes whose file is missing
};

/// Loads the URDF file at `path`. Links without <inertial> are massless. Throws UrdfError
/// (naming the file, element and value) for: unreadable file, malformed XML, missing parent or
/// child link, cycles or several roots, negative or non-finite mass, inertia not positive
/// semidefinite or violating the triangle inequality, unknown or unsupported joint type
/// (planar), zero joint axis, lower > upper limit, negative damping, NaN anywhere numeric.
UrdfModel load_urdf(const std::string& path, const UrdfOptions& options = {});

/// As load_urdf, from a string; `source_name` stands for the file name in messages and
/// relative mesh paths are resolved against `base_directory`.
UrdfModel parse_urdf(const std::string& xml, const UrdfOptions& options = {},
                     const std::string& source_name = "<string>", const std::string& base_directory = ".");

}  // namespace coulomb::io
