// Forward kinematics: poses, spatial velocities and spatial accelerations of every body.
#pragma once

#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::multibody {

using ConstVectorRef = Eigen::Ref<const Eigen::VectorXd>;

/// Poses: fills ws.X_PB and ws.X_WB for every body. q: n_q (see joint.h for the coordinates).
/// Sizes are not checked here (Model::check_configuration validates input); no allocation.
void forward_kinematics(const Model& model, Workspace& ws, const ConstVectorRef& q);

/// Poses and velocities: additionally fills ws.V_B (spatial velocity of B in W, expressed in B).
/// v: n_v.
void forward_kinematics(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v);

/// Poses, velocities and accelerations: additionally fills ws.A_B (spatial acceleration of B in
/// W, expressed in B, without gravity; Featherstone 2008 Eq. 5.7–5.8). vdot: n_v.
void forward_kinematics(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v,
                        const ConstVectorRef& vdot);

}  // namespace coulomb::multibody
