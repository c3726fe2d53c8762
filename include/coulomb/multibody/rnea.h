// Recursive Newton–Euler algorithm (Featherstone 2008, Table 5.1): inverse dynamics.
#pragma once

#include <vector>

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// τ = M(q) v̇ + C(q,v) v + ∂V/∂q(q): joint forces [N·m or N] that produce the accelerations
/// vdot under gravity model.gravity(), joint armature included (τ += armature ⊙ vdot, the
/// diagonal crba adds to M). q: n_q, v: n_v, vdot: n_v. Writes and returns ws.tau
/// (n_v); also fills ws.X_PB, ws.R_JB, ws.V_B, ws.A_gravity_B, ws.F_B. Joint damping is not
/// included (it is a force law, see Model::damping()). No allocation.
const Eigen::VectorXd& rnea(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                            const ConstVectorRef& vdot);

/// As above, with external wrenches f_ext_B[b] applied to body b (expressed in body b's frame,
/// moment about its origin; num_bodies() entries, entry 0 ignored):
/// τ = M v̇ + C v + ∂V/∂q − Σ_b J_bᵀ f_ext_b.
const Eigen::VectorXd& rnea(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                            const ConstVectorRef& vdot, const std::vector<math::SpatialForce>& f_ext_B);

/// Bias term b(q, v) = C(q,v) v + ∂V/∂q(q) = rnea(q, v, 0) [N·m or N], so that the equations of
/// motion read M v̇ + b = τ. (In "C v − g" notation, g(q) = −∂V/∂q is the generalized gravity
/// force.) Writes and returns ws.bias (n_v).
const Eigen::VectorXd& bias_forces(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                   const ConstVectorRef& v);

/// Generalized gravity term ∂V/∂q(q) = rnea(q, 0, 0). Writes and returns ws.gravity (n_v).
const Eigen::VectorXd& generalized_gravity(const Model& model, Workspace& ws, const ConstVectorRef& q);

}  // namespace coulomb::multibody
