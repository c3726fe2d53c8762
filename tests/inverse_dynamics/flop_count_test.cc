// Table 1 of Zapolsky & Drumwright §6.2.3 (digest §6.5, §10 test 14, §11 item 24) against the
// paper's quoted totals (77,729 and 62,109 flops; 70,817 and 55,197 for the table as printed),
// the rows evaluated independently in long double straight from the printed formulas (with
// their fractions), and Hunger's LDLᵀ count D³/3 + D² − 7D/3 + 1 for D = m + nq.
#include "coulomb/inverse_dynamics/flop_count.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace coulomb::inverse_dynamics {
namespace {

// The eleven rows of Table 1, transcribed from the digest in long double (fractions kept as
// divisions; exact for these small arguments: every value is an integer < 2⁶⁴ after rounding the
// thirds, and long double has a 64-bit mantissa). printed_FFt selects the F X⁻¹ Fᵀ row.
long double Row(int row, long double m, long double nq, long double n, long double k,
                bool printed_FFt) {
  switch (row) {
    case 0:
      return m * m * m / 3 + m * m * nq + m * m + m * nq * nq + 2 * m * nq - 7 * m / 3 +
             nq * nq * nq / 3 + nq * nq - 7 * nq / 3 + 1;
    case 1: return m + 2 * m * m * n + nq + 4 * m * n * nq + 2 * n * nq * nq;
    case 2: return m + 2 * k * m * m * n + nq + 4 * k * m * n * nq + 2 * k * n * nq * nq;
    case 3: return 2 * m * n * n - m * n;
    case 4: return 2 * m * n * n * k - m * n;
    case 5: return printed_FFt ? 2 * m * n * k * k - m * n * k : 2 * m * n * n * k * k - m * n * k;
    case 6: return 2 * m * m - m;
    case 7: return 2 * (m + nq) * (m + nq);
    case 8: return m * n - m;
    case 9: return m * n * k - m;
    default: return 2 * (m + nq) * (m + nq);
  }
}

std::int64_t Field(const FlopTable& t, int row) {
  const std::int64_t fields[] = {t.ldlt_X,     t.Xinv_Nt,   t.Xinv_Ft,      t.N_Xinv_Nt,
                                 t.F_Xinv_Nt,  t.F_Xinv_Ft, t.kappa,        t.Xinv_kappa,
                                 t.N_Xinv_kappa, t.F_Xinv_kappa, t.tau};
  return fields[row];
}

TEST(FlopCount, CorrectedTableReproducesThePapersTotals) {
  const FlopTable a = stage_one_flops(18, 16, 4, 4);
  EXPECT_EQ(a.total(), 77729);
  const FlopTable b = stage_one_flops(18, 12, 4, 4);
  EXPECT_EQ(b.total(), 62109);
  // Row values (m = 18, n = 4, k = 4): the corrected F X⁻¹ Fᵀ = 2·18·16·16 − 18·4·4 = 8,928.
  EXPECT_EQ(a.ldlt_X, 14179);  // 42,537 / 3
  EXPECT_EQ(b.ldlt_X, 9831);   // 29,493 / 3
  EXPECT_EQ(a.F_Xinv_Ft, 8928);
  EXPECT_EQ(b.F_Xinv_Ft, 8928);
  EXPECT_EQ(a.Xinv_Ft, 37026);
  EXPECT_EQ(b.Xinv_Ft, 28830);
  std::printf("[ info ] corrected Table 1: %lld (m = 18, nq = 16), %lld (m = 18, nq = 12)\n",
              static_cast<long long>(a.total()), static_cast<long long>(b.total()));
}

TEST(FlopCount, PrintedTableDoesNotReproduceThem) {
  const FlopTable a = stage_one_flops_as_printed(18, 16, 4, 4);
  const FlopTable b = stage_one_flops_as_printed(18, 12, 4, 4);
  EXPECT_EQ(a.total(), 70817);
  EXPECT_EQ(b.total(), 55197);
  EXPECT_EQ(a.F_Xinv_Ft, 2016);  // 2·18·4·16 − 18·4·4
  // Only the F X⁻¹ Fᵀ row differs, by 2mk²n(n − 1) = 6,912.
  const FlopTable c = stage_one_flops(18, 16, 4, 4);
  for (int row = 0; row < 11; ++row) {
    if (row != 5) {
      EXPECT_EQ(Field(a, row), Field(c, row)) << "row " << row;
    }
  }
  EXPECT_EQ(c.total() - a.total(), 2 * 18 * 16 * 4 * 3);
}

TEST(FlopCount, RowsEqualTheFormulasEvaluatedIndependently) {
  int checked = 0;
  for (int m = 1; m <= 40; m += 3) {
    for (int nq = 0; nq <= m; nq += 2) {
      for (int n = 1; n <= 9; n += 4) {
        for (int k = 1; k <= 8; k += 3) {
          for (const bool printed : {false, true}) {
            const FlopTable t = printed ? stage_one_flops_as_printed(m, nq, n, k)
                                        : stage_one_flops(m, nq, n, k);
            long double sum = 0;
            for (int row = 0; row < 11; ++row) {
              const long double v = Row(row, m, nq, n, k, printed);
              // Every row is an integer (the LDLᵀ thirds add up to one).
              EXPECT_LE(std::fabs(v - std::round(v)), 1e-9L) << m << " " << nq << " row " << row;
              EXPECT_EQ(Field(t, row), static_cast<std::int64_t>(std::llround(v)))
                  << "m " << m << " nq " << nq << " n " << n << " k " << k << " row " << row;
              sum += v;
            }
            EXPECT_EQ(t.total(), static_cast<std::int64_t>(std::llround(sum)));
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(FlopCount, LdltRowIsHungersCountForTheKktSize) {
  // (D³ + 3D² − 7D + 3) / 3 for D = m + nq, a different grouping of the same count.
  for (int m = 1; m <= 300; ++m) {
    for (int nq = 0; nq <= m; nq += 7) {
      const std::int64_t D = m + nq;
      const std::int64_t num = D * D * D + 3 * D * D - 7 * D + 3;
      ASSERT_EQ(num % 3, 0) << D;
      EXPECT_EQ(stage_one_flops(m, nq, 1, 1).ldlt_X, num / 3) << m << " " << nq;
    }
  }
}

template <typename E, typename F>
void ExpectThrowMentioning(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected one mentioning " << text;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(FlopCount, BadArgumentsAndOverflow) {
  using IA = std::invalid_argument;
  ExpectThrowMentioning<IA>([] { stage_one_flops(0, 0, 4, 4); }, "m must");
  ExpectThrowMentioning<IA>([] { stage_one_flops(18, -1, 4, 4); }, "nq must");
  ExpectThrowMentioning<IA>([] { stage_one_flops(18, 19, 4, 4); }, "nq must");
  ExpectThrowMentioning<IA>([] { stage_one_flops(18, 12, 0, 4); }, "n must");
  ExpectThrowMentioning<IA>([] { stage_one_flops(18, 12, 4, 0); }, "k must");
  ExpectThrowMentioning<IA>([] { stage_one_flops_as_printed(18, 12, (1 << 20) + 1, 4); },
                            "n must");
  // 2 k² m n² = 2¹⁰¹ for m = n = k = 2²⁰: the F X⁻¹ Fᵀ row overflows 64 bits.
  const int big = 1 << 20;
  ExpectThrowMentioning<std::overflow_error>([&] { stage_one_flops(big, 0, big, big); },
                                             "64 bits");
  // A total that does not fit is reported, never wrapped.
  FlopTable t;
  t.ldlt_X = std::numeric_limits<std::int64_t>::max();
  t.tau = 1;
  ExpectThrowMentioning<std::overflow_error>([&] { (void)t.total(); }, "total");
  // Large but representable: exact.
  const FlopTable ok = stage_one_flops(1000, 500, 100, 8);
  EXPECT_EQ(ok.F_Xinv_Ft, 2LL * 1000 * 100 * 100 * 8 * 8 - 1000LL * 100 * 8);
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
