#include "coulomb/linalg/block_sparse_cholesky.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace coulomb::linalg {

void BlockSparseCholesky::analyze(const std::vector<int>& block_sizes, const std::vector<std::pair<int, int>>& edges) {
  const int T = static_cast<int>(block_sizes.size());
  sizes_ = block_sizes;
  offsets_.assign(T, 0);
  n_ = 0;
  for (int t = 0; t < T; ++t) {
    if (block_sizes[t] <= 0) throw std::invalid_argument("BlockSparseCholesky: block " + std::to_string(t) + " has size <= 0");
    offsets_[t] = n_;
    n_ += block_sizes[t];
  }
  std::vector<std::set<int>> adjacency(T);
  for (const auto& [s, t] : edges) {
    if (s < 0 || t < 0 || s >= T || t >= T || s == t)
      throw std::invalid_argument("BlockSparseCholesky: bad edge (" + std::to_string(s) + ", " + std::to_string(t) + ")");
    adjacency[s].insert(t);
    adjacency[t].insert(s);
  }
  // Greedy minimum degree (ties by node index, so the ordering is deterministic); eliminating a
  // node connects all its remaining neighbours (fill-in).
  order_.clear();
  position_.assign(T, -1);
  std::vector<std::set<int>> graph = adjacency;
  std::vector<std::vector<int>> later_neighbours(T);  // by node, the neighbours at elimination time
  std::set<std::pair<int, int>> queue;                // (degree, node)
  for (int t = 0; t < T; ++t) queue.insert({static_cast<int>(graph[t].size()), t});
  while (!queue.empty()) {
    const int t = queue.begin()->second;
    queue.erase(queue.begin());
    position_[t] = static_cast<int>(order_.size());
    order_.push_back(t);
    const std::vector<int> nbrs(graph[t].begin(), graph[t].end());
    later_neighbours[t] = nbrs;
    for (int a : nbrs) {
      queue.erase({static_cast<int>(graph[a].size()), a});
      graph[a].erase(t);
      for (int b : nbrs)
        if (b != a) graph[a].insert(b);
      queue.insert({static_cast<int>(graph[a].size()), a});
    }
  }
  // Symbolic factorization: the later neighbours of each eliminated node are the rows of its
  // column of blocks in L.
  diag_.assign(T, Eigen::MatrixXd());
  off_.clear();
  lower_.assign(T, {});
  for (int k = 0; k < T; ++k) {
    const int t = order_[k];
    diag_[k] = Eigen::MatrixXd::Zero(sizes_[t], sizes_[t]);
    for (int i : later_neighbours[t]) {
      lower_[k].push_back({position_[i], static_cast<int>(off_.size())});
      off_.push_back(Eigen::MatrixXd::Zero(sizes_[i], sizes_[t]));
    }
    std::sort(lower_[k].begin(), lower_[k].end(), [](const Lower& a, const Lower& b) { return a.position < b.position; });
  }
  llt_.assign(T, Eigen::LLT<Eigen::MatrixXd>());
}

int BlockSparseCholesky::block_index(int pos_row, int pos_col) const {
  const auto& col = lower_[pos_col];
  auto it = std::lower_bound(col.begin(), col.end(), pos_row, [](const Lower& l, int p) { return l.position < p; });
  return it != col.end() && it->position == pos_row ? it->block : -1;
}

void BlockSparseCholesky::set_zero() {
  for (auto& D : diag_) D.setZero();
  for (auto& B : off_) B.setZero();
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

bool BlockSparseCholesky::factorize() {
  const int T = num_blocks();
  for (int k = 0; k < T; ++k) {
    // Lower triangle of the diagonal block is the reference; symmetrize for Eigen's LLT.
    Eigen::MatrixXd& D = diag_[k];
    D.triangularView<Eigen::StrictlyUpper>() = D.transpose().triangularView<Eigen::StrictlyUpper>();
    llt_[k].compute(D);
    if (llt_[k].info() != Eigen::Success) return false;
    const auto L = llt_[k].matrixL();
    // L_ik = B_ik L_kk^{-T}.
    for (const Lower& l : lower_[k]) {
      Eigen::MatrixXd& B = off_[l.block];
      // B ← B L^{-T}: solve X Lᵀ = B, i.e. L Xᵀ = Bᵀ.
      Eigen::MatrixXd Bt = B.transpose();
      L.solveInPlace(Bt);
      B = Bt.transpose();
    }
    // Schur complement updates of the later blocks: D_i −= L_ik L_ikᵀ, B_ij −= L_ik L_jkᵀ.
    for (size_t a = 0; a < lower_[k].size(); ++a) {
      const Lower& li = lower_[k][a];
      const Eigen::MatrixXd& Li = off_[li.block];
      diag_[li.position].noalias() -= Li * Li.transpose();
      for (size_t b = 0; b < a; ++b) {
        const Lower& lj = lower_[k][b];  // position lj < li
        const int target = block_index(li.position, lj.position);
        off_[target].noalias() -= Li * off_[lj.block].transpose();
      }
    }
  }
  return true;
}

void BlockSparseCholesky::solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
  const int T = num_blocks();
  // Permute into elimination order.
  std::vector<Eigen::VectorXd> y(T);
  for (int k = 0; k < T; ++k) y[k] = x.segment(offsets_[order_[k]], sizes_[order_[k]]);
  // Forward: L y = b.
  for (int k = 0; k < T; ++k) {
    llt_[k].matrixL().solveInPlace(y[k]);
    for (const Lower& l : lower_[k]) y[l.position].noalias() -= off_[l.block] * y[k];
  }
  // Backward: Lᵀ x = y.
  for (int k = T - 1; k >= 0; --k) {
    for (const Lower& l : lower_[k]) y[k].noalias() -= off_[l.block].transpose() * y[l.position];
    llt_[k].matrixU().solveInPlace(y[k]);
  }
  for (int k = 0; k < T; ++k) x.segment(offsets_[order_[k]], sizes_[order_[k]]) = y[k];
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
