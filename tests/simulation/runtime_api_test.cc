// The simulator as a library (issue 10): run-time actuation (set_actuation, set_pd_targets,
// gains, external wrenches), the Controller interface with decimation, and the per-step results
// (contacts, wrenches, generalized contact forces, applied actuator forces, limit impulses).
// Every check is against an independent truth: RNEA for gravity torques, the discrete
// θ-method's closed form for constant forces, momentum balance for wrenches, m·g for a robot
// at rest, a second code path (contact wrenches vs Jᵀγ) for the results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/aba.h"
#include "coulomb/multibody/configuration.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/momentum.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

const std::string kShared = COULOMB_SHARED_DIR;

// A controller that applies the gravity torques τ = rnea(q, 0, 0) as feed-forward.
class GravityCompensation : public Controller {
 public:
  explicit GravityCompensation(const multibody::Model& model, std::vector<int> actuator_v_index)
      : model_(model), ws_(model), v_index_(std::move(actuator_v_index)) {}
  void update(const State& state, const StepResults&, Commands& commands) override {
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model_.nv());
    const Eigen::VectorXd& tau = multibody::rnea(model_, ws_, state.q, zero, zero);
    for (size_t i = 0; i < v_index_.size(); ++i) commands.actuation[i] = tau[v_index_[i]];
    ++calls;
  }
  int calls = 0;

 private:
  const multibody::Model& model_;
  multibody::Workspace ws_;
  std::vector<int> v_index_;
};

std::vector<int> actuator_velocities(const scene::Scene& s) {
  std::vector<int> v;
  for (const scene::Actuator& a : s.actuators) v.push_back(a.v_index);
  return v;
}

// Acceptance: the KUKA iiwa (fixed base, bent so that gravity loads every joint) held by
// τ = rnea(q, 0, 0) applied every step drifts ≤ 1e-6 rad in 5 s; without it, it falls.
TEST(RuntimeApiTest, GravityCompensatedArmHoldsStill) {
  const std::string yaml = "time_step: 0.001\ngravity: [0, 0, -9.81]\n"
                           "bodies:\n  - {name: ground, fixed: true, shapes: [{type: box, size: [2, 2, 0.1], position: [0, 0, -0.05]}]}\n"
                           "robots:\n  - urdf: " + kShared + "/models/kuka_iiwa_robot.urdf\n"
                           "    joint_positions: {iiwa_joint_2: 0.6, iiwa_joint_4: -1.2, iiwa_joint_5: 0.4, iiwa_joint_6: 0.9}\n"
                           "    actuators: {all: {kp: 0}}\n";
  for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint}) {
    SimulatorParameters params;
    params.time_step = 1e-3;
    params.integrator = integrator;
    Simulator sim(io::parse_scene(yaml, "kuka_gravity"), params);
    ASSERT_EQ(sim.num_actuators(), 7);
    auto controller = std::make_shared<GravityCompensation>(sim.model(), actuator_velocities(sim.scene()));
    sim.set_controller(controller);
    const Eigen::VectorXd q0 = sim.q();
    for (int k = 0; k < 5000; ++k) sim.step();
    const double drift = (sim.q() - q0).cwiseAbs().maxCoeff();
    std::printf("[ measured ] KUKA under tau = rnea(q, 0, 0), %s: drift %.3e rad in 5 s\n", to_string(integrator), drift);
    EXPECT_LE(drift, 1e-6) << to_string(integrator);
    EXPECT_EQ(controller->calls, 5000);
    // The applied torques reported are the commanded gravity torques (no effort limit in this URDF).
    multibody::Workspace ws(sim.model());
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(sim.model().nv());
    const Eigen::VectorXd g = multibody::rnea(sim.model(), ws, sim.q(), zero, zero);
    EXPECT_LE((sim.last_results().generalized_actuation - g).norm(), 1e-5 * g.norm());
  }
  // Without compensation the same arm moves by more than 0.1 rad: the test can fail.
  SimulatorParameters params;
  params.time_step = 1e-3;
  Simulator limp(io::parse_scene(yaml, "kuka_limp"), params);
  const Eigen::VectorXd q0 = limp.q();
  for (int k = 0; k < 500; ++k) limp.step();
  EXPECT_GT((limp.q() - q0).cwiseAbs().maxCoeff(), 0.1);
}

