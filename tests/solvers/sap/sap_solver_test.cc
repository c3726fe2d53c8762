// SapSolver (digest §7 tests 7–14): monotone cost, global convergence from a cold start,
// quadratic tail, certificate e_m ≤ ε_r, strong duality, warm start, one-iteration convergence
// in pure stiction, sparse = dense; and the other constraint types against closed forms.
#include "coulomb/solvers/sap/sap_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include <Eigen/Cholesky>

#include "coulomb/solvers/sap/sap_bilateral_constraint.h"
#include "coulomb/solvers/sap/sap_coupler_constraint.h"
#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_limit_constraint.h"
#include "coulomb/solvers/sap/sap_pd_controller_constraint.h"
#include "solvers/sap/sap_test_problems.h"
#include "../../../src/linalg/block_kernels.h"

namespace coulomb::solvers::sap {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

SapSolverParameters tight(double rel_tolerance = 1e-8) {
  SapSolverParameters p;
  p.rel_tolerance = rel_tolerance;
  p.record_history = true;
  return p;
}

// Tests 7, 8, 10: from a cold start every random near-rigid problem converges, monotonically,
// with e_m ≤ ε_r.
// SapProblem's products (A x, J v, Jᵀ γ) against the dense A and J, with both compiled copies
// (baseline and AVX2 + FMA): free bodies' 6 × 6 and 3 × 6 register kernels, small trees (< 8),
// a robot-sized tree (the dense kernel), contacts on one or two trees, and a 1-row limit and
// 2-row bilateral constraint (the generic path). Wrong vector sizes throw.
TEST(SapProblemTest, ProductsMatchDenseWithBothKernelCopies) {
  std::mt19937 rng(211);
  std::normal_distribution<double> N(0.0, 1.0);
  const std::vector<int> sizes = {6, 3, 6, 7, 6, 27, 6, 1, 12};
  std::vector<MatrixXd> A;
  int nv = 0;
  for (int n : sizes) {
    MatrixXd B(n + 1, n);
    for (int i = 0; i < B.rows(); ++i)
      for (int j = 0; j < n; ++j) B(i, j) = N(rng);
    A.push_back(B.transpose() * B + MatrixXd::Identity(n, n));
    nv += n;
  }
  VectorXd v_star(nv);
  for (int i = 0; i < nv; ++i) v_star[i] = N(rng);
  SapProblem problem(0.01, A, v_star);
  const int T = static_cast<int>(sizes.size());
  auto block = [&](int rows, int t) {
    MatrixXd J(rows, sizes[t]);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < sizes[t]; ++c) J(r, c) = N(rng);
    return J;
  };
  FrictionConeParameters p;
  p.mu = 0.5;
  p.stiffness = std::numeric_limits<double>::infinity();
  for (int t0 = 0; t0 < T; ++t0) {
    problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, block(3, t0)));
    for (int t1 = 0; t1 < T; ++t1)
      if (t1 != t0 && (t0 + t1) % 3 == 0)
        problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, block(3, t0), t1, block(3, t1)));
  }
  LimitParameters limit;
  limit.lower = -0.1;
  limit.upper = 0.1;
  problem.add_constraint(std::make_unique<SapLimitConstraint>(5, sizes[5], 4, 0.05, limit));
  BilateralParameters bilateral;
  bilateral.phi0 = BilateralRows::Zero(2);
  bilateral.phidot0 = BilateralRows::Zero(2);
  bilateral.stiffness = BilateralRows::Constant(2, 1e4);
  bilateral.damping = BilateralRows::Constant(2, 1.0);
  problem.add_constraint(std::make_unique<SapBilateralConstraint>(bilateral, 0, block(2, 0), 5, block(2, 5)));
  const MatrixXd J = problem.dense_J(), A_dense = problem.dense_A();
  VectorXd x(nv), gamma(problem.num_rows());
  for (int i = 0; i < nv; ++i) x[i] = N(rng);
  for (int i = 0; i < gamma.size(); ++i) gamma[i] = N(rng);
  for (bool baseline : {false, true}) {
    SCOPED_TRACE(baseline ? "baseline copy" : "the processor's copy");
    linalg::internal::force_baseline_block_kernels(baseline);
    VectorXd Ax(nv), Jx(problem.num_rows()), Jtg(nv);
    Ax.setConstant(std::numeric_limits<double>::quiet_NaN());  // every entry must be written
    Jx.setConstant(std::numeric_limits<double>::quiet_NaN());
    Jtg.setConstant(std::numeric_limits<double>::quiet_NaN());
    problem.multiply_A(x, Ax);
    problem.multiply_J(x, Jx);
    problem.multiply_J_transpose(gamma, Jtg);
    EXPECT_LT((Ax - A_dense * x).norm(), 1e-12 * (A_dense * x).norm());
    EXPECT_LT((Jx - J * x).norm(), 1e-12 * (J * x).norm());
    EXPECT_LT((Jtg - J.transpose() * gamma).norm(), 1e-12 * (J.transpose() * gamma).norm());
    // A on a list of trees: those trees' entries as the whole product's (the same kernels, to
    // the bit); the others untouched.
    const std::vector<int> some_trees = {0, 3, 5, 7};  // a free body, a 7 × 7, the 27 × 27, a 1 × 1
    VectorXd Ax_some = VectorXd::Constant(nv, -7.0);
    problem.multiply_A(x, Ax_some, some_trees);
    for (int t = 0; t < problem.num_trees(); ++t) {
      const bool listed = std::find(some_trees.begin(), some_trees.end(), t) != some_trees.end();
      const int s = problem.tree_start(t), n = problem.tree_size(t);
      if (listed) EXPECT_EQ(Ax_some.segment(s, n), Ax.segment(s, n)) << "tree " << t;
      else EXPECT_EQ(Ax_some.segment(s, n), VectorXd::Constant(n, -7.0)) << "tree " << t;
    }
  }
  linalg::internal::force_baseline_block_kernels(false);
  VectorXd short_v(nv - 1), rows(problem.num_rows()), out(nv);
  EXPECT_THROW(problem.multiply_A(short_v, out), std::invalid_argument);
  EXPECT_THROW(problem.multiply_A(short_v, out, std::vector<int>{0}), std::invalid_argument);
  EXPECT_THROW(problem.multiply_J(short_v, rows), std::invalid_argument);
  EXPECT_THROW(problem.multiply_J_transpose(out, out), std::invalid_argument);
}

TEST(SapSolverTest, ConvergesMonotonicallyFromColdStart) {
  std::mt19937 rng(91);
  std::uniform_int_distribution<int> nv_dist(30, 70), nc_dist(20, 100);
  int total_iterations = 0, worst = 0;
  const int trials = 40;
  for (int trial = 0; trial < trials; ++trial) {
    auto problem = testing::random_sap_problem(rng, nv_dist(rng), nc_dist(rng));
    const SapSolverResults r = SapSolver(tight()).solve(*problem, VectorXd::Zero(problem->nv()));
    ASSERT_EQ(r.status, SapSolverStatus::kSuccess) << "trial " << trial;
    EXPECT_LE(r.momentum_error, 1e-8);
    EXPECT_TRUE(r.v.allFinite());
    for (size_t k = 1; k < r.cost_history.size(); ++k)
      EXPECT_LE(r.cost_history[k],
                r.cost_history[k - 1] + 1000 * 2.2e-16 * std::max(1.0, std::abs(r.cost_history[k - 1])))
          << "trial " << trial << " iteration " << k;
    total_iterations += r.iterations;
    worst = std::max(worst, r.iterations);
  }
  EXPECT_LT(worst, 100);
  RecordProperty("mean_iterations", std::to_string(double(total_iterations) / trials));
  RecordProperty("worst_iterations", std::to_string(worst));
  EXPECT_LT(double(total_iterations) / trials, 30.0);
}

// Test 9: quadratic tail. Once the contact modes settle, Newton's method with α = 1 squares the
// (dimensionless) momentum error e_m each iteration: e_{m+1} ≲ e_m². Checked on the last step
// that starts above 1e-7 (round-off floor ~1e-14).
TEST(SapSolverTest, QuadraticTail) {
  std::mt19937 rng(92);
  for (int trial = 0; trial < 10; ++trial) {
    auto problem = testing::random_sap_problem(rng, 40, 40);
    const SapSolverResults r = SapSolver(tight(1e-13)).solve(*problem, VectorXd::Zero(problem->nv()));
    ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
    const std::vector<double>& e = r.momentum_error_history;
    std::string seq;
    for (double x : e) seq += " " + std::to_string(std::log10(x));
    int k = -1;
    for (int i = 0; i + 1 < static_cast<int>(e.size()); ++i)
      if (e[i] > 1e-7) k = i;
    ASSERT_GE(k, 0);
    EXPECT_LE(e[k + 1], 10.0 * e[k] * e[k] + 1e-13) << "trial " << trial << ", log10 e_m:" << seq;
    EXPECT_NEAR(r.alpha_history[k], 1.0, 1e-3) << "trial " << trial;  // full Newton steps (α − 1 = O(e_m))
  }
}

