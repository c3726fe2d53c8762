// Joint limits under every integrator (issue 9 item 5). The limit constraint must predict the
// joint position as the integrator moves it: q₁ = q₀ + δt (θ_vq v + (1 − θ_vq) v₀). Before,
// every constraint assumed q₀ + δt v, so under midpoint (θ_vq = ½) a 7-DOF arm falling limp onto
// its limits overshot by 0.16 rad at δt = 10 ms (implicit Euler: 4e-4). The truth is the limit
// itself: a near-rigid limit may be entered by at most what one step's compliance allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

// The Panda (primitive collision geometry, fixed base) falls limp from a pose in the middle of
// its limits; gravity folds it onto joint 2, 4 and 6 limits within a second.
TEST(JointLimitTest, LimpArmFallingOntoItsLimitsDoesNotOvershoot) {
  const std::string yaml = std::string("gravity: [0, 0, -9.81]\nrobots:\n  - urdf: ") + COULOMB_SHARED_DIR +
                           "/models/panda_collision.urdf\n"
                           "    joint_positions: {panda_joint2: 0.8, panda_joint4: -1.0, panda_joint6: 1.5}\n";
  for (double dt : {1e-3, 1e-2})
    for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kSymplecticEuler, Integrator::kMidpoint}) {
      SimulatorParameters params;
      params.time_step = dt;
      params.integrator = integrator;
      Simulator sim(io::parse_scene(yaml, "panda_limp"), params);
      const multibody::Model& model = sim.model();
      double overshoot = 0.0;
      int at_limit = 0;
      for (int k = 0; k < static_cast<int>(std::lround(3.0 / dt)); ++k) {
        sim.step();
        for (int b = 1; b < model.num_bodies(); ++b) {
          const multibody::Joint& j = model.body(b).joint;
          if (j.nv != 1) continue;
          const double q = sim.q()[j.q_index];
          overshoot = std::max({overshoot, j.limits.lower - q, q - j.limits.upper});
          if (k + 1 == static_cast<int>(std::lround(3.0 / dt)) &&
              (q - j.limits.lower < 1e-2 || j.limits.upper - q < 1e-2))
            ++at_limit;
        }
      }
      std::printf("[ measured ] limp Panda onto its limits, %s, dt %g: max overshoot %.3e rad, %d joints at a limit "
                  "after 3 s\n",
                  to_string(integrator), dt, overshoot, at_limit);
      const std::string label = std::string(to_string(integrator)) + " dt " + std::to_string(dt);
      EXPECT_LE(overshoot, 5e-3) << label;
      EXPECT_GE(at_limit, 1) << label;  // the scene does reach its limits
    }
}

