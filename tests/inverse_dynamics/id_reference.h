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
//
// The definitions are compiled once, in id_reference.cc: inline here, their inverses and
// decompositions cost g++ about 25 s of template instantiation in each file that includes them.
#pragma once

#include <vector>

#include <Eigen/Core>

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

  explicit Dense(const IdProblem& p);
  /// F (4n × m): [S_i; T_i; −S_i; −T_i] per contact.
  MatrixXd F() const;
  /// R (5n × m) = [N; F] (the rows of the digest's Rᵀ).
  MatrixXd R() const;
  /// E (4n × n): ones in rows 4i … 4i + 3 of column i.
  MatrixXd E() const;
  /// Y_P = (P M⁻¹ Pᵀ)⁻¹.
  MatrixXd Y_P() const;
  /// Γ_P = M⁻¹ − M⁻¹ Pᵀ Y_P P M⁻¹ (digest §2), symmetric PSD of rank m − n_q.
  MatrixXd gamma_P() const;
  /// Δ = M⁻¹ Pᵀ Y_P.
  MatrixXd delta_P() const;
  /// v* = Γ_P b + Δ q̇_des: the post-step velocity without contact impulses (digest §5.3).
  VectorXd vstar() const;
  /// ⁺v of the forward problem with actuator impulse ι and no contact impulse: M⁻¹ (b + Pᵀ ι).
  VectorXd v_free(const VectorXd& iota) const;
};

/// An LCP w = Q z + r.
struct Lcp {
  MatrixXd Q;
  VectorXd r;
};

/// The Anitescu–Potra LCP (digest §5.1, §5.3) for the velocity map ⁺v = v0 + Γ Rᵀ [f_N; f_F]:
///   Q = [N Γ Nᵀ, N Γ Fᵀ, 0; F Γ Nᵀ, F Γ Fᵀ, E; diag μ, −Eᵀ, 0],  r = [N v0 + φ/Δt; F v0; 0].
/// Γ = Γ_P, v0 = v* gives the inverse-dynamics LCP; Γ = M⁻¹, v0 = M⁻¹ (b + Pᵀ ι) the forward one.
Lcp ap_lcp(const Dense& d, const MatrixXd& Gamma, const VectorXd& v0);

/// z = [f_N; f_F; λ] from an IdResults of the k = 4 polygon: f_F = [f_S⁺, f_T⁺, f_S⁻, f_T⁻]
/// with f_S⁺ = max(f_S, 0) etc. (the results hold only the net f_S, f_T). If the solver's f_F
/// had f_S⁺ and f_S⁻ both positive, this is the same net impulse with the smaller Σ f_F; it is
/// an LCP solution whenever the solver's was (both positive needs λ = 0 and S ⁺v = 0).
VectorXd z_from_results(const Dense& d, const IdResults& r);

/// Feasibility and complementarity of z for the LCP: min z, min w, max |z_i w_i|.
struct LcpCheck {
  double min_z = 0.0, min_w = 0.0, complementarity = 0.0;
};
LcpCheck check_lcp(const Lcp& l, const VectorXd& z);

/// Generalized contact impulse Nᵀ f_N + Sᵀ f_S + Tᵀ f_T of an IdResults.
VectorXd contact_impulse(const Dense& d, const IdResults& r);

/// Γ_X = M⁻¹ − M⁻¹ X (Xᵀ M⁻¹ X)⁺ Xᵀ M⁻¹ and the particular velocity M⁻¹ X (Xᵀ M⁻¹ X)⁺ d for the
/// equality rows Xᵀ v = d (columns of X may be dependent: pseudo-inverse by a complete
/// orthogonal decomposition with relative threshold 1e-10).
struct Constrained {
  MatrixXd Gamma;
  VectorXd v_particular;
};
Constrained constrain(const Dense& dd, const MatrixXd& X, const VectorXd& d);

/// Numerical rank by SVD: singular values > tol · σ_max.
int rank_of(const MatrixXd& A, double tol = 1e-9);

}  // namespace coulomb::inverse_dynamics::testing
