// The trot planner (include/coulomb/control/trot_planner.h) on the Unitree A1
// (../shared/models/a1.urdf): the paper's gait schedule, swing splines, leg IK against forward
// kinematics, the joint reference against finite differences of itself, standing still, stance
// feet fixed in the world and swing apexes when the base follows the command, and the paper's
// waypoints visited in order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "coulomb/control/trot_planner.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/scene/scene.h"

namespace coulomb::control {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string a1_scene_yaml(bool floating) {
  return "time_step: 0.001\nduration: 1\n"
         "bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
         "robots:\n  - urdf: " +
         std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf\n    floating: " + (floating ? "true" : "false") +
         "\n    position: [0, 0, 0.35]\n" + (floating ? "    place_on_ground: true\n" : "") +
         "    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: 0.8, RL_thigh_joint: 0.8,"
         " FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: -1.5, RL_calf_joint: -1.5}\n";
}

/// The A1 standing on flat ground (z = 0), feet touching (examples/scenes/a1_id.yaml's pose).
const scene::Scene& a1() {
  static const scene::Scene s = io::parse_scene(a1_scene_yaml(true), "<trot planner a1>");
  return s;
}

const char* kA1Legs[4] = {"FL", "FR", "RL", "RR"};  // LF, RF, LH, RH

/// World position of a frame's origin at q.
Eigen::Vector3d frame_position(const multibody::Model& model, const Eigen::VectorXd& q, const std::string& frame) {
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  const multibody::Frame& F = model.frame(model.frame_index(frame));
  return ws.X_WB[F.body].act(F.X_BF.p);
}

int base_q_index(const multibody::Model& model) {
  return model.bodies()[model.body_index("base")].joint.q_index;
}

/// q with the base at (p, yaw) (roll = pitch = 0) and the leg joints at ref.q (actuated order).
Eigen::VectorXd configuration(const multibody::Model& model, const TrotPlanner& planner, const Eigen::VectorXd& q0,
                              const Eigen::Vector3d& p, double yaw, const Eigen::VectorXd& joints) {
  Eigen::VectorXd q = q0;
  const int b = base_q_index(model);
  const Eigen::Quaterniond quat(Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ()));
  q.segment<7>(b) << p, quat.w(), quat.x(), quat.y(), quat.z();
  for (size_t k = 0; k < planner.actuated().size(); ++k) {
    const int v = planner.actuated()[k];
    for (const multibody::Body& body : model.bodies())
      if (body.joint.nv == 1 && body.joint.v_index == v) q[body.joint.q_index] = joints[static_cast<int>(k)];
  }
  return q;
}

/// The base following the command of `ref` exactly for dt: the body-frame twist (R(yaw)ᵀ v_WB,
/// yaw_rate) held constant, i.e. an arc of the plane (closed form).
void follow(const JointReference& ref, double dt, Eigen::Vector2d& xy, double& yaw) {
  const Eigen::Rotation2Dd R(ref.yaw);
  const Eigen::Vector2d v = R.inverse() * ref.v_WB.head<2>();
  const double w = ref.yaw_rate, th = w * dt;
  Eigen::Vector2d d = v * dt;
  if (std::abs(th) > 1e-12) {
    const double a = std::sin(th) / th, b = (1.0 - std::cos(th)) / th;
    d = dt * Eigen::Vector2d(a * v.x() - b * v.y(), b * v.x() + a * v.y());
  }
  xy = ref.p_WB.head<2>() + (R * d);
  yaw = ref.yaw + th;
}

