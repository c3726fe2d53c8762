#include "coulomb/linalg/block_sparse_cholesky.h"

#include "linalg/block6_kernels.h"
#include "linalg/block_kernels.h"
#include "linalg/dense_kernels.h"

#include <Eigen/Cholesky>

#include <amd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

namespace coulomb::linalg {

void BlockSparseCholesky::analyze(const std::vector<int>& block_sizes, const std::vector<std::pair<int, int>>& edges) {
  const int T = static_cast<int>(block_sizes.size());
  // Same pattern as last time: keep everything. Edges are compared as a normalized set.
  edge_scratch_.clear();
  for (const auto& [s, t] : edges) edge_scratch_.emplace_back(std::min(s, t), std::max(s, t));
  std::sort(edge_scratch_.begin(), edge_scratch_.end());
  edge_scratch_.erase(std::unique(edge_scratch_.begin(), edge_scratch_.end()), edge_scratch_.end());
  if (!sizes_.empty() && block_sizes == analyzed_sizes_ && edge_scratch_ == analyzed_edges_) return;
  sizes_ = block_sizes;
  offsets_.assign(T, 0);
  n_ = 0;
  for (int t = 0; t < T; ++t) {
    if (block_sizes[t] <= 0) throw std::invalid_argument("BlockSparseCholesky: block " + std::to_string(t) + " has size <= 0");
    offsets_[t] = n_;
    n_ += block_sizes[t];
  }
  for (const auto& [s, t] : edges)
    if (s < 0 || t < 0 || s >= T || t >= T || s == t)
      throw std::invalid_argument("BlockSparseCholesky: bad edge (" + std::to_string(s) + ", " + std::to_string(t) + ")");
  // The node graph in compressed columns (both directions), for AMD.
  std::vector<int>& Ap = scratch_Ap_;
  std::vector<int>& Ai = scratch_Ai_;
  Ap.assign(T + 1, 0);
  Ai.resize(2 * edge_scratch_.size());
  for (const auto& [s, t] : edge_scratch_) ++Ap[s + 1], ++Ap[t + 1];
  for (int t = 0; t < T; ++t) Ap[t + 1] += Ap[t];
  {
    std::vector<int>& next = scratch_next_;
    next.assign(Ap.begin(), Ap.end() - 1);
    for (const auto& [s, t] : edge_scratch_) Ai[next[s]++] = t, Ai[next[t]++] = s;
  }
  // Fill-reducing order: SuiteSparse's approximate minimum degree (Amestoy, Davis and Duff) on
  // the node graph. On seven contact graphs of a 1,000-body pile (every 10th analysis of 100
  // steps) its Schur updates took from 4 % more to 23 % fewer multiply-adds than the exact
  // greedy minimum degree used before (median 14 % fewer), and it runs in time near-linear in
  // the edges instead of quadratic in the degrees. AMD is deterministic: the same pattern gives
  // the same order.
  order_.resize(T);
  for (int t = 0; t < T; ++t) order_[t] = t;  // no edges: no fill in any order (AMD takes no empty graph)
  if (!edge_scratch_.empty()) {
    double control[AMD_CONTROL], info[AMD_INFO];
    amd_defaults(control);
    const int status = amd_order(T, Ap.data(), Ai.data(), order_.data(), control, info);
    if (status != AMD_OK && status != AMD_OK_BUT_JUMBLED)
      throw std::runtime_error("BlockSparseCholesky: AMD ordering failed (status " + std::to_string(status) + ", " +
                               std::to_string(T) + " nodes, " + std::to_string(edge_scratch_.size()) + " edges)");
  }
  position_.assign(T, -1);
  for (int k = 0; k < T; ++k) position_[order_[k]] = k;
  // Symbolic factorization by the elimination tree: the rows (elimination positions) of column
  // k of L are node order_[k]'s later neighbours and its children's rows other than k; the
  // parent of k is its first row.
  // The scratch lists and the blocks below keep their storage from call to call: a pile's
  // contact graph changes at most steps, and the pattern is analyzed again each time.
  std::vector<std::vector<int>>& rows = scratch_rows_;
  std::vector<std::vector<int>>& children = scratch_children_;
  if (rows.size() < static_cast<size_t>(T)) rows.resize(T), children.resize(T);
  for (int k = 0; k < T; ++k) rows[k].clear(), children[k].clear();
  for (int k = 0; k < T; ++k) {
    const int t = order_[k];
    std::vector<int>& r = rows[k];
    for (int e = Ap[t]; e < Ap[t + 1]; ++e)
      if (position_[Ai[e]] > k) r.push_back(position_[Ai[e]]);
    for (int c : children[k])
      for (int i : rows[c])
        if (i != k) r.push_back(i);
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    if (!r.empty()) children[r.front()].push_back(k);
  }
  // Blocks are resized in place: no allocation when a block keeps its number of entries (the
  // 6 × 6 blocks of free bodies), only for the blocks a larger factor adds.
  diag_.resize(T);
  lower_.resize(T);
  size_t num_off = 0;
  for (int k = 0; k < T; ++k) num_off += rows[k].size();
  off_.resize(num_off);
  int next_block = 0;
  for (int k = 0; k < T; ++k) {
    const int t = order_[k];
    diag_[k].setZero(sizes_[t], sizes_[t]);
    lower_[k].clear();
    for (int i : rows[k]) {  // sorted by position
      lower_[k].push_back({i, next_block});
      off_[static_cast<size_t>(next_block++)].setZero(sizes_[order_[i]], sizes_[t]);
    }
  }
  update_target_.clear();
  for (int k = 0; k < T; ++k)
    for (size_t a = 0; a < lower_[k].size(); ++a)
      for (size_t b = 0; b < a; ++b) update_target_.push_back(block_index(lower_[k][a].position, lower_[k][b].position));
  update_data_.resize(update_target_.size());
  for (size_t u = 0; u < update_target_.size(); ++u) update_data_[u] = off_[update_target_[u]].data();
  permuted_.resize(n_);
  inv_diag_.assign(n_, 0.0);
  permuted_offset_.assign(T, 0);
  for (int k = 1; k < T; ++k) permuted_offset_[k] = permuted_offset_[k - 1] + sizes_[order_[k - 1]];
  analyzed_sizes_ = block_sizes;
  analyzed_edges_.swap(edge_scratch_);
}

int BlockSparseCholesky::block_index(int pos_row, int pos_col) const {
  const auto& col = lower_[pos_col];
  auto it = std::lower_bound(col.begin(), col.end(), pos_row, [](const Lower& l, int p) { return l.position < p; });
  return it != col.end() && it->position == pos_row ? it->block : -1;
}

bool BlockSparseCholesky::has_block(int s, int t) const {
  if (s == t) return true;
  const int ps = position_[s], pt = position_[t];
  return (ps > pt ? block_index(ps, pt) : block_index(pt, ps)) >= 0;
}

void BlockSparseCholesky::set_zero() {
  for (auto& D : diag_) D.setZero();
  for (auto& B : off_) B.setZero();
}

void BlockSparseCholesky::reset(const std::vector<const double*>& diagonal_blocks) {
  reset_impl(diagonal_blocks, nullptr);
}

void BlockSparseCholesky::reset(const std::vector<const double*>& diagonal_blocks, const std::vector<char>& skip) {
  if (skip.size() != sizes_.size())
    throw std::invalid_argument("BlockSparseCholesky::reset: " + std::to_string(skip.size()) + " skip flags for " +
                                std::to_string(sizes_.size()) + " nodes");
  reset_impl(diagonal_blocks, skip.data());
}

void BlockSparseCholesky::reset_impl(const std::vector<const double*>& diagonal_blocks, const char* skip) {
  if (diagonal_blocks.size() != sizes_.size())
    throw std::invalid_argument("BlockSparseCholesky::reset: " + std::to_string(diagonal_blocks.size()) +
                                " diagonal blocks for " + std::to_string(sizes_.size()) + " nodes");
  for (size_t t = 0; t < sizes_.size(); ++t) {
    if (skip != nullptr && skip[t]) continue;
    const double* D = diagonal_blocks[t];
    if (D == nullptr)
      throw std::invalid_argument("BlockSparseCholesky::reset: diagonal block " + std::to_string(t) + " is null");
    Eigen::MatrixXd& target = diag_[position_[t]];
    if (target.size() == 36)  // a free body: fixed-size copy, no library call
      Eigen::Map<Eigen::Matrix<double, 36, 1>>(target.data()) = Eigen::Map<const Eigen::Matrix<double, 36, 1>>(D);
    else
      std::memcpy(target.data(), D, sizeof(double) * static_cast<size_t>(target.size()));
  }
  for (Eigen::MatrixXd& B : off_) {
    if (B.size() == 36)
      Eigen::Map<Eigen::Matrix<double, 36, 1>>(B.data()).setZero();
    else
      std::fill_n(B.data(), B.size(), 0.0);
  }
}

Eigen::Ref<Eigen::MatrixXd> BlockSparseCholesky::diagonal_block(int t) { return diag_[position_[t]]; }

Eigen::Ref<Eigen::MatrixXd> BlockSparseCholesky::off_diagonal_block(int s, int t) {
  const int ps = position_[s], pt = position_[t];
  const int b = ps > pt ? block_index(ps, pt) : block_index(pt, ps);
  if (b < 0)
    throw std::out_of_range("BlockSparseCholesky: (" + std::to_string(s) + ", " + std::to_string(t) + ") is not an edge");
  return off_[b];
}

void BlockSparseCholesky::add_block(int s, int t, const Eigen::Ref<const Eigen::MatrixXd>& M) {
  if (s == t) {
    diag_[position_[s]] += M;
    return;
  }
  const int ps = position_[s], pt = position_[t];
  if (ps > pt) {
    const int b = block_index(ps, pt);
    if (b < 0) throw std::out_of_range("BlockSparseCholesky: not an edge");
    off_[b] += M;  // rows of s (later), columns of t
  } else {
    const int b = block_index(pt, ps);
    if (b < 0) throw std::out_of_range("BlockSparseCholesky: not an edge");
    off_[b] += M.transpose();
  }
}

BlockSparseCholesky::BlockStorage BlockSparseCholesky::storage(int s, int t) {
  BlockStorage out;
  if (s == t) {
    Eigen::MatrixXd& D = diag_[position_[s]];
    out.data = D.data();
    out.rows = out.cols = static_cast<int>(D.rows());
    return out;
  }
  const int ps = position_[s], pt = position_[t];
  const int b = ps > pt ? block_index(ps, pt) : block_index(pt, ps);
  if (b < 0)
    throw std::out_of_range("BlockSparseCholesky: (" + std::to_string(s) + ", " + std::to_string(t) + ") is not an edge");
  Eigen::MatrixXd& B = off_[b];
  out.data = B.data();
  out.rows = static_cast<int>(B.rows());
  out.cols = static_cast<int>(B.cols());
  out.transposed = ps < pt;  // stored with the rows of the later-eliminated node
  return out;
}

namespace {

using internal::kPlainKernelMaxSize;
using internal::back_substitution;
using internal::cholesky_lower;
using internal::forward_substitution;

// Small dense kernels on column-major blocks of run-time size (robots' trees); the 6 × 6 blocks
// of free bodies take block6_kernels.h instead.

// B (m × n, leading dimension m) ← B L^{-T} for the n × n lower-triangular L (leading
// dimension n): column j of X is (B(:, j) − Σ_{k<j} X(:, k) L(j, k)) / L(j, j).
[[gnu::always_inline]] inline void solve_right_lower_transpose(const double* L, int n, double* B, int m) {
  for (int j = 0; j < n; ++j) {
    double* xj = B + static_cast<ptrdiff_t>(j) * m;
    for (int k = 0; k < j; ++k) {
      const double l = L[static_cast<ptrdiff_t>(k) * n + j];
      const double* xk = B + static_cast<ptrdiff_t>(k) * m;
      for (int i = 0; i < m; ++i) xj[i] -= l * xk[i];
    }
    const double inv = 1.0 / L[static_cast<ptrdiff_t>(j) * n + j];
    for (int i = 0; i < m; ++i) xj[i] *= inv;
  }
}

// Lower triangle of D (m × m) −= X Xᵀ, X m × p.
[[gnu::always_inline]] inline void subtract_syrk_lower(const double* X, int m, int p, double* D) {
  for (int k = 0; k < p; ++k) {
    const double* xk = X + static_cast<ptrdiff_t>(k) * m;
    for (int b = 0; b < m; ++b) {
      const double xb = xk[b];
      double* db = D + static_cast<ptrdiff_t>(b) * m;
      for (int a = b; a < m; ++a) db[a] -= xk[a] * xb;
    }
  }
}

// C (m × q) −= X Yᵀ, X m × p, Y q × p.
[[gnu::always_inline]] inline void subtract_gemm_nt(const double* X, int m, const double* Y, int q, int p, double* C) {
  for (int k = 0; k < p; ++k) {
    const double* xk = X + static_cast<ptrdiff_t>(k) * m;
    const double* yk = Y + static_cast<ptrdiff_t>(k) * q;
    for (int j = 0; j < q; ++j) {
      const double y = yk[j];
      double* cj = C + static_cast<ptrdiff_t>(j) * m;
      for (int i = 0; i < m; ++i) cj[i] -= xk[i] * y;
    }
  }
}

// y_i −= B y_k (B m × p) and its transpose y_k −= Bᵀ y_i.
[[gnu::always_inline]] inline void subtract_gemv(const double* B, int m, int p, const double* x, double* y) {
  for (int k = 0; k < p; ++k) {
    const double* bk = B + static_cast<ptrdiff_t>(k) * m;
    const double xk = x[k];
    for (int i = 0; i < m; ++i) y[i] -= bk[i] * xk;
  }
}
[[gnu::always_inline]] inline void subtract_gemv_transpose(const double* B, int m, int p, const double* x, double* y) {
  for (int k = 0; k < p; ++k) {
    const double* bk = B + static_cast<ptrdiff_t>(k) * m;
    double acc = 0.0;
    for (int i = 0; i < m; ++i) acc += bk[i] * x[i];
    y[k] -= acc;
  }
}

}  // namespace

// The numeric factorization and the solves are compiled twice: for the baseline x86-64
// instruction set and, on x86-64 with GCC or Clang, for AVX2 + FMA (-mavx2 -mfma). The bodies
// and the kernels they call are always_inline, so each copy gets its own instruction set;
// Eigen's out-of-line code (the paths for blocks above 32) is the baseline one in both. The
// copy is chosen by the processor (block_kernels.h, cpu_dispatch.cc); on the same machine a run
// is bit-identical.

class BlockSparseCholeskyNumeric {
 public:
  using Lower = BlockSparseCholesky::Lower;

