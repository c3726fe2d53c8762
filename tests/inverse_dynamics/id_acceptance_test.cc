// Acceptance tests of the inverse-dynamics layer (Zapolsky & Drumwright, "Inverse Dynamics with
// Rigid Contact and Friction"; digest ../shared/digests/inverse-dynamics.md §10 items 4–9, 12,
// 13, plus bad inputs). Every check compares IdSolver's output with a truth computed here by a
// different route: dense full-space matrices with explicit inverses and pseudo-inverses
// (id_reference.h), the FORWARD contact problems solved by LemkeSolver, an exhaustive
// enumeration of LCP bases, and a velocity-space QP. The robot is the Unitree A1
// (../shared/models/a1.urdf, m = 18, n_q = 12) on flat ground (id_test_util.h); its foot
// contacts have frames R_WC = I (ŝ = x, t̂ = y, n̂ = z).
//
//  §10.4  RightInverse*          the ID's (τ, impulses) solve the forward Anitescu–Potra LCP
//                                 (LCP,μ) / the forward no-slip MLCP (LCP,∞); where the forward
//                                 solution is provably unique, Lemke's forward solution tracks
//                                 q̇_des.
//  §10.5  FindIndicesDuplicate…  a duplicated and a collinear contact: dropped rows, the kept
//                                 count = rank, and the full (singular) MLCP by a pseudo-inverse.
//  §10.6  PpmEqualsLemke…, WarmStart…
//  §10.7  CoulombLcp*            copositivity, the friction polygon and sliding conditions,
//                                 μ = 0 and μ = 1e6.
//  §10.8  FrictionlessFlatGround…
//  §10.9  SeparatedAndPenetrating…
//  §10.12 InconsistentSplay…
//  §10.13 Mindiff…
//  validation: IdProblem::validate and InverseDynamics::solve on bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/multibody/momentum.h"
#include "coulomb/solvers/lcp/lemke.h"
#include "coulomb/solvers/qp/conic_qp.h"
#include "inverse_dynamics/id_reference.h"
#include "inverse_dynamics/id_test_util.h"

namespace coulomb::inverse_dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using solvers::lcp::LemkeResults;
using solvers::lcp::LemkeSolver;
using solvers::lcp::LemkeStatus;
using testing::A1Stance;
using testing::check_lcp;
using testing::Dense;
using testing::Lcp;

constexpr double kDt = 1e-3;

IdParameters params(Formulation f) {
  IdParameters p;
  p.formulation = f;
  return p;
}

contact::ContactSet subset(const contact::ContactSet& all, const std::vector<int>& keep) {
  contact::ContactSet s;
  for (int i : keep) s.contacts.push_back(all.contacts[i]);
  return s;
}

void set_mu(contact::ContactSet& set, double mu) {
  for (contact::Contact& c : set.contacts) c.material.mu = mu;
}

VectorXd random_vector(std::mt19937& rng, int n, double scale) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return scale * VectorXd::NullaryExpr(n, [&] { return u(rng); });
}

bool lemke_ok(const LemkeResults& r) { return r.status == LemkeStatus::kSolved || r.status == LemkeStatus::kTrivial; }

/// Joint velocities that keep every contact point fixed while the base moves with the twist V
/// (6: [ω; v] world frame): [N; S; T]_𝒜 q̇ = −[N; S; T]_𝒰 V (square and regular for the A1's
/// four feet: each foot's 3 × 3 leg Jacobian).
VectorXd feet_fixed_qdot(const Dense& d, const VectorXd& V) {
  MatrixXd J(3 * d.n, d.m);
  J << d.N, d.S, d.T;
  const MatrixXd JA = J(Eigen::all, d.act), JU = J(Eigen::all, d.unact);
  return JA.fullPivLu().solve(-JU * V);
}

/// The forward no-slip problem (digest §4.1 with τ given): M ⁺v = b + Pᵀι + Nᵀf_N + Sᵀf_S + Tᵀf_T,
/// S ⁺v = T ⁺v = 0, 0 ≤ f_N ⊥ N ⁺v + φ/Δt ≥ 0. With X = [Sᵀ Tᵀ] (independent in the full space:
/// the joints are free) it is the LCP (N Γ_X Nᵀ, N v0 + φ/Δt), ⁺v = v0 + Γ_X Nᵀ f_N,
/// v0 = Γ_X (b + Pᵀι).
struct ForwardNoSlip {
  MatrixXd Gamma;
  VectorXd v0;
  Lcp lcp;
};
ForwardNoSlip forward_no_slip(const Dense& d, const VectorXd& iota) {
  MatrixXd X(d.m, 2 * d.n);
  X << d.S.transpose(), d.T.transpose();
  ForwardNoSlip f;
  const testing::Constrained c = testing::constrain(d, X, VectorXd::Zero(2 * d.n));
  f.Gamma = c.Gamma;
  f.v0 = c.Gamma * (d.b + d.P.transpose() * iota);
  f.lcp.Q = d.N * f.Gamma * d.N.transpose();
  f.lcp.r = d.N * f.v0 + d.phi / d.dt;
  return f;
}

/// Uniqueness of the forward Coulomb problem [derived here]: with W = J M⁻¹ Jᵀ (J = [N; S; T] of
/// the contacts, SPD) two solutions f¹, f² (3n impulses) satisfy Δfᵀ W Δf = Δfᵀ Δu, and the
/// contact law bounds the right side: the normal part is −f¹_N w² − f²_N w¹ ≤ 0 (complementarity),
/// and since the Anitescu–Potra rows are the optimality conditions of max dissipation over the
/// diamond |f_S| + |f_T| ≤ μ f_N (min f_t·u_t = −μ f_N ‖u_t‖∞), the tangential part is
/// ≤ μ (f²_N − f¹_N)(‖u¹_t‖∞ − ‖u²_t‖∞) ≤ μ |Δf_N| ‖Δu_t‖₂ = μ |Δf_N| ‖W_T Δf‖ (W_T: W's
/// tangential rows). So λ_min(W) ‖Δf‖² ≤ μ_max ‖W_T‖₂ ‖Δf‖²: the impulses (and ⁺v, since M⁻¹Jᵀ is
/// injective) are unique when μ_max < λ_min(W) / ‖W_T‖₂. Returns that bound.
double coulomb_uniqueness_bound(const Dense& d) {
  const int n = d.n;
  MatrixXd J(3 * n, d.m);
  J << d.N, d.S, d.T;
  const MatrixXd W = J * d.Minv * J.transpose();
  const double lmin = Eigen::SelfAdjointEigenSolver<MatrixXd>(W).eigenvalues()[0];
  const double wt = Eigen::JacobiSVD<MatrixXd>(W.bottomRows(2 * n)).singularValues()[0];
  return lmin / wt;
}

// ---------------------------------------------------------------------------------------------
// §10.4 right inverse, ID_LCP,μ

struct RoundTrip {
  double min_z = 0, min_w = 0, compl_res = 0, dv = 0;
};

// The ID's impulses, with its τ, solve the forward Anitescu–Potra LCP; returns the residuals.
RoundTrip coulomb_round_trip(const Dense& d, const IdResults& r) {
  const VectorXd iota = d.dt * r.tau;
  const Lcp fwd = testing::ap_lcp(d, d.Minv, d.v_free(iota));
  const VectorXd z = testing::z_from_results(d, r);
  const testing::LcpCheck c = check_lcp(fwd, z);
  RoundTrip t{c.min_z, c.min_w, c.complementarity, 0.0};
  // The forward ⁺v at the ID's impulses is the ID's ⁺v (the dynamics, all rows).
  const VectorXd v_fwd = d.v_free(iota) + d.Minv * d.R().transpose() * z.head(5 * d.n);
  t.dv = (v_fwd - r.v_next).cwiseAbs().maxCoeff();
  return t;
}

TEST(IdAcceptanceTest, RightInverseCoulombImpulsesSolveTheForwardLcp) {
  A1Stance stance(testing::a1_urdf(), 0.5);
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  std::mt19937 rng(41);
  RoundTrip worst;
  int sliding = 0;
  for (int trial = 0; trial < 30; ++trial) {
    VectorXd v = random_vector(rng, 18, 0.2);
    if (trial % 3 == 0) v[3] += 0.5;  // a lateral base velocity: the feet slide
    const VectorXd a = random_vector(rng, 12, 3.0);
    const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << trial << ": " << r.message;
    const Dense d(id.problem());
    const RoundTrip t = coulomb_round_trip(d, r);
    EXPECT_GE(t.min_z, -1e-9) << trial;
    EXPECT_GE(t.min_w, -1e-9) << trial;
    EXPECT_LE(t.compl_res, 1e-9) << trial;
    EXPECT_LE(t.dv, 1e-9) << trial;
    worst.min_z = std::min(worst.min_z, t.min_z);
    worst.min_w = std::min(worst.min_w, t.min_w);
    worst.compl_res = std::max(worst.compl_res, t.compl_res);
    worst.dv = std::max(worst.dv, t.dv);
    for (int i = 0; i < 4; ++i) sliding += r.sliding_speed[i] > 1e-9;
  }
  EXPECT_GT(sliding, 0);
  std::printf("LCP,mu -> forward AP LCP, 4 feet, 30 requests (%d sliding contacts): min z %.3g, min w %.3g, "
              "max |z w| %.3g, |v_fwd - v_id| %.3g\n",
              sliding, worst.min_z, worst.min_w, worst.compl_res, worst.dv);
}

