// BlockSparseCholesky against a dense LLT on random block patterns (chains, stars, random
// graphs with fill-in, a single block, disconnected blocks).
#include "coulomb/linalg/block_sparse_cholesky.h"

#include "../../src/linalg/block_kernels.h"

#include <Eigen/Cholesky>

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace coulomb::linalg {
namespace {

/// Adds JₛᵀJₛ, JₜᵀJₜ and JₛᵀJₜ for a random 3-row J on the edge (s, t) to chol, and (when H is
/// given) to the dense H at the same places: one constraint coupling two nodes.
void add_random_coupling(std::mt19937& rng, BlockSparseCholesky& chol, const std::vector<int>& sizes, int s, int t,
                         Eigen::MatrixXd* H = nullptr) {
  std::normal_distribution<double> N(0.0, 1.0);
  Eigen::MatrixXd Js(3, sizes[s]), Jt(3, sizes[t]);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < sizes[s]; ++j) Js(i, j) = N(rng);
    for (int j = 0; j < sizes[t]; ++j) Jt(i, j) = N(rng);
  }
  chol.add_block(s, s, Js.transpose() * Js);
  chol.add_block(t, t, Jt.transpose() * Jt);
  chol.add_block(s, t, Js.transpose() * Jt);
  if (H == nullptr) return;
  H->block(chol.offset(s), chol.offset(s), sizes[s], sizes[s]) += Js.transpose() * Js;
  H->block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]) += Jt.transpose() * Jt;
  H->block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]) += Js.transpose() * Jt;
  H->block(chol.offset(t), chol.offset(s), sizes[t], sizes[s]) += Jt.transpose() * Js;
}

/// Solves a random SPD system with this pattern (Σ over edges of JᵀJ for random 3-row J, plus
/// diagonal terms), checks it against a dense LLT and returns the solution.
Eigen::VectorXd check_pattern(std::mt19937& rng, const std::vector<int>& sizes, const std::vector<std::pair<int, int>>& edges) {
  std::normal_distribution<double> N(0.0, 1.0);
  BlockSparseCholesky chol;
  chol.analyze(sizes, edges);
  // A random SPD matrix with this pattern: Σ over "constraints" of JᵀJ on edge pairs + diag.
  for (int t = 0; t < static_cast<int>(sizes.size()); ++t) {
    Eigen::MatrixXd B(sizes[t] + 2, sizes[t]);
    for (int i = 0; i < B.rows(); ++i)
      for (int j = 0; j < B.cols(); ++j) B(i, j) = N(rng);
    chol.add_block(t, t, B.transpose() * B + 0.1 * Eigen::MatrixXd::Identity(sizes[t], sizes[t]));
  }
  for (const auto& [s, t] : edges) add_random_coupling(rng, chol, sizes, s, t);
  const Eigen::MatrixXd H = chol.dense();
  EXPECT_LT((H - H.transpose()).norm(), 1e-12 * H.norm());
  Eigen::VectorXd b(chol.size());
  for (int i = 0; i < b.size(); ++i) b[i] = N(rng);
  EXPECT_TRUE(chol.factorize());
  Eigen::VectorXd x = b;
  chol.solve_in_place(x);
  const Eigen::VectorXd x_dense = H.llt().solve(b);
  EXPECT_LT((x - x_dense).norm(), 1e-10 * std::max(1.0, x_dense.norm()));
  EXPECT_LT((H * x - b).norm(), 1e-10 * b.norm() * H.norm());
  return x;
}

/// The contact graph of a pile: T free bodies (6 × 6 blocks) at random points of a box of
/// height `height`, an edge between bodies closer than `radius` (elimination fills in the
/// middle of the pile), and optionally a robot (an 18 × 18 block, or 40 × 40 above the
/// small-kernel size) touching the first few bodies.
void pile_pattern(std::mt19937& rng, int T, double radius, double height, int robot, std::vector<int>& sizes,
                  std::vector<std::pair<int, int>>& edges) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::vector<Eigen::Vector3d> p(T);
  for (auto& x : p) x = Eigen::Vector3d(U(rng), U(rng), height * U(rng));
  sizes.assign(T, 6);
  edges.clear();
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j)
      if ((p[i] - p[j]).norm() < radius) edges.emplace_back(i, j);
  if (robot > 0) {
    sizes.push_back(robot);
    for (int i = 0; i < std::min(T, 4); ++i) edges.emplace_back(T, i);
  }
}

