// Bilateral constraints in the simulator (scene `constraints:`), under --solver sap and lstable:
//  - the four-bar linkage of examples/scenes/four_bar.yaml: the rocker angle against the
//    closed-form (Freudenstein) position solution at the simulated crank angle, the rocker's swing
//    against the Grashof extremes (crank and coupler collinear), and the loop's drift;
//  - a pendulum built as a free body + ball constraint to the world against the same pendulum
//    as a revolute joint (the bob's trajectory, converging as O(δt));
//  - a weld holding two free bodies together under gravity and a tumbling impulse, against one
//    rigid body with their combined inertia;
//  - a distance constraint holding its length on a body whirled around a world point, with the
//    rod tension m v²/L;
//  - momentum conservation for constraints between two free bodies in zero gravity;
//  - the digest's test 6 (../shared/digests/lstable.md §6 B.6, §5.2): the pendulum in absolute
//    coordinates with k = 1e15, b = 1 under lstable.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/simulation/simulator.h"
#include "test_models.h"

namespace coulomb::simulation {
namespace {

using math::Matrix3;
using math::Vector3;

constexpr double kPi = std::numbers::pi;
const std::string kScenes = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/";

SimulatorParameters params_for(const scene::Scene& scene, Solver solver, double dt = 0) {
  SimulatorParameters p;
  p.time_step = dt > 0 ? dt : scene.time_step;
  p.solver = solver;
  return p;
}

const char* name(Solver s) { return to_string(s); }

// World position of the point p_B of body `body` at configuration q.
Vector3 point_W(const multibody::Model& model, const Eigen::VectorXd& q, int body, const Vector3& p_B) {
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  return ws.X_WB[body].act(p_B);
}

// ---- Four-bar linkage (Grashof crank-rocker).

constexpr double kCrank = 0.1, kCoupler = 0.35, kRocker = 0.3, kGround = 0.4;

// Freudenstein: K1 cos θ4 − K2 cos θ2 + K3 = cos(θ2 − θ4), K1 = d/a, K2 = d/c,
// K3 = (a² − b² + c² + d²)/(2ac), solved as a quadratic in tan(θ4/2); `branch` ±1.
double rocker_angle(double theta2, double branch) {
  const double a = kCrank, b = kCoupler, c = kRocker, d = kGround;
  const double K1 = d / a, K2 = d / c, K3 = (a * a - b * b + c * c + d * d) / (2 * a * c);
  const double A = std::cos(theta2) - K1 - K2 * std::cos(theta2) + K3;
  const double B = -2 * std::sin(theta2);
  const double C = K1 - (K2 + 1) * std::cos(theta2) + K3;
  return 2 * std::atan2(-B + branch * std::sqrt(B * B - 4 * A * C), 2 * A);
}

double wrap(double x) { return std::remainder(x, 2 * kPi); }

TEST(BilateralConstraintTest, FourBarFollowsTheClosedFormPositionSolution) {
  // Rocker extremes: crank and coupler collinear, |AC| = b ± a; law of cosines in triangle ADC.
  const double a = kCrank, b = kCoupler, c = kRocker, d = kGround;
  ASSERT_LE(a + d, b + c);  // Grashof, crank shortest: a crank-rocker
  auto extreme = [&](double ac) { return std::acos((ac * ac - d * d - c * c) / (2 * d * c)); };
  const double rocker_min = extreme(b + a), rocker_max = extreme(b - a);
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    SCOPED_TRACE(name(solver));
    const scene::Scene scene = io::load_scene(kScenes + "four_bar.yaml");
    const multibody::Model& model = scene.model;
    const int crank = model.body(model.joint_body("crank")).joint.q_index;
    const int rocker = model.body(model.joint_body("rocker")).joint.q_index;
    // The open branch: the one the scene's initial angles are on.
    const double branch = std::abs(wrap(rocker_angle(scene.q0[crank], -1) - scene.q0[rocker])) < 1e-12 ? -1 : 1;
    ASSERT_LT(std::abs(wrap(rocker_angle(scene.q0[crank], branch) - scene.q0[rocker])), 1e-12);
    Simulator sim(scene, params_for(scene, solver));
    double max_error = 0, max_drift = 0, lo = 10, hi = -10;
    const double crank0 = scene.q0[crank];
    while (sim.time() < 2.0 - 1e-9) {
      sim.step();
      const double theta2 = sim.q()[crank], theta4 = sim.q()[rocker];
      max_error = std::max(max_error, std::abs(wrap(theta4 - rocker_angle(theta2, branch))));
      max_drift = std::max(max_drift, sim.last_results().bilaterals[0].phi.norm());
      lo = std::min(lo, wrap(theta4));
      hi = std::max(hi, wrap(theta4));
      ASSERT_EQ(sim.last_step().status, solvers::sap::SapSolverStatus::kSuccess);
    }
    const double turns = (sim.q()[crank] - crank0) / (2 * kPi);
    std::printf("[ measured ] four-bar %s: %.2f crank turns in 2 s, max |θ4 − θ4(θ2)| = %.3g rad, max |φ| = %.3g m, "
                "rocker swing [%.5f, %.5f] rad (closed form [%.5f, %.5f])\n",
                name(solver), turns, max_error, max_drift, lo, hi, rocker_min, rocker_max);
    EXPECT_GT(turns, 1.5);           // the rocker has swung through both extremes more than once
    EXPECT_LT(max_error, 5e-4);      // measured 4e-5 rad
    EXPECT_LT(max_drift, 5e-5);      // loop closure drift [m], measured 1.5e-5
    EXPECT_NEAR(lo, rocker_min, 2e-3);  // extremes reached between steps: ω δt ≈ 6e-3 rad of crank
    EXPECT_NEAR(hi, rocker_max, 2e-3);
  }
}

// The same loop closed by a revolute joint in maximal form (5 rows): in the planar linkage its two
// rotational rows and the out-of-plane translational row have zero Jacobian rows (inert), and the
// remaining two rows do the closing; same motion as the ball.
TEST(BilateralConstraintTest, FourBarClosedByARevoluteJointConstraint) {
  std::ifstream in(kScenes + "four_bar.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const size_t at = yaml.find("constraints:");
  ASSERT_NE(at, std::string::npos);
  yaml = yaml.substr(0, at) +
         "constraints:\n"
         "  - {name: loop, type: joint, joint_type: revolute, axis: [0, -1, 0],\n"
         "     body_a: rocker_link, frame_a: {position: [0.3, 0, 0]}, body_b: coupler_link}\n";
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    SCOPED_TRACE(name(solver));
    const scene::Scene scene = io::parse_scene(yaml, "four_bar_joint.yaml", kScenes);
    ASSERT_EQ(scene.constraints[0].type, scene::BilateralType::kRevolute);
    const multibody::Model& model = scene.model;
    const int crank = model.body(model.joint_body("crank")).joint.q_index;
    const int rocker = model.body(model.joint_body("rocker")).joint.q_index;
    Simulator sim(scene, params_for(scene, solver));
    double max_error = 0, max_impulse_inert = 0;
    while (sim.time() < 1.0 - 1e-9) {
      sim.step();
      max_error = std::max(max_error, std::abs(wrap(sim.q()[rocker] - rocker_angle(sim.q()[crank], -1))));
      const Eigen::VectorXd& g = sim.last_results().bilaterals[0].impulse;
      max_impulse_inert = std::max({max_impulse_inert, std::abs(g[0]), std::abs(g[1]), std::abs(g[3])});
    }
    std::printf("[ measured ] four-bar closed by a revolute joint, %s: max |θ4 − θ4(θ2)| = %.3g rad, "
                "max inert-row impulse %.3g N·s\n", name(solver), max_error, max_impulse_inert);
    EXPECT_LT(max_error, 5e-4);
    EXPECT_LT(max_impulse_inert, 1e-9);  // the rows that cannot move carry nothing
  }
}

// The coupler and rocker run from the scene's data through both solvers to the same motion: SAP
// and lstable use the same near-rigid rule (R = w/(4π²), τ = δt/π) for rigid bilateral rows.
TEST(BilateralConstraintTest, FourBarSapAndLStableAgree) {
  const scene::Scene scene = io::load_scene(kScenes + "four_bar.yaml");
  Simulator sap(scene, params_for(scene, Solver::kSap)), lstable(scene, params_for(scene, Solver::kLStable));
  for (int k = 0; k < 500; ++k) {
    sap.step();
    lstable.step();
  }
  EXPECT_LT((sap.q() - lstable.q()).norm(), 1e-8);
  EXPECT_LT((sap.last_results().bilaterals[0].impulse - lstable.last_results().bilaterals[0].impulse).norm(),
            1e-8 * sap.last_results().bilaterals[0].impulse.norm());
}

// ---- Pendulum: free body + ball constraint vs revolute joint.

std::string free_pendulum_yaml(double theta0, double l, const std::string& extra = "") {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "gravity: [0, 0, -9.81]\n"
                "bodies:\n"
                "  - {name: bob, mass: 1.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [%.17g, 0, %.17g],"
                " rpy: [0, %.17g, 0]}\n"
                "constraints:\n"
                "  - {type: ball, body_a: world, body_b: bob, point_b: [0, 0, %.17g]%s}\n",
                -l * std::sin(theta0), -l * std::cos(theta0), theta0, l, extra.c_str());
  return buf;
}

