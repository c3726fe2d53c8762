// Inverse dynamics with rigid contact and friction on plain problem data: actuator torques and
// contact impulses computed together (Zapolsky & Drumwright, "Inverse Dynamics with Rigid
// Contact and Friction"; digest ../shared/digests/inverse-dynamics.md). The solver knows nothing
// about robots: it takes the mass matrix, the velocity, the non-contact forces, which velocity
// coordinates are actuated, the desired actuated velocities and the contact rows, and returns
// ι = Δt τ, the contact impulses and ⁺v. inverse_dynamics.h builds this problem from a Model,
// a state and the contacts.
//
// Conventions (digest §2, "canonical"): every contact variable is an impulse [N·s]; the
// discrete dynamics over one control period Δt are
//
//     M (⁺v − ⁻v) = Δt f_ext + Nᵀ f_N + Sᵀ f_S + Tᵀ f_T + Pᵀ ι,      ι = Δt τ,
//     P ⁺v = q̇_des  (= P ⁻v + Δt q̈_des),
//
// with M, N, S, T, φ at t₀ and P the selection of the actuated coordinates. The normal rows
// obey 0 ≤ f_N ⊥ N ⁺v + φ/Δt ≥ 0 (the LCP formulations; Eq. 35) or only N ⁺v + φ/Δt ≥ 0 (the
// complementarity-free QP formulations, Eq. 70).
//
// Formulations (digest table §1):
//   kLcpNoSlip   ID_LCP,∞ (§4): no-slip S ⁺v = T ⁺v = 0; FIND-INDICES (Alg. 1) keeps the
//                independent tangential rows, the MLCP becomes the PSD LCP (N v** + φ/Δt,
//                N Γ_X Nᵀ) solved by the modified PPM (Alg. 2) warm-started from the previous
//                active set (indeterminacy mitigation, §4.6), Lemke as the fallback; an
//                inconsistent request (LCP infeasible, or a dropped no-slip row violated) is
//                answered by the consistency QP of §4.5 (the feasible motion closest to q̇_des).
//   kLcpCoulomb  ID_LCP,μ (§5): Coulomb friction on a k-edge inscribed polygon
//                (Σ_j f_F,j ≤ μ f_N), the copositive LCP of (k + 2) n variables solved by
//                Lemke (lexicographic); MINDIFF (Alg. 3, exponential) instead when asked.
//   kQpCoulomb   ID_QP,μ (§6): Stage I minimizes the kinetic energy ½ ⁺vᵀ M ⁺v over the
//                impulses (non-penetration, f ≥ 0, friction polygon; no complementarity);
//                Stage II minimizes ‖τ‖² over Stage I's optimal set (its null space), unless
//                stage_two = false (the one-stage variant).
//   kQpNoSlip    ID_QP,∞ (§6): the same without the friction bound.
//
// Implementation: because P selects coordinates, fixing P ⁺v = q̇_des leaves only the
// unactuated coordinates U (n_b = m − n_q of them: a floating base, a grasped free body) free,
// with inertia A = M_UU. Every formulation is solved in that subspace: Γ_P = E_U A⁻¹ E_Uᵀ
// (digest §2), the Stage I Hessian is R_U A⁻¹ R_Uᵀ of rank ≤ n_b (digest §6.4's "6 × 6 closed
// form"), and ι is read from the actuated rows of the dynamics. One Cholesky factorization of
// A (n_b × n_b) per solve.
//
// Allocation: nothing is allocated by solve() once a problem with the same (m, n_q, n) has been
// solved (buffers are kept per contact count, so alternating counts is allocation-free too; the
// caller's IdResults is resized to n: keep one per count, as InverseDynamics does), except on the
// rare fallback paths (Lemke after a failed PPM, the consistency QP, MINDIFF, a Stage II that
// fails and writes its message), which say so in their comments.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/solvers/lcp/lemke.h"
#include "coulomb/solvers/lcp/ppm.h"
#include "coulomb/solvers/qp/conic_qp.h"

