// coulomb_fidelity: every analytic check of the simulator in one Markdown report (docs/fidelity.md,
// written by scripts/fidelity_report.sh; `make fidelity-report`).
//
// Each case builds its scene as inline YAML (io::parse_scene), runs simulation::Simulator with
// every requested integrator (implicit-euler, symplectic-euler, midpoint) and, for the cases with
// contact, every contact approximation the scene loader accepts, and compares what it measures
// with an analytic truth. The contact cases and the joint-limit cases also run once per
// integrator with `solver: lstable` (Drumwright's L-stable solver; "lstable" in the approximation
// column; --solvers sap,lstable selects). It prints, per case, the truth and the settings, then one table row per
// (approximation, integrator, quantity): expected, measured and the error (relative, or absolute
// where the expected value is 0). It asserts nothing: the unit tests assert, this page reports.
// A run that throws is reported as such in its table; the program exits 0 unless its options are
// wrong.
//
//   coulomb_fidelity [--quick] [--approximations sap,similar,lagged] [--integrators a,b,...]
//                    [--solvers sap,lstable] [--cases name,...] [--list]
//
// Needs only libcoulomb (no Google Benchmark, no MuJoCo): it always builds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "default_parameter_scenarios.h"  // tests/simulation: the issue-9 default-parameter scenes
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb {
namespace {

using simulation::Integrator;
using simulation::Simulator;
using simulation::SimulatorParameters;

constexpr double kG = 9.81;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

std::string fmt(const char* format, double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, x);
  return buffer;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// ---------------------------------------------------------------------------------------------
// What the scene loader of this build accepts.

struct LoaderSupport {
  bool approximation_key = false;           ///< top-level `contact_approximation:` exists
  std::vector<std::string> approximations;  ///< accepted values ("sap" always)
  std::string dissipation_key;              ///< `contact:` key of the Hunt–Crossley d, "" if none
};

bool parses(const std::string& yaml) {
  try {
    io::parse_scene(yaml, "<probe>");
    return true;
  } catch (const std::exception&) {  // io::SceneError: unknown key or value
    return false;
  }
}

LoaderSupport detect_loader_support() {
  LoaderSupport s;
  s.approximation_key = parses("contact_approximation: sap\n");
  s.approximations.push_back("sap");
  for (const char* name : {"similar", "lagged"})
    if (parses(std::string("contact_approximation: ") + name + "\n")) s.approximations.push_back(name);
  for (const char* key : {"hunt_crossley_dissipation", "dissipation"})
    if (parses(std::string("contact: {") + key + ": 1.0}\n")) {
      s.dissipation_key = key;
      break;
    }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Results.

/// One measured quantity. `expected` NaN: no analytic number (expected_text says what is
/// expected, no error is computed).
struct Row {
  Row(std::string quantity_in, double expected_in, double measured_in)
      : quantity(std::move(quantity_in)), expected(expected_in), measured(measured_in) {}
  std::string quantity;
  double expected = kNaN;
  double measured = kNaN;
  std::string expected_text;  ///< overrides the printed expected value when not empty
  std::string measured_text;  ///< overrides the printed measured value when not empty
};

struct Outcome {
  std::vector<Row> rows;
  int steps = 0;
  int failures = 0;  ///< steps whose solve (SAP, or lstable's QP/linear solve) did not converge
  std::string note;
};

struct Config {
  std::string approximation;  ///< "" for cases without contact; "lstable" with solver = kLStable
  Integrator integrator = Integrator::kImplicitEuler;
  /// Stage-2 solver. With kLStable the scene says `solver: lstable` and no contact approximation
  /// (Drumwright's solver reads the contact's k and τ_d, never the similar/lagged Hunt–Crossley d).
  simulation::Solver solver = simulation::Solver::kSap;
  bool quick = false;
  const LoaderSupport* support = nullptr;
};

/// Contact material of a case (scene `contact:` defaults). τ_d is SAP's dissipation time scale;
/// d the Hunt–Crossley dissipation of the similar and lagged approximations.
struct Material {
  double mu = 1.0;
  double stiffness = 1e6;      ///< k [N/m]
  double dissipation_time = 1e-3;  ///< τ_d [s] (sap)
  double hc_dissipation = 50.0;    ///< d [s/m] (similar, lagged)
};

/// 1e6 → "1e6", 2.5e5 → "2.5e5", 0.001 → "0.001".
std::string short_number(double x) {
  if (std::abs(x) < 1e4) return fmt("%g", x);
  const int exponent = static_cast<int>(std::floor(std::log10(std::abs(x))));
  return fmt("%g", x / std::pow(10.0, exponent)) + "e" + std::to_string(exponent);
}

std::string material_text(const Material& m) {
  return "μ = " + short_number(m.mu) + ", k = " + short_number(m.stiffness) + " N/m, τ_d = " +
         short_number(m.dissipation_time) + " s (sap, lstable), d = " + short_number(m.hc_dissipation) +
         " s/m (similar, lagged)";
}

/// The scene header: settings, gravity, contact approximation and material, collision options.
std::string scene_header(const Config& config, double dt, const Eigen::Vector3d& gravity, const Material* material,
                         double margin = 0.002, bool speculative = false) {
  std::string yaml = "time_step: " + num(dt) + "\nduration: 1.0\n" + "gravity: [" + num(gravity.x()) + ", " +
                     num(gravity.y()) + ", " + num(gravity.z()) + "]\n" + "integrator: " +
                     simulation::to_string(config.integrator) + "\n";
  if (config.solver == simulation::Solver::kLStable) yaml += "solver: lstable\n";
  else if (!config.approximation.empty() && config.support->approximation_key)
    yaml += "contact_approximation: " + config.approximation + "\n";
  if (material) {
    yaml += "contact: {mu: " + num(material->mu) + ", stiffness: " + num(material->stiffness) +
            ", dissipation_time: " + num(material->dissipation_time);
    if (!config.support->dissipation_key.empty())
      yaml += ", " + config.support->dissipation_key + ": " + num(material->hc_dissipation);
    yaml += "}\n";
  }
  yaml += "collision: {margin: " + num(margin) + (speculative ? ", speculative: true" : "") + "}\n";
  return yaml;
}

std::unique_ptr<Simulator> make_simulator(const std::string& yaml, const std::string& name, const Config& config,
                                          double dt) {
  SimulatorParameters params;
  params.time_step = dt;
  params.integrator = config.integrator;
  params.solver = config.solver;
  return std::make_unique<Simulator>(io::parse_scene(yaml, name), params);
}

void step(Simulator& sim, Outcome& out) {
  if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++out.failures;
  ++out.steps;
}

/// A free body's floating joint and its world-frame state (from forward kinematics, independent
/// of how the floating joint stores its velocity).
struct FreeBody {
  const Simulator* sim = nullptr;
  int body = 0;
  const multibody::Joint* joint = nullptr;
  mutable std::unique_ptr<multibody::Workspace> ws;

  FreeBody(const Simulator& s, const std::string& name) : sim(&s) {
    body = s.model().joint_body(name);
    if (body < 0) throw std::runtime_error("no floating joint '" + name + "'");
    joint = &s.model().body(body).joint;
    ws = std::make_unique<multibody::Workspace>(s.model());
  }
  Eigen::Vector3d position() const { return sim->q().segment<3>(joint->q_index); }
  Eigen::Matrix3d rotation() const {
    const Eigen::VectorXd& q = sim->q();
    const int i = joint->q_index;
    return Eigen::Quaterniond(q[i + 3], q[i + 4], q[i + 5], q[i + 6]).normalized().toRotationMatrix();
  }
  /// (velocity of the body origin, angular velocity), world frame.
  std::pair<Eigen::Vector3d, Eigen::Vector3d> twist() const {
    multibody::forward_kinematics(sim->model(), *ws, sim->q(), sim->v());
    const Eigen::Matrix3d& R = ws->X_WB[body].R;
    return {R * ws->V_B[body].v, R * ws->V_B[body].w};
  }
  Eigen::Vector3d velocity() const { return twist().first; }
  Eigen::Vector3d angular_velocity() const { return twist().second; }
};

/// Sets a free body's world-frame velocity (v = [ω_W; v_W], the floating joint's convention,
/// include/coulomb/multibody/joint.h), other velocities unchanged.
void set_body_velocity(Simulator& sim, const FreeBody& b, const Eigen::Vector3d& v_W, const Eigen::Vector3d& w_W) {
  Eigen::VectorXd v = sim.v();
  v.segment<3>(b.joint->v_index) = w_W;
  v.segment<3>(b.joint->v_index + 3) = v_W;
  sim.set_state(sim.q(), v);
}

/// Least-squares line y = a + b t; returns (a, b).
std::pair<double, double> fit_line(const std::vector<double>& t, const std::vector<double>& y) {
  double St = 0, Sy = 0, Stt = 0, Sty = 0;
  const double n = static_cast<double>(t.size());
  for (size_t i = 0; i < t.size(); ++i) St += t[i], Sy += y[i], Stt += t[i] * t[i], Sty += t[i] * y[i];
  const double b = (n * Sty - St * Sy) / (n * Stt - St * St);
  return {(Sy - b * St) / n, b};
}

// ---------------------------------------------------------------------------------------------
// The cases.

struct Case {
  std::string name;
  std::string title;
  std::string truth;     ///< the analytic truth, one paragraph (Markdown)
  std::string settings;  ///< scene and solver settings
  bool contact = true;   ///< run per contact approximation
  std::function<Outcome(const Config&)> run;
  /// Also run with --solver lstable (one run per integrator, labelled "lstable" in the
  /// approximation column). Set in all_cases(): every contact case, and the cases without
  /// contact whose constraints (joint limits) reach the solver.
  bool lstable = false;
};

const std::string kGround = "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace}]\n";

std::string sphere(const std::string& name, double mass, double r, const Eigen::Vector3d& p) {
  return "  - name: " + name + "\n    mass: " + num(mass) + "\n    shapes: [{type: sphere, radius: " + num(r) +
         "}]\n    position: [" + num(p.x()) + ", " + num(p.y()) + ", " + num(p.z()) + "]\n";
}

// 1. μ = 0 launch.
const Material kLaunchMaterial{0.0, 1e6, 1e-3, 50.0};
Outcome run_mu0_launch(const Config& config) {
  const double dt = 1e-3, r = 0.05, v0 = 0.5;
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, &kLaunchMaterial) + "bodies:\n" + kGround +
                           sphere("ball", 1.0, r, {0, 0, r});
  auto sim = make_simulator(yaml, "mu0_launch", config, dt);
  FreeBody ball(*sim, "ball");
  Outcome out;
  for (int k = 0; k < 500; ++k) step(*sim, out);  // settle 0.5 s
  const double z_rest = ball.position().z();
  set_body_velocity(*sim, ball, {0, 0, v0}, {0, 0, 0});
  // Crossings of 0.1 mm above the rest height (linear interpolation): up, then down.
  const double level = z_rest + 1e-4;
  double z_max = z_rest, z_prev = z_rest, t_up = kNaN, t_down = kNaN;
  for (int k = 1; k <= 300; ++k) {
    step(*sim, out);
    const double z = ball.position().z();
    z_max = std::max(z_max, z);
    if (std::isnan(t_up) && z_prev < level && z >= level) t_up = (k - 1 + (level - z_prev) / (z - z_prev)) * dt;
    if (!std::isnan(t_up) && std::isnan(t_down) && z_prev >= level && z < level)
      t_down = (k - 1 + (z_prev - level) / (z_prev - z)) * dt;
    z_prev = z;
  }
  out.rows.push_back({"peak rise of the centre [mm]", 1e3 * v0 * v0 / (2 * kG), 1e3 * (z_max - z_rest)});
  // Time above rest + 0.1 mm, plus the analytic time spent below it at v0 (2 × 0.1 mm / v0).
  Row flight{"flight time, launch to landing [s]", 2 * v0 / kG, kNaN};
  if (!std::isnan(t_down)) flight.measured = t_down - t_up + 2e-4 / v0;
  else flight.measured_text = std::isnan(t_up) ? "never leaves the ground" : "not back in 0.3 s";
  out.rows.push_back(flight);
  return out;
}

// 2. Newton's cradle.
const Material kCradleMaterial{0.0, 1e5, 0.0, 0.0};
Outcome run_newton_cradle(const Config& config) {
  const double dt = 1e-3, r = 0.05, m = 1.0, v0 = 1.0, gap = 0.005;
  const int n = 5;
  std::string yaml = scene_header(config, dt, {0, 0, 0}, &kCradleMaterial) + "bodies:\n";
  for (int i = 0; i < n; ++i)
    yaml += sphere("s" + std::to_string(i), m, r, {i == 0 ? -gap : 2 * r * i, 0, 0});
  auto sim = make_simulator(yaml, "newton_cradle", config, dt);
  std::vector<FreeBody> balls;
  for (int i = 0; i < n; ++i) balls.emplace_back(*sim, "s" + std::to_string(i));
  set_body_velocity(*sim, balls[0], {v0, 0, 0}, {0, 0, 0});
  const double E0 = sim->energy(sim->q(), sim->v());
  Outcome out;
  const int steps = config.quick ? 100 : 200;
  double max_momentum_error = 0.0;
  for (int k = 0; k < steps; ++k) {
    step(*sim, out);
    double p = 0.0;
    for (const FreeBody& b : balls) p += m * b.velocity().x();
    max_momentum_error = std::max(max_momentum_error, std::abs(p - m * v0));
  }
  std::vector<double> vx;
  for (const FreeBody& b : balls) vx.push_back(b.velocity().x());
  double middle = 0.0;
  for (int i = 1; i < n - 1; ++i) middle = std::max(middle, std::abs(vx[i]));
  out.rows.push_back({"max over the run of |Σ m vₓ − m v₀| [N·s]", 0.0, max_momentum_error});
  out.rows.push_back({"final vₓ of the last sphere [m/s]", v0, vx[n - 1]});
  out.rows.push_back({"final vₓ of the first sphere [m/s]", 0.0, vx[0]});
  out.rows.push_back({"max final |vₓ| of spheres 2–4 [m/s]", 0.0, middle});
  out.rows.push_back({"most negative final vₓ (backwards) [m/s]", 0.0, std::min(0.0, *std::min_element(vx.begin(), vx.end()))});
  out.rows.push_back({"kinetic energy, end / start", 1.0, sim->energy(sim->q(), sim->v()) / E0});
  // Glued: neighbours still within the 2 mm collision margin at the end while the pair moves at
  // more than 1 cm/s. In the rigid answer spheres 1–4 touch at rest and the last has left; with
  // compliant contact the moving spheres separate (each front sphere ends at least as fast as the
  // one behind it) and are centimetres apart after 0.2 s.
  int glued = 0;
  for (int i = 0; i + 1 < n; ++i) {
    const double gap = (balls[i + 1].position() - balls[i].position()).norm() - 2 * r;
    if (gap < 0.002 && 0.5 * std::abs(vx[i] + vx[i + 1]) > 0.01) ++glued;
  }
  out.rows.push_back({"neighbour pairs within 2 mm at the end moving at > 1 cm/s (glued)", 0.0, static_cast<double>(glued)});
  return out;
}

// 3. Free rotation about the intermediate axis (Dzhanibekov).
// Euler's equations I ω̇ = (I ω) × ω in the body frame by RK4 at h: flip times (sign changes of
// ω_y) over [0, T].
std::vector<double> euler_equations_flips(const Eigen::Vector3d& I, Eigen::Vector3d w, double T, double h) {
  auto f = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d { return (I.cwiseProduct(x)).cross(x).cwiseQuotient(I); };
  std::vector<double> flips;
  const int n = static_cast<int>(std::lround(T / h));
  for (int k = 0; k < n; ++k) {
    const Eigen::Vector3d k1 = f(w), k2 = f(w + 0.5 * h * k1), k3 = f(w + 0.5 * h * k2), k4 = f(w + h * k3);
    const Eigen::Vector3d w1 = w + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    if ((w.y() > 0) != (w1.y() > 0)) flips.push_back((k + w.y() / (w.y() - w1.y())) * h);
    w = w1;
  }
  return flips;
}

const Eigen::Vector3d kPrincipal(1, 2, 3), kOmega0(0.01, 10, 0);
Outcome run_dzhanibekov(const Config& config) {
  static const std::vector<double> exact = euler_equations_flips(kPrincipal, kOmega0, 10.0, 1e-5);
  Outcome out;
  for (double dt : {1e-3, 1e-2}) {
    const std::string yaml = scene_header(config, dt, {0, 0, 0}, nullptr) +
                             "bodies:\n  - name: plate\n    mass: 1.0\n    inertia: [1, 2, 3, 0, 0, 0]\n"
                             "    angular_velocity: [" + num(kOmega0.x()) + ", " + num(kOmega0.y()) + ", " +
                             num(kOmega0.z()) + "]\n";
    auto sim = make_simulator(yaml, "dzhanibekov", config, dt);
    FreeBody plate(*sim, "plate");
    multibody::Workspace ws(sim->model());
    const Eigen::Vector3d L0 = multibody::spatial_momentum(sim->model(), ws, sim->q(), sim->v()).tau;
    const double E0 = sim->energy(sim->q(), sim->v());
    double max_dE = 0.0, max_dL = 0.0, wy_prev = kOmega0.y();
    std::vector<double> flips;
    const int steps = static_cast<int>(std::lround(10.0 / dt));
    for (int k = 1; k <= steps; ++k) {
      step(*sim, out);
      const Eigen::Vector3d L = multibody::spatial_momentum(sim->model(), ws, sim->q(), sim->v()).tau;
      max_dL = std::max(max_dL, (L - L0).norm() / L0.norm());
      max_dE = std::max(max_dE, std::abs(sim->energy(sim->q(), sim->v()) - E0) / E0);
      const double wy = (plate.rotation().transpose() * plate.angular_velocity()).y();
      if ((wy_prev > 0) != (wy > 0)) flips.push_back((k - 1 + wy_prev / (wy_prev - wy)) * dt);
      wy_prev = wy;
    }
    const std::string at = " (δt = " + fmt("%g", dt) + " s)";
    out.rows.push_back({"max ‖L_W(t) − L_W(0)‖ / ‖L_W(0)‖" + at, 0.0, max_dL});
    out.rows.push_back({"max |E(t) − E(0)| / E(0)" + at, 0.0, max_dE});
    out.rows.push_back({"flips of body ω_y in 10 s" + at, static_cast<double>(exact.size()), static_cast<double>(flips.size())});
    for (size_t i = 0; i < 3 && i < exact.size(); ++i) {
      Row row{"flip " + std::to_string(i + 1) + " time [s]" + at, exact[i], i < flips.size() ? flips[i] : kNaN};
      if (i >= flips.size()) row.measured_text = "no flip";
      out.rows.push_back(row);
    }
  }
  return out;
}

// 4. Free-floating Unitree A1.
Outcome run_a1_floating(const Config& config) {
  const double dt = 1e-3;
  const char* legs[] = {"FR", "FL", "RR", "RL"};
  // Joint positions mid-range, velocities uniform in [−0.5, 0.5] rad/s from a fixed-seed LCG
  // (the same numbers on every platform).
  std::uint64_t state = 20240611;
  auto uniform = [&state]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;  // [0, 1)
  };
  std::string positions, velocities;
  for (const char* leg : legs)
    for (const auto& [joint, q] : {std::pair<const char*, double>{"hip", 0.0}, {"thigh", 0.8}, {"calf", -1.8}}) {
      const std::string name = std::string(leg) + "_" + joint + "_joint";
      positions += (positions.empty() ? "" : ", ") + name + ": " + num(q);
      velocities += (velocities.empty() ? "" : ", ") + name + ": " + num(uniform() - 0.5);
    }
  const std::string yaml = scene_header(config, dt, {0, 0, 0}, nullptr) + "robots:\n  - urdf: " +
                           std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf\n    floating: true\n"
                           "    position: [0.3, -0.2, 1.0]\n    rpy: [0.1, -0.2, 0.3]\n"
                           "    linear_velocity: [0.1, -0.05, 0.2]\n    angular_velocity: [0.2, -0.3, 0.4]\n"
                           "    joint_positions: {" + positions + "}\n    joint_velocities: {" + velocities + "}\n";
  auto sim = make_simulator(yaml, "a1_floating", config, dt);
  const multibody::Model& model = sim->model();
  multibody::Workspace ws(model);
  const math::SpatialForce h0 = multibody::spatial_momentum(model, ws, sim->q(), sim->v());
  const double E0 = sim->energy(sim->q(), sim->v());
  double max_dE = 0.0, min_margin = std::numeric_limits<double>::infinity();
  Outcome out;
  const int steps = static_cast<int>(std::lround(1.0 / dt));
  for (int k = 0; k < steps; ++k) {
    step(*sim, out);
    max_dE = std::max(max_dE, std::abs(sim->energy(sim->q(), sim->v()) - E0) / E0);
    for (int b = 1; b < model.num_bodies(); ++b) {
      const multibody::Joint& j = model.body(b).joint;
      if (j.nq != 1) continue;
      const double q = sim->q()[j.q_index];
      min_margin = std::min({min_margin, q - j.limits.lower, j.limits.upper - q});
    }
  }
  const math::SpatialForce h = multibody::spatial_momentum(model, ws, sim->q(), sim->v());
  out.rows.push_back({"‖p(1 s) − p(0)‖ / ‖p(0)‖ (linear momentum)", 0.0, (h.f - h0.f).norm() / h0.f.norm()});
  out.rows.push_back({"‖L_O(1 s) − L_O(0)‖ / ‖L_O(0)‖ (angular, about the world origin)", 0.0,
                      (h.tau - h0.tau).norm() / h0.tau.norm()});
  out.rows.push_back({"max |E(t) − E(0)| / E(0)", 0.0, max_dE});
  out.rows.push_back({"max URDF joint damping [N·m·s/rad]", 0.0, model.damping().cwiseAbs().maxCoeff()});
  Row margin{"closest approach to a joint limit [rad]", kNaN, min_margin};
  margin.expected_text = "> 0 (no limit reached)";
  out.rows.push_back(margin);
  return out;
}

// 5. Bowling ball.
const Material kBowlingMaterial{0.3, 1e6, 1e-3, 50.0};
Outcome run_bowling(const Config& config) {
  const double dt = 1e-3, r = 0.1, v0 = 3.0, mu = kBowlingMaterial.mu;
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, &kBowlingMaterial) + "bodies:\n" + kGround +
                           sphere("ball", 1.0, r, {0, 0, r});
  auto sim = make_simulator(yaml, "bowling", config, dt);
  FreeBody ball(*sim, "ball");
  Outcome out;
  for (int k = 0; k < 200; ++k) step(*sim, out);  // settle 0.2 s
  const double z_rest = ball.position().z();
  set_body_velocity(*sim, ball, {v0, 0, 0}, {0, 0, 0});
  std::vector<double> t_fit, slip_fit;
  double lift = 0.0;
  const int steps = config.quick ? 600 : 1000;
  for (int k = 1; k <= steps; ++k) {
    step(*sim, out);
    const auto [v, w] = ball.twist();
    const double slip = (v + w.cross(Eigen::Vector3d(0, 0, -r))).x();
    if (slip > 0.1 * v0 && slip < 0.9 * v0) t_fit.push_back(k * dt), slip_fit.push_back(slip);
    lift = std::max(lift, ball.position().z() - z_rest);
  }
  Row t_star{"time to rolling t* [s] (zero of the fitted slip speed)", 2 * v0 / (7 * mu * kG), kNaN};
  if (t_fit.size() >= 3) {
    const auto [a, b] = fit_line(t_fit, slip_fit);
    t_star.measured = -a / b;
  } else {
    t_star.measured_text = "too few sliding samples";
  }
  out.rows.push_back(t_star);
  out.rows.push_back({"final speed [m/s]", 5.0 / 7.0 * v0, ball.velocity().x()});
  out.rows.push_back({"max lift of the centre above rest [mm]", 0.0, 1e3 * lift});
  return out;
}

