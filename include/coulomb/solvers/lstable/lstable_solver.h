// The L-stable first-order constraint solver of Drumwright, "An Unconditionally Stable
// First-Order Constraint Solver for Multibody Systems" (paper ../shared/papers/
// 001_238cd3da0158afe1.txt, digest ../shared/digests/lstable.md).
//
// Every constraint row i is a spring–damper in constraint space, λ_i = −K_i φ_i − B_i φ̇_i,
// integrated implicitly with the multibody velocities; one convex problem per step, no Newton
// iterations, stable for any δt in the constraint modes. With impulses γ = δt λ, the predicted
// row velocity φ̇₁ = (G v)_i satisfies (digest §3.2 compliance form (b), §7.6)
//
//   φ̇₁ = v̂ − R γ,   R = 1 / (δt (δt θ K + B)),   v̂ = −K (φ₀ + δt (1 − θ) φ̇₀) / (δt θ K + B)
//
// (θ = the integrator's θ_vq; θ = 1 is the paper's implicit Euler), and the step solves
//
//   min_γ ½ γᵀ (W + R) γ + γᵀ (G v* − v̂)   s.t. γ ∈ 𝒦,   W = G A⁻¹ Gᵀ,
//   v = v* + A⁻¹ Gᵀ γ,
//
// with A the stage-1 matrix (M plus the implicit joint springs), v* the free-motion velocity,
// and 𝒦 per row group:
//   - bilateral rows (PD actuators without effort limit, couplers, the rows of bilateral
//     constraints: ball, weld, distance, joint; rigid ones take the rigid contacts' R and
//     τ = δt θ/π): free. A step with only
//     bilateral rows is ONE linear solve (W + R) γ = v̂ − G v*, the symmetric form
//     (D⁻¹ + W) λ = D⁻¹ r of digest §3.2(b) that stays exact for K up to 1e18 (§4 item 1);
//     redundant rows need no regularization (W + R ≻ 0 whenever R ≻ 0).
//   - unilateral rows (joint limits; contact normals of μ = 0): γ ≥ 0. This is the
//     complementarity reading of the paper's DPP (digest §3.3, UnilateralMode::Complementarity):
//     its KKT conditions are exactly λ = max(0, spring force) for coupled rows as well; the
//     paper's min-norm QP is unilateral_min_norm() below, for reproduction.
//   - frictional contacts: rows [t1, t2, n] ([t1, n] for a planar contact); the normal a
//     compliant spring–damper (K = k, B = k τ_d), the tangents pure dampers (K_r = 0,
//     B_r = tangential_damping / δt, the paper's 10⁶/δt), and the true cone ‖γ_t‖ ≤ μ γ_n as one
//     second-order cone (the 3-D SOCP of §6.3; two half-planes for a planar contact). This is the
//     digest's fix 2 for the ζ normal-force inflation (§7.3) and FrictionModel::kCone's only
//     pass; the default kStaggered follows it with normal/friction passes (see FrictionModel).
//   - bounded rows (PD with an effort limit: |γ| ≤ δt e; joint friction: |γ| ≤ δt F, a pure
//     damper like the tangents): two linear inequalities.
// The Ġ (velocity-product) terms of the paper are off (digest §7.1(a): M̂ does not exist for
// redundant rows, and the term destabilizes long runs, §4 item 4).
//
// Mixed steps (free rows beside constrained ones) first eliminate the free rows, the paper's
// Appendix A (digest §3.6, with the §7.4 corrections): their Schur complement, formed from a QR
// of [L⁻¹G_Fᵀ; R_F^½] so that redundant or stiff free rows lose no accuracy, leaves a QP in the
// constrained rows only, and the free impulses follow by back-substitution.
// Solved by ConicQpSolver (solvers/qp, dense interior point), O(n³) per iteration in the number
// of rows n: the method suits problems whose constraint count is not large (the paper's own
// verdict). Workspace kept between steps: no allocation once the sizes have been seen.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/QR>

