// MINDIFF: the LCP solution nearest a target, found by enumerating every complementary basis.
//
// Source: Zapolsky & Drumwright, "Inverse Dynamics with Rigid Contact and Friction", §5.3 and
// Algorithm 3 (MINDIFF). Digest ../shared/digests/inverse-dynamics.md §5.4, acceptance test
// §10.13, errata §11 item 17.
//
// Problem. Given an LCP  w = Q z + r ≥ 0, z ≥ 0, zᵀw = 0  (Q n × n, any matrix) and an affine map
// x(z) = x0 + X z, find the solution whose x is nearest x_target in the 2-norm. In the paper the
// LCP is the Coulomb-friction ID LCP of §5.3 (z = [f_N; f_F; λ], (k + 2) n variables), x holds
// ⁺v and τ, and x_target is the previous control step's x: choosing the nearest of the (possibly
// many) LCP solutions removes torque chatter. Solving it exactly needs all solutions, hence
// exponential time; the paper uses it to argue that chatter-free ID is "at worst NP-hard".
//
// Algorithm. A leaf is a set α ⊆ {0, …, n−1} (the paper's non-basic set B̄: the indices whose z
// is computed, w_α = 0; z_ᾱ = 0). At each leaf:
//   solve Q_αα z_α = −r_α, z_ᾱ = 0, w = Q z + r                     (Alg. 3 line 8)
//   accept iff  |w_i| ≤ tol for i ∈ α (the basis system's residual),
//               z_α ≥ −tol, w_ᾱ ≥ −tol                               (feasibility; §11 item 17)
//   x = x0 + X z, ε = ‖x − x_target‖₂                                (lines 9–10)
// with tol = tolerance · max(1, ‖r‖∞), and return the accepted leaf of least ε (lines 5–6).
// The paper recurses on the last index (line 2: index n−1 stays out of B̄, line 3: it joins B̄);
// we loop over the bitmask b = Σ_{i∈α} 2ⁱ from 0 to 2ⁿ − 1, which visits the leaves in the same
// order. Ties in ε (equal computed doubles) go to the FIRST leaf in that order (the garbled
// lines 5–6 would return the later one).
// Complementarity needs no separate test: z_ᾱ = 0 exactly and |w_α| ≤ tol, so the natural
// residual ‖min(z, w)‖∞ ≤ tol — the same acceptance measure as LemkeSolver. (A test
// |z_i w_i| ≤ tol would also reject good solutions with large z_i and a rounding-level w_i.)
//
// The basis system is solved by a rank-revealing complete orthogonal decomposition: QR with
// column pivoting of Q_αα (rank = number of pivots |R_ii| > kRankTolerance · |R_11|), then, when
// rank-deficient, a QR of [R11 R12]ᵀ; the result is the minimum-norm least-squares solution,
// which the residual test accepts only when the system is consistent. Consequence for
// degenerate LCPs: a singular leaf contributes ONE point (the minimum-norm one) of its affine
// family of solutions, so MINDIFF returns the nearest BASIC solution; a solution continuum's
// interior point that is nearer x_target is not searched (the paper does not say how its leaf
// solve treats a singular block).
//
// Cost: 2ⁿ leaves, each O(|α|³ + n |α| + p |α|) (dense factorization of the block, w and x).
// Measured (tests, Release, one core): 3–4.5 µs per leaf at n = 18, so 2¹⁸ leaves in about 1 s
// and n = kMaxVariables = 24 (2²⁴ ≈ 16.8 M leaves) in the order of a minute. For the Coulomb LCP
// n = 6 per contact: 1 contact = 64 leaves, 2 contacts = 4096, 4 contacts = 2²⁴.
//
// Memory: the block, its factorizations and the index list have compile-time maximal size
// kMaxVariables and live inside the object (about 20 KB, no heap); z, w, x (sizes n, n, p) are
// members resized only when n or p changes, and the results' vectors are assigned (not
// reallocated when their size is unchanged). So repeated solve() calls with the same n and p do
// not allocate (checked with Eigen's EIGEN_RUNTIME_NO_MALLOC on rank-deficient blocks).
//
// Units: the caller's. w has r's units; z has units of r / Q (as in LemkeSolver, the feasibility
// tolerance is applied to z and w alike); x has x0's units. For the Coulomb LCP of §5.3: z holds
// impulses [N·s] (λ: m/s), w velocities [m/s], x = ⁺v [m/s, rad/s].
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Core>
#include <Eigen/QR>

