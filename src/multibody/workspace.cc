#include "coulomb/multibody/workspace.h"

namespace coulomb::multibody {

Workspace::Workspace(const Model& model) {
  const auto n = static_cast<size_t>(model.num_bodies());
  X_PB.assign(n, math::Transform::Identity());
  X_WB.assign(n, math::Transform::Identity());
  V_B.assign(n, math::SpatialMotion::Zero());
  A_B.assign(n, math::SpatialMotion::Zero());
  A_gravity_B.assign(n, math::SpatialMotion::Zero());
  F_B.assign(n, math::SpatialForce::Zero());
  Ic_B.assign(n, math::SpatialInertia::Zero());
  R_JB.assign(n, math::Matrix3::Identity());
  IA.assign(n, math::Matrix6::Zero());
  pA.assign(n, math::SpatialForce::Zero());
  c.assign(n, math::SpatialMotion::Zero());
  U.assign(n, Eigen::Matrix<double, 6, 6>::Zero());
  Dinv.assign(n, Eigen::Matrix<double, 6, 6>::Zero());
  u.assign(n, Eigen::Matrix<double, 6, 1>::Zero());
  const int nv = model.nv();
  tau = Eigen::VectorXd::Zero(nv);
  bias = Eigen::VectorXd::Zero(nv);
  gravity = Eigen::VectorXd::Zero(nv);
  M_trees = TreeMassMatrix(model);  // the dense M stays empty until crba() is called
  vdot = Eigen::VectorXd::Zero(nv);
  momentum = Eigen::VectorXd::Zero(nv);
  momentum_bias = Eigen::VectorXd::Zero(nv);
  zeros_v = Eigen::VectorXd::Zero(nv);
}

}  // namespace coulomb::multibody
