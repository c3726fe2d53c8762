// Register-blocked kernels on 6 × 6 column-major blocks (leading dimension 6): the blocks of
// free bodies, which make up the Newton matrix of a pile (Castro et al. §IV-D: one node per
// tree). A column of 6 doubles is held as one 4-wide and one 2-wide vector (GCC/Clang vector
// extensions): one AVX register and one SSE register where the caller is compiled for AVX2
// (BlockSparseCholesky's clones), three SSE registers otherwise. Every kernel keeps its output
// block in registers while it streams the inputs, so a 6 × 6 × 6 update is 72 vector
// multiply-adds and 12 stores.
//
// All functions are always_inline so that they take the instruction set of the function they
// are inlined into. Internal to libcoulomb (src/), not installed.
#pragma once

#include <cstddef>

#include "simd.h"  // same folder: also found from tests that include this file by path

// The vectors never cross a call boundary (every function is always_inline), so GCC's note
// that passing a 32-byte vector changes the ABI without AVX does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace coulomb::linalg::internal::block6 {

using simd::load2;
using simd::load4;
using simd::store2;
using simd::store4;
using simd::v2;
using simd::v4;

#define COULOMB_BLOCK6_INLINE [[gnu::always_inline]] inline
// Every loop below runs at most 6 times with bounds known once the outer loops are unrolled:
// unrolling them all leaves straight-line code (GCC otherwise vectorizes the short triangular
// loops into generic code with scalar tails, measured 11 % of clutter_320 in the solves).
#if defined(__clang__)
#define COULOMB_BLOCK6_UNROLL _Pragma("unroll")
#else
#define COULOMB_BLOCK6_UNROLL _Pragma("GCC unroll 6")
#endif

/// The 6 columns of a 6 × 6 block into / out of registers.
COULOMB_BLOCK6_INLINE void load_block(const double* a, v4 (&c4)[6], v2 (&c2)[6]) {
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    c4[j] = load4(a + 6 * j);
    c2[j] = load2(a + 6 * j + 4);
  }
}
COULOMB_BLOCK6_INLINE void store_block(double* a, const v4 (&c4)[6], const v2 (&c2)[6]) {
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    store4(a + 6 * j, c4[j]);
    store2(a + 6 * j + 4, c2[j]);
  }
}

/// y splat into a 4-wide and a 2-wide vector, for the kernels that multiply both halves of a
/// column by one scalar. kWide (the caller is compiled for AVX2, BlockSparseCholesky's AVX2
/// clone): the 2-wide vector is the low half of the 4-wide one, so one broadcast load from
/// memory (vbroadcastsd m64, a load port) serves both. Written as two splats, GCC loads y, then
/// broadcasts it in a register and duplicates it with movddup: two instructions on the one
/// shuffle port per scalar, 72 per 6 × 6 update, which bounded the update at about twice the
/// time of its 72 multiply-adds (docs/sap.md). Baseline (!kWide): the 4-wide vector is two SSE
/// registers and taking its low half goes through the stack, so there it splats twice. The
/// values are the same either way.
template <bool kWide>
COULOMB_BLOCK6_INLINE void splat(const double* y, v4& y4, v2& y2) {
  if constexpr (kWide) {
    const v4 b = {*y, *y, *y, *y};
    y4 = b;
    y2 = __builtin_shufflevector(b, b, 0, 1);
  } else {
    y4 = v4{*y, *y, *y, *y};
    y2 = v2{*y, *y};
  }
}

/// Element i of a column held as (c4, c2); i must be a compile-time constant after unrolling.
COULOMB_BLOCK6_INLINE double element(const v4& c4, const v2& c2, int i) { return i < 4 ? c4[i] : c2[i - 4]; }