// Acceptance: the A1 standing under the built-in PD reports foot contact forces summing to m·g
// within 0.1 % at rest, and applied torques equal to the gravity torques RNEA gives for the
// contact forces reported: τ = rnea(q, 0, 0) − Jᵀ f_c on the actuated rows (1e-6 relative).
TEST(RuntimeApiTest, StandingQuadrupedForcesBalanceGravity) {
  scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/a1_stand.yaml");
  SimulatorParameters params;
  params.time_step = scene.time_step;
  params.sap.rel_tolerance = 1e-10;
  Simulator sim(std::move(scene), params);
  const multibody::Model& model = sim.model();
  for (int k = 0; k < 3999; ++k) sim.step();
  const Eigen::VectorXd q0 = sim.q(), v0 = sim.v();
  sim.step();
  const StepResults& r = sim.last_results();
  double mass = 0.0;
  for (int b = 1; b < model.num_bodies(); ++b) mass += model.body(b).inertia.mass;
  const double mg = mass * 9.81;
  math::Vector3 f_sum = math::Vector3::Zero();
  double fz_contacts = 0.0;
  for (int b = 1; b < model.num_bodies(); ++b) f_sum += r.contact_wrenches[b].f;
  for (const ContactResult& c : r.contacts) fz_contacts += (c.body_b > 0 ? 1.0 : -1.0) * c.impulse_W.z() / params.time_step;
  std::printf("[ measured ] A1 at rest: sum of contact forces %.6f N vs m g %.6f N (rel %.2e), |v| %.2e\n", f_sum.z(),
              mg, std::abs(f_sum.z() - mg) / mg, sim.v().norm());
  EXPECT_NEAR(f_sum.z(), mg, 1e-3 * mg);
  EXPECT_NEAR(fz_contacts, f_sum.z(), 1e-9 * mg);  // per-contact and per-body results agree
  EXPECT_LE(std::hypot(f_sum.x(), f_sum.y()), 1e-3 * mg);
  // Every foot carries load.
  int loaded_bodies = 0;
  for (int b = 1; b < model.num_bodies(); ++b) loaded_bodies += r.contact_wrenches[b].f.z() > 0.05 * mg ? 1 : 0;
  EXPECT_EQ(loaded_bodies, 4);
  // τ = rnea(q, 0, 0) − (Jᵀγ/δt) on the actuated rows.
  multibody::Workspace ws(model);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv());
  // τ = rnea − Jᵀf/… on the actuated rows, for the step just taken. Implicit Euler evaluates
  // the forces at the free-motion prediction q* = q₀ ⊕ δt v*, v* = v₀ + δt M⁻¹(q*)(−b(q*, v*))
  // (no contact, no PD: both are SAP constraints), found here by fixed-point iteration with
  // ABA; the robot still sways at |v| ~ 1e-4, so the inertial terms enter at a = (v − v₀)/δt.
  const double dt = params.time_step;
  Eigen::VectorXd v_star = v0, q_star(model.nq());
  for (int it = 0; it < 20; ++it) {
    multibody::integrate(model, q0, v_star, dt, q_star);
    v_star = v0 + dt * multibody::aba(model, ws, q_star, v_star, zero);
  }
  const Eigen::VectorXd a = (sim.v() - v0) / dt;
  const Eigen::VectorXd expected = multibody::rnea(model, ws, q_star, sim.v(), a) - r.generalized_contact_forces;
  // The static reading, τ ≈ g(q) − Jᵀf, holds to the size of those inertial terms.
  const Eigen::VectorXd expected_static = multibody::rnea(model, ws, sim.q(), zero, zero) - r.generalized_contact_forces;
  double err_static = 0.0;
  double err = 0.0, scale = 0.0;
  for (int i = 0; i < sim.num_actuators(); ++i) {
    const int k = sim.scene().actuators[i].v_index;
    err = std::max(err, std::abs(r.actuator_forces[i] - expected[k]));
    err_static = std::max(err_static, std::abs(r.actuator_forces[i] - expected_static[k]));
    scale = std::max(scale, std::abs(expected[k]));
    EXPECT_EQ(r.generalized_actuation[k], r.actuator_forces[i]);
    EXPECT_EQ(r.actuator_saturated[i], 0);
  }
  std::printf("[ measured ] A1 at rest: max |tau_applied - (rnea(q*, v, a) - J^T f)| = %.3e N m, static "
              "|tau_applied - (g(q) - J^T f)| = %.3e N m (scale %.3f N m)\n", err, err_static, scale);
  EXPECT_LE(err, 1e-6 * scale);
  EXPECT_LE(err_static, 1e-5 * scale);
  EXPECT_GT(scale, 1.0);  // the legs do carry gravity torques
}

