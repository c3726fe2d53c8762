// The multibody Model: an immutable kinematic forest (one or more trees hanging from the world)
// of rigid bodies connected by joints, with named frames. Built once by ModelBuilder (or by the
// URDF loader), then used `const` by every algorithm together with a Workspace (Model/Workspace
// split, as Pinocchio's Model/Data and MuJoCo's mjModel/mjData).
//
// Bodies are numbered in topological order: body 0 is the world, parent(b) < b for b ≥ 1.
// The bodies of each tree are consecutive and its coordinates (q and v) contiguous, trees in
// the order their roots were added (ModelBuilder::build renumbers to guarantee this).
// A body is a maximal set of links welded together: ModelBuilder fuses a link attached by a
// fixed joint into its parent's body (summing inertias) and keeps it as a Frame, so that the
// algorithms iterate only over bodies that move. Every link, welded or not, is a Frame.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <Eigen/Core>

#include "coulomb/math/spatial.h"
#include "coulomb/multibody/joint.h"

namespace coulomb::multibody {

/// A rigid body of the tree. Frame of the body = frame of its (first) link.
struct Body {
  std::string name;                ///< name of the body's first link
  int parent = -1;                 ///< parent body index (−1 for the world)
  int tree = -1;                   ///< index of the root body of this body's tree (0 for the world)
  Joint joint;                     ///< joint to the parent (type kFixed for the world)
  math::SpatialInertia inertia;    ///< about the body origin, body components (sum of welded links)
};

/// A named frame fixed to a body: every URDF link is one, plus any frame added by the user.
struct Frame {
  std::string name;
  int body = 0;          ///< body the frame is fixed to
  math::Transform X_BF;  ///< pose of the frame in the body frame
  math::SpatialInertia inertia;  ///< the link's own inertia about F's origin, in F (zero if massless)
};

class ModelBuilder;

class Model {
 public:
  /// Number of bodies including the world (body 0).
  int num_bodies() const { return static_cast<int>(bodies_.size()); }
  /// Number of configuration coordinates n_q.
  int nq() const { return nq_; }
  /// Number of velocity coordinates (degrees of freedom) n_v.
  int nv() const { return nv_; }
  const std::string& name() const { return name_; }

  const std::vector<Body>& bodies() const { return bodies_; }
  const Body& body(int b) const { return bodies_.at(b); }
  const std::vector<Frame>& frames() const { return frames_; }
  const Frame& frame(int f) const { return frames_.at(f); }

  /// Gravity acceleration in the world frame [m/s²], default (0, 0, −9.81).
  const math::Vector3& gravity() const { return gravity_; }
  void set_gravity(const math::Vector3& g) { gravity_ = g; }

  /// Index of the body named `name`. Throws std::out_of_range naming it if absent.
  int body_index(const std::string& name) const;
  /// Index of the frame (link) named `name`. Throws std::out_of_range naming it if absent.
  int frame_index(const std::string& name) const;
  /// Index of the body whose joint is named `joint_name`, or −1 if there is none (or the joint
  /// is a fixed joint that was fused away).
  int joint_body(const std::string& joint_name) const;

  /// Names of the n_v velocity coordinates: the joint name for 1-dof joints, and
  /// JOINT.wx, .wy, .wz, .vx, .vy, .vz for a floating joint, JOINT.wx, .wy, .wz for a ball joint.
  const std::vector<std::string>& dof_names() const { return dof_names_; }
  /// Names of the n_q configuration coordinates: the joint name for 1-dof joints, and
  /// JOINT.x, .y, .z, .qw, .qx, .qy, .qz for a floating joint, JOINT.qw, .qx, .qy, .qz for a ball joint.
  const std::vector<std::string>& position_names() const { return position_names_; }

  /// Sum of all link masses, including links welded to the world [kg].
  double total_mass() const { return total_mass_; }

