#include "coulomb/solvers/sap/sap_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/CholmodSupport>
#include <Eigen/SparseCore>

#include "coulomb/linalg/block_sparse_cholesky.h"
#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_line_search.h"
#include "linalg/block6_kernels.h"
#include "solvers/sap/sap_jacobian_kernels.h"
#include "linalg/block_kernels.h"
#include "linalg/dense_kernels.h"

namespace coulomb::solvers::sap {

const char* to_string(SapSolverStatus status) {
  switch (status) {
    case SapSolverStatus::kSuccess: return "success";
    case SapSolverStatus::kMaxIterations: return "max-iterations";
    case SapSolverStatus::kLineSearchFailure: return "line-search-failure";
    case SapSolverStatus::kLinearSolverFailure: return "linear-solver-failure";
  }
  return "unknown";
}

namespace {

// Trees' A and the dense Newton matrix up to kPlainKernelMaxSize (32) velocities are factored
// with the plain-loop kernels of linalg/dense_kernels.h, larger ones with Eigen's LLT. The kernels were
// first tried here in commits 0c2fade and 3e69367 and reverted: the A1 controller acceptance
// tests moved with the round-off-level change of the step (one unsolved ID step in 10 s of
// ControlAcceptanceTest.QpMuTrotsStraightAtTheCommandedSpeed). That was the ID solver's Stage I
// giving up on a stalled interior point that active-set polishing solves exactly; it polishes
// now (qp_two_stage.cc), and the kernels are back: a1_drop's step 499 k -> 472 k instructions.

using ColMajor3X = Eigen::Matrix<double, 3, Eigen::Dynamic>;
using OuterStrided = Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>>;

// out (n_x × n_y, leading dimension ld) += J_xᵀ GJ_y with J_x r × n_x and GJ_y r × n_y, all
// column-major. Fixed-size kernels for contacts (r = 3) on free bodies (n = 6).
[[gnu::always_inline]] inline void add_JtGJ(const double* Jx, int r, int nx, const double* GJy, int ny, double* out,
                                            int ld) {
  if (r == 3 && nx == 6 && ny == 6 && ld == 6) {
    linalg::internal::block6::add_JtGJ_3x6(Jx, GJy, out);  // a contact between free bodies
  } else if (r == 3) {
    // A contact on a robot (k columns of its tree, k ≈ 9 for a leg): plain loops. Eigen's
    // dynamic-size product went through its blocked GEMM, 5 % of a1_drop's step.
    for (int b = 0; b < ny; ++b) {
      const double* g = GJy + 3 * static_cast<ptrdiff_t>(b);
      double* o = out + static_cast<ptrdiff_t>(b) * ld;
      for (int a = 0; a < nx; ++a) {
        const double* j = Jx + 3 * static_cast<ptrdiff_t>(a);
        o[a] += j[0] * g[0] + j[1] * g[1] + j[2] * g[2];
      }
    }
  } else {
    OuterStrided(out, nx, ny, Eigen::OuterStride<>(ld)).noalias() +=
        Eigen::Map<const Eigen::MatrixXd>(Jx, r, nx).transpose() * Eigen::Map<const Eigen::MatrixXd>(GJy, r, ny);
  }
}

// GJ (r × n) = G (r × r) J (r × n).
[[gnu::always_inline]] inline void multiply_GJ(const double* G, int r, const double* J, int n, double* GJ) {
  if (r == 3 && n == 6) {
    linalg::internal::block6::multiply_GJ_3x6(G, J, GJ);
  } else if (r == 3) {
    Eigen::Map<ColMajor3X>(GJ, 3, n).noalias() = Eigen::Map<const Eigen::Matrix3d>(G) * Eigen::Map<const ColMajor3X>(J, 3, n);
  } else if (r == 1) {
    for (int j = 0; j < n; ++j) GJ[j] = G[0] * J[j];
  } else {
    Eigen::Map<Eigen::MatrixXd>(GJ, r, n).noalias() =
        Eigen::Map<const Eigen::MatrixXd>(G, r, r) * Eigen::Map<const Eigen::MatrixXd>(J, r, n);
  }
}

// H = A + Jᵀ G J as a sparse matrix whose pattern has dense tree×tree blocks: the diagonal blocks
// and, for every constraint coupling two trees, the off-diagonal blocks. The pattern depends
// only on the problem, so CHOLMOD's symbolic analysis is done once per solve. The coupled pairs
// are a sorted list (memory and time linear in the trees and constraints; a T × T table took
// 2.4 GB for 10,000 trees, issue 18).
class SparseHessian {
 public:
  explicit SparseHessian(const SapProblem& problem) : problem_(problem) {
    for (int i = 0; i < problem.num_constraints(); ++i) {
      const SapConstraint& c = problem.constraint(i);
      if (c.num_trees() == 2) pairs_.emplace_back(std::max(c.tree(0), c.tree(1)), std::min(c.tree(0), c.tree(1)));
    }
    std::sort(pairs_.begin(), pairs_.end());
    pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
  }

  bool factorize(const SapProblem&, const std::vector<double>& G, const std::vector<int>& G_offset) {
    const int nv = problem_.nv();
    const int T = problem_.num_trees();
    // Accumulate block values: diagonal blocks, then (tb, ta) blocks with tb > ta, one per pair.
    diagonal_.resize(T);
    for (int t = 0; t < T; ++t) diagonal_[t] = problem_.A(t);
    off_.resize(pairs_.size());
    for (size_t k = 0; k < pairs_.size(); ++k)
      off_[k].setZero(problem_.tree_size(pairs_[k].first), problem_.tree_size(pairs_[k].second));
    for (int i = 0; i < problem_.num_constraints(); ++i) {
      const SapConstraint& c = problem_.constraint(i);
      for (int a = 0; a < c.num_trees(); ++a) {
        const Eigen::MatrixXd GJ =
            Eigen::Map<const Eigen::MatrixXd>(G.data() + G_offset[i], c.num_rows(), c.num_rows()) * c.jacobian(a);
        for (int b = 0; b < c.num_trees(); ++b) {
          const int ta = c.tree(a), tb = c.tree(b);
          if (tb < ta) continue;
          Eigen::MatrixXd& B = tb == ta ? diagonal_[ta] : off_[pair_index(tb, ta)];
          B.noalias() += c.jacobian(b).transpose() * GJ;
        }
      }
    }
    triplets_.clear();
    auto add = [&](int tb, int ta, const Eigen::MatrixXd& B) {
      const int r0 = problem_.tree_start(tb), c0 = problem_.tree_start(ta);
      for (int cc = 0; cc < problem_.tree_size(ta); ++cc)
        for (int rr = 0; rr < problem_.tree_size(tb); ++rr) {
          const int row = r0 + rr, col = c0 + cc;
          if (row < col) continue;  // lower triangle only
          triplets_.emplace_back(row, col, B(rr, cc));
        }
    };
    for (int t = 0; t < T; ++t) add(t, t, diagonal_[t]);
    for (size_t k = 0; k < pairs_.size(); ++k) add(pairs_[k].first, pairs_[k].second, off_[k]);
    H_.resize(nv, nv);
    H_.setFromTriplets(triplets_.begin(), triplets_.end());
    if (!analyzed_) {
      llt_.analyzePattern(H_);
      analyzed_ = true;
    }
    llt_.factorize(H_);
    return llt_.info() == Eigen::Success;
  }

  Eigen::VectorXd solve(const Eigen::VectorXd& b) { return llt_.solve(b); }

 private:
  size_t pair_index(int tb, int ta) const {
    return static_cast<size_t>(std::lower_bound(pairs_.begin(), pairs_.end(), std::make_pair(tb, ta)) - pairs_.begin());
  }

