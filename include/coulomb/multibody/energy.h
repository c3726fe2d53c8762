// Energy, centre of mass and momentum of the whole model.
#pragma once

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::multibody {

/// Kinetic energy ½ vᵀ M(q) v [J], summed body by body. Runs forward_kinematics(q, v).
double kinetic_energy(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v);

/// Gravitational potential energy −Σ m_b g·p_WBcm [J], zero for a mass at the world origin;
/// links welded to the world are constant and excluded. Runs forward_kinematics(q).
double potential_energy(const Model& model, Workspace& ws, const ConstVectorRef& q);

/// Centre of mass of all links (including those welded to the world), world frame [m].
/// Runs forward_kinematics(q). Returns the origin for a massless model.
math::Vector3 center_of_mass(const Model& model, Workspace& ws, const ConstVectorRef& q);

/// Spatial momentum of all moving bodies about the world origin, world coordinates
/// [N·m·s, N·s]. Runs forward_kinematics(q, v).
math::SpatialForce spatial_momentum(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                    const ConstVectorRef& v);

}  // namespace coulomb::multibody
