// The L-stable solver (LStableSolver, Drumwright) on the paper's examples, at the solver level
// (digest ../shared/digests/lstable.md §5–§6; issue 11's acceptance list):
//  C9  range-of-motion pendulum (§5.3): restitution against δt equals implicit Euler's discrete
//      closed form for an undamped spring (derived below) and the digest's 0.0097 / 0.25 / 0.856 /
//      0.984; at δt = 1e-2 a 1 s run from θ₀ = π/2 ends at rest on the limit;
//  C11 sphere stacks of N = 10, 30, 100 spheres, frictionless and with friction (μ = 0.5, rows
//      [t1, t2, n], 6-dof spheres): penetration at contact i = (N − i + 1) m g / K;
//  any step size: δt from 1e-4 to 10 s, the pendulum and the stacks stay bounded and the
//      constraints never add energy (the stacks' total energy never grows; the pendulum's only by
//      the explicit gravity's own curvature term, see the test);
//  Painlevé: a rod touching the ground at one end, 63.4° from horizontal, sliding with
//      μ = 1.5 > 4/3 (the rigid-body problem has no solution there): every step succeeds, finite
//      and bounded, energy does not grow.
// The Ġ (velocity-product) terms are off in the solver (lstable_solver.h) and ConstraintSet has
// no field for them: the tests' constraints are linear (pendulum limit, stacks: Ġ = 0 exactly)
// or take φ₁ = φ₀ + δt G v₁ with G frozen at t₀ (the rod), which is what the solver implements.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include <Eigen/Dense>

#include "lstable_test_util.h"

