#include "coulomb/multibody/crba.h"

namespace coulomb::multibody {

// Featherstone 2008, Table 6.2, in body coordinates.
const Eigen::MatrixXd& crba_from_joint_poses(const Model& model, Workspace& ws) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  for (int i = 1; i < n; ++i) {
    ws.Ic_B[i] = bodies[i].inertia;
    const Joint& joint = bodies[i].joint;
    if (joint_uses_rotation(joint.type)) ws.R_JB[i] = floating_rotation(joint, ws.X_PB[i]);  // for S_i, S_iᵀ
  }
  // Composite inertias: I^c_λ += X_λi* I^c_i X_iλ.
  for (int i = n - 1; i >= 1; --i) {
    const int p = bodies[i].parent;
    if (p > 0) ws.Ic_B[p] += ws.X_PB[i].act(ws.Ic_B[i]);
  }
  // Every entry M(r, c) whose bodies are on one root path (one is an ancestor of, or is, the
  // other) is overwritten below, both triangles; every other entry (different trees, or
  // different branches of one tree) is structurally zero and was zeroed by the Workspace
  // constructor, so M is not cleared here.
  Eigen::MatrixXd& M = ws.M;
  for (int i = 1; i < n; ++i) {
    const Joint& joint_i = bodies[i].joint;
    for (int k = 0; k < joint_i.nv; ++k) {
      const int col = joint_i.v_index + k;
      // F = I^c_i S_i[:, k]; M_ji = S_jᵀ F along the path from i to its root.
      math::SpatialForce F = ws.Ic_B[i] * joint_subspace_column(joint_i, ws.R_JB[i], k);
      double* column = M.col(col).data();
      joint_project(joint_i, ws.R_JB[i], F, column + joint_i.v_index);
      for (int j = i; bodies[j].parent > 0;) {
        F = ws.X_PB[j].act(F);
        j = bodies[j].parent;
        const Joint& joint_j = bodies[j].joint;
        joint_project(joint_j, ws.R_JB[j], F, column + joint_j.v_index);
        for (int r = 0; r < joint_j.nv; ++r) M(col, joint_j.v_index + r) = column[joint_j.v_index + r];
      }
    }
  }
  // Joint armature (rotor inertia in joint space): M += diag(armature).
  if (model.has_armature()) M.diagonal() += model.armature();
  return M;
}

const Eigen::MatrixXd& crba(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  for (int i = 1; i < n; ++i) {
    const Joint& joint = bodies[i].joint;
    ws.X_PB[i] = joint_transform(joint, q.data() + joint.q_index);
  }
  return crba_from_joint_poses(model, ws);
}

}  // namespace coulomb::multibody
