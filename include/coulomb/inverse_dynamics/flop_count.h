// Floating-point operation counts of Stage I of the convex ID controller (before the paper's
// simplification of §6.2.2): Table 1 of Zapolsky & Drumwright, "Inverse Dynamics with Rigid
// Contact and Friction", §6.2.3, with counts taken from R. Hunger, "Floating point operations in
// matrix-vector calculus", TU München, 2007. Digest ../shared/digests/inverse-dynamics.md §6.5,
// acceptance test §10.14, errata §11 item 24.
//
// X is the (m + nq) × (m + nq) KKT matrix [M Pᵀ; P 0] of Eq. 63, N the n × m normal rows, F the
// nk × m friction rows, κ = −Δt f_ext − M ⁻v (m). Rows (all counts in flops):
//   ldlt_X        LDLᵀ(X)     m³/3 + m² nq + m² + m nq² + 2m nq − 7m/3 + nq³/3 + nq² − 7nq/3 + 1
//                             (= D³/3 + D² − 7D/3 + 1 with D = m + nq, Hunger's LDLᵀ count)
//   Xinv_Nt       X⁻¹ Nᵀ      m + 2m²n + nq + 4mn·nq + 2n·nq²          (= 2D²n + D)
//   Xinv_Ft       X⁻¹ Fᵀ      m + 2km²n + nq + 4kmn·nq + 2kn·nq²       (= 2D²nk + D)
//   N_Xinv_Nt     N X⁻¹ Nᵀ    2mn² − mn
//   F_Xinv_Nt     F X⁻¹ Nᵀ    2mn²k − mn
//   F_Xinv_Ft     F X⁻¹ Fᵀ    2mn²k² − mnk   (CORRECTED; Table 1 prints 2mnk² − mnk)
//   kappa         κ           2m² − m
//   Xinv_kappa    X⁻¹ κ       2(m + nq)²
//   N_Xinv_kappa  N X⁻¹ κ     mn − m
//   F_Xinv_kappa  F X⁻¹ κ     mnk − m
//   tau           τ           2(m + nq)²
// The correction: the paper quotes totals of 77,729 flops (m = 18, nq = 16, n = 4, k = 4) and
// 62,109 (m = 18, nq = 12, n = 4, k = 4). The rows as printed sum to 70,817 and 55,197; with the
// F X⁻¹ Fᵀ row replaced by 2mn²k² − mnk (an nk × nk product over m, like N X⁻¹ Nᵀ with n → nk)
// they sum exactly to the quoted totals (digest §11 item 24). The other rows are the paper's,
// not re-derived: several lower-order terms differ from the textbook count of an (a × b)(b × c)
// product, 2abc − ac (e.g. N X⁻¹ Nᵀ would be 2mn² − n²), but changing them would break the
// quoted totals.
//
// Exact integer arithmetic: the LDLᵀ row's fractional terms are summed over a common
// denominator, (D³ + 3D² − 7D + 3)/3, and the numerator is always divisible by 3
// (D³ − 7D ≡ D³ − D = (D − 1) D (D + 1) ≡ 0 mod 3); the division is checked anyway. The
// evaluation needs no rounding: m = 18, nq = 16 gives D = 34, ldlt_X = 42,537 / 3 = 14,179;
// m = 18, nq = 12 gives D = 30, ldlt_X = 29,493 / 3 = 9,831.
#pragma once

#include <cstdint>

namespace coulomb::inverse_dynamics {

struct FlopTable {
  std::int64_t ldlt_X = 0;
  std::int64_t Xinv_Nt = 0;
  std::int64_t Xinv_Ft = 0;
  std::int64_t N_Xinv_Nt = 0;
  std::int64_t F_Xinv_Nt = 0;
  std::int64_t F_Xinv_Ft = 0;
  std::int64_t kappa = 0;
  std::int64_t Xinv_kappa = 0;
  std::int64_t N_Xinv_kappa = 0;
  std::int64_t F_Xinv_kappa = 0;
  std::int64_t tau = 0;
  /// Sum of the eleven rows. Throws std::overflow_error if it does not fit in 64 bits.
  std::int64_t total() const;
};

/// Table 1 with the corrected F X⁻¹ Fᵀ row (see the file comment).
///   m generalized velocities, n contacts, k friction directions per contact: each in
///   [1, 2²⁰] (the formulas give negative counts for n = 0); nq actuated DOF in [0, m].
/// Throws std::invalid_argument naming the argument outside those ranges, std::overflow_error if
/// a row or the total does not fit in 64 bits.
FlopTable stage_one_flops(int m, int nq, int n, int k);

/// The same with the F X⁻¹ Fᵀ row as printed in Table 1 (2mnk² − mnk); only to show that the
/// printed table does not reproduce the paper's totals.
FlopTable stage_one_flops_as_printed(int m, int nq, int n, int k);

}  // namespace coulomb::inverse_dynamics
