// MINDIFF (Zapolsky & Drumwright Alg. 3; digest §5.4 and §10 test 13) against independent truths:
// a from-scratch enumeration with Eigen's CompleteOrthogonalDecomposition per leaf (the list of
// feasible leaves and their z, and the minimum distance), an independent LCP residual check of
// every accepted leaf, the Coulomb-LCP physics of digest §5.1/§5.3 (w_N = N ⁺v + φ/Δt,
// w_F = F ⁺v + E λ, w_λ = μ f_N − Eᵀ f_F with ⁺v = x), LemkeSolver (its terminal basis is a leaf,
// and P-matrix LCPs have exactly one solution), and hand-solved 2 × 2 LCPs with several solutions.
#include "coulomb/inverse_dynamics/mindiff.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/QR>

#include "coulomb/solvers/lcp/lemke.h"

namespace coulomb::inverse_dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;

double Uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

MatrixXd RandomMatrix(int rows, int cols, std::mt19937& rng) {
  MatrixXd A(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) A(i, j) = Uniform(rng, -1.0, 1.0);
  return A;
}

VectorXd RandomVector(int n, std::mt19937& rng) { return RandomMatrix(n, 1, rng).col(0); }

MatrixXd RandomSpd(int m, std::mt19937& rng) {
  const MatrixXd A = RandomMatrix(m, m, rng);
  VectorXd D(m);
  for (int i = 0; i < m; ++i) D(i) = std::pow(10.0, Uniform(rng, -1.0, 1.0));
  const MatrixXd M = A * A.transpose() + 0.5 * m * MatrixXd::Identity(m, m);
  return D.asDiagonal() * M * D.asDiagonal();
}

Eigen::Matrix3d Skew(const Vector3d& a) {
  Eigen::Matrix3d S;
  S << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return S;
}

// The Coulomb ID LCP of digest §5.3 with Γ = M⁻¹ (no actuated rows), k = 4, DIRECTION-MAJOR
// friction rows F = [S; −S; T; −T] (for one contact this is also the contact-major order) and
// E = [I_n; I_n; I_n; I_n] (nk × n). Variables z = [f_N (n); f_F (4n); λ (n)]:
//   Q = [ NΓNᵀ  NΓFᵀ  0 ]    r = [ N v* + φ/Δt ]
//       [ FΓNᵀ  FΓFᵀ  E ]        [ F v*        ]
//       [ μ     −Eᵀ   0 ]        [ 0           ]
// x = ⁺v = v* + Γ (Nᵀ f_N + Fᵀ f_F): X = Γ [Nᵀ Fᵀ 0], x0 = v*.
struct CoulombLcp {
  int n = 0, m = 0;
  MatrixXd M, N, F, E, mu;
  VectorXd vstar, phi_dt;
  MatrixXd Q, X;
  VectorXd r, x0;
};

CoulombLcp BuildCoulombLcp(const MatrixXd& M, const MatrixXd& N, const MatrixXd& S,
                           const MatrixXd& T, const VectorXd& mu, const VectorXd& vstar,
                           const VectorXd& phi_dt) {
  CoulombLcp c;
  c.n = static_cast<int>(N.rows());
  c.m = static_cast<int>(M.rows());
  const int n = c.n, nk = 4 * n, nv = 6 * n;
  c.M = M;
  c.N = N;
  c.F.resize(nk, c.m);
  c.F << S, -S, T, -T;
  c.E.resize(nk, n);
  c.E << MatrixXd::Identity(n, n), MatrixXd::Identity(n, n), MatrixXd::Identity(n, n),
      MatrixXd::Identity(n, n);
  c.mu = mu.asDiagonal();
  c.vstar = vstar;
  c.phi_dt = phi_dt;
  const MatrixXd Gamma = M.inverse();
  MatrixXd R(c.m, n + nk);  // R = [Nᵀ Fᵀ]
  R << N.transpose(), c.F.transpose();
  c.Q = MatrixXd::Zero(nv, nv);
  c.Q.topLeftCorner(n + nk, n + nk) = R.transpose() * Gamma * R;
  c.Q.block(n, n + nk, nk, n) = c.E;
  c.Q.block(n + nk, 0, n, n) = c.mu;
  c.Q.block(n + nk, n, n, nk) = -c.E.transpose();
  c.r = VectorXd::Zero(nv);
  c.r.head(n) = N * vstar + phi_dt;
  c.r.segment(n, nk) = c.F * vstar;
  c.X = MatrixXd::Zero(c.m, nv);
  c.X.leftCols(n + nk) = Gamma * R;
  c.x0 = vstar;
  return c;
}

