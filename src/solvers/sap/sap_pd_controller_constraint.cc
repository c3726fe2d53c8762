#include "coulomb/solvers/sap/sap_pd_controller_constraint.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

namespace {
Eigen::MatrixXd unit_row(int tree_nv, int dof) {
  if (dof < 0 || dof >= tree_nv) throw std::invalid_argument("PD controller constraint: dof out of range");
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(1, tree_nv);
  J(0, dof) = 1.0;
  return J;
}
}  // namespace

SapPdControllerConstraint::SapPdControllerConstraint(int tree, int tree_nv, int dof, double q0,
                                                     const PdControllerParameters& p)
    : SapConstraint(1, tree, unit_row(tree_nv, dof)), parameters_(p), q0_(q0) {
  if (!(p.kp >= 0.0) || !(p.kd >= 0.0) || !(p.kp + p.kd > 0.0))
    throw std::invalid_argument("PD controller: gains must be >= 0 with kp + kd > 0, got kp = " +
                                std::to_string(p.kp) + ", kd = " + std::to_string(p.kd));
  if (!(p.effort_limit > 0.0))
    throw std::invalid_argument("PD controller: effort_limit must be > 0, got " + std::to_string(p.effort_limit));
  if (!std::isfinite(p.q_target) || !std::isfinite(p.v_target) || !std::isfinite(q0))
    throw std::invalid_argument("PD controller: target or position is not finite");
}

void SapPdControllerConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>&) {
  const PdControllerParameters& p = parameters_;
  time_step_ = dt;
  const double c = dt * p.kp + p.kd;
  R_[0] = 1.0 / (dt * c);
  v_hat_[0] = (p.kp * (p.q_target - q0_) + p.kd * p.v_target) / c;
  gamma_max_ = dt * p.effort_limit;
}

double SapPdControllerConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                       Eigen::Ref<Eigen::MatrixXd>* G) const {
  const double R = R_[0];
  const double y = -(vc[0] - v_hat_[0]) / R;
  if (std::abs(y) <= gamma_max_) {
    gamma[0] = y;
    if (G != nullptr) (*G)(0, 0) = 1.0 / R;
    return 0.5 * R * y * y;
  }
  gamma[0] = std::copysign(gamma_max_, y);
  if (G != nullptr) (*G)(0, 0) = 0.0;
  return R * gamma_max_ * (std::abs(y) - 0.5 * gamma_max_);
}

double SapPdControllerConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                             const Eigen::Ref<const Eigen::VectorXd>& dvc,
                                             Eigen::Ref<Eigen::VectorXd> gamma, double* curvature) const {
  const double R = R_[0];
  const double y = -(vc[0] - v_hat_[0]) / R;
  if (std::abs(y) <= gamma_max_) {
    gamma[0] = y;
    if (curvature != nullptr) *curvature = dvc[0] * dvc[0] / R;
    return 0.5 * R * y * y;
  }
  gamma[0] = std::copysign(gamma_max_, y);
  if (curvature != nullptr) *curvature = 0.0;
  return R * gamma_max_ * (std::abs(y) - 0.5 * gamma_max_);
}

}  // namespace coulomb::solvers::sap
