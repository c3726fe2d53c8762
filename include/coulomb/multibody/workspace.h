// Workspace: every buffer the multibody algorithms write, preallocated for one Model so that
// no algorithm allocates after construction (the Model/Workspace split; Pinocchio's Data,
// MuJoCo's mjData). One Workspace per thread. Fields are public outputs; which algorithm
// fills which field is stated next to it. Per-body vectors have num_bodies() entries
// (index 0 = world).
#pragma once

#include <vector>

#include <Eigen/Core>

#include "coulomb/math/spatial.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/tree_mass_matrix.h"

namespace coulomb::multibody {

struct Workspace {
  explicit Workspace(const Model& model);

  // forward_kinematics(q, ...)
  std::vector<math::Transform> X_PB;  ///< pose of body B in its parent body P
  std::vector<math::Transform> X_WB;  ///< pose of body B in the world W
  // forward_kinematics(q, v, ...) and rnea / aba
  std::vector<math::SpatialMotion> V_B;  ///< spatial velocity of B in W, expressed in B [rad/s, m/s]
  // forward_kinematics(q, v, a): spatial acceleration of B in W, expressed in B (true
  // acceleration; gravity is not included) [rad/s², m/s²]
  std::vector<math::SpatialMotion> A_B;

  // scratch of rnea / aba
  std::vector<math::SpatialMotion> A_gravity_B;  ///< rnea: A_B − gravity (Featherstone's a₀ = −g trick)
  std::vector<math::SpatialForce> F_B;           ///< rnea: joint wrench transmitted to B, in B [N·m, N]
  std::vector<math::SpatialInertia> Ic_B;        ///< crba: composite inertia of B's subtree, in B
  std::vector<math::Matrix3> R_JB;               ///< crba, rnea: R_JB of B's joint if floating (else unused)

  // aba scratch (Featherstone 2008, Table 7.1)
  std::vector<math::Matrix6> IA;                  ///< articulated inertias
  std::vector<math::SpatialForce> pA;             ///< articulated bias forces
  std::vector<math::SpatialMotion> c;             ///< velocity-product accelerations v × S q̇
  std::vector<Eigen::Matrix<double, 6, 6>> U;     ///< IA S (6 × nv_j used)
  /// (Sᵀ IA S)⁻¹ (nv_j × nv_j used); for floating joints the Cholesky factor L of Sᵀ IA S = L Lᵀ
  std::vector<Eigen::Matrix<double, 6, 6>> Dinv;
  std::vector<Eigen::Matrix<double, 6, 1>> u;     ///< τ_j − Sᵀ pA (nv_j used)

  Eigen::VectorXd tau;   ///< rnea output, n_v [N·m or N]
  Eigen::VectorXd bias;  ///< bias_forces output C(q,v)v + ∂V/∂q, n_v
  Eigen::VectorXd gravity;  ///< generalized_gravity output ∂V/∂q, n_v
  /// crba output, n_v × n_v, symmetric (both triangles filled). Empty here (0 × 0): the first
  /// crba call sizes and zeroes it, so a Workspace holds n_v² memory only for a caller who asks
  /// for the dense M (issue 18); crba writes only the entries that can be non-zero (see crba.h),
  /// so nothing else may write M.
  Eigen::MatrixXd M;
  /// crba_trees output: M per kinematic tree (tree_mass_matrix.h), Σ_t n_v(t)² entries, sized
  /// and zeroed here; the same rule: only crba_trees writes it.
  TreeMassMatrix M_trees;
  Eigen::VectorXd vdot;  ///< aba output, n_v
  Eigen::VectorXd momentum;       ///< generalized_momentum output p = M v, n_v
  Eigen::VectorXd momentum_bias;  ///< generalized_momentum output β = Ṁ v − C v − ∂V/∂q, n_v
  Eigen::VectorXd zeros_v;  ///< n_v zeros (accelerations for bias_forces)
};

}  // namespace coulomb::multibody
