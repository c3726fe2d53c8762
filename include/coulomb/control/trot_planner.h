// Trot planner for a quadruped with 3-DOF legs and point (sphere) feet: the gait schedule,
// swing-foot splines, stance feet driven by the desired base velocity, inverse kinematics every
// control step and waypoint following. The locomotion reference of Zapolsky & Drumwright §7.2
// and §7.6 (digest ../shared/digests/inverse-dynamics.md §8.2), scaled to the robot's legs.
//
// Conventions:
//  - Legs in the order LF, RF, LH, RH (left front, right front, left hind, right hind).
//  - Phase ∈ [0, 1) of the gait cycle: phase(t) = fmod(t / cycle, 1). Leg i touches down at
//    phase touchdown[i] and stays in stance for duty_factor of the cycle; it swings for the
//    rest (liftoff at touchdown[i] + duty_factor, mod 1).
//  - Foot positions are planned in the *heading frame* H: origin at the base's desired position,
//    z up (world vertical), x along the desired heading (yaw). Inverse kinematics places the
//    foot-frame origins of the robot at these points with the base at its desired height and
//    roll = pitch = 0, so the joint reference does not depend on where the base actually drifted.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/control/reference.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::control {

/// The gait schedule (the paper's trot: cycle 0.3 s, duty factor 75 %, touchdown phases
/// {0.25, 0.75, 0.75, 0.25} for {LF, RF, LH, RH}).
struct GaitParameters {
  double cycle = 0.3;          ///< gait period [s] > 0
  double duty_factor = 0.75;   ///< fraction of the cycle in stance, (0, 1)
  std::array<double, 4> touchdown{0.25, 0.75, 0.75, 0.25};  ///< touchdown phase per leg, [0, 1)
  double step_height = 0.03;   ///< apex of the swing above the touchdown height [m] (paper 1.5 cm on a 16 cm robot; the A1's legs are twice as long)
};

/// Phase bookkeeping of GaitParameters.
class GaitSchedule {
 public:
  /// Throws std::invalid_argument naming the field and value for cycle ≤ 0, a duty factor
  /// outside (0, 1) or a touchdown phase outside [0, 1).
  explicit GaitSchedule(GaitParameters parameters);
  const GaitParameters& parameters() const { return p_; }
  double phase(double t) const;                ///< ∈ [0, 1)
  bool in_stance(int leg, double t) const;
  /// Progress through the current stance or swing ∈ [0, 1).
  double progress(int leg, double t) const;
  double stance_duration() const { return p_.duty_factor * p_.cycle; }       ///< [s]
  double swing_duration() const { return (1.0 - p_.duty_factor) * p_.cycle; }  ///< [s]
  /// Time left in the current stance or swing [s].
  double time_left(int leg, double t) const;

 private:
  GaitParameters p_;
};

/// A swing trajectory in the heading frame: from the liftoff point p0 with velocity v0 to the
/// touchdown point p1 with velocity v1 in time T; x and y as cubic Hermite polynomials, z rising
/// from p0.z (vertical velocity v0.z) to max(p0.z, p1.z) + height at mid-swing, with zero
/// vertical velocity there, and landing at p1.z with vertical velocity v1.z (two cubic segments,
/// C¹ at the apex; the planner lands with v1.z = 0). The planner's splines have x, y in the
/// heading frame and z in the world (the foot height above the world origin).
struct SwingSpline {
  Eigen::Vector3d p0 = Eigen::Vector3d::Zero(), v0 = Eigen::Vector3d::Zero();
  Eigen::Vector3d p1 = Eigen::Vector3d::Zero(), v1 = Eigen::Vector3d::Zero();
  double duration = 0.075;  ///< T [s] > 0
  double height = 0.03;     ///< [m] ≥ 0
  /// Position, velocity and acceleration at s ∈ [0, T] (clamped) [m, m/s, m/s²].
  void evaluate(double s, Eigen::Vector3d& p, Eigen::Vector3d& v, Eigen::Vector3d& a) const;
};

/// The planar waypoints the base trots through (the paper's {(0,0), (0.25,0), (0,0.25),
/// (0,−0.25), (−0.25,0)} scaled by `scale`), followed by turning toward the next waypoint and
/// walking to it at `speed`, with the heading rate and speed limited. While walking the yaw rate
/// is 2 max_yaw_rate / turn_in_place times the heading error, limited to ±max_yaw_rate.
struct WaypointParameters {
  std::vector<Eigen::Vector2d> waypoints;  ///< world x, y [m]; empty = walk straight at `speed`
  double speed = 0.3;            ///< commanded forward speed [m/s]
  double max_yaw_rate = 1.0;     ///< [rad/s]
  double tolerance = 0.05;       ///< a waypoint is reached within this distance [m]
  double turn_in_place = 0.8;    ///< heading error above which the base turns without advancing [rad]
  bool loop = true;              ///< after the last waypoint start again from the first
  /// The paper's five waypoints times `scale` (the A1 is about twice the paper's robot: scale 2).
  static WaypointParameters paper(double scale, double speed);
};