/// In-place Cholesky of the lower triangle of the 6 × 6 block a = L Lᵀ. Writes 1/L(j, j) to
/// inv_diag[j] (the solves multiply by it instead of dividing). The strict upper triangle is
/// scratch on return. Returns false if a pivot is not positive (or is NaN).
///
/// The elimination runs as LDLᵀ, right-looking: column j is kept unscaled (w_j, the pivot
/// d_j = w_jj), and every later column i takes −w_j (w_ij / d_j). The square roots come after,
/// all at once: L(:, j) = w_j / √d_j. A pivot's chain to the next one is then a division, a
/// multiplication and a multiply-add, about half of the √ and the division that scaling column j
/// before the updates put on it; the six √ and divisions at the end are independent of each
/// other. The result equals the scaled right-looking form's to round-off.
COULOMB_BLOCK6_INLINE bool cholesky_in_place(double* a, double* inv_diag) {
  v4 c4[6];
  v2 c2[6];
  load_block(a, c4, c2);
  double d[6];
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    d[j] = element(c4[j], c2[j], j);
    if (!(d[j] > 0.0)) return false;
    const double r = 1.0 / d[j];
    COULOMB_BLOCK6_UNROLL
    for (int i = j + 1; i < 6; ++i) {
      const double l = element(c4[j], c2[j], i) * r;
      c4[i] -= c4[j] * l;
      c2[i] -= c2[j] * l;
    }
  }
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    const double root = __builtin_sqrt(d[j]);
    const double inv = 1.0 / root;
    inv_diag[j] = inv;
    c4[j] *= inv;
    c2[j] *= inv;
    if (j < 4) c4[j][j] = root;  // L(j, j) = √d_j itself, not d_j · (1/√d_j)
    else c2[j][j - 4] = root;
  }
  store_block(a, c4, c2);
  return true;
}

/// Forward substitution L y = b in place for the 6 × 6 factor L (inv_diag[j] = 1/L(j, j)).
COULOMB_BLOCK6_INLINE void solve_lower(const double* L, const double* inv_diag, double* y) {
  v4 y4 = load4(y);
  v2 y2 = load2(y + 4);
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    const double yj = element(y4, y2, j) * inv_diag[j];
    // Rows above j of column j are the factor's scratch upper triangle: subtract only below.
    if (j < 4) y4[j] = yj;
    else y2[j - 4] = yj;
    COULOMB_BLOCK6_UNROLL
    for (int i = j + 1; i < 6; ++i) {
      if (i < 4) y4[i] -= L[6 * j + i] * yj;
      else y2[i - 4] -= L[6 * j + i] * yj;
    }
  }
  store4(y, y4);
  store2(y + 4, y2);
}

/// Back substitution Lᵀ x = y in place for the 6 × 6 factor L (inv_diag[j] = 1/L(j, j)). Each
/// x_j subtracts the x_i found earlier first and x_{j+1}, the one just found, last: the chain
/// from one unknown to the next is then one multiply-add and one multiplication, not a
/// multiply-add for every later unknown.
COULOMB_BLOCK6_INLINE void solve_lower_transpose(const double* L, const double* inv_diag, double* y) {
  COULOMB_BLOCK6_UNROLL
  for (int j = 5; j >= 0; --j) {
    double x = y[j];
    COULOMB_BLOCK6_UNROLL
    for (int i = 5; i > j; --i) x -= L[6 * j + i] * y[i];
    y[j] = x * inv_diag[j];
  }
}

/// C −= X Yᵀ for 6 × 6 blocks (C(:, j) −= Σ_k X(:, k) Y(j, k)). With Y = X it is the full
/// symmetric update D −= X Xᵀ (both triangles written; callers read the lower one).
template <bool kWide = false>
COULOMB_BLOCK6_INLINE void subtract_gemm_nt(const double* X, const double* Y, double* C) {
  v4 c4[6];
  v2 c2[6];
  load_block(C, c4, c2);
  COULOMB_BLOCK6_UNROLL
  for (int k = 0; k < 6; ++k) {
    const v4 x4 = load4(X + 6 * k);
    const v2 x2 = load2(X + 6 * k + 4);
    const double* yk = Y + 6 * k;  // column k of Y: Y(j, k) for j = 0..5
    COULOMB_BLOCK6_UNROLL
    for (int j = 0; j < 6; ++j) {
      v4 y4;
      v2 y2;
      splat<kWide>(yk + j, y4, y2);
      c4[j] -= x4 * y4;
      c2[j] -= x2 * y2;
    }
  }
  store_block(C, c4, c2);
}

/// B ← B L⁻ᵀ for a 6 × 6 block B and the 6 × 6 lower-triangular L (the factor of a diagonal
/// block, inv_diag[j] = 1/L(j, j) from cholesky_in_place): column j of the result is
/// (B(:, j) − Σ_{k<j} X(:, k) L(j, k)) / L(j, j), multiplied by the reciprocal (six divisions
/// per block otherwise, on a divider shared with the pivots' chain).
template <bool kWide = false>
COULOMB_BLOCK6_INLINE void solve_right_lower_transpose(const double* L, const double* inv_diag, double* B) {
  v4 x4[6];
  v2 x2[6];
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    v4 b4 = load4(B + 6 * j);
    v2 b2 = load2(B + 6 * j + 4);
    COULOMB_BLOCK6_UNROLL
    for (int k = 0; k < j; ++k) {
      v4 l4;
      v2 l2;
      splat<kWide>(L + 6 * k + j, l4, l2);
      b4 -= x4[k] * l4;
      b2 -= x2[k] * l2;
    }
    const double inv = inv_diag[j];
    x4[j] = b4 * inv;
    x2[j] = b2 * inv;
    store4(B + 6 * j, x4[j]);
    store2(B + 6 * j + 4, x2[j]);
  }
}

