// Which copy of BlockSparseCholesky's numeric kernels runs: the baseline x86-64 one or the
// AVX2 + FMA one (block_sparse_cholesky.cc). The processor decides; tests can force the
// baseline copy to check both on one machine. Internal to libcoulomb (src/), not installed.
#pragma once

// Functions compiled a second time for AVX2 + FMA carry COULOMB_TARGET_AVX2; the kernels they
// inline (block6_kernels.h) then take that instruction set. Off x86-64 GCC/Clang the macro is
// empty and use_avx2_kernels() is false.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COULOMB_HAVE_AVX2_COPY 1
#define COULOMB_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define COULOMB_HAVE_AVX2_COPY 0
#define COULOMB_TARGET_AVX2
#endif

namespace coulomb::linalg::internal {

/// Whether the AVX2 + FMA copies run: the processor has AVX2 and FMA and the baseline is not
/// forced. Cheap (one cached test).
bool use_avx2_kernels();

/// Whether this processor runs the AVX2 + FMA copy (always false off x86-64).
bool block_kernels_avx2_available();
/// Forces the baseline copy (true) or lets the processor decide (false). Not for use while
/// another thread factorizes.
void force_baseline_block_kernels(bool force);
/// "avx2-fma" or "baseline": the copy factorize() and solve_in_place() run now.
const char* block_kernels_in_use();

}  // namespace coulomb::linalg::internal
