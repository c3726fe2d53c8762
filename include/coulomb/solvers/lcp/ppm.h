// Principal pivoting methods for the linear complementarity problem (LCP)
//
//   w = Q z + r,   w ≥ 0,   z ≥ 0,   zᵀ w = 0.
//
// Convention (Zapolsky & Drumwright, "Inverse Dynamics with Rigid Contact and Friction",
// App. D and Algorithm 2; digest ../shared/digests/inverse-dynamics.md §4.6, §7): the
// "non-basic" set B̄ holds the indices where z is COMPUTED (and w = 0); on the complement B,
// z = 0 and w is computed. This is the reverse of the textbook wording.
//
// * PrincipalPivotingSolver: PPM I (Cottle 1968; Murty 1988, Ch. 4) with the single principal
//   pivot and Murty's least-index rule (flip the smallest index whose computed variable is
//   negative), which terminates for every P-matrix Q (finitely, possibly exponentially many
//   pivots in the worst case). Dense, for small n. On a rank-deficient PSD Q a single principal
//   pivot can meet a singular block: kSingularBlock (measured on random N Γ Nᵀ,
//   n 1…15, m 3…8: 12 %, 26 % with duplicated / scaled rows); use ModifiedPpm for those.
// * ModifiedPpm: the paper's Algorithm 2 for the PSD LCP (N v* + b, N Γ Nᵀ) with Γ = M⁻¹ (or the
//   constrained inverse inertia Γ_X) symmetric positive (semi)definite. It never forms the n × n
//   matrix N Γ Nᵀ, only the |B̄| × |B̄| block N_B̄ Γ N_B̄ᵀ (|B̄| ≤ rank(N Γ Nᵀ) ≤ m for a basic
//   solution). Errors of the printed algorithm fixed as in the digest's implementation notes:
//   the offset b (−φ/Δt, Baumgarte) is included, comparisons are against −ε, new indices are
//   appended at the end of B̄, warm-start indices that do not exist are dropped.
//   [derived] With an offset b that is not of the form N x (Baumgarte terms φ_D ≠ γ φ_I) a
//   row that is linearly dependent on B̄ can still have w_i < 0 (the paper's App. F Theorem 2
//   assumes b = 0). Appending it would make A singular, so instead it is EXCHANGED with the
//   row j of B̄ given by the ratio test min { z†_j / y_j : y_j > 0 }, where Γ N_iᵀ = Γ N_B̄ᵀ y:
//   the shift z_B̄ ← z† − t y, z_i ← t leaves v⁺ unchanged and keeps z ≥ 0. If no y_j > 0 the
//   LCP is infeasible (kSingularBlock), unless w_i ≥ −1e-12 (1 + ‖y‖₁) max(1, ‖r‖∞), the
//   round-off of b_i − yᵀ b_B̄, in which case i is skipped. A warm start whose block is singular
//   is replaced by the cold start. Cycle guard: after 2n + 20 iterations the argmin choices
//   become Murty's least-index rule with one flip per iteration (measured: 0 failures and at
//   most 230 iterations on 20000 random feasible instances, n 1…64, m 6…18; without it 0.2 %
//   cycled).
//   Two implementations of the same iteration:
//   - dense Γ (solve(N, Γ, …)): the paper's stated cost. The LDLᵀ factor of A = N_B̄ Γ N_B̄ᵀ is
//     kept across iterations (IncrementalLdlt): an entering row is appended by bordering, O(k²)
//     after Γ N_iᵀ (O(m²)) and N_i Γ N_B̄ᵀ (O(m k)), and the same forward solve gives the
//     dependence test's Schur complement; a leaving row is deleted by a rank-1 update of the
//     trailing factor, O(k²). Each iteration then costs O(k² + m k + n m) (the last for
//     w† = N a† + b) instead of refactoring, O(k³ + m² k + m k² + n m). Since |B̄| ≤ m, a row that
//     would make |B̄| = m + 1 is treated as dependent (it is, in exact arithmetic). Two guards
//     keep the updated factor's round-off out of the result: when the block residual
//     ‖w†_B̄‖∞ (zero in exact arithmetic) exceeds 1e-3 · tolerance, one step of iterative
//     refinement with the true A (through Γ N_B̄ᵀ and N); and an iterate is accepted only from a
//     factor built from scratch in B̄ order (rebuilt once, O(k (m² + m k + k²)), if a removal
//     happened), so a warm start from the returned B̄ reproduces z exactly.
//     The in-place overload solve(N, Γ, v*, b, result, warm) keeps Γ N_B̄ᵀ, the factor and every
//     scratch vector in a workspace inside the object (grow-only) and writes into the caller's
//     PpmResult: it allocates nothing when n and m do not exceed those of an earlier call and
//     `result` already holds size-n vectors (the same n as its previous use). It is non-const
//     (one ModifiedPpm per thread); the const by-value overload with dense Γ is a thin wrapper
//     with its own workspace.
//   - Γ as an operator (solve(N, apply_gamma, …)): refactors the block each iteration with
//     Eigen::LDLT (the implementation before the incremental one, kept for operators that cannot
//     be formed densely; it allocates).
//   Measured (tests/solvers/lcp/ppm_test.cc, InPlaceIncrementalEqualsRefactoringPath; 20600
//   random instances): the same status, iteration count and B̄ on all but 3 (instances whose
//   path is decided by a round-off negative w of a dependent row; both solve, w agrees to
//   1e-11), and there z, w agree within 0.24 κ(A) ε of the data's scale, κ(A) the final block's
//   condition number (up to 4e9 on these instances, where z is only determined to κ ε).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/solvers/lcp/incremental_ldlt.h"

