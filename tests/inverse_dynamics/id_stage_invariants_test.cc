// Stage I / Stage II invariants of the complementarity-free formulations ID_QP,μ and ID_QP,∞
// (Zapolsky & Drumwright §6; digest ../shared/digests/inverse-dynamics.md §6.3–6.6 and
// acceptance item §10.10), on the Unitree A1 (m = 18, n_q = 12, floating base first).
//
// Stage I is computed three ways and compared:
//   (a) the full form of digest §6.3: X = [M Pᵀ; P 0], X⁻¹ = [Γ Δ; Δᵀ Ε] (by a dense LU of X),
//       min ½ zᵀ(RᵀΓR)z + zᵀRᵀΓ(−κ) s.t. N Γ R z ≥ −φ/Δt − N(Γ(−κ) + Δ q̇_des), z ≥ 0, friction;
//   (b) the paper's reduced form of §6.4 (Eqs. 85–101): M = [A B; Bᵀ C], M⁻¹ = [D E; Eᵀ G],
//       f_ID = C q̈_des − f_ext,q, j, k, Z = ([D E] − E G⁻¹[Eᵀ G]) R, p = j + E G⁻¹(q̇_des − k),
//       min ½ zᵀZᵀAZz + zᵀ(ZᵀAp + ZᵀB q̇_des) s.t. N[Zz + p; q̇_des] ≥ −φ/Δt, z ≥ 0, friction,
//       τ = f_ID + G⁻¹(q̇_des − k − [Eᵀ G] R z)/Δt;
//   (c) IdSolver with stage_two = false (the 6 × 6 closed form in the unactuated subspace, its
//       QP solved as an LCP by Lemke);
// (a) and (b) are solved here by the interior-point ConicQpSolver followed by its active-set
// polishing. Here R is the digest's m × 5n matrix [Nᵀ Fᵀ] (F = [S; T; −S; −T] per contact).
// Then Stage II (IdSolver with stage_two = true) against Stage I: same energy, same N ⁺v, every
// constraint, ‖τ_II‖ ≤ ‖τ_I‖, and ‖τ_II‖ against the least-torque point of Stage I's optimal set
// computed here (a QP over an SVD null-space basis of R_𝒰ᵀ); Stage II is a no-op when that null
// space is empty.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/solvers/qp/conic_qp.h"
#include "inverse_dynamics/id_reference.h"
#include "inverse_dynamics/id_test_util.h"

namespace coulomb::inverse_dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using testing::A1Stance;
using testing::Dense;

constexpr double kDt = 1e-3;

VectorXd random_vector(std::mt19937& rng, int n, double scale) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return scale * VectorXd::NullaryExpr(n, [&] { return u(rng); });
}

IdParameters params(Formulation f, bool stage_two) {
  IdParameters p;
  p.formulation = f;
  p.stage_two = stage_two;
  return p;
}

/// Solves min ½ zᵀHz + cᵀz s.t. G z ≤ h (orthant rows) by ConicQpSolver at tolerance 1e-12, then
/// polishing; returns z.
VectorXd solve_qp(const MatrixXd& H, const VectorXd& c, const MatrixXd& G, const VectorXd& h, bool* polished) {
  solvers::qp::ConicQp qp;
  qp.resize(static_cast<int>(c.size()), static_cast<int>(h.size()), {});
  qp.P = 0.5 * (H + H.transpose());
  qp.q = c;
  qp.G = G;
  qp.h = h;
  solvers::qp::ConicQpParameters prm;
  prm.tolerance = 1e-12;
  solvers::qp::ConicQpSolver solver(prm);
  const solvers::qp::ConicQpResults& out = solver.solve(qp);
  EXPECT_EQ(out.status, solvers::qp::ConicQpStatus::kOptimal);
  *polished = solver.polish(qp);
  return solver.results().x;
}

