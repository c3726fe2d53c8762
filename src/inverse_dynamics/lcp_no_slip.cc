// ID_LCP,∞: inverse dynamics with non-impacting rigid contact and no slip (Zapolsky & Drumwright
// §4; digest ../shared/digests/inverse-dynamics.md §4, with the corrections of §11 items 7–13).
//
// In the unactuated subspace (id_solver_impl.h): the equality rows are P ⁺v = q̇_des (already
// eliminated: ⁺v_𝒜 = q̇_des) and the no-slip rows S ⁺v = T ⁺v = 0, which read
// S_𝒰 ⁺v_𝒰 = −S_𝒜 q̇_des. FIND-INDICES (Alg. 1, find_indices.h) keeps the largest independent
// set X of them in the A⁻¹ metric (App. E: the dropped rows' multipliers are 0). With
// G = A⁻¹ Xᵀ and Y = (X A⁻¹ Xᵀ)⁻¹:
//   v** = v*_𝒰 − G Y c_X                    (c_X = X v*: the tangential velocities at v*)
//   Γ_X = A⁻¹ − G Y Gᵀ                      (digest §2; symmetric PSD, X Γ_X = 0)
//   LCP (Eqs. 44–45, digest §4.2):  w = N_𝒰 Γ_X N_𝒰ᵀ f_N + N_𝒰 v** + b_off ≥ 0 ⊥ f_N ≥ 0,
//        b_off = c_N − N_𝒰 v*_𝒰 + φ/Δt  (so w = N ⁺v + φ/Δt)
// solved by the modified PPM (Alg. 2, ppm.h) warm-started from the previous B̄ (§4.6), Lemke
// on the dense LCP if the PPM fails. Then f_X = −Y (c_X + Gᵀ N_𝒰ᵀ f_N) and ⁺v.
// Consistency (§4.5): the request is inconsistent when the LCP has no solution or a dropped
// no-slip row is violated by more than slip_tolerance (the rows are dependent but their
// right-hand sides are not: App. E assumes consistent data, which a measured ⁻v never is
// exactly); the consistency QP then gives the closest feasible motion.
#include <algorithm>
#include <cmath>
#include <string>

#include "id_solver_impl.h"

