#include "coulomb/contact/contact_set.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace coulomb::contact {

namespace {

std::string fmt(double x) {
  std::ostringstream os;
  os.precision(10);
  os << x;
  return os.str();
}

void check(bool ok, const geometry::Geometry& a, const geometry::Geometry& b, const std::string& what, double value) {
  if (!ok)
    throw std::invalid_argument("contact between '" + a.name + "' and '" + b.name + "': " + what + ", got " +
                                fmt(value));
}

}  // namespace

PairMaterial combine_materials(const geometry::Geometry& a, const geometry::Geometry& b,
                               const ContactDefaults& defaults) {
  const double mu_a = a.material.mu.value_or(defaults.mu), mu_b = b.material.mu.value_or(defaults.mu);
  const double k_a = a.material.stiffness.value_or(defaults.stiffness);
  const double k_b = b.material.stiffness.value_or(defaults.stiffness);
  const double tau_a = a.material.dissipation_time.value_or(defaults.dissipation_time);
  const double tau_b = b.material.dissipation_time.value_or(defaults.dissipation_time);
  for (double mu : {mu_a, mu_b}) check(mu >= 0.0 && std::isfinite(mu), a, b, "friction coefficient mu must be >= 0", mu);
  for (double k : {k_a, k_b}) check(k > 0.0, a, b, "stiffness must be > 0 (inf for rigid)", k);
  for (double t : {tau_a, tau_b})
    check(t >= 0.0 && std::isfinite(t), a, b, "dissipation_time must be finite and >= 0", t);
  check(std::isfinite(k_a) || std::isfinite(k_b), a, b, "at least one side must have a finite stiffness", k_a);

  PairMaterial m;
  m.mu = mu_a + mu_b > 0.0 ? 2.0 * mu_a * mu_b / (mu_a + mu_b) : 0.0;
  if (!std::isfinite(k_a)) {  // a rigid: the pair is as stiff and as damped as b
    m.stiffness = k_b;
    m.dissipation_time = tau_b;
  } else if (!std::isfinite(k_b)) {
    m.stiffness = k_a;
    m.dissipation_time = tau_a;
  } else {
    m.stiffness = k_a * k_b / (k_a + k_b);                      // springs in series
    m.dissipation_time = (tau_a * k_b + tau_b * k_a) / (k_a + k_b);  // compliance-weighted
  }
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
