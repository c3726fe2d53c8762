#include "coulomb/solvers/lcp/ppm.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <Eigen/Cholesky>
#include <Eigen/LU>

namespace coulomb::solvers::lcp {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::invalid_argument("lcp::ppm: " + field + " " + what);
}

std::string dims(Eigen::Index r, Eigen::Index c) {
  std::ostringstream s;
  s << r << " x " << c;
  return s.str();
}

void check_parameters(const PpmParameters& p) {
  if (!(p.tolerance >= 0.0) || !std::isfinite(p.tolerance))
    bad("parameters.tolerance", "must be finite and >= 0, got " + std::to_string(p.tolerance));
  if (p.max_pivots < 0)
    bad("parameters.max_pivots", "must be >= 0, got " + std::to_string(p.max_pivots));
  if (!(p.dependent_tolerance >= 0.0) || !std::isfinite(p.dependent_tolerance))
    bad("parameters.dependent_tolerance",
        "must be finite and >= 0, got " + std::to_string(p.dependent_tolerance));
  if (!(p.singular_tolerance >= 0.0) || !std::isfinite(p.singular_tolerance))
    bad("parameters.singular_tolerance",
        "must be finite and >= 0, got " + std::to_string(p.singular_tolerance));
}

// Valid, de-duplicated warm-start indices in their given order.
std::vector<int> filter_warm(const std::vector<int>& warm, int n) {
  std::vector<int> out;
  std::vector<char> seen(n, 0);
  for (int i : warm) {
    if (i < 0 || i >= n || seen[i]) continue;
    seen[i] = 1;
    out.push_back(i);
  }
  return out;
}

double complementarity(const Eigen::VectorXd& z, const Eigen::VectorXd& w) {
  return z.size() == 0 ? 0.0 : z.cwiseProduct(w).cwiseAbs().maxCoeff();
}

}  // namespace

std::string to_string(PpmStatus status) {
  switch (status) {
    case PpmStatus::kSolved: return "solved";
    case PpmStatus::kTrivial: return "trivial";
    case PpmStatus::kMaxPivots: return "max_pivots";
    case PpmStatus::kSingularBlock: return "singular_block";
    case PpmStatus::kNumericalError: return "numerical_error";
  }
  return "unknown";
}

PrincipalPivotingSolver::PrincipalPivotingSolver(PpmParameters parameters)
    : parameters_(parameters) {
  check_parameters(parameters_);
}