// Test 11: strong duality ℓ_p(v*) = −ℓ_d(γ*), ℓ_d(γ) = ½γᵀ(W + R)γ + rᵀγ, W = J A⁻¹ Jᵀ,
// r = J v* − v̂ (Castro et al. Eq. 22).
TEST(SapSolverTest, StrongDuality) {
  std::mt19937 rng(93);
  for (int trial = 0; trial < 10; ++trial) {
    auto problem = testing::random_sap_problem(rng, 35, 30);
    const SapSolverResults r = SapSolver(tight(1e-12)).solve(*problem, VectorXd::Zero(problem->nv()));
    ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
    const MatrixXd J = problem->dense_J(), A = problem->dense_A();
    const MatrixXd W = J * A.llt().solve(J.transpose());
    VectorXd R(problem->num_rows()), v_hat(problem->num_rows());
    for (int i = 0; i < problem->num_constraints(); ++i) {
      R.segment(problem->row_start(i), 3) = problem->constraint(i).R();
      v_hat.segment(problem->row_start(i), 3) = problem->constraint(i).v_hat();
    }
    const VectorXd& g = r.gamma;
    const double ell_d = 0.5 * g.dot((W + MatrixXd(R.asDiagonal())) * g) + (J * problem->v_star() - v_hat).dot(g);
    EXPECT_NEAR(r.cost + ell_d, 0.0, 1e-9 * std::abs(r.cost)) << "trial " << trial;
    // Momentum balance A(v − v*) = Jᵀγ at the solution.
    EXPECT_LT((A * (r.v - problem->v_star()) - J.transpose() * g).norm(), 1e-9 * (A * r.v).norm());
  }
}

// Test 12: re-solving from the solution takes 0 Newton iterations.
TEST(SapSolverTest, WarmStartResolvesInZeroIterations) {
  std::mt19937 rng(94);
  auto problem = testing::random_sap_problem(rng, 40, 40);
  const SapSolverResults first = SapSolver(tight()).solve(*problem, VectorXd::Zero(problem->nv()));
  ASSERT_EQ(first.status, SapSolverStatus::kSuccess);
  EXPECT_GT(first.iterations, 0);
  const SapSolverResults again = SapSolver(tight()).solve(*problem, first.v);
  EXPECT_EQ(again.iterations, 0);
  EXPECT_EQ(again.status, SapSolverStatus::kSuccess);
}

// Test 13: every contact in stiction at the guess and at the solution: ℓ is quadratic there and
// SAP converges in exactly one Newton iteration with α = 1.
TEST(SapSolverTest, PureStictionConvergesInOneIteration) {
  std::mt19937 rng(95);
  std::vector<MatrixXd> A = {testing::random_spd(rng, 6), testing::random_spd(rng, 6)};
  auto problem = std::make_unique<SapProblem>(0.01, A, VectorXd::Zero(12));
  for (int i = 0; i < 4; ++i) {
    FrictionConeParameters p{10.0, 1e5, 0.01, -0.01, {}};  // deep, sticky, static
    problem->add_constraint(std::make_unique<SapFrictionConeConstraint>(p, i % 2, 0.1 * testing::random_spd(rng, 6).topRows(3)));
  }
  const SapSolverResults r = SapSolver(tight(1e-12)).solve(*problem, VectorXd::Zero(12));
  ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
  EXPECT_EQ(r.iterations, 1);
  ASSERT_EQ(r.alpha_history.size(), 1u);
  EXPECT_NEAR(r.alpha_history[0], 1.0, 1e-12);
  for (int i = 0; i < problem->num_constraints(); ++i) {
    const auto& c = problem->constraint(i);
    const Eigen::Vector3d vc = r.vc.segment<3>(3 * i);
    const Eigen::Vector3d y(-vc[0] / c.R()[0], -vc[1] / c.R()[1], -(vc[2] - c.v_hat()[2]) / c.R()[2]);
    EXPECT_EQ(friction_cone::region(y, 10.0, c.R()[0], c.R()[2]), FrictionConeRegion::kStiction);
  }
}

// Test 14: the sparse paths (CHOLMOD supernodal, coulomb's block-sparse supernodal) give the
// dense path's solution.
TEST(SapSolverTest, SparseEqualsDense) {
  std::mt19937 rng(96);
  for (int trial = 0; trial < 5; ++trial) {
    auto problem = testing::random_sap_problem(rng, 60, 50);
    SapSolverParameters dense = tight(1e-10), cholmod = tight(1e-10), block = tight(1e-10);
    dense.linear_solver = SapLinearSolver::kDense;
    cholmod.linear_solver = SapLinearSolver::kSparse;
    block.linear_solver = SapLinearSolver::kBlockSparse;
    const SapSolverResults a = SapSolver(dense).solve(*problem, VectorXd::Zero(problem->nv()));
    const SapSolverResults b = SapSolver(cholmod).solve(*problem, VectorXd::Zero(problem->nv()));
    const SapSolverResults c = SapSolver(block).solve(*problem, VectorXd::Zero(problem->nv()));
    EXPECT_FALSE(a.used_sparse);
    EXPECT_TRUE(b.used_sparse);
    EXPECT_TRUE(c.used_sparse);
    ASSERT_EQ(b.status, SapSolverStatus::kSuccess);
    ASSERT_EQ(c.status, SapSolverStatus::kSuccess);
    EXPECT_LT((a.v - b.v).norm(), 1e-9 * std::max(1.0, a.v.norm()));
    EXPECT_LT((a.v - c.v).norm(), 1e-9 * std::max(1.0, a.v.norm()));
  }
}

// A rigid (k = ∞) contact with μ = 0.5, a small penetration and random 3 × 6 Jacobian blocks
// on two free bodies.
struct RandomContact {
  FrictionConeParameters p;
  MatrixXd J0, J1;
};
RandomContact random_free_body_contact(std::mt19937& rng) {
  std::normal_distribution<double> N(0.0, 1.0);
  RandomContact c;
  c.p.mu = 0.5;
  c.p.stiffness = std::numeric_limits<double>::infinity();
  c.p.phi0 = -1e-3 * std::abs(N(rng));
  c.J0.resize(3, 6);
  c.J1.resize(3, 6);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 6; ++k) c.J0(r, k) = N(rng), c.J1(r, k) = N(rng);
  return c;
}

// T free bodies (random SPD 6 × 6 A, v* ~ N(0, 1)) and n random contacts between random pairs
// (one body when the pair repeats); with separated_gap > 0 every second contact starts
// separated by that gap (φ₀ > 0) instead of penetrating.
SapProblem random_free_body_pile(std::mt19937& rng, int T, int n, double separated_gap = 0.0) {
  std::normal_distribution<double> N(0.0, 1.0);
  std::vector<MatrixXd> A;
  for (int t = 0; t < T; ++t) A.push_back(testing::random_spd(rng, 6));
  VectorXd v_star(6 * T);
  for (int i = 0; i < v_star.size(); ++i) v_star[i] = N(rng);
  SapProblem problem(0.01, A, v_star);
  std::uniform_int_distribution<int> pick(0, T - 1);
  for (int i = 0; i < n; ++i) {
    auto [p, J0, J1] = random_free_body_contact(rng);
    if (separated_gap > 0.0 && i % 2 == 1) p.phi0 = separated_gap;
    const int t0 = pick(rng), t1 = pick(rng);
    if (t0 == t1) problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, J0));
    else problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, J0, t1, J1));
  }
  return problem;
}

// The fixed-size kernels (3-row contacts on 6-velocity free bodies) against the dense path: a
// pile of free bodies, every tree of size 6. Both copies of the block kernels (baseline and
// AVX2 + FMA, linalg/block_kernels.h: the Hessian assembly and the factorization) are checked.
TEST(SapSolverTest, SparseEqualsDenseOnFreeBodies) {
  std::mt19937 rng(196);
  for (int trial = 0; trial < 5; ++trial) {
    SapProblem problem = random_free_body_pile(rng, 30, 80);
    SapSolverParameters dense = tight(1e-10), block = tight(1e-10);
    dense.linear_solver = SapLinearSolver::kDense;
    block.linear_solver = SapLinearSolver::kBlockSparse;
    const SapSolverResults a = SapSolver(dense).solve(problem, VectorXd::Zero(problem.nv()));
    const SapSolverResults c = SapSolver(block).solve(problem, VectorXd::Zero(problem.nv()));
    linalg::internal::force_baseline_block_kernels(true);
    const SapSolverResults b = SapSolver(block).solve(problem, VectorXd::Zero(problem.nv()));
    linalg::internal::force_baseline_block_kernels(false);
    ASSERT_EQ(a.status, SapSolverStatus::kSuccess);
    ASSERT_EQ(c.status, SapSolverStatus::kSuccess);
    ASSERT_EQ(b.status, SapSolverStatus::kSuccess);
    EXPECT_EQ(a.iterations, c.iterations);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_LT((a.v - c.v).norm(), 1e-9 * std::max(1.0, a.v.norm()));
    EXPECT_LT((a.v - b.v).norm(), 1e-9 * std::max(1.0, a.v.norm()));
  }
}

