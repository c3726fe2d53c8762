#include "coulomb/solvers/sap/sap_problem.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "linalg/block6_kernels.h"
#include "linalg/block_kernels.h"
#include "linalg/dense_kernels.h"
#include "solvers/sap/sap_jacobian_kernels.h"

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

namespace {

// The bodies of multiply_A, multiply_J and multiply_J_transpose, compiled twice like the
// factorization (linalg/block_kernels.h): a pile's 6 × 6 blocks of A and 3 × 6 contact blocks go
// through the register kernels of linalg/block6_kernels.h, AVX2 + FMA where the processor has it.
// Other sizes take the plain loops or Eigen's products, as before.

// y = A x for a small tree (n < 8, not a free body): columns of A, without the dispatch of
// Eigen's dynamic product. Compiled once, for the baseline: in the AVX2 copy GCC vectorizes the
// run-time-length loop 4 wide, and a 3-velocity tree (spring_cylinder) then runs only its
// scalar epilogue behind the vector loop's checks (spring_cylinder's multiply_A, 1,000 steps:
// 1.33 M instructions inlined in the AVX2 copy, 1.23 M out of it).
// The size is a template argument (the loops unroll: spring_cylinder's 3 × 3 product went from
// 136 to about 30 instructions), with the same operations in the same order as for a run-time n.
template <int N>
[[gnu::always_inline]] inline void small_tree_multiply_fixed(const double* A, const double* x, double* y) {
  for (int i = 0; i < N; ++i) y[i] = 0.0;
  for (int j = 0; j < N; ++j) {
    const double xj = x[j];
    const double* col = A + static_cast<ptrdiff_t>(j) * N;
    for (int i = 0; i < N; ++i) y[i] += col[i] * xj;
  }
}
[[gnu::noinline]] void small_tree_multiply(const double* A, int n, const double* x, double* y) {
  switch (n) {
    case 1: small_tree_multiply_fixed<1>(A, x, y); return;
    case 2: small_tree_multiply_fixed<2>(A, x, y); return;
    case 3: small_tree_multiply_fixed<3>(A, x, y); return;
    case 4: small_tree_multiply_fixed<4>(A, x, y); return;
    case 5: small_tree_multiply_fixed<5>(A, x, y); return;
    case 6: small_tree_multiply_fixed<6>(A, x, y); return;
    case 7: small_tree_multiply_fixed<7>(A, x, y); return;
    default:
      for (int i = 0; i < n; ++i) y[i] = 0.0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) y[i] += A[static_cast<ptrdiff_t>(j) * n + i] * x[j];
  }
}

// trees == nullptr: every tree; else trees[0, count).
[[gnu::always_inline]] inline void multiply_A_body(const std::vector<Eigen::MatrixXd>& A, const std::vector<int>& tree_start,
                                                   const double* x, double* y, const int* trees = nullptr,
                                                   size_t count = 0) {
  const size_t num = trees != nullptr ? count : A.size();
  for (size_t a = 0; a < num; ++a) {
    const size_t t = trees != nullptr ? static_cast<size_t>(trees[a]) : a;
    const int s = tree_start[t];
    const int n = static_cast<int>(A[t].rows());
    if (n == 6) {  // free bodies
      linalg::internal::block6::gemv(A[t].data(), x + s, y + s);
    } else if (n < 8) {
      small_tree_multiply(A[t].data(), n, x + s, y + s);
    } else {  // a robot's tree: the dispatched dense kernel (AVX2 + FMA where the processor has it)
      linalg::internal::dense_multiply(A[t].data(), n, n, n, x + s, y + s);
    }
  }
}

[[gnu::always_inline]] inline void multiply_J_body(const std::vector<SapConstraint*>& constraints,
                                                   const std::vector<int>& row_start, const std::vector<int>& tree_start,
                                                   const double* v, double* vc) {
  auto start = [&tree_start](int t) { return tree_start[t]; };
  for (size_t i = 0; i < constraints.size(); ++i) internal::constraint_multiply_J(*constraints[i], start, v, vc + row_start[i]);
}

[[gnu::always_inline]] inline void multiply_J_transpose_body(const std::vector<SapConstraint*>& constraints,
                                                             const std::vector<int>& row_start,
                                                             const std::vector<int>& tree_start, int nv,
                                                             const double* gamma, double* x) {
  auto start = [&tree_start](int t) { return tree_start[t]; };
  for (int a = 0; a < nv; ++a) x[a] = 0.0;
  for (size_t i = 0; i < constraints.size(); ++i)
    internal::constraint_add_J_transpose(*constraints[i], start, gamma + row_start[i], x);
}

