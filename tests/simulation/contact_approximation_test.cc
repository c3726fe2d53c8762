// The "similar" and "lagged" contact approximations in the simulator (digest
// ../shared/digests/contact-approximations.md; docs/contact.md "Contact approximations"): the
// bowling ball does not hop and reaches v = 5/7 v₀ at t* = 2 v₀/(7 μ g); a sliding box stays on
// the ground, does not tip and stops at v₀²/(2 μ g); stick and slide on inclines; the
// Hunt–Crossley coefficient of restitution e(d v_i) of a linear spring. SAP's numbers for the same
// scenes are printed for comparison. Scenes are inline YAML (io::parse_scene). Every test prints
// what it measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <Eigen/Core>

#include "simulation_test_util.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

using test_util::num;
using test_util::floating_joint;
using test_util::world_twist;

constexpr double kG = 9.81;
using contact::ContactApproximation;




Simulator make(const std::string& yaml, ContactApproximation a, double dt, Integrator integrator = Integrator::kImplicitEuler) {
  io::Scene scene = io::parse_scene(yaml, "contact_approximation_test");
  scene.contact.approximation = a;
  SimulatorParameters params;
  params.time_step = dt;
  params.integrator = integrator;
  return Simulator(std::move(scene), params);
}

const ContactApproximation kAll[] = {ContactApproximation::kLagged, ContactApproximation::kSimilar,
                                     ContactApproximation::kSap};

// ---------------------------------------------------------------------------------------------
// Bowling ball: r = 0.1 m, m = 7 kg (solid sphere), v₀ = 3 m/s, ω₀ = 0, μ = 0.3, on a ground
// half-space, k = 10⁶ N/m. It starts at its rest height z_rest = r − m g/k. Sliding:
// v(t) = v₀ − μ g t and the slip v − ω r = v₀ − (7/2) μ g t until t* = 2 v₀/(7 μ g) = 0.29122 s,
// then it rolls at v = 5/7 v₀. t* is measured as the zero of the line fitted to the slip while it
// is above 0.1 v₀ (the first 90 % of the sliding phase); v at 2 t*.
struct BowlingResult {
  double lift = 0.0, t_star = 0.0, v_final = 0.0;
  int failures = 0;
};

BowlingResult bowl(ContactApproximation a, double dt) {
  const double r = 0.1, m = 7.0, k = 1e6, mu = 0.3, v0 = 3.0;
  const double z_rest = r - m * kG / k;
  const std::string yaml =
      "time_step: " + num(dt) + "\nduration: 1.0\ngravity: [0, 0, -9.81]\n"
      "contact: {mu: " + num(mu) + ", stiffness: " + num(k) + "}\n"
      "bodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
      "  - name: ball\n    mass: " + num(m) + "\n    shapes: [{type: sphere, radius: " + num(r) + "}]\n"
      "    position: [0, 0, " + num(z_rest) + "]\n    linear_velocity: [" + num(v0) + ", 0, 0]\n";
  Simulator sim = make(yaml, a, dt);
  const multibody::Joint& j = floating_joint(sim.model(), "ball");
  const double t_star = 2 * v0 / (7 * mu * kG);
  const int steps = static_cast<int>(std::lround(2 * t_star / dt));
  BowlingResult res;
  double St = 0, Ss = 0, Stt = 0, Sts = 0;
  int count = 0;
  for (int s = 0; s < steps; ++s) {
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++res.failures;
    res.lift = std::max(res.lift, sim.q()[j.q_index + 2] - z_rest);
    const auto [v, w] = world_twist(sim, j);
    const double vx_contact = (v + w.cross(Eigen::Vector3d(0, 0, -r))).x();  // slip of the contact point
    if (vx_contact > 0.1 * v0) {
      const double t = sim.time();
      St += t, Ss += vx_contact, Stt += t * t, Sts += t * vx_contact;
      ++count;
    }
  }
  const double slope = (count * Sts - St * Ss) / (count * Stt - St * St);
  const double intercept = (Ss - slope * St) / count;
  res.t_star = -intercept / slope;
  res.v_final = world_twist(sim, j).first.x();
  return res;
}

