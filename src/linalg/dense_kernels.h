// Plain-loop dense kernels for small matrices (n up to a few dozen: a tree's mass matrix, a
// free body's 6 × 6 block, the Newton matrix of a single robot), column-major with leading
// dimension n. Eigen's dynamic-size LLT and triangular solves pay a fixed cost per call and per
// column (blocking, gemv dispatch) that exceeds the arithmetic below ~30 × 30; these loops do
// only the arithmetic. N > 0 fixes the size at compile time (the 6 × 6 blocks of free bodies).
//
// The run-time-size kernels (cholesky_lower and its solves) stream columns
// with W-wide vectors (GCC/Clang vector extensions, W = 4 for the AVX2 + FMA copy, 2 for the
// baseline x86-64 one) and keep a chunk of a column in registers while they accumulate over the
// earlier columns. They are always_inline: a caller compiled twice (COULOMB_TARGET_AVX2,
// linalg/block_kernels.h) gets each copy its instruction set; dense_cholesky() and friends below
// are such callers, out of line, chosen by the processor.
// Internal to libcoulomb (src/), not installed.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "simd.h"  // same folder: also found from tests that include this file by path

// The vectors never cross a call boundary (every vector function is always_inline), so GCC's
// note that passing a 32-byte vector changes the ABI without AVX does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace coulomb::linalg::internal {

/// Whether x[0, n) is all finite: x − x is 0 for a finite x and NaN for ±∞ and NaN, summed in
/// two-lane vectors (the sum of zeros is 0 in any order) and tested once at the end, with no
/// branch per entry. SAP's checks of A, v* and every contact's Jacobian blocks, each step.
inline bool all_finite(const double* x, std::ptrdiff_t n) {
  simd::v2 acc = {0.0, 0.0};
  std::ptrdiff_t k = 0;
  for (; k + 2 <= n; k += 2) {
    const simd::v2 a = simd::load<simd::v2>(x + k);
    acc += a - a;
  }
  double tail = 0.0;
  for (; k < n; ++k) tail += x[k] - x[k];
  return acc[0] + acc[1] + tail == 0.0;
}

/// Largest size (rows of a square block) for which the plain kernels here beat Eigen's blocked
/// LLT and products; BlockSparseCholesky and SAP's dense path switch to Eigen above it.
constexpr int kPlainKernelMaxSize = 32;

// In-place Cholesky of the lower triangle of the N × N matrix a (leading dimension N, N fixed at
// compile time: the 6 × 6 blocks of free bodies): a = L Lᵀ with L overwriting the lower
// triangle. Returns false if a pivot is not positive. Run-time sizes take cholesky_lower below.
// Eliminated as LDLᵀ (right-looking, column j unscaled, the later columns taking −w_j w_ij/d_j),
// then scaled by 1/√d_j at the end: each pivot's chain to the next is a division, a
// multiplication and a multiply-add, and the square roots, independent of each other, leave it
// (as block6::cholesky_in_place, the block-sparse factorization's). Equal to the scaled column
// form to round-off.
template <int N>
bool small_cholesky_in_place(double* a) {
  static_assert(N > 0 && N <= 8);
  constexpr int n = N;
  // The lower triangle in locals, every loop unrolled: the updates stay in registers instead of
  // a store and a reload on each pivot's chain.
  double m[N][N];
#pragma GCC unroll 8
  for (int j = 0; j < n; ++j)
#pragma GCC unroll 8
    for (int i = j; i < n; ++i) m[j][i] = a[static_cast<ptrdiff_t>(j) * n + i];
  double d[N];
#pragma GCC unroll 8
  for (int j = 0; j < n; ++j) {
    d[j] = m[j][j];
    if (!(d[j] > 0.0)) return false;
    const double r = 1.0 / d[j];
#pragma GCC unroll 8
    for (int i = j + 1; i < n; ++i) {
      const double l = m[j][i] * r;
#pragma GCC unroll 8
      for (int k = i; k < n; ++k) m[i][k] -= m[j][k] * l;
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < n; ++j) {
    double* cj = a + static_cast<ptrdiff_t>(j) * n;
    const double root = std::sqrt(d[j]);
    const double inv = 1.0 / root;
    cj[j] = root;
#pragma GCC unroll 8
    for (int i = j + 1; i < n; ++i) cj[i] = m[j][i] * inv;
  }
  return true;
}

/// Inverse of the lower-triangular 6 × 6 factor L (column-major, lower triangle read) into
/// L_inv (column-major; the strict upper triangle set to 0). The six pivots' reciprocals are
/// independent divisions, and each column of L⁻¹ is a substitution of its own, so the columns'
/// dependency chains overlap. SAP's Delassus estimate on free bodies: Y = L⁻¹ J_itᵀ for each of
/// the body's contacts is then a product, with no division on its chain.
inline void lower_triangular_inverse6(const double* L, double* L_inv) {
  double d[6];
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) d[i] = 1.0 / L[i * 6 + i];
#pragma GCC unroll 6
  for (int c = 0; c < 6; ++c) {
    double* x = L_inv + c * 6;  // column c: L x = e_c
#pragma GCC unroll 6
    for (int i = 0; i < c; ++i) x[i] = 0.0;
    x[c] = d[c];
#pragma GCC unroll 6
    for (int i = c + 1; i < 6; ++i) {
      double sum = 0.0;
#pragma GCC unroll 6
      for (int k = c; k < i; ++k) sum += L[k * 6 + i] * x[k];
      x[i] = -sum * d[i];
    }
  }
}

