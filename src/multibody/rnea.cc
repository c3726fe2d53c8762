#include "coulomb/multibody/rnea.h"

namespace coulomb::multibody {

namespace {

// Featherstone 2008, Table 5.1, in body coordinates, with gravity entered as a fictitious
// acceleration of the world a₀ = −g. f_ext may be null.
void rnea_impl(const Model& model, Workspace& ws, const double* q, const double* v, const double* vdot,
               const std::vector<math::SpatialForce>* f_ext, double* tau) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  ws.V_B[0] = math::SpatialMotion::Zero();
  ws.A_gravity_B[0] = math::SpatialMotion(math::Vector3::Zero(), -model.gravity());
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const int p = body.parent;
    const math::Transform& X = ws.X_PB[i] = joint_transform(joint, q + joint.q_index);
    if (joint_uses_rotation(joint.type)) ws.R_JB[i] = floating_rotation(joint, X);
    const math::Matrix3& R_JB = ws.R_JB[i];
    const math::SpatialMotion vJ = joint_motion(joint, R_JB, v + joint.v_index);
    const math::SpatialMotion& V = ws.V_B[i] = X.act_inv(ws.V_B[p]) + vJ;
    const math::SpatialMotion& A = ws.A_gravity_B[i] =
        X.act_inv(ws.A_gravity_B[p]) + joint_motion(joint, R_JB, vdot + joint.v_index) +
        joint_bias_acceleration(joint, vJ) + V.cross(vJ);
    // f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i
    ws.F_B[i] = body.inertia * A + V.cross(body.inertia * V);
    if (f_ext != nullptr) ws.F_B[i] -= (*f_ext)[i];
  }
  for (int i = n - 1; i >= 1; --i) {
    const Body& body = bodies[i];
    joint_project(body.joint, ws.R_JB[i], ws.F_B[i], tau + body.joint.v_index);  // τ_i = S_iᵀ f_i
    // Joint armature: τ_i += armature_i v̇_i (the diagonal term it adds to M).
    if (body.joint.armature != 0.0)
      for (int k = 0; k < body.joint.nv; ++k) tau[body.joint.v_index + k] += body.joint.armature * vdot[body.joint.v_index + k];
    if (body.parent > 0) ws.F_B[body.parent] += ws.X_PB[i].act(ws.F_B[i]);
  }
}

}  // namespace

const Eigen::VectorXd& rnea(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                            const ConstVectorRef& vdot) {
  rnea_impl(model, ws, q.data(), v.data(), vdot.data(), nullptr, ws.tau.data());
  return ws.tau;
}

const Eigen::VectorXd& rnea(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                            const ConstVectorRef& vdot, const std::vector<math::SpatialForce>& f_ext_B) {
  rnea_impl(model, ws, q.data(), v.data(), vdot.data(), &f_ext_B, ws.tau.data());
  return ws.tau;
}

const Eigen::VectorXd& bias_forces(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                   const ConstVectorRef& v) {
  rnea_impl(model, ws, q.data(), v.data(), ws.zeros_v.data(), nullptr, ws.bias.data());
  return ws.bias;
}

const Eigen::VectorXd& generalized_gravity(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  rnea_impl(model, ws, q.data(), ws.zeros_v.data(), ws.zeros_v.data(), nullptr, ws.gravity.data());
  return ws.gravity;
}

}  // namespace coulomb::multibody