// 6. Box sliding to a stop on level ground.
const Material kSlidingBoxMaterial{0.5, 1e6, 1e-3, 50.0};
Outcome run_sliding_box(const Config& config) {
  const double dt = 1e-3, h = 0.05, v0 = 2.2, mu = kSlidingBoxMaterial.mu;
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, &kSlidingBoxMaterial, 0.01) + "bodies:\n" +
                           kGround +
                           "  - name: box\n    mass: 1.0\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
                           "    position: [0, 0, " + num(h) + "]\n";
  auto sim = make_simulator(yaml, "sliding_box", config, dt);
  FreeBody box(*sim, "box");
  Outcome out;
  for (int k = 0; k < 200; ++k) step(*sim, out);  // settle 0.2 s
  const Eigen::Vector3d p0 = box.position();
  set_body_velocity(*sim, box, {v0, 0, 0}, {0, 0, 0});
  double lift = 0.0, max_w = 0.0;
  const int steps = config.quick ? 700 : 1000;
  for (int k = 0; k < steps; ++k) {
    step(*sim, out);
    lift = std::max(lift, box.position().z() - p0.z());
    max_w = std::max(max_w, box.angular_velocity().norm());
  }
  out.rows.push_back({"stopping distance [m]", v0 * v0 / (2 * mu * kG), box.position().x() - p0.x()});
  out.rows.push_back({"final speed [m/s]", 0.0, box.velocity().norm()});
  out.rows.push_back({"max lift above rest [mm]", 0.0, 1e3 * lift});
  out.rows.push_back({"max |ω| [rad/s]", 0.0, max_w});
  return out;
}