// The same LCP with x = [⁺v; z] (p = m + 6n): X = [Γ [Nᵀ Fᵀ 0]; I], x0 = [v*; 0]. With x = ⁺v
// alone the solutions of these instances differ only in how a sticking contact's friction splits
// over ±ŝ, ±t̂ (same Fᵀ f_F, same ⁺v); with z in x those leaves are distinct and the target
// decides.
CoulombLcp WithImpulsesInX(const CoulombLcp& c) {
  CoulombLcp d = c;
  const int nv = 6 * c.n;
  d.X.resize(c.m + nv, nv);
  d.X << c.X, MatrixXd::Identity(nv, nv);
  d.x0.resize(c.m + nv);
  d.x0 << c.x0, VectorXd::Zero(nv);
  return d;
}

// A free rigid body (m = 6, v = [v_COM; ω] in world coordinates) with mass, a rotated diagonal
// inertia and n point contacts: row i of N/S/T is n̂ᵀ [I₃, −[ρ]×] for the contact offset ρ from
// the centre of mass and an orthonormal frame (n̂, ŝ, t̂). The body approaches the ground
// (N v* < 0 at the first contact) and slides or sticks depending on μ.
CoulombLcp FreeBodyInstance(int n, std::mt19937& rng) {
  const double mass = std::pow(10.0, Uniform(rng, -0.5, 1.0));
  const Eigen::Matrix3d Rot =
      Eigen::Quaterniond(Eigen::Vector4d(RandomVector(4, rng)).normalized()).toRotationMatrix();
  Vector3d inertia_diag;
  for (int i = 0; i < 3; ++i) inertia_diag(i) = mass * Uniform(rng, 0.01, 0.1);
  MatrixXd M = MatrixXd::Zero(6, 6);
  M.topLeftCorner(3, 3) = mass * Eigen::Matrix3d::Identity();
  M.bottomRightCorner(3, 3) = Rot * inertia_diag.asDiagonal() * Rot.transpose();
  MatrixXd N(n, 6), S(n, 6), T(n, 6);
  for (int i = 0; i < n; ++i) {
    Vector3d nh = Vector3d(Uniform(rng, -0.3, 0.3), Uniform(rng, -0.3, 0.3), 1.0).normalized();
    Vector3d sh = nh.unitOrthogonal();
    Vector3d th = nh.cross(sh);
    const double angle = Uniform(rng, 0.0, 6.3);
    const Vector3d s2 = std::cos(angle) * sh + std::sin(angle) * th;
    th = nh.cross(s2);
    sh = s2;
    const Vector3d rho(Uniform(rng, -0.2, 0.2), Uniform(rng, -0.2, 0.2), -0.1);
    Eigen::Matrix<double, 3, 6> Jv;
    Jv << Eigen::Matrix3d::Identity(), -Skew(rho);
    N.row(i) = nh.transpose() * Jv;
    S.row(i) = sh.transpose() * Jv;
    T.row(i) = th.transpose() * Jv;
  }
  VectorXd vstar = RandomVector(6, rng);
  if ((N.row(0) * vstar)(0) > 0.0) vstar = -vstar;
  VectorXd mu(n), phi_dt(n);
  for (int i = 0; i < n; ++i) {
    mu(i) = Uniform(rng, 0.05, 1.2);
    phi_dt(i) = Uniform(rng, -0.05, 0.05);
  }
  return BuildCoulombLcp(M, N, S, T, mu, vstar, phi_dt);
}

// A random SPD M (m = 18, scales over two decades) with random contact rows.
CoulombLcp RandomSpdInstance(int n, int m, std::mt19937& rng) {
  const MatrixXd M = RandomSpd(m, rng);
  const MatrixXd N = RandomMatrix(n, m, rng), S = RandomMatrix(n, m, rng),
                 T = RandomMatrix(n, m, rng);
  VectorXd vstar = RandomVector(m, rng);
  if ((N.row(0) * vstar)(0) > 0.0) vstar = -vstar;
  VectorXd mu(n), phi_dt(n);
  for (int i = 0; i < n; ++i) {
    mu(i) = Uniform(rng, 0.05, 1.2);
    phi_dt(i) = Uniform(rng, -0.05, 0.05);
  }
  return BuildCoulombLcp(M, N, S, T, mu, vstar, phi_dt);
}