namespace coulomb::inverse_dynamics {

using Eigen::MatrixXd;
using Eigen::VectorXd;

IdStatus IdSolver::Impl::lcp_no_slip() {
  ContactBuffers& B = *buf;
  IdStats& st = res->stats;
  st.lcp_size = n;
  // v*_𝒰 (setup() left it in vU).
  const VectorXd& vsU = vU;

  // ---- FIND-INDICES on (A, P = ∅, S_𝒰, T_𝒰)
  int r = 0;
  if (nb > 0) {
    no_rows.resize(0, nb);
    find_indices.compute(llt, no_rows, B.SU, B.TU, par.find_indices_tolerance);
    r = find_indices.size();
  }
  st.kept_tangent_rows = r;
  B.X.resize(r, nb);
  B.cX.resize(r);
  for (int q = 0; q < r; ++q) {
    const EqualityRow& row = find_indices.rows()[q];
    const bool first = row.kind == EqualityRowKind::kFirstTangent;
    B.X.row(q) = first ? B.SU.row(row.index) : B.TU.row(row.index);
    B.cX[q] = first ? B.cS[row.index] : B.cT[row.index];
  }

  // ---- v**, Γ_X, the LCP offset
  B.vss.resize(nb);
  B.Gamma.resize(nb, nb);
  B.boff.resize(n);
  B.boff = B.cN + B.phi_dt;
  if (nb > 0) {
    B.boff.noalias() -= B.NU * vsU;
    B.G.resize(nb, r);
    B.G = B.X.transpose();
    llt.solveInPlace(B.G);
    B.y.resize(r);
    B.y = B.cX;
    if (r > 0) find_indices.solve_in_place(B.y);
    B.vss = vsU;
    B.vss.noalias() -= B.G * B.y;
    B.Gamma.setIdentity();
    llt.solveInPlace(B.Gamma);
    B.Yg.resize(r, nb);
    B.Yg = B.G.transpose();
    for (int j = 0; j < nb; ++j) {
      auto col = B.Yg.col(j);
      if (r > 0) find_indices.solve_in_place(col);
    }
    B.Gamma.noalias() -= B.G * B.Yg;
    for (int i = 0; i < nb; ++i)  // symmetrize in place (an .eval() temporary would allocate)
      for (int j = 0; j < i; ++j) B.Gamma(i, j) = B.Gamma(j, i) = 0.5 * (B.Gamma(i, j) + B.Gamma(j, i));
  }

  // ---- the LCP
  bool lcp_solved = false;
  const double rscale = std::max(1.0, (B.cN + B.phi_dt).cwiseAbs().maxCoeff());
  if (nb == 0) {
    // Nothing can move: w = c_N + φ/Δt whatever f_N; z = 0 solves the LCP iff w ≥ 0.
    lcp_solved = (B.boff.minCoeff() >= -par.ppm.tolerance * rscale);
    if (lcp_solved) st.solver_iterations = 0;
  } else {
    const bool warm_ok = par.warm_start && warm_count == n;
    if (!warm_ok) warm.clear();
    st.warm_started = warm_ok && !warm.empty();
    ppm.solve(B.NU, B.Gamma, B.vss, B.boff, B.ppm_result, warm);
    st.solver_iterations = B.ppm_result.pivots;
    if (B.ppm_result.ok()) {
      fN = B.ppm_result.z;
      lcp_solved = true;
      for (int c : B.ppm_result.non_basic) res->active_set.push_back(kept[c]);
    } else {
      // Fallback: Lemke on the dense PSD LCP (digest §4.6 [ext]: PACER falls back likewise).
      st.used_fallback = true;
      B.Qlcp.noalias() = B.NU * B.Gamma * B.NU.transpose();
      B.rlcp = B.boff;
      B.rlcp.noalias() += B.NU * B.vss;
      lemke.solve(B.Qlcp, B.rlcp, B.lemke);
      st.solver_iterations += B.lemke.pivots;
      if (B.lemke.ok()) {
        fN = B.lemke.z;
        lcp_solved = true;
      }
    }
  }

  if (lcp_solved) {
    // Tangential multipliers f_X = −Y (c_X + Gᵀ N_𝒰ᵀ f_N); the dropped rows keep 0 (App. E).
    if (r > 0) {
      B.dv.noalias() = B.NU.transpose() * fN;
      B.y = B.cX;
      B.y.noalias() += B.G.transpose() * B.dv;
      find_indices.solve_in_place(B.y);
      for (int q = 0; q < r; ++q) {
        const EqualityRow& row = find_indices.rows()[q];
        (row.kind == EqualityRowKind::kFirstTangent ? fS : fT)[row.index] = -B.y[q];
      }
    }
    velocity_from_impulses();
    // Every no-slip row, kept or dropped, must hold (App. E needs consistent right-hand sides),
    // up to slip_tolerance (noise in ⁻v makes the dropped rows slip by the noise's size).
    B.dv.resize(nb);
    for (int i = 0; i < nb; ++i) B.dv[i] = vU[i] - vstar[unactuated[i]];
    double slip = 0.0, vscale = 1.0;
    for (int c = 0; c < n; ++c) {
      const double s = B.cS[c] + (nb > 0 ? B.SU.row(c).dot(B.dv) : 0.0);
      const double t = B.cT[c] + (nb > 0 ? B.TU.row(c).dot(B.dv) : 0.0);
      slip = std::max({slip, std::abs(s), std::abs(t)});
      vscale = std::max({vscale, std::abs(B.cS[c]), std::abs(B.cT[c])});
    }
    if (slip <= std::max(par.slip_tolerance, 1e-9 * vscale)) {
      if (nb > 0) {
        if (B.ppm_result.ok()) {
          warm = B.ppm_result.non_basic;
        } else {
          warm.clear();
        }
        warm_count = n;
      }
      return IdStatus::kSolved;
    }
    res->message = "no-slip rows inconsistent with the desired motion: a contact would slip at " +
                   std::to_string(slip) + " m/s";
  } else {
    res->message = "the no-slip LCP has no solution (the desired motion drives contacts into the ground)";
  }
  warm.clear();
  warm_count = -1;
  fN.setZero();
  fS.setZero();
  fT.setZero();
  res->active_set.clear();
  if (par.consistency_qp) return consistency_qp();
  vU = vstar(unactuated);
  return IdStatus::kInfeasible;
}

}  // namespace coulomb::inverse_dynamics