// The 6 × 6 blocks of free bodies take register-blocked SIMD kernels, compiled for the baseline
// instruction set and for AVX2 + FMA (block_kernels.h). Both copies must match a dense LLT on
// pile patterns with fill-in, and each other to round-off. On a processor without AVX2 the
// second pass repeats the baseline copy.
TEST(BlockSparseCholeskyTest, PilePatternsMatchDenseWithBothKernelCopies) {
  struct Case {
    int T;
    double radius, height;
    int robot;
  };
  const std::vector<Case> cases = {{2, 2.0, 1.0, 0},    {12, 0.5, 1.0, 0},   {60, 0.3, 0.5, 0},
                                   {160, 0.22, 0.5, 0}, {80, 0.3, 0.5, 18}, {40, 0.4, 0.5, 40}};
  for (const Case& c : cases) {
    SCOPED_TRACE("T = " + std::to_string(c.T) + ", robot block " + std::to_string(c.robot));
    std::vector<int> sizes;
    std::vector<std::pair<int, int>> edges;
    std::mt19937 pattern_rng(7 + c.T);
    pile_pattern(pattern_rng, c.T, c.radius, c.height, c.robot, sizes, edges);
    internal::force_baseline_block_kernels(true);
    EXPECT_STREQ(internal::block_kernels_in_use(), "baseline");
    std::mt19937 rng_baseline(11);
    const Eigen::VectorXd x_baseline = check_pattern(rng_baseline, sizes, edges);
    internal::force_baseline_block_kernels(false);
    EXPECT_STREQ(internal::block_kernels_in_use(),
                 internal::block_kernels_avx2_available() ? "avx2-fma" : "baseline");
    std::mt19937 rng_native(11);  // the same matrix and right-hand side
    const Eigen::VectorXd x_native = check_pattern(rng_native, sizes, edges);
    EXPECT_LT((x_native - x_baseline).norm(), 1e-11 * std::max(1.0, x_baseline.norm()));
  }
}

TEST(BlockSparseCholeskyTest, MatchesDenseOnManyPatterns) {
  std::mt19937 rng(101);
  check_pattern(rng, {7}, {});                                        // one tree (a robot)
  check_pattern(rng, {6, 6, 6}, {});                                  // disconnected
  check_pattern(rng, {6, 6, 6, 6}, {{0, 1}, {1, 2}, {2, 3}});         // chain (a stack)
  check_pattern(rng, {18, 6, 6, 6, 6}, {{0, 1}, {0, 2}, {0, 3}, {0, 4}});  // star (robot + objects)
  check_pattern(rng, {6, 6, 6, 6}, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});  // cycle: needs fill-in
  check_pattern(rng, {40, 6, 36, 6}, {{0, 1}, {0, 2}, {2, 3}, {1, 2}});  // blocks above the small-kernel size
  std::uniform_int_distribution<int> size(1, 9);
  for (int trial = 0; trial < 20; ++trial) {
    const int T = 5 + trial * 3;
    std::vector<int> sizes(T);
    for (int& s : sizes) s = size(rng);
    std::vector<std::pair<int, int>> edges;
    std::uniform_int_distribution<int> node(0, T - 1);
    for (int e = 0; e < 2 * T; ++e) {
      const int a = node(rng), b = node(rng);
      if (a != b) edges.emplace_back(a, b);
    }
    check_pattern(rng, sizes, edges);
  }
}