// From-scratch enumeration: per leaf, Eigen's CompleteOrthogonalDecomposition (minimum-norm
// least squares, same relative rank threshold), residual and feasibility with the same tol.
struct RefLeaf {
  VectorXd z, x;
  double distance;
};
std::map<std::uint32_t, RefLeaf> ReferenceLeaves(const MatrixXd& Q, const VectorXd& r,
                                                 const MatrixXd& X, const VectorXd& x0,
                                                 const VectorXd& x_target, double tolerance) {
  const int n = static_cast<int>(Q.rows());
  const double tol = tolerance * std::max(1.0, r.cwiseAbs().maxCoeff());
  std::map<std::uint32_t, RefLeaf> out;
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    std::vector<int> a;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1u) a.push_back(i);
    const int k = static_cast<int>(a.size());
    VectorXd z = VectorXd::Zero(n);
    if (k > 0) {
      MatrixXd A(k, k);
      VectorXd b(k);
      for (int i = 0; i < k; ++i) {
        b(i) = -r(a[i]);
        for (int j = 0; j < k; ++j) A(i, j) = Q(a[i], a[j]);
      }
      Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod;
      cod.setThreshold(Mindiff::kRankTolerance);
      cod.compute(A);
      const VectorXd za = cod.solve(b);
      for (int i = 0; i < k; ++i) z(a[i]) = za(i);
    }
    const VectorXd w = Q * z + r;
    bool ok = true;
    for (int i = 0; i < n; ++i) {
      if (mask >> i & 1u) {
        ok = ok && std::abs(w(i)) <= tol && z(i) >= -tol;
      } else {
        ok = ok && w(i) >= -tol;
      }
    }
    if (!ok) continue;
    const VectorXd x = x0 + X * z;
    out[mask] = {z, x, (x - x_target).norm()};
  }
  return out;
}

// ‖min(z, w)‖∞ with w = Q z + r recomputed here, and the most negative entry of z and w.
void ExpectSolvesLcp(const MatrixXd& Q, const VectorXd& r, const VectorXd& z, double tol,
                     const std::string& what) {
  const VectorXd w = Q * z + r;
  EXPECT_GE(z.minCoeff(), -tol) << what;
  EXPECT_GE(w.minCoeff(), -tol) << what;
  EXPECT_LE(z.cwiseMin(w).cwiseAbs().maxCoeff(), tol) << what;
}

struct Collected {
  std::uint32_t mask;
  VectorXd z, w, x;
  double distance;
};

struct CheckSummary {
  int distinct_x = 0;             // accepted leaves with pairwise distinct x
  bool chose_later_leaf = false;  // the returned leaf is not the first accepted one
};