// The incline: a half-space through the origin with outward normal n = (sin α, 0, cos α);
// downhill d = (cos α, 0, −sin α).
std::string incline(double alpha) {
  return "  - name: incline\n    fixed: true\n    shapes: [{type: halfspace, normal: [" + num(std::sin(alpha)) +
         ", 0, " + num(std::cos(alpha)) + "]}]\n";
}

// 7. Sphere rolling down a 15° incline.
const Material kRollingMaterial{1.0, 1e6, 1e-3, 50.0};
Outcome run_sphere_incline(const Config& config) {
  const double alpha = 15.0 * M_PI / 180.0, r = 0.05, dt = 1e-3;
  const Eigen::Vector3d n(std::sin(alpha), 0, std::cos(alpha)), d(std::cos(alpha), 0, -std::sin(alpha));
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, &kRollingMaterial) + "bodies:\n" + incline(alpha) +
                           sphere("ball", 0.5, r, r * n);
  auto sim = make_simulator(yaml, "sphere_incline", config, dt);
  FreeBody ball(*sim, "ball");
  const Eigen::Vector3d p0 = ball.position();
  Outcome out;
  double lift = 0.0;
  for (int k = 0; k < 1000; ++k) {
    step(*sim, out);
    lift = std::max(lift, (ball.position() - p0).dot(n));
  }
  const double s = 0.5 * (5.0 / 7.0) * kG * std::sin(alpha);
  const auto [v, w] = ball.twist();
  out.rows.push_back({"s(1 s) along the slope [m]", s, (ball.position() - p0).dot(d)});
  out.rows.push_back({"v(1 s) along the slope [m/s]", 2 * s, v.dot(d)});
  out.rows.push_back({"contact-point slip speed at 1 s [m/s]", 0.0, (v + w.cross(-r * n)).norm()});
  out.rows.push_back({"max lift off the slope [mm]", 0.0, 1e3 * lift});
  return out;
}

