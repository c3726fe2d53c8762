// coulomb_peer_bench: coulomb's side of the peer comparison (bench/peers/README.md, `make
// bench-peers`). Two subcommands, both printing one JSON object on stdout:
//
//   coulomb_peer_bench export SCENE.yaml [--seeds N] [--perturbation P] [--settle T]
//     The neutral description of the scene from which bench/peers/models.py builds the MuJoCo
//     (MJCF) and Drake (MultibodyPlant) models: time step, gravity, integrator, contact
//     parameters, every body of coulomb's Model (joint to its parent with X_PJ, axis, limits and
//     damping; mass, centre of mass and inertia about it in the body frame), every collision
//     geometry (shape, X_BG, robot id), joint springs, the initial state, and N starting states
//     perturbed by P [m] (seeds 1…N). For the model checks it adds, at q0, every body's pose,
//     centre of mass and inertia in the world, every geometry's pose in the world and every
//     joint's axis and origin in the world (what MuJoCo's mj_kinematics and Drake's plant compute
//     from their own models). With --settle T, the starting states perturb the settled state
//     instead of q0: the scene simulated by coulomb (its own approximation and integrator, SAP's
//     default tolerances) for T seconds from q0, then put at rest (v = 0). The piles' scaling is
//     measured from there: cost per step of a resting pile, not of objects in free fall.
//
//   coulomb_peer_bench simulate SCENE.yaml [--approximation sap|lagged] [--seed K] [--steps N]
//                               [--window W] [--perturbation P] [--q-file FILE]
//     Simulates N steps from starting state K (0: the scene's own; K ≥ 1: perturbed as in
//     export; --q-file: the JSON array of the configuration to start from, at rest, such as an
//     exported starting state) with the scene's integrator and time step and SAP's default
//     tolerances, timing only the loop of Simulator::step() calls as a whole (thread CPU time and
//     wall time; each step's statistics go to an array allocated before the clock starts). Reports
//     iterations per step (SAP Newton iterations), mean contacts, the max penetration at the
//     final state (a fresh collision query), and the steady slip: the mean over the last W steps
//     of StepStats::mean_slip (mean tangential speed over the contacts carrying load at the end
//     of the step).
//
//   Options of the other command are refused (exit 1), not ignored.
//
// Starting states: every translational coordinate (floating-joint positions and prismatic
// joints) is offset by a uniform number in [−P, P] drawn from std::mt19937_64(seed); nothing
// else changes. All scenes of the comparison start at rest.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "coulomb/contact/contact_approximation.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"

namespace {

namespace io = coulomb::io;
namespace mb = coulomb::multibody;
namespace geo = coulomb::geometry;
namespace sim = coulomb::simulation;
using json = nlohmann::ordered_json;

constexpr const char* kUsage =
    "usage: coulomb_peer_bench export SCENE.yaml [--seeds N] [--perturbation P] [--settle T]\n"
    "       coulomb_peer_bench simulate SCENE.yaml [--approximation sap|lagged] [--seed K] [--steps N]\n"
    "                                   [--window W] [--perturbation P] [--q-file FILE]\n"
    "                                   [--repeats R]\n";

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

json vec(const Eigen::Vector3d& v) { return json::array({v.x(), v.y(), v.z()}); }
json mat(const Eigen::Matrix3d& m) {
  json rows = json::array();
  for (int i = 0; i < 3; ++i) rows.push_back(json::array({m(i, 0), m(i, 1), m(i, 2)}));
  return rows;
}
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
/// Pose as {"position": p, "quaternion": [w, x, y, z]} (w ≥ 0).
json pose(const coulomb::math::Transform& X) {
  Eigen::Quaterniond q(X.R);
  q.normalize();
  if (q.w() < 0) q.coeffs() *= -1.0;
  return {{"position", vec(X.p)}, {"quaternion", json::array({q.w(), q.x(), q.y(), q.z()})}};
}

/// The starting state of `seed` (0: q0 unchanged): translational coordinates offset by U[−P, P].
Eigen::VectorXd starting_q(const mb::Model& model, const Eigen::VectorXd& q0, int seed, double perturbation) {
  Eigen::VectorXd q = q0;
  if (seed == 0) return q;
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  std::uniform_real_distribution<double> uniform(-perturbation, perturbation);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Joint& joint = model.body(b).joint;
    if (joint.type == mb::JointType::kFloating)
      for (int k = 0; k < 3; ++k) q[joint.q_index + k] += uniform(rng);
    else if (joint.type == mb::JointType::kPrismatic)
      q[joint.q_index] += uniform(rng);
  }
  return q;
}

