// LemkeSolver against independent truths: brute-force enumeration of all 2ⁿ complementary
// bases (written here), the minimizer of ½zᵀQz + rᵀz over z ≥ 0 by projected gradient (for
// symmetric PD Q), Farkas certificates for infeasible problems (checked from the definition), and
// the LCP conditions themselves.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/solvers/lcp/lemke.h"

namespace coulomb::solvers::lcp {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

MatrixXd gaussian(std::mt19937& rng, int rows, int cols) {
  std::normal_distribution<double> N;
  MatrixXd A(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) A(i, j) = N(rng);
  return A;
}

// Symmetric positive definite, eigenvalues ≥ 0.5.
MatrixXd random_pd(std::mt19937& rng, int n) {
  const MatrixXd A = gaussian(rng, n, n);
  return A * A.transpose() / n + 0.5 * MatrixXd::Identity(n, n);
}
// PD symmetric part plus a skew part: positive definite (zᵀQz > 0), non-symmetric, a P-matrix.
MatrixXd random_p_nonsymmetric(std::mt19937& rng, int n) {
  const MatrixXd K = gaussian(rng, n, n);
  return random_pd(rng, n) + 2.0 * (K - K.transpose());
}
// Strictly row diagonally dominant with positive diagonal and off-diagonals of any sign: a
// P-matrix that is not positive definite in general.
MatrixXd random_diagonally_dominant(std::mt19937& rng, int n) {
  MatrixXd A = gaussian(rng, n, n);
  for (int i = 0; i < n; ++i) A(i, i) = A.row(i).cwiseAbs().sum() + 0.1;
  return A;
}
// Symmetric PSD of rank k (singular for k < n), plus optionally a skew part (still PSD, hence
// copositive-plus: zᵀQz = ‖Bᵀz‖² and zᵀQz = 0 ⇒ (Q + Qᵀ)z = 2BBᵀz = 0).
MatrixXd random_psd(std::mt19937& rng, int n, int k, bool skew) {
  const MatrixXd B = gaussian(rng, n, k);
  MatrixXd Q = B * B.transpose();
  if (skew) {
    const MatrixXd K = gaussian(rng, n, n);
    Q += K - K.transpose();
  }
  return Q;
}
// Z-matrix (off-diagonals ≤ 0). With dominant = true also a P-matrix (a K-matrix).
MatrixXd random_z(std::mt19937& rng, int n, bool dominant) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = i == j ? 0.0 : -U(rng);
  for (int i = 0; i < n; ++i)
    A(i, i) = dominant ? -A.row(i).sum() + 0.2 : U(rng) * 2.0 - 0.5;  // general Z: diagonal of any sign
  return A;
}
// Entrywise positive: strictly copositive (so copositive-plus and always solvable), not PSD in
// general.
MatrixXd random_positive(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> U(0.05, 1.0);
  MatrixXd A(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A(i, j) = U(rng);
  return A;
}
VectorXd random_r(std::mt19937& rng, int n) { return gaussian(rng, n, 1); }
// r = w* − Q z* for a complementary pair z*, w* ≥ 0: the LCP is solvable by construction.
VectorXd solvable_r(std::mt19937& rng, const MatrixXd& Q) {
  const int n = static_cast<int>(Q.rows());
  std::uniform_real_distribution<double> U(0.0, 1.0);
  VectorXd z = VectorXd::Zero(n), w = VectorXd::Zero(n);
  for (int i = 0; i < n; ++i) (U(rng) < 0.5 ? z(i) : w(i)) = U(rng) + 0.1;
  return w - Q * z;
}

// The LCP conditions with an absolute tolerance scaled by the data.
double lcp_violation(const MatrixXd& Q, const VectorXd& r, const VectorXd& z) {
  const VectorXd w = Q * z + r;
  double v = 0.0;
  for (int i = 0; i < z.size(); ++i) {
    v = std::max(v, -z(i));
    v = std::max(v, -w(i));
    v = std::max(v, std::abs(z(i) * w(i)));
  }
  return v;
}

// Independent solver: every complementary basis α ⊆ {1..n} with nonsingular Q_αα,
// z_α = −Q_αα⁻¹ r_α, kept if it satisfies the LCP to 1e-9.
std::vector<VectorXd> enumerate_solutions(const MatrixXd& Q, const VectorXd& r) {
  const int n = static_cast<int>(r.size());
  std::vector<VectorXd> solutions;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    std::vector<int> a;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) a.push_back(i);
    VectorXd z = VectorXd::Zero(n);
    if (!a.empty()) {
      const int k = static_cast<int>(a.size());
      MatrixXd A(k, k);
      VectorXd b(k);
      for (int i = 0; i < k; ++i) {
        b(i) = -r(a[i]);
        for (int j = 0; j < k; ++j) A(i, j) = Q(a[i], a[j]);
      }
      Eigen::FullPivLU<MatrixXd> lu(A);
      lu.setThreshold(1e-10);
      if (!lu.isInvertible()) continue;
      const VectorXd x = lu.solve(b);
      for (int i = 0; i < k; ++i) z(a[i]) = x(i);
    }
    if (lcp_violation(Q, r, z) <= 1e-9 * std::max(1.0, z.lpNorm<Eigen::Infinity>())) solutions.push_back(z);
  }
  return solutions;
}

