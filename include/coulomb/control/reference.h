// What a controller is asked to track: the joint reference (positions, velocities and
// accelerations of the actuated coordinates) and, for a floating base, the desired base motion
// and which feet should carry load. Produced once per control step by a ReferenceGenerator
// (the trot planner of trot_planner.h, the arm's sinusoid of arm_reference.h) and consumed by
// the controllers of controllers.h. Zapolsky & Drumwright §7.2 (digest
// ../shared/digests/inverse-dynamics.md §8.2).
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/simulation/step_results.h"

namespace coulomb::control {

/// One control step's reference. Vectors are per actuated coordinate, in the order of
/// `ReferenceGenerator::actuated()` (ascending velocity index, as inverse_dynamics::InverseDynamics).
struct JointReference {
  double time = 0.0;      ///< the time the reference is for [s]
  Eigen::VectorXd q;      ///< θ_des [rad or m]
  Eigen::VectorXd v;      ///< θ̇_des [rad/s or m/s]
  Eigen::VectorXd vdot;   ///< θ̈_des (feed-forward acceleration) [rad/s² or m/s²]
  // Floating base (has_base = false for a welded robot):
  bool has_base = false;
  Eigen::Vector3d p_WB = Eigen::Vector3d::Zero();  ///< desired base position, world [m]
  double yaw = 0.0;                                 ///< desired base heading [rad] (roll = pitch = 0)
  Eigen::Vector3d v_WB = Eigen::Vector3d::Zero();   ///< desired base velocity, world [m/s]
  double yaw_rate = 0.0;                            ///< desired heading rate [rad/s]
  /// Per foot (ReferenceGenerator::feet() order): 1 if the foot is planned to be in stance.
  std::vector<int> stance;
};

/// Produces the reference every control step from the actual state (feedback such as waypoint
/// following may use it) and the results of the last simulator step (the contacts it saw).
class ReferenceGenerator {
 public:
  virtual ~ReferenceGenerator() = default;
  /// Velocity indices of the actuated coordinates (ascending) the reference is for.
  virtual const std::vector<int>& actuated() const = 0;
  /// Model frame index of each foot / fingertip whose contact the balance term may use (may be empty).
  virtual const std::vector<int>& feet() const = 0;
  /// Fills `ref` (sized on first use; allocation-free afterwards) for the coming step starting
  /// at state.time. `last` is the last simulator step (no contacts before the first step).
  virtual void update(const simulation::State& state, const simulation::StepResults& last, JointReference& ref) = 0;
};

}  // namespace coulomb::control
