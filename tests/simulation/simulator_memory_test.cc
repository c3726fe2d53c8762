// Memory linear in the number of bodies (issue 18): the Workspace held a dense n_v × n_v mass
// matrix (288·n² bytes for n free bodies; 2,000 bodies took 1.16 GB just to load). Measures the
// peak heap use of constructing a Simulator (Workspace, initial-dynamics check, collision world)
// and stepping it, on piles of free bodies with contacts between trees, through the allocator
// interposed in this test executable (heap_counter.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"
#include "heap_counter.h"

namespace coulomb::simulation {
namespace {

// n free bodies (n even) in n/2 columns on a 15 cm grid over a floor: a sphere (r = 5 cm)
// resting on the floor and a 10 cm box resting on the sphere, so that the first step has
// sphere–floor and box–sphere contacts (the latter couple two trees).
scene::Scene column_pile(int n) {
  const int columns = n / 2;
  int side = 1;
  while (side * side < columns) ++side;
  const double half = 0.15 * side / 2 + 0.5;
  std::string yaml =
      "time_step: 0.01\ncontact_approximation: sap\ncontact: {mu: 1.0, stiffness: 1.0e12, dissipation_time: 0.01}\n"
      "collision: {margin: 0.002}\nbodies:\n"
      "  - {name: floor, fixed: true, shapes: [{type: box, size: [" +
      std::to_string(2 * half) + ", " + std::to_string(2 * half) + ", 0.1], position: [0, 0, -0.05]}]}\n";
  for (int c = 0; c < columns; ++c) {
    const double x = 0.15 * (c % side) - 0.15 * side / 2, y = 0.15 * (c / side) - 0.15 * side / 2;
    const std::string p = std::to_string(x) + ", " + std::to_string(y);
    yaml += "  - {name: sphere_" + std::to_string(c) + ", mass: 0.524, shapes: [{type: sphere, radius: 0.05}], position: [" +
            p + ", 0.05]}\n";
    yaml += "  - {name: box_" + std::to_string(c) + ", mass: 1.0, shapes: [{type: box, size: [0.1, 0.1, 0.1]}], position: [" +
            p + ", 0.15]}\n";
  }
  return io::parse_scene(yaml, "column_pile.yaml");
}

struct Measured {
  std::int64_t peak_bytes = 0;  // construct + steps
  std::int64_t workspace_bytes = 0;
  int contacts = 0;
};

Measured measure(int n, int steps) {
  scene::Scene scene = column_pile(n);
  SimulatorParameters params;
  params.time_step = scene.time_step;
  Measured m;
  {
    testing::HeapCounter counter;
    multibody::Workspace ws(scene.model);
    m.workspace_bytes = counter.bytes();
  }
  testing::HeapCounter counter;
  {
    Simulator sim(std::move(scene), params);
    for (int k = 0; k < steps; ++k) sim.step();
    m.contacts = sim.last_step().contacts;
  }
  m.peak_bytes = counter.peak_bytes();
  return m;
}

// The counter sees a transient n_v × n_v matrix (a test that can fail).
TEST(SimulatorMemoryTest, CounterSeesTransientPeak) {
  testing::HeapCounter counter;
  { Eigen::MatrixXd M = Eigen::MatrixXd::Zero(1000, 1000); }
  EXPECT_GE(counter.peak_bytes(), 8'000'000);
  EXPECT_LT(counter.bytes(), 8'000'000);
}

// Linear, not quadratic: 4× the bodies take at most 6× the peak heap (the dense M alone made it
// 16×: 72 MB at 500 bodies, 1.15 GB at 2,000), and at most 40 kB per body in absolute terms
// (measured: about 10 kB; the dense M alone is 576 kB per body at 2,000 bodies).
TEST(SimulatorMemoryTest, WorkspaceAndStepsAreLinearInTheNumberOfBodies) {
  const Measured small = measure(500, 2), large = measure(2000, 2);
  std::printf("[ measured ] 500 bodies: Workspace %.2f MB, construct + 2 steps peak %.2f MB (%d contacts)\n",
              small.workspace_bytes / 1e6, small.peak_bytes / 1e6, small.contacts);
  std::printf("[ measured ] 2000 bodies: Workspace %.2f MB, construct + 2 steps peak %.2f MB (%d contacts)\n",
              large.workspace_bytes / 1e6, large.peak_bytes / 1e6, large.contacts);
  // The piles touch: one sphere–floor and one box–sphere contact per column (the latter couple
  // two trees) in the measured steps.
  EXPECT_GE(small.contacts, 500);
  EXPECT_GE(large.contacts, 2000);
  // The Workspace: per-body buffers and Σ n_v(t)² for M, ~2.5 kB per free body.
  EXPECT_LT(large.workspace_bytes, 2000 * 5'000);
  EXPECT_LT(large.workspace_bytes, 6 * small.workspace_bytes);
  EXPECT_LT(large.peak_bytes, 2000 * 40'000);
  EXPECT_LT(large.peak_bytes, 6 * small.peak_bytes);
}

}  // namespace
}  // namespace coulomb::simulation
