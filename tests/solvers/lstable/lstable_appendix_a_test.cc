// The paper's Appendix A (digest ../shared/digests/lstable.md §3.6, acceptance test 17): on mixed
// problems the free (bilateral) rows are eliminated before the QP, and the reduced problem must
// give the same impulses and velocities as the unreduced one solved directly.
//
// The two paths share only the row assembly (G, W, R, v̂); the unreduced path hands the full
// P = W + R to the interior point, the reduced path a Schur complement and a back-substitution,
// so an error in the elimination (a missed coupling block, a sign, the wrong row order in a cone)
// moves the optimum. Checked on random problems with two trees, frictional contacts that couple
// both trees, joint limits, bounded PD rows, free PD rows and couplers (stiff, soft and one
// duplicated, so P_FF's W block is singular), and separately the stationarity of the free rows,
// (W + R)γ + G v* − v̂ = 0 on every free row, which the reduced path enforces by construction and
// the unreduced one only through the interior point's dual residual.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include <Eigen/Dense>

#include "coulomb/solvers/lstable/lstable_solver.h"

namespace coulomb::solvers::lstable {
namespace {

using constraints::ConstraintSet;

struct MixedProblem {
  ConstraintSet set;
  std::vector<Eigen::MatrixXd> A;
  Eigen::VectorXd v_star;
};

// Tree 0 has n0 velocities, tree 1 n1. Every kind of row the solver knows, with random data.
// `stiff`: contact stiffness up to 1e10 N/m and PD rows up to 1e12 (condition numbers of P up to
// ~1e16, where the interior point stops at its acceptable tolerance); otherwise up to 1e7 and 1e8,
// where both paths converge to the tight tolerance and must agree to round-off.
MixedProblem random_mixed_problem(std::mt19937& rng, int trial, bool stiff) {
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const int n0 = 3 + trial % 4, n1 = 2 + trial % 3;
  MixedProblem p;
  ConstraintSet& set = p.set;
  set.time_step = std::pow(10.0, -4.0 + 3.0 * U(rng));  // 1e-4 … 0.1 s
  set.theta_vq = trial % 2 == 0 ? 1.0 : 0.5;
  set.nv = n0 + n1;
  set.trees = {{1, 0, n0}, {2, n0, n1}};
  for (int n : {n0, n1}) {
    Eigen::MatrixXd X = Eigen::MatrixXd::NullaryExpr(n, n, [&] { return N(rng); });
    p.A.push_back(X * X.transpose() + 0.2 * Eigen::MatrixXd::Identity(n, n));
  }
  p.v_star = Eigen::VectorXd::NullaryExpr(set.nv, [&] { return N(rng); });
  // Contacts: one on tree 0 against the world, one joining both trees; random frames.
  for (int k = 0; k < 2; ++k) {
    constraints::ContactConstraint& c = set.contacts.add();
    c.contact = k;
    c.material.mu = k == 0 ? 0.0 : 0.3 + U(rng);  // a frictionless normal and a cone
    c.material.stiffness = std::pow(10.0, 4.0 + (stiff ? 6.0 : 3.0) * U(rng));
    c.material.dissipation_time = 0.01 * U(rng);
    c.num_blocks = k == 0 ? 1 : 2;
    c.blocks[0] = {0, 0, Eigen::MatrixXd::NullaryExpr(3, n0, [&] { return N(rng); })};
    if (k == 1) c.blocks[1] = {1, n0, Eigen::MatrixXd::NullaryExpr(3, n1, [&] { return N(rng); })};
    c.phi0 = -1e-3 * U(rng);
    c.vn0 = N(rng);
  }
  // A two-sided joint limit on tree 1, velocity 0, violated at the lower end.
  {
    constraints::JointLimitConstraint& l = set.limits.add();
    l.tree = 1;
    l.local = 0;
    l.v_index = n0;
    l.q0 = -0.01;
    l.v0 = -0.2;
    l.lower = 0.0;
    l.upper = 1.0;
  }
  // PD rows: free (no effort limit), one of them duplicated, and one bounded.
  auto add_pd = [&](int tree, int local, double kp, double kd, double limit) {
    constraints::PdActuatorConstraint& a = set.pd_actuators.add();
    a.actuator = static_cast<int>(set.pd_actuators.size()) - 1;
    a.tree = tree;
    a.local = local;
    a.v_index = set.trees[tree].v_start + local;
    a.q0 = 0.1 * N(rng);
    a.v0 = N(rng);
    a.kp = kp;
    a.kd = kd;
    a.q_target = 0.1 * N(rng);
    a.feedforward = N(rng);
    a.effort_limit = limit;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double k_pd = std::pow(10.0, 2.0 + (stiff ? 10.0 : 6.0) * U(rng));
  add_pd(0, 1, k_pd, 1.0, inf);
  const constraints::PdActuatorConstraint first = set.pd_actuators[0];
  set.pd_actuators.add() = first;  // an exact duplicate: redundant
  set.pd_actuators[1].actuator = 1;
  add_pd(0, 2, 50.0, 2.0, inf);
  add_pd(1, 1, 20.0, 1.0, 0.5 + U(rng));  // bounded: a box row, not eliminated
  // A coupler between two velocities of tree 0 (free row).
  {
    constraints::CouplerConstraint& c = set.couplers.add();
    c.tree = 0;
    c.local = 0;
    c.leader_local = n0 - 1;
    c.v_index = 0;
    c.leader_v_index = n0 - 1;
    c.q0 = 0.02;
    c.leader_q0 = 0.01;
    c.vc0 = 0.1;
    c.gear_ratio = -0.5;
  }
  return p;
}

// The per-row compliance R and bias v̂ of the spring–damper law φ̇₁ = v̂ − Rγ (digest §3.2 (b),
// the lstable header), written out here independently of the solver's row assembly.
struct Row {
  double R, vhat;
};
Row spring_row(double dt, double th, double K, double B, double phi0, double phidot0) {
  const double c = dt * th * K + B;
  return {1.0 / (dt * c), K > 0.0 ? -K * (phi0 + dt * (1.0 - th) * phidot0) / c : 0.0};
}

// ½γᵀ(W + R)γ + γᵀ(G v* − v̂) of the unreduced problem at a solver's result, from its impulses in
// the set's layout and its velocities: with Δv = v − v* = A⁻¹Gᵀγ, ½γᵀWγ + γᵀGv* = ½ΔvᵀAΔv + ΔvᵀAv*.
double full_objective(const MixedProblem& p, const LStableParameters& par, const LStableResults& res) {
  const ConstraintSet& set = p.set;
  const double dt = set.time_step, th = set.theta_vq;
  double f = 0.0;
  for (size_t t = 0; t < set.trees.size(); ++t) {
    const contact::TreeRange& tr = set.trees[t];
    const Eigen::VectorXd dv = (res.v - p.v_star).segment(tr.v_start, tr.nv);
    f += 0.5 * dv.dot(p.A[t] * dv) + dv.dot(p.A[t] * p.v_star.segment(tr.v_start, tr.nv));
  }
  auto add = [&](const Row& row, double gamma) { f += 0.5 * row.R * gamma * gamma - gamma * row.vhat; };
  for (size_t k = 0; k < set.contacts.size(); ++k) {
    const constraints::ContactConstraint& c = set.contacts[k];
    const double K = c.material.stiffness;
    add(spring_row(dt, th, K, K * c.material.dissipation_time, c.phi0, c.vn0), res.impulses.contacts[3 * k + 2]);
    if (c.material.mu > 0.0)
      for (int i = 0; i < 2; ++i) add(spring_row(dt, th, 0.0, par.tangential_damping / dt, 0, 0), res.impulses.contacts[3 * k + i]);
  }
  // The limit is violated at its lower end only (upper row inactive: γ_upper = 0 at the optimum
  // since φ_upper ≫ 0), so the limit's impulse is the lower row's.
  for (size_t k = 0; k < set.limits.size(); ++k) {
    const constraints::JointLimitConstraint& l = set.limits[k];
    add(spring_row(dt, th, par.limit_stiffness, par.limit_damping, l.q0 - l.lower, l.v0), res.impulses.limits[k]);
  }
  for (size_t k = 0; k < set.pd_actuators.size(); ++k) {
    const constraints::PdActuatorConstraint& a = set.pd_actuators[k];
    const double c = dt * th * a.kp + a.kd;
    add({1.0 / (dt * c), (-a.kp * (a.q0 + dt * (1.0 - th) * a.v0 - a.q_target) + a.kd * a.v_target + a.feedforward) / c},
        res.impulses.pd_actuators[k]);
  }
  for (size_t k = 0; k < set.couplers.size(); ++k) {
    const constraints::CouplerConstraint& c = set.couplers[k];
    add(spring_row(dt, th, par.coupler_stiffness, par.coupler_damping, c.q0 - c.gear_ratio * c.leader_q0 - c.offset, c.vc0),
        res.impulses.couplers[k]);
  }
  return f;
}

// γ_n ≥ 0, ‖γ_t‖ ≤ μγ_n, the limit pushes up, |γ_PD| ≤ δt·effort on bounded rows (to tol·scale).
bool feasible(const MixedProblem& p, const LStableResults& res, double tol) {
  const ConstraintSet& set = p.set;
  const double scale = std::max(1.0, res.impulses.contacts.cwiseAbs().maxCoeff());
  for (size_t k = 0; k < set.contacts.size(); ++k) {
    const Eigen::Vector3d g = res.impulses.contacts.segment<3>(3 * k);
    if (g[2] < -tol * scale) return false;
    if (g.head<2>().norm() > set.contacts[k].material.mu * g[2] + tol * scale) return false;
  }
  for (size_t k = 0; k < set.limits.size(); ++k)
    if (res.impulses.limits[k] < -tol * scale) return false;
  for (size_t k = 0; k < set.pd_actuators.size(); ++k) {
    const double e = set.pd_actuators[k].effort_limit;
    if (std::isfinite(e) && std::abs(res.impulses.pd_actuators[k]) > set.time_step * e * (1.0 + tol)) return false;
  }
  return true;
}

TEST(LStableAppendixA, ReducedProblemGivesTheUnreducedSolution) {
  std::mt19937 rng(17);
  LStableParameters reduced_parameters, full_parameters;
  reduced_parameters.eliminate_free_rows = true;
  full_parameters.eliminate_free_rows = false;
  // One convex problem per step (the single-cone friction model): its objective is the measure.
  reduced_parameters.friction = full_parameters.friction = FrictionModel::kCone;
  int compared = 0, tight_comparisons = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const MixedProblem p = random_mixed_problem(rng, trial, false);
    LStableSolver reduced(reduced_parameters), full(full_parameters);
    const LStableResults& r = reduced.solve(p.set, p.A, p.v_star);
    const LStableResults& f = full.solve(p.set, p.A, p.v_star);
    ASSERT_EQ(r.status, LStableStatus::kSuccess) << trial;
    ASSERT_EQ(f.status, LStableStatus::kSuccess) << trial;
    ASSERT_TRUE(r.used_qp && f.used_qp);
    // The equivalence is judged by the objective of the UNREDUCED problem, which is well
    // conditioned where the minimizer is not (P = W + R has condition numbers up to ~1e9 here,
    // so two ε-optimal points may differ by ~1e-5 in γ while their objectives agree to ~ε).
    const double fr = full_objective(p, reduced_parameters, r), ff = full_objective(p, full_parameters, f);
    const double tight = std::max(r.residual, f.residual) <= 1e-9;
    tight_comparisons += tight;
    EXPECT_NEAR(fr, ff, (tight ? 1e-9 : 1e-6) * std::max(1.0, std::abs(ff))) << "trial " << trial;
    EXPECT_TRUE(feasible(p, r, 1e-8)) << "trial " << trial;
    EXPECT_TRUE(feasible(p, f, 1e-8)) << "trial " << trial;
    // And the minimizers themselves agree to what that conditioning allows.
    const double tol = 1e-3;
    const double vscale = std::max(1.0, f.v.norm());
    EXPECT_LT((r.v - f.v).norm(), tol * vscale) << "trial " << trial;
    auto close = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b, const char* what) {
      EXPECT_LT((a - b).norm(), tol * std::max(1.0, b.norm())) << what << " trial " << trial;
    };
    close(r.impulses.contacts, f.impulses.contacts, "contacts");
    close(r.impulses.limits, f.impulses.limits, "limits");
    close(r.impulses.couplers, f.impulses.couplers, "couplers");
    // The duplicated free rows share their load equally (swap symmetry of P_FF).
    EXPECT_NEAR(r.impulses.pd_actuators[0], r.impulses.pd_actuators[1],
                1e-9 * std::max(1.0, std::abs(r.impulses.pd_actuators[0])));
    EXPECT_NEAR(r.impulses.pd_actuators[0] + r.impulses.pd_actuators[1],
                f.impulses.pd_actuators[0] + f.impulses.pd_actuators[1],
                tol * std::max(1.0, std::abs(f.impulses.pd_actuators[0] + f.impulses.pd_actuators[1])));
    close(r.impulses.pd_actuators.tail(2), f.impulses.pd_actuators.tail(2), "pd");
    // Fewer QP variables: 3 (cone) + 1 (frictionless normal) + 2 (limit) + 1 (box) = 7.
    ++compared;
  }
  EXPECT_EQ(compared, 40);
  EXPECT_GE(tight_comparisons, 30);
}

// The default staggered friction model runs several QPs per step on the same reduced data; both
// paths reach the same fixed point (to its tolerance, 1e-6 relative on the normal impulses).
TEST(LStableAppendixA, StaggeredFrictionReachesTheSameFixedPointReducedOrNot) {
  std::mt19937 rng(23);
  LStableParameters reduced_parameters, full_parameters;
  full_parameters.eliminate_free_rows = false;
  int converged = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const MixedProblem p = random_mixed_problem(rng, trial, false);
    LStableSolver reduced(reduced_parameters), full(full_parameters);
    const LStableResults& r = reduced.solve(p.set, p.A, p.v_star);
    const LStableResults& f = full.solve(p.set, p.A, p.v_star);
    ASSERT_EQ(r.status, LStableStatus::kSuccess) << trial;
    ASSERT_EQ(f.status, LStableStatus::kSuccess) << trial;
    if (!(r.friction_converged && f.friction_converged)) continue;
    ++converged;
    EXPECT_TRUE(feasible(p, r, 1e-5)) << "trial " << trial;  // the cone holds to the fixed point's tolerance
    EXPECT_LT((r.v - f.v).norm(), 1e-4 * std::max(1.0, f.v.norm())) << "trial " << trial;
    EXPECT_LT((r.impulses.contacts - f.impulses.contacts).norm(), 1e-4 * std::max(1.0, f.impulses.contacts.norm()))
        << "trial " << trial;
  }
  std::printf("[ measured ] staggered friction: %d of 30 random mixed problems reached the fixed point\n", converged);
  EXPECT_GE(converged, 25);
}