// Test 13 (and its 2-contact version): every accepted leaf solves the LCP, the accepted leaves
// are exactly those of the from-scratch enumeration (same z), the returned distance is the
// minimum over them, the physics of §5.1 holds, Lemke's solution is among the leaves, and
// re-running with x_target = returned x returns the same x.
CheckSummary CheckCoulombInstance(const CoulombLcp& c, const VectorXd& x_target,
                                  const std::string& tag) {
  const int nv = 6 * c.n;
  Mindiff mindiff;
  MindiffResults res;
  std::vector<Collected> leaves;
  mindiff.solve(c.Q, c.r, c.X, c.x0, x_target, res, Mindiff::kDefaultTolerance,
                [&](const MindiffLeaf& leaf) {
                  leaves.push_back({leaf.mask, leaf.z, leaf.w, leaf.x, leaf.distance});
                });
  EXPECT_EQ(res.leaves, 1LL << nv) << tag;
  EXPECT_EQ(res.feasible_leaves, static_cast<long long>(leaves.size())) << tag;
  const double scale = std::max(1.0, c.r.cwiseAbs().maxCoeff());
  const double tol = 1e-9 * scale;

  // Every accepted leaf solves the LCP (independent residual check) and is a leaf of the
  // from-scratch enumeration with the same z.
  const auto ref = ReferenceLeaves(c.Q, c.r, c.X, c.x0, x_target, Mindiff::kDefaultTolerance);
  EXPECT_EQ(leaves.size(), ref.size()) << tag;
  double min_ref = std::numeric_limits<double>::infinity();
  for (const auto& [mask, leaf] : ref) min_ref = std::min(min_ref, leaf.distance);
  CheckSummary summary;
  std::vector<VectorXd> xs;
  for (const Collected& l : leaves) {
    const std::string what = tag + " leaf " + std::to_string(l.mask);
    ExpectSolvesLcp(c.Q, c.r, l.z, tol, what);
    EXPECT_LE((l.w - (c.Q * l.z + c.r)).cwiseAbs().maxCoeff(), 1e-12 * scale) << what;
    EXPECT_LE((l.x - (c.x0 + c.X * l.z)).norm(), 1e-12 * (1.0 + l.x.norm())) << what;
    EXPECT_GE(l.distance, res.distance) << what;
    const auto it = ref.find(l.mask);
    if (it == ref.end()) {
      ADD_FAILURE() << what << " is not accepted by the reference enumeration";
    } else {
      EXPECT_LE((it->second.z - l.z).cwiseAbs().maxCoeff(), 1e-9 * (1.0 + l.z.norm())) << what;
    }
    bool is_new = true;
    for (const VectorXd& x : xs) is_new = is_new && (x - l.x).norm() > 1e-8 * (1.0 + x.norm());
    if (is_new) xs.push_back(l.x);
  }
  for (const auto& [mask, leaf] : ref) {
    bool seen = false;
    for (const Collected& l : leaves) seen = seen || l.mask == mask;
    if (!seen) {
      ADD_FAILURE() << tag << ": the reference accepts leaf " << mask
                    << " that Mindiff rejects; z = " << leaf.z.transpose()
                    << ", w = " << (c.Q * leaf.z + c.r).transpose();
    }
  }
  summary.distinct_x = static_cast<int>(xs.size());
  EXPECT_TRUE(res.found) << tag;
  if (!res.found) return summary;
  std::uint32_t chosen = 0;
  for (const int i : res.basis) chosen |= 1u << i;
  summary.chose_later_leaf = chosen != leaves.front().mask;
  EXPECT_NEAR(res.distance, min_ref, 1e-9 * (1.0 + min_ref)) << tag;
  EXPECT_NEAR(res.distance, (res.x - x_target).norm(), 1e-12 * (1.0 + res.distance)) << tag;

  // Physics of the chosen solution (digest §5.1): x = ⁺v, and w is the post-impulse velocity.
  const int n = c.n, nk = 4 * n;
  const VectorXd fN = res.z.head(n), fF = res.z.segment(n, nk), lambda = res.z.tail(n);
  const VectorXd vplus = res.x.head(c.m);
  EXPECT_LE((c.M * (vplus - c.vstar) - c.N.transpose() * fN - c.F.transpose() * fF).norm(),
            1e-9 * scale * (1.0 + c.M.norm()))
      << tag;
  EXPECT_LE((res.w.head(n) - (c.N * vplus + c.phi_dt)).norm(), 1e-9 * scale) << tag;
  EXPECT_LE((res.w.segment(n, nk) - (c.F * vplus + c.E * lambda)).norm(), 1e-9 * scale) << tag;
  EXPECT_LE((res.w.tail(n) - (c.mu * fN - c.E.transpose() * fF)).norm(), 1e-9 * scale) << tag;
  // One contact with r_N < 0: f_N = 0 would force f_F = 0 (cone row) and w_N = r_N < 0.
  if (n == 1 && c.r(0) < -tol) {
    EXPECT_GT(fN(0), 0.0) << tag;
  }

  // Lemke's terminal basis has a nonsingular Q_αα, so its solution is a leaf: targeting its x
  // must return it (distance ≈ 0).
  const solvers::lcp::LemkeSolver lemke;
  const auto lr = lemke.solve(c.Q, c.r);
  EXPECT_TRUE(lr.status == solvers::lcp::LemkeStatus::kSolved ||
              lr.status == solvers::lcp::LemkeStatus::kTrivial)
      << tag << " " << solvers::lcp::to_string(lr.status);
  if (lr.status == solvers::lcp::LemkeStatus::kSolved ||
      lr.status == solvers::lcp::LemkeStatus::kTrivial) {
    const VectorXd x_lemke = c.x0 + c.X * lr.z;
    MindiffResults to_lemke;
    mindiff.solve(c.Q, c.r, c.X, c.x0, x_lemke, to_lemke);
    EXPECT_LE(to_lemke.distance, 1e-8 * (1.0 + x_lemke.norm())) << tag;
  }

  // Idempotence: x_target = the returned x returns the same x.
  MindiffResults again;
  const VectorXd x_prev = res.x;
  mindiff.solve(c.Q, c.r, c.X, c.x0, x_prev, again);
  EXPECT_LE((again.x - x_prev).norm(), 1e-12 * (1.0 + x_prev.norm())) << tag;
  EXPECT_LE(again.distance, 1e-12 * (1.0 + x_prev.norm())) << tag;
  return summary;
}

