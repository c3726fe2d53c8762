// SapBilateralConstraint: the cost's gradient and Hessian against finite differences (∇ℓ = −γ,
// G = −∂γ/∂v_c), the physical form of a finite-stiffness row (γ = −δt (k g₁ + b v_c)), the
// near-rigid regularization of rigid rows, inert rows, bad input, and a SAP solve against the
// closed-form minimizer of ½‖v − v*‖²_A + ½ Σ R γ² (a quadratic: (A + JᵀR⁻¹J) v = A v* + JᵀR⁻¹v̂).
#include "coulomb/solvers/sap/sap_bilateral_constraint.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include <Eigen/Cholesky>
#include <gtest/gtest.h>

#include "coulomb/solvers/sap/sap_problem.h"
#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::solvers::sap {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

BilateralParameters parameters(int rows, std::mt19937& rng, bool rigid) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), k(1e2, 1e6), b(0.0, 50.0);
  BilateralParameters p;
  p.phi0.resize(rows);
  p.phidot0.resize(rows);
  p.stiffness.resize(rows);
  p.damping.resize(rows);
  for (int r = 0; r < rows; ++r) {
    p.phi0[r] = 0.01 * u(rng);
    p.phidot0[r] = u(rng);
    p.stiffness[r] = rigid ? kInf : k(rng);
    p.damping[r] = b(rng);
  }
  return p;
}

Eigen::MatrixXd random_matrix(std::mt19937& rng, int rows, int cols) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd M(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) M(i, j) = u(rng);
  return M;
}

TEST(SapBilateralConstraintTest, GradientAndHessianMatchFiniteDifferences) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    const int rows = 1 + trial % 6;
    BilateralParameters p = parameters(rows, rng, trial % 3 == 0);
    p.theta_vq = trial % 2 == 0 ? 1.0 : 0.5;
    SapBilateralConstraint c(p, 0, random_matrix(rng, rows, 4));
    const Eigen::MatrixXd B = random_matrix(rng, rows, rows);
    c.prepare(1e-3, B * B.transpose() + Eigen::MatrixXd::Identity(rows, rows));
    const Eigen::VectorXd vc = random_matrix(rng, rows, 1);
    Eigen::VectorXd gamma(rows), gp(rows), gm(rows);
    Eigen::MatrixXd G(rows, rows);
    Eigen::Ref<Eigen::MatrixXd> G_ref(G);
    c.calc(vc, gamma, &G_ref);
    const double h = 1e-7;
    for (int k = 0; k < rows; ++k) {
      Eigen::VectorXd vp = vc, vm = vc;
      vp[k] += h;
      vm[k] -= h;
      const double lp = c.calc(vp, gp, nullptr), lm = c.calc(vm, gm, nullptr);
      const double scale = std::max(1.0, gamma.cwiseAbs().maxCoeff());
      EXPECT_NEAR((lp - lm) / (2 * h), -gamma[k], 1e-5 * scale) << "trial " << trial;
      const Eigen::VectorXd G_fd = -(gp - gm) / (2 * h);
      EXPECT_LT((G.col(k) - G_fd).norm(), 1e-5 * G.norm()) << "trial " << trial;
    }
    // calc_along: Δv_cᵀ G Δv_c without forming G.
    const Eigen::VectorXd dvc = random_matrix(rng, rows, 1);
    double curvature = 0.0;
    c.calc_along(vc, dvc, gp, &curvature);
    EXPECT_NEAR(curvature, dvc.dot(G * dvc), 1e-10 * std::abs(curvature));
    EXPECT_LT((gp - gamma).norm(), 1e-12 * std::max(1.0, gamma.norm()));
  }
}

TEST(SapBilateralConstraintTest, PhysicalFormOfACompliantRow) {
  // R above the near-rigid floor: γ = −δt (k g₁ + b v_c), g₁ = φ₀ + δt (1 − θ) φ̇₀ + θ δt v_c.
  BilateralParameters p;
  p.phi0.setConstant(1, 0.02);
  p.phidot0.setConstant(1, -0.3);
  p.stiffness.setConstant(1, 1e3);
  p.damping.setConstant(1, 20.0);
  for (double theta : {1.0, 0.5}) {
    p.theta_vq = theta;
    SapBilateralConstraint c(p, 0, Eigen::MatrixXd::Ones(1, 1));
    const double dt = 1e-2;
    c.prepare(dt, Eigen::MatrixXd::Constant(1, 1, 1.0));  // w = 1/kg: near-rigid R = 1/(4π²) ≪ physical
    Eigen::VectorXd vc(1), gamma(1);
    vc << 0.7;
    c.calc(vc, gamma, nullptr);
    const double g1 = 0.02 + dt * (1 - theta) * -0.3 + theta * dt * 0.7;
    EXPECT_NEAR(gamma[0], -dt * (1e3 * g1 + 20.0 * 0.7), 1e-12);
  }
}

