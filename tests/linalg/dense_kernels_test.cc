// The dense kernels of src/linalg/dense_kernels.h against Eigen's LLT, on SPD matrices of the
// sizes SAP feeds them (free bodies' 6 × 6, robots' 18 × 18, up to 48, and every size from 1 to
// 13 so that each vector chunk and tail of the W = 2 and W = 4 loops runs), in both copies
// (baseline and AVX2 + FMA where the processor has it), with garbage where the kernels must not
// read or write (a first inverse kernel, since removed, left a scratch column uninitialized, and
// contact regularization built on it let a pile fall through the ground).
#include "../../src/linalg/dense_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include "../../src/linalg/block_kernels.h"

namespace coulomb::linalg::internal {
namespace {

Eigen::MatrixXd random_spd(std::mt19937& rng, int n, double spread) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd B(n, n);
  for (int i = 0; i < n * n; ++i) B.data()[i] = u(rng);
  Eigen::VectorXd scale(n);  // badly scaled, as a mass matrix of a light link on a heavy base
  for (int i = 0; i < n; ++i) scale[i] = std::pow(spread, u(rng));
  return scale.asDiagonal() * (B * B.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n)) * scale.asDiagonal();
}

// Runs `check` once with the baseline copy forced and once as the processor decides.
template <typename F>
void for_each_copy(F check) {
  force_baseline_block_kernels(true);
  check("baseline");
  force_baseline_block_kernels(false);
  check(block_kernels_in_use());
}

TEST(DenseKernelsTest, CholeskyAndSolvesMatchEigen) {
  std::vector<int> sizes;
  for (int n = 1; n <= 13; ++n) sizes.push_back(n);
  for (int n : {17, 18, 31, 32, 48}) sizes.push_back(n);
  for_each_copy([&](const char* copy) {
    std::mt19937 rng(7);
    for (int n : sizes) {
      for (double spread : {1.0, 1e3}) {
        const Eigen::MatrixXd A = random_spd(rng, n, spread);
        std::vector<double> L(A.data(), A.data() + A.size());
        // The strict upper triangle is not the matrix: garbage there must be neither read nor
        // changed.
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < j; ++i) L[static_cast<size_t>(j) * n + i] = 1e300;
        ASSERT_TRUE(dense_cholesky(L.data(), n)) << n << " " << copy;
        const Eigen::MatrixXd L_eigen = A.llt().matrixL();
        const Eigen::Map<const Eigen::MatrixXd> L_ours(L.data(), n, n);
        EXPECT_LT((Eigen::MatrixXd(L_ours.triangularView<Eigen::Lower>()) - L_eigen).norm(), 1e-12 * L_eigen.norm())
            << n << " " << copy;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < j; ++i) ASSERT_EQ(L[static_cast<size_t>(j) * n + i], 1e300) << n << " " << copy;
        // Solve.
        Eigen::VectorXd b = Eigen::VectorXd::Random(n), x = b;
        dense_cholesky_solve(L.data(), n, x.data());
        EXPECT_LT((A * x - b).norm(), 1e-9 * (A.norm() * x.norm() + b.norm())) << n << " " << copy;
        Eigen::VectorXd z = b;  // forward substitution alone: L z = b
        dense_forward_substitution(L.data(), n, n, z.data());
        EXPECT_LT((L_eigen * z - b).norm(), 1e-9 * (L_eigen.norm() * z.norm() + b.norm())) << n << " " << copy;
        if (n > 2) {  // on the trailing block from row 2, leading dimension n
          const int m = n - 2;
          Eigen::VectorXd zt = b.tail(m);
          dense_forward_substitution(L.data() + 2 * n + 2, m, n, zt.data());
          const Eigen::MatrixXd Lt = L_eigen.bottomRightCorner(m, m);
          EXPECT_LT((Lt * zt - b.tail(m)).norm(), 1e-9 * (Lt.norm() * zt.norm() + b.norm())) << n << " " << copy;
        }
        // Several right-hand sides at once (1, 3, and 11: a block of 8 and one of 3), on the whole
        // factor and on a trailing block: bit for bit the single substitution of each row.
        for (int r : {1, 3, 11})
          for (int first : {0, n / 2}) {
            const int m = n - first;
            if (m == 0) continue;
            const double* Lt = L.data() + static_cast<ptrdiff_t>(first) * n + first;
            Eigen::MatrixXd rows = Eigen::MatrixXd::Random(m, r);  // column q: right-hand side q
            Eigen::MatrixXd one_by_one = rows;
            dense_forward_substitution_rows(Lt, m, n, rows.data(), r);
            for (int q = 0; q < r; ++q) dense_forward_substitution(Lt, m, n, one_by_one.col(q).data());
            EXPECT_EQ(rows, one_by_one) << n << " r " << r << " from " << first << " " << copy;
          }
      }
    }
  });
}

TEST(DenseKernelsTest, FixedSizeCholeskyMatchesEigen) {
  std::mt19937 rng(11);
  for (double spread : {1.0, 1e3}) {
    const Eigen::MatrixXd A = random_spd(rng, 6, spread);
    std::vector<double> L(A.data(), A.data() + A.size());
    ASSERT_TRUE(small_cholesky_in_place<6>(L.data()));
    const Eigen::MatrixXd L_eigen = A.llt().matrixL();
    const Eigen::Map<const Eigen::MatrixXd> L_ours(L.data(), 6, 6);
    EXPECT_LT((Eigen::MatrixXd(L_ours.triangularView<Eigen::Lower>()) - L_eigen).norm(), 1e-12 * L_eigen.norm());
  }
}