// A controller at half the simulation rate sees exactly every second step: it is called before
// steps 0, 2, 4, … with the state at that time and the results of the step just before.
TEST(RuntimeApiTest, ControllerDecimationSeesEverySecondStep) {
  class Recorder : public Controller {
   public:
    void update(const State& state, const StepResults& last, Commands&) override {
      times.push_back(state.time);
      last_times.push_back(last.stats.time);
    }
    std::vector<double> times, last_times;
  };
  const std::string yaml = "time_step: 0.002\nbodies:\n  - {name: ball, mass: 1, shapes: [{type: sphere, radius: 0.1}]}\n";
  SimulatorParameters params;
  params.time_step = 0.002;
  Simulator sim(io::parse_scene(yaml, "ball"), params);
  auto recorder = std::make_shared<Recorder>();
  sim.set_controller(recorder, 2);
  for (int k = 0; k < 11; ++k) sim.step();
  ASSERT_EQ(recorder->times.size(), 6u);  // before steps 0, 2, 4, 6, 8, 10
  for (size_t i = 0; i < recorder->times.size(); ++i) {
    EXPECT_NEAR(recorder->times[i], 2.0 * i * 0.002, 1e-15);
    EXPECT_NEAR(recorder->last_times[i], i == 0 ? 0.0 : (2.0 * i) * 0.002, 1e-15);  // the step that ended at state.time
  }
  EXPECT_EQ(sim.step_count(), 11);
  EXPECT_THROW(sim.set_controller(recorder, 0), std::invalid_argument);
}