// analyze() keeps its symbolic factorization when called again with the same pattern (edges in
// another order, reversed or repeated) and redoes it for a different one, reusing its blocks
// (fewer, more, and blocks of other sizes); storage() writes the same blocks add_block() does.
TEST(BlockSparseCholeskyTest, ReanalysisAndDirectStorage) {
  std::mt19937 rng(102);
  std::normal_distribution<double> N(0.0, 1.0);
  const std::vector<int> sizes_a = {6, 6, 6, 6, 18}, sizes_b = {6, 18, 6, 3, 6};
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 2}};
  const std::vector<std::pair<int, int>> same = {{2, 4}, {0, 3}, {2, 1}, {1, 0}, {3, 2}, {0, 1}};
  const std::vector<std::pair<int, int>> fewer = {{0, 1}, {1, 2}};
  const std::vector<std::pair<int, int>> more = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {0, 2}, {1, 3}};
  BlockSparseCholesky chol;
  for (const auto& [sizes_ptr, pattern] :
       std::vector<std::pair<const std::vector<int>*, const std::vector<std::pair<int, int>>*>>{
           {&sizes_a, &edges}, {&sizes_a, &same}, {&sizes_a, &fewer}, {&sizes_a, &edges}, {&sizes_b, &edges},
           {&sizes_b, &more}, {&sizes_a, &fewer}}) {
    const std::vector<int>& sizes = *sizes_ptr;
    chol.analyze(sizes, *pattern);
    chol.set_zero();
    Eigen::MatrixXd H_expected = Eigen::MatrixXd::Zero(chol.size(), chol.size());
    for (int t = 0; t < 5; ++t) {
      Eigen::MatrixXd B(sizes[t] + 1, sizes[t]);
      for (int i = 0; i < B.rows(); ++i)
        for (int j = 0; j < B.cols(); ++j) B(i, j) = N(rng);
      const Eigen::MatrixXd D = B.transpose() * B + Eigen::MatrixXd::Identity(sizes[t], sizes[t]);
      const BlockSparseCholesky::BlockStorage st = chol.storage(t, t);
      ASSERT_EQ(st.rows, sizes[t]);
      Eigen::Map<Eigen::MatrixXd>(st.data, st.rows, st.cols) += D;
      H_expected.block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]) += D;
    }
    for (const auto& [s, t] : *pattern) {
      Eigen::MatrixXd Js(2, sizes[s]), Jt(2, sizes[t]);
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < sizes[s]; ++j) Js(i, j) = N(rng);
        for (int j = 0; j < sizes[t]; ++j) Jt(i, j) = N(rng);
      }
      chol.add_block(s, s, Js.transpose() * Js);
      chol.add_block(t, t, Jt.transpose() * Jt);
      const Eigen::MatrixXd C = Js.transpose() * Jt;  // block (s, t)
      const BlockSparseCholesky::BlockStorage st = chol.storage(s, t);
      Eigen::Map<Eigen::MatrixXd> M(st.data, st.rows, st.cols);
      if (st.transposed) M += C.transpose();
      else M += C;
      H_expected.block(chol.offset(s), chol.offset(s), sizes[s], sizes[s]) += Js.transpose() * Js;
      H_expected.block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]) += Jt.transpose() * Jt;
      H_expected.block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]) += C;
      H_expected.block(chol.offset(t), chol.offset(s), sizes[t], sizes[s]) += C.transpose();
    }
    EXPECT_LT((chol.dense() - H_expected).norm(), 1e-12 * H_expected.norm());
    ASSERT_TRUE(chol.factorize());
    Eigen::VectorXd b(chol.size());
    for (int i = 0; i < b.size(); ++i) b[i] = N(rng);
    Eigen::VectorXd x = b;
    chol.solve_in_place(x);
    EXPECT_LT((H_expected * x - b).norm(), 1e-10 * b.norm() * H_expected.norm());
  }
  EXPECT_THROW(chol.storage(3, 4), std::out_of_range);  // not an edge of the last pattern
}