// Determinate cases: one foot (and, with μ below the uniqueness bound, all four feet). The
// forward LCP's solution is unique (coulomb_uniqueness_bound's argument: W = J M⁻¹ Jᵀ is SPD
// because J has full row rank with every joint free, and μ < λ_min(W)/‖W_T‖ ≈ 0.469 for the A1's
// feet), so Lemke's forward solution must be the ID's and reproduce P ⁺v = q̇_des.
TEST(IdAcceptanceTest, RightInverseCoulombForwardLemkeTracksTheDesiredMotion) {
  const double mu = 0.4;
  for (const std::vector<int>& feet : {std::vector<int>{0}, std::vector<int>{2}, std::vector<int>{0, 1, 2, 3}}) {
    A1Stance stance(testing::a1_urdf(), mu);
    stance.touch();
    const contact::ContactSet contacts = subset(stance.contacts, feet);
    const multibody::Model& model = stance.scene.model;
    InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
    std::mt19937 rng(43);
    double worst_track = 0.0, worst_dv = 0.0, bound = 0.0;
    int sliding = 0, loaded = 0;
    for (int trial = 0; trial < 20; ++trial) {
      VectorXd v = random_vector(rng, 18, 0.2);
      v[5] -= 0.2;                      // the base moves down onto the feet
      if (trial % 2) v[4] += 0.3;       // and sideways: sliding
      const VectorXd a = random_vector(rng, 12, 3.0);
      const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, contacts);
      ASSERT_EQ(r.status, IdStatus::kSolved) << r.message;
      const Dense d(id.problem());
      bound = coulomb_uniqueness_bound(d);
      ASSERT_LT(mu, bound) << "the uniqueness argument does not cover this case";
      const RoundTrip t = coulomb_round_trip(d, r);
      EXPECT_GE(t.min_z, -1e-9);
      EXPECT_GE(t.min_w, -1e-9);
      EXPECT_LE(t.compl_res, 1e-9);
      // Forward solve by Lemke, from scratch.
      const VectorXd iota = kDt * r.tau;
      const VectorXd v0 = d.v_free(iota);
      const Lcp fwd = testing::ap_lcp(d, d.Minv, v0);
      const LemkeResults lr = LemkeSolver().solve(fwd.Q, fwd.r);
      ASSERT_TRUE(lemke_ok(lr)) << solvers::lcp::to_string(lr.status);
      const VectorXd v_fwd = v0 + d.Minv * d.R().transpose() * lr.z.head(5 * d.n);
      const double track = (d.P * v_fwd - d.qdot_des).cwiseAbs().maxCoeff();
      EXPECT_LE(track, 1e-8) << "feet " << feet.size() << " trial " << trial;
      worst_track = std::max(worst_track, track);
      worst_dv = std::max(worst_dv, (v_fwd - r.v_next).cwiseAbs().maxCoeff());
      for (int i = 0; i < d.n; ++i) {
        sliding += r.sliding_speed[i] > 1e-9;
        loaded += r.contact_impulses[3 * i + 2] > 0.0;
      }
    }
    EXPECT_GT(loaded, 0);
    std::printf("LCP,mu forward Lemke, %zu foot/feet (mu %.2f < bound %.4f), %d loaded / %d sliding contacts: "
                "max |P v+ - qdot_des| %.3g, max |v_fwd - v_id| %.3g\n",
                feet.size(), mu, bound, loaded, sliding, worst_track, worst_dv);
  }
}

// §10.4 for ID_LCP,∞: the forward no-slip MLCP with τ given. In the full space (joints free)
// [N; S; T] of the A1's four feet has full row rank 12, so N Γ_X Nᵀ is positive definite and the
// forward solution unique even with four feet: Lemke must return P ⁺v = q̇_des.
TEST(IdAcceptanceTest, RightInverseNoSlipImpulsesSolveTheForwardMlcp) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpNoSlip));
  // Rows at q0 (they depend on q only), for the consistent requests below.
  id.solve(stance.scene.q0, VectorXd::Zero(18), VectorXd::Zero(12), kDt, stance.contacts);
  const Dense d0(id.problem());
  std::mt19937 rng(47);
  double worst_mlcp = 0.0, worst_track = 0.0, worst_dv = 0.0;
  for (int trial = 0; trial < 20; ++trial) {
    // A consistent request: the base moves with a random twist, the legs keep the feet fixed.
    const VectorXd V = random_vector(rng, 6, 0.1);
    const VectorXd qdot = feet_fixed_qdot(d0, V);
    VectorXd v = random_vector(rng, 18, 0.1);
    v[5] -= 0.1;
    const VectorXd a = (qdot - v(d0.act)) / kDt;
    const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << trial << ": " << r.message;
    const Dense d(id.problem());
    const VectorXd iota = kDt * r.tau;
    // The ID's impulses in the forward MLCP: dynamics (all rows), no-slip, normal complementarity.
    const VectorXd v_fwd = d.v_free(iota) + d.Minv * testing::contact_impulse(d, r);
    const VectorXd fN = Eigen::Map<const VectorXd, 0, Eigen::InnerStride<3>>(r.contact_impulses.data() + 2, d.n);
    const VectorXd wN = d.N * v_fwd + d.phi / kDt;
    const double mlcp = std::max({(d.S * v_fwd).cwiseAbs().maxCoeff(), (d.T * v_fwd).cwiseAbs().maxCoeff(),
                                  -wN.minCoeff(), -fN.minCoeff(), fN.cwiseProduct(wN).cwiseAbs().maxCoeff(),
                                  (v_fwd - r.v_next).cwiseAbs().maxCoeff()});
    EXPECT_LE(mlcp, 1e-9) << trial;
    worst_mlcp = std::max(worst_mlcp, mlcp);
    // Forward solve.
    const ForwardNoSlip f = forward_no_slip(d, iota);
    ASSERT_GT(Eigen::SelfAdjointEigenSolver<MatrixXd>(f.lcp.Q).eigenvalues()[0], 1e-6);  // unique
    const testing::LcpCheck c = check_lcp(f.lcp, fN);
    EXPECT_GE(c.min_w, -1e-9);
    EXPECT_LE(c.complementarity, 1e-9);
    const LemkeResults lr = LemkeSolver().solve(f.lcp.Q, f.lcp.r);
    ASSERT_TRUE(lemke_ok(lr));
    const VectorXd v_lemke = f.v0 + f.Gamma * d.N.transpose() * lr.z;
    const double track = (d.P * v_lemke - d.qdot_des).cwiseAbs().maxCoeff();
    EXPECT_LE(track, 1e-8) << trial;
    worst_track = std::max(worst_track, track);
    worst_dv = std::max(worst_dv, (v_lemke - r.v_next).cwiseAbs().maxCoeff());
  }
  std::printf("LCP,inf -> forward no-slip MLCP, 4 feet, 20 consistent requests: max MLCP residual %.3g, "
              "forward Lemke max |P v+ - qdot_des| %.3g, |v_fwd - v_id| %.3g\n",
              worst_mlcp, worst_track, worst_dv);
}