TEST(Mindiff, OneContactCoulombLcpHas64LeavesAndReturnsTheNearestSolution) {
  int instances = 0, multi = 0, later = 0;
  long long feasible = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(1000 + seed);
    const CoulombLcp c = seed % 2 == 0 ? FreeBodyInstance(1, rng) : RandomSpdInstance(1, 18, rng);
    ASSERT_EQ(c.Q.rows(), 6);
    // x = ⁺v; targets: the previous step's velocity (v* plus noise), and the origin.
    for (const VectorXd& target : {VectorXd(c.vstar + 0.3 * RandomVector(c.m, rng)),
                                   VectorXd(VectorXd::Zero(c.m))}) {
      const CheckSummary d = CheckCoulombInstance(c, target, "seed " + std::to_string(seed));
      ++instances;
      multi += d.distinct_x > 1;
      later += d.chose_later_leaf;
    }
    // x = [⁺v; z]; targets: v* plus noise and random impulses (three draws).
    const CoulombLcp cz = WithImpulsesInX(c);
    for (int t = 0; t < 3; ++t) {
      VectorXd target(cz.X.rows());
      target << c.vstar + 0.3 * RandomVector(c.m, rng),
          std::abs(c.r(0)) * (RandomVector(6, rng).array() + 1.0).matrix();
      const CheckSummary d =
          CheckCoulombInstance(cz, target, "x = [v; z], seed " + std::to_string(seed));
      ++instances;
      multi += d.distinct_x > 1;
      later += d.chose_later_leaf;
    }
    Mindiff mindiff;
    MindiffResults res;
    mindiff.solve(c.Q, c.r, c.X, c.x0, c.x0, res);
    feasible += res.feasible_leaves;
  }
  std::printf("[ info ] 1 contact: %d instances, %d with several distinct x, %d returning a "
              "later leaf than the first accepted, %.2f feasible leaves of 64 on average\n",
              instances, multi, later, static_cast<double>(feasible) / 40.0);
  // The minimization is exercised: some instances have several candidates and pick a later one.
  EXPECT_GT(multi, 0);
  EXPECT_GT(later, 0);
}

TEST(Mindiff, TwoContactCoulombLcpHas4096Leaves) {
  int instances = 0, multi = 0;
  for (int seed = 0; seed < 12; ++seed) {
    std::mt19937 rng(2000 + seed);
    const CoulombLcp c = seed % 2 == 0 ? FreeBodyInstance(2, rng) : RandomSpdInstance(2, 18, rng);
    ASSERT_EQ(c.Q.rows(), 12);
    const VectorXd target = c.vstar + 0.3 * RandomVector(c.m, rng);
    multi += CheckCoulombInstance(c, target, "2 contacts, seed " + std::to_string(seed))
                 .distinct_x > 1;
    ++instances;
    const CoulombLcp cz = WithImpulsesInX(c);
    VectorXd target_z(cz.X.rows());
    target_z << target, std::abs(c.r(0)) * (RandomVector(12, rng).array() + 1.0).matrix();
    multi += CheckCoulombInstance(cz, target_z,
                                  "2 contacts, x = [v; z], seed " + std::to_string(seed))
                 .distinct_x > 1;
    ++instances;
  }
  std::printf("[ info ] 2 contacts: %d instances, %d with several distinct x\n", instances,
              multi);
}

// Three contacts on a point mass (m = 3: nine contact rows in ℝ³), so the LCP is indeterminate;
// the nearest accepted leaf must still equal the enumeration's. 18 variables, 262,144 leaves
// (timed).
TEST(Mindiff, ThreeContactsOnAPointMassTimed) {
  std::mt19937 rng(3000);
  const MatrixXd M = 2.0 * MatrixXd::Identity(3, 3);
  MatrixXd N(3, 3), S(3, 3), T(3, 3);
  for (int i = 0; i < 3; ++i) {
    const Vector3d nh = Vector3d(Uniform(rng, -0.2, 0.2), Uniform(rng, -0.2, 0.2), 1).normalized();
    const Vector3d sh = nh.unitOrthogonal(), th = nh.cross(sh);
    N.row(i) = nh.transpose();
    S.row(i) = sh.transpose();
    T.row(i) = th.transpose();
  }
  const VectorXd vstar = Vector3d(0.4, -0.2, -1.0);
  const CoulombLcp c =
      BuildCoulombLcp(M, N, S, T, Vector3d(0.5, 0.8, 0.3), vstar, Vector3d::Zero());
  Mindiff mindiff;
  MindiffResults res;
  const auto t0 = std::chrono::steady_clock::now();
  mindiff.solve(c.Q, c.r, c.X, c.x0, vstar, res);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(res.leaves, 1LL << 18);
  ASSERT_TRUE(res.found);
  ExpectSolvesLcp(c.Q, c.r, res.z, 1e-9, "point mass");
  const auto ref = ReferenceLeaves(c.Q, c.r, c.X, c.x0, vstar, Mindiff::kDefaultTolerance);
  EXPECT_EQ(res.feasible_leaves, static_cast<long long>(ref.size()));
  double min_ref = std::numeric_limits<double>::infinity();
  for (const auto& [mask, leaf] : ref) min_ref = std::min(min_ref, leaf.distance);
  EXPECT_NEAR(res.distance, min_ref, 1e-9);
  std::printf("[ info ] 3 contacts (18 variables): %lld feasible of %lld leaves, %.3f s "
              "(%.2f µs per leaf)\n",
              res.feasible_leaves, res.leaves, seconds, 1e6 * seconds / res.leaves);
}