// Projected gradient for min ½zᵀQz + rᵀz, z ≥ 0 (Q symmetric PD), step 1/λ_max.
VectorXd projected_gradient(const MatrixXd& Q, const VectorXd& r) {
  const double L = Eigen::SelfAdjointEigenSolver<MatrixXd>(Q).eigenvalues().maxCoeff();
  VectorXd z = VectorXd::Zero(r.size());
  for (int it = 0; it < 200000; ++it) {
    const VectorXd zn = (z - (Q * z + r) / L).cwiseMax(0.0);
    const double step = (zn - z).lpNorm<Eigen::Infinity>();
    z = zn;
    if (step < 1e-15) break;
  }
  return z;
}

// A valid infeasibility certificate: y ≥ 0, Qᵀy ≤ 0, rᵀy < 0.
void expect_certificate(const MatrixXd& Q, const VectorXd& r, const VectorXd& y) {
  ASSERT_EQ(y.size(), r.size());
  EXPECT_GE(y.minCoeff(), 0.0);
  EXPECT_NEAR(y.lpNorm<Eigen::Infinity>(), 1.0, 1e-12);
  EXPECT_LE((Q.transpose() * y).maxCoeff(), 1e-9 * std::max(1.0, Q.lpNorm<Eigen::Infinity>()));
  EXPECT_LT(r.dot(y), -1e-9);
}

// Solves and checks the result against the LCP conditions; returns the result.
LemkeResults solve_checked(const MatrixXd& Q, const VectorXd& r) {
  const LemkeResults res = LemkeSolver().solve(Q, r);
  EXPECT_TRUE(res.z.allFinite() && res.w.allFinite());
  EXPECT_LE((res.w - (Q * res.z + r)).lpNorm<Eigen::Infinity>(), 1e-12 * std::max(1.0, res.w.norm()));
  if (res.status == LemkeStatus::kSolved || res.status == LemkeStatus::kTrivial) {
    EXPECT_LE(lcp_violation(Q, r, res.z), 1e-9 * std::max(1.0, res.z.lpNorm<Eigen::Infinity>()));
    EXPECT_LE(res.complementarity_residual, 1e-9 * std::max(1.0, r.lpNorm<Eigen::Infinity>()));
  }
  return res;
}

// Unique-solution classes: Lemke must solve and equal the single enumerated solution.
void check_unique(const MatrixXd& Q, const VectorXd& r, const char* what) {
  SCOPED_TRACE(what);
  const LemkeResults res = solve_checked(Q, r);
  ASSERT_TRUE(res.status == LemkeStatus::kSolved || res.status == LemkeStatus::kTrivial) << to_string(res.status);
  const std::vector<VectorXd> all = enumerate_solutions(Q, r);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_LE((res.z - all[0]).lpNorm<Eigen::Infinity>(), 1e-9 * std::max(1.0, all[0].lpNorm<Eigen::Infinity>()));
}

