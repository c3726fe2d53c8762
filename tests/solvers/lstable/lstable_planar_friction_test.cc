// The paper's 2-D friction (§6.1–6.2, digest §3.4): a frictional contact whose second tangent row
// vanishes in every Jacobian block is solved with rows [t1, n] and the cone |γ_t| ≤ μ γ_n as two
// linear inequalities (a QP, no second-order cone). Checked against the same contacts solved as
// 3-D cones (LStableParameters::planar_friction_qp = false) and against a 3-D particle whose
// motion stays in the plane, under both friction models; and against discrete Coulomb.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include <Eigen/Dense>

#include "coulomb/solvers/lstable/lstable_solver.h"

namespace coulomb::solvers::lstable {
namespace {

using constraints::ConstraintSet;

// A particle on a plane tilted by `angle` about y, released at rest, h = 0.01, 100 steps, K_n =
// 1e8, τ_d = 1e-8 s. dofs = 2: (x, z) only, so the contact's t2 = y row is zero (planar);
// dofs = 3: (x, y, z), a 3-D cone. Returns the slide along t1 and counts planar contacts seen.
struct InclineRun {
  double slide = 0.0;
  int planar_contacts = 0;
  Eigen::Vector3d last_impulse = Eigen::Vector3d::Zero();
};

InclineRun incline(int dofs, double mu, const LStableParameters& parameters, double angle = 15.0 * M_PI / 180.0) {
  const double m = 1.0, g = 9.81, h = 0.01;
  const Eigen::Vector3d n(std::sin(angle), 0.0, std::cos(angle)), t1(std::cos(angle), 0.0, -std::sin(angle)),
      t2(0.0, 1.0, 0.0);
  Eigen::MatrixXd J(3, dofs);  // rows [t1, t2, n] on the dofs' world axes
  if (dofs == 2) {
    J << t1.x(), t1.z(), t2.x(), t2.z(), n.x(), n.z();
  } else {
    J.row(0) = t1;
    J.row(1) = t2;
    J.row(2) = n;
  }
  Eigen::VectorXd v = Eigen::VectorXd::Zero(dofs), gravity = Eigen::VectorXd::Zero(dofs);
  gravity[dofs - 1] = -g;
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  ConstraintSet set;
  set.time_step = h;
  set.nv = dofs;
  set.trees = {{1, 0, dofs}};
  LStableSolver solver(parameters);
  InclineRun out;
  for (int step = 0; step < 100; ++step) {
    set.clear();
    constraints::ContactConstraint& c = set.contacts.add();
    c.material.mu = mu;
    c.material.stiffness = 1e8;
    c.material.dissipation_time = 1e-8;
    c.blocks[0] = {0, 0, J};
    c.phi0 = n.dot(p);
    c.vn0 = (J.row(2) * v)(0);
    const Eigen::VectorXd v_star = v + h * gravity;
    const LStableResults& r = solver.solve(set, {m * Eigen::MatrixXd::Identity(dofs, dofs)}, v_star);
    EXPECT_EQ(r.status, LStableStatus::kSuccess);
    out.planar_contacts = std::max(out.planar_contacts, r.planar_contacts);
    v = r.v;
    const Eigen::Vector3d v3 = dofs == 2 ? Eigen::Vector3d(v[0], 0.0, v[1]) : Eigen::Vector3d(v);
    p += h * v3;
    out.last_impulse = r.impulses.contacts.head<3>();
  }
  out.slide = t1.dot(p);
  return out;
}

TEST(LStablePlanarFriction, PlanarParticleMatchesTheCone3DAndDiscreteCoulomb) {
  const double g = 9.81, h = 0.01, s = std::sin(15.0 * M_PI / 180.0), c = std::cos(15.0 * M_PI / 180.0);
  for (FrictionModel model : {FrictionModel::kStaggered, FrictionModel::kCone}) {
    LStableParameters planar, as_cone;
    planar.friction = as_cone.friction = model;
    as_cone.planar_friction_qp = false;
    for (double mu : {0.125, 0.25, 0.375, 1.0}) {
      const InclineRun r2 = incline(2, mu, planar), r2c = incline(2, mu, as_cone), r3 = incline(3, mu, planar);
      std::printf("[ measured ] planar particle, %s, mu %g: slide %.8f m (as 3-D cone %.8f, 3-D particle %.8f)\n",
                  to_string(model), mu, r2.slide, r2c.slide, r3.slide);
      EXPECT_EQ(r2.planar_contacts, 1);
      EXPECT_EQ(r2c.planar_contacts, 0);
      EXPECT_EQ(r3.planar_contacts, 0);
      const double scale = std::max(std::abs(r3.slide), 1e-3);  // sticking: creep 2.5e-8 m, resolved to ~1e-11 m
      EXPECT_NEAR(r2.slide, r2c.slide, 1e-7 * scale) << to_string(model) << " mu " << mu;
      EXPECT_NEAR(r2.slide, r3.slide, 1e-7 * scale) << to_string(model) << " mu " << mu;
      EXPECT_EQ(r2.last_impulse[1], 0.0);  // no t2 impulse
      EXPECT_LE(std::abs(r2.last_impulse[0]), mu * r2.last_impulse[2] * (1 + 1e-9));
      if (model == FrictionModel::kStaggered && mu < std::tan(15.0 * M_PI / 180.0)) {
        const double coulomb = 0.5 * g * (s - mu * c) * h * h * 100 * 101;
        EXPECT_NEAR(r2.slide, coulomb, 1e-5 * coulomb) << mu;
      }
    }
  }
}

// A planar box (dofs x, z, θ about y; A = diag(m, m, I)) with two corner contacts on level ground,
// thrown sideways while spinning: every step the 2-D QP and the 3-D cones give the same
// velocities (both friction models), and the friction stays inside μ γ_n.
TEST(LStablePlanarFriction, PlanarBoxWithTwoCornersMatchesTheConeSolution) {
  const double m = 2.0, a = 0.1, I = m * (2 * a) * (2 * a) / 6.0, h = 2e-3, g = 9.81, mu = 0.4, k = 1e6;
  for (FrictionModel model : {FrictionModel::kStaggered, FrictionModel::kCone}) {
    LStableParameters planar, as_cone;
    planar.friction = as_cone.friction = model;
    as_cone.planar_friction_qp = false;
    LStableSolver s2(planar), s3(as_cone);
    Eigen::Vector3d q(0.0, a - m * g / (2 * k), 0.0), v(2.0, 0.0, 1.5);  // x, z, θ; sliding and spinning
    double worst = 0.0;
    for (int step = 0; step < 300; ++step) {
      ConstraintSet set;
      set.time_step = h;
      set.nv = 3;
      set.trees = {{1, 0, 3}};
      const Eigen::Matrix2d R{{std::cos(q[2]), std::sin(q[2])}, {-std::sin(q[2]), std::cos(q[2])}};  // (x, z) plane
      for (double side : {-1.0, 1.0}) {
        const Eigen::Vector2d r = R * Eigen::Vector2d(side * a, -a);  // corner from the centre
        const double z = q[1] + r[1];
        if (z > 0.02) continue;
        constraints::ContactConstraint& c = set.contacts.add();
        c.material.mu = mu;
        c.material.stiffness = k;
        c.material.dissipation_time = 1e-3;
        Eigen::MatrixXd J = Eigen::MatrixXd::Zero(3, 3);
        // Corner velocity (x, z) = (v_x + ω r_z, v_z − ω r_x) for rotation ω about y.
        J.row(0) << 1.0, 0.0, r[1];
        J.row(2) << 0.0, 1.0, -r[0];
        c.blocks[0] = {0, 0, J};
        c.phi0 = z;
        c.vn0 = (J.row(2) * v)(0);
      }
      const Eigen::Vector3d v_star = v + h * Eigen::Vector3d(0.0, -g, 0.0);
      const std::vector<Eigen::MatrixXd> A = {Eigen::Vector3d(m, m, I).asDiagonal().toDenseMatrix()};
      const LStableResults& r2 = s2.solve(set, A, v_star);
      const LStableResults& r3 = s3.solve(set, A, v_star);
      ASSERT_EQ(r2.status, LStableStatus::kSuccess) << step;
      ASSERT_EQ(r3.status, LStableStatus::kSuccess) << step;
      EXPECT_EQ(r2.planar_contacts, static_cast<int>(set.contacts.size()));
      worst = std::max(worst, (r2.v - r3.v).norm() / std::max(1.0, r3.v.norm()));
      for (size_t i = 0; i < set.contacts.size(); ++i) {
        const Eigen::Vector3d gamma = r2.impulses.contacts.segment<3>(3 * i);
        EXPECT_GE(gamma[2], -1e-10);
        // Staggered: bounded by the previous pass's normal, equal to this one's within the fixed
        // point's tolerance (1e-6 of the largest impulse).
        EXPECT_LE(std::abs(gamma[0]), mu * std::max(0.0, gamma[2]) + 2e-6 * r2.impulses.contacts.cwiseAbs().maxCoeff() + 1e-12)
            << step;
      }
      v = r2.v;
      q += h * v;
    }
    std::printf("[ measured ] planar box, %s: max relative velocity difference 2-D QP vs 3-D cones %.2e over 300 "
                "steps; final v = (%.4f, %.4f, %.4f)\n",
                to_string(model), worst, v[0], v[1], v[2]);
    EXPECT_LT(worst, 1e-6) << to_string(model);
    EXPECT_LT(v.norm(), 1e-3);  // friction brought it to rest (2 m/s, μ g = 3.9 m/s²: stops in ~0.5 s)
  }
}

}  // namespace
}  // namespace coulomb::solvers::lstable