// The block-sparse path's active pattern (SapSolverParameters::pattern_from_last_solve,
// sap_solver.cc update_pattern): the Newton matrix holds only the pairs of trees whose
// constraints have G ≠ 0 at the first factorization. Here half the contacts start separated
// (φ₀ = +0.5 mm: G = 0 at v = 0) while v* drives many of them shut, so they become active after
// the first Newton step and the pattern must grow. The solution must be the dense solver's, for
// each kernel copy, with and without the last solve's pairs; a growth must have happened in
// some trial (else this test would not test it), and a problem whose every contact is active
// from the start must not grow.
TEST(SapSolverTest, ActivePatternGrowsAndMatchesDense) {
  std::mt19937 rng(296);
  int grew = 0;
  for (int trial = 0; trial < 6; ++trial) {
    SapProblem problem = random_free_body_pile(rng, 40, 90, /*separated_gap=*/5e-4);
    SapSolverParameters dense = tight(1e-10), block = tight(1e-10);
    dense.linear_solver = SapLinearSolver::kDense;
    block.linear_solver = SapLinearSolver::kBlockSparse;
    const SapSolverResults a = SapSolver(dense).solve(problem, VectorXd::Zero(problem.nv()));
    ASSERT_EQ(a.status, SapSolverStatus::kSuccess);
    EXPECT_FALSE(a.pattern_grew);  // the dense path has no pattern
    for (bool hint : {false, true})
      for (bool baseline : {false, true}) {
        SapSolverParameters prm = block;
        prm.pattern_from_last_solve = hint;
        linalg::internal::force_baseline_block_kernels(baseline);
        SapSolver solver(prm);
        SapSolverResults c = solver.solve(problem, VectorXd::Zero(problem.nv()));
        linalg::internal::force_baseline_block_kernels(false);
        ASSERT_EQ(c.status, SapSolverStatus::kSuccess);
        EXPECT_LT((a.v - c.v).norm(), 1e-9 * std::max(1.0, a.v.norm())) << "trial " << trial;
        grew += c.pattern_grew;
        // Again from near the solution (1e-7 m/s off, so that it takes Newton steps): the pairs
        // active there are the pattern at once.
        VectorXd near = a.v;
        for (int k = 0; k < near.size(); ++k) near[k] += 1e-7 * (k % 2 == 0 ? 1.0 : -1.0);
        c = solver.solve(problem, near);
        ASSERT_EQ(c.status, SapSolverStatus::kSuccess);
        EXPECT_GT(c.iterations, 0);
        EXPECT_FALSE(c.pattern_grew);
        EXPECT_LT((a.v - c.v).norm(), 1e-9 * std::max(1.0, a.v.norm()));
      }
  }
  EXPECT_GT(grew, 0);
  // Every contact penetrating and approaching: all active at v = 0, nothing to grow.
  const int T = 20;
  std::vector<MatrixXd> A;
  for (int t = 0; t < T; ++t) A.push_back(testing::random_spd(rng, 6));
  SapProblem problem(0.01, A, VectorXd::Zero(6 * T));
  for (int t = 0; t + 1 < T; ++t) {
    auto [p, J0, J1] = random_free_body_contact(rng);
    p.phi0 = -1e-3;
    J0.setZero();
    J1.setZero();
    J0(2, 2) = -1.0;  // contact normal along z: tree t below tree t + 1
    J1(2, 2) = 1.0;
    J0(0, 0) = -1.0, J1(0, 0) = 1.0;
    J0(1, 1) = -1.0, J1(1, 1) = 1.0;
    problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t, J0, t + 1, J1));
  }
  SapSolverParameters prm = tight(1e-10);
  prm.linear_solver = SapLinearSolver::kBlockSparse;
  const SapSolverResults c = SapSolver(prm).solve(problem, VectorXd::Zero(problem.nv()));
  ASSERT_EQ(c.status, SapSolverStatus::kSuccess);
  EXPECT_GT(c.iterations, 0);
  EXPECT_FALSE(c.pattern_grew);
}

// Trees that no constraint touches (bodies in free fall) are pinned at v* from the start
// (sap_solver.cc): their velocities must be v* exactly, and the coupled trees' velocities must
// be those of the same problem with the free trees left out, after as many Newton iterations,
// for every linear solver, from a guess far from v* and from the zero guess.
TEST(SapSolverTest, FreeTreesArePinnedAtTheFreeMotion) {
  std::mt19937 rng(198);
  std::normal_distribution<double> N(0.0, 1.0);
  const int T = 36;
  std::vector<int> coupled;  // trees 0, 3, 6, ... and 1, 4, ...: two of every three
  for (int t = 0; t < T; ++t)
    if (t % 3 != 2) coupled.push_back(t);
  std::vector<MatrixXd> A, A_coupled;
  for (int t = 0; t < T; ++t) A.push_back(testing::random_spd(rng, 6));
  for (int t : coupled) A_coupled.push_back(A[t]);
  VectorXd v_star(6 * T), v_star_coupled(6 * static_cast<int>(coupled.size()));
  for (int i = 0; i < v_star.size(); ++i) v_star[i] = N(rng);
  for (size_t k = 0; k < coupled.size(); ++k) v_star_coupled.segment(6 * k, 6) = v_star.segment(6 * coupled[k], 6);
  SapProblem full(0.01, A, v_star), reduced(0.01, A_coupled, v_star_coupled);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(coupled.size()) - 1);
  for (int i = 0; i < 40; ++i) {
    const auto [p, J0, J1] = random_free_body_contact(rng);
    const int k0 = pick(rng), k1 = pick(rng);
    if (k0 == k1) {
      full.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, coupled[k0], J0));
      reduced.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, k0, J0));
    } else {
      full.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, coupled[k0], J0, coupled[k1], J1));
      reduced.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, k0, J0, k1, J1));
    }
  }
  VectorXd far_guess(6 * T);
  for (int i = 0; i < far_guess.size(); ++i) far_guess[i] = 10.0 * N(rng);
  for (SapLinearSolver linear : {SapLinearSolver::kDense, SapLinearSolver::kBlockSparse, SapLinearSolver::kSparse}) {
    for (bool zero_guess : {false, true}) {
      SCOPED_TRACE("linear solver " + std::to_string(static_cast<int>(linear)) + (zero_guess ? ", zero guess" : ""));
      SapSolverParameters prm = tight(1e-10);
      prm.linear_solver = linear;
      const VectorXd guess = zero_guess ? VectorXd::Zero(6 * T) : far_guess;
      const SapSolverResults r = SapSolver(prm).solve(full, guess);
      VectorXd guess_coupled(v_star_coupled.size());
      for (size_t k = 0; k < coupled.size(); ++k) guess_coupled.segment(6 * k, 6) = guess.segment(6 * coupled[k], 6);
      const SapSolverResults rr = SapSolver(prm).solve(reduced, guess_coupled);
      ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
      ASSERT_EQ(rr.status, SapSolverStatus::kSuccess);
      // The free trees do not change the Newton iterates of the others (the line search sees
      // only the coupled trees), so the iteration counts agree.
      EXPECT_EQ(r.iterations, rr.iterations);
      for (int t = 2; t < T; t += 3) EXPECT_EQ(r.v.segment(6 * t, 6), v_star.segment(6 * t, 6)) << "tree " << t;
      double worst = 0.0;
      for (size_t k = 0; k < coupled.size(); ++k)
        worst = std::max(worst, (r.v.segment(6 * coupled[k], 6) - rr.v.segment(6 * k, 6)).norm());
      EXPECT_LT(worst, 1e-8 * std::max(1.0, rr.v.norm()));
    }
  }
}

