#include "coulomb/solvers/sap/sap_constraint.h"

#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {

SapConstraint::SapConstraint(int num_rows, int first_tree, Eigen::MatrixXd J_first, int second_tree,
                             Eigen::MatrixXd J_second)
    : num_rows_(num_rows),
      first_tree_(first_tree),
      second_tree_(second_tree),
      J_first_(std::move(J_first)),
      J_second_(std::move(J_second)) {
  if (num_rows <= 0) throw std::invalid_argument("SapConstraint: num_rows must be > 0");
  if (first_tree < 0) throw std::invalid_argument("SapConstraint: first_tree must be >= 0");
  if (J_first_.rows() != num_rows)
    throw std::invalid_argument("SapConstraint: first Jacobian block has " + std::to_string(J_first_.rows()) +
                                " rows, expected " + std::to_string(num_rows));
  if (second_tree >= 0) {
    if (second_tree == first_tree) throw std::invalid_argument("SapConstraint: the two trees must differ");
    if (J_second_.rows() != num_rows)
      throw std::invalid_argument("SapConstraint: second Jacobian block has " + std::to_string(J_second_.rows()) +
                                  " rows, expected " + std::to_string(num_rows));
  }
  if (!J_first_.allFinite() || !J_second_.allFinite())
    throw std::invalid_argument("SapConstraint: Jacobian has a non-finite entry");
  R_ = Eigen::VectorXd::Ones(num_rows);
  v_hat_ = Eigen::VectorXd::Zero(num_rows);
}

double delassus_scalar(const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  if (W_ii.rows() == 1) return std::abs(W_ii(0, 0));
  return W_ii.norm() / kDelassusNormDivisor;
}

}  // namespace coulomb::solvers::sap
