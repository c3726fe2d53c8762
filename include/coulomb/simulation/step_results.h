// What a step did and what it is told to do: the run-time observation and actuation types of
// simulation::Simulator (docs/simulation-api.md). Plain data, sized once per scene and refilled
// in place every step, so that reading results and writing commands allocate nothing after the
// first steps.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/math/spatial.h"
#include "coulomb/solvers/lstable/lstable_solver.h"
#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::simulation {

/// Solver statistics of one step.
struct StepStats {
  double time = 0.0;                 ///< simulated time at the end of the step [s]
  int solver_iterations = 0;         ///< SAP Newton iterations
  int line_search_iterations = 0;    ///< SAP line-search iterations
  /// SAP solves repeated because a joint limit that SimulatorParameters::joint_limit_window had
  /// left out acts at the solution (solver_iterations counts every solve's iterations).
  int limit_resolves = 0;
  int free_motion_iterations = 0;    ///< stage-1 iterations (chord, then Newton's if it did not converge)
  /// Stage 1 met its tolerance (the chord iteration, or Newton's method with the exact Jacobian
  /// after it at a radian or more per step). false: v* is the best iterate found, and the step
  /// does not conserve momentum exactly.
  bool free_motion_converged = true;
  int contacts = 0;                  ///< contact points at the start of the step
  double momentum_error = 0.0;       ///< SAP's e_m (Eq. 32)
  double max_penetration = 0.0;      ///< max(0, −min φ) over the step's contacts [m]
  /// Mean tangential contact speed ‖v_t‖ over the contacts that carry load (γ_n > 0) at the end of
  /// the step [m/s]: the slip of regularized friction (Castro et al. §VI-C2); 0 without loaded contacts.
  double mean_slip = 0.0;
  /// Kinetic + gravitational + spring energy at the end [J]; NaN when
  /// SimulatorParameters::compute_energy is off.
  double energy = 0.0;
  double wall_time = 0.0;            ///< [s]
  /// Wall time of the step's stages [s], measured only when SimulatorParameters::profile_stages
  /// (zero otherwise); they add up to wall_time but for the controller's update and a few clock
  /// reads. `coulomb bench` reports them.
  struct StageTimes {
    double contacts = 0.0;     ///< kinematics at q₀, collision detection, contact Jacobians
    double free_motion = 0.0;  ///< stage 1: v* (Newton iterations on the momentum balance)
    double constraints = 0.0;  ///< the step's constraint set and the solver's problem
    double solve = 0.0;        ///< SAP (or the lstable solver)
    double finish = 0.0;       ///< per-contact results, position update, energy statistic
  } stage_time;
  solvers::sap::SapSolverStatus status = solvers::sap::SapSolverStatus::kSuccess;
  // --solver lstable only (zero, false and kSuccess under SAP and on steps without constraints):
  // the solver's own figures. solver_iterations is then the QP's interior-point iterations (0
  // for a linear solve), and `status` maps lstable_status onto SAP's (qp_not_converged →
  // kMaxIterations, linear_solve_failure and qp_numerical_error → kLinearSolverFailure).
  int constraint_rows = 0;        ///< rows of the step's problem (3 per frictional contact, 1 per μ = 0 normal, limit side, PD, coupler, joint friction)
  bool used_qp = false;           ///< the step was the convex QP/SOCP (else one linear solve, bilateral rows only)
  double solver_residual = 0.0;   ///< the QP's max relative primal/dual residual at exit (0 for a linear solve)
  solvers::lstable::LStableStatus lstable_status = solvers::lstable::LStableStatus::kSuccess;
  int friction_iterations = 0;     ///< staggered friction: passes after the first (0 otherwise)
  bool friction_converged = true;  ///< staggered friction: the normals reached their fixed point
};

/// Where a contact's impulse lies on its friction cone at the end of the step.
enum class ContactRegion {
  kNoContact,  ///< γ_n = 0: the contact carries no load
  kStiction,   ///< ‖γ_t‖ < μ γ_n (up to 1e-9 relative): sticking, up to the regularized creep
  kSliding,    ///< ‖γ_t‖ = μ γ_n: on the cone's surface
};
/// "no_contact", "stiction", "sliding".
const char* to_string(ContactRegion region);

