#include "coulomb/solvers/lcp/lemke.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>


namespace coulomb::solvers::lcp {

const char* to_string(LemkeStatus status) {
  switch (status) {
    case LemkeStatus::kSolved: return "solved";
    case LemkeStatus::kTrivial: return "trivial";
    case LemkeStatus::kRayTermination: return "ray_termination";
    case LemkeStatus::kMaxPivots: return "max_pivots";
    case LemkeStatus::kNumericalError: return "numerical_error";
  }
  return "unknown";
}

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument("LemkeSolver: " + message); }

void check_parameter(const char* name, double value, bool positive) {
  if (!std::isfinite(value) || value < 0.0 || (positive && value == 0.0)) {
    std::ostringstream s;
    s << "parameter " << name << " = " << value << " must be finite and " << (positive ? "> 0" : "≥ 0");
    fail(s.str());
  }
}

template <typename Derived>  // not const MatrixXd&: a VectorXd argument would be copied (allocation)
void check_finite(const char* name, const Eigen::MatrixBase<Derived>& m) {
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (!std::isfinite(m(i, j))) {
        std::ostringstream s;
        s << name << "(" << i;
        if (m.cols() > 1) s << ", " << j;
        s << ") = " << m(i, j) << " is not finite";
        fail(s.str());
      }
}

double natural_residual(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w) {
  double res = 0.0;
  for (Eigen::Index i = 0; i < z.size(); ++i) res = std::max(res, std::abs(std::min(z(i), w(i))));
  return res;
}

// w = (Q + εI) z + r without a temporary.
void residual_w(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, double epsilon,
                const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> w) {
  w.noalias() = Q * z;
  w += r;
  if (epsilon != 0.0) w += epsilon * z;
}

// z on the index set `alpha` from (Q + εI)_αα z_α = −r_α, zero elsewhere (z: n entries). False if
// the block is singular or the result is not finite. Negative entries are kept (the residual test
// sees them). LU with complete pivoting in the caller's storage `lu` (≥ k × k), `x` (≥ k) and the
// permutations (capacity ≥ k); the invertibility test is Eigen::FullPivLU's default one (every
// pivot > k · machine ε · the largest pivot), so no allocation.
bool principal_solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, double epsilon,
                     const std::vector<int>& alpha, Eigen::MatrixXd& lu, Eigen::VectorXd& x,
                     std::vector<int>& row_perm, std::vector<int>& col_perm,
                     Eigen::Ref<Eigen::VectorXd> z) {
  const int k = static_cast<int>(alpha.size());
  z.setZero();
  if (k == 0) return true;
  auto A = lu.topLeftCorner(k, k);
  for (int c = 0; c < k; ++c)
    for (int a = 0; a < k; ++a) A(a, c) = Q(alpha[a], alpha[c]);
  if (epsilon != 0.0) A.diagonal().array() += epsilon;
  row_perm.resize(k);
  col_perm.resize(k);
  for (int a = 0; a < k; ++a) row_perm[a] = col_perm[a] = a;
  double max_pivot = 0.0;
  for (int s = 0; s < k; ++s) {
    Eigen::Index pi = 0, pj = 0;
    const double biggest = A.bottomRightCorner(k - s, k - s).cwiseAbs().maxCoeff(&pi, &pj);
    if (!(biggest > 0.0)) return false;  // an exactly zero (or NaN) corner: rank < k
    max_pivot = std::max(max_pivot, biggest);
    pi += s;
    pj += s;
    if (pi != s) {
      A.row(s).swap(A.row(pi));
      std::swap(row_perm[s], row_perm[pi]);
    }
    if (pj != s) {
      A.col(s).swap(A.col(pj));
      std::swap(col_perm[s], col_perm[pj]);
    }
    const int t = k - s - 1;
    if (t > 0) {
      A.col(s).tail(t) /= A(s, s);
      A.bottomRightCorner(t, t).noalias() -= A.col(s).tail(t) * A.row(s).tail(t);
    }
  }
  const double threshold = std::numeric_limits<double>::epsilon() * k * max_pivot;
  for (int s = 0; s < k; ++s)
    if (!(std::abs(A(s, s)) > threshold)) return false;
  auto y = x.head(k);
  for (int s = 0; s < k; ++s) y(s) = -r(alpha[row_perm[s]]);
  A.triangularView<Eigen::UnitLower>().solveInPlace(y);
  A.triangularView<Eigen::Upper>().solveInPlace(y);
  if (!y.allFinite()) return false;
  for (int s = 0; s < k; ++s) z(alpha[col_perm[s]]) = y(s);
  return true;
}