#include "coulomb/constraints/constraint_set.h"
#include "coulomb/solvers/qp/conic_qp.h"

namespace coulomb::solvers::lstable {

/// How the friction cone enters the step.
///  - kStaggered (default): normal and friction passes to their fixed point (digest §7.3 fix 3,
///    iterated): the first pass is the kCone problem, each further pass bounds the friction of
///    every contact by the disc ‖γ_t‖ ≤ μ γ_n of the previous pass while the normal rows stay
///    unilateral spring–dampers; stops when no normal impulse changes by more than
///    friction_tolerance times the largest impulse (a relaxed update when it stops contracting). The fixed point is the discrete Coulomb law with the compliant
///    normal: no normal lift while sliding.
///  - kCone: one SOCP with the true cone ‖γ_t‖ ≤ μ γ_n (digest fix 2). One solve, but the cone's
///    convex relaxation lifts a sliding contact's normal velocity by about μ·slip within the
///    step (a sliding box hovers; a bowling ball hops).
enum class FrictionModel { kStaggered, kCone };
/// "staggered", "cone".
const char* to_string(FrictionModel model);
/// Throws std::invalid_argument naming the value unless it is "staggered" or "cone".
FrictionModel parse_friction_model(const std::string& name);

struct LStableParameters {
  /// Tangential damper B_r = tangential_damping / δt [N·s/m] (paper §6.4: 10⁶/δt, "no creep and
  /// no failed solves"); joint friction uses the same damper.
  double tangential_damping = 1e6;
  /// Joint limits: K [N·m/rad or N/m] and B [N·m·s/rad or N·s/m] (the paper's range-of-motion
  /// pendulum: K = 1e12, B = 0).
  double limit_stiffness = 1e12;
  double limit_damping = 0.0;
  /// Couplers: K, B of the bilateral spring–damper.
  double coupler_stiffness = 1e12;
  double coupler_damping = 0.0;
  /// Rigid contacts (stiffness = ∞): R = rigid_compliance_factor · W_nn (the contact's own
  /// Delassus diagonal), a stiffness at the edge of what the step resolves.
  double rigid_compliance_factor = 1.0 / (4.0 * 3.141592653589793 * 3.141592653589793);
  /// Mixed problems (free rows beside constrained ones): remove the free rows before the QP by
  /// their Schur complement (the paper's Appendix A, eqs. 158–198; digest §3.6 with the §7.4
  /// corrections), so the interior point works on the constrained rows only. false solves the
  /// unreduced problem (same optimum; kept for tests and comparison).
  bool eliminate_free_rows = true;
  FrictionModel friction = FrictionModel::kStaggered;
  /// A frictional contact whose second tangent row is zero in every Jacobian block (a planar
  /// model) takes the paper's 2-D friction (§6.1–6.2): rows [t1, n], the cone |γ_t| ≤ μ γ_n as
  /// two linear inequalities (and the staggered disc as a box), so an all-planar step is a QP with
  /// no second-order cone. false keeps such contacts as 3-D cones (same solution; for tests).
  bool planar_friction_qp = true;
  /// kStaggered: passes after the first, and the relative change of the largest normal impulse
  /// below which the fixed point is reached. A run that does not reach it keeps the last pass
  /// (feasible and dissipative) and reports friction_converged = false.
  int max_friction_iterations = 30;
  double friction_tolerance = 1e-6;
  qp::ConicQpParameters qp;
};

enum class LStableStatus { kSuccess, kLinearSolve, kQpNotConverged, kQpNumericalError };
const char* to_string(LStableStatus status);

struct LStableResults {
  LStableStatus status = LStableStatus::kSuccess;
  Eigen::VectorXd v;  ///< n_v: velocities at the end of the step
  constraints::ConstraintImpulses impulses;
  int num_rows = 0;
  int qp_iterations = 0;  ///< 0 for a linear solve
  double residual = 0.0;  ///< max of the QP's relative primal and dual residuals (0 for a linear solve)
  bool used_qp = false;
  int planar_contacts = 0;  ///< frictional contacts solved with 2-D friction (planar_friction_qp)
  int friction_iterations = 0;     ///< kStaggered: friction passes after the normal pass
  bool friction_converged = true;  ///< kStaggered: the normal impulses reached their fixed point
};

class LStableSolver {
 public:
  explicit LStableSolver(LStableParameters parameters = {}) : parameters_(parameters), qp_solver_(parameters.qp) {}
  const LStableParameters& parameters() const { return parameters_; }

