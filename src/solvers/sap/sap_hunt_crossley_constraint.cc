#include "coulomb/solvers/sap/sap_hunt_crossley_constraint.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

namespace hunt_crossley {

double zero_impulse_velocity(const NormalLaw& law) {
  const double vx = law.fe0 / (law.position_time_step * law.stiffness);  // x = 0 at the step end
  return law.dissipation > 0.0 ? std::min(vx, 1.0 / law.dissipation) : vx;  // (1 − d v) = 0
}

double impulse(const NormalLaw& law, double v) {
  if (v >= zero_impulse_velocity(law)) return 0.0;
  return law.time_step * (law.fe0 - law.position_time_step * law.stiffness * v) * (1.0 - law.dissipation * v);
}

double impulse_antiderivative(const NormalLaw& law, double v) {
  const double u = std::min(v, zero_impulse_velocity(law));
  const double k = law.position_time_step * law.stiffness, d = law.dissipation, f = law.fe0;
  return law.time_step * u * (f - 0.5 * u * (k + d * f) + d * k * u * u / 3.0);
}

double impulse_derivative(const NormalLaw& law, double v) {
  if (v >= zero_impulse_velocity(law)) return 0.0;
  const double k = law.position_time_step * law.stiffness, d = law.dissipation;
  return -law.time_step * (k * (1.0 - d * v) + d * (law.fe0 - k * v));
}

double soft_norm(double vt0, double vt1, double epsilon) {
  const double r2 = vt0 * vt0 + vt1 * vt1;
  return r2 / (std::sqrt(r2 + epsilon * epsilon) + epsilon);
}

}  // namespace hunt_crossley

namespace {
std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", x);
  return buffer;
}
}  // namespace

SapHuntCrossleyConstraint::SapHuntCrossleyConstraint(const HuntCrossleyParameters& p, int first_tree,
                                                     Eigen::MatrixXd J_first, int second_tree,
                                                     Eigen::MatrixXd J_second)
    : SapConstraint(3, first_tree, std::move(J_first), second_tree, std::move(J_second)), parameters_(p) {
  check(p);
}

void SapHuntCrossleyConstraint::reset(const HuntCrossleyParameters& p, int first_tree,
                                      const Eigen::Ref<const Eigen::MatrixXd>& J_first, int second_tree,
                                      const Eigen::Ref<const Eigen::MatrixXd>& J_second) {
  check(p);
  set_jacobians(first_tree, J_first, second_tree, J_second);
  parameters_ = p;
}

void SapHuntCrossleyConstraint::check(const HuntCrossleyParameters& p) {
  auto fail = [](const std::string& what, double value) {
    throw std::invalid_argument("hunt-crossley contact: " + what + ", got " + number(value));
  };
  if (!(p.mu >= 0.0) || !std::isfinite(p.mu)) fail("friction coefficient mu must be finite and >= 0", p.mu);
  if (!(p.stiffness > 0.0) || !std::isfinite(p.stiffness)) fail("stiffness must be finite and > 0", p.stiffness);
  if (!(p.dissipation >= 0.0) || !std::isfinite(p.dissipation))
    fail("hunt_crossley_dissipation must be finite and >= 0 s/m", p.dissipation);
  if (!(p.stiction_tolerance > 0.0) || !std::isfinite(p.stiction_tolerance))
    fail("stiction_tolerance must be finite and > 0 m/s", p.stiction_tolerance);
  if (!(p.sigma >= 0.0) || !std::isfinite(p.sigma)) fail("sigma must be finite and >= 0", p.sigma);
  if (!std::isfinite(p.phi0)) fail("signed distance phi0 must be finite", p.phi0);
  if (!std::isfinite(p.vn0)) fail("step-start normal velocity vn0 must be finite", p.vn0);
  if (!(p.theta_vq > 0.0 && p.theta_vq <= 1.0)) fail("theta_vq must be in (0, 1]", p.theta_vq);
  if (p.approximation != ContactApproximation::kSimilar && p.approximation != ContactApproximation::kLagged)
    throw std::invalid_argument(std::string("hunt-crossley contact: approximation must be similar or lagged, got ") +
                                to_string(p.approximation));
}

void SapHuntCrossleyConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  if (!(dt > 0.0) || !std::isfinite(dt))
    throw std::invalid_argument("hunt-crossley contact: time step must be > 0, got " + number(dt));
  const HuntCrossleyParameters& p = parameters_;
  law_.time_step = dt;
  law_.position_time_step = p.theta_vq * dt;
  law_.stiffness = p.stiffness;
  law_.dissipation = p.dissipation;
  // Penetration predicted with the step-start velocity for the explicit part of the position
  // update: x = x₀ − δt (1 − θ_vq) v_n0 − δt_q v_n.
  law_.fe0 = p.stiffness * (-p.phi0 - dt * (1.0 - p.theta_vq) * p.vn0);
  n0_ = dt * std::max(0.0, law_.fe0) * std::max(0.0, 1.0 - p.dissipation * p.vn0);
  const double w_diag = W_ii.diagonal().norm() / std::sqrt(3.0);
  wt_ = std::max(0.5 * (W_ii(0, 0) + W_ii(1, 1)), w_diag);
  epsilon_ = std::max(p.stiction_tolerance, p.mu * p.sigma * wt_ * n0_);
  v_hat_n_ = hunt_crossley::zero_impulse_velocity(law_);
  // Diagnostics only (the cost does not use them): R_n the compliance of the spring part of
  // −n'(v) (d = 0), R_t SAP's σ w_t.
  const double Rt = p.sigma > 0.0 ? p.sigma * wt_ : wt_;
  R_ << Rt, Rt, 1.0 / (dt * law_.position_time_step * p.stiffness);
  v_hat_ << 0.0, 0.0, v_hat_n_;
}

[[gnu::always_inline]] inline SapHuntCrossleyConstraint::Evaluation SapHuntCrossleyConstraint::evaluate(
    const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma) const {
  Evaluation e;
  const double mu = parameters_.mu, eps = epsilon_;
  const double vt0 = vc[0], vt1 = vc[1];
  const double r2 = vt0 * vt0 + vt1 * vt1;
  e.s = std::sqrt(r2 + eps * eps);
  const double soft = r2 / (e.s + eps);  // ‖v_t‖_s
  e.t0 = vt0 / e.s;
  e.t1 = vt1 / e.s;
  const hunt_crossley::NormalLaw& law = law_;
  // The normal law at z (inlined: v̂ once).
  const bool similar = parameters_.approximation == ContactApproximation::kSimilar;
  const double z = similar ? vc[2] - mu * soft : vc[2];
  const double k = law.position_time_step * law.stiffness, d = law.dissipation, f = law.fe0, dt = law.time_step;
  const double u = std::min(z, v_hat_n_);
  const double N = dt * u * (f - 0.5 * u * (k + d * f) + d * k * u * u / 3.0);
  if (z < v_hat_n_) {
    e.n = dt * (f - k * z) * (1.0 - d * z);
    e.dn = -dt * (k * (1.0 - d * z) + d * (f - k * z));
  }
  if (similar) {
    e.cost = -N;
    e.ft = mu * e.n;
  } else {
    e.cost = -N + mu * n0_ * soft;
    e.ft = mu * n0_;
  }
  gamma[0] = -e.ft * e.t0;
  gamma[1] = -e.ft * e.t1;
  gamma[2] = e.n;
  return e;
}

double SapHuntCrossleyConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                       Eigen::Ref<Eigen::MatrixXd>* G) const {
  const Evaluation e = evaluate(vc, gamma);
  if (G == nullptr) return e.cost;
  // G = ∇²ℓ. With c = μ (similar) or 0 (lagged), t = t̂_s, s = ‖v_t‖_s + ε_s:
  //   G_tt = −n' c² t tᵀ + (μ n or μ n₀)/s (I − t tᵀ),  G_tn = c n' t,  G_nn = −n'
  // (digest "Similar" and "Lagged"; ∇²‖v_t‖_s = (I − t tᵀ)/s).
  const double c = parameters_.approximation == ContactApproximation::kSimilar ? parameters_.mu : 0.0;
  const double a = -e.dn * c * c, b = e.ft / e.s;
  const double t0 = e.t0, t1 = e.t1;
  Eigen::Ref<Eigen::MatrixXd>& g = *G;
  g(0, 0) = a * t0 * t0 + b * (1.0 - t0 * t0);
  g(1, 1) = a * t1 * t1 + b * (1.0 - t1 * t1);
  g(0, 1) = g(1, 0) = (a - b) * t0 * t1;
  g(0, 2) = g(2, 0) = c * e.dn * t0;
  g(1, 2) = g(2, 1) = c * e.dn * t1;
  g(2, 2) = -e.dn;
  return e.cost;
}

double SapHuntCrossleyConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                             const Eigen::Ref<const Eigen::VectorXd>& dvc,
                                             Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const {
  // Δvᵀ G Δv = −n' (Δv_n − c t·Δv_t)² + (μ n or μ n₀)/s (‖Δv_t‖² − (t·Δv_t)²).
  const Evaluation e = evaluate(vc, gamma);
  if (curvature == nullptr) return e.cost;
  const double c = parameters_.approximation == ContactApproximation::kSimilar ? parameters_.mu : 0.0;
  const double d0 = dvc[0], d1 = dvc[1], d2 = dvc[2];
  const double td = e.t0 * d0 + e.t1 * d1;
  const double a = d2 - c * td;
  *curvature = -e.dn * a * a + (e.ft / e.s) * std::max(0.0, d0 * d0 + d1 * d1 - td * td);
  return e.cost;
}

}  // namespace coulomb::solvers::sap
