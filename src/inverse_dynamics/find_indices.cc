#include "coulomb/inverse_dynamics/find_indices.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace coulomb::inverse_dynamics {
namespace {

std::string shape(const Eigen::MatrixXd& A) {
  return std::to_string(A.rows()) + " × " + std::to_string(A.cols());
}

void require_finite(const Eigen::MatrixXd& A, const char* name) {
  if (!A.allFinite()) {
    for (Eigen::Index j = 0; j < A.cols(); ++j) {
      for (Eigen::Index i = 0; i < A.rows(); ++i) {
        if (!std::isfinite(A(i, j))) {
          throw std::invalid_argument(std::string("FindIndices: ") + name + "(" +
                                      std::to_string(i) + ", " + std::to_string(j) +
                                      ") is not finite (" + std::to_string(A(i, j)) + ")");
        }
      }
    }
  }
}

}  // namespace

void FindIndices::compute(const Eigen::MatrixXd& M, const Eigen::MatrixXd& P,
                          const Eigen::MatrixXd& S, const Eigen::MatrixXd& T, double tolerance) {
  if (M.rows() != M.cols() || M.rows() == 0) {
    throw std::invalid_argument("FindIndices: M must be square and non-empty, got " + shape(M));
  }
  require_finite(M, "M");
  own_llt_.compute(M);
  if (own_llt_.info() != Eigen::Success) {
    throw std::invalid_argument("FindIndices: M (" + shape(M) +
                                ") is not symmetric positive definite (Cholesky failed)");
  }
  compute(own_llt_, P, S, T, tolerance);
}

void FindIndices::compute(const Eigen::LLT<Eigen::MatrixXd>& M_llt, const Eigen::MatrixXd& P,
                          const Eigen::MatrixXd& S, const Eigen::MatrixXd& T, double tolerance) {
  if (M_llt.info() != Eigen::Success) {
    throw std::invalid_argument("FindIndices: M_llt did not factor M (info() != Success)");
  }
  const Eigen::MatrixXd& LM = M_llt.matrixLLT();
  const Eigen::Index m = LM.rows();
  if (m == 0 || LM.cols() != m) {
    throw std::invalid_argument("FindIndices: M_llt must factor a non-empty square M, got " +
                                shape(LM));
  }
  for (Eigen::Index j = 0; j < m; ++j) {
    if (!LM.col(j).tail(m - j).allFinite()) {
      throw std::invalid_argument("FindIndices: M_llt's factor is not finite (column " +
                                  std::to_string(j) + ")");
    }
  }
  if (P.cols() != m) {
    throw std::invalid_argument("FindIndices: P must have m = " + std::to_string(m) +
                                " columns, got " + shape(P));
  }
  if (P.rows() > m) {
    throw std::invalid_argument("FindIndices: P (" + shape(P) +
                                ") is not full row rank: more rows than m = " + std::to_string(m));
  }
  if (S.cols() != m) {
    throw std::invalid_argument("FindIndices: S must have m = " + std::to_string(m) +
                                " columns, got " + shape(S));
  }
  if (T.cols() != m || T.rows() != S.rows()) {
    throw std::invalid_argument("FindIndices: T must be " + std::to_string(S.rows()) + " × " +
                                std::to_string(m) + " (n × m, like S), got " + shape(T));
  }
  if (!(tolerance >= 0.0 && tolerance < 1.0)) {
    throw std::invalid_argument("FindIndices: tolerance must be in [0, 1), got " +
                                std::to_string(tolerance));
  }
  require_finite(P, "P");
  require_finite(S, "S");
  require_finite(T, "T");

  llt_ = &M_llt;
  if (L_.rows() != m) {
    L_.resize(m, m);
    U_.resize(m, m);
    y_.resize(m);
    l_.resize(m);
    l2_.resize(m);
  }
  const int n = static_cast<int>(S.rows());
  s_indices_.clear();
  t_indices_.clear();
  rows_.clear();
  s_indices_.reserve(n);
  t_indices_.reserve(n);
  rows_.reserve(m);
  size_ = 0;

  for (int k = 0; k < P.rows(); ++k) {
    if (!try_append(P.row(k), tolerance)) {
      llt_ = nullptr;
      throw std::invalid_argument(
          "FindIndices: P (" + shape(P) + ") is not full row rank: row " + std::to_string(k) +
          " is within tolerance of the span of the rows before it (relative pivot² " +
          std::to_string(last_ratio_) + " ≤ tolerance " + std::to_string(tolerance) + ")");
    }
    rows_.push_back({EqualityRowKind::kActuated, k});
  }
  for (int i = 0; i < n && size_ < m; ++i) {
    if (try_append(S.row(i), tolerance)) {
      s_indices_.push_back(i);
      rows_.push_back({EqualityRowKind::kFirstTangent, i});
    }
    if (size_ < m && try_append(T.row(i), tolerance)) {
      t_indices_.push_back(i);
      rows_.push_back({EqualityRowKind::kSecondTangent, i});
    }
  }
  llt_ = nullptr;
}

bool FindIndices::try_append(const RowRef& x, double tolerance) {
  const Eigen::Index m = L_.rows();
  const int r = size_;
  if (r >= m) return false;
  // y = L_M⁻¹ xᵀ, so xᵀ M⁻¹ x = ‖y‖².
  y_ = x.transpose();
  llt_->matrixL().solveInPlace(y_);
  const double d = y_.squaredNorm();
  if (!(d > 0.0)) {  // zero row (or underflow): dependent
    last_ratio_ = 0.0;
    return false;
  }
  auto U = U_.leftCols(r);
  auto l = l_.head(r);
  auto l2 = l2_.head(r);
  // Classical Gram–Schmidt with one re-orthogonalization.
  l.noalias() = U.transpose() * y_;
  y_.noalias() -= U * l;
  l2.noalias() = U.transpose() * y_;
  y_.noalias() -= U * l2;
  l += l2;
  const double delta2 = y_.squaredNorm();
  last_ratio_ = delta2 / d;
  if (!(delta2 > tolerance * d)) return false;
  const double delta = std::sqrt(delta2);
  U_.col(r) = y_ / delta;
  L_.row(r).head(r) = l.transpose();
  L_(r, r) = delta;
  L_.col(r).head(r).setZero();
  L_.row(r).tail(m - r - 1).setZero();
  size_ = r + 1;
  return true;
}

void FindIndices::solve_in_place(Eigen::Ref<Eigen::VectorXd> b) const {
  if (b.size() != size_) {
    throw std::invalid_argument("FindIndices::solve_in_place: b must have size() = " +
                                std::to_string(size_) + " entries, got " +
                                std::to_string(b.size()));
  }
  const auto L = L_.topLeftCorner(size_, size_).triangularView<Eigen::Lower>();
  L.solveInPlace(b);
  L.transpose().solveInPlace(b);
}

}  // namespace coulomb::inverse_dynamics
