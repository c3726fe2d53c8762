// A holonomic bilateral constraint g(q) = 0 with 1 … 6 rows (ball, weld, distance, joint in
// maximal form; constraints::BilateralConstraint) as a SAP constraint: compliant, every row a
// spring–damper, with no projection (Castro et al. §VII; like the PD and coupler constraints,
// and Drake's SapHolonomicConstraint without impulse limits).
//
// Per row r, with δt_q = θ_vq δt the integrator's position time step and the predicted value
// g̃₀ = φ₀ + δt (1 − θ_vq) φ̇₀ (the limit constraint's prediction):
//   finite k:  τ_d = b / k,  R = max(β² w_r / (4π²), 1 / (δt k (δt_q + τ_d)))
//   rigid (k = +∞): the near-rigid regime, τ_d = β δt_q / π (critical damping of the near-rigid
//              spring), R = β² w_r / (4π²)
//   v̂ = −g̃₀ / (δt_q + τ_d),   γ = y = −R⁻¹ (v_c − v̂),   ℓ = ½ Σ R γ²,   G = diag(R⁻¹),
// with w_r = W_rr, the row's own Delassus diagonal (Castro et al. Eq. 29 per row: rows of a weld
// carry different units, so no norm over the block). When R is the physical value, γ =
// −δt (k g(v) + b v_c) with g(v) = g̃₀ + δt_q v_c: the implicit spring–damper. Inert rows
// (constraints::BilateralConstraint::inert_row: a vanishing Jacobian row) get v̂ = 0 and R from
// the largest W_rr of the constraint, so their γ = −v_c/R ≈ 0.
#pragma once

#include <Eigen/Core>

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

/// Up to 6 rows, stored inline (no heap allocation when copied or resized).
using BilateralRows = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
using BilateralFlags = Eigen::Matrix<int, Eigen::Dynamic, 1, 0, 6, 1>;

struct BilateralParameters {
  BilateralRows phi0;       ///< g(q₀) per row [m or rad]
  BilateralRows phidot0;    ///< J v₀ per row [m/s or rad/s]
  BilateralRows stiffness;  ///< k per row > 0, +∞ = rigid [N/m or N·m/rad]
  BilateralRows damping;    ///< b per row ≥ 0 [N·s/m or N·m·s/rad]
  BilateralFlags inert;     ///< 1 on inert rows (zero Jacobian row), else 0; empty = none
  SapRegularization regularization;
  double theta_vq = 1.0;  ///< (0, 1]
};

class SapBilateralConstraint : public SapConstraint {
 public:
  /// Rows = p.phi0.size() (1 … 6) acting on tree `first_tree` through J_first and, optionally, on
  /// a second tree through J_second. Throws std::invalid_argument on mismatched sizes, a
  /// non-positive or NaN stiffness, a negative or non-finite damping, non-finite φ₀ / φ̇₀, or
  /// θ_vq ∉ (0, 1].
  SapBilateralConstraint(const BilateralParameters& p, int first_tree, Eigen::MatrixXd J_first, int second_tree = -1,
                         Eigen::MatrixXd J_second = Eigen::MatrixXd());

  /// Re-initializes a recycled constraint (same number of rows) for a new step; no allocation
  /// when the blocks keep their sizes.
  void reset(const BilateralParameters& p, int first_tree, const Eigen::Ref<const Eigen::MatrixXd>& J_first,
             int second_tree = -1, const Eigen::Ref<const Eigen::MatrixXd>& J_second = Eigen::MatrixXd());

  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;
  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;
  /// G is diagonal: Δv_cᵀ G Δv_c = Σ Δv_r² / R_r without forming G.
  double calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dvc,
                    Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const override;

 private:
  void check(const BilateralParameters& p) const;
  BilateralParameters parameters_;
};

}  // namespace coulomb::solvers::sap
