#include "coulomb/inverse_dynamics/flop_count.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace coulomb::inverse_dynamics {
namespace {

// m, nq, n, k ≤ kMaxArgument = 2²⁰: every term below (at most 2 k² m n² ≤ 2¹⁰¹) fits in 127
// bits.
using Wide = __int128;
constexpr int kMaxArgument = 1 << 20;

std::int64_t narrow(Wide v, const char* row) {
  if (v > std::numeric_limits<std::int64_t>::max() ||
      v < std::numeric_limits<std::int64_t>::min()) {
    throw std::overflow_error(std::string("flop_count: the ") + row +
                              " count does not fit in 64 bits");
  }
  return static_cast<std::int64_t>(v);
}

void require_in_range(int value, int lo, int hi, const char* name, const std::string& range) {
  if (value < lo || value > hi) {
    throw std::invalid_argument(std::string("stage_one_flops: ") + name + " must be in " + range +
                                ", got " + std::to_string(value));
  }
}

FlopTable table(int m_, int nq_, int n_, int k_, bool corrected) {
  require_in_range(m_, 1, kMaxArgument, "m", "[1, 2^20]");
  require_in_range(nq_, 0, m_, "nq", "[0, m = " + std::to_string(m_) + "]");
  require_in_range(n_, 1, kMaxArgument, "n", "[1, 2^20]");
  require_in_range(k_, 1, kMaxArgument, "k", "[1, 2^20]");
  const Wide m = m_, nq = nq_, n = n_, k = k_;
  FlopTable t;
  // 3 × (m³/3 + m² nq + m² + m nq² + 2m nq − 7m/3 + nq³/3 + nq² − 7nq/3 + 1).
  const Wide ldlt3 = m * m * m + 3 * m * m * nq + 3 * m * m + 3 * m * nq * nq + 6 * m * nq -
                     7 * m + nq * nq * nq + 3 * nq * nq - 7 * nq + 3;
  if (ldlt3 % 3 != 0) {  // cannot happen: see the header
    throw std::logic_error("stage_one_flops: LDLᵀ numerator not divisible by 3");
  }
  t.ldlt_X = narrow(ldlt3 / 3, "LDLᵀ(X)");
  t.Xinv_Nt = narrow(m + 2 * m * m * n + nq + 4 * m * n * nq + 2 * n * nq * nq, "X⁻¹ Nᵀ");
  t.Xinv_Ft = narrow(m + 2 * k * m * m * n + nq + 4 * k * m * n * nq + 2 * k * n * nq * nq,
                     "X⁻¹ Fᵀ");
  t.N_Xinv_Nt = narrow(2 * m * n * n - m * n, "N X⁻¹ Nᵀ");
  t.F_Xinv_Nt = narrow(2 * m * n * n * k - m * n, "F X⁻¹ Nᵀ");
  const Wide F_Xinv_Ft_printed = 2 * m * n * k * k - m * n * k;
  const Wide F_Xinv_Ft_corrected = 2 * m * n * n * k * k - m * n * k;
  t.F_Xinv_Ft = narrow(corrected ? F_Xinv_Ft_corrected : F_Xinv_Ft_printed, "F X⁻¹ Fᵀ");
  t.kappa = narrow(2 * m * m - m, "κ");
  t.Xinv_kappa = narrow(2 * (m + nq) * (m + nq), "X⁻¹ κ");
  t.N_Xinv_kappa = narrow(m * n - m, "N X⁻¹ κ");
  t.F_Xinv_kappa = narrow(m * n * k - m, "F X⁻¹ κ");
  t.tau = narrow(2 * (m + nq) * (m + nq), "τ");
  t.total();  // throws if the sum overflows
  return t;
}

}  // namespace

std::int64_t FlopTable::total() const {
  const Wide sum = Wide{ldlt_X} + Xinv_Nt + Xinv_Ft + N_Xinv_Nt + F_Xinv_Nt + F_Xinv_Ft + kappa +
                   Xinv_kappa + N_Xinv_kappa + F_Xinv_kappa + tau;
  return narrow(sum, "total");
}

FlopTable stage_one_flops(int m, int nq, int n, int k) { return table(m, nq, n, k, true); }

FlopTable stage_one_flops_as_printed(int m, int nq, int n, int k) {
  return table(m, nq, n, k, false);
}

}  // namespace coulomb::inverse_dynamics
