// The joint-space mass matrix M(q) stored per kinematic tree. Bodies of different trees share no
// joint, so M is block-diagonal across trees (Featherstone 2008, §6.2: M_ij = 0 unless i and j
// are on one root path): the blocks are all of M, in Σ_t n_v(t)² numbers instead of n_v². A
// pile of 10,000 free bodies (n_v = 60,000) needs 10,000 × 36 doubles = 2.9 MB here against
// 8 n_v² bytes = 29 GB for the dense M (issue 18). Filled by crba_trees (crba.h); the simulator's free motion, the Delassus
// estimate and the SAP Newton matrix all work per tree.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "coulomb/multibody/model.h"

namespace coulomb::multibody {

class TreeMassMatrix {
 public:
  /// One kinematic tree hanging from the world: bodies [first_body, end_body) (first_body is the
  /// root; model.h keeps a tree's bodies consecutive) and velocities [v_start, v_start + nv).
  struct Tree {
    int first_body = 0, end_body = 0;
    int v_start = 0, nv = 0;
  };

  TreeMassMatrix() = default;
  /// Trees of `model` in body order, each block n_v(t) × n_v(t) zeroed. Throws
  /// std::invalid_argument if a tree's bodies are not consecutive or its velocities not
  /// contiguous (a Model not made by ModelBuilder::build).
  explicit TreeMassMatrix(const Model& model);

  int num_trees() const { return static_cast<int>(trees_.size()); }
  /// Total number of velocities n_v (sum of the trees' n_v).
  int nv() const { return nv_; }
  const std::vector<Tree>& trees() const { return trees_; }
  const Tree& tree(int t) const { return trees_[t]; }
  /// M of tree t: n_v(t) × n_v(t), symmetric (both triangles), rows and columns the tree's
  /// velocities in order [kg, kg·m, kg·m² by coordinate type].
  const Eigen::MatrixXd& block(int t) const { return blocks_[t]; }
  Eigen::MatrixXd& mutable_block(int t) { return blocks_[t]; }
  const std::vector<Eigen::MatrixXd>& blocks() const { return blocks_; }

  /// y = M x, x and y n_v (y resized). No allocation when y has n_v entries.
  void multiply(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::VectorXd& y) const;
  /// The dense n_v × n_v M, zero between trees (for tests and small models: allocates n_v²).
  Eigen::MatrixXd dense() const;

 private:
  int nv_ = 0;
  std::vector<Tree> trees_;
  std::vector<Eigen::MatrixXd> blocks_;
};

}  // namespace coulomb::multibody