// has_block(): the diagonal, the edges and the fill-in of the order. A 4-cycle 0-1-2-3-0 gets
// exactly one chord as fill-in in any elimination order. SAP writes a constraint's block into a
// fill-in block when the pattern left its pair out (sap_solver.cc, update_pattern): a matrix
// with a nonzero block there must factor and solve like the dense one.
TEST(BlockSparseCholeskyTest, FillInBlocksAreStoredAndWritable) {
  std::mt19937 rng(103);
  std::normal_distribution<double> N(0.0, 1.0);
  const std::vector<int> sizes = {6, 6, 6, 6};
  BlockSparseCholesky chol;
  chol.analyze(sizes, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  EXPECT_EQ(chol.num_factor_blocks(), 5);
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(chol.has_block(t, t));
  for (const auto& [s, t] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {3, 0}}) {
    EXPECT_TRUE(chol.has_block(s, t));
    EXPECT_TRUE(chol.has_block(t, s));
  }
  ASSERT_NE(chol.has_block(0, 2), chol.has_block(1, 3));  // one chord, the fill-in
  const int a = chol.has_block(0, 2) ? 0 : 1, c = a + 2;
  EXPECT_EQ(chol.has_block(c, a), chol.has_block(a, c));
  // H = Σ over the cycle's edges and the chord of Jᵀ J + I: SPD, with a block on the chord.
  chol.set_zero();
  Eigen::MatrixXd H = Eigen::MatrixXd::Identity(24, 24);
  for (int t = 0; t < 4; ++t) chol.add_block(t, t, Eigen::MatrixXd::Identity(6, 6));
  for (const auto& [s, t] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {a, c}}) {
    Eigen::MatrixXd Js(3, 6), Jt(3, 6);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 6; ++j) Js(i, j) = N(rng), Jt(i, j) = N(rng);
    chol.add_block(s, s, Js.transpose() * Js);
    chol.add_block(t, t, Jt.transpose() * Jt);
    chol.add_block(s, t, Js.transpose() * Jt);
    H.block(6 * s, 6 * s, 6, 6) += Js.transpose() * Js;
    H.block(6 * t, 6 * t, 6, 6) += Jt.transpose() * Jt;
    H.block(6 * s, 6 * t, 6, 6) += Js.transpose() * Jt;
    H.block(6 * t, 6 * s, 6, 6) += Jt.transpose() * Js;
  }
  EXPECT_LT((chol.dense() - H).norm(), 1e-12 * H.norm());
  ASSERT_TRUE(chol.factorize());
  Eigen::VectorXd b(24);
  for (int i = 0; i < 24; ++i) b[i] = N(rng);
  Eigen::VectorXd x = b;
  chol.solve_in_place(x);
  EXPECT_LT((H * x - b).norm(), 1e-10 * b.norm() * H.norm());
  // The other chord is stored nowhere.
  EXPECT_THROW(chol.storage(1 - a, 3 - a), std::out_of_range);
}

// reset(D) after a factorization (every block, fill-in included, holds factor values) leaves
// exactly blockdiag(D): the 6 × 6 fixed-size path and the other sizes, on a cycle that needs
// fill-in. The next assembly on top of it factors like one started from set_zero().
TEST(BlockSparseCholeskyTest, ResetWritesTheDiagonalAndZeroesTheRest) {
  std::mt19937 rng(104);
  std::normal_distribution<double> N(0.0, 1.0);
  const std::vector<int> sizes = {6, 6, 3, 6, 9};
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}};
  BlockSparseCholesky chol;
  chol.analyze(sizes, edges);
  ASSERT_GT(chol.num_factor_blocks(), static_cast<int>(edges.size()));  // the cycle fills in
  std::vector<Eigen::MatrixXd> D(sizes.size());
  std::vector<const double*> D_data(sizes.size());
  Eigen::MatrixXd H_diag = Eigen::MatrixXd::Zero(30, 30);
  for (size_t t = 0; t < sizes.size(); ++t) {
    Eigen::MatrixXd B(sizes[t] + 2, sizes[t]);
    for (int i = 0; i < B.rows(); ++i)
      for (int j = 0; j < B.cols(); ++j) B(i, j) = N(rng);
    D[t] = B.transpose() * B + Eigen::MatrixXd::Identity(sizes[t], sizes[t]);
    D[t] = (0.5 * (D[t] + D[t].transpose())).eval();  // symmetric to the bit: dense() mirrors the lower triangle
    D_data[t] = D[t].data();
    H_diag.block(chol.offset(static_cast<int>(t)), chol.offset(static_cast<int>(t)), sizes[t], sizes[t]) = D[t];
  }
  for (int round = 0; round < 2; ++round) {
    chol.reset(D_data);
    EXPECT_EQ(chol.dense(), H_diag);  // exact: copies and zeros only
    Eigen::MatrixXd H = H_diag;
    for (const auto& [s, t] : edges) add_random_coupling(rng, chol, sizes, s, t, &H);
    ASSERT_TRUE(chol.factorize());  // every block now holds the factor, fill-in too
    Eigen::VectorXd b(30);
    for (int i = 0; i < 30; ++i) b[i] = N(rng);
    Eigen::VectorXd x = b;
    chol.solve_in_place(x);
    EXPECT_LT((H * x - b).norm(), 1e-10 * b.norm() * H.norm());
  }
  EXPECT_THROW(chol.reset(std::vector<const double*>(4, D_data[0])), std::invalid_argument);
  std::vector<const double*> with_null = D_data;
  with_null[2] = nullptr;
  EXPECT_THROW(chol.reset(with_null), std::invalid_argument);
}