namespace coulomb::solvers::lcp {

enum class PpmStatus {
  kSolved,          ///< complementary solution found (within tolerance)
  kTrivial,         ///< r ≥ −tolerance: z = 0, w = r, no pivot
  kMaxPivots,       ///< pivot / iteration cap reached; z, w are the last iterate
  kSingularBlock,   ///< a principal block to be solved was (numerically) singular
  kNumericalError,  ///< non-finite values appeared
};

std::string to_string(PpmStatus status);

struct PpmParameters {
  /// A computed z or w counts as negative when < −tolerance · max(1, ‖r‖∞).
  double tolerance = 1e-10;
  /// Cap on the number of principal pivots (PPM I) or loop iterations (Modified PPM).
  int max_pivots = 10000;
  /// A principal block is singular when its smallest |LDLᵀ / LU pivot| ≤ this · its largest.
  double singular_tolerance = 1e-13;
  /// Modified PPM: an entering row i is dependent on the rows of B̄ (in the Γ metric) when the
  /// Schur complement a_ii − a_iB̄ A⁻¹ a_B̄i ≤ this · a_ii. Appending it would make A singular,
  /// so it is exchanged with a row of B̄ instead (see ModifiedPpm).
  double dependent_tolerance = 1e-9;
};

struct PpmResult {
  PpmStatus status = PpmStatus::kNumericalError;
  Eigen::VectorXd z;  ///< n; z_i = 0 for i ∉ non_basic
  Eigen::VectorXd w;  ///< n; w_i = 0 for i ∈ non_basic (up to round-off: w = Q z + r)
  /// Principal pivots (PPM I: one per index flipped; Modified PPM: loop iterations, each doing
  /// at most two flips).
  int pivots = 0;
  /// The final B̄: indices where z is computed (Modified PPM: in the order they entered, so
  /// it can be passed back as a warm start).
  std::vector<int> non_basic;
  /// max_i |z_i w_i| of the returned (z, w).
  double complementarity = 0.0;
  bool ok() const { return status == PpmStatus::kSolved || status == PpmStatus::kTrivial; }
};

/// PPM I with Murty's least-index single-principal-pivot rule.
class PrincipalPivotingSolver {
 public:
  explicit PrincipalPivotingSolver(PpmParameters parameters = {});

