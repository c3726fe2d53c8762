// LStableSolver (Drumwright) on plain problem data, against the digest's acceptance tests
// (../shared/digests/lstable.md §6) and closed forms:
//  A1/A3 the scalar spring–mass–damper: 100 steps equal implicit Euler's closed form
//        v₁ = (m v₀ + h f − h k x₀)/(m + h b + h² k); one step of a k = 1e15 mode gives
//        x₁/x₀ = (1 + h)/(1 + h + 1e15 h²) (L-stability);
//  B4/B5 energy of linear spring–damper rows never grows (K up to 1e18, h up to 10 s), and a
//        duplicated row acts as one row with 2K, 2B, each carrying half;
//  C8/C10 the unilateral QP: single-row closed form max(0, r/(1 + d w)); the paper's min-norm QP
//        against the complementarity reading on the digest's coupled counterexample;
//  C11   a frictionless stack of 10 spheres settles with penetration_i = (N − i + 1) m g / K;
//  D12–D14 a particle on a 15° incline: μ = 0 slides ½ g sinθ h² n(n+1) = 1.2822 m in 1 s,
//        μ = 0.125 and 0.25 within 2e-3 of the discrete Coulomb 0.6840 m and 0.08589 m (see the
//        test for the measured gap and why), μ = 0.375 sticks with creep ≤ f_t R_t; the normal
//        force stays m g cosθ;
//  D16   a tangential push below μ λ_n sticks, above it slides with ‖λ_t‖ = μ λ_n, and rotating
//        the tangent basis does not change the result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include <Eigen/Dense>

#include "coulomb/solvers/lstable/lstable_solver.h"

