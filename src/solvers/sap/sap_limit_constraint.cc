#include "coulomb/solvers/sap/sap_limit_constraint.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

namespace {

// τ_d of the limit: the given dissipation time for a finite stiffness; with an infinite one the
// near-rigid value β δt_q / π (critical damping of the near-rigid spring, see prepare).
double dissipation_time(double dt_q, const LimitParameters& p) {
  return std::isfinite(p.stiffness) ? p.dissipation_time : p.regularization.beta * dt_q / std::numbers::pi;
}

int count_rows(const LimitParameters& p) {
  if (p.lower > p.upper)
    throw std::invalid_argument("limit constraint: lower " + std::to_string(p.lower) + " > upper " +
                                std::to_string(p.upper));
  const int n = (std::isfinite(p.lower) ? 1 : 0) + (std::isfinite(p.upper) ? 1 : 0);
  if (n == 0) throw std::invalid_argument("limit constraint: neither limit is finite");
  return n;
}

Eigen::MatrixXd make_jacobian(const LimitParameters& p, int tree_nv, int dof) {
  if (dof < 0 || dof >= tree_nv) throw std::invalid_argument("limit constraint: dof out of range");
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(count_rows(p), tree_nv);
  int row = 0;
  if (std::isfinite(p.lower)) J(row++, dof) = 1.0;
  if (std::isfinite(p.upper)) J(row, dof) = -1.0;
  return J;
}

}  // namespace

SapLimitConstraint::SapLimitConstraint(int tree, int tree_nv, int dof, double q0, const LimitParameters& p)
    : SapConstraint(count_rows(p), tree, make_jacobian(p, tree_nv, dof)) {
  g0_.resize(num_rows());
  reset(q0, p);
}

void SapLimitConstraint::reset(double q0, const LimitParameters& p) {
  if (count_rows(p) != num_rows() || (initialized_ && std::isfinite(p.lower) != std::isfinite(parameters_.lower)))
    throw std::invalid_argument("limit constraint: reset with different finite limits");
  if (!(p.stiffness > 0.0)) throw std::invalid_argument("limit constraint: stiffness must be > 0");
  if (!(p.dissipation_time >= 0.0)) throw std::invalid_argument("limit constraint: dissipation_time must be >= 0");
  if (!(p.theta_vq > 0.0 && p.theta_vq <= 1.0))
    throw std::invalid_argument("limit constraint: theta_vq must be in (0, 1], got " + std::to_string(p.theta_vq));
  if (!std::isfinite(q0) || !std::isfinite(p.v0)) throw std::invalid_argument("limit constraint: q0 or v0 is not finite");
  parameters_ = p;
  initialized_ = true;
  int row = 0;
  if (std::isfinite(p.lower)) g0_[row++] = q0 - p.lower;
  if (std::isfinite(p.upper)) g0_[row] = p.upper - q0;
}

void SapLimitConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  const double w = W_ii.diagonal().cwiseAbs().maxCoeff();  // the rows share one coordinate
  const double beta = parameters_.regularization.beta;
  const double R_near_rigid = beta * beta / (4.0 * std::numbers::pi * std::numbers::pi) * w;
  // Position prediction of the integrator (LimitParameters::theta_vq): δt_q = θ_vq δt and
  // g̃₀ = g₀ + δt (1 − θ_vq) v_c(v₀), with v_c(v₀) = +v₀ for the lower row and −v₀ for the upper.
  const double dt_q = parameters_.theta_vq * dt, drift = dt * (1.0 - parameters_.theta_vq) * parameters_.v0;
  // With an infinite stiffness the near-rigid value applies, with τ_d = β δt_q / π (critical
  // damping of the near-rigid spring, on the time scale over which v moves the position). After
  // one step that enters the limit the constraint is left at g₁ ≈ g̃₀ τ_d/(δt_q + τ_d) for a
  // near-rigid R ≪ W (the simulator uses β = 0.1 for limits, SimulatorParameters).
  const double tau = dissipation_time(dt_q, parameters_);
  const double R_physical = 1.0 / (dt * parameters_.stiffness * (dt_q + tau));
  R_.setConstant(std::max(R_near_rigid, R_physical));
  int row = 0;
  if (std::isfinite(parameters_.lower)) {
    v_hat_[row] = -(g0_[row] + drift) / (dt_q + tau);
    ++row;
  }
  if (std::isfinite(parameters_.upper)) v_hat_[row] = -(g0_[row] - drift) / (dt_q + tau);
}

bool SapLimitConstraint::acts(double q0, double v, double time_step, const LimitParameters& p) {
  const double dt_q = p.theta_vq * time_step, drift = time_step * (1.0 - p.theta_vq) * p.v0;
  const double lookahead = dt_q + dissipation_time(dt_q, p);
  if (std::isfinite(p.lower) && (q0 - p.lower + drift) + lookahead * v < 0.0) return true;   // v_c = v
  if (std::isfinite(p.upper) && (p.upper - q0 - drift) - lookahead * v < 0.0) return true;   // v_c = −v
  return false;
}

double SapLimitConstraint::project(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                   double* G_diagonal) const {
  double cost = 0.0;
  for (int r = 0; r < num_rows(); ++r) {
    const double y = -(vc[r] - v_hat_[r]) / R_[r];
    gamma[r] = std::max(0.0, y);
    cost += 0.5 * R_[r] * gamma[r] * gamma[r];
    G_diagonal[r] = y >= 0.0 ? 1.0 / R_[r] : 0.0;
  }
  return cost;
}

double SapLimitConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                Eigen::Ref<Eigen::MatrixXd>* G) const {
  double g[2];
  const double cost = project(vc, gamma, g);
  if (G != nullptr) {
    G->setZero();
    for (int r = 0; r < num_rows(); ++r) (*G)(r, r) = g[r];
  }
  return cost;
}

double SapLimitConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                      const Eigen::Ref<const Eigen::VectorXd>& dvc, Eigen::Ref<Eigen::VectorXd> gamma,
                                      double* curvature) const {
  double g[2];
  const double cost = project(vc, gamma, g);
  if (curvature != nullptr) {
    *curvature = 0.0;
    for (int r = 0; r < num_rows(); ++r) *curvature += g[r] * dvc[r] * dvc[r];
  }
  return cost;
}

}  // namespace coulomb::solvers::sap