  // W: the vector width of the run-time-size dense kernels (linalg/dense_kernels.h).
  // skip: nullptr, or one flag per node (by node index): nodes whose flag is set are left out.
  static bool factorize_baseline(BlockSparseCholesky& c, const char* skip) { return factorize<2>(c, skip); }
  COULOMB_TARGET_AVX2 static bool factorize_avx2(BlockSparseCholesky& c, const char* skip) {
    return factorize<4>(c, skip);
  }
  static void solve_baseline(const BlockSparseCholesky& c, double* x, const char* skip) { solve<2>(c, x, skip); }
  COULOMB_TARGET_AVX2 static void solve_avx2(const BlockSparseCholesky& c, double* x, const char* skip) {
    solve<4>(c, x, skip);
  }

 private:
  static constexpr size_t kPrefetchAhead = 4;  // updates; each takes some 10–40 ns

  template <int W>
  [[gnu::always_inline]] static inline bool factorize(BlockSparseCholesky& c, const char* skip) {
    namespace b6 = internal::block6;
    const int T = c.num_blocks();
    size_t u = 0;
    const size_t num_updates = c.update_target_.size();
    for (int k = 0; k < T; ++k) {
      Eigen::MatrixXd& D = c.diag_[k];
      const int nk = static_cast<int>(D.rows());
      const std::vector<Lower>& col = c.lower_[k];
      if (skip != nullptr) {
        const char skipped = skip[c.order_[k]];
        for (const Lower& l : col)
          if (skip[c.order_[l.position]] != skipped) throw_skip_splits_a_component(c.order_[k], c.order_[l.position]);
        if (skipped) {  // its Schur updates reach only skipped nodes: pass over their targets
          u += col.size() * (col.size() - 1) / 2;
          continue;
        }
      }
      // Only the lower triangle is the matrix; the factor L_kk overwrites it.
      if (nk == 6) {
        if (!b6::cholesky_in_place(D.data(), c.inv_diag_.data() + c.permuted_offset_[k])) return false;
      } else if (nk <= kPlainKernelMaxSize) {
        if (!cholesky_lower<W>(D.data(), nk)) return false;
      } else {
        Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(D);
        if (llt.info() != Eigen::Success) return false;
      }
      // L_ik = B_ik L_kk^{-T}: solve X L_kkᵀ = B in place (L_kkᵀ is upper triangular).
      for (const Lower& l : col) {
        Eigen::MatrixXd& B = c.off_[l.block];
        const int ni = static_cast<int>(B.rows());
        if (nk == 6 && ni == 6) b6::solve_right_lower_transpose<W == 4>(D.data(), c.inv_diag_.data() + c.permuted_offset_[k], B.data());
        else if (nk <= kPlainKernelMaxSize) solve_right_lower_transpose(D.data(), nk, B.data(), ni);
        else D.transpose().triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(B);
      }
      // Schur complement updates of the later blocks: D_i −= L_ik L_ikᵀ (lower triangle),
      // B_ij −= L_ik L_jkᵀ. Register-blocked kernels for 6 × 6 blocks, plain loops for other
      // small blocks (Eigen's blocked kernels cost more than they save below ~32), Eigen above.
      for (size_t a = 0; a < col.size(); ++a) {
        const Lower& li = col[a];
        const Eigen::MatrixXd& Li = c.off_[li.block];
        const int ni = static_cast<int>(Li.rows());
        const bool small = ni <= kPlainKernelMaxSize && nk <= kPlainKernelMaxSize;
        double* Di = c.diag_[li.position].data();
        if (ni == 6 && nk == 6) b6::subtract_gemm_nt<W == 4>(Li.data(), Li.data(), Di);  // both triangles
        else if (small) subtract_syrk_lower(Li.data(), ni, nk, Di);
        else c.diag_[li.position].triangularView<Eigen::Lower>() -= Li * Li.transpose();
        for (size_t b = 0; b < a; ++b) {
          const Eigen::MatrixXd& Lj = c.off_[col[b].block];
          // The target of the update kPrefetchAhead later: its 6 × 6 block spans 5 cache lines.
          // Without this, the first load of each target stalled (perf: 14 % of the
          // factorization's samples on clutter_320 at rest, on one instruction).
          if (u + kPrefetchAhead < num_updates) {
            const char* next = reinterpret_cast<const char*>(c.update_data_[u + kPrefetchAhead]);
            for (int line = 0; line < 5; ++line) __builtin_prefetch(next + 64 * line, 1);
          }
          Eigen::MatrixXd& C = c.off_[c.update_target_[u++]];
          const int nj = static_cast<int>(Lj.rows());
          if (ni == 6 && nj == 6 && nk == 6) b6::subtract_gemm_nt<W == 4>(Li.data(), Lj.data(), C.data());
          else if (small && nj <= kPlainKernelMaxSize) subtract_gemm_nt(Li.data(), ni, Lj.data(), nj, nk, C.data());
          else C.noalias() -= Li * Lj.transpose();
        }
      }
    }
    return true;
  }

