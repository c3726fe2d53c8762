// Rigid-body dynamics of a URDF at one state: mass matrix, bias forces, RNEA and ABA.
// Usage: example_dynamics MODEL.urdf   (e.g. ../shared/models/kuka_iiwa_robot.urdf)
#include <iostream>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace mb = coulomb::multibody;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " MODEL.urdf\n";
    return 2;
  }
  // Fixed base; pass {.floating = true} to attach the root link with a floating joint
  // (q = [x, y, z, qw, qx, qy, qz, joints…], v = [ω, v of the base origin (world frame), joints…]).
  coulomb::io::UrdfModel urdf = coulomb::io::load_urdf(argv[1]);  // throws naming the file, line and value
  const mb::Model& model = urdf.model;  // immutable from here on
  mb::Workspace ws(model);              // every buffer the algorithms write; no allocation after this

  Eigen::VectorXd q = model.neutral_configuration();
  Eigen::VectorXd v = Eigen::VectorXd::Constant(model.nv(), 0.1);
  Eigen::VectorXd vdot = Eigen::VectorXd::Zero(model.nv());

  const Eigen::MatrixXd& M = mb::crba(model, ws, q);                   // mass matrix, n_v × n_v
  const Eigen::VectorXd& b = mb::bias_forces(model, ws, q, v);         // C(q,v) v + gravity
  const Eigen::VectorXd& tau = mb::rnea(model, ws, q, v, vdot);        // M v̇ + b
  const Eigen::VectorXd& acc = mb::aba(model, ws, q, v, tau);          // M⁻¹ (τ − b) = v̇

  for (int i = 0; i < model.nv(); ++i)
    std::cout << model.dof_names()[i] << ": M_ii = " << M(i, i) << ", b = " << b[i] << ", v̇ = " << acc[i] << "\n";
}
