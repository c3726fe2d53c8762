#include "coulomb/scene/scene.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "coulomb/geometry/shape.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/multibody/workspace.h"
#include "../util/format.h"

namespace coulomb::scene {

const char* to_string(BilateralType type) {
  switch (type) {
    case BilateralType::kBall: return "ball";
    case BilateralType::kWeld: return "weld";
    case BilateralType::kDistance: return "distance";
    case BilateralType::kRevolute: return "revolute";
    case BilateralType::kPrismatic: return "prismatic";
  }
  return "unknown";
}

int num_rows(BilateralType type) {
  switch (type) {
    case BilateralType::kBall: return 3;
    case BilateralType::kWeld: return 6;
    case BilateralType::kDistance: return 1;
    case BilateralType::kRevolute: return 5;
    case BilateralType::kPrismatic: return 5;
  }
  return 0;
}

std::optional<InitialDynamicsProblem> check_initial_dynamics(const Scene& scene) {
  const multibody::Model& model = scene.model;
  if (model.nv() == 0 || scene.q0.size() != model.nq() || scene.v0.size() != model.nv()) return std::nullopt;
  multibody::Workspace ws(model);
  // Positions: every body and collision shape within ±kMaxShapeDimension (1e6 m) of the origin
  // at q0, the range of scene positions, whatever format placed it (a URDF <origin>, an MJCF
  // pos, an SDF pose; FCL's broadphase crashed on a shape at 1e308 m, and M overflows).
  multibody::forward_kinematics(model, ws, scene.q0);
  const auto beyond = [](const math::Vector3& p) { return !(p.cwiseAbs().maxCoeff() <= geometry::kMaxShapeDimension); };
  const auto at = [](const math::Vector3& p) { return util::format_point(p.x(), p.y(), p.z()) + " m"; };
  const std::string range = ": positions must lie within 1e6 m of the world origin (an <origin>, pos or pose too large)";
  for (int b = 1; b < model.num_bodies(); ++b)
    if (beyond(ws.X_WB[b].p))
      return InitialDynamicsProblem{model.body(b).tree, false,
                                    "body '" + model.body(b).name + "' is at " + at(ws.X_WB[b].p) +
                                        " in the world at the initial configuration" + range};
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.body < 0 || g.body >= model.num_bodies() || g.shape.type == geometry::ShapeType::kHalfSpace) continue;
    const math::Vector3 p_WG = ws.X_WB[g.body].R * g.X_BG.p + ws.X_WB[g.body].p;
    if (beyond(p_WG))
      return InitialDynamicsProblem{g.body == 0 ? 0 : model.body(g.body).tree, false,
                                    "collision shape '" + g.name + "' of body '" + model.body(g.body).name + "' is at " +
                                        at(p_WG) + " in the world at the initial configuration" + range};
  }
  // M per tree (linear in the number of trees; the dense n_v × n_v M of 2,000 free bodies is
  // 1.15 GB, issue 18).
  const multibody::TreeMassMatrix& M = multibody::crba_trees(model, ws, scene.q0);
  const Eigen::VectorXd bias = multibody::bias_forces(model, ws, scene.q0, scene.v0);
  const Eigen::VectorXd gravity = multibody::generalized_gravity(model, ws, scene.q0);
  Eigen::VectorXd damping = model.damping(), stiffness = Eigen::VectorXd::Zero(model.nv());
  for (const JointSpring& s : scene.springs) {
    if (s.v_index < 0 || s.v_index >= model.nv()) continue;
    damping[s.v_index] += s.damping;
    stiffness[s.v_index] += s.stiffness;
  }
  for (int t = 0; t < M.num_trees(); ++t) {
    const multibody::TreeMassMatrix::Tree& tree = M.tree(t);
    const int root = tree.first_body, first = tree.v_start, n = tree.nv;
    const multibody::Body& body = model.body(root);
    if (n == 0) continue;
    const Eigen::MatrixXd& A = M.block(t);
    // Masses, inertias or distances so large that M(q0) or the gravity forces overflow (a link
    // of 1e308 kg: m g is infinite), whatever the velocities.
    if (!A.allFinite() || !gravity.segment(first, n).allFinite()) {
      double largest_mass = 0.0;
      for (int b = root; b < tree.end_body; ++b) largest_mass = std::max(largest_mass, std::abs(model.body(b).inertia.mass));
      return InitialDynamicsProblem{root, false,
                                    "the " + std::string(A.allFinite() ? "gravity forces" : "mass matrix") +
                                        " of the tree rooted at body '" + body.name +
                                        "' at the initial configuration are not finite in double precision "
                                        "(largest body mass " + util::format_number(largest_mass) +
                                        " kg): masses, inertias or distances too large"};
    }
    if (body.joint.type == multibody::JointType::kFloating) {
      const Eigen::Matrix<double, 6, 6> I = A.block(body.joint.v_index - first, body.joint.v_index - first, 6, 6);
      double mass = 0.0;
      for (int b = root; b < tree.end_body; ++b) mass += model.body(b).inertia.mass;
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 6, 6>> eig(I, Eigen::EigenvaluesOnly);
      const double lo = eig.eigenvalues().minCoeff(), hi = eig.eigenvalues().maxCoeff();
      if (!(mass > 0.0) || !I.allFinite() || !(lo > 1e-12 * hi))
        return InitialDynamicsProblem{root, false,
                                      "the floating tree rooted at body '" + body.name + "' has total mass " +
                                          util::format_number(mass) + " kg and composite spatial inertia eigenvalues in [" +
                                          util::format_number(lo) + ", " + util::format_number(hi) +
                                          "]: a floating base needs positive mass and a positive definite inertia "
                                          "(give its links <inertial> mass and inertia)"};
    }
    // Every tree: A = M + (the implicit joint damping and spring terms, any positive amount
    // will do) must be positive definite, as SAP factors it; a DOF that moves no mass (a massless
    // welded chain, a prismatic joint to a massless link) leaves M singular.
    {
      Eigen::MatrixXd A_implicit = A;
      for (int k = 0; k < n; ++k) A_implicit(k, k) += std::max(0.0, damping[first + k]) + std::max(0.0, stiffness[first + k]);
      Eigen::LLT<Eigen::MatrixXd> llt(A_implicit);
      if (llt.info() != Eigen::Success) {
        std::string dof;
        for (int k = 0; k < n && dof.empty(); ++k)
          if (!(A_implicit(k, k) > 0.0)) dof = model.dof_names()[first + k];
        return InitialDynamicsProblem{root, false,
                                      "the mass matrix of the tree rooted at body '" + body.name +
                                          "' is singular at the initial configuration" +
                                          (dof.empty() ? std::string() : ": '" + dof + "' moves no mass") +
                                          " (give the links it moves <inertial> mass and inertia, or joint "
                                          "damping)"};
      }
    }
    const Eigen::VectorXd v = scene.v0.segment(first, n);
    const double kinetic = 0.5 * v.dot(A * v);
    if (!std::isfinite(kinetic) || !bias.segment(first, n).allFinite())
      return InitialDynamicsProblem{root, true,
                                    "the initial velocities of the tree rooted at body '" + body.name + "' (largest |v| " +
                                        util::format_number(v.cwiseAbs().maxCoeff()) + ") give kinetic energy " +
                                        util::format_number(kinetic) +
                                        " J: not finite in double precision (velocities are rad/s and m/s)"};
  }
  return std::nullopt;
}

}  // namespace coulomb::scene
