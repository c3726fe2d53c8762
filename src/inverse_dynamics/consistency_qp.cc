// The consistency QP of Zapolsky & Drumwright §4.5 (Eqs. 46–51; digest §4.4 and §11 item 10):
// when the no-slip request is inconsistent, find the feasible motion closest to the desired one,
//
//   minimize ½‖P ⁺v − q̇_des‖²
//   s.t.  N ⁺v ≥ −φ/Δt,  S ⁺v = 0,  T ⁺v = 0,  f_N ≥ 0,
//         M ⁺v = M ⁻v + Δt f_ext + Nᵀ f_N + Sᵀ f_S + Tᵀ f_T + Pᵀ ι.
//
// ι is free, so only the unactuated rows of the dynamics constrain: with δ = P ⁺v − q̇_des and
// x = [δ; f_N; f_S; f_T] (n_q + 3n),
//   ⁺v_𝒰 = v*_𝒰 + K x,   K = A⁻¹ [−M_𝒰𝒜, N_𝒰ᵀ, S_𝒰ᵀ, T_𝒰ᵀ],
//   contact row velocities  V_X x + c_X  with V_X = [X_𝒜, 0, 0, 0] + X_𝒰 K  (X = N, S, T).
// The no-slip equalities V_S x = −c_S, V_T x = −c_T are eliminated by a null-space basis Z of
// [V_S; V_T] (x = x_p + Z y, x_p the minimum-norm solution); the remaining QP in y has the
// inequalities and is solved by the interior-point ConicQpSolver. A tie-breaker 10⁻¹⁰ ‖x‖²
// makes it strictly convex (the paper's objective leaves the impulses free).
// This is a fallback: it allocates (SVD, the QP), unlike the regular paths.
#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/SVD>

#include "id_solver_impl.h"

namespace coulomb::inverse_dynamics {

using Eigen::MatrixXd;
using Eigen::VectorXd;

IdStatus IdSolver::Impl::consistency_qp() {
  ContactBuffers& B = *buf;
  IdStats& st = res->stats;
  st.used_fallback = true;
  const IdProblem& P = *p;
  const std::vector<int>& Aidx = P.actuated;
  const int d = nq + 3 * n;
  // K = A⁻¹ [−M_𝒰𝒜, N_𝒰ᵀ, S_𝒰ᵀ, T_𝒰ᵀ]  (n_b × d)
  MatrixXd K(nb, d);
  if (nb > 0) {
    K.leftCols(nq) = -M_UA;
    K.middleCols(nq, n) = B.NU.transpose();
    K.middleCols(nq + n, n) = B.SU.transpose();
    K.rightCols(n) = B.TU.transpose();
    llt.solveInPlace(K);
  }
  auto velocity_map = [&](const MatrixXd& X, const MatrixXd& XU) {
    MatrixXd V = MatrixXd::Zero(n, d);
    for (int c = 0; c < n; ++c)
      for (int j = 0; j < nq; ++j) V(c, j) = X(kept[c], Aidx[j]);
    if (nb > 0) V.noalias() += XU * K;
    return V;
  };
  const MatrixXd VN = velocity_map(P.N, B.NU), VS = velocity_map(P.S, B.SU), VT = velocity_map(P.T, B.TU);
  MatrixXd E(2 * n, d);
  E << VS, VT;
  VectorXd e(2 * n);
  e << -B.cS, -B.cT;
  Eigen::JacobiSVD<MatrixXd> svd(E, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const double tol = 1e-12 * std::max(1.0, svd.singularValues().size() ? svd.singularValues()[0] : 0.0);
  svd.setThreshold(tol);
  const int rank = static_cast<int>(svd.rank());
  const VectorXd xp = svd.solve(e);
  const double eq_res = (E * xp - e).cwiseAbs().maxCoeff();
  if (!(eq_res <= 1e-9 * std::max(1.0, e.cwiseAbs().maxCoeff()))) {
    res->message += "; consistency QP: the no-slip rows cannot hold whatever the motion (residual " +
                    std::to_string(eq_res) + " m/s)";
    vU = vstar(unactuated);
    return IdStatus::kInfeasible;
  }
  const MatrixXd Z = svd.matrixV().rightCols(d - rank);
  const int dy = static_cast<int>(Z.cols());
  // Objective ½ xᵀ D x with D = diag(1 on δ, ε on the impulses), x = x_p + Z y.
  VectorXd D = VectorXd::Constant(d, 1e-10);
  D.head(nq).setOnes();
  solvers::qp::ConicQp qp;
  qp.resize(dy, 2 * n, {});
  qp.P.noalias() = Z.transpose() * D.asDiagonal() * Z;
  qp.P.diagonal().array() += 1e-12;
  qp.q.noalias() = Z.transpose() * D.asDiagonal() * xp;
  // N ⁺v + φ/Δt ≥ 0  ⇔  −V_N Z y ≤ c_N + φ/Δt + V_N x_p;   f_N ≥ 0  ⇔  −Z_fN y ≤ x_p,fN
  qp.G.topRows(n) = -VN * Z;
  qp.h.head(n) = B.cN + B.phi_dt + VN * xp;
  qp.G.bottomRows(n) = -Z.middleRows(nq, n);
  qp.h.tail(n) = xp.segment(nq, n);
  solvers::qp::ConicQpSolver solver(par.qp);
  const solvers::qp::ConicQpResults& out = solver.solve(qp);
  st.stage_two_iterations = out.iterations;
  if (out.status != solvers::qp::ConicQpStatus::kOptimal) {
    res->message += std::string("; consistency QP ") + solvers::qp::to_string(out.status) + " (primal residual " +
                    std::to_string(out.primal_residual) + ", dual residual " + std::to_string(out.dual_residual) + ")";
    vU = vstar(unactuated);
    return IdStatus::kInfeasible;
  }
  const VectorXd x = xp + Z * out.x;
  fN = x.segment(nq, n);
  fS = x.segment(nq + n, n);
  fT = x.tail(n);
  // ⁺v: the actuated velocities move by δ (finish() reads them from vstar), ⁺v_𝒰 = v*_𝒰 + K x.
  for (int i = 0; i < nb; ++i) vU[i] = vstar[unactuated[i]];
  if (nb > 0) vU.noalias() += K * x;
  for (int j = 0; j < nq; ++j) vstar[Aidx[j]] += x[j];
  res->message += "; the consistency QP moved the actuated velocities by " +
                  std::to_string(x.head(nq).cwiseAbs().maxCoeff()) + " (max |P ⁺v − q̇_des|)";
  return IdStatus::kInconsistent;
}

}  // namespace coulomb::inverse_dynamics
