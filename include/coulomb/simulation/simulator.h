// Simulator: SAP forward simulation with the θ-method two-stage time stepping of Castro,
// Permenter, Han (§II-C/D, Algorithm 1; digest ../shared/digests/sap.md §2.3–2.4).
//
// One step from (q₀, v₀):
//  0. Contacts gathered once at q₀ (within the collision margin, plus each body's travel in
//     the step at v₀ with speculative contact) and their Jacobian J(q₀).
//  1. Free motion in momentum form (docs/sap.md, "Stage 1 in momentum form"): v* solves
//     m(v) = p(q₁, v) − p̄₀ − δt [β(q^θ, v^θ) + k₁(q^θ, v^θ)] = 0, the θ-method on ṗ = τ + β with
//     p = M v and β = Ṁ v − C v − ∂V/∂q (multibody/momentum.h), q₁ = q₀ ⊕ δt v^{θ_vq}; floating
//     roots' rows telescope the momentum about the world origin, so a free system conserves
//     linear and angular momentum exactly for every θ. (Castro et al. Eq. 14,
//     M(q^θ)(v − v₀) = δt k(q^θ, v^θ), is not momentum-conserving with world-frame floating
//     velocities.) Newton iterations with the SPD approximation A = M(q₁) + δt²θθ_vq K + δtθ D
//     (Eq. 15, with the digest's resolution of the K typo, §8 item 2: K = −∂k₁/∂q N), k₁ the
//     joint springs and dampers.
//  2. Contact: v = argmin ℓ_p(v) with SAP (Eq. 24), A blocks per tree, constraints: frictional
//     contacts at q₀, joint limits, PD actuators; warm-started from v₀. Every constraint predicts
//     its position at the end of the step as the integrator moves it, q₀ + δt (θ_vq v + (1 − θ_vq) v₀).
//  3. Positions: q = q₀ ⊕ δt v^{θ_vq} on the configuration manifold (Eq. 11–12).
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/scene/scene.h"
#include "coulomb/simulation/controller.h"
#include "coulomb/simulation/run_monitor.h"
#include "coulomb/simulation/step_results.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/constraints/bilateral_kinematics.h"
#include "coulomb/constraints/constraint_set.h"
#include "coulomb/solvers/lstable/lstable_solver.h"
#include "coulomb/solvers/sap/sap_constraint_builder.h"
#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::simulation {

/// Named θ-method schemes (digest §2.3): implicit Euler θ = θ_vq = 1; symplectic Euler θ = 0,
/// θ_vq = 1; midpoint θ = θ_vq = ½.
enum class Integrator { kImplicitEuler, kSymplecticEuler, kMidpoint };
/// "implicit-euler", "symplectic-euler", "midpoint".
const char* to_string(Integrator integrator);
/// Parses the names above; throws std::invalid_argument naming the value otherwise.
Integrator parse_integrator(const std::string& name);
struct Theta {
  double theta = 1.0, theta_vq = 1.0;
};
Theta theta_of(Integrator integrator);

/// The contact/constraint solver of stage 2: SAP (Castro et al., the default) or Drumwright's
/// L-stable first-order solver (solvers/lstable).
enum class Solver { kSap, kLStable };
/// "sap", "lstable".
const char* to_string(Solver solver);
/// Parses the names above; throws std::invalid_argument naming the value otherwise.
Solver parse_solver(const std::string& name);

