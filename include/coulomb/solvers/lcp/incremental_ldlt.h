// An LDLᵀ factorization A = L D Lᵀ (L unit lower triangular, D diagonal) of a symmetric positive
// definite k × k matrix that changes one row and column at a time: ModifiedPpm's block
// A = N_B̄ Γ N_B̄ᵀ, which gains an index at the end of B̄ and loses one anywhere (Zapolsky &
// Drumwright, Algorithm 2; digest ../shared/digests/inverse-dynamics.md §4.6: "update it with
// rank-1 changes to get the stated complexity").
//
// * append (bordering): for a new last row [aᵀ α] of A, u = L⁻¹ a, the new row of L is (D⁻¹ u)ᵀ
//   and the new pivot is the Schur complement d = α − uᵀ D⁻¹ u = α − aᵀ A⁻¹ a. O(k²).
// * remove(j): deleting row and column j leaves the rows above j unchanged and the trailing
//   block L₃₃ D₃ L₃₃ᵀ + d_j l₃₂ l₃₂ᵀ, a rank-1 UPDATE (d_j > 0) of the trailing factor, done by
//   the stable method C1 of Gill, Golub, Murray & Saunders, "Methods for modifying matrix
//   factorizations", Math. Comp. 28 (1974). O((k − j)²) plus moving the trailing rows.
// * solve: A x = c by two unit-triangular solves and a diagonal scaling. O(k²).
// No pivoting: the caller appends only rows whose Schur complement it has accepted and checks the
// pivots D (min D ≤ tolerance · max |D| means numerically singular). The factor never reads the
// matrix A itself; rows come in as a and α.
//
// Storage: capacity × capacity (grow-only); nothing allocates after reserve() except a reserve()
// to a larger capacity. Header-only. Units: those of A (L is dimensionless, D carries A's units).
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>

#include <Eigen/Core>

namespace coulomb::solvers::lcp {

class IncrementalLdlt {
 public:
  IncrementalLdlt() = default;

  /// Makes room for `capacity` rows, keeping the current factor. Allocates only when capacity
  /// exceeds the current capacity.
  void reserve(int capacity) {
    if (capacity <= capacity_) return;
    Eigen::MatrixXd L(capacity, capacity);
    Eigen::VectorXd d(capacity);
    L.topLeftCorner(size_, size_) = L_.topLeftCorner(size_, size_);
    d.head(size_) = d_.head(size_);
    L_.swap(L);
    d_.swap(d);
    work_.resize(capacity);
    capacity_ = capacity;
  }
  /// Drops every row (capacity is kept).
  void clear() { size_ = 0; }
  int size() const { return size_; }
  int capacity() const { return capacity_; }

  /// For a candidate new last row [aᵀ α] (a: size() entries, α its diagonal entry): writes
  /// u = L⁻¹ a (size() entries) and returns the pivot d = α − uᵀ D⁻¹ u that append() would give
  /// (the Schur complement α − aᵀ A⁻¹ a; ≤ 0 up to round-off when the row is dependent).
  double schur_complement(const Eigen::Ref<const Eigen::VectorXd>& a, double alpha,
                          Eigen::Ref<Eigen::VectorXd> u) const {
    assert(a.size() == size_ && u.size() == size_);
    u = a;
    L_.topLeftCorner(size_, size_).triangularView<Eigen::UnitLower>().solveInPlace(u);
    double s = alpha;
    for (int j = 0; j < size_; ++j) s -= u(j) * u(j) / d_(j);
    return s;
  }

  /// Appends the row whose u = L⁻¹ a and pivot d came from schur_complement() (same factor).
  /// Requires size() < capacity().
  void append(const Eigen::Ref<const Eigen::VectorXd>& u, double d) {
    assert(u.size() == size_ && size_ < capacity_);
    const int k = size_;
    for (int j = 0; j < k; ++j) L_(k, j) = u(j) / d_(j);
    L_(k, k) = 1.0;
    d_(k) = d;
    ++size_;
  }

  /// Deletes row and column j (0 ≤ j < size()); the rows after j move up by one.
  void remove(int j) {
    assert(j >= 0 && j < size_);
    const int k = size_;
    const int t = k - 1 - j;  // trailing rows
    // x = l₃₂ (column j below the diagonal), α = d_j.
    for (int i = 0; i < t; ++i) work_(i) = L_(j + 1 + i, j);
    double alpha = d_(j);
    // Shift rows j+1 … k−1 up by one; columns after j move left by one.
    for (int i = j + 1; i < k; ++i) {
      for (int c = 0; c < j; ++c) L_(i - 1, c) = L_(i, c);
      for (int c = j + 1; c < i; ++c) L_(i - 1, c - 1) = L_(i, c);
      L_(i - 1, i - 1) = 1.0;
      d_(i - 1) = d_(i);
    }
    --size_;
    // Rank-1 update L₃₃ D₃ L₃₃ᵀ + α x xᵀ of the trailing t × t block (now at rows/columns j…).
    for (int p = 0; p < t; ++p) {
      const int pp = j + p;
      const double xp = work_(p);
      if (xp == 0.0) continue;  // this column and the rest of x are unchanged by this step
      const double dp = d_(pp);
      const double dn = dp + alpha * xp * xp;
      const double beta = alpha * xp / dn;
      alpha = alpha * dp / dn;
      d_(pp) = dn;
      for (int i = p + 1; i < t; ++i) {
        work_(i) -= xp * L_(j + i, pp);
        L_(j + i, pp) += beta * work_(i);
      }
    }
  }

  /// x ← A⁻¹ x (size() entries).
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
    assert(x.size() == size_);
    const auto L = L_.topLeftCorner(size_, size_);
    L.triangularView<Eigen::UnitLower>().solveInPlace(x);
    x.array() /= d_.head(size_).array();
    L.transpose().triangularView<Eigen::UnitUpper>().solveInPlace(x);
  }

  /// y ← A⁻¹ a given u = L⁻¹ a from schur_complement() (y = L⁻ᵀ D⁻¹ u; y and u may be the same).
  void solve_from_forward(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> y) const {
    assert(u.size() == size_ && y.size() == size_);
    y = u.cwiseQuotient(d_.head(size_));
    L_.topLeftCorner(size_, size_).transpose().triangularView<Eigen::UnitUpper>().solveInPlace(y);
  }

  /// The k × k unit lower triangular L (only the strictly lower part and the unit diagonal are
  /// maintained; the strictly upper part is garbage) and the k pivots D.
  Eigen::Block<const Eigen::MatrixXd> matrix_l() const { return L_.topLeftCorner(size_, size_); }
  Eigen::VectorBlock<const Eigen::VectorXd> vector_d() const { return d_.head(size_); }

  /// True when some pivot is not > tolerance · max |D| (NaN counts as singular); false if empty.
  bool singular(double tolerance) const {
    double dmax = 0.0;
    for (int j = 0; j < size_; ++j) dmax = std::max(dmax, std::abs(d_(j)));
    for (int j = 0; j < size_; ++j)
      if (!(d_(j) > tolerance * dmax)) return true;
    return false;
  }

  /// L D Lᵀ (allocates; for tests).
  Eigen::MatrixXd reconstruct() const {
    const Eigen::MatrixXd L = matrix_l().triangularView<Eigen::UnitLower>();
    return L * vector_d().asDiagonal() * L.transpose();
  }

 private:
  Eigen::MatrixXd L_;
  Eigen::VectorXd d_, work_;
  int capacity_ = 0;
  int size_ = 0;
};

}  // namespace coulomb::solvers::lcp
