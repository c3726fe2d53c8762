#include "coulomb/scene/scene.h"

#include <cmath>

#include <Eigen/Eigenvalues>

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
  // M per tree (linear in the number of trees; the dense n_v × n_v M of 2,000 free bodies is
  // 1.15 GB, issue 18).
  const multibody::TreeMassMatrix& M = multibody::crba_trees(model, ws, scene.q0);
  const Eigen::VectorXd& bias = multibody::bias_forces(model, ws, scene.q0, scene.v0);
  for (int t = 0; t < M.num_trees(); ++t) {
    const multibody::TreeMassMatrix::Tree& tree = M.tree(t);
    const int root = tree.first_body, first = tree.v_start, n = tree.nv;
    const multibody::Body& body = model.body(root);
    if (n == 0) continue;
    const Eigen::MatrixXd& A = M.block(t);
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