void require_at_rest(const io::Scene& s) {
  if (s.v0.size() && s.v0.cwiseAbs().maxCoeff() != 0.0)
    throw std::runtime_error(s.source + ": the peer comparison needs scenes that start at rest");
}

json shape_json(const geo::Shape& shape) {
  json out = {{"type", geo::shape_type_name(shape.type)}};
  switch (shape.type) {
    case geo::ShapeType::kSphere: out["radius"] = shape.radius; break;
    case geo::ShapeType::kBox: out["size"] = vec(shape.size); break;
    case geo::ShapeType::kCapsule:
    case geo::ShapeType::kCylinder:
      out["radius"] = shape.radius;
      out["length"] = shape.length;
      break;
    case geo::ShapeType::kHalfSpace: break;
    case geo::ShapeType::kConvexMesh:
    case geo::ShapeType::kMesh:  // no peer counterpart: bench/peers/models.py names it and stops
      out["num_vertices"] = shape.vertices.size();
      break;
  }
  return out;
}

json material_json(const geo::ContactMaterial& m) {
  auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  return {{"mu", opt(m.mu)},
          {"stiffness", opt(m.stiffness)},
          {"dissipation_time", opt(m.dissipation_time)},
          {"hunt_crossley_dissipation", opt(m.hunt_crossley_dissipation)},
          {"stiction_tolerance", opt(m.stiction_tolerance)}};
}

sim::SimulatorParameters simulator_parameters(const io::Scene& s) {
  sim::SimulatorParameters params;
  params.solver = sim::parse_solver(s.solver);
  params.time_step = s.time_step;
  params.integrator = sim::parse_integrator(s.integrator);
  params.compute_energy = false;  // a statistic the peers do not compute per step either
  return params;
}

/// The scene simulated for `duration` seconds from q0 (its own approximation and integrator):
/// the configuration it reaches. Deterministic: the same on every call.
Eigen::VectorXd settled_q(const io::Scene& scene, double duration) {
  sim::Simulator simulator(scene, simulator_parameters(scene));
  const int steps = static_cast<int>(std::lround(duration / scene.time_step));
  int failures = 0;
  for (int k = 0; k < steps; ++k)
    if (simulator.step().status != coulomb::solvers::sap::SapSolverStatus::kSuccess) ++failures;
  if (failures > 0)
    throw std::runtime_error(scene.source + ": settling for " + std::to_string(duration) + " s: " +
                             std::to_string(failures) + " steps did not converge");
  return simulator.q();
}