TEST(Lemke, PositiveDefiniteEqualsEnumerationAndQpMinimizer) {
  std::mt19937 rng(1);
  for (int n = 1; n <= 10; ++n)
    for (int trial = 0; trial < 20; ++trial) {
      const MatrixXd Q = random_pd(rng, n);
      const VectorXd r = random_r(rng, n);
      check_unique(Q, r, "PD");
      const LemkeResults res = LemkeSolver().solve(Q, r);
      const VectorXd zqp = projected_gradient(Q, r);
      EXPECT_LE((res.z - zqp).lpNorm<Eigen::Infinity>(), 1e-8) << "n " << n;
    }
}

TEST(Lemke, NonsymmetricPMatricesEqualEnumeration) {
  std::mt19937 rng(2);
  for (int n = 1; n <= 10; ++n)
    for (int trial = 0; trial < 15; ++trial) {
      check_unique(random_p_nonsymmetric(rng, n), random_r(rng, n), "PD + skew");
      check_unique(random_diagonally_dominant(rng, n), random_r(rng, n), "diagonally dominant");
      check_unique(random_z(rng, n, true), random_r(rng, n), "K-matrix");
    }
}

// PSD (rank-deficient, symmetric or not): random r gives both solvable and infeasible problems.
// Solved ⇒ the LCP holds and enumeration finds a solution; ray ⇒ a valid Farkas certificate and
// enumeration finds none. Solvable-by-construction r must be solved.
TEST(Lemke, PositiveSemidefiniteSolvesOrProvesInfeasible) {
  std::mt19937 rng(3);
  int solved = 0, rays = 0;
  for (int n = 1; n <= 10; ++n)
    for (int trial = 0; trial < 20; ++trial) {
      const int k = std::max(1, n / 2 - trial % 2);
      const MatrixXd Q = random_psd(rng, n, k, trial % 4 >= 2);
      const VectorXd r = random_r(rng, n);
      const LemkeResults res = solve_checked(Q, r);
      const std::vector<VectorXd> all = enumerate_solutions(Q, r);
      if (res.status == LemkeStatus::kRayTermination) {
        ++rays;
        expect_certificate(Q, r, res.ray);
        EXPECT_TRUE(all.empty()) << "n " << n;
      } else {
        ASSERT_TRUE(res.status == LemkeStatus::kSolved || res.status == LemkeStatus::kTrivial)
            << to_string(res.status);
        ++solved;
        EXPECT_FALSE(all.empty());
      }
      const VectorXd rs = solvable_r(rng, Q);
      const LemkeResults rs_res = solve_checked(Q, rs);
      EXPECT_TRUE(rs_res.status == LemkeStatus::kSolved || rs_res.status == LemkeStatus::kTrivial)
          << "n " << n << " " << to_string(rs_res.status);
    }
  // Both outcomes occur, so both branches were tested.
  EXPECT_GT(solved, 10);
  EXPECT_GT(rays, 10);
}

// General Z-matrices (diagonal of any sign) with solvable r, and entrywise positive (strictly
// copositive, always solvable) matrices with random r: Lemke must find a solution.
TEST(Lemke, ZMatricesAndStrictlyCopositiveAreSolved) {
  std::mt19937 rng(4);
  for (int n = 1; n <= 10; ++n)
    for (int trial = 0; trial < 15; ++trial) {
      {
        const MatrixXd Q = random_z(rng, n, false);
        const VectorXd r = solvable_r(rng, Q);
        const LemkeResults res = solve_checked(Q, r);
        EXPECT_TRUE(res.status == LemkeStatus::kSolved || res.status == LemkeStatus::kTrivial)
            << "Z n " << n << " " << to_string(res.status);
      }
      {
        const MatrixXd Q = random_positive(rng, n);
        const VectorXd r = random_r(rng, n);
        const LemkeResults res = solve_checked(Q, r);
        EXPECT_TRUE(res.status == LemkeStatus::kSolved || res.status == LemkeStatus::kTrivial)
            << "positive n " << n << " " << to_string(res.status);
        EXPECT_FALSE(enumerate_solutions(Q, r).empty());
      }
    }
}

