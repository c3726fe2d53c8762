// Linear complementarity problems by Lemke's complementary pivoting algorithm.
//
//   find z ∈ ℝⁿ  with  w = Q z + r,  w ≥ 0,  z ≥ 0,  zᵀ w = 0          (the LCP (r, Q))
//
// Method: Lemke's scheme with one artificial variable z₀ and covering vector e = (1, …, 1)
// (C. E. Lemke, "Bimatrix equilibrium points and mathematical programming", Management Science
// 11, 1965; Cottle, Pang & Stone, "The Linear Complementarity Problem", 1992, §4.4). The augmented
// system w = Q z + e z₀ + r starts from the almost-complementary basis {w} with z₀ entering at
// the most negative rᵢ, then always lets the complement of the variable that just left enter,
// until z₀ leaves (a solution) or the entering column has no positive entry (ray termination).
// Degeneracy: the lexicographic minimum ratio test of Cottle–Pang–Stone §4.4 (ties in the ratio
// bᵢ / dᵢ are broken by the rows of B⁻¹ divided by dᵢ), which is the same as solving the
// perturbed problem r + (ε, ε², …, εⁿ) and rules out cycling. A dense tableau of size
// n × (2n + 2) is kept; each pivot costs O(n²).
//
// Which problems Lemke processes (terminates with a solution or a ray that proves there is none):
// Q copositive-plus (zᵀQz ≥ 0 for z ≥ 0, and zᵀQz = 0, z ≥ 0 ⇒ (Q + Qᵀ)z = 0; includes every
// positive semidefinite Q, symmetric or not), P-matrices (always solvable, unique solution),
// Z-matrices (off-diagonals ≤ 0). Ray termination for copositive-plus Q means the LCP is
// INFEASIBLE: the ray's z direction y = z_ray ≥ 0 satisfies Qᵀy ≤ 0 and rᵀy < 0, so no z ≥ 0
// has Qz + r ≥ 0 (0 ≤ yᵀ(Qz + r) = (Qᵀy)ᵀz + rᵀy < 0). LemkeResults::ray returns y so callers
// can check this certificate. For other Q a ray means only that Lemke failed.
//
// Regularized retry (optional, LemkeParameters::regularization_retries; the paper's authors used
// a Tikhonov-regularized LEMKE, digest ../shared/digests/inverse-dynamics.md §5.3, and PACER's
// lcp_lemke_regularized does the same): when the plain solve ends in ray termination, the pivot
// limit or a numerical error, Lemke is run again, cold, on the PERTURBED problem (Q + εI, r) with
// ε = 1e-20, 1e-16, 1e-12, … (×1e4 per try), stopping at the first ε it solves. The returned z
// then solves the perturbed LCP, not the original one: w and complementarity_residual are
// recomputed on the ORIGINAL problem (w = Q z + r, so w may be −ε z ≥ −ε ‖z‖∞ below zero), and
// `regularization` reports ε. For an infeasible original problem the perturbed solution can be
// large (Q = 0, r < 0: z = −r/ε), which its original residual shows; callers should check it.
// If no try succeeds, the plain solve's result is returned (regularization = 0). Note that an ε
// below pivot_tolerance cannot create a pivot where Q has a zero (e.g. a zero diagonal): there
// the first effective ε is 1e-8 (measured in tests/solvers/lcp/lemke_test.cc, RegularizedRetry).
//
// Allocations: the in-place solve(Q, r, results, z_warm) keeps the tableau (n × (2n + 2)) and
// every scratch vector in a workspace inside the solver (grow-only), so it allocates nothing when
// n does not exceed that of an earlier call and `results` keeps its size-n vectors (a call with
// the same n as the previous one on the same `results`). It is therefore a non-const member: one
// LemkeSolver per thread. The const by-value solve() is a thin wrapper with its own workspace
// (allocates per call, thread-safe as before).
//
// Units: whatever the caller's; z and w carry the units of r / Q and r respectively.
#pragma once

#include <vector>

#include <Eigen/Core>