// ---------------------------------------------------------------------------------------------
// §10.5 FIND-INDICES inside ID_LCP,∞: the A1's four feet plus a duplicate of foot 0 and a
// contact on foot 0's body at 3/4 p0 + 1/4 p2 (p2: the rear foot on the same side, so the point
// lies on the line through feet 0 and 2, both at y = −0.1308). Order: [0, dup 0, collinear, 1, 2,
// 3]. In 𝒰 (the base, joints held) the tangential velocity of a ground point p is
// u_x = v_x − h ω_y − ω_z p_y, u_y = v_y + h ω_x + ω_z p_x: rank 3. Alg. 1 keeps S_0, T_0, then
// must reject the duplicate's S and T (while the rank is still 2), reject the collinear S (same
// p_y as foot 0), keep its T, and reject everything after (rank 3 reached).
TEST(IdAcceptanceTest, FindIndicesDuplicateAndCollinearContactsMatchTheFullMlcp) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  contact::ContactSet contacts;
  const contact::Contact& c0 = stance.contacts.contacts[0];
  const contact::Contact& c2 = stance.contacts.contacts[2];
  ASSERT_NEAR(c0.p_W.y(), c2.p_W.y(), 1e-12);
  contact::Contact col = c0;
  col.p_W = 0.75 * c0.p_W + 0.25 * c2.p_W;
  contacts.contacts = {c0, c0, col, stance.contacts.contacts[1], c2, stance.contacts.contacts[3]};
  const int n = contacts.size();
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpNoSlip));
  std::mt19937 rng(53);
  for (int trial = 0; trial < 5; ++trial) {
    // q̇_des = 0: ⁺v_𝒜 = 0, so every contact point moves with the base and the dependent rows'
    // right-hand sides are consistent (App. E's assumption).
    VectorXd v = random_vector(rng, 18, 0.1);
    v[5] = -0.2;
    const VectorXd a = -v.tail(12) / kDt;
    const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << r.message;
    const Dense d(id.problem());
    // Greedy rank selection in Alg. 1's order (S_i then T_i), by SVD ranks of the 𝒰 columns.
    MatrixXd kept_rows(0, 6);
    std::vector<std::pair<int, int>> kept;  // (contact, 0 = S / 1 = T)
    for (int i = 0; i < n; ++i)
      for (int st = 0; st < 2; ++st) {
        const Eigen::RowVectorXd row = (st == 0 ? d.S : d.T).row(i)(d.unact);
        MatrixXd trial_rows(kept_rows.rows() + 1, 6);
        trial_rows << kept_rows, row;
        if (testing::rank_of(trial_rows) > kept_rows.rows()) {
          kept_rows = trial_rows;
          kept.push_back({i, st});
        }
      }
    MatrixXd ST_U(2 * n, 6);
    ST_U << d.S(Eigen::all, d.unact), d.T(Eigen::all, d.unact);
    const int rank = testing::rank_of(ST_U);
    EXPECT_EQ(rank, 3);
    EXPECT_EQ(r.stats.kept_tangent_rows, rank);
    const std::vector<std::pair<int, int>> expected_kept = {{0, 0}, {0, 1}, {2, 1}};
    EXPECT_EQ(kept, expected_kept);
    // The dropped rows' multipliers are 0 (App. E), in particular the duplicate's.
    for (int i = 0; i < n; ++i)
      for (int st = 0; st < 2; ++st) {
        const bool is_kept = std::find(kept.begin(), kept.end(), std::make_pair(i, st)) != kept.end();
        if (!is_kept) {
          EXPECT_EQ(r.contact_impulses[3 * i + st], 0.0) << "contact " << i << (st ? " T" : " S");
        }
      }

    // The full MLCP (all rows; A singular): x = [⁺v; ι; f_S; f_T],
    //   A = [M −Pᵀ −Sᵀ −Tᵀ; P 0 0 0; S 0 0 0; T 0 0 0],  C = [−Nᵀ; 0; 0; 0],  g = [−b; −q̇_des; 0; 0],
    //   A x + C f_N + g = 0,  0 ≤ f_N ⊥ N ⁺v + φ/Δt ≥ 0.
    const int m = d.m, nq = d.nq, nx = m + nq + 2 * n;
    MatrixXd A = MatrixXd::Zero(nx, nx);
    A.block(0, 0, m, m) = d.M;
    A.block(0, m, m, nq) = -d.P.transpose();
    A.block(0, m + nq, m, n) = -d.S.transpose();
    A.block(0, m + nq + n, m, n) = -d.T.transpose();
    A.block(m, 0, nq, m) = d.P;
    A.block(m + nq, 0, n, m) = d.S;
    A.block(m + nq + n, 0, n, m) = d.T;
    MatrixXd C = MatrixXd::Zero(nx, n);
    C.topRows(m) = -d.N.transpose();
    VectorXd g = VectorXd::Zero(nx);
    g.head(m) = -d.b;
    g.segment(m, nq) = -d.qdot_des;
    Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(A);
    cod.setThreshold(1e-10);
    EXPECT_EQ(cod.rank(), nx - (2 * n - rank));  // singular by the dependent rows
    const MatrixXd Xf = cod.solve(-C);           // x = x_g + X_f f_N
    const VectorXd xg = cod.solve(-g);
    const Lcp lcp{d.N * Xf.topRows(m), d.N * xg.head(m) + d.phi / kDt};
    const LemkeResults lr = LemkeSolver().solve(lcp.Q, lcp.r);
    ASSERT_TRUE(lemke_ok(lr));
    const VectorXd x_pinv = xg + Xf * lr.z;
    EXPECT_LE((A * x_pinv + C * lr.z + g).norm(), 1e-9);  // the pinv solves A x = −(C f + g)
    const VectorXd v_pinv = x_pinv.head(m);
    const double vs = std::max(1.0, r.v_next.norm());
    EXPECT_LE((v_pinv - r.v_next).norm(), 1e-8 * vs) << trial;
    // Total generalized impulse Nᵀf_N + Sᵀf_S + Tᵀf_T + Pᵀι (unique: = M(⁺v − ⁻v) − Δt f_ext).
    const VectorXd total_id = testing::contact_impulse(d, r) + d.P.transpose() * (kDt * r.tau);
    const VectorXd total_pinv = d.N.transpose() * lr.z + d.P.transpose() * x_pinv.segment(m, nq) +
                                d.S.transpose() * x_pinv.segment(m + nq, n) + d.T.transpose() * x_pinv.tail(n);
    const double is = d.M.norm() * vs;
    EXPECT_LE((total_id - total_pinv).norm(), 1e-9 * is) << trial;
    // The ID's result is a solution of the full MLCP: its x and f_N satisfy every row.
    VectorXd x_id(nx);
    const VectorXd fN = Eigen::Map<const VectorXd, 0, Eigen::InnerStride<3>>(r.contact_impulses.data() + 2, n);
    x_id << r.v_next, kDt * r.tau, Eigen::Map<const VectorXd, 0, Eigen::InnerStride<3>>(r.contact_impulses.data(), n),
        Eigen::Map<const VectorXd, 0, Eigen::InnerStride<3>>(r.contact_impulses.data() + 1, n);
    EXPECT_LE((A * x_id + C * fN + g).cwiseAbs().maxCoeff(), 1e-9 * std::max(1.0, is)) << trial;
    const testing::LcpCheck lc = check_lcp(lcp, fN);
    EXPECT_GE(lc.min_z, -1e-12);
    EXPECT_GE(lc.min_w, -1e-9);
    EXPECT_LE(lc.complementarity, 1e-9);
    // τ and the impulses are NOT unique in the full MLCP (f_N can move between the duplicate and
    // collinear contacts, and internal tangential impulses between feet cost joint torque); with
    // the ID's f_N and the dropped multipliers fixed at 0, the REDUCED A (rows P, S_0, T_0, T_col;
    // nonsingular) determines ι, f_S, f_T uniquely: they must be the ID's.
    std::vector<int> cols;  // columns of A kept: v, ι, the kept multipliers
    for (int j = 0; j < m + nq; ++j) cols.push_back(j);
    for (const auto& [i, st] : kept) cols.push_back(m + nq + st * n + i);
    const MatrixXd Ared = A(cols, cols);
    MatrixXd Xr(m, kept.size() + nq);
    Xr << d.P.transpose(), MatrixXd(m, kept.size());
    for (size_t q = 0; q < kept.size(); ++q)
      Xr.col(nq + q) = (kept[q].second == 0 ? d.S : d.T).row(kept[q].first).transpose();
    const VectorXd ev = Eigen::SelfAdjointEigenSolver<MatrixXd>(Xr.transpose() * d.Minv * Xr).eigenvalues();
    EXPECT_LT(ev.maxCoeff() / ev.minCoeff(), 1e10);  // Xᵀ M⁻¹ X well conditioned (digest §10.5)
    const VectorXd x_red = Ared.fullPivLu().solve(-(C(cols, Eigen::all) * fN + g(cols)));
    EXPECT_LE((x_red.head(m) - r.v_next).norm(), 1e-9 * vs);
    EXPECT_LE((x_red.segment(m, nq) - kDt * r.tau).norm(), 1e-9 * std::max(1e-3, kDt * r.tau.norm())) << trial;
    for (size_t q = 0; q < kept.size(); ++q)
      EXPECT_NEAR(x_red[m + nq + q], r.contact_impulses[3 * kept[q].first + kept[q].second], 1e-12) << q;
    if (trial == 0)
      std::printf("FIND-INDICES: kept %d rows (rank %d); |v_pinv - v_id| %.3g, |total impulse diff| %.3g, "
                  "|tau_red - tau_id| %.3g N m, |tau_pinv - tau_id| %.3g N m (min-norm multipliers: not unique)\n",
                  r.stats.kept_tangent_rows, rank, (v_pinv - r.v_next).norm(), (total_id - total_pinv).norm(),
                  (x_red.segment(m, nq) / kDt - r.tau).norm(), (x_pinv.segment(m, nq) / kDt - r.tau).norm());
  }
}

