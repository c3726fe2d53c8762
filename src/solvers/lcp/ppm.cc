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

// The ratio test of the dependent-row exchange (ModifiedPpm, see ppm.h): the row a of B̄ with
// y_a > 0 that minimizes max(z†_a, 0) / y_a, so that z_B̄ ← z† − t y, z_i ← t stays ≥ 0; −1 if
// no y_a is positive (beyond 1e-12 of ‖y‖∞).
template <typename Z, typename Y>
int exchange_row(const Z& z_dag, const Y& y, int k) {
  int j_out = -1;
  double best = 0.0;
  const double ytol = 1e-12 * std::max(1.0, y.head(k).cwiseAbs().maxCoeff());
  for (int a = 0; a < k; ++a)
    if (y(a) > ytol) {
      const double ratio = std::max(z_dag(a), 0.0) / y(a);
      if (j_out < 0 || ratio < best) {
        best = ratio;
        j_out = a;
      }
    }
  return j_out;
}

double complementarity(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w) {
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
  Workspace ws;  // the by-value API: its own scratch, so it stays const and thread-safe
  PpmResult res;
  solve_incremental(parameters_, ws, N, Gamma, v_star, b, res, warm_non_basic);
  return res;
}

void ModifiedPpm::solve(const Eigen::MatrixXd& N, const Eigen::MatrixXd& Gamma,
                        const Eigen::VectorXd& v_star, const Eigen::VectorXd& b, PpmResult& result,
                        const std::vector<int>& warm_non_basic) {
  solve_incremental(parameters_, workspace_, N, Gamma, v_star, b, result, warm_non_basic);
}

void ModifiedPpm::Workspace::reserve(int n, int m) {
  if (n > n_capacity) {
    r.resize(n);
    w_dag.resize(n);
    bar.reserve(n);
    in_bar.resize(n, 0);
    ignore.resize(n, 0);
    seen.resize(n, 0);
    n_capacity = n;
  }
  if (m > m_capacity) {
    a_dag.resize(m);
    g.resize(m);
    ni.resize(m);
    m_capacity = m;
  }
  const int k = std::min(n_capacity, m_capacity);
  if (k > factor.capacity() || gamma_nt.rows() < m_capacity) {
    factor.reserve(k);
    gamma_nt.resize(m_capacity, k);
    z_dag.resize(k);
    a_bar.resize(k);
    u.resize(k);
    y.resize(k);
  }
}