TEST(SapBilateralConstraintTest, RigidRowsAreNearRigidAndInertRowsCarryNothing) {
  std::mt19937 rng(5);
  BilateralParameters p = parameters(3, rng, true);
  p.inert.setZero(3);
  p.inert[2] = 1;
  p.phi0[2] = 1e-3;  // an inert row with a violation: no correction
  const double dt = 2e-3;
  SapBilateralConstraint c(p, 1, random_matrix(rng, 3, 2));
  Eigen::Matrix3d W;
  W << 2.0, 0.1, 0.0, 0.1, 0.5, 0.0, 0.0, 0.0, 0.0;
  c.prepare(dt, W);
  const double four_pi2 = 4 * std::numbers::pi * std::numbers::pi;
  EXPECT_NEAR(c.R()[0], 2.0 / four_pi2, 1e-15);  // β = 1: R = w_r / (4π²), w_r = W_rr
  EXPECT_NEAR(c.R()[1], 0.5 / four_pi2, 1e-15);
  const double tau = dt / std::numbers::pi;  // critical damping of the near-rigid spring
  EXPECT_NEAR(c.v_hat()[0], -(p.phi0[0]) / (dt + tau), 1e-15);
  EXPECT_EQ(c.v_hat()[2], 0.0);
  EXPECT_GT(c.R()[2], 0.0);
  // Stiffer than the near-rigid floor: a huge finite k gives the same R.
  BilateralParameters stiff = p;
  stiff.stiffness.setConstant(3, 1e15);
  stiff.damping.setZero(3);
  SapBilateralConstraint s(stiff, 1, random_matrix(rng, 3, 2));
  s.prepare(dt, W);
  EXPECT_NEAR(s.R()[0], c.R()[0], 1e-15);
}

TEST(SapBilateralConstraintTest, BadInputThrows) {
  std::mt19937 rng(1);
  BilateralParameters p = parameters(2, rng, false);
  EXPECT_THROW(SapBilateralConstraint(p, 0, random_matrix(rng, 3, 2)), std::invalid_argument);  // rows
  p.stiffness[1] = 0.0;
  EXPECT_THROW(SapBilateralConstraint(p, 0, random_matrix(rng, 2, 2)), std::invalid_argument);
  p.stiffness[1] = 1.0;
  p.damping[0] = -1.0;
  EXPECT_THROW(SapBilateralConstraint(p, 0, random_matrix(rng, 2, 2)), std::invalid_argument);
  p.damping[0] = 0.0;
  p.phi0[0] = std::nan("");
  EXPECT_THROW(SapBilateralConstraint(p, 0, random_matrix(rng, 2, 2)), std::invalid_argument);
  p.phi0[0] = 0.0;
  p.theta_vq = 0.0;
  EXPECT_THROW(SapBilateralConstraint(p, 0, random_matrix(rng, 2, 2)), std::invalid_argument);
  p.theta_vq = 1.0;
  EXPECT_NO_THROW(SapBilateralConstraint(p, 0, random_matrix(rng, 2, 2)));
}

TEST(SapBilateralConstraintTest, SapSolveEqualsClosedFormMinimizer) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    // Two trees (3 and 4 velocities), one constraint across them with 1 … 6 rows.
    const int rows = 1 + trial % 6;
    std::vector<Eigen::MatrixXd> A(2);
    for (int t = 0; t < 2; ++t) {
      const Eigen::MatrixXd B = random_matrix(rng, 3 + t, 3 + t);
      A[t] = B * B.transpose() + Eigen::MatrixXd::Identity(3 + t, 3 + t);
    }
    const Eigen::VectorXd v_star = random_matrix(rng, 7, 1);
    const Eigen::MatrixXd J0 = random_matrix(rng, rows, 3), J1 = random_matrix(rng, rows, 4);
    BilateralParameters p = parameters(rows, rng, trial % 2 == 0);
    SapProblem problem;
    const double dt = 1e-2;
    problem.reset(dt, A, v_star);
    problem.add_constraint(std::make_unique<SapBilateralConstraint>(p, 0, J0, 1, J1));
    SapSolverParameters sp;
    sp.rel_tolerance = 1e-12;
    const SapSolver solver(sp);
    const SapSolverResults r = solver.solve(problem, v_star);
    ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
    // Closed form with the R and v̂ the constraint chose.
    const SapConstraint& c = problem.constraint(0);
    Eigen::MatrixXd J(rows, 7), Ab = Eigen::MatrixXd::Zero(7, 7);
    J << J0, J1;
    Ab.topLeftCorner(3, 3) = A[0];
    Ab.bottomRightCorner(4, 4) = A[1];
    const Eigen::VectorXd Rinv = c.R().cwiseInverse();
    const Eigen::MatrixXd H = Ab + J.transpose() * Rinv.asDiagonal() * J;
    const Eigen::VectorXd v = H.llt().solve(Ab * v_star + J.transpose() * Rinv.cwiseProduct(c.v_hat()));
    EXPECT_LT((r.v - v).norm(), 1e-9 * std::max(1.0, v.norm())) << "trial " << trial;
    // Momentum: A (v − v*) = Jᵀ γ.
    EXPECT_LT((Ab * (r.v - v_star) - J.transpose() * r.gamma).norm(), 1e-8 * std::max(1.0, r.gamma.norm()));
  }
}

}  // namespace
}  // namespace coulomb::solvers::sap