// Independent islands (SapSolverParameters::island_line_search): six groups of five free
// bodies, contacts only within a group, each group at its own scale of guess error so that the
// groups need different numbers of Newton iterations. Independent truth: each group solved as a
// problem of its own. The whole problem, searched island by island or with one α for all, must
// give the groups' own minimizers; by island it must not take more than one Newton iteration
// beyond the slowest group alone (its stopping test is the whole problem's, which a group's can
// miss by a factor up to √2). With one α the count is not bounded so: here it happens to be 12
// against 13 (the whole problem's looser scale), on clutter scenes it is more (docs/sap.md).
TEST(SapSolverTest, IslandsAreSolvedAsTheirOwnProblems) {
  std::mt19937 rng(199);
  std::normal_distribution<double> N(0.0, 1.0);
  const int K = 6, B = 5;
  std::vector<MatrixXd> A;
  for (int t = 0; t < K * B; ++t) A.push_back(testing::random_spd(rng, 6));
  VectorXd v_star(6 * K * B), guess(6 * K * B);
  for (int i = 0; i < v_star.size(); ++i) v_star[i] = N(rng);
  for (int k = 0; k < K; ++k)  // guess errors from 0.1 to 100: easy and hard groups
    for (int i = 0; i < 6 * B; ++i) guess[6 * B * k + i] = v_star[6 * B * k + i] + std::pow(10.0, k % 4 - 1) * N(rng);
  SapProblem whole(0.01, A, v_star);
  std::vector<std::unique_ptr<SapProblem>> groups;
  std::uniform_int_distribution<int> pick(0, B - 1);
  for (int k = 0; k < K; ++k) {
    groups.push_back(std::make_unique<SapProblem>(0.01, std::vector<MatrixXd>(A.begin() + B * k, A.begin() + B * (k + 1)),
                                                  v_star.segment(6 * B * k, 6 * B)));
    for (int i = 0; i < 8; ++i) {
      const auto [p, J0, J1] = random_free_body_contact(rng);
      const int b0 = pick(rng), b1 = pick(rng);
      if (b0 == b1) {
        whole.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, B * k + b0, J0));
        groups[k]->add_constraint(std::make_unique<SapFrictionConeConstraint>(p, b0, J0));
      } else {
        whole.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, B * k + b0, J0, B * k + b1, J1));
        groups[k]->add_constraint(std::make_unique<SapFrictionConeConstraint>(p, b0, J0, b1, J1));
      }
    }
  }
  for (SapLinearSolver linear : {SapLinearSolver::kDense, SapLinearSolver::kBlockSparse}) {
    SCOPED_TRACE("linear solver " + std::to_string(static_cast<int>(linear)));
    SapSolverParameters by_island = tight(1e-10), one_alpha = tight(1e-10);
    by_island.linear_solver = one_alpha.linear_solver = linear;
    by_island.island_line_search = true;
    one_alpha.island_line_search = false;
    by_island.try_zero_guess = one_alpha.try_zero_guess = false;  // start every group from its guess
    const SapSolverResults r = SapSolver(by_island).solve(whole, guess);
    const SapSolverResults r1 = SapSolver(one_alpha).solve(whole, guess);
    ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
    ASSERT_EQ(r1.status, SapSolverStatus::kSuccess);
    int slowest = 0;
    for (int k = 0; k < K; ++k) {
      SapSolverParameters alone = by_island;
      const SapSolverResults g = SapSolver(alone).solve(*groups[k], guess.segment(6 * B * k, 6 * B));
      ASSERT_EQ(g.status, SapSolverStatus::kSuccess) << "group " << k;
      slowest = std::max(slowest, g.iterations);
      const double scale = std::max(1.0, g.v.norm());
      EXPECT_LT((r.v.segment(6 * B * k, 6 * B) - g.v).norm(), 1e-8 * scale) << "group " << k;
      EXPECT_LT((r1.v.segment(6 * B * k, 6 * B) - g.v).norm(), 1e-8 * scale) << "group " << k;
    }
    std::printf("[ measured ] %d islands: Newton iterations %d by island, %d with one alpha, slowest group alone %d\n", K,
                r.iterations, r1.iterations, slowest);
    EXPECT_LE(r.iterations, slowest + 1);
  }
}

// Converged islands left out (block-sparse path, SapSolverWorkspace::island_done): islands of
// free bodies from easy to hard guesses, some with a robot-sized tree, at the default and a tight
// tolerance, with both kernel copies. The solve ends when every island is done; the margin of 2
// makes that imply Eq. 26 for the whole problem, so the reported momentum error meets ε_r, and
// the velocities agree with the solve that keeps every tree in the Newton matrix (islands off).
TEST(SapSolverTest, ConvergedIslandsEndWithTheWholeProblemConverged) {
  std::mt19937 rng(223);
  std::normal_distribution<double> N(0.0, 1.0);
  for (int trial = 0; trial < 6; ++trial) {
    const int K = 4 + trial, B = 3 + trial % 3;
    std::vector<MatrixXd> A;
    std::vector<int> island_of;
    for (int k = 0; k < K; ++k)
      for (int b = 0; b < B; ++b) {
        A.push_back(testing::random_spd(rng, b == 0 && k % 3 == 1 ? 12 : 6));  // a few 12-velocity trees
        island_of.push_back(k);
      }
    std::vector<int> start(A.size() + 1, 0);
    for (size_t t = 0; t < A.size(); ++t) start[t + 1] = start[t] + static_cast<int>(A[t].rows());
    const int nv = start.back();
    VectorXd v_star(nv), guess(nv);
    for (int i = 0; i < nv; ++i) v_star[i] = N(rng);
    for (size_t t = 0; t < A.size(); ++t)
      for (int i = start[t]; i < start[t + 1]; ++i) guess[i] = v_star[i] + std::pow(10.0, island_of[t] % 4 - 1) * N(rng);
    SapProblem problem(0.01, A, v_star);
    std::uniform_int_distribution<int> pick(0, B - 1);
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < 3 * B; ++i) {
        const int t0 = B * k + pick(rng), t1 = B * k + pick(rng);
        FrictionConeParameters p;
        p.mu = 0.2 + 0.8 * std::abs(N(rng));
        p.stiffness = std::numeric_limits<double>::infinity();
        p.phi0 = -1e-3 + 2e-3 * std::abs(N(rng)) * 0.5;
        auto block = [&](int t) {
          MatrixXd J(3, A[t].rows());
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < J.cols(); ++c) J(r, c) = N(rng);
          return J;
        };
        if (t0 == t1) problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, block(t0)));
        else problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, block(t0), t1, block(t1)));
      }
    for (double tolerance : {1e-6, 1e-10}) {
      for (bool baseline : {false, true}) {
        SCOPED_TRACE("trial " + std::to_string(trial) + ", eps_r " + std::to_string(tolerance) +
                     (baseline ? ", baseline copy" : ""));
        linalg::internal::force_baseline_block_kernels(baseline);
        SapSolverParameters islands = tight(tolerance), whole = tight(1e-13);
        islands.linear_solver = whole.linear_solver = SapLinearSolver::kBlockSparse;
        islands.island_line_search = true;
        whole.island_line_search = false;
        islands.cost_rel_tolerance = whole.cost_rel_tolerance = 0.0;  // Eq. 26 only
        const SapSolverResults r = SapSolver(islands).solve(problem, guess);
        const SapSolverResults ref = SapSolver(whole).solve(problem, guess);
        linalg::internal::force_baseline_block_kernels(false);
        ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
        ASSERT_EQ(ref.status, SapSolverStatus::kSuccess);
        EXPECT_LT(r.momentum_error, tolerance);
        // An error ε_r in momentum moves v by about ε_r times the condition of the Newton matrix.
        EXPECT_LT((r.v - ref.v).norm(), 1e3 * tolerance * std::max(1.0, ref.v.norm()));
      }
    }
  }
}

// The second guess (the simulator's v₀ + δt a): when its cost is lower the solve starts there,
// and the evaluation at it reuses the cost comparison's J v and A(v − v*)
// (evaluate_second_guess). Independent truth: the same solve started from that guess alone,
// which must agree to the bit (iterations, cost, v, γ), and the first guess when it is the
// better one. Problems: one 3-velocity tree with two contacts (spring_cylinder's shape), random
// forests (dense path), and a 12-velocity tree whose contact Jacobians have zero columns (the
// compacted J of a robot's limb) beside free bodies, on the block-sparse path.
TEST(SapSolverTest, SecondGuessIsTheSameSolveAsStartingThere) {
  std::mt19937 rng(227);
  std::normal_distribution<double> N(0.0, 1.0);
  auto contact = [&](double mu) {
    FrictionConeParameters p;
    p.mu = mu;
    p.stiffness = std::numeric_limits<double>::infinity();
    p.phi0 = -1e-3 * std::abs(N(rng));
    return p;
  };
  auto gaussian = [&](int rows, int cols) {
    MatrixXd J(rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) J(r, c) = N(rng);
    return J;
  };
  std::vector<std::unique_ptr<SapProblem>> problems;
  {
    VectorXd v_star(3);
    for (int i = 0; i < 3; ++i) v_star[i] = N(rng);
    problems.push_back(std::make_unique<SapProblem>(0.02, std::vector<MatrixXd>{testing::random_spd(rng, 3)}, v_star));
    for (int k = 0; k < 2; ++k)
      problems.back()->add_constraint(std::make_unique<SapFrictionConeConstraint>(contact(1.0), 0, gaussian(3, 3)));
  }
  for (int trial = 0; trial < 3; ++trial) problems.push_back(testing::random_sap_problem(rng, 40, 25));
  {
    std::vector<MatrixXd> A{testing::random_spd(rng, 12)};
    for (int t = 0; t < 8; ++t) A.push_back(testing::random_spd(rng, 6));
    VectorXd v_star(12 + 6 * 8);
    for (int i = 0; i < v_star.size(); ++i) v_star[i] = N(rng);
    problems.push_back(std::make_unique<SapProblem>(0.01, A, v_star));
    for (int k = 0; k < 6; ++k) {  // the limb: columns 0–5 (the base) and 3 of the 6 joints
      MatrixXd J_limb = gaussian(3, 12);
      for (int c = 6; c < 12; ++c)
        if ((c + k) % 2 == 0) J_limb.col(c).setZero();
      problems.back()->add_constraint(std::make_unique<SapFrictionConeConstraint>(contact(0.8), 0, J_limb, 1 + k, gaussian(3, 6)));
    }
    for (int k = 0; k < 10; ++k)
      problems.back()->add_constraint(
          std::make_unique<SapFrictionConeConstraint>(contact(0.5), 1 + k % 8, gaussian(3, 6), 1 + (k + 3) % 8, gaussian(3, 6)));
  }
  for (size_t i = 0; i < problems.size(); ++i) {
    SapProblem& problem = *problems[i];
    SCOPED_TRACE("problem " + std::to_string(i) + ", nv " + std::to_string(problem.nv()));
    SapSolverParameters prm;
    prm.linear_solver = i + 1 == problems.size() ? SapLinearSolver::kBlockSparse : SapLinearSolver::kAuto;
    const SapSolverResults exact = SapSolver(prm).solve(problem, VectorXd::Zero(problem.nv()));
    ASSERT_EQ(exact.status, SapSolverStatus::kSuccess);
    VectorXd near = exact.v, far = exact.v;
    for (int k = 0; k < problem.nv(); ++k) {
      near[k] += 1e-3 * N(rng);
      far[k] += 1.0 * N(rng);
    }
    // The second guess better, the first better, and the second the solution itself (Eq. 26
    // met there: the solve ends on the evaluation at the guess, and e_m is reported from it).
    for (int order : {0, 1, 2}) {
      SCOPED_TRACE(order == 0 ? "second guess better" : order == 1 ? "first guess better" : "second guess solves");
      const VectorXd& first = order == 1 ? near : far;
      const VectorXd& second = order == 0 ? near : order == 1 ? far : exact.v;
      const VectorXd& best = order == 2 ? exact.v : near;
      SapSolverResults both, alone;
      SapSolver(prm).solve(problem, first, second, both);
      SapSolver(prm).solve(problem, best, alone);
      ASSERT_EQ(both.status, SapSolverStatus::kSuccess);
      EXPECT_EQ(both.iterations, alone.iterations);
      EXPECT_EQ(both.cost, alone.cost);
      EXPECT_EQ(both.momentum_error, alone.momentum_error);
      EXPECT_TRUE((both.v.array() == alone.v.array()).all()) << (both.v - alone.v).norm();
      EXPECT_TRUE((both.gamma.array() == alone.gamma.array()).all()) << (both.gamma - alone.gamma).norm();
    }
  }
}

