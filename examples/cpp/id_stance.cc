// Inverse dynamics with rigid contact: the torques that hold the A1 still on its four feet and
// the contact forces they will meet, for each of the four formulations of Zapolsky & Drumwright.
// Usage: example_id_stance SCENE.yaml   (e.g. examples/scenes/a1_id.yaml)
#include <iostream>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"

namespace id = coulomb::inverse_dynamics;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " SCENE.yaml\n";
    return 2;
  }
  const coulomb::scene::Scene scene = coulomb::io::load_scene(argv[1]);
  const coulomb::multibody::Model& model = scene.model;

  // The contacts at the initial state: points, normals (ground → foot), φ and μ.
  coulomb::geometry::CollisionWorld world(model, scene.geometries, scene.collision);
  coulomb::multibody::Workspace ws(model);
  coulomb::multibody::forward_kinematics(model, ws, scene.q0);
  world.update_poses(ws);
  coulomb::contact::ContactSet contacts;
  coulomb::contact::gather_contacts(world, scene.contact, contacts);

  const double dt = 1e-3;                                   // control period [s]
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv());
  for (const char* name : {"lcp-noslip", "lcp-coulomb", "qp-coulomb", "qp-noslip"}) {
    id::IdParameters parameters;
    parameters.formulation = id::parse_formulation(name);
    // P selects the scene's actuated joints; the floating base (6 DOF) is unactuated.
    id::InverseDynamics solver(model, id::actuated_dofs(scene), parameters);
    const Eigen::VectorXd qdd_des = Eigen::VectorXd::Zero(solver.num_actuated());  // hold still
    const id::IdResults& r = solver.solve(scene.q0, v, qdd_des, dt, contacts);
    if (!r.ok()) {
      std::cerr << name << ": " << to_string(r.status) << ": " << r.message << "\n";
      return 1;
    }
    double sum_fz = 0.0;  // contact impulses are [t1, t2, n] in each contact frame [N·s]
    std::cout << name << ": foot forces [N]";
    for (int i = 0; i < contacts.size(); ++i) {
      const Eigen::Vector3d f_W = contacts.contacts[i].R_WC * r.contact_impulses.segment<3>(3 * i) / dt;
      std::cout << " " << f_W.z();
      sum_fz += f_W.z();
    }
    std::cout << ", sum f_z = " << sum_fz << " N, m g = " << model.total_mass() * 9.81 << " N, |tau| = "
              << r.tau.norm() << " N m, " << 1e6 * r.stats.solve_time << " us\n";
  }
}
