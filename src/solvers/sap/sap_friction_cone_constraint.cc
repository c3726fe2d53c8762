#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

namespace friction_cone {

namespace {
void check_mu(double mu) {
  if (!(mu >= 0.0)) throw std::invalid_argument("friction cone: mu must be >= 0, got " + std::to_string(mu));
}
}  // namespace

// Castro et al. Eq. 27 and digest §8 item 13: on ∂ℱ (y_r = μ y_n) the stiction formulas, on
// ∂ℱ° (y_n = −μ̂ y_r) the sliding ones. Stiction also requires y_n ≥ 0: for μ > 0 that follows
// from y_r ≤ μ y_n, but for μ = 0 the test y_r ≤ 0 alone would accept y = (0, 0, y_n < 0) and
// return γ_n < 0, an adhesive impulse (the cone is then the ray γ_t = 0, γ_n ≥ 0, whose
// projection is γ = (0, 0, max(0, y_n)); the sliding formulas give exactly that with μ̂ = 0).
FrictionConeRegion region(const Eigen::Vector3d& y, double mu, double Rt, double Rn) {
  const double yr = y.head<2>().norm();
  if (yr <= mu * y[2] && y[2] >= 0.0) return FrictionConeRegion::kStiction;
  const double mu_hat = mu * Rt / Rn;
  if (y[2] < -mu_hat * yr) return FrictionConeRegion::kNoContact;
  return FrictionConeRegion::kSliding;
}

Eigen::Vector3d project(const Eigen::Vector3d& y, double mu, double Rt, double Rn) {
  check_mu(mu);
  switch (region(y, mu, Rt, Rn)) {
    case FrictionConeRegion::kStiction:
      return y;
    case FrictionConeRegion::kNoContact:
      return Eigen::Vector3d::Zero();
    case FrictionConeRegion::kSliding: {
      // γ_n = (y_n + μ̂ y_r)/(1 + μ̃²), γ_t = μ γ_n t̂ (y_r > 0 in this region).
      const double yr = y.head<2>().norm();
      const double mu_hat = mu * Rt / Rn, mu_tilde2 = mu * mu_hat;
      const double gn = (y[2] + mu_hat * yr) / (1.0 + mu_tilde2);
      Eigen::Vector3d gamma;
      gamma.head<2>() = (mu * gn / yr) * y.head<2>();
      gamma[2] = gn;
      return gamma;
    }
  }
  return Eigen::Vector3d::Zero();
}

double cost(const Eigen::Vector3d& y, double mu, double Rt, double Rn) {
  switch (region(y, mu, Rt, Rn)) {
    case FrictionConeRegion::kStiction:
      return 0.5 * (Rt * y.head<2>().squaredNorm() + Rn * y[2] * y[2]);
    case FrictionConeRegion::kNoContact:
      return 0.0;
    case FrictionConeRegion::kSliding: {
      // Eq. 35: R_n (y_n + μ̂ y_r)² / (2 (1 + μ̃²)).
      const double mu_hat = mu * Rt / Rn;
      const double s = y[2] + mu_hat * y.head<2>().norm();
      return Rn * s * s / (2.0 * (1.0 + mu * mu_hat));
    }
  }
  return 0.0;
}

Eigen::Matrix3d hessian(const Eigen::Vector3d& y, double mu, double Rt, double Rn) {
  Eigen::Matrix3d G = Eigen::Matrix3d::Zero();
  switch (region(y, mu, Rt, Rn)) {
    case FrictionConeRegion::kStiction:
      G.diagonal() << 1.0 / Rt, 1.0 / Rt, 1.0 / Rn;
      break;
    case FrictionConeRegion::kNoContact:
      break;
    case FrictionConeRegion::kSliding: {
      // Digest §3.2: G = f fᵀ/(R_n(1 + μ̃²)) + (μ γ_n/(R_t y_r)) [P⊥(t̂) 0; 0 0], f = [μ t̂; 1].
      const double yr = y.head<2>().norm();
      const double mu_hat = mu * Rt / Rn, mu_tilde2 = mu * mu_hat;
      const Eigen::Vector2d t = y.head<2>() / yr;
      const double gn = (y[2] + mu_hat * yr) / (1.0 + mu_tilde2);
      Eigen::Vector3d f;
      f << mu * t, 1.0;
      G = f * f.transpose() / (Rn * (1.0 + mu_tilde2));
      G.topLeftCorner<2, 2>() += (mu * gn / (Rt * yr)) * (Eigen::Matrix2d::Identity() - t * t.transpose());
      break;
    }
  }
  return G;
}

}  // namespace friction_cone

SapFrictionConeConstraint::SapFrictionConeConstraint(const FrictionConeParameters& p, int first_tree,
                                                     Eigen::MatrixXd J_first, int second_tree,
                                                     Eigen::MatrixXd J_second)
    : SapConstraint(3, first_tree, std::move(J_first), second_tree, std::move(J_second)), parameters_(p) {
  check(p);
  set_kernel_constants(Rt_, Rn_);
}