// A pure-force actuator (kp = kd = 0) on a prismatic slider of mass m without gravity: the
// θ-method under constant force F moves by the closed form of the discrete scheme, and the
// effort limit clamps (and reports saturation).
TEST(RuntimeApiTest, ConstantActuationMatchesTheDiscreteClosedForm) {
  const std::string urdf =
      "<robot name='slider'><link name='base'/><link name='cart'><inertial><mass value='2'/>"
      "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='x' type='prismatic'><parent link='base'/><child link='cart'/><axis xyz='1 0 0'/>"
      "<limit lower='-100' upper='100' effort='5' velocity='100'/></joint></robot>";
  const std::string path = ::testing::TempDir() + "/slider_runtime.urdf";
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(urdf.c_str(), f);
  std::fclose(f);
  const std::string yaml = "gravity: [0, 0, 0]\nrobots:\n  - urdf: " + path + "\n    actuators: {x: {kp: 0}}\n";
  for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint})
    for (double u : {3.0, 8.0, -12.0}) {
      SimulatorParameters params;
      params.time_step = 0.01;
      params.integrator = integrator;
      Simulator sim(io::parse_scene(yaml, "slider"), params);
      sim.set_actuation("x", u);
      const double F = std::clamp(u, -5.0, 5.0), m = 2.0, dt = 0.01;
      const int N = 100;
      for (int k = 0; k < N; ++k) sim.step();
      // v_N = N δt F/m; x_N = δt Σ_k (θ_vq v_k + (1 − θ_vq) v_{k−1}).
      const double thvq = theta_of(integrator).theta_vq;
      const double x = dt * dt * F / m * (thvq * N * (N + 1) / 2.0 + (1.0 - thvq) * N * (N - 1) / 2.0);
      EXPECT_NEAR(sim.v()[0], N * dt * F / m, 1e-12) << u;
      EXPECT_NEAR(sim.q()[0], x, 1e-12) << u;
      EXPECT_NEAR(sim.last_results().actuator_forces[0], F, 1e-15);
      EXPECT_EQ(sim.last_results().actuator_saturated[0], std::abs(u) > 5.0 ? 1 : 0);
    }
  // Bad commands are clear errors.
  SimulatorParameters params;
  Simulator sim(io::parse_scene(yaml, "slider"), params);
  EXPECT_THROW(sim.set_actuation("y", 1.0), std::invalid_argument);
  EXPECT_THROW(sim.set_actuation(1, 1.0), std::invalid_argument);
  EXPECT_THROW(sim.set_actuation(0, std::nan("")), std::invalid_argument);
  EXPECT_THROW(sim.set_actuation(Eigen::VectorXd::Zero(2)), std::invalid_argument);
  EXPECT_THROW(sim.set_pd_gains(0, -1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(sim.set_pd_targets(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Constant(1, INFINITY)), std::invalid_argument);
  try {
    sim.set_actuation("y", 1.0);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("actuated joints: x"), std::string::npos) << e.what();
  }
}

// PD targets and gains set at run time, with feed-forward: a pendulum held horizontal by a PD
// with the gravity torque as feed-forward has no steady-state error, and without the
// feed-forward sags by τ_g / kp (the PD's static deflection).
TEST(RuntimeApiTest, PdTargetsGainsAndFeedForward) {
  const std::string urdf =
      "<robot name='pendulum'><link name='base'/><link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='hinge' type='continuous'><parent link='base'/><child link='arm'/><axis xyz='0 1 0'/></joint></robot>";
  const std::string path = ::testing::TempDir() + "/pendulum_runtime.urdf";
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(urdf.c_str(), f);
  std::fclose(f);
  const std::string yaml = "time_step: 0.001\nrobots:\n  - urdf: " + path + "\n    actuators: {hinge: {kp: 0}}\n";
  SimulatorParameters params;
  params.time_step = 1e-3;
  params.sap.rel_tolerance = 1e-10;
  const double kp = 500.0, kd = 20.0, tau_g = 1.0 * 9.81 * 0.5;  // gravity torque about +y at q = 0: r × F = (0.5, 0, 0) × (0, 0, −m g)
  for (bool feedforward : {false, true}) {
    Simulator sim(io::parse_scene(yaml, "pendulum"), params);
    sim.set_pd_gains(0, kp, kd);
    sim.set_pd_target(0, 0.0);
    if (feedforward) sim.set_actuation(0, -tau_g);
    for (int k = 0; k < 3000; ++k) sim.step();
    // Static balance at small angles: kp (0 − q) + u + τ_g cos q = 0.
    const double q = sim.q()[0];
    const double residual = kp * (0.0 - q) + (feedforward ? -tau_g : 0.0) + tau_g * std::cos(q);
    std::printf("[ measured ] PD pendulum, feed-forward %d: q = %.6e rad, static residual %.2e N m\n", feedforward, q, residual);
    EXPECT_NEAR(residual, 0.0, 2e-6);
    if (feedforward) EXPECT_LE(std::abs(q), 1e-8);
    else EXPECT_GT(std::abs(q), 1e-3);
    EXPECT_NEAR(sim.last_results().actuator_forces[0], -tau_g * std::cos(q), 1e-6);
  }
}