// Max distance between the bobs over 1 s at time step dt.
double pendulum_difference(Solver solver, double dt) {
  const double l = 0.5, theta0 = 1.2;
  const scene::Scene free = io::parse_scene(free_pendulum_yaml(theta0, l), "free_pendulum.yaml");
  scene::Scene hinged;
  hinged.model = coulomb::testing::make_pendulum(1.0, l, 0.01);
  hinged.q0 = Eigen::VectorXd::Constant(1, theta0);
  hinged.v0 = Eigen::VectorXd::Zero(1);
  Simulator a(free, params_for(free, solver, dt)), b(hinged, params_for(hinged, solver, dt));
  double max_difference = 0;
  while (a.time() < 1.0 - 1e-9) {
    a.step();
    b.step();
    const Vector3 p_free = a.q().head<3>();
    const Vector3 p_hinged = point_W(b.model(), b.q(), 1, Vector3(0, 0, -l));
    max_difference = std::max(max_difference, (p_free - p_hinged).norm());
  }
  return max_difference;
}

TEST(BilateralConstraintTest, FreeBodyPendulumMatchesRevolutePendulum) {
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    const double e2 = pendulum_difference(solver, 2e-3), e1 = pendulum_difference(solver, 1e-3);
    std::printf("[ measured ] pendulum free+ball vs revolute, %s: max |Δp| over 1 s = %.3g m (δt = 2e-3), %.3g m (1e-3)\n",
                name(solver), e2, e1);
    EXPECT_LT(e1, 5e-3) << name(solver);
    // Both schemes are first order: the gap shrinks ∝ δt.
    EXPECT_NEAR(e2 / e1, 2.0, 0.3) << name(solver);
  }
}