TEST(Lemke, InfeasibleCopositivePlusReportsRay) {
  {
    // w₂ = −z₁ − 1 < 0 for every z ≥ 0 (Q skew-symmetric, so PSD).
    MatrixXd Q(2, 2);
    Q << 0, 1, -1, 0;
    const VectorXd r = VectorXd::Constant(2, -1.0);
    const LemkeResults res = solve_checked(Q, r);
    ASSERT_EQ(res.status, LemkeStatus::kRayTermination);
    expect_certificate(Q, r, res.ray);
  }
  {
    // w₁ + w₂ = −2 (Q PSD singular).
    MatrixXd Q(2, 2);
    Q << 1, -1, -1, 1;
    const VectorXd r = VectorXd::Constant(2, -1.0);
    const LemkeResults res = solve_checked(Q, r);
    ASSERT_EQ(res.status, LemkeStatus::kRayTermination);
    expect_certificate(Q, r, res.ray);
  }
  {
    // Q = 0, r with a negative entry.
    const MatrixXd Q = MatrixXd::Zero(3, 3);
    VectorXd r(3);
    r << 1, -2, 0;
    const LemkeResults res = solve_checked(Q, r);
    ASSERT_EQ(res.status, LemkeStatus::kRayTermination);
    expect_certificate(Q, r, res.ray);
  }
}

TEST(Lemke, TrivialWhenRNonnegative) {
  std::mt19937 rng(5);
  const MatrixXd Q = gaussian(rng, 4, 4);
  VectorXd r(4);
  r << 0.5, 0, 2, 0;
  const LemkeResults res = solve_checked(Q, r);
  EXPECT_EQ(res.status, LemkeStatus::kTrivial);
  EXPECT_EQ(res.pivots, 0);
  EXPECT_EQ(res.z, VectorXd::Zero(4));
  EXPECT_EQ(res.w, r);
  const LemkeResults empty = LemkeSolver().solve(MatrixXd(0, 0), VectorXd(0));
  EXPECT_EQ(empty.status, LemkeStatus::kTrivial);
  EXPECT_EQ(empty.z.size(), 0);
}

// Round-off negative r (a separated contact of the inverse-dynamics Coulomb LCP, digest §5.3:
// [f_N; f_F (k = 4); λ], whose tangential velocities are ±1e-16 and whose λ row has r = 0). z = 0
// meets the acceptance test and must be returned; before, the first ratio test tied every rᵢ
// within 1e-12 of r_min, chose the last (the λ row) and ended in a secondary ray.
TEST(Lemke, TrivialWithinToleranceOfRoundOffNegativeR) {
  // One contact, Γ = diag(1, 2, 0.5) in (n, s, t), μ = 0.8: Q = [N; F] Γ [N; F]ᵀ with E, μ, −Eᵀ.
  MatrixXd R(5, 3);
  R << 0, 0, 1, 1, 0, 0, 0, 1, 0, -1, 0, 0, 0, -1, 0;  // rows n, +s, +t, −s, −t in (s, t, n)
  const Eigen::Vector3d gamma(2.0, 0.5, 1.0);
  MatrixXd Q = MatrixXd::Zero(6, 6);
  Q.topLeftCorner(5, 5) = R * gamma.asDiagonal() * R.transpose();
  Q.block(1, 5, 4, 1).setOnes();
  Q(5, 0) = 0.8;
  Q.block(5, 1, 1, 4).setConstant(-1.0);
  VectorXd r(6);
  r << 49.0, -1.6e-16, -8.5e-16, 1.6e-16, 8.5e-16, 0.0;
  const LemkeResults res = LemkeSolver().solve(Q, r);
  EXPECT_EQ(res.status, LemkeStatus::kTrivial) << to_string(res.status);
  EXPECT_EQ(res.z, VectorXd::Zero(6));
  EXPECT_LE(res.complementarity_residual, 1e-15);
  // A genuinely negative r is still pivoted: sliding at 0.1 m/s along −s gives λ = 0.1.
  r << 49.0, -0.1, 0.0, 0.1, 0.0, 0.0;
  const LemkeResults slide = solve_checked(Q, r);
  EXPECT_EQ(slide.status, LemkeStatus::kSolved);
  EXPECT_NEAR(slide.z[5], 0.1, 1e-12);
}