// The reduced path's free rows satisfy their spring–damper law exactly: the row velocity at the
// end of the step is φ̇₁ = v̂ − R γ, i.e. for a PD row
//   γ = δt (kp (q_t − q₁) + kd (v_t − v₁) + u),  q₁ = q₀ + δt ((1 − θ) v₀ + θ v₁),
// evaluated with the returned velocities, independently of the solver's internal P and q.
TEST(LStableAppendixA, FreeRowsSatisfyTheirSpringDamperLaw) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const MixedProblem p = random_mixed_problem(rng, trial, trial % 2 == 0);
    LStableSolver solver;
    const LStableResults& r = solver.solve(p.set, p.A, p.v_star);
    ASSERT_EQ(r.status, LStableStatus::kSuccess) << trial;
    const double dt = p.set.time_step, th = p.set.theta_vq;
    for (size_t k = 0; k < 3; ++k) {  // the three free PD rows
      const constraints::PdActuatorConstraint& a = p.set.pd_actuators[k];
      const double v1 = r.v[a.v_index];
      const double q1 = a.q0 + dt * ((1.0 - th) * a.v0 + th * v1);
      const double expected = dt * (a.kp * (a.q_target - q1) + a.kd * (a.v_target - v1) + a.feedforward);
      EXPECT_NEAR(r.impulses.pd_actuators[k], expected, 1e-7 * std::max(1.0, std::abs(expected)))
          << "trial " << trial << " row " << k;
    }
  }
}

