// SapProblem: the data of one SAP solve, independent of multibody (Castro et al. Eq. 24):
//   min_v ℓ_p(v) = ½‖v − v*‖²_A + Σ_i ℓ_i(J_i v).
// A is block-diagonal with one SPD block per tree (trees' velocities contiguous, in order);
// every constraint couples one or two trees through its Jacobian blocks.
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

class SapProblem {
 public:
  /// `A_blocks[t]` is tree t's n_t × n_t SPD block of A; `v_star` (Σ n_t) the free-motion
  /// velocities; `time_step` δt [s] > 0. Throws std::invalid_argument on non-square or
  /// non-finite blocks, a size mismatch or δt ≤ 0.
  SapProblem(double time_step, std::vector<Eigen::MatrixXd> A_blocks, Eigen::VectorXd v_star);
  /// An empty problem (no trees); call reset() before use.
  SapProblem() = default;

  /// Re-initializes the problem in place with new data and no constraints, with the checks of
  /// the constructor. Reuses its storage: a simulator keeps one SapProblem and resets it every
  /// step without allocating once the sizes have settled.
  void reset(double time_step, const std::vector<Eigen::MatrixXd>& A_blocks, const Eigen::Ref<const Eigen::VectorXd>& v_star);

  /// Optional, after reset(): the Cholesky factors of the A blocks that the caller already has
  /// (the simulator factors A for stage 1): L[t] is n_t × n_t with A_t = L_t L_tᵀ in its lower
  /// triangle (the strict upper triangle is not read). SapSolver then takes them for the
  /// Delassus estimates of trees up to 32 velocities instead of factorizing A_t again; larger
  /// trees are factorized as without them (their L_t, of the right size, is neither read nor
  /// copied). The caller vouches that L_t is A_t's factor (A_t
  /// positive definite). reset() drops them. Throws std::invalid_argument if the count or a
  /// size differs from the A blocks.
  void set_A_factors(const std::vector<Eigen::MatrixXd>& L);
  /// Whether set_A_factors() gave the factors since the last reset(), and factor t.
  bool has_A_factors() const { return has_A_factors_; }
  const Eigen::MatrixXd& A_factor(int t) const { return A_factor_[t]; }

  /// Adds a constraint. Throws std::invalid_argument if it names a tree out of range or its
  /// Jacobian blocks do not have n_t columns. Returns its index.
  int add_constraint(std::unique_ptr<SapConstraint> constraint);
  /// Adds a constraint owned by the caller, which keeps it alive (and unchanged) while the
  /// problem is used; same checks.
  int add_constraint(SapConstraint* constraint);

  double time_step() const { return time_step_; }
  int nv() const { return static_cast<int>(v_star_.size()); }
  int num_trees() const { return static_cast<int>(A_.size()); }
  int tree_start(int t) const { return tree_start_[t]; }
  int tree_size(int t) const { return static_cast<int>(A_[t].rows()); }
  const Eigen::MatrixXd& A(int t) const { return A_[t]; }
  const Eigen::VectorXd& v_star() const { return v_star_; }
  int num_constraints() const { return static_cast<int>(constraints_.size()); }
  const SapConstraint& constraint(int i) const { return *constraints_[i]; }
  SapConstraint& mutable_constraint(int i) { return *constraints_[i]; }
  /// Total constraint rows and the first row of each constraint in the stacked v_c.
  int num_rows() const { return num_rows_; }
  int row_start(int i) const { return row_start_[i]; }

  /// y = A x (n_v), block by block.
  void multiply_A(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y) const;
  /// y_t = A_t x_t for the trees listed in `trees` only (each in [0, num_trees()); not checked);
  /// the other entries of y are left as they are. x, y: n_v. Throws std::invalid_argument on
  /// other sizes.
  void multiply_A(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                  const std::vector<int>& trees) const;
  /// v_c = J v (num_rows).
  void multiply_J(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> vc) const;
  /// x = Jᵀ γ (n_v).
  void multiply_J_transpose(const Eigen::Ref<const Eigen::VectorXd>& gamma, Eigen::Ref<Eigen::VectorXd> x) const;
  /// Dense J (num_rows × n_v), for tests and small problems.
  Eigen::MatrixXd dense_J() const;
  /// Dense A (n_v × n_v).
  Eigen::MatrixXd dense_A() const;

 private:
  void check_and_index_trees();
  void check_constraint(const SapConstraint& c) const;

  double time_step_ = 1.0;
  std::vector<Eigen::MatrixXd> A_;
  std::vector<Eigen::MatrixXd> A_factor_;  ///< set_A_factors(): copies (grow-only storage)
  bool has_A_factors_ = false;
  std::vector<int> tree_start_;
  Eigen::VectorXd v_star_;
  std::vector<SapConstraint*> constraints_;
  std::vector<std::unique_ptr<SapConstraint>> owned_;
  std::vector<int> row_start_;
  int num_rows_ = 0;
};

}  // namespace coulomb::solvers::sap
