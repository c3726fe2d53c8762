// ID_QP,μ and ID_QP,∞: complementarity-free inverse dynamics in two stages (Zapolsky &
// Drumwright §6, Eqs. 69–112; digest §6 with the corrections of §11 items 18–22).
//
// Stage I (Eqs. 69–74, equality constraints removed as in §6.2.1–6.2.2): with impulses
// z = [f_N; f_F] on the rows R = [N; F] (k polygon directions per contact; QP,μ: only contacts
// with μ > 0 have friction variables, QP,∞: every contact, unbounded) and B = L⁻¹ R_𝒰ᵀ,
//
//   minimize  ½ ⁺vᵀ M ⁺v = ½ zᵀ (Bᵀ B) z + zᵀ R_𝒰 A⁻¹ b_𝒰 + const
//   s.t.      N ⁺v + φ/Δt ≥ 0   ⇔  −(B_Nᵀ B) z ≤ c_N + φ/Δt      (non-interpenetration)
//             z ≥ 0,   Σ_j f_F,ij ≤ μ_i f_N,i  (QP,μ)
//
// (⁺v_𝒜 = q̇_des is fixed, so the energy depends on z only through ⁺v_𝒰 = v*_𝒰 + A⁻¹ R_𝒰ᵀ z; the
// gradient of ½ ⁺vᵀM⁺v is R_𝒰 (⁺v_𝒰 + A⁻¹ M_𝒰𝒜 q̇_des) = R_𝒰 A⁻¹ (b_𝒰 + R_𝒰ᵀ z).) The Hessian
// Bᵀ B has rank ≤ n_b (digest §6.4: Z = A⁻¹ R_b, ker = ker(R_𝒰ᵀ)).
//
// Stage II (§6.2.4, Eqs. 102–112 reconstructed in digest §6.6): every z* + W y with
// W = an orthonormal basis of ker(R_𝒰ᵀ) has the same ⁺v (so the same energy and the same
// N ⁺v: Eqs. 108–109 hold automatically), and ι(z* + W y) = ι(z*) − R_𝒜ᵀ W y. Stage II
//
//   minimize  ½ ‖g₀ − R_𝒜ᵀ W y‖² + ½ ε ‖z* + W y‖²     (g₀ = ι(z*), or ι(z*) − Δt f_ID)
//   s.t.      z* + W y ≥ 0,  Σ_j f_F,ij ≤ μ_i f_N,i  (QP,μ)
//
// picks the least-torque impulses among Stage I's optima; y = 0 is feasible.
//
// Solvers: Stage I as the LCP of its KKT conditions by Lemke's method, warm-started from the
// previous solution (the paper's choice; exact basic solutions), the interior point as the
// fallback. Stage II, strictly convex with the tie-breaker ε‖z‖² (ε = 1e-6 relative, the least
// total impulse among equal torques; it is what makes f_S⁺ and f_S⁻ not both positive and
// symmetric poses get symmetric loads), first from the previous step's active set (one KKT solve,
// accepted only if it is a KKT point: ConicQpSolver::solve_active_set), else by the interior-point
// ConicQpSolver at tolerance ≤ 1e-13 followed by active-set polishing (ConicQpSolver::polish),
// which makes the solution exact where the interior point alone stops at about √tolerance.
// Measured on the A1 standing (4 contacts): 12–14 interior-point iterations cold, none warm.
#include <algorithm>
#include <cmath>
#include <string>

#include "id_solver_impl.h"

