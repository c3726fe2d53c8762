#include "coulomb/solvers/sap/sap_coupler_constraint.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace coulomb::solvers::sap {

namespace {
Eigen::MatrixXd coupler_row(int tree_nv, int dof_i, int dof_j, double rho) {
  if (dof_i == dof_j) throw std::invalid_argument("coupler constraint: the two coordinates must differ");
  if (dof_i < 0 || dof_j < 0 || dof_i >= tree_nv || dof_j >= tree_nv)
    throw std::invalid_argument("coupler constraint: dof out of range");
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(1, tree_nv);
  J(0, dof_i) = 1.0;
  J(0, dof_j) = -rho;
  return J;
}
}  // namespace

SapCouplerConstraint::SapCouplerConstraint(int tree, int tree_nv, int dof_i, int dof_j, double q_i, double q_j,
                                           const CouplerParameters& p)
    : SapConstraint(1, tree, coupler_row(tree_nv, dof_i, dof_j, p.gear_ratio)),
      parameters_(p),
      g0_(q_i - p.gear_ratio * q_j - p.offset) {
  reset(q_i, q_j, p);
}

void SapCouplerConstraint::reset(double q_i, double q_j, const CouplerParameters& p) {
  if (!(p.theta_vq > 0.0 && p.theta_vq <= 1.0)) throw std::invalid_argument("coupler constraint: theta_vq must be in (0, 1]");
  if (!std::isfinite(q_i) || !std::isfinite(q_j) || !std::isfinite(p.vc0))
    throw std::invalid_argument("coupler constraint: positions or velocity not finite");
  parameters_ = p;
  g0_ = q_i - p.gear_ratio * q_j - p.offset;
}

void SapCouplerConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  const double beta = parameters_.regularization.beta;
  const double w = std::abs(W_ii(0, 0));
  R_[0] = beta * beta / (4.0 * std::numbers::pi * std::numbers::pi) * w;
  const double dt_q = parameters_.theta_vq * dt;
  const double g0 = g0_ + dt * (1.0 - parameters_.theta_vq) * parameters_.vc0;
  v_hat_[0] = -g0 / (dt_q + beta * dt_q / std::numbers::pi);
}

double SapCouplerConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                  Eigen::Ref<Eigen::MatrixXd>* G) const {
  const double y = -(vc[0] - v_hat_[0]) / R_[0];
  gamma[0] = y;
  if (G != nullptr) (*G)(0, 0) = 1.0 / R_[0];
  return 0.5 * R_[0] * y * y;
}

}  // namespace coulomb::solvers::sap