/// The Stage I inequality rows shared by (a) and (b) for z = [f_N; f_F], n contacts, as G z ≤ h:
/// −z ≤ 0; (Coulomb) Σ_j f_F,ij − μ_i f_N,i ≤ 0; then the caller's non-penetration rows.
void nonnegativity_and_friction(const Dense& d, bool coulomb, MatrixXd& G, VectorXd& h) {
  const int n = d.n, nz = 5 * n, nf = coulomb ? n : 0;
  G = MatrixXd::Zero(nz + nf + n, nz);
  h = VectorXd::Zero(nz + nf + n);
  G.topRows(nz) = -MatrixXd::Identity(nz, nz);
  for (int i = 0; i < nf; ++i) {
    G(nz + i, i) = -d.mu[i];
    G.block(nz + i, n + 4 * i, 1, 4).setOnes();
  }
}

struct StageOne {
  VectorXd z, v, tau;
  double energy = 0.0;
  bool polished = false;
};

// (a) The full form, digest §6.3.
StageOne full_form(const Dense& d, bool coulomb, MatrixXd* X_inverse_blocks_check = nullptr) {
  const int m = d.m, nq = d.nq, n = d.n;
  MatrixXd X = MatrixXd::Zero(m + nq, m + nq);
  X.topLeftCorner(m, m) = d.M;
  X.topRightCorner(m, nq) = d.P.transpose();
  X.bottomLeftCorner(nq, m) = d.P;
  const MatrixXd Xi = X.fullPivLu().inverse();
  const MatrixXd Gamma = Xi.topLeftCorner(m, m), Delta = Xi.topRightCorner(m, nq);
  const MatrixXd Eps = Xi.bottomRightCorner(nq, nq);
  if (X_inverse_blocks_check) {
    // Γ = Γ_P, Δ = M⁻¹ Pᵀ Y_P, Ε = −Y_P (digest §6.3), ΓMΓ = Γ, ΓMΔ = 0.
    (*X_inverse_blocks_check).resize(1, 5);
    (*X_inverse_blocks_check) << (Gamma - d.gamma_P()).norm() / Gamma.norm(),
        (Delta - d.delta_P()).norm() / Delta.norm(), (Eps + d.Y_P()).norm() / Eps.norm(),
        (Gamma * d.M * Gamma - Gamma).norm() / Gamma.norm(), (Gamma * d.M * Delta).norm() / Delta.norm();
  }
  const MatrixXd R = d.R().transpose();  // m × 5n
  const VectorXd mkappa = d.b;          // −κ = M ⁻v + Δt f_ext
  MatrixXd G;
  VectorXd h;
  nonnegativity_and_friction(d, coulomb, G, h);
  const int nz = 5 * n, top = static_cast<int>(h.size()) - n;
  G.bottomRows(n) = -d.N * Gamma * R;
  h.tail(n) = d.phi / d.dt + d.N * (Gamma * mkappa + Delta * d.qdot_des);
  StageOne s;
  s.z = solve_qp(R.transpose() * Gamma * R, R.transpose() * Gamma * mkappa, G, h, &s.polished);
  (void)nz;
  (void)top;
  s.v = Gamma * (mkappa + R * s.z) + Delta * d.qdot_des;
  const VectorXd iota = d.Y_P() * (d.qdot_des - d.P * d.Minv * (mkappa + R * s.z));
  s.tau = iota / d.dt;
  s.energy = 0.5 * s.v.dot(d.M * s.v);
  return s;
}

