// Supernodal Cholesky factorization of an SPD matrix with a block structure given by a graph:
// node t owns a dense n_t × n_t diagonal block and an edge (s, t) allows a dense off-diagonal
// block. In SAP the nodes are the trees of the multibody forest and the edges are pairs of trees
// in contact (Castro et al. §IV-D), so H = A + Jᵀ G J has exactly this structure.
//
// analyze() orders the nodes by approximate minimum degree (SuiteSparse AMD) on the node graph and
// computes the block fill-in by the elimination tree (the symbolic factorization, reused for
// every factorize() with the same pattern);
// factorize() is a right-looking block Cholesky with dense kernels on the supernodes (a plain
// in-place Cholesky for blocks up to 32 × 32, Eigen's blocked LLT above; register-blocked SIMD
// kernels for the 6 × 6 blocks of free bodies). The factor overwrites the blocks. Nothing is
// allocated after analyze(). On x86-64 with GCC or Clang, factorize() and solve_in_place() are
// compiled twice, for the baseline instruction set and for AVX2 + FMA, and the first call picks
// the one the processor runs (so results can differ in the last bits between machines, never
// between runs on one machine).
#pragma once

#include <utility>
#include <vector>

#include <Eigen/Core>

namespace coulomb::linalg {

class BlockSparseCholeskyNumeric;  // the numeric factorization and solves (block_sparse_cholesky.cc)

class BlockSparseCholesky {
 public:
  /// Sets the pattern: block sizes (all > 0) and the node pairs with off-diagonal blocks.
  /// Throws std::invalid_argument for a bad size or an edge out of range or on the diagonal.
  /// When sizes and edges (as a set) equal the previous call's, the ordering and the symbolic
  /// factorization are kept and nothing is allocated.
  void analyze(const std::vector<int>& block_sizes, const std::vector<std::pair<int, int>>& edges);

  int size() const { return n_; }
  int num_blocks() const { return static_cast<int>(sizes_.size()); }
  /// Off-diagonal blocks of the factor L: the edges plus the fill-in of the elimination order.
  int num_factor_blocks() const { return static_cast<int>(off_.size()); }
  /// Whether the factor stores block (s, t): s == t, an edge given to analyze(), or a fill-in
  /// block of the elimination order. Such a block can be written by add_block() and storage()
  /// (fill-in blocks start at zero like the others). Nodes are not range-checked.
  bool has_block(int s, int t) const;
  /// Index of node t's first row/column in the full matrix.
  int offset(int t) const { return offsets_[t]; }

  /// Zeroes all blocks (keeps the pattern).
  void set_zero();
  /// The start of an assembly: diagonal block t becomes the n_t × n_t column-major matrix at
  /// `diagonal_blocks[t]` (contiguous, leading dimension n_t; only its lower triangle is read
  /// later) and every off-diagonal block, fill-in included, becomes zero. The same as set_zero()
  /// followed by diagonal_block(t) = D_t for every t, with each block written once.
  /// Throws std::invalid_argument when `diagonal_blocks` does not have num_blocks() entries or
  /// holds a null pointer.
  void reset(const std::vector<const double*>& diagonal_blocks);
  /// reset() for the nodes that factorize(skip) and solve_in_place(·, skip) will use: the
  /// diagonal blocks of nodes whose flag in `skip` (one per node) is set are left as they are,
  /// unread (a pile's bodies in free fall, an island already converged: SapSolver copies only
  /// the Newton matrix's live part). Off-diagonal blocks all become zero, as in reset(). Throws
  /// std::invalid_argument as reset() does (a skipped node's pointer is not read and may be
  /// null), or when `skip` does not have num_blocks() entries.
  void reset(const std::vector<const double*>& diagonal_blocks, const std::vector<char>& skip);
  /// The diagonal block of node t (n_t × n_t); only its lower triangle is read.
  Eigen::Ref<Eigen::MatrixXd> diagonal_block(int t);
  /// The block in rows of node s and columns of node t (n_s × n_t) for an edge given to
  /// analyze() (or a fill-in block, has_block()), in either order. Throws std::out_of_range for a
  /// pair the factor does not store. Only one of (s, t) and (t, s) needs to be set: the matrix
  /// is symmetric.
  Eigen::Ref<Eigen::MatrixXd> off_diagonal_block(int s, int t);
  /// Adds M (n_s × n_t) to block (s, t), transposing as needed; s == t adds to the diagonal.
  void add_block(int s, int t, const Eigen::Ref<const Eigen::MatrixXd>& M);

