// Joint types of a kinematic tree and their motion subspaces.
//
// Every joint connects a parent body P to a child body B. The joint frame J is fixed in P at
// X_PJ; the child frame B coincides with J at zero configuration and moves relative to it:
//   X_PB(q) = X_PJ · X_JB(q).
// The algorithms work in body coordinates, so the motion subspace S (6 × nv) maps joint
// velocities to the spatial velocity of B relative to P expressed in B (Featherstone 2008, §4.4):
//  - revolute  (nq = nv = 1): X_JB = rotation about the unit axis a by q [rad];   S = [a; 0].
//  - prismatic (nq = nv = 1): X_JB = translation along the unit axis a by q [m];  S = [0; a].
//  - floating  (nq = 7, nv = 6): q = [p_JB (3, m), quaternion R_JB (w, x, y, z)],
//    v = [ω (3, rad/s), v (3, m/s)]: the angular velocity of B and the velocity of B's origin,
//    both relative to P and EXPRESSED IN THE JOINT FRAME J (the world, for a free body), as
//    Drake's quaternion floating mobilizer. In body coordinates S = blockdiag(R_JBᵀ, R_JBᵀ),
//    which depends on q, and its apparent derivative adds the velocity-product term
//    c_J = Ṡ q̇ = [0; −ω_B × v_B] (joint_bias_acceleration). Inertial-frame velocities keep their
//    meaning across a time step, so a step that solves for v with J(q₀) and then moves q is
//    consistent (a body-frame v would be rotated by the step's rotation).
//  - ball      (nq = 4, nv = 3): q = quaternion R_JB (w, x, y, z), the same layout and meaning
//    as the floating joint's rotational part; v = ω (rad/s), the angular velocity of B relative
//    to P EXPRESSED IN J, as the floating joint's angular part. S = [R_JBᵀ; 0] and
//    c_J = Ṡ q̇ = [−ω_B × ω_B; 0] = 0 (a spherical joint about J's origin: SDF <joint type="ball">).
//  - fixed     (nq = nv = 0): welded. ModelBuilder fuses welded links into their parent body.
// The joint functions below take X_PB (the joint's current pose, from joint_transform) because
// the floating and ball joints' S depends on R_JB = R_PJᵀ R_PB.
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "coulomb/math/spatial.h"