// Algorithm 2 with the incremental factor; every branch and test as in the operator version
// below (which refactors), so the two give the same iterates up to round-off.
void ModifiedPpm::solve_incremental(const PpmParameters& prm, Workspace& ws, const Eigen::MatrixXd& N,
                                    const Eigen::MatrixXd& Gamma, const Eigen::VectorXd& v_star,
                                    const Eigen::VectorXd& b, PpmResult& res,
                                    const std::vector<int>& warm_non_basic) {
  const Eigen::Index n = N.rows(), m = N.cols();
  if (Gamma.rows() != m || Gamma.cols() != m)
    bad("Gamma", "must be m x m with m = N.cols() = " + std::to_string(m) + ", got " +
                     dims(Gamma.rows(), Gamma.cols()));
  if (!Gamma.allFinite()) bad("Gamma", "has non-finite entries");
  if (v_star.size() != m)
    bad("v_star", "must have size m = N.cols() = " + std::to_string(m) + ", got " +
                      std::to_string(v_star.size()));
  if (b.size() != 0 && b.size() != n)
    bad("b", "must be empty or have size n = N.rows() = " + std::to_string(n) + ", got " +
                 std::to_string(b.size()));
  if (!N.allFinite()) bad("N", "has non-finite entries");
  if (!v_star.allFinite()) bad("v_star", "has non-finite entries");
  if (!b.allFinite()) bad("b", "has non-finite entries");
  const bool has_b = b.size() != 0;
  ws.reserve(static_cast<int>(n), static_cast<int>(m));

  // B̄ from the warm start (line 6) BEFORE touching res: warm_non_basic may be res.non_basic.
  std::vector<int>& bar = ws.bar;
  bar.clear();
  for (int i : warm_non_basic) {
    if (i < 0 || i >= n || ws.seen[i]) continue;
    ws.seen[i] = 1;
    bar.push_back(i);
  }
  for (int i : bar) ws.seen[i] = 0;
  bool warm = !warm_non_basic.empty();

  res.status = PpmStatus::kNumericalError;
  res.pivots = 0;
  res.complementarity = 0.0;
  res.non_basic.clear();
  res.non_basic.reserve(n);
  auto r = ws.r.head(n);
  r.noalias() = N * v_star;  // line 2 (+ the offset)
  if (has_b) r += b;
  res.z.setZero(n);
  res.w = r;
  const double r_scale = std::max(1.0, n ? r.cwiseAbs().maxCoeff() : 0.0);
  const double tol = prm.tolerance * r_scale;
  Eigen::Index i_min = 0;
  if (n == 0 || r.minCoeff(&i_min) >= -tol) {  // lines 3-4
    res.status = PpmStatus::kTrivial;
    return;
  }
  if (bar.empty()) bar.push_back(static_cast<int>(i_min));  // line 7
  std::fill_n(ws.in_bar.begin(), n, 0);
  std::fill_n(ws.ignore.begin(), n, 0);
  for (int i : bar) ws.in_bar[i] = 1;

  IncrementalLdlt& F = ws.factor;
  auto g = ws.g.head(m);
  auto ni = ws.ni.head(m);
  double a_ii = 0.0;
  // For row i: N_iᵀ, g = Γ N_iᵀ, a_ii = N_i Γ N_iᵀ, a_B̄i = N_B̄ Γ N_iᵀ, u = L⁻¹ a_B̄i; returns the
  // Schur complement a_ii − a_iB̄ A⁻¹ a_B̄i (the pivot appending i would give).
  auto prepare_row = [&](int i) {
    const int k = F.size();
    ni = N.row(i).transpose();
    g.noalias() = Gamma * ni;
    a_ii = ni.dot(g);
    ws.a_bar.head(k).noalias() = ws.gamma_nt.topLeftCorner(m, k).transpose() * ni;
    return F.schur_complement(ws.a_bar.head(k), a_ii, ws.u.head(k));
  };
  // Appends row i (prepared against the current factor) at the end of B̄.
  auto append_prepared = [&](int i, double schur) {
    const int k = F.size();
    F.append(ws.u.head(k), schur);
    ws.gamma_nt.col(k).head(m) = g;
    bar.push_back(i);
    ws.in_bar[i] = 1;
  };
  // Removes position j of B̄ (factor row, Γ N_jᵀ column, index).
  bool updated = false;  // the factor has had a removal since it was last built from scratch
  auto remove_at = [&](int j) {
    const int k = F.size();
    F.remove(j);
    for (int c = j + 1; c < k; ++c) ws.gamma_nt.col(c - 1).head(m) = ws.gamma_nt.col(c).head(m);
    ws.in_bar[bar[j]] = 0;
    bar.erase(bar.begin() + j);
    updated = true;
  };
  // The factor of the current B̄ from scratch (warm start / cold restart). False when B̄ has more
  // than m rows or a pivot is not positive (A singular: its leading block is).
  auto build = [&]() {
    updated = false;
    F.clear();
    const int k = static_cast<int>(bar.size());
    if (k > m) return false;
    for (int a = 0; a < k; ++a) {
      const double d = prepare_row(bar[a]);
      F.append(ws.u.head(a), d);
      ws.gamma_nt.col(a).head(m) = g;
      if (!(d > 0.0)) return false;
    }
    return true;
  };
  bool factor_ok = build();

  auto w_dag = ws.w_dag.head(n);
  auto a_dag = ws.a_dag.head(m);
  for (int it = 1;; ++it) {
    const int k = static_cast<int>(bar.size());
    auto z_dag = ws.z_dag.head(k);
    a_dag = v_star;
    if (k > 0) {
      if (!factor_ok || F.singular(prm.singular_tolerance)) {
        if (warm) {  // a stale warm start: restart cold
          warm = false;
          for (int i : bar) ws.in_bar[i] = 0;
          bar.assign(1, static_cast<int>(i_min));
          ws.in_bar[i_min] = 1;
          factor_ok = build();
          continue;
        }
        res.status = PpmStatus::kSingularBlock;
        res.pivots = it;
        res.non_basic.assign(bar.begin(), bar.end());
        res.complementarity = complementarity(res.z, res.w);
        return;
      }
      for (int a = 0; a < k; ++a) z_dag(a) = -r(bar[a]);
      F.solve_in_place(z_dag);                                           // line 12
      a_dag.noalias() += ws.gamma_nt.topLeftCorner(m, k) * z_dag;       // line 13
    }
    warm = false;
    w_dag.noalias() = N * a_dag;  // line 14 (+ the offset)
    if (has_b) w_dag += b;
    if (k > 0) {
      // w†_B̄ = c + A z† is zero in exact arithmetic: its size is the solve's residual. When it
      // is not negligible against the tolerance (ill-conditioned A; an updated factor carries
      // more round-off than a fresh one), one step of iterative refinement, with the true A
      // applied through Γ N_B̄ᵀ and N: z† −= A⁻¹ w†_B̄. O(k² + m k + n m), only then.
      double residual = 0.0;
      for (int a = 0; a < k; ++a) residual = std::max(residual, std::abs(w_dag(bar[a])));
      if (residual > 1e-3 * tol) {
        auto dz = ws.y.head(k);
        for (int a = 0; a < k; ++a) dz(a) = w_dag(bar[a]);
        F.solve_in_place(dz);
        z_dag -= dz;
        g.noalias() = ws.gamma_nt.topLeftCorner(m, k) * dz;
        a_dag -= g;
        w_dag.noalias() -= N * g;
      }
    }
    if (!z_dag.allFinite() || !w_dag.allFinite()) {
      res.status = PpmStatus::kNumericalError;
      res.pivots = it;
      res.non_basic.assign(bar.begin(), bar.end());
      return;
    }
    // Current iterate (z on B̄, w on B).
    res.z.setZero();
    for (int a = 0; a < k; ++a) res.z(bar[a]) = z_dag(a);
    res.w = w_dag;
    for (int i : bar) res.w(i) = 0.0;
    res.pivots = it;
    res.non_basic.assign(bar.begin(), bar.end());

    int i_enter = -1;  // line 16: argmin over the basic indices
    double w_min = -tol;
    for (int i = 0; i < n; ++i)
      if (!ws.in_bar[i] && !ws.ignore[i] && w_dag(i) < w_min) {
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
      if (updated) {
        // Accept only an iterate from a factor built from scratch in B̄ order: the one a warm
        // start from the returned B̄ computes, so re-solving the same data reproduces z exactly.
        // Re-evaluated (not counted as an iteration); O(k (m² + m k + k²)) once.
        factor_ok = build();
        --it;
        continue;
      }
      res.status = PpmStatus::kSolved;
      res.complementarity = complementarity(res.z, w_dag);
      return;
    }
    if (it >= prm.max_pivots) {
      res.status = PpmStatus::kMaxPivots;
      res.complementarity = complementarity(res.z, res.w);
      return;
    }
    if (it > 2 * n + 20) {  // cycle guard: least-index rule, one flip (see the operator version)
      i_enter = -1;
      for (int i = 0; i < n && i_enter < 0; ++i)
        if (!ws.in_bar[i] && !ws.ignore[i] && w_dag(i) < -tol) i_enter = i;
      j_leave = -1;
      for (int a = 0; a < k; ++a)
        if (z_dag(a) < -tol && (j_leave < 0 || bar[a] < bar[j_leave])) j_leave = a;
      if (i_enter >= 0 && j_leave >= 0) (bar[j_leave] < i_enter ? i_enter : j_leave) = -1;
    }
    double schur = 0.0;
    bool prepared = false;
    if (i_enter >= 0 && k > 0) {
      // Is row i dependent on B̄ in the Γ metric? Schur s = a_ii − a_iB̄ A⁻¹ a_B̄i from the same
      // forward solve that appending needs. With |B̄| = m every row is (A is at most m × m).
      schur = prepare_row(i_enter);
      prepared = true;
      if (k >= m || !(schur > prm.dependent_tolerance * std::max(a_ii, 0.0))) {
        if (j_leave >= 0) {  // first drop the negative z† (line 19), re-evaluate
          std::fill_n(ws.ignore.begin(), n, 0);
          remove_at(j_leave);
          continue;
        }
        // Exchange i with the ratio-test row of B̄ (v⁺ unchanged, z stays ≥ 0); y = A⁻¹ a_B̄i.
        auto y = ws.y.head(k);
        F.solve_from_forward(ws.u.head(k), y);
        const int j_out = exchange_row(z_dag, y, k);
        if (j_out < 0 && w_dag(i_enter) >= -1e-12 * (1.0 + y.lpNorm<1>()) * r_scale) {
          ws.ignore[i_enter] = 1;  // round-off negative w of a dependent row: look elsewhere
          continue;
        }
        if (j_out < 0) {  // w_i < 0 cannot be raised: infeasible LCP
          res.status = PpmStatus::kSingularBlock;
          res.complementarity = complementarity(res.z, res.w);
          return;
        }
        std::fill_n(ws.ignore.begin(), n, 0);
        remove_at(j_out);
        append_prepared(i_enter, prepare_row(i_enter));  // against the reduced factor
        continue;
      }
    }
    std::fill_n(ws.ignore.begin(), n, 0);
    if (i_enter >= 0) {  // line 31: append at the END so B̄(j) still names the old element
      append_prepared(i_enter, prepared ? schur : prepare_row(i_enter));
    }
    if (j_leave >= 0) remove_at(j_leave);  // lines 19 / 34
  }
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
        const int j_out = exchange_row(z_dag, y, k);
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