// Degenerate problems: zeros in r, r all equal (every row tied at the first pivot), and
// duplicated rows (w₀ ≡ w₁, ties in later ratio tests). Entrywise positive Q (strictly
// copositive, so a solution exists) or PD Q: the lexicographic rule must reach a solution.
TEST(Lemke, DegenerateProblemsTerminate) {
  std::mt19937 rng(6);
  for (int n = 2; n <= 10; ++n)
    for (int trial = 0; trial < 12; ++trial) {
      const bool pd = trial % 2 == 1 && trial < 6;
      MatrixXd Q = pd ? random_pd(rng, n) : random_positive(rng, n);
      VectorXd r = random_r(rng, n);
      for (int i = 0; i < n; i += 2) r(i) = 0.0;
      if (trial % 3 == 0) r.setConstant(-1.0);
      if (trial >= 6) {  // exact duplicate of row 1 (Q stays positive)
        Q.row(0) = Q.row(1);
        r(0) = r(1);
      }
      const LemkeResults res = solve_checked(Q, r);
      EXPECT_TRUE(res.status == LemkeStatus::kSolved || res.status == LemkeStatus::kTrivial)
          << "n " << n << " trial " << trial << " " << to_string(res.status);
      EXPECT_LE(res.pivots, 4 * n + 4);
    }
}

// Triangular P-matrices (1 on the diagonal, 2 off it), r = −ones: the unique solution.
TEST(Lemke, UpperTriangularPMatrix) {
  for (int n = 1; n <= 8; ++n) {
    MatrixXd Q = MatrixXd::Identity(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) Q(i, j) = 2.0;
    const VectorXd r = -VectorXd::Ones(n);
    check_unique(Q, r, "upper triangular");
    check_unique(Q.transpose(), r, "lower triangular");
  }
}

// A cycling example (found by a random search over small integer PSD matrices for this test, not
// taken from the literature): Q = BBᵀ + skew part, r = −ones, so every ratio test is degenerate.
// With ties broken by the lowest row, Lemke cycles until the pivot limit; the lexicographic rule
// reaches the solution, which enumeration confirms.
TEST(Lemke, LexicographicRuleBreaksCycling) {
  MatrixXd Q(4, 4);
  Q << 4, -5, 0, 3,  //
      -3, 8, 4, -1,  //
      -4, 0, 1, -2,  //
      1, -3, 0, 1;
  const VectorXd r = -VectorXd::Ones(4);
  EXPECT_GE(Eigen::SelfAdjointEigenSolver<MatrixXd>(Q + Q.transpose()).eigenvalues().minCoeff(), -1e-12);
  LemkeParameters plain;
  plain.lexicographic = false;
  plain.max_pivots = 1000;
  const LemkeResults cycled = LemkeSolver(plain).solve(Q, r);
  EXPECT_EQ(cycled.status, LemkeStatus::kMaxPivots);
  EXPECT_EQ(cycled.pivots, 1000);
  EXPECT_TRUE(cycled.z.allFinite());
  const LemkeResults lex = solve_checked(Q, r);
  ASSERT_EQ(lex.status, LemkeStatus::kSolved);
  EXPECT_LE(lex.pivots, 10);
  const std::vector<VectorXd> all = enumerate_solutions(Q, r);
  ASSERT_FALSE(all.empty());
  double nearest = std::numeric_limits<double>::infinity();
  for (const VectorXd& z : all) nearest = std::min(nearest, (z - lex.z).lpNorm<Eigen::Infinity>());
  EXPECT_LE(nearest, 1e-9);
}

