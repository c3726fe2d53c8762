#include "coulomb/solvers/sap/sap_joint_friction_constraint.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::sap {


SapJointFrictionConstraint::SapJointFrictionConstraint(int tree, int tree_nv, int dof, const JointFrictionParameters& p)
    : SapConstraint(1, tree, unit_jacobian_row(tree_nv, dof, "joint friction")) {
  reset(p);
}

void SapJointFrictionConstraint::reset(const JointFrictionParameters& p) {
  if (!(p.friction >= 0.0) || !std::isfinite(p.friction))
    throw std::invalid_argument("joint friction constraint: friction must be finite and >= 0, got " + std::to_string(p.friction));
  if (!(p.sigma > 0.0)) throw std::invalid_argument("joint friction constraint: sigma must be > 0");
  parameters_ = p;
}

void SapJointFrictionConstraint::prepare(double dt, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) {
  R_[0] = parameters_.sigma * std::abs(W_ii(0, 0));
  v_hat_[0] = 0.0;
  max_impulse_ = parameters_.friction * dt;
}

double SapJointFrictionConstraint::calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
                                        Eigen::Ref<Eigen::MatrixXd>* G) const {
  const double R = R_[0], v = vc[0], bound = max_impulse_;
  const double y = -v / R;
  if (std::abs(y) <= bound) {  // stiction
    gamma[0] = y;
    if (G != nullptr) (*G)(0, 0) = 1.0 / R;
    return 0.5 * v * v / R;
  }
  gamma[0] = y > 0.0 ? bound : -bound;  // sliding: the full friction, against the motion
  if (G != nullptr) (*G)(0, 0) = 0.0;
  return bound * std::abs(v) - 0.5 * R * bound * bound;
}

}  // namespace coulomb::solvers::sap
