#include "coulomb/solvers/sap/sap_bilateral_constraint.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

SapBilateralConstraint::SapBilateralConstraint(const BilateralParameters& p, int first_tree, Eigen::MatrixXd J_first,
                                               int second_tree, Eigen::MatrixXd J_second)
    : SapConstraint(static_cast<int>(p.phi0.size()), first_tree, std::move(J_first), second_tree, std::move(J_second)) {
  check(p);
  parameters_ = p;
}

void SapBilateralConstraint::check(const BilateralParameters& p) const {
  const int n = num_rows();
  if (p.phi0.size() != n || p.phidot0.size() != n || p.stiffness.size() != n || p.damping.size() != n ||
      (p.inert.size() != 0 && p.inert.size() != n))
    throw std::invalid_argument("bilateral constraint: phi0, phidot0, stiffness, damping (and inert) must have " +
                                std::to_string(n) + " rows");
  if (n < 1 || n > 6) throw std::invalid_argument("bilateral constraint: 1 … 6 rows, got " + std::to_string(n));
  for (int r = 0; r < n; ++r) {
    if (!(p.stiffness[r] > 0.0))
      throw std::invalid_argument("bilateral constraint: stiffness of row " + std::to_string(r) + " must be > 0, got " +
                                  std::to_string(p.stiffness[r]));
    if (!(p.damping[r] >= 0.0) || !std::isfinite(p.damping[r]))
      throw std::invalid_argument("bilateral constraint: damping of row " + std::to_string(r) +
                                  " must be finite and >= 0, got " + std::to_string(p.damping[r]));
  }
  if (!p.phi0.allFinite() || !p.phidot0.allFinite())
    throw std::invalid_argument("bilateral constraint: phi0 or phidot0 is not finite");
  if (!(p.theta_vq > 0.0 && p.theta_vq <= 1.0))
    throw std::invalid_argument("bilateral constraint: theta_vq must be in (0, 1], got " + std::to_string(p.theta_vq));
}

void SapBilateralConstraint::reset(const BilateralParameters& p, int first_tree,
                                   const Eigen::Ref<const Eigen::MatrixXd>& J_first, int second_tree,
                                   const Eigen::Ref<const Eigen::MatrixXd>& J_second) {
  check(p);
  set_jacobians(first_tree, J_first, second_tree, J_second);
  parameters_ = p;
}

void SapBilateralConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  const BilateralParameters& p = parameters_;
  const double beta = p.regularization.beta;
  const double near_rigid = beta * beta / (4.0 * std::numbers::pi * std::numbers::pi);
  const double dt_q = p.theta_vq * dt;
  const double w_max = W_ii.diagonal().cwiseAbs().maxCoeff();
  for (int r = 0; r < num_rows(); ++r) {
    if (p.inert.size() > 0 && p.inert[r] != 0) {
      R_[r] = near_rigid * (w_max > 0.0 ? w_max : 1.0);
      v_hat_[r] = 0.0;
      continue;
    }
    const double w = std::abs(W_ii(r, r));
    const double k = p.stiffness[r];
    double tau = 0.0, R = near_rigid * w;
    if (std::isfinite(k)) {
      tau = p.damping[r] / k;
      R = std::max(R, 1.0 / (dt * k * (dt_q + tau)));
    } else {
      tau = beta * dt_q / std::numbers::pi;
    }
    // Castro et al. Eq. 29 per row; a row with w = 0 on a non-inert Jacobian cannot occur (W_rr =
    // J_r A⁻¹ J_rᵀ > 0 for J_r ≠ 0), but keep R > 0 for round-off.
    R_[r] = R > 0.0 ? R : near_rigid * std::max(w_max, 1e-300);
    const double g0 = p.phi0[r] + dt * (1.0 - p.theta_vq) * p.phidot0[r];
    v_hat_[r] = -g0 / (dt_q + tau);
  }
}

double SapBilateralConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                    Eigen::Ref<Eigen::MatrixXd>* G) const {
  double cost = 0.0;
  for (int r = 0; r < num_rows(); ++r) {
    const double y = -(vc[r] - v_hat_[r]) / R_[r];
    gamma[r] = y;
    cost += 0.5 * R_[r] * y * y;
  }
  if (G != nullptr) {
    G->setZero();
    for (int r = 0; r < num_rows(); ++r) (*G)(r, r) = 1.0 / R_[r];
  }
  return cost;
}

double SapBilateralConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                          const Eigen::Ref<const Eigen::VectorXd>& dvc, Eigen::Ref<Eigen::VectorXd> gamma,
                                          double* curvature) const {
  const double cost = calc(vc, gamma, nullptr);
  if (curvature != nullptr) {
    double c = 0.0;
    for (int r = 0; r < num_rows(); ++r) c += dvc[r] * dvc[r] / R_[r];
    *curvature = c;
  }
  return cost;
}

}  // namespace coulomb::solvers::sap