TEST(Lemke, WarmStart) {
  std::mt19937 rng(7);
  for (int n = 3; n <= 10; ++n) {
    const MatrixXd Q = random_p_nonsymmetric(rng, n);
    const VectorXd r = random_r(rng, n);
    const LemkeResults cold = solve_checked(Q, r);
    ASSERT_EQ(cold.status, LemkeStatus::kSolved);
    EXPECT_FALSE(cold.warm_started);
    // Exact solution: no pivot.
    const LemkeResults exact = LemkeSolver().solve(Q, r, &cold.z);
    EXPECT_EQ(exact.status, LemkeStatus::kSolved);
    EXPECT_TRUE(exact.warm_started);
    EXPECT_EQ(exact.pivots, 0);
    EXPECT_LE((exact.z - cold.z).lpNorm<Eigen::Infinity>(), 1e-12);
    // Perturbed values, same positive set: still the same basis, no pivot.
    VectorXd zp = cold.z;
    for (int i = 0; i < n; ++i)
      if (zp(i) > 0) zp(i) *= 1.3;
    const LemkeResults same_support = LemkeSolver().solve(Q, r, &zp);
    EXPECT_EQ(same_support.pivots, 0);
    EXPECT_LE((same_support.z - cold.z).lpNorm<Eigen::Infinity>(), 1e-12);
    // Wrong positive set (index 0 flipped): falls back to Lemke and still solves.
    zp(0) = zp(0) > 0 ? 0.0 : 1.0;
    const LemkeResults wrong = LemkeSolver().solve(Q, r, &zp);
    EXPECT_EQ(wrong.status, LemkeStatus::kSolved);
    EXPECT_FALSE(wrong.warm_started);
    EXPECT_GT(wrong.pivots, 0);
    EXPECT_LE((wrong.z - cold.z).lpNorm<Eigen::Infinity>(), 1e-9);
  }
}

TEST(Lemke, MaxPivots) {
  std::mt19937 rng(8);
  const MatrixXd Q = random_pd(rng, 8);
  const VectorXd r = -VectorXd::Ones(8) - 0.1 * random_r(rng, 8).cwiseAbs();
  LemkeParameters p;
  p.max_pivots = 2;
  const LemkeResults res = LemkeSolver(p).solve(Q, r);
  EXPECT_EQ(res.status, LemkeStatus::kMaxPivots);
  EXPECT_EQ(res.pivots, 2);
  EXPECT_TRUE(res.z.allFinite());
  EXPECT_GE(res.z.minCoeff(), 0.0);
}

void expect_throw_naming(const std::function<void()>& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected one naming " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Lemke, BadInputThrows) {
  const MatrixXd Q = MatrixXd::Identity(3, 3);
  const VectorXd r = -VectorXd::Ones(3);
  const LemkeSolver s;
  expect_throw_naming([&] { s.solve(MatrixXd::Identity(3, 2), r); }, "Q");
  expect_throw_naming([&] { s.solve(MatrixXd::Identity(2, 2), r); }, "Q");
  MatrixXd Qn = Q;
  Qn(1, 2) = std::numeric_limits<double>::quiet_NaN();
  expect_throw_naming([&] { s.solve(Qn, r); }, "Q(1, 2)");
  VectorXd rn = r;
  rn(2) = std::numeric_limits<double>::infinity();
  expect_throw_naming([&] { s.solve(Q, rn); }, "r(2)");
  const VectorXd z2 = VectorXd::Ones(2);
  expect_throw_naming([&] { s.solve(Q, r, &z2); }, "z_warm");
  VectorXd zn = VectorXd::Ones(3);
  zn(0) = std::numeric_limits<double>::quiet_NaN();
  expect_throw_naming([&] { s.solve(Q, r, &zn); }, "z_warm(0)");
  LemkeParameters p;
  p.tolerance = -1.0;
  expect_throw_naming([&] { LemkeSolver bad(p); }, "tolerance");
  p = {};
  p.pivot_tolerance = std::numeric_limits<double>::quiet_NaN();
  expect_throw_naming([&] { LemkeSolver bad(p); }, "pivot_tolerance");
}