// (b) The reduced form, digest §6.4 (Eqs. 85–101), base-first ordering (the A1's floating base
// is velocities 0–5).
struct Reduced {
  StageOne s;
  double z_identity = 0.0;        // ‖Z − A⁻¹ R_b‖ / ‖Z‖
  double hessian_identity = 0.0;  // ‖ZᵀAZ − RᵀΓR‖ / ‖RᵀΓR‖
  int hessian_rank = 0;
};
Reduced reduced_form(const Dense& d, bool coulomb) {
  const int nb = static_cast<int>(d.unact.size()), nq = d.nq, n = d.n;
  for (int i = 0; i < nb; ++i) EXPECT_EQ(d.unact[i], i);  // base first
  const MatrixXd A = d.M.topLeftCorner(nb, nb), B = d.M.topRightCorner(nb, nq), C = d.M.bottomRightCorner(nq, nq);
  const MatrixXd D = d.Minv.topLeftCorner(nb, nb), E = d.Minv.topRightCorner(nb, nq);
  const MatrixXd Gm = d.Minv.bottomRightCorner(nq, nq);
  const MatrixXd Ginv = Gm.inverse();
  const VectorXd vb = d.v.head(nb), vq = d.v.tail(nq);
  const VectorXd qdd_des = (d.qdot_des - vq) / d.dt;
  const VectorXd f_id = C * qdd_des - d.fext.tail(nq);  // Eq. 87
  VectorXd force = d.dt * d.fext;
  force.tail(nq) += d.dt * f_id;
  MatrixXd DE(nb, d.m), EG(nq, d.m);
  DE << D, E;
  EG << E.transpose(), Gm;
  const VectorXd j = vb + DE * force;  // Eq. 85
  const VectorXd k = vq + EG * force;  // Eq. 86
  const MatrixXd R = d.R().transpose();  // m × 5n
  const MatrixXd Z = (DE - E * Ginv * EG) * R;  // Eq. 92
  const VectorXd p = j + E * Ginv * (d.qdot_des - k);  // Eq. 93
  Reduced out;
  const MatrixXd Zref = A.llt().solve(R.topRows(nb));  // digest: Z = A⁻¹ R_b
  out.z_identity = (Z - Zref).norm() / Z.norm();
  const MatrixXd H = Z.transpose() * A * Z;  // Eqs. 95–98
  const MatrixXd Hfull = R.transpose() * d.gamma_P() * R;
  out.hessian_identity = (H - Hfull).norm() / Hfull.norm();
  out.hessian_rank = testing::rank_of(H, 1e-10);
  const VectorXd c = Z.transpose() * A * p + Z.transpose() * B * d.qdot_des;
  MatrixXd G;
  VectorXd h;
  nonnegativity_and_friction(d, coulomb, G, h);
  // Eq. 99: N [Z z + p; q̇_des] ≥ −φ/Δt  ⇔  −N_b Z z ≤ φ/Δt + N_b p + N_q q̇_des.
  const MatrixXd Nb = d.N.leftCols(nb), Nq = d.N.rightCols(nq);
  G.bottomRows(n) = -Nb * Z;
  h.tail(n) = d.phi / d.dt + Nb * p + Nq * d.qdot_des;
  out.s.z = solve_qp(H, c, G, h, &out.s.polished);
  out.s.v.resize(d.m);
  out.s.v << Z * out.s.z + p, d.qdot_des;  // Eq. 94
  const VectorXd x = Ginv * (d.qdot_des - k - EG * R * out.s.z) / d.dt;  // Eq. 90
  out.s.tau = f_id + x;
  out.s.energy = 0.5 * out.s.v.dot(d.M * out.s.v);
  return out;
}

double rel(const VectorXd& a, const VectorXd& b, double floor) { return (a - b).norm() / std::max(b.norm(), floor); }

