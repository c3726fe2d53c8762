// Frame and point Jacobians and the bias acceleration J̇ v.
//
// Precondition for every function here: forward_kinematics(model, ws, q) (poses) has been
// called for the configuration of interest; the *_time_derivative_product functions also need
// the velocities: forward_kinematics(model, ws, q, v). Nothing is allocated.
#pragma once

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// In which frame a 6 × n_v Jacobian expresses the spatial velocity [ω; v] it produces.
enum class ReferenceFrame {
  kWorld,              ///< spatial velocity in world coordinates, v = velocity of the point at W's origin
  kLocalWorldAligned,  ///< ω and the velocity of point Q, both in world coordinates
  kLocal,              ///< ω and the velocity of point Q, both in the body's (frame's) coordinates
};

/// J (6 × n_v, rows [ω; v]) of the point Q fixed to `body` at p_BQ (body coordinates, m):
/// J v is the spatial velocity of the body measured at Q, expressed per `rf`.
/// Columns of joints that are not ancestors of `body` are zero. J must be 6 × n_v.
void body_point_jacobian(const Model& model, const Workspace& ws, int body, const math::Vector3& p_BQ,
                         ReferenceFrame rf, Eigen::Ref<Eigen::MatrixXd> J);

/// Frame Jacobian (6 × n_v) of frame `frame` (its origin is the point; kLocal uses the frame's
/// orientation). J must be 6 × n_v.
void frame_jacobian(const Model& model, const Workspace& ws, int frame, ReferenceFrame rf,
                    Eigen::Ref<Eigen::MatrixXd> J);

/// Translational Jacobian (3 × n_v) of the point Q fixed to `body` at p_BQ, world coordinates:
/// J v = ṗ_WQ [m/s]. J must be 3 × n_v.
void point_jacobian(const Model& model, const Workspace& ws, int body, const math::Vector3& p_BQ,
                    Eigen::Ref<Eigen::MatrixXd> J);

/// Accumulates R · J_Q into J, where J_Q (3 × n_v) is the world-aligned translational Jacobian
/// of the point of `body` located at p_WQ (world coordinates, m): for every joint k on the path
/// from `body` to its root, J.col(v_index(k) + c − column_offset) += R · (velocity of that point
/// per unit rate of the joint's c-th coordinate). J has 3 rows; R is 3 × 3 (e.g. ±R_WCᵀ to get
/// contact-frame rows); column_offset lets J cover only a tree's velocity range. Throws
/// std::invalid_argument if J does not have 3 rows or a column of the path falls outside it.
void accumulate_point_jacobian(const Model& model, const Workspace& ws, int body, const math::Vector3& p_WQ,
                               const math::Matrix3& R, Eigen::Ref<Eigen::MatrixXd> J, int column_offset = 0);

/// J̇(q, v) v (6-vector, [rad/s², m/s²]) for body_point_jacobian(body, p_BQ, rf): the
/// acceleration the Jacobian's output has when v̇ = 0, so that d/dt(J v) = J v̇ + J̇ v.
/// kLocalWorldAligned gives the classical acceleration of Q; kLocal the spatial acceleration at
/// Q in body coordinates; kWorld the spatial acceleration in world coordinates.
math::Vector6 body_point_jacobian_time_derivative_product(const Model& model, const Workspace& ws, int body,
                                                          const math::Vector3& p_BQ, ReferenceFrame rf);

/// J̇ v for frame_jacobian(frame, rf).
math::Vector6 frame_jacobian_time_derivative_product(const Model& model, const Workspace& ws, int frame,
                                                     ReferenceFrame rf);

}  // namespace coulomb::multibody
