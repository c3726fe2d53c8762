// Inverse dynamics with rigid contact and friction (Zapolsky & Drumwright; digest
// ../shared/digests/inverse-dynamics.md §8.7, §10 item 16): time per solve against the number of
// contacts n, for every formulation, on two scenes:
//   a1     the Unitree A1 (../shared/models/a1.urdf, floating base, 18 dof) standing on flat
//          ground, q̈_des = 0. The contacts are multiplied at each foot–ground interface as in
//          the paper (§8.7): n = 4c with c points per foot on a circle of radius 2 mm around the
//          foot's lowest point (c = 1: the point itself), normal +z, φ = 0, μ = 1; n < 4 uses
//          fewer feet (1: FR; 2: FR and RL, a diagonal pair).
//   grasp  the KUKA iiwa (../shared/models/kuka_iiwa_robot.urdf, fixed base, 7 dof) holding a
//          free 8 cm box (6000 kg/m³, a separate floating body: the unactuated subspace is the
//          box's 6 dof) between iiwa_link_7 and two opposite faces of the box: 4 base contacts,
//          two per face, normals into the box, φ = 0, μ = 1; n = 4c with c points per base
//          contact on a 2 mm circle in the face plane; n < 4 uses fewer base contacts (2: one
//          per face).
// Formulations: lcp_noslip (ID_LCP,∞), lcp_coulomb (ID_LCP,μ), qp_coulomb (ID_QP,μ with
// Stage II), qp_coulomb_one_stage (stage_two = false), qp_noslip (ID_QP,∞, with Stage II).
//
// Benchmarks:
//   ID/<scene>/<formulation>/<n>      warm, steady state (the controller use case): the same
//       InverseDynamics object and contacts every iteration, v perturbed by ~1e-9 between
//       iterations (16 fixed random perturbations, cycled) so that nothing can be reused
//       verbatim; 3 untimed solves first. Time: CPU time of InverseDynamics::solve (model
//       assembly — CRBA, bias forces, kinematics, contact Jacobian — plus IdSolver::solve).
//   IDcold/<scene>/<formulation>/<n>  the first solve of a freshly constructed InverseDynamics
//       (no warm start, buffers allocated), wall time of that solve alone (manual time; the
//       construction is not timed).
// Counters (means per solve): solver_us = IdStats::solve_time (IdSolver::solve alone, wall),
// wall_us = wall time of the whole InverseDynamics::solve (so assembly = wall_us − solver_us),
// cpu_us = thread CPU time per solve (read around the whole loop), ok = fraction of solves with
// status kSolved / kInconsistent, ok_with_message = fraction solved but with a message (e.g.
// Stage II did not converge and Stage I's impulses were kept; the first failure or message of each
// benchmark goes to stderr), warm_started
// (LCP,∞: the previous active set was used; QP: Stage I's Lemke warm start was accepted),
// solver_iterations (PPM iterations / Lemke pivots), stage_two_iterations, stage_two_dimension,
// lcp_size, contacts.
//
// Cap: when the warm (timed) solves of a (scene, formulation) took more than 50 ms of CPU time
// each on average at some n (--id_cap_ms=X changes the limit), the larger n are not run, warm or
// cold: those benchmarks are skipped with the error message "capped: ...".
//
// scripts/id_bench_report.py turns the JSON output into the tables of docs/benchmarks.md
// ("Inverse dynamics"); scripts/bench_report.sh runs it (SECTIONS=id).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/scene/scene.h"

