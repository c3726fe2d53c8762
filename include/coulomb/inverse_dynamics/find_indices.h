// FIND-INDICES: the largest set of no-slip equality rows that keeps the inverse-dynamics MLCP
// matrix invertible.
//
// Source: Zapolsky & Drumwright, "Inverse Dynamics with Rigid Contact and Friction",
// Algorithm 1 (§4.3) and Appendix E (Theorem 1: dropping the linearly dependent equality rows,
// i.e. fixing their multipliers to 0, does not change the MLCP solution). Digest
// ../shared/digests/inverse-dynamics.md §4.2–4.3, acceptance test §10.5.
//
//   𝒮 ← ∅, 𝒯 ← ∅
//   for each contact i = 0 … n−1:
//     if Xᵀ M⁻¹ X is nonsingular for X = [Pᵀ S_{𝒮∪{i}}ᵀ T_𝒯ᵀ]  then 𝒮 ← 𝒮 ∪ {i}
//     if Xᵀ M⁻¹ X is nonsingular for X = [Pᵀ S_𝒮ᵀ T_{𝒯∪{i}}ᵀ]  then 𝒯 ← 𝒯 ∪ {i}
//
// The nonsingularity test is an INCREMENTAL Cholesky factorization of G = Xᵀ M⁻¹ X: each
// candidate row x appends one row [lᵀ, δ] to the existing lower-triangular factor L (G = L Lᵀ).
// The new row is computed in the Gram–Schmidt form of that update: with M = L_M L_Mᵀ and
// y = L_M⁻¹ x, the factor keeps an orthonormal basis U (m × r) of span(L_M⁻¹ X) with
// L_M⁻¹ X = U Lᵀ; then l = Uᵀ y (with one re-orthogonalization, "twice is enough") and the new
// pivot δ = ‖y − U l‖ is a residual norm, free of the cancellation in δ² = xᵀM⁻¹x − ‖l‖².
// The row is rejected when δ² ≤ tolerance · xᵀ M⁻¹ x, i.e. when the squared sine of the angle
// (in the M⁻¹ metric) between x and the span of the kept rows is ≤ tolerance. The test is
// invariant to the scale (and units) of each row. Once r = m rows are kept every further row is
// rejected without a test (Xᵀ M⁻¹ X is at most m × m).
//
// Complexity: O(m²) per candidate row (one triangular solve with L_M plus O(m r) products), so
// O(m³ + n m²) in total (O(m³) for factoring M when M itself is passed). Allocation-free after
// the first call with the same m, p and n (capacities are kept).
#pragma once

#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace coulomb::inverse_dynamics {

/// Which matrix an equality row comes from.
enum class EqualityRowKind { kActuated, kFirstTangent, kSecondTangent };

/// One kept equality row: row `index` of P (kActuated), of S (kFirstTangent) or of T
/// (kSecondTangent).
struct EqualityRow {
  EqualityRowKind kind = EqualityRowKind::kActuated;
  int index = 0;
  bool operator==(const EqualityRow&) const = default;
};

class FindIndices {
 public:
  /// Default near-singularity tolerance on the squared relative pivot (sin² of the angle between
  /// a row and the span of the kept rows, M⁻¹ metric): a row at an angle below 1e-5 rad is
  /// treated as dependent.
  static constexpr double kDefaultTolerance = 1e-10;

  FindIndices() = default;

  /// Runs Algorithm 1.
  ///   M_llt  Cholesky factor of the generalized inertia M (m × m SPD; kg, kg·m²), info() must be
  ///          Success.
  ///   P      p × m actuated-joint selector rows (dimensionless; any full-row-rank rows work).
  ///   S, T   n × m first / second tangent-direction rows of the n contacts (row i maps v
  ///          [m/s, rad/s] to contact i's tangential velocity [m/s]).
  ///   tolerance  in [0, 1): see the file comment.
  /// Afterwards s_indices() / t_indices() hold 𝒮 and 𝒯 in contact order and factor() the
  /// Cholesky factor of Xᵀ M⁻¹ X in rows() order.
  /// Throws std::invalid_argument naming the field on a size mismatch, non-finite entries,
  /// a failed or non-finite M factor, tolerance outside [0, 1), or P not of full row rank
  /// (p > m, or a P row within tolerance of the span of the rows before it).
  void compute(const Eigen::LLT<Eigen::MatrixXd>& M_llt, const Eigen::MatrixXd& P,
               const Eigen::MatrixXd& S, const Eigen::MatrixXd& T,
               double tolerance = kDefaultTolerance);
  /// Same with M given (m × m, symmetric positive definite; factored internally, O(m³)).
  /// Throws std::invalid_argument if M is not square, not finite or not positive definite.
  void compute(const Eigen::MatrixXd& M, const Eigen::MatrixXd& P, const Eigen::MatrixXd& S,
               const Eigen::MatrixXd& T, double tolerance = kDefaultTolerance);

  /// 𝒮: contacts whose S row is kept, ascending.
  const std::vector<int>& s_indices() const { return s_indices_; }
  /// 𝒯: contacts whose T row is kept, ascending.
  const std::vector<int>& t_indices() const { return t_indices_; }
  /// The kept rows in the column order of X = the factor's order: the p rows of P, then for
  /// each contact i ascending S_i (if kept) and T_i (if kept). A symmetric permutation of the
  /// block order [Pᵀ S_𝒮ᵀ T_𝒯ᵀ].
  const std::vector<EqualityRow>& rows() const { return rows_; }
  /// r = p + |𝒮| + |𝒯| ≤ m.
  int size() const { return size_; }
  /// Lower-triangular r × r L with Xᵀ M⁻¹ X = L Lᵀ, X in rows() order (strictly upper part 0).
  /// Units: those of M^{-1/2} times the rows' units.
  Eigen::Block<const Eigen::MatrixXd> factor() const {
    return L_.topLeftCorner(size_, size_);
  }
  /// Overwrites b (r, rows() order) with (Xᵀ M⁻¹ X)⁻¹ b = Y_X b. Throws std::invalid_argument if
  /// b's size is not size().
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> b) const;

 private:
  // A row of a column-major matrix without a copy (a strided Ref does not allocate).
  using RowRef = Eigen::Ref<const Eigen::RowVectorXd, 0, Eigen::InnerStride<>>;
  // Tests row x (1 × m); appends it to the factor and returns true if it is kept.
  bool try_append(const RowRef& x, double tolerance);

  Eigen::LLT<Eigen::MatrixXd> own_llt_;
  const Eigen::LLT<Eigen::MatrixXd>* llt_ = nullptr;  // valid only during compute()
  Eigen::MatrixXd L_;  // m × m capacity, top-left size_ × size_ is the factor
  Eigen::MatrixXd U_;  // m × m capacity, first size_ columns orthonormal
  Eigen::VectorXd y_, l_, l2_;
  double last_ratio_ = 0.0;  // δ² / (xᵀ M⁻¹ x) of the last test
  int size_ = 0;
  std::vector<int> s_indices_, t_indices_;
  std::vector<EqualityRow> rows_;
};

}  // namespace coulomb::inverse_dynamics
