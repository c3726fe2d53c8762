// Generalized momentum and the equations of motion in momentum form.
//
// With p = M(q) v the generalized momentum (conjugate to the model's velocities v), the
// equations of motion M v̇ + C(q, v) v + ∂V/∂q = τ read
//     ṗ = τ + β(q, v),   β = Ṁ(q, v) v − C(q, v) v − ∂V/∂q,
// where the velocity-product part γ = Ṁ v − C v is, joint by joint (body coordinates,
// h_i = composite spatial momentum of body i's subtree, V_i its body's spatial velocity):
//     γ_i = Ṡ_iᵀ h_i − S_iᵀ (V_i ×* h_i)
// (for 1-dof joints Ṡ_i = 0; for a floating joint Ṡ_iᵀ h = [R_JB (ω_JB × h_τ); R_JB (ω_JB × h_f)],
// for a ball joint its first three rows R_JB (ω_JB × h_τ)).
// For a floating joint attached to the world its rows of p are [L_O; P], the angular momentum
// of its subtree about the body origin O and the linear momentum, in the joint frame, and
// γ = [−v_O × P; 0]. The momentum-form time stepping of the simulator (docs/sap.md, "Stage 1
// in momentum form") is built on these two quantities.
#pragma once

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// p = M(q) v into ws.momentum (n_v) [kg·m²/s, kg·m/s by coordinate type] and
/// β(q, v) = Ṁ v − C v − ∂V/∂q into ws.momentum_bias (n_v) [N·m, N], under model.gravity().
/// One forward and one backward pass, O(n_bodies) (the composite momenta h_i, no mass matrix).
/// Also fills ws.X_PB, ws.X_WB, ws.R_JB, ws.V_B and ws.F_B (composite momenta h_i, body
/// coordinates), and uses the aba scratch ws.c and ws.pA.
/// q: n_q, v: n_v. Joint damping and springs are not included (force laws of the caller).
/// with_bias = false computes p alone (the same bits), leaving ws.momentum_bias and ws.pA as
/// they were: about half the work (the simulator's p₀ = M(q₀) v₀ of implicit Euler).
/// No allocation.
void generalized_momentum(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                          bool with_bias = true);

}  // namespace coulomb::multibody