namespace coulomb::solvers::lstable {
namespace {

using constraints::ConstraintSet;
using test_util::Rod;
using test_util::RomPendulum;
using test_util::SphereStack;

// ---------------------------------------------------------------------------------------------
// Range-of-motion pendulum.
//
// Restitution of implicit Euler for an undamped spring (digest §4 item 3), derived: while the
// limit is active the row is the linear spring M̂ φ̈ = −K φ (gravity at θ ≈ 0 is ≈ g θ ≪ K θ), and
// one step is v₁ = (v₀ − δt ω² φ₀)/(1 + a²), φ₁ = (φ₀ + δt v₀)/(1 + a²), a = ω δt, ω² = K/M̂. In
// z = v + i ω φ that is z₁ = z₀ / (1 − i a): each step turns z by α = atan(a) and shrinks it by
// (1 + a²)^(−1/2). Entering at φ₀ = 0 with v₀ = −V (z₀ = −V), after k steps
//   v_k = −V (1 + a²)^(−k/2) cos(k α),  φ_k = −(V/ω) (1 + a²)^(−k/2) sin(k α),
// and the limit lets go (the free prediction φ_k + δt v_k ≥ 0, i.e. sin((k + 1) α) ≤ 0) at
// k = ⌈π/α⌉ − 1, leaving with
//   e = v_k / V = −(1 + a²)^(−k/2) cos(k α).
// Its smooth envelope is e ≈ (1 + a²)^(−π/(2α)) → 1 − π a / 2 (1 − e linear in δt, the paper's
// "accuracy increases linearly"); a = 10, 1, 0.1, 0.01 give 0.009705, 0.25, 0.85594, 0.98441
// (the digest's 0.0097 / 0.25 / 0.856 / 0.984 [repro]).
struct Restitution {
  double e = 0.0;
  int contact_steps = 0;
};
Restitution implicit_euler_restitution(double a) {
  const double alpha = std::atan(a);
  const int k = static_cast<int>(std::ceil(M_PI / alpha)) - 1;
  return {-std::pow(1.0 + a * a, -0.5 * k) * std::cos(k * alpha), k};
}

TEST(LStablePaper, RomPendulumRestitutionIsImplicitEulersClosedForm) {
  const double K = 1e12;  // LStableParameters defaults: limit_stiffness 1e12, limit_damping 0
  LStableSolver solver;
  ASSERT_EQ(solver.parameters().limit_stiffness, K);
  ASSERT_EQ(solver.parameters().limit_damping, 0.0);
  const double digest[] = {0.0097, 0.25, 0.856, 0.984};
  const double hs[] = {1e-5, 1e-6, 1e-7, 1e-8};
  double previous = 0.0;
  for (int j = 0; j < 4; ++j) {
    const double h = hs[j];
    // Start on the limit (θ = 0) with the impact velocity of the fall from π/2: ½ θ̇² = g L.
    RomPendulum p;
    const double V = std::sqrt(2.0 * p.g);
    p.theta = 0.0;
    p.omega = -V;
    const Restitution closed = implicit_euler_restitution(std::sqrt(K) * h);
    int contact_steps = 0;
    for (int step = 0; step < closed.contact_steps + 20; ++step) {
      const LStableResults& r = p.step(solver, h);
      ASSERT_EQ(r.status, LStableStatus::kSuccess) << h << " step " << step;
      if (r.impulses.limits[0] > 1e-6 * V) ++contact_steps;  // free steps: the QP's γ ≈ 0 (≤ 1e-9 V)
    }
    ASSERT_GT(p.theta, 0.0) << h;
    const double e = p.omega / V;
    std::printf("ROM pendulum h = %g: e = %.6f, closed form %.6f, digest %.4f, %d contact steps (closed form %d)\n", h,
                e, closed.e, digest[j], contact_steps, closed.contact_steps);
    EXPECT_NEAR(e, closed.e, 1e-6 * closed.e + 1e-9) << h;
    EXPECT_NEAR(e, digest[j], 0.02 * digest[j]) << h;
    EXPECT_EQ(contact_steps, closed.contact_steps) << h;
    EXPECT_GT(e, previous) << h;  // restitution grows as δt shrinks
    previous = e;
    // The smooth envelope, exact where the contact lasts many steps.
    const double a = std::sqrt(K) * h;
    if (a <= 0.1) {
      EXPECT_NEAR(e, std::pow(1.0 + a * a, -M_PI / (2.0 * std::atan(a))), 2e-3) << h;
    }
  }
}

// The first impact from θ₀ = π/2 with δt = 1e-5 (59 198 steps): the entry phase is not 0 there,
// so e sits inside the range the closed form gives for entries φ₀ ∈ [0, δt V) (≈ 0.0038 … 0.0097).
TEST(LStablePaper, RomPendulumFullFallAtOneEMinusFiveIsDead) {
  LStableSolver solver;
  RomPendulum p;
  const double h = 1e-5, V = std::sqrt(2.0 * p.g);
  double v_in = 0.0;
  int step = 0;
  for (; step < 70000; ++step) {
    const double v0 = p.omega;
    const LStableResults& r = p.step(solver, h);
    ASSERT_EQ(r.status, LStableStatus::kSuccess) << step;
    if (r.impulses.limits[0] > 1e-6 * V && v_in == 0.0) v_in = v0;
    if (v_in != 0.0 && r.impulses.limits[0] <= 1e-6 * V) break;
  }
  ASSERT_LT(v_in, 0.0);
  // Symplectic Euler's swing reaches the bottom with |v| = V to O(h).
  EXPECT_NEAR(-v_in, V, 1e-3 * V);
  for (int k = 0; k < 10; ++k) p.step(solver, h);
  const double e = p.omega / -v_in;
  std::printf("ROM pendulum full fall at h = 1e-5: impact after %d steps, v_in = %.6f, e = %.6f\n", step, v_in, e);
  EXPECT_GT(e, 0.0035);
  EXPECT_LT(e, 0.0098);
}

TEST(LStablePaper, RomPendulumComesToRestOnTheLimit) {
  LStableSolver solver;
  RomPendulum p;
  const double h = 1e-2, K = solver.parameters().limit_stiffness;
  double max_penetration = 0.0;
  for (int step = 0; step < 100; ++step) {
    const LStableResults& r = p.step(solver, h);
    ASSERT_EQ(r.status, LStableStatus::kSuccess) << step;
    max_penetration = std::max(max_penetration, -p.theta);
  }
  std::printf("ROM pendulum h = 1e-2, 1 s: theta = %.3e, omega = %.3e, max penetration %.3e rad\n", p.theta, p.omega,
              max_penetration);
  EXPECT_LT(std::abs(p.theta), 1e-6);
  EXPECT_LT(std::abs(p.omega), 1e-6);
  // The impact step: φ₁ = (φ₀ + h v*)/(1 + h² K) with φ₀ ≥ 0, |v*| ≤ V + h g.
  EXPECT_LT(max_penetration, h * (std::sqrt(2 * p.g) + h * p.g) / (1.0 + h * h * K));
}

// Any step size, the pendulum: gravity is explicit (the paper's f), so even without the limit
// the swing is symplectic Euler, whose energy is not monotone (it rises by ≈ ½ g δt² θ̇² per step
// near the bottom). What the scheme guarantees is that the limit never adds energy: with
// θ₁ = θ₀ + δt v₁, v₁ = v₀ + δt (f₀ + λ₁) and λ₁ = K max(0, −θ₁) = −U′(θ₁) (U = ½ K min(θ, 0)², convex),
//   ΔE ≤ [V(θ₁) − V(θ₀) − V′(θ₀)(θ₁ − θ₀)] − ½ (v₁ − v₀)²,  V(θ) = g (1 − cos θ),
// the bracket being explicit gravity's own error (≤ ½ g Δθ²). Checked every step for δt from 1e-4
// to 10 s, with |θ| and |θ̇| bounded and the run ending at rest on the limit (δt = 1e-4: the
// impact leaves e ≈ 1e-4, tiny bounces of 1e-4 rad remain, energy < 1e-8 E₀).
//
// Round-off here includes the QP's tolerance: at rest ‖q‖ < 1 and ConicQpSolver's dual residual
// floor max(1, ‖q‖) accepts |δγ| ≈ 1e-10 absolute, i.e. δθ = δt δγ, which the K = 1e12 spring
// turns into δU ≈ K δθ (|θ| + δθ): measured 2.9e-9 J (3e-10 E₀) at δt = 10 s with the default
// tolerance 1e-10, 5e-20 J with 1e-12. Both are run: the default with that bound, 1e-12 with
// 1e-12 E₀.
TEST(LStablePaper, RomPendulumAnyStepSizeTheLimitNeverAddsEnergy) {
  for (const double qp_tolerance : {1e-10, 1e-12}) {
    for (double h : {1e-4, 1e-3, 1e-2, 0.1, 0.3, 1.0, 3.0, 10.0}) {
      LStableParameters parameters;
      parameters.qp.tolerance = qp_tolerance;
      LStableSolver solver(parameters);
      const double K = solver.parameters().limit_stiffness;
      RomPendulum p;
      const double E0 = p.energy(K), V = std::sqrt(2.0 * p.g);
      const int steps = std::max(20, static_cast<int>(std::lround(1.0 / h)));
      double worst = -1e300;  // max over steps of ΔE − bound, relative to E0
      double max_speed = 0.0;
      for (int step = 0; step < steps; ++step) {
        const double th0 = p.theta, v0 = p.omega, E = p.energy(K);
        const LStableResults& r = p.step(solver, h);
        ASSERT_EQ(r.status, LStableStatus::kSuccess) << h << " step " << step;
        ASSERT_TRUE(std::isfinite(p.theta) && std::isfinite(p.omega)) << h;
        const double dth = p.theta - th0, dv = p.omega - v0;
        const double bound =
            p.gravity_energy(p.theta) - p.gravity_energy(th0) - p.g * std::sin(th0) * dth - 0.5 * dv * dv;
        const double qp_slack =
            qp_tolerance > 1e-11 ? K * h * qp_tolerance * (std::abs(p.theta) + h * qp_tolerance) : 0.0;
        worst = std::max(worst, (p.energy(K) - E - bound) / E0);
        ASSERT_LE(p.energy(K) - E, bound + qp_slack + 1e-12 * E0) << h << " step " << step << " tol " << qp_tolerance;
        max_speed = std::max(max_speed, std::abs(p.omega));
        ASSERT_LE(std::abs(p.theta), M_PI / 2 + 1e-12) << h;
      }
      std::printf("ROM pendulum qp tol %g h = %g: %d steps, max (dE - bound)/E0 = %.2e, max |omega| = %.3f, end E/E0 %.2e\n",
                  qp_tolerance, h, steps, worst, max_speed, p.energy(K) / E0);
      EXPECT_LE(max_speed, V * (1.0 + 0.1)) << h;  // symplectic Euler overshoots V by O(h) (h = 0.1: 4.28 < V)
      EXPECT_LT(p.energy(K), 1e-8 * E0) << h;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Sphere stacks (digest §5.6, test 11 generalized): m = 1, r = 0.1, K = 1e8 N/m, B = 1 N·s/m,
// δt = 0.01; the digest's statics: contact i (1-based from the ground) carries (N − i + 1) m g
// and sinks (N − i + 1) m g / K. Cost: one QP per step with N rows (frictionless) or 3N rows and
// N cones (μ > 0), dense: measured ≈ 9 ms/step for N = 100 frictionless, ≈ 0.2 s/step for
// N = 100 with friction (300 × 300).

struct StackRun {
  double max_rel_error = 0.0, max_force_rel_error = 0.0, max_speed = 0.0, max_tangential = 0.0, seconds = 0.0;
};
StackRun settle_stack(int N, double mu, double gap, int steps) {
  SphereStack s;
  s.N = N;
  s.mu = mu;
  s.place(gap);
  LStableSolver solver;
  ConstraintSet set;
  const std::vector<Eigen::MatrixXd> A = s.A_blocks();
  const double h = 0.01;
  StackRun out;
  const auto start = std::chrono::steady_clock::now();
  Eigen::VectorXd impulses;
  for (int step = 0; step < steps; ++step) {
    s.fill(set, h);
    const LStableResults& r = solver.solve(set, A, s.v_star(h));
    EXPECT_EQ(r.status, LStableStatus::kSuccess) << "N " << N << " step " << step;
    EXPECT_TRUE(r.v.allFinite());
    s.advance(r.v, h);
    impulses = r.impulses.contacts;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.max_speed = s.v.cwiseAbs().maxCoeff();  // translational and angular
  for (int i = 0; i < N; ++i) {
    const double load = s.static_load(i), expected = load / s.K;
    out.max_rel_error = std::max(out.max_rel_error, std::abs(-s.phi(i) - expected) / expected);
    out.max_force_rel_error = std::max(out.max_force_rel_error, std::abs(impulses[3 * i + 2] / h - load) / load);
    out.max_tangential = std::max(out.max_tangential, impulses.segment<2>(3 * i).norm() / h);
  }
  std::printf("stack N = %d, mu = %.1f, gap %.2f m, %d steps: penetration rel err %.2e, force rel err %.2e, "
              "max|v| %.1e, max |f_t| %.1e N, %.2f s\n",
              N, mu, gap, steps, out.max_rel_error, out.max_force_rel_error, out.max_speed, out.max_tangential,
              out.seconds);
  return out;
}

// Spheres start at rest 5 cm apart (the digest's setup), fall and settle: dead impacts at
// ω δt ≫ 1, then the chain's slowest mode (ω₁ δt ≈ π ω δt / (2N + 1) ≥ 1.5) decays by ≤ 0.54 per
// step. Measured: settled to ≤ 3e-8 after 50 (N = 10), 100 (30), 200 (100) steps.
TEST(LStablePaper, FrictionlessStacksSettleAtTheStaticPenetrations) {
  for (const auto& [N, steps] : {std::pair{10, 100}, std::pair{30, 150}, std::pair{100, 250}}) {
    const StackRun r = settle_stack(N, 0.0, 0.05, steps);
    EXPECT_LT(r.max_rel_error, 1e-6) << N;
    EXPECT_LT(r.max_force_rel_error, 1e-6) << N;
    EXPECT_LT(r.max_speed, 1e-9) << N;
  }
}

// With friction (μ = 0.5, rows [t1, t2, n], 6-dof spheres, one second-order cone per contact):
// the same statics, no tangential force (nothing pushes sideways), no spin.
TEST(LStablePaper, FrictionalStacksSettleAtTheStaticPenetrations) {
  for (const auto& [N, steps] : {std::pair{10, 100}, std::pair{30, 150}}) {
    const StackRun r = settle_stack(N, 0.5, 0.05, steps);
    EXPECT_LT(r.max_rel_error, 1e-6) << N;
    EXPECT_LT(r.max_force_rel_error, 1e-6) << N;
    EXPECT_LT(r.max_speed, 1e-9) << N;
    EXPECT_LT(r.max_tangential, 1e-6) << N;
  }
}

// N = 100 with friction: 300 rows, 100 cones, ≈ 0.2 s per step, so the spheres start touching
// (zero penetration) at rest instead of 5 cm apart; 30 steps settle it (measured 2.5e-7 after
// 25, 7e-9 after 50).
TEST(LStablePaper, FrictionalStackOfHundredSpheresSettles) {
  const StackRun r = settle_stack(100, 0.5, 0.0, 30);
  EXPECT_LT(r.max_rel_error, 1e-6);
  EXPECT_LT(r.max_force_rel_error, 1e-6);
  EXPECT_LT(r.max_speed, 1e-7);
  EXPECT_LT(r.max_tangential, 1e-6);
}

// Any step size, the stacks: with constant Jacobians (the stack's contacts are linear in q),
// constant gravity and θ_vq = 1 the step is implicit Euler on the convex potential
// Σ m g z + Σ ½ K min(φ, 0)² plus dampers (B_n, the tangential B_r, the cone), so
//   E = ½ vᵀ M v + Σ m g z + Σ ½ K min(φ, 0)²
// never grows, for every δt (proof: U(φ₁) − U(φ₀) ≤ U′(φ₁)(φ₁ − φ₀) and λ φ̇₁ + K min(φ₁, 0) φ̇₁ ≤ 0
// row by row for λ = max(0, −K φ₁ − B φ̇₁); friction: γ_tᵀ v_t ≤ 0). 10 spheres start touching
// with random velocities (and, with friction, random lateral velocities and spins), 40 steps at
// δt = 1e-4 … 10 s: ΔE ≤ 1e-13 E₀ every step (measured ≤ 2.3e-13 J on E₀ ≈ 100 J), bounded,
// penetration ≤ 1e-4 m.
TEST(LStablePaper, StacksAnyStepSizeEnergyNeverGrows) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (double mu : {0.0, 0.5}) {
    for (double h : {1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0}) {
      SphereStack s;
      s.N = 10;
      s.mu = mu;
      s.place(0.0);
      for (int i = 0; i < s.v.size(); ++i) s.v[i] = U(rng);
      LStableSolver solver;
      ConstraintSet set;
      const std::vector<Eigen::MatrixXd> A = s.A_blocks();
      const double E0 = s.energy();
      const double speed_bound = std::sqrt(2.0 * E0 / std::min(s.m, s.inertia()));  // all of E0 as kinetic
      double worst = -1e300, max_penetration = 0.0;
      for (int step = 0; step < 40; ++step) {
        s.fill(set, h);
        const double E = s.energy();
        const LStableResults& r = solver.solve(set, A, s.v_star(h));
        ASSERT_EQ(r.status, LStableStatus::kSuccess) << mu << " " << h << " step " << step;
        s.advance(r.v, h);
        ASSERT_TRUE(s.v.allFinite() && s.q.allFinite());
        worst = std::max(worst, s.energy() - E);
        ASSERT_LE(s.energy() - E, 1e-13 * E0) << "mu " << mu << " h " << h << " step " << step;
        ASSERT_LT(s.v.cwiseAbs().maxCoeff(), speed_bound);
        for (int i = 0; i < s.N; ++i) max_penetration = std::max(max_penetration, -s.phi(i));
      }
      std::printf("stack energy mu %.1f h %g: E0 %.3f J, E %.3f J, max step dE %.2e J, max penetration %.2e m\n", mu, h,
                  E0, s.energy(), worst, max_penetration);
      EXPECT_LT(max_penetration, 1e-4);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Painlevé. A uniform rod (1 kg, 1 m) with its lower end on the ground, θ = atan 2 = 63.4° from
// horizontal, that end sliding along −x at v_s (away from the upper end's side), μ = 1.5.
// In contact coordinates (end 0, W = J A⁻¹ Jᵀ): W_tt = (1 + 3 sin²θ)/m = 3.4, W_nn =
// (1 + 3 cos²θ)/m = 1.6, W_nt = −3 sinθ cosθ / m = −1.2. Sliding friction −μ λ_n sign(v_t) gives the
// end's normal acceleration a_n = −g + (W_nn − μ sign(v_t) W_nt) λ_n = −g + (1.6 − 1.2 μ) λ_n, and
// 1.6 − 1.2 μ < 0 for μ > 4/3: no λ_n ≥ 0 gives a_n ≥ 0 — the rigid problem has no solution
// (Painlevé's inconsistency). The impulsive answer (Génot & Brogliato's tangential impact) is a
// jam: the impulse that stops the end, P = W⁻¹ (−v_t, g δt…), has P_t / P_n = W_nn / |W_nt| = 4/3,
// inside the cone exactly when μ > 4/3.
// The L-stable solver gives that: in the first step the end sticks (|slip| ≤ 1.1 % of v_s) with
// the jam impulse (to 2 %), the rod then pivots on the stuck end — upward first (it rises to
// 72.8° for v_s = −1 m/s; over the vertical and down the other side for −3 m/s), then falls; the
// end slips in the last ≈ 0.1 s before the rod lands flat, and comes to rest flat with m g / 2 on
// each end. With the default staggered friction the sliding end stays on the ground up to the
// omitted Ġ v term, δt ω² |p_BE,z| per step (≈ 2e-3 m/s at δt = 1e-3): measured ≤ 1.1e-5 m above
// it at δt = 1e-3 and ≤ 4.4e-4 m at 1e-2. (The single-cone model, FrictionModel::kCone, rides up
// 1–2.4 mm and 7–18 mm: on the cone's boundary the KKT conditions give (J v₁)_n = v̂_n − R_n γ_n +
// μ ‖(J v₁)_t + R_t γ_t‖, a gap φ ≈ μ |v_t| (δt + τ_d) − λ_n / K while sliding.) The jam is found
// because the staggered passes start from the cone's solution, where it is a fixed point. Every
// step succeeds, all values finite, energy
// (kinetic + gravity + ½ K min(φ, 0)² at both ends) never grows (measured ≤ 6e-22 J per step),
// over 1 s at δt = 1e-3 and 1e-2.
TEST(LStablePaper, PainleveRodJamsAndStaysBounded) {
  for (double h : {1e-3, 1e-2}) {
    for (double slip : {-1.0, -3.0}) {
      Rod rod;
      rod.place(std::atan(2.0), slip);
      const Eigen::Matrix<double, 3, 6> J = rod.J(0);
      const Eigen::Matrix3d W = J * rod.A().ldlt().solve(J.transpose());
      // Thin-rod values (ρ = 1 cm changes them by < 1e-3).
      ASSERT_NEAR(W(0, 0), 3.4, 2e-3);
      ASSERT_NEAR(W(2, 2), 1.6, 2e-3);
      ASSERT_NEAR(W(2, 0), -1.2, 2e-3);
      ASSERT_LT(W(2, 2) - rod.mu * (slip > 0 ? 1.0 : -1.0) * W(2, 0), 0.0);  // Painlevé: no rigid solution
      Eigen::Matrix2d W2;
      W2 << W(0, 0), W(0, 2), W(2, 0), W(2, 2);
      const Eigen::Vector2d jam = W2.inverse() * Eigen::Vector2d(-slip, rod.g * h);  // stops the end within the step
      ASSERT_LT(std::abs(jam[0]) / jam[1], rod.mu);
      EXPECT_NEAR(W(2, 2) / -W(2, 0), 4.0 / 3.0, 2e-3);

      LStableSolver solver;
      ConstraintSet set;
      const double E0 = rod.energy();
      const double speed_bound = std::sqrt(2.0 * (E0 + rod.m * rod.g * rod.L) / rod.m);
      double worst = -1e300, max_angle = 0.0, max_penetration = 0.0, max_height = 0.0;
      const int steps = static_cast<int>(std::lround(1.0 / h));
      for (int step = 0; step < steps; ++step) {
        rod.fill(set, h);
        const double E = rod.energy();
        const LStableResults& r = solver.solve(set, {rod.A()}, rod.v_star(h));
        ASSERT_EQ(r.status, LStableStatus::kSuccess) << h << " " << slip << " step " << step;
        ASSERT_TRUE(r.v.allFinite() && r.impulses.contacts.allFinite());
        rod.advance(r.v, h);
        if (step == 0) {
          EXPECT_LT(std::abs(rod.v_WE(0).x()), 0.02 * std::abs(slip)) << h << " " << slip;
          EXPECT_NEAR(r.impulses.contacts[0], jam[0], 0.02 * jam.norm()) << h << " " << slip;
          EXPECT_NEAR(r.impulses.contacts[2], jam[1], 0.02 * jam.norm()) << h << " " << slip;
          EXPECT_LE(r.impulses.contacts.head<2>().norm(), rod.mu * r.impulses.contacts[2] * (1 + 1e-8));
        }
        worst = std::max(worst, rod.energy() - E);
        ASSERT_LE(rod.energy() - E, 1e-12 * E0) << h << " " << slip << " step " << step;
        ASSERT_LT(rod.v_WB.norm(), speed_bound);
        ASSERT_LT(rod.w_WB.norm(), 2.0 * speed_bound / rod.L);
        max_angle = std::max(max_angle, rod.angle());
        for (int end = 0; end < 2; ++end) max_penetration = std::max(max_penetration, -rod.p_WE(end).z());
        if (step > 0) max_height = std::max(max_height, rod.p_WE(0).z());
      }
      std::printf("Painleve rod h = %g, v_s = %g: max step dE %.2e J, max angle %.1f deg, end-0 max height %.2e m, "
                  "max penetration %.2e m, final angle %.2f deg, final normal forces at rest\n",
                  h, slip, worst, max_angle * 180 / M_PI, max_height, max_penetration, rod.angle() * 180 / M_PI);
      // It rose first (pivoting on the stuck end), stayed near the ground, and lies flat at rest at 1 s.
      EXPECT_GT(max_angle, std::atan(2.0) + 0.1);
      EXPECT_LT(max_height, h < 5e-3 ? 5e-5 : 1e-3);
      EXPECT_LT(max_penetration, 1e-5);
      EXPECT_LT(std::abs(std::sin(rod.angle())), 1e-6);
      EXPECT_LT(rod.v_WB.norm() + rod.w_WB.norm(), 1e-6);
      EXPECT_LT(rod.energy(), E0);
    }
  }
}

}  // namespace
}  // namespace coulomb::solvers::lstable