namespace coulomb::solvers::lstable {
namespace {

using constraints::ConstraintSet;

// One tree of nv velocities (trees[0] = {root 1, v_start 0, nv}).
ConstraintSet one_tree(int nv, double h) {
  ConstraintSet set;
  set.time_step = h;
  set.theta_vq = 1.0;
  set.nv = nv;
  set.trees = {{1, 0, nv}};
  return set;
}

// A PD row on velocity `dof` of tree 0 as a spring–damper with target 0: λ = −k q − b v.
void add_spring(ConstraintSet& set, int dof, double q0, double v0, double k, double b, int id = 0) {
  constraints::PdActuatorConstraint& a = set.pd_actuators.add();
  a.actuator = id;
  a.tree = 0;
  a.local = dof;
  a.v_index = dof;
  a.q0 = q0;
  a.v0 = v0;
  a.kp = k;
  a.kd = b;
  a.effort_limit = std::numeric_limits<double>::infinity();
}

TEST(LStable, ScalarSpringMassDamperIsImplicitEuler) {
  const double m = 2.0, k = 1e4, b = 3.0, f = -9.81 * m, h = 1e-3;
  double x = 0.1, v = -0.5, xe = x, ve = v;
  LStableSolver solver;
  const std::vector<Eigen::MatrixXd> A = {Eigen::MatrixXd::Constant(1, 1, m)};
  for (int step = 0; step < 100; ++step) {
    ConstraintSet set = one_tree(1, h);
    add_spring(set, 0, x, v, k, b);
    const Eigen::VectorXd v_star = Eigen::VectorXd::Constant(1, v + h * f / m);
    const LStableResults& r = solver.solve(set, A, v_star);
    ASSERT_EQ(r.status, LStableStatus::kSuccess);
    EXPECT_FALSE(r.used_qp);  // bilateral only: one linear solve
    v = r.v[0];
    x += h * v;
    ve = (m * ve + h * f - h * k * xe) / (m + h * b + h * h * k);
    xe += h * ve;
  }
  EXPECT_NEAR(x, xe, 1e-12 * std::abs(xe));
  EXPECT_NEAR(v, ve, 1e-12 * std::max(1.0, std::abs(ve)));
}

TEST(LStable, StiffModeIsAnnihilatedInOneStep) {
  for (double h : {1e-3, 0.1, 1.0}) {
    ConstraintSet set = one_tree(1, h);
    add_spring(set, 0, 1.0, 0.0, 1e15, 1.0);
    LStableSolver solver;
    const LStableResults& r = solver.solve(set, {Eigen::MatrixXd::Ones(1, 1)}, Eigen::VectorXd::Zero(1));
    const double x1 = 1.0 + h * r.v[0];
    const double expected = (1.0 + h) / (1.0 + h + 1e15 * h * h);
    EXPECT_NEAR(x1, expected, 1e-6 * expected + 1e-15) << h;  // x₁ = x₀ + h v₁ cancels 1 − O(1e-9 … 1e-15)
    EXPECT_LT(std::abs(x1), 1.1e-9) << h;
  }
}

// Random SPD M (one tree), springs on every coordinate plus a duplicated one; E = ½vᵀMv + ½Σkq²
// never grows (linear constraints, constant M: the scheme is implicit Euler).
TEST(LStable, EnergyNeverGrowsForLinearSpringDampers) {
  std::mt19937 rng(5);
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U(0.0, 1.0);
  int runs = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int nv = 2 + trial % 5;
    Eigen::MatrixXd X(nv, nv);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) X(i, j) = N(rng);
    const Eigen::MatrixXd M = X * X.transpose() + 0.1 * Eigen::MatrixXd::Identity(nv, nv);
    const double K = std::pow(10.0, 18.0 * U(rng));
    const double B = std::vector<double>{0.0, 1.0, 1e3, 1e12}[trial % 4];
    const double h = std::pow(10.0, -6.0 + 7.0 * U(rng));
    Eigen::VectorXd q(nv), v(nv);
    for (int i = 0; i < nv; ++i) q[i] = 0.1 * N(rng), v[i] = N(rng);
    auto energy = [&](const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
      return 0.5 * vv.dot(M * vv) + 0.5 * K * (qq.squaredNorm() + qq[0] * qq[0]);  // row 0 twice
    };
    LStableSolver solver;
    double E = energy(q, v);
    const double E0 = E;
    for (int step = 0; step < 50; ++step) {
      ConstraintSet set = one_tree(nv, h);
      for (int i = 0; i < nv; ++i) add_spring(set, i, q[i], v[i], K, B, i);
      add_spring(set, 0, q[0], v[0], K, B, nv);  // redundant duplicate
      const LStableResults& r = solver.solve(set, {M}, v);
      ASSERT_EQ(r.status, LStableStatus::kSuccess) << "trial " << trial << " K " << K << " B " << B << " h " << h;
      v = r.v;
      q += h * v;
      const double E1 = energy(q, v);
      ASSERT_LE(E1, E * (1.0 + 1e-9) + 1e-12 * E0) << "trial " << trial << " step " << step << " K " << K << " B " << B
                                                    << " h " << h;
      E = E1;
    }
    ++runs;
  }
  EXPECT_EQ(runs, 60);
}

TEST(LStable, DuplicatedRowActsAsOneRowWithTwiceTheStiffness) {
  const double h = 0.01, K = 1e5, B = 10.0;
  Eigen::MatrixXd M(2, 2);
  M << 2.0, 0.3, 0.3, 1.0;
  const Eigen::Vector2d v0(0.4, -0.2), q0(0.05, 0.01);
  ConstraintSet twice = one_tree(2, h), once = one_tree(2, h);
  add_spring(twice, 0, q0[0], v0[0], K, B, 0);
  add_spring(twice, 0, q0[0], v0[0], K, B, 1);
  add_spring(once, 0, q0[0], v0[0], 2 * K, 2 * B, 0);
  LStableSolver s1, s2;
  const LStableResults& r2 = s1.solve(twice, {M}, v0);
  const LStableResults& r1 = s2.solve(once, {M}, v0);
  EXPECT_LT((r2.v - r1.v).norm(), 1e-12 * r1.v.norm());
  EXPECT_NEAR(r2.impulses.pd_actuators[0], r2.impulses.pd_actuators[1], 1e-12 * std::abs(r1.impulses.pd_actuators[0]));
  EXPECT_NEAR(r2.impulses.pd_actuators[0] + r2.impulses.pd_actuators[1], r1.impulses.pd_actuators[0],
              1e-9 * std::abs(r1.impulses.pd_actuators[0]));
}

