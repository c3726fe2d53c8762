// The controllers of Zapolsky & Drumwright's experiments (§7.3–7.4; digest
// ../shared/digests/inverse-dynamics.md §8.3) on the run-time controller interface
// (simulation::Controller):
//  - pid:       joint-space PID only, the simulator's implicit PD (kp, kd on θ_des, θ̇_des) plus
//               the integral term and the balance torques as feed-forward;
//  - id-t-1, id-t-2: inverse dynamics with the contact forces the simulator applied one or two
//               steps before (ideal sensing, lagged): plain ID with f_ext += Jᵀγ/δt of that step;
//  - id-lcp-inf, id-lcp-mu, id-qp-mu, id-qp-inf: predictive ID(t_i) with the coming step's
//               contacts (gathered at the state, as the simulator gathers them), formulations
//               §4, §5, §6 two-stage and §6 no-slip (inverse_dynamics::Formulation).
// Every ID controller tracks q̈_des = θ̈_ref + kp (θ_des − θ) + kd (θ̇_des − θ̇) + ki ∫(θ_des − θ)
// (acceleration gains, identical across ID controllers) plus the balance term, and commands the
// torques as pure feed-forward (kp = kd = 0 on the simulator's actuators).
//
// Balance (Sugihara & Nakamura 2002-style, folded into q̈_des): a PD wrench on the base (height,
// roll, pitch, and horizontal velocity toward the reference) realized by virtual *compressive*
// normal forces at the stance feet (non-negative least squares over the feet in contact), mapped
// to joint torques τ_b = −J_footᵀ f and, for the ID controllers, to the accelerations τ_b
// produces with the feet in contact held (not M_aa⁻¹ τ_b, a free leg's: controllers.cc).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/control/reference.h"
#include "coulomb/inverse_dynamics/id_solver.h"
#include "coulomb/simulation/controller.h"

namespace coulomb::simulation {
class Simulator;
}

namespace coulomb::control {

enum class ControllerKind {
  kPid,          ///< "pid"
  kIdLagged1,    ///< "id-t-1"     ID(t_{i−1})
  kIdLagged2,    ///< "id-t-2"     ID(t_{i−2})
  kIdLcpNoSlip,  ///< "id-lcp-inf" ID(t_i)_{LCP,∞}
  kIdLcpCoulomb, ///< "id-lcp-mu"  ID(t_i)_{LCP,μ}
  kIdQpCoulomb,  ///< "id-qp-mu"   ID(t_i)_{QP,μ} (two-stage)
  kIdQpNoSlip,   ///< "id-qp-inf"  ID(t_i)_{QP,∞}
};
const char* to_string(ControllerKind kind);
/// The paper's label, e.g. "ID(t_i)_{QP,μ}", "PID", "ID(t_{i−1})".
const char* paper_label(ControllerKind kind);
/// Parses the names of to_string; throws std::invalid_argument listing the valid names.
ControllerKind parse_controller_kind(const std::string& name);
/// Every kind, in the paper's table order (QP,μ, QP,∞, LCP,μ, LCP,∞, PID, ID(t−1), ID(t−2)).
const std::vector<ControllerKind>& all_controller_kinds();
/// True for the four predictive ID(t_i) controllers.
bool is_predictive(ControllerKind kind);
/// The inverse-dynamics formulation of a predictive kind (LCP,∞ → kLcpNoSlip, LCP,μ →
/// kLcpCoulomb, QP,μ → kQpCoulomb, QP,∞ → kQpNoSlip); `otherwise` for PID and ID(t−k).
inverse_dynamics::Formulation id_formulation(ControllerKind kind, inverse_dynamics::Formulation otherwise);

struct ControlGains {
  // PID (torque units) for kPid [N·m/rad, N·m·s/rad, N·m/(rad·s)].
  double kp = 80.0, kd = 2.0, ki = 0.0;
  // ID controllers' error feedback (acceleration units) [1/s², 1/s, 1/s³].
  double kp_accel = 400.0, kd_accel = 40.0, ki_accel = 0.0;
  /// ID controllers also apply the PID's torque feedback (kp, kd on θ_des, θ̇_des through the
  /// simulator's implicit PD) on top of the ID torques.
  bool id_torque_feedback = false;
  /// QP formulations on a floating base: Stage I's kinetic energy measured in the frame moving
  /// with the desired base velocity instead of the world frame (a Galilean change of frame of the
  /// same problem otherwise). With the joints' velocities prescribed, maximal dissipation in the
  /// world frame keeps the base as slow as friction allows and lets the stance feet slide back
  /// (digest §6.2 [derived]); in the desired frame it moves the base toward its desired velocity.
  bool qp_desired_base_frame = false;
  /// Predictive ID: a foot in contact and in planned stance that the desired motion drives into
  /// the ground faster than touchdown_approach_speed gets its leg's q̈_des corrected (least norm)
  /// to stop the approach, instead of rigid inverse dynamics lifting the whole robot off it within
  /// one step.
  bool touchdown_consistency = true;
  double touchdown_approach_speed = 0.005;  ///< [m/s]
  /// Limit of the integral term's state |∫e| [rad·s] (anti wind-up).
  double integral_limit = 0.5;
  // Balance term (floating base only): PD on base height [N/m, N·s/m], roll/pitch
  // [N·m/rad, N·m·s/rad], horizontal velocity toward the reference [N·s/m]; 0 disables a part.
  bool balance = true;
  double balance_kp_height = 2000.0, balance_kd_height = 100.0;
  double balance_kp_tilt = 300.0, balance_kd_tilt = 20.0;
  double balance_kd_horizontal = 50.0;
};

/// Per-step outputs of a controller that metrics and tests read (valid after update()).
struct ControllerStepInfo {
  double time = 0.0;
  /// Predicted Σ normal impulses of the coming step [N·s] (predictive ID only; else NaN).
  double predicted_normal_impulse = 0.0;
  /// Feed-forward torques commanded per actuated coordinate [N·m or N] (PID: the integral and
  /// balance feed-forward only; the PD part is the simulator's and shows in StepResults).
  Eigen::VectorXd tau;
  inverse_dynamics::IdStatus id_status = inverse_dynamics::IdStatus::kSolved;
  double wall_time = 0.0;  ///< time spent in update() [s] (reference generation included)
  int contacts = 0;        ///< contacts the controller used (predicted or lagged)
};

/// A controller for one robot of a simulator's scene. The reference generator decides what is
/// tracked; `kind` how. Uses the simulator's model, scene contacts defaults and δt; must be
/// installed with decimation 1 (ID(t_{i−k}) reads Simulator::last_results()). The simulator must
/// outlive the controller.
class TrackingController final : public simulation::Controller {
 public:
  /// Throws std::invalid_argument if the reference's actuated coordinates are not all actuators
  /// of the scene, naming the coordinate.
  TrackingController(const simulation::Simulator& sim, std::shared_ptr<ReferenceGenerator> reference,
                     ControllerKind kind, ControlGains gains = {}, inverse_dynamics::IdParameters id = {});
  ~TrackingController() override;

  void update(const simulation::State& state, const simulation::StepResults& last,
              simulation::Commands& commands) override;

  ControllerKind kind() const { return kind_; }
  const JointReference& reference() const { return ref_; }
  const ControllerStepInfo& info() const { return info_; }
  const ReferenceGenerator& reference_generator() const { return *reference_; }

 private:
  struct Impl;
  ControllerKind kind_;
  std::shared_ptr<ReferenceGenerator> reference_;
  JointReference ref_;
  ControllerStepInfo info_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coulomb::control