TEST(ContactApproximationTest, BowlingBallKeepsContactAndRollsAtTheAnalyticTime) {
  const double v0 = 3.0, t_star = 2 * v0 / (7 * 0.3 * kG), v_star = 5.0 / 7.0 * v0;
  for (double dt : {1e-3, 1e-2})
    for (ContactApproximation a : kAll) {
      const BowlingResult r = bowl(a, dt);
      std::printf("[ measured ] bowling ball, %-7s dt %g: max lift above rest %.3e m, t* = %.5f s (analytic %.5f, "
                  "rel. error %.2e), v(2 t*) = %.5f m/s (5/7 v0 = %.5f, rel. error %.2e), %d failures\n",
                  contact::to_string(a), dt, r.lift, r.t_star, t_star, std::abs(r.t_star - t_star) / t_star, r.v_final,
                  v_star, std::abs(r.v_final - v_star) / v_star, r.failures);
      if (a != ContactApproximation::kLagged) continue;
      EXPECT_EQ(r.failures, 0);
      EXPECT_LE(r.lift, 1e-4) << "dt " << dt;
      EXPECT_NEAR(r.t_star, t_star, 5e-3 * t_star) << "dt " << dt;
      EXPECT_NEAR(r.v_final, v_star, 5e-3 * v_star) << "dt " << dt;
    }
}

// ---------------------------------------------------------------------------------------------
// A 0.1 m, 1 kg box sliding at v₀ = 2.2 m/s on the ground with μ = 0.5 stops after
// v₀²/(2 μ g) = 0.49337 m (implicit Euler: minus v₀ δt/2). It starts at its rest height (4 corner
// contacts, m g/(4 k) each). Friction applied at the ground, h/2 below the centre, pitches the box
// forward to the static tilt θ_s = μ m g (h/2) / (k Σ x_i²) (x_i = ±h/2), 2.45e-5 rad at
// k = 10⁶ N/m: the first step turns it there and the stop turns it back, each within about a step,
// at |ω| ≈ θ_s/δt (0.025 rad/s at δt = 1 ms, 0.0025 rad/s at k = 10⁷ N/m). Nothing else rotates it.
struct SlidingBoxResult {
  double max_height_change = 0.0, max_omega = 0.0, distance = 0.0, v_final = 0.0;
  int failures = 0;
};

SlidingBoxResult slide_box(ContactApproximation a, double k, double dt) {
  const double h = 0.1, m = 1.0, mu = 0.5, v0 = 2.2;
  const double z_rest = 0.5 * h - m * kG / (4 * k);
  const std::string yaml =
      "time_step: " + num(dt) + "\nduration: 1.0\ngravity: [0, 0, -9.81]\n"
      "contact: {mu: " + num(mu) + ", stiffness: " + num(k) + "}\n"
      "bodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
      "  - name: box\n    mass: " + num(m) + "\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
      "    position: [0, 0, " + num(z_rest) + "]\n    linear_velocity: [" + num(v0) + ", 0, 0]\n";
  Simulator sim = make(yaml, a, dt);
  const multibody::Joint& j = floating_joint(sim.model(), "box");
  const double x0 = sim.q()[j.q_index];
  const double t_stop = v0 / (mu * kG);
  const int steps = static_cast<int>(std::lround(1.5 * t_stop / dt));
  SlidingBoxResult res;
  for (int s = 0; s < steps; ++s) {
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++res.failures;
    res.max_height_change = std::max(res.max_height_change, std::abs(sim.q()[j.q_index + 2] - z_rest));
    res.max_omega = std::max(res.max_omega, world_twist(sim, j).second.norm());
  }
  res.distance = sim.q()[j.q_index] - x0;
  res.v_final = world_twist(sim, j).first.norm();
  return res;
}

TEST(ContactApproximationTest, SlidingBoxStaysDownAndStopsAtTheCoulombDistance) {
  const double expected = 2.2 * 2.2 / (2 * 0.5 * kG), dt = 1e-3;
  for (double k : {1e7, 1e6})
    for (ContactApproximation a : kAll) {
      const SlidingBoxResult r = slide_box(a, k, dt);
      const double theta_s = 0.5 * 1.0 * kG * 0.05 / (k * 4 * 0.05 * 0.05);
      std::printf("[ measured ] sliding box, %-7s k %.0e dt %g: max |z - z_rest| %.3e m, max |omega| %.3e rad/s "
                  "(theta_s/dt = %.3e); stop distance %.5f m (analytic %.5f, rel. error %.2e; implicit Euler's "
                  "v0 dt/2 = %.1e m), final speed %.2e m/s, %d failures\n",
                  contact::to_string(a), k, dt, r.max_height_change, r.max_omega, theta_s / dt, r.distance, expected,
                  std::abs(r.distance - expected) / expected, 2.2 * dt / 2, r.v_final, r.failures);
      if (a != ContactApproximation::kLagged) continue;
      EXPECT_EQ(r.failures, 0);
      EXPECT_LE(r.max_height_change, 1e-4);
      EXPECT_LE(r.max_omega, std::max(0.01, 1.1 * theta_s / dt)) << "k " << k;
      EXPECT_NEAR(r.distance, expected, 1e-2 * expected);
      EXPECT_LT(r.v_final, 1e-3);
    }
}