namespace coulomb::inverse_dynamics {

using Eigen::MatrixXd;
using Eigen::VectorXd;

IdStatus IdSolver::Impl::qp_two_stage() {
  ContactBuffers& B = *buf;
  IdStats& st = res->stats;
  const IdProblem& P = *p;
  const std::vector<int>& Aidx = P.actuated;
  const bool coulomb = par.formulation == Formulation::kQpCoulomb;
  const int nz = build_polygon_rows(!coulomb);
  int nf = 0;  // friction-polygon rows
  if (coulomb)
    for (int c = 0; c < n; ++c)
      if (B.friction_offset[c] >= 0) ++nf;
  // Fr z ≤ 0: +1 on the contact's f_F, −μ on its f_N (row per contact with friction), written
  // into G's rows starting at `row`, times the matrix `right` (nz × cols) on the right.
  auto friction_rows = [&](MatrixXd& G, int row, const MatrixXd* right) {
    for (int c = 0; c < n; ++c) {
      const int o = B.friction_offset[c];
      if (!coulomb || o < 0) continue;
      if (right == nullptr) {
        G.row(row).setZero();
        G(row, c) = -B.mu[c];
        for (int e = 0; e < k; ++e) G(row, o + e) = 1.0;
      } else {
        G.row(row) = -B.mu[c] * right->row(c);
        for (int e = 0; e < k; ++e) G.row(row) += right->row(o + e);
      }
      ++row;
    }
  };
  const double scale = std::max(1.0, (B.cN + B.phi_dt).cwiseAbs().maxCoeff());

  // ---- Stage I
  B.z.setZero(nz);
  double z_scale = 1.0;  // impulse scale of the QPs [N·s]
  if (nb == 0) {
    // Nothing unactuated: ⁺v = v* whatever z (the energy is constant), so every feasible z is
    // optimal; it is feasible iff no contact is driven into the ground. Stage II chooses z.
    for (int c = 0; c < n; ++c)
      if (B.cN[c] + B.phi_dt[c] < -1e-9 * scale) {
        res->message = "infeasible: contact " + std::to_string(kept[c]) + " is driven into the ground at " +
                       std::to_string(-(B.cN[c] + B.phi_dt[c])) +
                       " m/s by the desired motion and no unactuated coordinate can give way";
        vU.resize(0);
        return IdStatus::kInfeasible;
      }
  } else {
    // The QP as the LCP of its KKT conditions, solved by Lemke (as the paper does, footnote 1;
    // digest §3.1): variables [ẑ; y] with y ≥ 0 the multipliers of the rows G ẑ ≥ h
    // (friction: μ f_N − Σ f_F ≥ 0; non-penetration), matrix [[P, −Gᵀ], [G, 0]], vector
    // [q; −h]. Lemke returns a basic solution, exact up to round-off, where an interior point
    // would stop at about the square root of its tolerance on this degenerate problem (a
    // touching contact without load is active with a zero multiplier). Scaled to O(1):
    // ẑ = z / s_z with s_z the size of the free momentum, the objective divided by
    // s_z² · max diag(BᵀB), each non-penetration row by its largest coefficient.
    B.bU.resize(nb);
    for (int i = 0; i < nb; ++i) B.bU[i] = b[unactuated[i]];
    const double sz = std::max(B.bU.cwiseAbs().maxCoeff(), 1e-12);
    const int L = nz + nf + n;
    B.Q.resize(L, L);
    B.Q.setZero();
    auto H = B.Q.topLeftCorner(nz, nz);
    H.noalias() = B.B.transpose() * B.B;
    const double ps = std::max(H.diagonal().maxCoeff(), 1e-300);
    H /= ps;
    B.r.resize(L);
    llt.matrixL().solveInPlace(B.bU);  // L⁻¹ b_𝒰: q = R_𝒰 A⁻¹ b_𝒰 = Bᵀ L⁻¹ b_𝒰
    B.r.head(nz).noalias() = B.B.transpose() * B.bU;
    B.r.head(nz) /= sz * ps;
    // Rows G ẑ ≥ h, stored in Q's bottom-left block (and −Gᵀ top-right).
    auto G = B.Q.bottomLeftCorner(nf + n, nz);
    friction_rows(B.Q, nz, nullptr);  // writes Σf_F − μ f_N (≤ 0 form) into rows nz … nz+nf−1
    G.topRows(nf) *= -1.0;            // μ f_N − Σ f_F ≥ 0
    G.bottomRows(n).noalias() = B.B.leftCols(n).transpose() * B.B;
    B.r.segment(nz, nf).setZero();
    for (int c = 0; c < n; ++c) {
      auto row = G.row(nf + c);
      const double rs = std::max(row.cwiseAbs().maxCoeff() * sz, 1e-300);
      row *= sz / rs;
      B.r[nz + nf + c] = (B.cN[c] + B.phi_dt[c]) / rs;  // −h
    }
    B.Q.topRightCorner(nz, nf + n) = -G.transpose();
    // The same QP in the interior point's form (−ẑ ≤ 0, −G ẑ ≤ −h): for the warm start from the
    // previous active set, and the fallback.
    solvers::qp::ConicQp& qp = B.qp1;
    if (qp.num_variables() != nz || qp.num_rows() != nz + nf + n) qp.resize(nz, nz + nf + n, {});
    qp.num_orthant = nz + nf + n;
    qp.P = B.Q.topLeftCorner(nz, nz);
    qp.q = B.r.head(nz);
    qp.G.topRows(nz).setZero();
    qp.G.topRows(nz).diagonal().setConstant(-1.0);
    qp.h.head(nz).setZero();
    qp.G.bottomRows(nf + n) = -B.Q.bottomLeftCorner(nf + n, nz);
    qp.h.tail(nf + n) = B.r.tail(nf + n);
    B.qp1_solver.mutable_parameters() = par.qp;
    // 1. The previous step's active set, confirmed by one KKT solve (a controller's successive
    //    steps rarely change it; Lemke's own warm start needs a nonsingular basis block, which
    //    this rank-n_b Hessian seldom gives).
    //    Where it keeps failing (a degenerate vertex whose zero pattern changes with round-off,
    //    as on the standing A1) it is tried again only every 16th solve.
    bool warm_done = false;
    if (B.stage1_has_active && B.stage1_dim == nz && (B.stage1_misses < 2 || ++B.stage1_skipped >= 16)) {
      B.stage1_skipped = 0;
      warm_done = B.qp1_solver.solve_active_set(qp, B.stage1_active);
      B.stage1_misses = warm_done ? 0 : B.stage1_misses + 1;
    }
    if (warm_done) {
      st.warm_started = true;
      B.z = sz * B.qp1_solver.results().x;
    } else {
      // 2. Lemke on the KKT LCP.
      B.stage1_has_active = false;
      const bool warm = B.stage1_warm.size() == L;
      lemke.solve(B.Q, B.r, B.lemke, warm ? &B.stage1_warm : nullptr);
      st.solver_iterations = B.lemke.pivots;
      st.warm_started = B.lemke.warm_started;
      if (B.lemke.ok()) {
        B.stage1_warm = B.lemke.z;
        B.z = sz * B.lemke.z.head(nz);
        // Its active rows: ẑ_i = 0, and constraint rows with zero slack w.
        B.stage1_active.clear();
        const double atol = 1e-12 * std::max(1.0, B.lemke.z.cwiseAbs().maxCoeff());
        const double wtol = atol * std::max(1.0, B.r.tail(nf + n).cwiseAbs().maxCoeff());
        for (int i = 0; i < nz; ++i)
          if (B.lemke.z[i] <= atol) B.stage1_active.push_back(i);
        for (int i = nz; i < L; ++i)
          if (B.lemke.w[i] <= wtol) B.stage1_active.push_back(i);
        B.stage1_has_active = true;
        B.stage1_dim = nz;
      } else {
        // 3. The interior point (Lemke's ray test can misfire on degenerate data), then
        //    active-set polishing. Polishing is tried even when the interior point stops short:
        //    on a degenerate vertex it can stall with a large dual residual (1.2e-4 after its 60
        //    iterations on the trotting A1, ControlAcceptanceTest) next to a vertex whose KKT
        //    system polishing solves exactly (residuals 1e-16, the same objective). A polished
        //    point is a verified KKT point (solve_on_active checks every row and multiplier).
        B.stage1_warm.resize(0);
        st.used_fallback = true;
        const solvers::qp::ConicQpResults& out = B.qp1_solver.solve(qp);
        st.solver_iterations += out.iterations;
        const solvers::qp::ConicQpStatus ip_status = out.status;
        const double ip_primal_residual = out.primal_residual;
        const bool polished = B.qp1_solver.polish(qp);
        if (!polished && ip_status != solvers::qp::ConicQpStatus::kOptimal) {
          const bool infeasible = ip_primal_residual > par.qp.acceptable_tolerance;
          res->message = std::string("Stage I: Lemke ") + solvers::lcp::to_string(B.lemke.status) +
                         ", then the interior point " + solvers::qp::to_string(ip_status) + " (primal residual " +
                         std::to_string(ip_primal_residual) + ")" +
                         (infeasible ? ": no impulses keep every contact from penetrating under the desired motion" : "");
          B.z.setZero();
          polygon_to_frame(B.z);
          velocity_from_impulses();
          return infeasible ? IdStatus::kInfeasible : IdStatus::kNotConverged;
        }
        if (polished) {
          B.stage1_active = B.qp1_solver.last_active_set();
          B.stage1_has_active = true;
          B.stage1_dim = nz;
        }
        B.z = sz * B.qp1_solver.results().x;
      }
    }
    z_scale = sz;
  }

  // ---- Stage II
  if (par.stage_two && nq > 0) {
    // W: orthonormal basis of ker(R_𝒰ᵀ) ⊂ ℝ^{n_z}.
    int rank = 0;
    B.Qfull.setIdentity(nz, nz);
    if (nb > 0) {
      B.qr.compute(B.RU);
      rank = static_cast<int>(B.qr.rank());
      B.hh_work.resize(nz);
      B.qr.householderQ().applyThisOnTheLeft(B.Qfull, B.hh_work);
    }
    const int d = nz - rank;
    st.stage_two_dimension = d;
    if (d > 0) {
      B.W.resize(nz, d);
      B.W = B.Qfull.rightCols(d);
      // g₀ = ι(z*) (− Δt f_ID): ι = M_𝒜𝒰 ⁺v_𝒰 + M_𝒜𝒜 q̇_des − b_𝒜 − R_𝒜ᵀ z
      polygon_to_frame(B.z);
      velocity_from_impulses();
      B.g0.resize(nq);
      for (int j = 0; j < nq; ++j) {
        double g = actuated_momentum_change(j);
        if (par.stage_two_objective == StageTwoObjective::kContactTorque) {
          // Δt f_ID = M_𝒜𝒜 (q̇_des − ⁻v_𝒜) − Δt f_ext,𝒜 (digest §6.4, Eq. 87)
          double fid = -dt * P.f_ext[Aidx[j]];
          for (int l = 0; l < nq; ++l) fid += P.M(Aidx[j], Aidx[l]) * (P.qdot_des[l] - P.v[Aidx[l]]);
          g -= fid;
        }
        B.g0[j] = g;
      }
      B.g0.noalias() -= B.RA.transpose() * B.z;
      B.RAW.resize(nq, d);
      B.RAW.noalias() = B.RA.transpose() * B.W;
      solvers::qp::ConicQp& qp = B.qp2;
      const int rows = nz + nf;
      if (qp.num_variables() != d || qp.num_rows() != rows) qp.resize(d, rows, {});
      qp.num_orthant = rows;
      // Scaled like Stage I: ŷ = y / s_z, the objective divided by s_z² · max diag(RAWᵀRAW).
      if (nb == 0) z_scale = std::max({z_scale, B.g0.cwiseAbs().maxCoeff(), 1e-12});
      const double sz = z_scale;
      // A null-space direction that moves no actuated coordinate (e.g. squeezing a box held by
      // contacts on one link: R_𝒜ᵀ W = 0 up to round-off) is left to the tie-breaker: entries of
      // R_𝒜ᵀ W below 1e-12 of R_𝒜's largest are round-off and are zeroed, so that the scaling
      // below cannot blow them up.
      const double ra = B.RA.size() ? B.RA.cwiseAbs().maxCoeff() : 0.0;
      B.RAW = (B.RAW.array().abs() <= 1e-12 * ra).select(0.0, B.RAW);
      qp.P.noalias() = B.RAW.transpose() * B.RAW;
      const double ps = std::max(1e-300, qp.P.diagonal().maxCoeff());
      qp.P /= ps;
      qp.P.diagonal().array() += par.stage_two_regularization;
      qp.q.noalias() = -B.RAW.transpose() * B.g0;
      qp.q /= sz * ps;
      // The tie-breaker is ½ ε ‖z‖² = ½ ε ‖z* + W y‖² (least total impulse, symmetric), not ‖y‖².
      qp.q.noalias() += (par.stage_two_regularization / sz) * (B.W.transpose() * B.z);
      // Objective scaled so that its largest curvature is 1 (it is ε when only the tie-breaker
      // is left).
      const double pmax = std::max(qp.P.diagonal().maxCoeff(), 1e-300);
      qp.P /= pmax;
      qp.q /= pmax;
      qp.G.topRows(nz) = -B.W;
      qp.h.head(nz) = B.z / sz;
      friction_rows(qp.G, nz, &B.W);
      // h = −Fr z* / s_z
      for (int c = 0, row = nz; c < n; ++c) {
        const int o = B.friction_offset[c];
        if (!coulomb || o < 0) continue;
        double fz = -B.mu[c] * B.z[c];
        for (int e = 0; e < k; ++e) fz += B.z[o + e];
        qp.h[row++] = -fz / sz;
      }
      // Tighter than Stage I: the tie-breaker's gradients (ε ≈ 1e-6 of the torque curvature)
      // must be resolved for polishing to identify the active set.
      B.qp2_solver.mutable_parameters() = par.qp;
      B.qp2_solver.mutable_parameters().tolerance = std::min(par.qp.tolerance, 1e-13);
      // Warm start: the previous Stage II's active set (same sizes), confirmed by one KKT solve;
      // otherwise the interior point, then polishing.
      bool warm_ok = false;
      if (B.stage2_has_active && B.stage2_dim == d) warm_ok = B.qp2_solver.solve_active_set(qp, B.stage2_active);
      if (!warm_ok) {
        // Polishing also from a stalled interior point: its active-set corrections can still
        // reach the KKT point.
        B.qp2_solver.solve(qp);
        warm_ok = B.qp2_solver.polish(qp);
      }
      int first_iterations = 0;
      if (!warm_ok && B.qp2_solver.results().status != solvers::qp::ConicQpStatus::kOptimal &&
          par.stage_two_regularization > 0.0) {
        // The interior point can fail to resolve the tie-breaker's curvature (ε = 1e-6 of the
        // torque curvature) when the active rows at the optimum are linearly dependent. Measured
        // on the A1's four-foot stance (tests/inverse_dynamics/id_stage_invariants_test.cc): three
        // f_N ≥ 0 rows of rank 1 in the null space (the four-legged-table mode), multipliers
        // ≈ 7, 14, 7 on slacks of 1e-13, and the Newton matrix's conditioning then swamps ε; the
        // iterates stall with a dual residual of 3e-7 … 6e-7 in the ε-directions (status
        // numerical_error or max_iterations, in 8 of 20 random requests for QP,μ and QP,∞ together),
        // polishing finds no KKT point from them, and Stage I's impulses used to be kept (torques
        // not smoothed, up to 2.5× the least torque). ε = 1e-5 fails alike, ε = 1e-4 and ε ≤ 1e-8
        // converge. Retry without the tie-breaker: the torque-optimal point of Stage I's optimal
        // set (the paper's Stage II), not necessarily the least-impulse one among equal torques.
        // (P and q were divided by pmax after the tie-breaker was added.)
        first_iterations = B.qp2_solver.results().iterations;
        qp.P.diagonal().array() -= par.stage_two_regularization / pmax;
        qp.q.noalias() -= (par.stage_two_regularization / (sz * pmax)) * (B.W.transpose() * B.z);
        B.qp2_solver.solve(qp);
        B.qp2_solver.polish(qp);
      }
      const solvers::qp::ConicQpResults& out = B.qp2_solver.results();
      st.stage_two_iterations = first_iterations + out.iterations;
      B.stage2_has_active = warm_ok;
      B.stage2_dim = d;
      if (warm_ok) B.stage2_active = B.qp2_solver.last_active_set();
      if (out.status == solvers::qp::ConicQpStatus::kOptimal) {
        B.z.noalias() += sz * (B.W * out.x);
      } else {
        res->message = std::string("Stage II QP ") + solvers::qp::to_string(out.status) +
                       "; Stage I's impulses are kept (torques not smoothed)";
      }
    }
  }
  polygon_to_frame(B.z);
  velocity_from_impulses();
  return IdStatus::kSolved;
}

}  // namespace coulomb::inverse_dynamics