// ---- Weld: two free bodies welded behave as one rigid body.

struct WeldRun {
  double max_drift = 0, max_gap = 0, max_rot_gap = 0, spin = 0;
};

WeldRun weld_run(Solver solver, double dt, bool project = true) {
  // A box and a rod welded at an offset, tumbling under gravity after an off-centre push.
  const std::string pair =
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: a, mass: 2.0, inertia: [0.02, 0.03, 0.04, 0, 0, 0], position: [0, 0, 1]}\n"
      "  - {name: b, mass: 0.5, inertia: [0.001, 0.01, 0.01, 0, 0, 0], position: [0.3, 0.1, 1.2], rpy: [0.3, 0.2, 0.1]}\n"
      "constraints:\n"
      "  - {type: weld, body_a: a, body_b: b}\n";
  // The same two rigid parts as one body: composite inertia about a's origin.
  const scene::Scene parts = io::parse_scene(pair, "pair.yaml");
  const multibody::Model& pm = parts.model;
  const int ia = pm.body_index("a"), ib = pm.body_index("b");
  multibody::Workspace ws(pm);
  multibody::forward_kinematics(pm, ws, parts.q0);
  const math::Transform X_AB = ws.X_WB[ia].inverse() * ws.X_WB[ib];
  const math::SpatialInertia I_comp = pm.body(ia).inertia + X_AB.act(pm.body(ib).inertia);
  multibody::ModelBuilder builder("composite");
  builder.add_link("a", "world", coulomb::testing::floating("a"), I_comp);
  scene::Scene one;
  one.model = builder.build();
  one.q0 = parts.q0.head(7);
  one.v0 = Eigen::VectorXd::Zero(6);
  SimulatorParameters parts_params = params_for(parts, solver, dt);
  parts_params.project_rigid_constraints = project;
  Simulator sim(parts, parts_params), ref(one, params_for(one, solver, dt));
  // A push on a for 0.05 s, off its centre: it tumbles.
  ExternalWrench push;
  push.body = ia;
  push.f_W = Vector3(20, -10, 40);
  push.p_BoBq_B = Vector3(0.05, 0.1, -0.05);
  sim.add_external_wrench(push);
  push.body = 1;
  ref.add_external_wrench(push);
  WeldRun run;
  while (sim.time() < 1.0 - 1e-9) {
    if (sim.time() > 0.05 - 1e-9) {
      sim.clear_external_wrenches();
      ref.clear_external_wrenches();
    }
    sim.step();
    ref.step();
    // The relative pose of the two bodies stays the initial one.
    multibody::forward_kinematics(pm, ws, sim.q());
    const math::Transform X_AB_now = ws.X_WB[ia].inverse() * ws.X_WB[ib];
    run.max_drift = std::max({run.max_drift, (X_AB_now.p - X_AB.p).norm(), (X_AB_now.R - X_AB.R).norm()});
    // Body a follows the composite body.
    const Matrix3 R_ref = Eigen::Quaterniond(ref.q()[3], ref.q()[4], ref.q()[5], ref.q()[6]).toRotationMatrix();
    run.max_gap = std::max(run.max_gap, (sim.q().head<3>() - ref.q().head<3>()).norm());
    run.max_rot_gap = std::max(run.max_rot_gap, (ws.X_WB[ia].R - R_ref).norm());
  }
  run.spin = sim.v().head<3>().norm();
  return run;
}

