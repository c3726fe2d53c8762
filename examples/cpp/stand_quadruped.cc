// Contact forces of a standing robot: the A1 under the scene's PD actuators, after 2 s, prints
// each foot's contact force and their sum against m g.
// Usage: example_stand_quadruped SCENE.yaml   (e.g. examples/scenes/a1_stand.yaml)
#include <iostream>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace sim = coulomb::simulation;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " SCENE.yaml\n";
    return 2;
  }
  coulomb::scene::Scene scene = coulomb::io::load_scene(argv[1]);
  sim::SimulatorParameters params;
  params.time_step = scene.time_step;
  sim::Simulator simulator(std::move(scene), params);
  while (simulator.time() < 2.0) simulator.step();

  const coulomb::multibody::Model& model = simulator.model();
  const sim::StepResults& r = simulator.last_results();
  double fz = 0.0;
  for (int b = 1; b < model.num_bodies(); ++b) {  // net contact wrench on each body, world frame
    const auto& f = r.contact_wrenches[b].f;
    if (f.norm() == 0.0) continue;
    std::cout << model.body(b).name << ": f = (" << f.x() << ", " << f.y() << ", " << f.z() << ") N\n";
    fz += f.z();
  }
  for (const sim::ContactResult& c : r.contacts)  // per contact: point, normal, impulses, region
    std::cout << "  contact on " << model.body(c.body_b).name << " at z = " << c.p_W.z() << " m, "
              << to_string(c.region) << ", slip " << c.slip_speed << " m/s\n";
  std::cout << "sum f_z = " << fz << " N, m g = " << model.total_mass() * 9.81 << " N\n";
}
