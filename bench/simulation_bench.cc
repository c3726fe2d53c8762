// Forward simulation: coulomb's SAP Simulator vs MuJoCo 2.2.2 on the same scenes, in the same
// run (TARGETS.md, "Forward simulation": 1000 steps from the drop).
//
// Benchmarks are named Simulate/<scene>: one iteration simulates the scene for kSteps steps
// from its initial state with coulomb, then with MuJoCo (Newton, then CG and PGS for the
// clutter scenes), each from a fresh start, and reports counters per engine E:
//   E_steps_per_s   kSteps / thread CPU time of the steps (only the step calls are timed)
//   E_wall_steps_per_s   the same with wall-clock time
//   E_it            mean solver iterations per step over all steps (coulomb: SAP Newton
//                   iterations; MuJoCo: d->solver_iter)
//   E_it_last100    the same over the last 100 steps (steady state)
//   E_contacts      mean contact points per step (coulomb: φ ≤ margin = 2 mm; MuJoCo: dist ≤ 0)
//   E_pen_end       max penetration at the final state [m]: max(0, −φ) over the contacts
//                   there (coulomb: a fresh collision query at the final q; MuJoCo: mj_forward
//                   at the final qpos, max(−d->contact[i].dist))
//   E_slip          steady-state slip [m/s]: the mean, over the last 100 steps and over the
//                   contacts of each step that carry a positive normal force (coulomb: γ_n > 0;
//                   MuJoCo: mj_contactForce normal > 0), of the tangential speed of the relative
//                   velocity of the two bodies at the contact point, from the step's contact
//                   geometry and its end-of-step velocities (coulomb: J(q₀) v; MuJoCo: the
//                   point Jacobians of mj_jac at the step's kinematics times the new qvel)
//   E_fallen        free bodies below z = −0.5 m at the end (fell off the floor)
//   E_failures      coulomb: steps whose SAP solve did not converge; MuJoCo: contact or
//                   constraint buffer overflows, bad qacc warnings
//   ratio_newton    coulomb_steps_per_s / mujoco_steps_per_s (> 1: coulomb faster)
//   ratio_best      coulomb_steps_per_s / the fastest MuJoCo solver's
// Scenes: examples/scenes/{clutter, clutter_no_walls, clutter_80, clutter_160, a1_drop}.yaml;
// the MuJoCo models are built from the loaded coulomb Scene (bench_scenes.h).
// COULOMB_BENCH_STEPS overrides kSteps (e.g. for a quick look); scripts/bench_report.sh turns
// the JSON output into docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_scenes.h"
#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"

