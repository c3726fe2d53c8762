// The kinematics of a scene bilateral constraint (scene::BilateralConstraint) at one
// configuration: its value φ = g(q) and its Jacobian J = ∂φ̇/∂v (rows × n_v), from the point and
// frame Jacobians of multibody/frame_jacobian.h.
//
// With F fixed to body A (X_AF) and M fixed to body B (X_BM), d = p_WM − p_WF (world), v_F and
// v_M the velocities of the two points and ω_A, ω_B the bodies' angular velocities (world):
//   ball       φ = d                                   J v = v_M − v_F            (exact)
//   distance   φ = |d| − length                        J v = d̂ · (v_M − v_F)      (exact)
//   weld       φ = [R_WF log(R_FM); d]                 J v = [ω_B − ω_A; v_M − v_F]
//   revolute   φ = [t_i · (â_F × â_M), i = 1, 2; d]    J v = [t_i · (ω_B − ω_A); v_M − v_F]
//   prismatic  φ = [R_WF log(R_FM); t_i · d, i = 1, 2] J v = [ω_B − ω_A; t_i · (v_M − v_A(p_WM))]
// where â_F = R_WF axis_F, â_M = R_WM axis_F (the joint axis carried by each frame), t_1, t_2 a
// right-handed basis of the plane ⊥ â_F fixed in F, and v_A(p_WM) the velocity of the point of
// A that coincides with M (so that d/dt (t_i · d) = t_i · (v_M − v_A(p_WM)) exactly). The
// rotational rows' Jacobians are exact at φ = 0 (d/dt log R = ω at the identity) and first-order
// accurate near it, which is all a step that drives φ to 0 needs.
#pragma once

#include <Eigen/Core>

#include "coulomb/multibody/frame_jacobian.h"
#include "coulomb/scene/scene.h"

namespace coulomb::constraints {

/// Scratch for bilateral_kinematics: two 6 × n_v Jacobians (sized on first use).
struct BilateralKinematicsScratch {
  Eigen::MatrixXd J_A, J_B;
};

/// φ (num_rows(c.type)) and J (num_rows × n_v) of constraint `c` at the configuration whose
/// poses are in `ws` (forward_kinematics(model, ws, q) called). Rows as in the table above.
/// Allocates nothing once `scratch` is sized. Throws std::invalid_argument if a body index is
/// outside the model or phi / J have the wrong size.
void bilateral_kinematics(const multibody::Model& model, const multibody::Workspace& ws,
                          const scene::BilateralConstraint& c, BilateralKinematicsScratch& scratch,
                          Eigen::Ref<Eigen::VectorXd> phi, Eigen::Ref<Eigen::MatrixXd> J);

/// A unit vector pair (t1, t2) with (t1, t2, axis) right-handed, for a unit `axis`.
void perpendicular_basis(const math::Vector3& axis, math::Vector3& t1, math::Vector3& t2);

}  // namespace coulomb::constraints