namespace {

namespace id = coulomb::inverse_dynamics;
using coulomb::contact::Contact;
using coulomb::contact::ContactSet;
using Eigen::Vector3d;
using Eigen::VectorXd;

constexpr double kTimeStep = 1e-3;      // Δt [s]
constexpr double kCircleRadius = 2e-3;  // radius of the circle the multiplied contacts lie on [m]
double cap_seconds = 50e-3;             // a solve slower than this stops the sweep (--id_cap_ms)
double perturbation = 1e-9;             // |δv| [m/s, rad/s] (--id_perturbation)
const int kContactCounts[] = {1, 2, 4, 8, 16, 32, 48, 64};

std::string shared_model(const std::string& file) { return std::string(COULOMB_SHARED_DIR) + "/models/" + file; }

/// A robot scene, its actuated coordinates, the state and the base contacts (one per foot or
/// fingertip) with the plane each is multiplied in.
struct Scene {
  coulomb::scene::Scene scene;
  std::vector<int> actuated;
  VectorXd q, v;
  std::vector<Contact> base;           // φ = 0, the normal set
  std::vector<Vector3d> circle_u, circle_v;  // orthonormal axes of each base contact's circle

  /// n contacts: the first n base contacts when n ≤ base.size(), else n / base.size() points
  /// on a circle around each (n must then be a multiple of base.size()).
  ContactSet contacts(int n) const {
    const int b = static_cast<int>(base.size());
    ContactSet set;
    if (n <= b) {
      set.contacts.assign(base.begin(), base.begin() + n);
      return set;
    }
    if (n % b != 0) throw std::invalid_argument("contact count " + std::to_string(n) + " is not a multiple of the base contacts");
    const int c = n / b;
    for (int i = 0; i < b; ++i) {
      for (int j = 0; j < c; ++j) {
        const double theta = 2.0 * M_PI * j / c;
        Contact k = base[i];
        k.p_W += kCircleRadius * (std::cos(theta) * circle_u[i] + std::sin(theta) * circle_v[i]);
        set.contacts.push_back(k);
      }
    }
    return set;
  }
};

/// The A1 standing on flat ground (the stance of tests/inverse_dynamics/id_test_util.h).
Scene make_a1() {
  Scene s;
  const std::string yaml =
      "time_step: 0.001\nduration: 1\ncontact: {mu: 1.0}\nbodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
      "robots:\n  - urdf: " + shared_model("a1.urdf") +
      "\n    floating: true\n    position: [0, 0, 0.3123]\n"
      "    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: 0.8, RL_thigh_joint: 0.8,"
      " FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: -1.5, RL_calf_joint: -1.5}\n";
  s.scene = coulomb::io::parse_scene(yaml, "<id_bench a1>");
  const auto& model = s.scene.model;
  s.actuated = id::joint_dofs(model);
  s.q = s.scene.q0;
  s.v = VectorXd::Zero(model.nv());
  coulomb::geometry::CollisionWorld world(model, s.scene.geometries, s.scene.collision);
  coulomb::multibody::Workspace ws(model);
  coulomb::multibody::forward_kinematics(model, ws, s.q);
  world.update_poses(ws);
  ContactSet found;
  coulomb::contact::gather_contacts(world, s.scene.contact, found);
  if (found.size() != 4) throw std::runtime_error("A1 stance: expected 4 foot contacts, found " + std::to_string(found.size()));
  // Order FR, RL, FL, RR (n = 2: a diagonal pair), from the signs of the feet's positions.
  const double want[4][2] = {{+1, -1}, {-1, +1}, {+1, +1}, {-1, -1}};
  for (const auto& sign : want) {
    for (const Contact& c : found.contacts) {
      if (c.p_W.x() * sign[0] > 0 && c.p_W.y() * sign[1] > 0) {
        Contact k = c;
        if (k.body_a != 0) throw std::runtime_error("A1 stance: a foot contact's body A is not the ground");
        k.phi = 0.0;
        k.n_W = Vector3d::UnitZ();
        k.R_WC = coulomb::contact::contact_frame(k.n_W);
        k.p_W.z() = 0.0;
        s.base.push_back(k);
        s.circle_u.push_back(Vector3d::UnitX());
        s.circle_v.push_back(Vector3d::UnitY());
      }
    }
  }
  if (s.base.size() != 4) throw std::runtime_error("A1 stance: could not identify the four feet");
  return s;
}

/// The iiwa holding a free box between iiwa_link_7 and two opposite faces of the box.
Scene make_grasp() {
  Scene s;
  const double a = 0.08, density = 6000.0, mass = density * a * a * a;
  char box[256];
  std::snprintf(box, sizeof box, "  - name: box\n    mass: %.6g\n    shapes: [{type: box, size: [%g, %g, %g]}]\n", mass, a,
                a, a);
  const std::string yaml =
      "time_step: 0.001\nduration: 1\ncontact: {mu: 1.0}\nbodies:\n" + std::string(box) +
      "robots:\n  - urdf: " + shared_model("kuka_iiwa_robot.urdf") +
      "\n    joint_positions: {iiwa_joint_1: 0.2, iiwa_joint_2: 0.7, iiwa_joint_3: 0.0, iiwa_joint_4: -1.3,"
      " iiwa_joint_5: 0.1, iiwa_joint_6: 0.9, iiwa_joint_7: 0.3}\n";
  s.scene = coulomb::io::parse_scene(yaml, "<id_bench grasp>");
  const auto& model = s.scene.model;
  s.actuated = id::joint_dofs(model);  // the 7 arm joints; the box's floating joint is unactuated
  if (s.actuated.size() != 7) throw std::runtime_error("grasp: expected 7 actuated joints");
  s.q = s.scene.q0;
  s.v = VectorXd::Zero(model.nv());
  const int hand = model.body_index("iiwa_link_7"), box_body = model.body_index("box");
  coulomb::multibody::Workspace ws(model);
  coulomb::multibody::forward_kinematics(model, ws, s.q);
  // The box sits 10 cm out along the last link's z axis (beyond the flange), axes aligned with
  // the link's.
  const auto& X_WH = ws.X_WB[hand];
  const Vector3d center = X_WH.act(Vector3d(0, 0, 0.10));
  const Eigen::Quaterniond quat(X_WH.R);
  const auto& joint = model.body(box_body).joint;
  s.q.segment<3>(joint.q_index) = center;
  s.q.segment<4>(joint.q_index + 3) << quat.w(), quat.x(), quat.y(), quat.z();
  const Vector3d ex = X_WH.R.col(0), ey = X_WH.R.col(1), ez = X_WH.R.col(2);
  // Base contacts in the order (+x face, +y), (−x face, +y), (+x face, −y), (−x face, −y):
  // n = 2 has one per face. Body A is the hand, B the box; the normal points into the box.
  const double face[4] = {+1, -1, +1, -1}, side[4] = {+1, +1, -1, -1};
  for (int i = 0; i < 4; ++i) {
    Contact k;
    k.body_a = hand;
    k.body_b = box_body;
    k.p_W = center + face[i] * 0.5 * a * ex + side[i] * 0.25 * a * ey;
    k.n_W = -face[i] * ex;
    k.R_WC = coulomb::contact::contact_frame(k.n_W);
    k.phi = 0.0;
    k.material.mu = 1.0;
    s.base.push_back(k);
    s.circle_u.push_back(ey);
    s.circle_v.push_back(ez);
  }
  return s;
}

const Scene& scene(const std::string& name) {
  if (name == "a1") {
    static const Scene s = make_a1();
    return s;
  }
  if (name == "grasp") {
    static const Scene s = make_grasp();
    return s;
  }
  throw std::invalid_argument("unknown scene " + name);
}

struct Variant {
  const char* name;
  id::Formulation formulation;
  bool stage_two;
};
const Variant kVariants[] = {
    {"lcp_noslip", id::Formulation::kLcpNoSlip, true},
    {"lcp_coulomb", id::Formulation::kLcpCoulomb, true},
    {"qp_coulomb", id::Formulation::kQpCoulomb, true},
    {"qp_coulomb_one_stage", id::Formulation::kQpCoulomb, false},
    {"qp_noslip", id::Formulation::kQpNoSlip, true},
};

id::IdParameters parameters(const Variant& variant) {
  id::IdParameters p;
  p.formulation = variant.formulation;
  p.stage_two = variant.stage_two;
  return p;
}

/// 16 perturbations of v, entries uniform in ±perturbation.
std::vector<VectorXd> perturbations(int nv) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> u(-perturbation, perturbation);
  std::vector<VectorXd> out(16, VectorXd(nv));
  for (VectorXd& d : out)
    for (int i = 0; i < nv; ++i) d[i] = u(rng);
  return out;
}

