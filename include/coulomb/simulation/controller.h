// The one interface through which controllers command the simulator
// (../shared/design/ARCHITECTURE.md: the built-in PD, the inverse-dynamics controllers, C++
// user code and Python all sit behind it).
#pragma once

#include "coulomb/simulation/step_results.h"

namespace coulomb::simulation {

/// A controller, called by Simulator::step() every control period (Simulator::set_controller),
/// before the step that starts at state.time. It reads the state and the results of the last
/// step (stats.time = 0 and no contacts before the first step) and writes the commands, which
/// are held for the whole control period. `commands` arrives holding the commands in force (so a
/// controller may change only some of them) with vectors already sized per actuator; keeping
/// their sizes keeps the step allocation-free. Exceptions propagate out of Simulator::step().
class Controller {
 public:
  virtual ~Controller() = default;
  virtual void update(const State& state, const StepResults& last_step, Commands& commands) = 0;
};

}  // namespace coulomb::simulation
