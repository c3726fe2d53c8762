// Dense reference computations for the inverse-dynamics acceptance tests (digest
// ../shared/digests/inverse-dynamics.md §10). Everything here works in the FULL velocity space
// with explicit inverses and pseudo-inverses of the m × m (or larger) matrices, the way the
// digest writes the equations (§2, §4.2, §5.2–5.3, §6.3), so that it is an independent route to
// the numbers IdSolver computes in the unactuated subspace with Cholesky factors.
//
// Friction polygon (k = 4) in this file: per contact i the directions [+ŝ, +t̂, −ŝ, −t̂], contact
// by contact (row 4i + j of F), so F = [S_0; T_0; −S_0; −T_0; S_1; …], and E (4n × n) has ones
// in rows 4i … 4i + 3 of column i. The Anitescu–Potra LCP variables are z = [f_N (n); f_F (4n);
// λ (n)].
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/inverse_dynamics/id_solver.h"
#include "coulomb/solvers/lcp/lemke.h"

namespace coulomb::inverse_dynamics::testing {

using Eigen::MatrixXd;
using Eigen::VectorXd;

/// The problem's data as dense full-space matrices.
struct Dense {
  int m = 0, nq = 0, n = 0;
  double dt = 0.0;
  MatrixXd M, Minv, P, N, S, T;
  VectorXd v, fext, b, qdot_des, phi, mu;
  std::vector<int> act, unact;