TEST(BilateralConstraintTest, WeldHoldsTwoFreeBodiesAsOneRigidBody) {
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    SCOPED_TRACE(name(solver));
    const WeldRun coarse = weld_run(solver, 2e-3), fine = weld_run(solver, 1e-3);
    for (const WeldRun* r : {&coarse, &fine})
      std::printf("[ measured ] weld %s, δt = %g: max relative-pose drift %.3g, vs the composite body max |Δp| %.3g m, "
                  "max |ΔR|_F %.3g; |ω| = %.2f rad/s at 1 s\n",
                  name(solver), r == &coarse ? 2e-3 : 1e-3, r->max_drift, r->max_gap, r->max_rot_gap, r->spin);
    EXPECT_GT(fine.spin, 1.0);  // it does tumble
    // Post-stabilization (the default) keeps the relative pose to round-off.
    EXPECT_LT(fine.max_drift, 1e-10);
    EXPECT_LT(coarse.max_drift, 1e-10);
    // Both are first-order schemes for the same rigid body: the gaps shrink ∝ δt.
    EXPECT_LT(fine.max_gap, 2e-3);
    EXPECT_LT(fine.max_rot_gap, 0.1);
    EXPECT_NEAR(coarse.max_rot_gap / fine.max_rot_gap, 2.0, 0.4);
    // Without it the drift of the linearized constraint is second order: ∝ δt².
    const WeldRun coarse_free = weld_run(solver, 2e-3, false), fine_free = weld_run(solver, 1e-3, false);
    std::printf("[ measured ] weld %s without projection: max relative-pose drift %.3g (δt = 2e-3), %.3g (1e-3)\n",
                name(solver), coarse_free.max_drift, fine_free.max_drift);
    EXPECT_LT(fine_free.max_drift, 1e-3);
    EXPECT_NEAR(coarse_free.max_drift / fine_free.max_drift, 4.0, 1.0);
  }
}

// ---- Post-stabilization (SimulatorParameters::project_rigid_constraints).