TEST(LStable, UnilateralClosedFormAndCoupledCounterexample) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> U(-2.0, 2.0);
  for (int k = 0; k < 50; ++k) {
    const double w = std::exp(U(rng)), d = std::exp(3 * U(rng)), r = U(rng);
    const Eigen::MatrixXd W = Eigen::MatrixXd::Constant(1, 1, w);
    const Eigen::VectorXd dv = Eigen::VectorXd::Constant(1, d), rv = Eigen::VectorXd::Constant(1, r);
    const double expected = std::max(0.0, r / (1.0 + d * w));
    // r < 0: the min-norm optimum λ = 0 has a zero multiplier on λ ≥ 0 as well (no strict
    // complementarity), where an interior point converges only to √gap (gap ≤ 1e-10).
    EXPECT_NEAR(unilateral_min_norm(W, dv, rv)[0], expected, r > 0 ? 1e-8 * (1.0 + r) : 2e-5);
    EXPECT_NEAR(unilateral_complementarity(W, dv, rv)[0], expected, 1e-8 * (1.0 + std::abs(r)));
  }
  Eigen::MatrixXd W(2, 2);
  W << 1.0, 0.9, 0.9, 1.0;
  const Eigen::Vector2d d(1.0, 1.0), r(1.0, -1.0);
  const Eigen::VectorXd paper = unilateral_min_norm(W, d, r), lcp = unilateral_complementarity(W, d, r);
  EXPECT_NEAR(paper[0], 0.4158, 1e-4);
  EXPECT_NEAR(paper[1], 0.1871, 1e-4);
  EXPECT_NEAR(lcp[0], 0.5, 1e-8);
  EXPECT_NEAR(lcp[1], 0.0, 1e-8);
  // A Z-matrix W (a vertical stack's couplings are ≤ 0): both readings agree.
  W << 2.0, -1.0, -1.0, 2.0;
  const Eigen::Vector2d r2(1.0, 0.5);
  EXPECT_LT((unilateral_min_norm(W, d, r2) - unilateral_complementarity(W, d, r2)).norm(), 1e-8);
}

// N spheres on vertical sliders (one tree each, A = m), frictionless contacts between neighbours
// and with the ground, K = 1e8 N/m, B = 1 N·s/m (τ_d = B/K), h = 0.01, 500 steps.
TEST(LStable, FrictionlessSphereStackSettlesAtTheStaticPenetrations) {
  const int N = 10;
  const double m = 1.0, r = 0.1, K = 1e8, B = 1.0, g = 9.81, h = 0.01;
  Eigen::VectorXd z(N), v = Eigen::VectorXd::Zero(N);
  for (int i = 0; i < N; ++i) z[i] = r + i * (2 * r + 0.05);
  ConstraintSet set;
  set.time_step = h;
  set.nv = N;
  for (int i = 0; i < N; ++i) set.trees.push_back({i + 1, i, 1});
  const std::vector<Eigen::MatrixXd> A(N, Eigen::MatrixXd::Constant(1, 1, m));
  LStableSolver solver;
  LStableResults last;
  for (int step = 0; step < 500; ++step) {
    set.clear();
    for (int i = 0; i < N; ++i) {
      constraints::ContactConstraint& c = set.contacts.add();
      c.contact = i;
      c.material.mu = 0.0;
      c.material.stiffness = K;
      c.material.dissipation_time = B / K;
      c.num_blocks = i == 0 ? 1 : 2;
      // rows [t1, t2, n]; v_n = v_i − v_{i−1}
      c.blocks[0] = {i, i, Eigen::Matrix<double, 3, 1>(0, 0, 1)};
      c.phi0 = i == 0 ? z[0] - r : z[i] - z[i - 1] - 2 * r;
      c.vn0 = i == 0 ? v[0] : v[i] - v[i - 1];
      if (i > 0) c.blocks[1] = {i - 1, i - 1, Eigen::Matrix<double, 3, 1>(0, 0, -1)};
    }
    const Eigen::VectorXd v_star = v - Eigen::VectorXd::Constant(N, h * g);
    const LStableResults& res = solver.solve(set, A, v_star);
    ASSERT_EQ(res.status, LStableStatus::kSuccess) << step;
    v = res.v;
    z += h * v;
    last = res;
  }
  EXPECT_LT(v.cwiseAbs().maxCoeff(), 1e-10);
  for (int i = 0; i < N; ++i) {
    const double penetration = -(i == 0 ? z[0] - r : z[i] - z[i - 1] - 2 * r);
    const double load = (N - i) * m * g;  // contact i (from the bottom) carries N − i spheres
    EXPECT_NEAR(penetration, load / K, 1e-8 * load / K) << i;
    EXPECT_NEAR(last.impulses.contacts[3 * i + 2] / h, load, 1e-8 * load) << i;
  }
}