// One solver object reused across problems of different sizes and patterns (its buffers and
// symbolic analysis are kept between solves) gives what a fresh solver gives, to the bit once
// clear_pattern_hint() has forgotten the last solve's active pairs; so does a problem rebuilt
// with reset() and caller-owned constraints.
// The entries of the free trees (no constraint touches them) in v − v*, A v, ∇ℓ and Δv are set
// once per solve and the Newton iterations then write the touched trees' alone. A reused solver
// whose free and touched trees swap from one problem to the next (bodies landing, bodies thrown
// off) must give a fresh solver's solve to the bit, momentum error included.
TEST(SapSolverTest, ReusedSolverMatchesFreshOnesWhenTheFreeTreesChange) {
  std::mt19937 rng(211);
  std::normal_distribution<double> N(0.0, 1.0);
  const int T = 24;
  std::vector<MatrixXd> A;
  for (int t = 0; t < T; ++t) A.push_back(testing::random_spd(rng, 6));
  std::vector<std::unique_ptr<SapProblem>> problems;
  for (int first : {0, 18, 9, 0}) {  // trees first … first + 5 touched, the other 18 free
    VectorXd v_star(6 * T);
    for (int i = 0; i < v_star.size(); ++i) v_star[i] = N(rng);
    auto problem = std::make_unique<SapProblem>(0.01, A, v_star);
    for (int i = 0; i < 12; ++i) {
      const auto [p, J0, J1] = random_free_body_contact(rng);
      const int k0 = first + i % 6, k1 = first + (i + 1 + i / 6) % 6;
      problem->add_constraint(std::make_unique<SapFrictionConeConstraint>(p, k0, J0, k1, J1));
    }
    problems.push_back(std::move(problem));
  }
  for (SapLinearSolver ls : {SapLinearSolver::kBlockSparse, SapLinearSolver::kDense}) {
    SapSolverParameters prm = tight(1e-10);
    prm.linear_solver = ls;
    SapSolver reused(prm);
    for (int pass = 0; pass < 2; ++pass)
      for (auto& problem : problems) {
        SCOPED_TRACE("linear solver " + std::to_string(static_cast<int>(ls)) + ", pass " + std::to_string(pass));
        VectorXd guess(6 * T);
        for (int i = 0; i < guess.size(); ++i) guess[i] = N(rng);
        const SapSolverResults fresh = SapSolver(prm).solve(*problem, guess);
        ASSERT_EQ(fresh.status, SapSolverStatus::kSuccess);
        reused.clear_pattern_hint();
        SapSolverResults again;
        reused.solve(*problem, guess, again);
        EXPECT_EQ(fresh.iterations, again.iterations);
        EXPECT_EQ((fresh.v - again.v).norm(), 0.0);
        EXPECT_EQ((fresh.gamma - again.gamma).norm(), 0.0);
        EXPECT_EQ(fresh.momentum_error, again.momentum_error);
        // The free trees end at v* exactly.
        for (int t = 0; t < T; ++t) {
          bool touched = false;
          for (int i = 0; i < problem->num_constraints(); ++i)
            for (int k = 0; k < problem->constraint(i).num_trees(); ++k) touched |= problem->constraint(i).tree(k) == t;
          if (!touched) EXPECT_EQ(again.v.segment(6 * t, 6), problem->v_star().segment(6 * t, 6)) << "tree " << t;
        }
      }
  }
}

TEST(SapSolverTest, ReusedSolverAndResetProblemMatchFreshOnes) {
  std::mt19937 rng(197);
  std::vector<std::unique_ptr<SapProblem>> problems;
  problems.push_back(testing::random_sap_problem(rng, 60, 50));
  problems.push_back(testing::random_sap_problem(rng, 30, 10));
  problems.push_back(testing::random_sap_problem(rng, 70, 90));
  for (SapLinearSolver ls : {SapLinearSolver::kDense, SapLinearSolver::kBlockSparse}) {
    SapSolverParameters prm = tight(1e-10);
    prm.linear_solver = ls;
    SapSolver reused(prm);
    for (int pass = 0; pass < 2; ++pass)
      for (auto& problem : problems) {
        const SapSolverResults fresh = SapSolver(prm).solve(*problem, VectorXd::Zero(problem->nv()));
        // With the last solve's active pairs in the first pattern (pattern_from_last_solve) the
        // elimination order, and so the last bits, may differ: the same solution to round-off.
        SapSolverResults hinted;
        reused.solve(*problem, VectorXd::Zero(problem->nv()), hinted);
        EXPECT_LT((fresh.v - hinted.v).norm(), 1e-12 * std::max(1.0, fresh.v.norm()));
        // Forgotten, the solve is a function of the problem alone, to the bit.
        reused.clear_pattern_hint();
        SapSolverResults again;
        again.v = VectorXd::Ones(3);  // stale content is overwritten
        reused.solve(*problem, VectorXd::Zero(problem->nv()), again);
        EXPECT_EQ(fresh.iterations, again.iterations);
        EXPECT_EQ((fresh.v - again.v).norm(), 0.0);
        EXPECT_EQ((fresh.gamma - again.gamma).norm(), 0.0);
      }
  }
  // reset() + borrowed constraints reproduce the owning problem.
  const SapProblem& original = *problems[0];
  std::vector<MatrixXd> A;
  for (int t = 0; t < original.num_trees(); ++t) A.push_back(original.A(t));
  SapProblem rebuilt;
  rebuilt.reset(1.0, {MatrixXd::Identity(2, 2)}, VectorXd::Zero(2));  // something else first
  rebuilt.reset(original.time_step(), A, original.v_star());
  for (int i = 0; i < original.num_constraints(); ++i)
    rebuilt.add_constraint(&problems[0]->mutable_constraint(i));
  EXPECT_EQ(rebuilt.num_rows(), original.num_rows());
  const SapSolverResults a = SapSolver(tight(1e-10)).solve(*problems[0], VectorXd::Zero(original.nv()));
  const SapSolverResults b = SapSolver(tight(1e-10)).solve(rebuilt, VectorXd::Zero(original.nv()));
  EXPECT_EQ((a.v - b.v).norm(), 0.0);
  EXPECT_THROW(rebuilt.reset(0.0, A, original.v_star()), std::invalid_argument);
  EXPECT_THROW(rebuilt.reset(0.01, A, VectorXd::Zero(3)), std::invalid_argument);
}