struct SimulatorParameters {
  double time_step = 0.01;  ///< δt [s] > 0
  Integrator integrator = Integrator::kImplicitEuler;
  Solver solver = Solver::kSap;
  solvers::lstable::LStableParameters lstable;       ///< when solver = kLStable
  solvers::sap::SapSolverParameters sap;            ///< SAP tolerances, line search, linear solver
  solvers::sap::SapRegularization regularization;   ///< β, σ for contacts
  /// Near-rigid β for joint limits (their stiffness is infinite): R = β²w/(4π²), a limit period
  /// of β δt. 0.1, not the contacts' 1: under midpoint a limit can only stop a joint without
  /// overshoot by reflecting its velocity within the step, and the residual overshoot grows
  /// with R/W = β²/(4π²) — a limp Panda at δt = 10 ms overshot 1.5e-2 rad with β = 1 and
  /// 2.6e-3 rad with 0.1 (implicit Euler < 1e-3 either way; tests/simulation/joint_limit_test.cc).
  solvers::sap::SapRegularization limit_regularization{0.1, 1e-3};
  int free_motion_max_iterations = 30;   ///< stage-1 Newton iterations (every scheme: p(q₁, v) depends on v)
  double free_motion_tolerance = 1e-10;  ///< on ‖Δv‖ / max(1, ‖v*‖)
  /// Start stage 1's chord iteration at v₀ plus the last steps' increments v* − v₀ i₁, i₂, …
  /// (newest first) extrapolated by the polynomial through them: Σₖ (−1)^{k+1} C(m, k) iₖ over the
  /// m ≤ 5 at hand (i₁ alone, 2i₁ − i₂, 3i₁ − 3i₂ + i₃, … up to degree 4) instead of v₀. The
  /// increment is δt times an acceleration that changes smoothly between impacts, so the first
  /// iterate is close: chord iterations per step (the last increment alone → degree 4)
  /// humanoid_drop 3.49 → 1.60, a1_drop 3.00 → 2.12, ur5 3.53 → 1.54, four_bar 4.01 → 1.11;
  /// the spinning free A1 at 1 ms 2.08 → 1.03. Free bodies take 1. The converged v* is the same
  /// to free_motion_tolerance. A step after set_state(), or after a step whose free motion did
  /// not converge, starts from v₀ (and the extrapolation restarts), so a step from a given state
  /// does not depend on earlier steps.
  bool free_motion_warm_start = true;
  /// Stop the chord iteration when the error left in the new iterate, estimated as ρ/(1 − ρ)
  /// times the correction just applied (ρ: the iteration's contraction, the ratio of its last two
  /// corrections, or at a step's first correction the last one measured), is below
  /// 0.1 × free_motion_tolerance (the safety factor κ of Hairer & Wanner, Solving ODEs II, §IV.8),
  /// instead of waiting for a correction below free_motion_tolerance. Only ρ < ½ is trusted; a
  /// first-correction stop uses a ρ at most FreeMotionScratch::kContractionSteps steps old, and
  /// only while that first correction is at most 4× the last step's. Chord iterations per step
  /// (1,000 steps): humanoid_drop 1.66 → 1.35, a1_drop 2.12 → 1.70, spring_cylinder (midpoint)
  /// 2.00 → 1.12.
  bool free_motion_stop_on_contraction = true;
  /// SAP starts from whichever of v₀ and v₀ + (v₀ − the last step's v₀), the last step's
  /// acceleration held (MuJoCo's qacc warm start), has the lower cost ℓ_p
  /// (SapSolver::solve with two guesses; one more cost evaluation per step). A robot standing
  /// or walking accelerates smoothly, and the held acceleration lands its contacts on the right
  /// side of the friction cone: Newton iterations per step humanoid_drop 2.29 → 1.28, a1_drop
  /// 2.42 → 1.66; on the piles, where impacts reverse accelerations, v₀ mostly wins and the
  /// count is unchanged. The solution is the same to SAP's tolerance. Not after set_state()
  /// (there is no last step), so a step from a set state is a function of it alone.
  bool acceleration_warm_start = true;
  /// Compute StepStats::energy (kinetic + gravitational + spring) at the end of every step: one
  /// kinematics pass and one inertia pass (4 % of an a1_drop step). Off, StepStats::energy is
  /// NaN. `coulomb simulate` writes it to steps.csv and stats.json; `coulomb bench` and the peer
  /// benchmark turn it off, as MuJoCo (mjENBL_ENERGY) and Drake do not compute it per step.
  bool compute_energy = true;
  bool joint_limits = true;              ///< add SAP limit constraints for finite joint limits
  /// SAP: a limit enters the step only when it lies within joint_limit_window · δt ·
  /// max(|v₀|, |v*|) of q₀ (the joint's travel in the step, estimated from the start and
  /// free-motion velocities; Drake's SapDriver uses the same rule with the factor 2), or q₀ is at
  /// or past it. A joint far from its limits then costs the Newton iterations nothing (the A1
  /// has 12 limits and about 5 contacts). The window is a guess, not a bound: an impulse of the
  /// step can throw a joint farther. After the solve, every left-out limit is checked at the
  /// solution (SapLimitConstraint::acts); one that acts is added and SAP solves again from there
  /// (StepStats::limit_resolves), so the step equals the one with every limit to SAP's tolerance.
  /// ≥ 0; +∞ adds every finite limit every step. The first-order solver takes every limit.
  double joint_limit_window = 2.0;
  /// Post-stabilization of the rigid bilateral constraints (scene `constraints:` without a
  /// stiffness): after the positions are integrated, project q back onto g(q) = 0 by at most
  /// three Gauss–Newton steps in the metric of the step's A (Δ = −A⁻¹Jᵀ(JA⁻¹Jᵀ)⁻¹g), velocities
  /// unchanged. Without it a rotating constraint drifts by (v δt)²/(2L) per step and the next
  /// step's correction, ≈ v² δt/(2L), adds energy once δt ω ≳ 1 (docs/lstable-experiments.md).
  bool project_rigid_constraints = true;
  /// Speculative contact: gather contacts at q₀ within the collision margin plus, per body, the
  /// distance δt (‖v‖ + ‖ω‖ r) its geometry can travel in the step at v₀
  /// (CollisionWorld::set_speculative_margins). Without it a body approaching faster than
  /// margin/δt meets no contact in the step and sinks into the surface for one step. Also on
  /// when the scene sets collision.speculative.
  bool speculative_contact = false;
  /// Measure the wall time of each stage of a step (StepStats::stage_time): five clock reads
  /// per step. Off by default.
  bool profile_stages = false;
  /// Warnings raised while running (run_monitor.h): no collision geometry, initial overlap,
  /// bodies that fell through or left the scene.
  MonitorParameters monitor;
};

