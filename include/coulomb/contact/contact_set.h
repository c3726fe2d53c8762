// ContactSet: the contact description every contact method consumes (SAP, the L-stable
// first-order solver, inverse dynamics).
//
// For contact i: bodies A and B, the point p_i, the unit normal n̂_i from A into B, the
// signed distance φ_i (< 0 overlapping), a contact frame C_i whose z-axis is n̂_i, and the
// combined material. The contact Jacobian maps generalized velocities v (n_v) to the relative
// velocity of B with respect to A at p_i, expressed in C_i, tangential components first and
// normal last: v_c,i = [v_t1, v_t2, v_n] = J_i v, with v_n > 0 separating (Castro et al. §II).
#pragma once

#include <vector>

#include "coulomb/contact/contact_approximation.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::contact {

/// Material defaults for every pair (the scene's `contact:` block).
struct ContactDefaults {
  double mu = 1.0;                ///< Coulomb friction coefficient
  double stiffness = 1.0e7;        ///< k [N/m]
  double dissipation_time = 0.01;  ///< τ_d [s] (approximation sap)
  double hunt_crossley_dissipation = 10.0;  ///< d [s/m] (approximations similar, lagged; docs/contact.md)
  double stiction_tolerance = 1.0e-4;       ///< v_s [m/s] (approximations similar, lagged)
  /// The discrete contact model of the whole scene (top-level `contact_approximation`).
  /// Lagged by default (docs/contact.md, "Default parameters"; Drake's plant default too).
  ContactApproximation approximation = ContactApproximation::kLagged;
};

/// The combined parameters of one contact pair.
struct PairMaterial {
  double mu = 1.0;
  double stiffness = 1.0e7;
  double dissipation_time = 0.01;
  double hunt_crossley_dissipation = 10.0;  ///< d [s/m]
  double stiction_tolerance = 1.0e-4;       ///< v_s [m/s]
};

/// Combination rules (docs/contact.md). The scene's `defaults` are the PAIR's values when
/// neither geometry overrides a field; when exactly one does, its value is the pair's; when both
/// do, they combine:
///  - friction μ = 2 μ_a μ_b / (μ_a + μ_b) (0 when both are 0);
///  - stiffness: springs in series, k = k_a k_b / (k_a + k_b) (an infinite side is rigid: k is
///    the other side's);
///  - dissipation time: compliance-weighted, τ_d = (τ_a k_b + τ_b k_a) / (k_a + k_b), with each
///    side's stiffness (its own or the default), so the softer side dominates;
///  - Hunt–Crossley dissipation: compliance-weighted like τ_d, d = (d_a k_b + d_b k_a) / (k_a + k_b)
///    (an infinite side is rigid: d is the other side's);
///  - stiction tolerance: the smaller, v_s = min(v_s,a, v_s,b) (the stricter side).
/// Throws std::invalid_argument naming both geometries for μ < 0, k ≤ 0, τ_d < 0, d < 0, v_s ≤ 0
/// or NaN.
PairMaterial combine_materials(const geometry::Geometry& a, const geometry::Geometry& b,
                               const ContactDefaults& defaults);

struct Contact {
  int body_a = 0, body_b = 0;           ///< bodies of the Model
  int geometry_a = -1, geometry_b = -1; ///< indices into the CollisionWorld
  math::Vector3 p_W = math::Vector3::Zero();  ///< contact point [m]
  math::Vector3 n_W = math::Vector3::UnitZ(); ///< unit normal from A into B
  double phi = 0.0;                     ///< signed distance [m]
  math::Matrix3 R_WC = math::Matrix3::Identity();  ///< contact frame; column 2 is n_W
  PairMaterial material;
};

/// The contacts at one configuration.
struct ContactSet {
  std::vector<Contact> contacts;
  int size() const { return static_cast<int>(contacts.size()); }
  void clear() { contacts.clear(); }
};

/// A right-handed frame R_WC with z = n (unit), x and y chosen deterministically from n.
math::Matrix3 contact_frame(const math::Vector3& n_W);

/// Fills `set` from the world's current contact points (CollisionWorld::update_poses must have
/// been called) with combined materials. Preserves the world's deterministic order.
void gather_contacts(const geometry::CollisionWorld& world, const ContactDefaults& defaults, ContactSet& set);

}  // namespace coulomb::contact