namespace coulomb::inverse_dynamics {

enum class Formulation { kLcpNoSlip, kLcpCoulomb, kQpCoulomb, kQpNoSlip };
/// "lcp-noslip", "lcp-coulomb", "qp-coulomb", "qp-noslip".
const char* to_string(Formulation formulation);
/// Parses the names above; throws std::invalid_argument naming the value and the choices.
Formulation parse_formulation(const std::string& name);

/// Stage II's objective (digest §6.6, §11 item 21): the total actuator torque ‖τ‖² (default;
/// "minimize the ℓ2-norm of joint torques", PACER's choice), or the paper's y = x, the torque
/// beyond the contact-free f_ID = C q̈_des − f_ext,q (‖τ − f_ID‖²).
enum class StageTwoObjective { kTotalTorque, kContactTorque };

struct IdParameters {
  Formulation formulation = Formulation::kQpCoulomb;
  /// Friction polygon edges k (LCP,μ and the QP formulations), 3 … 64. Directions
  /// d_j = cos(2πj/k) ŝ + sin(2πj/k) t̂; the bound Σ_j f_F,j ≤ μ f_N is the polygon inscribed in
  /// the Coulomb cone (k = 4: the "diamond" |f_S| + |f_T| ≤ μ f_N of the paper).
  int friction_edges = 4;
  /// QP formulations: run Stage II (torque smoothing in Stage I's null space). false = the
  /// one-stage variant ID_QP,μ^one-stage.
  bool stage_two = true;
  StageTwoObjective stage_two_objective = StageTwoObjective::kTotalTorque;
  /// Stage II tie-breaker ε‖z‖² (relative to the largest diagonal entry of Stage II's Hessian,
  /// with z in units of the free momentum's size): picks, among impulse vectors with the same
  /// torques, the one of least norm (f_S⁺ and f_S⁻ not both positive; symmetric loads for
  /// symmetric poses). 0 disables it (Stage II's optimum is then not unique and the interior
  /// point returns one of them). Changes ‖τ‖ by O(ε) relative.
  double stage_two_regularization = 1e-6;
  /// LCP,∞: start the modified PPM from the previous solve's active set (§4.6). The set is kept
  /// by contact index; it is dropped when the contact count changes.
  bool warm_start = true;
  /// LCP,∞: answer an inconsistent request with the §4.5 consistency QP (status kInconsistent)
  /// instead of failing (status kInfeasible).
  bool consistency_qp = true;
  /// LCP,∞: the largest slip [m/s] of the no-slip rows FIND-INDICES dropped that still counts as
  /// consistent (kSolved, the LCP's solution kept). The dropped rows hold exactly only when
  /// q̇_des and ⁻v are exactly consistent with the contacts staying put (App. E); a measured
  /// state never is: 1e-9 noise on ⁻v makes them slip at ~1e-9 m/s, and a simulator's
  /// regularized friction at ~1e-5 m/s. Below this tolerance the warm-started LCP solution is
  /// returned (slip_residual reports the slip); above it, the request is inconsistent (the
  /// consistency QP: a different, unwarmed solution, so a tolerance at the noise level makes
  /// the torques chatter). Genuinely inconsistent requests (legs splaying) slip at ~Δt q̈ l,
  /// 1e-3 m/s and more.
  double slip_tolerance = 1e-6;
  /// LCP,μ: choose the LCP solution nearest the previous [⁺v; ι] by enumerating every basis
  /// (Alg. 3, MINDIFF; 2^((k+2) n) leaves) when (k + 2) n ≤ mindiff_max_variables; Lemke
  /// otherwise.
  bool mindiff = false;
  int mindiff_max_variables = 12;
  /// FIND-INDICES' tolerance (find_indices.h): sin² of the angle below which a tangential row is
  /// dependent.
  double find_indices_tolerance = 1e-10;
  /// Contacts farther than this are ignored (φ > max_distance) [m]. The QP formulations can
  /// push on separated contacts (digest §10.9, the Fig. 3 artifact); keep it small.
  double max_distance = 1e-2;
  solvers::lcp::LemkeParameters lemke;
  /// LCP,∞'s modified PPM. Its tolerance (a z or w counts as negative below −tolerance ·
  /// max(1, ‖r‖∞), here m/s) is 1e-8 rather than the solver's 1e-10: the four-foot stance is
  /// degenerate (rank(N Γ_X Nᵀ) = 3, the unloaded fourth foot has w = 0 exactly), and noise of
  /// 1e-9 in ⁻v makes that w ≈ ±1e-9; below −1e-10 the warm-started basis is abandoned for
  /// another three feet (an O(1) torque jump, digest §10 item 11).
  solvers::lcp::PpmParameters ppm{.tolerance = 1e-8};
  solvers::qp::ConicQpParameters qp;
};

/// The problem at one control step (all at t₀). m velocities, n_q actuated, n contacts.
struct IdProblem {
  double time_step = 1e-3;   ///< Δt [s] > 0
  Eigen::MatrixXd M;         ///< m × m, symmetric positive definite [kg, kg·m, kg·m²]
  Eigen::VectorXd v;         ///< m: ⁻v [m/s, rad/s]
  /// m: every non-actuated, non-contact generalized force: gravity, Coriolis and centrifugal
  /// (−bias), damping, external forces [N, N·m].
  Eigen::VectorXd f_ext;
  /// n_q distinct velocity indices in [0, m), ascending: the rows of P.
  std::vector<int> actuated;
  /// n_q: q̇_des = P ⁻v + Δt q̈_des, the desired actuated velocities at t_f [m/s, rad/s].
  Eigen::VectorXd qdot_des;
  /// n × m each: contact i's rows map v to its normal (N, > 0 separating), first and second
  /// tangential (S, T) velocity [m/s]. The contact frame (t1, t2, n) is right-handed.
  Eigen::MatrixXd N, S, T;
  Eigen::VectorXd phi;  ///< n: signed distances at t₀ [m] (< 0: penetrating)
  Eigen::VectorXd mu;   ///< n: friction coefficients ≥ 0 (finite)