// ---------------------------------------------------------------------------------------------
// §10.6 at the ID level: ⁺v of the PPM path = ⁺v of Lemke on the dense LCP (N Γ_X Nᵀ, N v* + φ/Δt)
// built here from X = [Pᵀ Sᵀ Tᵀ] with ALL rows and a pseudo-inverse (Γ_X is the same for any
// spanning set), and = ⁺v of the ID with the PPM forced to fail (max_pivots = 0: Lemke fallback).
TEST(IdAcceptanceTest, PpmEqualsLemkeAndTheForcedFallback) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpNoSlip));
  IdParameters forced = params(Formulation::kLcpNoSlip);
  forced.ppm.max_pivots = 0;
  InverseDynamics id_fallback(model, joint_dofs(model), forced);
  id.solve(stance.scene.q0, VectorXd::Zero(18), VectorXd::Zero(12), kDt, stance.contacts);
  const Dense d0(id.problem());
  std::mt19937 rng(59);
  double worst_lemke = 0.0, worst_fallback = 0.0;
  int fallbacks = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const VectorXd V = random_vector(rng, 6, 0.1);
    const VectorXd qdot = feet_fixed_qdot(d0, V);
    VectorXd v = random_vector(rng, 18, 0.1);
    v[5] -= 0.1;
    const VectorXd a = (qdot - v(d0.act)) / kDt;
    id.reset();
    const IdResults r = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << r.message;
    EXPECT_FALSE(r.stats.used_fallback);
    const Dense d(id.problem());
    MatrixXd X(d.m, d.nq + 2 * d.n);
    X << d.P.transpose(), d.S.transpose(), d.T.transpose();
    VectorXd rhs = VectorXd::Zero(d.nq + 2 * d.n);
    rhs.head(d.nq) = d.qdot_des;
    const testing::Constrained c = testing::constrain(d, X, rhs);
    const VectorXd vstar = c.Gamma * d.b + c.v_particular;
    const MatrixXd Q = d.N * c.Gamma * d.N.transpose();
    const VectorXd rr = d.N * vstar + d.phi / kDt;
    const LemkeResults lr = LemkeSolver().solve(Q, rr);
    ASSERT_TRUE(lemke_ok(lr));
    const VectorXd v_lemke = vstar + c.Gamma * d.N.transpose() * lr.z;
    const double vs = std::max(1.0, r.v_next.norm());
    EXPECT_LE((v_lemke - r.v_next).norm(), 1e-8 * vs) << trial;
    worst_lemke = std::max(worst_lemke, (v_lemke - r.v_next).norm());
    id_fallback.reset();  // a warm start could solve without a pivot
    const IdResults& rf = id_fallback.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(rf.status, IdStatus::kSolved) << rf.message;
    // max_pivots = 0 fails every PPM solve that needs a flip after its first iteration (not the
    // trivial r ≥ 0 ones, nor those whose initial B̄ = {argmin r} is already the solution).
    EXPECT_TRUE(rf.stats.used_fallback || r.stats.solver_iterations <= 1) << trial;
    fallbacks += rf.stats.used_fallback;
    EXPECT_LE((rf.v_next - r.v_next).norm(), 1e-8 * vs) << trial;
    worst_fallback = std::max(worst_fallback, (rf.v_next - r.v_next).norm());
  }
  EXPECT_GE(fallbacks, 10);
  std::printf("LCP,inf PPM vs Lemke on (N Gamma_X N^T, r): max |dv| %.3g; vs forced Lemke fallback (%d/20): %.3g\n",
              worst_lemke, fallbacks, worst_fallback);
}

// §10.6: re-solving identical data warm-started from the returned B̄ takes ≤ 1 iteration and
// reproduces the impulses exactly.
TEST(IdAcceptanceTest, WarmStartOnIdenticalDataIsOneIterationAndIdentical) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpNoSlip));
  std::mt19937 rng(61);
  for (int trial = 0; trial < 10; ++trial) {
    VectorXd v = VectorXd::Zero(18);
    v[5] = -0.1 * (1 + trial);  // landing: the PPM needs pivots from cold
    const VectorXd a = random_vector(rng, 12, 0.0);
    id.reset();
    const IdResults first = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(first.status, IdStatus::kSolved) << first.message;
    EXPECT_FALSE(first.stats.warm_started);
    const IdResults& second = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(second.status, IdStatus::kSolved);
    EXPECT_TRUE(second.stats.warm_started);
    EXPECT_LE(second.stats.solver_iterations, 1);
    EXPECT_EQ(second.contact_impulses, first.contact_impulses) << "max diff "
        << (second.contact_impulses - first.contact_impulses).cwiseAbs().maxCoeff();
    EXPECT_EQ(second.tau, first.tau);
    EXPECT_EQ(second.active_set, first.active_set);
    if (trial == 0)
      std::printf("LCP,inf warm start: cold %d iterations, warm %d\n", first.stats.solver_iterations,
                  second.stats.solver_iterations);
  }
}

// ---------------------------------------------------------------------------------------------
// §10.7 the Coulomb LCP.

// Copositivity of the ID's LCP matrix (rebuilt here, digest §5.3 with Γ = Γ_P), the identity
// zᵀQz = (Rᵀz_NF)ᵀ Γ (Rᵀz_NF) + Σ μ_i f_N,i λ_i (Eq. 68), and the ID's z solving that LCP.
TEST(IdAcceptanceTest, CoulombLcpIsCopositiveAndSolvedByTheId) {
  A1Stance stance(testing::a1_urdf(), 0.5);
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  std::mt19937 rng(67);
  const VectorXd v = random_vector(rng, 18, 0.2), a = random_vector(rng, 12, 2.0);
  const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
  ASSERT_EQ(r.status, IdStatus::kSolved);
  const Dense d(id.problem());
  const MatrixXd Gamma = d.gamma_P();
  const Lcp lcp = testing::ap_lcp(d, Gamma, d.vstar());
  const int L = static_cast<int>(lcp.r.size());
  ASSERT_EQ(L, 24);
  EXPECT_EQ(r.stats.lcp_size, 24);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double min_q = std::numeric_limits<double>::infinity(), worst_identity = 0.0;
  for (int s = 0; s < 20000; ++s) {
    VectorXd z = VectorXd::NullaryExpr(L, [&] { return u(rng); });
    if (s % 2) z = z.cwiseProduct(VectorXd::NullaryExpr(L, [&] { return u(rng) < 0.3 ? 1.0 : 0.0; }));
    const double q = z.dot(lcp.Q * z);
    min_q = std::min(min_q, q);
    const VectorXd g = d.R().transpose() * z.head(20);
    const double identity = g.dot(Gamma * g) + (d.mu.array() * z.head(4).array() * z.tail(4).array()).sum();
    worst_identity = std::max(worst_identity, std::abs(q - identity) / std::max(1.0, std::abs(q)));
  }
  EXPECT_GE(min_q, -1e-12);
  EXPECT_LE(worst_identity, 1e-12);
  const testing::LcpCheck c = check_lcp(lcp, testing::z_from_results(d, r));
  EXPECT_GE(c.min_z, -1e-9);
  EXPECT_GE(c.min_w, -1e-9);
  EXPECT_LE(c.complementarity, 1e-9);
  std::printf("Coulomb LCP: min z^T Q z over 20000 random z >= 0: %.3g (Eq. 68 identity to %.3g); the ID's z: "
              "min w %.3g, max |z w| %.3g\n",
              min_q, worst_identity, c.min_w, c.complementarity);
}

// Friction polygon and sliding: every contact μ f_N − Σ f_F ≥ −1e-9; sliding (λ > 1e-9) ⇒
// μ f_N = Σ f_F and friction only in directions whose w_F = d_j·u_t + λ is 0 (u_t = [S; T] ⁺v
// from the problem's rows), which also means the friction opposes the slip.
TEST(IdAcceptanceTest, CoulombLcpFrictionPolygonAndSlidingConditions) {
  const double mu = 0.3;
  A1Stance stance(testing::a1_urdf(), mu);
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  id.solve(stance.scene.q0, VectorXd::Zero(18), VectorXd::Zero(12), kDt, stance.contacts);
  const Dense d0(id.problem());
  std::mt19937 rng(71);
  int sliding = 0, sticking = 0;
  double worst_polygon = 0.0, worst_edge = 0.0, worst_wF = 0.0;
  for (int trial = 0; trial < 40; ++trial) {
    VectorXd v = random_vector(rng, 18, 0.2), a;
    if (trial % 2 == 0) {
      // Random joint accelerations move the feet relative to each other: they slide.
      v[3] += (trial % 4) * 0.2;  // and a lateral base velocity 0 or 0.4 m/s
      a = random_vector(rng, 12, 3.0);
    } else {
      // The base moving with a twist V0, the legs keeping the feet in place, and a slightly
      // different twist V1 requested (the change of base momentum, ≈ 13.7 kg × 1 mm/s, is within
      // μ m g Δt = 0.04 N s): the feet can stick.
      VectorXd V0 = random_vector(rng, 6, 0.02);
      V0[5] -= 0.05;
      const VectorXd V1 = V0 + random_vector(rng, 6, 1e-3);
      v << V0, feet_fixed_qdot(d0, V0);
      a = (feet_fixed_qdot(d0, V1) - v.tail(12)) / kDt;
    }
    const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << r.message;
    const Dense d(id.problem());
    for (int i = 0; i < d.n; ++i) {
      const double fs = r.contact_impulses[3 * i], ft = r.contact_impulses[3 * i + 1];
      const double fn = r.contact_impulses[3 * i + 2], lambda = r.sliding_speed[i];
      const double slack = mu * fn - std::abs(fs) - std::abs(ft);  // μ f_N − Σ f_F (net f_F)
      EXPECT_GE(slack, -1e-9) << trial << " contact " << i;
      worst_polygon = std::min(worst_polygon, slack);
      const double us = d.S.row(i).dot(r.v_next), ut = d.T.row(i).dot(r.v_next);
      const double wF[4] = {us + lambda, ut + lambda, -us + lambda, -ut + lambda};
      const double fF[4] = {std::max(fs, 0.0), std::max(ft, 0.0), std::max(-fs, 0.0), std::max(-ft, 0.0)};
      for (int j = 0; j < 4; ++j) {
        EXPECT_GE(wF[j], -1e-9) << trial << " contact " << i << " dir " << j;
        worst_wF = std::max(worst_wF, -wF[j]);
      }
      if (lambda > 1e-9) {
        ++sliding;
        EXPECT_NEAR(slack, 0.0, 1e-9) << trial << " contact " << i;
        worst_edge = std::max(worst_edge, std::abs(slack));
        for (int j = 0; j < 4; ++j)
          if (fF[j] > 1e-12) {
            EXPECT_NEAR(wF[j], 0.0, 1e-9) << trial << " contact " << i << " dir " << j;
            worst_edge = std::max(worst_edge, std::abs(wF[j]));
          }
        // The friction impulse opposes the slip velocity (non-positive power).
        EXPECT_LE(fs * us + ft * ut, 1e-12);
      } else if (fn > 0.0) {
        ++sticking;
      }
    }
  }
  EXPECT_GT(sliding, 10);
  EXPECT_GT(sticking, 10);
  std::printf("Coulomb LCP, mu %.1f: %d sliding and %d sticking loaded contacts; min mu fN - sum fF %.3g, sliding "
              "edge/direction residual %.3g, min w_F %.3g\n",
              mu, sliding, sticking, worst_polygon, worst_edge, -worst_wF);
}

