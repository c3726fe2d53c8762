// Hunt–Crossley compliant contact with regularized friction as a SAP constraint: the "similar"
// and "lagged" convex approximations of Castro, Han & Masterjohn, "A Theory of Irrotational
// Contact Fields" (2023), as stated in ../shared/digests/contact-approximations.md (the digest's
// equations are cited as "digest" below; docs/contact.md "Contact approximations").
//
// Per contact, in the contact frame C = [t1, t2, n] (v_n > 0 separating), with time step δt,
// position time step δt_q = θ_vq δt, penetration x₀ = −φ₀ and step-start normal velocity v_n0:
//   f_e0 = k (x₀ − δt (1 − θ_vq) v_n0)                (elastic force predicted at the step start)
//   n(v)  = δt (f_e0 − δt_q k v)₊ (1 − d v)₊           (normal impulse [N·s], digest "Model")
//   N(v)  = ∫₀^min(v, v̂) n                             (v̂ = min(f_e0/(δt_q k), 1/d))
//   ‖v_t‖_s = sqrt(‖v_t‖² + ε_s²) − ε_s, t̂_s = v_t / (‖v_t‖_s + ε_s), ε_s = max(v_s, μ σ w_t n₀)
//   n₀ = δt (f_e0)₊ (1 − d v_n0)₊
// similar: ℓ = −N(v_n − μ‖v_t‖_s);  lagged: ℓ = −N(v_n) + μ n₀ ‖v_t‖_s.
// With θ_vq = 1 (implicit Euler positions) this is exactly the digest; θ_vq < 1 (midpoint)
// predicts the end-of-step penetration x = x₀ − δt (θ_vq v_n + (1 − θ_vq) v_n0), which is what the
// simulator integrates.
#pragma once

#include "coulomb/contact/contact_approximation.h"
#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

using contact::ContactApproximation;
using contact::parse_contact_approximation;
using contact::to_string;

/// Parameters of one Hunt–Crossley contact (units in brackets).
struct HuntCrossleyParameters {
  double mu = 1.0;                   ///< friction coefficient μ ≥ 0
  double stiffness = 1e6;            ///< k [N/m], finite and > 0
  double dissipation = 0.0;          ///< Hunt–Crossley dissipation d [s/m] ≥ 0
  double stiction_tolerance = 1e-4;  ///< v_s [m/s] > 0: the regularization of friction near v_t = 0
  double sigma = 1e-3;               ///< σ ≥ 0 of ε_s = max(v_s, μ σ w_t n₀) (SAP's friction regularization)
  double phi0 = 0.0;                 ///< signed distance at the step start φ₀ [m] (x₀ = −φ₀)
  double vn0 = 0.0;                  ///< normal velocity at the step start v_n0 [m/s] (> 0 separating)
  ContactApproximation approximation = ContactApproximation::kLagged;  ///< kSimilar or kLagged
  double theta_vq = 1.0;             ///< θ_vq ∈ (0, 1]: x = x₀ − δt (θ_vq v_n + (1 − θ_vq) v_n0)
};

/// Pure functions of the model, exposed for tests.
namespace hunt_crossley {

/// The normal law n(v) of one contact: δt [s], δt_q = θ_vq δt [s], k [N/m], d [s/m], f_e0 [N].
struct NormalLaw {
  double time_step = 0.0;           ///< δt, the impulse factor
  double position_time_step = 0.0;  ///< δt_q = θ_vq δt
  double stiffness = 0.0;           ///< k
  double dissipation = 0.0;         ///< d
  double fe0 = 0.0;                 ///< f_e0 = k (x₀ − δt (1 − θ_vq) v_n0)
};

/// v̂ = min(f_e0/(δt_q k), 1/d) [m/s]: n(v) > 0 for v < v̂ and 0 for v ≥ v̂ (1/d = +inf for d = 0).
double zero_impulse_velocity(const NormalLaw& law);
/// n(v) = δt (f_e0 − δt_q k v)₊ (1 − d v)₊ [N·s] (digest "Model").
double impulse(const NormalLaw& law, double v);
/// N(v) = δt [u f_e0 − δt_q k u²/2 − d f_e0 u²/2 + d δt_q k u³/3], u = min(v, v̂) [N·m·s = J]:
/// the antiderivative of n with N(0) = 0, constant for v ≥ v̂ (digest's N with Δf = −δt_q k u).
double impulse_antiderivative(const NormalLaw& law, double v);
/// n'(v) = −δt [δt_q k (1 − d v) + d (f_e0 − δt_q k v)] for v < v̂, 0 otherwise [N·s²/m] (≤ 0).
double impulse_derivative(const NormalLaw& law, double v);
/// ‖v_t‖_s = sqrt(‖v_t‖² + ε²) − ε [m/s], evaluated as ‖v_t‖²/(sqrt(‖v_t‖² + ε²) + ε) (no
/// cancellation for ‖v_t‖ ≪ ε). ε > 0.
double soft_norm(double vt0, double vt1, double epsilon);

}  // namespace hunt_crossley

