// ConicQpSolver against independent truths: the unconstrained minimizer −P⁻¹q, the closed-form
// Euclidean projection onto a second-order cone, a box QP solved by enumerating its active sets,
// and the KKT conditions of random mixed orthant/cone problems checked from the definitions.
// (tests/oracle/conic_qp_ipopt_oracle_test.cc cross-checks random problems against Ipopt.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <Eigen/Dense>

#include "coulomb/solvers/qp/conic_qp.h"

namespace coulomb::solvers::qp {
namespace {

Eigen::MatrixXd random_spd(std::mt19937& rng, int n, double shift = 0.1) {
  std::normal_distribution<double> N;
  Eigen::MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = N(rng);
  return A * A.transpose() + shift * Eigen::MatrixXd::Identity(n, n);
}

TEST(ConicQp, UnconstrainedIsMinusPInverseQ) {
  std::mt19937 rng(3);
  ConicQp p;
  p.resize(5, 0, {});
  p.P = random_spd(rng, 5);
  p.q = Eigen::VectorXd::LinSpaced(5, -2, 3);
  ConicQpSolver solver;
  const ConicQpResults& r = solver.solve(p);
  ASSERT_EQ(r.status, ConicQpStatus::kOptimal);
  const Eigen::VectorXd x = -p.P.llt().solve(p.q);
  EXPECT_LT((r.x - x).norm(), 1e-12 * x.norm());
}

// min ½‖x − y‖² s.t. x ∈ 𝒬³: the projection is y if y ∈ 𝒬, 0 if −y ∈ 𝒬 (the polar cone), else
// ((t + ‖u‖)/2)(1, u/‖u‖).
TEST(ConicQp, ProjectionOntoSecondOrderCone) {
  std::mt19937 rng(7);
  std::normal_distribution<double> N;
  ConicQpSolver solver;
  int regions[3] = {0, 0, 0};
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::Vector3d y(N(rng), N(rng), N(rng));
    ConicQp p;
    p.resize(3, 0, {3});
    p.P.setIdentity();
    p.q = -y;
    p.G = -Eigen::Matrix3d::Identity();  // s = x ∈ 𝒬
    const double t = y[0], un = y.tail<2>().norm();
    Eigen::Vector3d proj;
    if (un <= t) proj = y, ++regions[0];
    else if (un <= -t) proj.setZero(), ++regions[1];
    else {
      proj << 1.0, y[1] / un, y[2] / un;
      proj *= 0.5 * (t + un);
      ++regions[2];
    }
    const ConicQpResults& r = solver.solve(p);
    ASSERT_EQ(r.status, ConicQpStatus::kOptimal) << trial;
    EXPECT_LT((r.x - proj).norm(), 1e-8 * std::max(1.0, y.norm())) << trial << " y = " << y.transpose();
  }
  EXPECT_GT(regions[0], 10);
  EXPECT_GT(regions[1], 10);
  EXPECT_GT(regions[2], 10);
}

// min ½xᵀPx + qᵀx s.t. lo ≤ x ≤ hi, against the best of all 3ⁿ active-set guesses that satisfy
// the KKT conditions (exactly one does: P ≻ 0).
TEST(ConicQp, BoxQpMatchesActiveSetEnumeration) {
  std::mt19937 rng(11);
  std::normal_distribution<double> N;
  ConicQpSolver solver;
  const int n = 4;
  for (int trial = 0; trial < 30; ++trial) {
    ConicQp p;
    p.resize(n, 2 * n, {});
    p.P = random_spd(rng, n);
    for (int i = 0; i < n; ++i) p.q[i] = 3.0 * N(rng);
    const Eigen::VectorXd lo = -Eigen::VectorXd::Constant(n, 0.5), hi = Eigen::VectorXd::Constant(n, 1.0);
    p.G.topRows(n) = Eigen::MatrixXd::Identity(n, n);  // x ≤ hi
    p.h.head(n) = hi;
    p.G.bottomRows(n) = -Eigen::MatrixXd::Identity(n, n);  // −x ≤ −lo
    p.h.tail(n) = -lo;
    const ConicQpResults& r = solver.solve(p);
    ASSERT_EQ(r.status, ConicQpStatus::kOptimal);
    // Enumerate: each coordinate free (0), at lo (1) or at hi (2).
    int found = 0;
    Eigen::VectorXd best;
    for (int code = 0; code < 81; ++code) {
      int c = code;
      Eigen::VectorXi state(n);
      for (int i = 0; i < n; ++i) state[i] = c % 3, c /= 3;
      Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
      std::vector<int> freev;
      for (int i = 0; i < n; ++i) {
        if (state[i] == 1) x[i] = lo[i];
        else if (state[i] == 2) x[i] = hi[i];
        else freev.push_back(i);
      }
      if (!freev.empty()) {
        const int k = static_cast<int>(freev.size());
        Eigen::MatrixXd Pff(k, k);
        Eigen::VectorXd rhs(k);
        for (int a = 0; a < k; ++a) {
          rhs[a] = -p.q[freev[a]];
          for (int i = 0; i < n; ++i)
            if (state[i] != 0) rhs[a] -= p.P(freev[a], i) * x[i];
          for (int b = 0; b < k; ++b) Pff(a, b) = p.P(freev[a], freev[b]);
        }
        const Eigen::VectorXd xf = Pff.llt().solve(rhs);
        for (int a = 0; a < k; ++a) x[freev[a]] = xf[a];
      }
      const Eigen::VectorXd g = p.P * x + p.q;
      bool kkt = true;
      for (int i = 0; i < n; ++i) {
        if (state[i] == 0) kkt = kkt && x[i] >= lo[i] - 1e-12 && x[i] <= hi[i] + 1e-12;
        if (state[i] == 1) kkt = kkt && g[i] >= -1e-12;
        if (state[i] == 2) kkt = kkt && g[i] <= 1e-12;
      }
      if (kkt) ++found, best = x;
    }
    ASSERT_EQ(found, 1) << trial;
    EXPECT_LT((r.x - best).norm(), 1e-8) << trial;
  }
}

// Random problems with orthant rows and several cones: the KKT conditions from their definitions
// (stationarity, primal and dual feasibility in K, complementarity sᵀz ≈ 0).
TEST(ConicQp, RandomMixedProblemsSatisfyKkt) {
  std::mt19937 rng(19);
  std::normal_distribution<double> N;
  ConicQpSolver solver;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 3 + trial % 8, l = trial % 5;
    std::vector<int> cones;
    for (int k = 0; k < 1 + trial % 4; ++k) cones.push_back(2 + (trial + k) % 3);
    ConicQp p;
    p.resize(n, l, cones);
    p.P = random_spd(rng, n, trial % 3 == 0 ? 0.0 : 0.1);  // every third without the shift: eigenvalues near 0
    for (int i = 0; i < n; ++i) p.q[i] = 2.0 * N(rng);
    for (int i = 0; i < p.num_rows(); ++i) {
      for (int j = 0; j < n; ++j) p.G(i, j) = N(rng);
      p.h[i] = std::abs(N(rng));  // x = 0 strictly feasible on the orthant rows
    }
    // Make x = 0 strictly feasible for each cone: h's axis entry dominates.
    int o = l;
    for (int m : cones) {
      p.h[o] = 1.0 + p.h.segment(o + 1, m - 1).norm();
      o += m;
    }
    const ConicQpResults& r = solver.solve(p);
    ASSERT_EQ(r.status, ConicQpStatus::kOptimal) << trial << " after " << r.iterations << " pr " << r.primal_residual
                                                 << " dr " << r.dual_residual << " gap " << r.gap << " obj " << r.objective
                                                 << " s " << r.s.transpose() << " z " << r.z.transpose();
    EXPECT_LT((p.P * r.x + p.q + p.G.transpose() * r.z).norm(), 1e-7 * std::max(1.0, p.q.norm())) << trial;
    EXPECT_LT((p.G * r.x + r.s - p.h).norm(), 1e-7 * std::max(1.0, p.h.norm())) << trial;
    EXPECT_LT(r.s.dot(r.z), 1e-7 * std::max(1.0, std::abs(r.objective))) << trial;
    for (int i = 0; i < l; ++i) EXPECT_GE(std::min(r.s[i], r.z[i]), 0.0);
    o = l;
    for (int m : cones) {
      EXPECT_GE(r.s[o] - r.s.segment(o + 1, m - 1).norm(), -1e-12);
      EXPECT_GE(r.z[o] - r.z.segment(o + 1, m - 1).norm(), -1e-12);
      o += m;
    }
    EXPECT_LT(r.iterations, 40) << trial;
  }
}

TEST(ConicQp, BadDataThrowsNamingTheMismatch) {
  ConicQp p;
  p.resize(2, 1, {1 + 1});
  p.cone_sizes = {1};
  ConicQpSolver solver;
  try {
    solver.solve(p);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cone 0 has size 1"), std::string::npos) << e.what();
  }
  p.resize(2, 1, {2});
  p.q[0] = std::nan("");
  EXPECT_THROW(solver.solve(p), std::invalid_argument);
}

}  // namespace
}  // namespace coulomb::solvers::qp