namespace {

using namespace coulomb_bench;
namespace sim = coulomb::simulation;
namespace contact = coulomb::contact;

constexpr int kDefaultSteps = 1000;
constexpr int kWindow = 100;          // steady-state window: the last 100 steps
constexpr double kFallenZ = -0.5;     // [m]

int num_steps() {
  if (const char* s = std::getenv("COULOMB_BENCH_STEPS")) {
    const int n = std::atoi(s);
    if (n > 0) return n;
  }
  return kDefaultSteps;
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

struct Run {
  double cpu = 0.0, wall = 0.0;  // [s], the step calls only
  int steps = 0;
  double iterations = 0.0, iterations_window = 0.0, contacts = 0.0;
  double penetration_end = 0.0;
  int contacts_end = 0;
  double slip = 0.0;
  long slip_count = 0;
  int fallen = 0, failures = 0;
  int window = 0;

  double steps_per_s() const { return cpu > 0 ? steps / cpu : 0.0; }
  double wall_steps_per_s() const { return wall > 0 ? steps / wall : 0.0; }
  double mean_iterations() const { return steps ? iterations / steps : 0.0; }
  double mean_iterations_window() const { return window ? iterations_window / window : 0.0; }
  double mean_contacts() const { return steps ? contacts / steps : 0.0; }
  double mean_slip() const { return slip_count ? slip / slip_count : 0.0; }
};

// ---- coulomb ----

Run run_coulomb(const std::string& name, int steps) {
  io::Scene scene_copy = scene(name);
  sim::SimulatorParameters params;
  params.time_step = scene_copy.time_step;
  params.integrator = sim::parse_integrator(scene_copy.integrator);
  sim::Simulator simulator(std::move(scene_copy), params);
  const mb::Model& model = simulator.model();
  // For the measurements outside the timed steps.
  mb::Workspace ws(model);
  geo::CollisionWorld world(model, simulator.scene().geometries, simulator.scene().collision);
  contact::ContactJacobian J;
  Eigen::VectorXd q_prev, vc;

  Run r;
  r.window = std::min(kWindow, steps);
  for (int k = 0; k < steps; ++k) {
    const bool in_window = k >= steps - r.window;
    if (in_window) q_prev = simulator.q();
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    const sim::StepStats& st = simulator.step();
    r.cpu += thread_cpu_seconds() - c0;
    r.wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    ++r.steps;
    r.iterations += st.solver_iterations;
    r.contacts += st.contacts;
    if (st.status != coulomb::solvers::sap::SapSolverStatus::kSuccess) ++r.failures;
    if (in_window) {
      r.iterations_window += st.solver_iterations;
      const contact::ContactSet& set = simulator.contacts();
      if (set.size() == 0) continue;
      mb::forward_kinematics(model, ws, q_prev);
      contact::contact_jacobian(model, ws, set, J);
      vc.resize(3 * set.size());
      J.multiply(simulator.v(), vc);
      const Eigen::VectorXd& gamma = simulator.contact_impulses();
      for (int i = 0; i < set.size(); ++i)
        if (gamma.size() == 3 * set.size() && gamma[3 * i + 2] > 0.0) {
          r.slip += std::hypot(vc[3 * i], vc[3 * i + 1]);
          ++r.slip_count;
        }
    }
  }
  // Final state: penetration and fallen bodies.
  mb::forward_kinematics(model, ws, simulator.q());
  world.update_poses(ws);
  std::vector<geo::ContactPoint> points;
  world.compute_contacts(points);
  r.contacts_end = static_cast<int>(points.size());
  for (const geo::ContactPoint& p : points) r.penetration_end = std::max(r.penetration_end, -p.phi);
  for (int b = 1; b < model.num_bodies(); ++b)
    if (model.body(b).joint.type == mb::JointType::kFloating && ws.X_WB[b].p.z() < kFallenZ) ++r.fallen;
  return r;
}

// ---- MuJoCo ----

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

const mjModel* cached_model(const std::string& name, int solver) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<mjModel, MjModelDeleter>> cache;
  auto& slot = cache[{name, solver}];
  if (!slot) {
    slot.reset(mujoco_model(name, solver));
    // Guard against benchmarking a different system: same total mass, same number of dofs.
    const mb::Model& model = scene(name).model;
    double mass_c = 0.0, mass_mj = 0.0;
    for (int b = 1; b < model.num_bodies(); ++b) mass_c += model.body(b).inertia.mass;
    for (int b = 1; b < slot->nbody; ++b) mass_mj += slot->body_mass[b];
    if (std::abs(mass_c - mass_mj) > 1e-9 * mass_c || slot->nv != model.nv())
      throw std::runtime_error("bench: MuJoCo's " + name + " differs from coulomb's (mass " + std::to_string(mass_mj) +
                               " vs " + std::to_string(mass_c) + ", nv " + std::to_string(slot->nv) + " vs " +
                               std::to_string(model.nv()) + ")");
  }
  return slot.get();
}

Run run_mujoco(const std::string& name, int solver, int steps) {
  const mjModel* m = cached_model(name, solver);
  std::unique_ptr<mjData, MjDataDeleter> data(mj_makeData(m));
  mjData* d = data.get();
  const io::Scene& s = scene(name);
  set_mujoco_state(m, d, s.model, s.q0, s.v0);
  std::vector<mjtNum> jac_a(3 * m->nv), jac_b(3 * m->nv);

  Run r;
  r.window = std::min(kWindow, steps);
  for (int k = 0; k < steps; ++k) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    mj_step(m, d);
    r.cpu += thread_cpu_seconds() - c0;
    r.wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    ++r.steps;
    r.iterations += d->solver_iter;
    r.contacts += d->ncon;
    if (k < steps - r.window) continue;
    r.iterations_window += d->solver_iter;
    // d->contact, the kinematics and efc_force are those of the step's start; qvel is new.
    for (int i = 0; i < d->ncon; ++i) {
      const mjContact& c = d->contact[i];
      if (c.efc_address < 0) continue;
      mjtNum f[6];
      mj_contactForce(m, d, i, f);
      if (!(f[0] > 0.0)) continue;
      const int ba = m->geom_bodyid[c.geom1], bb = m->geom_bodyid[c.geom2];
      mj_jac(m, d, jac_a.data(), nullptr, c.pos, ba);
      mj_jac(m, d, jac_b.data(), nullptr, c.pos, bb);
      Eigen::Vector3d v = Eigen::Vector3d::Zero();
      for (int row = 0; row < 3; ++row)
        for (int j = 0; j < m->nv; ++j) v[row] += (jac_b[row * m->nv + j] - jac_a[row * m->nv + j]) * d->qvel[j];
      const Eigen::Vector3d n(c.frame[0], c.frame[1], c.frame[2]);
      r.slip += (v - v.dot(n) * n).norm();
      ++r.slip_count;
    }
  }
  r.failures = d->warning[mjWARN_CONTACTFULL].number + d->warning[mjWARN_CNSTRFULL].number +
               d->warning[mjWARN_BADQACC].number;
  mj_forward(m, d);
  r.contacts_end = d->ncon;
  for (int i = 0; i < d->ncon; ++i) r.penetration_end = std::max(r.penetration_end, -d->contact[i].dist);
  for (int j = 0; j < m->njnt; ++j)
    if (m->jnt_type[j] == mjJNT_FREE && d->qpos[m->jnt_qposadr[j] + 2] < kFallenZ) ++r.fallen;
  return r;
}