  explicit Dense(const IdProblem& p)
      : m(p.num_velocities()), nq(p.num_actuated()), n(p.num_contacts()), dt(p.time_step), M(p.M),
        N(p.N), S(p.S), T(p.T), v(p.v), fext(p.f_ext), qdot_des(p.qdot_des), phi(p.phi), mu(p.mu),
        act(p.actuated) {
    Minv = M.inverse();
    Minv = 0.5 * (Minv + Minv.transpose()).eval();
    P = MatrixXd::Zero(nq, m);
    for (int j = 0; j < nq; ++j) P(j, act[j]) = 1.0;
    for (int i = 0; i < m; ++i)
      if (std::find(act.begin(), act.end(), i) == act.end()) unact.push_back(i);
    b = M * v + dt * fext;
  }
  /// F (4n × m): [S_i; T_i; −S_i; −T_i] per contact.
  MatrixXd F() const {
    MatrixXd F(4 * n, m);
    for (int i = 0; i < n; ++i) {
      F.row(4 * i) = S.row(i);
      F.row(4 * i + 1) = T.row(i);
      F.row(4 * i + 2) = -S.row(i);
      F.row(4 * i + 3) = -T.row(i);
    }
    return F;
  }
  /// R (5n × m) = [N; F] (the rows of the digest's Rᵀ).
  MatrixXd R() const {
    MatrixXd R(5 * n, m);
    R << N, F();
    return R;
  }
  MatrixXd E() const {
    MatrixXd E = MatrixXd::Zero(4 * n, n);
    for (int i = 0; i < n; ++i) E.block(4 * i, i, 4, 1).setOnes();
    return E;
  }
  /// Y_P = (P M⁻¹ Pᵀ)⁻¹.
  MatrixXd Y_P() const { return (P * Minv * P.transpose()).inverse(); }
  /// Γ_P = M⁻¹ − M⁻¹ Pᵀ Y_P P M⁻¹ (digest §2), symmetric PSD of rank m − n_q.
  MatrixXd gamma_P() const {
    MatrixXd G = Minv - Minv * P.transpose() * Y_P() * P * Minv;
    return 0.5 * (G + G.transpose());
  }
  /// Δ = M⁻¹ Pᵀ Y_P.
  MatrixXd delta_P() const { return Minv * P.transpose() * Y_P(); }
  /// v* = Γ_P b + Δ q̇_des: the post-step velocity without contact impulses (digest §5.3).
  VectorXd vstar() const { return gamma_P() * b + delta_P() * qdot_des; }
  /// ⁺v of the forward problem with actuator impulse ι and no contact impulse: M⁻¹ (b + Pᵀ ι).
  VectorXd v_free(const VectorXd& iota) const { return Minv * (b + P.transpose() * iota); }
};

/// An LCP w = Q z + r.
struct Lcp {
  MatrixXd Q;
  VectorXd r;
};

/// The Anitescu–Potra LCP (digest §5.1, §5.3) for the velocity map ⁺v = v0 + Γ Rᵀ [f_N; f_F]:
///   Q = [N Γ Nᵀ, N Γ Fᵀ, 0; F Γ Nᵀ, F Γ Fᵀ, E; diag μ, −Eᵀ, 0],  r = [N v0 + φ/Δt; F v0; 0].
/// Γ = Γ_P, v0 = v* gives the inverse-dynamics LCP; Γ = M⁻¹, v0 = M⁻¹ (b + Pᵀ ι) the forward one.
inline Lcp ap_lcp(const Dense& d, const MatrixXd& Gamma, const VectorXd& v0) {
  const int n = d.n;
  const MatrixXd R = d.R(), E = d.E();
  Lcp l;
  l.Q = MatrixXd::Zero(6 * n, 6 * n);
  l.Q.topLeftCorner(5 * n, 5 * n) = R * Gamma * R.transpose();
  l.Q.block(n, 5 * n, 4 * n, n) = E;
  l.Q.block(5 * n, 0, n, n) = d.mu.asDiagonal();
  l.Q.block(5 * n, n, n, 4 * n) = -E.transpose();
  l.r = VectorXd::Zero(6 * n);
  l.r.head(5 * n) = R * v0;
  l.r.head(n) += d.phi / d.dt;
  return l;
}

/// z = [f_N; f_F; λ] from an IdResults of the k = 4 polygon: f_F = [f_S⁺, f_T⁺, f_S⁻, f_T⁻]
/// with f_S⁺ = max(f_S, 0) etc. (the results hold only the net f_S, f_T). If the solver's f_F
/// had f_S⁺ and f_S⁻ both positive, this is the same net impulse with the smaller Σ f_F; it is
/// an LCP solution whenever the solver's was (both positive needs λ = 0 and S ⁺v = 0).
inline VectorXd z_from_results(const Dense& d, const IdResults& r) {
  const int n = d.n;
  VectorXd z = VectorXd::Zero(6 * n);
  for (int i = 0; i < n; ++i) {
    const double fs = r.contact_impulses[3 * i], ft = r.contact_impulses[3 * i + 1];
    z[i] = r.contact_impulses[3 * i + 2];
    z[n + 4 * i] = std::max(fs, 0.0);
    z[n + 4 * i + 1] = std::max(ft, 0.0);
    z[n + 4 * i + 2] = std::max(-fs, 0.0);
    z[n + 4 * i + 3] = std::max(-ft, 0.0);
    if (r.sliding_speed.size() == n) z[5 * n + i] = r.sliding_speed[i];
  }
  return z;
}

/// Feasibility and complementarity of z for the LCP: min z, min w, max |z_i w_i|.
struct LcpCheck {
  double min_z = 0.0, min_w = 0.0, complementarity = 0.0;
};
inline LcpCheck check_lcp(const Lcp& l, const VectorXd& z) {
  const VectorXd w = l.Q * z + l.r;
  LcpCheck c;
  c.min_z = z.size() ? z.minCoeff() : 0.0;
  c.min_w = w.size() ? w.minCoeff() : 0.0;
  c.complementarity = z.size() ? z.cwiseProduct(w).cwiseAbs().maxCoeff() : 0.0;
  return c;
}

/// Generalized contact impulse Nᵀ f_N + Sᵀ f_S + Tᵀ f_T of an IdResults.
inline VectorXd contact_impulse(const Dense& d, const IdResults& r) {
  VectorXd g = VectorXd::Zero(d.m);
  for (int i = 0; i < d.n; ++i)
    g += r.contact_impulses[3 * i] * d.S.row(i).transpose() + r.contact_impulses[3 * i + 1] * d.T.row(i).transpose() +
         r.contact_impulses[3 * i + 2] * d.N.row(i).transpose();
  return g;
}

/// Γ_X = M⁻¹ − M⁻¹ X (Xᵀ M⁻¹ X)⁺ Xᵀ M⁻¹ and the particular velocity M⁻¹ X (Xᵀ M⁻¹ X)⁺ d for the
/// equality rows Xᵀ v = d (columns of X may be dependent: pseudo-inverse by a complete
/// orthogonal decomposition with relative threshold 1e-10).
struct Constrained {
  MatrixXd Gamma;
  VectorXd v_particular;
};
inline Constrained constrain(const Dense& dd, const MatrixXd& X, const VectorXd& d) {
  const MatrixXd K = X.transpose() * dd.Minv * X;
  Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(K);
  cod.setThreshold(1e-10);
  const MatrixXd Y = cod.pseudoInverse();
  Constrained c;
  c.Gamma = dd.Minv - dd.Minv * X * Y * X.transpose() * dd.Minv;
  c.Gamma = 0.5 * (c.Gamma + c.Gamma.transpose()).eval();
  c.v_particular = dd.Minv * X * Y * d;
  return c;
}

/// Numerical rank by SVD: singular values > tol · σ_max.
inline int rank_of(const MatrixXd& A, double tol = 1e-9) {
  if (A.size() == 0) return 0;
  Eigen::JacobiSVD<MatrixXd> svd(A);
  const VectorXd s = svd.singularValues();
  if (s.size() == 0 || s[0] == 0.0) return 0;
  int r = 0;
  for (int i = 0; i < s.size(); ++i)
    if (s[i] > tol * s[0]) ++r;
  return r;
}

}  // namespace coulomb::inverse_dynamics::testing