  const SapProblem& problem_;
  std::vector<std::pair<int, int>> pairs_;  // (tb, ta), tb > ta, sorted
  std::vector<Eigen::MatrixXd> diagonal_, off_;
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::SparseMatrix<double> H_;
  Eigen::CholmodSupernodalLLT<Eigen::SparseMatrix<double>, Eigen::Lower> llt_;
  bool analyzed_ = false;
};

}  // namespace

// Buffers of one solver, kept between solves.
struct SapSolverWorkspace {
  // Iterate and its evaluation.
  Eigen::VectorXd D, v, dv, vc, gamma, grad, dv_minus, Av_minus, Av_star, jc, p;
  Eigen::VectorXd vc_rest, gamma_rest;  // ℓ_i at v = 0: zeros and scratch, max rows
  Eigen::VectorXd v_second, vc_second, gamma_second, dv_second, Av_second;  // a second guess and its cost
  std::vector<double> G;      // per constraint r × r, column-major, at G_offset[i]
  std::vector<const SapFrictionConeConstraint*> cone_of;  // per constraint: itself if a contact, else nullptr
  std::vector<int> G_offset;
  double cost = 0.0;
  // Delassus estimate.
  std::vector<Eigen::MatrixXd> A_inverse;  // per tree above 32 velocities: A⁻¹
  std::vector<Eigen::MatrixXd> A_chol;     // per tree up to 32 velocities: the Cholesky factor of A
  std::vector<const double*> L_of;         // per tree up to 32: that factor, or the problem's
  std::vector<double> L_inv6;              // per tree of 6 velocities a constraint touches: L⁻¹ (36, column-major)
  std::vector<double> Y;                   // L⁻¹ J_iᵀ of one constraint side (n × r, grow only)
  std::vector<double> A_factor, AinvJt, W;  // scratch of prepare_constraints, mapped r × r and k × r (grow only)
  // Hessian assembly: one storage target per constraint and Jacobian-block pair.
  struct Target {
    double* data = nullptr;
    int ld = 0;
    bool transposed = false;  // for the off-diagonal block: stores (tree 0 rows, tree 1 columns)
  };
  std::vector<Target> targets;  // 3 per constraint: diag side 0, diag side 1, off-diagonal
  std::vector<double> GJ;       // per constraint, both sides
  // Column sparsity of each Jacobian block (2 per constraint). A block with zero columns (a
  // contact on one leg of a robot touches only the base and that leg's joints; a limit or a PD
  // actuator touches one joint) is kept compacted, r × k, with the indices of its k nonzero
  // columns, and its Hessian terms are computed k × k and scattered.
  struct Sparsity {
    int k = 0;             // nonzero columns; k == n_t: dense, not compacted
    int cols_offset = 0;   // into cols
    int J_offset = 0;      // into J_compact (r × k, column-major)
  };
  std::vector<Sparsity> sparsity;
  bool any_compact = false;  // some block is compacted (a robot): J products go through the compacted columns
  std::vector<int> cols;
  std::vector<double> J_compact, JtGJ;
  // Dense path.
  Eigen::MatrixXd H;
  Eigen::LLT<Eigen::MatrixXd> llt;
  // Block-sparse path.
  linalg::BlockSparseCholesky chol;
  std::vector<int> block_sizes;
  std::vector<int> free_trees;  ///< trees no constraint touches: their solution is v* exactly
  std::vector<char> tree_touched;
  std::vector<int> touched_trees;  ///< the others, ascending
  std::vector<std::pair<int, int>> touched_runs;  ///< their velocities as (start, size) runs of consecutive trees
  bool use_runs = false;  ///< the per-iteration vector operations go over touched_runs (else over all n_v)
  std::vector<std::pair<int, int>> edges;
  std::vector<const double*> A_blocks;  ///< problem.A(t).data() per tree: the diagonal of H before the constraints
  // CHOLMOD path (built per solve: it is an option, not the default).
  std::unique_ptr<SparseHessian> cholmod;
  SapLineSearchFunction line;
  // Islands: the trees coupled through constraints (connected components of the graph with one
  // node per touched tree and one edge per two-tree constraint), each with its trees and its
  // constraints (CSR). Free trees belong to none. With more than one island every Newton step is
  // searched island by island (see solve()).
  std::vector<int> island_parent;  ///< union-find over trees
  std::vector<int> island_of_tree;  ///< each tree's island (−1: a free tree)
  std::vector<int> island_tree_start, island_trees, island_constraint_start, island_constraints;
  std::vector<int> all_constraints;  // 0 … n_c − 1: the global line search's constraint list
  int num_islands = 0;
  Eigen::VectorXd dvc, dp;  ///< J Δv and A Δv of the Newton step, for the line searches
  SapLineSearchFunction island_line;
  // Converged islands: an island that meets Eq. 26 on its own rows is done. Its velocities,
  // impulses and gradient do not change any more (nothing outside it acts on it), so the line
  // searches pass it over and, on the block-sparse path, the Newton matrix's assembly,
  // factorization and solves leave its trees out (skip_node, by tree; empty on the other paths;
  // free trees are left out from the start: their Δv is 0).
  std::vector<char> island_done;
  std::vector<char> skip_node;
  int islands_left = 0;
  bool freeze_islands = true;  ///< false once every island was done without Eq. 26 overall
  // The block-sparse Newton matrix's pattern (edges, analyzed into chol; update_pattern): set
  // before a solve's first factorization, grown when a constraint becomes active whose pair the
  // factor does not store. in_pattern[i]: constraint i's blocks are in the factor (edge or
  // fill-in); its off-diagonal target is null otherwise (and its G is 0).
  bool pattern_ready = false;
  std::vector<char> in_pattern;
  // The pairs of trees coupled by a constraint with G ≠ 0 at the end of the last solve (sorted,
  // (min, max)), for the next solve's first pattern (pattern_from_last_solve).
  std::vector<std::pair<int, int>> last_active_pairs;
};

namespace {

int find_root(std::vector<int>& parent, int t) {
  while (parent[t] != t) {
    parent[t] = parent[parent[t]];  // path halving
    t = parent[t];
  }
  return t;
}

// The islands of the problem into w (island_*): O(trees + constraints) by union-find.
void find_islands(const SapProblem& problem, SapSolverWorkspace& w) {
  const int T = problem.num_trees(), nc = problem.num_constraints();
  std::vector<int>& parent = w.island_parent;
  parent.resize(T);
  for (int t = 0; t < T; ++t) parent[t] = t;
  for (int i = 0; i < nc; ++i) {
    const SapConstraint& c = problem.constraint(i);
    if (c.num_trees() == 2) {
      const int a = find_root(parent, c.tree(0)), b = find_root(parent, c.tree(1));
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  // Number the islands in the order of their first tree (a root is its island's smallest tree:
  // the unions above keep the smaller root), into island_of[t]; −1 for free trees.
  std::vector<int>& island_of = w.island_of_tree;
  island_of.resize(T);
  w.num_islands = 0;
  for (int t = 0; t < T; ++t) {
    const int root = find_root(parent, t);  // root ≤ t: numbered already when root < t
    island_of[t] = !w.tree_touched[t] ? -1 : root == t ? w.num_islands++ : island_of[root];
  }
  // Counting sort of the trees and the constraints by island.
  w.island_tree_start.assign(w.num_islands + 1, 0);
  w.island_constraint_start.assign(w.num_islands + 1, 0);
  for (int t = 0; t < T; ++t)
    if (island_of[t] >= 0) ++w.island_tree_start[island_of[t] + 1];
  for (int i = 0; i < nc; ++i) ++w.island_constraint_start[island_of[problem.constraint(i).tree(0)] + 1];
  for (int k = 0; k < w.num_islands; ++k) {
    w.island_tree_start[k + 1] += w.island_tree_start[k];
    w.island_constraint_start[k + 1] += w.island_constraint_start[k];
  }
  w.island_trees.resize(w.island_tree_start[w.num_islands]);
  w.island_constraints.resize(nc);
  // Place them, the start arrays serving as cursors, then shift the starts back.
  for (int t = 0; t < T; ++t)
    if (island_of[t] >= 0) w.island_trees[w.island_tree_start[island_of[t]]++] = t;
  for (int i = 0; i < nc; ++i) {
    const int k = island_of[problem.constraint(i).tree(0)];
    w.island_constraints[w.island_constraint_start[k]++] = i;
  }
  for (int k = w.num_islands; k > 0; --k) {
    w.island_tree_start[k] = w.island_tree_start[k - 1];
    w.island_constraint_start[k] = w.island_constraint_start[k - 1];
  }
  w.island_tree_start[0] = 0;
  w.island_constraint_start[0] = 0;
}

// skip_node as at the start of a block-sparse solve: only the trees no constraint touches.
void skip_free_trees_only(const SapProblem& problem, SapSolverWorkspace& w) {
  w.skip_node.resize(problem.num_trees());
  for (int t = 0; t < problem.num_trees(); ++t) w.skip_node[t] = !w.tree_touched[t];
}

// Eq. 26 on island k's rows alone.
bool island_meets_eq26(const SapProblem& problem, const SapSolverParameters& prm, const SapSolverWorkspace& w, int k) {
  double g2 = 0.0, p2 = 0.0, jc2 = 0.0;
  for (int a = w.island_tree_start[k]; a < w.island_tree_start[k + 1]; ++a) {
    const int t = w.island_trees[a], s = problem.tree_start(t), n = problem.tree_size(t);
    const double *D = w.D.data() + s, *g = w.grad.data() + s, *p = w.p.data() + s, *jc = w.jc.data() + s;
    for (int j = 0; j < n; ++j) {
      g2 += (D[j] * g[j]) * (D[j] * g[j]);
      p2 += (D[j] * p[j]) * (D[j] * p[j]);
      jc2 += (D[j] * jc[j]) * (D[j] * jc[j]);
    }
  }
  return std::sqrt(g2) < prm.abs_tolerance + prm.rel_tolerance * std::sqrt(std::max(p2, jc2));
}

// Marks the islands that meet Eq. 26 on their own rows as done (see
// SapSolverWorkspace::island_done) and, on the block-sparse path, leaves their trees out of the
// Newton matrix.
void mark_converged_islands(const SapProblem& problem, const SapSolverParameters& prm, SapSolverWorkspace& w) {
  for (int k = 0; k < w.num_islands; ++k) {
    if (w.island_done[k] || !island_meets_eq26(problem, prm, w, k)) continue;
    w.island_done[k] = 1;
    --w.islands_left;
    if (!w.skip_node.empty())
      for (int a = w.island_tree_start[k]; a < w.island_tree_start[k + 1]; ++a) w.skip_node[w.island_trees[a]] = 1;
  }
}

}  // namespace

SapSolver::SapSolver(SapSolverParameters parameters)
    : parameters_(parameters), workspace_(std::make_unique<SapSolverWorkspace>()) {}
SapSolver::~SapSolver() = default;
SapSolver::SapSolver(const SapSolver& other)
    : parameters_(other.parameters_), workspace_(std::make_unique<SapSolverWorkspace>()) {}
SapSolver& SapSolver::operator=(const SapSolver& other) {
  parameters_ = other.parameters_;
  workspace_ = std::make_unique<SapSolverWorkspace>();
  return *this;
}
void SapSolver::clear_pattern_hint() const { workspace_->last_active_pairs.clear(); }

SapSolver::SapSolver(SapSolver&&) noexcept = default;
SapSolver& SapSolver::operator=(SapSolver&&) noexcept = default;

namespace {

struct Side {
  const double* J;
  int k;
  const int* cols;  // nullptr: all n columns, in order
};

[[gnu::always_inline]] inline Side side_of(const SapConstraint& c, int side, int i, const SapSolverWorkspace& w) {
  const SapSolverWorkspace::Sparsity& sp = w.sparsity[2 * static_cast<size_t>(i) + side];
  const Eigen::MatrixXd& J = c.jacobian(side);
  if (sp.k == J.cols()) return {J.data(), sp.k, nullptr};
  return {w.J_compact.data() + sp.J_offset, sp.k, w.cols.data() + sp.cols_offset};
}

// v_c = J v (SapProblem::multiply_J) through the compacted Jacobian columns of w.sparsity: a
// robot's contact touches the base and one limb (9 of the A1's 18 columns, 12 of the
// humanoid's 27), a limit one joint. Free bodies' 3 × 6 blocks take the fixed-size product.
void multiply_J(const SapProblem& problem, const SapSolverWorkspace& w, const double* v, double* vc) {
  if (!w.any_compact) {  // free bodies only (a pile): the problem's own product is as fast
    problem.multiply_J(Eigen::Map<const Eigen::VectorXd>(v, problem.nv()), Eigen::Map<Eigen::VectorXd>(vc, problem.num_rows()));
    return;
  }
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    const int r = c.num_rows();
    if (r == 3) {  // contacts: the sum kept in registers
      Eigen::Vector3d out = Eigen::Vector3d::Zero();
      for (int k = 0; k < c.num_trees(); ++k) {
        const double* vt = v + problem.tree_start(c.tree(k));
        const Side x = side_of(c, k, i, w);
        if (x.k == 6 && x.cols == nullptr)  // a free body: SapProblem::multiply_J's kernel
          linalg::internal::block6::add_multiply_3x6(x.J, vt, out.data());
        else
          for (int b = 0; b < x.k; ++b)
            out += Eigen::Map<const Eigen::Vector3d>(x.J + 3 * static_cast<ptrdiff_t>(b)) * vt[x.cols != nullptr ? x.cols[b] : b];
      }
      Eigen::Map<Eigen::Vector3d>(vc + problem.row_start(i)) = out;
      continue;
    }
    double* out = vc + problem.row_start(i);
    for (int a = 0; a < r; ++a) out[a] = 0.0;
    for (int k = 0; k < c.num_trees(); ++k) {
      const double* vt = v + problem.tree_start(c.tree(k));
      const Side x = side_of(c, k, i, w);
      for (int b = 0; b < x.k; ++b) {
        const double vb = vt[x.cols != nullptr ? x.cols[b] : b];
        for (int a = 0; a < r; ++a) out[a] += x.J[static_cast<ptrdiff_t>(b) * r + a] * vb;
      }
    }
  }
}

// x = Jᵀ γ (SapProblem::multiply_J_transpose) through the compacted columns.
void multiply_J_transpose(const SapProblem& problem, const SapSolverWorkspace& w, const double* gamma, double* x) {
  if (!w.any_compact) {
    problem.multiply_J_transpose(Eigen::Map<const Eigen::VectorXd>(gamma, problem.num_rows()),
                                 Eigen::Map<Eigen::VectorXd>(x, problem.nv()));
    return;
  }
  std::fill(x, x + problem.nv(), 0.0);
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    const int r = c.num_rows();
    const double* g = gamma + problem.row_start(i);
    for (int k = 0; k < c.num_trees(); ++k) {
      double* xt = x + problem.tree_start(c.tree(k));
      const Side s = side_of(c, k, i, w);
      if (r == 3 && s.k == 6 && s.cols == nullptr) {  // a contact on a free body
        linalg::internal::block6::add_multiply_transpose_3x6(s.J, g, xt);
        continue;
      }
      if (r == 3) {  // contacts
        const Eigen::Map<const Eigen::Vector3d> g3(g);
        for (int b = 0; b < s.k; ++b)
          xt[s.cols != nullptr ? s.cols[b] : b] += Eigen::Map<const Eigen::Vector3d>(s.J + 3 * static_cast<ptrdiff_t>(b)).dot(g3);
        continue;
      }
      for (int b = 0; b < s.k; ++b) {
        double sum = 0.0;
        for (int a = 0; a < r; ++a) sum += s.J[static_cast<ptrdiff_t>(b) * r + a] * g[a];
        xt[s.cols != nullptr ? s.cols[b] : b] += sum;
      }
    }
  }
}

// cost + Σ_i ℓ_i at vc (num_rows), with γ into gamma and (with_G) every G_i into w.G. Compiled
// twice, like the line search's contact loop (sap_line_search.cc): the friction-cone kernel's
// products contract into FMAs where the processor has them.
[[gnu::always_inline]] inline double add_constraint_costs_body(const SapProblem& problem, const Eigen::VectorXd& vc,
                                                             Eigen::VectorXd& gamma, bool with_G, double cost,
                                                             SapSolverWorkspace& w) {
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const int r = problem.row_start(i);
    if (const SapFrictionConeConstraint* cone = w.cone_of[i]) {  // contacts: the inline kernel
      cost += cone->calc_inline(vc.data() + r, gamma.data() + r, with_G ? w.G.data() + w.G_offset[i] : nullptr);
      continue;
    }
    const SapConstraint& c = problem.constraint(i);
    const int n = c.num_rows();
    if (with_G) {
      Eigen::Map<Eigen::MatrixXd> G_map(w.G.data() + w.G_offset[i], n, n);
      Eigen::Ref<Eigen::MatrixXd> G_ref(G_map);
      cost += c.calc(vc.segment(r, n), gamma.segment(r, n), &G_ref);
    } else {
      cost += c.calc(vc.segment(r, n), gamma.segment(r, n), nullptr);
    }
  }
  return cost;
}
double add_constraint_costs_baseline(const SapProblem& problem, const Eigen::VectorXd& vc, Eigen::VectorXd& gamma,
                                     bool with_G, double cost, SapSolverWorkspace& w) {
  return add_constraint_costs_body(problem, vc, gamma, with_G, cost, w);
}
COULOMB_TARGET_AVX2 double add_constraint_costs_avx2(const SapProblem& problem, const Eigen::VectorXd& vc,
                                                     Eigen::VectorXd& gamma, bool with_G, double cost,
                                                     SapSolverWorkspace& w) {
  return add_constraint_costs_body(problem, vc, gamma, with_G, cost, w);
}
double add_constraint_costs(const SapProblem& problem, const Eigen::VectorXd& vc, Eigen::VectorXd& gamma, bool with_G,
                            double cost, SapSolverWorkspace& w) {
  return linalg::internal::use_avx2_kernels() ? add_constraint_costs_avx2(problem, vc, gamma, with_G, cost, w)
                                              : add_constraint_costs_baseline(problem, vc, gamma, with_G, cost, w);
}

// One pass over the constraints for an evaluation on uncompacted Jacobians (a pile: every side a
// whole block): v_c,i = J_i v, then ℓ_i, γ_i and (with_G) G_i, then J_iᵀγ_i into jc, while J_i
// is still in the first-level cache. The same arithmetic in the same order as
// SapProblem::multiply_J, add_constraint_costs and SapProblem::multiply_J_transpose one after
// the other, so the results are the same to the bit; the three passes over the heap's Jacobian
// blocks become one. Returns cost + Σ_i ℓ_i. Compiled twice, like add_constraint_costs.
[[gnu::always_inline]] inline double evaluate_constraints_fused_body(const SapProblem& problem, const double* v,
                                                                    bool with_G, double cost, SapSolverWorkspace& w) {
  double* vc = w.vc.data();
  double* gamma = w.gamma.data();
  double* jc = w.jc.data();
  auto start = [&problem](int t) { return problem.tree_start(t); };
  for (int a = 0; a < problem.nv(); ++a) jc[a] = 0.0;
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    const int r = c.num_rows(), row = problem.row_start(i);
    double* out = vc + row;
    double* g = gamma + row;
    internal::constraint_multiply_J(c, start, v, out);  // SapProblem::multiply_J's kernel
    if (const SapFrictionConeConstraint* cone = w.cone_of[i]) {  // add_constraint_costs' kernel
      cost += cone->calc_inline(out, g, with_G ? w.G.data() + w.G_offset[i] : nullptr);
    } else if (with_G) {
      Eigen::Map<Eigen::MatrixXd> G_map(w.G.data() + w.G_offset[i], r, r);
      Eigen::Ref<Eigen::MatrixXd> G_ref(G_map);
      cost += c.calc(w.vc.segment(row, r), w.gamma.segment(row, r), &G_ref);
    } else {
      cost += c.calc(w.vc.segment(row, r), w.gamma.segment(row, r), nullptr);
    }
    internal::constraint_add_J_transpose(c, start, g, jc);  // SapProblem::multiply_J_transpose's kernel
  }
  return cost;
}
double evaluate_constraints_fused_baseline(const SapProblem& problem, const double* v, bool with_G, double cost,
                                           SapSolverWorkspace& w) {
  return evaluate_constraints_fused_body(problem, v, with_G, cost, w);
}
COULOMB_TARGET_AVX2 double evaluate_constraints_fused_avx2(const SapProblem& problem, const double* v, bool with_G,
                                                           double cost, SapSolverWorkspace& w) {
  return evaluate_constraints_fused_body(problem, v, with_G, cost, w);
}

