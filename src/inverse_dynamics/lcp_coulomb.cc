// ID_LCP,μ: inverse dynamics with non-impacting rigid contact and Coulomb friction on a
// linearized cone (Zapolsky & Drumwright §5, Eqs. 52–68; digest §5 with the reconstruction of
// the garbled Eqs. 59 and 64, §11 items 14–15).
//
// Variables per contact i: f_N,i ≥ 0; if μ_i > 0, k polygon impulses f_F,ij ≥ 0 along
// d_j = cos θ_j ŝ + sin θ_j t̂ and the slack λ_i ≥ 0 (≈ the sliding speed). (Frictionless contacts
// have no friction variables, so their f_F is exactly 0.) With Γ = Γ_P = E_𝒰 A⁻¹ E_𝒰ᵀ and the rows
// R = [N; F] (B = L⁻¹ R_𝒰ᵀ, so R Γ Rᵀ = Bᵀ B):
//
//   Q = [ N Γ Nᵀ   N Γ Fᵀ   0 ]      r = [ N v* + φ/Δt ]
//       [ F Γ Nᵀ   F Γ Fᵀ   E ]          [ F v*        ]
//       [ μ        −Eᵀ      0 ]          [ 0           ]
//
// (E: nk × n, ones linking each friction variable to its contact's λ, in contact-major order.)
// Lemke's ray termination does not prove infeasibility here: Q is copositive but not
// copositive-plus (z = λ e_i gives zᵀQz = 0 with (Q + Qᵀ) z ≠ 0); Anitescu & Potra's argument
// needs the lexicographic rule, and round-off-sized entries of r defeat it (seen: a robot in
// free fall above the ground, tangential velocities of 1e-19 m/s, ended on a false ray), so
// |r_i| ≤ 1e-14 ‖r‖∞ is set to 0 first.
// MINDIFF (Alg. 3, mindiff.h) instead of Lemke when asked and (k + 2) n is small: the LCP
// solution nearest the previous one, by enumerating all 2^((k+2)n) bases.
// Q is copositive (digest Eq. 68: zᵀQz = ‖B z_NF‖² + Σ μ_i f_N,i λ_i ≥ 0 for z ≥ 0), so Lemke's
// method with the lexicographic ratio test processes it (Anitescu & Potra). The right inverse:
// the impulses solve the forward Anitescu–Potra LCP with the torques returned (digest §10.4).
#include <algorithm>
#include <cmath>
#include <string>

#include "id_solver_impl.h"

