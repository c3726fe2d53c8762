// Dense convex quadratic cone programs by a primal–dual interior-point method.
//
//   minimize   ½ xᵀ P x + qᵀ x
//   subject to G x + s = h,   s ∈ K = ℝ₊^l × 𝒬^{m₁} × … × 𝒬^{m_k}
//
// with 𝒬^m = {(t, u) ∈ ℝ × ℝ^{m−1} : ‖u‖ ≤ t} the second-order (Lorentz) cone. Linear
// inequalities are the l orthant rows of G; a friction cone ‖γ_t‖ ≤ μ γ_n is one 3-row cone
// block with rows (μ γ_n, γ_t) = −G x (h = 0). Equality constraints are not needed by the
// solvers that use this (bilateral rows are free variables of P).
//
// Method: the infeasible-start path-following algorithm of Vandenberghe, "The CVXOPT linear and
// quadratic cone program solvers" (2010), §§ 5–7 — Nesterov–Todd scaling W (W z = W⁻¹ s = λ),
// Mehrotra predictor–corrector with the second-order correction (W⁻¹Δs_a) ∘ (W Δz_a), and
// the reduced Newton system (P + Gᵀ W⁻² G) Δx = … solved by Cholesky (n × n). Cost per iteration
// O(n³ + m n²) for n variables and m rows of G; Gᵀ W⁻² G uses G's structure (orthant rows with one
// nonzero add to the diagonal, a cone block only to the columns it touches), so for the problems
// of solvers/lstable it is O(n³/3 + m n). Used by solvers/lstable (Drumwright's unilateral
// QP and friction SOCP) and, later, by inverse dynamics.
//
// Nothing is allocated once a problem of the same size has been solved (the workspace is kept in
// the solver object).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace coulomb::solvers::qp {

/// Problem data. Sizes: P n×n (symmetric positive semidefinite; P + GᵀG must be positive
/// definite), q n, G m×n, h m, m = num_orthant + Σ cone_sizes. The rows of G and h are the l
/// orthant rows first, then each cone's rows in order (its first row is the cone's axis t).
struct ConicQp {
  Eigen::MatrixXd P;
  Eigen::VectorXd q;
  Eigen::MatrixXd G;
  Eigen::VectorXd h;
  int num_orthant = 0;
  std::vector<int> cone_sizes;  ///< each ≥ 2

  int num_variables() const { return static_cast<int>(q.size()); }
  int num_rows() const { return static_cast<int>(h.size()); }
  /// Resizes P, q, G, h (zeroed) for n variables, l orthant rows and the given cones.
  void resize(int n, int l, const std::vector<int>& cones);
  /// Throws std::invalid_argument naming the mismatch (sizes, a cone smaller than 2, non-finite
  /// data).
  void validate() const;
};

struct ConicQpParameters {
  /// Converged when ‖Px + q + Gᵀz‖ ≤ tol · max(1, ‖q‖), ‖Gx + s − h‖ ≤ tol · max(1, ‖h‖) and
  /// sᵀz ≤ tol · max(1e-6, |½xᵀPx + qᵀx|) (the duality gap; small multipliers and slacks are
  /// resolved to about √gap, hence the small floor).
  double tolerance = 1e-10;
  /// When the iterates stall in round-off before `tolerance` (no step of length > 1e-14 stays in
  /// the cone, or 5 iterations without a new best of max(dual residual, primal residual,
  /// gap / max(1e-6, |objective|)) once that best is below this tolerance), the best iterate is
  /// accepted as optimal if it meets this looser tolerance (the primal residual then relative to
  /// max(1, ‖h‖, ‖s‖): large slacks with h ≈ 0 stall at their own round-off).
  double acceptable_tolerance = 1e-7;
  int max_iterations = 60;
  double step_fraction = 0.99;  ///< of the largest step that stays in the cone interior
};

/// kOptimal: the residuals and gap met `tolerance`, or met `acceptable_tolerance` when the
/// iterates stalled in round-off first (badly scaled problems with the optimum far out on a
/// cone's boundary).
enum class ConicQpStatus { kOptimal, kMaxIterations, kNumericalError };
const char* to_string(ConicQpStatus status);

struct ConicQpResults {
  ConicQpStatus status = ConicQpStatus::kNumericalError;
  int iterations = 0;
  Eigen::VectorXd x;  ///< n: the minimizer (if not optimal: the last iterate, or the best after a stall)
  Eigen::VectorXd s;  ///< m: slacks, in K
  Eigen::VectorXd z;  ///< m: multipliers of G x + s = h, in K (K is self-dual)
  double primal_residual = 0.0;  ///< ‖Gx + s − h‖ / max(1, ‖h‖)
  double dual_residual = 0.0;    ///< ‖Px + q + Gᵀz‖ / max(1, ‖q‖)
  double gap = 0.0;              ///< sᵀz
  double objective = 0.0;        ///< ½xᵀPx + qᵀx
};

class ConicQpSolver {
 public:
  explicit ConicQpSolver(ConicQpParameters parameters = {}) : parameters_(parameters) {}
  const ConicQpParameters& parameters() const { return parameters_; }
  ConicQpParameters& mutable_parameters() { return parameters_; }

  /// Solves `problem` (validated). Never returns NaN: on a numerical failure (a Cholesky that
  /// fails even after regularization) the last finite iterate is kept and status says so.
  const ConicQpResults& solve(const ConicQp& problem);
  const ConicQpResults& results() const { return results_; }