// y = A x on the trees some constraint touches; y = 0 on the others (w.free_trees), where every
// caller's x is 0: the iterate is pinned to v* there and Δv is 0 (a pile's bodies in free fall
// are most of its trees, and the products skipped are whole 6 × 6 ones).
void multiply_A_touched(const SapProblem& problem, const SapSolverWorkspace& w, const Eigen::VectorXd& x,
                        Eigen::VectorXd& y) {
  if (w.free_trees.empty()) {
    problem.multiply_A(x, y);
    return;
  }
  problem.multiply_A(x, y, w.touched_trees);
  for (int t : w.free_trees) std::fill_n(y.data() + problem.tree_start(t), problem.tree_size(t), 0.0);
}

// The vector operations of an evaluation run over the touched trees' velocities alone when
// w.use_runs (w.touched_runs: runs of consecutive trees), else over all n_v. The free trees'
// entries of v − v*, A v and ∇ℓ_p are set once per solve (v = v* there: 0, A v*, 0).

// evaluate() after A(v − v*) (w.dv_minus, w.Av_minus): A v, ℓ_p, γ, (with_G) every G_i, and
// ∇ℓ_p. With fused_v (the iterate, on uncompacted Jacobians: a pile) J v is formed here, in one
// pass with the costs and Jᵀγ (evaluate_constraints_fused: the same numbers); without, w.vc
// holds J v already.
void finish_evaluation(const SapProblem& problem, bool with_G, SapSolverWorkspace& w,
                       const double* fused_v = nullptr) {
  if (w.use_runs)  // A v
    for (const auto& [s, n] : w.touched_runs) w.p.segment(s, n) = w.Av_minus.segment(s, n) + w.Av_star.segment(s, n);
  else
    w.p = w.Av_minus + w.Av_star;
  const double cost_A = 0.5 * w.dv_minus.dot(w.Av_minus);
  if (fused_v != nullptr) {
    w.cost = linalg::internal::use_avx2_kernels() ? evaluate_constraints_fused_avx2(problem, fused_v, with_G, cost_A, w)
                                                  : evaluate_constraints_fused_baseline(problem, fused_v, with_G, cost_A, w);
  } else {
    w.cost = add_constraint_costs(problem, w.vc, w.gamma, with_G, cost_A, w);
    multiply_J_transpose(problem, w, w.gamma.data(), w.jc.data());
  }
  if (w.use_runs)  // the momentum residual
    for (const auto& [s, n] : w.touched_runs) w.grad.segment(s, n) = w.Av_minus.segment(s, n) - w.jc.segment(s, n);
  else
    w.grad = w.Av_minus - w.jc;
}

