// Compliant frictional contact as a SAP constraint (Castro et al. §II–§V).
#pragma once

#include <cmath>

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

/// Which region of Castro et al. Eq. 27 an y falls in.
enum class FrictionConeRegion { kStiction, kSliding, kNoContact };

/// Parameters of one contact.
struct FrictionConeParameters {
  double mu = 1.0;                ///< friction coefficient μ ≥ 0
  double stiffness = 1e6;         ///< k [N/m] > 0 (may be +inf: rigid, handled by the near-rigid switch)
  double dissipation_time = 0.0;  ///< τ_d [s] ≥ 0
  double phi0 = 0.0;              ///< signed distance at the previous step φ₀ [m]
  SapRegularization regularization;
  /// Position prediction consistent with the integrator (issue 9 item 5): the contact ends the
  /// step at φ = φ₀ + δt (θ_vq v_n + (1 − θ_vq) v_n0). θ_vq ∈ (0, 1] (1: implicit and
  /// symplectic Euler, ½: midpoint); vn0 the normal velocity at the start of the step [m/s].
  double theta_vq = 1.0;
  double vn0 = 0.0;
};

/// Pure functions of the contact law, exposed for tests (all in the contact frame,
/// [t1, t2, n] order; R = diag(Rt, Rt, Rn) [1/kg], y and γ in [N·s]).
namespace friction_cone {

/// Region of y (Eq. 27 with the digest's boundary conventions, §8 item 13): stiction if
/// y_r ≤ μ y_n and y_n ≥ 0; otherwise no contact if y_n < −μ̂ y_r; otherwise sliding. (The
/// y_n ≥ 0 clause only matters for μ = 0, where y = (0, 0, y_n < 0) is no contact, not stiction.)
FrictionConeRegion region(const Eigen::Vector3d& y, double mu, double Rt, double Rn);
/// γ = P_ℱ(y) in the R-norm (Eq. 23 / Eq. 27). Throws std::invalid_argument if μ < 0.
Eigen::Vector3d project(const Eigen::Vector3d& y, double mu, double Rt, double Rn);
/// ℓ_R(y) = ½‖P_ℱ(y)‖²_R (Eq. 35) [J].
double cost(const Eigen::Vector3d& y, double mu, double Rt, double Rn);
/// G = −∂γ/∂v_c = R⁻¹ ∇²_y ℓ_R R⁻¹ (Eq. 37 and its closed form, digest §3.2). 3 × 3, PSD.
Eigen::Matrix3d hessian(const Eigen::Vector3d& y, double mu, double Rt, double Rn);

}  // namespace friction_cone

class SapLineSearchFunction;

class SapFrictionConeConstraint : public SapConstraint {
 public:
  /// J blocks map generalized velocities to the contact velocity [v_t1, v_t2, v_n] (3 rows).
  /// Throws std::invalid_argument for μ < 0, k ≤ 0, τ_d < 0, non-finite φ₀ or v_n0,
  /// θ_vq ∉ (0, 1], or a Jacobian block with a non-finite entry or not 3 rows.
  SapFrictionConeConstraint(const FrictionConeParameters& parameters, int first_tree, Eigen::MatrixXd J_first,
                            int second_tree = -1, Eigen::MatrixXd J_second = Eigen::MatrixXd());

  /// Re-initializes a recycled constraint with new parameters and Jacobian blocks (the
  /// constructor's checks; the blocks' storage is reused).
  void reset(const FrictionConeParameters& parameters, int first_tree, const Eigen::Ref<const Eigen::MatrixXd>& J_first,
             int second_tree = -1, const Eigen::Ref<const Eigen::MatrixXd>& J_second = Eigen::MatrixXd());

  const FrictionConeParameters& parameters() const { return parameters_; }