// μ = 0: friction exactly 0 and τ equal to the frictionless LCP (N Γ_P Nᵀ, N v* + φ/Δt) solved
// here by Lemke. Three feet, so that N_𝒰 has independent rows, N Γ_P Nᵀ is positive definite and
// f_N (hence τ) is unique.
TEST(IdAcceptanceTest, CoulombLcpWithZeroFrictionIsTheFrictionlessResult) {
  A1Stance stance(testing::a1_urdf(), 0.0);
  stance.touch();
  contact::ContactSet contacts = subset(stance.contacts, {0, 1, 2});
  set_mu(contacts, 0.0);
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  std::mt19937 rng(73);
  double worst = 0.0;
  for (int trial = 0; trial < 10; ++trial) {
    VectorXd v = random_vector(rng, 18, 0.2);
    v[5] -= 0.1;
    const VectorXd a = random_vector(rng, 12, 3.0);
    const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << r.message;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(r.contact_impulses[3 * i], 0.0);
      EXPECT_EQ(r.contact_impulses[3 * i + 1], 0.0);
    }
    const Dense d(id.problem());
    const MatrixXd Gamma = d.gamma_P();
    const VectorXd vs = d.vstar();
    const MatrixXd Q = d.N * Gamma * d.N.transpose();
    ASSERT_GT(Eigen::SelfAdjointEigenSolver<MatrixXd>(Q).eigenvalues()[0], 1e-6);
    const LemkeResults lr = LemkeSolver().solve(Q, d.N * vs + d.phi / kDt);
    ASSERT_TRUE(lemke_ok(lr));
    const VectorXd vp = vs + Gamma * d.N.transpose() * lr.z;
    const VectorXd iota = (d.M * vp - d.b - d.N.transpose() * lr.z)(d.act);
    const VectorXd tau = iota / kDt;
    EXPECT_LE((r.tau - tau).norm(), 1e-9 * tau.norm()) << trial;
    worst = std::max(worst, (r.tau - tau).norm() / tau.norm());
  }
  std::printf("Coulomb LCP, mu = 0, 3 feet: friction exactly 0, |tau - tau_frictionless| / |tau| <= %.3g\n", worst);
}

// μ = 1e6 and one sticking contact: ⁺v equals ID_LCP,∞'s (no-slip) to 1e-6. Requests where
// LCP,∞ leaves the foot unloaded (f_N = 0 with f_S, f_T ≠ 0: no-slip acts even on a foot that
// lifts) are not sticking cases; they are counted and skipped (5 of 20 here; there LCP,μ slides at
// the cone edge with f_N ≈ 4e-7 N s, or separates).
TEST(IdAcceptanceTest, CoulombLcpWithHugeFrictionIsNoSlip) {
  A1Stance stance(testing::a1_urdf(), 1e6);
  stance.touch();
  contact::ContactSet contacts = subset(stance.contacts, {0});
  set_mu(contacts, 1e6);
  const multibody::Model& model = stance.scene.model;
  InverseDynamics coulomb(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  InverseDynamics no_slip(model, joint_dofs(model), params(Formulation::kLcpNoSlip));
  std::mt19937 rng(79);
  double worst = 0.0;
  int compared = 0, unloaded = 0;
  for (int trial = 0; trial < 20; ++trial) {
    VectorXd v = random_vector(rng, 18, 0.2);
    v[5] -= 0.2;
    const VectorXd a = random_vector(rng, 12, 3.0);
    const IdResults rc = coulomb.solve(stance.scene.q0, v, a, kDt, contacts);
    const IdResults& rn = no_slip.solve(stance.scene.q0, v, a, kDt, contacts);
    ASSERT_EQ(rc.status, IdStatus::kSolved) << rc.message;
    ASSERT_EQ(rn.status, IdStatus::kSolved) << rn.message;
    if (!(rn.contact_impulses[2] > 0.0)) {
      // No-slip keeps the foot from slipping even as it lifts (f_N = 0 with f_S, f_T ≠ 0): that
      // impulse is outside every friction cone, so the Coulomb result must differ (it slides at
      // the cone edge with f_N ≈ Σf_F/μ, or separates). Not a "sticking contact" case.
      ++unloaded;
      continue;
    }
    ++compared;
    EXPECT_GT(rc.contact_impulses[2], 0.0) << trial;  // loaded
    EXPECT_LE(rc.sliding_speed[0], 1e-9) << trial;    // sticking
    const double dv = (rc.v_next - rn.v_next).norm() / std::max(1.0, rn.v_next.norm());
    EXPECT_LE(dv, 1e-6) << trial;
    worst = std::max(worst, dv);
  }
  EXPECT_GE(compared, 10);
  std::printf("Coulomb LCP, mu = 1e6, one sticking foot vs no-slip (%d requests; %d more where no-slip lifts the "
              "foot with f_N = 0): max |dv| / max(1, |v|) %.3g\n",
              compared, unloaded, worst);
}

// ---------------------------------------------------------------------------------------------
// §10.8 μ = 0 on flat ground, LCP,μ and QP,μ: friction exactly 0; the world-frame horizontal
// linear momentum (rows vx, vy of p = M v for the A1's floating joint, here from
// multibody::generalized_momentum's composite-body pass, not from M) changes by Δt × the
// horizontal non-contact force f_ext only (exactly 0 from rest: gravity is vertical); P ⁺v = q̇_des
// bit for bit.
TEST(IdAcceptanceTest, FrictionlessFlatGroundConservesHorizontalMomentum) {
  A1Stance stance(testing::a1_urdf(), 0.0);
  stance.touch();
  contact::ContactSet contacts = stance.contacts;
  set_mu(contacts, 0.0);
  const multibody::Model& model = stance.scene.model;
  multibody::Workspace ws(model);
  std::mt19937 rng(83);
  for (Formulation f : {Formulation::kLcpCoulomb, Formulation::kQpCoulomb}) {
    InverseDynamics id(model, joint_dofs(model), params(f));
    double worst = 0.0;
    for (int trial = 0; trial < 10; ++trial) {
      VectorXd v = trial == 0 ? VectorXd::Zero(18) : random_vector(rng, 18, 0.3);
      v[5] -= 0.1;
      const VectorXd a = random_vector(rng, 12, 3.0);
      const IdResults r = id.solve(stance.scene.q0, v, a, kDt, contacts);
      ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f) << ": " << r.message;
      const Dense d(id.problem());
      for (int i = 0; i < d.n; ++i) {
        EXPECT_EQ(r.contact_impulses[3 * i], 0.0);
        EXPECT_EQ(r.contact_impulses[3 * i + 1], 0.0);
      }
      multibody::generalized_momentum(model, ws, stance.scene.q0, r.v_next);
      const Eigen::Vector2d p_next = ws.momentum.segment<2>(3);
      multibody::generalized_momentum(model, ws, stance.scene.q0, v);
      const Eigen::Vector2d p_prev = ws.momentum.segment<2>(3);
      const Eigen::Vector2d expected = kDt * d.fext.segment<2>(3);
      const double err = (p_next - p_prev - expected).cwiseAbs().maxCoeff();
      EXPECT_LE(err, 1e-12 * std::max(1.0, model.total_mass() * v.norm())) << to_string(f) << " " << trial;
      if (trial == 0) {
        EXPECT_LE(p_next.cwiseAbs().maxCoeff(), 1e-13);  // from rest: conserved at 0
      }
      worst = std::max(worst, err);
      for (int j = 0; j < d.nq; ++j) EXPECT_EQ(r.v_next[d.act[j]], d.qdot_des[j]);
      EXPECT_EQ(r.stats.tracking_residual, 0.0);
    }
    std::printf("%-11s mu = 0: friction 0, max |dp_xy - dt f_ext,xy| %.3g N s\n", to_string(f), worst);
  }
}