// (b) P-matrices: the LCP has exactly one solution, so every accepted leaf and the returned z
// equal Lemke's, whatever x_target.
TEST(Mindiff, PMatrixLcpsAgreeWithLemkeForAnyTarget) {
  const solvers::lcp::LemkeSolver lemke;
  Mindiff mindiff;  // reused across sizes
  int checked = 0;
  for (int seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(4000 + seed);
    const int n = 1 + seed % 10;
    MatrixXd Q;
    switch (seed % 3) {
      case 0: {  // nonsymmetric positive definite: SPD + skew
        const MatrixXd A = RandomMatrix(n, n, rng), B = RandomMatrix(n, n, rng);
        Q = A * A.transpose() / n + 0.3 * MatrixXd::Identity(n, n) + (B - B.transpose());
        break;
      }
      case 1: {  // lower triangular, positive diagonal (not positive definite in general)
        Q = RandomMatrix(n, n, rng).triangularView<Eigen::StrictlyLower>();
        for (int i = 0; i < n; ++i) Q(i, i) = Uniform(rng, 0.5, 2.0);
        break;
      }
      default: {  // positive diagonal times SPD (a P-matrix, nonsymmetric)
        VectorXd D(n);
        for (int i = 0; i < n; ++i) D(i) = std::pow(10.0, Uniform(rng, -1.0, 1.0));
        const MatrixXd A = RandomMatrix(n, n, rng);
        Q = D.asDiagonal() * (A * A.transpose() + 0.2 * MatrixXd::Identity(n, n));
      }
    }
    const VectorXd r = 2.0 * RandomVector(n, rng);
    const auto lr = lemke.solve(Q, r);
    ASSERT_TRUE(lr.status == solvers::lcp::LemkeStatus::kSolved ||
                lr.status == solvers::lcp::LemkeStatus::kTrivial)
        << "seed " << seed;
    const int p = 1 + seed % 4;
    const MatrixXd X = RandomMatrix(p, n, rng);
    const VectorXd x0 = RandomVector(p, rng);
    for (int t = 0; t < 3; ++t) {
      const VectorXd target = 10.0 * RandomVector(p, rng);
      MindiffResults res;
      std::vector<VectorXd> zs;
      mindiff.solve(Q, r, X, x0, target, res, Mindiff::kDefaultTolerance,
                    [&](const MindiffLeaf& leaf) { zs.push_back(leaf.z); });
      ASSERT_TRUE(res.found) << "seed " << seed;
      const double zscale = 1.0 + lr.z.cwiseAbs().maxCoeff();
      EXPECT_LE((res.z - lr.z).cwiseAbs().maxCoeff(), 1e-9 * zscale) << "seed " << seed;
      for (const VectorXd& z : zs)
        EXPECT_LE((z - lr.z).cwiseAbs().maxCoeff(), 1e-9 * zscale) << "seed " << seed;
      EXPECT_GE(res.feasible_leaves, 1);
      // The basis is the support of z (no degenerate zeros in random data).
      std::vector<int> support;
      for (int i = 0; i < n; ++i)
        if (lr.z(i) > 1e-9) support.push_back(i);
      EXPECT_EQ(res.basis, support) << "seed " << seed;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 180);
}

// (c) LCPs with several solutions: the target decides.
TEST(Mindiff, SeveralSolutionsTheTargetPicks) {
  Mindiff mindiff;
  MindiffResults res;
  const MatrixXd I = MatrixXd::Identity(2, 2);
  const VectorXd zero = VectorXd::Zero(2);
  // Q = [1 2; 2 1] (det −3, not a P-matrix), r = (−1, −1): three isolated solutions
  // (1, 0), (0, 1), (1/3, 1/3); x = z.
  {
    MatrixXd Q(2, 2);
    Q << 1, 2, 2, 1;
    const VectorXd r = VectorXd::Constant(2, -1.0);
    const std::vector<std::pair<Eigen::Vector2d, Eigen::Vector2d>> cases = {
        {{0.9, 0.1}, {1.0, 0.0}},
        {{-0.5, 2.0}, {0.0, 1.0}},
        {{0.3, 0.4}, {1.0 / 3, 1.0 / 3}},
        {{0.0, 0.0}, {1.0 / 3, 1.0 / 3}}};
    for (const auto& [target, expected] : cases) {
      mindiff.solve(Q, r, I, zero, target, res);
      ASSERT_TRUE(res.found);
      EXPECT_EQ(res.feasible_leaves, 3);
      EXPECT_LE((res.z - expected).norm(), 1e-14) << target.transpose();
      EXPECT_NEAR(res.distance, (expected - target).norm(), 1e-14);
      EXPECT_LE(res.w.cwiseAbs().minCoeff(), 1e-14);
    }
    // Tie: (2, 2) is √5 from both (1, 0) and (0, 1) and farther from (1/3, 1/3); the first leaf
    // in bitmask order, α = {0}, wins.
    mindiff.solve(Q, r, I, zero, Eigen::Vector2d(2.0, 2.0), res);
    EXPECT_EQ(res.basis, std::vector<int>{0});
    EXPECT_LE((res.z - Eigen::Vector2d(1.0, 0.0)).norm(), 1e-15);
  }
  // Q = [1 1; 1 1], r = (−1, −1): the solutions are the segment z₁ + z₂ = 1, z ≥ 0. Leaves:
  // α = {0} → (1, 0), α = {1} → (0, 1), α = {0, 1} (singular block, consistent) → the
  // minimum-norm point (½, ½). Only those three points are candidates: the target (0.8, 0.2),
  // itself a solution, gets (1, 0) at distance 0.2√2 (the documented limitation).
  {
    MatrixXd Q = MatrixXd::Ones(2, 2);
    const VectorXd r = VectorXd::Constant(2, -1.0);
    const std::vector<std::pair<Eigen::Vector2d, Eigen::Vector2d>> cases = {
        {{2.0, -1.0}, {1.0, 0.0}},
        {{0.1, 3.0}, {0.0, 1.0}},
        {{0.6, 0.45}, {0.5, 0.5}},
        {{0.8, 0.2}, {1.0, 0.0}}};
    std::vector<std::vector<int>> bases;
    for (const auto& [target, expected] : cases) {
      mindiff.solve(Q, r, I, zero, target, res);
      ASSERT_TRUE(res.found);
      EXPECT_EQ(res.feasible_leaves, 3);
      EXPECT_LE((res.z - expected).norm(), 1e-14) << target.transpose();
      bases.push_back(res.basis);
    }
    EXPECT_EQ(bases[2], (std::vector<int>{0, 1}));
    EXPECT_NEAR(res.distance, 0.2 * std::sqrt(2.0), 1e-14);
  }
  // Q = [1 0; 0 0], r = (−1, 1): z = (1, 0), w = (0, 1) is the only solution. The leaves
  // α = {1} and α = {0, 1} give z ≥ 0 and w ≥ 0 but their basis systems are inconsistent
  // (w₁ = 1 ≠ 0): the residual test rejects them, so the solution is reported once, with α = {0}.
  {
    MatrixXd Q = MatrixXd::Zero(2, 2);
    Q(0, 0) = 1.0;
    const VectorXd r = Eigen::Vector2d(-1.0, 1.0);
    int visited = 0;
    mindiff.solve(Q, r, I, zero, zero, res, Mindiff::kDefaultTolerance,
                  [&](const MindiffLeaf& leaf) {
                    EXPECT_EQ(leaf.mask, 1u);
                    ++visited;
                  });
    EXPECT_EQ(visited, 1);
    EXPECT_EQ(res.feasible_leaves, 1);
    EXPECT_EQ(res.basis, std::vector<int>{0});
    EXPECT_LE((res.z - Eigen::Vector2d(1.0, 0.0)).norm(), 1e-15);
    EXPECT_LE((res.w - Eigen::Vector2d(0.0, 1.0)).norm(), 1e-15);
  }
}

TEST(Mindiff, EdgeCases) {
  Mindiff mindiff;
  MindiffResults res;
  // n = 0: one leaf, x = x0.
  const Eigen::Vector2d x0(1.0, 2.0), target(4.0, 6.0);
  mindiff.solve(MatrixXd(0, 0), VectorXd(0), MatrixXd(2, 0), x0, target, res);
  EXPECT_TRUE(res.found);
  EXPECT_EQ(res.leaves, 1);
  EXPECT_EQ(res.feasible_leaves, 1);
  EXPECT_EQ(res.z.size(), 0);
  EXPECT_DOUBLE_EQ(res.distance, 5.0);
  EXPECT_EQ(res.x, VectorXd(x0));
  // No solution: w = −z − 1 < 0 for all z ≥ 0.
  mindiff.solve(MatrixXd::Constant(1, 1, -1.0), VectorXd::Constant(1, -1.0), MatrixXd(0, 1),
                VectorXd(0), VectorXd(0), res);
  EXPECT_FALSE(res.found);
  EXPECT_EQ(res.leaves, 2);
  EXPECT_EQ(res.feasible_leaves, 0);
  EXPECT_EQ(res.z.size(), 0);
  EXPECT_TRUE(res.basis.empty());
  EXPECT_TRUE(std::isinf(res.distance));
  // p = 0: all distances 0, the first accepted leaf; r ≥ 0 gives z = 0 at leaf 0.
  mindiff.solve(MatrixXd::Identity(3, 3), VectorXd::Constant(3, 0.5), MatrixXd(0, 3), VectorXd(0),
                VectorXd(0), res);
  EXPECT_TRUE(res.found);
  EXPECT_EQ(res.feasible_leaves, 1);
  EXPECT_TRUE(res.basis.empty());
  EXPECT_EQ(res.z, VectorXd::Zero(3));
  // A slightly negative w within the tolerance is accepted; beyond it is not.
  mindiff.solve(MatrixXd::Identity(1, 1), VectorXd::Constant(1, -5e-10), MatrixXd(0, 1),
                VectorXd(0), VectorXd(0), res);
  EXPECT_EQ(res.feasible_leaves, 2);  // z = 0 (w = −5e-10) and z = 5e-10
  mindiff.solve(MatrixXd::Identity(1, 1), VectorXd::Constant(1, -5e-10), MatrixXd(0, 1),
                VectorXd(0), VectorXd(0), res, 1e-10);
  EXPECT_EQ(res.feasible_leaves, 1);
  EXPECT_EQ(res.basis, std::vector<int>{0});
  // Repeated calls reuse the object and give identical results.
  std::mt19937 rng(5);
  const CoulombLcp c = FreeBodyInstance(1, rng);
  MindiffResults a, b;
  mindiff.solve(c.Q, c.r, c.X, c.x0, c.x0, a);
  mindiff.solve(c.Q, c.r, c.X, c.x0, c.x0, b);
  EXPECT_EQ(a.z, b.z);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.basis, b.basis);
  EXPECT_EQ(a.feasible_leaves, b.feasible_leaves);
}