/// A simulated state with the base at (xy, z, yaw), moving with the reference's command, and
/// the joints at the reference.
simulation::State kinematic_state(const multibody::Model& model, const TrotPlanner& planner, const Eigen::VectorXd& q0,
                                  double t, const Eigen::Vector2d& xy, double z, double yaw, const JointReference& ref) {
  simulation::State s;
  s.time = t;
  s.q = configuration(model, planner, q0, Eigen::Vector3d(xy.x(), xy.y(), z), yaw,
                      ref.q.size() == 12 ? ref.q : Eigen::VectorXd(q0.tail(12)));
  s.v = Eigen::VectorXd::Zero(model.nv());
  if (ref.q.size() == 12) {
    const int vb = model.bodies()[model.body_index("base")].joint.v_index;
    s.v.segment<3>(vb) << 0.0, 0.0, ref.yaw_rate;
    s.v.segment<3>(vb + 3) = ref.v_WB;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------

TEST(GaitSchedule, PaperTrotStanceSets) {
  const GaitSchedule g{GaitParameters{}};
  EXPECT_DOUBLE_EQ(g.stance_duration(), 0.225);
  EXPECT_DOUBLE_EQ(g.swing_duration(), 0.075);
  for (int k = 0; k < 400; ++k) {
    const double phase = (k + 0.5) / 400.0;
    for (int cycle : {0, 3}) {
      const double t = (cycle + phase) * 0.3;
      ASSERT_NEAR(g.phase(t), phase, 1e-12);
      int stance = 0;
      for (int leg = 0; leg < 4; ++leg) stance += g.in_stance(leg, t);
      // LF & RH swing in [0, 0.25), RF & LH in [0.5, 0.75), all four stand otherwise.
      const bool a_swing = phase < 0.25, b_swing = phase >= 0.5 && phase < 0.75;
      EXPECT_EQ(g.in_stance(0, t), !a_swing) << phase;
      EXPECT_EQ(g.in_stance(3, t), !a_swing) << phase;
      EXPECT_EQ(g.in_stance(1, t), !b_swing) << phase;
      EXPECT_EQ(g.in_stance(2, t), !b_swing) << phase;
      EXPECT_EQ(stance, (a_swing || b_swing) ? 2 : 4) << phase;
    }
  }
  // Progress and time left: at phase 0.1 LF is 40 % through its swing (0.045 s left) and RF
  // 0.35 / 0.75 through its stance (0.12 s left).
  const double t = 0.03;
  EXPECT_NEAR(g.progress(0, t), 0.4, 1e-12);
  EXPECT_NEAR(g.time_left(0, t), 0.045, 1e-12);
  EXPECT_NEAR(g.progress(1, t), 0.35 / 0.75, 1e-12);
  EXPECT_NEAR(g.time_left(1, t), 0.12, 1e-12);
  // Negative times wrap.
  EXPECT_NEAR(g.phase(-0.03), 0.9, 1e-12);
}

TEST(GaitSchedule, DiagonalPairsSwingInTurn) {
  // The paper's touchdown phases pair the diagonals (LF with RH, RF with LH): each pair swings a
  // quarter of the cycle, half a cycle after the other, so the pairs never swing together.
  const GaitSchedule g{GaitParameters{}};
  double swing_time = 0.0;
  const int n = 3000;
  for (int k = 0; k < n; ++k) {
    const double t = (k + 0.5) * 0.3 / n;
    const bool a = !g.in_stance(0, t), b = !g.in_stance(1, t);
    EXPECT_FALSE(a && b);
    EXPECT_EQ(g.in_stance(0, t), g.in_stance(3, t));
    EXPECT_EQ(g.in_stance(1, t), g.in_stance(2, t));
    swing_time += a ? 0.3 / n : 0.0;
  }
  EXPECT_NEAR(swing_time, 0.075, 1e-9);
}

TEST(GaitSchedule, InvalidParametersThrow) {
  auto throws_naming = [](GaitParameters p, const std::string& field) {
    try {
      GaitSchedule g(p);
      ADD_FAILURE() << "no throw for " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  for (double c : {0.0, -0.3, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    GaitParameters p;
    p.cycle = c;
    throws_naming(p, "cycle");
  }
  for (double d : {0.0, 1.0, -0.5, 1.5}) {
    GaitParameters p;
    p.duty_factor = d;
    throws_naming(p, "duty_factor");
  }
  for (double td : {-0.1, 1.0, 2.0}) {
    GaitParameters p;
    p.touchdown[2] = td;
    throws_naming(p, "touchdown[2]");
  }
  GaitParameters p;
  p.step_height = -0.01;
  throws_naming(p, "step_height");
  EXPECT_NO_THROW(GaitSchedule(GaitParameters{}));
}

TEST(SwingSpline, EndpointsApexAndDerivatives) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    SwingSpline s;
    s.p0 = Eigen::Vector3d(0.2 * u(rng), 0.2 * u(rng), 0.05 * u(rng));
    s.p1 = Eigen::Vector3d(0.2 * u(rng), 0.2 * u(rng), 0.05 * u(rng));
    s.v0 = Eigen::Vector3d(u(rng), u(rng), trial % 2 ? 0.0 : 0.1 * u(rng));
    s.v1 = Eigen::Vector3d(u(rng), u(rng), 0.0);
    s.duration = 0.05 + 0.05 * (u(rng) + 1.0);
    s.height = 0.03;
    const double T = s.duration;
    Eigen::Vector3d p, v, a;
    s.evaluate(0.0, p, v, a);
    EXPECT_LT((p - s.p0).norm(), 1e-14);
    EXPECT_LT((v - s.v0).norm(), 1e-12);
    s.evaluate(T, p, v, a);
    EXPECT_LT((p - s.p1).norm(), 1e-14);
    EXPECT_LT((v - s.v1).norm(), 1e-12);
    // Apex: max(z0, z1) + height at mid-swing with zero vertical velocity; nothing higher.
    const double apex = std::max(s.p0.z(), s.p1.z()) + s.height;
    s.evaluate(0.5 * T, p, v, a);
    EXPECT_NEAR(p.z(), apex, 1e-14);
    EXPECT_NEAR(v.z(), 0.0, 1e-12);
    // Clamped outside [0, T].
    s.evaluate(-1.0, p, v, a);
    EXPECT_LT((p - s.p0).norm(), 1e-14);
    s.evaluate(T + 1.0, p, v, a);
    EXPECT_LT((p - s.p1).norm(), 1e-14);
    // Velocity and acceleration against central differences.
    const double h = 1e-6;
    for (int k = 1; k < 50; ++k) {
      const double t = T * k / 50.0;
      if (std::abs(t - 0.5 * T) < 2 * h) continue;  // the acceleration jumps at the apex (C¹ there)
      Eigen::Vector3d pp, vp, ap, pm, vm, am;
      s.evaluate(t, p, v, a);
      s.evaluate(t + h, pp, vp, ap);
      s.evaluate(t - h, pm, vm, am);
      EXPECT_LT(((pp - pm) / (2 * h) - v).norm(), 1e-6) << t;
      EXPECT_LT(((vp - vm) / (2 * h) - a).norm(), 1e-6 * std::max(1.0, a.norm())) << t;
      EXPECT_LE(p.z(), apex + 1e-12);
    }
  }
}

// ---------------------------------------------------------------------------------------------

TEST(TrotPlanner, ActuatedFeetAndNames) {
  const scene::Scene& s = a1();
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0);
  ASSERT_EQ(planner.actuated().size(), 12u);
  ASSERT_EQ(planner.feet().size(), 4u);
  std::vector<int> expected;
  for (const char* leg : kA1Legs)
    for (const char* j : {"_hip_joint", "_thigh_joint", "_calf_joint"})
      expected.push_back(s.model.bodies()[s.model.joint_body(std::string(leg) + j)].joint.v_index);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(planner.actuated(), expected);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(planner.feet()[i], s.model.frame_index(std::string(kA1Legs[i]) + "_foot"));
  const auto legs = TrotPlanner::a1_legs("dog/");
  EXPECT_EQ(legs[2].name, "LH");
  EXPECT_EQ(legs[2].joints[1], "dog/RL_thigh_joint");
  EXPECT_EQ(legs[3].foot_frame, "dog/RR_foot");
  EXPECT_DOUBLE_EQ(legs[0].foot_radius, 0.02);
}

TEST(TrotPlanner, InvalidDescriptionsThrow) {
  const scene::Scene& s = a1();
  auto throws_naming = [&](std::vector<LegDescription> legs, const std::string& what, const multibody::Model& model,
                           const Eigen::VectorXd& q0) {
    try {
      TrotPlanner planner(model, legs, q0);
      ADD_FAILURE() << "no throw for " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto legs = TrotPlanner::a1_legs();
  legs[1].joints[2] = "FR_knee_joint";
  throws_naming(legs, "FR_knee_joint", s.model, s.q0);
  legs = TrotPlanner::a1_legs();
  legs[3].foot_frame = "RR_toe";
  throws_naming(legs, "RR_toe", s.model, s.q0);
  throws_naming(TrotPlanner::a1_legs("dog/"), "dog/FL_foot", s.model, s.q0);
  const scene::Scene welded = io::parse_scene(a1_scene_yaml(false), "<welded a1>");
  throws_naming(TrotPlanner::a1_legs(), "floating", welded.model, welded.q0);
  TrotPlannerParameters p;
  p.gait.duty_factor = 1.0;
  EXPECT_THROW(TrotPlanner(s.model, TrotPlanner::a1_legs(), s.q0, p), std::invalid_argument);
}

TEST(TrotPlannerIk, RoundTripAgainstForwardKinematics) {
  const scene::Scene& s = a1();
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::Vector3d stance(0.0, 0.8, -1.5);
  for (int trial = 0; trial < 40; ++trial) {
    const int leg = trial % 4;
    // A reachable point: forward kinematics of random angles around the stance (within limits),
    // with the base at the identity.
    const Eigen::Vector3d angles = stance + Eigen::Vector3d(0.5 * u(rng), 0.5 * u(rng), 0.5 * u(rng));
    Eigen::VectorXd q = s.q0;
    const std::string prefix = kA1Legs[leg];
    const std::string names[3] = {prefix + "_hip_joint", prefix + "_thigh_joint", prefix + "_calf_joint"};
    q.segment<7>(base_q_index(s.model)) << 0, 0, 0, 1, 0, 0, 0;
    for (int c = 0; c < 3; ++c) q[s.model.bodies()[s.model.joint_body(names[c])].joint.q_index] = angles[c];
    const Eigen::Vector3d target = frame_position(s.model, q, prefix + "_foot");
    Eigen::Vector3d solution = stance;
    const double residual = planner.solve_leg_ik(leg, target, solution);
    EXPECT_LT(residual, 1e-9) << trial;
    for (int c = 0; c < 3; ++c) q[s.model.bodies()[s.model.joint_body(names[c])].joint.q_index] = solution[c];
    EXPECT_LT((frame_position(s.model, q, prefix + "_foot") - target).norm(), 1e-9) << trial;
  }
}

TEST(TrotPlannerIk, UnreachablePointGivesPositiveResidual) {
  const scene::Scene& s = a1();
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0);
  for (const Eigen::Vector3d& target :
       {Eigen::Vector3d(0.2, 0.13, -1.0), Eigen::Vector3d(0.18, 0.6, 0.3), Eigen::Vector3d(2.0, -3.0, 1.0)}) {
    Eigen::Vector3d angles(0.0, 0.8, -1.5);
    const double residual = planner.solve_leg_ik(0, target, angles);
    EXPECT_GT(residual, 0.01);
    EXPECT_TRUE(std::isfinite(residual));
    EXPECT_TRUE(angles.allFinite());
  }
}

TEST(TrotPlanner, StandsStillAtZeroSpeed) {
  const scene::Scene& s = a1();
  TrotPlannerParameters p;
  p.waypoints.waypoints.clear();
  p.waypoints.speed = 0.0;
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0, p);
  simulation::State state{0.0, s.q0, s.v0};
  simulation::StepResults last;
  JointReference ref;
  Eigen::VectorXd q0_joints(12);
  for (int k = 0; k < 12; ++k) {
    const int v = planner.actuated()[k];
    for (const multibody::Body& b : s.model.bodies())
      if (b.joint.nv == 1 && b.joint.v_index == v) q0_joints[k] = s.q0[b.joint.q_index];
  }
  const double z0 = s.q0[base_q_index(s.model) + 2];
  for (int k = 0; k <= 1000; ++k) {
    state.time = 2e-3 * k;
    planner.update(state, last, ref);
    ASSERT_LT((ref.q - q0_joints).cwiseAbs().maxCoeff(), 1e-9) << state.time;
    ASSERT_LT(ref.v.cwiseAbs().maxCoeff(), 1e-9);
    ASSERT_LT(ref.vdot.cwiseAbs().maxCoeff(), 1e-9);
    for (int leg = 0; leg < 4; ++leg) ASSERT_EQ(ref.stance[leg], 1);
    ASSERT_TRUE(ref.has_base);
    ASSERT_NEAR(ref.p_WB.z(), z0, 1e-12);
    ASSERT_EQ(ref.v_WB.norm(), 0.0);
    ASSERT_EQ(ref.yaw_rate, 0.0);
  }
}

TEST(TrotPlanner, VelocityAndAccelerationMatchFiniteDifferences) {
  const scene::Scene& s = a1();
  TrotPlannerParameters p;
  p.waypoints.waypoints.clear();
  p.waypoints.speed = 0.3;
  p.ik_tolerance = 1e-13;
  p.max_acceleration = 3.0;
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0, p);
  const GaitSchedule& g = planner.schedule();
  // A fixed state: the base never moves, so the command ramps to 0.3 m/s in 0.1 s and stays there.
  const simulation::State fixed{0.0, s.q0, Eigen::VectorXd::Zero(s.model.nv())};
  simulation::StepResults last;
  const double dt = 1e-4;  // central differences: truncation errors ≈ 1e-4 relative near touchdown
  const int n = 6600;      // 0.66 s
  std::vector<Eigen::VectorXd> q(n), v(n), a(n);
  std::vector<std::vector<int>> stance(n);
  JointReference ref;
  for (int k = 0; k < n; ++k) {
    simulation::State state = fixed;
    state.time = k * dt;
    planner.update(state, last, ref);
    q[k] = ref.q;
    v[k] = ref.v;
    a[k] = ref.vdot;
    stance[k] = ref.stance;
    if (state.time < p.start_delay) {  // standing still before the start
      for (int leg = 0; leg < 4; ++leg) ASSERT_EQ(ref.stance[leg], 1);
      ASSERT_EQ(ref.v_WB.norm(), 0.0);
    }
  }
  EXPECT_NEAR(ref.v_WB.x(), 0.3, 1e-12);
  int checked = 0;
  double worst_v = 0.0, worst_a = 0.0;
  for (int k = static_cast<int>(0.35 / dt); k < n - 2; ++k) {  // after the command's ramp: one cycle
    bool skip = false;
    for (int j = k - 2; j <= k + 2; ++j) skip = skip || stance[j] != stance[k];
    const double tg = k * dt - p.start_delay;
    for (int leg = 0; leg < 4; ++leg)  // the apex, where the swing's vertical acceleration jumps
      if (!stance[k][leg] && std::abs(g.progress(leg, tg) - 0.5) * g.swing_duration() < 4 * dt) skip = true;
    if (skip) continue;
    ++checked;
    const Eigen::VectorXd fd_v = (q[k + 1] - q[k - 1]) / (2 * dt);
    const Eigen::VectorXd fd_a = (v[k + 1] - v[k - 1]) / (2 * dt);
    const double ev = (fd_v - v[k]).cwiseAbs().maxCoeff() / v[k].cwiseAbs().maxCoeff();
    const double ea = (fd_a - a[k]).cwiseAbs().maxCoeff() / a[k].cwiseAbs().maxCoeff();
    worst_v = std::max(worst_v, ev);
    worst_a = std::max(worst_a, ea);
    EXPECT_LT(ev, 1e-3) << "t = " << k * dt;
    EXPECT_LT(ea, 1e-3) << "t = " << k * dt;
  }
  EXPECT_GT(checked, 1000);
  RecordProperty("worst_velocity_error", std::to_string(worst_v));
  RecordProperty("worst_acceleration_error", std::to_string(worst_a));
  std::printf("relative errors against finite differences: velocity %.2e, acceleration %.2e (%d samples)\n", worst_v,
              worst_a, checked);
}

/// Runs the planner with a base that follows its command exactly (kinematically) and calls
/// `check(t, ref, q)` after every update with q the configuration the reference describes (base
/// at the desired pose, joints at ref.q).
template <class Check>
void run_kinematic(TrotPlanner& planner, const scene::Scene& s, double dt, int steps, Check&& check) {
  simulation::StepResults last;
  JointReference ref;
  Eigen::Vector2d xy = s.q0.segment<2>(base_q_index(s.model));
  double yaw = 0.0, z = s.q0[base_q_index(s.model) + 2];
  for (int k = 0; k < steps; ++k) {
    const double t = k * dt;
    const simulation::State state = kinematic_state(s.model, planner, s.q0, t, xy, z, yaw, ref);
    planner.update(state, last, ref);
    const Eigen::VectorXd q = configuration(s.model, planner, s.q0, ref.p_WB, ref.yaw, ref.q);
    if (!check(t, ref, q)) return;
    follow(ref, dt, xy, yaw);
    z = ref.p_WB.z();
  }
}

TEST(TrotPlanner, StanceFeetStayFixedInTheWorldWhenTheBaseFollows) {
  const scene::Scene& s = a1();
  TrotPlannerParameters p;
  p.waypoints = WaypointParameters::paper(2.0, 0.3);  // walking, turning in place and while walking
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0, p);
  std::array<Eigen::Vector3d, 4> anchor;
  std::array<bool, 4> anchored{};
  double worst = 0.0, max_yaw_rate = 0.0, max_speed = 0.0;
  int stances = 0;
  run_kinematic(planner, s, 2e-3, 3000, [&](double, const JointReference& ref, const Eigen::VectorXd& q) {
    EXPECT_LT(planner.ik_residual(), 1e-9);
    max_yaw_rate = std::max(max_yaw_rate, std::abs(ref.yaw_rate));
    max_speed = std::max(max_speed, ref.v_WB.norm());
    for (int leg = 0; leg < 4; ++leg) {
      const Eigen::Vector3d foot = frame_position(s.model, q, std::string(kA1Legs[leg]) + "_foot");
      if (!ref.stance[leg]) {
        anchored[leg] = false;
        continue;
      }
      EXPECT_NEAR(foot.z(), 0.02, 1e-9);  // the foot sphere touches the ground
      if (anchored[leg]) {
        worst = std::max(worst, (foot - anchor[leg]).norm());
      } else {
        anchor[leg] = foot;  // touchdown (or the start)
        anchored[leg] = true;
        ++stances;
      }
    }
    return true;
  });
  EXPECT_LT(worst, 1e-6);
  std::printf("stance feet moved at most %.2e m in the world over %d stances\n", worst, stances);
  EXPECT_GT(stances, 60);
  EXPECT_GT(max_yaw_rate, 0.9);  // it turned
  EXPECT_GT(max_speed, 0.29);    // and walked
}

