#include "coulomb/solvers/sap/sap_pd_controller_constraint.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {


SapPdControllerConstraint::SapPdControllerConstraint(int tree, int tree_nv, int dof, double q0,
                                                     const PdControllerParameters& p)
    : SapConstraint(1, tree, unit_jacobian_row(tree_nv, dof, "PD controller")) {
  reset(q0, p);
}

void SapPdControllerConstraint::reset(double q0, const PdControllerParameters& p) {
  if (!(p.kp >= 0.0) || !(p.kd >= 0.0) || !(p.kp + p.kd > 0.0))
    throw std::invalid_argument("PD controller: gains must be >= 0 with kp + kd > 0, got kp = " +
                                std::to_string(p.kp) + ", kd = " + std::to_string(p.kd));
  if (!(p.effort_limit > 0.0))
    throw std::invalid_argument("PD controller: effort_limit must be > 0, got " + std::to_string(p.effort_limit));
  if (!std::isfinite(p.q_target) || !std::isfinite(p.v_target) || !std::isfinite(q0) || !std::isfinite(p.v0) ||
      !std::isfinite(p.feedforward))
    throw std::invalid_argument("PD controller: target, feed-forward, position or velocity is not finite");
  if (!(p.theta_vq > 0.0 && p.theta_vq <= 1.0))
    throw std::invalid_argument("PD controller: theta_vq must be in (0, 1], got " + std::to_string(p.theta_vq));
  parameters_ = p;
  q0_ = q0;
}

void SapPdControllerConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>&) {
  const PdControllerParameters& p = parameters_;
  time_step_ = dt;
  const double dt_q = p.theta_vq * dt, q0_end = q0_ + dt * (1.0 - p.theta_vq) * p.v0;
  const double c = dt_q * p.kp + p.kd;
  R_[0] = 1.0 / (dt * c);
  v_hat_[0] = (p.kp * (p.q_target - q0_end) + p.kd * p.v_target + p.feedforward) / c;
  gamma_max_ = dt * p.effort_limit;
}

double SapPdControllerConstraint::project(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                          double* G_00) const {
  const double R = R_[0];
  const double y = -(vc[0] - v_hat_[0]) / R;
  if (std::abs(y) <= gamma_max_) {
    gamma[0] = y;
    *G_00 = 1.0 / R;
    return 0.5 * R * y * y;
  }
  gamma[0] = std::copysign(gamma_max_, y);
  *G_00 = 0.0;
  return R * gamma_max_ * (std::abs(y) - 0.5 * gamma_max_);
}

double SapPdControllerConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                       Eigen::Ref<Eigen::MatrixXd>* G) const {
  double g = 0.0;
  const double cost = project(vc, gamma, &g);
  if (G != nullptr) (*G)(0, 0) = g;
  return cost;
}

double SapPdControllerConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                             const Eigen::Ref<const Eigen::VectorXd>& dvc,
                                             Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const {
  double g = 0.0;
  const double cost = project(vc, gamma, &g);
  if (curvature != nullptr) *curvature = g * dvc[0] * dvc[0];
  return cost;
}

}  // namespace coulomb::solvers::sap
