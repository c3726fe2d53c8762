// The contact law of SAP (digest §7 tests 1–5): projection KKT in all regions, the region
// boundaries, the physical form, the gradient identity and G against finite differences.
#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <random>
#include <vector>

namespace coulomb::solvers::sap {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
namespace fc = friction_cone;

struct RandomContact {
  Vector3d y;
  double mu, Rt, Rn;
};

RandomContact random_contact(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> N(0.0, 1.0);
  RandomContact c;
  c.mu = 5.0 * u(rng) + 1e-3;
  c.Rt = std::pow(10.0, -6.0 + 8.0 * u(rng));  // R spanning 8 decades
  c.Rn = std::pow(10.0, -6.0 + 8.0 * u(rng));
  c.y = Vector3d(N(rng), N(rng), N(rng)) * std::pow(10.0, -3.0 + 6.0 * u(rng));
  return c;
}

// Test 1: γ ∈ ℱ, z = R(y − γ) in the polar of ℱ (‖z_t‖ ≤ −z_n/μ), and γ·z = 0. The same
// conditions are evaluated in the scaled variables x̃ = R^{1/2} x of App. C, where the R-norm
// projection is Euclidean onto the cone of μ̃ = μ √(R_t/R_n) and γ·z = γ̃·z̃, so that the
// tolerances are relative to ‖ỹ‖ whatever the spread of R_t and R_n.
TEST(FrictionConeTest, ProjectionSatisfiesKktInAllRegions) {
  std::mt19937 rng(71);
  int count[3] = {0, 0, 0};
  for (int trial = 0; trial < 20000; ++trial) {
    const RandomContact c = random_contact(rng);
    const Vector3d g = fc::project(c.y, c.mu, c.Rt, c.Rn);
    count[static_cast<int>(fc::region(c.y, c.mu, c.Rt, c.Rn))]++;
    const Vector3d sqrtR(std::sqrt(c.Rt), std::sqrt(c.Rt), std::sqrt(c.Rn));
    const Vector3d y_s = sqrtR.cwiseProduct(c.y), g_s = sqrtR.cwiseProduct(g), z_s = y_s - g_s;
    const double mu_s = c.mu * std::sqrt(c.Rt / c.Rn);
    // Round-off in μ̃ ‖·_t‖ grows with μ̃ (up to ~5e4 here).
    const double scale = y_s.norm() * (1.0 + mu_s);
    EXPECT_LE(g.head<2>().norm(), c.mu * g[2] * (1 + 1e-12) + 1e-300);    // γ ∈ ℱ
    EXPECT_LE(g_s.head<2>().norm(), mu_s * g_s[2] + 1e-12 * scale);      // γ̃ ∈ ℱ̃
    EXPECT_LE(mu_s * z_s.head<2>().norm(), -z_s[2] + 1e-12 * scale);     // z̃ ∈ ℱ̃°
    EXPECT_LE(std::abs(g_s.dot(z_s)), 1e-12 * scale * y_s.norm());       // γ·z = 0
  }
  EXPECT_GT(count[0], 1000);  // stiction
  EXPECT_GT(count[1], 1000);  // sliding
  EXPECT_GT(count[2], 1000);  // no contact
}

// Test 2: the formulas agree on the region boundaries; no NaN at y_t = 0.
TEST(FrictionConeTest, RegionBoundaries) {
  const double mu = 0.7, Rt = 1e-3, Rn = 0.2, mu_hat = mu * Rt / Rn;
  // y_r = μ y_n: stiction and sliding both give y.
  const Vector3d y_edge(0.6 * mu, 0.8 * mu, 1.0);
  EXPECT_EQ(fc::region(y_edge, mu, Rt, Rn), FrictionConeRegion::kStiction);
  const Vector3d y_just_out = y_edge + Vector3d(1e-12, 0, 0);
  EXPECT_EQ(fc::region(y_just_out, mu, Rt, Rn), FrictionConeRegion::kSliding);
  EXPECT_LT((fc::project(y_just_out, mu, Rt, Rn) - y_edge).norm(), 1e-11);
  // y_n = −μ̂ y_r: sliding gives γ = 0, continuous with no contact.
  const Vector3d y_polar(0.6, 0.8, -mu_hat * 1.0);
  EXPECT_EQ(fc::region(y_polar, mu, Rt, Rn), FrictionConeRegion::kSliding);
  EXPECT_LT(fc::project(y_polar, mu, Rt, Rn).norm(), 1e-15);
  EXPECT_EQ(fc::region(y_polar - Vector3d(0, 0, 1e-12), mu, Rt, Rn), FrictionConeRegion::kNoContact);
  // y = 0 → γ = 0; y_t = 0 with y_n < 0 → no contact, finite.
  EXPECT_EQ(fc::project(Vector3d::Zero(), mu, Rt, Rn), Vector3d::Zero());
  const Vector3d below(0, 0, -1);
  EXPECT_EQ(fc::region(below, mu, Rt, Rn), FrictionConeRegion::kNoContact);
  EXPECT_TRUE(fc::hessian(below, mu, Rt, Rn).allFinite());
  // μ = 0: pure normal compliance, frictionless.
  const Vector3d g0 = fc::project(Vector3d(3, -4, 2), 0.0, Rt, Rn);
  EXPECT_EQ(g0, Vector3d(0, 0, 2));
  EXPECT_THROW(fc::project(Vector3d(1, 1, 1), -0.1, Rt, Rn), std::invalid_argument);
}

// Issue 9 item 1: μ = 0 and μ → 0⁺. The cone is then the ray γ_t = 0, γ_n ≥ 0, so the R-norm
// projection is γ = (0, 0, max(0, y_n)) whatever R (independent truth), never an adhesive γ_n < 0.
// Every region boundary (y_r = μ y_n, y_n = −μ̂ y_r, y_t = 0 with y_n of either sign, y = 0) is
// checked with μ = 0, 1e-12 and 1 against the KKT conditions of the projection, and μ = 1e-12
// must give μ = 0's answer to within μ‖y‖.
TEST(FrictionConeTest, FrictionlessAndNearFrictionlessBoundaries) {
  const double Rt = 2e-3, Rn = 0.3;
  std::vector<Vector3d> ys = {Vector3d(0, 0, -1),    Vector3d(0, 0, -1e-300), Vector3d(0, 0, 0),
                              Vector3d(0, 0, 1),     Vector3d(3, -4, -2),     Vector3d(3, -4, 2),
                              Vector3d(1e-9, 0, -1), Vector3d(1e-9, 0, 1),    Vector3d(5, 0, 0)};
  for (double mu : {0.0, 1e-12, 1.0}) {
    const double mu_hat = mu * Rt / Rn;
    std::vector<Vector3d> cases = ys;
    cases.push_back(Vector3d(0.6 * mu, 0.8 * mu, 1.0));             // y_r = μ y_n (cone surface)
    cases.push_back(Vector3d(0.6, 0.8, -mu_hat));                    // y_n = −μ̂ y_r (polar surface)
    cases.push_back(Vector3d(0.6, 0.8, -mu_hat) - Vector3d(0, 0, 1e-12));
    for (const Vector3d& y : cases) {
      const Vector3d g = fc::project(y, mu, Rt, Rn);
      const Vector3d z(Rt * (y[0] - g[0]), Rt * (y[1] - g[1]), Rn * (y[2] - g[2]));
      const double scale = 1e-12 * (1.0 + y.norm()) * (1.0 + Rt + Rn);
      ASSERT_TRUE(g.allFinite()) << "mu " << mu << " y " << y.transpose();
      EXPECT_GE(g[2], 0.0) << "adhesive impulse, mu " << mu << " y " << y.transpose();
      EXPECT_LE(g.head<2>().norm(), mu * g[2] + scale) << "mu " << mu;                 // γ ∈ ℱ
      EXPECT_LE(mu * z.head<2>().norm(), -z[2] + scale) << "mu " << mu << " y " << y.transpose();  // z ∈ ℱ°
      EXPECT_NEAR(g.dot(z), 0.0, scale) << "mu " << mu;                                 // γ·z = 0
      const Vector3d frictionless(0, 0, std::max(0.0, y[2]));
      EXPECT_LE((g - frictionless).norm(), 2.0 * mu * (1.0 + y.norm()) * (1.0 + Rn / Rt) + 1e-15)
          << "mu " << mu << " y " << y.transpose();
      // The constraint's own projection (the solver's code path) agrees with the free function,
      // and cost and Hessian stay finite and consistent (cost 0 where γ = 0).
      FrictionConeParameters p;
      p.mu = mu;
      SapFrictionConeConstraint c(p, 0, Eigen::MatrixXd::Identity(3, 3));
      c.prepare(1e-3, Eigen::Matrix3d::Identity());
      const Eigen::Vector3d R = c.R();
      Eigen::VectorXd vc(3), gamma(3);
      vc << -R[0] * y[0], -R[1] * y[1], c.v_hat()[2] - R[2] * y[2];  // y(v_c) = y
      Eigen::MatrixXd G(3, 3);
      Eigen::Ref<Eigen::MatrixXd> G_ref(G);
      const double cost = c.calc(vc, gamma, &G_ref);
      const Vector3d g_c = fc::project(y, mu, R[0], R[2]);
      EXPECT_LE((gamma - g_c).norm(), 1e-12 * (1.0 + y.norm())) << "mu " << mu << " y " << y.transpose();
      EXPECT_GE(gamma[2], 0.0);
      EXPECT_TRUE(G.allFinite());
      if (g_c.norm() == 0.0) EXPECT_EQ(cost, 0.0);
    }
  }
  // y_t = 0, y_n < 0 is out of contact for μ = 0 exactly (the reported bug: it was "stiction").
  EXPECT_EQ(fc::region(Vector3d(0, 0, -1), 0.0, Rt, Rn), FrictionConeRegion::kNoContact);
  EXPECT_EQ(fc::project(Vector3d(0, 0, -1), 0.0, Rt, Rn), Vector3d::Zero());
  EXPECT_EQ(fc::cost(Vector3d(0, 0, -1), 0.0, Rt, Rn), 0.0);
  EXPECT_EQ(fc::hessian(Vector3d(0, 0, -1), 0.0, Rt, Rn), Matrix3d::Zero());
}

// Test 3: with v̂_n = −φ₀/(δt+τ_d) and R_n = 1/(δt k (δt+τ_d)) the impulses are Eq. 2 (stiction)
// and the sliding law of §V-A.
TEST(FrictionConeTest, PhysicalForm) {
  const double dt = 1e-3, k = 1e4, tau = 0.02, phi0 = -1e-3, mu = 0.5;
  FrictionConeParameters p{mu, k, tau, phi0, {}};
  SapFrictionConeConstraint c(p, 0, Eigen::MatrixXd::Identity(3, 3));
  // W with a large mass so that the physical compliance wins in Eq. 29.
  c.prepare(dt, Eigen::Matrix3d::Identity() * 1e-6);
  const double Rn = 1.0 / (dt * k * (dt + tau));
  ASSERT_NEAR(c.R()[2], Rn, 1e-12 * Rn);
  Eigen::VectorXd gamma(3);
  // Stiction: small tangential velocity.
  Eigen::VectorXd vc(3);
  vc << 0.0, 0.0, -0.01;  // no slip: stiction (R_t = σw is tiny here)
  c.calc(vc, gamma, nullptr);
  const double phi = phi0 + dt * vc[2];
  EXPECT_NEAR(gamma[2], -dt * k * (phi + tau * vc[2]), 1e-12);
  // Sliding.
  vc << 0.3, -0.4, -0.01;
  c.calc(vc, gamma, nullptr);
  const double Rt = c.R()[0], mu_tilde2 = mu * mu * Rt / Rn;
  const double expected_gn = -(dt / (1 + mu_tilde2)) * k * (phi - (dt + tau) * mu * 0.5 + tau * vc[2]);
  EXPECT_NEAR(gamma[2], expected_gn, 1e-12 * std::abs(expected_gn));
  EXPECT_NEAR(gamma.head<2>().norm(), mu * gamma[2], 1e-12);
  EXPECT_LT((gamma.head<2>().normalized() + vc.head<2>().normalized()).norm(), 1e-12);  // opposes slip
}

// Test 4 and 5: ∂ℓ/∂v_c = −γ and G = −∂γ/∂v_c by central differences, G symmetric PSD with
// λ_max ≤ 1/min(R_t, R_n).
TEST(FrictionConeTest, GradientAndHessianMatchFiniteDifferences) {
  std::mt19937 rng(72);
  std::normal_distribution<double> N(0.0, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    FrictionConeParameters p;
    p.mu = 0.1 + std::abs(N(rng));
    p.stiffness = 1e5;
    p.dissipation_time = 0.01;
    p.phi0 = 1e-3 * N(rng);
    SapFrictionConeConstraint c(p, 0, Eigen::MatrixXd::Identity(3, 3));
    c.prepare(0.01, Eigen::Matrix3d::Identity() * (0.5 + std::abs(N(rng))));
    Eigen::VectorXd vc(3);
    vc << N(rng), N(rng), N(rng);
    Eigen::VectorXd gamma(3), gp(3), gm(3);
    Eigen::MatrixXd G(3, 3);
    Eigen::Ref<Eigen::MatrixXd> G_ref(G);
    c.calc(vc, gamma, &G_ref);
    // Skip points within a finite-difference step of a region boundary.
    const double h = 1e-7 * (1 + vc.norm());
    const Eigen::Vector3d R = c.R();
    auto y_of = [&](const Eigen::VectorXd& x) {
      return Eigen::Vector3d(-x[0] / R[0], -x[1] / R[1], -(x[2] - c.v_hat()[2]) / R[2]);
    };
    bool near_boundary = false;
    for (int k = 0; k < 3; ++k)
      for (double s : {-1.0, 1.0}) {
        Eigen::VectorXd x = vc;
        x[k] += 2 * s * h;
        if (fc::region(y_of(x), p.mu, R[0], R[2]) != fc::region(y_of(vc), p.mu, R[0], R[2])) near_boundary = true;
      }
    if (near_boundary) continue;
    ++checked;
    Eigen::Matrix3d G_fd;
    Eigen::Vector3d grad_fd;
    for (int k = 0; k < 3; ++k) {
      Eigen::VectorXd xp = vc, xm = vc;
      xp[k] += h;
      xm[k] -= h;
      const double lp = c.calc(xp, gp, nullptr), lm = c.calc(xm, gm, nullptr);
      grad_fd[k] = (lp - lm) / (2 * h);
      G_fd.col(k) = -(gp - gm) / (2 * h);
    }
    const double gscale = std::max(1.0, gamma.norm());
    EXPECT_LT((grad_fd + gamma).norm(), 1e-5 * gscale) << "trial " << trial;
    const double Gscale = std::max(1.0, G.norm());
    EXPECT_LT((G - G_fd).norm(), 1e-5 * Gscale) << "trial " << trial;
    EXPECT_LT((G - G.transpose()).norm(), 1e-12 * Gscale);
    const Eigen::Vector3d ev = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(Eigen::Matrix3d(G)).eigenvalues();
    EXPECT_GE(ev.minCoeff(), -1e-12 * Gscale);
    EXPECT_LE(ev.maxCoeff(), (1 + 1e-12) / std::min(R[0], R[2]));
  }
  EXPECT_GT(checked, 2000);
}

// Eq. 29–31 and the near-rigid switch.
TEST(FrictionConeTest, RegularizationFromDelassusEstimate) {
  const double dt = 0.01, m = 2.0;
  FrictionConeParameters p{1.0, 1e12, dt, -1e-4, {}};
  SapFrictionConeConstraint c(p, 0, Eigen::MatrixXd::Identity(3, 3));
  const Eigen::Matrix3d W = Eigen::Matrix3d::Identity() / m;
  c.prepare(dt, W);
  const double w = W.norm() / 3.0;  // = 1/(√3 m)
  EXPECT_NEAR(w, 1.0 / (std::sqrt(3.0) * m), 1e-15);
  EXPECT_NEAR(c.R()[2], w / (4 * M_PI * M_PI), 1e-15);  // near-rigid: β = 1
  EXPECT_NEAR(c.R()[0], 1e-3 * w, 1e-18);
  EXPECT_NEAR(c.v_hat()[2], 1e-4 / (2 * dt), 1e-15);
  // A soft contact keeps its physical compliance.
  SapFrictionConeConstraint soft({1.0, 100.0, 0.0, 0.0, {}}, 0, Eigen::MatrixXd::Identity(3, 3));
  soft.prepare(dt, W);
  EXPECT_NEAR(soft.R()[2], 1.0 / (dt * 100.0 * dt), 1e-9);
  EXPECT_THROW(SapFrictionConeConstraint({-1.0, 1.0, 0.0, 0.0, {}}, 0, Eigen::MatrixXd::Identity(3, 3)),
               std::invalid_argument);
  EXPECT_THROW(SapFrictionConeConstraint({1.0, 0.0, 0.0, 0.0, {}}, 0, Eigen::MatrixXd::Identity(3, 3)),
               std::invalid_argument);
}

}  // namespace
}  // namespace coulomb::solvers::sap