// A pendulum made of a free body and a rigid ball joint to the world (m = 1, L = 1, J = 0.01,
// started horizontal) at δt = 0.01 and 0.1 s, ω δt up to 0.4: with the projection the bob stays on
// its circle to round-off and the energy never rises above its start; without it the linearized
// constraint drifts outward by ≈ (v δt)²/(2L) per step (0.30 m at δt = 0.1).
TEST(BilateralConstraintTest, ProjectionKeepsRigidConstraintsOnTheManifoldWithoutAddingEnergy) {
  const std::string yaml =
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: bob, mass: 1.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [1, 0, 0]}\n"
      "constraints:\n"
      "  - {type: ball, body_a: world, body_b: bob, point_b: [-1, 0, 0]}\n";
  const scene::Scene scene = io::parse_scene(yaml, "pendulum.yaml");
  for (Solver solver : {Solver::kSap, Solver::kLStable})
    for (double dt : {0.01, 0.1})
      for (bool project : {true, false}) {
        SimulatorParameters p = params_for(scene, solver, dt);
        p.project_rigid_constraints = project;
        Simulator sim(scene, p);
        const double E0 = sim.energy(sim.q(), sim.v());
        double max_drift = 0.0, max_gain = -1e300;
        for (int k = 0; k < static_cast<int>(std::lround(3.0 / dt)); ++k) {
          sim.step();
          max_drift = std::max(max_drift, std::abs(sim.q().head<3>().norm() - 1.0));
          max_gain = std::max(max_gain, sim.last_step().energy - E0);
        }
        std::printf("[ measured ] rigid ball pendulum, %s, dt %g, projection %s: max | |p| - L | = %.3g m, max E - E0 = "
                    "%.3g J over 3 s\n",
                    name(solver), dt, project ? "on" : "off", max_drift, max_gain);
        if (project) {
          EXPECT_LT(max_drift, 1e-12) << name(solver) << " dt " << dt;
          EXPECT_LE(max_gain, 1e-9) << name(solver) << " dt " << dt;
        } else {
          EXPECT_GT(max_drift, dt * dt) << name(solver) << " dt " << dt;  // the drift the projection removes
        }
      }
}

// ---- Distance: a body whirled around a world point on a rigid rod.

TEST(BilateralConstraintTest, DistanceHoldsLengthAndCarriesTheCentripetalTension) {
  const double L = 0.8, speed = 2.0, m = 1.5;
  char yaml[512];
  std::snprintf(yaml, sizeof yaml,
                "gravity: [0, 0, 0]\n"
                "bodies:\n"
                "  - {name: b, mass: %g, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [%g, 0, 0],"
                " linear_velocity: [0, %g, 0]}\n"
                "constraints:\n"
                "  - {name: rod, type: distance, body_a: world, body_b: b}\n",
                m, L, speed);
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    SCOPED_TRACE(name(solver));
    const scene::Scene scene = io::parse_scene(yaml, "whirl.yaml");
    EXPECT_DOUBLE_EQ(scene.constraints[0].length, L);
    Simulator sim(scene, params_for(scene, solver, 1e-3));
    double max_phi = 0, max_tension_error = 0;
    while (sim.time() < 2.0 - 1e-9) {
      sim.step();
      max_phi = std::max(max_phi, std::abs(sim.q().head<3>().norm() - L));
      if (sim.step_count() > 10) {
        // Tension pulls b towards the centre: the row force is −m v²/L along d̂.
        const double v2 = sim.v().tail<3>().squaredNorm();
        const double f = sim.last_results().bilaterals[0].force[0];
        max_tension_error = std::max(max_tension_error, std::abs(f + m * v2 / L) / (m * v2 / L));
      }
    }
    std::printf("[ measured ] distance %s: max | |d| − L | = %.3g m, max tension error %.3g (relative), speed %.4f "
                "m/s after 2 s\n",
                name(solver), max_phi, max_tension_error, sim.v().tail<3>().norm());
    EXPECT_LT(max_phi, 1e-4);
    EXPECT_LT(max_tension_error, 1e-2);
  }
}