int export_scene(const std::string& path, int seeds, double perturbation, double settle) {
  const io::Scene s = io::load_scene(path);
  require_at_rest(s);
  const mb::Model& model = s.model;
  mb::Workspace ws(model);
  mb::forward_kinematics(model, ws, s.q0);

  json out;
  out["source"] = path;
  out["description"] = s.description;
  out["time_step"] = s.time_step;
  out["duration"] = s.duration;
  out["gravity"] = vec(model.gravity());
  out["solver"] = s.solver;
  out["integrator"] = s.integrator;
  out["contact"] = {{"mu", s.contact.mu},
                    {"stiffness", number(s.contact.stiffness)},
                    {"dissipation_time", s.contact.dissipation_time},
                    {"hunt_crossley_dissipation", s.contact.hunt_crossley_dissipation},
                    {"stiction_tolerance", s.contact.stiction_tolerance},
                    {"approximation", coulomb::contact::to_string(s.contact.approximation)}};
  out["collision_margin"] = s.collision.margin;
  out["nq"] = model.nq();
  out["nv"] = model.nv();

  json bodies = json::array();
  double total_mass = 0.0;
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Body& body = model.body(b);
    const mb::Joint& j = body.joint;
    const coulomb::math::Transform& X_WB = ws.X_WB[b];
    const Eigen::Vector3d com = body.inertia.com();
    const Eigen::Matrix3d I = body.inertia.inertia_about_com();
    const coulomb::math::Transform X_WP = ws.X_WB[body.parent];
    const coulomb::math::Transform X_WJ = X_WP * j.X_PJ;  // the joint frame at q = 0 of its own joint
    total_mass += body.inertia.mass;
    bodies.push_back(
        {{"index", b},
         {"name", body.name},
         {"parent", body.parent},
         {"joint",
          {{"name", j.name},
           {"type", mb::joint_type_name(j.type)},
           {"X_PJ", pose(j.X_PJ)},
           {"axis", vec(j.axis)},
           {"lower", number(j.limits.lower)},
           {"upper", number(j.limits.upper)},
           {"damping", j.damping},
           {"q_index", j.q_index},
           {"v_index", j.v_index},
           // At q0: the joint's axis and origin in the world (the child frame's origin, which
           // coincides with the joint frame's for revolute joints).
           {"axis_W", vec(X_WB.R * j.axis)},
           {"origin_W", vec(j.type == mb::JointType::kPrismatic ? X_WJ.p : X_WB.p)}}},
         {"mass", body.inertia.mass},
         {"com", vec(com)},
         {"inertia_com", mat(I)},
         {"X_WB", pose(X_WB)},
         {"com_W", vec(X_WB.p + X_WB.R * com)},
         {"inertia_com_W", mat(X_WB.R * I * X_WB.R.transpose())}});
  }
  out["bodies"] = bodies;
  out["total_mass"] = total_mass;

  json geometries = json::array();
  for (const geo::Geometry& g : s.geometries) {
    geometries.push_back({{"name", g.name},
                          {"body", g.body},
                          {"shape", shape_json(g.shape)},
                          {"X_BG", pose(g.X_BG)},
                          {"X_WG", pose(ws.X_WB[g.body] * g.X_BG)},
                          {"robot", g.robot},
                          {"self_collision", g.self_collision},
                          {"group", g.group},
                          {"mask", g.mask},
                          {"material", material_json(g.material)}});
  }
  out["geometries"] = geometries;

  json springs = json::array();
  for (const io::JointSpring& sp : s.springs)
    springs.push_back({{"joint", sp.joint}, {"stiffness", sp.stiffness}, {"damping", sp.damping},
                       {"rest_position", sp.rest_position}});
  out["springs"] = springs;
  out["num_actuators"] = s.actuators.size();
  out["num_couplers"] = s.couplers.size();
  out["num_constraints"] = s.constraints.size();
  out["num_joint_frictions"] = s.joint_frictions.size();
  json robots = json::array();
  for (const io::SceneRobot& r : s.robots)
    robots.push_back({{"name", r.name}, {"urdf", r.urdf_path}, {"floating", r.floating}, {"root_body", r.root_body}});
  out["robots"] = robots;

  out["q0"] = std::vector<double>(s.q0.data(), s.q0.data() + s.q0.size());
  out["v0"] = std::vector<double>(s.v0.data(), s.v0.data() + s.v0.size());
  out["perturbation"] = perturbation;
  out["settle"] = settle;
  const Eigen::VectorXd q_base = settle > 0.0 ? settled_q(s, settle) : s.q0;
  json states = json::array();
  for (int seed = 1; seed <= seeds; ++seed) {
    const Eigen::VectorXd q = starting_q(model, q_base, seed, perturbation);
    states.push_back({{"seed", seed}, {"q", std::vector<double>(q.data(), q.data() + q.size())}});
  }
  out["starting_states"] = states;
  std::cout << out.dump() << "\n";
  return 0;
}

