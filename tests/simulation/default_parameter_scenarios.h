// The acceptance scenarios for coulomb's default contact parameters (issue 9 item 4;
// docs/contact.md, "Default parameters"): scenes a user writes first, with no contact, collision
// or solver keys, simulated at δt = 10 ms.
//
//  1. stack:   ten 1 kg, 0.1 m boxes stacked on the ground, each displaced by up to ±2 mm in x
//              and y and ±3° in yaw (fixed-seed generator below); 10 s. The top box must drift
//              ≤ 2 mm from its initial position.
//  2. pair:    a 1000 kg box (0.1 m) resting on a 1 kg box (0.1 m), both perturbed as above;
//              5 s. Penetration ≤ 2 mm, neither box tips over.
//  3. resting: one 1 kg, 0.1 m box on the ground; 2 s. Penetration ≤ 0.5 mm.
//  4. sliding: the same box launched along the ground at 2.2 m/s (μ = 1 by default); 2 s. It
//              must not tumble: it stops, upright, after about v²/(2μg) = 0.247 m.
//  5. clutter: examples/scenes/clutter.yaml (its own k = 1e12, τ_d = δt; only the code defaults,
//              β, σ and the contact approximation, reach it): SAP iterations and penetration.
//
// Shared by tests/simulation/default_parameters_test.cc (the defaults, no overrides) and the
// sweep tool bench/default_parameters_sweep.cc (candidate values as Overrides). Header-only,
// no GoogleTest.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation::default_parameters {

/// Candidate values; unset fields keep coulomb's defaults (nothing is written into the scene).
struct Overrides {
  std::optional<double> stiffness;            ///< contact: stiffness [N/m]
  std::optional<double> dissipation_time;     ///< contact: dissipation_time τ_d [s]
  std::optional<double> margin;               ///< collision: margin [m]
  std::optional<double> beta;                 ///< SapRegularization::beta (near-rigid)
  std::optional<double> sigma;                ///< SapRegularization::sigma
  std::optional<std::string> approximation;   ///< contact_approximation: sap | similar | lagged
  std::optional<double> hunt_crossley_dissipation;  ///< contact: hunt_crossley_dissipation d [s/m]
  std::optional<double> stiction_tolerance;   ///< contact: stiction_tolerance [m/s]
  std::optional<std::string> integrator;      ///< integrator: implicit-euler | symplectic-euler | midpoint
};

inline std::string number(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

/// The scene keys for `o` (empty without overrides). With `material` false, only the keys that
/// are not material values (approximation), for scenes that set their own contact block.
inline std::string scene_keys(const Overrides& o, bool material = true) {
  std::string out;
  if (o.approximation) out += "contact_approximation: " + *o.approximation + "\n";
  if (o.integrator) out += "integrator: " + *o.integrator + "\n";
  if (!material) return out;
  std::vector<std::string> contact;
  if (o.stiffness) contact.push_back("stiffness: " + number(*o.stiffness));
  if (o.dissipation_time) contact.push_back("dissipation_time: " + number(*o.dissipation_time));
  if (o.hunt_crossley_dissipation) contact.push_back("hunt_crossley_dissipation: " + number(*o.hunt_crossley_dissipation));
  if (o.stiction_tolerance) contact.push_back("stiction_tolerance: " + number(*o.stiction_tolerance));
  if (!contact.empty()) {
    out += "contact: {";
    for (size_t i = 0; i < contact.size(); ++i) out += (i ? ", " : "") + contact[i];
    out += "}\n";
  }
  if (o.margin) out += "collision: {margin: " + number(*o.margin) + "}\n";
  return out;
}

/// The simulator settings of a scene: its time step and integrator, the regularization overrides.
inline SimulatorParameters parameters_for(const io::Scene& scene, const Overrides& o) {
  SimulatorParameters p;
  p.time_step = scene.time_step;
  p.integrator = parse_integrator(scene.integrator);
  if (o.beta) p.regularization.beta = *o.beta;
  if (o.sigma) p.regularization.sigma = *o.sigma;
  return p;
}

/// SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable sequence for the perturbations.
class Perturbation {
 public:
  explicit Perturbation(std::uint64_t seed) : state_(seed) {}
  /// Uniform in [−1, 1].
  double symmetric() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  }

 private:
  std::uint64_t state_;
};