// A compliant constraint is the spring–damper its stiffness and damping say: a body on a
// distance constraint of k = 200 N/m, b = 0.8 N·s/m (zero gravity, radial motion) oscillates with
// the damped period 2π/ω_d and decays at b/(2m) plus implicit Euler's numerical rate ω²δt/2.
TEST(BilateralConstraintTest, CompliantDistanceIsASpringDamper) {
  const double m = 2.0, k = 200.0, b = 0.8, dt = 1e-3;
  const std::string yaml =
      "gravity: [0, 0, 0]\n"
      "bodies:\n"
      "  - {name: b, mass: 2.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [1.1, 0, 0]}\n"
      "constraints:\n"
      "  - {type: distance, body_a: world, body_b: b, length: 1.0, stiffness: 200, damping: 0.8}\n";
  const double w2 = k / m, wd = std::sqrt(w2 - std::pow(b / (2 * m), 2));
  for (Solver solver : {Solver::kSap, Solver::kLStable}) {
    const scene::Scene scene = io::parse_scene(yaml, "spring.yaml");
    Simulator sim(scene, params_for(scene, solver, dt));
    std::vector<double> crossings, peak_t, peak_x;
    double x_prev2 = 0.1, x_prev = 0.1;
    while (sim.time() < 5.0 - 1e-9) {
      const double t_prev = sim.time();
      sim.step();
      const double x = sim.q()[0] - 1.0;
      if (x_prev > 0 && x <= 0) crossings.push_back(t_prev + dt * x_prev / (x_prev - x));
      if (x_prev > x_prev2 && x_prev >= x && x_prev > 0) {
        peak_t.push_back(t_prev);
        peak_x.push_back(x_prev);
      }
      x_prev2 = x_prev;
      x_prev = x;
    }
    ASSERT_GE(crossings.size(), 5u);
    ASSERT_GE(peak_x.size(), 3u);
    const double period = (crossings.back() - crossings.front()) / (crossings.size() - 1);
    const double rate = -std::log(peak_x.back() / peak_x.front()) / (peak_t.back() - peak_t.front());
    std::printf("[ measured ] compliant distance, %s: period %.5f s (closed form %.5f), decay %.4f /s (b/2m + ω²δt/2 = "
                "%.4f)\n", name(solver), period, 2 * kPi / wd, rate, b / (2 * m) + w2 * dt / 2);
    EXPECT_NEAR(period, 2 * kPi / wd, 1e-3 * period) << name(solver);
    EXPECT_NEAR(rate, b / (2 * m) + w2 * dt / 2, 0.02 * rate) << name(solver);
  }
}

// A stiff compliant constraint at any step size: k = 1e10 N/m (period 8.9e-5 s), released 0.1 m
// stretched, from δt = 1e-3 to 10 s: the stretch never grows and the mechanical energy (kinetic +
// ½kφ²) never exceeds the initial one (implicit Euler in the constraint: L-stable).
TEST(BilateralConstraintTest, StiffCompliantConstraintIsStableAtAnyStep) {
  const double k = 1e10, m = 2.0;
  const std::string yaml =
      "gravity: [0, 0, 0]\n"
      "bodies:\n"
      "  - {name: b, mass: 2.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [1.1, 0, 0]}\n"
      "constraints:\n"
      "  - {type: distance, body_a: world, body_b: b, length: 1.0, stiffness: 1.0e10}\n";
  const double E0 = 0.5 * k * 0.01;
  for (Solver solver : {Solver::kSap, Solver::kLStable})
    for (double dt : {1e-3, 1e-2, 0.1, 1.0, 10.0}) {
      const scene::Scene scene = io::parse_scene(yaml, "stiff.yaml");
      Simulator sim(scene, params_for(scene, solver, dt));
      double max_stretch = 0, max_energy = 0;
      for (int n = 0; n < 50; ++n) {
        sim.step();
        const double phi = sim.q().head<3>().norm() - 1.0;
        max_stretch = std::max(max_stretch, std::abs(phi));
        max_energy = std::max(max_energy, 0.5 * m * sim.v().tail<3>().squaredNorm() + 0.5 * k * phi * phi);
      }
      EXPECT_LE(max_stretch, 0.1 * (1 + 1e-9)) << name(solver) << " dt " << dt;
      EXPECT_LE(max_energy, E0 * (1 + 1e-9)) << name(solver) << " dt " << dt;
      EXPECT_LT(std::abs(sim.q()[0] - 1.0), 1e-3) << name(solver) << " dt " << dt;  // settled on the constraint
    }
}

// ---- Momentum: constraints between two free bodies in zero gravity.