  template <int W>
  [[gnu::always_inline]] static inline void solve(const BlockSparseCholesky& c, double* x, const char* skip) {
    namespace b6 = internal::block6;
    const int T = c.num_blocks();
    double* y = c.permuted_.data();
    for (int k = 0; k < T; ++k) {  // a skipped node's entries are neither read nor written
      const int t = c.order_[k];
      if (skip != nullptr && skip[t]) continue;
      std::copy_n(x + c.offsets_[t], c.sizes_[t], y + c.permuted_offset_[k]);
    }
    // Forward: L y = b.
    for (int k = 0; k < T; ++k) {
      if (skip != nullptr && skip[c.order_[k]]) continue;
      const int nk = c.sizes_[c.order_[k]];
      double* yk = y + c.permuted_offset_[k];
      if (nk == 6) b6::solve_lower(c.diag_[k].data(), c.inv_diag_.data() + c.permuted_offset_[k], yk);
      else forward_substitution<W>(c.diag_[k].data(), nk, yk);
      for (const Lower& l : c.lower_[k]) {
        const Eigen::MatrixXd& B = c.off_[l.block];
        double* yi = y + c.permuted_offset_[l.position];
        if (nk == 6 && B.rows() == 6) b6::subtract_gemv<W == 4>(B.data(), yk, yi);
        else subtract_gemv(B.data(), static_cast<int>(B.rows()), nk, yk, yi);
      }
    }
    // Backward: Lᵀ x = y.
    for (int k = T - 1; k >= 0; --k) {
      if (skip != nullptr && skip[c.order_[k]]) continue;
      const int nk = c.sizes_[c.order_[k]];
      double* yk = y + c.permuted_offset_[k];
      for (const Lower& l : c.lower_[k]) {
        const Eigen::MatrixXd& B = c.off_[l.block];
        const double* yi = y + c.permuted_offset_[l.position];
        if (nk == 6 && B.rows() == 6) b6::subtract_gemv_transpose(B.data(), yi, yk);
        else subtract_gemv_transpose(B.data(), static_cast<int>(B.rows()), nk, yi, yk);
      }
      if (nk == 6) b6::solve_lower_transpose(c.diag_[k].data(), c.inv_diag_.data() + c.permuted_offset_[k], yk);
      else back_substitution<W>(c.diag_[k].data(), nk, yk);
    }
    for (int k = 0; k < T; ++k) {
      const int t = c.order_[k];
      if (skip != nullptr && skip[t]) continue;  // x keeps b there
      std::copy_n(y + c.permuted_offset_[k], c.sizes_[t], x + c.offsets_[t]);
    }
  }