// A particle (3 translational dofs, A = m I) on a plane tilted 15° about y; contact frame rows
// t1 = down the slope, t2 = y, n = the plane's normal. K_n = 1e8, τ_d = 1e-8 s, h = 0.01, 1 s.
struct InclineRun {
  double slide = 0.0, normal_force = 0.0, max_normal_speed = 0.0;
};
InclineRun run_incline(double mu, double angle = 15.0 * M_PI / 180.0, FrictionModel friction = FrictionModel::kStaggered) {
  const double m = 1.0, g = 9.81, h = 0.01, K = 1e8;
  const Eigen::Vector3d n(std::sin(angle), 0.0, std::cos(angle)), t1(std::cos(angle), 0.0, -std::sin(angle)),
      t2(0.0, 1.0, 0.0);
  Eigen::Matrix3d J;
  J.row(0) = t1;
  J.row(1) = t2;
  J.row(2) = n;
  Eigen::Vector3d p = Eigen::Vector3d::Zero(), v = Eigen::Vector3d::Zero();
  ConstraintSet set;
  set.time_step = h;
  set.nv = 3;
  set.trees = {{1, 0, 3}};
  LStableParameters parameters;
  parameters.friction = friction;
  LStableSolver solver(parameters);
  InclineRun out;
  for (int step = 0; step < 100; ++step) {
    set.clear();
    constraints::ContactConstraint& c = set.contacts.add();
    c.material.mu = mu;
    c.material.stiffness = K;
    c.material.dissipation_time = 1e-8;
    c.blocks[0] = {0, 0, J};
    c.phi0 = n.dot(p);
    c.vn0 = n.dot(v);
    const Eigen::VectorXd v_star = v + h * Eigen::Vector3d(0, 0, -g);
    const LStableResults& r = solver.solve(set, {m * Eigen::MatrixXd::Identity(3, 3)}, v_star);
    EXPECT_EQ(r.status, LStableStatus::kSuccess);
    v = r.v;
    p += h * v;
    out.normal_force = r.impulses.contacts[2] / h;
    out.max_normal_speed = std::max(out.max_normal_speed, std::abs(n.dot(v)));
    if (mu == 0.0) EXPECT_EQ(r.impulses.contacts.head<2>().norm(), 0.0);
  }
  out.slide = t1.dot(p);
  return out;
}

