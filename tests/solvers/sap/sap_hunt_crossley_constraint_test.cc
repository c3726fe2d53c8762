// The Hunt–Crossley "similar" and "lagged" contact approximations (digest
// contact-approximations.md, "Properties a test can check"): convexity, G symmetric PSD,
// G = −∂γ/∂v_c and γ = −∇ℓ by central finite differences in every region, the friction bounds,
// the line-search curvature, and the d = 0 rest penetration m g / k of a particle.
#include "coulomb/solvers/sap/sap_hunt_crossley_constraint.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <iostream>
#include <random>

#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::solvers::sap {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
namespace hc = hunt_crossley;

enum class Region { kNoContact, kSliding, kNearStiction, kImpact };
const char* name(Region r) {
  switch (r) {
    case Region::kNoContact: return "no contact";
    case Region::kSliding: return "sliding";
    case Region::kNearStiction: return "near stiction";
    case Region::kImpact: return "impact";
  }
  return "?";
}

// A random SPD Delassus block of a body of mass ~1 kg with rotation.
Matrix3d random_delassus(std::mt19937& rng) {
  std::normal_distribution<double> N(0.0, 1.0);
  Matrix3d B;
  for (int i = 0; i < 9; ++i) B(i) = N(rng);
  return B * B.transpose() * 0.3 + Matrix3d::Identity();
}

struct Case {
  HuntCrossleyParameters p;
  double dt = 1e-3;
  Vector3d vc;
  Region region;
};

// A contact in `region` (after prepare), with random stiffness, dissipation and velocities.
Case random_case(std::mt19937& rng, Region region, double mu, ContactApproximation a, double theta) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Case c;
  c.region = region;
  c.dt = u(rng) < 0.5 ? 1e-3 : 1e-2;
  c.p.mu = mu;
  c.p.stiffness = std::pow(10.0, 3.0 + 3.0 * u(rng));
  c.p.dissipation = u(rng) < 0.2 ? 0.0 : std::pow(10.0, -1.0 + 2.0 * u(rng));
  c.p.stiction_tolerance = 1e-4;
  c.p.approximation = a;
  c.p.theta_vq = theta;
  c.p.phi0 = -std::pow(10.0, -4.0 + 2.0 * u(rng));  // 0.1 to 10 mm penetration
  c.p.vn0 = -0.1 * u(rng);  // approaching: f_e0 ≥ k x₀ > 0
  const double angle = 2 * M_PI * u(rng);
  const Vector3d t(std::cos(angle), std::sin(angle), 0.0);
  switch (region) {
    case Region::kNoContact:
      // Separated and separating (f_e0 < 0, so v̂ < 0), with v_n ≥ 0 above μ‖v_t‖ so that
      // similar's z = v_n − μ‖v_t‖_s is above v̂ too.
      c.p.phi0 = std::pow(10.0, -4.0 + 2.0 * u(rng));
      c.p.vn0 = 0.1 * u(rng);
      c.vc = 0.3 * u(rng) * t;
      c.vc[2] = mu * c.vc.norm() + 0.05 * u(rng);
      break;
    case Region::kSliding:
      c.vc = (0.05 + 2.0 * u(rng)) * t + Vector3d(0, 0, -0.01 * u(rng));
      break;
    case Region::kNearStiction:
      c.vc = 1e-4 * (0.2 + 2.0 * u(rng)) * t + Vector3d(0, 0, -1e-3 * u(rng));
      break;
    case Region::kImpact:
      c.p.phi0 = -1e-5 * u(rng);
      c.p.vn0 = -(0.5 + 3.0 * u(rng));
      c.vc = (0.1 + 2.0 * u(rng)) * t + Vector3d(0, 0, -(0.2 + 2.0 * u(rng)));
      break;
  }
  return c;
}

double evaluate(const SapHuntCrossleyConstraint& c, const Vector3d& vc, Vector3d* gamma = nullptr, Matrix3d* G = nullptr) {
  Eigen::VectorXd g(3), v = vc;
  Eigen::MatrixXd Gm(3, 3);
  Eigen::Ref<Eigen::MatrixXd> Gref(Gm);
  const double cost = c.calc(v, g, G ? &Gref : nullptr);
  if (gamma) *gamma = g;
  if (G) *G = Gm;
  return cost;
}