  [[noreturn, gnu::cold, gnu::noinline]] static void throw_skip_splits_a_component(int s, int t) {
    throw std::invalid_argument("BlockSparseCholesky: nodes " + std::to_string(s) + " and " + std::to_string(t) +
                                " share a factor block but only one of them is skipped");
  }
};

const char* BlockSparseCholesky::kernel_copy() { return internal::block_kernels_in_use(); }

bool BlockSparseCholesky::factorize() {
  return internal::use_avx2_kernels() ? BlockSparseCholeskyNumeric::factorize_avx2(*this, nullptr)
                                      : BlockSparseCholeskyNumeric::factorize_baseline(*this, nullptr);
}

void BlockSparseCholesky::solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
  if (x.size() != n_)
    throw std::invalid_argument("BlockSparseCholesky::solve_in_place: x has " + std::to_string(x.size()) +
                                " entries, the matrix " + std::to_string(n_));
  if (internal::use_avx2_kernels()) BlockSparseCholeskyNumeric::solve_avx2(*this, x.data(), nullptr);
  else BlockSparseCholeskyNumeric::solve_baseline(*this, x.data(), nullptr);
}

bool BlockSparseCholesky::factorize(const std::vector<char>& skip) {
  if (skip.size() != sizes_.size())
    throw std::invalid_argument("BlockSparseCholesky::factorize: " + std::to_string(skip.size()) + " skip flags for " +
                                std::to_string(sizes_.size()) + " nodes");
  return internal::use_avx2_kernels() ? BlockSparseCholeskyNumeric::factorize_avx2(*this, skip.data())
                                      : BlockSparseCholeskyNumeric::factorize_baseline(*this, skip.data());
}

