// Plain-loop dense kernels for small matrices (n up to a few dozen: a tree's mass matrix, a
// free body's 6 × 6 block, the Newton matrix of a single robot), column-major with leading
// dimension n. Eigen's dynamic-size LLT and triangular solves pay a fixed cost per call and per
// column (blocking, gemv dispatch) that exceeds the arithmetic below ~30 × 30; these loops do
// only the arithmetic. N > 0 fixes the size at compile time (the 6 × 6 blocks of free bodies).
// Internal to libcoulomb (src/), not installed.
#pragma once

#include <cmath>
#include <cstddef>

namespace coulomb::linalg::internal {

/// Largest size (rows of a square block) for which the plain kernels here beat Eigen's blocked
/// LLT and products; BlockSparseCholesky and SAP's dense path switch to Eigen above it.
constexpr int kPlainKernelMaxSize = 32;

// In-place Cholesky of the lower triangle of the n × n matrix a (leading dimension n): a = L Lᵀ
// with L overwriting the lower triangle. Returns false if a pivot is not positive.
template <int N>
bool small_cholesky_in_place(double* a, int n) {
  if constexpr (N > 0) n = N;
  for (int j = 0; j < n; ++j) {
    double* cj = a + static_cast<ptrdiff_t>(j) * n;
    double d = cj[j];
    for (int k = 0; k < j; ++k) {
      const double l = a[static_cast<ptrdiff_t>(k) * n + j];
      d -= l * l;
    }
    if (!(d > 0.0)) return false;
    d = std::sqrt(d);
    cj[j] = d;
    const double inv = 1.0 / d;
    for (int i = j + 1; i < n; ++i) {
      double x = cj[i];
      for (int k = 0; k < j; ++k) {
        const double* ck = a + static_cast<ptrdiff_t>(k) * n;
        x -= ck[i] * ck[j];
      }
      cj[i] = x * inv;
    }
  }
  return true;
}

// Forward substitution L y = b in place (L n × n lower, leading dimension n).
template <int N>
void solve_lower(const double* L, int n, double* y) {
  if constexpr (N > 0) n = N;
  for (int j = 0; j < n; ++j) {
    const double* lj = L + static_cast<ptrdiff_t>(j) * n;
    const double yj = y[j] / lj[j];
    y[j] = yj;
    for (int i = j + 1; i < n; ++i) y[i] -= lj[i] * yj;
  }
}

// Back substitution Lᵀ x = y in place.
template <int N>
void solve_lower_transpose(const double* L, int n, double* y) {
  if constexpr (N > 0) n = N;
  for (int j = n - 1; j >= 0; --j) {
    const double* lj = L + static_cast<ptrdiff_t>(j) * n;
    double x = y[j];
    for (int i = j + 1; i < n; ++i) x -= lj[i] * y[i];
    y[j] = x / lj[j];
  }
}

/// A⁻¹ (n × n, both triangles, leading dimension n) from the Cholesky factor L of A = L Lᵀ (the
/// lower triangle of `L`, as small_cholesky_in_place leaves it): Y = L⁻¹ by forward substitution
/// into `scratch` (n × n), then A⁻¹ = Yᵀ Y. About n³/2 multiply-adds.
inline void inverse_from_cholesky(const double* L, int n, double* Ainv, double* scratch) {
  double* Y = scratch;  // column-major, lower triangular
  for (int c = 0; c < n; ++c) {
    double* y = Y + static_cast<ptrdiff_t>(c) * n;
    for (int i = 0; i < n; ++i) y[i] = 0.0;  // e_c
    y[c] = 1.0;
    for (int j = c; j < n; ++j) {
      const double* lj = L + static_cast<ptrdiff_t>(j) * n;
      const double yj = y[j] / lj[j];
      y[j] = yj;
      for (int i = j + 1; i < n; ++i) y[i] -= lj[i] * yj;
    }
  }
  // (Yᵀ Y)(a, b) = Σ_{m ≥ max(a, b)} Y(m, a) Y(m, b).
  for (int b = 0; b < n; ++b) {
    const double* yb = Y + static_cast<ptrdiff_t>(b) * n;
    for (int a = b; a < n; ++a) {
      const double* ya = Y + static_cast<ptrdiff_t>(a) * n;
      double x = 0.0;
      for (int m = a; m < n; ++m) x += ya[m] * yb[m];
      Ainv[static_cast<ptrdiff_t>(b) * n + a] = x;
      Ainv[static_cast<ptrdiff_t>(a) * n + b] = x;
    }
  }
}

}  // namespace coulomb::linalg::internal