// Jacobian blocks with zero columns (a contact on one leg, a limit on one joint) are compacted
// and their Hessian terms scattered. The same problems with the zero entries replaced by 1e-300
// (numerically the same matrices, but nothing to compact) must give the same iterates.
TEST(SapSolverTest, CompactedJacobianBlocksMatchDenseOnes) {
  std::mt19937 rng(198);
  std::normal_distribution<double> N(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 6; ++trial) {
    std::vector<MatrixXd> A = {testing::random_spd(rng, 18), testing::random_spd(rng, 12), testing::random_spd(rng, 6)};
    VectorXd v_star(36);
    for (int i = 0; i < 36; ++i) v_star[i] = N(rng);
    SapProblem sparse(0.01, A, v_star), filled(0.01, A, v_star);
    auto block = [&](int rows, int n, MatrixXd& J, MatrixXd& J_filled) {
      J = MatrixXd::Zero(rows, n);
      const int always = static_cast<int>(u(rng) * n);  // at least one nonzero column
      for (int c = 0; c < n; ++c)
        if (c == always || u(rng) < 0.4)
          for (int r = 0; r < rows; ++r) J(r, c) = N(rng);
      J_filled = (J.array() == 0.0).select(1e-300, J);
    };
    std::uniform_int_distribution<int> pick(0, 2);
    for (int i = 0; i < 25; ++i) {
      FrictionConeParameters p;
      p.mu = 0.3 + u(rng);
      p.stiffness = std::numeric_limits<double>::infinity();
      p.phi0 = -1e-3 * u(rng);
      const int t0 = pick(rng), t1 = (t0 + 1 + pick(rng) % 2) % 3;
      MatrixXd J0, J0f, J1, J1f;
      block(3, A[t0].rows(), J0, J0f);
      block(3, A[t1].rows(), J1, J1f);
      if (u(rng) < 0.5) {
        sparse.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, J0));
        filled.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, J0f));
      } else {
        sparse.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, J0, t1, J1));
        filled.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, t0, J0f, t1, J1f));
      }
    }
    // Joint limits on single coordinates (1-row blocks with one nonzero column).
    for (int j = 0; j < 18; j += 3) {
      LimitParameters lp;
      lp.lower = -0.1;
      lp.upper = 0.1;
      sparse.add_constraint(std::make_unique<SapLimitConstraint>(0, 18, j, 0.09, lp));
      filled.add_constraint(std::make_unique<SapLimitConstraint>(0, 18, j, 0.09, lp));
    }
    for (SapLinearSolver ls : {SapLinearSolver::kDense, SapLinearSolver::kBlockSparse}) {
      SapSolverParameters prm = tight(1e-10);
      prm.linear_solver = ls;
      const SapSolverResults a = SapSolver(prm).solve(sparse, VectorXd::Zero(36));
      const SapSolverResults b = SapSolver(prm).solve(filled, VectorXd::Zero(36));
      ASSERT_EQ(b.status, SapSolverStatus::kSuccess) << "filled, solver " << static_cast<int>(ls);
      ASSERT_EQ(a.status, SapSolverStatus::kSuccess) << "compacted, solver " << static_cast<int>(ls) << " trial " << trial;
      EXPECT_EQ(a.iterations, b.iterations);
      EXPECT_LT((a.v - b.v).norm(), 1e-12 * std::max(1.0, b.v.norm()));
    }
  }
}

TEST(SapSolverTest, BacktrackingAlsoConverges) {
  std::mt19937 rng(97);
  auto problem = testing::random_sap_problem(rng, 40, 30);
  SapSolverParameters p = tight();
  p.line_search = SapLineSearch::kBacktracking;
  const SapSolverResults r = SapSolver(p).solve(*problem, VectorXd::Zero(problem->nv()));
  EXPECT_EQ(r.status, SapSolverStatus::kSuccess);
  const SapSolverResults exact = SapSolver(tight()).solve(*problem, VectorXd::Zero(problem->nv()));
  EXPECT_LT((r.v - exact.v).norm(), 1e-6 * std::max(1.0, exact.v.norm()));
}

TEST(SapSolverTest, RejectsBadGuess) {
  std::mt19937 rng(98);
  auto problem = testing::random_sap_problem(rng, 10, 5);
  EXPECT_THROW(SapSolver().solve(*problem, VectorXd::Zero(3)), std::invalid_argument);
  VectorXd nan_guess = VectorXd::Zero(problem->nv());
  nan_guess[0] = std::nan("");
  EXPECT_THROW(SapSolver().solve(*problem, nan_guess), std::invalid_argument);
}

// A non-finite A block or v* is refused with the block named, by the constructor and by reset().
TEST(SapSolverTest, RejectsNonFiniteProblem) {
  std::mt19937 rng(100);
  const std::vector<MatrixXd> A = {testing::random_spd(rng, 6), testing::random_spd(rng, 27)};
  const VectorXd v_star = VectorXd::Zero(33);
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    for (int entry : {0, 27 * 27 - 1, 100}) {
      std::vector<MatrixXd> A_bad = A;
      A_bad[1].data()[entry] = bad;
      EXPECT_THROW(SapProblem(0.01, A_bad, v_star), std::invalid_argument) << bad << " at " << entry;
      SapProblem problem(0.01, A, v_star);
      try {
        problem.reset(0.01, A_bad, v_star);
        ADD_FAILURE() << "reset accepted " << bad << " at " << entry;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("A block 1 is not finite"), std::string::npos) << e.what();
      }
      VectorXd v_bad = v_star;
      v_bad[entry % 33] = bad;
      EXPECT_THROW(SapProblem(0.01, A, v_bad), std::invalid_argument) << bad;
    }
}

// A contact's Jacobian blocks are copied and checked on every reset (SapConstraint::set_jacobians):
// NaN or ±inf anywhere in either block, contiguous or a strided block of a larger matrix, throws;
// a finite strided block is copied entry for entry.
TEST(SapSolverTest, ContactRejectsNonFiniteJacobian) {
  std::mt19937 rng(101);
  std::normal_distribution<double> N(0.0, 1.0);
  FrictionConeParameters p;
  p.mu = 0.5;
  p.stiffness = 1e5;
  p.dissipation_time = 0.01;
  MatrixXd big(5, 14);  // blocks of it: outer stride 5
  for (int i = 0; i < big.size(); ++i) big.data()[i] = N(rng);
  SapFrictionConeConstraint cone(p, 0, big.block(1, 0, 3, 6), 1, big.block(2, 6, 3, 8));
  EXPECT_EQ(cone.jacobian(0), MatrixXd(big.block(1, 0, 3, 6)));
  EXPECT_EQ(cone.jacobian(1), MatrixXd(big.block(2, 6, 3, 8)));
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    for (int side = 0; side < 2; ++side)
      for (int entry : {0, 7, 17}) {
        MatrixXd J0 = MatrixXd(big.block(1, 0, 3, 6)), J1 = MatrixXd(big.block(2, 6, 3, 8));
        (side == 0 ? J0 : J1).data()[entry] = bad;
        EXPECT_THROW(cone.reset(p, 0, J0, 1, J1), std::invalid_argument) << bad << " " << side << " " << entry;
        EXPECT_THROW(SapFrictionConeConstraint(p, 0, J0, 1, J1), std::invalid_argument) << bad << " " << side;
        MatrixXd strided = big;
        strided(side == 0 ? 1 + entry % 3 : 2 + entry % 3, side == 0 ? entry / 3 : 6 + entry / 3) = bad;
        EXPECT_THROW(cone.reset(p, 0, strided.block(1, 0, 3, 6), 1, strided.block(2, 6, 3, 8)), std::invalid_argument);
      }
  cone.reset(p, 0, big.block(1, 0, 3, 6), 1, big.block(2, 6, 3, 8));  // finite again: accepted
  EXPECT_EQ(cone.jacobian(1), MatrixXd(big.block(2, 6, 3, 8)));
}

// solve() with two guesses starts from the one with the lower ℓ_p, unless the first already
// meets Eq. 26. Independent truth: the same solver with that guess alone (the path after the
// choice is the same, so the results are identical, not merely close); and a guess at the
// solution takes 0 iterations from either position.
TEST(SapSolverTest, SecondGuessStartsFromTheLowerCost) {
  std::mt19937 rng(99);
  std::normal_distribution<double> N(0.0, 1.0);
  SapSolverParameters prm = tight();
  prm.try_zero_guess = false;  // the costs at the guesses decide alone
  for (int trial = 0; trial < 6; ++trial) {
    auto problem = testing::random_sap_problem(rng, 40, 30);
    const int nv = problem->nv();
    const SapSolverResults exact = SapSolver(prm).solve(*problem, VectorXd::Zero(nv));
    ASSERT_EQ(exact.status, SapSolverStatus::kSuccess);
    VectorXd near = exact.v, far = exact.v;
    for (int i = 0; i < nv; ++i) {
      near[i] += 1e-3 * N(rng);
      far[i] += 1.0 * N(rng);
    }
    const SapSolverResults from_near = SapSolver(prm).solve(*problem, near);
    const SapSolverResults from_far = SapSolver(prm).solve(*problem, far);
    ASSERT_LT(from_near.cost_history[0], from_far.cost_history[0]) << trial;  // the premise
    ASSERT_GT(from_near.iterations, 0) << trial;
    SapSolverResults r;
    for (bool near_first : {false, true}) {
      SapSolver solver(prm);
      if (near_first) solver.solve(*problem, near, far, r);
      else solver.solve(*problem, far, near, r);
      EXPECT_EQ(r.iterations, from_near.iterations) << trial << " " << near_first;
      EXPECT_EQ(r.cost_history, from_near.cost_history) << trial << " " << near_first;
      EXPECT_EQ(r.v, from_near.v) << trial << " " << near_first;
    }
    // At the solution: 0 iterations first (Eq. 26 holds, the second is not looked at) or second
    // (the lower cost).
    SapSolver(prm).solve(*problem, exact.v, far, r);
    EXPECT_EQ(r.iterations, 0) << trial;
    SapSolver(prm).solve(*problem, far, exact.v, r);
    EXPECT_EQ(r.iterations, 0) << trial;
    EXPECT_LT((r.v - exact.v).norm(), 1e-6 * std::max(1.0, exact.v.norm())) << trial;
  }
  auto problem = testing::random_sap_problem(rng, 10, 5);
  const VectorXd zero = VectorXd::Zero(problem->nv());
  VectorXd nan_guess = zero;
  nan_guess[0] = std::nan("");
  SapSolverResults r;
  EXPECT_THROW(SapSolver().solve(*problem, zero, VectorXd::Zero(3), r), std::invalid_argument);
  EXPECT_THROW(SapSolver().solve(*problem, zero, nan_guess, r), std::invalid_argument);
  EXPECT_THROW(SapSolver().solve(*problem, nan_guess, zero, r), std::invalid_argument);
}

