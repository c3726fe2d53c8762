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
}  // namespace

bool dense_cholesky(double* a, int n) { return use_avx2_kernels() ? cholesky_avx2(a, n) : cholesky_baseline(a, n); }
void dense_cholesky_solve(const double* L, int n, double* y) {
  if (use_avx2_kernels()) solve_avx2(L, n, y);
  else solve_baseline(L, n, y);
}
void dense_forward_substitution(const double* L, int n, int ld, double* y) {
  if (use_avx2_kernels()) forward_avx2(L, n, ld, y);
  else forward_baseline(L, n, ld, y);
}

}  // namespace coulomb::linalg::internal
