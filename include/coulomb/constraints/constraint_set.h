// ConstraintSet: the solver-neutral description of one time step's constraints
// (../shared/design/ARCHITECTURE.md, "one problem description, many solvers").
//
// The simulator fills it once per step from the contacts at q₀, the model's joint limits, the
// scene's couplers, joint friction and bilateral constraints, and the actuators' commands; solvers/sap and
// solvers/lstable each translate it into their own problem, and inverse dynamics reads the same
// contacts. It is plain data: Jacobian blocks per tree (a tree's velocities are contiguous, see
// contact::TreeRange), the step-start values φ₀ and v₀ of each constraint's coordinate, and the
// physical parameters (stiffness [N/m or N·m/rad], dissipation time [s], gains, limits). No
// solver-specific regularization lives here.
//
// Lists are recycled: clear() keeps every element's storage, so refilling a set with no more
// constraints than it held before allocates nothing.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/contact/contact_set.h"

namespace coulomb::constraints {

/// A list whose elements keep their storage across clear() (their Eigen matrices are reused).
template <typename T>
class RecycledList {
 public:
  void clear() { size_ = 0; }
  /// The next element (default-constructed the first time; afterwards as the last use left it).
  T& add() {
    if (size_ == items_.size()) items_.emplace_back();
    return items_[size_++];
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }
  T* begin() { return items_.data(); }
  T* end() { return items_.data() + size_; }

 private:
  std::vector<T> items_;
  size_t size_ = 0;
};

/// One tree's columns of a constraint Jacobian: rows × n_v(tree), acting on the velocities
/// v_start … v_start + n_v(tree) − 1.
struct TreeBlock {
  int tree = 0;     ///< index into ConstraintSet::trees
  int v_start = 0;  ///< first velocity index of the tree
  Eigen::MatrixXd J;
};

/// A frictional contact point (contact::ContactSet entry `contact`): rows [t1, t2, n] of the
/// contact frame, v_c = Σ_blocks J v (velocity of B relative to A). One block when one side is
/// the world, two when the contact joins two trees.
struct ContactConstraint {
  int contact = 0;
  int num_blocks = 1;
  TreeBlock blocks[2];
  double phi0 = 0.0;  ///< signed distance at q₀ [m], < 0 overlapping
  double vn0 = 0.0;   ///< normal velocity (J v₀)_n [m/s], > 0 separating
  contact::PairMaterial material;
};

/// A joint limit on a one-dof joint: lower ≤ q ≤ upper (either may be infinite) [rad or m].
struct JointLimitConstraint {
  int body = 0;     ///< the joint's child body
  int v_index = 0, q_index = 0;
  int tree = 0, local = 0;  ///< tree index and velocity index within the tree
  double q0 = 0.0, v0 = 0.0, lower = 0.0, upper = 0.0;
};

/// An actuator with PD gains: τ = clamp(kp (q_target − q) + kd (v_target − v) + feedforward,
/// ±effort_limit) [N·m or N], implicit in q and v.
struct PdActuatorConstraint {
  int actuator = 0;
  int v_index = 0, q_index = 0, tree = 0, local = 0;
  double q0 = 0.0, v0 = 0.0;
  double kp = 0.0, kd = 0.0, q_target = 0.0, v_target = 0.0, feedforward = 0.0;
  double effort_limit = 0.0;  ///< > 0, may be +∞
};

/// A coupler (URDF <mimic>): q_follower = gear_ratio · q_leader + offset, both in one tree.
struct CouplerConstraint {
  int coupler = 0;
  int tree = 0, local = 0, leader_local = 0;
  int v_index = 0, leader_v_index = 0;
  double q0 = 0.0, leader_q0 = 0.0;
  double vc0 = 0.0;  ///< v_follower − gear_ratio · v_leader at v₀
  double gear_ratio = 1.0, offset = 0.0;
};

/// Dry friction on a one-dof joint (URDF <dynamics friction>): |τ| ≤ friction [N·m or N],
/// opposing the joint velocity.
struct JointFrictionConstraint {
  int index = 0;
  int v_index = 0, tree = 0, local = 0;
  double friction = 0.0;
  double v0 = 0.0;
};

/// A holonomic bilateral constraint g(q) = 0 with 1 … 6 rows (scene `constraints:`: ball,
/// weld, distance, joint), linearized at q₀: the row velocity is φ̇ = Σ_blocks J v (the
/// velocity of body B's frame relative to body A's, per row), and a row's impulse γ acts on B
/// through Jᵀγ (A receives its opposite). Each row is a spring–damper λ = −k φ − b φ̇ with
/// stiffness k = +∞ for a rigid row (each solver then applies its own near-rigid rule).
struct BilateralConstraint {
  int constraint = 0;  ///< index into Scene::constraints
  int num_rows = 0;    ///< 1 … 6
  int num_blocks = 1;  ///< 1 or 2 (two when the constraint joins two trees)
  TreeBlock blocks[2];
  Eigen::VectorXd phi0;       ///< g(q₀), per row [m or rad]
  Eigen::VectorXd phidot0;    ///< J v₀, per row [m/s or rad/s]
  Eigen::VectorXd stiffness;  ///< k per row [N/m or N·m/rad], > 0, may be +∞ (rigid)
  Eigen::VectorXd damping;    ///< b per row [N·s/m or N·m·s/rad], ≥ 0 (unused on rigid rows)

