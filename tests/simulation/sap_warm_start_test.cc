// SimulatorParameters::acceleration_warm_start: SAP starts from the lower-cost of v₀ and
// v₀ + (v₀ − the last step's v₀). Independent truth for its steps: SAP from v₀ alone on the same
// problem (a simulator set to the same state, which has no last step), to SAP's tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "coulomb/contact/contact_approximation.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"
#include "simulation_test_util.h"

namespace coulomb::simulation {
namespace {

// The humanoid let go above the ground (examples/scenes/humanoid_drop.yaml: it buckles, kneels
// and comes to rest on hands and knees) and the A1 dropped on its feet, with SAP's and the
// lagged contact approximations. Every 50th step the warm
// simulator's step is compared with a cold one's from the same state (q, v): the same step to
// SAP's tolerance. Over the run the warm start takes fewer Newton iterations; after set_state()
// the warm simulator's steps are a fresh simulator's, bit for bit.
TEST(SapWarmStartTest, AccelerationWarmStartSolvesTheSameSteps) {
  using contact::ContactApproximation;
  for (const std::string scene_name : {"humanoid_drop.yaml", "a1_drop.yaml"}) {
    for (ContactApproximation approximation : {ContactApproximation::kSap, ContactApproximation::kLagged}) {
      const std::string path = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/" + scene_name;
      const std::string name = scene_name + " " + contact::to_string(approximation);
      auto load = [&] {
        scene::Scene s = io::load_scene(path);
        s.contact.approximation = approximation;
        return s;
      };
      scene::Scene scene = load();
      SimulatorParameters params;
      params.time_step = scene.time_step;
      params.integrator = parse_integrator(scene.integrator);
      const double duration = scene.duration;
      SimulatorParameters cold_params = params;
      cold_params.acceleration_warm_start = false;
      Simulator warm(load(), params), cold(load(), cold_params), check(load(), cold_params);
      long warm_iterations = 0, cold_iterations = 0;
      double max_dv = 0.0, max_v = 0.0;
      int compared = 0;
      const int steps = static_cast<int>(duration / params.time_step);
      for (int k = 0; k < steps; ++k) {
        const bool compare = k % 50 == 49;
        if (compare) check.set_state(warm.q(), warm.v());
        const StepStats& w = warm.step();
        ASSERT_EQ(w.status, solvers::sap::SapSolverStatus::kSuccess) << name << " step " << k;
        warm_iterations += w.solver_iterations;
        const StepStats& c = cold.step();
        ASSERT_EQ(c.status, solvers::sap::SapSolverStatus::kSuccess) << name << " step " << k;
        cold_iterations += c.solver_iterations;
        if (compare) {
          check.step();
          max_dv = std::max(max_dv, (warm.v() - check.v()).cwiseAbs().maxCoeff());
          max_v = std::max(max_v, warm.v().cwiseAbs().maxCoeff());
          ++compared;
        }
      }
      std::printf("[ measured ] %s: SAP Newton iterations per step %.3f (acceleration warm start) against %.3f "
                  "(from v0); %d steps compared, max |dv| %.2e m/s or rad/s (max |v| %.2e)\n",
                  name.c_str(), double(warm_iterations) / steps, double(cold_iterations) / steps, compared, max_dv, max_v);
      EXPECT_LT(warm_iterations, 0.8 * cold_iterations) << name;
      EXPECT_LE(max_dv, 1e-4) << name;
      // After set_state() the next steps are those of a fresh simulator (no last step to hold).
      Simulator fresh(load(), params);
      const Eigen::VectorXd q = warm.q(), v = warm.v();
      test_util::expect_same_steps_after_set_state(warm, fresh, q, v, 5, name);
    }
  }
}

}  // namespace
}  // namespace coulomb::simulation