// ---------------------------------------------------------------------------------------------
// A 0.1 m, 1 kg box on an incline of angle α through the origin (outward normal
// n = (sin α, 0, cos α), downhill d = (cos α, 0, −sin α)), released at rest.
struct InclineResult {
  double a_fit = 0.0, displacement = 0.0, v_end = 0.0;
  int failures = 0;
};

InclineResult box_on_incline(ContactApproximation a, double alpha, double mu, double dt) {
  const double h = 0.05;
  const Eigen::Vector3d n(std::sin(alpha), 0, std::cos(alpha)), d(std::cos(alpha), 0, -std::sin(alpha));
  const std::string yaml =
      "time_step: " + num(dt) + "\nduration: 1.0\ngravity: [0, 0, -9.81]\n"
      "contact: {mu: " + num(mu) + ", stiffness: 1.0e6}\n"
      "bodies:\n"
      "  - name: incline\n    fixed: true\n"
      "    shapes: [{type: halfspace, normal: [" + num(n.x()) + ", 0, " + num(n.z()) + "]}]\n"
      "  - name: box\n    mass: 1.0\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
      "    position: [" + num(h * n.x()) + ", 0, " + num(h * n.z()) + "]\n"
      "    rpy: [0, " + num(alpha) + ", 0]\n";
  Simulator sim = make(yaml, a, dt);
  const multibody::Joint& j = floating_joint(sim.model(), "box");
  const Eigen::Vector3d p0 = sim.q().segment<3>(j.q_index);
  const int steps = static_cast<int>(std::lround(1.0 / dt));
  InclineResult res;
  double St = 0, Sv = 0, Stt = 0, Stv = 0;
  int count = 0;
  for (int k = 0; k < steps; ++k) {
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++res.failures;
    const double t = sim.time(), v = world_twist(sim, j).first.dot(d);
    if (t >= 0.2 - 1e-12) {
      St += t, Sv += v, Stt += t * t, Stv += t * v;
      ++count;
    }
  }
  res.a_fit = (count * Stv - St * Sv) / (count * Stt - St * St);
  res.displacement = (sim.q().segment<3>(j.q_index) - p0).dot(d);
  res.v_end = world_twist(sim, j).first.dot(d);
  return res;
}

// μ = 0.3 < tan 30°: a = g (sin 30° − 0.3 cos 30°) = 2.356287 m/s².
TEST(ContactApproximationTest, BoxSlidesDownAnIncline) {
  const double alpha = 30.0 * M_PI / 180.0, mu = 0.3;
  const double expected = kG * (std::sin(alpha) - mu * std::cos(alpha));
  for (ContactApproximation a : kAll) {
    const InclineResult r = box_on_incline(a, alpha, mu, 1e-3);
    std::printf("[ measured ] box on 30 deg incline, mu 0.3, %-7s: fitted a = %.6f m/s^2 (analytic %.6f, rel. "
                "error %.2e), v(1 s) = %.6f m/s, %d failures\n",
                contact::to_string(a), r.a_fit, expected, std::abs(r.a_fit - expected) / expected, r.v_end, r.failures);
    if (a == ContactApproximation::kSap) continue;
    EXPECT_EQ(r.failures, 0);
    EXPECT_NEAR(r.a_fit, expected, 1e-3 * expected);
    EXPECT_NEAR(r.v_end, expected, 2e-3 * expected);
  }
}

