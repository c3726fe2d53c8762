#include "coulomb/multibody/energy.h"

namespace coulomb::multibody {

double kinetic_energy(const Model& model, Workspace& ws, const ConstVectorRef& q, const ConstVectorRef& v) {
  forward_kinematics(model, ws, q, v);
  double T = 0.0;
  for (int i = 1; i < model.num_bodies(); ++i) T += model.body(i).inertia.kinetic_energy(ws.V_B[i]);
  if (model.has_armature()) T += 0.5 * v.dot(model.armature().cwiseProduct(v));  // ½ vᵀ diag(armature) v
  return T;
}

double potential_energy(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  forward_kinematics(model, ws, q);
  double V = 0.0;
  for (int i = 1; i < model.num_bodies(); ++i) {
    const math::SpatialInertia& I = model.body(i).inertia;
    // m g·p_WBcm = g·(m p_WBo + R_WB h)
    V -= model.gravity().dot(I.mass * ws.X_WB[i].p + ws.X_WB[i].R * I.h);
  }
  return V;
}

math::Vector3 center_of_mass(const Model& model, Workspace& ws, const ConstVectorRef& q) {
  forward_kinematics(model, ws, q);
  math::Vector3 first_moment = math::Vector3::Zero();
  double mass = 0.0;
  for (int i = 0; i < model.num_bodies(); ++i) {  // includes links welded to the world (body 0)
    const math::SpatialInertia& I = model.body(i).inertia;
    first_moment += I.mass * ws.X_WB[i].p + ws.X_WB[i].R * I.h;
    mass += I.mass;
  }
  return mass > 0.0 ? math::Vector3(first_moment / mass) : math::Vector3::Zero();
}

math::SpatialForce spatial_momentum(const Model& model, Workspace& ws, const ConstVectorRef& q,
                                    const ConstVectorRef& v) {
  forward_kinematics(model, ws, q, v);
  math::SpatialForce h_W;
  for (int i = 1; i < model.num_bodies(); ++i) h_W += ws.X_WB[i].act(model.body(i).inertia * ws.V_B[i]);
  return h_W;
}

}  // namespace coulomb::multibody