  int num_velocities() const { return static_cast<int>(v.size()); }
  int num_actuated() const { return static_cast<int>(actuated.size()); }
  int num_contacts() const { return static_cast<int>(phi.size()); }
  /// Resizes every field for m velocities, n_q actuated (actuated = 0 … n_q−1, to be set) and
  /// n contacts; contents zeroed. Allocation-free when the sizes are unchanged.
  void resize(int m, int nq, int n);
  /// Throws std::invalid_argument naming the field, the index and the value: sizes, non-finite
  /// entries, Δt ≤ 0, μ < 0, actuated indices out of range / repeated / unsorted, M not
  /// symmetric. (Positive definiteness is checked by the factorization in solve().)
  void validate() const;
};

enum class IdStatus {
  kSolved,        ///< every constraint holds; P ⁺v = q̇_des
  kInconsistent,  ///< LCP,∞: q̇_des is not reachable under no-slip; ⁺v is the closest
                  ///< feasible motion (§4.5 QP), tracking_residual says how far
  kInfeasible,    ///< no solution: e.g. the desired motion drives a contact into the ground
                  ///< with nothing able to stop it (message says which contact and by how much)
  kNotConverged,  ///< a solver hit its iteration limit; results are its last iterate
  kNumericalError,
};
const char* to_string(IdStatus status);

/// Figures of one solve.
struct IdStats {
  int contacts = 0;             ///< n (after the max_distance filter)
  int unactuated = 0;           ///< n_b = m − n_q
  int lcp_size = 0;             ///< LCP variables (LCP formulations)
  int solver_iterations = 0;    ///< PPM iterations / Lemke pivots / Stage I interior-point iterations
  int stage_two_iterations = 0; ///< Stage II interior-point iterations (0 if skipped or empty)
  int stage_two_dimension = 0;  ///< dimension of Stage I's null space searched by Stage II
  int kept_tangent_rows = 0;    ///< LCP,∞: |𝒮| + |𝒯| kept by FIND-INDICES
  bool warm_started = false;    ///< LCP,∞: the previous active set was used
  bool used_fallback = false;   ///< LCP,∞: Lemke after the PPM failed; or the consistency QP
  bool used_mindiff = false;
  int mindiff_leaves = 0;       ///< feasible leaves found by MINDIFF
  /// ‖P ⁺v − q̇_des‖∞ [m/s, rad/s] (0 up to round-off unless kInconsistent).
  double tracking_residual = 0.0;
  /// ‖M(⁺v − ⁻v) − Δt f_ext − Nᵀf_N − Sᵀf_S − Tᵀf_T − Pᵀι‖∞ [N·s].
  double dynamics_residual = 0.0;
  /// min_i (N ⁺v + φ/Δt)_i [m/s] (≥ 0 up to tolerance; +∞ without contacts).
  double min_normal_velocity = 0.0;
  /// max_i |f_N,i (N ⁺v + φ/Δt)_i| [N·m] (LCP formulations; the QP ones do not enforce it).
  double complementarity_residual = 0.0;
  /// No-slip formulations: ‖S ⁺v‖∞, ‖T ⁺v‖∞ over every contact, kept or not [m/s].
  double slip_residual = 0.0;
  double kinetic_energy = 0.0;  ///< ½ ⁺vᵀ M ⁺v [J]
  double solve_time = 0.0;      ///< wall time of solve() [s]
};

struct IdResults {
  IdStatus status = IdStatus::kNumericalError;
  Eigen::VectorXd tau;         ///< n_q: actuator forces τ = ι/Δt [N·m or N]
  Eigen::VectorXd v_next;      ///< m: ⁺v [m/s, rad/s]
  /// 3 per contact, [f_S, f_T, f_N]: impulses in contact i's frame (t1, t2, n) [N·s]; for the
  /// polygon formulations f_S = Σ_j f_F,j cos θ_j, f_T = Σ_j f_F,j sin θ_j.
  Eigen::VectorXd contact_impulses;
  /// LCP,μ: λ per contact (≈ sliding speed, > 0 only when sliding) [m/s]; empty otherwise.
  Eigen::VectorXd sliding_speed;
  /// Contacts with f_N > 0 (LCP,∞: the PPM's B̄, in entry order, which seeds the next warm
  /// start), ascending otherwise.
  std::vector<int> active_set;
  IdStats stats;
  /// Empty when solved; otherwise what failed, naming the contact or coordinate and the residual.
  std::string message;
  bool ok() const { return status == IdStatus::kSolved || status == IdStatus::kInconsistent; }
};

/// Solves IdProblems of one formulation, keeping warm-start data and buffers between calls.
class IdSolver {
 public:
  /// Throws std::invalid_argument for invalid parameters (friction_edges outside 3 … 64, negative
  /// tolerances, max_distance < 0 or NaN).
  explicit IdSolver(IdParameters parameters = {});
  ~IdSolver();
  IdSolver(IdSolver&&) noexcept;
  IdSolver& operator=(IdSolver&&) noexcept;

  const IdParameters& parameters() const;

  /// Solves `problem` into `results` (sized here; reuse one IdResults to stay allocation-free).
  /// Throws std::invalid_argument from IdProblem::validate() and when the unactuated block M_UU
  /// is not positive definite (naming its smallest pivot). Solver failures are not thrown: they
  /// are results.status with results.message. Never returns NaN.
  void solve(const IdProblem& problem, IdResults& results);
  /// Forgets the warm start (LCP,∞ active set, MINDIFF's previous solution).
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coulomb::inverse_dynamics