constexpr double kEdge = 0.1;                      ///< box edge [m]
constexpr double kOffset = 0.002;                  ///< ±2 mm in x and y
constexpr double kYaw = 3.0 * M_PI / 180.0;        ///< ±3° about z
constexpr std::uint64_t kSeed = 20240917;

inline const std::string kGround =
    "  - name: ground\n    fixed: true\n    shapes: [{type: box, size: [10, 10, 0.2], position: [0, 0, -0.1]}]\n";

/// A 0.1 m box of `mass` at `position`, yaw `yaw`, initial world velocity `v`.
inline std::string box(const std::string& name, double mass, const Eigen::Vector3d& position, double yaw = 0.0,
                       const Eigen::Vector3d& v = Eigen::Vector3d::Zero()) {
  std::string s = "  - name: " + name + "\n    mass: " + number(mass) +
                  "\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n    position: [" + number(position.x()) + ", " +
                  number(position.y()) + ", " + number(position.z()) + "]\n    rpy: [0, 0, " + number(yaw) + "]\n";
  if (!v.isZero()) s += "    linear_velocity: [" + number(v.x()) + ", " + number(v.y()) + ", " + number(v.z()) + "]\n";
  return s;
}

/// Boxes stacked from the ground, touching (φ = 0), each displaced by the generator.
inline std::string stack_yaml(const std::vector<double>& masses, const Overrides& o) {
  Perturbation random(kSeed);
  std::string yaml = scene_keys(o) + "bodies:\n" + kGround;
  for (size_t i = 0; i < masses.size(); ++i) {
    const double dx = kOffset * random.symmetric(), dy = kOffset * random.symmetric(), yaw = kYaw * random.symmetric();
    yaml += box("box" + std::to_string(i), masses[i], Eigen::Vector3d(dx, dy, kEdge * (i + 0.5)), yaw);
  }
  return yaml;
}

// --- measurements --------------------------------------------------------------------------

struct BodyPose {
  Eigen::Vector3d p;
  double tilt;  ///< angle between the body's z axis and the world's z [rad]
};

inline BodyPose pose(const Simulator& sim, const std::string& body) {
  const multibody::Joint& j = sim.model().body(sim.model().joint_body(body)).joint;
  const Eigen::VectorXd& q = sim.q();
  const double w = q[j.q_index + 3], x = q[j.q_index + 4], y = q[j.q_index + 5], z = q[j.q_index + 6];
  const double n2 = w * w + x * x + y * y + z * z;
  const double Rzz = 1.0 - 2.0 * (x * x + y * y) / n2;  // R(2, 2) of the unit quaternion
  return {q.segment<3>(j.q_index), std::acos(std::clamp(Rzz, -1.0, 1.0))};
}

/// What every run counts.
struct RunStats {
  int steps = 0, failures = 0, max_iterations = 0;
  double iterations = 0.0;  ///< mean SAP iterations per step
  double max_penetration = 0.0;
  void add(const StepStats& s) {
    ++steps;
    failures += s.status != solvers::sap::SapSolverStatus::kSuccess;
    iterations += (s.solver_iterations - iterations) / steps;
    max_iterations = std::max(max_iterations, s.solver_iterations);
    max_penetration = std::max(max_penetration, s.max_penetration);
  }
};

inline Simulator make_simulator(const std::string& yaml, const std::string& name, const Overrides& o) {
  io::Scene scene = io::parse_scene(yaml, name);
  const SimulatorParameters p = parameters_for(scene, o);
  return Simulator(std::move(scene), p);
}