// SapProblem::set_A_factors: the caller's Cholesky factors of A (the simulator's, from stage 1)
// replace the solver's own factorization for the Delassus estimates. Independent truth: the
// solve without them (Eigen's LLT factors are another algorithm than the solver's kernels, so
// agreement is to round-off, not bitwise). A factor of another matrix (2A) changes the
// regularization R and so the solution: the factors are read. A tree above 32 velocities is
// factorized by the solver as without them: its factor (here zeros of the right size) is not
// read. Wrong counts and sizes throw; reset() drops the factors.
TEST(SapSolverTest, CallersAFactorsReplaceTheSolversOwn) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    auto problem = testing::random_sap_problem(rng, 40, 30);
    const int nv = problem->nv();
    const SapSolverResults own = SapSolver(tight()).solve(*problem, VectorXd::Zero(nv));
    ASSERT_EQ(own.status, SapSolverStatus::kSuccess);
    std::vector<MatrixXd> L, L_doubled;
    for (int t = 0; t < problem->num_trees(); ++t) {
      L.push_back(Eigen::LLT<MatrixXd>(problem->A(t)).matrixL());
      L_doubled.push_back(Eigen::LLT<MatrixXd>(2.0 * problem->A(t)).matrixL());
    }
    problem->set_A_factors(L);
    EXPECT_TRUE(problem->has_A_factors());
    const SapSolverResults given = SapSolver(tight()).solve(*problem, VectorXd::Zero(nv));
    ASSERT_EQ(given.status, SapSolverStatus::kSuccess);
    EXPECT_EQ(given.iterations, own.iterations) << trial;
    EXPECT_LT((given.v - own.v).norm(), 1e-9 * std::max(1.0, own.v.norm())) << trial;
    problem->set_A_factors(L_doubled);
    const SapSolverResults doubled = SapSolver(tight()).solve(*problem, VectorXd::Zero(nv));
    EXPECT_GT((doubled.v - own.v).norm(), 1e-6 * std::max(1.0, own.v.norm())) << trial;
    // Wrong count, wrong size.
    std::vector<MatrixXd> short_list(L.begin(), L.end() - 1), bad_size = L;
    bad_size[0] = MatrixXd::Identity(L[0].rows() + 1, L[0].rows() + 1);
    EXPECT_THROW(problem->set_A_factors(short_list), std::invalid_argument);
    EXPECT_THROW(problem->set_A_factors(bad_size), std::invalid_argument);
  }
  // A 40-velocity tree beside a 6-velocity one, a contact on each and one between them.
  const std::vector<MatrixXd> A = {testing::random_spd(rng, 6), testing::random_spd(rng, 40)};
  std::normal_distribution<double> N(0.0, 1.0);
  VectorXd v_star(46);
  for (int i = 0; i < 46; ++i) v_star[i] = N(rng);
  auto block = [&](int n) {
    MatrixXd J(3, n);
    for (int i = 0; i < J.size(); ++i) J.data()[i] = N(rng);
    return J;
  };
  FrictionConeParameters p;
  p.mu = 0.5;
  p.stiffness = std::numeric_limits<double>::infinity();
  p.phi0 = -1e-3;
  const MatrixXd J0 = block(6), J1 = block(40), J01a = block(6), J01b = block(40);
  auto build = [&](SapProblem& problem) {
    problem.reset(0.01, A, v_star);
    problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, 0, J0));
    problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, 1, J1));
    problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, 0, J01a, 1, J01b));
  };
  SapProblem problem(0.01, A, v_star);
  build(problem);
  const SapSolverResults own = SapSolver(tight()).solve(problem, VectorXd::Zero(46));
  ASSERT_EQ(own.status, SapSolverStatus::kSuccess);
  build(problem);
  EXPECT_FALSE(problem.has_A_factors());
  problem.set_A_factors({Eigen::LLT<MatrixXd>(A[0]).matrixL(), MatrixXd::Zero(40, 40)});
  const SapSolverResults given = SapSolver(tight()).solve(problem, VectorXd::Zero(46));
  ASSERT_EQ(given.status, SapSolverStatus::kSuccess);
  EXPECT_LT((given.v - own.v).norm(), 1e-9 * std::max(1.0, own.v.norm()));
  build(problem);  // reset() dropped the factors: the solver's own, bit for bit
  EXPECT_FALSE(problem.has_A_factors());
  EXPECT_EQ(SapSolver(tight()).solve(problem, VectorXd::Zero(46)).v, own.v);
}

// calc_along's closed-form curvature Δv_cᵀ G Δv_c equals the quadratic form of calc()'s G for
// the limit and PD constraints (active and inactive rows, saturated and unsaturated).
TEST(SapConstraintsTest, CalcAlongMatchesQuadraticFormOfG) {
  std::mt19937 rng(199);
  std::normal_distribution<double> N(0.0, 1.0);
  LimitParameters lp;
  lp.lower = -0.5;
  lp.upper = 0.5;
  SapLimitConstraint limit(0, 4, 2, 0.49, lp);
  limit.prepare(0.01, MatrixXd::Identity(2, 2));
  SapPdControllerConstraint pd(0, 4, 1, 0.1, PdControllerParameters{100.0, 5.0, 0.3, 0.0, 2.0});
  pd.prepare(0.01, MatrixXd::Identity(1, 1));
  int active = 0, saturated = 0;
  for (int trial = 0; trial < 400; ++trial) {
    for (const SapConstraint* c : {static_cast<const SapConstraint*>(&limit), static_cast<const SapConstraint*>(&pd)}) {
      const int n = c->num_rows();
      VectorXd vc(n), dvc(n), gamma(n), gamma_along(n);
      for (int r = 0; r < n; ++r) vc[r] = 3.0 * N(rng), dvc[r] = N(rng);
      MatrixXd G(n, n);
      Eigen::Ref<MatrixXd> G_ref(G);
      const double ell = c->calc(vc, gamma, &G_ref);
      double curvature = -1.0;
      const double ell_along = c->calc_along(vc, dvc, gamma_along, &curvature);
      EXPECT_NEAR(curvature, dvc.dot(G * dvc), 1e-12 * (1.0 + std::abs(curvature)));
      EXPECT_NEAR(ell_along, ell, 1e-13 * (1.0 + std::abs(ell)));
      EXPECT_EQ(gamma_along, gamma);
      if (c == &limit && G.diagonal().sum() > 0.0) ++active;
      if (c == &pd && G(0, 0) == 0.0) ++saturated;
    }
  }
  EXPECT_GT(active, 50);
  EXPECT_GT(saturated, 50);
}

// One joint of inertia m driven by the implicit PD actuator: m (v − v*) = δt τ(v) with
// τ = Kp (q_t − q₀ − δt v) + Kd (v_t − v), clamped to ±e.
TEST(SapConstraintsTest, PdControllerMatchesImplicitClosedForm) {
  const double m = 0.8, dt = 0.01, v_star = 0.3, q0 = 0.1;
  PdControllerParameters pd{200.0, 5.0, 0.6, 0.0, 1e9};
  auto solve = [&](const PdControllerParameters& p) {
    SapProblem problem(dt, {MatrixXd::Constant(1, 1, m)}, VectorXd::Constant(1, v_star));
    problem.add_constraint(std::make_unique<SapPdControllerConstraint>(0, 1, 0, q0, p));
    return SapSolver(tight(1e-12)).solve(problem, VectorXd::Zero(1));
  };
  const double expected = (m * v_star + dt * (pd.kp * (pd.q_target - q0) + pd.kd * pd.v_target)) /
                          (m + dt * (dt * pd.kp + pd.kd));
  EXPECT_NEAR(solve(pd).v[0], expected, 1e-12);
  // With an effort limit below the unclamped torque: v = v* + δt e / m.
  pd.effort_limit = 2.0;
  EXPECT_NEAR(solve(pd).v[0], v_star + dt * 2.0 / m, 1e-12);
}