  /// One step. A_blocks[t]: the SPD n_v(t) × n_v(t) matrix of tree t (set.trees[t]); v_star: n_v
  /// free-motion velocities. Throws std::invalid_argument for mismatched sizes or a
  /// non-positive-definite A block. Never returns NaN: a QP that fails keeps its last iterate and
  /// the status says so.
  const LStableResults& solve(const constraints::ConstraintSet& set, const std::vector<Eigen::MatrixXd>& A_blocks,
                              const Eigen::VectorXd& v_star);
  const LStableResults& results() const { return results_; }

 private:
  // The QP of a step with constrained rows (orthant, box, cone), after Appendix A's elimination
  // of the free rows when enabled. Writes gamma_ and the status fields of `out`.
  void solve_qp(const constraints::ConstraintSet& set, int n, LStableResults& out);

  LStableParameters parameters_;
  qp::ConicQpSolver qp_solver_;
  qp::ConicQp qp_;
  LStableResults results_;
  std::vector<Eigen::LLT<Eigen::MatrixXd>> llt_;
  Eigen::MatrixXd G_, AinvGt_, W_;
  Eigen::VectorXd R_, vhat_, rhs_, gamma_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_;
  std::vector<int> cone_rows_, orthant_rows_, box_rows_, rigid_rows_;
  std::vector<double> mu_, bound_;
  std::vector<int> cone_dim_;  ///< rows of each frictional contact: 3 ([t1, t2, n]) or 2 ([t1, n], planar)
  // Appendix A elimination workspace.
  std::vector<int> free_rows_, constrained_rows_;
  Eigen::MatrixXd Y_, Z_, YC_, Phat_;
  Eigen::VectorXd qf_, w_, qhat_, xV_, x_good_;
  std::vector<char> row_kind_;
  std::vector<int> row_data_, position_, cone_sizes_, cone_normal_v_;
  std::vector<double> radius_, normal_prev_;
  Eigen::HouseholderQR<Eigen::MatrixXd> qr_;
};

/// The paper's unilateral QP as printed (eqs. 83–85, "PaperMinNorm"): min ½λᵀλ s.t.
/// (I + D W) λ ≥ r, λ ≥ 0, with D = diag(d). W n×n PSD, d, r n. Equals the complementarity
/// solution only for uncoupled rows or a Z-matrix W (digest §3.3: W = [[1, .9], [.9, 1]], D = I,
/// r = (1, −1) gives (0.4158, 0.1871) against (0.5, 0)). Throws std::runtime_error if the QP
/// does not converge.
Eigen::VectorXd unilateral_min_norm(const Eigen::MatrixXd& W, const Eigen::VectorXd& d, const Eigen::VectorXd& r);
/// The complementarity reading (UnilateralMode::Complementarity): λ ≥ 0 ⊥ (I + D W) λ − r ≥ 0,
/// solved as min ½λᵀ(D⁻¹ + W)λ − λᵀD⁻¹r s.t. λ ≥ 0 (d > 0).
Eigen::VectorXd unilateral_complementarity(const Eigen::MatrixXd& W, const Eigen::VectorXd& d, const Eigen::VectorXd& r);

}  // namespace coulomb::solvers::lstable
