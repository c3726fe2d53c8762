// Joint position limits as a SAP constraint: unilateral compliant constraints g ≥ 0 on one
// generalized coordinate (Castro et al. §VII; Drake's SapLimitConstraint), regularized like the
// contact normal: near-rigid by default.
#pragma once

#include <limits>

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

struct LimitParameters {
  double lower = -std::numeric_limits<double>::infinity();  ///< [rad or m]
  double upper = std::numeric_limits<double>::infinity();   ///< [rad or m]
  double stiffness = std::numeric_limits<double>::infinity();  ///< [N·m/rad or N/m]; inf: near-rigid
  double dissipation_time = 0.0;  ///< τ_d [s]
  SapRegularization regularization;
  /// Position prediction consistent with the integrator (issue 9 item 5): the coordinate ends
  /// the step at q₀ + δt (θ_vq v + (1 − θ_vq) v₀), so g(v) = g₀ + δt (1 − θ_vq) g'(v₀) + θ_vq δt v_c.
  /// θ_vq ∈ (0, 1] (1: implicit and symplectic Euler, ½: midpoint); v0 the joint velocity at the
  /// start of the step [rad/s or m/s].
  double theta_vq = 1.0;
  double v0 = 0.0;
};

/// Rows: one for each finite limit, lower first. For the lower limit g = q − lower and
/// v_c = v; for the upper limit g = upper − q and v_c = −v. With δt_q = θ_vq δt the position
/// time step and g̃₀ = g₀ + δt (1 − θ_vq) v_c(v₀): R = max(β²w/(4π²), 1/(δt k (δt_q + τ_d))),
/// v̂ = −g̃₀ / (δt_q + τ_d). Each row: γ = max(0, y),
/// ℓ = ½ R γ², G = R⁻¹ where y > 0 (and at y = 0), else 0.
class SapLimitConstraint : public SapConstraint {
 public:
  /// Acts on velocity index `dof` (within the tree) of tree `tree` with n_t velocities, at
  /// the current position q0 of that coordinate. Throws std::invalid_argument if lower >
  /// upper, no limit is finite, stiffness ≤ 0, θ_vq ∉ (0, 1] or a non-finite q0 / v0.
  SapLimitConstraint(int tree, int tree_nv, int dof, double q0, const LimitParameters& parameters);

  /// Re-initializes a recycled constraint for a new step at position q0 (the constructor's
  /// checks; no allocation). The finite limits must be the same as the constructor's (same rows);
  /// throws std::invalid_argument otherwise.
  void reset(double q0, const LimitParameters& parameters);

  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;

  /// Whether a limit with `parameters` at position q0 would push (γ > 0 on some row) at the joint
  /// velocity v [rad/s or m/s] of a step of δt = time_step [s]: y > 0 ⟺ v_c < v̂ ⟺
  /// g̃₀ + (δt_q + τ_d) v_c < 0, the test prepare() and calc() apply (R > 0 does not enter it).
  /// The simulator uses it to find the limits its window left out that the solution reaches
  /// (SimulatorParameters::joint_limit_window).
  static bool acts(double q0, double v, double time_step, const LimitParameters& parameters);

  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;
  /// G is diagonal: Δv_cᵀ G Δv_c = Σ_r G_rr Δv_r², without forming G.
  double calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dvc,
                    Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const override;

 private:
  // γ = max(0, y) per row into `gamma`, the diagonal of G (one entry per row, ≤ 2) into
  // G_diagonal; returns the cost.
  double project(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma, double* G_diagonal) const;

  LimitParameters parameters_;
  Eigen::VectorXd g0_;  ///< constraint values at q0, one per row
  bool initialized_ = false;
};

}  // namespace coulomb::solvers::sap