// Stage I three ways: the A1 on one foot (rank R_𝒰 = 3, so ker R_𝒰ᵀ holds only the f_S⁺ + f_S⁻
// and f_T⁺ + f_T⁻ pairs, which change neither ⁺v nor τ: τ is unique and must agree) and on four
// feet (⁺v and the energy are unique, τ is not: ker R_𝒰ᵀ has dimension 20 − 6 = 14, of which only
// 8 are the ± pairs; the rest are internal forces between the feet, which the joints must carry).
// (Two feet do not make τ unique either: a rigid body held at two points keeps the rotation
// about the line through them, rank R_𝒰 = 5, and the squeeze along that line is internal.)
TEST(IdStageInvariantsTest, StageOneThreeWaysAgree) {
  std::mt19937 rng(97);
  for (Formulation f : {Formulation::kQpCoulomb, Formulation::kQpNoSlip}) {
    const bool coulomb = f == Formulation::kQpCoulomb;
    for (const std::vector<int>& feet : {std::vector<int>{0}, std::vector<int>{0, 1, 2, 3}}) {
      A1Stance stance(testing::a1_urdf(), 0.6);
      stance.touch();
      contact::ContactSet contacts;
      for (int i : feet) contacts.contacts.push_back(stance.contacts.contacts[i]);
      const multibody::Model& model = stance.scene.model;
      InverseDynamics id(model, joint_dofs(model), params(f, false));
      double worst_v = 0, worst_tau = 0, worst_e = 0, worst_z = 0, worst_h = 0;
      int max_rank = 0, polished = 0, qps = 0;
      for (int trial = 0; trial < 8; ++trial) {
        VectorXd v = random_vector(rng, 18, 0.2);
        v[5] -= 0.1;
        const VectorXd a = random_vector(rng, 12, 3.0);
        const IdResults& r = id.solve(stance.scene.q0, v, a, kDt, contacts);
        ASSERT_EQ(r.status, IdStatus::kSolved) << r.message;
        const Dense d(id.problem());
        MatrixXd blocks;
        const StageOne sa = full_form(d, coulomb, &blocks);
        EXPECT_LE(blocks.maxCoeff(), 1e-12) << blocks;
        const Reduced rb = reduced_form(d, coulomb);
        const StageOne& sb = rb.s;
        polished += sa.polished + sb.polished;
        qps += 2;
        EXPECT_LE(rb.z_identity, 1e-12);
        EXPECT_LE(rb.hessian_identity, 1e-12);
        EXPECT_LE(rb.hessian_rank, 6);
        max_rank = std::max(max_rank, rb.hessian_rank);
        worst_z = std::max(worst_z, rb.z_identity);
        worst_h = std::max(worst_h, rb.hessian_identity);
        const double vs = std::max(r.v_next.norm(), 1e-2);
        for (const StageOne* s : {&sa, &sb}) {
          EXPECT_LE((s->v - r.v_next).norm() / vs, 1e-8) << to_string(f) << " n " << feet.size() << " trial " << trial;
          EXPECT_NEAR(s->energy, r.stats.kinetic_energy, 1e-8 * r.stats.kinetic_energy);
          worst_v = std::max(worst_v, (s->v - r.v_next).norm() / vs);
          worst_e = std::max(worst_e, std::abs(s->energy - r.stats.kinetic_energy) / r.stats.kinetic_energy);
        }
        const double tau_ab = rel(sa.tau, sb.tau, 1.0), tau_ac = rel(sa.tau, r.tau, 1.0);
        if (feet.size() == 1) {
          const MatrixXd RU = d.R()(Eigen::all, d.unact);
          ASSERT_EQ(testing::rank_of(RU), 3);
          EXPECT_LE(tau_ab, 1e-8);
          EXPECT_LE(tau_ac, 1e-8);
          worst_tau = std::max({worst_tau, tau_ab, tau_ac});
        } else {
          worst_tau = std::max(worst_tau, tau_ac);  // recorded, not unique
        }
      }
      std::printf("%-10s %zu contact(s): Stage I (a) full / (b) reduced vs (c) IdSolver: max rel |dv| %.3g, rel |dE| %.3g, "
                  "rel |dtau| %.3g%s; |Z - A^-1 R_b|/|Z| %.3g, |Z^T A Z - R^T Gamma R| %.3g, Hessian rank %d; "
                  "%d of %d reference QPs polished\n",
                  to_string(f), feet.size(), worst_v, worst_e, worst_tau,
                  feet.size() == 1 ? "" : " (not unique: recorded)", worst_z, worst_h, max_rank, polished, qps);
    }
  }
}