template <typename F>
void ExpectThrowMentioning(F&& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected one naming " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

// (d) bad input.
TEST(Mindiff, BadInputThrowsNamingTheField) {
  std::mt19937 rng(6);
  const MatrixXd Q = RandomMatrix(4, 4, rng), X = RandomMatrix(3, 4, rng);
  const VectorXd r = RandomVector(4, rng), x0 = RandomVector(3, rng), xt = RandomVector(3, rng);
  Mindiff md;
  MindiffResults res;
  ExpectThrowMentioning([&] { md.solve(MatrixXd(Q.topRows(3)), r, X, x0, xt, res); }, "Q");
  ExpectThrowMentioning([&] { md.solve(Q, VectorXd(r.head(3)), X, x0, xt, res); }, "r");
  ExpectThrowMentioning([&] { md.solve(Q, r, MatrixXd(X.leftCols(3)), x0, xt, res); }, "X");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, VectorXd(x0.head(2)), xt, res); }, "x0");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, x0, VectorXd(xt.head(2)), res); }, "x_target");
  MatrixXd Qn = Q;
  Qn(1, 2) = std::nan("");
  ExpectThrowMentioning([&] { md.solve(Qn, r, X, x0, xt, res); }, "Q(1, 2)");
  VectorXd rn = r;
  rn(3) = INFINITY;
  ExpectThrowMentioning([&] { md.solve(Q, rn, X, x0, xt, res); }, "r(3)");
  MatrixXd Xn = X;
  Xn(2, 0) = -INFINITY;
  ExpectThrowMentioning([&] { md.solve(Q, r, Xn, x0, xt, res); }, "X(2, 0)");
  VectorXd x0n = x0;
  x0n(0) = std::nan("");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, x0n, xt, res); }, "x0(0)");
  VectorXd xtn = xt;
  xtn(1) = std::nan("");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, x0, xtn, res); }, "x_target(1)");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, x0, xt, res, -1e-9); }, "tolerance");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, x0, xt, res, std::nan("")); }, "tolerance");
  ExpectThrowMentioning([&] { md.solve(Q, r, X, x0, xt, res, INFINITY); }, "tolerance");
  const int big = Mindiff::kMaxVariables + 1;
  ExpectThrowMentioning(
      [&] {
        md.solve(MatrixXd::Identity(big, big), VectorXd::Zero(big), MatrixXd(0, big), VectorXd(0),
                 VectorXd(0), res);
      },
      "kMaxVariables");
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
