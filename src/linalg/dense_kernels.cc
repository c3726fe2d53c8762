// The out-of-line, processor-dispatched copies of dense_kernels.h's run-time-size kernels.
#include "linalg/dense_kernels.h"

#include "linalg/block_kernels.h"

namespace coulomb::linalg::internal {

namespace {
bool cholesky_baseline(double* a, int n) { return cholesky_lower<2>(a, n); }
COULOMB_TARGET_AVX2 bool cholesky_avx2(double* a, int n) { return cholesky_lower<4>(a, n); }
void solve_baseline(const double* L, int n, double* y) { cholesky_solve<2>(L, n, y); }
COULOMB_TARGET_AVX2 void solve_avx2(const double* L, int n, double* y) { cholesky_solve<4>(L, n, y); }
void forward_baseline(const double* L, int n, int ld, double* y) { forward_substitution<2>(L, n, y, ld); }
COULOMB_TARGET_AVX2 void forward_avx2(const double* L, int n, int ld, double* y) {
  forward_substitution<4>(L, n, y, ld);
}
void forward_rows_baseline(const double* L, int m, int ld, double* Y, int r) {
  forward_substitution_rows<2>(L, m, ld, Y, r);
}
COULOMB_TARGET_AVX2 void forward_rows_avx2(const double* L, int m, int ld, double* Y, int r) {
  forward_substitution_rows<4>(L, m, ld, Y, r);
}
void multiply_baseline(const double* A, int m, int n, int ld, const double* x, double* y) {
  dense::multiply<2>(A, m, n, ld, x, y);
}
COULOMB_TARGET_AVX2 void multiply_avx2(const double* A, int m, int n, int ld, const double* x, double* y) {
  dense::multiply<4>(A, m, n, ld, x, y);
}
}  // namespace

void dense_multiply(const double* A, int m, int n, int ld, const double* x, double* y) {
  if (m <= 0) return;
  if (n <= 0) {
    for (int i = 0; i < m; ++i) y[i] = 0.0;
    return;
  }
  if (use_avx2_kernels()) multiply_avx2(A, m, n, ld, x, y);
  else multiply_baseline(A, m, n, ld, x, y);
}

bool dense_cholesky(double* a, int n) { return use_avx2_kernels() ? cholesky_avx2(a, n) : cholesky_baseline(a, n); }
void dense_cholesky_solve(const double* L, int n, double* y) {
  if (use_avx2_kernels()) solve_avx2(L, n, y);
  else solve_baseline(L, n, y);
}
void dense_forward_substitution(const double* L, int n, int ld, double* y) {
  if (use_avx2_kernels()) forward_avx2(L, n, ld, y);
  else forward_baseline(L, n, ld, y);
}

void dense_forward_substitution_rows(const double* L, int m, int ld, double* Y, int r) {
  if (use_avx2_kernels()) forward_rows_avx2(L, m, ld, Y, r);
  else forward_rows_baseline(L, m, ld, Y, r);
}

}  // namespace coulomb::linalg::internal
