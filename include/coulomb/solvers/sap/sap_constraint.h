// SapConstraint: the base of every constraint SAP handles (Castro, Permenter, Han, "An
// Unconstrained Convex Formulation of Compliant Contact", §III and §VII; digest
// ../shared/digests/sap.md). A constraint has r rows, a constraint velocity v_c = J v (r),
// a diagonal regularization R (r) and a bias velocity v̂ (r). With y = −R⁻¹(v_c − v̂), its
// impulse is γ = P(y), the projection of y onto the constraint's convex set in the R-norm,
// its cost is ℓ(v_c) (so that ∇_{v_c} ℓ = −γ) and its Hessian block is G = −∂γ/∂v_c ⪰ 0.
//
// The Jacobian is given per tree: one or two (tree, J block) pairs, with J blocks of size
// r × n_t. Solvers never see robots: they see trees, blocks and these functions.
#pragma once

#include <vector>

#include <Eigen/Core>

namespace coulomb::solvers::sap {

class SapFrictionConeConstraint;

class SapConstraint {
 public:
  /// `num_rows` rows acting on tree `first_tree` through J_first (num_rows × n_first) and,
  /// optionally, on a second, different tree through J_second (num_rows × n_second).
  /// Throws std::invalid_argument on mismatched sizes or second_tree == first_tree.
  SapConstraint(int num_rows, int first_tree, Eigen::MatrixXd J_first, int second_tree = -1,
                Eigen::MatrixXd J_second = Eigen::MatrixXd());
  virtual ~SapConstraint() = default;

  int num_rows() const { return num_rows_; }
  int num_trees() const { return second_tree_ < 0 ? 1 : 2; }
  /// Tree k (0 or 1) and its Jacobian block.
  int tree(int k) const { return k == 0 ? first_tree_ : second_tree_; }
  const Eigen::MatrixXd& jacobian(int k) const { return k == 0 ? J_first_ : J_second_; }

  /// Computes R and v̂ for time step `time_step` [s] from the Delassus block estimate W_ii
  /// (num_rows × num_rows, [1/kg] or [1/(kg·m²)]), Castro et al. §V. Called once per solve.
  virtual void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) = 0;

  /// γ = P(y(v_c)) into `gamma` (num_rows) and, when G is non-null, G = −∂γ/∂v_c into *G
  /// (num_rows × num_rows, already sized). Returns the cost ℓ(v_c) [J].
  virtual double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                      Eigen::Ref<Eigen::MatrixXd>* G) const = 0;

  /// The line-search kernel: γ = P(y(v_c)) into `gamma` and the cost ℓ(v_c) as calc() does,
  /// and, when `curvature` is non-null, Δv_cᵀ G(v_c) Δv_c into *curvature (Δv_c: num_rows) — the
  /// constraint's part of ℓ''(α) (Castro et al. §IV-C). The default forms G with calc();
  /// constraints override it to skip G.
  virtual double calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dvc,
                            Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const;

  /// This constraint as a frictional contact, or nullptr: lets the line search call the
  /// contacts' inline kernel (SapFrictionConeConstraint::calc_along_inline) instead of the
  /// virtual calc_along.
  virtual const SapFrictionConeConstraint* as_friction_cone() const { return nullptr; }

  /// Regularization R (num_rows, diagonal) and bias velocity v̂ (num_rows) after prepare().
  const Eigen::VectorXd& R() const { return R_; }
  const Eigen::VectorXd& v_hat() const { return v_hat_; }

 protected:
  /// Replaces the trees and Jacobian blocks (same row count), with the constructor's checks;
  /// reuses the blocks' storage. For constraints recycled from step to step.
  void set_jacobians(int first_tree, const Eigen::Ref<const Eigen::MatrixXd>& J_first, int second_tree,
                     const Eigen::Ref<const Eigen::MatrixXd>& J_second);

  Eigen::VectorXd R_, v_hat_;

 private:
  void check() const;

  int num_rows_ = 0;
  int first_tree_ = 0, second_tree_ = -1;
  Eigen::MatrixXd J_first_, J_second_;
};

/// The 1 × n_t Jacobian row of a constraint on one coordinate: e_dof (joint friction, PD
/// actuators). Throws std::invalid_argument naming `constraint` when dof ∉ [0, n_t).
Eigen::MatrixXd unit_jacobian_row(int tree_nv, int dof, const char* constraint);

/// Parameters of the near-rigid regime (Castro et al. §V-B, Eq. 29–31).
struct SapRegularization {
  double beta = 1.0;    ///< near-rigid parameter β: contact period T_n = β δt
  double sigma = 1e-3;  ///< friction regularization σ: R_t = σ w
};

/// Divisor in the scalar Delassus estimate w_i = ‖W_ii‖_F / kDelassusNormDivisor. The paper's
/// Eq. 29 writes ‖W_ii‖/3 (the RMS of the nine entries, as Drake does); the particle analysis
/// of §V uses w = 1/m, which corresponds to √3. Digest §8 item 7.
inline constexpr double kDelassusNormDivisor = 3.0;

/// w = ‖W‖_F / kDelassusNormDivisor for a 3 × 3 block; |W| for 1 × 1 blocks.
double delassus_scalar(const Eigen::Ref<const Eigen::MatrixXd>& W_ii);

}  // namespace coulomb::solvers::sap
