// Physics acceptance tests of the SAP forward simulator (simulation::Simulator) against analytic
// values: a sphere rolling and a box sliding down inclines, the spring-cylinder of Castro,
// Permenter and Han §VI-B (digest ../shared/digests/sap.md §5.2 and §7 tests 19–21: rolling
// period, order of accuracy, energy behaviour of the three θ-methods), the A1 and the project's
// quadruped standing under PD control, and free fall (also of a spinning ball). Scenes are inline YAML (io::parse_scene)
// or the repository's examples (io::load_scene). Every test prints what it measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "simulation_test_util.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

using test_util::num;
using test_util::floating_joint;

constexpr double kG = 9.81;
const std::string kScenes = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes";



Eigen::Vector3d position(const Eigen::VectorXd& q, const multibody::Joint& j) { return q.segment<3>(j.q_index); }

Eigen::Quaterniond orientation(const Eigen::VectorXd& q, const multibody::Joint& j) {
  return Eigen::Quaterniond(q[j.q_index + 3], q[j.q_index + 4], q[j.q_index + 5], q[j.q_index + 6]).normalized();
}

// World-frame velocity of the origin and angular velocity of the body whose joint is j, from
// forward kinematics (independent of how the floating joint stores its velocity).
std::pair<Eigen::Vector3d, Eigen::Vector3d> world_twist(const multibody::Model& model, const Eigen::VectorXd& q,
                                                        const Eigen::VectorXd& v, const multibody::Joint& j) {
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q, v);
  int body = 0;
  for (int b = 1; b < model.num_bodies(); ++b)
    if (&model.body(b).joint == &j) body = b;
  const Eigen::Matrix3d& R = ws.X_WB[body].R;
  return {R * ws.V_B[body].v, R * ws.V_B[body].w};
}
Eigen::Vector3d world_velocity(const Simulator& sim, const multibody::Joint& j) {
  return world_twist(sim.model(), sim.q(), sim.v(), j).first;
}
Eigen::Vector3d world_angular_velocity(const Simulator& sim, const multibody::Joint& j) {
  return world_twist(sim.model(), sim.q(), sim.v(), j).second;
}

// Runs `steps` steps and counts the SAP solves that did not succeed.
int run(Simulator& sim, int steps) {
  int failures = 0;
  for (int k = 0; k < steps; ++k)
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
  return failures;
}

// ---------------------------------------------------------------------------------------------
// 1. A solid sphere rolling without slipping down a 15° incline (μ = 1 > (2/7) tan 15° = 0.077):
//    s(t) = ½ (5/7) g sin 15° t², s(1 s) = 0.906791 m. The incline is a half-space through the
//    origin with outward normal n = (sin α, 0, cos α); downhill is d = (cos α, 0, −sin α). The
//    sphere starts at rest touching the plane. Midpoint rule: exact for constant acceleration.
TEST(SimulatorPhysicsTest, SphereRollsDownAnInclineWithoutSlipping) {
  const double alpha = 15.0 * M_PI / 180.0, r = 0.05, dt = 1e-3;
  const Eigen::Vector3d n(std::sin(alpha), 0, std::cos(alpha)), d(std::cos(alpha), 0, -std::sin(alpha));
  const std::string yaml =
      "time_step: " + num(dt) + "\nduration: 1.0\ngravity: [0, 0, -9.81]\nintegrator: midpoint\n"
      "contact_approximation: sap\ncontact: {mu: 1.0, stiffness: 1.0e12, dissipation_time: " + num(dt) + "}\n"
      "bodies:\n"
      "  - name: incline\n    fixed: true\n"
      "    shapes: [{type: halfspace, normal: [" + num(n.x()) + ", 0, " + num(n.z()) + "]}]\n"
      "  - name: ball\n    mass: 0.5\n    shapes: [{type: sphere, radius: " + num(r) + "}]\n"
      "    position: [" + num(r * n.x()) + ", 0, " + num(r * n.z()) + "]\n";
  SimulatorParameters params;
  params.time_step = dt;
  params.integrator = Integrator::kMidpoint;
  Simulator sim(io::parse_scene(yaml, "sphere_incline"), params);
  const multibody::Joint& j = floating_joint(sim.model(), "ball");
  const Eigen::Vector3d p0 = position(sim.q(), j);
  const int failures = run(sim, static_cast<int>(std::lround(1.0 / dt)));
  const double s = (position(sim.q(), j) - p0).dot(d);
  const double expected = 0.5 * (5.0 / 7.0) * kG * std::sin(alpha);  // t = 1 s
  // Rolling: the contact point is at rest, v = ω × (r n) (ω = n × v / r, about +y).
  const Eigen::Vector3d v_W = world_velocity(sim, j);
  const Eigen::Vector3d w_W = world_angular_velocity(sim, j);
  const double slip = (v_W + w_W.cross(-r * n)).norm();
  std::printf("[ measured ] sphere on 15 deg incline: s(1 s) = %.7f m (analytic %.7f, rel. error %.2e), "
              "v = %.6f m/s (analytic %.6f), contact-point slip %.2e m/s, %d failures\n",
              s, expected, std::abs(s - expected) / expected, v_W.dot(d), 2 * expected, slip, failures);
  EXPECT_EQ(failures, 0);
  EXPECT_NEAR(s, 0.906791, 1e-3 * 0.906791);
  EXPECT_NEAR(v_W.dot(d), 2 * expected, 1e-3 * 2 * expected);
  EXPECT_LT(slip, 5e-3);  // 0.3 % of the final speed
}