class Simulator {
 public:
  /// Takes ownership of the scene. Throws std::invalid_argument for δt ≤ 0 or a non-finite
  /// initial state (naming the coordinate).
  Simulator(scene::Scene scene, SimulatorParameters parameters);

  const scene::Scene& scene() const { return scene_; }
  const multibody::Model& model() const { return scene_.model; }
  const SimulatorParameters& parameters() const { return parameters_; }
  const geometry::CollisionWorld& collision_world() const { return world_; }

  double time() const { return state_.time; }
  const Eigen::VectorXd& q() const { return state_.q; }
  const Eigen::VectorXd& v() const { return state_.v; }
  const State& state() const { return state_; }
  /// Replaces the state (validated like the constructor).
  void set_state(const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  // ---- Run-time actuation (docs/simulation-api.md). Actuators are Scene::actuators, addressed
  // by index (their order there, which `coulomb inspect` lists) or by joint name. Commands hold
  // until changed; they start as the scene file sets them (no feed-forward, the file's gains
  // and targets). Every setter validates its input and throws std::invalid_argument naming
  // the actuator and the value (non-finite numbers, negative gains, wrong sizes).

  int num_actuators() const { return static_cast<int>(scene_.actuators.size()); }
  /// Index of the actuator on joint `joint`; throws std::invalid_argument listing the
  /// actuated joints if there is none.
  int actuator_index(const std::string& joint) const;
  /// Feed-forward forces u, one per actuator [N·m or N]: τ = clamp(u + PD, ±effort_limit).
  void set_actuation(const Eigen::VectorXd& u);
  void set_actuation(int actuator, double u);
  void set_actuation(const std::string& joint, double u);
  /// PD targets, one per actuator [rad or m, rad/s or m/s].
  void set_pd_targets(const Eigen::VectorXd& q_target, const Eigen::VectorXd& v_target);
  void set_pd_target(int actuator, double q_target, double v_target = 0.0);
  /// PD gains of one actuator (≥ 0) [N·m/rad, N·m·s/rad]; kp = kd = 0 leaves a pure force actuator.
  void set_pd_gains(int actuator, double kp, double kd);
  /// Adds an external wrench on a body for the coming steps (until clear_external_wrenches).
  /// Throws for a body index outside 1 … num_bodies − 1 or non-finite values.
  void add_external_wrench(const ExternalWrench& wrench);
  void clear_external_wrenches();
  /// All commands at once (sizes checked as above).
  void set_commands(const Commands& commands);
  const Commands& commands() const { return commands_; }

  /// Calls `controller` before every `decimation`-th step (the first call before the first
  /// step), a control period of decimation · δt; the commands it writes hold in between. Null
  /// removes it. Throws std::invalid_argument for decimation < 1.
  void set_controller(std::shared_ptr<Controller> controller, int decimation = 1);
  /// Steps taken since construction.
  long long step_count() const { return step_count_; }

  /// Advances one time step. Never produces NaN: a step whose SAP solve does not converge keeps
  /// SAP's last (finite) iterate and reports the status; a non-finite state throws
  /// std::runtime_error naming the time.
  const StepStats& step();
  const StepStats& last_step() const { return results_.stats; }
  /// Contacts, wrenches, generalized contact forces, applied actuator forces and limit impulses
  /// of the last step (step_results.h). Refilled in place by step().
  const StepResults& last_results() const { return results_; }

  /// Contacts gathered at the start of the last step and their impulses γ (3 per contact,
  /// contact frame [t1, t2, n], N·s).
  const contact::ContactSet& contacts() const { return contacts_; }
  const Eigen::VectorXd& contact_impulses() const { return contact_impulses_; }

  /// The SAP results of the last step (iterations, histories when parameters().sap.record_history).
  const solvers::sap::SapSolverResults& last_solver_results() const { return solver_results_; }
  /// The L-stable solver's results of the last step (parameters().solver == kLStable).
  const solvers::lstable::LStableResults& last_lstable_results() const { return lstable_.results(); }
  /// The last step's constraints (solver-neutral) and their impulses in the same layout.
  const constraints::ConstraintSet& constraint_set() const { return constraint_set_; }
  const constraints::ConstraintImpulses& constraint_impulses() const { return impulses_; }

  /// Every warning raised so far (run_monitor.h), in order: at construction (a robot or body
  /// without collision geometry), at the first step (initial overlap deeper than 5 mm), and
  /// while running (a body fell more than 1 m below every static geometry or left the scene's
  /// bounds). Each is raised once. Scene-file warnings are Scene::warnings, not repeated here.
  const std::vector<std::string>& warnings() const { return monitor_.warnings(); }

  /// Kinetic + gravitational potential + joint-spring energy at (q, v) [J].
  double energy(const Eigen::VectorXd& q, const Eigen::VectorXd& v);

 private:
  void free_motion(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0, Eigen::VectorXd& v_star);
  /// The momentum-balance residual m(v) of the free motion (see free_motion) at v, into `m`.
  void free_motion_residual(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0, const Eigen::VectorXd& v,
                            Eigen::VectorXd& m);
  /// Newton's method on m(v) = 0 with the exact Jacobian (forward differences, one dof of every
  /// tree at a time) and a backtracking line search on ‖m‖, from v_star; for when the chord
  /// iteration of free_motion does not converge (|v| δt of a radian or more). Returns whether
  /// it converged.
  bool free_motion_newton(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0, Eigen::VectorXd& v_star);
  void check_actuator(int actuator) const;
  void check_commands(const Commands& commands) const;
  void check_wrench(const ExternalWrench& wrench) const;
  void applied_forces();  // tau_applied_: actuators outside the PD constraint + external wrenches
  /// Whether actuator i goes through the implicit PD constraint: δt (δt kp + kd) ≥
  /// kMinImplicitPdDamping [N·m·s/rad or N·s/m]; otherwise its PD law is applied explicitly.
  bool pd_is_implicit(int actuator) const;
  static constexpr double kMinImplicitPdDamping = 1e-12;
  void build_constraint_set(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0);
  bool add_missed_limits(const solvers::sap::SapBuildParameters& build, const Eigen::VectorXd& v);
  void add_limit_entry(int body, double lower, double upper);
  void fill_results();

  scene::Scene scene_;
  SimulatorParameters parameters_;
  Theta theta_;
  geometry::CollisionWorld world_;
  multibody::Workspace ws_;
  std::vector<contact::TreeRange> trees_;
  std::vector<int> tree_of_root_;  ///< body index → tree index (−1 if none)
  std::vector<int> tree_of_velocity_, local_of_velocity_;  ///< velocity index → tree, index within it
  std::vector<int> limit_entry_;  ///< body → its joint's entry in constraint_set_.limits this step, or −1
  std::vector<math::Vector3> p_WBo0_;  ///< body origins at the start of the step [m]
  struct FloatingRoot {
    int q_index = 0, v_index = 0;
  };
  std::vector<FloatingRoot> floating_roots_;  ///< floating joints attached to the world
  State state_;
  long long step_count_ = 0;
  Commands commands_;
  std::shared_ptr<Controller> controller_;
  int decimation_ = 1;
  StepResults results_;
  Eigen::VectorXd damping_;    ///< per velocity: URDF joint damping + spring damping (D diagonal)
  Eigen::VectorXd stiffness_;  ///< per velocity: spring stiffness (K diagonal, 1-dof joints)
  Eigen::VectorXd rest_;       ///< per velocity: spring rest position
  std::vector<Eigen::MatrixXd> A_blocks_;  ///< stage-1 A at q^θ(v*), one block per tree
  /// free_motion's buffers, sized on its first call so that later steps do not allocate.
  struct FreeMotionScratch {
    Eigen::VectorXd q_theta, q1, v_theta, v_thvq, k1, m, dv, p0, p_theta, beta_theta;
    /// Per tree: the Cholesky factor of A_blocks_[t] (lower triangle), from the dense kernels for
    /// trees up to 32 velocities, and Eigen's LLT for larger ones.
    std::vector<Eigen::MatrixXd> factor;
    /// Per tree of 6 velocities (a free body): the inverse of its factor (36, column-major), for
    /// the chord iteration's solves.
    std::vector<double> factor_inv6;
    std::vector<Eigen::LLT<Eigen::MatrixXd>> llt;
    /// The last kIncrements steps' converged increments v* − v₀, newest first: the next step's
    /// chord iteration starts at v₀ plus their extrapolation. `increments` of them may be used:
    /// those of consecutive converged steps since the construction or the last set_state().
    /// factor/llt hold the factors of A_blocks_ (factor_current: set at the end of every free
    /// motion whose factorization of A at q₁(v*), for SAP and the next step, succeeded);
    /// factor_ok: the last factorization of every tree succeeded.
    bool factor_current = false, factor_ok = false;
    static constexpr int kIncrements = 5;
    Eigen::VectorXd increment[kIncrements];
    int increments = 0;
    /// The chord iteration's last measured contraction ρ = ‖Δv_k‖/‖Δv_{k−1}‖ (NaN: none since
    /// the last step without warm start), and the steps since that stopped on it after one
    /// iteration (free_motion: at most kContractionSteps in a row, then ρ is measured again).
    double contraction = std::numeric_limits<double>::quiet_NaN();
    double first_correction = std::numeric_limits<double>::quiet_NaN();  ///< the last step's ‖Δv₀‖
    int steps_on_contraction = 0;
    static constexpr int kContractionSteps = 8;
    /// Newton fallback (free_motion_newton): per tree the finite-difference ∂m/∂v, and trial
    /// vectors. Sized on the first step that needs them.
    std::vector<Eigen::MatrixXd> jacobian;
    Eigen::VectorXd m_base, v_trial, m_trial;
  };
  FreeMotionScratch fm_;
  contact::ContactSet contacts_;
  contact::ContactJacobian Jc_;
  Eigen::VectorXd contact_impulses_;
  solvers::sap::SapProblem problem_;  ///< rebuilt in place every step
  Eigen::VectorXd contact_velocities_;  ///< 3 per contact: v_c at the solution [m/s]
  constraints::ConstraintSet constraint_set_;    ///< this step's constraints, rebuilt in place
  constraints::ConstraintImpulses impulses_;     ///< the solver's impulses in the set's layout
  solvers::sap::SapConstraintBuilder sap_builder_;
  solvers::lstable::LStableSolver lstable_;
  bool solved_ = false;  ///< whether this step solved a constraint problem
  Eigen::VectorXd tau_applied_;  ///< n_v: pure-force actuation + external wrenches of this step
  Eigen::VectorXd q0_, v0_, v_star_, v_thvq_;  ///< step buffers
  /// acceleration_warm_start: the last step's v₀ (valid: a step came since the construction or
  /// the last set_state()) and the guess v₀ + (v₀ − that).
  Eigen::VectorXd v0_last_, v_held_acceleration_;
  bool v0_last_valid_ = false;
  Eigen::MatrixXd J_wrench_;     ///< 6 × n_v frame Jacobian for external wrenches
  /// Bilateral constraints (Scene::constraints): scratch for their kinematics and their
  /// rows × n_v Jacobians at q₀, one per constraint.
  constraints::BilateralKinematicsScratch bilateral_scratch_;
  std::vector<Eigen::MatrixXd> J_bilateral_;
  // Post-stabilization (project_rigid_constraints): g and J of the rigid rows stacked, the
  // projection's workspace; sized in the constructor.
  void project_rigid_constraints(Eigen::VectorXd& q);
  int rigid_bilateral_rows_ = 0;
  Eigen::VectorXd proj_g_, proj_lambda_, proj_dq_, proj_q_;
  Eigen::MatrixXd proj_J_, proj_AinvJt_, proj_S_;
  std::vector<Eigen::LLT<Eigen::MatrixXd>> proj_llt_;
  Eigen::LDLT<Eigen::MatrixXd> proj_ldlt_;
  RunMonitor monitor_;
  solvers::sap::SapSolver solver_;
  solvers::sap::SapSolverResults solver_results_;
};

}  // namespace coulomb::simulation
