// Downstream smoke test of an installed coulomb: builds a planar two-link arm with
// ModelBuilder, computes its mass matrix (CRBA) and gravity torques (RNEA) and compares them
// with the textbook closed forms. Exits non-zero on any mismatch.
#include <cmath>
#include <cstdio>

#include "coulomb/multibody.h"

namespace mb = coulomb::multibody;
namespace cm = coulomb::math;

namespace {

int failures = 0;

void expect_near(const char* what, double actual, double expected) {
  const double tol = 1e-12 * (1.0 + std::abs(expected));
  const bool ok = std::abs(actual - expected) <= tol;
  std::printf("%-10s coulomb % .15f  hand % .15f  %s\n", what, actual, expected, ok ? "ok" : "MISMATCH");
  if (!ok) ++failures;
}

}  // namespace

int main() {
  // Link i: mass m_i, centre of mass at (c_i, 0, 0) in its frame, I_zz about the COM = J_i.
  // Both joints rotate about z; joint 2 sits at (l1, 0, 0) in link 1. Gravity along −y so
  // that it acts in the plane of motion.
  const double m1 = 2.0, c1 = 0.3, l1 = 0.7, J1 = 0.05;
  const double m2 = 1.5, c2 = 0.25, J2 = 0.02;
  const double g = 9.81;

  mb::ModelBuilder builder("two_link");
  mb::JointSpec j1;
  j1.name = "shoulder";
  j1.type = mb::JointType::kRevolute;
  j1.axis = cm::Vector3::UnitZ();
  builder.add_link("link1", "world", j1,
                   cm::SpatialInertia::FromCenterOfMass(m1, cm::Vector3(c1, 0, 0),
                                                        cm::Vector3(0.01, 0.04, J1).asDiagonal()));
  mb::JointSpec j2;
  j2.name = "elbow";
  j2.type = mb::JointType::kRevolute;
  j2.X_PJ = cm::Transform(cm::Matrix3::Identity(), cm::Vector3(l1, 0, 0));
  j2.axis = cm::Vector3::UnitZ();
  builder.add_link("link2", "link1", j2,
                   cm::SpatialInertia::FromCenterOfMass(m2, cm::Vector3(c2, 0, 0),
                                                        cm::Vector3(0.005, 0.015, J2).asDiagonal()));
  mb::Model model = builder.build();
  model.set_gravity(cm::Vector3(0, -g, 0));

  if (model.nv() != 2 || model.nq() != 2) {
    std::printf("expected nq = nv = 2, got nq = %d, nv = %d\n", model.nq(), model.nv());
    return 1;
  }

  mb::Workspace ws(model);
  Eigen::VectorXd q(2);
  q << 0.4, -1.1;
  const Eigen::MatrixXd& M = mb::crba(model, ws, q);

  const double c = std::cos(q[1]);
  const double M11 = J1 + m1 * c1 * c1 + J2 + m2 * (l1 * l1 + c2 * c2 + 2 * l1 * c2 * c);
  const double M12 = J2 + m2 * (c2 * c2 + l1 * c2 * c);
  const double M22 = J2 + m2 * c2 * c2;
  expect_near("M(0,0)", M(0, 0), M11);
  expect_near("M(0,1)", M(0, 1), M12);
  expect_near("M(1,0)", M(1, 0), M12);
  expect_near("M(1,1)", M(1, 1), M22);

  // Gravity torques (v = v̇ = 0): τ = ∂V/∂q with V = g (m1 c1 sin q1 + m2 (l1 sin q1 + c2 sin(q1+q2))).
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(2);
  const Eigen::VectorXd& tau = mb::rnea(model, ws, q, zero, zero);
  const double s1 = std::cos(q[0]), s12 = std::cos(q[0] + q[1]);
  expect_near("tau(0)", tau[0], g * (m1 * c1 * s1 + m2 * (l1 * s1 + c2 * s12)));
  expect_near("tau(1)", tau[1], g * m2 * c2 * s12);

  if (failures) {
    std::printf("downstream: %d mismatch(es)\n", failures);
    return 1;
  }
  std::printf("downstream: installed coulomb OK\n");
  return 0;
}