TEST(TrotPlanner, SwingFootReachesStepHeightAtMidSwing) {
  const scene::Scene& s = a1();
  for (double slope : {0.0, 0.08}) {
    TrotPlannerParameters p;
    p.waypoints.waypoints.clear();
    p.waypoints.speed = 0.3;
    if (slope != 0.0) p.terrain_height = [slope](double x, double y) { return slope * x + 0.5 * slope * y; };
    auto ground = [&](const Eigen::Vector3d& f) { return slope * f.x() + 0.5 * slope * f.y(); };
    TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0, p);
    const GaitSchedule& g = planner.schedule();
    const double dt = 1e-3;
    std::array<int, 4> previous{1, 1, 1, 1};
    std::array<double, 4> lift{}, apex{};
    std::array<bool, 4> apex_seen{};
    int apexes = 0, touchdowns = 0;
    run_kinematic(planner, s, dt, 1500, [&](double t, const JointReference& ref, const Eigen::VectorXd& q) {
      for (int leg = 0; leg < 4; ++leg) {
        const Eigen::Vector3d foot = frame_position(s.model, q, std::string(kA1Legs[leg]) + "_foot");
        if (!ref.stance[leg] && previous[leg]) lift[leg] = foot.z();
        if (ref.stance[leg] && !previous[leg] && t > 0.6) {  // touchdown after the command's ramp
          EXPECT_NEAR(foot.z(), ground(foot) + 0.02, 1e-6) << "leg " << leg << " t " << t;
          ++touchdowns;
          // The apex: max(liftoff, touchdown height) + step height, at the sample nearest
          // mid-swing (at most dt/2 away, where z is stationary: ½ |z̈| (dt/2)² ≈ 2e-5 m lower).
          if (apex_seen[leg]) {
            EXPECT_NEAR(apex[leg], std::max(lift[leg], foot.z()) + p.gait.step_height, 5e-5) << "leg " << leg;
            ++apexes;
          }
          apex_seen[leg] = false;
        }
        if (!ref.stance[leg]) {
          const double tg = t - p.start_delay;
          // The sample nearest mid-swing: at most dt/2 from the apex, where the height is
          // stationary (≈ ½ |z̈| (dt/2)² ≈ 2e-5 m below it).
          if (std::abs(g.progress(leg, tg) - 0.5) * g.swing_duration() <= 0.5 * dt + 1e-9 && t > 0.5) {
            apex[leg] = foot.z();
            apex_seen[leg] = true;
            // On flat ground: step_height above the ground (the sphere's bottom).
            if (slope == 0.0) {
              EXPECT_NEAR(foot.z() - 0.02, p.gait.step_height, 5e-5) << "leg " << leg;
            }
          }
        }
        previous[leg] = ref.stance[leg];
      }
      return true;
    });
    EXPECT_GT(apexes, 10) << slope;
    EXPECT_GT(touchdowns, 10) << slope;
  }
}