// 8. Box sliding down a 30° incline.
const Material kSlidingInclineMaterial{0.3, 1e6, 1e-3, 50.0};
Outcome run_box_incline_slide(const Config& config) {
  const double alpha = 30.0 * M_PI / 180.0, h = 0.05, dt = 1e-3, mu = kSlidingInclineMaterial.mu;
  const Eigen::Vector3d n(std::sin(alpha), 0, std::cos(alpha)), d(std::cos(alpha), 0, -std::sin(alpha));
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, &kSlidingInclineMaterial, 0.01) + "bodies:\n" +
                           incline(alpha) +
                           "  - name: box\n    mass: 1.0\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
                           "    position: [" + num(h * n.x()) + ", 0, " + num(h * n.z()) + "]\n"
                           "    rpy: [0, " + num(alpha) + ", 0]\n";
  auto sim = make_simulator(yaml, "box_incline_slide", config, dt);
  FreeBody box(*sim, "box");
  const Eigen::Vector3d p0 = box.position();
  Outcome out;
  std::vector<double> t, vd;
  double lift = 0.0;
  for (int k = 1; k <= 1000; ++k) {
    step(*sim, out);
    if (k * dt >= 0.2 - 1e-12) t.push_back(k * dt), vd.push_back(box.velocity().dot(d));
    lift = std::max(lift, (box.position() - p0).dot(n));
  }
  const double a = kG * (std::sin(alpha) - mu * std::cos(alpha));
  out.rows.push_back({"acceleration, fit of v over [0.2, 1] s [m/s²]", a, fit_line(t, vd).second});
  out.rows.push_back({"v(1 s) along the slope [m/s]", a * 1.0, box.velocity().dot(d)});
  out.rows.push_back({"max lift off the slope [mm]", 0.0, 1e3 * lift});
  return out;
}

// 9. Box sticking on a 20° incline.
const Material kStickingMaterial{0.5, 1e6, 1e-3, 50.0};
Outcome run_box_incline_stick(const Config& config) {
  const double alpha = 20.0 * M_PI / 180.0, h = 0.05, dt = 1e-3;
  const Eigen::Vector3d n(std::sin(alpha), 0, std::cos(alpha)), d(std::cos(alpha), 0, -std::sin(alpha));
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, &kStickingMaterial) + "bodies:\n" + incline(alpha) +
                           "  - name: box\n    mass: 1.0\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
                           "    position: [" + num(h * n.x()) + ", 0, " + num(h * n.z()) + "]\n"
                           "    rpy: [0, " + num(alpha) + ", 0]\n";
  auto sim = make_simulator(yaml, "box_incline_stick", config, dt);
  FreeBody box(*sim, "box");
  const Eigen::Vector3d p0 = box.position();
  Outcome out;
  double s_half = 0.0;
  for (int k = 1; k <= 1000; ++k) {
    step(*sim, out);
    if (k == 500) s_half = (box.position() - p0).dot(d);
  }
  const double s = (box.position() - p0).dot(d);
  out.rows.push_back({"downhill displacement at 1 s [mm]", 0.0, 1e3 * s});
  out.rows.push_back({"creep speed over [0.5, 1] s [mm/s]", 0.0, 1e3 * (s - s_half) / 0.5});
  return out;
}

