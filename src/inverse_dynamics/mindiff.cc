#include "coulomb/inverse_dynamics/mindiff.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace coulomb::inverse_dynamics {
namespace {

std::string shape(const Eigen::MatrixXd& A) {
  return std::to_string(A.rows()) + " × " + std::to_string(A.cols());
}

void require_finite(const Eigen::MatrixXd& A, const char* name) {
  if (A.allFinite()) return;
  for (Eigen::Index j = 0; j < A.cols(); ++j) {
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
      if (!std::isfinite(A(i, j))) {
        throw std::invalid_argument(std::string("Mindiff: ") + name + "(" + std::to_string(i) +
                                    ", " + std::to_string(j) + ") is not finite (" +
                                    std::to_string(A(i, j)) + ")");
      }
    }
  }
}

void require_finite(const Eigen::VectorXd& v, const char* name) {
  if (v.allFinite()) return;
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v(i))) {
      throw std::invalid_argument(std::string("Mindiff: ") + name + "(" + std::to_string(i) +
                                  ") is not finite (" + std::to_string(v(i)) + ")");
    }
  }
}

void require_size(const Eigen::VectorXd& v, Eigen::Index size, const char* name,
                  const char* what) {
  if (v.size() != size) {
    throw std::invalid_argument(std::string("Mindiff: ") + name + " must have " + what + " = " +
                                std::to_string(size) + " entries, got " +
                                std::to_string(v.size()));
  }
}

}  // namespace

Mindiff::Mindiff() {
  qr_.setThreshold(kRankTolerance);
}

void Mindiff::solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, const Eigen::MatrixXd& X,
                    const Eigen::VectorXd& x0, const Eigen::VectorXd& x_target,
                    MindiffResults& results, double tolerance,
                    const MindiffLeafVisitor& on_feasible_leaf) {
  if (Q.rows() != Q.cols()) {
    throw std::invalid_argument("Mindiff: Q must be square (n × n), got " + shape(Q));
  }
  const Eigen::Index n = Q.rows();
  if (n > kMaxVariables) {
    throw std::invalid_argument("Mindiff: Q has n = " + std::to_string(n) +
                                " LCP variables, more than kMaxVariables = " +
                                std::to_string(kMaxVariables) + " (2^n leaves)");
  }
  require_size(r, n, "r", "n");
  if (X.cols() != n) {
    throw std::invalid_argument("Mindiff: X must have n = " + std::to_string(n) +
                                " columns (p × n), got " + shape(X));
  }
  const Eigen::Index p = X.rows();
  require_size(x0, p, "x0", "p = rows of X");
  require_size(x_target, p, "x_target", "p = rows of X");
  if (!(tolerance >= 0.0 && std::isfinite(tolerance))) {
    throw std::invalid_argument("Mindiff: tolerance must be finite and ≥ 0, got " +
                                std::to_string(tolerance));
  }
  require_finite(Q, "Q");
  require_finite(r, "r");
  require_finite(X, "X");
  require_finite(x0, "x0");
  require_finite(x_target, "x_target");

  if (z_.size() != n) {
    z_.resize(n);
    w_.resize(n);
  }
  if (x_.size() != p) x_.resize(p);

  results.found = false;
  results.distance = std::numeric_limits<double>::infinity();
  results.leaves = 0;
  results.feasible_leaves = 0;
  results.basis.clear();
  std::uint32_t best_mask = 0;

  const double tol = tolerance * std::max(1.0, n > 0 ? r.lpNorm<Eigen::Infinity>() : 0.0);
  const std::uint64_t leaves = std::uint64_t{1} << n;
  for (std::uint64_t b = 0; b < leaves; ++b) {
    const auto mask = static_cast<std::uint32_t>(b);
    int k = 0;
    for (int i = 0; i < n; ++i) {
      if (mask & (std::uint32_t{1} << i)) alpha_[k++] = i;
    }
    solve_leaf(Q, r, k);
    bool feasible = true;
    for (int i = 0; i < n && feasible; ++i) {
      if (mask & (std::uint32_t{1} << i)) {
        feasible = std::abs(w_(i)) <= tol && z_(i) >= -tol;  // residual, z_α ≥ 0
      } else {
        feasible = w_(i) >= -tol;  // w_ᾱ ≥ 0 (z_ᾱ = 0)
      }
    }
    if (!feasible) continue;
    ++results.feasible_leaves;
    x_ = x0;
    for (int j = 0; j < k; ++j) x_ += X.col(alpha_[j]) * z_(alpha_[j]);
    const double distance = (x_ - x_target).norm();
    if (on_feasible_leaf) on_feasible_leaf(MindiffLeaf{mask, z_, w_, x_, distance});
    if (!results.found || distance < results.distance) {
      results.found = true;
      results.distance = distance;
      results.z = z_;
      results.w = w_;
      results.x = x_;
      best_mask = mask;
    }
  }
  results.leaves = static_cast<long long>(leaves);
  if (results.found) {
    for (int i = 0; i < n; ++i) {
      if (best_mask & (std::uint32_t{1} << i)) results.basis.push_back(i);
    }
  } else {
    results.z.resize(0);
    results.w.resize(0);
    results.x.resize(0);
  }
}

void Mindiff::solve_leaf(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, int k) {
  z_.setZero();
  w_ = r;
  if (k == 0) return;
  A_.resize(k, k);
  c_.resize(k);
  for (int j = 0; j < k; ++j) {
    for (int i = 0; i < k; ++i) A_(i, j) = Q(alpha_[i], alpha_[j]);
    c_(j) = -r(alpha_[j]);
  }
  // A P = H R (H orthogonal, P the column permutation, R upper trapezoidal beyond the rank).
  qr_.compute(A_);
  const int rank = static_cast<int>(qr_.rank());
  y_.resize(k);
  if (rank == 0) {
    y_.setZero();
  } else {
    c_.applyOnTheLeft(qr_.householderQ().adjoint());  // c = Hᵀ b; the residual lives in c(rank:)
    const auto R = qr_.matrixQR().topRows(rank);
    if (rank == k) {
      y_ = c_;
      R.leftCols(k).triangularView<Eigen::Upper>().solveInPlace(y_);
    } else {
      // Truncated system [R11 R12] y = c₁. Minimum-norm solution: [R11 R12]ᵀ = Z [T; 0] (QR of
      // the k × rank transpose), so [R11 R12] = [Tᵀ 0] Zᵀ and y = Z [T⁻ᵀ c₁; 0].
      Bt_ = R.transpose();
      Bt_.triangularView<Eigen::StrictlyUpper>().setZero();  // drop the stored reflectors
      qr2_.compute(Bt_);
      y_.head(rank) = c_.head(rank);
      qr2_.matrixQR()
          .topLeftCorner(rank, rank)
          .triangularView<Eigen::Upper>()
          .transpose()
          .solveInPlace(y_.head(rank));
      y_.tail(k - rank).setZero();
      y_.applyOnTheLeft(qr2_.householderQ());
    }
  }
  // z_α = P y: entry j of y belongs to column indices()(j) of A.
  const auto& perm = qr_.colsPermutation().indices();
  for (int j = 0; j < k; ++j) {
    const int i = alpha_[perm(j)];
    z_(i) = y_(j);
    w_ += Q.col(i) * y_(j);
  }
}

}  // namespace coulomb::inverse_dynamics