// Stage II against Stage I on the four-foot stance.
TEST(IdStageInvariantsTest, StageTwoKeepsStageOneAndLowersTheTorque) {
  std::mt19937 rng(101);
  for (Formulation f : {Formulation::kQpCoulomb, Formulation::kQpNoSlip}) {
    const bool coulomb = f == Formulation::kQpCoulomb;
    const double mu = 0.6;
    A1Stance stance(testing::a1_urdf(), mu);
    stance.touch();
    const multibody::Model& model = stance.scene.model;
    InverseDynamics one(model, joint_dofs(model), params(f, false));
    InverseDynamics two(model, joint_dofs(model), params(f, true));
    double worst_e = 0, worst_nv = 0, worst_ratio = 0, worst_opt = 0;
    for (int trial = 0; trial < 10; ++trial) {
      VectorXd v = trial == 0 ? VectorXd::Zero(18) : random_vector(rng, 18, 0.2);
      if (trial > 0) v[5] -= 0.1;
      const VectorXd a = trial == 0 ? VectorXd::Zero(12) : random_vector(rng, 12, 3.0);
      const IdResults r1 = one.solve(stance.scene.q0, v, a, kDt, stance.contacts);
      const IdResults& r2 = two.solve(stance.scene.q0, v, a, kDt, stance.contacts);
      ASSERT_EQ(r1.status, IdStatus::kSolved) << r1.message;
      ASSERT_EQ(r2.status, IdStatus::kSolved) << r2.message;
      EXPECT_GT(r2.stats.stage_two_dimension, 0);
      const Dense d(two.problem());
      // Energy and N ⁺v unchanged. (Relative to the energy, floored at ½ m_tot (g Δt)² ≈ 6.6e-4 J:
      // the static stance of trial 0 has ⁺v = 0 and an energy of round-off size.)
      const double e_floor = 0.5 * model.total_mass() * std::pow(9.81 * kDt, 2);
      const double de = std::abs(r2.stats.kinetic_energy - r1.stats.kinetic_energy) /
                        std::max(r1.stats.kinetic_energy, e_floor);
      EXPECT_LE(de, 1e-9) << to_string(f) << " trial " << trial;
      const double dnv = (d.N * (r2.v_next - r1.v_next)).cwiseAbs().maxCoeff();
      EXPECT_LE(dnv, 1e-9);
      worst_e = std::max(worst_e, de);
      worst_nv = std::max(worst_nv, dnv);
      // Every constraint.
      const double scale = model.total_mass() * 9.81 * kDt;
      EXPECT_LE(r2.stats.tracking_residual, 1e-10);
      EXPECT_LE(r2.stats.dynamics_residual, 1e-9 * scale);
      EXPECT_GE((d.N * r2.v_next + d.phi / kDt).minCoeff(), -1e-9);
      for (int i = 0; i < d.n; ++i) {
        const double fs = r2.contact_impulses[3 * i], ft = r2.contact_impulses[3 * i + 1];
        const double fn = r2.contact_impulses[3 * i + 2];
        EXPECT_GE(fn, -1e-12 * scale);
        if (coulomb) {
          EXPECT_LE(std::abs(fs) + std::abs(ft), mu * fn + 1e-12 * scale);
        }
      }
      // ‖τ_II‖ ≤ ‖τ_I‖ up to the tie-breaker ε‖z‖² (ε = 1e-6 relative).
      const double ratio = r2.tau.norm() / r1.tau.norm();
      EXPECT_LE(ratio, 1.0 + 1e-6) << to_string(f) << " trial " << trial;
      worst_ratio = std::max(worst_ratio, ratio);
      // The least-torque point of Stage I's optimal set, computed here: z = z_I + W y with W an SVD
      // null-space basis of R_𝒰ᵀ (⁺v, hence the energy and N ⁺v, fixed), ι(z) = ι(z_I) − (Rᵀ W y)_𝒜,
      // min ½‖ι‖² s.t. z ≥ 0 and the friction rows. z_I: Stage I's impulses from IdSolver (net
      // f_F, which has the same Rᵀz).
      const VectorXd zI = testing::z_from_results(d, r1).head(5 * d.n);
      const MatrixXd RT = d.R().transpose();  // m × 5n
      Eigen::JacobiSVD<MatrixXd> svd(RT(d.unact, Eigen::all), Eigen::ComputeFullV);
      const int rk = testing::rank_of(RT(d.unact, Eigen::all));
      const MatrixXd W = svd.matrixV().rightCols(5 * d.n - rk);
      const MatrixXd RAW = (RT * W)(d.act, Eigen::all);
      const VectorXd iota_I = kDt * r1.tau;
      MatrixXd G;
      VectorXd h;
      nonnegativity_and_friction(d, coulomb, G, h);
      G.conservativeResize(G.rows() - d.n, Eigen::NoChange);  // no non-penetration rows (⁺v fixed)
      h.conservativeResize(h.rows() - d.n);
      const MatrixXd Gw = G * W;
      const VectorXd hw = h - G * zI;
      bool polished = false;
      const VectorXd y = solve_qp(RAW.transpose() * RAW + 1e-14 * MatrixXd::Identity(W.cols(), W.cols()),
                                  -RAW.transpose() * iota_I, Gw, hw, &polished);
      const VectorXd tau_opt = (iota_I - RAW * y) / kDt;
      const double opt = r2.tau.norm() / tau_opt.norm() - 1.0;
      EXPECT_LE(std::abs(opt), 1e-5) << to_string(f) << " trial " << trial << " |tau_II| " << r2.tau.norm()
                                     << " least " << tau_opt.norm();
      worst_opt = std::max(worst_opt, std::abs(opt));
    }
    std::printf("%-10s Stage II vs Stage I, 4 feet: rel |dE| %.3g, |d(N v+)| %.3g, max |tau_II|/|tau_I| %.9f, "
                "|tau_II| vs least-torque point of Stage I's optimal set: rel %.3g\n",
                to_string(f), worst_e, worst_nv, worst_ratio, worst_opt);
  }
}