// factorize(skip) / solve_in_place(x, skip) on three components (a cycle with fill-in, a chain,
// a lone node): the kept components solve their own subsystems, exactly as the whole
// factorization does; the skipped ones keep their blocks and their entries of x. A skip that
// splits a component, or wrong sizes, throw.
TEST(BlockSparseCholeskyTest, SkippedComponentsAreLeftAsTheyAre) {
  std::mt19937 rng(105);
  std::normal_distribution<double> N(0.0, 1.0);
  const std::vector<int> sizes = {6, 6, 6, 6, 3, 6, 9, 6};
  // component A: 0-1-2-3-0 (cycle), B: 4-5-6 (chain), C: 7 alone
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}};
  BlockSparseCholesky chol;
  chol.analyze(sizes, edges);
  const int n = chol.size();
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
  auto assemble = [&] {
    chol.set_zero();
    for (int t = 0; t < 8; ++t) chol.add_block(t, t, H.block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]));
    for (const auto& [s, t] : edges) chol.add_block(s, t, H.block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]));
  };
  {
    Eigen::MatrixXd B(n + 3, n);
    for (int i = 0; i < B.rows(); ++i)
      for (int j = 0; j < n; ++j) B(i, j) = N(rng);
    const Eigen::MatrixXd full = B.transpose() * B + Eigen::MatrixXd::Identity(n, n);
    // Keep only the pattern's blocks.
    for (int t = 0; t < 8; ++t)
      H.block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]) =
          full.block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]);
    for (const auto& [s, t] : edges) {
      H.block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]) =
          full.block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]);
      H.block(chol.offset(t), chol.offset(s), sizes[t], sizes[s]) =
          full.block(chol.offset(t), chol.offset(s), sizes[t], sizes[s]);
    }
    H += n * Eigen::MatrixXd::Identity(n, n);  // diagonally dominant: positive definite
  }
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) b[i] = N(rng);
  assemble();
  ASSERT_TRUE(chol.factorize());
  Eigen::VectorXd x_all = b;
  chol.solve_in_place(x_all);
  ASSERT_LT((H * x_all - b).norm(), 1e-10 * b.norm() * H.norm());
  const std::vector<int> component = {0, 0, 0, 0, 1, 1, 1, 2};
  for (int skipped = 0; skipped < 3; ++skipped) {
    SCOPED_TRACE("component " + std::to_string(skipped) + " skipped");
    std::vector<char> skip(8);
    for (int t = 0; t < 8; ++t) skip[t] = component[t] == skipped;
    assemble();
    const Eigen::MatrixXd before = chol.dense();
    ASSERT_TRUE(chol.factorize(skip));
    Eigen::VectorXd x = b;
    chol.solve_in_place(x, skip);
    const Eigen::MatrixXd after = chol.dense();
    for (int t = 0; t < 8; ++t) {
      const auto seg = [&](const Eigen::VectorXd& v) { return v.segment(chol.offset(t), sizes[t]); };
      if (skip[t]) {
        EXPECT_EQ(seg(x), seg(b)) << "node " << t;
        EXPECT_EQ(after.block(chol.offset(t), 0, sizes[t], n), before.block(chol.offset(t), 0, sizes[t], n))
            << "node " << t;
      } else {
        // The components are independent: the kept ones solve exactly as in the whole solve.
        EXPECT_LT((seg(x) - seg(x_all)).norm(), 1e-12 * x_all.norm()) << "node " << t;
      }
    }
  }
  std::vector<char> split(8, 0);
  split[1] = 1;  // half of the cycle
  assemble();
  EXPECT_THROW(chol.factorize(split), std::invalid_argument);
  EXPECT_THROW(chol.factorize(std::vector<char>(7, 0)), std::invalid_argument);
  Eigen::VectorXd x = b;
  EXPECT_THROW(chol.solve_in_place(x, std::vector<char>(9, 0)), std::invalid_argument);
  Eigen::VectorXd short_x(n - 1);
  EXPECT_THROW(chol.solve_in_place(short_x), std::invalid_argument);

  // reset(diagonal_blocks, skip): the kept nodes' diagonal blocks are written and every
  // off-diagonal block zeroed, the skipped nodes' diagonal blocks are not read (null allowed) and
  // keep what they held (here the factor of an earlier factorization); factorize and solve with
  // the same skip then give the kept components' solution to the bit.
  std::vector<std::vector<double>> diag_storage(8);
  std::vector<const double*> diag(8);
  for (int t = 0; t < 8; ++t) {
    const Eigen::MatrixXd D = H.block(chol.offset(t), chol.offset(t), sizes[t], sizes[t]);
    diag_storage[t].assign(D.data(), D.data() + D.size());
    diag[t] = diag_storage[t].data();
  }
  for (int skipped = 0; skipped < 3; ++skipped) {
    SCOPED_TRACE("reset with component " + std::to_string(skipped) + " skipped");
    std::vector<char> skip(8);
    for (int t = 0; t < 8; ++t) skip[t] = component[t] == skipped;
    // The reference: everything assembled, factorized with the skip.
    assemble();
    ASSERT_TRUE(chol.factorize(skip));
    Eigen::VectorXd x_ref = b;
    chol.solve_in_place(x_ref, skip);
    // Leave the whole factor in the blocks, then reset with the skip.
    assemble();
    ASSERT_TRUE(chol.factorize());
    const Eigen::MatrixXd factored = chol.dense();
    std::vector<const double*> diag_skip = diag;
    for (int t = 0; t < 8; ++t)
      if (skip[t]) diag_skip[t] = nullptr;
    chol.reset(diag_skip, skip);
    const Eigen::MatrixXd after_reset = chol.dense();
    for (int t = 0; t < 8; ++t) {
      const int o = chol.offset(t), m = sizes[t];
      if (skip[t])
        EXPECT_EQ(after_reset.block(o, o, m, m), factored.block(o, o, m, m)) << "node " << t;
      else
        EXPECT_EQ(after_reset.block(o, o, m, m), H.block(o, o, m, m)) << "node " << t;
    }
    for (const auto& [s, t] : edges) {
      EXPECT_TRUE(after_reset.block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]).isZero(0.0));
      chol.add_block(s, t, H.block(chol.offset(s), chol.offset(t), sizes[s], sizes[t]));
    }
    ASSERT_TRUE(chol.factorize(skip));
    Eigen::VectorXd x_reset = b;
    chol.solve_in_place(x_reset, skip);
    EXPECT_EQ(x_reset, x_ref);
  }
  EXPECT_THROW(chol.reset(diag, std::vector<char>(7, 0)), std::invalid_argument);
  std::vector<const double*> diag_null = diag;
  diag_null[0] = nullptr;
  EXPECT_THROW(chol.reset(diag_null, std::vector<char>(8, 0)), std::invalid_argument);
}