// 10. Undamped bounce.
const Material kBounceMaterial{0.5, 1e5, 0.0, 0.0};
Outcome run_restitution(const Config& config) {
  const double r = 0.05, v_in = 1.0, gap = 0.005, duration = 0.1;
  Outcome out;
  std::vector<double> dts = {1e-4, 1e-3, 1e-2};
  if (config.quick) dts.erase(dts.begin());
  for (double dt : dts) {
    const std::string yaml = scene_header(config, dt, {0, 0, 0}, &kBounceMaterial, 0.002, true) + "bodies:\n" +
                             kGround + sphere("ball", 1.0, r, {0, 0, r + gap});
    auto sim = make_simulator(yaml, "restitution", config, dt);
    FreeBody ball(*sim, "ball");
    set_body_velocity(*sim, ball, {0, 0, -v_in}, {0, 0, 0});
    double penetration = 0.0;
    const int steps = static_cast<int>(std::lround(duration / dt));
    for (int k = 0; k < steps; ++k) {
      step(*sim, out);
      penetration = std::max(penetration, r - ball.position().z());
    }
    const std::string at = " (δt = " + fmt("%g", dt) + " s)";
    Row e{"restitution e = v_out / v_in" + at, 1.0, ball.velocity().z() / v_in};
    if (ball.position().z() < r) e.measured_text = fmt("%.6g", e.measured) + " (still in contact at 0.1 s)";
    out.rows.push_back(e);
    out.rows.push_back({"max penetration [mm]" + at, kNaN, 1e3 * penetration});
    out.rows.back().expected_text = fmt("%.3g", 1e3 * v_in * std::sqrt(1.0 / kBounceMaterial.stiffness)) +
                                    " (v_in √(m/k))";
  }
  return out;
}

// 11. Free fall.
Outcome run_free_fall(const Config& config) {
  const double dt = 1e-3, z0 = 10.0;
  const std::string yaml = scene_header(config, dt, {0, 0, -kG}, nullptr) + "bodies:\n" +
                           sphere("ball", 0.524, 0.05, {0, 0, z0});
  auto sim = make_simulator(yaml, "free_fall", config, dt);
  FreeBody ball(*sim, "ball");
  Outcome out;
  for (int k = 0; k < 1000; ++k) step(*sim, out);
  const double t = sim->time();
  const double expected = config.integrator == Integrator::kMidpoint ? 0.0 : -0.5 * kG * t * dt;
  Row z{"z(1 s) − (z₀ − ½gt²) [mm]", 1e3 * expected, 1e3 * (ball.position().z() - (z0 - 0.5 * kG * t * t))};
  z.expected_text = config.integrator == Integrator::kMidpoint ? "0" : fmt("%.6g", 1e3 * expected) + " (−½gtδt)";
  out.rows.push_back(z);
  out.rows.push_back({"v_z(1 s) [m/s]", -kG * t, ball.velocity().z()});
  return out;
}

// 12. Spring-loaded slider.
Outcome run_spring_slider(const Config& config) {
  const double dt = 1e-3, x0 = 0.1, k_s = 100.0, m = 0.5, duration = 2.0;
  const std::string yaml = scene_header(config, dt, {0, 0, 0}, nullptr) + "robots:\n  - urdf: " +
                           std::string(COULOMB_SOURCE_DIR) + "/examples/models/spring_cylinder.urdf\n"
                           "    joint_positions: {x: " + num(x0) + ", z: 0.2}\n"
                           "    springs:\n      x: {stiffness: " + num(k_s) + ", damping: 0.0, rest_position: 0.0}\n";
  auto sim = make_simulator(yaml, "spring_slider", config, dt);
  const multibody::Model& model = sim->model();
  const int ix = model.body(model.joint_body("x")).joint.q_index;
  const double E0 = sim->energy(sim->q(), sim->v());
  double x_prev = x0, max_dE = 0.0, amplitude_last = 0.0;
  std::vector<double> crossings;
  Outcome out;
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 1; k <= steps; ++k) {
    step(*sim, out);
    const double x = sim->q()[ix];
    if (x_prev > 0 && x <= 0) crossings.push_back((k - 1 + x_prev / (x_prev - x)) * dt);
    if (k * dt > duration - 0.5) amplitude_last = std::max(amplitude_last, std::abs(x));
    max_dE = std::max(max_dE, std::abs(sim->energy(sim->q(), sim->v()) - E0) / E0);
    x_prev = x;
  }
  Row period{"period, from downward zero crossings [s]", 2 * M_PI * std::sqrt(m / k_s), kNaN};
  if (crossings.size() >= 2)
    period.measured = (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  else
    period.measured_text = "fewer than 2 crossings";
  out.rows.push_back(period);
  out.rows.push_back({"amplitude over the last 0.5 s [m]", x0, amplitude_last});
  out.rows.push_back({"max |E(t) − E(0)| / E(0)", 0.0, max_dE});
  return out;
}

// 13. Joint limits: a limp arm falling onto them.
Outcome run_limit_overshoot(const Config& config) {
  Outcome out;
  for (double dt : {1e-3, 1e-2}) {
    const std::string yaml = scene_header(config, dt, {0, 0, -kG}, nullptr) + "robots:\n  - urdf: " +
                             std::string(COULOMB_SHARED_DIR) + "/models/panda_collision.urdf\n"
                             "    joint_positions: {panda_joint2: 0.8, panda_joint4: -1.0, panda_joint6: 1.5}\n";
    auto sim = make_simulator(yaml, "limit_overshoot", config, dt);
    const multibody::Model& model = sim->model();
    double overshoot = 0.0;
    const int steps = static_cast<int>(std::lround((config.quick ? 1.5 : 3.0) / dt));
    for (int k = 0; k < steps; ++k) {
      step(*sim, out);
      for (int b = 1; b < model.num_bodies(); ++b) {
        const multibody::Joint& j = model.body(b).joint;
        if (j.nv != 1) continue;
        const double q = sim->q()[j.q_index];
        overshoot = std::max({overshoot, j.limits.lower - q, q - j.limits.upper});
      }
    }
    out.rows.push_back({"max overshoot of any joint limit [rad], δt = " + fmt("%g", dt) + " s", 0.0, overshoot});
  }
  return out;
}

