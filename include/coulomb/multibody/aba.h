// Articulated-body algorithm (Featherstone 2008, Table 7.1): forward dynamics in O(n).
#pragma once

#include <vector>

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// v̇ = M(q)⁻¹ (τ − b(q, v)) [rad/s² or m/s²]. q: n_q, v: n_v, tau: n_v. Writes and returns
/// ws.vdot (n_v); also fills ws.X_PB, ws.V_B and ws.A_gravity_B (acceleration minus gravity).
/// Throws std::runtime_error naming the joint if an articulated inertia is singular (a moving
/// subtree without mass). No allocation.
const Eigen::VectorXd& aba(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                           const ConstVectorRef& tau);

/// As above with external wrenches f_ext_B[b] on body b (in body b's frame; entry 0 ignored).
const Eigen::VectorXd& aba(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                           const ConstVectorRef& tau, const std::vector<math::SpatialForce>& f_ext_B);

/// Forward dynamics; the same as aba().
inline const Eigen::VectorXd& forward_dynamics(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                               const ConstVectorRef& v, const ConstVectorRef& tau) {
  return aba(model, ws, q, v, tau);
}

}  // namespace coulomb::multibody
