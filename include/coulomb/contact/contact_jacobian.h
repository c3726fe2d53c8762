// The contact Jacobian J (3 n_c × n_v): v_c = J v stacks, for every contact, the velocity of
// B relative to A at p_i in the contact frame C_i, [t1, t2, n] (Castro et al. §II-A, Eq. 1).
#pragma once

#include <vector>

#include <Eigen/Core>

#include "coulomb/contact/contact_set.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::contact {

/// Block-sparse storage: for each contact i and each tree t touched by the contact (one or
/// two trees; the world is not a tree), a dense 3 × n_v(t) block over that tree's velocity
/// range. Blocks of contact i are listed in increasing tree order.
struct ContactJacobian {
  struct Block {
    int contact = 0;      ///< contact index i (rows 3i .. 3i+2)
    int tree = 0;         ///< root body index of the tree
    int v_start = 0;      ///< first velocity index of the tree
    Eigen::MatrixXd J;    ///< 3 × n_v(tree)
  };
  int num_contacts = 0;
  int nv = 0;
  std::vector<Block> blocks;

  /// Dense 3 n_c × n_v matrix (for tests and small problems).
  Eigen::MatrixXd dense() const;
  /// y = J v (3 n_c).
  void multiply(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> y) const;
  /// x = Jᵀ y (n_v).
  void multiply_transpose(const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::VectorXd> x) const;
};

/// Velocity range of each tree: trees[k] = {root body, v_start, nv}, in increasing body order.
struct TreeRange {
  int root = 0, v_start = 0, nv = 0;
};
std::vector<TreeRange> tree_ranges(const multibody::Model& model);
/// The same into `trees` (cleared first; no allocation once its capacity suffices).
void tree_ranges(const multibody::Model& model, std::vector<TreeRange>& trees);

/// Computes J at the configuration in ws (forward_kinematics(q) must have been called):
/// J_i = R_WCᵀ (J_B(p_i) − J_A(p_i)), with J_X(p) the world-aligned translational Jacobian of
/// the point of body X that coincides with p.
void contact_jacobian(const multibody::Model& model, const multibody::Workspace& ws, const ContactSet& contacts,
                      ContactJacobian& J);

}  // namespace coulomb::contact