TEST(LStable, ParticleOnInclineFollowsDiscreteCoulomb) {
  const double g = 9.81, h = 0.01, s = std::sin(15.0 * M_PI / 180.0), c = std::cos(15.0 * M_PI / 180.0);
  const int n = 100;
  for (double mu : {0.0, 0.125, 0.25}) {
    // Staggered friction (the default): the discrete Coulomb law with the normal on its own
    // spring, so the slide is exact up to the tangential damper's R_t γ_t (1e-6 relative).
    const InclineRun r = run_incline(mu);
    const double expected = 0.5 * g * (s - mu * c) * h * h * n * (n + 1);
    std::printf("[ measured ] incline particle, staggered, mu %g: slide %.6f m (discrete Coulomb %.6f, rel. error "
                "%.2e), max |v_n| %.2e m/s\n",
                mu, r.slide, expected, std::abs(r.slide - expected) / expected, r.max_normal_speed);
    EXPECT_NEAR(r.slide, expected, 1e-5 * expected) << mu;
    EXPECT_NEAR(r.normal_force, g * c, 1e-6 * g * c) << mu;
    EXPECT_LT(r.max_normal_speed, 1e-5) << mu;  // the first step sinks m g cosθ / K
  }
  for (double mu : {0.0, 0.125, 0.25}) {
    // The single cone (FrictionModel::kCone, digest §7.3 fix 2) lifts the normal velocity of a
    // sliding contact by μ × slip speed inside the step (the Anitescu relaxation), which the
    // compliant normal spring absorbs: measured slide −3.1e-4 (μ = 0.125) and −1.2e-3 (0.25)
    // relative to exact discrete Coulomb, |v_n| ≤ 1.7e-3 m/s; μ = 0 is exact.
    const InclineRun r = run_incline(mu, 15.0 * M_PI / 180.0, FrictionModel::kCone);
    const double expected = 0.5 * g * (s - mu * c) * h * h * n * (n + 1);
    EXPECT_NEAR(r.slide, expected, (mu == 0.0 ? 1e-9 : 2e-3) * expected) << mu;
    EXPECT_NEAR(r.normal_force, g * c, 1e-3 * g * c) << mu;
    EXPECT_LT(r.max_normal_speed, mu == 0.0 ? 1e-5 : 3e-3) << mu;  // μ = 0: the first step sinks m g cosθ / K
  }
  EXPECT_NEAR(run_incline(0.0).slide, 1.2822, 1e-4);
  EXPECT_NEAR(run_incline(0.125).slide, 0.6840, 5e-4);
  EXPECT_NEAR(run_incline(0.25).slide, 0.08589, 2e-4);
  // Stuck: creep ≤ f_t R_t · 1 s with R_t = 1/(h B_r) = 1e-6 s/kg: 2.54e-8 m (digest D13), ×1.1.
  for (double mu : {0.375, 1.0}) EXPECT_LT(std::abs(run_incline(mu).slide), 1.1 * g * s * 1e-6) << mu;
}

TEST(LStable, TangentialPushSticksBelowAndSlidesAboveTheCone) {
  const double h = 0.01, m = 1.0, mu = 0.5, load = 10.0;
  for (double angle : {0.0, 0.7, 2.1}) {
    for (double push : {3.0, 8.0}) {  // μ λ_n = 5 N
      const Eigen::Vector3d dir(std::cos(angle), std::sin(angle), 0.0);
      ConstraintSet set;
      set.time_step = h;
      set.nv = 3;
      set.trees = {{1, 0, 3}};
      constraints::ContactConstraint& c = set.contacts.add();
      c.material.mu = mu;
      c.material.stiffness = 1e8;
      c.material.dissipation_time = 1e-3;
      c.blocks[0] = {0, 0, Eigen::Matrix3d::Identity()};  // world axes = contact frame
      c.phi0 = -load / 1e8;  // the static penetration under the load
      const Eigen::Vector3d v_star = h / m * (push * dir + Eigen::Vector3d(0, 0, -load));
      LStableSolver solver;
      const LStableResults& r = solver.solve(set, {m * Eigen::MatrixXd::Identity(3, 3)}, v_star);
      ASSERT_EQ(r.status, LStableStatus::kSuccess);
      const Eigen::Vector2d ft = r.impulses.contacts.head<2>() / h;
      const double fn = r.impulses.contacts[2] / h;
      if (push < mu * load) {
        EXPECT_LT((ft + push * dir.head<2>()).norm(), 1e-4 * push) << angle;  // stick: friction balances
      } else {
        EXPECT_NEAR(ft.norm(), mu * fn, 1e-7 * mu * fn) << angle;  // on the cone
        EXPECT_GT(-ft.normalized().dot(r.v.head<2>().normalized()), 1.0 - 1e-7) << angle;  // against the slip
      }
    }
  }
}

}  // namespace
}  // namespace coulomb::solvers::lstable
