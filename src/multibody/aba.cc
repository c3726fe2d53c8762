#include "coulomb/multibody/aba.h"

#include <stdexcept>

#include <Eigen/Cholesky>

namespace coulomb::multibody {

namespace {

using Matrix6x = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;
using MatrixXx = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
using VectorX6 = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;

[[noreturn]] void throw_singular(const Joint& joint) {
  throw std::runtime_error("aba: the articulated inertia at joint '" + joint.name +
                           "' is singular (the subtree it moves has no mass or inertia)");
}

// The joint's motion subspace S as a 6 × nv matrix ([ω; v] rows).
Matrix6x subspace(const Joint& joint, const math::Transform& X_PB) {
  Matrix6x S(6, joint.nv);
  for (int k = 0; k < joint.nv; ++k) S.col(k) = joint_subspace_column(joint, X_PB, k).vector();
  return S;
}

// Adds X_PBᵀ* Ia X_PB, the articulated inertia Ia (6 × 6, symmetric, about B's origin in B
// coordinates, [ω; v] ordering) seen from the parent P, to IA_P. With Ia = [[A, B], [Bᵀ, C]]
// rotated into P's orientation (A' = R A Rᵀ, B' = R B Rᵀ, C' = R C Rᵀ) and P = [p]× for
// p = p_PB, the shift of the reference point from B's origin to P's is
//   A_P = A' − B' P + P B'ᵀ − P C' P,  B_P = B' + P C',  C_P = C'
// (the same algebra as Transform::act(SpatialInertia), for a general symmetric matrix); about
// 300 multiply-adds against the 432 of two dense 6 × 6 products.
void add_articulated_inertia_to_parent(const math::Transform& X_PB, const math::Matrix6& Ia, math::Matrix6& IA_P) {
  const math::Matrix3& R = X_PB.R;
  const math::Matrix3 A = R * Ia.topLeftCorner<3, 3>() * R.transpose();
  const math::Matrix3 B = R * Ia.topRightCorner<3, 3>() * R.transpose();
  const math::Matrix3 C = R * Ia.bottomRightCorner<3, 3>() * R.transpose();
  const math::Matrix3 P = math::skew(X_PB.p);
  const math::Matrix3 PC = P * C;
  const math::Matrix3 BP = B * P;
  IA_P.topLeftCorner<3, 3>() += A - BP - BP.transpose() - PC * P;  // P Bᵀ = −(B P)ᵀ
  const math::Matrix3 B_P = B + PC;
  IA_P.topRightCorner<3, 3>() += B_P;
  IA_P.bottomLeftCorner<3, 3>() += B_P.transpose();
  IA_P.bottomRightCorner<3, 3>() += C;
}

// Featherstone 2008, Table 7.1 (ABA), in body coordinates, gravity as a₀ = −g. Revolute and
// prismatic joints (S = [a; 0] or [0; a], a unit axis in B) take a scalar path: U = IA S is a
// column of IA·a, D = Sᵀ U a scalar, and the articulated inertia passed to the parent is the
// rank-one update IA − U Uᵀ / D. Other joints (floating) use the dense nv × nv path.
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
    const math::Matrix6& IA = ws.IA[i];
    if (joint.type == JointType::kRevolute || joint.type == JointType::kPrismatic) {
      const int off = joint.type == JointType::kRevolute ? 0 : 3;  // S = [a; 0] or [0; a]
      const math::Vector6 U = IA.middleCols<3>(off) * joint.axis;
      const double D = joint.axis.dot(U.segment<3>(off)) + joint.armature;  // + rotor inertia in joint space
      if (!(D > 0.0)) throw_singular(joint);
      const double Dinv = 1.0 / D;
      const math::Vector6 pA = ws.pA[i].vector();
      const double u = tau[joint.v_index] - joint.axis.dot(pA.segment<3>(off));
      ws.U[i].col(0) = U;
      ws.Dinv[i](0, 0) = Dinv;
      ws.u[i][0] = u;
      if (body.parent > 0) {
        const math::Matrix6 Ia = IA - (Dinv * U) * U.transpose();
        const math::Vector6 pa = pA + Ia * ws.c[i].vector() + U * (Dinv * u);
        add_articulated_inertia_to_parent(ws.X_PB[i], Ia, ws.IA[body.parent]);
        ws.pA[body.parent] += ws.X_PB[i].act(math::SpatialForce(pa));
      }
      continue;
    }
    if (joint.type == JointType::kFloating) {
      // S = blockdiag(R_JBᵀ, R_JBᵀ): fixed-size 6 × 6 products and a 6 × 6 Cholesky.
      const math::Matrix3 Rt = floating_rotation(joint, ws.X_PB[i]).transpose();
      Eigen::Matrix<double, 6, 6>& U = ws.U[i];
      U.leftCols<3>().noalias() = IA.leftCols<3>() * Rt;
      U.rightCols<3>().noalias() = IA.rightCols<3>() * Rt;
      math::Matrix6 D;
      D.topRows<3>().noalias() = Rt.transpose() * U.topRows<3>();
      D.bottomRows<3>().noalias() = Rt.transpose() * U.bottomRows<3>();
      if (joint.armature != 0.0) D.diagonal().array() += joint.armature;
      // Only the Cholesky factor L (D = L Lᵀ) is kept, in ws.Dinv[i]: pass 3 solves with it.
      const Eigen::LLT<math::Matrix6> llt(D);
      if (llt.info() != Eigen::Success || !(D.diagonal().minCoeff() > 0.0)) throw_singular(joint);
      ws.Dinv[i] = llt.matrixLLT();
      const math::SpatialForce& pA = ws.pA[i];
      ws.u[i].head<3>() = Eigen::Map<const math::Vector3>(tau + joint.v_index) - Rt.transpose() * pA.tau;
      ws.u[i].tail<3>() = Eigen::Map<const math::Vector3>(tau + joint.v_index + 3) - Rt.transpose() * pA.f;
      if (body.parent > 0) {
        // U D⁻¹ Uᵀ = Wᵀ W with W = L⁻¹ Uᵀ.
        math::Matrix6 W = U.transpose();
        llt.matrixL().solveInPlace(W);
        const math::Matrix6 Ia = IA - W.transpose() * W;
        const math::Vector6 pa = pA.vector() + Ia * ws.c[i].vector() + U * llt.solve(ws.u[i]);
        add_articulated_inertia_to_parent(ws.X_PB[i], Ia, ws.IA[body.parent]);
        ws.pA[body.parent] += ws.X_PB[i].act(math::SpatialForce(pa));
      }
      continue;
    }
    const Matrix6x S = subspace(joint, ws.X_PB[i]);
    auto U = ws.U[i].leftCols(nv);
    U = IA * S;
    // D = Sᵀ I^A S + diag(armature): the joint's armature adds to its joint-space inertia.
    MatrixXx D = S.transpose() * U;
    if (joint.armature != 0.0) D.diagonal().array() += joint.armature;
    Eigen::LLT<MatrixXx> llt(D);
    if (llt.info() != Eigen::Success || !(D.diagonal().minCoeff() > 0.0)) throw_singular(joint);
    auto Dinv = ws.Dinv[i].topLeftCorner(nv, nv);
    Dinv = llt.solve(MatrixXx::Identity(nv, nv));
    auto u = ws.u[i].head(nv);
    u = Eigen::Map<const VectorX6>(tau + joint.v_index, nv) - S.transpose() * ws.pA[i].vector();
    if (body.parent > 0) {
      const math::Matrix6 Ia = IA - U * Dinv * U.transpose();
      const math::Vector6 pa = ws.pA[i].vector() + Ia * ws.c[i].vector() + U * (Dinv * u);
      add_articulated_inertia_to_parent(ws.X_PB[i], Ia, ws.IA[body.parent]);
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
    if (nv == 1) {
      const double qdd = ws.Dinv[i](0, 0) * (ws.u[i][0] - ws.U[i].col(0).dot(a_prime.vector()));
      ws.vdot[joint.v_index] = qdd;
      ws.A_gravity_B[i] = a_prime + joint_motion(joint, ws.X_PB[i], &qdd);
      continue;
    }
    if (nv == 6) {
      // D q̈ = u − Uᵀ a' with D = L Lᵀ, L in ws.Dinv[i] (the floating branch of pass 2).
      Eigen::Map<math::Vector6> qdd(ws.vdot.data() + joint.v_index);
      qdd.noalias() = ws.u[i] - ws.U[i].transpose() * a_prime.vector();
      const math::Matrix6& L = ws.Dinv[i];
      L.triangularView<Eigen::Lower>().solveInPlace(qdd);
      L.transpose().triangularView<Eigen::Upper>().solveInPlace(qdd);
      ws.A_gravity_B[i] = a_prime + joint_motion(joint, ws.X_PB[i], qdd.data());
      continue;
    }
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