void multiply_A_baseline(const std::vector<Eigen::MatrixXd>& A, const std::vector<int>& tree_start, const double* x,
                         double* y, const int* trees = nullptr, size_t count = 0) {
  multiply_A_body(A, tree_start, x, y, trees, count);
}
COULOMB_TARGET_AVX2 void multiply_A_avx2(const std::vector<Eigen::MatrixXd>& A, const std::vector<int>& tree_start,
                                         const double* x, double* y, const int* trees = nullptr, size_t count = 0) {
  multiply_A_body(A, tree_start, x, y, trees, count);
}
void multiply_J_baseline(const std::vector<SapConstraint*>& constraints, const std::vector<int>& row_start,
                         const std::vector<int>& tree_start, const double* v, double* vc) {
  multiply_J_body(constraints, row_start, tree_start, v, vc);
}
COULOMB_TARGET_AVX2 void multiply_J_avx2(const std::vector<SapConstraint*>& constraints,
                                         const std::vector<int>& row_start, const std::vector<int>& tree_start,
                                         const double* v, double* vc) {
  multiply_J_body(constraints, row_start, tree_start, v, vc);
}
void multiply_J_transpose_baseline(const std::vector<SapConstraint*>& constraints, const std::vector<int>& row_start,
                                   const std::vector<int>& tree_start, int nv, const double* gamma, double* x) {
  multiply_J_transpose_body(constraints, row_start, tree_start, nv, gamma, x);
}
COULOMB_TARGET_AVX2 void multiply_J_transpose_avx2(const std::vector<SapConstraint*>& constraints,
                                                   const std::vector<int>& row_start,
                                                   const std::vector<int>& tree_start, int nv, const double* gamma,
                                                   double* x) {
  multiply_J_transpose_body(constraints, row_start, tree_start, nv, gamma, x);
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_product_sizes(const char* what, Eigen::Index in,
                                                                Eigen::Index in_expected, Eigen::Index out,
                                                                Eigen::Index out_expected) {
  throw std::invalid_argument(std::string("SapProblem::") + what + ": input has " + std::to_string(in) +
                              " entries (expected " + std::to_string(in_expected) + "), output " +
                              std::to_string(out) + " (expected " + std::to_string(out_expected) + ")");
}
[[gnu::always_inline]] inline void check_product_sizes(const char* what, Eigen::Index in, Eigen::Index in_expected,
                                                       Eigen::Index out, Eigen::Index out_expected) {
  if (in != in_expected || out != out_expected) [[unlikely]]
    throw_product_sizes(what, in, in_expected, out, out_expected);
}

}  // namespace

void SapProblem::multiply_A(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y) const {
  check_product_sizes("multiply_A", x.size(), nv(), y.size(), nv());
  if (linalg::internal::use_avx2_kernels()) multiply_A_avx2(A_, tree_start_, x.data(), y.data());
  else multiply_A_baseline(A_, tree_start_, x.data(), y.data());
}

void SapProblem::multiply_A(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                            const std::vector<int>& trees) const {
  check_product_sizes("multiply_A", x.size(), nv(), y.size(), nv());
  if (linalg::internal::use_avx2_kernels())
    multiply_A_avx2(A_, tree_start_, x.data(), y.data(), trees.data(), trees.size());
  else
    multiply_A_baseline(A_, tree_start_, x.data(), y.data(), trees.data(), trees.size());
}

void SapProblem::multiply_J(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> vc) const {
  check_product_sizes("multiply_J", v.size(), nv(), vc.size(), num_rows_);
  if (linalg::internal::use_avx2_kernels()) multiply_J_avx2(constraints_, row_start_, tree_start_, v.data(), vc.data());
  else multiply_J_baseline(constraints_, row_start_, tree_start_, v.data(), vc.data());
}

void SapProblem::multiply_J_transpose(const Eigen::Ref<const Eigen::VectorXd>& gamma,
                                      Eigen::Ref<Eigen::VectorXd> x) const {
  check_product_sizes("multiply_J_transpose", gamma.size(), num_rows_, x.size(), nv());
  if (linalg::internal::use_avx2_kernels())
    multiply_J_transpose_avx2(constraints_, row_start_, tree_start_, nv(), gamma.data(), x.data());
  else
    multiply_J_transpose_baseline(constraints_, row_start_, tree_start_, nv(), gamma.data(), x.data());
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
