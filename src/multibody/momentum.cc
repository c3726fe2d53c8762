#include "coulomb/multibody/momentum.h"

#include "linalg/block_kernels.h"  // COULOMB_TARGET_AVX2, use_avx2_kernels

namespace coulomb::multibody {

namespace {

// kBias: also β (the gravity wrenches, V ×* h and the floating joints' Ṡᵀh); without it only p.
template <bool kBias>
[[gnu::always_inline]] inline void momentum_passes(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                                   const ConstVectorRef& v) {
  const auto& bodies = model.bodies();
  const int n = model.num_bodies();
  // Forward pass: joint poses, body velocities V_i, and each body's own momentum I_i V_i and
  // gravity wrench (moment about the body origin, body coordinates). ws.F_B[i] then accumulates
  // the composite momentum h_i and the aba scratch ws.pA[i] the subtree's gravity wrench;
  // ws.c[i] holds the joint velocity S_i q̇_i.
  ws.V_B[0] = math::SpatialMotion::Zero();
  ws.X_WB[0] = math::Transform::Identity();
  const math::Vector3& g_W = model.gravity();
  for (int i = 1; i < n; ++i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const int parent = body.parent;
    if (model.floating_in_world(i)) {  // X_WB = X_PB, R_JB = R_WB, V = S q̇: no products by the identity
      const math::Transform& X = ws.X_PB[i] = floating_transform(q.data() + joint.q_index);
      ws.X_WB[i] = X;
      ws.R_JB[i] = X.R;
      ws.c[i] = ws.V_B[i] = joint_motion(joint, X.R, v.data() + joint.v_index);
    } else {
      const math::Transform& X = ws.X_PB[i] = joint_transform(joint, q.data() + joint.q_index);
      ws.X_WB[i] = ws.X_WB[parent] * X;
      if (joint_uses_rotation(joint.type)) ws.R_JB[i] = floating_rotation(joint, X);
      const math::SpatialMotion vJ = joint_motion(joint, ws.R_JB[i], v.data() + joint.v_index);
      ws.c[i] = vJ;  // S q̇ (child frame), kept for Ṡ of floating joints
      ws.V_B[i] = X.act_inv(ws.V_B[parent]) + vJ;
    }
    const math::SpatialMotion& V = ws.V_B[i];
    ws.F_B[i] = body.inertia * V;
    if constexpr (kBias) {
      // Gravity on the body: force m g at the centre of mass, g in body coordinates.
      const math::Vector3 f = body.inertia.mass * (ws.X_WB[i].R.transpose() * g_W);
      ws.pA[i] = math::SpatialForce(body.inertia.h.cross(ws.X_WB[i].R.transpose() * g_W), f);
    }
  }
  // Backward pass: composite momenta and gravity wrenches, then the joint rows.
  for (int i = n - 1; i >= 1; --i) {
    const Body& body = bodies[i];
    const Joint& joint = body.joint;
    const math::SpatialForce& h = ws.F_B[i];
    double* p = ws.momentum.data() + joint.v_index;
    joint_project(joint, ws.R_JB[i], h, p);                                   // p_i = S_iᵀ h_i
    if (joint.armature != 0.0)  // + armature ⊙ v (p = M v with M's armature diagonal)
      for (int k = 0; k < joint.nv; ++k) p[k] += joint.armature * v[joint.v_index + k];
    if constexpr (kBias) {
      double* beta = ws.momentum_bias.data() + joint.v_index;
      // β_i = Ṡ_iᵀ h_i − S_iᵀ (V_i ×* h_i) + S_iᵀ f_gravity,i
      joint_project(joint, ws.R_JB[i], ws.pA[i] - ws.V_B[i].cross(h), beta);
      if (joint.type == JointType::kFloating) {
        const math::Vector3& w_JB = ws.c[i].w;  // ω of B relative to J, body coordinates
        const math::Vector3 a = ws.R_JB[i] * w_JB.cross(h.tau), b = ws.R_JB[i] * w_JB.cross(h.f);
        for (int k = 0; k < 3; ++k) {
          beta[k] += a[k];
          beta[3 + k] += b[k];
        }
      } else if (joint.type == JointType::kBall) {  // the floating joint's rotational part
        const math::Vector3& w_JB = ws.c[i].w;
        const math::Vector3 a = ws.R_JB[i] * w_JB.cross(h.tau);
        for (int k = 0; k < 3; ++k) beta[k] += a[k];
      }
    }
    if (body.parent > 0) {
      ws.F_B[body.parent] += ws.X_PB[i].act(h);
      if constexpr (kBias) ws.pA[body.parent] += ws.X_PB[i].act(ws.pA[i]);
    }
  }
}

// The passes compiled twice, like the block kernels (linalg/block_kernels.h): the spatial
// algebra's 3 × 3 products and cross products contract into FMAs where the processor has them.
template <bool kBias>
void momentum_passes_baseline(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v) {
  momentum_passes<kBias>(model, ws, q, v);
}
template <bool kBias>
COULOMB_TARGET_AVX2 void momentum_passes_avx2(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                              const ConstVectorRef& v) {
  momentum_passes<kBias>(model, ws, q, v);
}

}  // namespace

void generalized_momentum(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                          bool with_bias) {
  const bool avx2 = linalg::internal::use_avx2_kernels();
  if (with_bias) avx2 ? momentum_passes_avx2<true>(model, ws, q, v) : momentum_passes_baseline<true>(model, ws, q, v);
  else avx2 ? momentum_passes_avx2<false>(model, ws, q, v) : momentum_passes_baseline<false>(model, ws, q, v);
}

}  // namespace coulomb::multibody
