#include "coulomb/solvers/sap/sap_line_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "linalg/block_kernels.h"  // COULOMB_TARGET_AVX2, use_avx2_kernels

namespace coulomb::solvers::sap {

SapLineSearchFunction::SapLineSearchFunction(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
                                             const Eigen::Ref<const Eigen::VectorXd>& vc,
                                             const Eigen::Ref<const Eigen::VectorXd>& dv) {
  reset(problem, v, vc, dv);
}

void SapLineSearchFunction::reset(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
                                  const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dv) {
  dv_minus_ = v - problem.v_star();
  a_dv_minus_.resize(problem.nv());
  problem.multiply_A(dv_minus_, a_dv_minus_);
  reset(problem, dv_minus_, a_dv_minus_, vc, dv);
}

void SapLineSearchFunction::reset(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& dv_minus,
                                  const Eigen::Ref<const Eigen::VectorXd>& A_dv_minus,
                                  const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dv) {
  problem_ = &problem;
  const int m = problem.num_rows(), nv = problem.nv();
  vc_ = vc;
  dvc_.resize(m);
  gamma_.resize(m);
  vc_alpha_.resize(m);
  dp_.resize(nv);
  problem.multiply_J(dv, dvc_);
  problem.multiply_A(dv, dp_);
  cost_A0_ = 0.5 * dv_minus.dot(A_dv_minus);
  r0_ = dv.dot(A_dv_minus);  // Δpᵀ(v − v*) with A symmetric
  dv_dp_ = dv.dot(dp_);
  vc_data_ = vc_.data();
  dvc_data_ = dvc_.data();
  cones_.clear();  // keeps its capacity: no allocation once the contacts have peaked
  others_.clear();
  for (int i = 0; i < problem.num_constraints(); ++i) add_constraint(i);
}

void SapLineSearchFunction::reset_island(const SapProblem& problem, const double* vc, const double* dvc, double cost_A0,
                                         double r0, double dv_dp, const int* constraints, int count) {
  problem_ = &problem;
  vc_data_ = vc;
  dvc_data_ = dvc;
  cost_A0_ = cost_A0;
  r0_ = r0;
  dv_dp_ = dv_dp;
  const int m = problem.num_rows();
  if (gamma_.size() < m) gamma_.resize(m);  // grow only: no allocation once the rows have peaked
  if (vc_alpha_.size() < m) vc_alpha_.resize(m);
  cones_.clear();
  others_.clear();
  for (int k = 0; k < count; ++k) add_constraint(constraints[k]);
}

void SapLineSearchFunction::add_constraint(int i) {
  const SapProblem& problem = *problem_;
  if (const SapFrictionConeConstraint* cone = problem.constraint(i).as_friction_cone())
    cones_.push_back({cone, problem.row_start(i)});
  else
    others_.push_back(i);
}

double SapLineSearchFunction::cost(double alpha) const {
  const SapProblem& problem = *problem_;
  double ell = cost_A0_ + alpha * r0_ + 0.5 * alpha * alpha * dv_dp_;
  const double* vc = vc_data_;
  const double* dvc = dvc_data_;
  for (const Cone& k : cones_) {
    const double* a = vc + k.row;
    const double* b = dvc + k.row;
    const double y[3] = {a[0] + alpha * b[0], a[1] + alpha * b[1], a[2] + alpha * b[2]};
    double g[3];
    ell += k.constraint->calc_along_inline(y, b, g, nullptr);
  }
  for (int i : others_) {
    const SapConstraint& c = problem.constraint(i);
    const int r = problem.row_start(i), n = c.num_rows();
    for (int a = r; a < r + n; ++a) vc_alpha_[a] = vc[a] + alpha * dvc[a];
    ell += c.calc(vc_alpha_.segment(r, n), gamma_.segment(r, n), nullptr);
  }
  return ell;
}

namespace {

// The contacts' part of ℓ'(α) and ℓ''(α): the inline kernel on plain arrays. Compiled twice, like
// the block kernels (linalg/block_kernels.h): the line search runs it some five times per Newton
// iteration over every contact, and its products contract into FMAs where the processor has them.
template <class Cone>
[[gnu::always_inline]] inline void add_cone_derivatives_body(const Cone* begin, const Cone* end, const double* vc,
                                                             const double* dvc, double alpha, bool with_second,
                                                             double& d, double& d2) {
  for (const Cone* k = begin; k != end; ++k) {
    const double* a = vc + k->row;
    const double* b = dvc + k->row;
    const double y[3] = {a[0] + alpha * b[0], a[1] + alpha * b[1], a[2] + alpha * b[2]};
    double g[3], curvature = 0.0;
    k->constraint->calc_along_inline(y, b, g, with_second ? &curvature : nullptr);
    d2 += curvature;
    d -= b[0] * g[0] + b[1] * g[1] + b[2] * g[2];
  }
}
template <class Cone>
void add_cone_derivatives_baseline(const Cone* begin, const Cone* end, const double* vc, const double* dvc,
                                   double alpha, bool with_second, double& d, double& d2) {
  add_cone_derivatives_body(begin, end, vc, dvc, alpha, with_second, d, d2);
}
template <class Cone>
COULOMB_TARGET_AVX2 void add_cone_derivatives_avx2(const Cone* begin, const Cone* end, const double* vc,
                                                   const double* dvc, double alpha, bool with_second, double& d,
                                                   double& d2) {
  add_cone_derivatives_body(begin, end, vc, dvc, alpha, with_second, d, d2);
}

}  // namespace

double SapLineSearchFunction::derivative(double alpha, double* second) const {
  const SapProblem& problem = *problem_;
  double d2 = dv_dp_, d = r0_ + alpha * dv_dp_;
  const double* vc = vc_data_;
  const double* dvc = dvc_data_;
  const Cone* begin = cones_.data();
  const Cone* end = begin + cones_.size();
  if (linalg::internal::use_avx2_kernels())
    add_cone_derivatives_avx2(begin, end, vc, dvc, alpha, second != nullptr, d, d2);
  else
    add_cone_derivatives_baseline(begin, end, vc, dvc, alpha, second != nullptr, d, d2);
  const double* g = gamma_.data();
  for (int i : others_) {
    const SapConstraint& c = problem.constraint(i);
    const int r = problem.row_start(i), n = c.num_rows();
    for (int a = r; a < r + n; ++a) vc_alpha_[a] = vc[a] + alpha * dvc[a];
    double curvature = 0.0;
    c.calc_along(vc_alpha_.segment(r, n), Eigen::Map<const Eigen::VectorXd>(dvc + r, n), gamma_.segment(r, n),
                 second != nullptr ? &curvature : nullptr);
    d2 += curvature;
    for (int a = r; a < r + n; ++a) d -= dvc[a] * g[a];
  }
  if (second != nullptr) *second = d2;
  return d;
}

LineSearchOutcome exact_line_search(const SapLineSearchFunction& f, double alpha_max, double f_tolerance,
                                    int max_iterations, double d0_given) {
  LineSearchOutcome out;
  const double d0 = std::isnan(d0_given) ? f.derivative(0.0) : d0_given;
  if (!(d0 < 0.0)) {
    out.descent = false;
    return out;
  }
  double d2_max = 0.0;
  const double d_max = f.derivative(alpha_max, &d2_max);
  out.iterations = 1;
  if (d_max <= 0.0) {  // ℓ still decreasing at α_max: take it (digest §3.3 [ext])
    out.alpha = alpha_max;
    return out;
  }
  // rtsafe on ℓ'(α): bracket [lo, hi] with ℓ'(lo) < 0 < ℓ'(hi). First guess: the Newton step
  // from 0 with the curvature at α_max (exact for a quadratic ℓ, giving α = 1 in stiction).
  double lo = 0.0, hi = alpha_max;
  double x = std::min(-d0 / d2_max, alpha_max);
  if (!(x > 0.0)) x = 0.5 * alpha_max;
  double dx_old = hi - lo, dx = dx_old;
  const double tolerance = f_tolerance * std::abs(d0);
  for (int it = 0; it < max_iterations; ++it) {
    double d2 = 0.0;
    const double d = f.derivative(x, &d2);
    ++out.iterations;
    if (std::abs(d) <= tolerance) break;
    if (d < 0.0) lo = x; else hi = x;
    // Newton step if it stays inside the bracket and shrinks fast enough, else bisection.
    const bool newton_ok = d2 > 0.0 && ((x - d / d2) - lo) * ((x - d / d2) - hi) < 0.0 &&
                           std::abs(2.0 * d) <= std::abs(dx_old * d2);
    dx_old = dx;
    if (newton_ok) {
      dx = d / d2;
      x -= dx;
    } else {
      dx = 0.5 * (hi - lo);
      x = lo + dx;
    }
    if (hi - lo <= 4.0 * std::numeric_limits<double>::epsilon() * alpha_max) break;
  }
  out.alpha = x;
  return out;
}

LineSearchOutcome backtracking_line_search(const SapLineSearchFunction& f, double alpha_max, double rho, double c,
                                           int max_iterations) {
  LineSearchOutcome out;
  const double d0 = f.derivative(0.0);
  if (!(d0 < 0.0)) {
    out.descent = false;
    return out;
  }
  const double ell0 = f.cost(0.0);
  double alpha = alpha_max;
  for (int it = 0; it < max_iterations; ++it) {
    ++out.iterations;
    if (f.cost(alpha) < ell0 + c * alpha * d0) break;
    alpha *= rho;
  }
  out.alpha = alpha;
  return out;
}

}  // namespace coulomb::solvers::sap