  /// Eq. 29–31: w = delassus_scalar(W_ii), R_n = max(β²w/(4π²), 1/(δt k (δt_q + τ_d))),
  /// R_t = σ w, v̂ = [0, 0, −φ̃₀/(δt_q + τ_d)], with the position time step δt_q = θ_vq δt and
  /// φ̃₀ = φ₀ + δt (1 − θ_vq) v_n0 (the paper's δt and φ₀ when θ_vq = 1).
  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;
  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;
  /// Δv_cᵀ G Δv_c in closed form, without forming G.
  double calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dvc,
                    Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const override;
  /// calc_along on plain arrays of 3 (v_c, Δv_c, γ), neither virtual nor out of line: the line
  /// search's kernel for contacts, which runs for every contact at every α
  /// (SapLineSearchFunction). The same arithmetic as calc_along.
  double calc_along_inline(const double* vc, const double* dvc, double* gamma, double* curvature) const;
  /// calc on plain arrays: v_c and γ of 3, G (when not nullptr) 3 × 3 column-major. SapSolver's
  /// evaluation calls it for every contact at every Newton iteration.
  double calc_inline(const double* vc, double* gamma, double* G) const;
  const SapFrictionConeConstraint* as_friction_cone() const override { return this; }

 private:
  friend class SapLineSearchFunction;  // packs the kernel constants below for its vector kernel
  // γ = P(y(v_c)) written to `gamma`, with what G and its quadratic form need.
  struct Projection {
    FrictionConeRegion region = FrictionConeRegion::kNoContact;
    double cost = 0.0;                 // ℓ(v_c) [J]
    double yr = 0.0;                   // ‖y_t‖
    double inv_yr = 0.0;               // 1/y_r (sliding)
    double t0 = 0.0, t1 = 0.0;         // t̂ = y_t / y_r (sliding)
    double gn = 0.0;                   // γ_n (sliding)
  };
  Projection project(const double* vc, double* gamma) const;
  static void check(const FrictionConeParameters& p);
  // The constants of the kernels below from R_t, R_n and μ (prepare(), the constructor, reset()).
  void set_kernel_constants(double Rt, double Rn);
  FrictionConeParameters parameters_;
  // R and v̂_n of prepare() as plain numbers (R_ and v_hat_ of the base are heap vectors), and
  // what the kernels would otherwise divide by at every evaluation (the line search evaluates
  // every contact some five times per Newton iteration): 1/R_t, 1/R_n, μ̂ = μ R_t/R_n,
  // 1/(1 + μ̃²), 1/(R_n (1 + μ̃²)) and μ/R_t, with μ̃² = μ μ̂.
  double Rt_ = 1.0, Rn_ = 1.0, vn_hat_ = 0.0;
  double inv_Rt_ = 1.0, inv_Rn_ = 1.0, mu_hat_ = 0.0, inv_1p_mu_tilde2_ = 1.0, inv_Rn_1p_mu_tilde2_ = 1.0,
         mu_inv_Rt_ = 0.0;
};

// Castro et al. Eq. 23 and 27 (the same formulas as friction_cone::project / cost, tested
// against each other), with the region and the norms evaluated once and one division (1/y_r,
// sliding only): the others are the constants of set_kernel_constants().
[[gnu::always_inline]] inline SapFrictionConeConstraint::Projection SapFrictionConeConstraint::project(
    const double* vc, double* gamma) const {
  Projection p;
  const double mu = parameters_.mu;
  const double y0 = -vc[0] * inv_Rt_, y1 = -vc[1] * inv_Rt_, y2 = (vn_hat_ - vc[2]) * inv_Rn_;  // Eq. 23
  p.yr = std::sqrt(y0 * y0 + y1 * y1);
  if (p.yr <= mu * y2 && y2 >= 0.0) {  // y_n ≥ 0: see region() (μ = 0 is not adhesive)
    p.region = FrictionConeRegion::kStiction;
    gamma[0] = y0;
    gamma[1] = y1;
    gamma[2] = y2;
    p.cost = 0.5 * (Rt_ * p.yr * p.yr + Rn_ * y2 * y2);
    return p;
  }
  if (y2 < -mu_hat_ * p.yr) {
    p.region = FrictionConeRegion::kNoContact;
    gamma[0] = gamma[1] = gamma[2] = 0.0;
    return p;
  }
  // sliding (y_r > 0 here)
  p.region = FrictionConeRegion::kSliding;
  const double sn = y2 + mu_hat_ * p.yr;
  p.gn = sn * inv_1p_mu_tilde2_;
  p.inv_yr = 1.0 / p.yr;
  p.t0 = y0 * p.inv_yr;
  p.t1 = y1 * p.inv_yr;
  gamma[0] = mu * p.gn * p.t0;
  gamma[1] = mu * p.gn * p.t1;
  gamma[2] = p.gn;
  p.cost = 0.5 * Rn_ * sn * sn * inv_1p_mu_tilde2_;
  return p;
}