/// Slowest solve seen so far per "scene/formulation" [s] (for the cap).
std::map<std::string, double>& slowest() {
  static std::map<std::string, double> m;
  return m;
}
std::map<std::string, int>& capped_at() {
  static std::map<std::string, int> m;
  return m;
}

/// Skips the benchmark when an earlier n of the same scene and formulation was over the cap.
bool skip_if_capped(benchmark::State& state, const std::string& key, int n) {
  auto it = capped_at().find(key);
  if (it == capped_at().end() || n <= it->second) return false;
  char msg[160];
  std::snprintf(msg, sizeof msg, "capped: a warm solve at n = %d took %.1f ms CPU > %.0f ms", it->second,
                1e3 * slowest()[key], 1e3 * cap_seconds);
  state.SkipWithError(msg);
  return true;
}

void note_time(const std::string& key, int n, double seconds) {
  double& s = slowest()[key];
  s = std::max(s, seconds);
  if (seconds > cap_seconds && capped_at().count(key) == 0) capped_at()[key] = n;
}

/// The first failed solve (or solved with a message) of each benchmark is reported on stderr.
void report_failure(const std::string& name, const id::IdResults& r) {
  static std::set<std::string> seen;
  if (!seen.insert(name).second) return;
  std::fprintf(stderr, "id_bench: %s: %s: %s\n", name.c_str(), id::to_string(r.status), r.message.c_str());
}