// An empty null space: Stage II changes nothing. (1) One frictionless contact (QP,μ gives a
// frictionless contact no friction variables: z = f_N, R_𝒰ᵀ of rank 1) and three frictionless
// feet (N_𝒰 of rank 3); (2) no actuated coordinate at all (n_q = 0: Stage II is skipped).
TEST(IdStageInvariantsTest, EmptyNullSpaceMakesStageTwoANoOp) {
  A1Stance stance(testing::a1_urdf(), 0.0);
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  std::mt19937 rng(103);
  for (const std::vector<int>& feet : {std::vector<int>{0}, std::vector<int>{0, 1, 2}}) {
    contact::ContactSet contacts;
    for (int i : feet) {
      contacts.contacts.push_back(stance.contacts.contacts[i]);
      contacts.contacts.back().material.mu = 0.0;
    }
    InverseDynamics one(model, joint_dofs(model), params(Formulation::kQpCoulomb, false));
    InverseDynamics two(model, joint_dofs(model), params(Formulation::kQpCoulomb, true));
    for (int trial = 0; trial < 5; ++trial) {
      VectorXd v = random_vector(rng, 18, 0.2);
      v[5] -= 0.1;
      const VectorXd a = random_vector(rng, 12, 3.0);
      const IdResults r1 = one.solve(stance.scene.q0, v, a, kDt, contacts);
      const IdResults& r2 = two.solve(stance.scene.q0, v, a, kDt, contacts);
      ASSERT_EQ(r2.status, IdStatus::kSolved);
      EXPECT_EQ(r2.stats.stage_two_dimension, 0);
      EXPECT_EQ(r2.stats.stage_two_iterations, 0);
      EXPECT_EQ(r2.tau, r1.tau);
      EXPECT_EQ(r2.v_next, r1.v_next);
      EXPECT_EQ(r2.contact_impulses, r1.contact_impulses);
    }
  }
  // n_q = 0: the A1 as a passive body (nothing actuated), on its four feet with friction.
  InverseDynamics probe(model, joint_dofs(model));
  A1Stance rough(testing::a1_urdf(), 0.8);
  rough.touch();
  probe.solve(rough.scene.q0, VectorXd::Zero(18), VectorXd::Zero(12), kDt, rough.contacts);
  IdProblem passive = probe.problem();
  passive.actuated.clear();
  passive.qdot_des.resize(0);
  for (Formulation f : {Formulation::kQpCoulomb, Formulation::kQpNoSlip}) {
    IdSolver one(params(f, false)), two(params(f, true));
    IdResults r1, r2;
    passive.v = random_vector(rng, 18, 0.2);
    one.solve(passive, r1);
    two.solve(passive, r2);
    ASSERT_EQ(r2.status, IdStatus::kSolved) << r2.message;
    EXPECT_EQ(r2.stats.stage_two_iterations, 0);
    EXPECT_EQ(r2.v_next, r1.v_next);
    EXPECT_EQ(r2.contact_impulses, r1.contact_impulses);
    EXPECT_EQ(r2.tau.size(), 0);
  }
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
