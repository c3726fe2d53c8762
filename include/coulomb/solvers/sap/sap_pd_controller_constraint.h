// An implicit PD actuator with an effort limit as a SAP constraint (Castro et al. §VII;
// Drake's SapPdControllerConstraint). With the integrator's position update
// q = q̃₀ + δt_q v, q̃₀ = q₀ + δt (1 − θ_vq) v₀, δt_q = θ_vq δt (q₀ + δt v for the Euler schemes),
// the actuator torque
//   τ = clamp(Kp (q_t − q̃₀ − δt_q v) + Kd (v_t − v), −e, e)
// is the impulse γ = δt τ of a one-row constraint with v_c = v (the joint velocity),
// R = 1/(δt (δt_q Kp + Kd)), v̂ = (Kp (q_t − q̃₀) + Kd v_t)/(δt_q Kp + Kd) and the projection onto
// the interval [−δt e, δt e].
#pragma once

#include <limits>

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

struct PdControllerParameters {
  double kp = 0.0;  ///< [N·m/rad or N/m] ≥ 0
  double kd = 0.0;  ///< [N·m·s/rad or N·s/m] ≥ 0, kp + kd > 0
  double q_target = 0.0;
  double v_target = 0.0;
  double effort_limit = std::numeric_limits<double>::infinity();  ///< e [N·m or N] > 0
  /// Position prediction consistent with the integrator (issue 9 item 5): the joint ends the
  /// step at q₀ + δt (θ_vq v + (1 − θ_vq) v₀). θ_vq ∈ (0, 1]; v0 the joint velocity at the start
  /// of the step.
  double theta_vq = 1.0;
  double v0 = 0.0;
  /// Feed-forward force u [N·m or N] added before the clamp (Drake's u₀):
  /// τ = clamp(Kp (q_t − q) + Kd (v_t − v) + u, −e, e). Enters v̂'s numerator.
  double feedforward = 0.0;
};

class SapPdControllerConstraint : public SapConstraint {
 public:
  /// On velocity index `dof` of tree `tree` (n_t velocities), at position q0 of that joint.
  /// Throws std::invalid_argument for negative gains, kp + kd = 0, effort_limit ≤ 0,
  /// θ_vq ∉ (0, 1] or non-finite targets, feed-forward, q0 or v0.
  SapPdControllerConstraint(int tree, int tree_nv, int dof, double q0, const PdControllerParameters& parameters);

  /// Re-initializes a recycled constraint on the same coordinate for a new step (the
  /// constructor's checks; no allocation).
  void reset(double q0, const PdControllerParameters& parameters);

  /// Whether γ was clamped to ±δt e (the effort limit) in the last calc.
  double max_impulse() const { return gamma_max_; }

  /// R and v̂ depend only on δt and the gains (W_ii is not used).
  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;
  /// γ = clamp(y, −δt e, δt e); ℓ = ½ R y² inside, R γ_max (|y| − γ_max/2) outside.
  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;
  /// G is diagonal: Δv_cᵀ G Δv_c = Σ_r G_rr Δv_r², without forming G.
  double calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dvc,
                    Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const override;

  /// The actuator torque [N·m or N] for the impulse γ: γ / δt.
  double torque(double gamma) const { return gamma / time_step_; }

 private:
  // γ (clamped to ±δt e) into `gamma` and G's single entry into *G_00; returns the cost.
  double project(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma, double* G_00) const;

  PdControllerParameters parameters_;
  double q0_ = 0.0;
  double time_step_ = 0.0;
  double gamma_max_ = 0.0;
};

}  // namespace coulomb::solvers::sap
