// Digest §7 test 6: the O(n) line-search function against direct evaluation and finite
// differences; the exact search finds the minimizer along the line.
#include "coulomb/solvers/sap/sap_line_search.h"

#include <gtest/gtest.h>

#include <array>

#include "coulomb/solvers/sap/sap_solver.h"
#include "../../../src/linalg/block_kernels.h"
#include "solvers/sap/sap_test_problems.h"

namespace coulomb::solvers::sap {
namespace {

// ℓ_p(v) evaluated from scratch.
double direct_cost(const SapProblem& problem, const Eigen::VectorXd& v) {
  const Eigen::VectorXd dv = v - problem.v_star();
  double ell = 0.5 * dv.dot(problem.dense_A() * dv);
  const Eigen::VectorXd vc = problem.dense_J() * v;
  Eigen::VectorXd gamma(problem.num_rows());
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const int r = problem.row_start(i), n = problem.constraint(i).num_rows();
    ell += problem.constraint(i).calc(vc.segment(r, n), gamma.segment(r, n), nullptr);
  }
  return ell;
}

TEST(SapLineSearchTest, DerivativesMatchDirectEvaluation) {
  std::mt19937 rng(81);
  for (int trial = 0; trial < 10; ++trial) {
    auto problem = testing::random_sap_problem(rng, 30, 20);
    SapSolver(SapSolverParameters{.max_iterations = 0}).solve(*problem, Eigen::VectorXd::Zero(problem->nv()));  // prepare
    const Eigen::VectorXd v = testing::random_vector(rng, problem->nv());
    const Eigen::VectorXd dv = testing::random_vector(rng, problem->nv());
    const Eigen::VectorXd vc = problem->dense_J() * v;
    const SapLineSearchFunction f(*problem, v, vc, dv);
    for (double alpha : {0.0, 0.3, 0.9, 1.4}) {
      const double direct = direct_cost(*problem, v + alpha * dv);
      EXPECT_NEAR(f.cost(alpha), direct, 1e-10 * std::max(1.0, std::abs(direct)));
      const double h = 1e-6;
      const double d_fd = (f.cost(alpha + h) - f.cost(alpha - h)) / (2 * h);
      double d2 = 0.0;
      const double d = f.derivative(alpha, &d2);
      EXPECT_NEAR(d, d_fd, 1e-5 * std::max(1.0, std::abs(d)));
      const double d2_fd = (f.derivative(alpha + h) - f.derivative(alpha - h)) / (2 * h);
      EXPECT_NEAR(d2, d2_fd, 1e-3 * std::max(1.0, std::abs(d2)));  // ℓ'' jumps at mode changes
    }
  }
}

// derivative()'s contact kernel runs on packed blocks of four contacts, all three regions'
// formulas in every lane (sap_line_search.cc). Against the constraints' own calc_along, term by
// term: contact counts that fill the last block or not (1, 3, 4, 5, 9, 30), μ = 0, moderate and
// huge, α far enough on both sides for every region to occur, in both compiled copies.
TEST(SapLineSearchTest, ContactKernelMatchesEachConstraintsCalcAlongInBothKernelCopies) {
  std::mt19937 rng(83);
  std::array<int, 3> regions_seen{};
  for (bool baseline : {true, false}) {
    linalg::internal::force_baseline_block_kernels(baseline);
    for (double mu : {0.0, 0.7, 100.0}) {
      for (int contacts : {1, 3, 4, 5, 9, 30}) {
        auto problem = testing::random_sap_problem(rng, 20, contacts, 0.01, mu);
        SapSolver(SapSolverParameters{.max_iterations = 0}).solve(*problem, Eigen::VectorXd::Zero(problem->nv()));
        const Eigen::VectorXd v = testing::random_vector(rng, problem->nv());
        const Eigen::VectorXd dv = testing::random_vector(rng, problem->nv());
        const Eigen::VectorXd vc = problem->dense_J() * v, dvc = problem->dense_J() * dv;
        const SapLineSearchFunction f(*problem, v, vc, dv);
        const Eigen::MatrixXd A = problem->dense_A();
        const double r0 = dv.dot(A * (v - problem->v_star())), dv_dp = dv.dot(A * dv);
        for (double alpha : {-3.0, -1.0, -0.2, 0.0, 0.1, 0.5, 1.0, 2.5, 6.0}) {
          double d = r0 + alpha * dv_dp, d2 = dv_dp, scale = std::abs(d) + std::abs(d2);
          for (int i = 0; i < problem->num_constraints(); ++i) {
            const SapConstraint& c = problem->constraint(i);
            const int r = problem->row_start(i);
            const Eigen::Vector3d vc_i = vc.segment<3>(r) + alpha * dvc.segment<3>(r), dvc_i = dvc.segment<3>(r);
            Eigen::VectorXd gamma(3);
            double curvature = 0.0;
            c.calc_along(vc_i, dvc_i, gamma, &curvature);
            d -= dvc_i.dot(gamma);
            d2 += curvature;
            scale += std::abs(dvc_i.dot(gamma)) + std::abs(curvature);
            const Eigen::Vector3d y = -(vc_i - c.v_hat()).cwiseQuotient(c.R());
            ++regions_seen[static_cast<int>(friction_cone::region(y, mu, c.R()[0], c.R()[2]))];
          }
          double second = 0.0;
          const double first = f.derivative(alpha, &second);
          EXPECT_NEAR(first, d, 1e-12 * scale) << "mu " << mu << ", " << contacts << " contacts, alpha " << alpha
                                               << (baseline ? ", baseline" : ", dispatched");
          EXPECT_NEAR(second, d2, 1e-12 * scale) << "mu " << mu << ", " << contacts << " contacts, alpha " << alpha
                                                 << (baseline ? ", baseline" : ", dispatched");
          EXPECT_EQ(f.derivative(alpha), first);  // without ℓ'' the same ℓ'
        }
      }
    }
  }
  linalg::internal::force_baseline_block_kernels(false);
  for (int region = 0; region < 3; ++region) EXPECT_GT(regions_seen[region], 50) << "region " << region;
}

TEST(SapLineSearchTest, ExactSearchMinimizesAlongTheLine) {
  std::mt19937 rng(82);
  for (int trial = 0; trial < 10; ++trial) {
    auto problem = testing::random_sap_problem(rng, 30, 20);
    SapSolver(SapSolverParameters{.max_iterations = 0}).solve(*problem, Eigen::VectorXd::Zero(problem->nv()));
    const Eigen::VectorXd v = Eigen::VectorXd::Zero(problem->nv());
    const Eigen::VectorXd vc = problem->dense_J() * v;
    const SapLineSearchFunction f0(*problem, v, vc, Eigen::VectorXd::Zero(problem->nv()));
    // Steepest-descent direction: −∇ℓ(0) = −(A(0 − v*) − Jᵀγ).
    Eigen::VectorXd gamma(problem->num_rows());
    for (int i = 0; i < problem->num_constraints(); ++i) {
      const int r = problem->row_start(i), n = problem->constraint(i).num_rows();
      problem->constraint(i).calc(vc.segment(r, n), gamma.segment(r, n), nullptr);
    }
    const Eigen::VectorXd grad = problem->dense_A() * (v - problem->v_star()) - problem->dense_J().transpose() * gamma;
    const Eigen::VectorXd dv = -grad / grad.norm();
    const SapLineSearchFunction f(*problem, v, vc, dv);
    const LineSearchOutcome out = exact_line_search(f, 1e3, 1e-10, 200);
    ASSERT_TRUE(out.descent);
    EXPECT_LT(std::abs(f.derivative(out.alpha)), 1e-8 * std::abs(f.derivative(0.0)));
    // No sampled α does better.
    for (int k = 0; k <= 200; ++k) EXPECT_GE(f.cost(out.alpha * k / 100.0), f.cost(out.alpha) - 1e-12);
    // ℓ'(0) = Δvᵀ∇ℓ (what SapSolver passes instead of an evaluation) gives the same search.
    EXPECT_NEAR(dv.dot(grad), f.derivative(0.0), 1e-12 * grad.norm());
    const LineSearchOutcome given = exact_line_search(f, 1e3, 1e-10, 200, dv.dot(grad));
    EXPECT_NEAR(given.alpha, out.alpha, 1e-12 * out.alpha);
    EXPECT_EQ(given.iterations, out.iterations);
  }
}

}  // namespace
}  // namespace coulomb::solvers::sap