PpmResult PrincipalPivotingSolver::solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r,
                                         const std::vector<int>& warm_non_basic) const {
  const Eigen::Index n = r.size();
  if (Q.rows() != n || Q.cols() != n)
    bad("Q", "must be n x n with n = r.size() = " + std::to_string(n) + ", got " +
                 dims(Q.rows(), Q.cols()));
  if (!Q.allFinite()) bad("Q", "has non-finite entries");
  if (!r.allFinite()) bad("r", "has non-finite entries");

  PpmResult res;
  res.z = Eigen::VectorXd::Zero(n);
  res.w = r;
  const double tol = parameters_.tolerance * std::max(1.0, n ? r.cwiseAbs().maxCoeff() : 0.0);
  if (n == 0 || r.minCoeff() >= -tol) {
    res.status = PpmStatus::kTrivial;
    res.complementarity = 0.0;
    return res;
  }

  std::vector<char> in_bar(n, 0);
  for (int i : filter_warm(warm_non_basic, static_cast<int>(n))) in_bar[i] = 1;

  std::vector<int> idx;
  for (int pivots = 0;; ++pivots) {
    idx.clear();
    for (int i = 0; i < n; ++i)
      if (in_bar[i]) idx.push_back(i);
    const int k = static_cast<int>(idx.size());
    res.z.setZero();
    if (k > 0) {
      Eigen::MatrixXd A(k, k);
      Eigen::VectorXd rb(k);
      for (int a = 0; a < k; ++a) {
        rb(a) = r(idx[a]);
        for (int c = 0; c < k; ++c) A(a, c) = Q(idx[a], idx[c]);
      }
      Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
      const double pmax = lu.maxPivot();
      const double pmin = lu.matrixLU().diagonal().cwiseAbs().minCoeff();
      if (!(pmin > parameters_.singular_tolerance * pmax)) {
        res.status = PpmStatus::kSingularBlock;
        res.pivots = pivots;
        res.non_basic = idx;
        res.w = Q * res.z + r;
        res.complementarity = complementarity(res.z, res.w);
        return res;
      }
      const Eigen::VectorXd zb = lu.solve(-rb);
      for (int a = 0; a < k; ++a) res.z(idx[a]) = zb(a);
    }
    res.w = Q * res.z + r;
    for (int i : idx) res.w(i) = 0.0;
    res.pivots = pivots;
    res.non_basic = idx;
    if (!res.z.allFinite() || !res.w.allFinite()) {
      res.status = PpmStatus::kNumericalError;
      return res;
    }
    // Murty's least-index rule: flip the smallest index whose computed variable is negative.
    int flip = -1;
    for (int i = 0; i < n && flip < 0; ++i)
      if ((in_bar[i] ? res.z(i) : res.w(i)) < -tol) flip = i;
    if (flip < 0) {
      res.status = PpmStatus::kSolved;
      // Report the true residual w = Qz + r (not the zeroed one) and clip round-off.
      res.w = Q * res.z + r;
      for (int i : idx) res.w(i) = 0.0;
      res.complementarity = complementarity(res.z, Q * res.z + r);
      return res;
    }
    if (pivots >= parameters_.max_pivots) {
      res.status = PpmStatus::kMaxPivots;
      res.complementarity = complementarity(res.z, res.w);
      return res;
    }
    in_bar[flip] = !in_bar[flip];
  }
}

ModifiedPpm::ModifiedPpm(PpmParameters parameters) : parameters_(parameters) {
  check_parameters(parameters_);
}

PpmResult ModifiedPpm::solve(const Eigen::MatrixXd& N, const Eigen::MatrixXd& Gamma,
                             const Eigen::VectorXd& v_star, const Eigen::VectorXd& b,
                             const std::vector<int>& warm_non_basic) const {
  const Eigen::Index m = N.cols();
  if (Gamma.rows() != m || Gamma.cols() != m)
    bad("Gamma", "must be m x m with m = N.cols() = " + std::to_string(m) + ", got " +
                     dims(Gamma.rows(), Gamma.cols()));
  if (!Gamma.allFinite()) bad("Gamma", "has non-finite entries");
  return solve(
      N, [&Gamma](const Eigen::MatrixXd& X) -> Eigen::MatrixXd { return Gamma * X; }, v_star,
      b, warm_non_basic);
}

