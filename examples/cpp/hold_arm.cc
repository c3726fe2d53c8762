// The simulator as a library: a controller holds the KUKA iiwa still with gravity compensation
// τ = rnea(q, 0, 0) at 500 Hz over a 1 kHz simulation, then prints the drift and the torques.
// Usage: example_hold_arm SCENE.yaml   (e.g. examples/scenes/iiwa_hold.yaml)
#include <cmath>
#include <iostream>
#include <memory>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/simulation/simulator.h"

namespace sim = coulomb::simulation;

// Called every control period with the state and the last step's results; writes commands.
class GravityCompensation : public sim::Controller {
 public:
  explicit GravityCompensation(const coulomb::scene::Scene& scene)
      : model_(scene.model), ws_(scene.model), zero_(Eigen::VectorXd::Zero(scene.model.nv())) {}
  void update(const sim::State& state, const sim::StepResults&, sim::Commands& commands) override {
    const Eigen::VectorXd& g = coulomb::multibody::rnea(model_, ws_, state.q, zero_, zero_);
    commands.actuation = g;  // one actuator per joint, in velocity order (coulomb inspect lists them)
  }

 private:
  const coulomb::multibody::Model& model_;
  coulomb::multibody::Workspace ws_;
  Eigen::VectorXd zero_;
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " SCENE.yaml\n";
    return 2;
  }
  coulomb::scene::Scene scene = coulomb::io::load_scene(argv[1]);  // paths resolve against the file
  sim::SimulatorParameters params;
  params.time_step = scene.time_step;  // 1 ms
  sim::Simulator simulator(std::move(scene), params);  // owns the scene from here: use simulator.scene()
  auto controller = std::make_shared<GravityCompensation>(simulator.scene());
  simulator.set_controller(controller, /*decimation=*/2);  // 500 Hz

  const Eigen::VectorXd q0 = simulator.q();
  double drift = 0.0;
  while (simulator.time() < 5.0) {
    simulator.step();
    drift = std::max(drift, (simulator.q() - q0).cwiseAbs().maxCoeff());
  }
  const sim::StepResults& r = simulator.last_results();
  std::cout << "max drift over 5 s: " << drift << " rad\n";
  for (int i = 0; i < simulator.num_actuators(); ++i)
    std::cout << simulator.scene().actuators[i].joint << ": tau = " << r.actuator_forces[i] << " N m\n";
  for (const std::string& w : simulator.warnings()) std::cout << "warning: " << w << "\n";
}
