// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass matrix.
#pragma once

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// M(q), n_v × n_v, symmetric positive definite when every subtree has mass [kg, kg·m, kg·m²
/// by coordinate type], joint armature included (M += diag(Model::armature()), as MuJoCo's
/// dof_armature). Writes and returns ws.M (both triangles); also fills ws.X_PB and
/// ws.Ic_B (composite inertias), ws.R_JB. Entries between different trees (and between
/// different branches of one tree) are zero: crba never writes them and relies on the Workspace
/// constructor having zeroed them, so code outside crba must not write ws.M. No allocation.
const Eigen::MatrixXd& crba(const Model& model, Workspace& ws, const ConstVectorRef& q);

/// crba with the joint poses ws.X_PB already evaluated at q (by forward_kinematics, rnea,
/// bias_forces, … at the same q): the same M, without recomputing the joint transforms.
const Eigen::MatrixXd& crba_from_joint_poses(const Model& model, Workspace& ws);

}  // namespace coulomb::multibody