/// The configuration in FILE: a JSON array of n_q numbers.
Eigen::VectorXd read_q_file(const std::string& file, int nq) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": cannot open");
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error(file + ": " + e.what());
  }
  if (!j.is_array() || static_cast<int>(j.size()) != nq)
    throw std::runtime_error(file + ": expected an array of " + std::to_string(nq) + " numbers (n_q)");
  Eigen::VectorXd q(nq);
  for (int i = 0; i < nq; ++i) {
    if (!j[i].is_number() || !std::isfinite(j[i].get<double>()))
      throw std::runtime_error(file + ": q[" + std::to_string(i) + "] is not a finite number");
    q[i] = j[i].get<double>();
  }
  return q;
}

int simulate(const std::string& path, const std::string& approximation, int seed, int steps, int window,
             double perturbation, const std::string& q_file, int repeats) {
  io::Scene s = io::load_scene(path);
  require_at_rest(s);
  if (!approximation.empty()) s.contact.approximation = coulomb::contact::parse_contact_approximation(approximation);
  const std::string approximation_name = coulomb::contact::to_string(s.contact.approximation);
  const Eigen::VectorXd q_start =
      q_file.empty() ? starting_q(s.model, s.q0, seed, perturbation) : read_q_file(q_file, s.model.nq());
  const sim::SimulatorParameters params = simulator_parameters(s);

  window = std::clamp(window, 1, steps);
  // The loop of steps is timed as a whole: two clock reads per run, not per step (on some machines
  // a CLOCK_THREAD_CPUTIME_ID read is a system call of 0.4 µs, a sixth of a small scene's step).
  // Each step's statistics are copied into an array sized before the clock starts.
  struct StepRecord {
    int iterations;
    int contacts;
    bool failed;
    double slip;
  };
  // Up to `repeats` runs in this process, each from a new Simulator at q_start (stopping once their
  // CPU time reaches kRepeatBudgetSeconds, peers.py's `repeated` budget), keeping the least time,
  // as peers.py does for MuJoCo's mj_step in its own process: a run's time then leaves out the
  // process's first-use costs (the first touch of code and heap pages; LD_BIND_NOW=1 does not
  // remove them), which MuJoCo's timed runs do not pay either. Every run must end at the first
  // one's configuration to the bit (checked): only the time may differ.
  constexpr double kRepeatBudgetSeconds = 2.0;
  std::vector<StepRecord> records(static_cast<std::size_t>(steps));
  std::vector<double> cpu_runs;
  double cpu = 0.0, wall = 0.0, spent = 0.0;
  std::optional<sim::Simulator> simulator;
  Eigen::VectorXd q_end;
  for (int run = 0; run < repeats && (run == 0 || spent < kRepeatBudgetSeconds); ++run) {  // repeats ≥ 1 (main)
    simulator.emplace(s, params);
    simulator->set_state(q_start, Eigen::VectorXd::Zero(simulator->model().nv()));
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    for (StepRecord& r : records) {
      const sim::StepStats& st = simulator->step();
      r = {st.solver_iterations, st.contacts, st.status != coulomb::solvers::sap::SapSolverStatus::kSuccess,
           st.mean_slip};
    }
    const double run_cpu = thread_cpu_seconds() - c0;
    const double run_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    cpu_runs.push_back(run_cpu);
    spent += run_cpu;
    if (run == 0 || run_cpu < cpu) cpu = run_cpu, wall = run_wall;
    if (run == 0) {
      q_end = simulator->q();
    } else if (!(simulator->q().array() == q_end.array()).all()) {
      throw std::runtime_error(path + ": run " + std::to_string(run + 1) +
                               " did not repeat the first run (final configuration differs)");
    }
  }
  double iterations = 0.0, iterations_window = 0.0, contacts = 0.0, slip = 0.0;
  int failures = 0;
  for (int k = 0; k < steps; ++k) {
    const StepRecord& r = records[static_cast<std::size_t>(k)];
    iterations += r.iterations;
    contacts += r.contacts;
    if (r.failed) ++failures;
    if (k >= steps - window) {
      iterations_window += r.iterations;
      slip += r.slip;
    }
  }
  // The final state: penetration (a fresh query) and bodies that fell below z = −0.5 m.
  const mb::Model& model = simulator->model();
  mb::Workspace ws(model);
  mb::forward_kinematics(model, ws, simulator->q());
  geo::CollisionWorld world(model, simulator->scene().geometries, simulator->scene().collision);
  world.update_poses(ws);
  std::vector<geo::ContactPoint> points;
  world.compute_contacts(points);
  double penetration = 0.0;
  for (const geo::ContactPoint& p : points) penetration = std::max(penetration, -p.phi);
  int fallen = 0;
  for (int b = 1; b < model.num_bodies(); ++b)
    if (model.body(b).joint.type == mb::JointType::kFloating && ws.X_WB[b].p.z() < -0.5) ++fallen;

  json out = {{"engine", "coulomb_" + approximation_name},
              {"source", path},
              {"seed", seed},
              {"steps", steps},
              {"window", window},
              {"cpu_s", cpu},
              {"cpu_s_runs", cpu_runs},
              {"wall_s", wall},
              {"steps_per_s", steps / cpu},
              {"wall_steps_per_s", steps / wall},
              {"iterations", iterations / steps},
              {"iterations_window", iterations_window / window},
              {"contacts", contacts / steps},
              {"penetration_end", penetration},
              {"slip_window", slip / window},
              {"failures", failures},
              {"fallen", fallen},
              {"final_q", std::vector<double>(simulator->q().data(), simulator->q().data() + simulator->q().size())}};
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 3) throw std::invalid_argument("missing arguments");
    const std::string command = argv[1], scene = argv[2];
    int seeds = 5, seed = 0, steps = 100, window = 20, repeats = 1;
    double perturbation = 1e-9, settle = 0.0;
    std::string approximation, q_file;
    // Each option belongs to one command (--perturbation to both); another command's option is
    // refused rather than ignored (--settle given to simulate would otherwise start unsettled).
    const std::string export_only = " --seeds --settle ";
    const std::string simulate_only = " --approximation --seed --steps --window --q-file --repeats ";
    for (int i = 3; i < argc; ++i) {
      const std::string a = argv[i];
      const std::string& other = command == "export" ? simulate_only : export_only;
      if (other.find(" " + a + " ") != std::string::npos)
        throw std::invalid_argument("option " + a + " does not apply to " + command);
      if (i + 1 >= argc) throw std::invalid_argument("option " + a + " needs a value");
      const std::string value = argv[++i];
      if (a == "--seeds") seeds = std::stoi(value);
      else if (a == "--seed") seed = std::stoi(value);
      else if (a == "--steps") steps = std::stoi(value);
      else if (a == "--window") window = std::stoi(value);
      else if (a == "--perturbation") perturbation = std::stod(value);
      else if (a == "--approximation") approximation = value;
      else if (a == "--settle") settle = std::stod(value);
      else if (a == "--q-file") q_file = value;
      else if (a == "--repeats") repeats = std::stoi(value);
      else throw std::invalid_argument("unknown option " + a);
    }
    if (repeats < 1) throw std::invalid_argument("--repeats ≥ 1");
    if (steps < 1 || seeds < 0 || seed < 0 || !(perturbation >= 0) || !(settle >= 0 && std::isfinite(settle)))
      throw std::invalid_argument("--steps ≥ 1, --seeds ≥ 0, --seed ≥ 0, --perturbation ≥ 0 and --settle ≥ 0");
    if (command == "export") return export_scene(scene, seeds, perturbation, settle);
    if (command == "simulate") return simulate(scene, approximation, seed, steps, window, perturbation, q_file, repeats);
    throw std::invalid_argument("unknown command " + command);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coulomb_peer_bench: %s\n%s", e.what(), kUsage);
    return 1;
  }
}