// ---------------------------------------------------------------------------------------------
// §10.9 separated (φ = +5 cm, approaching at 1 m/s, Δt = 1 ms) and penetrating (φ = −1 mm).
// Separated: with the default max_distance (1 cm) the contacts are dropped and every formulation
// gives f_N = 0; with max_distance = 10 cm the LCPs still give f_N = 0 exactly (r > 0), while the
// QPs (no complementarity) stop the approach 5 cm above the ground, Σ f_N = m (1 m/s + g Δt) — the
// digest's Fig. 3 artifact, which it allows ("may"); recorded, not asserted. Penetrating, at rest:
// every formulation pushes out at N ⁺v ≥ 1 mm / Δt = 1 m/s, more than the static impulse.
TEST(IdAcceptanceTest, SeparatedAndPenetratingContacts) {
  A1Stance stance(testing::a1_urdf(), 0.8);
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  const double mg_dt = model.total_mass() * 9.81 * kDt;
  const Formulation all[] = {Formulation::kLcpNoSlip, Formulation::kLcpCoulomb, Formulation::kQpCoulomb,
                             Formulation::kQpNoSlip};
  // Separated: the whole robot 5 cm above the ground moving down at 1 m/s, joints still.
  contact::ContactSet separated = stance.contacts;
  for (contact::Contact& c : separated.contacts) c.phi = 0.05;
  VectorXd v = VectorXd::Zero(18);
  v[5] = -1.0;
  const VectorXd a = VectorXd::Zero(12);
  for (Formulation f : all) {
    for (const double max_distance : {1e-2, 0.1}) {
      IdParameters p = params(f);
      p.max_distance = max_distance;
      InverseDynamics id(model, joint_dofs(model), p);
      const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, separated);
      ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f) << ": " << r.message;
      EXPECT_EQ(r.stats.contacts, max_distance < 0.05 ? 0 : 4);
      double sum_fn = 0.0;
      for (int i = 0; i < 4; ++i) {
        const double fn = r.contact_impulses[3 * i + 2];
        EXPECT_GE(fn, 0.0);
        sum_fn += fn;
      }
      if (max_distance < 0.05 || f == Formulation::kLcpNoSlip || f == Formulation::kLcpCoulomb) {
        for (int i = 0; i < 4; ++i) EXPECT_EQ(r.contact_impulses[3 * i + 2], 0.0) << to_string(f);
      }
      const Dense d(id.problem());
      EXPECT_GE((d.N * r.v_next + d.phi / kDt).minCoeff(), -1e-9);
      std::printf("separated phi = 5 cm, max_distance %.2f, %-11s: %d contacts, sum f_N = %.6g N s (%.4g m g dt), "
                  "base v_z+ = %.4f m/s\n",
                  max_distance, to_string(f), r.stats.contacts, sum_fn, sum_fn / mg_dt, r.v_next[5]);
    }
  }
  // Penetrating by 1 mm, at rest: every contact must leave at ≥ 1 mm / Δt = 1 m/s.
  contact::ContactSet penetrating = stance.contacts;
  for (contact::Contact& c : penetrating.contacts) c.phi = -1e-3;
  for (Formulation f : all) {
    InverseDynamics id(model, joint_dofs(model), params(f));
    const IdResults& r = id.solve(stance.scene.q0, VectorXd::Zero(18), a, kDt, penetrating);
    ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f) << ": " << r.message;
    const Dense d(id.problem());
    const VectorXd vn = d.N * r.v_next;
    EXPECT_GE(vn.minCoeff(), 1e-3 / kDt - 1e-9) << to_string(f);
    double sum_fn = 0.0;
    for (int i = 0; i < 4; ++i) sum_fn += r.contact_impulses[3 * i + 2];
    EXPECT_GT(sum_fn, mg_dt) << to_string(f);
    std::printf("penetrating phi = -1 mm, %-11s: min N v+ = %.12f m/s, sum f_N = %.4g m g dt\n", to_string(f),
                vn.minCoeff(), sum_fn / mg_dt);
  }
}

// ---------------------------------------------------------------------------------------------
// §10.12 inconsistent desired motion: no-slip, four feet, the hips abduct (left legs +, right
// legs −: with the hip axis along +x a positive angle moves a foot below the hip towards +y), so
// the feet would move apart. Expect kInconsistent and a ⁺v that is feasible and closest to
// q̇_des. Optimality is checked against the §4.5 QP solved here by another route: in VELOCITY
// space, ⁺v = Z_v ξ on the null space of [S; T] (no-slip exactly), the unactuated dynamics
// (M ⁺v − b)_𝒰 − N_𝒰ᵀ f_N ∈ span([S; T]_𝒰ᵀ) (f_S, f_T, ι free) as equalities B_cᵀ(…) = 0 with B_c
// an orthonormal basis of the complement, then a null-space QP in (ξ, f_N) with N ⁺v + φ/Δt ≥ 0,
// f_N ≥ 0 by ConicQpSolver (+ polishing).
TEST(IdAcceptanceTest, InconsistentSplayIsAnsweredByTheClosestFeasibleMotion) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), params(Formulation::kLcpNoSlip));
  VectorXd a = VectorXd::Zero(12);
  const double rate = 100.0;  // rad/s²: q̇_des = 0.1 rad/s at the hips after one step
  a[0] = -rate;  // FR_hip
  a[3] = rate;   // FL_hip
  a[6] = -rate;  // RR_hip
  a[9] = rate;   // RL_hip
  const VectorXd v = VectorXd::Zero(18);
  const IdResults r = id.solve(stance.scene.q0, v, a, kDt, stance.contacts);
  const Dense d(id.problem());
  // The feet really move apart (base held, joints at q̇_des): world y velocity of each foot.
  for (int i = 0; i < 4; ++i) {
    const contact::Contact& c = stance.contacts.contacts[i];
    const Eigen::Vector3d u_C(d.S.row(i)(d.act).dot(d.qdot_des), d.T.row(i)(d.act).dot(d.qdot_des),
                              d.N.row(i)(d.act).dot(d.qdot_des));
    const double vy = (c.R_WC * u_C).y();
    const bool left = c.p_W.y() > 0;
    EXPECT_GT(left ? vy : -vy, 1e-3) << "foot " << i << " y velocity " << vy;
  }
  ASSERT_EQ(r.status, IdStatus::kInconsistent) << to_string(r.status) << ": " << r.message;
  std::printf("splay: %s\n", r.message.c_str());
  // Feasible.
  EXPECT_GE((d.N * r.v_next + d.phi / kDt).minCoeff(), -1e-9);
  EXPECT_LE((d.S * r.v_next).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LE((d.T * r.v_next).cwiseAbs().maxCoeff(), 1e-9);
  for (int i = 0; i < 4; ++i) EXPECT_GE(r.contact_impulses[3 * i + 2], -1e-12);
  const VectorXd total = testing::contact_impulse(d, r) + d.P.transpose() * (kDt * r.tau);
  EXPECT_LE((d.M * r.v_next - d.b - total).cwiseAbs().maxCoeff(), 1e-9);
  const double obj_id = 0.5 * (d.P * r.v_next - d.qdot_des).squaredNorm();

  // The reference QP.
  MatrixXd ST(2 * d.n, d.m);
  ST << d.S, d.T;
  Eigen::FullPivLU<MatrixXd> lu(ST);
  const MatrixXd Zv = lu.kernel();  // 18 × 10
  ASSERT_EQ(Zv.cols(), d.m - 2 * d.n);
  const MatrixXd STU = ST(Eigen::all, d.unact);  // 8 × 6, rank 3
  Eigen::JacobiSVD<MatrixXd> svd(STU.transpose(), Eigen::ComputeFullU);
  const int rk = testing::rank_of(STU);
  const MatrixXd Bc = svd.matrixU().rightCols(6 - rk);  // complement of span(STU rows)
  const int nxi = static_cast<int>(Zv.cols()), ny = nxi + d.n;
  // Equalities Bcᵀ[(M Zv ξ)_𝒰 − N_𝒰ᵀ f_N] = Bcᵀ b_𝒰.
  MatrixXd Eq(Bc.cols(), ny);
  Eq << Bc.transpose() * (d.M * Zv)(d.unact, Eigen::all), -Bc.transpose() * d.N(Eigen::all, d.unact).transpose();
  const VectorXd eq = Bc.transpose() * d.b(d.unact);
  Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(Eq);
  const VectorXd y0 = cod.solve(eq);
  ASSERT_LE((Eq * y0 - eq).norm(), 1e-10);
  Eigen::FullPivLU<MatrixXd> lu2(Eq);
  const MatrixXd Zy = lu2.kernel();
  const int ne = static_cast<int>(Zy.cols());
  // Objective ½‖P Zv ξ − q̇_des‖² (+ 1e-12 ‖y‖² so that the Newton systems are regular).
  MatrixXd Sxi = MatrixXd::Zero(d.nq, ny);
  Sxi.leftCols(nxi) = d.P * Zv;
  solvers::qp::ConicQp qp;
  qp.resize(ne, 2 * d.n, {});
  qp.P = Zy.transpose() * (Sxi.transpose() * Sxi + 1e-12 * MatrixXd::Identity(ny, ny)) * Zy;
  qp.q = Zy.transpose() * (Sxi.transpose() * (Sxi * y0 - d.qdot_des) + 1e-12 * y0);
  // −N Zv ξ ≤ φ/Δt,  −f_N ≤ 0  (y = y0 + Zy η)
  MatrixXd Gy = MatrixXd::Zero(2 * d.n, ny);
  Gy.topLeftCorner(d.n, nxi) = -d.N * Zv;
  Gy.bottomRightCorner(d.n, d.n) = -MatrixXd::Identity(d.n, d.n);
  VectorXd hy(2 * d.n);
  hy << d.phi / kDt, VectorXd::Zero(d.n);
  qp.G = Gy * Zy;
  qp.h = hy - Gy * y0;
  solvers::qp::ConicQpParameters qpp;
  qpp.tolerance = 1e-12;
  solvers::qp::ConicQpSolver solver(qpp);
  const solvers::qp::ConicQpResults& out = solver.solve(qp);
  ASSERT_EQ(out.status, solvers::qp::ConicQpStatus::kOptimal);
  const bool polished = solver.polish(qp);
  const VectorXd y = y0 + Zy * solver.results().x;
  const VectorXd v_ref = Zv * y.head(nxi);
  const double obj_ref = 0.5 * (d.P * v_ref - d.qdot_des).squaredNorm();
  EXPECT_NEAR(obj_id, obj_ref, 1e-9 * std::max(obj_ref, 1e-12)) << "ID " << obj_id << " reference " << obj_ref;
  EXPECT_LE((d.P * (r.v_next - v_ref)).norm(), 1e-6 * d.qdot_des.norm());
  std::printf("splay: 1/2|P v+ - qdot_des|^2 ID %.12g, velocity-space QP %.12g (polished %d), |P dv| %.3g, "
              "|qdot_des| %.3g\n",
              obj_id, obj_ref, polished, (d.P * (r.v_next - v_ref)).norm(), d.qdot_des.norm());

  // §4.5's feasibility claim: the forward no-slip problem with τ = 0 has a solution, which is a
  // feasible point of the QP (so its objective bounds the ID's from above).
  const ForwardNoSlip f0 = forward_no_slip(d, VectorXd::Zero(d.nq));
  const LemkeResults lr = LemkeSolver().solve(f0.lcp.Q, f0.lcp.r);
  ASSERT_TRUE(lemke_ok(lr)) << solvers::lcp::to_string(lr.status);
  const VectorXd v0 = f0.v0 + f0.Gamma * d.N.transpose() * lr.z;
  EXPECT_GE((d.N * v0 + d.phi / kDt).minCoeff(), -1e-9);
  EXPECT_LE((ST * v0).cwiseAbs().maxCoeff(), 1e-9);
  const double obj0 = 0.5 * (d.P * v0 - d.qdot_des).squaredNorm();
  EXPECT_LE(obj_id, obj0 + 1e-12);
  std::printf("splay: tau = 0 forward no-slip problem solved (objective %.6g >= ID's %.6g)\n", obj0, obj_id);
}

