#include "coulomb/solvers/global_contact_problem.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "util/format.h"

namespace coulomb::solvers {

namespace {

using util::format_number;

std::string size_text(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

void check_finite_vector(const Eigen::VectorXd& x, const std::string& source, const char* field) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      throw std::invalid_argument(source + field + "[" + std::to_string(i) + "] is not finite: " + format_number(x[i]));
}

void check_finite_matrix(const Eigen::SparseMatrix<double>& A, const std::string& source, const char* field) {
  for (int k = 0; k < A.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, k); it; ++it)
      if (!std::isfinite(it.value()))
        throw std::invalid_argument(source + field + "(" + std::to_string(it.row()) + ", " + std::to_string(it.col()) +
                                    ") is not finite: " + format_number(it.value()));
}

}  // namespace

void check_global_contact_problem(const GlobalContactProblem& p, const std::string& source) {
  const Eigen::Index n = p.M.rows();
  if (p.M.cols() != n || n == 0)
    throw std::invalid_argument(source + "M must be square and non-empty, got " + size_text(p.M.rows(), p.M.cols()));
  const Eigen::Index nc = p.mu.size();
  if (p.H.rows() != n || p.H.cols() != 3 * nc)
    throw std::invalid_argument(source + "H must be " + size_text(n, 3 * nc) + " (n_v x 3 n_c with n_c = size of mu = " +
                                std::to_string(nc) + "), got " + size_text(p.H.rows(), p.H.cols()));
  if (p.f.size() != n)
    throw std::invalid_argument(source + "f must have n_v = " + std::to_string(n) + " entries, got " +
                                std::to_string(p.f.size()));
  if (p.w.size() != 3 * nc)
    throw std::invalid_argument(source + "w must have 3 n_c = " + std::to_string(3 * nc) + " entries, got " +
                                std::to_string(p.w.size()));
  check_finite_matrix(p.M, source, "M");
  check_finite_matrix(p.H, source, "H");
  check_finite_vector(p.f, source, "f");
  check_finite_vector(p.w, source, "w");
  check_finite_vector(p.mu, source, "mu");
  for (Eigen::Index i = 0; i < nc; ++i)
    if (p.mu[i] < 0.0)
      throw std::invalid_argument(source + "mu[" + std::to_string(i) + "] (friction coefficient of contact " +
                                  std::to_string(i) + ") is negative: " + format_number(p.mu[i]));
  // Symmetry of M: ‖M − Mᵀ‖_max ≤ 1e-6 ‖M‖_max (FCLIB's FEM problems carry round-off of
  // ~1.5e-7 relative; solvers use ½(M + Mᵀ) where they need exact symmetry).
  const Eigen::SparseMatrix<double> Mt = p.M.transpose();
  const Eigen::SparseMatrix<double> D = p.M - Mt;
  double scale = 0.0, asym = 0.0;
  for (int k = 0; k < p.M.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(p.M, k); it; ++it) scale = std::max(scale, std::abs(it.value()));
  for (int k = 0; k < D.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(D, k); it; ++it)
      if (std::abs(it.value()) > asym) asym = std::abs(it.value());
  if (asym > 1e-6 * scale)
    throw std::invalid_argument(source + "M is not symmetric: max |M - M^T| = " + format_number(asym) +
                                " (max |M| = " + format_number(scale) + ")");
}

Eigen::VectorXd local_velocity(const GlobalContactProblem& p, const Eigen::Ref<const Eigen::VectorXd>& v) {
  if (v.size() != p.H.rows())
    throw std::invalid_argument("local_velocity: v has " + std::to_string(v.size()) + " entries, expected " +
                                std::to_string(p.H.rows()));
  Eigen::VectorXd u = p.w;
  u.noalias() += p.H.transpose() * v;
  return u;
}

Eigen::Vector3d project_onto_friction_cone(const Eigen::Vector3d& x, double mu) {
  if (!(mu >= 0.0)) throw std::invalid_argument("project_onto_friction_cone: mu must be >= 0, got " + format_number(mu));
  const double xn = x[0], xt = std::hypot(x[1], x[2]);
  if (xt <= mu * xn) return x;               // inside C_μ
  if (mu * xt <= -xn) return Eigen::Vector3d::Zero();  // inside the polar cone −C*_μ
  const double a = (xn + mu * xt) / (1.0 + mu * mu);  // onto the cone's wall, in the plane of x and e_N
  return Eigen::Vector3d(a, mu * a * x[1] / xt, mu * a * x[2] / xt);
}

CoulombResiduals coulomb_residuals(const GlobalContactProblem& p, const Eigen::Ref<const Eigen::VectorXd>& v,
                                   const Eigen::Ref<const Eigen::VectorXd>& r) {
  const int nc = p.num_contacts();
  if (v.size() != p.num_dofs() || r.size() != 3 * nc)
    throw std::invalid_argument("coulomb_residuals: v must have " + std::to_string(p.num_dofs()) + " and r " +
                                std::to_string(3 * nc) + " entries, got " + std::to_string(v.size()) + " and " +
                                std::to_string(r.size()));
  const double scale = 1.0 + p.f.norm();
  CoulombResiduals out;
  Eigen::VectorXd momentum = p.M * v;
  momentum.noalias() -= p.H * r;
  momentum -= p.f;
  out.equation = momentum.norm() / scale;

  const Eigen::VectorXd u = local_velocity(p, v);
  double sum = 0.0, rn_max = 0.0, u_max = 0.0;
  for (int i = 0; i < nc; ++i) {
    rn_max = std::max(rn_max, r[3 * i]);
    u_max = std::max(u_max, u.segment<3>(3 * i).norm());
  }
  const double loaded = 1e-9 * rn_max, slipping = 1e-6 * (1.0 + u_max);
  double gap = 0.0, approach = 0.0;
  for (int i = 0; i < nc; ++i) {
    const Eigen::Vector3d ri = r.segment<3>(3 * i), ui = u.segment<3>(3 * i);
    const double ut = std::hypot(ui[1], ui[2]);
    Eigen::Vector3d u_tilde = ui;
    u_tilde[0] += p.mu[i] * ut;  // De Saxcé
    const Eigen::Vector3d e = ri - project_onto_friction_cone(ri - u_tilde, p.mu[i]);
    sum += e.squaredNorm();
    if (rn_max > 0.0 && ri[0] > loaded) {
      gap = std::max(gap, ui[0]);
      approach = std::max(approach, -ui[0]);
      if (ut > slipping) ++out.sliding_contacts;
    }
  }
  out.complementarity = std::sqrt(sum) / scale;
  out.normal_gap = gap;
  out.penetration_velocity = approach;
  return out;
}

}  // namespace coulomb::solvers