/// One contact point of the step: where it is (gathered at the start of the step, q₀) and what
/// it transmitted. The normal points from body A into body B; the impulse is the one B receives
/// from A (A receives its opposite).
struct ContactResult {
  int body_a = 0, body_b = 0;          ///< Model body indices (0 = the world)
  int geometry_a = 0, geometry_b = 0;  ///< indices into Scene::geometries
  math::Vector3 p_W = math::Vector3::Zero();  ///< contact point, world frame [m]
  math::Vector3 n_W = math::Vector3::Zero();  ///< unit normal A → B, world frame
  double phi = 0.0;                    ///< signed distance at q₀ [m] (< 0: overlap)
  double impulse_normal = 0.0;         ///< γ_n ≥ 0 [N·s]
  Eigen::Vector2d impulse_tangential = Eigen::Vector2d::Zero();  ///< γ_t in the contact frame's (t1, t2) [N·s]
  math::Vector3 impulse_W = math::Vector3::Zero();  ///< γ on body B in the world frame [N·s]
  double slip_speed = 0.0;             ///< ‖v_t‖ of B relative to A at the end of the step [m/s]
  ContactRegion region = ContactRegion::kNoContact;
};

/// One bilateral constraint of the step (Scene::constraints, same order). Rows as in
/// constraints/bilateral_kinematics.h (world axes; rotational rows first for weld/joints).
struct BilateralResult {
  Eigen::VectorXd phi;      ///< constraint value g(q₀) at the start of the step, per row [m or rad]
  Eigen::VectorXd impulse;  ///< row impulse γ on body B (A receives −γ) [N·s or N·m·s]
  Eigen::VectorXd force;    ///< impulse / δt [N or N·m]
};

/// Everything the last step did, refilled in place by Simulator::step(). Forces are the step's
/// impulses divided by δt (the mean force over the step).
struct StepResults {
  StepStats stats;
  std::vector<ContactResult> contacts;  ///< one per contact point of the step
  /// Net contact wrench on each body (index = Model body index; entry 0, the world, stays
  /// zero): moment about the body origin and force, world frame [N·m, N].
  std::vector<math::SpatialForce> contact_wrenches;
  /// Generalized contact forces Jᵀγ/δt, n_v [N·m or N per coordinate] (J = J(q₀)).
  Eigen::VectorXd generalized_contact_forces;
  /// Actuator forces actually applied, one per actuator in Scene::actuators order [N·m or N]:
  /// feed-forward plus the implicit PD's impulse / δt, after the effort limit.
  Eigen::VectorXd actuator_forces;
  /// 1 where the actuator's force hit its effort limit this step, else 0 (per actuator).
  Eigen::VectorXi actuator_saturated;
  /// Generalized actuation, n_v: actuator_forces scattered to their velocity index [N·m or N].
  Eigen::VectorXd generalized_actuation;
  /// Joint-limit impulse on every velocity, n_v (0 where no limit acted) [N·m·s or N·s].
  Eigen::VectorXd joint_limit_impulses;
  /// One per scene bilateral constraint (Scene::constraints order).
  std::vector<BilateralResult> bilaterals;
};

/// An external wrench on a body for the coming steps: force f_W and moment tau_W (both world
/// frame) applied at the point p_BoBq_B fixed in the body (body frame; default its origin).
/// Enters the free motion as the generalized force J_WBqᵀ [tau_W; f_W], J at the start of the step.
struct ExternalWrench {
  int body = 0;                                    ///< Model body index ≥ 1
  math::Vector3 tau_W = math::Vector3::Zero();     ///< [N·m]
  math::Vector3 f_W = math::Vector3::Zero();       ///< [N]
  math::Vector3 p_BoBq_B = math::Vector3::Zero();  ///< application point in the body frame [m]
};

/// The commands the actuators follow, held until changed. Vectors are per actuator, in
/// Scene::actuators order (Simulator::actuator_index maps a joint name to its index).
struct Commands {
  /// Feed-forward force u per actuator [N·m or N]; added to the PD term, then the sum is clamped
  /// to ±effort_limit.
  Eigen::VectorXd actuation;
  Eigen::VectorXd q_target;  ///< PD position targets [rad or m]
  Eigen::VectorXd v_target;  ///< PD velocity targets [rad/s or m/s]
  Eigen::VectorXd kp;        ///< PD stiffness ≥ 0 [N·m/rad or N/m]
  Eigen::VectorXd kd;        ///< PD damping ≥ 0 [N·m·s/rad or N·s/m]
  std::vector<ExternalWrench> external_wrenches;
};

/// The state a controller sees: time [s], q (n_q) and v (n_v) at the start of the coming step.
struct State {
  double time = 0.0;
  Eigen::VectorXd q, v;
};

}  // namespace coulomb::simulation