// The fill-reducing order (AMD) on a 30 × 30 grid graph, whose natural (row-by-row) order fills
// the whole band of width 30 (about 26,000 blocks): nested-dissection-like orders keep the fill
// near n log n. The factor must also still solve the system.
TEST(BlockSparseCholeskyTest, OrderKeepsTheFillOfAGridLow) {
  const int side = 30, T = side * side;
  std::vector<int> sizes(T, 1);
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) {
      if (i + 1 < side) edges.emplace_back(i * side + j, (i + 1) * side + j);
      if (j + 1 < side) edges.emplace_back(i * side + j, i * side + j + 1);
    }
  BlockSparseCholesky chol;
  chol.analyze(sizes, edges);
  std::printf("[ measured ] 30 x 30 grid: %zu edges, %d factor blocks\n", edges.size(), chol.num_factor_blocks());
  EXPECT_GE(chol.num_factor_blocks(), static_cast<int>(edges.size()));
  EXPECT_LE(chol.num_factor_blocks(), 12000);
  std::mt19937 rng(103);
  check_pattern(rng, sizes, edges);
}

TEST(BlockSparseCholeskyTest, RejectsIndefiniteAndBadPatterns) {
  BlockSparseCholesky chol;
  EXPECT_THROW(chol.analyze({3, 0}, {}), std::invalid_argument);
  EXPECT_THROW(chol.analyze({3, 3}, {{0, 0}}), std::invalid_argument);
  chol.analyze({2, 2}, {{0, 1}});
  EXPECT_THROW(chol.analyze({2, 2}, {{0, 2}}), std::invalid_argument);
  chol.analyze({2, 2}, {});
  EXPECT_THROW(chol.off_diagonal_block(0, 1), std::out_of_range);
  chol.add_block(0, 0, -Eigen::MatrixXd::Identity(2, 2));
  chol.add_block(1, 1, Eigen::MatrixXd::Identity(2, 2));
  EXPECT_FALSE(chol.factorize());
}

}  // namespace
}  // namespace coulomb::linalg