// 14. The default parameters on the scenes a user builds first (issue 9 item 4), with nothing
// but the contact approximation set.
Outcome run_default_parameters(const Config& config) {
  namespace dp = simulation::default_parameters;
  dp::Overrides o;
  if (!config.approximation.empty()) o.approximation = config.approximation;
  o.integrator = simulation::to_string(config.integrator);
  Outcome out;
  auto add_run = [&](const dp::RunStats& run) {
    out.steps += run.steps;
    out.failures += run.failures;
  };
  const dp::StackResult stack = dp::run_stack(o, config.quick ? 3.0 : 10.0);
  add_run(stack.run);
  out.rows.push_back({"ten-box stack: top box drift [mm]", 0.0, 1e3 * stack.top_drift});
  out.rows.push_back({"ten-box stack: max tilt of any box [deg]", 0.0, stack.max_tilt * 180.0 / M_PI});
  const dp::PairResult pair = dp::run_pair(o, config.quick ? 2.0 : 5.0);
  add_run(pair.run);
  out.rows.push_back({"1000 kg on 1 kg: settled penetration [mm]", 0.0, 1e3 * pair.settled_penetration});
  out.rows.push_back({"1000 kg on 1 kg: max tilt [deg]", 0.0, pair.max_tilt * 180.0 / M_PI});
  const dp::RestingResult rest = dp::run_resting(o);
  add_run(rest.run);
  out.rows.push_back({"one resting box: settled penetration [mm]", 0.0, 1e3 * rest.settled_penetration});
  const dp::SlidingResult slide = dp::run_sliding(o);
  add_run(slide.run);
  out.rows.push_back({"box sliding at 2.2 m/s: max rise [mm]", 0.0, 1e3 * slide.max_rise});
  out.rows.push_back({"box sliding at 2.2 m/s: max |ω| [rad/s]", 0.0, slide.max_angular_speed});
  out.rows.push_back({"box sliding at 2.2 m/s: max tilt [deg]", 0.0, slide.max_tilt * 180.0 / M_PI});
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  cases.push_back(
      {"mu0_launch", "μ = 0 launch",
       "A 1 kg sphere (r = 0.05 m) rests on the ground with μ = 0 (settled for 0.5 s), then is given "
       "v_z = 0.5 m/s. Nothing holds a frictionless unilateral contact down, so the centre rises "
       "v²/(2g) = 12.742 mm above its rest height and is airborne for 2v/g = 0.10194 s (measured: time "
       "more than 0.1 mm above rest, plus the 0.4 ms the analytic motion spends below that).",
       material_text(kLaunchMaterial) + "; δt = 1 ms; ground half-space", true, run_mu0_launch});
  cases.push_back(
      {"newton_cradle", "Newton's cradle",
       "Five 1 kg spheres (r = 0.05 m) in a row along x, the last four touching, μ = 0, no gravity; the "
       "first starts 5 mm away at 1 m/s. No external force acts, so the total momentum stays m·1 m/s "
       "exactly; with undamped contact the kinetic energy is conserved too. Rigid elastic spheres end "
       "with the last at 1 m/s and the others at rest; compliant (linear-spring) contacts spread the "
       "pulse, so the other final velocities are reported as a spread (expected 0 only for the rigid "
       "limit) and no sphere should end moving backwards or stuck to a neighbour.",
       material_text(kCradleMaterial) + "; g = 0; δt = 1 ms; 0.2 s (0.1 s with --quick)", true, run_newton_cradle});
  cases.push_back(
      {"dzhanibekov", "Free rotation about the intermediate axis (Dzhanibekov)",
       "A torque-free body with principal moments (1, 2, 3) kg·m² (given as `inertia:`; a box cannot "
       "have them: I₁ + I₂ = I₃ is the thin-plate limit), ω₀ = (0.01, 10, 0) rad/s about the "
       "intermediate axis, no gravity, no contact, 10 s. The angular momentum in the world and the "
       "kinetic energy are constant; the body flips periodically. The flip times (sign changes of the "
       "body-frame ω_y) are from Euler's equations I ω̇ = (Iω) × ω integrated by RK4 at h = 1e-5 s in "
       "this program: 1.437, 4.310, 7.183 s.",
       "inertia diag(1, 2, 3) kg·m², mass 1 kg, no shapes; g = 0; δt = 1 ms and 10 ms; 10 s", false, run_dzhanibekov});
  cases.push_back(
      {"a1_floating", "Free-floating Unitree A1",
       "`../shared/models/a1.urdf` as a floating robot in zero gravity, no ground: base at (0.3, −0.2, "
       "1) m, rpy (0.1, −0.2, 0.3), base velocity v = (0.1, −0.05, 0.2) m/s, ω = (0.2, −0.3, 0.4) "
       "rad/s, joints mid-range (hip 0, thigh 0.8, calf −1.8 rad) with velocities uniform in ±0.5 rad/s "
       "(fixed seed). No external force or torque: the linear momentum and the angular momentum about "
       "the world origin are constant, and with zero joint damping (the URDF's, reported) so is the "
       "kinetic energy. No joint limit is reached in the 1 s (reported).",
       "g = 0; δt = 1 ms; 1 s; joint limits on (inactive)", false, run_a1_floating});
  cases.push_back(
      {"bowling", "Bowling ball",
       "A 1 kg solid sphere (r = 0.1 m, settled on level ground) is given v₀ = 3 m/s, ω₀ = 0, μ = 0.3. "
       "Kinetic friction μmg decelerates it and spins it up until the contact point stops slipping at "
       "t* = 2v₀/(7μg) = 0.29123 s, after which it rolls at 5/7·v₀ = 2.1429 m/s. The centre never "
       "leaves its rest height. t* is the zero of a line fitted to the slip speed while it is between "
       "10 % and 90 % of v₀.",
       material_text(kBowlingMaterial) + "; δt = 1 ms; 1 s (0.6 s with --quick)", true, run_bowling});
  cases.push_back(
      {"sliding_box", "Box sliding to a stop",
       "A 0.1 m, 1 kg box settled on level ground is given 2.2 m/s with μ = 0.5: it decelerates at μg "
       "and stops after v₀²/(2μg) = 0.49337 m, without lifting or rotating (the normal force moves "
       "towards the leading edge, but the box does not tip: μ·h/2 < b/2).",
       material_text(kSlidingBoxMaterial) + "; δt = 1 ms; collision margin 1 cm; 1 s (0.7 s with --quick)",
       true, run_sliding_box});
  cases.push_back(
      {"sphere_incline", "Sphere rolling down a 15° incline",
       "A 0.5 kg solid sphere (r = 0.05 m) starts at rest on a 15° incline with μ = 1 (rolling needs "
       "μ ≥ (2/7) tan 15° = 0.077). Rolling without slip: a = (5/7) g sin 15°, s(1 s) = 0.906791 m, "
       "v(1 s) = 1.813582 m/s, contact point at rest.",
       material_text(kRollingMaterial) + "; δt = 1 ms; 1 s; incline = half-space", true, run_sphere_incline});
  cases.push_back(
      {"box_incline_slide", "Box sliding down a 30° incline",
       "A 0.1 m, 1 kg box released on a 30° incline with μ = 0.3 < tan 30° slides with a = g(sin 30° − "
       "μ cos 30°) = 2.356287 m/s² (fitted to the downhill velocity over [0.2, 1] s).",
       material_text(kSlidingInclineMaterial) + "; δt = 1 ms; collision margin 1 cm; 1 s", true,
       run_box_incline_slide});
  cases.push_back(
      {"box_incline_stick", "Box at rest on a 20° incline",
       "A 0.1 m, 1 kg box released at rest on a 20° incline with μ = 0.5 > tan 20° = 0.364 sticks: "
       "its displacement is 0. Regularized friction lets it creep; reported in mm and mm/s.",
       material_text(kStickingMaterial) + "; δt = 1 ms; 1 s", true, run_box_incline_stick});
  cases.push_back(
      {"restitution", "Undamped bounce",
       "A 1 kg sphere (r = 0.05 m) moves at 1 m/s straight down onto the ground from 5 mm above it, with "
       "no contact dissipation (τ_d = 0 for sap, d = 0 for similar and lagged) and gravity off, so that "
       "v_in and v_out are the exact speeds before and after the contact. An undamped spring gives "
       "back all the energy: e = v_out/v_in = 1. Any loss is the integrator's (and the contact "
       "model's) numerical dissipation. Speculative contact is on, so that the impact is caught at "
       "δt = 10 ms; the contact lasts π√(m/k) ≈ 10 ms.",
       material_text(kBounceMaterial) + "; g = 0; speculative contact; δt = 1e-4 (full run only), 1e-3, 1e-2 s; 0.1 s",
       true, run_restitution});
  cases.push_back(
      {"free_fall", "Free fall",
       "A sphere falls from z₀ = 10 m for 1 s without contact: v_z = −gt exactly for every scheme, and "
       "z(1 s) = z₀ − ½gt² exactly with the midpoint rule. The Euler schemes advance q with the "
       "end-of-step velocity, z_n = z₀ − gδt²n(n+1)/2, so their z(1 s) is off by exactly −½gtδt = "
       "−4.905 mm at δt = 1 ms; that is the expected value for them.",
       "δt = 1 ms; no ground", false, run_free_fall});
  cases.push_back(
      {"spring_slider", "Spring-loaded slider",
       "The 0.5 kg cylinder of `examples/models/spring_cylinder.urdf` on its prismatic joint `x` with a "
       "100 N/m joint spring (`springs:`), zero gravity and no ground, released from x = 0.1 m: "
       "x = x₀ cos(ωt) with period 2π√(m/k) = 0.444288 s, constant amplitude and constant energy. "
       "(Implicit Euler damps it, symplectic Euler oscillates its energy by ±ωδt/2; midpoint conserves "
       "it for a linear spring.)",
       "g = 0; δt = 1 ms; 2 s", false, run_spring_slider});
  cases.push_back(
      {"limit_overshoot", "A limp arm falling onto its joint limits (no contact)",
       "The Panda (`../shared/models/panda_collision.urdf`, fixed base, no actuators) falls limp under "
       "gravity from joint 2 = 0.8, 4 = −1.0, 6 = 1.5 rad for 3 s and folds onto its joint limits (the "
       "wrist reaches 10–30 rad/s). A limit is a near-rigid SAP constraint (β = 0.1): the joint may "
       "enter it only by the constraint's compliance, so the expected overshoot is 0. Under midpoint "
       "the joint moves by δt (v₀ + v)/2 in a step; the limit predicts exactly that (issue 9 item 5; "
       "before, it predicted q₀ + δt v and the arm overshot by 0.16 rad at δt = 10 ms).",
       "g = −9.81; δt = 1 ms and 10 ms; 3 s (1.5 s with --quick); joint limits β = 0.1", false,
       run_limit_overshoot});
  cases.push_back(
      {"default_parameters", "Scenes with only the defaults",
       "What a user's first scene meets (issue 9 item 4): coulomb's default material, margin and "
       "regularization, δt = 10 ms, only the contact approximation and the integrator set. A stack of ten "
       "0.1 m, 1 kg boxes, each perturbed by up to ±2 mm and ±3° of yaw (fixed seed), stands for 10 s; a "
       "1000 kg box on a 1 kg box; one resting box; a box launched at 2.2 m/s along the ground (μ = 1). "
       "Rigid bodies would show no drift, penetration, rise, spin or tilt (expected 0); the acceptance "
       "bounds of the issue (asserted in tests/simulation/default_parameters_test.cc for the default, "
       "lagged) are 2 mm drift, 2 mm and 0.5 mm penetration, no tumbling.",
       "defaults (k = 1e7 N/m, τ_d = 0.01 s, d = 10 s/m, margin 2 mm, β = 1); δt = 10 ms; 10 s stack "
       "(3 s with --quick)", true, run_default_parameters});
  // lstable: every contact case but default_parameters (its shared scenarios,
  // tests/simulation/default_parameter_scenarios.h, set no solver; the 10-box stack at 40
  // contacts is a 120-row dense SOCP per step), and the joint-limit cases.
  for (Case& c : cases)
    c.lstable = (c.contact && c.name != "default_parameters") || c.name == "limit_overshoot" || c.name == "a1_floating";
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Printing.

std::string value_text(double x) {
  if (std::isnan(x)) return "—";
  if (x == 0.0) return "0";
  const double a = std::abs(x);
  if (a >= 1e-3 && a < 1e5) return fmt("%.6g", x);
  return fmt("%.3e", x);
}

std::string error_text(const Row& row) {
  if (std::isnan(row.expected) || std::isnan(row.measured)) return "—";
  if (row.expected == 0.0) return fmt("%.2e", std::abs(row.measured)) + " (abs)";
  return fmt("%.2e", std::abs(row.measured - row.expected) / std::abs(row.expected));
}

std::string escape(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

struct Options {
  bool quick = false, list = false;
  std::vector<std::string> approximations, integrators, cases;
  std::vector<std::string> solvers = {"sap", "lstable"};
};

constexpr const char* kUsage =
    "usage: coulomb_fidelity [--quick] [--approximations sap,similar,lagged]\n"
    "                        [--integrators implicit-euler,symplectic-euler,midpoint] [--solvers sap,lstable]\n"
    "                        [--cases NAME,...] [--list]\n"
    "Runs the simulator against analytic truths and prints Markdown tables (docs/fidelity.md).\n"
    "  --quick           reduced durations and time steps (the ctest fidelity_quick)\n"
    "  --approximations  contact approximations (default: every one the scene loader accepts)\n"
    "  --integrators     default: all three\n"
    "  --solvers         stage-2 solvers (default: sap,lstable); lstable runs once per integrator, in the\n"
    "                    approximation column as 'lstable', on the cases marked so in --list\n"
    "  --cases           case names (default: all; --list prints them)\n";

int usage(const std::string& message) {
  std::fprintf(stderr, "coulomb_fidelity: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int main_impl(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      const size_t eq = arg.find('=');
      if (eq != std::string::npos) return arg.substr(eq + 1);
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    auto is = [&](const char* name) { return arg == name || arg.rfind(std::string(name) + "=", 0) == 0; };
    if (arg == "--quick") options.quick = true;
    else if (arg == "--list") options.list = true;
    else if (is("--approximations")) options.approximations = split(value());
    else if (is("--integrators")) options.integrators = split(value());
    else if (is("--cases")) options.cases = split(value());
    else if (is("--solvers")) options.solvers = split(value());
    else if (arg == "-h" || arg == "--help") return std::printf("%s", kUsage), 0;
    else return usage("unknown option '" + arg + "'");
  }
  const std::vector<Case> cases = all_cases();
  if (options.list) {
    for (const Case& c : cases)
      std::printf("%-18s %s%s%s\n", c.name.c_str(), c.title.c_str(), c.contact ? "" : " (no contact)",
                  c.lstable ? " [lstable]" : "");
    return 0;
  }
  const LoaderSupport support = detect_loader_support();
  if (options.approximations.empty()) options.approximations = support.approximations;
  for (const std::string& a : options.approximations)
    if (std::find(support.approximations.begin(), support.approximations.end(), a) == support.approximations.end())
      return usage("contact approximation '" + a + "' is not accepted by this build's scene loader");
  bool run_sap = false, run_lstable = false;
  for (const std::string& name : options.solvers) {
    const simulation::Solver solver = simulation::parse_solver(name);
    (solver == simulation::Solver::kSap ? run_sap : run_lstable) = true;
  }
  std::vector<Integrator> integrators;
  if (options.integrators.empty())
    integrators = {Integrator::kImplicitEuler, Integrator::kSymplecticEuler, Integrator::kMidpoint};
  for (const std::string& name : options.integrators) integrators.push_back(simulation::parse_integrator(name));
  std::vector<const Case*> selected;
  for (const Case& c : cases)
    if (options.cases.empty() || std::find(options.cases.begin(), options.cases.end(), c.name) != options.cases.end())
      selected.push_back(&c);
  for (const std::string& name : options.cases)
    if (std::none_of(cases.begin(), cases.end(), [&](const Case& c) { return c.name == name; }))
      return usage("unknown case '" + name + "' (see --list)");

  std::string approximations_text, integrators_text;
  for (const std::string& a : options.approximations) approximations_text += (approximations_text.empty() ? "" : ", ") + a;
  for (Integrator i : integrators)
    integrators_text += std::string(integrators_text.empty() ? "" : ", ") + simulation::to_string(i);
  std::printf("Mode: %s. Contact approximations: %s (accepted by this build's scene loader: ",
              options.quick ? "`--quick` (reduced durations and time steps)" : "full", approximations_text.c_str());
  for (size_t i = 0; i < support.approximations.size(); ++i)
    std::printf("%s%s", i ? ", " : "", support.approximations[i].c_str());
  std::printf("%s). Integrators: %s. Hunt–Crossley dissipation key: %s.\n\n",
              support.approximation_key ? "" : "; no `contact_approximation` key: every run is SAP's model",
              integrators_text.c_str(),
              support.dissipation_key.empty() ? "none in this build (d is not set)"
                                              : ("`" + support.dissipation_key + "`").c_str());
  if (run_lstable)
    std::printf(
        "**lstable.** Rows labelled `lstable` in the approximation column run the scene with `solver: lstable` "
        "(Drumwright's L-stable first-order solver, solvers/lstable; docs/solvers.md) instead of SAP: the contact "
        "normal is the spring–damper of the scene's k and τ_d (no Hunt–Crossley d), the tangents are viscous "
        "dampers B_r = 10⁶/δt bounded by Coulomb's μ γ_n, joint limits are K = 10¹² springs. It runs on the "
        "contact cases (but `default_parameters`) and on the cases whose joint limits reach the solver, with its "
        "default friction model, `staggered` (normal and friction passes to the discrete Coulomb fixed point, "
        "the digest's fix 3 iterated; docs/solvers.md): the normal keeps its own spring–damper law while a "
        "contact slides, so the bowling ball and the sliding box stay on the ground (lift ≤ 1e-11 m) and meet "
        "the no-lift tolerances of the lagged approximation, which SAP's `sap` approximation does not (its "
        "convex friction cone lifts a sliding contact by about μ‖v_t‖; lstable's `lstable_friction: cone` "
        "does the same, to 3 digits of SAP's `sap`, tested). Where the regularizations differ the results "
        "differ: a sticking box creeps about 1000 times less under lstable (its tangential damper "
        "B_r = 10⁹ N·s/m at δt = 1 ms against SAP's σ-regularized friction), and its K = 10¹² joint limits "
        "overshoot by < 1e-8 rad against SAP's near-rigid β = 0.1 (up to 1e-3 rad with midpoint). "
        "tests/simulation/lstable_fidelity_test.cc asserts the checks under lstable at the tolerances the unit "
        "tests hold the other solvers to (bowling ball and sliding box: the lagged approximation's lift ≤ 0.1 mm, "
        "t* within 0.5 %%, |ω| ≤ 1.1 θ_s/δt, stop distance 1 %%; incline slide: a and v(1 s) within 0.1 %%, "
        "also with contact_approximation_test.cc's k = 10⁶, τ_d = 10 ms and 2 mm margin where SAP's `sap` is "
        "exempt; incline stick: |v(1 s)| ≤ 1.6e-4 m/s and ≤ 2 mm; sphere rolling down the incline; μ = 0 "
        "launch within v₀δt + 0.1 mm; undamped frictionless bounce e within 2e-3 (midpoint) and 1e-2 "
        "(implicit Euler); the frictionless row of spheres), with one exception, measured and stated here:\n\n"
        "1. Frictionless row of spheres: \"no contact pulls\" is γ_n ≥ −1e-10 N·s instead of SAP's ≥ 0: "
        "frictionless normals are the orthant γ ≥ 0 of an interior-point QP whose primal feasibility tolerance "
        "is 1e-10 (solvers/qp/conic_qp.h); measured down to −3.1e-11 N·s.\n\n");
  std::printf("Errors are relative, |measured − expected| / |expected|, or absolute (marked abs, in the "
              "quantity's unit) where the expected value is 0. `solver` counts the steps whose solve (SAP, or "
              "lstable's QP or linear solve) did not converge. Nothing here is asserted: the unit tests assert, "
              "this page reports.\n\n");

  // Overview.
  std::printf("| case | what | contact approximations | settings |\n|---|---|---|---|\n");
  // Per case: (label in the approximation column, solver).
  auto runs_of = [&](const Case& c) {
    std::vector<std::pair<std::string, simulation::Solver>> runs;
    if (run_sap) {
      if (c.contact)
        for (const std::string& a : options.approximations) runs.emplace_back(a, simulation::Solver::kSap);
      else
        runs.emplace_back("", simulation::Solver::kSap);
    }
    if (run_lstable && c.lstable) runs.emplace_back("lstable", simulation::Solver::kLStable);
    return runs;
  };
  for (const Case* c : selected) {
    std::string labels;
    for (const auto& [label, solver] : runs_of(*c))
      if (!label.empty()) labels += (labels.empty() ? "" : ", ") + label;
    if (!c->contact) labels = "— (no contact)" + (labels.empty() ? std::string() : "; " + labels);
    std::printf("| [`%s`](#%s) | %s | %s | %s |\n", c->name.c_str(), c->name.c_str(), escape(c->title).c_str(),
                labels.c_str(), escape(c->settings).c_str());
  }
  std::printf("\n");

  const auto t_start = std::chrono::steady_clock::now();
  for (const Case* c : selected) {
    std::printf("## %s\n\n**%s.** %s\n\nSettings: %s.\n\n", c->name.c_str(), c->title.c_str(), c->truth.c_str(),
                c->settings.c_str());
    std::printf("| case | approximation | integrator | quantity | expected | measured | error | solver |\n"
                "|---|---|---|---|---:|---:|---:|---|\n");
    const auto t_case = std::chrono::steady_clock::now();
    for (const auto& [approximation, solver_kind] : runs_of(*c))
      for (Integrator integrator : integrators) {
        Config config{approximation, integrator, solver_kind, options.quick, &support};
        const std::string prefix = "| " + c->name + " | " + (approximation.empty() ? "—" : approximation) + " | " +
                                   simulation::to_string(integrator) + " | ";
        Outcome out;
        std::string error;
        try {
          out = c->run(config);
        } catch (const std::exception& e) {
          error = e.what();
        }
        if (!error.empty()) {
          std::printf("%s**threw** | — | — | — | %s |\n", prefix.c_str(), escape(error).c_str());
          continue;
        }
        const std::string solver =
            out.failures == 0 ? "ok" : fmt("%.0f", out.failures) + " of " + std::to_string(out.steps) + " steps not converged";
        for (const Row& row : out.rows)
          std::printf("%s%s | %s | %s | %s | %s |\n", prefix.c_str(), escape(row.quantity).c_str(),
                      escape(row.expected_text.empty() ? value_text(row.expected) : row.expected_text).c_str(),
                      escape(row.measured_text.empty() ? value_text(row.measured) : row.measured_text).c_str(),
                      error_text(row).c_str(), solver.c_str());
        std::fflush(stdout);
      }
    std::fprintf(stderr, "coulomb_fidelity: %s done in %.1f s\n", c->name.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t_case).count());
    std::printf("\n");
  }
  std::fprintf(stderr, "coulomb_fidelity: all cases in %.1f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
  return 0;
}

}  // namespace
}  // namespace coulomb

int main(int argc, char** argv) {
  try {
    return coulomb::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coulomb_fidelity: error: %s\n", e.what());
    return 2;
  }
}
