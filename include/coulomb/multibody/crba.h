// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass matrix.
#pragma once

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// M(q), n_v × n_v, symmetric positive definite when every subtree has mass [kg, kg·m, kg·m²
/// by coordinate type]. Writes and returns ws.M (both triangles); also fills ws.X_PB and
/// ws.Ic_B (composite inertias). Entries between different trees are zero. No allocation.
const Eigen::MatrixXd& crba(const Model& model, Workspace& ws, const ConstVectorRef& q);

}  // namespace coulomb::multibody