/// CPU time of this thread [s] (a system call: read around loops, not around each solve).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Tally {
  double solver = 0, wall = 0, cpu = 0, ok = 0, messages = 0, warm = 0, iterations = 0, stage_two_iterations = 0,
         stage_two_dimension = 0, lcp_size = 0;
  int solves = 0;
  void add(const id::IdResults& r, double wall_seconds, const std::string& name) {
    solver += r.stats.solve_time;
    wall += wall_seconds;
    ok += r.ok() ? 1.0 : 0.0;
    messages += r.ok() && !r.message.empty() ? 1.0 : 0.0;
    if (!r.ok() || !r.message.empty()) report_failure(name, r);
    warm += r.stats.warm_started ? 1.0 : 0.0;
    iterations += r.stats.solver_iterations;
    stage_two_iterations += r.stats.stage_two_iterations;
    stage_two_dimension += r.stats.stage_two_dimension;
    lcp_size += r.stats.lcp_size;
    ++solves;
  }
  void report(benchmark::State& state, int n) const {
    // Divisions (not products with 1/solves), so that "every solve" is exactly 1.
    const double k = solves > 0 ? solves : 1.0;
    state.counters["solver_us"] = 1e6 * solver / k;
    state.counters["wall_us"] = 1e6 * wall / k;
    state.counters["cpu_us"] = 1e6 * cpu / k;
    state.counters["ok"] = ok / k;
    state.counters["ok_with_message"] = messages / k;
    state.counters["warm_started"] = warm / k;
    state.counters["solver_iterations"] = iterations / k;
    state.counters["stage_two_iterations"] = stage_two_iterations / k;
    state.counters["stage_two_dimension"] = stage_two_dimension / k;
    state.counters["lcp_size"] = lcp_size / k;
    state.counters["contacts"] = n;
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_Warm(benchmark::State& state, const std::string& scene_name, const Variant& variant, int n) {
  const std::string key = scene_name + "/" + variant.name;
  if (skip_if_capped(state, key, n)) return;
  const Scene& s = scene(scene_name);
  const ContactSet contacts = s.contacts(n);
  const std::vector<VectorXd> dv = perturbations(static_cast<int>(s.v.size()));
  const VectorXd qdd = VectorXd::Zero(static_cast<int>(s.actuated.size()));
  id::InverseDynamics inv(s.scene.model, s.actuated, parameters(variant));
  VectorXd v = s.v;
  // Warm-up: the first (cold) solve, then two warm ones (fewer when they are slow).
  for (int k = 0; k < 3; ++k) {
    v = s.v + dv[k];
    const double c0 = thread_cpu_seconds();
    inv.solve(s.q, v, qdd, kTimeStep, contacts);
    if (thread_cpu_seconds() - c0 > cap_seconds) break;
  }
  Tally tally;
  size_t k = 3;
  const std::string name = "ID/" + key + "/" + std::to_string(n);
  const double c0 = thread_cpu_seconds();
  for (auto _ : state) {
    v = s.v + dv[k++ % dv.size()];
    const auto t0 = std::chrono::steady_clock::now();
    const id::IdResults& r = inv.solve(s.q, v, qdd, kTimeStep, contacts);
    const double t = seconds_since(t0);
    benchmark::DoNotOptimize(r.tau.data());
    tally.add(r, t, name);
  }
  tally.cpu = thread_cpu_seconds() - c0;
  tally.report(state, n);
  if (tally.solves > 0) note_time(key, n, tally.cpu / tally.solves);
}

void BM_Cold(benchmark::State& state, const std::string& scene_name, const Variant& variant, int n) {
  const std::string key = scene_name + "/" + variant.name;
  if (skip_if_capped(state, key, n)) return;
  const Scene& s = scene(scene_name);
  const ContactSet contacts = s.contacts(n);
  const VectorXd qdd = VectorXd::Zero(static_cast<int>(s.actuated.size()));
  Tally tally;
  const std::string name = "IDcold/" + key + "/" + std::to_string(n);
  for (auto _ : state) {
    id::InverseDynamics inv(s.scene.model, s.actuated, parameters(variant));
    const double c0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    const id::IdResults& r = inv.solve(s.q, s.v, qdd, kTimeStep, contacts);
    const double t = seconds_since(t0);
    tally.cpu += thread_cpu_seconds() - c0;
    benchmark::DoNotOptimize(r.tau.data());
    state.SetIterationTime(t);
    tally.add(r, t, name);
  }
  tally.report(state, n);
}

void register_all() {
  for (const char* scene_name : {"a1", "grasp"}) {
    for (const Variant& variant : kVariants) {
      for (int n : kContactCounts) {
        const std::string suffix = std::string(scene_name) + "/" + variant.name + "/" + std::to_string(n);
        const std::string sc = scene_name;
        benchmark::RegisterBenchmark(("ID/" + suffix).c_str(),
                                     [sc, &variant, n](benchmark::State& st) { BM_Warm(st, sc, variant, n); })
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("IDcold/" + suffix).c_str(),
                                     [sc, &variant, n](benchmark::State& st) { BM_Cold(st, sc, variant, n); })
            ->Unit(benchmark::kMicrosecond)
            ->UseManualTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --id_cap_ms=X: the cap (default 50 ms); --id_perturbation=X: the size of the perturbations of
  // v in the warm benchmarks (default 1e-9; 0 solves the identical problem every time, which lets
  // every warm start succeed). Taken out of argv before Google Benchmark's flags.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--id_cap_ms=", 12) == 0) {
      cap_seconds = 1e-3 * std::atof(argv[i] + 12);
      if (!(cap_seconds > 0.0)) {
        std::fprintf(stderr, "coulomb_id_bench: --id_cap_ms must be > 0\n");
        return 1;
      }
      continue;
    }
    if (std::strncmp(argv[i], "--id_perturbation=", 18) == 0) {
      perturbation = std::atof(argv[i] + 18);
      if (!(perturbation >= 0.0)) {
        std::fprintf(stderr, "coulomb_id_bench: --id_perturbation must be >= 0\n");
        return 1;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
