// The simulator with --solver lstable (Drumwright's first-order solver) on example scenes, the
// same ConstraintSet that SAP reads: an independent check of the whole path (contacts, PD
// actuators, limits) against statics and against SAP.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

// The A1 standing under its PD controller: after 2 s the contact forces carry the robot's
// weight (Σ f_z = m g within 0.1 %) and the base settles where SAP puts it (within 2 mm).
TEST(LStableSimulation, A1StandsOnItsFeetLikeUnderSap) {
  double base_height[2] = {0.0, 0.0};
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/a1_stand.yaml");
    const double weight = scene.model.total_mass() * 9.81;
    SimulatorParameters params;
    params.time_step = scene.time_step;
    params.solver = solver;
    Simulator sim(std::move(scene), params);
    int failures = 0;
    for (int k = 0; k < 2.0 / params.time_step; ++k)
      if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
    EXPECT_EQ(failures, 0) << to_string(solver);
    double fz = 0.0;
    for (const ContactResult& c : sim.last_results().contacts) fz += c.impulse_W.z() / params.time_step;
    EXPECT_NEAR(fz, weight, 1e-3 * weight) << to_string(solver);
    base_height[solver == Solver::kSap ? 0 : 1] = sim.q()[2];
    std::printf("[ measured ] A1 standing, %s: sum f_z %.6g N (m g %.6g N), base height %.5f m\n", to_string(solver), fz,
                weight, sim.q()[2]);
  }
  EXPECT_NEAR(base_height[1], base_height[0], 2e-3);
}

// The incline scene: the μ = 0.5 box sticks (moves < 1 mm in 1 s), the slippery box slides, the
// sphere rolls; every step's QP converges.
TEST(LStableSimulation, InclineBoxesStickAndSlide) {
  scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/incline.yaml");
  SimulatorParameters params;
  params.time_step = scene.time_step;
  params.solver = Solver::kLStable;
  const int stick = scene.model.body_index("box_stick"), slide = scene.model.body_index("box_slide");
  Simulator sim(std::move(scene), params);
  const int qs = sim.model().body(stick).joint.q_index, ql = sim.model().body(slide).joint.q_index;
  const Eigen::Vector3d p_stick0 = sim.q().segment<3>(qs + 0), p_slide0 = sim.q().segment<3>(ql + 0);
  for (int k = 0; k < 1.0 / params.time_step; ++k)
    ASSERT_EQ(sim.step().status, solvers::sap::SapSolverStatus::kSuccess) << k;
  const double moved_stick = (sim.q().segment<3>(qs) - p_stick0).norm();
  const double moved_slide = (sim.q().segment<3>(ql) - p_slide0).norm();
  std::printf("[ measured ] incline under lstable: sticking box moved %.3e m, sliding box %.4f m in 1 s\n", moved_stick,
              moved_slide);
  EXPECT_LT(moved_stick, 1e-3);
  EXPECT_GT(moved_slide, 0.1);
}

}  // namespace
}  // namespace coulomb::simulation
