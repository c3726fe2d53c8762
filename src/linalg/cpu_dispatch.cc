// Which copy of the functions compiled twice runs (block_kernels.h): the processor's test and the
// tests' switch to force the baseline copy. A file of its own, without dependencies, because every
// layer that has an AVX2 + FMA copy calls it (linalg's block kernels, multibody's momentum and CRBA
// passes, SAP's line search), including the loaders' fuzz build, which compiles multibody but not
// the sparse Cholesky (fuzz/CMakeLists.txt).
#include "linalg/block_kernels.h"

#include <atomic>

namespace coulomb::linalg {
namespace {

bool processor_has_avx2_fma() {
#if COULOMB_HAVE_AVX2_COPY
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

std::atomic<bool> g_force_baseline{false};

}  // namespace

namespace internal {
bool use_avx2_kernels() { return processor_has_avx2_fma() && !g_force_baseline.load(std::memory_order_relaxed); }
bool block_kernels_avx2_available() { return processor_has_avx2_fma(); }
void force_baseline_block_kernels(bool force) { g_force_baseline.store(force, std::memory_order_relaxed); }
const char* block_kernels_in_use() { return use_avx2_kernels() ? "avx2-fma" : "baseline"; }
}  // namespace internal

}  // namespace coulomb::linalg
