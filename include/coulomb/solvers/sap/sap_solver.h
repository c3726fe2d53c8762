// SapSolver: Newton's method on the unconstrained convex SAP cost with an exact (or
// backtracking) line search (Castro et al. §IV, Algorithm 2; digest ../shared/digests/sap.md §3).
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "coulomb/solvers/sap/sap_problem.h"

namespace coulomb::solvers::sap {

enum class SapLineSearch { kExact, kBacktracking };
/// How H Δv = −∇ℓ is solved: dense LLT; CHOLMOD's supernodal sparse Cholesky (kSparse); or
/// coulomb's BlockSparseCholesky over the tree/contact graph (kBlockSparse). kAuto: dense below
/// dense_threshold velocities, block-sparse at or above.
enum class SapLinearSolver { kAuto, kDense, kSparse, kBlockSparse };

/// Solver parameters with their defaults (digest §3.3, §3.5).
struct SapSolverParameters {
  double abs_tolerance = 1e-14;  ///< ε_a of Eq. 26 [√J]
  double rel_tolerance = 1e-6;   ///< ε_r of Eq. 26
  int max_iterations = 100;
  SapLineSearch line_search = SapLineSearch::kExact;
  // Exact line search (rtsafe on dℓ/dα over [0, alpha_max]).
  double exact_alpha_max = 1.5;
  double exact_f_tolerance = 1e-8;  ///< on |dℓ/dα| / |dℓ/dα(0)|
  int exact_max_iterations = 100;
  // Backtracking (Armijo).
  double armijo_alpha_max = 1.25;
  double armijo_rho = 0.8;
  double armijo_c = 1e-4;
  int backtracking_max_iterations = 40;
  /// kAuto: dense LLT below this many velocities, BlockSparseCholesky at or above.
  SapLinearSolver linear_solver = SapLinearSolver::kAuto;
  int dense_threshold = 150;
  /// Also stop when the cost stagnates: |Δℓ| < cost_abs_tolerance + cost_rel_tolerance·ℓ
  /// after a step with α > 0.5 (Drake's extra criterion; 0 disables).
  double cost_abs_tolerance = 1e-30;
  double cost_rel_tolerance = 1e-15;
  /// Warm start: if v_guess does not already meet Eq. 26, start instead from v = 0 (rest) when
  /// ℓ_p(0) < ℓ_p(v_guess). Costs up to two cost evaluations without G per solve. On impacts
  /// (clutter: new stiff contacts with large approach and slip velocities) the previous step's
  /// velocities are a poor guess for bodies that come to rest: on the same 996 clutter problems
  /// the mean falls from 4.73 to 4.24 Newton iterations per step, the maximum from 27 to 26.
  bool try_zero_guess = true;
  /// When the constraints fall into several independent islands (trees coupled through
  /// constraints; a pile's separate heaps, a robot and a box apart), search each Newton step
  /// island by island: every island takes the exact step length along its own part of Δv
  /// instead of one α for all. The minimizer is the same (ℓ_p is a sum of one convex term per
  /// island); the Newton iterations are those of the slowest island rather than more. An island
  /// that meets Eq. 26 on its own rows is done: it stays where it is, and on the block-sparse
  /// path the Newton matrix's assembly, factorization and solves leave its trees out from then
  /// on (and the trees no constraint touches from the start). The solve still stops on Eq. 26
  /// for the whole problem; should every island be done first (the per-island tests add up to
  /// it within √2), they all go back into the Newton matrix. docs/sap.md, "Islands".
  bool island_line_search = true;
  /// Block-sparse path: the Newton matrix's pattern holds the pairs of trees coupled by a
  /// constraint with G ≠ 0 at the first factorization (contacts within the collision margin that
  /// carry no impulse bring no edge, nor the fill-in it would cause), grown to every coupled pair
  /// should another become active (SapSolverResults::pattern_grew). With this flag the first
  /// pattern also keeps the pairs active at the end of the last solve, which are most of this
  /// solve's (a step's contacts are mostly the last step's): fewer growths. The solution is the
  /// same to the tolerance, but its last bits then depend on the last solve through the
  /// elimination order; clear_pattern_hint() forgets it. docs/sap.md, "The active pattern".
  bool pattern_from_last_solve = true;
  /// Record per-iteration costs and step sizes in the results.
  bool record_history = false;
};

enum class SapSolverStatus {
  kSuccess,              ///< Eq. 26 (or cost stagnation) met
  kMaxIterations,        ///< max_iterations Newton steps without meeting Eq. 26
  kLineSearchFailure,    ///< the search direction is not a descent direction (round-off)
  kLinearSolverFailure,  ///< H could not be factorized
};
const char* to_string(SapSolverStatus status);

struct SapSolverResults {
  SapSolverStatus status = SapSolverStatus::kSuccess;
  Eigen::VectorXd v;      ///< solution velocities (n_v); the last iterate if not converged
  Eigen::VectorXd vc;     ///< constraint velocities J v (num_rows)
  Eigen::VectorXd gamma;  ///< impulses γ (num_rows) [N·s]
  int iterations = 0;               ///< Newton iterations (0: the guess already met Eq. 26)
  int line_search_iterations = 0;   ///< summed over Newton iterations
  double cost = 0.0;                ///< ℓ_p(v) [J]
  double momentum_error = 0.0;      ///< e_m of Eq. 32 (dimensionless)
  double gradient_norm = 0.0;       ///< ‖D̃ ∇ℓ_p‖ [√J], the residual of Eq. 26
  std::vector<double> cost_history;   ///< ℓ at the guess and after each iteration (if recorded)
  std::vector<double> alpha_history;  ///< step sizes (if recorded)
  std::vector<double> momentum_error_history;  ///< e_m at the guess and after each iteration (if recorded)
  bool used_sparse = false;  ///< a sparse path (CHOLMOD or block-sparse) solved the Newton systems
  /// Block-sparse path: a constraint became active whose pair of trees the first pattern left
  /// out, and the Newton matrix's pattern was analyzed again with every coupled pair.
  bool pattern_grew = false;
};

/// Solver buffers kept between solves (defined in sap_solver.cc).
struct SapSolverWorkspace;

class SapSolver {
 public:
  explicit SapSolver(SapSolverParameters parameters = {});
  ~SapSolver();
  /// Copies share the parameters, not the buffers.
  SapSolver(const SapSolver& other);
  SapSolver& operator=(const SapSolver& other);
  SapSolver(SapSolver&&) noexcept;
  SapSolver& operator=(SapSolver&&) noexcept;

