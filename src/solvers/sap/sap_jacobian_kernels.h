// One constraint's Jacobian products on its whole (uncompacted) blocks: v_c,i = J_i v and
// x += J_iᵀ γ_i. SapProblem::multiply_J and multiply_J_transpose loop over them, and SapSolver's
// fused evaluation of a pile (evaluate_constraints_fused) calls both for each constraint in turn.
// always_inline: each caller's compiled copy (baseline, AVX2 + FMA) takes its instruction set.
// Internal to libcoulomb (src/), not installed.
#pragma once

#include <Eigen/Core>

#include "coulomb/solvers/sap/sap_constraint.h"
#include "linalg/block6_kernels.h"

namespace coulomb::solvers::sap::internal {

/// out (num_rows) = Σ_k J_k v_k, with v_k = v + tree_start(c.tree(k)). Contacts keep the sum in
/// registers; free bodies' 3 × 6 blocks take the fixed-size kernel.
template <class TreeStart>
[[gnu::always_inline]] inline void constraint_multiply_J(const SapConstraint& c, TreeStart tree_start, const double* v,
                                                         double* out) {
  const int r = c.num_rows();
  if (r == 3) {
    double o[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < c.num_trees(); ++k) {
      const Eigen::MatrixXd& J = c.jacobian(k);
      const double* vt = v + tree_start(c.tree(k));
      if (J.cols() == 6) {  // a free body
        linalg::internal::block6::add_multiply_3x6(J.data(), vt, o);
      } else {
        for (Eigen::Index b = 0; b < J.cols(); ++b) {
          const double* j = J.data() + 3 * b;
          o[0] += j[0] * vt[b];
          o[1] += j[1] * vt[b];
          o[2] += j[2] * vt[b];
        }
      }
    }
    out[0] = o[0];
    out[1] = o[1];
    out[2] = o[2];
    return;
  }
  Eigen::Map<Eigen::VectorXd> out_map(out, r);
  out_map.setZero();
  for (int k = 0; k < c.num_trees(); ++k)
    out_map.noalias() += c.jacobian(k) * Eigen::Map<const Eigen::VectorXd>(v + tree_start(c.tree(k)), c.jacobian(k).cols());
}

/// x_k += J_kᵀ g for each of the constraint's trees, x_k = x + tree_start(c.tree(k)).
template <class TreeStart>
[[gnu::always_inline]] inline void constraint_add_J_transpose(const SapConstraint& c, TreeStart tree_start,
                                                              const double* g, double* x) {
  const int r = c.num_rows();
  for (int k = 0; k < c.num_trees(); ++k) {
    const Eigen::MatrixXd& J = c.jacobian(k);
    double* xt = x + tree_start(c.tree(k));
    if (r == 3 && J.cols() == 6) {  // a contact on a free body
      linalg::internal::block6::add_multiply_transpose_3x6(J.data(), g, xt);
    } else if (r == 3) {
      for (Eigen::Index b = 0; b < J.cols(); ++b) {
        const double* j = J.data() + 3 * b;
        xt[b] += j[0] * g[0] + j[1] * g[1] + j[2] * g[2];
      }
    } else {
      Eigen::Map<Eigen::VectorXd>(xt, J.cols()).noalias() += J.transpose() * Eigen::Map<const Eigen::VectorXd>(g, r);
    }
  }
}

}  // namespace coulomb::solvers::sap::internal
