// Models built programmatically for the multibody tests (independent of the URDF loader).
#pragma once

#include <cmath>
#include <random>
#include <string>

#include "coulomb/multibody.h"

namespace coulomb::testing {

using math::Matrix3;
using math::SpatialInertia;
using math::Transform;
using math::Vector3;
using multibody::JointSpec;
using multibody::JointType;

inline JointSpec revolute(const std::string& name, const Vector3& axis, const Transform& X_PJ = {}) {
  JointSpec j;
  j.name = name;
  j.type = JointType::kRevolute;
  j.axis = axis;
  j.X_PJ = X_PJ;
  return j;
}

inline JointSpec prismatic(const std::string& name, const Vector3& axis, const Transform& X_PJ = {}) {
  JointSpec j = revolute(name, axis, X_PJ);
  j.type = JointType::kPrismatic;
  return j;
}

inline JointSpec floating(const std::string& name) {
  JointSpec j;
  j.name = name;
  j.type = JointType::kFloating;
  return j;
}

inline JointSpec fixed(const std::string& name, const Transform& X_PJ = {}) {
  JointSpec j;
  j.name = name;
  j.type = JointType::kFixed;
  j.X_PJ = X_PJ;
  return j;
}

inline Transform translation(double x, double y, double z) { return {Matrix3::Identity(), Vector3(x, y, z)}; }

/// Single pendulum: revolute about y at the origin, point-like bob of mass m with rotational
/// inertia Iyy about its centre at distance l below the pivot (z down at q = 0).
inline multibody::Model make_pendulum(double m, double l, double Iyy) {
  multibody::ModelBuilder b("pendulum");
  const Matrix3 I = Vector3(Iyy, Iyy, Iyy).asDiagonal();
  b.add_link("bob", "world", revolute("pivot", Vector3::UnitY()),
             SpatialInertia::FromCenterOfMass(m, Vector3(0, 0, -l), I));
  return b.build();
}

/// Planar double pendulum about y: link i has mass m_i, length l_i, centre of mass at lc_i along
/// −z of its frame and moment of inertia I_i about its centre (y axis; the other axes get the
/// same value so that the inertia is physical).
struct DoublePendulum {
  double m1 = 1.0, l1 = 1.0, lc1 = 0.5, I1 = 1.0 / 12.0;
  double m2 = 1.5, l2 = 0.8, lc2 = 0.4, I2 = 1.5 * 0.64 / 12.0;
  multibody::Model build() const {
    multibody::ModelBuilder b("double_pendulum");
    b.add_link("link1", "world", revolute("joint1", Vector3::UnitY()),
               SpatialInertia::FromCenterOfMass(m1, Vector3(0, 0, -lc1), Vector3(I1, I1, I1).asDiagonal()));
    b.add_link("link2", "link1", revolute("joint2", Vector3::UnitY(), translation(0, 0, -l1)),
               SpatialInertia::FromCenterOfMass(m2, Vector3(0, 0, -lc2), Vector3(I2, I2, I2).asDiagonal()));
    return b.build();
  }
};

/// A random physical rotational inertia about the centre of mass (SPD, triangle inequality).
inline Matrix3 random_rotational_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.05, 1.0);
  const Vector3 d(u(rng), u(rng), u(rng));
  // Principal moments from a positive mass distribution: I1 = b + c, I2 = a + c, I3 = a + b.
  const Vector3 principal(d.y() + d.z(), d.x() + d.z(), d.x() + d.y());
  std::normal_distribution<double> n(0.0, 1.0);
  const Matrix3 R = Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized().toRotationMatrix();
  return R * principal.asDiagonal() * R.transpose();
}

inline Transform random_transform(std::mt19937& rng, double scale = 0.5) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::Quaterniond quat(n(rng), n(rng), n(rng), n(rng));
  quat.normalize();
  return {quat.toRotationMatrix(), Vector3(u(rng), u(rng), u(rng))};
}

/// A random tree of `num_links` links: revolute and prismatic joints with random axes and
/// placements, some fixed links (fused), a floating root when `floating_root`, and a second
/// free-floating tree when `second_tree`. With armature_scale > 0 every joint gets an armature
/// uniform in [0, armature_scale] (drawn after the tree, so the tree is the same as without).
inline multibody::Model make_random_tree(std::mt19937& rng, int num_links, bool floating_root, bool second_tree,
                                         double armature_scale = 0.0) {
  multibody::ModelBuilder b("random_tree");
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> n(0.0, 1.0);
  auto random_inertia = [&]() {
    std::uniform_real_distribution<double> um(0.5, 2.0), uc(-0.2, 0.2);
    return SpatialInertia::FromCenterOfMass(um(rng), Vector3(uc(rng), uc(rng), uc(rng)),
                                            random_rotational_inertia(rng));
  };
  std::vector<std::string> links;
  std::vector<JointSpec> specs;
  std::vector<std::string> parents;
  std::vector<SpatialInertia> inertias;
  // Records a link; called like ModelBuilder::add_link so that the random draws happen in the same
  // order as when the links were added directly.
  auto add = [&](const std::string& name, const std::string& parent, const JointSpec& j, const SpatialInertia& I) {
    links.push_back(name);
    parents.push_back(parent);
    specs.push_back(j);
    inertias.push_back(I);
  };
  add("link0", "world", floating_root ? floating("root") : revolute("j0", Vector3(n(rng), n(rng), n(rng))),
      random_inertia());
  for (int i = 1; i < num_links; ++i) {
    const std::string name = "link" + std::to_string(i);
    const std::string parent = links[static_cast<size_t>(u(rng) * links.size()) % links.size()];
    const double pick = u(rng);
    JointSpec j;
    if (pick < 0.6)
      j = revolute("j" + std::to_string(i), Vector3(n(rng), n(rng), n(rng)), random_transform(rng));
    else if (pick < 0.85)
      j = prismatic("j" + std::to_string(i), Vector3(n(rng), n(rng), n(rng)), random_transform(rng));
    else
      j = fixed("j" + std::to_string(i), random_transform(rng));
    add(name, parent, j, random_inertia());
  }
  if (second_tree) add("free_box", "world", floating("free_box_joint"), random_inertia());
  if (armature_scale > 0.0)
    for (JointSpec& j : specs) j.armature = armature_scale * u(rng);
  for (size_t i = 0; i < specs.size(); ++i) b.add_link(links[i], parents[i], specs[i], inertias[i]);
  return b.build();
}

inline Eigen::VectorXd random_vector(std::mt19937& rng, int n, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::VectorXd x(n);
  for (int i = 0; i < n; ++i) x[i] = u(rng);
  return x;
}

/// max |a − b| / max(1, max |b|).
inline double relative_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

}  // namespace coulomb::testing