// The in-place solve (workspace inside the solver, results overwritten) equals the by-value one on
// every problem class, with one solver and one LemkeResults reused across sizes that grow and
// shrink (stale workspace or result entries would show up), and warm-starts from its own z
// (z_warm aliasing results.z).
TEST(Lemke, InPlaceSolveEqualsByValue) {
  std::mt19937 rng(10);
  LemkeSolver solver;
  LemkeResults res;
  int rays = 0, solved = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const int n = 1 + (trial * 7) % 13;
    MatrixXd Q;
    switch (trial % 4) {
      case 0: Q = random_pd(rng, n); break;
      case 1: Q = random_p_nonsymmetric(rng, n); break;
      case 2: Q = random_psd(rng, n, std::max(1, n / 2), trial % 8 == 2); break;
      default: Q = random_positive(rng, n); break;
    }
    const VectorXd r = random_r(rng, n);
    SCOPED_TRACE("trial " + std::to_string(trial) + " n " + std::to_string(n));
    const LemkeResults ref = LemkeSolver().solve(Q, r);
    solver.solve(Q, r, res);
    EXPECT_EQ(res.status, ref.status);
    EXPECT_EQ(res.pivots, ref.pivots);
    EXPECT_EQ(res.warm_started, ref.warm_started);
    EXPECT_EQ(res.regularization, 0.0);
    ASSERT_EQ(res.z.size(), n);
    ASSERT_EQ(res.w.size(), n);
    ASSERT_EQ(res.ray.size(), n);
    const double scale = std::max(1.0, ref.z.lpNorm<Eigen::Infinity>());
    EXPECT_LE((res.z - ref.z).lpNorm<Eigen::Infinity>(), 1e-12 * scale);
    EXPECT_LE((res.w - ref.w).lpNorm<Eigen::Infinity>(), 1e-12 * scale);
    EXPECT_NEAR(res.complementarity_residual, ref.complementarity_residual, 1e-12 * scale);
    if (ref.status == LemkeStatus::kRayTermination) {
      ++rays;
      EXPECT_LE((res.ray - ref.ray).lpNorm<Eigen::Infinity>(), 1e-12);
    } else {
      EXPECT_EQ(ref.ray.size(), 0);  // by value: empty
      EXPECT_EQ(res.ray, VectorXd::Zero(n));  // in place: zeros, storage kept
    }
    if (ref.status == LemkeStatus::kSolved) {
      ++solved;
      solver.solve(Q, r, res, &res.z);
      EXPECT_EQ(res.status, LemkeStatus::kSolved);
      EXPECT_TRUE(res.warm_started);
      EXPECT_EQ(res.pivots, 0);
      EXPECT_LE((res.z - ref.z).lpNorm<Eigen::Infinity>(), 1e-9 * scale);
    }
  }
  EXPECT_GT(rays, 5);
  EXPECT_GT(solved, 50);
}