// μ = 0.5 > tan 20° = 0.364: the box sticks. Regularized friction lets it creep at the slip
// where μ N v/sqrt(v² + v_s²) = m g sin α, v = v_s ρ/sqrt(1 − ρ²), ρ = tan α/μ (≈ 1.06 v_s =
// 1.06e-4 m/s for v_s = 10⁻⁴ m/s); SAP's stiction creeps at σ-regularized speeds instead.
TEST(ContactApproximationTest, BoxSticksOnAnIncline) {
  const double alpha = 20.0 * M_PI / 180.0, mu = 0.5, vs = 1e-4;
  const double rho = std::tan(alpha) / mu, creep = vs * rho / std::sqrt(1 - rho * rho);
  for (ContactApproximation a : kAll) {
    const InclineResult r = box_on_incline(a, alpha, mu, 1e-3);
    std::printf("[ measured ] box on 20 deg incline, mu 0.5, %-7s: displacement after 1 s %.3e m, v(1 s) = %.3e m/s "
                "(regularized-friction creep %.3e m/s), %d failures\n",
                contact::to_string(a), r.displacement, r.v_end, creep, r.failures);
    if (a == ContactApproximation::kSap) continue;
    EXPECT_EQ(r.failures, 0);
    EXPECT_LE(std::abs(r.v_end), 1.5 * creep);
    EXPECT_LE(std::abs(r.displacement), 2e-3);
  }
}

// ---------------------------------------------------------------------------------------------
// Hunt–Crossley restitution (docs/contact.md): for m ẍ = −k x (1 + d ẋ) from x = 0, ẋ = v_i
// (x the penetration), energy-like integration of m v dv/(1 + d v) = −k x dx gives the exit
// speed v_r = e v_i with −u − ln(1 − u) = a − ln(1 + a), a = d v_i, u = d v_r = e a, independent
// of m and k; e → 1 − 2a/3 for small a.
double restitution(double a) {
  if (a == 0.0) return 1.0;
  const double rhs = a - std::log1p(a);
  double lo = 0.0, hi = 1.0;  // u ∈ [0, 1): −u − ln(1 − u) increases from 0 to ∞
  for (int i = 0; i < 200; ++i) {
    const double u = 0.5 * (lo + hi);
    (-u - std::log1p(-u) < rhs ? lo : hi) = u;
  }
  return 0.5 * (lo + hi) / a;
}

// A 1 kg ball moving at v_i = 1 m/s onto the ground without gravity; k = 400 N/m (ω = 20 rad/s,
// contact lasting about π/ω = 0.157 s = 1571 steps of 10⁻⁴ s); e = v_exit / v_i.
double bounce(ContactApproximation a, double d, Integrator integrator) {
  const double r = 0.1, vi = 1.0, dt = 1e-4;
  const std::string yaml =
      "time_step: " + num(dt) + "\nduration: 1.0\ngravity: [0, 0, 0]\n"
      "contact: {mu: 0, stiffness: 400, hunt_crossley_dissipation: " + num(d) + ", dissipation_time: 0}\n"
      "bodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
      "  - name: ball\n    mass: 1.0\n    shapes: [{type: sphere, radius: " + num(r) + "}]\n"
      "    position: [0, 0, " + num(r) + "]\n    linear_velocity: [0, 0, " + num(-vi) + "]\n";
  Simulator sim = make(yaml, a, dt, integrator);
  const multibody::Joint& j = floating_joint(sim.model(), "ball");
  for (int s = 0; s < 10000 && sim.q()[j.q_index + 2] < r + 0.01; ++s) sim.step();
  return world_twist(sim, j).first.z() / vi;
}

TEST(ContactApproximationTest, HuntCrossleyRestitutionOfALinearSpring) {
  EXPECT_NEAR(restitution(1e-3), 1 - 2e-3 / 3, 1e-6);
  for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint}) {
    double previous = 2.0;
    for (double d : {0.0, 0.2, 0.5, 1.0, 2.0}) {
      const double e = bounce(ContactApproximation::kLagged, d, integrator);
      const double e_similar = bounce(ContactApproximation::kSimilar, d, integrator);
      const double expected = restitution(d * 1.0);
      std::printf("[ measured ] Hunt-Crossley bounce, %s, d v_i = %.1f: e = %.5f lagged, %.5f similar (analytic %.5f, "
                  "error %+.2e)\n",
                  to_string(integrator), d, e, e_similar, expected, e - expected);
      EXPECT_NEAR(e, expected, integrator == Integrator::kMidpoint ? 2e-3 : 1e-2) << "d " << d;
      EXPECT_NEAR(e_similar, e, 1e-12);  // μ = 0: the two approximations coincide
      EXPECT_LT(e, previous);
      previous = e;
    }
  }
}

}  // namespace
}  // namespace coulomb::simulation
