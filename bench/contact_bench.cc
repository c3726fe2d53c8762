// Contact detection at clutter.yaml's resting state (issue 3 acceptance).
//
// Setup, once: clutter.yaml is simulated by coulomb's Simulator for 3 s (300 steps of the
// scene's δt = 10 ms, SimulatorParameters from the scene) and the benchmarks then time the
// contact stage at that configuration q_rest:
//   Contact/clutter_rest/update_poses+compute_contacts   CollisionWorld::update_poses(ws) +
//                                                        compute_contacts(points)
//   Contact/clutter_rest/update_poses                    update_poses alone
//   Contact/clutter_rest/compute_contacts                compute_contacts alone
//   Contact/clutter_rest/gather_contacts+contact_jacobian  contact::gather_contacts (which
//                                                        calls compute_contacts) + contact_jacobian
//   Contact/clutter_rest/contact_jacobian                contact_jacobian alone
//   Contact/clutter_rest/stage0    what Simulator::step does before the free motion:
//                                  forward_kinematics + update_poses + gather_contacts +
//                                  contact_jacobian
//   Contact/clutter_rest/mujoco_collision   peer, for scale: MuJoCo 2.2.2's mj_kinematics +
//                                  mj_collision on the same bodies at the same q (its own
//                                  contact rules: margin 0, its box–box and box–sphere
//                                  routines), model from bench_scenes.h
// Forward kinematics is done once in the setup for the stages that take ws as given. Counter
// `contacts`: contact points found (coulomb: φ ≤ margin = 2 mm; MuJoCo: d->ncon).
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench_scenes.h"
#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"

namespace {

using namespace coulomb_bench;
namespace sim = coulomb::simulation;
namespace contact = coulomb::contact;

constexpr double kSettleTime = 3.0;  // [s]

struct Rest {
  const io::Scene& scene;
  Eigen::VectorXd q;
  mb::Workspace ws;
  geo::CollisionWorld world;
  std::vector<geo::ContactPoint> points;
  contact::ContactSet set;
  contact::ContactJacobian J;
  mjModel* m = nullptr;
  mjData* d = nullptr;

  static Eigen::VectorXd settle(const io::Scene& s) {
    io::Scene copy = s;
    sim::SimulatorParameters params;
    params.time_step = copy.time_step;
    params.integrator = sim::parse_integrator(copy.integrator);
    sim::Simulator simulator(std::move(copy), params);
    const int steps = static_cast<int>(std::lround(kSettleTime / params.time_step));
    for (int k = 0; k < steps; ++k) simulator.step();
    return simulator.q();
  }

