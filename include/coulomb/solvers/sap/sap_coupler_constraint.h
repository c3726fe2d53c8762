// A coupler (URDF <mimic>) as a SAP constraint: the bilateral constraint
// g = q_i − ρ q_j − offset = 0 between two coordinates of one tree, near-rigid (Castro et al.
// §VII; Drake's SapCouplerConstraint). One row, v_c = v_i − ρ v_j, γ = y (no projection),
// ℓ = ½ R γ², G = R⁻¹, R = β² w/(4π²), v̂ = −g̃₀/(δt_q + τ_d) with τ_d = β δt_q / π and the
// integrator's position prediction δt_q = θ_vq δt, g̃₀ = g₀ + δt (1 − θ_vq) v_c(v₀) (as the
// limit constraint).
#pragma once

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

struct CouplerParameters {
  double gear_ratio = 1.0;  ///< ρ
  double offset = 0.0;      ///< [rad or m]
  SapRegularization regularization;
  double theta_vq = 1.0;  ///< position prediction of the integrator, (0, 1]
  double vc0 = 0.0;       ///< v_i − ρ v_j at the start of the step
};

class SapCouplerConstraint : public SapConstraint {
 public:
  /// Coordinates `dof_i`, `dof_j` (velocity indices within tree `tree` of n_t velocities) with
  /// current positions q_i, q_j. Throws std::invalid_argument if dof_i == dof_j.
  SapCouplerConstraint(int tree, int tree_nv, int dof_i, int dof_j, double q_i, double q_j,
                       const CouplerParameters& parameters);

  /// Re-initializes a recycled constraint (same tree and coordinates) at new positions.
  void reset(double q_i, double q_j, const CouplerParameters& parameters);

  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;
  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;

 private:
  CouplerParameters parameters_;
  double g0_ = 0.0;
};

}  // namespace coulomb::solvers::sap
