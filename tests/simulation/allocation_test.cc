// The hot loop allocates nothing after warm-up (Model/Workspace split; issue 10: "results after
// each step, allocation-free"). Counts every heap allocation of the process — malloc, calloc,
// realloc and, through them, operator new and Eigen's aligned_malloc — by interposing glibc's
// allocator in this test executable, while a counter is armed.
#include <gtest/gtest.h>

#include <execinfo.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/simulation/simulator.h"

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
}

namespace {
std::atomic<bool> g_armed{false};
std::atomic<long> g_allocations{0};
inline void count() {
  if (g_armed.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (std::getenv("COULOMB_ALLOC_TRACE") && g_allocations.load() <= 40) {
      g_armed = false;
      void* frames[24];
      const int n = backtrace(frames, 24);
      backtrace_symbols_fd(frames, n, 2);
      std::fprintf(stderr, "----\n");
      g_armed = true;
    }
  }
}
}  // namespace

extern "C" {
void* malloc(std::size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  count();
  return __libc_realloc(p, size);
}
}

namespace coulomb::simulation {
namespace {

struct AllocationCounter {
  AllocationCounter() {
    g_allocations = 0;
    g_armed = true;
  }
  ~AllocationCounter() { g_armed = false; }
  long count() const { return g_allocations.load(); }
};

// The counter itself works (a test that can fail): a vector's growth is seen.
TEST(AllocationTest, CounterSeesAllocations) {
  long n = 0;
  {
    AllocationCounter counter;
    auto v = std::make_unique<std::vector<double>>(1000);
    n = counter.count();
  }
  EXPECT_GE(n, 2);
}

// A gravity-compensation controller that itself allocates nothing per call.
class GravityCompensation : public Controller {
 public:
  explicit GravityCompensation(const scene::Scene& s)
      : model_(s.model), ws_(s.model), zero_(Eigen::VectorXd::Zero(s.model.nv())) {
    for (const scene::Actuator& a : s.actuators) v_index_.push_back(a.v_index);
  }
  void update(const State& state, const StepResults&, Commands& commands) override {
    const Eigen::VectorXd& tau = multibody::rnea(model_, ws_, state.q, zero_, zero_);
    for (size_t i = 0; i < v_index_.size(); ++i) commands.actuation[i] = 0.1 * tau[v_index_[i]];
  }

 private:
  const multibody::Model& model_;
  multibody::Workspace ws_;
  Eigen::VectorXd zero_;
  std::vector<int> v_index_;
};

// After warm-up, steps of the A1 standing on its feet under the implicit PD with a controller
// writing feed-forward torques allocate nothing: contacts (sphere–box, analytic), SAP, results
// and commands all reuse their buffers. The incline, whose contact set changes size as objects
// slide and roll off, is measured and printed, not asserted: SAP's Eigen buffers sized by the
// number of constraint rows still reallocate when that number changes (COULOMB_ALLOC_TRACE=1
// prints the call sites of the first 40 allocations).
TEST(AllocationTest, StepsAfterWarmUpAllocateNothing) {
  for (const char* name : {"a1_stand.yaml", "incline.yaml"}) {
    for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint}) {
      scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/" + name);
      SimulatorParameters params;
      params.time_step = scene.time_step;
      params.integrator = integrator;
      auto controller = std::make_shared<GravityCompensation>(scene);
      Simulator sim(std::move(scene), params);
      sim.set_controller(controller, 2);
      for (int k = 0; k < 300; ++k) sim.step();  // warm-up: contacts made, pools sized
      long allocations = 0;
      {
        AllocationCounter counter;
        for (int k = 0; k < 200; ++k) sim.step();
        allocations = counter.count();
      }
      std::printf("[ measured ] %s %s: %ld allocations in 200 steps after warm-up (%d contacts)\n", name,
                  to_string(integrator), allocations, sim.last_step().contacts);
      if (std::string(name) == "a1_stand.yaml") EXPECT_EQ(allocations, 0) << name << " " << to_string(integrator);
    }
  }
}

// Bilateral constraints (scene `constraints:`): the four-bar's loop closure (two trees) under both
// solvers allocates nothing per step after warm-up: ConstraintSet entries, SAP's pooled
// constraints, lstable's buffers and the step results keep their storage.
TEST(AllocationTest, BilateralConstraintStepsAllocateNothing) {
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/four_bar.yaml");
    SimulatorParameters params;
    params.time_step = scene.time_step;
    params.solver = solver;
    Simulator sim(std::move(scene), params);
    for (int k = 0; k < 20; ++k) sim.step();
    long allocations = 0;
    {
      AllocationCounter counter;
      for (int k = 0; k < 200; ++k) sim.step();
      allocations = counter.count();
    }
    EXPECT_EQ(allocations, 0) << to_string(solver);
  }
}

}  // namespace
}  // namespace coulomb::simulation