  /// The zero configuration: all joint coordinates 0, identity quaternions (floating, ball). n_q.
  Eigen::VectorXd neutral_configuration() const;
  /// Joint damping coefficients per velocity coordinate (0 for floating and ball joints). n_v.
  Eigen::VectorXd damping() const;
  /// Joint armature per velocity coordinate (Joint::armature repeated over the joint's nv
  /// coordinates; a floating joint's applies to all 6) [kg·m² or kg]. n_v.
  const Eigen::VectorXd& armature() const { return armature_; }
  /// True when some joint has a non-zero armature.
  bool has_armature() const { return has_armature_; }
  /// True when body b's joint is a floating joint on the world whose joint frame is the world
  /// frame (X_PJ exactly the identity: a free body, or a floating base placed by its q alone).
  /// Its pose is then X_WB = X_PB = floating_transform(q) and R_JB = R_WB, and the kinematic
  /// passes skip their products by the identity (the same numbers, up to the sign of a zero).
  bool floating_in_world(int b) const { return floating_in_world_[b] != 0; }

  /// Throws std::invalid_argument naming the coordinate if q has the wrong size, a non-finite
  /// entry, or a floating- or ball-joint quaternion of norm 0.
  void check_configuration(const Eigen::Ref<const Eigen::VectorXd>& q) const;
  /// Throws std::invalid_argument naming the coordinate if v (or a) has the wrong size or a
  /// non-finite entry. `what` names the vector in the message ("v", "vdot", "tau").
  void check_velocity(const Eigen::Ref<const Eigen::VectorXd>& v, const char* what = "v") const;

  /// Scales the inertia of body b by `factor`: its mass, first moment and rotational inertia (and
  /// those of the links welded into it, its frames), the centre of mass unchanged, as a uniform
  /// change of density. The one change a built Model allows, for variations of a scene before a
  /// Simulator is made from it (the Python package's coulomb.batch mass parameters). Throws
  /// std::invalid_argument naming the body and the value for b outside 1 … num_bodies() − 1 or a
  /// factor that is not finite and > 0.
  void scale_body_inertia(int b, double factor);

 private:
  friend class ModelBuilder;
  std::string name_;
  std::vector<Body> bodies_;
  std::vector<Frame> frames_;
  std::unordered_map<std::string, int> body_by_name_, frame_by_name_, body_by_joint_;
  std::vector<std::string> dof_names_, position_names_;
  math::Vector3 gravity_{0.0, 0.0, -9.81};
  double total_mass_ = 0.0;
  Eigen::VectorXd armature_;  // n_v, filled by ModelBuilder::build
  std::vector<char> floating_in_world_;  // per body, filled by ModelBuilder::build
  bool has_armature_ = false;
  int nq_ = 0, nv_ = 0;
};

/// Description of the joint that attaches a new link to its parent link.
struct JointSpec {
  std::string name;
  JointType type = JointType::kFixed;
  math::Transform X_PJ;                         ///< joint frame in the PARENT LINK's frame
  math::Vector3 axis = math::Vector3::UnitZ();  ///< normalized by the builder; must be non-zero
  JointLimits limits;
  double damping = 0.0;
  double friction = 0.0;
  double armature = 0.0;  ///< [kg·m² or kg] ≥ 0, see Joint::armature
};

/// Throws std::invalid_argument (message starts with `context`) unless mass ≥ 0, everything is
/// finite, I_com is symmetric positive semidefinite and its principal moments satisfy the
/// triangle inequality (I1 + I2 ≥ I3, up to a 1e-9 relative tolerance).
void validate_inertia(double mass, const math::Matrix3& I_com, const std::string& context);

/// Builds a Model link by link, parents before children.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::string model_name = "model");

  /// Adds link `name` attached to the existing link `parent` ("world" for the world) by `joint`,
  /// with spatial inertia `inertia` about the link origin in link coordinates. A fixed joint
  /// fuses the link into the parent's body. Returns the link's frame index.
  /// Throws std::invalid_argument for a duplicate link or joint name, an unknown parent, a
  /// zero or non-finite axis, non-finite pose, or lower > upper limits.
  int add_link(const std::string& name, const std::string& parent, const JointSpec& joint,
               const math::SpatialInertia& inertia);

  /// Adds a frame fixed to link `parent` at X_PF. Returns its index.
  int add_frame(const std::string& name, const std::string& parent, const math::Transform& X_PF);

  bool has_link(const std::string& name) const { return model_.frame_by_name_.count(name) > 0; }

  /// Finishes the model: renumbers bodies and coordinates tree by tree, so links of different
  /// trees may be added interleaved. Frame indices returned by add_link stay valid. The builder
  /// is left empty.
  Model build();

 private:
  Model model_;
};

}  // namespace coulomb::multibody