// The same sphere rolling on level ground at v₀ = 1 m/s, ω₀ = v₀/r = 20 rad/s: nothing acts
// along the ground, so it keeps rolling at v₀ (x(1 s) = 1 m). Isolates the rolling error of the
// incline test from gravity's tangential component.
TEST(SimulatorPhysicsTest, SphereKeepsRollingAtConstantSpeedOnLevelGround) {
  const double dt = 1e-3;
  const std::string yaml =
      "time_step: 0.001\nduration: 1.0\ngravity: [0, 0, -9.81]\nintegrator: midpoint\n"
      "contact_approximation: sap\ncontact: {mu: 1.0, stiffness: 1.0e12, dissipation_time: 0.001}\n"
      "bodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace}]\n"
      "  - name: ball\n    mass: 0.5\n    shapes: [{type: sphere, radius: 0.05}]\n    position: [0, 0, 0.05]\n"
      "    linear_velocity: [1, 0, 0]\n    angular_velocity: [0, 20, 0]\n";
  for (Integrator integrator : {Integrator::kMidpoint, Integrator::kImplicitEuler}) {
    SimulatorParameters params;
    params.time_step = dt;
    params.integrator = integrator;
    Simulator sim(io::parse_scene(yaml, "sphere_rolling"), params);
    const multibody::Joint& j = floating_joint(sim.model(), "ball");
    const int failures = run(sim, 1000);
    const double x = position(sim.q(), j).x();
    const Eigen::Vector3d v_W = world_velocity(sim, j);
    const Eigen::Vector3d w_W = world_angular_velocity(sim, j);
    std::printf("[ measured ] sphere rolling on level ground, %s: x(1 s) = %.6f m (analytic 1), |v| = %.6f m/s "
                "(analytic 1), w_y = %.4f rad/s (analytic 20), %d failures\n",
                to_string(integrator), x, v_W.norm(), w_W.y(), failures);
    EXPECT_EQ(failures, 0);
    EXPECT_NEAR(x, 1.0, 1e-3) << to_string(integrator);
    EXPECT_NEAR(v_W.norm(), 1.0, 1e-3) << to_string(integrator);
    EXPECT_NEAR(w_W.y(), 20.0, 0.02) << to_string(integrator);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. A box sliding down a 30° incline with μ = 0.3 < tan 30°: a = g (sin 30° − 0.3 cos 30°) =
//    2.356287 m/s². Implicit Euler (exact velocities under a constant acceleration). A 1 cm
//    collision margin keeps the contact reported while SAP's sliding "gliding" offset
//    (δt + τ_d) μ ‖v_t‖ (digest §4.2, 1.4 mm at 2.4 m/s) lifts the box off the plane.
TEST(SimulatorPhysicsTest, BoxSlidesDownAnInclineWithCoulombFriction) {
  const double alpha = 30.0 * M_PI / 180.0, h = 0.05, dt = 1e-3;
  const Eigen::Vector3d n(std::sin(alpha), 0, std::cos(alpha)), d(std::cos(alpha), 0, -std::sin(alpha));
  const std::string yaml =
      "time_step: " + num(dt) + "\nduration: 1.0\ngravity: [0, 0, -9.81]\nintegrator: implicit-euler\n"
      "contact_approximation: sap\ncontact: {mu: 0.3, stiffness: 1.0e12, dissipation_time: " + num(dt) + "}\n"
      "collision: {margin: 0.01}\n"
      "bodies:\n"
      "  - name: incline\n    fixed: true\n"
      "    shapes: [{type: halfspace, normal: [" + num(n.x()) + ", 0, " + num(n.z()) + "]}]\n"
      "  - name: box\n    mass: 1.0\n    shapes: [{type: box, size: [0.1, 0.1, 0.1]}]\n"
      "    position: [" + num(h * n.x()) + ", 0, " + num(h * n.z()) + "]\n"
      "    rpy: [0, " + num(alpha) + ", 0]\n";
  SimulatorParameters params;
  params.time_step = dt;
  params.integrator = Integrator::kImplicitEuler;
  Simulator sim(io::parse_scene(yaml, "box_incline"), params);
  const multibody::Joint& j = floating_joint(sim.model(), "box");
  const int steps = static_cast<int>(std::lround(1.0 / dt));
  int failures = 0;
  // Least-squares slope of the downhill velocity over t ∈ [0.2, 1] s.
  double St = 0, Sv = 0, Stt = 0, Stv = 0;
  int count = 0;
  for (int k = 0; k < steps; ++k) {
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
    const double t = sim.time(), v = world_velocity(sim, j).dot(d);
    if (t >= 0.2 - 1e-12) {
      St += t, Sv += v, Stt += t * t, Stv += t * v;
      ++count;
    }
  }
  const double a_fit = (count * Stv - St * Sv) / (count * Stt - St * St);
  const double v1 = world_velocity(sim, j).dot(d);
  const double expected = kG * (std::sin(alpha) - 0.3 * std::cos(alpha));
  const Eigen::Vector3d z_box = orientation(sim.q(), j) * Eigen::Vector3d::UnitZ();
  std::printf("[ measured ] box on 30 deg incline, mu 0.3: fitted a = %.6f m/s^2, v(1 s) = %.6f m/s "
              "(analytic %.6f; rel. errors %.2e, %.2e), tilt %.2e rad, %d failures\n",
              a_fit, v1, expected, std::abs(a_fit - expected) / expected, std::abs(v1 - expected) / expected,
              std::acos(std::min(1.0, z_box.dot(n))), failures);
  EXPECT_EQ(failures, 0);
  EXPECT_NEAR(expected, 2.356287, 1e-6);
  EXPECT_NEAR(a_fit, expected, 1e-3 * expected);
  EXPECT_NEAR(v1, expected, 1e-3 * expected);
}

// ---------------------------------------------------------------------------------------------
// 3. Spring-cylinder (§VI-B; examples/scenes/spring_cylinder.yaml: R = 0.05 m, m = 0.5 kg,
//    I = ½ m R², k_s = 100 N/m, contact k = 10⁴ N/m, τ_d = 0.02 s, released from x₀ = 0.1 m).
//    The physics tests use an inline equivalent of the example: the same URDF (joints x, z,
//    theta and the cylinder's inertia) whose collision geometry is two spheres of radius R at
//    the cylinder's end discs, i.e. exactly the two end points of the cylinder's line contact
//    (and the digest's planar point contact, twice). The example's own cylinder collision is
//    tested separately below (SpringCylinderExampleSceneRollsSmoothly). The cylinder is first
//    settled at x = 0 (same δt and scheme) so that it is released at the static penetration with
//    the full normal force (as in the digest's repro), then released from x₀ at rest.
struct CylinderRun {
  std::vector<double> t, x, E;  ///< per step (t = 0 included); E = ½vᵀMv + ½k_s x²
  std::vector<int> contacts;    ///< contact points per step
  double rolling_radius = 0.0;  ///< centre height above the contact points after settling [m]
  int failures = 0;
};

constexpr double kCylR = 0.05, kCylM = 0.5, kCylI = 0.5 * kCylM * kCylR * kCylR, kSpring = 100.0, kX0 = 0.1;

// The example's URDF with the cylinder collision replaced by two spheres at its end discs,
// written once into a temporary folder (removed at exit).
struct TemporaryUrdf {
  std::filesystem::path dir, file;
  TemporaryUrdf() {
    std::ifstream in(std::string(COULOMB_SOURCE_DIR) + "/examples/models/spring_cylinder.urdf");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string urdf = ss.str();
    const size_t begin = urdf.find("<collision>"), end = urdf.find("</collision>");
    if (begin == std::string::npos || end == std::string::npos) return;
    urdf.replace(begin, end + std::strlen("</collision>") - begin,
                 "<collision><origin xyz=\"0 -0.05 0\"/><geometry><sphere radius=\"0.05\"/></geometry></collision>\n"
                 "    <collision><origin xyz=\"0 0.05 0\"/><geometry><sphere radius=\"0.05\"/></geometry></collision>");
    dir = std::filesystem::temp_directory_path() / ("coulomb_simulator_physics_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    file = dir / "spring_cylinder_two_spheres.urdf";
    std::ofstream(file) << urdf;
  }
  ~TemporaryUrdf() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

std::string two_sphere_cylinder_urdf() {
  static const TemporaryUrdf urdf;
  EXPECT_FALSE(urdf.file.empty()) << "examples/models/spring_cylinder.urdf has no <collision>";
  return urdf.file.string();
}

io::Scene cylinder_scene(bool example_geometry) {
  io::Scene scene = io::load_scene(kScenes + "/spring_cylinder.yaml");
  if (example_geometry) return scene;
  // The same settings as the example, with the two-sphere URDF.
  const std::string yaml =
      "time_step: 0.02\nduration: 5.0\ngravity: [0, 0, -9.81]\nsolver: sap\nintegrator: midpoint\n"
      "contact_approximation: sap\ncontact: {mu: 1.0, stiffness: 1.0e4, dissipation_time: 0.02}\n"
      "bodies:\n  - name: ground\n    fixed: true\n"
      "    shapes: [{type: box, size: [2, 1, 0.1], position: [0, 0, -0.05]}]\n"
      "robots:\n  - urdf: " + two_sphere_cylinder_urdf() + "\n"
      "    joint_positions: {x: 0.1, z: 0.05}\n"
      "    springs:\n      x: {stiffness: 100.0, damping: 0.0, rest_position: 0.0}\n";
  io::Scene inline_scene = io::parse_scene(yaml, "spring_cylinder_two_spheres");
  // Same model, springs and contact settings as the example.
  EXPECT_EQ(inline_scene.model.nv(), scene.model.nv());
  EXPECT_EQ(inline_scene.springs.size(), scene.springs.size());
  EXPECT_EQ(inline_scene.contact.stiffness, scene.contact.stiffness);
  EXPECT_EQ(inline_scene.contact.dissipation_time, scene.contact.dissipation_time);
  return inline_scene;
}

// Rolling: m_eff = m + I/r² with r the lever arm of the contact (centre height above the
// contact points, R less half the static penetration); frictionless: m.
double cylinder_omega(double mu, double rolling_radius = kCylR) {
  const double m_eff = mu > 0 ? kCylM + kCylI / (rolling_radius * rolling_radius) : kCylM;
  return std::sqrt(kSpring / m_eff);
}

CylinderRun run_cylinder(double mu, double dt, Integrator integrator, double duration, bool example_geometry = false) {
  io::Scene scene = cylinder_scene(example_geometry);
  scene.contact.mu = mu;
  SimulatorParameters params;
  params.time_step = dt;
  params.integrator = integrator;
  params.sap.rel_tolerance = 1e-10;
  Simulator sim(std::move(scene), params);
  const multibody::Model& model = sim.model();
  const int ix = model.body(model.joint_body("x")).joint.q_index;
  const int iz = model.body(model.joint_body("z")).joint.q_index;
  EXPECT_EQ(sim.scene().springs.size(), 1u);
  // Settle at x = 0 for 1 s, then release from x₀ at rest.
  Eigen::VectorXd q = sim.q(), v = Eigen::VectorXd::Zero(model.nv());
  q[ix] = 0.0;
  sim.set_state(q, v);
  CylinderRun out;
  out.failures += run(sim, static_cast<int>(std::lround(1.0 / dt)));
  for (const contact::Contact& c : sim.contacts().contacts)
    out.rolling_radius += (sim.q()[iz] - c.p_W.z()) / sim.contacts().size();
  q = sim.q();
  q.setZero();
  q[iz] = sim.q()[iz];
  q[ix] = kX0;
  sim.set_state(q, v);
  auto record = [&](double t, int contacts) {
    const Eigen::VectorXd& qq = sim.q();
    const double kinetic = sim.energy(qq, sim.v()) - sim.energy(qq, Eigen::VectorXd::Zero(model.nv()));
    out.t.push_back(t);
    out.x.push_back(qq[ix]);
    out.E.push_back(kinetic + 0.5 * kSpring * qq[ix] * qq[ix]);
    out.contacts.push_back(contacts);
  };
  record(0.0, sim.last_step().contacts);
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 1; k <= steps; ++k) {
    const StepStats& s = sim.step();
    if (s.status != solvers::sap::SapSolverStatus::kSuccess) ++out.failures;
    record(k * dt, s.contacts);
  }
  return out;
}

// e_q = ((1/T) ∫₀ᵀ (x − x_e)² dt)^{1/2} by the trapezoidal rule on the step times, x_e = x₀ cos ωt.
double error_q(const CylinderRun& r, double omega) {
  double integral = 0.0;
  for (size_t k = 1; k < r.t.size(); ++k) {
    const double e0 = r.x[k - 1] - kX0 * std::cos(omega * r.t[k - 1]), e1 = r.x[k] - kX0 * std::cos(omega * r.t[k]);
    integral += 0.5 * (e0 * e0 + e1 * e1) * (r.t[k] - r.t[k - 1]);
  }
  return std::sqrt(integral / r.t.back());
}

// Mean period from the downward zero crossings of x (linear interpolation).
double measured_period(const CylinderRun& r) {
  std::vector<double> crossings;
  for (size_t k = 1; k < r.x.size(); ++k)
    if (r.x[k - 1] > 0 && r.x[k] <= 0)
      crossings.push_back(r.t[k - 1] + (r.t[k] - r.t[k - 1]) * r.x[k - 1] / (r.x[k - 1] - r.x[k]));
  if (crossings.size() < 2) return NAN;
  return (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
}

// Peak-to-peak energy variation relative to the initial energy.
double peak_to_peak(const CylinderRun& r) {
  const auto [lo, hi] = std::minmax_element(r.E.begin(), r.E.end());
  return (*hi - *lo) / r.E.front();
}

// Test 21: rolling period 2π√(1.5 m/k_s) = 0.544 s with μ = 1, 2π√(m/k_s) = 0.444 s with μ = 0
// (δt = 1e-3, midpoint). With μ = 1 the lever arm r of the compliant contact is R less half the
// static penetration (r/R = 0.9975), which lengthens the period by 0.08 %; it is checked against
// both 2π/ω(R) and 2π/ω(r).
TEST(SimulatorPhysicsTest, SpringCylinderPeriod) {
  for (double mu : {1.0, 0.0}) {
    const CylinderRun r = run_cylinder(mu, 1e-3, Integrator::kMidpoint, 2.0);
    const double period = measured_period(r), nominal = 2 * M_PI / cylinder_omega(mu);
    const double compliant = 2 * M_PI / cylinder_omega(mu, r.rolling_radius);
    std::printf("[ measured ] spring-cylinder mu = %g: period %.5f s (analytic %.5f, rel. error %.2e; with the "
                "contact lever arm r = %.6f m: %.5f, rel. error %.2e), %d failures\n",
                mu, period, nominal, std::abs(period - nominal) / nominal, r.rolling_radius, compliant,
                std::abs(period - compliant) / compliant, r.failures);
    EXPECT_EQ(r.failures, 0);
    EXPECT_NEAR(nominal, mu > 0 ? 0.544 : 0.444, 0.5e-3);
    EXPECT_NEAR(period, nominal, 2e-3 * nominal);
    EXPECT_NEAR(period, compliant, 2e-4 * compliant);
  }
}

// Test 19: order of accuracy of e_q over T = 2 s for δt = 0.04 … 0.0025, against
// x_e = x₀ cos ωt (with μ = 1, ω from the contact lever arm of each run, see above).
TEST(SimulatorPhysicsTest, SpringCylinderOrderOfAccuracy) {
  const double T = 2.0;
  const std::vector<double> dts = {0.04, 0.02, 0.01, 0.005, 0.0025};
  for (double mu : {1.0, 0.0}) {
    std::vector<std::vector<double>> e(3);
    const Integrator schemes[3] = {Integrator::kMidpoint, Integrator::kSymplecticEuler, Integrator::kImplicitEuler};
    for (int s = 0; s < 3; ++s)
      for (double dt : dts) {
        const CylinderRun r = run_cylinder(mu, dt, schemes[s], T);
        EXPECT_EQ(r.failures, 0) << to_string(schemes[s]) << " dt " << dt;
        e[s].push_back(error_q(r, cylinder_omega(mu, r.rolling_radius)));
      }
    std::printf("[ measured ] spring-cylinder mu = %g, e_q over %g s:\n", mu, T);
    for (size_t i = 0; i < dts.size(); ++i) {
      std::printf("             dt %-7g", dts[i]);
      for (int s = 0; s < 3; ++s) {
        if (i == 0)
          std::printf("  %-16s %.3e          ", to_string(schemes[s]), e[s][i]);
        else
          std::printf("  %-16s %.3e (x%.2f)", to_string(schemes[s]), e[s][i], e[s][i - 1] / e[s][i]);
      }
      std::printf("\n");
    }
    // Midpoint: second order (ratio ≈ 4 per halving at the finer steps).
    for (size_t i = 2; i < dts.size(); ++i) {
      const double ratio = e[0][i - 1] / e[0][i];
      EXPECT_GT(ratio, 3.3) << "midpoint mu " << mu << " dt " << dts[i];
      EXPECT_LT(ratio, 4.7) << "midpoint mu " << mu << " dt " << dts[i];
    }
    // Symplectic Euler: first order (the ratio tends to 2), error above midpoint's.
    const size_t last = dts.size() - 1;
    const double se_ratio = e[1][last - 1] / e[1][last];
    EXPECT_GT(se_ratio, 1.7) << "mu " << mu;
    EXPECT_LT(se_ratio, 2.6) << "mu " << mu;
    // Implicit Euler: at most first order, the worst of the three at every step.
    for (size_t i = 0; i < dts.size(); ++i) {
      EXPECT_GT(e[2][i], e[1][i]) << "mu " << mu << " dt " << dts[i];
      EXPECT_GT(e[2][i], e[0][i]) << "mu " << mu << " dt " << dts[i];
      if (i > 0) {
        EXPECT_LT(e[2][i - 1] / e[2][i], 2.2) << "mu " << mu << " dt " << dts[i];
      }
    }
    for (size_t i = 1; i < dts.size(); ++i) EXPECT_LT(e[0][i], e[1][i]) << "mu " << mu << " dt " << dts[i];
  }
}

// Test 20: energy at δt = 0.02 over 2 s (100 steps). Frictionless, x is a spring-mass system
// with h = ω δt = 0.2828, for which the three schemes are known in closed form:
//  - midpoint: E is conserved exactly;
//  - implicit Euler: (ωx, v) is multiplied by (1 + h²)^{-1/2} per step, E(2 s)/E₀ = (1 + h²)^{-100};
//  - symplectic Euler conserves v² + ω²x² − h ω x v, so E oscillates in [E₀/(1 + h/2), E₀/(1 − h/2)]
//    (released at rest): peak-to-peak h/(1 − h²/4) = 28.9 % (the paper's 28 %).
// Rolling (μ = 1): midpoint peak-to-peak < 0.2 % (paper 0.16 %), ≥ 100× below symplectic Euler.
TEST(SimulatorPhysicsTest, SpringCylinderEnergy) {
  const double dt = 0.02, T = 2.0, h = cylinder_omega(0.0) * dt;
  const CylinderRun mid0 = run_cylinder(0.0, dt, Integrator::kMidpoint, T);
  const CylinderRun se0 = run_cylinder(0.0, dt, Integrator::kSymplecticEuler, T);
  const CylinderRun ie0 = run_cylinder(0.0, dt, Integrator::kImplicitEuler, T);
  const CylinderRun mid1 = run_cylinder(1.0, dt, Integrator::kMidpoint, T);
  const CylinderRun se1 = run_cylinder(1.0, dt, Integrator::kSymplecticEuler, T);
  const double ie_ratio = ie0.E.back() / ie0.E.front(), ie_expected = std::pow(1 + h * h, -100.0);
  const double se_expected = h / (1 - h * h / 4);
  std::printf("[ measured ] spring-cylinder energy, dt = 0.02, 2 s (E0 = %.6f J): mu = 0: midpoint p-p %.2e %%, "
              "symplectic Euler p-p %.3f%% (analytic %.3f%%), implicit Euler E(2 s)/E0 = %.4e (analytic %.4e, "
              "lost %.2f%%); mu = 1: midpoint p-p %.4f%%, symplectic Euler p-p %.2f%%\n",
              mid0.E.front(), 100 * peak_to_peak(mid0), 100 * peak_to_peak(se0), 100 * se_expected, ie_ratio,
              ie_expected, 100 * (1 - ie_ratio), 100 * peak_to_peak(mid1), 100 * peak_to_peak(se1));
  for (const CylinderRun* r : {&mid0, &se0, &ie0, &mid1, &se1}) EXPECT_EQ(r->failures, 0);
  EXPECT_NEAR(mid0.E.front(), 0.5 * kSpring * kX0 * kX0, 1e-12);
  EXPECT_LT(peak_to_peak(mid0), 1e-9);
  EXPECT_GT(peak_to_peak(se0), 0.20);
  EXPECT_LT(peak_to_peak(se0), 0.35);
  EXPECT_NEAR(peak_to_peak(se0), se_expected, 0.01 * se_expected);
  EXPECT_NEAR(ie_ratio, ie_expected, 1e-6 * ie_expected);
  EXPECT_GT(1 - ie_ratio, 0.9);  // "loses most of its energy within 2 s"
  EXPECT_LT(peak_to_peak(mid1), 0.002);
  EXPECT_LT(100 * peak_to_peak(mid1), peak_to_peak(se1));
}

// The example scene itself (its cylinder collision against the ground box, μ = 1, midpoint,
// δt = 0.02 s as in the file): the rolling cylinder must keep its two line-contact end points
// and roll as smoothly as the two-sphere equivalent (energy peak-to-peak < 0.2 % over 2 s).
TEST(SimulatorPhysicsTest, SpringCylinderExampleSceneRollsSmoothly) {
  const CylinderRun r = run_cylinder(1.0, 0.02, Integrator::kMidpoint, 2.0, /*example_geometry=*/true);
  const auto [fewest, most] = std::minmax_element(r.contacts.begin(), r.contacts.end());
  const double lost = 1.0 - r.E.back() / r.E.front();
  std::printf("[ measured ] spring_cylinder.yaml (cylinder collision), mu = 1, midpoint, dt = 0.02, 2 s: energy "
              "p-p %.3f%%, lost %.3f%%, contact points per step %d..%d, %d failures\n",
              100 * peak_to_peak(r), 100 * lost, *fewest, *most, r.failures);
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(*fewest, 2);
  EXPECT_EQ(*most, 2);
  EXPECT_LT(peak_to_peak(r), 0.002);
}

// ---------------------------------------------------------------------------------------------
// 4. Quadrupeds standing under PD control for 10 s: the base stays upright and its height
//    drifts by less than 1 mm between t = 1 s (settled) and t = 10 s; every SAP solve succeeds.
void expect_stands(const std::string& file) {
  io::Scene scene = io::load_scene(kScenes + "/" + file);
  ASSERT_EQ(scene.robots.size(), 1u);
  const std::string base_joint = scene.robots[0].floating_joint;
  SimulatorParameters params;
  params.time_step = scene.time_step;
  params.integrator = parse_integrator(scene.integrator);
  Simulator sim(std::move(scene), params);
  const multibody::Joint& j = floating_joint(sim.model(), base_joint);
  const int per_second = static_cast<int>(std::lround(1.0 / params.time_step));
  int failures = run(sim, per_second);
  const double h1 = position(sim.q(), j).z();
  double max_tilt = 0.0;
  for (int k = per_second; k < 10 * per_second; k += 10) {
    failures += run(sim, 10);
    const Eigen::Vector3d z = orientation(sim.q(), j) * Eigen::Vector3d::UnitZ();
    max_tilt = std::max(max_tilt, std::acos(std::min(1.0, z.z())));
  }
  const double h10 = position(sim.q(), j).z();
  std::printf("[ measured ] %s standing: base height %.6f m at 1 s, %.6f m at 10 s (drift %.2e m), "
              "max tilt %.3f deg (1-10 s), %d failures\n",
              file.c_str(), h1, h10, h10 - h1, max_tilt * 180 / M_PI, failures);
  EXPECT_EQ(failures, 0);
  EXPECT_LT(std::abs(h10 - h1), 1e-3);
  EXPECT_LT(max_tilt, 3.0 * M_PI / 180);
  EXPECT_GT(h10, 0.15);
}

TEST(SimulatorPhysicsTest, A1StandsForTenSeconds) { expect_stands("a1_stand.yaml"); }
TEST(SimulatorPhysicsTest, QuadrupedStandsForTenSeconds) { expect_stands("quadruped.yaml"); }

// ---------------------------------------------------------------------------------------------
// 5. Free fall without contact: v(1 s) = −g t for every scheme (to 1e-12); z(1 s) = z₀ − ½ g t²
//    exactly with the midpoint rule and z₀ − ½ g t² − ½ g t δt with the Euler schemes (which
//    advance q with the end-of-step velocity: z_n = z₀ − g δt² n(n+1)/2).
// Speculative contact: a ball falling at 3 m/s starts a step 15 mm above the ground (δt = 10 ms,
// near-rigid contact). With the fixed 2 mm margin the step finds no contact and the ball sinks
// ~15 mm into the ground. With speculative margins the contact is in the step's problem; it acts
// once the predicted gap φ₀ + (δt + τ_d) v_n turns negative, so the ball is stopped at the
// surface. Bound: the near-rigid spring (period β δt) compressed by an impact at speed u,
// u β δt / (2π) = 4.8 mm; measured far below it.
TEST(SimulatorPhysicsTest, SpeculativeContactCatchesFastImpacts) {
  const double dt = 0.01, u = 3.0, gap = 0.015, r = 0.05;
  const std::string yaml =
      "time_step: 0.01\nduration: 1.0\ngravity: [0, 0, -9.81]\n"
      "contact_approximation: sap\ncontact: {mu: 0.5, stiffness: 1.0e12, dissipation_time: 0.01}\n"
      "bodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: box, size: [4, 4, 0.2], position: [0, 0, -0.1]}]\n"
      "  - name: ball\n    mass: 0.524\n    shapes: [{type: sphere, radius: 0.05}]\n"
      "    position: [0, 0, " + num(r + gap) + "]\n";
  double penetration[2] = {0.0, 0.0};
  for (bool speculative : {false, true}) {
    SimulatorParameters params;
    params.time_step = dt;
    params.speculative_contact = speculative;
    Simulator sim(io::parse_scene(yaml, "fast_impact"), params);
    Eigen::VectorXd v = sim.v();
    v[floating_joint(sim.model(), "ball").v_index + 5] = -u;  // world-frame linear z velocity
    sim.set_state(sim.q(), v);
    const multibody::Joint& j = floating_joint(sim.model(), "ball");
    int failures = 0;
    for (int k = 0; k < 50; ++k) {
      failures += sim.step().status != solvers::sap::SapSolverStatus::kSuccess;
      penetration[speculative] = std::max(penetration[speculative], r - position(sim.q(), j).z());
    }
    EXPECT_EQ(failures, 0);
  }
  const double spring_bound = u * dt / (2.0 * M_PI);
  std::printf("[ measured ] ball hitting the ground at %.1f m/s from %.0f mm, dt = 10 ms: max penetration %.2f mm "
              "without speculative contact, %.2f mm with (near-rigid spring bound u dt/(2 pi) = %.2f mm)\n",
              u, 1e3 * gap, 1e3 * penetration[0], 1e3 * penetration[1], 1e3 * spring_bound);
  EXPECT_GT(penetration[0], 0.8 * (u * dt - gap));  // sinks for a step
  EXPECT_LT(penetration[1], spring_bound);
  EXPECT_LT(penetration[1], 1e-3);
}

TEST(SimulatorPhysicsTest, FreeFallIsExactForEveryScheme) {
  const double dt = 1e-3, z0 = 10.0;
  const std::string yaml =
      "time_step: 0.001\nduration: 1.0\ngravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - name: ground\n    fixed: true\n    shapes: [{type: box, size: [4, 4, 0.2], position: [0, 0, -0.1]}]\n"
      "  - name: ball\n    mass: 0.524\n    shapes: [{type: sphere, radius: 0.05}]\n    position: [0, 0, 10]\n";
  for (Integrator integrator : {Integrator::kMidpoint, Integrator::kSymplecticEuler, Integrator::kImplicitEuler}) {
    SimulatorParameters params;
    params.time_step = dt;
    params.integrator = integrator;
    Simulator sim(io::parse_scene(yaml, "free_fall"), params);
    const multibody::Joint& j = floating_joint(sim.model(), "ball");
    int contacts = 0;
    for (int k = 0; k < 1000; ++k) contacts += sim.step().contacts;
    const double t = sim.time();
    const Eigen::Vector3d v = world_velocity(sim, j), p = position(sim.q(), j);
    const double z_exact = z0 - 0.5 * kG * t * t;
    const double expected_error = integrator == Integrator::kMidpoint ? 0.0 : -0.5 * kG * t * dt;
    std::printf("[ measured ] free fall, %s: t = %.15g s, v_z + g t = %.2e m/s, z - (z0 - g t^2/2) = %.6e m "
                "(expected %.6e), %d contacts\n",
                to_string(integrator), t, v.z() + kG * t, p.z() - z_exact, expected_error, contacts);
    EXPECT_EQ(contacts, 0);
    EXPECT_NEAR(t, 1.0, 1e-12);
    EXPECT_NEAR(v.z(), -kG * t, 1e-12) << to_string(integrator);
    EXPECT_NEAR(v.x(), 0.0, 1e-15);
    EXPECT_NEAR(v.y(), 0.0, 1e-15);
    EXPECT_NEAR(p.z() - z_exact, expected_error, 1e-11) << to_string(integrator);
    EXPECT_EQ(sim.v().head<3>().norm(), 0.0);  // no rotation
  }
}

// A spinning ball in free fall (v₀ = (1, 0, 0) m/s, ω₀ = (0, 20, 0) rad/s, no contact): its
// centre follows the parabola p₀ + v₀ t + ½ g t² whatever its spin, and a sphere's spin is
// constant. With inertial-frame floating velocities the midpoint rule integrates constant
// acceleration exactly, so the error is round-off at every δt (2e-3, 1e-3, 5e-4 s). (With
// body-frame velocities it was first order: the regression this guards against.)
TEST(SimulatorPhysicsTest, SpinningFreeFallMidpointIsExact) {
  const std::string yaml =
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - name: ball\n    mass: 0.524\n    shapes: [{type: sphere, radius: 0.05}]\n    position: [0, 0, 10]\n"
      "    linear_velocity: [1, 0, 0]\n    angular_velocity: [0, 20, 0]\n";
  std::vector<double> errors, velocity_errors;
  for (double dt : {2e-3, 1e-3, 5e-4}) {
    SimulatorParameters params;
    params.time_step = dt;
    params.integrator = Integrator::kMidpoint;
    Simulator sim(io::parse_scene(yaml, "spinning_free_fall"), params);
    const multibody::Joint& j = floating_joint(sim.model(), "ball");
    run(sim, static_cast<int>(std::lround(1.0 / dt)));
    const double t = sim.time();
    const Eigen::Vector3d p_exact(t, 0, 10 - 0.5 * kG * t * t), v_exact(1, 0, -kG * t);
    errors.push_back((position(sim.q(), j) - p_exact).norm());
    velocity_errors.push_back((world_velocity(sim, j) - v_exact).norm());
    EXPECT_LT((world_angular_velocity(sim, j) - Eigen::Vector3d(0, 20, 0)).norm(), 1e-10);
  }
  std::printf("[ measured ] spinning free fall, midpoint, |p(1 s) - parabola| = %.3e, %.3e, %.3e m (ratios %.2f, %.2f); "
              "|v - v_exact| = %.3e, %.3e, %.3e m/s (ratios %.2f, %.2f) for dt = 2e-3, 1e-3, 5e-4\n",
              errors[0], errors[1], errors[2], errors[0] / errors[1], errors[1] / errors[2], velocity_errors[0],
              velocity_errors[1], velocity_errors[2], velocity_errors[0] / velocity_errors[1],
              velocity_errors[1] / velocity_errors[2]);
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_LT(errors[i], 1e-10) << "position, run " << i;
    EXPECT_LT(velocity_errors[i], 1e-10) << "velocity, run " << i;
  }
}

// SimulatorParameters::compute_energy: the energy statistic only reports, it never feeds back.
// The A1 dropped on the ground with it on and off must follow the same trajectory bit for bit;
// with it off StepStats::energy is NaN (never a stale or zero value), with it on it is the
// simulator's own energy() of the state.
TEST(SimulatorPhysicsTest, EnergyStatisticIsOptionalAndChangesNothing) {
  const std::string path = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/a1_drop.yaml";
  SimulatorParameters on, off;
  on.time_step = off.time_step = 1e-3;
  off.compute_energy = false;
  Simulator a(io::load_scene(path), on), b(io::load_scene(path), off);
  for (int k = 0; k < 300; ++k) {
    const double E = a.step().energy;
    const double E_off = b.step().energy;
    ASSERT_EQ(a.q(), b.q()) << "step " << k;
    ASSERT_EQ(a.v(), b.v()) << "step " << k;
    EXPECT_TRUE(std::isnan(E_off)) << "step " << k;
    EXPECT_DOUBLE_EQ(E, a.energy(a.q(), a.v())) << "step " << k;
  }
}

}  // namespace
}  // namespace coulomb::simulation
