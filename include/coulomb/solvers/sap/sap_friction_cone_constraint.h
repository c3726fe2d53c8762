// Compliant frictional contact as a SAP constraint (Castro et al. §II–§V).
#pragma once

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

class SapFrictionConeConstraint : public SapConstraint {
 public:
  /// J blocks map generalized velocities to the contact velocity [v_t1, v_t2, v_n] (3 rows).
  /// Throws std::invalid_argument for μ < 0, k ≤ 0, τ_d < 0, non-finite φ₀ or v_n0, or
  /// θ_vq ∉ (0, 1].
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

 private:
  // γ = P(y(v_c)) written to `gamma`, with what G and its quadratic form need.
  struct Projection {
    FrictionConeRegion region = FrictionConeRegion::kNoContact;
    double cost = 0.0;                 // ℓ(v_c) [J]
    double yr = 0.0;                   // ‖y_t‖
    double t0 = 0.0, t1 = 0.0;         // t̂ = y_t / y_r (sliding)
    double gn = 0.0, mu_tilde2 = 0.0;  // γ_n and μ̃² (sliding)
  };
  Projection project(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma) const;
  static void check(const FrictionConeParameters& p);

  FrictionConeParameters parameters_;
};

}  // namespace coulomb::solvers::sap