struct StackResult {
  RunStats run;
  double top_drift = 0.0;             ///< max over the run of ‖p_top(t) − p_top(0)‖ [m]
  double top_horizontal_drift = 0.0;  ///< the same in x, y [m]
  double top_drop = 0.0;              ///< max over the run of z_top(0) − z_top(t) [m]
  double max_tilt = 0.0;              ///< over every box and step [rad]
};

/// Scenario 1: ten boxes for `duration` (10 s).
inline StackResult run_stack(const Overrides& o = {}, double duration = 10.0, int boxes = 10) {
  Simulator sim = make_simulator(stack_yaml(std::vector<double>(boxes, 1.0), o), "stack", o);
  const std::string top = "box" + std::to_string(boxes - 1);
  const Eigen::Vector3d p0 = pose(sim, top).p;
  StackResult r;
  const int steps = static_cast<int>(std::lround(duration / sim.parameters().time_step));
  for (int k = 0; k < steps; ++k) {
    r.run.add(sim.step());
    const Eigen::Vector3d d = pose(sim, top).p - p0;
    r.top_drift = std::max(r.top_drift, d.norm());
    r.top_horizontal_drift = std::max(r.top_horizontal_drift, d.head<2>().norm());
    r.top_drop = std::max(r.top_drop, -d.z());
    for (int b = 0; b < boxes; ++b) r.max_tilt = std::max(r.max_tilt, pose(sim, "box" + std::to_string(b)).tilt);
  }
  return r;
}

struct PairResult {
  RunStats run;
  double settled_penetration = 0.0;  ///< max penetration over the last second [m]
  double max_tilt = 0.0;             ///< over both boxes and every step [rad]
  double heavy_drop = 0.0;           ///< max of z_heavy(0) − z_heavy(t) [m]
};

/// Scenario 2: a 1000 kg box on a 1 kg box for `duration` (5 s).
inline PairResult run_pair(const Overrides& o = {}, double duration = 5.0) {
  Simulator sim = make_simulator(stack_yaml({1.0, 1000.0}, o), "pair", o);
  const double z0 = pose(sim, "box1").p.z();
  PairResult r;
  const int steps = static_cast<int>(std::lround(duration / sim.parameters().time_step));
  const int last_second = steps - static_cast<int>(std::lround(1.0 / sim.parameters().time_step));
  for (int k = 0; k < steps; ++k) {
    const StepStats& s = sim.step();
    r.run.add(s);
    if (k >= last_second) r.settled_penetration = std::max(r.settled_penetration, s.max_penetration);
    r.max_tilt = std::max({r.max_tilt, pose(sim, "box0").tilt, pose(sim, "box1").tilt});
    r.heavy_drop = std::max(r.heavy_drop, z0 - pose(sim, "box1").p.z());
  }
  return r;
}

struct RestingResult {
  RunStats run;
  double settled_penetration = 0.0;  ///< max penetration over the last second [m]
};

/// Scenario 3: one box resting for `duration` (2 s).
inline RestingResult run_resting(const Overrides& o = {}, double duration = 2.0) {
  Simulator sim =
      make_simulator(scene_keys(o) + "bodies:\n" + kGround + box("box", 1.0, Eigen::Vector3d(0, 0, 0.05)), "resting", o);
  RestingResult r;
  const int steps = static_cast<int>(std::lround(duration / sim.parameters().time_step));
  const int last_second = steps - static_cast<int>(std::lround(1.0 / sim.parameters().time_step));
  for (int k = 0; k < steps; ++k) {
    const StepStats& s = sim.step();
    r.run.add(s);
    if (k >= last_second) r.settled_penetration = std::max(r.settled_penetration, s.max_penetration);
  }
  return r;
}