namespace coulomb::inverse_dynamics {

using Eigen::MatrixXd;
using Eigen::VectorXd;

IdStatus IdSolver::Impl::lcp_coulomb() {
  ContactBuffers& B = *buf;
  IdStats& st = res->stats;
  const int nz = build_polygon_rows(false);
  int nl = 0;
  for (int c = 0; c < n; ++c)
    if (B.friction_offset[c] >= 0) ++nl;
  const int L = nz + nl;
  st.lcp_size = L;
  B.Q.setZero(L, L);
  B.Q.topLeftCorner(nz, nz).noalias() = B.B.transpose() * B.B;
  B.r.setZero(L);
  B.r.head(nz) = B.cR;
  B.r.head(n) += B.phi_dt;
  // Round-off in r (a tangential velocity of 1e-19 m/s at v*) makes the LCP needlessly
  // degenerate: Lemke pivots on ratios of 1e-19 and can end on a false ray. Entries below
  // 1e-14 of the vector's size are set to 0.
  const double r_floor = 1e-14 * std::max(1.0, B.r.cwiseAbs().maxCoeff());
  for (int i = 0; i < L; ++i)
    if (std::abs(B.r[i]) <= r_floor) B.r[i] = 0.0;
  for (int c = 0, l = nz; c < n; ++c) {
    const int o = B.friction_offset[c];
    if (o < 0) continue;
    for (int e = 0; e < k; ++e) {
      B.Q(o + e, l) = 1.0;   // E: F ⁺v + E λ ≥ 0
      B.Q(l, o + e) = -1.0;  // −Eᵀ f_F
    }
    B.Q(l, c) = B.mu[c];     // μ f_N − Eᵀ f_F ≥ 0
    ++l;
  }
  // MINDIFF (Alg. 3): among every solution of the LCP, the one whose x = [⁺v_𝒰; ι] is nearest
  // the previous solve's (same contact count). x = x0 + X z with
  //   ⁺v_𝒰 = v*_𝒰 + A⁻¹ R_𝒰ᵀ z,  ι = M_𝒜𝒰 ⁺v_𝒰 + M_𝒜𝒜 q̇_des − b_𝒜 − R_𝒜ᵀ z  (λ columns zero).
  // The first solve (no previous x) uses Lemke and seeds it.
  const bool use_mindiff = par.mindiff && L <= par.mindiff_max_variables && B.has_prev && B.xprev.size() == nb + nq;
  bool ok = false;
  if (use_mindiff) {
    const IdProblem& P = *p;
    B.Xmd.setZero(nb + nq, L);
    if (nb > 0) {
      B.Xmd.topLeftCorner(nb, nz) = B.B;
      llt.matrixU().solveInPlace(B.Xmd.topLeftCorner(nb, nz));  // A⁻¹ R_𝒰ᵀ = L⁻ᵀ B
    }
    B.x0md.resize(nb + nq);
    B.x0md.head(nb) = vU;  // v*_𝒰
    for (int j = 0; j < nq; ++j) {
      const int a = P.actuated[j];
      B.x0md[nb + j] = actuated_momentum_change(j);
      for (int col = 0; col < nz; ++col) {
        double x = -B.RA(col, j);
        for (int i = 0; i < nb; ++i) x += P.M(a, unactuated[i]) * B.Xmd(i, col);
        B.Xmd(nb + j, col) = x;
      }
    }
    B.mindiff.solve(B.Q, B.r, B.Xmd, B.x0md, B.xprev, B.mindiff_results);
    st.used_mindiff = true;
    st.mindiff_leaves = static_cast<int>(B.mindiff_results.feasible_leaves);
    ok = B.mindiff_results.found;
    if (ok) {
      B.lemke.z = B.mindiff_results.z;
      B.xprev = B.mindiff_results.x;
    } else {
      res->message = "MINDIFF: none of the " + std::to_string(B.mindiff_results.leaves) +
                     " bases solves the Coulomb LCP (no impulses keep every contact from penetrating)";
      B.has_prev = false;
      fN.setZero();
      fS.setZero();
      fT.setZero();
      vU = vstar(unactuated);
      return IdStatus::kInfeasible;
    }
  } else {
    lemke.solve(B.Q, B.r, B.lemke);
    st.solver_iterations = B.lemke.pivots;
    ok = B.lemke.ok();
  }
  if (!ok) {
    res->message = std::string("the Coulomb LCP (") + std::to_string(L) + " variables) was not solved: Lemke " +
                   solvers::lcp::to_string(B.lemke.status) + ", complementarity residual " +
                   std::to_string(B.lemke.complementarity_residual) +
                   (B.lemke.status == solvers::lcp::LemkeStatus::kRayTermination
                        ? " (ray termination: no impulses keep every contact from penetrating under the desired motion)"
                        : "");
    fN.setZero();
    fS.setZero();
    fT.setZero();
    vU = vstar(unactuated);
    return B.lemke.status == solvers::lcp::LemkeStatus::kRayTermination ? IdStatus::kInfeasible
                                                                          : IdStatus::kNotConverged;
  }
  B.z = B.lemke.z.head(nz);
  polygon_to_frame(B.z);
  lambda.setZero(n);
  has_lambda = true;
  for (int c = 0, l = nz; c < n; ++c)
    if (B.friction_offset[c] >= 0) lambda[c] = B.lemke.z[l++];
  velocity_from_impulses();
  if (par.mindiff && !use_mindiff) {
    // Seed MINDIFF's next target with this solution's x = [⁺v_𝒰; ι].
    B.xprev.resize(nb + nq);
    B.xprev.head(nb) = vU;
    for (int j = 0; j < nq; ++j) {
      double g = actuated_momentum_change(j);
      for (int col = 0; col < nz; ++col) g -= B.RA(col, j) * B.z[col];
      B.xprev[nb + j] = g;
    }
    B.has_prev = true;
  }
  return IdStatus::kSolved;
}

}  // namespace coulomb::inverse_dynamics