/// Solves L Lᵀ x = y in place for a 6 × 6 factor through its inverse L_inv (from
/// lower_triangular_inverse6, column-major, zero above the diagonal): x = L⁻ᵀ(L⁻¹ y), two
/// fixed-size products without a chain of dependent updates.
inline void cholesky_solve_with_inverse6(const double* L_inv, double* y) {
  double z[6] = {};
  for (int m = 0; m < 6; ++m)  // z = L⁻¹ y, column by column
    for (int j = 0; j < 6; ++j) z[j] += L_inv[m * 6 + j] * y[m];
  for (int m = 0; m < 6; ++m) {  // y = L⁻ᵀ z: column m of L⁻¹ dotted with z
    double sum = 0.0;
    for (int j = 0; j < 6; ++j) sum += L_inv[m * 6 + j] * z[j];
    y[m] = sum;
  }
}

namespace dense {

using simd::load;
using simd::store;
using simd::v2;
using simd::v4;

#define COULOMB_DENSE_INLINE [[gnu::always_inline]] inline

// x[i, i + 2 lanes(V)) −= Σ_{k<kend} l[k·ld] · c_k[i, …) with c_k = a + k·ld, the chunk held in
// two vectors V over all k.
template <typename V>
COULOMB_DENSE_INLINE void subtract_chunk2(const double* a, int ld, const double* l, int kend, double* x, int i) {
  constexpr int L = sizeof(V) / sizeof(double);
  V x0 = load<V>(x + i), x1 = load<V>(x + i + L);
  for (int k = 0; k < kend; ++k) {
    const double lk = l[static_cast<ptrdiff_t>(k) * ld];
    const double* ck = a + static_cast<ptrdiff_t>(k) * ld + i;
    x0 -= lk * load<V>(ck);
    x1 -= lk * load<V>(ck + L);
  }
  store(x + i, x0);
  store(x + i + L, x1);
}

// The same for a chunk of one vector V.
template <typename V>
COULOMB_DENSE_INLINE void subtract_chunk1(const double* a, int ld, const double* l, int kend, double* x, int i) {
  V x0 = load<V>(x + i);
  for (int k = 0; k < kend; ++k) x0 -= l[static_cast<ptrdiff_t>(k) * ld] * load<V>(a + static_cast<ptrdiff_t>(k) * ld + i);
  store(x + i, x0);
}

// x[i, n) −= Σ_{k<kend} l[k·ld] · c_k[i, n): a column segment updated by the earlier columns
// (left-looking), chunk by chunk (2W, then W, then 2 rows), each chunk in registers over all k.
template <int W>
COULOMB_DENSE_INLINE void subtract_columns(const double* a, int ld, const double* l, int kend, double* x, int i, int n) {
  using V = std::conditional_t<W == 4, v4, v2>;
  for (; i + 2 * W <= n; i += 2 * W) subtract_chunk2<V>(a, ld, l, kend, x, i);
  if constexpr (W == 4)
    for (; i + 4 <= n; i += 4) subtract_chunk1<v4>(a, ld, l, kend, x, i);
  for (; i + 2 <= n; i += 2) subtract_chunk1<v2>(a, ld, l, kend, x, i);
  for (; i < n; ++i) {
    double xi = x[i];
    for (int k = 0; k < kend; ++k) xi -= l[static_cast<ptrdiff_t>(k) * ld] * a[static_cast<ptrdiff_t>(k) * ld + i];
    x[i] = xi;
  }
}

// y[i, i + 2 lanes(V)) = Σ_k x_k · A[k·ld + i, …): a chunk of rows of A x held in two vectors
// over all n columns.
template <typename V>
COULOMB_DENSE_INLINE void multiply_chunk2(const double* A, int ld, const double* x, int n, double* y, int i) {
  constexpr int L = sizeof(V) / sizeof(double);
  V y0 = x[0] * load<V>(A + i), y1 = x[0] * load<V>(A + i + L);
  for (int k = 1; k < n; ++k) {
    const double* ck = A + static_cast<ptrdiff_t>(k) * ld + i;
    y0 += x[k] * load<V>(ck);
    y1 += x[k] * load<V>(ck + L);
  }
  store(y + i, y0);
  store(y + i + L, y1);
}
template <typename V>
COULOMB_DENSE_INLINE void multiply_chunk1(const double* A, int ld, const double* x, int n, double* y, int i) {
  V y0 = x[0] * load<V>(A + i);
  for (int k = 1; k < n; ++k) y0 += x[k] * load<V>(A + static_cast<ptrdiff_t>(k) * ld + i);
  store(y + i, y0);
}

// y = A x for an m × n column-major A (leading dimension ld), n ≥ 1: row chunks (2W, W, 2,
// then single rows), each in registers over all columns.
template <int W>
COULOMB_DENSE_INLINE void multiply(const double* A, int m, int n, int ld, const double* x, double* y) {
  using V = std::conditional_t<W == 4, v4, v2>;
  int i = 0;
  for (; i + 2 * W <= m; i += 2 * W) multiply_chunk2<V>(A, ld, x, n, y, i);
  if constexpr (W == 4)
    for (; i + 4 <= m; i += 4) multiply_chunk1<v4>(A, ld, x, n, y, i);
  for (; i + 2 <= m; i += 2) multiply_chunk1<v2>(A, ld, x, n, y, i);
  for (; i < m; ++i) {
    double yi = x[0] * A[i];
    for (int k = 1; k < n; ++k) yi += x[k] * A[static_cast<ptrdiff_t>(k) * ld + i];
    y[i] = yi;
  }
}

// y[i, n) −= s · c[i, n).
template <int W>
COULOMB_DENSE_INLINE void axpy_minus(double s, const double* c, double* y, int i, int n) {
  if constexpr (W == 4) {
    for (; i + 4 <= n; i += 4) store(y + i, load<v4>(y + i) - s * load<v4>(c + i));
  }
  for (; i + 2 <= n; i += 2) store(y + i, load<v2>(y + i) - s * load<v2>(c + i));
  for (; i < n; ++i) y[i] -= s * c[i];
}

// Σ_{i ∈ [i0, n)} x[i] y[i].
template <int W>
COULOMB_DENSE_INLINE double dot(const double* x, const double* y, int i, int n) {
  double s = 0.0;
  if constexpr (W == 4) {
    v4 acc = {0.0, 0.0, 0.0, 0.0};
    for (; i + 4 <= n; i += 4) acc += load<v4>(x + i) * load<v4>(y + i);
    s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
  } else {
    v2 acc = {0.0, 0.0};
    for (; i + 2 <= n; i += 2) acc += load<v2>(x + i) * load<v2>(y + i);
    s = acc[0] + acc[1];
  }
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

// The same sum, taken from the end down: the entries from i upward come last, i itself in the
// last multiply-add. A back substitution's newest unknown is y[i]: the earlier ones' products
// are then summed while it is being found.
template <int W>
COULOMB_DENSE_INLINE double dot_newest_last(const double* x, const double* y, int i, int n) {
  double s = 0.0;
  int k = n;
  if constexpr (W == 4) {
    v4 acc = {0.0, 0.0, 0.0, 0.0};
    for (; k - 4 >= i; k -= 4) acc += load<v4>(x + k - 4) * load<v4>(y + k - 4);
    s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
  } else {
    v2 acc = {0.0, 0.0};
    for (; k - 2 >= i; k -= 2) acc += load<v2>(x + k - 2) * load<v2>(y + k - 2);
    s = acc[0] + acc[1];
  }
  for (; k > i; --k) s += x[k - 1] * y[k - 1];
  return s;
}

}  // namespace dense

/// In-place Cholesky a = L Lᵀ of the n × n matrix a (column-major, leading dimension n; only the
/// lower triangle is read, L overwrites it, the strict upper triangle is left alone): the
/// left-looking column form, W-wide vectors along the columns. Returns false if a pivot is not
/// positive (a not positive definite, or not finite).
template <int W>
[[gnu::always_inline]] inline bool cholesky_lower(double* a, int n) {
  for (int j = 0; j < n; ++j) {
    double* cj = a + static_cast<ptrdiff_t>(j) * n;
    dense::subtract_columns<W>(a, n, a + j, j, cj, j, n);  // L(j, k) = a[k n + j]
    double d = cj[j];
    if (!(d > 0.0)) return false;
    d = std::sqrt(d);
    cj[j] = d;
    const double inv = 1.0 / d;
    for (int i = j + 1; i < n; ++i) cj[i] *= inv;
  }
  return true;
}

// The substitutions divide by the pivots through reciprocals taken first, all independent of
// each other: a division's latency (some 14 cycles) on every step of the chain of dependent
// updates was most of a 27 × 27 solve's time. Sizes above kReciprocalsMax divide in the chain.
constexpr int kReciprocalsMax = 64;

// inv[j] = 1 / L(j, j) into `inv` (kReciprocalsMax entries), returned; nullptr (divide) for
// n > kReciprocalsMax.
[[gnu::always_inline]] inline const double* pivot_reciprocals(const double* L, int n, int ld, double* inv) {
  if (n > kReciprocalsMax) return nullptr;
  for (int j = 0; j < n; ++j) inv[j] = 1.0 / L[static_cast<ptrdiff_t>(j) * ld + j];
  return inv;
}

// L z = y and Lᵀ x = z with the pivots' reciprocals given (nullptr: divide).
template <int W>
[[gnu::always_inline]] inline void forward_substitution(const double* L, int n, double* y, int ld, const double* inv) {
  for (int j = 0; j < n; ++j) {
    const double* lj = L + static_cast<ptrdiff_t>(j) * ld;
    const double zj = inv != nullptr ? y[j] * inv[j] : y[j] / lj[j];
    y[j] = zj;
    dense::axpy_minus<W>(zj, lj, y, j + 1, n);
  }
}
template <int W>
[[gnu::always_inline]] inline void back_substitution(const double* L, int n, double* y, const double* inv) {
  for (int j = n - 1; j >= 0; --j) {
    const double* lj = L + static_cast<ptrdiff_t>(j) * n;
    const double r = y[j] - dense::dot_newest_last<W>(lj, y, j + 1, n);  // y[j + 1], found last, summed last
    y[j] = inv != nullptr ? r * inv[j] : r / lj[j];
  }
}

/// Forward substitution L z = y in place (L of cholesky_lower, n × n, leading dimension ld ≥ n,
/// n by default: a trailing block of a factor is a factor of its own): column axpys.
template <int W>
[[gnu::always_inline]] inline void forward_substitution(const double* L, int n, double* y, int ld) {
  double inv[kReciprocalsMax];
  forward_substitution<W>(L, n, y, ld, pivot_reciprocals(L, n, ld, inv));
}
template <int W>
[[gnu::always_inline]] inline void forward_substitution(const double* L, int n, double* y) {
  forward_substitution<W>(L, n, y, n);
}

namespace dense {
// forward_substitution_rows on RB rows (RB > 0 fixed: the loops over the rows unroll; 0: rb rows).
template <int W, int RB>
COULOMB_DENSE_INLINE void forward_rows_block(const double* L, int m, int ld, double* Y, int rb, const double* inv) {
  constexpr int kMaxRows = 8;
  const int n_rows = RB > 0 ? RB : rb;
  double z[kMaxRows];
  for (int j = 0; j < m; ++j) {
    const double* lj = L + static_cast<ptrdiff_t>(j) * ld;
    for (int q = 0; q < n_rows; ++q) {
      double* y = Y + static_cast<ptrdiff_t>(q) * m;
      z[q] = inv != nullptr ? y[j] * inv[j] : y[j] / lj[j];
      y[j] = z[q];
    }
    int i = j + 1;
    if constexpr (W == 4) {
      for (; i + 4 <= m; i += 4) {
        const v4 l = load<v4>(lj + i);
        for (int q = 0; q < n_rows; ++q) {
          double* y = Y + static_cast<ptrdiff_t>(q) * m + i;
          store(y, load<v4>(y) - z[q] * l);
        }
      }
    }
    for (; i + 2 <= m; i += 2) {
      const v2 l = load<v2>(lj + i);
      for (int q = 0; q < n_rows; ++q) {
        double* y = Y + static_cast<ptrdiff_t>(q) * m + i;
        store(y, load<v2>(y) - z[q] * l);
      }
    }
    for (; i < m; ++i)
      for (int q = 0; q < n_rows; ++q) Y[static_cast<ptrdiff_t>(q) * m + i] -= z[q] * lj[i];
  }
}
}  // namespace dense

/// Forward substitution L Z = Y in place for r right-hand sides at once (rows y_q = Y + q·m, each
/// m long; L as above): each column of L is loaded once for all of them. The same operations in
/// the same order as forward_substitution on each y_q, so the same bits.
template <int W>
[[gnu::always_inline]] inline void forward_substitution_rows(const double* L, int m, int ld, double* Y, int r) {
  double buffer[kReciprocalsMax];
  const double* inv = pivot_reciprocals(L, m, ld, buffer);
  for (int q0 = 0; q0 < r; q0 += 8) {  // blocks of up to 8 right-hand sides
    const int rb = std::min(8, r - q0);
    double* Yb = Y + static_cast<ptrdiff_t>(q0) * m;
    if (rb == 3) dense::forward_rows_block<W, 3>(L, m, ld, Yb, rb, inv);  // a contact's three rows
    else if (rb == 1) dense::forward_rows_block<W, 1>(L, m, ld, Yb, rb, inv);  // a limit, a PD actuator
    else dense::forward_rows_block<W, 0>(L, m, ld, Yb, rb, inv);
  }
}

/// Back substitution Lᵀ x = z in place: column dot products.
template <int W>
[[gnu::always_inline]] inline void back_substitution(const double* L, int n, double* y) {
  double inv[kReciprocalsMax];
  back_substitution<W>(L, n, y, pivot_reciprocals(L, n, n, inv));
}

/// Solves L Lᵀ x = y in place with the factor of cholesky_lower (the reciprocals taken once).
template <int W>
[[gnu::always_inline]] inline void cholesky_solve(const double* L, int n, double* y) {
  double buffer[kReciprocalsMax];
  const double* inv = pivot_reciprocals(L, n, n, buffer);
  forward_substitution<W>(L, n, y, n, inv);
  back_substitution<W>(L, n, y, inv);
}

/// cholesky_lower, cholesky_solve and forward_substitution in their AVX2 +
/// FMA copy where the processor has it (linalg/block_kernels.h), else the baseline one (dense_kernels.cc).
bool dense_cholesky(double* a, int n);
void dense_cholesky_solve(const double* L, int n, double* y);
void dense_forward_substitution(const double* L, int n, int ld, double* y);
void dense_forward_substitution_rows(const double* L, int m, int ld, double* Y, int r);
/// y = A x, A m × n column-major with leading dimension ld ≥ m (n ≥ 1; y must not alias x).
/// SapProblem::multiply_A on a robot's tree: Eigen's dynamic product dispatched on every call.
void dense_multiply(const double* A, int m, int n, int ld, const double* x, double* y);

}  // namespace coulomb::linalg::internal

#pragma GCC diagnostic pop