// Evaluates ℓ_p, γ, ∇ℓ_p = A(v − v*) − Jᵀγ and (with_G) every G_i at w.v.
void evaluate(const SapProblem& problem, bool with_G, SapSolverWorkspace& w) {
  if (w.any_compact) multiply_J(problem, w, w.v.data(), w.vc.data());  // a pile's J v: in finish_evaluation
  if (w.use_runs)
    for (const auto& [s, n] : w.touched_runs) w.dv_minus.segment(s, n) = w.v.segment(s, n) - problem.v_star().segment(s, n);
  else
    w.dv_minus = w.v - problem.v_star();
  multiply_A_touched(problem, w, w.dv_minus, w.Av_minus);
  finish_evaluation(problem, with_G, w, w.any_compact ? nullptr : w.v.data());
}

// ℓ_p(v) alone (no G, no gradient) in scratch buffers, leaving the evaluation at w.v as it is:
// compares the warm-start guesses.
double cost_at(const SapProblem& problem, const Eigen::VectorXd& v, SapSolverWorkspace& w) {
  multiply_J(problem, w, v.data(), w.vc_second.data());
  w.dv_second = v - problem.v_star();
  multiply_A_touched(problem, w, w.dv_second, w.Av_second);
  return add_constraint_costs(problem, w.vc_second, w.gamma_second, /*with_G=*/false,
                              0.5 * w.dv_second.dot(w.Av_second), w);
}

// After cost_at(w.v_second) chose the second guess: the iterate becomes v_second and its
// evaluation (as evaluate() would give, to the bit) reuses cost_at's J v and A(v − v*): only γ,
// G and the gradient are computed again. The buffers are swapped, not copied.
void evaluate_second_guess(const SapProblem& problem, SapSolverWorkspace& w) {
  w.v.swap(w.v_second);
  w.vc.swap(w.vc_second);
  w.dv_minus.swap(w.dv_second);
  w.Av_minus.swap(w.Av_second);
  finish_evaluation(problem, /*with_G=*/true, w);
}

// ℓ_p(0) = ½ v*ᵀ A v* + Σ_i ℓ_i(0), without touching the evaluation at the iterate (J·0 = 0).
double cost_at_rest(const SapProblem& problem, SapSolverWorkspace& w) {
  double cost = 0.5 * problem.v_star().dot(w.Av_star);
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    const int n = c.num_rows();
    cost += c.calc(w.vc_rest.head(n), w.gamma_rest.head(n), nullptr);
  }
  return cost;
}

// ½ v*_tᵀ A_t v*_t summed over the free trees: their part of ℓ_p(0), which is 0 at v_t = v*_t.
double free_trees_rest_cost(const SapProblem& problem, const SapSolverWorkspace& w) {
  double cost = 0.0;
  for (int t : w.free_trees) {
    const int start = problem.tree_start(t), n = problem.tree_size(t);
    cost += 0.5 * problem.v_star().segment(start, n).dot(w.Av_star.segment(start, n));
  }
  return cost;
}

// Prepares each constraint with the Delassus block estimate W_ii ≈ Σ_t J_it A_t⁻¹ J_itᵀ
// (Castro et al. §V-B, with A in place of M; digest §8 item 8). Trees up to 32 velocities (free
// bodies and robots) through the Cholesky factor of A_t, W += YᵀY with Y = L⁻¹ J_itᵀ: r forward
// substitutions per constraint side instead of the n³/3 of A⁻¹ (a1_drop: 5 contacts and 2 limits
// against an 18 × 18 inverse; box_stack: about 8 contact sides per box against a 6 × 6 inverse
// each); larger trees through A_t⁻¹.
[[gnu::always_inline]] inline void prepare_constraints_body(SapProblem& problem, SapSolverWorkspace& w) {
  const int T = problem.num_trees();
  w.A_inverse.resize(T);
  w.A_chol.resize(T);
  w.L_of.assign(T, nullptr);
  for (int t = 0; t < T; ++t) {
    const int n = problem.tree_size(t);
    // Every tree's factorization is also the positive-definiteness check of its A. A tree up to
    // kPlainKernelMaxSize keeps its factor (the Delassus estimates below use it; free bodies
    // through the compile-time 6 × 6 kernel); trees above 32 (Eigen's LLT) form A⁻¹, and only
    // if some constraint touches them (w.tree_touched).
    if (n <= linalg::internal::kPlainKernelMaxSize) {
      if (problem.has_A_factors()) {  // the caller's factor (SapProblem::set_A_factors)
        w.L_of[t] = problem.A_factor(t).data();
        continue;
      }
      Eigen::MatrixXd& L = w.A_chol[t];
      L = problem.A(t);  // no allocation once the tree has been seen
      w.L_of[t] = L.data();
      const bool ok = n == 6 ? linalg::internal::small_cholesky_in_place<6>(L.data())
                             : linalg::internal::dense_cholesky(L.data(), n);
      if (!ok) throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not positive definite");
      continue;
    }
    if (w.A_factor.size() < static_cast<size_t>(n) * n) w.A_factor.resize(static_cast<size_t>(n) * n);
    Eigen::Map<Eigen::MatrixXd> A_factor(w.A_factor.data(), n, n);  // trees differ in size: a grow-only buffer
    A_factor = problem.A(t);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(A_factor);
    if (llt.info() != Eigen::Success)
      throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not positive definite");
    if (!w.tree_touched[t]) continue;
    w.A_inverse[t].setIdentity(n, n);
    llt.solveInPlace(w.A_inverse[t]);
  }
  // Free bodies (6 velocities) carry several contacts each: their L⁻¹ is formed once here, and
  // each contact side's Y = L⁻¹ J_itᵀ below is then a product of independent multiply-adds. A
  // forward substitution per side divided by each pivot on a chain of dependent updates, and
  // that latency was 70 % of this function's time on clutter (perf, cpu-clock samples).
  if (w.L_inv6.size() < static_cast<size_t>(36) * T) w.L_inv6.resize(static_cast<size_t>(36) * T);
  for (int t = 0; t < T; ++t)
    if (problem.tree_size(t) == 6 && w.tree_touched[t])
      linalg::internal::lower_triangular_inverse6(w.L_of[t], w.L_inv6.data() + static_cast<ptrdiff_t>(36) * t);
  // W_ii and A⁻¹Jᵀ are mapped over grow-only buffers: constraints of different sizes follow
  // each other, and resizing one matrix to each would allocate every step.
  size_t max_W = 1, max_AinvJt = 1;
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    max_W = std::max(max_W, static_cast<size_t>(c.num_rows()) * c.num_rows());
    for (int k = 0; k < c.num_trees(); ++k)
      max_AinvJt = std::max(max_AinvJt, static_cast<size_t>(c.num_rows()) * c.jacobian(k).cols());
  }
  if (w.W.size() < max_W) w.W.resize(max_W);
  if (w.AinvJt.size() < max_AinvJt) w.AinvJt.resize(max_AinvJt);
  if (w.Y.size() < max_AinvJt) w.Y.resize(max_AinvJt);
  for (int i = 0; i < problem.num_constraints(); ++i) {
    SapConstraint& c = problem.mutable_constraint(i);
    const int r = c.num_rows();
    Eigen::Map<Eigen::MatrixXd> W(w.W.data(), r, r);
    W.setZero();
    for (int k = 0; k < c.num_trees(); ++k) {
      const Eigen::MatrixXd& J = c.jacobian(k);
      const int n = static_cast<int>(J.cols());
      const SapSolverWorkspace::Sparsity& sp = w.sparsity[2 * static_cast<size_t>(i) + k];
      if (r == 3 && n == 6) {  // a contact on a free body: W += YᵀY, Y = L⁻¹Jᵀ (6 × 3), fixed size
        const double* Li = w.L_inv6.data() + static_cast<ptrdiff_t>(36) * c.tree(k);  // column-major, lower
        double Y[3][6] = {};
        for (int m = 0; m < 6; ++m)  // Y += L⁻¹(:, m) J(:, m)ᵀ: fixed-size columns (L⁻¹'s upper triangle is 0)
          for (int q = 0; q < 3; ++q) {
            const double Jqm = J(q, m);
            for (int j = 0; j < 6; ++j) Y[q][j] += Li[m * 6 + j] * Jqm;
          }
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b <= a; ++b) {
            double x = 0.0;
            for (int j = 0; j < 6; ++j) x += Y[a][j] * Y[b][j];
            W(a, b) += x;
            if (b != a) W(b, a) += x;
          }
        continue;
      }
      if (n <= linalg::internal::kPlainKernelMaxSize) {  // a robot's tree (or another constraint on a free body): W += YᵀY
        // Rows of L⁻¹ J_itᵀ above the first nonzero column of J_it are zero (a limit on a leg
        // joint: only the rows from that joint on): the substitution starts there.
        const int first = sp.k < n ? w.cols[sp.cols_offset] : 0;
        const int m = n - first;
        const double* L = w.L_of[c.tree(k)] + static_cast<ptrdiff_t>(first) * n + first;
        double* Y = w.Y.data();
        for (int q = 0; q < r; ++q) {
          double* y = Y + static_cast<ptrdiff_t>(q) * m;  // row q of J_it from `first`
          if (sp.k < n) {
            std::fill(y, y + m, 0.0);
            const double* Jc = w.J_compact.data() + sp.J_offset;
            const int* cols = w.cols.data() + sp.cols_offset;
            for (int b = 0; b < sp.k; ++b) y[cols[b] - first] = Jc[static_cast<ptrdiff_t>(b) * r + q];
          } else {
            for (int j = 0; j < n; ++j) y[j] = J(q, j);
          }
        }
        linalg::internal::dense_forward_substitution_rows(L, m, n, Y, r);  // each row: L⁻¹ of it
        for (int a = 0; a < r; ++a)
          for (int b = 0; b <= a; ++b) {
            double x = 0.0;
            for (int j = 0; j < m; ++j) x += Y[static_cast<ptrdiff_t>(a) * m + j] * Y[static_cast<ptrdiff_t>(b) * m + j];
            W(a, b) += x;
            if (b != a) W(b, a) += x;
          }
        continue;
      }
      const Eigen::MatrixXd& Ainv = w.A_inverse[c.tree(k)];
      if (sp.k < J.cols()) {  // compacted: W += J_c A⁻¹(cols, cols) J_cᵀ
        const Eigen::Map<const Eigen::MatrixXd> Jc(w.J_compact.data() + sp.J_offset, r, sp.k);
        const int* cols = w.cols.data() + sp.cols_offset;
        Eigen::Map<Eigen::MatrixXd> AinvJt(w.AinvJt.data(), sp.k, r);
        for (int a = 0; a < sp.k; ++a)
          for (int q = 0; q < r; ++q) {
            double x = 0.0;
            for (int b = 0; b < sp.k; ++b) x += Ainv(cols[a], cols[b]) * Jc(q, b);
            AinvJt(a, q) = x;
          }
        W.noalias() += Jc * AinvJt;
      } else {
        Eigen::Map<Eigen::MatrixXd> AinvJt(w.AinvJt.data(), J.cols(), r);
        AinvJt.noalias() = Ainv * J.transpose();
        W.noalias() += J * AinvJt;
      }
    }
    c.prepare(problem.time_step(), W);
  }
}