// G = −∂γ/∂v_c in closed form (digest §3.2): stiction diag(1/R_t, 1/R_t, 1/R_n); sliding
// f fᵀ/(R_n(1 + μ̃²)) + (μ γ_n/(R_t y_r)) [P⊥(t̂) 0; 0 0] with f = [μ t̂; 1]; no contact 0.
[[gnu::always_inline]] inline double SapFrictionConeConstraint::calc_inline(const double* vc, double* gamma,
                                                                             double* G) const {
  const Projection p = project(vc, gamma);
  if (G == nullptr) return p.cost;
  for (int k = 0; k < 9; ++k) G[k] = 0.0;
  switch (p.region) {
    case FrictionConeRegion::kStiction:
      G[0] = G[4] = inv_Rt_;
      G[8] = inv_Rn_;
      break;
    case FrictionConeRegion::kNoContact:
      break;
    case FrictionConeRegion::kSliding: {
      const double mu = parameters_.mu;
      const double f[3] = {mu * p.t0, mu * p.t1, 1.0}, t[2] = {p.t0, p.t1};
      const double s = mu_inv_Rt_ * p.gn * p.inv_yr;
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) G[3 * b + a] = f[a] * f[b] * inv_Rn_1p_mu_tilde2_;
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) G[3 * b + a] += s * ((a == b ? 1.0 : 0.0) - t[a] * t[b]);
      break;
    }
  }
  return p.cost;
}

// Δv_cᵀ G Δv_c from the closed form of G (digest §3.2): in stiction Δv_tᵀΔv_t/R_t + Δv_n²/R_n;
// sliding (fᵀΔv_c)²/(R_n(1 + μ̃²)) + μγ_n/(R_t y_r)(‖Δv_t‖² − (t̂ᵀΔv_t)²); no contact 0.
[[gnu::always_inline]] inline double SapFrictionConeConstraint::calc_along_inline(const double* vc, const double* dvc,
                                                                                   double* gamma,
                                                                                   double* curvature) const {
  const Projection p = project(vc, gamma);
  if (curvature == nullptr) return p.cost;
  const double mu = parameters_.mu;
  const double d0 = dvc[0], d1 = dvc[1], d2 = dvc[2];
  switch (p.region) {
    case FrictionConeRegion::kStiction:
      *curvature = (d0 * d0 + d1 * d1) * inv_Rt_ + d2 * d2 * inv_Rn_;
      break;
    case FrictionConeRegion::kNoContact:
      *curvature = 0.0;
      break;
    case FrictionConeRegion::kSliding: {
      const double td = p.t0 * d0 + p.t1 * d1;
      const double fd = mu * td + d2;
      *curvature = fd * fd * inv_Rn_1p_mu_tilde2_ + (mu_inv_Rt_ * p.gn * p.inv_yr) * (d0 * d0 + d1 * d1 - td * td);
      break;
    }
  }
  return p.cost;
}

}  // namespace coulomb::solvers::sap