  explicit Rest(const std::string& name)
      : scene(coulomb_bench::scene(name)),
        q(settle(scene)),
        ws(scene.model),
        world(scene.model, scene.geometries, scene.collision) {
    mb::forward_kinematics(scene.model, ws, q);
    world.update_poses(ws);
    m = mujoco_model(name, mjSOL_NEWTON);
    d = mj_makeData(m);
    set_mujoco_state(m, d, scene.model, q, Eigen::VectorXd::Zero(scene.model.nv()));
  }
  ~Rest() {
    mj_deleteData(d);
    mj_deleteModel(m);
  }
};

Rest& rest() {
  static Rest r("clutter");
  return r;
}

void update_and_compute(benchmark::State& state) {
  Rest& r = rest();
  for (auto _ : state) {
    r.world.update_poses(r.ws);
    r.world.compute_contacts(r.points);
    benchmark::DoNotOptimize(r.points.data());
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = static_cast<double>(r.points.size());
}

void update_poses(benchmark::State& state) {
  Rest& r = rest();
  for (auto _ : state) {
    r.world.update_poses(r.ws);
    benchmark::ClobberMemory();
  }
}

void compute_contacts(benchmark::State& state) {
  Rest& r = rest();
  r.world.update_poses(r.ws);
  for (auto _ : state) {
    r.world.compute_contacts(r.points);
    benchmark::DoNotOptimize(r.points.data());
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = static_cast<double>(r.points.size());
}

void gather_and_jacobian(benchmark::State& state) {
  Rest& r = rest();
  r.world.update_poses(r.ws);
  for (auto _ : state) {
    contact::gather_contacts(r.world, r.scene.contact, r.set);
    contact::contact_jacobian(r.scene.model, r.ws, r.set, r.J);
    benchmark::DoNotOptimize(r.J.blocks.data());
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = r.set.size();
}

void jacobian_only(benchmark::State& state) {
  Rest& r = rest();
  r.world.update_poses(r.ws);
  contact::gather_contacts(r.world, r.scene.contact, r.set);
  for (auto _ : state) {
    contact::contact_jacobian(r.scene.model, r.ws, r.set, r.J);
    benchmark::DoNotOptimize(r.J.blocks.data());
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = r.set.size();
}

void stage0(benchmark::State& state) {
  Rest& r = rest();
  for (auto _ : state) {
    mb::forward_kinematics(r.scene.model, r.ws, r.q);
    r.world.update_poses(r.ws);
    contact::gather_contacts(r.world, r.scene.contact, r.set);
    contact::contact_jacobian(r.scene.model, r.ws, r.set, r.J);
    benchmark::DoNotOptimize(r.J.blocks.data());
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = r.set.size();
}

void mujoco_collision(benchmark::State& state) {
  Rest& r = rest();
  for (auto _ : state) {
    mj_kinematics(r.m, r.d);
    mj_collision(r.m, r.d);
    benchmark::DoNotOptimize(r.d->contact);
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = r.d->ncon;
}

// Mesh collision geometry (issue 14): the Solo12 (STL collision meshes → convex hulls,
// geometry/mesh_loader.h) standing after solo12_drop.yaml's 2 s, against the same robot with every
// hull replaced by the box of its bounding box in the geometry frame (same sizes, same poses).
//   Contact/solo12_rest/hulls   update_poses + compute_contacts with the hulls
//   Contact/solo12_rest/boxes   the same with the boxes
struct Solo {
  io::Scene scene;
  Eigen::VectorXd q;
  static io::Scene boxes_of(io::Scene s) {
    for (geo::Geometry& g : s.geometries) {
      if (g.shape.type != geo::ShapeType::kConvexMesh) continue;
      Eigen::Vector3d lo = Eigen::Vector3d::Constant(1e300), hi = -lo;
      for (const Eigen::Vector3d& v : g.shape.vertices) lo = lo.cwiseMin(v), hi = hi.cwiseMax(v);
      g.X_BG = g.X_BG * coulomb::math::Transform(Eigen::Matrix3d::Identity(), 0.5 * (lo + hi));
      g.shape = geo::Shape::Box(hi - lo);
    }
    return s;
  }
};
Solo& solo() {
  static Solo s = [] {
    Solo out{io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/solo12_drop.yaml"), {}};
    io::Scene copy = out.scene;
    sim::SimulatorParameters params;
    params.time_step = copy.time_step;
    sim::Simulator sim(std::move(copy), params);
    while (sim.time() < 2.0 - 1e-9) sim.step();
    out.q = sim.q();
    return out;
  }();
  return s;
}
void solo_contacts(benchmark::State& state, bool boxes) {
  Solo& s = solo();
  const io::Scene scene = boxes ? Solo::boxes_of(s.scene) : s.scene;
  mb::Workspace ws(scene.model);
  geo::CollisionWorld world(scene.model, scene.geometries, scene.collision);
  mb::forward_kinematics(scene.model, ws, s.q);
  std::vector<geo::ContactPoint> points;
  for (auto _ : state) {
    world.update_poses(ws);
    world.compute_contacts(points);
    benchmark::DoNotOptimize(points.data());
    benchmark::ClobberMemory();
  }
  state.counters["contacts"] = static_cast<double>(points.size());
}

const int registered = [] {
  const std::string p = "Contact/clutter_rest/";
  benchmark::RegisterBenchmark((p + "update_poses+compute_contacts").c_str(), update_and_compute);
  benchmark::RegisterBenchmark((p + "update_poses").c_str(), update_poses);
  benchmark::RegisterBenchmark((p + "compute_contacts").c_str(), compute_contacts);
  benchmark::RegisterBenchmark((p + "gather_contacts+contact_jacobian").c_str(), gather_and_jacobian);
  benchmark::RegisterBenchmark((p + "contact_jacobian").c_str(), jacobian_only);
  benchmark::RegisterBenchmark((p + "stage0").c_str(), stage0);
  benchmark::RegisterBenchmark((p + "mujoco_collision").c_str(), mujoco_collision);
  benchmark::RegisterBenchmark("Contact/solo12_rest/hulls", [](benchmark::State& st) { solo_contacts(st, false); });
  benchmark::RegisterBenchmark("Contact/solo12_rest/boxes", [](benchmark::State& st) { solo_contacts(st, true); });
  return 0;
}();

}  // namespace