// Linear and angular momentum (about the world origin) of free bodies whose origin is their
// centre of mass.
void momentum(const multibody::Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Vector3& P, Vector3& L) {
  P.setZero();
  L.setZero();
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& j = model.body(b).joint;
    const double m = model.body(b).inertia.mass;
    const Eigen::Quaterniond quat(q[j.q_index + 3], q[j.q_index + 4], q[j.q_index + 5], q[j.q_index + 6]);
    const Matrix3 R = quat.normalized().toRotationMatrix();
    const Vector3 p = q.segment<3>(j.q_index), w = v.segment<3>(j.v_index), vel = v.segment<3>(j.v_index + 3);
    const Matrix3 I_W = R * model.body(b).inertia.I_o * R.transpose();  // about the centre (= origin)
    P += m * vel;
    L += p.cross(m * vel) + I_W * w;
  }
}

TEST(BilateralConstraintTest, ConstraintBetweenFreeBodiesConservesMomentum) {
  for (const char* type : {"ball", "weld", "distance", "joint, joint_type: revolute", "joint, joint_type: prismatic"}) {
    const std::string yaml = std::string(
                                 "gravity: [0, 0, 0]\n"
                                 "bodies:\n"
                                 "  - {name: a, mass: 2.0, inertia: [0.02, 0.03, 0.04, 0, 0, 0], position: [0.1, 0.2, 0.3],"
                                 " linear_velocity: [1, -2, 0.5], angular_velocity: [3, 1, -2]}\n"
                                 "  - {name: b, mass: 0.7, inertia: [0.01, 0.02, 0.02, 0, 0, 0], position: [0.5, 0.1, 0.2],"
                                 " rpy: [0.4, -0.3, 1.0], linear_velocity: [-1, 0.5, 2], angular_velocity: [-1, 4, 2]}\n"
                                 "constraints:\n"
                                 "  - {type: ") +
                             type + ", body_a: a, body_b: b, " +
                             (std::string(type) == "ball" || std::string(type) == "distance" ? "point_a: [0.2, 0, 0]"
                                                                                           : "frame_a: {position: [0.2, 0, 0]}") +
                             "}\n";
    for (Solver solver : {Solver::kSap, Solver::kLStable}) {
      SCOPED_TRACE(std::string(type) + " " + name(solver));
      const scene::Scene scene = io::parse_scene(yaml, "pair.yaml");
      Simulator sim(scene, params_for(scene, solver, 1e-3));
      Vector3 P0, L0, P, L;
      momentum(sim.model(), sim.q(), sim.v(), P0, L0);
      // The impulses on A and B are equal and opposite, so P is conserved to round-off. L about the
      // world origin: stage 2 applies the linear impulse γ to the bodies' momenta about their
      // origins at q₀ (J = J(q₀)) while the origins move by Δp_O in the step, and on the
      // translational rows A's point F and B's point M are φ apart: per step L changes by at most
      // (|Δp_OA| + |Δp_OB| + |φ_t|) |γ_t| (rotational rows apply equal and opposite pure torques).
      double bound = 0, max_phi = 0;
      for (int k = 0; k < 500; ++k) {
        const Vector3 pa0 = sim.q().segment<3>(0), pb0 = sim.q().segment<3>(7);
        sim.step();
        const BilateralResult& r = sim.last_results().bilaterals[0];
        const int rows = static_cast<int>(r.phi.size()), t = rows == 5 && std::string(type).find("prismatic") != std::string::npos ? 2 : std::min(rows, 3);
        const double dpa = (sim.q().segment<3>(0) - pa0).norm(), dpb = (sim.q().segment<3>(7) - pb0).norm();
        bound += (dpa + dpb + r.phi.tail(t).norm()) * r.impulse.tail(t).norm();
        max_phi = std::max(max_phi, r.phi.norm());
      }
      momentum(sim.model(), sim.q(), sim.v(), P, L);
      std::printf("[ measured ] momentum %s %s: |ΔP| = %.3g, |ΔL| = %.3g (bound %.3g), max |φ| = %.3g\n", type, name(solver),
                  (P - P0).norm(), (L - L0).norm(), bound, max_phi);
      EXPECT_LT((P - P0).norm(), 1e-11 * P0.norm());
      EXPECT_LT((L - L0).norm(), bound + 1e-11 * L0.norm());
      EXPECT_LT(max_phi, 1e-3);
    }
  }
}

// ---- Digest test 6: the pendulum in absolute coordinates under lstable.

struct PendulumRun {
  double max_phi = 0, max_energy_error = 0;
  bool finite = true;
};

