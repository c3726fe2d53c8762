#include "coulomb/multibody/tree_mass_matrix.h"

#include <stdexcept>
#include <string>

namespace coulomb::multibody {

TreeMassMatrix::TreeMassMatrix(const Model& model) : nv_(model.nv()) {
  const int n = model.num_bodies();
  for (int b = 1; b < n;) {
    const Body& root = model.body(b);
    if (root.tree != b)
      throw std::invalid_argument("TreeMassMatrix: body " + std::to_string(b) + " ('" + root.name +
                                  "') starts a run of bodies but its tree is " + std::to_string(root.tree) +
                                  " (the bodies of a tree must be consecutive: use ModelBuilder::build)");
    Tree t;
    t.first_body = b;
    t.v_start = root.joint.v_index;
    for (; b < n && model.body(b).tree == t.first_body; ++b) {
      const Joint& j = model.body(b).joint;
      if (j.nv > 0 && j.v_index != t.v_start + t.nv)
        throw std::invalid_argument("TreeMassMatrix: body " + std::to_string(b) + " ('" + model.body(b).name +
                                    "') has velocity index " + std::to_string(j.v_index) + ", expected " +
                                    std::to_string(t.v_start + t.nv) +
                                    " (a tree's velocities must be contiguous: use ModelBuilder::build)");
      t.nv += j.nv;
    }
    t.end_body = b;
    trees_.push_back(t);
    blocks_.push_back(Eigen::MatrixXd::Zero(t.nv, t.nv));
  }
}

void TreeMassMatrix::multiply(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::VectorXd& y) const {
  if (x.size() != nv_)
    throw std::invalid_argument("TreeMassMatrix::multiply: x has " + std::to_string(x.size()) + " entries, expected n_v = " +
                                std::to_string(nv_));
  y.resize(nv_);
  for (size_t t = 0; t < trees_.size(); ++t)
    y.segment(trees_[t].v_start, trees_[t].nv).noalias() = blocks_[t] * x.segment(trees_[t].v_start, trees_[t].nv);
}

Eigen::MatrixXd TreeMassMatrix::dense() const {
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(nv_, nv_);
  for (size_t t = 0; t < trees_.size(); ++t) M.block(trees_[t].v_start, trees_[t].v_start, trees_[t].nv, trees_[t].nv) = blocks_[t];
  return M;
}

}  // namespace coulomb::multibody