  /// Solves w = Q z + r ≥ 0, z ≥ 0, zᵀw = 0. Q n × n (a P-matrix guarantees termination and a
  /// unique solution; PD and many PSD matrices also work), r n. `warm_non_basic` is an initial
  /// B̄ (indices outside [0, n) and duplicates are dropped); empty starts from B̄ = ∅ (z = 0).
  /// Throws std::invalid_argument naming the field on bad sizes or non-finite data.
  PpmResult solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r,
                  const std::vector<int>& warm_non_basic = {}) const;

  const PpmParameters& parameters() const { return parameters_; }

 private:
  PpmParameters parameters_;
};

/// The paper's Algorithm 2 (modified PPM I) for the LCP (N v* + b, N Γ Nᵀ).
class ModifiedPpm {
 public:
  /// Applies Γ (m × m, symmetric PSD) to the columns of an m × k matrix: returns Γ X.
  using GammaOperator = std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>;

  explicit ModifiedPpm(PpmParameters parameters = {});

  /// N n × m (rows = contact normals in generalized velocity coordinates), Γ m × m symmetric
  /// positive (semi)definite (= M⁻¹, or Γ_X), v* m (velocity without the impulse, m/s or rad/s),
  /// b n (offset, e.g. −φ/Δt; may be empty = 0). warm_non_basic: the previous call's B̄
  /// (indices ≥ n or < 0 are dropped, duplicates too). Returns z n (impulses), w n
  /// (= N (v* + Γ Nᵀ z) + b, post-step normal velocities), B̄ and the iteration count.
  /// The post-step velocity v⁺ = v* + Γ Nᵀ z is unique even when z is not.
  /// Throws std::invalid_argument naming the field on bad sizes or non-finite data.
  PpmResult solve(const Eigen::MatrixXd& N, const Eigen::MatrixXd& Gamma,
                  const Eigen::VectorXd& v_star, const Eigen::VectorXd& b,
                  const std::vector<int>& warm_non_basic = {}) const;
  /// Same (incremental factor), written into `result` (z, w resized to n, non_basic keeps its
  /// capacity; every field overwritten) with all scratch in this object's workspace: allocates
  /// nothing when n and m do not exceed those of an earlier call and `result` holds size-n
  /// vectors. warm_non_basic may be result.non_basic itself (the previous call's B̄).
  /// Non-const (the workspace). Throws as above.
  void solve(const Eigen::MatrixXd& N, const Eigen::MatrixXd& Gamma, const Eigen::VectorXd& v_star,
             const Eigen::VectorXd& b, PpmResult& result,
             const std::vector<int>& warm_non_basic = {});
  /// Same, with Γ given as an operator (e.g. a factored mass matrix: X ↦ M⁻¹ X). Refactors the
  /// block every iteration and allocates (see the file comment).
  PpmResult solve(const Eigen::MatrixXd& N, const GammaOperator& apply_gamma,
                  const Eigen::VectorXd& v_star, const Eigen::VectorXd& b,
                  const std::vector<int>& warm_non_basic = {}) const;

  const PpmParameters& parameters() const { return parameters_; }

 private:
  // Scratch of the incremental path, sized to the largest n, m seen (grow-only).
  struct Workspace {
    Eigen::VectorXd r, w_dag;              // n
    Eigen::VectorXd a_dag, g, ni;          // m
    Eigen::VectorXd z_dag, a_bar, u, y;    // min(n, m)
    Eigen::MatrixXd gamma_nt;              // m × min(n, m): Γ N_jᵀ for j ∈ B̄, in B̄ order
    IncrementalLdlt factor;                // of N_B̄ Γ N_B̄ᵀ, in B̄ order
    std::vector<int> bar;                  // B̄ (capacity n)
    std::vector<char> in_bar, ignore, seen;  // n
    int n_capacity = -1, m_capacity = -1;
    void reserve(int n, int m);
  };
  static void solve_incremental(const PpmParameters& prm, Workspace& ws, const Eigen::MatrixXd& N,
                                const Eigen::MatrixXd& Gamma, const Eigen::VectorXd& v_star,
                                const Eigen::VectorXd& b, PpmResult& res,
                                const std::vector<int>& warm_non_basic);

  PpmParameters parameters_;
  Workspace workspace_;
};

}  // namespace coulomb::solvers::lcp