// In the no-contact case, v_n is above v̂ by construction; elsewhere keep z away from the kink at
// v̂ by more than the finite-difference step (checked, the case redrawn otherwise).
bool away_from_kink(const SapHuntCrossleyConstraint& c, const Vector3d& vc, double h) {
  const double mu = c.parameters().mu;
  const double soft = hc::soft_norm(vc[0], vc[1], c.epsilon_soft());
  const double z = c.parameters().approximation == ContactApproximation::kSimilar ? vc[2] - mu * soft : vc[2];
  const double vhat = hc::zero_impulse_velocity(c.normal_law());
  return std::abs(z - vhat) > 1e3 * h * (1.0 + mu);
}

// G against −∂γ/∂v_c and γ against −∇ℓ (central differences), symmetric PSD, friction bounds,
// γ_t·v_t ≤ 0, curvature = ΔvᵀGΔv, and convexity along a random line, for one setting.
void check_setting(double mu, ContactApproximation a, double theta, std::mt19937& rng) {
  std::normal_distribution<double> N(0.0, 1.0);
  for (Region region : {Region::kNoContact, Region::kSliding, Region::kNearStiction, Region::kImpact}) {
    int checked = 0, loaded = 0;
    for (int trial = 0; trial < 400 && checked < 100; ++trial) {
      const Case cs = random_case(rng, region, mu, a, theta);
      SapHuntCrossleyConstraint c(cs.p, 0, Matrix3d::Identity());
      c.prepare(cs.dt, random_delassus(rng));
      const Vector3d vc = cs.vc;
      // Step: small against ε_s (the scale of the soft norm) and against |v|.
      const double h = 1e-3 * std::min(c.epsilon_soft(), 1e-2);
      if (!away_from_kink(c, vc, h)) continue;
      ++checked;
      Vector3d gamma;
      Matrix3d G;
      const double cost = evaluate(c, vc, &gamma, &G);
      ASSERT_TRUE(std::isfinite(cost) && gamma.allFinite() && G.allFinite());
      if (gamma[2] > 0.0) ++loaded;
      const std::string where = std::string(name(region)) + " mu " + std::to_string(mu) + " " + to_string(a) +
                                " theta " + std::to_string(theta);
      // Finite differences.
      Matrix3d G_fd;
      Vector3d grad_fd;
      for (int j = 0; j < 3; ++j) {
        Vector3d vp = vc, vm = vc, gp, gm;
        vp[j] += h;
        vm[j] -= h;
        const double lp = evaluate(c, vp, &gp), lm = evaluate(c, vm, &gm);
        G_fd.col(j) = -(gp - gm) / (2 * h);
        grad_fd[j] = (lp - lm) / (2 * h);
      }
      const double G_scale = G.norm() + 1e-12 * (1.0 + gamma.norm() / h);
      EXPECT_LE((G - G_fd).norm(), 1e-5 * G_scale) << where << "\nG\n" << G << "\nG_fd\n" << G_fd;
      const double ell_scale = std::abs(cost) + gamma.norm() * vc.norm() + 1e-300;
      EXPECT_LE((gamma + grad_fd).norm(), 1e-6 * gamma.norm() + 1e-9 * ell_scale / h) << where;
      // Symmetric PSD.
      EXPECT_LE((G - G.transpose()).norm(), 1e-14 * G.norm()) << where;
      const Eigen::SelfAdjointEigenSolver<Matrix3d> eig(G);
      EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-12 * G.norm()) << where;
      // Friction: bounded and opposing slip.
      const double bound = a == ContactApproximation::kSimilar ? mu * gamma[2] : mu * c.n0();
      EXPECT_LE(gamma.head<2>().norm(), bound * (1 + 1e-12) + 1e-300) << where;
      EXPECT_LE(gamma.head<2>().dot(vc.head<2>()), 0.0) << where;
      EXPECT_GE(gamma[2], 0.0) << where;
      // calc_along's curvature is ΔvᵀGΔv; its γ and cost are calc's.
      const Vector3d dv(N(rng), N(rng), N(rng));
      Eigen::VectorXd g_along(3);
      double curvature = -1.0;
      const double cost_along = c.calc_along(Eigen::VectorXd(vc), Eigen::VectorXd(dv), g_along, &curvature);
      EXPECT_EQ(cost_along, cost) << where;
      EXPECT_EQ(Vector3d(g_along), gamma) << where;
      EXPECT_NEAR(curvature, dv.dot(G * dv), 1e-12 * (G.norm() * dv.squaredNorm())) << where;
      // Convexity along the line vc + α dv: second differences ≥ 0 (up to round-off).
      const double step = 0.05 * (vc.norm() + 1e-3);
      double l[41];
      for (int i = 0; i < 41; ++i) l[i] = evaluate(c, vc + (i - 20) * step * dv.normalized());
      for (int i = 1; i < 40; ++i) {
        const double scale = std::abs(l[i - 1]) + std::abs(l[i]) + std::abs(l[i + 1]);
        EXPECT_GE(l[i - 1] - 2 * l[i] + l[i + 1], -1e-12 * scale) << where << " at " << i;
      }
    }
    EXPECT_GE(checked, 50) << name(region);
    if (region == Region::kNoContact) {
      EXPECT_EQ(loaded, 0);
    } else {
      EXPECT_EQ(loaded, checked) << name(region);
    }
  }
}

