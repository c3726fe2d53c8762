// Digest §7 physics tests 15–17 on the digest's particle: mass m on the ground (contact frame =
// world, J = 1₃), k = 10¹², τ_d = δt, β = 1, σ = 10⁻³, w = ‖W‖_F/3 = 1/(√3 m) (Eq. 29). The
// particle is stepped with SAP alone: v* = v₀ + δt (g + F/m), φ ← φ + δt v_n.
#include <gtest/gtest.h>

#include <cmath>

#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::solvers::sap {
namespace {

constexpr double kGravity = 9.81;

struct ParticleState {
  Eigen::Vector3d v = Eigen::Vector3d::Zero();
  double phi = 0.0;
  Eigen::Vector3d R = Eigen::Vector3d::Zero();  // regularization of the last step
};

// Runs `steps` steps of the particle pushed by F (world frame) and returns the final state.
ParticleState run_particle(double m, double dt, double mu, const Eigen::Vector3d& F, ParticleState s, int steps) {
  SapSolverParameters params;
  params.rel_tolerance = 1e-12;
  for (int k = 0; k < steps; ++k) {
    const Eigen::Vector3d v_star = s.v + dt * (Eigen::Vector3d(0, 0, -kGravity) + F / m);
    SapProblem problem(dt, {Eigen::MatrixXd::Identity(3, 3) * m}, v_star);
    FrictionConeParameters p{mu, 1e12, dt, s.phi, {}};
    problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(p, 0, Eigen::MatrixXd::Identity(3, 3)));
    const SapSolverResults r = SapSolver(params).solve(problem, s.v);
    EXPECT_EQ(r.status, SapSolverStatus::kSuccess);
    s.v = r.v;
    s.phi += dt * s.v[2];
    s.R = problem.constraint(0).R();
  }
  return s;
}

// Test 15: φ_rest = −(1 + τ_d/δt)(w m) β² g δt²/(4π²) = −2 g δt²/(4π²√3).
TEST(SapPhysicsTest, RestPenetrationOfTheNearRigidContact) {
  for (double dt : {1e-3, 1e-2}) {
    const ParticleState s = run_particle(0.7, dt, 1.0, Eigen::Vector3d::Zero(), {}, 400);
    const double expected = -2.0 * kGravity * dt * dt / (4 * M_PI * M_PI * std::sqrt(3.0));
    EXPECT_NEAR(s.phi, expected, 1e-3 * std::abs(expected)) << "dt " << dt;
    EXPECT_NEAR(s.phi, dt == 1e-3 ? -2.87e-7 : -2.87e-5, 0.01e-7 * (dt == 1e-3 ? 1 : 100));  // digest figures
  }
}

// Test 16: pushed at F = μ m g the particle creeps at the regularized-friction slip
// v_s = σ (w m) μ g δt = μ σ g δt/√3, below the bound μ σ g δt; half of it at F = ½ μ m g.
TEST(SapPhysicsTest, StictionSlipBound) {
  const double m = 2.0, mu = 1.0, sigma = 1e-3;
  for (double dt : {1e-3, 1e-2}) {
    ParticleState rest = run_particle(m, dt, mu, Eigen::Vector3d::Zero(), {}, 200);
    const ParticleState s = run_particle(m, dt, mu, Eigen::Vector3d(mu * m * kGravity, 0, 0), rest, 200);
    const double expected = sigma * mu * kGravity * dt / std::sqrt(3.0);
    EXPECT_NEAR(s.v[0], expected, 1e-3 * expected) << "dt " << dt;
    EXPECT_LT(s.v[0], mu * sigma * kGravity * dt);
    const ParticleState half = run_particle(m, dt, mu, Eigen::Vector3d(0.5 * mu * m * kGravity, 0, 0), rest, 200);
    EXPECT_NEAR(half.v[0], 0.5 * expected, 1e-3 * expected) << "dt " << dt;
  }
  EXPECT_NEAR(sigma * 1.0 * kGravity * 1e-3 / std::sqrt(3.0), 5.66e-6, 0.01e-6);  // digest figure
}

// Test 17: driven at 1 m/s against μ = 0.5 (F = μ m g) the particle glides at
// φ = (δt + τ_d)(μ v_t − R_n (1 + μ̃²) m g δt) above the ground.
TEST(SapPhysicsTest, GlidingHeight) {
  const double m = 1.0, mu = 0.5;
  for (double dt : {1e-2, 1e-3}) {
    ParticleState s0;
    s0.v = Eigen::Vector3d(1.0, 0, 0);
    const ParticleState s = run_particle(m, dt, mu, Eigen::Vector3d(mu * m * kGravity, 0, 0), s0, 1000);
    const double Rt = s.R[0], Rn = s.R[2], mu_tilde2 = mu * mu * Rt / Rn;
    const double expected = 2 * dt * (mu * s.v[0] - Rn * (1 + mu_tilde2) * m * kGravity * dt);
    EXPECT_NEAR(s.phi, expected, 1e-3 * expected) << "dt " << dt;
    EXPECT_NEAR(s.v[0], 1.0, 1e-6);
    EXPECT_NEAR(s.phi, dt == 1e-2 ? 9.971e-3 : 9.997e-4, 1e-3 * (dt == 1e-2 ? 9.971e-3 : 9.997e-4));  // digest
  }
}

}  // namespace
}  // namespace coulomb::solvers::sap