namespace coulomb::multibody {

enum class JointType { kFixed, kRevolute, kPrismatic, kFloating, kBall };

/// "fixed", "revolute", "prismatic", "floating", "ball".
const char* joint_type_name(JointType type);
/// Number of configuration coordinates nq of a joint type.
int joint_nq(JointType type);
/// Number of velocity coordinates nv of a joint type.
int joint_nv(JointType type);

/// Limits from the URDF <limit> element. Units are those of the joint coordinate
/// (rad or m; rad/s or m/s; N·m or N). Infinite when absent.
struct JointLimits {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double velocity = std::numeric_limits<double>::infinity();
  double effort = std::numeric_limits<double>::infinity();
};

/// A joint of the tree. Owned by the child body (Body::joint).
struct Joint {
  std::string name;
  JointType type = JointType::kFixed;
  math::Transform X_PJ;                               ///< joint frame in the parent body frame
  math::Vector3 axis = math::Vector3::UnitZ();        ///< unit axis in J (= B) coordinates
  JointLimits limits;
  double damping = 0.0;   ///< viscous damping [N·m·s/rad or N·s/m] (URDF <dynamics damping>)
  double friction = 0.0;  ///< Coulomb friction [N·m or N] (URDF <dynamics friction>), recorded only
  /// Armature [kg·m² or kg] (MJCF <joint armature>): a rotor inertia added to the diagonal of the
  /// mass matrix on each of the joint's nv velocity coordinates (M += diag(armature), as MuJoCo's
  /// dof_armature). crba, rnea (τ += armature ⊙ v̇), aba, generalized_momentum and
  /// kinetic_energy include it. 0 for URDF joints.
  double armature = 0.0;
  /// Revolute joints: R_PJ [a]× and R_PJ [a]×², precomputed by ModelBuilder so that
  /// R_PB(q) = R_PJ + sin q · R_PJ_axis_skew + (1 − cos q) · R_PJ_axis_skew2 (Rodrigues).
  math::Matrix3 R_PJ_axis_skew = math::Matrix3::Zero();
  math::Matrix3 R_PJ_axis_skew2 = math::Matrix3::Zero();
  int q_index = 0;        ///< first index in q
  int v_index = 0;        ///< first index in v
  int nq = 0;
  int nv = 0;
};

/// X_JB(q) of a floating joint: q points at its 7 coordinates [p_JB; quaternion (w, x, y, z)]
/// (the quaternion normalized here). joint_transform is X_PJ times it.
inline math::Transform floating_transform(const double* q) {
  const math::Quaternion quat(q[3], q[4], q[5], q[6]);
  return {quat.normalized().toRotationMatrix(), math::Vector3(q[0], q[1], q[2])};
}

/// X_PB(q) for this joint: pose of the child body in the parent body frame. q points at the
/// joint's first configuration coordinate (nq values).
inline math::Transform joint_transform(const Joint& joint, const double* q) {
  switch (joint.type) {
    case JointType::kRevolute: {
      const double s = std::sin(q[0]), c = std::cos(q[0]);
      return {joint.X_PJ.R + s * joint.R_PJ_axis_skew + (1.0 - c) * joint.R_PJ_axis_skew2, joint.X_PJ.p};
    }
    case JointType::kPrismatic:
      return {joint.X_PJ.R, joint.X_PJ.p + joint.X_PJ.R * (joint.axis * q[0])};
    case JointType::kFloating:
      return joint.X_PJ * floating_transform(q);
    case JointType::kBall: {
      const math::Quaternion quat(q[0], q[1], q[2], q[3]);
      return {joint.X_PJ.R * quat.normalized().toRotationMatrix(), joint.X_PJ.p};
    }
    case JointType::kFixed:
      break;
  }
  return joint.X_PJ;
}

/// True for the joints whose S depends on R_JB (floating, ball).
inline bool joint_uses_rotation(JointType type) { return type == JointType::kFloating || type == JointType::kBall; }

/// R_JB of a floating or ball joint from its current X_PB.
inline math::Matrix3 floating_rotation(const Joint& joint, const math::Transform& X_PB) {
  return joint.X_PJ.R.transpose() * X_PB.R;
}

/// The functions below that take R_JB instead of X_PB are the same computations with the
/// floating joint's R_JB = floating_rotation(joint, X_PB) evaluated once by the caller (the
/// argument is not read for other joint types), for loops that apply S or Sᵀ to one joint
/// several times.

/// S · v_j: the joint's contribution to the child's spatial velocity, in the child frame.
inline math::SpatialMotion joint_motion(const Joint& joint, const math::Matrix3& R_JB, const double* v) {
  switch (joint.type) {
    case JointType::kRevolute:
      return {joint.axis * v[0], math::Vector3::Zero()};
    case JointType::kPrismatic:
      return {math::Vector3::Zero(), joint.axis * v[0]};
    case JointType::kFloating:
      return {R_JB.transpose() * math::Vector3(v[0], v[1], v[2]), R_JB.transpose() * math::Vector3(v[3], v[4], v[5])};
    case JointType::kBall:
      return {R_JB.transpose() * math::Vector3(v[0], v[1], v[2]), math::Vector3::Zero()};
    case JointType::kFixed:
      break;
  }
  return {};
}

/// S · v_j, with X_PB the joint's current pose (joint_transform).
inline math::SpatialMotion joint_motion(const Joint& joint, const math::Transform& X_PB, const double* v) {
  if (joint_uses_rotation(joint.type)) return joint_motion(joint, floating_rotation(joint, X_PB), v);
  return joint_motion(joint, X_PB.R, v);
}

/// c_J = Ṡ q̇ for the joint velocity vJ = S q̇ (child frame): zero for 1-dof joints (constant S),
/// [0; −ω × v] for a floating joint (vJ = [ω; v]), zero for a ball joint (−ω × ω).
inline math::SpatialMotion joint_bias_acceleration(const Joint& joint, const math::SpatialMotion& vJ) {
  if (joint.type == JointType::kFloating) return {math::Vector3::Zero(), -vJ.w.cross(vJ.v)};
  return {};
}

/// Column k (0 ≤ k < nv) of the motion subspace S, in the child frame.
inline math::SpatialMotion joint_subspace_column(const Joint& joint, const math::Matrix3& R_JB, int k) {
  switch (joint.type) {
    case JointType::kRevolute:
      return {joint.axis, math::Vector3::Zero()};
    case JointType::kPrismatic:
      return {math::Vector3::Zero(), joint.axis};
    case JointType::kFloating: {
      const math::Vector3 e = R_JB.row(k % 3).transpose();  // R_JBᵀ e_k
      return k < 3 ? math::SpatialMotion(e, math::Vector3::Zero()) : math::SpatialMotion(math::Vector3::Zero(), e);
    }
    case JointType::kBall:
      return {R_JB.row(k).transpose(), math::Vector3::Zero()};  // R_JBᵀ e_k
    case JointType::kFixed:
      break;
  }
  return {};
}

/// Column k of S, with X_PB the joint's current pose.
inline math::SpatialMotion joint_subspace_column(const Joint& joint, const math::Transform& X_PB, int k) {
  if (joint_uses_rotation(joint.type)) return joint_subspace_column(joint, floating_rotation(joint, X_PB), k);
  return joint_subspace_column(joint, X_PB.R, k);
}

/// Sᵀ f: writes the joint's nv generalized forces for the spatial force f (child frame).
inline void joint_project(const Joint& joint, const math::Matrix3& R_JB, const math::SpatialForce& f, double* out) {
  switch (joint.type) {
    case JointType::kRevolute:
      out[0] = joint.axis.dot(f.tau);
      return;
    case JointType::kPrismatic:
      out[0] = joint.axis.dot(f.f);
      return;
    case JointType::kFloating: {
      const math::Vector3 tau = R_JB * f.tau, force = R_JB * f.f;
      for (int k = 0; k < 3; ++k) {
        out[k] = tau[k];
        out[3 + k] = force[k];
      }
      return;
    }
    case JointType::kBall: {
      const math::Vector3 tau = R_JB * f.tau;
      for (int k = 0; k < 3; ++k) out[k] = tau[k];
      return;
    }
    case JointType::kFixed:
      return;
  }
}

/// Sᵀ f, with X_PB the joint's current pose.
inline void joint_project(const Joint& joint, const math::Transform& X_PB, const math::SpatialForce& f, double* out) {
  if (joint_uses_rotation(joint.type)) return joint_project(joint, floating_rotation(joint, X_PB), f, out);
  joint_project(joint, X_PB.R, f, out);
}

}  // namespace coulomb::multibody
