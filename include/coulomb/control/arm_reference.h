// The manipulator experiment of Zapolsky & Drumwright §7.2/§8.4.1 (digest
// ../shared/digests/inverse-dynamics.md §8.1, §8.5(g)) on the Franka Panda
// (../shared/models/panda_collision.urdf): the seven arm joints follow a sinusoid about the
// initial pose while the two fingers (two 15 mm fingertip spheres each: four contacts) hold a
// free box. The fingers are commanded to zero velocity and acceleration while they touch the box
// and to close further (at `closing_speed`) when they do not.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/control/reference.h"
#include "coulomb/multibody/model.h"

namespace coulomb::simulation {
class Simulator;
}

namespace coulomb::control {

struct ArmReferenceParameters {
  double frequency = 3.0;   ///< of the arm sinusoid [Hz] (the paper: about 3 cycles per second)
  double amplitude = 0.05;  ///< per arm joint [rad]
  /// Arm joints that move (model joint names without prefix); empty: every revolute arm joint.
  std::vector<std::string> moving_joints;
  double closing_speed = 0.02;  ///< finger closing speed when not touching [m/s]
  /// Seconds of holding still (the static hold) before the sinusoid starts; its amplitude then
  /// ramps up over one period.
  double hold_time = 0.2;
  std::string box_body = "box";  ///< the free body held
};

/// A ReferenceGenerator for an arm holding a box. Arm joints: θ_des = θ₀ + a sin(2π f (t − t_h))
/// (after the hold, with a one-period ramp); fingers (prismatic joints whose name contains
/// "finger"): in contact with the box (last step's contacts), θ̇_des = θ̈_des = 0 and θ_des = θ
/// (no position error); otherwise θ_des decreases at closing_speed. One flag for all fingers;
/// before the first step it comes from the contacts at the initial configuration.
class ArmReference final : public ReferenceGenerator {
 public:
  /// Uses the simulator's scene (its robot's 1-dof joints as the actuated coordinates, the box body
  /// by name) and its initial configuration. Throws std::invalid_argument naming the body or
  /// joint when the box or a moving joint is missing.
  ArmReference(const simulation::Simulator& sim, ArmReferenceParameters parameters = {});

  const std::vector<int>& actuated() const override { return actuated_; }
  const std::vector<int>& feet() const override { return fingertips_; }
  void update(const simulation::State& state, const simulation::StepResults& last, JointReference& ref) override;

  int box_body() const { return box_; }  ///< Model body index of the box
  double box_mass() const { return box_mass_; }  ///< [kg]
  const std::vector<int>& finger_dofs() const { return finger_dofs_; }  ///< velocity indices
  /// True if a finger touched the box in the last step seen by update().
  bool touching() const { return touching_; }

 private:
  const simulation::Simulator* sim_;
  ArmReferenceParameters p_;
  std::vector<int> actuated_, fingertips_, finger_dofs_, q_index_;
  std::vector<bool> moving_, finger_;
  Eigen::VectorXd q0_, finger_target_;
  int box_ = 0;
  double box_mass_ = 0.0;
  bool touching_ = false;
  double last_time_ = std::numeric_limits<double>::quiet_NaN();  ///< state.time of the last update()
};

}  // namespace coulomb::control