namespace coulomb::solvers::lcp {

struct LemkeParameters {
  /// Pivot limit; ≤ 0 means automatic: 50 (n + 1) + 100 (Lemke needs O(n) pivots on typical
  /// problems; its worst case is exponential).
  int max_pivots = 0;
  /// A tableau entry dᵢ is a pivot candidate only if dᵢ > pivot_tolerance · max(1, ‖d‖∞).
  double pivot_tolerance = 1e-12;
  /// A solution is accepted when ‖min(z, w)‖∞ ≤ tolerance · max(1, ‖r‖∞) (the natural residual;
  /// it measures feasibility and complementarity together). Also the warm start's test.
  double tolerance = 1e-9;
  /// Ratios within ratio_tie_tolerance · max(1, |min ratio|) of the minimum count as tied and
  /// go to the lexicographic test. If lexicographic is false, ties go to the lowest row instead
  /// (the textbook rule, which can cycle on degenerate problems; kept for comparisons).
  double ratio_tie_tolerance = 1e-12;
  bool lexicographic = true;
  /// Regularized retries after a failed plain solve (kRayTermination, kMaxPivots,
  /// kNumericalError): at most this many cold solves of (Q + εI, r), ε = 1e-20 · (1e4)ᵗ for
  /// t = 0, 1, …; see the file comment. 0 (default): off. Must be ≥ 0.
  int regularization_retries = 0;
};

/// kSolved: z0 left the basis (or the warm start's basis solved the problem) and the natural
/// residual met the tolerance. kTrivial: r ≥ −tolerance · max(1, ‖r‖∞) (z = 0 meets the
/// acceptance test), z = 0 with no pivot. kRayTermination: the entering column has no positive
/// entry (see the file comment: for copositive-plus Q the LCP has no solution, and `ray` is the
/// certificate). kMaxPivots: the pivot limit was hit. kNumericalError:
/// z0 left but the recomputed residual misses the tolerance, or a non-finite tableau entry.
enum class LemkeStatus { kSolved, kTrivial, kRayTermination, kMaxPivots, kNumericalError };
const char* to_string(LemkeStatus status);

struct LemkeResults {
  LemkeStatus status = LemkeStatus::kNumericalError;
  Eigen::VectorXd z;  ///< n, ≥ 0; when not solved: the last basic z (finite)
  Eigen::VectorXd w;  ///< n, recomputed as Q z + r (not read off the tableau)
  /// For kRayTermination: the ray's z direction (n, ‖·‖∞ = 1). Otherwise empty (by-value
  /// solve) or n zeros (in-place solve, which keeps the storage).
  Eigen::VectorXd ray;
  /// Tableau pivots, the initial z0 pivot included (0 for kTrivial / warm start); with
  /// regularized retries, the sum over the plain solve and every retry.
  int pivots = 0;
  bool warm_started = false;  ///< true if the warm start's basis was accepted
  double complementarity_residual = 0.0;  ///< ‖min(z, w)‖∞ (absolute), on the original problem
  /// A solution was returned (kSolved or kTrivial).
  bool ok() const { return status == LemkeStatus::kSolved || status == LemkeStatus::kTrivial; }
  /// ε of the regularized retry whose solution is returned (z solves (Q + εI, r)); 0 if none.
  double regularization = 0.0;
};

class LemkeSolver {
 public:
  explicit LemkeSolver(LemkeParameters parameters = {});
  const LemkeParameters& parameters() const { return parameters_; }

  /// Solves the LCP w = Q z + r (Q n×n, not necessarily symmetric; r n; n ≥ 0). If z_warm (n) is
  /// given, the basis it implies (α = {i : z_warm,i > 0}) is tried first: z_α = −Q_αα⁻¹ r_α,
  /// accepted if (z, Q z + r) meets `tolerance`; otherwise Lemke starts from scratch.
  /// Throws std::invalid_argument naming the field for wrong sizes or non-finite Q, r, z_warm.
  /// Never returns NaN.
  LemkeResults solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r,
                     const Eigen::VectorXd* z_warm = nullptr) const;

  /// Same, written into `results` (z, w, ray resized to n; every field overwritten), with all
  /// scratch in this solver's workspace: no allocation when n ≤ the n of an earlier call and
  /// `results` already holds size-n vectors. z_warm may alias results.z. Non-const (the
  /// workspace); not thread-safe on one object.
  void solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, LemkeResults& results,
             const Eigen::VectorXd* z_warm = nullptr);

 private:
  // Scratch kept between calls; sized to the largest n seen (grow-only).
  struct Workspace {
    Eigen::MatrixXd T;   // capacity × (2 capacity + 2): the tableau's storage
    Eigen::MatrixXd lu;  // capacity × capacity: a principal block Q_αα, factored in place
    Eigen::VectorXd z, w, zc, wc, x, saved_z, saved_w, saved_ray;  // capacity each
    std::vector<int> basis, tied, alpha, row_perm, col_perm;        // capacity reserved
    int capacity = -1;
    void reserve(int n);
  };
  // One Lemke run (warm start, tableau, polish) on (Q + εI, r); residuals on that problem.
  static void solve_once(const LemkeParameters& prm, Workspace& ws, const Eigen::MatrixXd& Q,
                         const Eigen::VectorXd& r, double epsilon, const Eigen::VectorXd* z_warm,
                         LemkeResults& res);
  // Checks the input, runs solve_once and the regularized retries.
  static void solve_into(const LemkeParameters& prm, Workspace& ws, const Eigen::MatrixXd& Q,
                         const Eigen::VectorXd& r, LemkeResults& res, const Eigen::VectorXd* z_warm);

  LemkeParameters parameters_;
  Workspace workspace_;
};

}  // namespace coulomb::solvers::lcp