bool failed(LemkeStatus s) {
  return s == LemkeStatus::kRayTermination || s == LemkeStatus::kMaxPivots ||
         s == LemkeStatus::kNumericalError;
}

}  // namespace

void LemkeSolver::Workspace::reserve(int n) {
  if (n <= capacity) return;
  T.resize(n, 2 * n + 2);
  lu.resize(n, n);
  for (Eigen::VectorXd* v : {&z, &w, &zc, &wc, &x, &saved_z, &saved_w, &saved_ray}) v->resize(n);
  for (std::vector<int>* v : {&basis, &tied, &alpha, &row_perm, &col_perm}) v->reserve(n);
  capacity = n;
}

LemkeSolver::LemkeSolver(LemkeParameters parameters) : parameters_(parameters) {
  check_parameter("pivot_tolerance", parameters_.pivot_tolerance, true);
  check_parameter("tolerance", parameters_.tolerance, true);
  check_parameter("ratio_tie_tolerance", parameters_.ratio_tie_tolerance, false);
  check_parameter("regularization_retries", parameters_.regularization_retries, false);
}

LemkeResults LemkeSolver::solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r,
                                const Eigen::VectorXd* z_warm) const {
  Workspace ws;  // the by-value API: its own scratch, so it stays const and thread-safe
  LemkeResults res;
  solve_into(parameters_, ws, Q, r, res, z_warm);
  if (res.status != LemkeStatus::kRayTermination) res.ray.resize(0);
  return res;
}

void LemkeSolver::solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, LemkeResults& results,
                        const Eigen::VectorXd* z_warm) {
  solve_into(parameters_, workspace_, Q, r, results, z_warm);
}

void LemkeSolver::solve_into(const LemkeParameters& prm, Workspace& ws, const Eigen::MatrixXd& Q,
                             const Eigen::VectorXd& r, LemkeResults& res,
                             const Eigen::VectorXd* z_warm) {
  const int n = static_cast<int>(r.size());
  if (Q.rows() != n || Q.cols() != n) {
    std::ostringstream s;
    s << "Q is " << Q.rows() << "×" << Q.cols() << ", expected " << n << "×" << n << " (the size of r)";
    fail(s.str());
  }
  if (z_warm != nullptr && z_warm->size() != n) {
    std::ostringstream s;
    s << "z_warm has size " << z_warm->size() << ", expected " << n << " (the size of r)";
    fail(s.str());
  }
  check_finite("Q", Q);
  check_finite("r", r);
  if (z_warm != nullptr) check_finite("z_warm", *z_warm);
  ws.reserve(n);

  solve_once(prm, ws, Q, r, 0.0, z_warm, res);
  if (prm.regularization_retries <= 0 || !failed(res.status)) return;

  // Regularized retries on (Q + εI, r): keep the plain result to restore if none succeeds.
  ws.saved_z.head(n) = res.z;
  ws.saved_w.head(n) = res.w;
  ws.saved_ray.head(n) = res.ray;
  const LemkeStatus saved_status = res.status;
  const double saved_residual = res.complementarity_residual;
  const bool saved_warm = res.warm_started;
  int total_pivots = res.pivots;
  double epsilon = 1e-20;
  for (int t = 0; t < prm.regularization_retries; ++t, epsilon *= 1e4) {
    solve_once(prm, ws, Q, r, epsilon, nullptr, res);
    total_pivots += res.pivots;
    if (res.status == LemkeStatus::kSolved) {
      // z solves the perturbed problem; report w and the residual of the ORIGINAL one.
      residual_w(Q, r, 0.0, res.z, res.w);
      res.complementarity_residual = natural_residual(res.z, res.w);
      res.regularization = epsilon;
      res.pivots = total_pivots;
      return;
    }
  }
  res.status = saved_status;
  res.z = ws.saved_z.head(n);
  res.w = ws.saved_w.head(n);
  res.ray = ws.saved_ray.head(n);
  res.complementarity_residual = saved_residual;
  res.warm_started = saved_warm;
  res.regularization = 0.0;
  res.pivots = total_pivots;
}

