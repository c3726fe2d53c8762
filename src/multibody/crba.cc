#include "coulomb/multibody/crba.h"

#include "linalg/block_kernels.h"  // COULOMB_TARGET_AVX2, use_avx2_kernels

namespace coulomb::multibody {

namespace {

// Featherstone 2008, Table 6.2, in body coordinates: the composite inertias I^c_i of every
// subtree (and the floating joints' R_JB for S_i), from ws.X_PB.
void composite_inertias(const Model& model, Workspace& ws) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  for (int i = 1; i < n; ++i) {
    ws.Ic_B[i] = bodies[i].inertia;
    const Joint& joint = bodies[i].joint;
    if (model.floating_in_world(i)) ws.R_JB[i] = ws.X_PB[i].R;  // X_PJ = 1
    else if (joint_uses_rotation(joint.type)) ws.R_JB[i] = floating_rotation(joint, ws.X_PB[i]);  // for S_i, S_iᵀ
  }
  // Composite inertias: I^c_λ += X_λi* I^c_i X_iλ.
  for (int i = n - 1; i >= 1; --i) {
    const int p = bodies[i].parent;
    if (p > 0) ws.Ic_B[p] += ws.X_PB[i].act(ws.Ic_B[i]);
  }
}

// Table 6.2's second loop for bodies [first, end) of one or more whole trees, into M whose row
// and column 0 is velocity v_offset: every entry whose bodies are on one root path (one is an
// ancestor of, or is, the other) is overwritten, both triangles; every other entry (different
// trees, or different branches of one tree) is structurally zero and is not touched (the
// caller zeroed it when sizing M), so M is not cleared here. Armature added on the diagonal.
[[gnu::always_inline]] inline void fill_mass_matrix_body(const Model& model, Workspace& ws, int first, int end,
                                                       int v_offset, Eigen::MatrixXd& M) {
  const auto& bodies = model.bodies();
  for (int i = first; i < end; ++i) {
    const Joint& joint_i = bodies[i].joint;
    if (joint_i.type == JointType::kFloating && bodies[i].parent == 0) {
      // A floating joint on the world (a free body, a robot's floating base): its columns have
      // the root's own rows only, S_iᵀ I^c_i S_i with S_i = blockdiag(Rᵀ, Rᵀ), R = R_JB:
      //   [R I_o Rᵀ   [R h]×]
      //   [[R h]×ᵀ    m 1   ]   (I^c_i = (m, h, I_o) in body coordinates),
      // some 70 multiplications against the column loop's 250, and symmetric to the bit.
      const math::Matrix3& R = ws.R_JB[i];
      const math::SpatialInertia& Ic = ws.Ic_B[i];
      const math::Matrix3 RI = R * Ic.I_o;
      const math::Vector3 h = R * Ic.h;
      const int o = joint_i.v_index - v_offset;
      for (int b = 0; b < 3; ++b)
        for (int a = b; a < 3; ++a) M(o + a, o + b) = M(o + b, o + a) = RI.row(a).dot(R.row(b));
      const double skew_h[3][3] = {{0.0, -h.z(), h.y()}, {h.z(), 0.0, -h.x()}, {-h.y(), h.x(), 0.0}};
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          M(o + a, o + 3 + b) = skew_h[a][b];
          M(o + 3 + b, o + a) = skew_h[a][b];
          M(o + 3 + a, o + 3 + b) = a == b ? Ic.mass : 0.0;
        }
      continue;
    }
    for (int k = 0; k < joint_i.nv; ++k) {
      const int col = joint_i.v_index - v_offset + k;
      // F = I^c_i S_i[:, k]; M_ji = S_jᵀ F along the path from i to its root.
      math::SpatialForce F = ws.Ic_B[i] * joint_subspace_column(joint_i, ws.R_JB[i], k);
      double* column = M.col(col).data();
      joint_project(joint_i, ws.R_JB[i], F, column + joint_i.v_index - v_offset);
      for (int j = i; bodies[j].parent > 0;) {
        F = ws.X_PB[j].act(F);
        j = bodies[j].parent;
        const Joint& joint_j = bodies[j].joint;
        const int row = joint_j.v_index - v_offset;
        joint_project(joint_j, ws.R_JB[j], F, column + row);
        for (int r = 0; r < joint_j.nv; ++r) M(col, row + r) = column[row + r];
      }
    }
  }
  // Joint armature (rotor inertia in joint space): M += diag(armature).
  if (model.has_armature()) M.diagonal() += model.armature().segment(v_offset, M.rows());
}

// Compiled twice, like the block kernels (linalg/block_kernels.h): the spatial algebra's 3 × 3
// products contract into FMAs where the processor has them (momentum.cc likewise). Humanoid_drop,
// 1,000 steps: 14.1 M → 10.8 M instructions. composite_inertias stays single: its AVX2 copy
// executed more (8.7 M → 10.4 M).
void fill_mass_matrix_baseline(const Model& model, Workspace& ws, int first, int end, int v_offset,
                               Eigen::MatrixXd& M) {
  fill_mass_matrix_body(model, ws, first, end, v_offset, M);
}
COULOMB_TARGET_AVX2 void fill_mass_matrix_avx2(const Model& model, Workspace& ws, int first, int end, int v_offset,
                                               Eigen::MatrixXd& M) {
  fill_mass_matrix_body(model, ws, first, end, v_offset, M);
}
void fill_mass_matrix(const Model& model, Workspace& ws, int first, int end, int v_offset, Eigen::MatrixXd& M) {
  if (linalg::internal::use_avx2_kernels()) fill_mass_matrix_avx2(model, ws, first, end, v_offset, M);
  else fill_mass_matrix_baseline(model, ws, first, end, v_offset, M);
}

void joint_poses(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  const auto& bodies = model.bodies();
  for (int i = 1; i < model.num_bodies(); ++i) {
    const Joint& joint = bodies[i].joint;
    ws.X_PB[i] = model.floating_in_world(i) ? floating_transform(q.data() + joint.q_index)
                                            : joint_transform(joint, q.data() + joint.q_index);
  }
}

}  // namespace

const Eigen::MatrixXd& crba_from_joint_poses(const Model& model, Workspace& ws) {
  // Sized (and zeroed: see fill_mass_matrix) on the first call only.
  if (ws.M.rows() != model.nv() || ws.M.cols() != model.nv()) ws.M.setZero(model.nv(), model.nv());
  composite_inertias(model, ws);
  fill_mass_matrix(model, ws, 1, model.num_bodies(), 0, ws.M);
  return ws.M;
}

const Eigen::MatrixXd& crba(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  joint_poses(model, ws, q);
  return crba_from_joint_poses(model, ws);
}

const TreeMassMatrix& crba_trees_from_joint_poses(const Model& model, Workspace& ws) {
  composite_inertias(model, ws);
  TreeMassMatrix& M = ws.M_trees;
  for (int t = 0; t < M.num_trees(); ++t) {
    const TreeMassMatrix::Tree& tree = M.tree(t);
    fill_mass_matrix(model, ws, tree.first_body, tree.end_body, tree.v_start, M.mutable_block(t));
  }
  return M;
}

const TreeMassMatrix& crba_trees(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  joint_poses(model, ws, q);
  return crba_trees_from_joint_poses(model, ws);
}

}  // namespace coulomb::multibody
