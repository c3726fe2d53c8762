#include "coulomb/contact/contact_set.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include "../util/format.h"

namespace coulomb::contact {

namespace {


// `what` is a C string so that the checks that pass (every contact, every step) build no string.
void check(bool ok, const geometry::Geometry& a, const geometry::Geometry& b, const char* what, double value) {
  if (!ok)
    throw std::invalid_argument("contact between '" + a.name + "' and '" + b.name + "': " + what + ", got " +
                                util::format_number(value));
}

}  // namespace

PairMaterial combine_materials(const geometry::Geometry& a, const geometry::Geometry& b,
                               const ContactDefaults& defaults) {
  const geometry::ContactMaterial& ma = a.material;
  const geometry::ContactMaterial& mb = b.material;
  for (const auto* m : {&ma, &mb}) {
    if (m->mu) check(*m->mu >= 0.0 && std::isfinite(*m->mu), a, b, "friction coefficient mu must be >= 0", *m->mu);
    if (m->stiffness) check(*m->stiffness > 0.0, a, b, "stiffness must be > 0 (inf for rigid)", *m->stiffness);
    if (m->dissipation_time)
      check(*m->dissipation_time >= 0.0 && std::isfinite(*m->dissipation_time), a, b,
            "dissipation_time must be finite and >= 0", *m->dissipation_time);
    if (m->hunt_crossley_dissipation)
      check(*m->hunt_crossley_dissipation >= 0.0 && std::isfinite(*m->hunt_crossley_dissipation), a, b,
            "hunt_crossley_dissipation must be finite and >= 0", *m->hunt_crossley_dissipation);
    if (m->stiction_tolerance)
      check(*m->stiction_tolerance > 0.0 && std::isfinite(*m->stiction_tolerance), a, b,
            "stiction_tolerance must be finite and > 0", *m->stiction_tolerance);
  }
  check(defaults.mu >= 0.0 && std::isfinite(defaults.mu), a, b, "default mu must be >= 0", defaults.mu);
  check(defaults.stiffness > 0.0 && std::isfinite(defaults.stiffness), a, b, "default stiffness must be finite and > 0",
        defaults.stiffness);
  check(defaults.dissipation_time >= 0.0 && std::isfinite(defaults.dissipation_time), a, b,
        "default dissipation_time must be finite and >= 0", defaults.dissipation_time);
  check(defaults.hunt_crossley_dissipation >= 0.0 && std::isfinite(defaults.hunt_crossley_dissipation), a, b,
        "default hunt_crossley_dissipation must be finite and >= 0", defaults.hunt_crossley_dissipation);
  check(defaults.stiction_tolerance > 0.0 && std::isfinite(defaults.stiction_tolerance), a, b,
        "default stiction_tolerance must be finite and > 0", defaults.stiction_tolerance);

  PairMaterial m;
  // Friction.
  if (ma.mu && mb.mu)
    m.mu = *ma.mu + *mb.mu > 0.0 ? 2.0 * *ma.mu * *mb.mu / (*ma.mu + *mb.mu) : 0.0;
  else
    m.mu = ma.mu ? *ma.mu : (mb.mu ? *mb.mu : defaults.mu);
  // Stiffness.
  const double k_a = ma.stiffness.value_or(defaults.stiffness), k_b = mb.stiffness.value_or(defaults.stiffness);
  if (ma.stiffness && mb.stiffness) {
    check(std::isfinite(k_a) || std::isfinite(k_b), a, b, "at least one side must have a finite stiffness", k_a);
    if (!std::isfinite(k_a)) m.stiffness = k_b;
    else if (!std::isfinite(k_b)) m.stiffness = k_a;
    else m.stiffness = k_a * k_b / (k_a + k_b);  // springs in series
  } else {
    m.stiffness = ma.stiffness ? k_a : (mb.stiffness ? k_b : defaults.stiffness);
  }
  // Dissipation time.
  if (ma.dissipation_time && mb.dissipation_time) {
    const double tau_a = *ma.dissipation_time, tau_b = *mb.dissipation_time;
    if (!std::isfinite(k_a)) m.dissipation_time = tau_b;
    else if (!std::isfinite(k_b)) m.dissipation_time = tau_a;
    else m.dissipation_time = (tau_a * k_b + tau_b * k_a) / (k_a + k_b);  // compliance-weighted
  } else {
    m.dissipation_time = ma.dissipation_time ? *ma.dissipation_time
                                             : (mb.dissipation_time ? *mb.dissipation_time : defaults.dissipation_time);
  }
  // Hunt–Crossley dissipation: compliance-weighted like τ_d.
  if (ma.hunt_crossley_dissipation && mb.hunt_crossley_dissipation) {
    const double d_a = *ma.hunt_crossley_dissipation, d_b = *mb.hunt_crossley_dissipation;
    if (!std::isfinite(k_a)) m.hunt_crossley_dissipation = d_b;
    else if (!std::isfinite(k_b)) m.hunt_crossley_dissipation = d_a;
    else m.hunt_crossley_dissipation = (d_a * k_b + d_b * k_a) / (k_a + k_b);
  } else {
    m.hunt_crossley_dissipation = ma.hunt_crossley_dissipation
                                      ? *ma.hunt_crossley_dissipation
                                      : (mb.hunt_crossley_dissipation ? *mb.hunt_crossley_dissipation
                                                                      : defaults.hunt_crossley_dissipation);
  }
  // Stiction tolerance: the stricter (smaller) side.
  if (ma.stiction_tolerance && mb.stiction_tolerance)
    m.stiction_tolerance = std::min(*ma.stiction_tolerance, *mb.stiction_tolerance);
  else
    m.stiction_tolerance = ma.stiction_tolerance ? *ma.stiction_tolerance
                                                 : (mb.stiction_tolerance ? *mb.stiction_tolerance
                                                                          : defaults.stiction_tolerance);
  return m;
}

math::Matrix3 contact_frame(const math::Vector3& n_W) {
  // x: the world axis least aligned with n, made orthogonal to n (deterministic, continuous
  // except where the choice of axis switches); y = z × x.
  int axis = 0;
  const math::Vector3 a = n_W.cwiseAbs();
  if (a.y() < a[axis]) axis = 1;
  if (a.z() < a[axis]) axis = 2;
  math::Vector3 x = math::Vector3::Unit(axis) - n_W[axis] * n_W;
  x.normalize();
  math::Matrix3 R;
  R.col(0) = x;
  R.col(1) = n_W.cross(x);
  R.col(2) = n_W;
  return R;
}

void gather_contacts(const geometry::CollisionWorld& world, const ContactDefaults& defaults, ContactSet& set) {
  thread_local std::vector<geometry::ContactPoint> points;
  world.compute_contacts(points);
  const auto& geometries = world.geometries();
  set.contacts.resize(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const geometry::ContactPoint& p = points[i];
    const geometry::Geometry& a = geometries[p.geometry_a];
    const geometry::Geometry& b = geometries[p.geometry_b];
    Contact& c = set.contacts[i];
    c.geometry_a = p.geometry_a;
    c.geometry_b = p.geometry_b;
    c.body_a = a.body;
    c.body_b = b.body;
    c.p_W = p.p_W;
    c.n_W = p.n_W;
    c.phi = p.phi;
    c.R_WC = contact_frame(p.n_W);
    c.material = combine_materials(a, b, defaults);
  }
}

}  // namespace coulomb::contact
