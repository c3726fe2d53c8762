#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

void forward_kinematics(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    if (model.floating_in_world(i)) {  // X_WB = X_PB (Model::floating_in_world)
      ws.X_WB[i] = ws.X_PB[i] = floating_transform(q.data() + body.joint.q_index);
      continue;
    }
    ws.X_PB[i] = joint_transform(body.joint, q.data() + body.joint.q_index);
    ws.X_WB[i] = ws.X_WB[body.parent] * ws.X_PB[i];
  }
}

void forward_kinematics(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  ws.V_B[0] = math::SpatialMotion::Zero();
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    ws.X_PB[i] = joint_transform(joint, q.data() + joint.q_index);
    ws.X_WB[i] = ws.X_WB[body.parent] * ws.X_PB[i];
    // Featherstone Eq. (5.7): v_i = X_i,λ v_λ + S_i q̇_i.
    ws.V_B[i] = ws.X_PB[i].act_inv(ws.V_B[body.parent]) + joint_motion(joint, ws.X_PB[i], v.data() + joint.v_index);
  }
}

void forward_kinematics(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                        const ConstVectorRef& vdot) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  ws.V_B[0] = math::SpatialMotion::Zero();
  ws.A_B[0] = math::SpatialMotion::Zero();
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const int p = body.parent;
    ws.X_PB[i] = joint_transform(joint, q.data() + joint.q_index);
    ws.X_WB[i] = ws.X_WB[p] * ws.X_PB[i];
    const math::SpatialMotion vJ = joint_motion(joint, ws.X_PB[i], v.data() + joint.v_index);
    ws.V_B[i] = ws.X_PB[i].act_inv(ws.V_B[p]) + vJ;
    // Featherstone Eq. (5.8): a_i = X a_λ + S q̈ + c_J + v_i × S q̇ (c_J = Ṡ q̇, joint.h).
    ws.A_B[i] = ws.X_PB[i].act_inv(ws.A_B[p]) + joint_motion(joint, ws.X_PB[i], vdot.data() + joint.v_index) +
                joint_bias_acceleration(joint, vJ) + ws.V_B[i].cross(vJ);
  }
}

}  // namespace coulomb::multibody