// SimulatorParameters::joint_limit_window leaves out the limits a joint is not expected to reach
// in the step, and the simulator adds back (and solves again) any left-out limit that acts at the
// solution. A limit that does not act has γ = 0 there, so the step must equal the one with every
// limit to SAP's tolerance: the independent truth is the same run with every limit in every step
// (window +∞). Without the check, the A1 under midpoint at 1 ms missed two limits that contact
// impulses reached and ended 1.0e-3 away from the truth (this test's bound is 1e-5). Scenes: the limp Panda above (gravity folds it onto three limits) and the A1
// dropped on the ground (contact impulses, which the window does not see in advance, swing its
// legs), under implicit Euler and midpoint at δt = 1 ms and 10 ms.
TEST(JointLimitTest, WindowLeavesOutOnlyTheLimitsOutOfReach) {
  const std::string panda = std::string("gravity: [0, 0, -9.81]\nrobots:\n  - urdf: ") + COULOMB_SHARED_DIR +
                            "/models/panda_collision.urdf\n"
                            "    joint_positions: {panda_joint2: 0.8, panda_joint4: -1.0, panda_joint6: 1.5}\n";
  const std::string a1 = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/a1_drop.yaml";
  struct Case {
    const char* name;
    bool from_file;
  };
  for (const Case& c : {Case{"panda_limp", false}, Case{"a1_drop", true}})
    for (double dt : {1e-3, 1e-2})
      for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint}) {
        SimulatorParameters windowed, every;
        windowed.time_step = every.time_step = dt;
        windowed.integrator = every.integrator = integrator;
        every.joint_limit_window = std::numeric_limits<double>::infinity();
        auto make = [&](const SimulatorParameters& p) {
          return c.from_file ? Simulator(io::load_scene(a1), p) : Simulator(io::parse_scene(panda, "panda_limp"), p);
        };
        Simulator sim_w = make(windowed), sim_e = make(every);
        const int steps = static_cast<int>(std::lround(1.5 / dt));
        double max_dq = 0.0, max_q = 0.0;
        long limits_w = 0, limits_e = 0, active = 0, resolves = 0;
        for (int k = 0; k < steps; ++k) {
          resolves += sim_w.step().limit_resolves;
          sim_e.step();
          limits_w += static_cast<long>(sim_w.constraint_set().limits.size());
          limits_e += static_cast<long>(sim_e.constraint_set().limits.size());
          active += (sim_e.last_results().joint_limit_impulses.array() != 0.0).count();
          max_dq = std::max(max_dq, (sim_w.q() - sim_e.q()).cwiseAbs().maxCoeff());
          max_q = std::max(max_q, sim_e.q().cwiseAbs().maxCoeff());
        }
        const std::string label = std::string(c.name) + " " + to_string(integrator) + " dt " + std::to_string(dt);
        std::printf("[ measured ] %s: limit constraints per step %.2f (window) vs %.2f (every), active %.2f; "
                    "max |q_window - q_every| %.2e; %ld steps solved again for a limit the window left out\n",
                    label.c_str(), double(limits_w) / steps, double(limits_e) / steps, double(active) / steps, max_dq,
                    resolves);
        EXPECT_LE(max_dq, 1e-5 * std::max(1.0, max_q)) << label;
        EXPECT_GT(active, 0) << label;           // some limit does act: the comparison is not vacuous
        EXPECT_LT(limits_w, limits_e / 2) << label;  // and most limits are left out
        EXPECT_GE(limits_w, active) << label;   // never fewer than act in the full run (a miss)
      }
}

// A joint at rest (v₀ = v* = 0: no gravity) has no reach: the finite window leaves its limits
// out (those it is not at or past), and an infinite window, and the first-order solver (which
// always takes every limit), keep all 9 of the Panda's. ∞ · 0 once made the reach NaN and dropped
// them too.
TEST(JointLimitTest, InfiniteWindowAndLStableKeepEveryLimitOfAJointAtRest) {
  const std::string yaml = std::string("gravity: [0, 0, 0]\nrobots:\n  - urdf: ") + COULOMB_SHARED_DIR +
                           "/models/panda_collision.urdf\n";
  auto limits_after_one_step = [&](double window, Solver solver) {
    SimulatorParameters p;
    p.joint_limit_window = window;
    p.solver = solver;
    Simulator sim(io::parse_scene(yaml, "panda_at_rest"), p);
    sim.step();
    return sim.constraint_set().limits.size();
  };
  EXPECT_LT(limits_after_one_step(2.0, Solver::kSap), 9u);
  EXPECT_EQ(limits_after_one_step(std::numeric_limits<double>::infinity(), Solver::kSap), 9u);
  EXPECT_EQ(limits_after_one_step(2.0, Solver::kLStable), 9u);
}

TEST(JointLimitTest, NegativeOrNanWindowIsRefused) {
  const std::string yaml = std::string("robots:\n  - urdf: ") + COULOMB_SHARED_DIR + "/models/panda_collision.urdf\n";
  for (double w : {-1.0, std::nan("")}) {
    SimulatorParameters p;
    p.joint_limit_window = w;
    try {
      Simulator sim(io::parse_scene(yaml, "panda"), p);
      ADD_FAILURE() << "window " << w << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("joint_limit_window"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace coulomb::simulation