  const SapSolverParameters& parameters() const { return parameters_; }

  /// Prepares every constraint of `problem` (R, v̂ from δt and the Delassus estimate
  /// W_ii ≈ Σ_t J_it A_t⁻¹ J_itᵀ) and minimizes ℓ_p starting at `v_guess` (n_v; typically the
  /// previous step's velocities). Never returns NaN: on failure the status says why and v is
  /// the last finite iterate. Throws std::invalid_argument if v_guess has the wrong size or is
  /// not finite.
  ///
  /// The solver keeps its buffers (the Hessian, its factorization and symbolic analysis, the
  /// line-search data) from one solve to the next, so repeated solves of problems of the same
  /// size do not allocate apart from the results' vectors. Hence one SapSolver must not be used
  /// by two threads at once.
  SapSolverResults solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess) const;
  /// As solve(), writing into `results` (reusing its vectors' storage).
  void solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess, SapSolverResults& results) const;
  /// As solve(), starting from whichever of `v_guess` and `v_second_guess` (both n_v) has the
  /// lower ℓ_p (two cost evaluations without G or gradient; ties keep v_guess); then as
  /// SapSolverParameters::try_zero_guess says. The simulator passes v₀ and v₀ + δt a, the last
  /// step's acceleration held (SimulatorParameters::acceleration_warm_start). Throws
  /// std::invalid_argument if either guess has the wrong size or is not finite.
  void solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess,
             const Eigen::Ref<const Eigen::VectorXd>& v_second_guess, SapSolverResults& results) const;
  /// Forgets the pairs of trees active at the end of the last solve
  /// (SapSolverParameters::pattern_from_last_solve): the next solve is then a function of its
  /// problem and guesses alone, to the bit, as on a new solver. Simulator::set_state calls it.
  void clear_pattern_hint() const;

 private:
  void solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess,
             const Eigen::Ref<const Eigen::VectorXd>* v_second_guess, SapSolverResults& results) const;

  SapSolverParameters parameters_;
  mutable std::unique_ptr<SapSolverWorkspace> workspace_;
};

}  // namespace coulomb::solvers::sap