namespace coulomb::solvers::sap {
namespace {

// The constraint's fused evaluation equals the reference functions project / hessian / cost.
TEST(FrictionConeTest, ConstraintCalcEqualsReferenceFunctions) {
  std::mt19937 rng(73);
  std::normal_distribution<double> N(0.0, 1.0);
  int regions[3] = {0, 0, 0};
  for (int trial = 0; trial < 5000; ++trial) {
    FrictionConeParameters p{std::abs(N(rng)), 1e5, 0.01, 1e-3 * N(rng), {}};
    SapFrictionConeConstraint c(p, 0, Eigen::MatrixXd::Identity(3, 3));
    c.prepare(0.01, Eigen::Matrix3d::Identity() * (0.1 + std::abs(N(rng))));
    // Sample y (all three regions occur), then v_c = v̂ − R y.
    const Eigen::Vector3d R = c.R();
    const Eigen::Vector3d y_sample(N(rng), N(rng), N(rng));
    Eigen::VectorXd vc = c.v_hat() - R.cwiseProduct(y_sample);
    Eigen::VectorXd gamma(3);
    Eigen::MatrixXd G(3, 3);
    Eigen::Ref<Eigen::MatrixXd> G_ref(G);
    const double ell = c.calc(vc, gamma, &G_ref);
    const Eigen::Vector3d y(-vc[0] / R[0], -vc[1] / R[1], -(vc[2] - c.v_hat()[2]) / R[2]);
    regions[static_cast<int>(friction_cone::region(y, p.mu, R[0], R[2]))]++;
    EXPECT_LT((gamma - friction_cone::project(y, p.mu, R[0], R[2])).norm(), 1e-12 * (1 + gamma.norm()));
    EXPECT_LT((G - friction_cone::hessian(y, p.mu, R[0], R[2])).norm(), 1e-12 * (1 + G.norm()));
    EXPECT_NEAR(ell, friction_cone::cost(y, p.mu, R[0], R[2]), 1e-12 * (1 + std::abs(ell)));
  }
  EXPECT_GT(regions[0], 100);
  EXPECT_GT(regions[1], 100);
  EXPECT_GT(regions[2], 100);
}

// The line-search kernel: the closed-form Δv_cᵀ G Δv_c of calc_along equals the quadratic form
// of calc()'s G, with the same γ and ℓ, in all three regions; so does the base class's default
// (exercised through a constraint type that does not override it, as a reference).
TEST(FrictionConeTest, CalcAlongCurvatureEqualsQuadraticFormOfG) {
  std::mt19937 rng(74);
  std::normal_distribution<double> N(0.0, 1.0);
  for (int trial = 0; trial < 3000; ++trial) {
    FrictionConeParameters p{std::abs(N(rng)), 1e5, 0.01, 1e-3 * N(rng), {}};
    SapFrictionConeConstraint c(p, 0, Eigen::MatrixXd::Identity(3, 3));
    c.prepare(0.01, Eigen::Matrix3d::Identity() * (0.1 + std::abs(N(rng))));
    const Eigen::Vector3d y_sample(N(rng), N(rng), N(rng));
    const Eigen::VectorXd vc = c.v_hat() - c.R().cwiseProduct(y_sample);
    const Eigen::VectorXd dvc = Eigen::Vector3d(N(rng), N(rng), N(rng));
    Eigen::VectorXd gamma(3), gamma_along(3);
    Eigen::MatrixXd G(3, 3);
    Eigen::Ref<Eigen::MatrixXd> G_ref(G);
    const double ell = c.calc(vc, gamma, &G_ref);
    double curvature = -1.0;
    const double ell_along = c.calc_along(vc, dvc, gamma_along, &curvature);
    const double expected = dvc.dot(G * dvc);
    EXPECT_NEAR(curvature, expected, 1e-11 * (1.0 + std::abs(expected)));
    EXPECT_NEAR(ell_along, ell, 1e-13 * (1.0 + std::abs(ell)));
    EXPECT_LT((gamma_along - gamma).norm(), 1e-13 * (1.0 + gamma.norm()));
    // The base-class default (G formed by calc) gives the same number.
    const double base = c.SapConstraint::calc_along(vc, dvc, gamma_along, &curvature);
    EXPECT_NEAR(curvature, expected, 1e-11 * (1.0 + std::abs(expected)));
    EXPECT_NEAR(base, ell, 1e-13 * (1.0 + std::abs(ell)));
  }
}

// A recycled constraint (reset) behaves as a freshly constructed one and keeps the checks.
TEST(FrictionConeTest, ResetEqualsConstruction) {
  FrictionConeParameters p{0.7, 1e6, 0.01, -1e-3, {}};
  Eigen::MatrixXd J0(3, 6), J1(3, 4);
  J0.setRandom();
  J1.setRandom();
  SapFrictionConeConstraint fresh(p, 2, J0, 5, J1);
  SapFrictionConeConstraint recycled(FrictionConeParameters{}, 0, Eigen::MatrixXd::Identity(3, 3));
  recycled.reset(p, 2, J0, 5, J1);
  EXPECT_EQ(recycled.num_trees(), 2);
  EXPECT_EQ(recycled.tree(1), 5);
  EXPECT_EQ(recycled.jacobian(0), J0);
  EXPECT_EQ(recycled.jacobian(1), J1);
  fresh.prepare(0.01, Eigen::Matrix3d::Identity());
  recycled.prepare(0.01, Eigen::Matrix3d::Identity());
  EXPECT_EQ(fresh.R(), recycled.R());
  EXPECT_EQ(fresh.v_hat(), recycled.v_hat());
  recycled.reset(p, 1, J0);
  EXPECT_EQ(recycled.num_trees(), 1);
  FrictionConeParameters bad = p;
  bad.mu = -0.1;
  EXPECT_THROW(recycled.reset(bad, 1, J0), std::invalid_argument);
  EXPECT_THROW(recycled.reset(p, 1, J0, 1, J0), std::invalid_argument);  // same tree twice
  EXPECT_THROW(recycled.reset(p, 1, Eigen::MatrixXd::Ones(2, 6)), std::invalid_argument);  // 2 rows
}

}  // namespace
}  // namespace coulomb::solvers::sap