// An external wrench on a free body changes the momenta exactly as the impulse it applies: a
// force F at the body origin and a torque τ, for 1 s without gravity: P = F t, and (body
// moving along F, so p × F = 0) L_W = τ t, for every integrator.
TEST(RuntimeApiTest, ExternalWrenchImpulseBalance) {
  const std::string yaml = "gravity: [0, 0, 0]\nbodies:\n  - name: box\n    mass: 2\n"
                           "    shapes: [{type: box, size: [0.2, 0.4, 0.6]}]\n    linear_velocity: [0.3, 0, 0]\n"
                           "    angular_velocity: [0.5, 2, 0.1]\n";
  for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kSymplecticEuler, Integrator::kMidpoint}) {
    SimulatorParameters params;
    params.time_step = 0.01;
    params.integrator = integrator;
    Simulator sim(io::parse_scene(yaml, "box"), params);
    const multibody::Model& model = sim.model();
    multibody::Workspace ws(model);
    auto momenta = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
      multibody::generalized_momentum(model, ws, q, v);
      // Floating root with v = [ω; v_O] world: p = [L_O; P]; L_W = L_O + p_O × P.
      math::Vector3 P = ws.momentum.segment<3>(3), L_O = ws.momentum.segment<3>(0);
      math::Vector3 p_O = q.head<3>();
      return std::make_pair(P, math::Vector3(L_O + p_O.cross(P)));
    };
    const auto [P0, L0] = momenta(sim.q(), sim.v());
    ExternalWrench w;
    w.body = 1;
    w.f_W = math::Vector3(1.5, 0, 0);
    w.tau_W = math::Vector3(0.2, -0.1, 0.3);
    sim.add_external_wrench(w);
    for (int k = 0; k < 100; ++k) sim.step();
    const auto [P1, L1] = momenta(sim.q(), sim.v());
    EXPECT_LE((P1 - P0 - w.f_W * 1.0).norm(), 1e-10) << to_string(integrator);
    EXPECT_LE((L1 - L0 - w.tau_W * 1.0).norm(), 1e-9) << to_string(integrator);
    sim.clear_external_wrenches();
    EXPECT_THROW(sim.add_external_wrench(ExternalWrench{5, {}, {}, {}}), std::invalid_argument);
  }
  // A force at a point off the origin also turns the body: its moment about the origin
  // r × F enters the angular momentum (one short step from rest, r × F δt).
  SimulatorParameters params;
  params.time_step = 1e-4;
  Simulator sim(io::parse_scene("gravity: [0, 0, 0]\nbodies:\n  - {name: box, mass: 2, shapes: [{type: box, size: [0.2, 0.4, 0.6]}]}\n", "box"),
                params);
  ExternalWrench w;
  w.body = 1;
  w.f_W = math::Vector3(0, 0, 3);
  w.p_BoBq_B = math::Vector3(0.1, 0, 0);
  sim.add_external_wrench(w);
  sim.step();
  multibody::Workspace ws(sim.model());
  multibody::generalized_momentum(sim.model(), ws, sim.q(), sim.v());
  const math::Vector3 expected_L = w.p_BoBq_B.cross(w.f_W) * 1e-4;
  EXPECT_LE((ws.momentum.segment<3>(0) - expected_L).norm(), 1e-6 * expected_L.norm());
}