struct TrotPlannerParameters {
  GaitParameters gait;
  WaypointParameters waypoints;
  /// Desired base height above the terrain under it (the mean terrain height under the nominal
  /// feet) [m]; ≤ 0: the initial height of the base.
  double base_height = 0.0;
  /// Nominal foot positions in the base frame (x, y) come from the initial configuration; the
  /// Raibert touchdown point is the nominal one moved by v_des · stance_duration / 2 (on the arc
  /// of the commanded yaw rate, so that the foot passes the nominal point at mid-stance) plus
  /// raibert_gain · (v − v_des) [s], v the actual base velocity (the correction is limited to a
  /// quarter of the nominal leg height).
  double raibert_gain = 0.03;
  /// Acceleration limit of the commanded base velocity [m/s²] (starting and stopping smoothly).
  /// The yaw rate is limited to the same acceleration at the farthest nominal foot.
  double max_acceleration = 1.0;
  /// Seconds of standing still (all feet in stance) before the first step: the gait runs on
  /// t − start_delay (state.time). The legs step only while the command or its target is non-zero
  /// (a robot told to stand keeps all feet down; a swing under way is finished).
  double start_delay = 0.2;
  /// Damped least squares λ of the leg IK [m], its iterations and tolerance on the foot position [m].
  double ik_damping = 1e-4;
  int ik_iterations = 20;
  double ik_tolerance = 1e-9;
  /// Terrain height z(x, y) under a point [m] (world); default flat at the initial foot height.
  std::function<double(double, double)> terrain_height;
};

/// The trot planner (a ReferenceGenerator). Leg i is described by its three joints (hip
/// abduction, hip flexion, knee, as model joint names) and its foot frame; foot_radius is the
/// distance from the foot frame origin to the ground at touchdown.
struct LegDescription {
  std::string name;                 ///< "LF", "RF", "LH", "RH"
  std::array<std::string, 3> joints;
  std::string foot_frame;
  double foot_radius = 0.0;         ///< [m]
};

/// The trot planner. Every update re-anchors the desired base (H's origin and heading) to the
/// actual base's x, y and yaw, at the desired height, so drift does not accumulate; the
/// reference's v_WB and yaw_rate are the command for the coming step, which is constant in H over
/// the step (the base moves on an arc). Stance feet move in H by the inverse of that motion, swing
/// feet along their splines, so the joint reference does not depend on how the base actually moved.
class TrotPlanner final : public ReferenceGenerator {
 public:
  /// `model` (floating base, must outlive the planner) and the initial configuration q0 (n_q)
  /// from which the nominal stance and base height are taken. Throws std::invalid_argument naming
  /// the joint or frame if a leg's joint or frame is not in the model, or if the base is not
  /// floating.
  TrotPlanner(const multibody::Model& model, std::vector<LegDescription> legs, const Eigen::VectorXd& q0,
              TrotPlannerParameters parameters = {});

  /// The Unitree A1 (../shared/models/a1.urdf: FL_/FR_/RL_/RR_ hip, thigh, calf joints, *_foot
  /// frames, 2 cm foot spheres), legs prefixed by `prefix` (a robot's Model name prefix, "" or "NAME/").
  static std::vector<LegDescription> a1_legs(const std::string& prefix = "");

  const std::vector<int>& actuated() const override { return actuated_; }
  const std::vector<int>& feet() const override { return feet_; }
  void update(const simulation::State& state, const simulation::StepResults& last, JointReference& ref) override;

  const GaitSchedule& schedule() const { return schedule_; }
  const TrotPlannerParameters& parameters() const { return p_; }
  /// Foot targets of the last update in the heading frame [m] (per leg), for tests and plots.
  const std::array<Eigen::Vector3d, 4>& foot_targets_H() const { return foot_H_; }
  /// Index of the waypoint being walked to.
  int current_waypoint() const { return waypoint_; }
  /// Largest IK residual (foot position error) of the last update [m].
  double ik_residual() const { return ik_residual_; }

  /// Leg IK alone: joint angles (3) of leg `leg` that put its foot frame origin at p_B (base
  /// frame, m), starting from `angles` (in/out); returns the residual [m]. Damped Newton with the frame
  /// Jacobian. Exposed for tests. Uses the planner's workspace: not concurrently with update().
  double solve_leg_ik(int leg, const Eigen::Vector3d& p_B, Eigen::Vector3d& angles) const;

 private:
  struct Impl;
  const multibody::Model* model_;
  std::vector<LegDescription> legs_;
  TrotPlannerParameters p_;
  GaitSchedule schedule_;
  std::vector<int> actuated_, feet_;
  std::array<Eigen::Vector3d, 4> foot_H_;
  int waypoint_ = 0;
  double ik_residual_ = 0.0;
  std::shared_ptr<Impl> impl_;
};

}  // namespace coulomb::control