// Compiled twice, like the block kernels (linalg/block_kernels.h): the Delassus estimates' fixed-size
// products (Y = L⁻¹Jᵀ, YᵀY) contract into FMAs where the processor has them.
void prepare_constraints_baseline(SapProblem& problem, SapSolverWorkspace& w) { prepare_constraints_body(problem, w); }
COULOMB_TARGET_AVX2 void prepare_constraints_avx2(SapProblem& problem, SapSolverWorkspace& w) {
  prepare_constraints_body(problem, w);
}
void prepare_constraints(SapProblem& problem, SapSolverWorkspace& w) {
  if (linalg::internal::use_avx2_kernels()) prepare_constraints_avx2(problem, w);
  else prepare_constraints_baseline(problem, w);
}

// Sizes the evaluation buffers and the per-constraint G and GJ storage.
void size_buffers(const SapProblem& problem, SapSolverWorkspace& w) {
  const int nv = problem.nv(), m = problem.num_rows(), nc = problem.num_constraints();
  for (Eigen::VectorXd* x : {&w.v, &w.dv, &w.grad, &w.dv_minus, &w.Av_minus, &w.Av_star, &w.jc, &w.p, &w.D, &w.dp})
    x->resize(nv);
  w.vc.resize(m);
  w.dvc.resize(m);
  w.gamma.resize(m);
  int max_rows = 1;
  for (int i = 0; i < nc; ++i) max_rows = std::max(max_rows, problem.constraint(i).num_rows());
  w.vc_rest.setZero(max_rows);
  w.gamma_rest.resize(max_rows);
  w.G_offset.resize(nc);
  size_t g = 0, gj = 0;
  for (int i = 0; i < nc; ++i) {
    const SapConstraint& c = problem.constraint(i);
    w.G_offset[i] = static_cast<int>(g);
    g += static_cast<size_t>(c.num_rows()) * c.num_rows();
    size_t cols = 0;
    for (int k = 0; k < c.num_trees(); ++k) cols += c.jacobian(k).cols();
    gj = std::max(gj, static_cast<size_t>(c.num_rows()) * cols);
  }
  w.G.resize(g);
  w.GJ.resize(gj);
  w.cone_of.resize(nc);
  for (int i = 0; i < nc; ++i) w.cone_of[i] = problem.constraint(i).as_friction_cone();
  w.targets.resize(3 * static_cast<size_t>(nc));
}

// Finds the nonzero columns of every Jacobian block and compacts the blocks that have zero
// columns (once per solve).
void analyze_sparsity(const SapProblem& problem, SapSolverWorkspace& w) {
  const int nc = problem.num_constraints();
  w.sparsity.resize(2 * static_cast<size_t>(nc));
  w.cols.clear();
  w.J_compact.clear();
  w.any_compact = false;
  size_t max_k = 0;
  for (int i = 0; i < nc; ++i) {
    const SapConstraint& c = problem.constraint(i);
    for (int side = 0; side < c.num_trees(); ++side) {
      const Eigen::MatrixXd& J = c.jacobian(side);
      const int r = static_cast<int>(J.rows()), n = static_cast<int>(J.cols());
      SapSolverWorkspace::Sparsity& sp = w.sparsity[2 * static_cast<size_t>(i) + side];
      sp.cols_offset = static_cast<int>(w.cols.size());
      if (n <= 6) {  // free bodies and small trees: nothing to gain
        sp.k = n;
        continue;
      }
      // Nonzero columns, then their entries, written through pointers into storage grown to the
      // worst case (no allocation once the sizes have peaked).
      w.cols.resize(static_cast<size_t>(sp.cols_offset) + n);
      int* cols = w.cols.data() + sp.cols_offset;
      int k = 0;
      for (int j = 0; j < n; ++j) {
        const double* column = J.data() + static_cast<ptrdiff_t>(j) * r;
        bool nonzero = false;
        for (int a = 0; a < r; ++a) nonzero |= column[a] != 0.0;
        if (nonzero) cols[k++] = j;
      }
      sp.k = k;
      w.cols.resize(static_cast<size_t>(sp.cols_offset) + k);
      if (sp.k == n) {  // dense: use J itself
        w.cols.resize(sp.cols_offset);
        continue;
      }
      sp.J_offset = static_cast<int>(w.J_compact.size());
      w.any_compact = true;
      w.J_compact.resize(static_cast<size_t>(sp.J_offset) + static_cast<size_t>(k) * r);
      double* Jc = w.J_compact.data() + sp.J_offset;
      for (int b = 0; b < k; ++b) std::copy_n(J.data() + static_cast<ptrdiff_t>(cols[b]) * r, r, Jc + static_cast<ptrdiff_t>(b) * r);
      max_k = std::max(max_k, static_cast<size_t>(sp.k));
    }
  }
  max_k = std::max<size_t>(max_k, 1);
  for (int t = 0; t < problem.num_trees(); ++t) max_k = std::max(max_k, static_cast<size_t>(problem.tree_size(t)));
  w.JtGJ.resize(max_k * max_k);
}