void BlockSparseCholesky::solve_in_place(Eigen::Ref<Eigen::VectorXd> x, const std::vector<char>& skip) const {
  if (skip.size() != sizes_.size() || x.size() != n_)
    throw std::invalid_argument("BlockSparseCholesky::solve_in_place: " + std::to_string(skip.size()) +
                                " skip flags for " + std::to_string(sizes_.size()) + " nodes, x has " +
                                std::to_string(x.size()) + " entries for " + std::to_string(n_));
  if (internal::use_avx2_kernels()) BlockSparseCholeskyNumeric::solve_avx2(*this, x.data(), skip.data());
  else BlockSparseCholeskyNumeric::solve_baseline(*this, x.data(), skip.data());
}

Eigen::MatrixXd BlockSparseCholesky::dense() const {
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n_, n_);
  const int T = num_blocks();
  for (int k = 0; k < T; ++k) {
    const int t = order_[k];
    Eigen::MatrixXd D = diag_[k];
    D.triangularView<Eigen::StrictlyUpper>() = D.transpose().triangularView<Eigen::StrictlyUpper>();
    H.block(offsets_[t], offsets_[t], sizes_[t], sizes_[t]) = D;
    for (const Lower& l : lower_[k]) {
      const int s = order_[l.position];
      H.block(offsets_[s], offsets_[t], sizes_[s], sizes_[t]) = off_[l.block];
      H.block(offsets_[t], offsets_[s], sizes_[t], sizes_[s]) = off_[l.block].transpose();
    }
  }
  return H;
}

}  // namespace coulomb::linalg