struct SlidingResult {
  RunStats run;
  double max_tilt = 0.0;           ///< [rad]
  double max_angular_speed = 0.0;  ///< [rad/s]
  double max_rise = 0.0;           ///< max of z(t) − z(0) [m] (SAP's gliding)
  double distance = 0.0;           ///< x at the end [m]
  double final_speed = 0.0;        ///< ‖v‖ at the end [m/s]
  double final_tilt = 0.0;         ///< [rad]
};

constexpr double kSlideSpeed = 2.2;  ///< [m/s]

/// Scenario 4: a box launched along the ground at 2.2 m/s, for `duration` (2 s).
inline SlidingResult run_sliding(const Overrides& o = {}, double duration = 2.0) {
  Simulator sim = make_simulator(
      scene_keys(o) + "bodies:\n" + kGround + box("box", 1.0, Eigen::Vector3d(0, 0, 0.05), 0.0, {kSlideSpeed, 0, 0}),
      "sliding", o);
  const multibody::Joint& j = sim.model().body(sim.model().joint_body("box")).joint;
  const double z0 = pose(sim, "box").p.z();
  SlidingResult r;
  const int steps = static_cast<int>(std::lround(duration / sim.parameters().time_step));
  for (int k = 0; k < steps; ++k) {
    r.run.add(sim.step());
    const BodyPose p = pose(sim, "box");
    r.max_tilt = std::max(r.max_tilt, p.tilt);
    r.max_rise = std::max(r.max_rise, p.p.z() - z0);
    r.max_angular_speed = std::max(r.max_angular_speed, sim.v().segment<3>(j.v_index).norm());  // ω first
  }
  r.distance = pose(sim, "box").p.x();
  r.final_speed = sim.v().segment<6>(j.v_index).norm();
  r.final_tilt = pose(sim, "box").tilt;
  return r;
}

struct ClutterResult {
  RunStats run;
  double steady_iterations = 0.0;   ///< mean over t > 5 s
  double steady_penetration = 0.0;  ///< max over t > 5 s [m]
};

/// Scenario 5: examples/scenes/clutter.yaml for `duration` (10 s), with the approximation and
/// the regularization of `o` (its contact block is the paper's and stays).
/// With `own_material` false, the file's `contact:` and `contact_approximation:` lines are
/// dropped, so that the pile uses the candidate's (or coulomb's default) model and material
/// instead of the paper's (sap, k = 1e12, τ_d = δt).
inline ClutterResult run_clutter(const std::string& clutter_yaml_file, const Overrides& o = {}, double duration = 10.0,
                                 bool own_material = true) {
  const std::string keys = scene_keys(o, /*material=*/!own_material);
  io::Scene scene;
  if (keys.empty() && own_material) {
    scene = io::load_scene(clutter_yaml_file);
  } else {
    // The candidate's keys first, then the file's own keys (without its contact line if asked).
    std::ifstream in(clutter_yaml_file);
    std::string text, line;
    while (std::getline(in, line)) {
      const bool material_line = line.rfind("contact:", 0) == 0;
      const bool approximation_line = line.rfind("contact_approximation:", 0) == 0;
      if (!own_material && (material_line || approximation_line)) continue;
      if (o.approximation && approximation_line) continue;
      if (!own_material && o.margin && line.rfind("collision:", 0) == 0) continue;
      text += line + "\n";
    }
    scene = io::parse_scene(keys + text, clutter_yaml_file);
  }
  const SimulatorParameters p = parameters_for(scene, o);
  Simulator sim(std::move(scene), p);
  ClutterResult r;
  int steady = 0;
  const int steps = static_cast<int>(std::lround(duration / sim.parameters().time_step));
  for (int k = 0; k < steps; ++k) {
    const StepStats& s = sim.step();
    r.run.add(s);
    if (s.time > 5.0) {
      ++steady;
      r.steady_iterations += (s.solver_iterations - r.steady_iterations) / steady;
      r.steady_penetration = std::max(r.steady_penetration, s.max_penetration);
    }
  }
  return r;
}

}  // namespace coulomb::simulation::default_parameters
