// GCC/Clang vector-extension types for the SIMD kernels (block6_kernels.h, dense_kernels.h):
// 4 and 2 doubles, with unaligned loads and stores. A v4 is one AVX register where the caller is
// compiled for AVX2 (COULOMB_TARGET_AVX2, block_kernels.h), two SSE registers otherwise. Every
// function is always_inline, so it takes the instruction set of the function it is inlined
// into. Internal to libcoulomb (src/), not installed.
#pragma once

// The vectors never cross a call boundary (every function using them is always_inline), so
// GCC's note that passing a 32-byte vector changes the ABI without AVX does not apply. Not
// popped: GCC reports it where it expands an inline function, at the end of the includer's
// translation unit (only the kernel sources include this file).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace coulomb::linalg::internal::simd {

typedef double v4 __attribute__((vector_size(32)));
typedef double v2 __attribute__((vector_size(16)));

/// An unaligned load or store of a vector V (v4 or v2) at p.
template <typename V>
V load(const double* p);
template <>
[[gnu::always_inline]] inline v4 load<v4>(const double* p) {
  v4 r;
  __builtin_memcpy(&r, p, sizeof r);
  return r;
}
template <>
[[gnu::always_inline]] inline v2 load<v2>(const double* p) {
  v2 r;
  __builtin_memcpy(&r, p, sizeof r);
  return r;
}
template <typename V>
[[gnu::always_inline]] inline void store(double* p, const V& x) {
  __builtin_memcpy(p, &x, sizeof x);
}
[[gnu::always_inline]] inline v4 load4(const double* p) { return load<v4>(p); }
[[gnu::always_inline]] inline v2 load2(const double* p) { return load<v2>(p); }
[[gnu::always_inline]] inline void store4(double* p, const v4& x) { store(p, x); }
[[gnu::always_inline]] inline void store2(double* p, const v2& x) { store(p, x); }

}  // namespace coulomb::linalg::internal::simd
