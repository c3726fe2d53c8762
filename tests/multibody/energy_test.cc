// Energy and momentum: conservation under exact dynamics integrated with small steps, an
// analytic torque-free precession, and the gradient of the potential.
#include "coulomb/multibody/energy.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include "coulomb/multibody/aba.h"
#include "coulomb/multibody/configuration.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/rnea.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// ∂T/∂q at fixed v for a tree of 1-dof joints, computed independently of RNEA/CRBA:
// ∂T/∂q_k = −(S_k × V_λ(k)) · h_k (all world coordinates), with h_k the spatial momentum of
// the subtree rooted at body k. (Derivation: ∂V_i^B/∂q_k = −X_iW (S_k × V_λ(k)) for every i in
// the subtree.)
VectorXd kinetic_energy_gradient(const Model& model, Workspace& ws, const VectorXd& q, const VectorXd& v) {
  forward_kinematics(model, ws, q, v);
  const int n = model.num_bodies();
  std::vector<math::SpatialForce> h(n);
  for (int i = 1; i < n; ++i) h[i] = ws.X_WB[i].act(model.body(i).inertia * ws.V_B[i]);
  for (int i = n - 1; i >= 1; --i)
    if (model.body(i).parent > 0) h[model.body(i).parent] += h[i];
  VectorXd grad = VectorXd::Zero(model.nv());
  for (int k = 1; k < n; ++k) {
    const Body& b = model.body(k);
    const math::SpatialMotion S_W = ws.X_WB[k].act(joint_subspace_column(b.joint, ws.X_PB[k], 0));
    const math::SpatialMotion V_parent_W = ws.X_WB[b.parent].act(ws.V_B[b.parent]);
    grad[b.joint.v_index] = -S_W.cross(V_parent_W).dot(h[k]);
  }
  return grad;
}

TEST(EnergyTest, KineticEnergyGradientFormulaMatchesFiniteDifferences) {
  const Model model = testing::DoublePendulum().build();
  Workspace ws(model);
  std::mt19937 rng(51);
  for (int trial = 0; trial < 5; ++trial) {
    const VectorXd q = testing::random_vector(rng, 2, 3.0), v = testing::random_vector(rng, 2, 2.0);
    const VectorXd grad = kinetic_energy_gradient(model, ws, q, v);
    for (int k = 0; k < 2; ++k) {
      const double eps = 1e-6;
      const VectorXd e = VectorXd::Unit(2, k) * eps;
      const double fd = (kinetic_energy(model, ws, q + e, v) - kinetic_energy(model, ws, q - e, v)) / (2 * eps);
      EXPECT_NEAR(grad[k], fd, 1e-8);
    }
  }
}

TEST(EnergyTest, PotentialGradientIsGeneralizedGravity) {
  std::mt19937 rng(52);
  const Model model = testing::make_random_tree(rng, 8, false, false);
  Workspace ws(model);
  const VectorXd q = random_configuration(model, rng);
  const VectorXd g = generalized_gravity(model, ws, q);
  for (int k = 0; k < model.nv(); ++k) {
    const double eps = 1e-6;
    const VectorXd e = VectorXd::Unit(model.nv(), k) * eps;
    const double fd = (potential_energy(model, ws, q + e) - potential_energy(model, ws, q - e)) / (2 * eps);
    EXPECT_NEAR(g[k], fd, 1e-7);
  }
}

// Implicit midpoint rule on Hamilton's equations in canonical coordinates (q, p = M v): a
// symplectic integrator, whose energy error stays bounded at O(h²).
TEST(EnergyTest, DoublePendulumConservesEnergyUnderSymplecticIntegration) {
  const Model model = testing::DoublePendulum().build();
  Workspace ws(model);
  VectorXd q(2), v(2);
  q << 1.2, -0.6;
  v << 0.0, 1.0;
  const double h = 2e-4, duration = 10.0;
  auto energy = [&](const VectorXd& qq, const VectorXd& vv) {
    return kinetic_energy(model, ws, qq, vv) + potential_energy(model, ws, qq);
  };
  const double E0 = energy(q, v);
  const double scale = kinetic_energy(model, ws, q, v) + std::abs(potential_energy(model, ws, q));
  VectorXd p = crba(model, ws, q) * v;
  double max_drift = 0.0;
  const int steps = static_cast<int>(std::lround(duration / h));
  for (int step = 0; step < steps; ++step) {
    VectorXd q1 = q + h * v, p1 = p;
    for (int it = 0; it < 100; ++it) {
      const VectorXd qm = 0.5 * (q + q1), pm = 0.5 * (p + p1);
      const VectorXd vm = crba(model, ws, qm).llt().solve(pm);
      const VectorXd dp = kinetic_energy_gradient(model, ws, qm, vm) - generalized_gravity(model, ws, qm);
      const VectorXd q1_new = q + h * vm, p1_new = p + h * dp;
      const double change = (q1_new - q1).norm() + (p1_new - p1).norm();
      q1 = q1_new;
      p1 = p1_new;
      if (change < 1e-15) break;
    }
    q = q1;
    p = p1;
    v = crba(model, ws, q).llt().solve(p);
    if (step % 100 == 0) max_drift = std::max(max_drift, std::abs(energy(q, v) - E0));
  }
  max_drift = std::max(max_drift, std::abs(energy(q, v) - E0));
  EXPECT_LT(max_drift / scale, 1e-6) << "E0 = " << E0 << ", max |E − E0| = " << max_drift;
}