// ---------------------------------------------------------------------------------------------
// §10.13 MINDIFF inside ID_LCP,μ: one contact, 6 LCP variables, 64 leaves. The reference
// enumerates the 64 complementary bases itself on the LCP rebuilt here (digest §5.3), keeps the
// feasible ones, and computes x = [⁺v_𝒰; ι] for each.
struct Leaf {
  VectorXd z, x;
};
std::vector<Leaf> enumerate_leaves(const Dense& d, const Lcp& lcp) {
  const int L = static_cast<int>(lcp.r.size());
  const double tol = 1e-9 * std::max(1.0, lcp.r.cwiseAbs().maxCoeff());
  const MatrixXd Gamma = d.gamma_P();
  const VectorXd vs = d.vstar();
  const MatrixXd R = d.R();
  std::vector<Leaf> leaves;
  for (int mask = 0; mask < (1 << L); ++mask) {
    std::vector<int> alpha;
    for (int i = 0; i < L; ++i)
      if (mask & (1 << i)) alpha.push_back(i);
    VectorXd z = VectorXd::Zero(L);
    if (!alpha.empty()) {
      Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(lcp.Q(alpha, alpha));
      const VectorXd za = cod.solve(-lcp.r(alpha));
      for (size_t q = 0; q < alpha.size(); ++q) z[alpha[q]] = za[q];
    }
    const VectorXd w = lcp.Q * z + lcp.r;
    bool ok = true;
    for (int i = 0; i < L; ++i) {
      const bool in = mask & (1 << i);
      if (in && (std::abs(w[i]) > tol || z[i] < -tol)) ok = false;
      if (!in && w[i] < -tol) ok = false;
    }
    if (!ok) continue;
    const VectorXd zNF = z.head(5 * d.n);
    const VectorXd vp = vs + Gamma * R.transpose() * zNF;
    const VectorXd iota = (d.M * vp - d.b - R.transpose() * zNF)(d.act);
    VectorXd x(d.unact.size() + d.nq);
    x << vp(d.unact), iota;
    leaves.push_back({z, x});
  }
  return leaves;
}

// One MINDIFF check: solve request A with a reset solver (Lemke; it seeds the target x_A), then
// request B (MINDIFF, target x_A), then B again (target = B's own answer). Returns the number of
// distinct solutions of B's LCP and whether MINDIFF's answer differs from plain Lemke's.
struct MindiffCase {
  size_t distinct = 0;
  bool differs_from_lemke = false;
};
MindiffCase check_mindiff(InverseDynamics& id, const VectorXd& q, const contact::ContactSet& contacts,
                          const VectorXd& vA, const VectorXd& aA, const VectorXd& vB, const VectorXd& aB,
                          const std::string& label) {
  SCOPED_TRACE(label);
  MindiffCase out;
  auto x_of = [&](const IdResults& r) {
    const Dense d(id.problem());
    VectorXd x(d.unact.size() + d.nq);
    x << r.v_next(d.unact), kDt * r.tau;
    return x;
  };
  id.reset();
  const IdResults rA = id.solve(q, vA, aA, kDt, contacts);
  EXPECT_EQ(rA.status, IdStatus::kSolved) << rA.message;
  EXPECT_FALSE(rA.stats.used_mindiff);
  const VectorXd xA = x_of(rA);
  const IdResults rB = id.solve(q, vB, aB, kDt, contacts);
  EXPECT_EQ(rB.status, IdStatus::kSolved) << rB.message;
  if (rB.status != IdStatus::kSolved) return out;
  EXPECT_TRUE(rB.stats.used_mindiff);
  EXPECT_EQ(rB.stats.lcp_size, 6);
  const Dense d(id.problem());
  const Lcp lcp = testing::ap_lcp(d, d.gamma_P(), d.vstar());
  const std::vector<Leaf> leaves = enumerate_leaves(d, lcp);
  EXPECT_FALSE(leaves.empty());
  double best = std::numeric_limits<double>::infinity();
  std::vector<VectorXd> distinct;
  for (const Leaf& l : leaves) {
    const testing::LcpCheck c = check_lcp(lcp, l.z);  // every feasible leaf solves the LCP
    EXPECT_GE(c.min_w, -1e-9);
    EXPECT_LE(c.complementarity, 1e-9 * std::max(1.0, l.z.cwiseAbs().maxCoeff()));
    best = std::min(best, (l.x - xA).norm());
    bool is_new = true;
    for (const VectorXd& x : distinct) is_new = is_new && (x - l.x).norm() > 1e-9 * std::max(1.0, x.norm());
    if (is_new) distinct.push_back(l.x);
  }
  out.distinct = distinct.size();
  const VectorXd xB = x_of(rB);
  const double dist = (xB - xA).norm();
  EXPECT_NEAR(dist, best, 1e-9 * std::max(1.0, best));
  const testing::LcpCheck c = check_lcp(lcp, testing::z_from_results(d, rB));
  EXPECT_GE(c.min_z, -1e-9);
  EXPECT_GE(c.min_w, -1e-9);
  EXPECT_LE(c.complementarity, 1e-9);
  EXPECT_EQ(rB.stats.mindiff_leaves, static_cast<int>(leaves.size()));
  // Lemke on the same data (a solver without MINDIFF) may pick another solution.
  IdParameters plain_params;
  plain_params.formulation = Formulation::kLcpCoulomb;
  InverseDynamics plain(id.model(), id.actuated(), plain_params);
  const IdResults& rl = plain.solve(q, vB, aB, kDt, contacts);
  out.differs_from_lemke = (rl.v_next - rB.v_next).norm() > 1e-9;
  // Identical data again: the target is now xB itself, so the same solution, bit for bit.
  const IdResults rB2 = id.solve(q, vB, aB, kDt, contacts);
  EXPECT_EQ(rB2.status, IdStatus::kSolved);
  EXPECT_TRUE(rB2.stats.used_mindiff);
  EXPECT_EQ(rB2.v_next, rB.v_next);
  EXPECT_EQ(rB2.tau, rB.tau);
  EXPECT_EQ(rB2.contact_impulses, rB.contact_impulses);
  std::printf("MINDIFF %s: %zu feasible leaves of 64 (ID reports %d), %zu distinct solutions, |x_B - x_A| %.9g, "
              "nearest %.9g, Lemke's differs: %d\n",
              label.c_str(), leaves.size(), rB.stats.mindiff_leaves, distinct.size(), dist, best,
              out.differs_from_lemke);
  return out;
}