// Momentum balance of the whole step: A (v − v*) = Gᵀγ, with γ read back in the set's layout
// (contacts, limits, PD, couplers), for the reduced path.
TEST(LStableAppendixA, VelocitiesAreTheImpulsesThroughTheMassMatrix) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const MixedProblem p = random_mixed_problem(rng, trial, trial % 2 == 0);
    LStableSolver solver;
    const LStableResults& r = solver.solve(p.set, p.A, p.v_star);
    ASSERT_EQ(r.status, LStableStatus::kSuccess) << trial;
    Eigen::VectorXd tau = Eigen::VectorXd::Zero(p.set.nv);  // Gᵀγ
    for (size_t k = 0; k < p.set.contacts.size(); ++k) {
      const constraints::ContactConstraint& c = p.set.contacts[k];
      for (int b = 0; b < c.num_blocks; ++b)
        tau.segment(c.blocks[b].v_start, c.blocks[b].J.cols()) +=
            c.blocks[b].J.transpose() * r.impulses.contacts.segment<3>(3 * k);
    }
    for (size_t k = 0; k < p.set.limits.size(); ++k) tau[p.set.limits[k].v_index] += r.impulses.limits[k];
    for (size_t k = 0; k < p.set.pd_actuators.size(); ++k)
      tau[p.set.pd_actuators[k].v_index] += r.impulses.pd_actuators[k];
    for (size_t k = 0; k < p.set.couplers.size(); ++k) {
      const constraints::CouplerConstraint& c = p.set.couplers[k];
      tau[c.v_index] += r.impulses.couplers[k];
      tau[c.leader_v_index] -= c.gear_ratio * r.impulses.couplers[k];
    }
    Eigen::VectorXd lhs(p.set.nv);
    for (size_t t = 0; t < p.set.trees.size(); ++t) {
      const contact::TreeRange& tr = p.set.trees[t];
      lhs.segment(tr.v_start, tr.nv) = p.A[t] * (r.v - p.v_star).segment(tr.v_start, tr.nv);
    }
    EXPECT_LT((lhs - tau).norm(), 1e-9 * std::max(1.0, tau.norm())) << trial;
  }
}

}  // namespace
}  // namespace coulomb::solvers::lstable