// Classical RK4 on (q, v) with q̇ = N(q) v and v̇ from ABA (no gravity, no torque).
void rk4_step(const Model& model, Workspace& ws, VectorXd& q, VectorXd& v, double h) {
  const VectorXd zero = VectorXd::Zero(model.nv());
  auto deriv = [&](const VectorXd& qq, const VectorXd& vv, VectorXd& dq, VectorXd& dv) {
    dq.resize(model.nq());
    velocity_to_qdot(model, qq, vv, dq);
    dv = aba(model, ws, qq, vv, zero);
  };
  VectorXd k1q, k1v, k2q, k2v, k3q, k3v, k4q, k4v;
  deriv(q, v, k1q, k1v);
  deriv(q + 0.5 * h * k1q, v + 0.5 * h * k1v, k2q, k2v);
  deriv(q + 0.5 * h * k2q, v + 0.5 * h * k2v, k3q, k3v);
  deriv(q + h * k3q, v + h * k3v, k4q, k4v);
  q += h / 6.0 * (k1q + 2 * k2q + 2 * k3q + k4q);
  v += h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v);
  normalize_configuration(model, q);
}

TEST(EnergyTest, FreeBodyTorqueFreeMotionConservesMomentum) {
  std::mt19937 rng(53);
  ModelBuilder b("free_body");
  b.add_link("body", "world", testing::floating("free"),
             math::SpatialInertia::FromCenterOfMass(2.0, math::Vector3(0.1, -0.05, 0.2),
                                                    testing::random_rotational_inertia(rng)));
  Model model = b.build();
  model.set_gravity(math::Vector3::Zero());
  Workspace ws(model);
  VectorXd q = random_configuration(model, rng);
  VectorXd v(6);
  v << 1.5, -2.0, 3.0, 0.4, 0.1, -0.3;
  const math::SpatialForce h0 = spatial_momentum(model, ws, q, v);
  const double T0 = kinetic_energy(model, ws, q, v);
  for (int step = 0; step < 2000; ++step) rk4_step(model, ws, q, v, 1e-3);
  const math::SpatialForce h1 = spatial_momentum(model, ws, q, v);
  EXPECT_LT((h1.vector() - h0.vector()).norm() / h0.vector().norm(), 1e-10);
  EXPECT_NEAR(kinetic_energy(model, ws, q, v), T0, 1e-10 * T0);
}

// Symmetric top, I = diag(I1, I1, I3), no torque: ω3 is constant and (ω1, ω2) rotates at
// Ω = (I3 − I1) ω3 / I1 in the body frame (Euler's equations); angular momentum is fixed.
TEST(EnergyTest, SymmetricTopPrecessesAtTheAnalyticRate) {
  const double I1 = 0.2, I3 = 0.5, m = 1.0;
  ModelBuilder b("top");
  b.add_link("top", "world", testing::floating("free"),
             math::SpatialInertia::FromCenterOfMass(m, math::Vector3::Zero(), math::Vector3(I1, I1, I3).asDiagonal()));
  Model model = b.build();
  model.set_gravity(math::Vector3::Zero());
  Workspace ws(model);
  VectorXd q = model.neutral_configuration();
  VectorXd v = VectorXd::Zero(6);
  const double w1 = 0.7, w2 = -0.2, w3 = 4.0;
  v.head<3>() << w1, w2, w3;
  const math::SpatialForce L0 = spatial_momentum(model, ws, q, v);
  const double h = 5e-4, t_end = 3.0;  // RK4: the error (orientation included) scales as h⁴
  for (int step = 0; step < static_cast<int>(std::lround(t_end / h)); ++step) rk4_step(model, ws, q, v, h);
  const double Omega = (I3 - I1) * w3 / I1;
  // Body-frame angular velocity ω_B = R_WBᵀ ω_W (the floating joint stores ω_W).
  const math::Vector3 w_B =
      math::Quaternion(q[3], q[4], q[5], q[6]).toRotationMatrix().transpose() * v.head<3>();
  EXPECT_NEAR(w_B[0], w1 * std::cos(Omega * t_end) - w2 * std::sin(Omega * t_end), 1e-9);
  EXPECT_NEAR(w_B[1], w1 * std::sin(Omega * t_end) + w2 * std::cos(Omega * t_end), 1e-9);
  EXPECT_NEAR(w_B[2], w3, 1e-10);
  const math::SpatialForce L1 = spatial_momentum(model, ws, q, v);
  EXPECT_LT((L1.tau - L0.tau).norm() / L0.tau.norm(), 1e-10);
}

TEST(EnergyTest, CenterOfMassAndTotalMassIncludeWeldedLinks) {
  ModelBuilder b("com");
  b.add_link("base", "world", testing::fixed("weld", testing::translation(1, 0, 0)),
             math::SpatialInertia::FromCenterOfMass(3.0, math::Vector3(0, 0, 1), math::Matrix3::Identity() * 0.1));
  b.add_link("arm", "base", testing::revolute("j", math::Vector3::UnitZ()),
             math::SpatialInertia::FromCenterOfMass(1.0, math::Vector3(1, 0, 0), math::Matrix3::Identity() * 0.1));
  const Model model = b.build();
  Workspace ws(model);
  EXPECT_DOUBLE_EQ(model.total_mass(), 4.0);
  VectorXd q(1);
  q << M_PI / 2;  // arm's centre of mass at (1, 1, 0)
  const math::Vector3 com = center_of_mass(model, ws, q);
  EXPECT_LT((com - math::Vector3((3 * 1 + 1 * 1) / 4.0, 1 / 4.0, 3 / 4.0)).norm(), 1e-14);
}

}  // namespace
}  // namespace coulomb::multibody
