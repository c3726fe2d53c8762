#include "coulomb/solvers/lcp/lemke.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/LU>

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

void check_finite(const char* name, const Eigen::MatrixXd& m) {
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

double natural_residual(const Eigen::VectorXd& z, const Eigen::VectorXd& w) {
  double res = 0.0;
  for (Eigen::Index i = 0; i < z.size(); ++i) res = std::max(res, std::abs(std::min(z(i), w(i))));
  return res;
}

// z ≥ 0 on the index set `alpha` from Q_αα z_α = −r_α, zero elsewhere. False if Q_αα is singular
// or the result is not finite. Negative entries are kept (the residual test sees them).
bool principal_solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, const std::vector<int>& alpha,
                     Eigen::VectorXd& z) {
  const int n = static_cast<int>(r.size());
  const int k = static_cast<int>(alpha.size());
  z.setZero(n);
  if (k == 0) return true;
  Eigen::MatrixXd A(k, k);
  Eigen::VectorXd b(k);
  for (int a = 0; a < k; ++a) {
    b(a) = -r(alpha[a]);
    for (int c = 0; c < k; ++c) A(a, c) = Q(alpha[a], alpha[c]);
  }
  Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
  if (!lu.isInvertible()) return false;
  const Eigen::VectorXd x = lu.solve(b);
  if (!x.allFinite()) return false;
  for (int a = 0; a < k; ++a) z(alpha[a]) = x(a);
  return true;
}

}  // namespace

LemkeSolver::LemkeSolver(LemkeParameters parameters) : parameters_(parameters) {
  check_parameter("pivot_tolerance", parameters_.pivot_tolerance, true);
  check_parameter("tolerance", parameters_.tolerance, true);
  check_parameter("ratio_tie_tolerance", parameters_.ratio_tie_tolerance, false);
}

LemkeResults LemkeSolver::solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r,
                                const Eigen::VectorXd* z_warm) const {
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

  const LemkeParameters& prm = parameters_;
  const double accept = prm.tolerance * std::max(1.0, r.size() > 0 ? r.lpNorm<Eigen::Infinity>() : 0.0);
  LemkeResults res;

  // Fills z (clamped to ≥ 0), w = Qz + r and the residual.
  auto finish = [&](const Eigen::VectorXd& z) {
    res.z = z.cwiseMax(0.0);
    res.w = Q * res.z + r;
    res.complementarity_residual = natural_residual(res.z, res.w);
  };

  if (n == 0 || r.minCoeff() >= 0.0) {
    res.status = LemkeStatus::kTrivial;
    finish(Eigen::VectorXd::Zero(n));
    return res;
  }

  if (z_warm != nullptr) {
    std::vector<int> alpha;
    for (int i = 0; i < n; ++i)
      if ((*z_warm)(i) > 0.0) alpha.push_back(i);
    Eigen::VectorXd z;
    if (principal_solve(Q, r, alpha, z)) {
      const Eigen::VectorXd w = Q * z + r;
      if (natural_residual(z, w) <= accept) {
        res.status = LemkeStatus::kSolved;
        res.warm_started = true;
        finish(z);
        return res;
      }
    }
  }

  // Tableau columns: w (0..n−1), z (n..2n−1), z0 (2n), right-hand side (2n+1). It holds
  // B⁻¹ [I, −Q, −e, r]; the w columns are B⁻¹ itself (the initial basis is I).
  const int z0 = 2 * n;
  const int rhs = 2 * n + 1;
  Eigen::MatrixXd T(n, 2 * n + 2);
  T.leftCols(n).setIdentity();
  T.middleCols(n, n) = -Q;
  T.col(z0).setConstant(-1.0);
  T.col(rhs) = r;
  std::vector<int> basis(n);
  for (int i = 0; i < n; ++i) basis[i] = i;

  auto basic_z = [&]() {
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    for (int i = 0; i < n; ++i)
      if (basis[i] >= n && basis[i] < z0) z(basis[i] - n) = T(i, rhs);
    return z;
  };
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

  std::vector<int> tied;
  tied.reserve(n);
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
        Eigen::VectorXd y = Eigen::VectorXd::Zero(n);
        if (entering >= n && entering < z0) y(entering - n) = 1.0;
        for (int i = 0; i < n; ++i)
          if (basis[i] >= n && basis[i] < z0) y(basis[i] - n) = -T(i, entering);
        y = y.cwiseMax(0.0);
        const double ymax = y.lpNorm<Eigen::Infinity>();
        if (ymax > 0.0) y /= ymax;
        res.ray = y;
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

  Eigen::VectorXd z = basic_z();
  if (!z.allFinite()) z.setZero();
  finish(z);
  if (res.status == LemkeStatus::kSolved) {
    // Polish: recompute the basic z from the principal subsystem of the final complementary
    // basis (removes the round-off the tableau updates accumulated); keep the better one.
    std::vector<int> alpha;
    for (int i = 0; i < n; ++i)
      if (basis[i] >= n && basis[i] < z0) alpha.push_back(basis[i] - n);
    std::sort(alpha.begin(), alpha.end());
    Eigen::VectorXd zp;
    if (principal_solve(Q, r, alpha, zp)) {
      const Eigen::VectorXd zc = zp.cwiseMax(0.0);
      const Eigen::VectorXd wc = Q * zc + r;
      const double rp = natural_residual(zc, wc);
      if (rp < res.complementarity_residual) {
        res.z = zc;
        res.w = wc;
        res.complementarity_residual = rp;
      }
    }
    if (res.complementarity_residual > accept) res.status = LemkeStatus::kNumericalError;
  }
  return res;
}

}  // namespace coulomb::solvers::lcp
