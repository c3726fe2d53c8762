#include "coulomb/contact/contact_jacobian.h"

#include <algorithm>
#include <stdexcept>

#include "coulomb/multibody/frame_jacobian.h"

namespace coulomb::contact {

std::vector<TreeRange> tree_ranges(const multibody::Model& model) {
  std::vector<TreeRange> trees;
  tree_ranges(model, trees);
  return trees;
}

void tree_ranges(const multibody::Model& model, std::vector<TreeRange>& trees) {
  trees.clear();
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Body& body = model.body(b);
    if (body.tree == b) trees.push_back({b, body.joint.v_index, 0});
    if (trees.empty() || trees.back().root != body.tree)
      throw std::logic_error("tree_ranges: the bodies of tree " + std::to_string(body.tree) +
                             " are not consecutive (use ModelBuilder::build)");
    trees.back().nv += body.joint.nv;
  }
}

Eigen::MatrixXd ContactJacobian::dense() const {
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(3 * num_contacts, nv);
  for (const Block& b : blocks) J.block(3 * b.contact, b.v_start, 3, b.J.cols()) += b.J;
  return J;
}

void ContactJacobian::multiply(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> y) const {
  y.setZero();
  for (const Block& b : blocks) y.segment<3>(3 * b.contact).noalias() += b.J * v.segment(b.v_start, b.J.cols());
}

void ContactJacobian::multiply_transpose(const Eigen::Ref<const Eigen::VectorXd>& y,
                                         Eigen::Ref<Eigen::VectorXd> x) const {
  x.setZero();
  for (const Block& b : blocks)
    x.segment(b.v_start, b.J.cols()).noalias() += b.J.transpose() * y.segment<3>(3 * b.contact);
}

void contact_jacobian(const multibody::Model& model, const multibody::Workspace& ws, const ContactSet& contacts,
                      ContactJacobian& J) {
  // Tree of each body and each tree's velocity range.
  thread_local std::vector<TreeRange> trees;
  tree_ranges(model, trees);
  auto range_of = [&](int tree_root) -> const TreeRange& {
    // Trees are sorted by root index; binary search.
    auto it = std::lower_bound(trees.begin(), trees.end(), tree_root,
                               [](const TreeRange& t, int root) { return t.root < root; });
    return *it;
  };
  J.num_contacts = contacts.size();
  J.nv = model.nv();
  size_t count = 0;
  for (int i = 0; i < contacts.size(); ++i) {
    const Contact& c = contacts.contacts[i];
    const int tree_a = c.body_a == 0 ? 0 : model.body(c.body_a).tree;
    const int tree_b = c.body_b == 0 ? 0 : model.body(c.body_b).tree;
    const math::Matrix3 Rt = c.R_WC.transpose();
    // One block per distinct tree, in increasing tree order; v_c = R_WCᵀ (v_B − v_A).
    int touched[2] = {std::min(tree_a, tree_b), std::max(tree_a, tree_b)};
    for (int t = 0; t < 2; ++t) {
      const int tree = touched[t];
      if (tree == 0 || (t == 1 && touched[0] == touched[1])) continue;
      const TreeRange& range = range_of(tree);
      if (J.blocks.size() <= count) J.blocks.emplace_back();
      ContactJacobian::Block& block = J.blocks[count++];
      block.contact = i;
      block.tree = tree;
      block.v_start = range.v_start;
      block.J.setZero(3, range.nv);
      if (tree_b == tree) multibody::accumulate_point_jacobian(model, ws, c.body_b, c.p_W, Rt, block.J, range.v_start);
      if (tree_a == tree)
        multibody::accumulate_point_jacobian(model, ws, c.body_a, c.p_W, -Rt, block.J, range.v_start);
    }
  }
  J.blocks.resize(count);
}

}  // namespace coulomb::contact
