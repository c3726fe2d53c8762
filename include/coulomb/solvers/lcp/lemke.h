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
// Units: whatever the caller's; z and w carry the units of r / Q and r respectively.
#pragma once


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
};

/// kSolved: z0 left the basis (or the warm start's basis solved the problem) and the natural
/// residual met the tolerance. kTrivial: r ≥ 0, z = 0 with no pivot. kRayTermination: the entering
/// column has no positive entry (see the file comment: for copositive-plus Q the LCP has no
/// solution, and `ray` is the certificate). kMaxPivots: the pivot limit was hit. kNumericalError:
/// z0 left but the recomputed residual misses the tolerance, or a non-finite tableau entry.
enum class LemkeStatus { kSolved, kTrivial, kRayTermination, kMaxPivots, kNumericalError };
const char* to_string(LemkeStatus status);

struct LemkeResults {
  LemkeStatus status = LemkeStatus::kNumericalError;
  Eigen::VectorXd z;  ///< n, ≥ 0; when not solved: the last basic z (finite)
  Eigen::VectorXd w;  ///< n, recomputed as Q z + r (not read off the tableau)
  Eigen::VectorXd ray;  ///< n, only for kRayTermination: the ray's z direction, ‖·‖∞ = 1; else empty
  int pivots = 0;     ///< tableau pivots, the initial z0 pivot included (0 for kTrivial / warm start)
  bool warm_started = false;  ///< true if the warm start's basis was accepted
  double complementarity_residual = 0.0;  ///< ‖min(z, w)‖∞ (absolute)
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

 private:
  LemkeParameters parameters_;
};

}  // namespace coulomb::solvers::lcp