namespace coulomb::inverse_dynamics {

struct MindiffResults {
  bool found = false;          ///< a feasible leaf exists
  Eigen::VectorXd z, w;        ///< the chosen LCP solution (n each), w = Q z + r; empty if !found
  Eigen::VectorXd x;           ///< x(z) = x0 + X z of the chosen solution (p); empty if !found
  double distance = std::numeric_limits<double>::infinity();  ///< ‖x − x_target‖₂ (inf if !found)
  long long leaves = 0;        ///< leaves visited (2ⁿ)
  long long feasible_leaves = 0;  ///< leaves accepted by the residual and feasibility tests
  std::vector<int> basis;  ///< α of the chosen leaf: where z is computed (w = 0), ascending
};

/// One accepted leaf, passed to the optional visitor of Mindiff::solve. The references are
/// valid only during the visitor call.
struct MindiffLeaf {
  std::uint32_t mask;      ///< bit i set ⇔ i ∈ α (the enumeration index of the leaf)
  const Eigen::VectorXd& z;  ///< n
  const Eigen::VectorXd& w;  ///< n, Q z + r
  const Eigen::VectorXd& x;  ///< p, x0 + X z
  double distance;           ///< ‖x − x_target‖₂
};
using MindiffLeafVisitor = std::function<void(const MindiffLeaf&)>;

class Mindiff {
 public:
  /// Largest n accepted (2²⁴ leaves).
  static constexpr int kMaxVariables = 24;
  /// Relative pivot threshold of the rank decision for a leaf's block Q_αα (see the file comment).
  static constexpr double kRankTolerance = 1e-12;
  static constexpr double kDefaultTolerance = 1e-9;

  Mindiff();

  /// Runs Algorithm 3 (see the file comment).
  ///   Q         n × n, any matrix (0 ≤ n ≤ kMaxVariables).
  ///   r         n.
  ///   X         p × n (p ≥ 0); x0, x_target: p.
  ///   tolerance ≥ 0, finite: tol = tolerance · max(1, ‖r‖∞) for the residual and feasibility.
  ///   on_feasible_leaf  if non-empty, called for every accepted leaf in enumeration order.
  /// Afterwards `results` holds the accepted leaf of least distance (the first on ties), or
  /// found = false, empty z, w, x, basis and distance = inf if no leaf is accepted (the LCP has
  /// no solution, or only non-basic ones the enumeration cannot represent within tolerance).
  /// Throws std::invalid_argument naming the field for size mismatches, non-finite entries,
  /// n > kMaxVariables, or a negative or non-finite tolerance.
  void solve(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, const Eigen::MatrixXd& X,
             const Eigen::VectorXd& x0, const Eigen::VectorXd& x_target, MindiffResults& results,
             double tolerance = kDefaultTolerance,
             const MindiffLeafVisitor& on_feasible_leaf = {});

 private:
  using BlockMatrix =
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxVariables, kMaxVariables>;
  using BlockVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxVariables, 1>;

  // Solves Q_αα z_α = −r_α (minimum-norm least squares) for α = alpha_[0 … k); writes z_ (all n
  // entries) and w_ = Q z_ + r.
  void solve_leaf(const Eigen::MatrixXd& Q, const Eigen::VectorXd& r, int k);

  BlockMatrix A_;    // Q_αα
  BlockMatrix Bt_;   // [R11 R12]ᵀ of a rank-deficient block
  BlockVector c_, y_;
  Eigen::ColPivHouseholderQR<BlockMatrix> qr_;
  Eigen::HouseholderQR<BlockMatrix> qr2_;
  int alpha_[kMaxVariables] = {};
  Eigen::VectorXd z_, w_, x_;
};

}  // namespace coulomb::inverse_dynamics