  /// True when row r's Jacobian vanishes (‖J_r‖ ≤ 1e-10 · max(1, max_s ‖J_s‖)): the row cannot
  /// move at first order (e.g. the out-of-plane rows of a planar closed chain). Solvers give such
  /// rows a zero bias velocity, so that their impulse is ≈ 0 instead of an unbounded correction.
  bool inert_row(int r) const;
};

struct ConstraintSet {
  double time_step = 0.0;  ///< δt [s]
  double theta_vq = 1.0;   ///< the integrator's position prediction q₁ = q₀ + δt (θ_vq v + (1 − θ_vq) v₀)
  int nv = 0;
  std::vector<contact::TreeRange> trees;
  RecycledList<ContactConstraint> contacts;
  RecycledList<JointLimitConstraint> limits;
  RecycledList<PdActuatorConstraint> pd_actuators;
  RecycledList<CouplerConstraint> couplers;
  RecycledList<JointFrictionConstraint> joint_frictions;
  RecycledList<BilateralConstraint> bilaterals;

  void clear() {
    contacts.clear();
    limits.clear();
    pd_actuators.clear();
    couplers.clear();
    joint_frictions.clear();
    bilaterals.clear();
  }
  size_t size() const {
    return contacts.size() + limits.size() + pd_actuators.size() + couplers.size() + joint_frictions.size() +
           bilaterals.size();
  }
  /// Σ num_rows over the bilateral constraints.
  int num_bilateral_rows() const {
    int n = 0;
    for (const BilateralConstraint& b : bilaterals) n += b.num_rows;
    return n;
  }
};

/// A solver's impulses for the constraints of a ConstraintSet, in its order [N·s].
struct ConstraintImpulses {
  Eigen::VectorXd contacts;            ///< 3 per contact, contact frame [t1, t2, n]
  Eigen::VectorXd contact_velocities;  ///< 3 per contact: v_c = J v at the solution [m/s]
  Eigen::VectorXd limits;              ///< per limit: generalized impulse on the joint (> 0 pushes q up)
  Eigen::VectorXd pd_actuators;        ///< per PD actuator: δt τ (the implicit PD's impulse)
  Eigen::VectorXd couplers;            ///< per coupler: impulse on the follower
  Eigen::VectorXd joint_frictions;     ///< per joint friction: generalized impulse on the joint
  /// All bilateral rows, constraint after constraint (BilateralConstraint::num_rows each): the
  /// row impulse γ on body B [N·s or N·m·s].
  Eigen::VectorXd bilaterals;

  /// Sizes every vector for `set` and zeroes it.
  void resize(const ConstraintSet& set) {
    contacts.setZero(3 * set.contacts.size());
    contact_velocities.setZero(3 * set.contacts.size());
    limits.setZero(set.limits.size());
    pd_actuators.setZero(set.pd_actuators.size());
    couplers.setZero(set.couplers.size());
    joint_frictions.setZero(set.joint_frictions.size());
    bilaterals.setZero(set.num_bilateral_rows());
  }
};

/// Appends one ContactConstraint per contact of `contacts`, with its Jacobian blocks from `J`
/// (contact_jacobian() at q₀), φ₀ and the normal velocity at v₀. `tree_of_root` maps a root
/// body index to its index in set.trees.
void add_contacts(const contact::ContactSet& contacts, const contact::ContactJacobian& J,
                  const std::vector<int>& tree_of_root, const Eigen::VectorXd& v0, ConstraintSet& set);

}  // namespace coulomb::constraints
