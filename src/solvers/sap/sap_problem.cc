#include "coulomb/solvers/sap/sap_problem.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "linalg/dense_kernels.h"

namespace coulomb::solvers::sap {

// Finiteness checks: linalg::internal::all_finite (Eigen's allFinite() on a 27 × 27 block cost
// 5 k instructions every step).
using linalg::internal::all_finite;

SapProblem::SapProblem(double time_step, std::vector<Eigen::MatrixXd> A_blocks, Eigen::VectorXd v_star)
    : time_step_(time_step), A_(std::move(A_blocks)), v_star_(std::move(v_star)) {
  check_and_index_trees();
}

void SapProblem::reset(double time_step, const std::vector<Eigen::MatrixXd>& A_blocks,
                       const Eigen::Ref<const Eigen::VectorXd>& v_star) {
  time_step_ = time_step;
  A_.resize(A_blocks.size());
  for (size_t t = 0; t < A_blocks.size(); ++t) A_[t] = A_blocks[t];  // same sizes: no allocation
  v_star_ = v_star;
  constraints_.clear();
  owned_.clear();
  row_start_.clear();
  num_rows_ = 0;
  has_A_factors_ = false;
  check_and_index_trees();
}

void SapProblem::set_A_factors(const std::vector<Eigen::MatrixXd>& L) {
  if (L.size() != A_.size())
    throw std::invalid_argument("SapProblem: " + std::to_string(L.size()) + " A factors for " +
                                std::to_string(A_.size()) + " A blocks");
  for (size_t t = 0; t < L.size(); ++t)
    if (L[t].rows() != A_[t].rows() || L[t].cols() != A_[t].cols())
      throw std::invalid_argument("SapProblem: A factor " + std::to_string(t) + " is " + std::to_string(L[t].rows()) +
                                  " x " + std::to_string(L[t].cols()) + ", its A block " +
                                  std::to_string(A_[t].rows()) + " x " + std::to_string(A_[t].cols()));
  A_factor_.resize(L.size());
  for (size_t t = 0; t < L.size(); ++t)  // same sizes: no allocation; larger trees' are not read
    if (L[t].rows() <= linalg::internal::kPlainKernelMaxSize) A_factor_[t] = L[t];
  has_A_factors_ = true;
}

void SapProblem::check_and_index_trees() {
  if (!(time_step_ > 0.0) || !std::isfinite(time_step_))
    throw std::invalid_argument("SapProblem: time step must be > 0, got " + std::to_string(time_step_));
  tree_start_.clear();
  int start = 0;
  for (size_t t = 0; t < A_.size(); ++t) {
    if (A_[t].rows() != A_[t].cols() || A_[t].rows() == 0)
      throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not square and non-empty");
    if (!all_finite(A_[t].data(), A_[t].size()))
      throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not finite");
    tree_start_.push_back(start);
    start += static_cast<int>(A_[t].rows());
  }
  if (start != v_star_.size())
    throw std::invalid_argument("SapProblem: v* has " + std::to_string(v_star_.size()) + " entries, A blocks sum to " +
                                std::to_string(start));
  if (!all_finite(v_star_.data(), v_star_.size())) throw std::invalid_argument("SapProblem: v* is not finite");
}

void SapProblem::check_constraint(const SapConstraint& c) const {
  for (int k = 0; k < c.num_trees(); ++k) {
    const int t = c.tree(k);
    if (t < 0 || t >= num_trees())
      throw std::invalid_argument("SapProblem: constraint names tree " + std::to_string(t) + " of " +
                                  std::to_string(num_trees()));
    if (c.jacobian(k).cols() != tree_size(t))
      throw std::invalid_argument("SapProblem: constraint Jacobian block has " + std::to_string(c.jacobian(k).cols()) +
                                  " columns; tree " + std::to_string(t) + " has " + std::to_string(tree_size(t)));
  }
}

int SapProblem::add_constraint(std::unique_ptr<SapConstraint> c) {
  check_constraint(*c);
  owned_.push_back(std::move(c));
  return add_constraint(owned_.back().get());
}

int SapProblem::add_constraint(SapConstraint* c) {
  check_constraint(*c);
  row_start_.push_back(num_rows_);
  num_rows_ += c->num_rows();
  constraints_.push_back(c);
  return num_constraints() - 1;
}

void SapProblem::multiply_A(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y) const {
  for (int t = 0; t < num_trees(); ++t) {
    const int s = tree_start_[t];
    const int n = tree_size(t);
    if (n == 6) {  // free bodies: fixed size
      y.segment<6>(s).noalias() = Eigen::Map<const Eigen::Matrix<double, 6, 6>>(A_[t].data()) * x.segment<6>(s);
    } else if (n < 8) {  // a small tree: columns of A, without the dispatch of Eigen's dynamic product
      const double* A = A_[t].data();
      double* out = y.data() + s;
      for (int i = 0; i < n; ++i) out[i] = 0.0;
      for (int j = 0; j < n; ++j) {
        const double xj = x[s + j];
        const double* col = A + static_cast<ptrdiff_t>(j) * n;
        for (int i = 0; i < n; ++i) out[i] += col[i] * xj;
      }
    } else {  // a robot's tree: the dispatched dense kernel (AVX2 + FMA where the processor has it)
      linalg::internal::dense_multiply(A_[t].data(), n, n, n, x.data() + s, y.data() + s);
    }
  }
}

void SapProblem::multiply_J(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> vc) const {
  for (int i = 0; i < num_constraints(); ++i) {
    const SapConstraint& c = *constraints_[i];
    if (c.num_rows() == 3) {  // contacts: fixed-size rows
      Eigen::Vector3d out = Eigen::Vector3d::Zero();
      for (int k = 0; k < c.num_trees(); ++k) {
        const Eigen::MatrixXd& J = c.jacobian(k);
        if (J.cols() == 6)  // a free body
          out.noalias() += Eigen::Map<const Eigen::Matrix<double, 3, 6>>(J.data()) * v.segment<6>(tree_start_[c.tree(k)]);
        else
          out.noalias() += Eigen::Map<const Eigen::Matrix<double, 3, Eigen::Dynamic>>(J.data(), 3, J.cols()) *
                           v.segment(tree_start_[c.tree(k)], J.cols());
      }
      vc.segment<3>(row_start_[i]) = out;
      continue;
    }
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
    if (c.num_rows() == 3) {
      const Eigen::Vector3d g = gamma.segment<3>(row_start_[i]);
      for (int k = 0; k < c.num_trees(); ++k) {
        const Eigen::MatrixXd& J = c.jacobian(k);
        if (J.cols() == 6)
          x.segment<6>(tree_start_[c.tree(k)]).noalias() +=
              Eigen::Map<const Eigen::Matrix<double, 3, 6>>(J.data()).transpose() * g;
        else
          x.segment(tree_start_[c.tree(k)], J.cols()).noalias() +=
              Eigen::Map<const Eigen::Matrix<double, 3, Eigen::Dynamic>>(J.data(), 3, J.cols()).transpose() * g;
      }
      continue;
    }
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
