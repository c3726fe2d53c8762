// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2): the joint-space mass matrix,
// dense (crba) or per kinematic tree (crba_trees).
#pragma once

#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/tree_mass_matrix.h"

namespace coulomb::multibody {

/// M(q), n_v × n_v, symmetric positive definite when every subtree has mass [kg, kg·m, kg·m²
/// by coordinate type], joint armature included (M += diag(Model::armature()), as MuJoCo's
/// dof_armature). Writes and returns ws.M (both triangles); also fills ws.X_PB and
/// ws.Ic_B (composite inertias), ws.R_JB. Entries between different trees (and between
/// different branches of one tree) are zero: crba never writes them and relies on ws.M having
/// been zeroed when it was sized, so code outside crba must not write ws.M. The first call on
/// a Workspace allocates ws.M (8 n_v² bytes: 2,000 free bodies take 1.15 GB); later calls
/// allocate nothing. Code that only needs the blocks of M (simulation, scene checks) calls
/// crba_trees, which is linear in the number of trees.
const Eigen::MatrixXd& crba(const Model& model, Workspace& ws, const ConstVectorRef& q);

/// crba with the joint poses ws.X_PB already evaluated at q (by forward_kinematics, rnea,
/// bias_forces, … at the same q): the same M, without recomputing the joint transforms.
const Eigen::MatrixXd& crba_from_joint_poses(const Model& model, Workspace& ws);

/// M(q) per kinematic tree: writes and returns ws.M_trees, whose block t is the n_v(t) × n_v(t)
/// diagonal block of crba's M over tree t's velocities (both triangles, armature included,
/// the same numbers as crba); M is zero between trees, so the blocks are all of it. Same
/// algorithm (Featherstone 2008, Table 6.2: composite inertias, then F = I^c_i S_i carried to
/// the root, M_ji = S_jᵀ F), same side outputs (ws.X_PB, ws.Ic_B, ws.R_JB). Memory
/// Σ_t n_v(t)², allocated by the Workspace constructor; no allocation.
const TreeMassMatrix& crba_trees(const Model& model, Workspace& ws, const ConstVectorRef& q);

/// crba_trees with ws.X_PB already evaluated at q (see crba_from_joint_poses).
const TreeMassMatrix& crba_trees_from_joint_poses(const Model& model, Workspace& ws);

}  // namespace coulomb::multibody
