// The plain-loop dense kernels of src/linalg/dense_kernels.h against Eigen's LLT and inverse, on
// SPD matrices of the sizes SAP feeds them (free bodies' 6 × 6, robots' 18 × 18, up to 48), with
// the output and scratch buffers full of garbage: the kernels must not read what they did not
// write (a first version left L⁻¹'s scratch column below the diagonal uninitialized, and contact
// regularization built on that A⁻¹ let a pile fall through the ground).
#include "../../src/linalg/dense_kernels.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/LU>

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

TEST(DenseKernelsTest, CholeskySolveAndInverseMatchEigen) {
  std::mt19937 rng(7);
  for (int n : {1, 2, 6, 7, 18, 48}) {
    for (double spread : {1.0, 1e3}) {
      const Eigen::MatrixXd A = random_spd(rng, n, spread);
      std::vector<double> L(A.data(), A.data() + A.size());
      const bool ok = n == 6 ? small_cholesky_in_place<6>(L.data(), n) : small_cholesky_in_place<0>(L.data(), n);
      ASSERT_TRUE(ok) << n;
      const Eigen::MatrixXd L_eigen = A.llt().matrixL();
      const Eigen::Map<const Eigen::MatrixXd> L_ours(L.data(), n, n);
      EXPECT_LT((Eigen::MatrixXd(L_ours.triangularView<Eigen::Lower>()) - L_eigen).norm(), 1e-12 * L_eigen.norm()) << n;
      // Solve.
      Eigen::VectorXd b = Eigen::VectorXd::Random(n), x = b;
      solve_lower<0>(L.data(), n, x.data());
      solve_lower_transpose<0>(L.data(), n, x.data());
      EXPECT_LT((A * x - b).norm(), 1e-9 * (A.norm() * x.norm() + b.norm())) << n;
      // Inverse, with garbage in the output and the scratch.
      std::vector<double> inverse(static_cast<size_t>(n) * n, 1e30), scratch(static_cast<size_t>(n) * n, -7.5e29);
      inverse_from_cholesky(L.data(), n, inverse.data(), scratch.data());
      const Eigen::Map<const Eigen::MatrixXd> Ainv(inverse.data(), n, n);
      const Eigen::MatrixXd ref = A.inverse();
      EXPECT_LT((Ainv - ref).norm(), 1e-9 * ref.norm()) << n << " spread " << spread;
      EXPECT_LT((Ainv - Ainv.transpose()).norm(), 1e-14 * ref.norm()) << n;
    }
  }
}

TEST(DenseKernelsTest, NotPositiveDefiniteIsReported) {
  Eigen::Matrix3d A;
  A << 1, 2, 0, 2, 1, 0, 0, 0, 1;  // eigenvalues 3, −1, 1
  std::vector<double> L(A.data(), A.data() + 9);
  EXPECT_FALSE(small_cholesky_in_place<0>(L.data(), 3));
  Eigen::Matrix2d Z = Eigen::Matrix2d::Zero();
  EXPECT_FALSE(small_cholesky_in_place<0>(Z.data(), 2));
}

}  // namespace
}  // namespace coulomb::linalg::internal