// Where each constraint's J_aᵀ G J_b blocks go: the dense H (lower triangle by tree order) or
// the block-sparse factor's storage.
void locate_targets(const SapProblem& problem, bool dense, SapSolverWorkspace& w) {
  const int nv = problem.nv();
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    SapSolverWorkspace::Target* t = &w.targets[3 * static_cast<size_t>(i)];
    for (int k = 0; k < c.num_trees(); ++k) {
      const int s = problem.tree_start(c.tree(k));
      if (dense) {
        t[k] = {w.H.data() + static_cast<ptrdiff_t>(s) * nv + s, nv, false};
      } else {
        const linalg::BlockSparseCholesky::BlockStorage b = w.chol.storage(c.tree(k), c.tree(k));
        t[k] = {b.data, b.rows, false};
      }
    }
    if (c.num_trees() == 2) {
      const int s0 = problem.tree_start(c.tree(0)), s1 = problem.tree_start(c.tree(1));
      if (dense) {
        // Lower triangle: rows of the later tree.
        t[2] = s1 > s0 ? SapSolverWorkspace::Target{w.H.data() + static_cast<ptrdiff_t>(s0) * nv + s1, nv, false}
                       : SapSolverWorkspace::Target{w.H.data() + static_cast<ptrdiff_t>(s1) * nv + s0, nv, true};
      } else if (w.in_pattern[i]) {
        const linalg::BlockSparseCholesky::BlockStorage b = w.chol.storage(c.tree(1), c.tree(0));
        t[2] = {b.data, b.rows, b.transposed};
      } else {
        t[2] = {nullptr, 0, false};  // G = 0 until the pattern grows (update_pattern)
      }
    }
  }
}

// A side of a constraint as the assembly sees it: r × k columns at `J` (the block itself or its
// compaction) and, when compacted, the indices of those columns in the tree.

// out(rows x.cols, cols y.cols) += x.Jᵀ GJ_y (GJ_y: r × y.k), scattering through the column
// indices of compacted sides.
[[gnu::always_inline]] inline void add_side_product(const Side& x, int r, const Side& y, const double* GJy, double* out,
                                                    int ld, double* scratch) {
  if (x.cols == nullptr && y.cols == nullptr) {
    add_JtGJ(x.J, r, x.k, GJy, y.k, out, ld);
    return;
  }
  Eigen::Map<Eigen::MatrixXd> P(scratch, x.k, y.k);
  P.setZero();
  add_JtGJ(x.J, r, x.k, GJy, y.k, scratch, x.k);
  for (int b = 0; b < y.k; ++b) {
    double* column = out + static_cast<ptrdiff_t>(y.cols ? y.cols[b] : b) * ld;
    for (int a = 0; a < x.k; ++a) column[x.cols ? x.cols[a] : a] += P(a, b);
  }
}

// out += x.Jᵀ GJ_x on a diagonal block (the same side on both hands), lower triangle only: the
// factorizations read nothing else. Free bodies' 3 × 6 contact blocks take the lower-triangle
// register kernel (block6::add_JtGJ_3x6_lower); a robot's side (k columns of its tree, sorted,
// compacted or all) writes its k(k+1)/2 entries straight to their places.
[[gnu::always_inline]] inline void add_diagonal_product(const Side& x, int r, const double* GJx, double* out, int ld) {
  if (x.cols == nullptr && r == 3 && x.k == 6 && ld == 6) {
    linalg::internal::block6::add_JtGJ_3x6_lower(x.J, GJx, out);
    return;
  }
  if (r == 3) {  // contacts
    for (int b = 0; b < x.k; ++b) {
      const double* g = GJx + 3 * static_cast<ptrdiff_t>(b);
      double* column = out + static_cast<ptrdiff_t>(x.cols ? x.cols[b] : b) * ld;
      if (x.cols != nullptr) {
        for (int a = b; a < x.k; ++a) {
          const double* j = x.J + 3 * static_cast<ptrdiff_t>(a);
          column[x.cols[a]] += j[0] * g[0] + j[1] * g[1] + j[2] * g[2];
        }
      } else {
        for (int a = b; a < x.k; ++a) {
          const double* j = x.J + 3 * static_cast<ptrdiff_t>(a);
          column[a] += j[0] * g[0] + j[1] * g[1] + j[2] * g[2];
        }
      }
    }
    return;
  }
  for (int b = 0; b < x.k; ++b) {
    const double* g = GJx + static_cast<ptrdiff_t>(r) * b;
    double* column = out + static_cast<ptrdiff_t>(x.cols ? x.cols[b] : b) * ld;
    for (int a = b; a < x.k; ++a) {
      const double* j = x.J + static_cast<ptrdiff_t>(r) * a;
      double sum = 0.0;
      for (int q = 0; q < r; ++q) sum += j[q] * g[q];
      column[x.cols ? x.cols[a] : a] += sum;
    }
  }
}

// G_i ≠ 0 at the last evaluation (an inactive constraint, a contact out of reach or a limit not
// engaged, has G = 0).
bool g_nonzero(const SapProblem& problem, const SapSolverWorkspace& w, int i) {
  const int r = problem.constraint(i).num_rows();
  const double* G = w.G.data() + w.G_offset[i];
  for (int q = 0; q < r * r; ++q)
    if (G[q] != 0.0) return true;
  return false;
}
// Whether constraint i adds to the Newton matrix: G_i ≠ 0, outside the islands left out.
bool contributes(const SapProblem& problem, const SapSolverWorkspace& w, int i) {
  const SapConstraint& c = problem.constraint(i);
  if (!w.skip_node.empty() && w.skip_node[c.tree(0)]) return false;
  return g_nonzero(problem, w, i);
}

std::pair<int, int> tree_pair(const SapConstraint& c) {
  return {std::min(c.tree(0), c.tree(1)), std::max(c.tree(0), c.tree(1))};
}

// The pairs of trees that the constraints with G ≠ 0 couple, for the next solve's pattern.
void record_active_pairs(const SapProblem& problem, SapSolverWorkspace& w) {
  w.last_active_pairs.clear();
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    if (c.num_trees() == 2 && g_nonzero(problem, w, i)) w.last_active_pairs.push_back(tree_pair(c));
  }
  std::sort(w.last_active_pairs.begin(), w.last_active_pairs.end());
  w.last_active_pairs.erase(std::unique(w.last_active_pairs.begin(), w.last_active_pairs.end()),
                            w.last_active_pairs.end());
}

// The block-sparse pattern before a factorization (SapSolverParameters::pattern_from_last_solve).
// The first of a solve analyzes the pairs of trees that the contributing constraints couple, and
// (use_hint) those active at the end of the last solve. Contacts within the collision margin
// that carry no impulse would otherwise put their edges, and the fill-in those bring, into every
// factorization: on a settled pile of 320 boxes 10 % of the pairs and 28 % of the
// factorization's block updates. Later factorizations keep that analysis unless a constraint
// has become active whose pair the factor does not store (not an edge, nor a fill-in block);
// then every pair that a constraint couples is analyzed (the full pattern), so a solve analyzes
// at most twice (falling piles, whose active sets change within a step, would otherwise analyze
// at every new contact).
void update_pattern(const SapProblem& problem, bool use_hint, SapSolverWorkspace& w, SapSolverResults& res) {
  const int nc = problem.num_constraints();
  if (w.pattern_ready) {
    bool missing = false;
    for (int i = 0; i < nc && !missing; ++i) missing = !w.in_pattern[i] && contributes(problem, w, i);
    if (!missing) return;
  } else {
    w.edges.clear();
  }
  const bool full = w.pattern_ready;  // a growth: every coupled pair
  if (full) res.pattern_grew = true;
  // First: the contributing pairs and the last solve's active ones. On growth: every pair a
  // constraint couples (the full pattern, so that a solve analyzes at most twice).
  for (int i = 0; i < nc; ++i) {
    const SapConstraint& c = problem.constraint(i);
    if (c.num_trees() != 2) continue;
    if (full || contributes(problem, w, i) ||
        (use_hint && std::binary_search(w.last_active_pairs.begin(), w.last_active_pairs.end(), tree_pair(c))))
      w.edges.emplace_back(c.tree(0), c.tree(1));
  }
  w.chol.analyze(w.block_sizes, w.edges);
  w.in_pattern.resize(nc);
  for (int i = 0; i < nc; ++i) {
    const SapConstraint& c = problem.constraint(i);
    w.in_pattern[i] = c.num_trees() < 2 || w.chol.has_block(c.tree(0), c.tree(1));
  }
  locate_targets(problem, /*dense=*/false, w);
  w.pattern_ready = true;
}

// Adds Σ_i J_iᵀ G_i J_i into the targets (which hold A already). Compiled twice, like
// BlockSparseCholesky's factorization (linalg/block_kernels.h): the 6 × 6 contact blocks of free
// bodies take the AVX2 + FMA kernels where the processor has them.
[[gnu::always_inline]] inline void assemble_constraint_hessians_body(const SapProblem& problem, SapSolverWorkspace& w) {
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    const int r = c.num_rows();
    const double* G = w.G.data() + w.G_offset[i];
    // Inactive constraints (G = 0) and converged islands add nothing; update_pattern made the
    // others' targets valid by the same test.
    if (!contributes(problem, w, i)) continue;
    const SapSolverWorkspace::Target* t = &w.targets[3 * static_cast<size_t>(i)];
    const Side s0 = side_of(c, 0, i, w);
    double* GJ0 = w.GJ.data();
    multiply_GJ(G, r, s0.J, s0.k, GJ0);
    add_diagonal_product(s0, r, GJ0, t[0].data, t[0].ld);
    if (c.num_trees() == 2) {
      const Side s1 = side_of(c, 1, i, w);
      double* GJ1 = GJ0 + static_cast<ptrdiff_t>(r) * s0.k;
      multiply_GJ(G, r, s1.J, s1.k, GJ1);
      add_diagonal_product(s1, r, GJ1, t[1].data, t[1].ld);
      if (!t[2].transposed) add_side_product(s1, r, s0, GJ0, t[2].data, t[2].ld, w.JtGJ.data());  // (tree 1, tree 0)
      else add_side_product(s0, r, s1, GJ1, t[2].data, t[2].ld, w.JtGJ.data());                  // (tree 0, tree 1)
    }
  }
}