TEST(TrotPlanner, VisitsThePaperWaypointsInOrder) {
  const scene::Scene& s = a1();
  TrotPlannerParameters p;
  p.waypoints = WaypointParameters::paper(2.0, 0.3);
  ASSERT_EQ(p.waypoints.waypoints.size(), 5u);
  EXPECT_EQ(p.waypoints.waypoints[3], Eigen::Vector2d(0.0, -0.5));
  TrotPlanner planner(s.model, TrotPlanner::a1_legs(), s.q0, p);
  std::vector<int> visited;
  int current = 0;
  double t_end = 0.0;
  run_kinematic(planner, s, 5e-3, 8000, [&](double t, const JointReference& ref, const Eigen::VectorXd&) {
    if (planner.current_waypoint() != current) {
      // Reached `current` within the tolerance.
      EXPECT_LT((ref.p_WB.head<2>() - p.waypoints.waypoints[current]).norm(), p.waypoints.tolerance) << t;
      visited.push_back(current);
      current = planner.current_waypoint();
    }
    t_end = t;
    return visited.size() < 7;
  });
  const std::vector<int> expected{0, 1, 2, 3, 4, 0, 1};
  EXPECT_EQ(visited, expected) << "after " << t_end << " s";
  std::printf("visited the waypoints 0 1 2 3 4 0 1 by t = %.2f s\n", t_end);
}

}  // namespace
}  // namespace coulomb::control