// ---- the benchmark ----

struct Peer {
  const char* label;
  int solver;
};

void set_counters(benchmark::State& state, const std::string& e, const Run& r) {
  state.counters[e + "_steps_per_s"] = r.steps_per_s();
  state.counters[e + "_wall_steps_per_s"] = r.wall_steps_per_s();
  state.counters[e + "_it"] = r.mean_iterations();
  state.counters[e + "_it_last100"] = r.mean_iterations_window();
  state.counters[e + "_contacts"] = r.mean_contacts();
  state.counters[e + "_contacts_end"] = r.contacts_end;
  state.counters[e + "_pen_end"] = r.penetration_end;
  state.counters[e + "_slip"] = r.mean_slip();
  state.counters[e + "_fallen"] = r.fallen;
  state.counters[e + "_failures"] = r.failures;
}

void simulate(benchmark::State& state, const std::string& name, const std::vector<Peer>& peers) {
  const int steps = num_steps();
  // Load (and cache) everything before the first timed run.
  scene(name);
  for (const Peer& p : peers) cached_model(name, p.solver);
  for (auto _ : state) {
    const Run c = run_coulomb(name, steps);
    std::vector<Run> mj;
    for (const Peer& p : peers) mj.push_back(run_mujoco(name, p.solver, steps));
    set_counters(state, "coulomb", c);
    double best = 0.0;
    for (size_t i = 0; i < peers.size(); ++i) {
      set_counters(state, peers[i].label, mj[i]);
      best = std::max(best, mj[i].steps_per_s());
    }
    state.counters["ratio_newton"] = mj.empty() ? 0.0 : c.steps_per_s() / mj[0].steps_per_s();
    state.counters["ratio_best"] = best > 0 ? c.steps_per_s() / best : 0.0;
    state.counters["steps"] = steps;
    state.counters["nv"] = scene(name).model.nv();
    state.SetIterationTime(c.cpu);
  }
}

const int registered = [] {
  const std::vector<Peer> newton = {{"mujoco", mjSOL_NEWTON}};
  const std::vector<Peer> all = {{"mujoco", mjSOL_NEWTON}, {"mujoco_cg", mjSOL_CG}, {"mujoco_pgs", mjSOL_PGS}};
  const std::vector<std::pair<std::string, std::vector<Peer>>> scenes = {
      {"clutter", all}, {"clutter_no_walls", all}, {"clutter_80", all}, {"clutter_160", all}, {"a1_drop", newton}};
  for (const auto& [name, peers] : scenes)
    benchmark::RegisterBenchmark(("Simulate/" + name).c_str(), simulate, name, peers)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  return 0;
}();

}  // namespace
