// The configuration manifold: the kinematic map q̇ = N(q) v, integration of positions with the
// quaternion exponential, differences of configurations, and random configurations.
#pragma once

#include <random>

#include "coulomb/multibody/model.h"

namespace coulomb::multibody {

using ConstVectorRef = Eigen::Ref<const Eigen::VectorXd>;

/// N(q), n_q × n_v, with q̇ = N(q) v. 1 for 1-dof joints; for a floating joint (velocities in
/// the joint frame J) ṗ_JB = v and q̇_quat = ½ (0, ω) ⊗ q; a ball joint as the floating joint's
/// rotation. N must be n_q × n_v.
void kinematic_map(const Model& model, const ConstVectorRef& q, Eigen::Ref<Eigen::MatrixXd> N);

/// q̇ = N(q) v (n_q). qdot must have n_q entries.
void velocity_to_qdot(const Model& model, const ConstVectorRef& q, const ConstVectorRef& v,
                      Eigen::Ref<Eigen::VectorXd> qdot);

/// q_next = q ⊕ v·dt on the configuration manifold: q_j + v_j dt for 1-dof joints; for a
/// floating joint p += dt v and quat ← exp(½ ω dt) ⊗ quat (ω in the joint frame, exact for a
/// constant angular velocity), renormalized to unit norm; a ball joint's quaternion likewise.
/// dt [s] may be negative. q_next may alias q. Sizes: n_q, n_v, n_q.
void integrate(const Model& model, const ConstVectorRef& q, const ConstVectorRef& v, double dt,
               Eigen::Ref<Eigen::VectorXd> q_next);

/// The inverse of integrate with dt = 1: dq (n_v) such that integrate(q0, dq, 1) == q1.
void difference(const Model& model, const ConstVectorRef& q0, const ConstVectorRef& q1,
                Eigen::Ref<Eigen::VectorXd> dq);

/// Renormalizes every floating- and ball-joint quaternion in q to unit norm (and w ≥ 0).
void normalize_configuration(const Model& model, Eigen::Ref<Eigen::VectorXd> q);

/// A random configuration: 1-dof joints uniform within their limits (within [−π, π] or
/// [−1, 1] m where unlimited), floating joints with a uniform random rotation and a position in
/// [−1, 1]³ m, ball joints with a uniform random rotation.
Eigen::VectorXd random_configuration(const Model& model, std::mt19937& rng);

}  // namespace coulomb::multibody