void assemble_constraint_hessians_baseline(const SapProblem& problem, SapSolverWorkspace& w) {
  assemble_constraint_hessians_body(problem, w);
}
COULOMB_TARGET_AVX2 void assemble_constraint_hessians_avx2(const SapProblem& problem, SapSolverWorkspace& w) {
  assemble_constraint_hessians_body(problem, w);
}
void assemble_constraint_hessians(const SapProblem& problem, SapSolverWorkspace& w) {
  if (linalg::internal::use_avx2_kernels()) assemble_constraint_hessians_avx2(problem, w);
  else assemble_constraint_hessians_baseline(problem, w);
}

}  // namespace

SapSolverResults SapSolver::solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess) const {
  SapSolverResults results;
  solve(problem, v_guess, results);
  return results;
}

void SapSolver::solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess,
                      SapSolverResults& res) const {
  solve(problem, v_guess, nullptr, res);
}

void SapSolver::solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess,
                      const Eigen::Ref<const Eigen::VectorXd>& v_second_guess, SapSolverResults& res) const {
  solve(problem, v_guess, &v_second_guess, res);
}

void SapSolver::solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess,
                      const Eigen::Ref<const Eigen::VectorXd>* v_second_guess, SapSolverResults& res) const {
  const SapSolverParameters& prm = parameters_;
  SapSolverWorkspace& w = *workspace_;
  const int nv = problem.nv();
  auto check_guess = [nv](const Eigen::Ref<const Eigen::VectorXd>& g, const char* name) {
    if (g.size() != nv)
      throw std::invalid_argument(std::string("SapSolver: ") + name + " has " + std::to_string(g.size()) +
                                  " entries, problem has " + std::to_string(nv));
    if (!g.allFinite()) throw std::invalid_argument(std::string("SapSolver: ") + name + " is not finite");
  };
  check_guess(v_guess, "v_guess");
  if (v_second_guess != nullptr) check_guess(*v_second_guess, "v_second_guess");
  size_buffers(problem, w);
  analyze_sparsity(problem, w);
  // Trees that no constraint touches (see the pinning below).
  w.free_trees.clear();
  {
    w.tree_touched.assign(problem.num_trees(), 0);
    for (int i = 0; i < problem.num_constraints(); ++i) {
      const SapConstraint& c = problem.constraint(i);
      for (int k = 0; k < c.num_trees(); ++k) w.tree_touched[c.tree(k)] = 1;
    }
    w.touched_trees.clear();
    for (int t = 0; t < problem.num_trees(); ++t) (w.tree_touched[t] ? w.touched_trees : w.free_trees).push_back(t);
    w.touched_runs.clear();
    for (int t : w.touched_trees) {
      const int s = problem.tree_start(t), n = problem.tree_size(t);
      if (!w.touched_runs.empty() && w.touched_runs.back().first + w.touched_runs.back().second == s)
        w.touched_runs.back().second += n;
      else
        w.touched_runs.emplace_back(s, n);
    }
    // Runs pay when they skip much: a run costs about as much as 16 more entries of a whole-vector
    // operation (a pile of 40 whose falling and landed bodies alternate has 20 runs). Either way
    // the free trees' entries are the same (set once per solve below, or written again with the
    // same values).
    int touched_nv = 0;
    for (const auto& run : w.touched_runs) touched_nv += run.second;
    w.use_runs = touched_nv + 16 * static_cast<int>(w.touched_runs.size()) < problem.nv();
  }
  w.num_islands = 0;  // found before the first Newton step (most steps of a settled scene take none)
  w.islands_left = 0;
  w.freeze_islands = true;
  w.skip_node.clear();  // set below on the block-sparse path only
  prepare_constraints(problem, w);

  // Stopping-criterion scaling D̃ = diag(A)^{-1/2} (Eq. 25; Drake's choice, digest §3.5). The
  // diagonals are gathered first, so that the square roots and divisions run on packets of the
  // contiguous vector (each tree's diagonal is strided: one scalar √ and division per entry).
  for (int t = 0; t < problem.num_trees(); ++t)
    w.D.segment(problem.tree_start(t), problem.tree_size(t)) = problem.A(t).diagonal();
  w.D = w.D.cwiseSqrt().cwiseInverse();
  problem.multiply_A(problem.v_star(), w.Av_star);
  // v = v* on the free trees for the whole solve: their entries of v − v*, ∇ℓ, A v (see
  // evaluate()) and Δv are set here once. (The block-sparse path writes the touched trees' Δv
  // only; the other paths write all of it.)
  for (int t : w.free_trees) {
    const int s = problem.tree_start(t), n = problem.tree_size(t);
    w.dv.segment(s, n).setZero();
    w.dv_minus.segment(s, n).setZero();
    w.grad.segment(s, n).setZero();
    w.p.segment(s, n) = w.Av_star.segment(s, n);
  }

  SapLinearSolver linear_solver = prm.linear_solver;
  if (linear_solver == SapLinearSolver::kAuto)
    linear_solver = nv >= prm.dense_threshold ? SapLinearSolver::kBlockSparse : SapLinearSolver::kDense;
  const bool use_sparse = linear_solver != SapLinearSolver::kDense;
  w.cholmod.reset();
  if (linear_solver == SapLinearSolver::kSparse) {
    w.cholmod = std::make_unique<SparseHessian>(problem);
  } else if (linear_solver == SapLinearSolver::kBlockSparse) {
    // The pattern: one node per tree, one edge per pair of trees that an active constraint
    // couples, analyzed before the first factorization (update_pattern). The symbolic analysis
    // is skipped when the pattern is the previous analysis's.
    w.block_sizes.resize(problem.num_trees());
    for (int t = 0; t < problem.num_trees(); ++t) w.block_sizes[t] = problem.tree_size(t);
    w.pattern_ready = false;
    skip_free_trees_only(problem, w);
    w.A_blocks.resize(problem.num_trees());
    for (int t = 0; t < problem.num_trees(); ++t) w.A_blocks[t] = problem.A(t).data();
  } else {
    w.H.resize(nv, nv);
    locate_targets(problem, /*dense=*/true, w);
  }

  res.status = SapSolverStatus::kSuccess;
  res.iterations = 0;
  res.line_search_iterations = 0;
  res.cost_history.clear();
  res.alpha_history.clear();
  res.momentum_error_history.clear();
  res.used_sparse = use_sparse;
  res.pattern_grew = false;
  // Trees that no constraint touches (a body in free fall, a robot out of reach) have the cost
  // term ½‖v_t − v*_t‖²_A alone: their minimizer is v*_t, independent of the other trees. They
  // start there, so their gradient and Newton step stay zero and the line search works on the
  // coupled trees alone (otherwise a short step α, set by the contacts, leaves them at
  // (1 − α) of their error and the stopping criterion waits for them too).
  auto pin_free_trees = [&](Eigen::VectorXd& v) {
    for (int t : w.free_trees)
      v.segment(problem.tree_start(t), problem.tree_size(t)) =
          problem.v_star().segment(problem.tree_start(t), problem.tree_size(t));
  };
  w.v = v_guess;
  pin_free_trees(w.v);
  // Eq. 26 at the current evaluation: ‖D̃∇ℓ‖ < ε_a + ε_r max(‖D̃p‖, ‖D̃j_c‖).
  double grad_norm = 0.0, scale = 0.0;
  auto meets_eq26 = [&] {
    grad_norm = w.D.cwiseProduct(w.grad).norm();
    scale = std::max(w.D.cwiseProduct(w.p).norm(), w.D.cwiseProduct(w.jc).norm());
    return grad_norm < prm.abs_tolerance + prm.rel_tolerance * scale;
  };
  double previous_cost = 0.0, last_alpha = 0.0;
  for (int iter = 0;; ++iter) {
    evaluate(problem, /*with_G=*/true, w);
    bool converged = meets_eq26();
    // A second guess, unless v_guess already meets Eq. 26: start there if ℓ_p is lower (a cost
    // evaluation without G or gradient, whose J v and A(v − v*) the evaluation there then keeps).
    if (iter == 0 && !converged && v_second_guess != nullptr) {
      w.v_second = *v_second_guess;
      pin_free_trees(w.v_second);
      w.vc_second.resize(problem.num_rows());
      w.gamma_second.resize(problem.num_rows());
      w.Av_second.resize(nv);
      if (cost_at(problem, w.v_second, w) < w.cost) {
        evaluate_second_guess(problem, w);
        converged = meets_eq26();
      }
    }
    if (iter == 0 && !converged && prm.try_zero_guess && !w.v.isZero(0.0) &&
        cost_at_rest(problem, w) - free_trees_rest_cost(problem, w) < w.cost) {
      w.v.setZero();
      pin_free_trees(w.v);
      evaluate(problem, /*with_G=*/true, w);
      converged = meets_eq26();
    }
    if (prm.record_history) res.cost_history.push_back(w.cost);
    res.gradient_norm = grad_norm;
    if (std::isfinite(grad_norm) && std::isfinite(scale)) {
      res.momentum_error = scale > 0.0 ? grad_norm / scale : 0.0;
    } else {
      // norm() overflowed on finite entries (stableNorm scales them), or the gradient or the
      // momentum is not finite: then the error is +∞, never NaN nor a 0 from a NaN scale
      // (steps.csv reports it; such a solve has not converged).
      const double g = w.D.cwiseProduct(w.grad).stableNorm();
      const double s = std::max(w.D.cwiseProduct(w.p).stableNorm(), w.D.cwiseProduct(w.jc).stableNorm());
      res.momentum_error = std::isfinite(g) && std::isfinite(s) && s > 0.0 ? g / s : std::numeric_limits<double>::infinity();
    }
    res.iterations = iter;
    res.cost = w.cost;
    if (prm.record_history) res.momentum_error_history.push_back(res.momentum_error);
    if (converged) {
      res.status = SapSolverStatus::kSuccess;
      break;
    }
    if (iter > 0 && prm.cost_rel_tolerance > 0.0 && last_alpha > 0.5 &&
        std::abs(previous_cost - w.cost) < prm.cost_abs_tolerance + prm.cost_rel_tolerance * w.cost) {
      res.status = SapSolverStatus::kSuccess;
      break;
    }
    if (iter >= prm.max_iterations) {
      res.status = SapSolverStatus::kMaxIterations;
      break;
    }
    if (iter == 0 && prm.island_line_search && problem.num_trees() > 1) {  // one tree: one island
      find_islands(problem, w);
      w.island_done.assign(w.num_islands, 0);
      w.islands_left = w.num_islands;
    }
    if (w.num_islands > 1 && w.freeze_islands) {
      // Islands that meet Eq. 26 on their own rows are done. Every island done need not give
      // Eq. 26 for the whole problem (the per-island tests add up to it within √2): then they
      // all go back in, and the rest of the solve searches island by island without leaving
      // any out (an island that meets its own test stays where it is, as below).
      mark_converged_islands(problem, prm, w);
      if (w.islands_left == 0) {
        std::fill(w.island_done.begin(), w.island_done.end(), 0);
        if (!w.skip_node.empty()) skip_free_trees_only(problem, w);
        w.islands_left = w.num_islands;
        w.freeze_islands = false;
      }
    }
    // Newton direction H Δv = −∇ℓ, H = A + Jᵀ G J. On the block-sparse path the free trees'
    // entries stay 0 (set before the first iteration; their gradient is 0).
    if (linear_solver == SapLinearSolver::kBlockSparse && w.use_runs) {
      for (const auto& [s, n] : w.touched_runs) w.dv.segment(s, n) = -w.grad.segment(s, n);
    } else {
      w.dv = -w.grad;
    }
    if (linear_solver == SapLinearSolver::kBlockSparse) {
      update_pattern(problem, prm.pattern_from_last_solve, w, res);
      w.chol.reset(w.A_blocks, w.skip_node);
      assemble_constraint_hessians(problem, w);
      if (!w.chol.factorize(w.skip_node)) {
        res.status = SapSolverStatus::kLinearSolverFailure;
        break;
      }
      w.chol.solve_in_place(w.dv, w.skip_node);
      // Δv = 0 on the trees left out (free trees have ∇ℓ = 0 there already).
      if (w.islands_left < w.num_islands)
        for (int t = 0; t < problem.num_trees(); ++t)
          if (w.skip_node[t] && w.tree_touched[t])
            std::fill_n(w.dv.data() + problem.tree_start(t), problem.tree_size(t), 0.0);
    } else if (linear_solver == SapLinearSolver::kSparse) {
      if (!w.cholmod->factorize(problem, w.G, w.G_offset)) {
        res.status = SapSolverStatus::kLinearSolverFailure;
        break;
      }
      w.dv = -w.cholmod->solve(w.grad);
    } else {
      if (problem.num_trees() > 1) w.H.setZero();  // off the diagonal blocks (one tree: H is its block)
      for (int t = 0; t < problem.num_trees(); ++t) {
        const int s = problem.tree_start(t), n = problem.tree_size(t);
        w.H.block(s, s, n, n) = problem.A(t);
      }
      assemble_constraint_hessians(problem, w);
      if (nv <= linalg::internal::kPlainKernelMaxSize) {  // the plain kernels (a robot alone)
        if (!linalg::internal::dense_cholesky(w.H.data(), nv)) {
          res.status = SapSolverStatus::kLinearSolverFailure;
          break;
        }
        linalg::internal::dense_cholesky_solve(w.H.data(), nv, w.dv.data());
      } else {
        w.llt.compute(w.H);  // reads the lower triangle
        if (w.llt.info() != Eigen::Success) {
          res.status = SapSolverStatus::kLinearSolverFailure;
          break;
        }
        w.llt.solveInPlace(w.dv);
      }
    }
    if (!linalg::internal::all_finite(w.dv.data(), w.dv.size())) {  // one vectorized sum, no branch per entry
      res.status = SapSolverStatus::kLinearSolverFailure;
      break;
    }
    // ℓ'(0) = Δpᵀ(v − v*) − Δv_cᵀγ = Δvᵀ(A(v − v*) − Jᵀγ) = Δvᵀ∇ℓ_p: known from the evaluation
    // at v, so the exact search does not evaluate it again.
    auto line_search = [&](const SapLineSearchFunction& f, double d0) {
      return prm.line_search == SapLineSearch::kExact
                 ? exact_line_search(f, prm.exact_alpha_max, prm.exact_f_tolerance, prm.exact_max_iterations, d0)
                 : backtracking_line_search(f, prm.armijo_alpha_max, prm.armijo_rho, prm.armijo_c,
                                            prm.backtracking_max_iterations);
    };
    if (w.num_islands > 1) {
      // Islands are independent problems: ℓ_p is a sum of one term per island (A is block
      // diagonal by tree, and a constraint couples trees of one island only), so the Newton step
      // is one Newton step per island, and each island takes the exact step length of its own
      // line. One α for all would let the island with the most contact changes along the line
      // hold back every other one (a pile's falling pairs and settled heaps).
      multiply_J(problem, w, w.dv.data(), w.dvc.data());
      multiply_A_touched(problem, w, w.dv, w.dp);
      double min_alpha = std::numeric_limits<double>::infinity();
      for (int k = 0; k < w.num_islands; ++k) {
        // A converged island stays: its line is flat to round-off, and a search along it would
        // chase noise. (Once every island has been done, w.freeze_islands is off and the test
        // is made here each iteration, as the island is not left out of the Newton matrix.)
        if (w.island_done[k]) continue;
        if (!w.freeze_islands && island_meets_eq26(problem, prm, w, k)) continue;
        double cost_A0 = 0.0, r0 = 0.0, dv_dp = 0.0, d0 = 0.0;
        for (int a = w.island_tree_start[k]; a < w.island_tree_start[k + 1]; ++a) {
          const int t = w.island_trees[a], s = problem.tree_start(t), n = problem.tree_size(t);
          const double *dv = w.dv.data() + s, *dvm = w.dv_minus.data() + s, *Avm = w.Av_minus.data() + s,
                       *dp = w.dp.data() + s, *g = w.grad.data() + s;
          for (int j = 0; j < n; ++j) {
            cost_A0 += dvm[j] * Avm[j];
            r0 += dv[j] * Avm[j];
            dv_dp += dv[j] * dp[j];
            d0 += dv[j] * g[j];
          }
        }
        const int c0 = w.island_constraint_start[k];
        w.island_line.reset_island(problem, w.vc.data(), w.dvc.data(), 0.5 * cost_A0, r0, dv_dp,
                                   w.island_constraints.data() + c0, w.island_constraint_start[k + 1] - c0);
        const LineSearchOutcome ls = line_search(w.island_line, d0);
        res.line_search_iterations += ls.iterations;
        // ℓ'(0) = −∇ℓ_Iᵀ H_I⁻¹ ∇ℓ_I < 0 unless the island's gradient is zero to round-off:
        // then it is at its minimizer and stays.
        if (!ls.descent) continue;
        min_alpha = std::min(min_alpha, ls.alpha);
        for (int a = w.island_tree_start[k]; a < w.island_tree_start[k + 1]; ++a) {
          const int t = w.island_trees[a], s = problem.tree_start(t), n = problem.tree_size(t);
          w.v.segment(s, n) += ls.alpha * w.dv.segment(s, n);
        }
      }
      if (std::isfinite(min_alpha)) {
        if (prm.record_history) res.alpha_history.push_back(min_alpha);
        last_alpha = min_alpha;
        previous_cost = w.cost;
        continue;
      }
      // No island moved: each meets Eq. 26 on its own rows, or its line is flat, while the
      // whole problem does not (the per-island tests do not add up to the global one exactly).
      // The global line search below takes the step, or reports the failure.
    }
    // The global line: the island form over every constraint, with Δv_c from the compacted J.
    multiply_J(problem, w, w.dv.data(), w.dvc.data());
    multiply_A_touched(problem, w, w.dv, w.dp);
    if (static_cast<int>(w.all_constraints.size()) != problem.num_constraints()) {
      w.all_constraints.resize(problem.num_constraints());
      for (int i = 0; i < problem.num_constraints(); ++i) w.all_constraints[i] = i;
    }
    w.line.reset_island(problem, w.vc.data(), w.dvc.data(), 0.5 * w.dv_minus.dot(w.Av_minus), w.dv.dot(w.Av_minus),
                        w.dv.dot(w.dp), w.all_constraints.data(), problem.num_constraints());
    const LineSearchOutcome ls = line_search(w.line, w.dv.dot(w.grad));
    res.line_search_iterations += ls.iterations;
    if (!ls.descent) {
      res.status = SapSolverStatus::kLineSearchFailure;
      break;
    }
    if (prm.record_history) res.alpha_history.push_back(ls.alpha);
    last_alpha = ls.alpha;
    previous_cost = w.cost;
    w.v += ls.alpha * w.dv;
  }
  if (linear_solver == SapLinearSolver::kBlockSparse && prm.pattern_from_last_solve) record_active_pairs(problem, w);
  else w.last_active_pairs.clear();
  res.v = w.v;
  res.vc = w.vc;
  res.gamma = w.gamma;
}

}  // namespace coulomb::solvers::sap