void LemkeSolver::solve_once(const LemkeParameters& prm, Workspace& ws, const Eigen::MatrixXd& Q,
                             const Eigen::VectorXd& r, double epsilon, const Eigen::VectorXd* z_warm,
                             LemkeResults& res) {
  const int n = static_cast<int>(r.size());
  const double accept = prm.tolerance * std::max(1.0, r.size() > 0 ? r.lpNorm<Eigen::Infinity>() : 0.0);
  res.status = LemkeStatus::kNumericalError;
  res.pivots = 0;
  res.warm_started = false;
  res.complementarity_residual = 0.0;
  res.regularization = 0.0;

  // The warm start's basis first: z_warm may alias res.z, so read it before writing res.
  ws.alpha.clear();
  if (z_warm != nullptr)
    for (int i = 0; i < n; ++i)
      if ((*z_warm)(i) > 0.0) ws.alpha.push_back(i);
  res.ray.setZero(n);
  res.z.resize(n);
  res.w.resize(n);

  // Fills z (clamped to ≥ 0), w = (Q + εI) z + r and the residual.
  auto finish = [&](const Eigen::Ref<const Eigen::VectorXd>& z) {
    res.z = z.cwiseMax(0.0);
    residual_w(Q, r, epsilon, res.z, res.w);
    res.complementarity_residual = natural_residual(res.z, res.w);
  };

  // z = 0 is accepted when it meets the acceptance test, i.e. r ≥ −accept (not only r ≥ 0): a
  // round-off negative rᵢ (−1e-16) would otherwise start the pivoting with every zero rᵢ tied
  // with it in the first ratio test (ratio_tie_tolerance is absolute below |r_min| = 1), and the
  // lexicographic choice of the LAST tied row can then end in a secondary ray on a solvable
  // problem (the Coulomb LCP's λ rows have rᵢ = 0 and a column with no blocking entry).
  if (n == 0 || r.minCoeff() >= -accept) {
    res.status = LemkeStatus::kTrivial;
    finish(ws.z.head(n).setZero());
    return;
  }

  if (z_warm != nullptr) {
    auto z = ws.z.head(n);
    auto w = ws.w.head(n);
    if (principal_solve(Q, r, epsilon, ws.alpha, ws.lu, ws.x, ws.row_perm, ws.col_perm, z)) {
      residual_w(Q, r, epsilon, z, w);
      if (natural_residual(z, w) <= accept) {
        res.status = LemkeStatus::kSolved;
        res.warm_started = true;
        finish(z);
        return;
      }
    }
  }

  // Tableau columns: w (0..n−1), z (n..2n−1), z0 (2n), right-hand side (2n+1). It holds
  // B⁻¹ [I, −(Q + εI), −e, r]; the w columns are B⁻¹ itself (the initial basis is I).
  const int z0 = 2 * n;
  const int rhs = 2 * n + 1;
  auto T = ws.T.topLeftCorner(n, 2 * n + 2);
  T.leftCols(n).setIdentity();
  T.middleCols(n, n) = -Q;
  if (epsilon != 0.0) T.middleCols(n, n).diagonal().array() -= epsilon;
  T.col(z0).setConstant(-1.0);
  T.col(rhs) = r;
  std::vector<int>& basis = ws.basis;
  basis.resize(n);
  for (int i = 0; i < n; ++i) basis[i] = i;

  auto pivot = [&](int p, int j) {
    T.row(p) /= T(p, j);
    for (int i = 0; i < n; ++i)
      if (i != p && T(i, j) != 0.0) T.row(i) -= T(i, j) * T.row(p);
    basis[p] = j;
    ++res.pivots;
  };

  const int max_pivots = prm.max_pivots > 0 ? prm.max_pivots : 50 * (n + 1) + 100;

  // First pivot: z0 enters where r is most negative; ties (the perturbed r + (ε, …, εⁿ)) go to
  // the last such row.
  const double rmin = r.minCoeff();
  const double rtie = rmin + prm.ratio_tie_tolerance * std::max(1.0, std::abs(rmin));
  int p = -1;
  for (int i = 0; i < n; ++i)
    if (r(i) <= rtie && (p < 0 || prm.lexicographic)) p = i;  // lexicographic: the last; else the first
  int leaving = basis[p];
  pivot(p, z0);

  std::vector<int>& tied = ws.tied;
  while (true) {
    const int entering = leaving < n ? leaving + n : leaving - n;  // the complement
    const double dmax = T.col(entering).lpNorm<Eigen::Infinity>();
    const double dtol = prm.pivot_tolerance * std::max(1.0, dmax);
    double theta = std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i)
      if (T(i, entering) > dtol) theta = std::min(theta, T(i, rhs) / T(i, entering));
    if (!std::isfinite(theta)) {
      if (theta == std::numeric_limits<double>::infinity()) {
        // Ray termination: no row limits the entering variable. The ray's z direction.
        res.status = LemkeStatus::kRayTermination;
        Eigen::VectorXd& y = res.ray;
        y.setZero();
        if (entering >= n && entering < z0) y(entering - n) = 1.0;
        for (int i = 0; i < n; ++i)
          if (basis[i] >= n && basis[i] < z0) y(basis[i] - n) = -T(i, entering);
        y = y.cwiseMax(0.0);
        const double ymax = y.lpNorm<Eigen::Infinity>();
        if (ymax > 0.0) y /= ymax;
      } else {
        res.status = LemkeStatus::kNumericalError;
      }
      break;
    }
    const double ttie = theta + prm.ratio_tie_tolerance * std::max(1.0, std::abs(theta));
    tied.clear();
    int z0_row = -1;
    for (int i = 0; i < n; ++i)
      if (T(i, entering) > dtol && T(i, rhs) / T(i, entering) <= ttie) {
        tied.push_back(i);
        if (basis[i] == z0) z0_row = i;
      }
    if (z0_row >= 0) {
      p = z0_row;  // z0 can leave: finish
    } else if (!prm.lexicographic || tied.size() == 1) {
      p = tied.front();
    } else {
      // Lexicographic minimum of the rows (B⁻¹)ᵢ / dᵢ over the tied rows, column by column.
      for (int k = 0; k < n && tied.size() > 1; ++k) {
        double best = std::numeric_limits<double>::infinity();
        for (int i : tied) best = std::min(best, T(i, k) / T(i, entering));
        const double btie = best + prm.ratio_tie_tolerance * std::max(1.0, std::abs(best));
        std::erase_if(tied, [&](int i) { return T(i, k) / T(i, entering) > btie; });
      }
      p = tied.front();
    }
    leaving = basis[p];
    pivot(p, entering);
    if (!T.col(rhs).allFinite()) {
      res.status = LemkeStatus::kNumericalError;
      break;
    }
    if (leaving == z0) {
      res.status = LemkeStatus::kSolved;
      break;
    }
    if (res.pivots >= max_pivots) {
      res.status = LemkeStatus::kMaxPivots;
      break;
    }
  }

  // The basic z (finite, or zero).
  auto z = ws.z.head(n);
  z.setZero();
  for (int i = 0; i < n; ++i)
    if (basis[i] >= n && basis[i] < z0) z(basis[i] - n) = T(i, rhs);
  if (!z.allFinite()) z.setZero();
  finish(z);
  if (res.status == LemkeStatus::kSolved) {
    // Polish: recompute the basic z from the principal subsystem of the final complementary
    // basis (removes the round-off the tableau updates accumulated); keep the better one.
    ws.alpha.clear();
    for (int i = 0; i < n; ++i)
      if (basis[i] >= n && basis[i] < z0) ws.alpha.push_back(basis[i] - n);
    std::sort(ws.alpha.begin(), ws.alpha.end());
    auto zc = ws.zc.head(n);
    auto wc = ws.wc.head(n);
    if (principal_solve(Q, r, epsilon, ws.alpha, ws.lu, ws.x, ws.row_perm, ws.col_perm, zc)) {
      zc = zc.cwiseMax(0.0);
      residual_w(Q, r, epsilon, zc, wc);
      const double rp = natural_residual(zc, wc);
      if (rp < res.complementarity_residual) {
        res.z = zc;
        res.w = wc;
        res.complementarity_residual = rp;
      }
    }
    if (res.complementarity_residual > accept) res.status = LemkeStatus::kNumericalError;
  }
}

}  // namespace coulomb::solvers::lcp
