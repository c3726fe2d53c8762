#include "coulomb/multibody/crba.h"

namespace coulomb::multibody {

// Featherstone 2008, Table 6.2, in body coordinates.
const Eigen::MatrixXd& crba(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  for (int i = 1; i < n; ++i) {
    const Joint& joint = bodies[i].joint;
    ws.X_PB[i] = joint_transform(joint, q.data() + joint.q_index);
    ws.Ic_B[i] = bodies[i].inertia;
  }
  // Composite inertias: I^c_λ += X_λi* I^c_i X_iλ.
  for (int i = n - 1; i >= 1; --i) {
    const int p = bodies[i].parent;
    if (p > 0) ws.Ic_B[p] += ws.X_PB[i].act(ws.Ic_B[i]);
  }
  Eigen::MatrixXd& M = ws.M;
  M.setZero();
  for (int i = 1; i < n; ++i) {
    const Joint& joint_i = bodies[i].joint;
    for (int k = 0; k < joint_i.nv; ++k) {
      const int col = joint_i.v_index + k;
      // F = I^c_i S_i[:, k]; M_ji = S_jᵀ F along the path from i to its root.
      math::SpatialForce F = ws.Ic_B[i] * joint_subspace_column(joint_i, ws.X_PB[i], k);
      double* column = M.col(col).data();
      joint_project(joint_i, ws.X_PB[i], F, column + joint_i.v_index);
      for (int j = i; bodies[j].parent > 0;) {
        F = ws.X_PB[j].act(F);
        j = bodies[j].parent;
        const Joint& joint_j = bodies[j].joint;
        joint_project(joint_j, ws.X_PB[j], F, column + joint_j.v_index);
        for (int r = 0; r < joint_j.nv; ++r) M(col, joint_j.v_index + r) = column[joint_j.v_index + r];
      }
    }
  }
  return M;
}

}  // namespace coulomb::multibody