  /// Where block (s, t) is stored, for assembly loops that add to it directly: `data` points to a
  /// column-major block with `rows` rows (leading dimension) and `cols` columns. The block stored
  /// is (s, t) itself when `transposed` is false and (t, s) when it is true; for s == t it is the
  /// diagonal block (only its lower triangle is read). The pointer stays valid until the next
  /// analyze() with a different pattern. Throws std::out_of_range for a pair that is not an edge.
  struct BlockStorage {
    double* data = nullptr;
    int rows = 0, cols = 0;
    bool transposed = false;
  };
  BlockStorage storage(int s, int t);

  /// Factorizes in place. Returns false if the matrix is not (numerically) positive definite.
  bool factorize();
  /// Solves H x = b in place (x holds b on entry). factorize() must have succeeded. Throws
  /// std::invalid_argument when x does not have size() entries.
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const;

  /// factorize() and solve_in_place() on part of the matrix: the nodes t with skip[t] != 0
  /// (one flag per node) are left out, their blocks untouched and their entries of x kept as
  /// given. The skipped nodes must be whole connected components of the pattern (no edge or
  /// fill-in block joins a skipped node to a kept one), so the kept part is the factorization of
  /// the kept nodes' submatrix: SAP leaves out the islands that have converged. Throws
  /// std::invalid_argument on a wrong number of flags, a wrong size of x, or a skipped node that
  /// shares a factor block with a kept one (the factorization may then have been partly done).
  bool factorize(const std::vector<char>& skip);
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x, const std::vector<char>& skip) const;

  /// Which compiled copy of the numeric kernels factorize() and solve_in_place() run on this
  /// processor: "avx2-fma" or "baseline" (see the note at the top). Benchmarks report it.
  static const char* kernel_copy();

  /// The matrix the blocks currently hold (before factorize), dense, for tests.
  Eigen::MatrixXd dense() const;

 private:
  void reset_impl(const std::vector<const double*>& diagonal_blocks, const char* skip);
  friend class BlockSparseCholeskyNumeric;
  // Storage in elimination order: node k = order_[k]; blocks_[k] is the diagonal block of the
  // k-th eliminated node; for each k, lower_[k] lists (i, block index) for the later nodes i
  // (elimination positions) with a block L_ik.
  struct Lower {
    int position;  ///< elimination position of the row node
    int block;     ///< index into off_
  };
  int block_index(int pos_row, int pos_col) const;  // off-diagonal block (row later than col), −1 if none

  int n_ = 0;
  std::vector<int> sizes_, offsets_;
  std::vector<int> order_;     ///< order_[k] = node eliminated k-th
  std::vector<int> position_;  ///< position_[t] = elimination position of node t
  std::vector<Eigen::MatrixXd> diag_;  ///< by elimination position
  std::vector<Eigen::MatrixXd> off_;   ///< off-diagonal blocks L_ik (rows: later node i)
  std::vector<std::vector<Lower>> lower_;  ///< by elimination position of the column, sorted by position
  /// Schur-update targets, precomputed by analyze(): for column k and its pair (a, b), b < a, of
  /// rows in lower_[k], the block index of L(pos_a, pos_b), flattened in loop order.
  std::vector<int> update_target_;
  /// off_[update_target_[u]].data() for every u: the Schur updates' target blocks, read ahead
  /// of their use (a software prefetch; the targets are scattered over the factor).
  std::vector<double*> update_data_;
  std::vector<int> analyzed_sizes_;
  std::vector<std::pair<int, int>> analyzed_edges_;  ///< normalized (min, max), sorted, unique
  std::vector<std::pair<int, int>> edge_scratch_;    ///< the edges of the current call, normalized
  mutable Eigen::VectorXd permuted_;  ///< solve_in_place workspace, in elimination order
  std::vector<int> permuted_offset_;  ///< offset of elimination position k in permuted_
  std::vector<double> inv_diag_;      ///< 1/L(j, j) of the 6 × 6 diagonal factors, in elimination order
  // analyze()'s work lists, kept so that a changed pattern allocates nothing once they are large
  // enough: the node graph (compressed columns) for AMD and the factor's rows and children.
  std::vector<int> scratch_Ap_, scratch_Ai_, scratch_next_;
  std::vector<std::vector<int>> scratch_rows_, scratch_children_;
};

}  // namespace coulomb::linalg
