#include "coulomb/multibody/crba.h"

namespace coulomb::multibody {

namespace {

// Sᵀ f for joint j, with R_JB of a floating joint evaluated once per call (R_JB[j]) instead of
// once per projected column. The same arithmetic as joint_project.
inline void project(const Joint& joint, const math::Matrix3& R_JB, const math::SpatialForce& f, double* out) {
  switch (joint.type) {
    case JointType::kRevolute:
      out[0] = joint.axis.dot(f.tau);
      return;
    case JointType::kPrismatic:
      out[0] = joint.axis.dot(f.f);
      return;
    case JointType::kFloating: {
      const math::Vector3 tau = R_JB * f.tau, force = R_JB * f.f;
      for (int k = 0; k < 3; ++k) {
        out[k] = tau[k];
        out[3 + k] = force[k];
      }
      return;
    }
    case JointType::kFixed:
      return;
  }
}

// Column k of S (child frame), as joint_subspace_column, with R_JB precomputed.
inline math::SpatialMotion subspace_column(const Joint& joint, const math::Matrix3& R_JB, int k) {
  switch (joint.type) {
    case JointType::kRevolute:
      return {joint.axis, math::Vector3::Zero()};
    case JointType::kPrismatic:
      return {math::Vector3::Zero(), joint.axis};
    case JointType::kFloating: {
      const math::Vector3 e = R_JB.row(k % 3).transpose();  // R_JBᵀ e_k
      return k < 3 ? math::SpatialMotion(e, math::Vector3::Zero()) : math::SpatialMotion(math::Vector3::Zero(), e);
    }
    case JointType::kFixed:
      break;
  }
  return {};
}

}  // namespace

// Featherstone 2008, Table 6.2, in body coordinates.
const Eigen::MatrixXd& crba_from_joint_poses(const Model& model, Workspace& ws) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  for (int i = 1; i < n; ++i) {
    ws.Ic_B[i] = bodies[i].inertia;
    const Joint& joint = bodies[i].joint;
    if (joint.type == JointType::kFloating) ws.R_JB[i] = floating_rotation(joint, ws.X_PB[i]);
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
      math::SpatialForce F = ws.Ic_B[i] * subspace_column(joint_i, ws.R_JB[i], k);
      double* column = M.col(col).data();
      project(joint_i, ws.R_JB[i], F, column + joint_i.v_index);
      for (int j = i; bodies[j].parent > 0;) {
        F = ws.X_PB[j].act(F);
        j = bodies[j].parent;
        const Joint& joint_j = bodies[j].joint;
        project(joint_j, ws.R_JB[j], F, column + joint_j.v_index);
        for (int r = 0; r < joint_j.nv; ++r) M(col, joint_j.v_index + r) = column[joint_j.v_index + r];
      }
    }
  }
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
