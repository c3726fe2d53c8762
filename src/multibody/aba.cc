#include "coulomb/multibody/aba.h"

#include <stdexcept>

#include <Eigen/Cholesky>

namespace coulomb::multibody {

namespace {

using Matrix6x = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;
using MatrixXx = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
using VectorX6 = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;

// The joint's motion subspace S as a 6 × nv matrix ([ω; v] rows).
Matrix6x subspace(const Joint& joint, const math::Transform& X_PB) {
  Matrix6x S(6, joint.nv);
  for (int k = 0; k < joint.nv; ++k) S.col(k) = joint_subspace_column(joint, X_PB, k).vector();
  return S;
}

// 6×6 matrix mapping a motion expressed in the parent P to the motion expressed in B,
// given X_PB (pose of B in P).
math::Matrix6 motion_parent_to_child(const math::Transform& X_PB) {
  const math::Matrix3 Rt = X_PB.R.transpose();
  math::Matrix6 X;
  X << Rt, math::Matrix3::Zero(), -Rt * math::skew(X_PB.p), Rt;
  return X;
}

// Featherstone 2008, Table 7.1 (ABA), in body coordinates, gravity as a₀ = −g.
void aba_impl(const Model& model, Workspace& ws, const double* q, const double* v, const double* tau,
              const std::vector<math::SpatialForce>* f_ext) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  ws.V_B[0] = math::SpatialMotion::Zero();
  // Pass 1: velocities, velocity-product accelerations, isolated inertias and bias forces.
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const math::Transform& X = ws.X_PB[i] = joint_transform(joint, q + joint.q_index);
    const math::SpatialMotion vJ = joint_motion(joint, X, v + joint.v_index);
    const math::SpatialMotion& V = ws.V_B[i] = X.act_inv(ws.V_B[body.parent]) + vJ;
    ws.c[i] = V.cross(vJ) + joint_bias_acceleration(joint, vJ);
    ws.IA[i] = body.inertia.matrix();
    ws.pA[i] = V.cross(body.inertia * V);
    if (f_ext != nullptr) ws.pA[i] -= (*f_ext)[i];
  }
  // Pass 2: articulated inertias, leaves to root.
  for (int i = n - 1; i >= 1; --i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const int nv = joint.nv;
    const Matrix6x S = subspace(joint, ws.X_PB[i]);
    auto U = ws.U[i].leftCols(nv);
    U = ws.IA[i] * S;
    // D = Sᵀ I^A S + diag(armature): the joint's armature adds to its joint-space inertia.
    MatrixXx D = S.transpose() * U;
    if (joint.armature != 0.0) D.diagonal().array() += joint.armature;
    Eigen::LLT<MatrixXx> llt(D);
    if (llt.info() != Eigen::Success || !(D.diagonal().minCoeff() > 0.0))
      throw std::runtime_error("aba: the articulated inertia at joint '" + joint.name +
                               "' is singular (the subtree it moves has no mass or inertia)");
    auto Dinv = ws.Dinv[i].topLeftCorner(nv, nv);
    Dinv = llt.solve(MatrixXx::Identity(nv, nv));
    auto u = ws.u[i].head(nv);
    u = Eigen::Map<const VectorX6>(tau + joint.v_index, nv) - S.transpose() * ws.pA[i].vector();
    if (body.parent > 0) {
      const math::Matrix6 Ia = ws.IA[i] - U * Dinv * U.transpose();
      const math::Vector6 pa = ws.pA[i].vector() + Ia * ws.c[i].vector() + U * (Dinv * u);
      const math::Matrix6 X = motion_parent_to_child(ws.X_PB[i]);
      ws.IA[body.parent] += X.transpose() * Ia * X;
      ws.pA[body.parent] += ws.X_PB[i].act(math::SpatialForce(pa));
    }
  }
  // Pass 3: accelerations, root to leaves.
  ws.A_gravity_B[0] = math::SpatialMotion(math::Vector3::Zero(), -model.gravity());
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const int nv = joint.nv;
    const math::SpatialMotion a_prime = ws.X_PB[i].act_inv(ws.A_gravity_B[body.parent]) + ws.c[i];
    auto qdd = ws.vdot.segment(joint.v_index, nv);
    qdd = ws.Dinv[i].topLeftCorner(nv, nv) *
          (ws.u[i].head(nv) - ws.U[i].leftCols(nv).transpose() * a_prime.vector());
    ws.A_gravity_B[i] = a_prime + joint_motion(joint, ws.X_PB[i], qdd.data());
  }
}

}  // namespace

const Eigen::VectorXd& aba(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                           const ConstVectorRef& tau) {
  aba_impl(model, ws, q.data(), v.data(), tau.data(), nullptr);
  return ws.vdot;
}

const Eigen::VectorXd& aba(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                           const ConstVectorRef& tau, const std::vector<math::SpatialForce>& f_ext_B) {
  aba_impl(model, ws, q.data(), v.data(), tau.data(), &f_ext_B);
  return ws.vdot;
}

}  // namespace coulomb::multibody
