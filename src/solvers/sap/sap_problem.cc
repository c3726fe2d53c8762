#include "coulomb/solvers/sap/sap_problem.h"

#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

SapProblem::SapProblem(double time_step, std::vector<Eigen::MatrixXd> A_blocks, Eigen::VectorXd v_star)
    : time_step_(time_step), A_(std::move(A_blocks)), v_star_(std::move(v_star)) {
  if (!(time_step > 0.0) || !std::isfinite(time_step))
    throw std::invalid_argument("SapProblem: time step must be > 0, got " + std::to_string(time_step));
  int start = 0;
  for (size_t t = 0; t < A_.size(); ++t) {
    if (A_[t].rows() != A_[t].cols() || A_[t].rows() == 0)
      throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not square and non-empty");
    if (!A_[t].allFinite()) throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not finite");
    tree_start_.push_back(start);
    start += static_cast<int>(A_[t].rows());
  }
  if (start != v_star_.size())
    throw std::invalid_argument("SapProblem: v* has " + std::to_string(v_star_.size()) + " entries, A blocks sum to " +
                                std::to_string(start));
  if (!v_star_.allFinite()) throw std::invalid_argument("SapProblem: v* is not finite");
}

int SapProblem::add_constraint(std::unique_ptr<SapConstraint> c) {
  for (int k = 0; k < c->num_trees(); ++k) {
    const int t = c->tree(k);
    if (t < 0 || t >= num_trees())
      throw std::invalid_argument("SapProblem: constraint names tree " + std::to_string(t) + " of " +
                                  std::to_string(num_trees()));
    if (c->jacobian(k).cols() != tree_size(t))
      throw std::invalid_argument("SapProblem: constraint Jacobian block has " + std::to_string(c->jacobian(k).cols()) +
                                  " columns; tree " + std::to_string(t) + " has " + std::to_string(tree_size(t)));
  }
  row_start_.push_back(num_rows_);
  num_rows_ += c->num_rows();
  constraints_.push_back(std::move(c));
  return num_constraints() - 1;
}

void SapProblem::multiply_A(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y) const {
  for (int t = 0; t < num_trees(); ++t)
    y.segment(tree_start_[t], tree_size(t)).noalias() = A_[t] * x.segment(tree_start_[t], tree_size(t));
}

void SapProblem::multiply_J(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> vc) const {
  for (int i = 0; i < num_constraints(); ++i) {
    const SapConstraint& c = *constraints_[i];
    auto out = vc.segment(row_start_[i], c.num_rows());
    out.setZero();
    for (int k = 0; k < c.num_trees(); ++k)
      out.noalias() += c.jacobian(k) * v.segment(tree_start_[c.tree(k)], c.jacobian(k).cols());
  }
}

void SapProblem::multiply_J_transpose(const Eigen::Ref<const Eigen::VectorXd>& gamma,
                                      Eigen::Ref<Eigen::VectorXd> x) const {
  x.setZero();
  for (int i = 0; i < num_constraints(); ++i) {
    const SapConstraint& c = *constraints_[i];
    const auto g = gamma.segment(row_start_[i], c.num_rows());
    for (int k = 0; k < c.num_trees(); ++k)
      x.segment(tree_start_[c.tree(k)], c.jacobian(k).cols()).noalias() += c.jacobian(k).transpose() * g;
  }
}

Eigen::MatrixXd SapProblem::dense_J() const {
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(num_rows_, nv());
  for (int i = 0; i < num_constraints(); ++i) {
    const SapConstraint& c = *constraints_[i];
    for (int k = 0; k < c.num_trees(); ++k)
      J.block(row_start_[i], tree_start_[c.tree(k)], c.num_rows(), c.jacobian(k).cols()) = c.jacobian(k);
  }
  return J;
}

Eigen::MatrixXd SapProblem::dense_A() const {
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(nv(), nv());
  for (int t = 0; t < num_trees(); ++t) A.block(tree_start_[t], tree_start_[t], tree_size(t), tree_size(t)) = A_[t];
  return A;
}

}  // namespace coulomb::solvers::sap