PpmResult ModifiedPpm::solve(const Eigen::MatrixXd& N, const GammaOperator& apply_gamma,
                             const Eigen::VectorXd& v_star, const Eigen::VectorXd& b_in,
                             const std::vector<int>& warm_non_basic) const {
  const Eigen::Index n = N.rows(), m = N.cols();
  if (!apply_gamma) bad("apply_gamma", "is empty");
  if (v_star.size() != m)
    bad("v_star", "must have size m = N.cols() = " + std::to_string(m) + ", got " +
                      std::to_string(v_star.size()));
  if (b_in.size() != 0 && b_in.size() != n)
    bad("b", "must be empty or have size n = N.rows() = " + std::to_string(n) + ", got " +
                 std::to_string(b_in.size()));
  if (!N.allFinite()) bad("N", "has non-finite entries");
  if (!v_star.allFinite()) bad("v_star", "has non-finite entries");
  if (!b_in.allFinite()) bad("b", "has non-finite entries");
  const Eigen::VectorXd b = b_in.size() == 0 ? Eigen::VectorXd::Zero(n) : b_in;

  PpmResult res;
  const Eigen::VectorXd r = N * v_star + b;  // line 2 (+ the offset)
  res.z = Eigen::VectorXd::Zero(n);
  res.w = r;
  const double r_scale = std::max(1.0, n ? r.cwiseAbs().maxCoeff() : 0.0);
  const double tol = parameters_.tolerance * r_scale;
  Eigen::Index i_min = 0;
  if (n == 0 || r.minCoeff(&i_min) >= -tol) {  // lines 3-4
    res.status = PpmStatus::kTrivial;
    return res;
  }
  std::vector<int> bar = filter_warm(warm_non_basic, static_cast<int>(n));  // line 6
  if (bar.empty()) bar.push_back(static_cast<int>(i_min));                // line 7
  std::vector<char> in_bar(n, 0);
  for (int i : bar) in_bar[i] = 1;

  Eigen::VectorXd w_dag(n);
  std::vector<char> ignore(n, 0);  // dependent rows whose negative w is round-off (until B̄ changes)
  bool warm = !warm_non_basic.empty();
  for (int it = 1;; ++it) {
    const int k = static_cast<int>(bar.size());
    Eigen::MatrixXd NB(k, m);
    Eigen::VectorXd c(k);
    for (int a = 0; a < k; ++a) {
      NB.row(a) = N.row(bar[a]);
      c(a) = r(bar[a]);
    }
    Eigen::VectorXd z_dag(k);
    Eigen::VectorXd a_dag = v_star;
    Eigen::MatrixXd GNt(m, k);
    Eigen::LDLT<Eigen::MatrixXd> ldlt;
    if (k > 0) {
      GNt = apply_gamma(NB.transpose());  // m x k
      if (GNt.rows() != m || GNt.cols() != k) bad("apply_gamma", "returned a wrongly sized result");
      Eigen::MatrixXd A = NB * GNt;  // line 11, k x k
      A = 0.5 * (A + A.transpose()).eval();
      ldlt.compute(A);
      const Eigen::VectorXd D = ldlt.vectorD();
      const double dmax = D.cwiseAbs().maxCoeff();
      if (!(D.minCoeff() > parameters_.singular_tolerance * dmax)) {
        if (warm) {  // a stale warm start: restart cold
          warm = false;
          bar.assign(1, static_cast<int>(i_min));
          std::fill(in_bar.begin(), in_bar.end(), 0);
          in_bar[i_min] = 1;
          continue;
        }
        res.status = PpmStatus::kSingularBlock;
        res.pivots = it;
        res.non_basic = bar;
        res.complementarity = complementarity(res.z, res.w);
        return res;
      }
      z_dag = ldlt.solve(-c);     // line 12
      a_dag += GNt * z_dag;       // line 13
    }
    warm = false;
    w_dag = N * a_dag + b;        // line 14 (+ the offset)
    if (!z_dag.allFinite() || !w_dag.allFinite()) {
      res.status = PpmStatus::kNumericalError;
      res.pivots = it;
      res.non_basic = bar;
      return res;
    }
    // Current iterate (z on B̄, w on B).
    res.z.setZero();
    for (int a = 0; a < k; ++a) res.z(bar[a]) = z_dag(a);
    res.w = w_dag;
    for (int i : bar) res.w(i) = 0.0;
    res.pivots = it;
    res.non_basic = bar;

    int i_enter = -1;  // line 16: argmin over the basic indices
    double w_min = -tol;
    for (int i = 0; i < n; ++i)
      if (!in_bar[i] && !ignore[i] && w_dag(i) < w_min) {
        w_min = w_dag(i);
        i_enter = i;
      }
    int j_leave = -1;  // lines 18 / 33: argmin of the OLD z†
    double z_min = -tol;
    for (int a = 0; a < k; ++a)
      if (z_dag(a) < z_min) {
        z_min = z_dag(a);
        j_leave = a;
      }
    if (i_enter < 0 && j_leave < 0) {  // line 24
      res.status = PpmStatus::kSolved;
      res.complementarity = complementarity(res.z, w_dag);
      return res;
    }
    if (it >= parameters_.max_pivots) {
      res.status = PpmStatus::kMaxPivots;
      res.complementarity = complementarity(res.z, res.w);
      return res;
    }
    if (it > 2 * n + 20) {
      // Cycle guard: the argmin rule can cycle on degenerate PSD problems. Switch to the
      // least-index rule with ONE flip per iteration (the smallest index whose computed
      // variable is negative), as in Murty's rule / the least-index criss-cross method.
      i_enter = -1;
      for (int i = 0; i < n && i_enter < 0; ++i)
        if (!in_bar[i] && !ignore[i] && w_dag(i) < -tol) i_enter = i;
      j_leave = -1;
      for (int a = 0; a < k; ++a)
        if (z_dag(a) < -tol && (j_leave < 0 || bar[a] < bar[j_leave])) j_leave = a;
      if (i_enter >= 0 && j_leave >= 0) (bar[j_leave] < i_enter ? i_enter : j_leave) = -1;
    }
    if (i_enter >= 0 && k > 0) {
      // Is row i dependent on B̄ in the Γ metric? y = A⁻¹ a_B̄i, Schur s = a_ii − a_iB̄ y.
      const Eigen::VectorXd Ni = N.row(i_enter).transpose();
      const Eigen::VectorXd a_Bi = GNt.transpose() * Ni;
      const double a_ii = Ni.dot(apply_gamma(Ni).col(0));
      const Eigen::VectorXd y = ldlt.solve(a_Bi);
      const double schur = a_ii - a_Bi.dot(y);
      if (!(schur > parameters_.dependent_tolerance * std::max(a_ii, 0.0))) {
        if (j_leave >= 0) {  // first drop the negative z† (line 19), re-evaluate
          std::fill(ignore.begin(), ignore.end(), 0);
          in_bar[bar[j_leave]] = 0;
          bar.erase(bar.begin() + j_leave);
          continue;
        }
        // Exchange i with the ratio-test row of B̄ (v⁺ unchanged, z stays ≥ 0).
        int j_out = -1;
        double best = 0.0;
        const double ytol = 1e-12 * std::max(1.0, y.cwiseAbs().maxCoeff());
        for (int a = 0; a < k; ++a)
          if (y(a) > ytol) {
            const double ratio = std::max(z_dag(a), 0.0) / y(a);
            if (j_out < 0 || ratio < best) {
              best = ratio;
              j_out = a;
            }
          }
        if (j_out < 0 && w_dag(i_enter) >= -1e-12 * (1.0 + y.lpNorm<1>()) * r_scale) {
          // w_i of a dependent row is b_i − yᵀ b_B̄ up to round-off ~ ε ‖y‖₁ ‖r‖∞: treat a
          // negative value that small as zero and look at the other indices.
          ignore[i_enter] = 1;
          continue;
        }
        if (j_out < 0) {  // w_i < 0 cannot be raised: infeasible LCP
          res.status = PpmStatus::kSingularBlock;
          res.complementarity = complementarity(res.z, res.w);
          return res;
        }
        std::fill(ignore.begin(), ignore.end(), 0);
        in_bar[bar[j_out]] = 0;
        bar.erase(bar.begin() + j_out);
        bar.push_back(i_enter);
        in_bar[i_enter] = 1;
        continue;
      }
    }
    std::fill(ignore.begin(), ignore.end(), 0);
    if (i_enter >= 0) {  // line 31: append at the END so B̄(j) still names the old element
      bar.push_back(i_enter);
      in_bar[i_enter] = 1;
    }
    if (j_leave >= 0) {  // lines 19 / 34
      in_bar[bar[j_leave]] = 0;
      bar.erase(bar.begin() + j_leave);
    }
  }
}

}  // namespace coulomb::solvers::lcp