// m = 1, L = 1, J = 0.01 (isotropic), ball to the world with k = 1e15, b = 1, released
// horizontal at rest, 1 s, implicit Euler, lstable.
PendulumRun absolute_pendulum(double h) {
  const std::string yaml =
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: bob, mass: 1.0, inertia: [0.01, 0.01, 0.01, 0, 0, 0], position: [1, 0, 0]}\n"
      "constraints:\n"
      "  - {type: ball, body_a: world, body_b: bob, point_b: [-1, 0, 0], stiffness: 1.0e15, damping: 1.0}\n";
  const scene::Scene scene = io::parse_scene(yaml, "absolute_pendulum.yaml");
  SimulatorParameters p = params_for(scene, Solver::kLStable, h);
  Simulator sim(scene, p);
  const double E0 = sim.energy(sim.q(), sim.v());
  PendulumRun run;
  const int steps = static_cast<int>(std::lround(1.0 / h));
  for (int k = 0; k < steps; ++k) {
    sim.step();
    if (!sim.q().allFinite()) {
      run.finite = false;
      break;
    }
    // The joint point's distance from the pivot, from the state itself.
    const Vector3 p_joint = point_W(sim.model(), sim.q(), 1, Vector3(-1, 0, 0));
    run.max_phi = std::max(run.max_phi, p_joint.norm());
    run.max_energy_error = std::max(run.max_energy_error, std::abs(sim.last_step().energy - E0));
  }
  return run;
}

TEST(BilateralConstraintTest, DigestAbsolutePendulumUnderLStable) {
  for (double h : {1e-4, 1e-3, 1e-2}) {
    const PendulumRun run = absolute_pendulum(h);
    std::printf("[ measured ] absolute pendulum, lstable, h = %g: max|φ|/h² = %.4f, max|E − E0| = %.4g J = %.3f·h\n", h,
                run.max_phi / (h * h), run.max_energy_error, run.max_energy_error / h);
    EXPECT_TRUE(run.finite);
    EXPECT_GE(run.max_phi / (h * h), 9.6) << h;
    EXPECT_LE(run.max_phi / (h * h), 9.9) << h;
    EXPECT_LE(run.max_energy_error, 15 * h) << h;
  }
  const PendulumRun coarse = absolute_pendulum(0.1);
  std::printf("[ measured ] absolute pendulum, lstable, h = 0.1: max|φ| = %.4f m\n", coarse.max_phi);
  EXPECT_TRUE(coarse.finite);
  EXPECT_LT(coarse.max_phi, 0.5);
}

// Scenes built in code are checked by the simulator: each fault names the constraint and value.
TEST(BilateralConstraintTest, SimulatorRejectsBadConstraints) {
  const scene::Scene good = io::parse_scene(free_pendulum_yaml(0.5, 1.0), "pendulum.yaml");
  auto message = [&](auto edit) {
    scene::Scene s = good;
    edit(s.constraints[0]);
    try {
      Simulator sim(s, params_for(s, Solver::kSap));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message([](scene::BilateralConstraint&) {}), "(no error)");
  EXPECT_NE(message([](scene::BilateralConstraint& c) { c.body_b = 7; }).find("body index outside 0 … 1"), std::string::npos);
  EXPECT_NE(message([](scene::BilateralConstraint& c) { c.body_a = 1; }).find("body_a and body_b are the same body ('bob')"),
            std::string::npos);
  EXPECT_NE(message([](scene::BilateralConstraint& c) { c.stiffness = 0; }).find("stiffness must be > 0"), std::string::npos);
  EXPECT_NE(message([](scene::BilateralConstraint& c) { c.damping = std::nan(""); }).find("damping must be finite"),
            std::string::npos);
  EXPECT_NE(message([](scene::BilateralConstraint& c) {
              c.type = scene::BilateralType::kDistance;
              c.length = -1;
            }).find("length must be > 0, got -1"),
            std::string::npos);
  EXPECT_NE(message([](scene::BilateralConstraint& c) { c.axis_F = Vector3(0, 0, 2); }).find("axis must be a unit vector"),
            std::string::npos);
  EXPECT_NE(message([](scene::BilateralConstraint& c) { c.name = "hinge"; c.body_a = 1; }).find("constraint 'hinge' (ball)"),
            std::string::npos);
}

}  // namespace
}  // namespace coulomb::simulation