// Regularized retries (digest §5.3, PACER's lcp_lemke_regularized): off by default; on a
// problem where plain Lemke ray-terminates although a solution exists (Q not copositive-plus, zero
// diagonal; found by a random search over small integer matrices for this test), a retry on
// (Q + εI, r) solves it, with the residual reported on the ORIGINAL problem; when every retry
// fails the plain result comes back; an infeasible problem "solved" by regularization shows its
// original residual.
TEST(Lemke, RegularizedRetry) {
  MatrixXd Q(3, 3);
  Q << 0, 0, -3,  //
      2, 0, -2,   //
      1, 2, 0;
  const VectorXd r = (VectorXd(3) << 0, -1, -2).finished();
  const std::vector<VectorXd> all = enumerate_solutions(Q, r);
  ASSERT_FALSE(all.empty());
  const LemkeResults plain = LemkeSolver().solve(Q, r);
  ASSERT_EQ(plain.status, LemkeStatus::kRayTermination);
  EXPECT_EQ(plain.regularization, 0.0);

  LemkeParameters p;
  p.regularization_retries = 5;  // ε = 1e-20, 1e-16, 1e-12, 1e-8, 1e-4
  LemkeSolver regularized(p);
  LemkeResults res;
  regularized.solve(Q, r, res);
  ASSERT_EQ(res.status, LemkeStatus::kSolved);
  EXPECT_EQ(res.regularization, 1e-8);  // the first ε that works
  EXPECT_GT(res.pivots, plain.pivots);  // the plain attempt's pivots are included
  EXPECT_LE((res.w - (Q * res.z + r)).lpNorm<Eigen::Infinity>(), 1e-12 * res.z.lpNorm<Eigen::Infinity>());  // original w …
  EXPECT_DOUBLE_EQ(res.complementarity_residual, (res.z.cwiseMin(res.w)).cwiseAbs().maxCoeff());  // … and residual
  EXPECT_GT(res.complementarity_residual, 0.0);
  EXPECT_LE(res.complementarity_residual, 1e-6);
  double nearest = std::numeric_limits<double>::infinity();
  for (const VectorXd& z : all) nearest = std::min(nearest, (z - res.z).lpNorm<Eigen::Infinity>());
  EXPECT_LE(nearest, 1e-6);
  // The by-value API takes the same option.
  const LemkeResults by_value = LemkeSolver(p).solve(Q, r);
  EXPECT_EQ(by_value.regularization, 1e-8);
  EXPECT_EQ(by_value.ray.size(), 0);

  // Too few retries (ε ≤ 1e-12): every retry fails, the plain ray termination is returned.
  p.regularization_retries = 3;
  LemkeSolver(p).solve(Q, r, res);
  EXPECT_EQ(res.status, LemkeStatus::kRayTermination);
  EXPECT_EQ(res.regularization, 0.0);
  EXPECT_EQ(res.ray, plain.ray);
  EXPECT_EQ(res.z, plain.z);
  EXPECT_GT(res.pivots, plain.pivots);

  // The pivot limit: every try stops there (ε ≤ 1e-16 is below the pivot tolerance and changes
  // nothing); the plain kMaxPivots comes back with the pivots of all three attempts.
  p.regularization_retries = 0;
  p.max_pivots = 2;
  const LemkeResults limited = LemkeSolver(p).solve(Q, r);
  ASSERT_EQ(limited.status, LemkeStatus::kMaxPivots);
  p.regularization_retries = 2;
  LemkeSolver(p).solve(Q, r, res);
  EXPECT_EQ(res.status, LemkeStatus::kMaxPivots);
  EXPECT_EQ(res.pivots, 3 * limited.pivots);
  EXPECT_EQ(res.z, limited.z);

  // Infeasible (Q = 0, r₁ < 0): (εI, r) has the solution z = −r/ε on the negative entries (the
  // first ε above the pivot tolerance 1e-12 is 1e-8); its residual on the original problem is
  // |r₁| = 2, which the caller sees.
  p = {};
  p.regularization_retries = 4;
  const MatrixXd Z = MatrixXd::Zero(3, 3);
  const VectorXd rz = (VectorXd(3) << 1, -2, 0).finished();
  LemkeSolver(p).solve(Z, rz, res);
  ASSERT_EQ(res.status, LemkeStatus::kSolved);
  EXPECT_EQ(res.regularization, 1e-8);
  EXPECT_NEAR(res.z(1), 2e8, 1e-6);
  EXPECT_EQ(res.w, rz);
  EXPECT_EQ(res.complementarity_residual, 2.0);

  p.regularization_retries = -1;
  expect_throw_naming([&] { LemkeSolver bad(p); }, "regularization_retries");
}

// Measured: pivots and time against n for PD and strictly copositive problems (printed; the
// check is only that every problem is solved).
TEST(Lemke, PivotsVersusSize) {
  std::mt19937 rng(9);
  for (int n : {5, 10, 20, 50, 100}) {
    double pivots_pd = 0, pivots_pos = 0;
    const int trials = 5;
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < trials; ++t) {
      const MatrixXd Q = random_pd(rng, n);
      const LemkeResults a = solve_checked(Q, random_r(rng, n));
      EXPECT_TRUE(a.status == LemkeStatus::kSolved || a.status == LemkeStatus::kTrivial);
      pivots_pd += a.pivots;
      const LemkeResults b = solve_checked(random_positive(rng, n), random_r(rng, n));
      EXPECT_TRUE(b.status == LemkeStatus::kSolved || b.status == LemkeStatus::kTrivial);
      pivots_pos += b.pivots;
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / (2 * trials);
    std::printf("[ lemke    ] n %3d: mean pivots PD %6.1f, positive %6.1f; %.3f ms per solve\n", n,
                pivots_pd / trials, pivots_pos / trials, ms);
  }
}

}  // namespace
}  // namespace coulomb::solvers::lcp