/// Row r of a 3 × 6 column-major J, as a column of Jᵀ in registers: entries 0–3 (lo) and 4–5
/// (hi). Built from scalar loads straight into the vectors: a transpose through a stack
/// array, read back in vectors that span several of its stores, could not be forwarded from the
/// store buffer and stalled each read (a quarter of the Hessian assembly's time on clutter,
/// perf samples).
COULOMB_BLOCK6_INLINE v4 row_of_3x6_lo(const double* J, int r) {
  const v4 lo = {J[r], J[r + 3], J[r + 6], J[r + 9]};
  return lo;
}
COULOMB_BLOCK6_INLINE v2 row_of_3x6_hi(const double* J, int r) {
  const v2 hi = {J[r + 12], J[r + 15]};
  return hi;
}

/// out (6 × 6) += Jxᵀ GJy for 3 × 6 blocks Jx and GJy (column-major, leading dimension 3): the
/// contribution of one contact to SAP's Hessian, J_aᵀ G J_b (Castro et al. Eq. 29).
COULOMB_BLOCK6_INLINE void add_JtGJ_3x6(const double* Jx, const double* GJy, double* out) {
  const v4 x4[3] = {row_of_3x6_lo(Jx, 0), row_of_3x6_lo(Jx, 1), row_of_3x6_lo(Jx, 2)};
  const v2 x2[3] = {row_of_3x6_hi(Jx, 0), row_of_3x6_hi(Jx, 1), row_of_3x6_hi(Jx, 2)};
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 6; ++j) {
    v4 c4 = load4(out + 6 * j);
    v2 c2 = load2(out + 6 * j + 4);
    COULOMB_BLOCK6_UNROLL
    for (int r = 0; r < 3; ++r) {
      c4 += x4[r] * GJy[3 * j + r];
      c2 += x2[r] * GJy[3 * j + r];
    }
    store4(out + 6 * j, c4);
    store2(out + 6 * j + 4, c2);
  }
}

/// The lower triangle of out (6 × 6) += Jxᵀ GJx, the diagonal block of one contact on a free body.
/// Columns 0–1 are written whole, columns 2–3 from row 2 and columns 4–5 from row 4 (rows 2–3 of
/// column 3 and row 4 of column 5 are upper-triangle entries, written but never read: the
/// factorizations read the lower triangle only). 8 vector multiply-adds per row of Jx instead of
/// add_JtGJ_3x6's 12.
COULOMB_BLOCK6_INLINE void add_JtGJ_3x6_lower(const double* Jx, const double* GJx, double* out) {
  const v4 top[3] = {row_of_3x6_lo(Jx, 0), row_of_3x6_lo(Jx, 1), row_of_3x6_lo(Jx, 2)};  // rows 0–3
  const v2 bottom[3] = {row_of_3x6_hi(Jx, 0), row_of_3x6_hi(Jx, 1), row_of_3x6_hi(Jx, 2)};  // rows 4–5
  const v4 mid[3] = {row_of_3x6_lo(Jx + 6, 0), row_of_3x6_lo(Jx + 6, 1), row_of_3x6_lo(Jx + 6, 2)};  // rows 2–5
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 2; ++j) {
    v4 c4 = load4(out + 6 * j);
    v2 c2 = load2(out + 6 * j + 4);
    COULOMB_BLOCK6_UNROLL
    for (int r = 0; r < 3; ++r) {
      c4 += top[r] * GJx[3 * j + r];
      c2 += bottom[r] * GJx[3 * j + r];
    }
    store4(out + 6 * j, c4);
    store2(out + 6 * j + 4, c2);
  }
  COULOMB_BLOCK6_UNROLL
  for (int j = 2; j < 4; ++j) {
    v4 c4 = load4(out + 6 * j + 2);
    COULOMB_BLOCK6_UNROLL
    for (int r = 0; r < 3; ++r) c4 += mid[r] * GJx[3 * j + r];
    store4(out + 6 * j + 2, c4);
  }
  COULOMB_BLOCK6_UNROLL
  for (int j = 4; j < 6; ++j) {
    v2 c2 = load2(out + 6 * j + 4);
    COULOMB_BLOCK6_UNROLL
    for (int r = 0; r < 3; ++r) c2 += bottom[r] * GJx[3 * j + r];
    store2(out + 6 * j + 4, c2);
  }
}