TEST(HuntCrossleyConstraintTest, DerivativesConvexityAndBoundsInEveryRegion) {
  std::mt19937 rng(2023);
  for (double mu : {0.0, 1e-12, 0.3, 10.0})
    for (ContactApproximation a : {ContactApproximation::kSimilar, ContactApproximation::kLagged})
      for (double theta : {1.0, 0.5}) check_setting(mu, a, theta, rng);
}

// The scalar normal law against its definitions: n = N' (finite differences), n' = dn/dv, and
// the closed form n(v) = δt k (x₀ − δt_q v)(1 − d v).
TEST(HuntCrossleyConstraintTest, NormalLawPieces) {
  hc::NormalLaw law{1e-3, 0.5e-3, 1e5, 2.0, 1e5 * 2e-3};
  const double vhat = hc::zero_impulse_velocity(law);
  EXPECT_DOUBLE_EQ(vhat, std::min(2e-3 / 0.5e-3, 0.5));  // min(x₀/δt_q, 1/d) = min(4, 0.5)
  for (double v : {-3.0, -0.5, 0.0, 0.2, 0.49, 0.51, 2.0, 5.0}) {
    const double h = 1e-6;
    const double n = hc::impulse(law, v);
    EXPECT_NEAR(n, v < vhat ? 1e-3 * 1e5 * (2e-3 - 0.5e-3 * v) * (1 - 2.0 * v) : 0.0, 1e-15);
    EXPECT_NEAR((hc::impulse_antiderivative(law, v + h) - hc::impulse_antiderivative(law, v - h)) / (2 * h), n,
                1e-7 * (1 + std::abs(n)))
        << v;
    EXPECT_NEAR((hc::impulse(law, v + h) - hc::impulse(law, v - h)) / (2 * h), hc::impulse_derivative(law, v),
                1e-6 * (1 + std::abs(hc::impulse_derivative(law, v))))
        << v;
  }
  EXPECT_EQ(hc::impulse_antiderivative(law, 0.0), 0.0);
  EXPECT_EQ(hc::impulse_antiderivative(law, 1.0), hc::impulse_antiderivative(law, 7.0));  // constant above v̂
  // Soft norm: sqrt(‖v‖² + ε²) − ε, accurate far below ε.
  EXPECT_NEAR(hc::soft_norm(3.0, 4.0, 1e-4), std::sqrt(25.0 + 1e-8) - 1e-4, 1e-15);
  EXPECT_NEAR(hc::soft_norm(1e-9, 0.0, 1e-4), 0.5e-18 / 1e-4, 1e-9 * 0.5e-18 / 1e-4);  // r²/(2ε) − O(r⁴/ε³)
}