class SapHuntCrossleyConstraint : public SapConstraint {
 public:
  /// J blocks map generalized velocities to the contact velocity [v_t1, v_t2, v_n] (3 rows).
  /// Throws std::invalid_argument (naming the value) for μ < 0, k ≤ 0 or non-finite, d < 0,
  /// v_s ≤ 0, σ < 0, θ_vq ∉ (0, 1], non-finite φ₀ or v_n0, or approximation kSap.
  SapHuntCrossleyConstraint(const HuntCrossleyParameters& parameters, int first_tree, Eigen::MatrixXd J_first,
                            int second_tree = -1, Eigen::MatrixXd J_second = Eigen::MatrixXd());

  /// Re-initializes a recycled constraint with new parameters and Jacobian blocks (the
  /// constructor's checks; the blocks' storage is reused).
  void reset(const HuntCrossleyParameters& parameters, int first_tree, const Eigen::Ref<const Eigen::MatrixXd>& J_first,
             int second_tree = -1, const Eigen::Ref<const Eigen::MatrixXd>& J_second = Eigen::MatrixXd());

  const HuntCrossleyParameters& parameters() const { return parameters_; }

  /// Computes the step's constants from δt = `time_step` [s] and the Delassus block W_ii (3 × 3,
  /// [1/kg]): f_e0, n₀ = δt (f_e0)₊ (1 − d v_n0)₊, w_t = max((W₀₀ + W₁₁)/2, ‖diag W‖/√3) and
  /// ε_s = max(v_s, μ σ w_t n₀) (digest "Regularized friction"). R and v̂ are not used by the
  /// cost; they are set for diagnostics: R = [σ w_t, σ w_t, 1/(δt δt_q k)], v̂ = [0, 0, v̂_n]
  /// with v̂_n the velocity at which the normal impulse vanishes (finite). Throws
  /// std::invalid_argument for δt ≤ 0.
  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;
  /// γ = −∇ℓ and G = ∇²ℓ (digest "Similar" / "Lagged"); returns ℓ(v_c) [J].
  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;
  /// Δv_cᵀ G Δv_c in closed form, without forming G.
  double calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dvc,
                    Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const override;

  /// After prepare(): n₀ [N·s], ε_s [m/s], w_t [1/kg] and the normal law.
  double n0() const { return n0_; }
  double epsilon_soft() const { return epsilon_; }
  double tangential_delassus() const { return wt_; }
  const hunt_crossley::NormalLaw& normal_law() const { return law_; }

 private:
  // γ and ℓ at v_c, with what G and its quadratic form need.
  struct Evaluation {
    double cost = 0.0;
    double t0 = 0.0, t1 = 0.0;  // t̂_s
    double s = 0.0;             // ‖v_t‖_s + ε_s = sqrt(‖v_t‖² + ε_s²)
    double n = 0.0;             // n(z) (similar) or n(v_n) (lagged)
    double dn = 0.0;            // n'(z) or n'(v_n)
    double ft = 0.0;            // the tangential impulse magnitude factor: μ n(z) or μ n₀
  };
  Evaluation evaluate(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma) const;
  static void check(const HuntCrossleyParameters& p);

  HuntCrossleyParameters parameters_;
  hunt_crossley::NormalLaw law_;
  double v_hat_n_ = 0.0, n0_ = 0.0, epsilon_ = 1.0, wt_ = 0.0;
};

}  // namespace coulomb::solvers::sap