/// GJ (3 × 6) = G J for a 3 × 3 G and a 3 × 6 J (column-major): a contact's G times its block on
/// a free body. Reads exactly G's 9 and J's 18 entries; columns 0–4 of GJ are stored 4 wide (the
/// 4th lane lands on the next column's first entry, which its own store then overwrites), the
/// last one 2 + 1 wide.
COULOMB_BLOCK6_INLINE void multiply_GJ_3x6(const double* G, const double* J, double* GJ) {
  const v4 g0 = load4(G), g1 = load4(G + 3);
  const v4 g2 = {G[6], G[7], G[8], 0.0};
  COULOMB_BLOCK6_UNROLL
  for (int j = 0; j < 5; ++j) store4(GJ + 3 * j, g0 * J[3 * j] + g1 * J[3 * j + 1] + g2 * J[3 * j + 2]);
  const v4 last = g0 * J[15] + g1 * J[16] + g2 * J[17];
  GJ[15] = last[0];
  GJ[16] = last[1];
  GJ[17] = last[2];
}

/// y −= B x for a 6 × 6 block B.
template <bool kWide = false>
COULOMB_BLOCK6_INLINE void subtract_gemv(const double* B, const double* x, double* y) {
  v4 y4 = load4(y);
  v2 y2 = load2(y + 4);
  COULOMB_BLOCK6_UNROLL
  for (int k = 0; k < 6; ++k) {
    v4 x4;
    v2 x2;
    splat<kWide>(x + k, x4, x2);
    y4 -= load4(B + 6 * k) * x4;
    y2 -= load2(B + 6 * k + 4) * x2;
  }
  store4(y, y4);
  store2(y + 4, y2);
}

/// y −= Bᵀ x for a 6 × 6 block B: y_k −= B(:, k) · x.
COULOMB_BLOCK6_INLINE void subtract_gemv_transpose(const double* B, const double* x, double* y) {
  const v4 x4 = load4(x);
  const v2 x2 = load2(x + 4);
  COULOMB_BLOCK6_UNROLL
  for (int k = 0; k < 6; ++k) {
    const v4 p4 = load4(B + 6 * k) * x4;
    const v2 p2 = load2(B + 6 * k + 4) * x2;
    y[k] -= (p4[0] + p4[1]) + (p4[2] + p4[3]) + (p2[0] + p2[1]);
  }
}

/// y = B x for a 6 × 6 block B (a free body's A times a velocity).
COULOMB_BLOCK6_INLINE void gemv(const double* B, const double* x, double* y) {
  v4 y4 = load4(B) * x[0];
  v2 y2 = load2(B + 4) * x[0];
  COULOMB_BLOCK6_UNROLL
  for (int k = 1; k < 6; ++k) {
    y4 += load4(B + 6 * k) * x[k];
    y2 += load2(B + 6 * k + 4) * x[k];
  }
  store4(y, y4);
  store2(y + 4, y2);
}

/// out (3) += J x for a 3 × 6 column-major block J (a contact on a free body). Columns 0–4 are
/// loaded 4 wide (the 4th lane is the next column's first entry, read within J and discarded),
/// the last one 2 + 1 wide, so nothing past J's 18 entries is read.
COULOMB_BLOCK6_INLINE void add_multiply_3x6(const double* J, const double* x, double* out) {
  v4 acc = load4(J) * x[0];
  COULOMB_BLOCK6_UNROLL
  for (int k = 1; k < 5; ++k) acc += load4(J + 3 * k) * x[k];
  const v2 tail = load2(J + 15) * x[5];
  out[0] += acc[0] + tail[0];
  out[1] += acc[1] + tail[1];
  out[2] += acc[2] + J[17] * x[5];
}

/// out (6) += Jᵀ g for a 3 × 6 column-major block J: out_k += J(:, k) · g.
COULOMB_BLOCK6_INLINE void add_multiply_transpose_3x6(const double* J, const double* g, double* out) {
  const double g0 = g[0], g1 = g[1], g2 = g[2];
  COULOMB_BLOCK6_UNROLL
  for (int k = 0; k < 6; ++k) out[k] += J[3 * k] * g0 + J[3 * k + 1] * g1 + J[3 * k + 2] * g2;
}

#undef COULOMB_BLOCK6_INLINE
#undef COULOMB_BLOCK6_UNROLL

}  // namespace coulomb::linalg::internal::block6

#pragma GCC diagnostic pop