  /// Active-set polishing of the last solve() of `problem` (the same problem; orthant rows
  /// only, i.e. no cones): an interior-point iterate is accurate only to about the square root
  /// of its tolerance where strict complementarity fails (a constraint active with a zero
  /// multiplier, as at a contact that touches without load). Guesses the active rows
  /// 𝒜 = {i : s_i < max(z_i, θ)} for θ = 0, 1e-8, 1e-6, 1e-4 times max(1, ‖s‖∞) in turn (a
  /// degenerate row, active with a zero multiplier, has a slack of the order of the square root
  /// of the interior point's tolerance), solves the equality-constrained KKT system
  ///   [P + δI   G_𝒜ᵀ] [x  ]   [−q  ]
  ///   [G_𝒜     −δI  ] [z_𝒜] = [h_𝒜 ]      (quasi-definite; δ = 1e-10 · max(1, max diag P))
  /// by an LDLᵀ factorization without pivoting and three steps of iterative refinement against
  /// the unregularized matrix (as OSQP's polishing), corrects the guess by at most 10 primal–dual
  /// active-set changes (add the most violated row, else drop the most negative multiplier), and
  /// accepts the first result that is a KKT
  /// point: every row holds to `tolerance` · max(1, ‖h‖∞) and z_𝒜 ≥ −10³ tolerance · max(1, ‖z‖∞)
  /// (stationarity holds by construction); it may follow a solve() that stalled (status not
  /// kOptimal) as long as its iterate is finite. On acceptance, status becomes kOptimal and
  /// results() is replaced (s = h − G x ≥ 0 clipped, z zero off 𝒜) and true is returned; else
  /// results() is unchanged. Allocation-free after warm-up (buffers sized n + m).
  /// Throws std::invalid_argument if the problem has cones or its sizes differ from the last solve.
  bool polish(const ConicQp& problem, double tolerance = 1e-9);

  /// Warm start from a known active set (orthant rows only): solves the equality-constrained
  /// KKT system on the rows `active` exactly as polish() does and accepts the result under the
  /// same KKT test; on acceptance results() holds it with status kOptimal and iterations 0 and
  /// true is returned (else results() is unusable: call solve()). For a sequence of similar
  /// problems (a controller's successive steps) pass last_active_set() of the previous one: an
  /// unchanged active set is confirmed with one factorization instead of an interior-point run.
  /// Throws std::invalid_argument for cones, an invalid problem or a row index out of range.
  bool solve_active_set(const ConicQp& problem, const std::vector<int>& active, double tolerance = 1e-9);
  /// The active rows of the last accepted polish() or solve_active_set() (ascending).
  const std::vector<int>& last_active_set() const { return active_; }

 private:
  bool polish_with(const ConicQp& p, double tolerance, double theta);
  bool solve_on_active(const ConicQp& p, double tolerance, double zscale);
  void compute_scaling(const ConicQp& p);
  // y = W⁻¹ x (inverse = true) or W x, blockwise, for one vector of size m.
  void apply_scaling(const ConicQp& p, const Eigen::VectorXd& x, bool inverse, Eigen::VectorXd& y) const;
  // Solves λ ∘ u = d for u (the inverse of the Jordan product with λ), blockwise.
  void jordan_divide(const ConicQp& p, const Eigen::VectorXd& d, Eigen::VectorXd& u) const;
  // Largest α ≤ 1/fraction with x + α dx ∈ K.
  double max_step(const ConicQp& p, const Eigen::VectorXd& x, const Eigen::VectorXd& dx) const;
  // The Newton direction for the right-hand sides (rx, rz) and the complementarity target d.
  void direction(const ConicQp& p, const Eigen::VectorXd& rx, const Eigen::VectorXd& rz, const Eigen::VectorXd& d,
                 Eigen::VectorXd& dx, Eigen::VectorXd& ds, Eigen::VectorXd& dz);

  ConicQpParameters parameters_;
  ConicQpResults results_;
  // Workspace.
  Eigen::VectorXd w_orthant_;               // W = diag(w) on the orthant rows
  std::vector<double> eta_;                 // per cone
  Eigen::VectorXd wbar_;                    // per cone rows: v, W = η (2vvᵀ − J) (Jordan square root of the NT point)
  Eigen::VectorXd lambda_;                  // W z
  Eigen::MatrixXd Gs_;                      // W⁻¹ G
  Eigen::MatrixXd K_;                       // P + Gᵀ W⁻² G
  Eigen::LLT<Eigen::MatrixXd> llt_;
  std::vector<int> single_col_;               // per orthant row: its only nonzero column, or −1
  std::vector<int> dense_rows_;               // orthant rows with more than one nonzero
  std::vector<std::vector<int>> cone_cols_;   // per cone: the columns where its rows are nonzero
  Eigen::MatrixXd block_;
  Eigen::VectorXd rx_, rz_, d_, t_, u_, tmp_, tmp2_, dx_, ds_, dz_, dxa_, dsa_, dza_, e_;
  Eigen::VectorXd best_x_, best_s_, best_z_;  // the best iterate (see solve())
  Eigen::VectorXd px_;                        // P x (n), for the objective
  std::array<double, 4> best_residuals_{};    // its dual, primal residual, gap, objective
  // polish() workspace
  Eigen::MatrixXd kkt_;
  Eigen::VectorXd kkt_rhs_, kkt_sol_, kkt_res_, kkt_corr_, polish_x_, polish_s_;
  std::vector<int> active_;
  std::vector<char> in_active_;
};

}  // namespace coulomb::solvers::qp