// The free body's inverse factor (SAP's Delassus estimates, the free motion's chord solves):
// L⁻¹ against Eigen's triangular solve of the identity, its strict upper triangle exactly 0
// (the products run over all 36 entries), and the solve through it against Eigen's LLT, for
// axis scales spread by 1, 10 and 10³ (diagonal entries apart by up to 10⁴ and 10¹²: a thin
// rod's inertia beside its mass). cond(A) reaches 2e11 here.
TEST(DenseKernelsTest, InverseFactorSolveMatchesEigen) {
  std::mt19937 rng(12);
  for (double spread : {1.0, 10.0, 1e3}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Eigen::MatrixXd A = random_spd(rng, 6, spread);
      std::vector<double> L(A.data(), A.data() + A.size());
      ASSERT_TRUE(small_cholesky_in_place<6>(L.data()));
      std::vector<double> L_inv(36, std::numeric_limits<double>::quiet_NaN());  // every entry is written
      lower_triangular_inverse6(L.data(), L_inv.data());
      const Eigen::Map<const Eigen::MatrixXd> Li(L_inv.data(), 6, 6);
      const Eigen::MatrixXd L_lower = Eigen::Map<const Eigen::MatrixXd>(L.data(), 6, 6).triangularView<Eigen::Lower>();
      const Eigen::MatrixXd Li_eigen =
          L_lower.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(6, 6));
      for (int j = 0; j < 6; ++j)
        for (int i = 0; i < j; ++i) EXPECT_EQ(Li(i, j), 0.0) << "upper entry (" << i << ", " << j << ")";
      EXPECT_LT((Li - Li_eigen).norm(), 1e-10 * Li_eigen.norm()) << "spread " << spread;
      EXPECT_LT((Li * L_lower - Eigen::MatrixXd::Identity(6, 6)).norm(), 1e-9) << "spread " << spread;

      // Against the substitutions of the same factor (dense_cholesky_solve) and Eigen's LLT: the
      // forward error within cond(A) ε, and the backward error ‖A x − b‖ / (‖A‖ ‖x‖) a few ε, as
      // the substitutions' (measured: up to 0.6 ε here, the substitutions up to 0.5 ε).
      const Eigen::VectorXd b = Eigen::VectorXd::Random(6);
      Eigen::VectorXd x = b, x_sub = b;
      cholesky_solve_with_inverse6(L_inv.data(), x.data());
      dense_cholesky_solve(L.data(), 6, x_sub.data());
      const Eigen::VectorXd x_eigen = A.llt().solve(b);
      const Eigen::VectorXd lambda = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A).eigenvalues();
      const double cond = lambda.maxCoeff() / lambda.minCoeff();
      const double eps = std::numeric_limits<double>::epsilon();
      ASSERT_GT(cond, 0.0);
      EXPECT_LT((x - x_eigen).norm(), 30 * cond * eps * x_eigen.norm()) << "spread " << spread;
      const double backward = (A * x - b).norm() / (A.norm() * x.norm() * eps);
      const double backward_sub = (A * x_sub - b).norm() / (A.norm() * x_sub.norm() * eps);
      EXPECT_LT(backward, 8.0) << "spread " << spread << ", substitutions " << backward_sub;
    }
  }
}

// dense_multiply (y = A x, SapProblem::multiply_A on robots' trees) against Eigen's product, for
// every row count from 1 to 13 (each chunk and tail of both copies) and the trees' sizes, with a
// leading dimension larger than the rows (a block of a bigger matrix: the rows below must not
// be read, here NaN) and y's entries past m left alone.
TEST(DenseKernelsTest, MultiplyMatchesEigen) {
  for_each_copy([](const char* copy) {
    std::mt19937 rng(13);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 18, 27, 32, 48})
      for (int n : {1, m, m + 3})
        for (int pad : {0, 3}) {
          const int ld = m + pad;
          Eigen::MatrixXd big = Eigen::MatrixXd::Constant(ld, n, std::numeric_limits<double>::quiet_NaN());
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) big(i, j) = u(rng);
          Eigen::VectorXd x(n), y = Eigen::VectorXd::Constant(m + 2, 5.0);
          for (int k = 0; k < n; ++k) x[k] = u(rng);
          dense_multiply(big.data(), m, n, ld, x.data(), y.data());
          const Eigen::VectorXd expected = big.topRows(m) * x;
          EXPECT_LT((y.head(m) - expected).cwiseAbs().maxCoeff(), 1e-14 * n) << m << " " << n << " " << pad << " " << copy;
          EXPECT_EQ(y[m], 5.0) << copy;
          EXPECT_EQ(y[m + 1], 5.0) << copy;
        }
  });
}

TEST(DenseKernelsTest, NotPositiveDefiniteIsReported) {
  for_each_copy([](const char* copy) {
    Eigen::Matrix3d A;
    A << 1, 2, 0, 2, 1, 0, 0, 0, 1;  // eigenvalues 3, −1, 1
    std::vector<double> L(A.data(), A.data() + 9);
    EXPECT_FALSE(dense_cholesky(L.data(), 3)) << copy;
    Eigen::Matrix2d Z = Eigen::Matrix2d::Zero();
    EXPECT_FALSE(dense_cholesky(Z.data(), 2)) << copy;
    Eigen::MatrixXd N = Eigen::MatrixXd::Identity(9, 9);  // a NaN reaches a pivot
    N(8, 3) = N(3, 8) = std::numeric_limits<double>::quiet_NaN();
    EXPECT_FALSE(dense_cholesky(N.data(), 9)) << copy;
  });
  Eigen::Matrix<double, 6, 6> S = Eigen::Matrix<double, 6, 6>::Identity();
  S(5, 5) = -1.0;
  EXPECT_FALSE(small_cholesky_in_place<6>(S.data()));
}

}  // namespace
}  // namespace coulomb::linalg::internal