TEST(HuntCrossleyConstraintTest, ValidationNamesTheValue) {
  const Matrix3d J = Matrix3d::Identity();
  auto expect_throw = [&](HuntCrossleyParameters p, const std::string& fragment) {
    try {
      SapHuntCrossleyConstraint c(p, 0, J);
      ADD_FAILURE() << "no throw for " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  HuntCrossleyParameters p;
  p.mu = -0.5;
  expect_throw(p, "-0.5");
  p = {};
  p.stiffness = 0.0;
  expect_throw(p, "stiffness");
  p = {};
  p.dissipation = -2.0;
  expect_throw(p, "-2");
  p = {};
  p.stiction_tolerance = 0.0;
  expect_throw(p, "stiction_tolerance");
  p = {};
  p.phi0 = std::nan("");
  expect_throw(p, "nan");
  p = {};
  p.mu = std::nan("");
  expect_throw(p, "mu");
  p = {};
  p.theta_vq = 0.0;
  expect_throw(p, "theta_vq");
  p = {};
  p.approximation = ContactApproximation::kSap;
  expect_throw(p, "sap");
  EXPECT_THROW(parse_contact_approximation("lagg"), std::invalid_argument);
  try {
    parse_contact_approximation("lagg");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'lagg'"), std::string::npos);
  }
  for (ContactApproximation a : {ContactApproximation::kSap, ContactApproximation::kSimilar, ContactApproximation::kLagged})
    EXPECT_EQ(parse_contact_approximation(to_string(a)), a);
}

// R and v̂ are finite and positive where the solver or a diagnostic may divide by them.
TEST(HuntCrossleyConstraintTest, PrepareSetsFiniteDiagnostics) {
  for (double d : {0.0, 10.0})
    for (double phi0 : {-1e-3, 1e-3}) {
      HuntCrossleyParameters p;
      p.dissipation = d;
      p.phi0 = phi0;
      SapHuntCrossleyConstraint c(p, 0, Matrix3d::Identity());
      c.prepare(1e-3, Matrix3d::Identity());
      EXPECT_TRUE(c.R().allFinite() && c.v_hat().allFinite());
      EXPECT_GT(c.R().minCoeff(), 0.0);
      EXPECT_DOUBLE_EQ(c.epsilon_soft(), std::max(1e-4, 1.0 * 1e-3 * 1.0 * c.n0()));
      EXPECT_DOUBLE_EQ(c.n0(), phi0 < 0 ? 1e-3 * 1e6 * 1e-3 : 0.0);
    }
}

// d = 0: a particle of mass m stepped with SAP and this constraint alone comes to rest at the
// penetration x = m g / k (both approximations). θ_vq = 1 (implicit Euler, which damps the
// undamped spring) converges there from φ = 0; θ_vq = 1/2 (trapezoidal positions, no numerical
// damping: it would ring around m g / k forever) stays there when started there.
TEST(HuntCrossleyConstraintTest, RestPenetrationIsWeightOverStiffness) {
  const double m = 0.7, g = 9.81, k = 1e5, dt = 1e-3;
  for (ContactApproximation a : {ContactApproximation::kSimilar, ContactApproximation::kLagged})
    for (double theta : {1.0, 0.5}) {
      Vector3d v = Vector3d::Zero();
      double phi = theta == 1.0 ? 0.0 : -m * g / k;
      SapSolverParameters params;
      params.rel_tolerance = 1e-12;
      for (int step = 0; step < 4000; ++step) {
        const Vector3d v_star = v + dt * Vector3d(0, 0, -g);
        SapProblem problem(dt, {Matrix3d::Identity() * m}, v_star);
        HuntCrossleyParameters p;
        p.mu = 0.5;
        p.stiffness = k;
        p.dissipation = 0.0;
        p.phi0 = phi;
        p.vn0 = v[2];
        p.approximation = a;
        p.theta_vq = theta;
        problem.add_constraint(std::make_unique<SapHuntCrossleyConstraint>(p, 0, Matrix3d::Identity()));
        const SapSolverResults r = SapSolver(params).solve(problem, v);
        ASSERT_EQ(r.status, SapSolverStatus::kSuccess);
        phi += dt * (theta * r.v[2] + (1 - theta) * v[2]);
        v = r.v;
      }
      std::cout << "[ measured ] rest penetration " << to_string(a) << " theta " << theta << ": " << -phi
                << " m (m g / k = " << m * g / k << ")\n";
      EXPECT_NEAR(-phi, m * g / k, 1e-6 * m * g / k);
    }
}

}  // namespace
}  // namespace coulomb::solvers::sap
