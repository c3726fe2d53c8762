#include "coulomb/solvers/sap/sap_constraint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "linalg/dense_kernels.h"

namespace coulomb::solvers::sap {

namespace {

// to = from, column by column (a contact's 3 × 6 block every step: Eigen's generic assignment
// from a strided Ref cost some 300 instructions for 18 numbers).
void copy_block(const Eigen::Ref<const Eigen::MatrixXd>& from, Eigen::MatrixXd& to) {
  const Eigen::Index rows = from.rows(), cols = from.cols();
  to.resize(rows, cols);  // no allocation when the size is unchanged
  const double* src = from.data();
  double* dst = to.data();
  if (from.outerStride() == rows) {  // contiguous: one copy (std::copy_n per 3-row column was a memmove call each)
    if (rows * cols > 0) std::memcpy(dst, src, sizeof(double) * static_cast<size_t>(rows * cols));
    return;
  }
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) dst[j * rows + i] = src[j * from.outerStride() + i];
}

// Whether every entry is finite (linalg::internal::all_finite; Eigen's allFinite() goes through
// its generic expression machinery on every contact of every step).
bool all_finite(const Eigen::MatrixXd& m) { return linalg::internal::all_finite(m.data(), m.size()); }

}  // namespace

SapConstraint::SapConstraint(int num_rows, int first_tree, Eigen::MatrixXd J_first, int second_tree,
                             Eigen::MatrixXd J_second)
    : num_rows_(num_rows),
      first_tree_(first_tree),
      second_tree_(second_tree),
      J_first_(std::move(J_first)),
      J_second_(std::move(J_second)) {
  if (num_rows <= 0) throw std::invalid_argument("SapConstraint: num_rows must be > 0");
  check();
  R_ = Eigen::VectorXd::Ones(num_rows);
  v_hat_ = Eigen::VectorXd::Zero(num_rows);
}

void SapConstraint::set_jacobians(int first_tree, const Eigen::Ref<const Eigen::MatrixXd>& J_first, int second_tree,
                                  const Eigen::Ref<const Eigen::MatrixXd>& J_second) {
  first_tree_ = first_tree;
  second_tree_ = second_tree;
  copy_block(J_first, J_first_);
  if (second_tree >= 0) copy_block(J_second, J_second_);
  else J_second_.resize(0, 0);
  check();
}

void SapConstraint::check() const {
  if (first_tree_ < 0) throw std::invalid_argument("SapConstraint: first_tree must be >= 0");
  if (J_first_.rows() != num_rows_)
    throw std::invalid_argument("SapConstraint: first Jacobian block has " + std::to_string(J_first_.rows()) +
                                " rows, expected " + std::to_string(num_rows_));
  if (second_tree_ >= 0) {
    if (second_tree_ == first_tree_) throw std::invalid_argument("SapConstraint: the two trees must differ");
    if (J_second_.rows() != num_rows_)
      throw std::invalid_argument("SapConstraint: second Jacobian block has " + std::to_string(J_second_.rows()) +
                                  " rows, expected " + std::to_string(num_rows_));
  }
  if (!all_finite(J_first_) || !all_finite(J_second_))
    throw std::invalid_argument("SapConstraint: Jacobian has a non-finite entry");
}

double SapConstraint::calc_along(const Eigen::Ref<const Eigen::VectorXd>& vc,
                                 const Eigen::Ref<const Eigen::VectorXd>& dvc, Eigen::Ref<Eigen::VectorXd> gamma,
                                 double* curvature) const {
  if (curvature == nullptr) return calc(vc, gamma, nullptr);
  // Up to 6 × 6 on the stack; larger constraints allocate.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> G_small;
  Eigen::MatrixXd G_large;
  const int n = num_rows_;
  double ell;
  if (n <= 6) {
    G_small.resize(n, n);
    Eigen::Ref<Eigen::MatrixXd> G_ref(G_small);
    ell = calc(vc, gamma, &G_ref);
    *curvature = dvc.dot(G_small * dvc);
  } else {
    G_large.resize(n, n);
    Eigen::Ref<Eigen::MatrixXd> G_ref(G_large);
    ell = calc(vc, gamma, &G_ref);
    *curvature = dvc.dot(G_large * dvc);
  }
  return ell;
}

double delassus_scalar(const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  if (W_ii.rows() == 1) return std::abs(W_ii(0, 0));
  // ‖W_ii‖_F by plain loops: Eigen's dynamic-size reduction cost about 180 instructions on a
  // contact's 3 × 3 block, once per contact and step.
  double sum = 0.0;
  for (Eigen::Index j = 0; j < W_ii.cols(); ++j) {
    const double* col = W_ii.data() + j * W_ii.outerStride();
    for (Eigen::Index i = 0; i < W_ii.rows(); ++i) sum += col[i] * col[i];
  }
  return std::sqrt(sum) / kDelassusNormDivisor;
}

Eigen::MatrixXd unit_jacobian_row(int tree_nv, int dof, const char* constraint) {
  if (dof < 0 || dof >= tree_nv)
    throw std::invalid_argument(std::string(constraint) + " constraint: dof " + std::to_string(dof) + " out of range [0, " +
                                std::to_string(tree_nv) + ")");
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(1, tree_nv);
  J(0, dof) = 1.0;
  return J;
}

}  // namespace coulomb::solvers::sap