TEST(IdAcceptanceTest, MindiffReturnsTheNearestLcpSolution) {
  // μ = 0.5, one foot: a sequence of nearby requests (one LCP solution each, mostly).
  {
    A1Stance stance(testing::a1_urdf(), 0.5);
    stance.touch();
    const contact::ContactSet contacts = subset(stance.contacts, {0});
    IdParameters p = params(Formulation::kLcpCoulomb);
    p.mindiff = true;
    InverseDynamics id(stance.scene.model, joint_dofs(stance.scene.model), p);
    std::mt19937 rng(89);
    VectorXd v = random_vector(rng, 18, 0.1);
    v[5] = -0.3;
    const VectorXd a = random_vector(rng, 12, 2.0);
    for (int step = 0; step < 6; ++step) {
      VectorXd v2 = v + random_vector(rng, 18, 0.05);
      v2[4] += step * 0.1;  // sideways: sliding for later steps
      const VectorXd a2 = a + random_vector(rng, 12, 1.0);
      check_mindiff(id, stance.scene.q0, contacts, v, a, v2, a2, "mu 0.5 step " + std::to_string(step));
    }
  }
  // μ = 5, one foot, fast random requests: about 6% of them have several distinct LCP
  // solutions (3: measured on 300); for each such request B, the target comes from A = B with
  // ⁻v perturbed by 0.01 m/s, so that MINDIFF has a real choice to make.
  A1Stance stance(testing::a1_urdf(), 5.0);
  stance.touch();
  const contact::ContactSet contacts = subset(stance.contacts, {0});
  const multibody::Model& model = stance.scene.model;
  IdParameters p = params(Formulation::kLcpCoulomb);
  p.mindiff = true;
  InverseDynamics id(model, joint_dofs(model), p);
  InverseDynamics probe(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  std::mt19937 rng(7);
  int found = 0, differs = 0;
  for (int t = 0; t < 300 && found < 6; ++t) {
    const VectorXd vB = random_vector(rng, 18, 0.5);
    const VectorXd aB = random_vector(rng, 12, 20.0);
    const VectorXd vA = vB + random_vector(rng, 18, 0.01);
    const IdResults& r = probe.solve(stance.scene.q0, vB, aB, kDt, contacts);
    if (r.status != IdStatus::kSolved) continue;
    const Dense d(probe.problem());
    const std::vector<Leaf> leaves = enumerate_leaves(d, testing::ap_lcp(d, d.gamma_P(), d.vstar()));
    std::vector<VectorXd> distinct;
    for (const Leaf& l : leaves) {
      bool is_new = true;
      for (const VectorXd& x : distinct) is_new = is_new && (x - l.x).norm() > 1e-9 * std::max(1.0, x.norm());
      if (is_new) distinct.push_back(l.x);
    }
    if (distinct.size() < 2) continue;
    ++found;
    const MindiffCase c = check_mindiff(id, stance.scene.q0, contacts, vA, aB, vB, aB,
                                        "mu 5 request " + std::to_string(t));
    EXPECT_GE(c.distinct, 2u);
    differs += c.differs_from_lemke;
    // Targets from farther requests (⁻v ± 0.2 m/s, q̈_des ± 10 rad/s²), until one of them makes
    // MINDIFF choose another solution than Lemke's.
    for (int k = 0; k < 10 && !c.differs_from_lemke; ++k) {
      const VectorXd vA2 = vB + random_vector(rng, 18, 0.2), aA2 = aB + random_vector(rng, 12, 10.0);
      const MindiffCase c2 = check_mindiff(id, stance.scene.q0, contacts, vA2, aA2, vB, aB,
                                           "mu 5 request " + std::to_string(t) + " target " + std::to_string(k));
      if (c2.differs_from_lemke) {
        ++differs;
        break;
      }
    }
  }
  EXPECT_GE(found, 3);
  EXPECT_GE(differs, 1);
  std::printf("MINDIFF mu 5: %d requests with several LCP solutions, MINDIFF's choice differs from Lemke's in %d\n",
              found, differs);
}

// ---------------------------------------------------------------------------------------------
// Bad input: IdProblem::validate names the field; IdSolver::solve and InverseDynamics::solve
// throw std::invalid_argument.
IdProblem small_problem() {
  IdProblem p;
  p.resize(3, 1, 1);
  p.M << 2.0, 0.1, 0.0, 0.1, 1.0, 0.2, 0.0, 0.2, 1.5;
  p.actuated = {2};
  p.qdot_des << 0.1;
  p.N << 0.0, 1.0, 0.0;
  p.S << 1.0, 0.0, 0.0;
  p.T << 0.0, 0.0, 1.0;
  p.mu << 0.5;
  p.f_ext << 0.0, -9.81, 0.0;
  return p;
}

void expect_invalid(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  } catch (...) {
    ADD_FAILURE() << "not std::invalid_argument";
  }
}

TEST(IdAcceptanceTest, ValidateNamesTheBadField) {
  const IdProblem good = small_problem();
  EXPECT_NO_THROW(good.validate());
  IdSolver solver;
  IdResults res;
  EXPECT_NO_THROW(solver.solve(good, res));
  struct Case {
    std::string needle;
    std::function<void(IdProblem&)> mutate;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Case> cases = {
      {"M(1, 0)", [&](IdProblem& p) { p.M(1, 0) = nan; }},
      {"v[2]", [&](IdProblem& p) { p.v[2] = nan; }},
      {"f_ext[0]", [&](IdProblem& p) { p.f_ext[0] = std::numeric_limits<double>::infinity(); }},
      {"qdot_des[0]", [&](IdProblem& p) { p.qdot_des[0] = nan; }},
      {"N(0, 1)", [&](IdProblem& p) { p.N(0, 1) = nan; }},
      {"phi[0]", [&](IdProblem& p) { p.phi[0] = nan; }},
      {"mu[0]", [&](IdProblem& p) { p.mu[0] = nan; }},
      {"mu[0] must be >= 0", [&](IdProblem& p) { p.mu[0] = -0.1; }},
      {"time_step", [&](IdProblem& p) { p.time_step = 0.0; }},
      {"time_step", [&](IdProblem& p) { p.time_step = -1e-3; }},
      {"time_step", [&](IdProblem& p) { p.time_step = nan; }},
      {"actuated must be strictly ascending", [&](IdProblem& p) {
         p.actuated = {2, 1};
         p.qdot_des.setZero(2);
       }},
      {"actuated must be strictly ascending", [&](IdProblem& p) {
         p.actuated = {1, 1};
         p.qdot_des.setZero(2);
       }},
      {"actuated[0]", [&](IdProblem& p) { p.actuated = {3}; }},
      {"M must be 3 x 3", [&](IdProblem& p) { p.M.conservativeResize(3, 2); }},
      {"M is not symmetric", [&](IdProblem& p) { p.M(0, 1) = 0.5; }},
      {"f_ext must have", [&](IdProblem& p) { p.f_ext.resize(2); }},
      {"qdot_des must have", [&](IdProblem& p) { p.qdot_des.resize(2); }},
      {"N must be n x m", [&](IdProblem& p) { p.N.resize(2, 3); }},
      {"S must be n x m", [&](IdProblem& p) { p.S.resize(1, 2); }},
      {"T must be n x m", [&](IdProblem& p) { p.T.resize(0, 3); }},
      {"mu must have", [&](IdProblem& p) { p.mu.resize(2); }},
  };
  for (const Case& c : cases) {
    IdProblem p = good;
    c.mutate(p);
    expect_invalid([&] { p.validate(); }, c.needle);
    expect_invalid([&] { solver.solve(p, res); }, c.needle);
  }
  // The unactuated block must be positive definite (checked by the factorization in solve()).
  IdProblem p = good;
  p.M.setZero();
  p.M(2, 2) = 1.0;
  expect_invalid([&] { solver.solve(p, res); }, "M_UU");
}

TEST(IdAcceptanceTest, InverseDynamicsRejectsBadInput) {
  A1Stance stance;
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model));
  const VectorXd q = stance.scene.q0, v = VectorXd::Zero(18);
  expect_invalid([&] { id.solve(q, v, VectorXd::Zero(11), kDt, stance.contacts); }, "qdd_des");
  expect_invalid([&] { id.solve(q, v, VectorXd::Zero(18), kDt, stance.contacts); }, "qdd_des");
  VectorXd a = VectorXd::Zero(12);
  a[4] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid([&] { id.solve(q, v, a, kDt, stance.contacts); }, "qdd_des[4]");
  expect_invalid([&] { id.solve(q, v, VectorXd::Zero(12), 0.0, stance.contacts); }, "dt");
  EXPECT_THROW(id.solve(q, VectorXd::Zero(17), VectorXd::Zero(12), kDt, stance.contacts), std::invalid_argument);
  contact::ContactSet bad = stance.contacts;
  bad.contacts[1].material.mu = -1.0;
  expect_invalid([&] { id.solve(q, v, VectorXd::Zero(12), kDt, bad); }, "contact 1");
  EXPECT_THROW(InverseDynamics(model, {6, 6}), std::invalid_argument);
  EXPECT_THROW(InverseDynamics(model, {18}), std::invalid_argument);
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