// SapLimitConstraint::acts (the simulator's check of the limits its window left out) agrees with
// the constraint's own projection: γ > 0 on some row after prepare() exactly when acts() says so,
// for one- and two-sided limits, both integrator position predictions (θ_vq = 1 and ½, with a
// start velocity v₀), finite and infinite stiffness, over positions inside, at and past the
// limits and velocities of both signs.
TEST(SapConstraintsTest, LimitActsAgreesWithTheProjection) {
  std::mt19937 rng(311);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  int acting = 0, idle = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    LimitParameters lp;
    const int sides = trial % 3;  // 0: lower, 1: upper, 2: both
    lp.lower = sides == 1 ? -inf : -0.3;
    lp.upper = sides == 0 ? inf : 0.4;
    lp.theta_vq = trial % 2 == 0 ? 1.0 : 0.5;
    lp.v0 = 2.0 * U(rng);
    if (trial % 5 == 0) {
      lp.stiffness = 1e4;
      lp.dissipation_time = 0.02;
    }
    const double dt = trial % 4 == 0 ? 1e-3 : 1e-2;
    const double q0 = 0.5 * U(rng) + (trial % 7 == 0 ? 0.35 : 0.0);
    const double v = 5.0 * U(rng);
    SapLimitConstraint limit(0, 1, 0, q0, lp);
    const int n = limit.num_rows();
    limit.prepare(dt, 2.0 * MatrixXd::Identity(n, n));
    VectorXd vc(n), gamma(n);
    int r = 0;
    if (std::isfinite(lp.lower)) vc[r++] = v;
    if (std::isfinite(lp.upper)) vc[r] = -v;
    limit.calc(vc, gamma, nullptr);
    const bool pushes = (gamma.array() > 0.0).any();
    ASSERT_EQ(SapLimitConstraint::acts(q0, v, dt, lp), pushes)
        << "trial " << trial << " q0 " << q0 << " v " << v << " gamma " << gamma.transpose();
    (pushes ? acting : idle)++;
  }
  EXPECT_GT(acting, 400);  // both outcomes are exercised
  EXPECT_GT(idle, 400);
}

// A joint pushed into its lower limit stops there (near-rigid), and one moving away is free.
TEST(SapConstraintsTest, LimitStopsMotionIntoTheLimit) {
  const double m = 1.0, dt = 0.01;
  LimitParameters lim;
  lim.lower = 0.0;
  lim.upper = 1.0;
  auto solve = [&](double q0, double v_star) {
    SapProblem problem(dt, {MatrixXd::Constant(1, 1, m)}, VectorXd::Constant(1, v_star));
    problem.add_constraint(std::make_unique<SapLimitConstraint>(0, 1, 0, q0, lim));
    return SapSolver(tight(1e-12)).solve(problem, VectorXd::Zero(1));
  };
  // At the limit, pushed in at 1 m/s: the velocity after the step is (close to) zero: the
  // near-rigid regularization allows v ≈ −v*·R/(R + w) with R = w/(4π²).
  const SapSolverResults r = solve(0.0, -1.0);
  EXPECT_NEAR(r.v[0], -1.0 * (1.0 / (4 * M_PI * M_PI)) / (1 + 1.0 / (4 * M_PI * M_PI)), 1e-10);
  // Far from the limits, moving away: unconstrained.
  EXPECT_NEAR(solve(0.5, 0.7).v[0], 0.7, 1e-12);
}

// Coupler q_0 = 2 q_1 (near-rigid) from a consistent state.
TEST(SapConstraintsTest, CouplerTiesTwoCoordinates) {
  const double dt = 0.01;
  SapProblem problem(dt, {MatrixXd::Identity(2, 2)}, (VectorXd(2) << 1.0, 0.0).finished());
  problem.add_constraint(std::make_unique<SapCouplerConstraint>(0, 2, 0, 1, 0.2, 0.1, CouplerParameters{2.0, 0.0, {}}));
  const SapSolverResults r = SapSolver(tight(1e-12)).solve(problem, VectorXd::Zero(2));
  // Momentum: v_0 − 1 = γ, v_1 = −2γ; constraint (regularized): |v_0 − 2 v_1| small.
  EXPECT_NEAR(r.v[0] - 1.0, r.gamma[0], 1e-12);
  EXPECT_NEAR(r.v[1], -2.0 * r.gamma[0], 1e-12);
  // Regularized: the violation rate is the fraction R/(W + R) = 1/(4π² + 1) of the free one
  // (W = 1 + ρ² = 5, R = W/(4π²), v̂ = 0 since g₀ = 0).
  EXPECT_NEAR(r.v[0] - 2.0 * r.v[1], 1.0 / (4 * M_PI * M_PI + 1), 1e-10);
}

}  // namespace
}  // namespace coulomb::solvers::sap

namespace coulomb::solvers::sap {
namespace {

// Regression (issue 18, mutation campaign scene 4619: two Pandas loaded in one place): a contact
// whose Jacobian vanishes (W_ii = 0, here a point on the common joint axis of two links) had
// R_t = σ w = 0, its projection divided 0 by 0 and every step failed with NaN impulses. Such a
// contact moves nothing: the solve must equal the one without it, and its impulse be finite with
// γ_t = 0 and γ_n the compliant spring's δt k (−φ₀) (near-rigid k = ∞: finite, ≥ 0).
TEST(SapSolverTest, ContactWithZeroJacobianMovesNothingAndStaysFinite) {
  for (const double stiffness : {1e6, std::numeric_limits<double>::infinity()}) {
    const double dt = 1e-3;
    std::vector<MatrixXd> A{(MatrixXd(2, 2) << 2.0, 0.3, 0.3, 1.0).finished(), MatrixXd::Identity(1, 1) * 3.0};
    const VectorXd v_star = (VectorXd(3) << 0.4, -1.0, -0.7).finished();
    FrictionConeParameters p;
    p.mu = 0.5;
    p.stiffness = stiffness;
    p.dissipation_time = 0.0;
    p.phi0 = -0.18;  // 180 mm deep, as the overlapping robots
    auto with_zero = [&](bool add_zero) {
      SapProblem problem(dt, A, v_star);
      FrictionConeParameters q = p;
      q.phi0 = -1e-4;
      problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(
          q, 0, (MatrixXd(3, 2) << 1.0, 0.0, 0.0, 1.0, 0.5, 1.0).finished(), 1,
          (MatrixXd(3, 1) << 0.0, 0.2, -1.0).finished()));
      if (add_zero)
        problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, 0, MatrixXd::Zero(3, 2), 1, MatrixXd::Zero(3, 1)));
      return SapSolver(tight(1e-12)).solve(problem, VectorXd::Zero(3));
    };
    const SapSolverResults reference = with_zero(false), r = with_zero(true);
    ASSERT_EQ(r.status, SapSolverStatus::kSuccess) << "k = " << stiffness;
    EXPECT_TRUE(std::isfinite(r.momentum_error));
    EXPECT_LE((r.v - reference.v).norm(), 1e-10 * (1.0 + reference.v.norm())) << "k = " << stiffness;
    ASSERT_TRUE(r.gamma.allFinite()) << r.gamma.transpose();
    const Eigen::Vector3d g = r.gamma.tail<3>();
    EXPECT_EQ(g[0], 0.0);
    EXPECT_EQ(g[1], 0.0);
    EXPECT_GE(g[2], 0.0);
    if (std::isfinite(stiffness)) {
      EXPECT_NEAR(g[2], dt * stiffness * 0.18, 1e-9 * dt * stiffness * 0.18);
    }
  }
}

// The momentum error of a solve is never NaN (steps.csv, mutation campaign URDF 2494, 4564, 8085):
// with an overflowing or NaN gradient it is +∞ (it was NaN, or 0 when the scale was NaN), which
// the outputs report as a failed step's residual.
TEST(SapSolverTest, MomentumErrorOfAnOverflowingProblemIsNotNaN) {
  // A = 1e300 I and velocities of 1e10: the gradient A (v − v*) and the momentum A v overflow
  // together, and ‖D̃∇ℓ‖ / ‖D̃p‖ was ∞/∞ = NaN.
  std::vector<MatrixXd> A{MatrixXd::Identity(2, 2) * 1e300};
  const VectorXd v_star = VectorXd::Constant(2, -1e10);
  SapProblem problem(1e-3, A, v_star);
  FrictionConeParameters p;
  p.mu = 1.0;
  p.stiffness = std::numeric_limits<double>::infinity();
  p.phi0 = -1.0;
  problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, 0, (MatrixXd(3, 2) << 1, 0, 0, 1, 1, 1).finished()));
  SapSolverParameters prm = tight(1e-12);
  prm.try_zero_guess = false;
  const SapSolverResults r = SapSolver(prm).solve(problem, VectorXd::Constant(2, 1e10));
  EXPECT_NE(r.status, SapSolverStatus::kSuccess);
  EXPECT_EQ(r.momentum_error, std::numeric_limits<double>::infinity()) << "status " << to_string(r.status);
}

}  // namespace
}  // namespace coulomb::solvers::sap