void SapFrictionConeConstraint::reset(const FrictionConeParameters& p, int first_tree,
                                      const Eigen::Ref<const Eigen::MatrixXd>& J_first, int second_tree,
                                      const Eigen::Ref<const Eigen::MatrixXd>& J_second) {
  check(p);
  set_jacobians(first_tree, J_first, second_tree, J_second);
  parameters_ = p;
  set_kernel_constants(Rt_, Rn_);
}

void SapFrictionConeConstraint::set_kernel_constants(double Rt, double Rn) {
  // Three independent divisions: 1/(1 + μ μ̂) = R_n/(R_n + μ² R_t), so no division waits on another.
  const double mu = parameters_.mu;
  inv_Rt_ = 1.0 / Rt;
  inv_Rn_ = 1.0 / Rn;
  inv_Rn_1p_mu_tilde2_ = 1.0 / (Rn + mu * mu * Rt);
  mu_hat_ = mu * Rt * inv_Rn_;
  inv_1p_mu_tilde2_ = Rn * inv_Rn_1p_mu_tilde2_;
  mu_inv_Rt_ = mu * inv_Rt_;
}

void SapFrictionConeConstraint::check(const FrictionConeParameters& p) {
  if (!(p.mu >= 0.0) || !std::isfinite(p.mu))
    throw std::invalid_argument("contact: friction coefficient mu must be finite and >= 0, got " + std::to_string(p.mu));
  if (!(p.stiffness > 0.0)) throw std::invalid_argument("contact: stiffness must be > 0, got " + std::to_string(p.stiffness));
  if (!(p.dissipation_time >= 0.0) || !std::isfinite(p.dissipation_time))
    throw std::invalid_argument("contact: dissipation_time must be finite and >= 0, got " +
                                std::to_string(p.dissipation_time));
  if (!std::isfinite(p.phi0)) throw std::invalid_argument("contact: signed distance phi0 is not finite");
  if (!std::isfinite(p.vn0)) throw std::invalid_argument("contact: normal velocity vn0 is not finite");
  if (!(p.theta_vq > 0.0 && p.theta_vq <= 1.0))
    throw std::invalid_argument("contact: theta_vq must be in (0, 1], got " + std::to_string(p.theta_vq));
}

void SapFrictionConeConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  const FrictionConeParameters& p = parameters_;
  const double w = delassus_scalar(W_ii);
  const double beta = p.regularization.beta;
  // Eq. 29: the larger of the near-rigid value and the physical compliance.
  const double Rn_near_rigid = beta * beta / (4.0 * std::numbers::pi * std::numbers::pi) * w;
  // Position prediction of the integrator: φ(v_n) = φ̃₀ + δt_q v_n (issue 9 item 5).
  const double dt_q = p.theta_vq * dt, phi0_end = p.phi0 + dt * (1.0 - p.theta_vq) * p.vn0;
  const double Rn_physical = 1.0 / (dt * p.stiffness * (dt_q + p.dissipation_time));
  double Rn = std::max(Rn_near_rigid, Rn_physical);
  double Rt = p.regularization.sigma * w;  // Eq. 30
  if (!(w > 0.0)) {
    // W_ii = 0: the contact's Jacobian vanishes (a point on the common axis of two bodies that
    // can only turn about it; two identical robots in one place), so v_c ≡ 0 whatever v and the
    // impulse moves nothing: any R > 0 gives the same velocities. With R_t = σ w = 0 the
    // projection divided 0 by 0 and every impulse of the step became NaN (mutation campaign,
    // scene 4619). R_t = R_n keeps it finite: γ_t = 0 and γ_n is the physical compliance's
    // δt k φ₀ (its near-rigid floor is 0 here); R_n = 1 if the stiffness is infinite.
    if (!(Rn > 0.0) || !std::isfinite(Rn)) Rn = 1.0;
    Rt = Rn;
  }
  R_ << Rt, Rt, Rn;
  v_hat_ << 0.0, 0.0, -phi0_end / (dt_q + p.dissipation_time);  // §V: v̂_n = −φ₀/(δt + τ_d)
  Rt_ = Rt;
  Rn_ = Rn;
  vn_hat_ = v_hat_[2];
  set_kernel_constants(Rt, Rn);
}

double SapFrictionConeConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                       Eigen::Ref<Eigen::MatrixXd>* G) const {
  if (G == nullptr) return calc_inline(vc.data(), gamma.data(), nullptr);
  double g[9];
  const double cost = calc_inline(vc.data(), gamma.data(), g);
  for (int b = 0; b < 3; ++b)
    for (int a = 0; a < 3; ++a) (*G)(a, b) = g[3 * b + a];
  return cost;
}

double SapFrictionConeConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                             const Eigen::Ref<const Eigen::VectorXd>& dvc,
                                             Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const {
  return calc_along_inline(vc.data(), dvc.data(), gamma.data(), curvature);
}

}  // namespace coulomb::solvers::sap
