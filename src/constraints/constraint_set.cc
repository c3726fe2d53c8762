#include "coulomb/constraints/constraint_set.h"

#include <algorithm>
#include <cmath>

namespace coulomb::constraints {

void add_contacts(const contact::ContactSet& contacts, const contact::ContactJacobian& J,
                  const std::vector<int>& tree_of_root, const Eigen::VectorXd& v0, ConstraintSet& set) {
  // The Jacobian blocks of contact i come consecutively, in tree order.
  for (size_t k = 0; k < J.blocks.size();) {
    const contact::ContactJacobian::Block& b0 = J.blocks[k];
    const bool two_trees = k + 1 < J.blocks.size() && J.blocks[k + 1].contact == b0.contact;
    ContactConstraint& c = set.contacts.add();
    c.contact = b0.contact;
    c.num_blocks = two_trees ? 2 : 1;
    c.vn0 = 0.0;
    for (int b = 0; b < c.num_blocks; ++b) {
      const contact::ContactJacobian::Block& src = J.blocks[k + b];
      TreeBlock& dst = c.blocks[b];
      dst.tree = tree_of_root[src.tree];
      dst.v_start = src.v_start;
      dst.J = src.J;
      c.vn0 += src.J.row(2).dot(v0.segment(src.v_start, src.J.cols()));
    }
    const contact::Contact& contact = contacts.contacts[b0.contact];
    c.phi0 = contact.phi;
    c.material = contact.material;
    k += c.num_blocks;
  }
}

bool BilateralConstraint::inert_row(int r) const {
  double max_norm2 = 0.0, row_norm2 = 0.0;
  for (int b = 0; b < num_blocks; ++b) {
    for (int s = 0; s < num_rows; ++s) {
      const double n2 = blocks[b].J.row(s).squaredNorm();
      max_norm2 = std::max(max_norm2, n2);
    }
    row_norm2 += blocks[b].J.row(r).squaredNorm();
  }
  const double tol = 1e-10 * std::max(1.0, std::sqrt(max_norm2));
  return row_norm2 <= tol * tol;
}

}  // namespace coulomb::constraints