// Results agree with each other and with statics: a box resting on the ground carries m g in
// its contact wrench; the generalized contact forces of its floating joint (v = [ω; v_O], world)
// are that wrench [τ_O; f]; the contacts are in stiction with no slip to speak of.
TEST(RuntimeApiTest, ContactResultsOfARestingBox) {
  const std::string yaml = "time_step: 0.001\ncontact: {mu: 0.5}\n"
                           "bodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace, normal: [0, 0, 1]}]}\n"
                           "  - {name: box, mass: 3, shapes: [{type: box, size: [0.2, 0.3, 0.1]}], position: [0.4, -0.2, 0.05]}\n";
  SimulatorParameters params;
  params.time_step = 1e-3;
  params.sap.rel_tolerance = 1e-10;
  Simulator sim(io::parse_scene(yaml, "box_rest"), params);
  for (int k = 0; k < 1000; ++k) sim.step();
  const StepResults& r = sim.last_results();
  ASSERT_GE(r.contacts.size(), 4u);
  const math::SpatialForce& w = r.contact_wrenches[1];
  EXPECT_NEAR(w.f.z(), 3 * 9.81, 1e-6 * 3 * 9.81);
  EXPECT_LE(w.tau.norm(), 1e-6);  // the resultant goes through the centre (the body origin)
  EXPECT_LE((r.generalized_contact_forces.segment<3>(0) - w.tau).norm(), 1e-9);
  EXPECT_LE((r.generalized_contact_forces.segment<3>(3) - w.f).norm(), 1e-9);
  EXPECT_EQ(r.contact_wrenches[0].f.norm(), 0.0);  // the world's entry stays zero
  for (const ContactResult& c : r.contacts) {
    EXPECT_EQ(c.body_a, 0);
    EXPECT_EQ(c.body_b, 1);
    EXPECT_EQ(c.region, ContactRegion::kStiction);
    EXPECT_LE(c.slip_speed, 1e-6);
    EXPECT_NEAR(c.impulse_W.dot(c.n_W), c.impulse_normal, 1e-15);
  }
  EXPECT_EQ(std::string(to_string(ContactRegion::kSliding)), "sliding");
}

// A pendulum resting on its lower limit under gravity: the limit impulse per step balances the
// gravity torque, and the joint-limit results are zero on a free joint.
TEST(RuntimeApiTest, JointLimitImpulsesBalanceGravity) {
  const std::string urdf =
      "<robot name='pendulum'><link name='base'/><link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='hinge' type='revolute'><parent link='base'/><child link='arm'/><axis xyz='0 1 0'/>"
      "<limit lower='-0.5' upper='0.5' effort='10' velocity='10'/></joint></robot>";
  const std::string path = ::testing::TempDir() + "/pendulum_limit.urdf";
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(urdf.c_str(), f);
  std::fclose(f);
  SimulatorParameters params;
  params.time_step = 1e-3;
  params.sap.rel_tolerance = 1e-10;
  // Gravity about +y at q pulls the arm (mass at +x) down: positive rotation about y lowers +x.
  Simulator sim(io::parse_scene("robots:\n  - urdf: " + path + "\n", "pendulum"), params);
  for (int k = 0; k < 3000; ++k) sim.step();
  const double q = sim.q()[0];
  std::printf("[ measured ] pendulum on its limit: q = %.9f rad, v = %.3e rad/s, limit impulse / dt = %.9f N m\n", q,
              sim.v()[0], sim.last_results().joint_limit_impulses[0] / params.time_step);
  EXPECT_NEAR(q, 0.5, 1e-3);
  // At rest (v₀ = v = 0) the limit impulse balances gravity where implicit Euler evaluates it:
  // at the free-motion prediction q* = q + δt v*, v* = δt τ_g(q*) / I (I = m l² + i_yy), a fixed
  // point found by iteration. (At q itself the balance is off by δt² τ_g' τ_g / I: 9e-6 here.)
  const double dt = params.time_step, inertia = 1.0 * 0.5 * 0.5 + 0.01;
  auto tau_g = [](double x) { return 1.0 * 9.81 * 0.5 * std::cos(x); };
  double q_star = q;
  for (int it = 0; it < 50; ++it) q_star = q + dt * dt * tau_g(q_star) / inertia;
  const double limit_force = sim.last_results().joint_limit_impulses[0] / dt;
  std::printf("[ measured ] limit force %.9f N m vs -tau_g(q*) %.9f N m (rel %.1e), -tau_g(q) %.9f N m\n", limit_force,
              -tau_g(q_star), std::abs(limit_force + tau_g(q_star)) / tau_g(q_star), -tau_g(q));
  EXPECT_NEAR(limit_force, -tau_g(q_star), 1e-9 * tau_g(q_star));
  EXPECT_GT(std::abs(limit_force + tau_g(q)), 1e-6);  // the prediction matters at this precision
  EXPECT_EQ(sim.last_results().joint_limit_impulses.size(), 1);
}

}  // namespace
}  // namespace coulomb::simulation
