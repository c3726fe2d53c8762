// The tracking controllers of Zapolsky & Drumwright §7.3–7.4 (controllers.h; digest
// ../shared/digests/inverse-dynamics.md §8.3): joint PID, ID with lagged sensed contact forces,
// and the four predictive ID(t_i) controllers, with the shared error feedback and the balance
// term.
//
// One update, before the step that starts at state.time (decimation 1):
//  1. the reference of the coming step;
//  2. e = θ_des − θ, ė = θ̇_des − θ̇ over the reference's actuated coordinates, ∫e dt (clamped);
//  3. the contacts the controller uses: predictive ID gathers the coming step's own contacts at
//     state.q (a CollisionWorld of the scene, as Simulator::step does, speculative margins
//     included when the simulator uses them); every other controller reads the last step's;
//  4. the balance torques τ_b (floating base, gains.balance): a PD wrench on the base realized by
//     compressive forces along the contact normals of the stance feet in contact (non-negative
//     least squares), τ_b = −Σ J_foot,aᵀ f;
//  5. the commands: PID through the simulator's implicit PD plus feed-forward ki ∫e + τ_b; ID
//     as pure feed-forward τ with q̈_des = θ̈_ref + kp e + kd ė + ki ∫e + q̈_b.
//
// Sign of the balance torques: f_i is the force the ground would exert on foot i (along the
// normal into the foot). With the foot held by the ground, the joint torques that make the leg
// press on the ground with −f_i (so that the ground answers with +f_i) balance that force
// statically: τ + J_aᵀ f_i = 0, i.e. τ = −J_aᵀ f_i. Its power −f_i · (J_a θ̇) is positive when the
// joints move the foot against f_i relative to the base: a stance leg extends and, the foot
// being held, the base rises — the ground pushing up on the feet pushes the base up.
//
// The balance accelerations of the ID controllers, q̈_b, are the accelerations τ_b produces with
// the feet in contact held: P Γ Pᵀ τ_b, Γ = M⁻¹ − M⁻¹J_cᵀ(J_c M⁻¹ J_cᵀ)⁻¹J_c M⁻¹ (J_c the held
// feet's point Jacobians), i.e. the legs' share of the base motion the wrench causes, about
// W/m_robot. Not M_aa⁻¹ τ_b (the actuated block of M: the acceleration of a *free* leg under
// τ_b): on the A1 that maps a 50 N virtual foot force to ~1300 rad/s² (the leg's inertia, not the
// robot's, resists it), a gain m_robot/m_leg too high, which made the balance term tip the robot
// over instead of righting it (ID(t_i)_{LCP,μ} fell after a 10 N·m pitching push with the
// balance on and not with it off; ID(t_i)_{QP,μ} after a 40 N·m one). With the constrained
// response the balance never made a push worse for the controllers that survive it
// (tests/control/controllers_test.cc).
//
// Allocation: everything update() writes is sized in the constructor (or, for InverseDynamics
// and the contact list, on the first steps with a given contact count), so that update() does
// not allocate after warm-up.
#include "coulomb/control/controllers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/frame_jacobian.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::control {

// ---------------------------------------------------------------------------------------------
// Names

namespace {

struct KindName {
  ControllerKind kind;
  const char* name;
  const char* label;
};
// In the paper's table order (all_controller_kinds()).
constexpr KindName kKindNames[] = {
    {ControllerKind::kIdQpCoulomb, "id-qp-mu", "ID(t_i)_{QP,μ}"},
    {ControllerKind::kIdQpNoSlip, "id-qp-inf", "ID(t_i)_{QP,∞}"},
    {ControllerKind::kIdLcpCoulomb, "id-lcp-mu", "ID(t_i)_{LCP,μ}"},
    {ControllerKind::kIdLcpNoSlip, "id-lcp-inf", "ID(t_i)_{LCP,∞}"},
    {ControllerKind::kPid, "pid", "PID"},
    {ControllerKind::kIdLagged1, "id-t-1", "ID(t_{i−1})"},
    {ControllerKind::kIdLagged2, "id-t-2", "ID(t_{i−2})"},
};

const KindName& kind_name(ControllerKind kind) {
  for (const KindName& k : kKindNames)
    if (k.kind == kind) return k;
  throw std::invalid_argument("ControllerKind: unknown value " + std::to_string(static_cast<int>(kind)));
}

}  // namespace

inverse_dynamics::Formulation id_formulation(ControllerKind kind, inverse_dynamics::Formulation otherwise) {
  switch (kind) {
    case ControllerKind::kIdLcpNoSlip: return inverse_dynamics::Formulation::kLcpNoSlip;
    case ControllerKind::kIdLcpCoulomb: return inverse_dynamics::Formulation::kLcpCoulomb;
    case ControllerKind::kIdQpCoulomb: return inverse_dynamics::Formulation::kQpCoulomb;
    case ControllerKind::kIdQpNoSlip: return inverse_dynamics::Formulation::kQpNoSlip;
    default: return otherwise;
  }
}

const char* to_string(ControllerKind kind) { return kind_name(kind).name; }

const char* paper_label(ControllerKind kind) { return kind_name(kind).label; }

ControllerKind parse_controller_kind(const std::string& name) {
  for (const KindName& k : kKindNames)
    if (name == k.name) return k.kind;
  std::string valid;
  for (const KindName& k : kKindNames) valid += std::string(valid.empty() ? "" : ", ") + k.name;
  throw std::invalid_argument("unknown controller '" + name + "' (valid: " + valid + ")");
}

const std::vector<ControllerKind>& all_controller_kinds() {
  static const std::vector<ControllerKind> kinds = [] {
    std::vector<ControllerKind> out;
    for (const KindName& k : kKindNames) out.push_back(k.kind);
    return out;
  }();
  return kinds;
}

bool is_predictive(ControllerKind kind) {
  return kind == ControllerKind::kIdLcpNoSlip || kind == ControllerKind::kIdLcpCoulomb ||
         kind == ControllerKind::kIdQpCoulomb || kind == ControllerKind::kIdQpNoSlip;
}

namespace {

bool is_id(ControllerKind kind) { return kind != ControllerKind::kPid; }

void check_gains(const ControlGains& g) {
  const std::pair<const char*, double> values[] = {
      {"kp", g.kp}, {"kd", g.kd}, {"ki", g.ki}, {"kp_accel", g.kp_accel}, {"kd_accel", g.kd_accel},
      {"ki_accel", g.ki_accel}, {"integral_limit", g.integral_limit}, {"balance_kp_height", g.balance_kp_height},
      {"balance_kd_height", g.balance_kd_height}, {"balance_kp_tilt", g.balance_kp_tilt},
      {"balance_kd_tilt", g.balance_kd_tilt}, {"balance_kd_horizontal", g.balance_kd_horizontal}};
  for (const auto& [name, value] : values)
    if (!std::isfinite(value) || value < 0.0)
      throw std::invalid_argument(std::string("TrackingController: gain ") + name + " = " + std::to_string(value) +
                                  " (must be finite and >= 0)");
}

/// The largest foot count solved by enumerating active sets (2^k subsets); more feet use
/// projected Gauss–Seidel.
constexpr int kMaxEnumeratedFeet = 4;
using SmallMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxEnumeratedFeet, kMaxEnumeratedFeet>;
using SmallVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxEnumeratedFeet, 1>;

}  // namespace

// ---------------------------------------------------------------------------------------------
// TrackingController

struct TrackingController::Impl {
  const simulation::Simulator* sim = nullptr;
  const multibody::Model* model = nullptr;
  ControlGains gains;
  double dt = 0.0;
  int na = 0;  ///< actuated coordinates of the reference
  std::vector<int> actuated;  ///< their velocity indices (ascending)
  std::vector<int> q_index;   ///< their configuration indices
  std::vector<int> actuator;  ///< their scene actuator indices
  /// The floating root of the robot (−1: welded base, no balance term).
  int base_body = -1;
  // Feet (reference_->feet()): body and position in the body.
  std::vector<int> foot_body;
  std::vector<math::Vector3> p_BF;

  multibody::Workspace ws;
  // QP in the desired base frame (ControlGains::qp_desired_base_frame).
  multibody::Workspace ws_shift;
  Eigen::VectorXd v_shift, bias_true, f_shift;
  // Predictive ID: the coming step's contacts.
  std::unique_ptr<geometry::CollisionWorld> world;
  bool speculative = false;
  contact::ContactSet contacts;
  contact::ContactSet no_contacts;
  std::unique_ptr<inverse_dynamics::InverseDynamics> id;

  // Error feedback.
  Eigen::VectorXd e, edot, integral, qdd, tau_b, tau_prev;
  // Lagged ID: the generalized contact forces of the last step and of the one before.
  Eigen::VectorXd gcf_lag, gcf_previous;
  long long previous_step = -2;  ///< sim step count at the update that recorded gcf_previous (−2: none)
  bool previous_valid = false;

  // Balance scratch.
  std::vector<int> foot_contact;        ///< per foot: contacts seen this step
  std::vector<math::Vector3> foot_normal;  ///< per foot: Σ contact normals into the foot
  std::vector<int> active;              ///< feet in stance and in contact
  Eigen::MatrixXd A;                    ///< 5 × feet: wrench per unit normal force
  Eigen::VectorXd w;                    ///< 5: desired wrench (weighted)
  Eigen::MatrixXd H;                    ///< feet × feet: AᵀA + εI
  Eigen::VectorXd g, lambda;            ///< feet
  Eigen::MatrixXd J_foot;               ///< 3 × n_v
  Eigen::VectorXd qdd_balance;          ///< n_a
  // The constrained response (constrained_response), sized in the constructor: M's factor,
  // n_v vectors, and per count k of held feet J_c (3k × n_v), M⁻¹J_cᵀ, J_c M⁻¹ J_cᵀ, its factor.
  Eigen::LLT<Eigen::MatrixXd> M_llt;
  Eigen::VectorXd u, tau_v;
  std::vector<char> in_held_leg;  ///< per velocity: on the path from a held foot to the root
  std::vector<Eigen::MatrixXd> Jc, MinvJt, S;
  std::vector<Eigen::LDLT<Eigen::MatrixXd>> S_ldlt;
  std::vector<Eigen::VectorXd> y, z;

  /// q̈_b: the actuated accelerations that τ_b produces with the feet in contact held,
  /// P Γ Pᵀ τ_b with Γ = M⁻¹ − M⁻¹J_cᵀ (J_c M⁻¹ J_cᵀ)⁻¹ J_c M⁻¹ (J_c: the held feet's point
  /// Jacobians), kept on the held legs' joints (zero elsewhere: a swing leg is tracked relative
  /// to the base). Needs ws.X_PB / X_WB at the state.
  void constrained_response() {
    const Eigen::MatrixXd& M = multibody::crba_from_joint_poses(*model, ws);
    M_llt.compute(M);
    tau_v.setZero();
    for (int j = 0; j < na; ++j) tau_v[actuated[j]] = tau_b[j];
    u = M_llt.solve(tau_v);
    std::fill(in_held_leg.begin(), in_held_leg.end(), 0);
    const int held = held_count();
    int k = 0;
    for (size_t f = 0; f < foot_body.size(); ++f) {
      if (foot_contact[f] == 0) continue;
      multibody::point_jacobian(*model, ws, foot_body[f], p_BF[f], Jc[held].middleRows(3 * k, 3));
      ++k;
      for (int b = foot_body[f]; b > 0; b = model->body(b).parent) {
        const multibody::Joint& j = model->body(b).joint;
        for (int c = 0; c < j.nv; ++c) in_held_leg[j.v_index + c] = 1;
      }
    }
    if (k > 0) {
      MinvJt[k] = M_llt.solve(Jc[k].transpose());
      S[k].noalias() = Jc[k] * MinvJt[k];
      S[k].diagonal().array() += 1e-10 * S[k].diagonal().maxCoeff();
      S_ldlt[k].compute(S[k]);
      y[k].noalias() = Jc[k] * u;
      z[k] = S_ldlt[k].solve(y[k]);
      u.noalias() -= MinvJt[k] * z[k];
    }
    for (int j = 0; j < na; ++j) qdd_balance[j] = in_held_leg[actuated[j]] ? u[actuated[j]] : 0.0;
  }
  /// Feet in contact this step.
  int held_count() const {
    int k = 0;
    for (int c : foot_contact) k += c > 0;
    return k;
  }

  explicit Impl(const simulation::Simulator& s) : sim(&s), model(&s.model()), ws(s.model()), ws_shift(s.model()) {}

  /// Feet in contact that the desired motion drives into the ground (n·v_foot < 0 after the
  /// step with q̇_des = q̇ + δt q̈_des and the base's velocity unchanged): their leg's q̈_des is
  /// corrected by the least-norm joint acceleration that stops the foot's normal approach. Rigid
  /// inverse dynamics would otherwise keep the leg moving and lift the whole robot off the foot
  /// within one step: at a trot touchdown on the A1 that is 13.7 kg × 0.4 m/s in 1 ms, a
  /// predicted 3000–5000 N the actuators (33.5 N·m) cannot give.
  void consistent_touchdowns(const JointReference& ref, const Eigen::VectorXd& v, double approach_speed) {
    for (size_t f = 0; f < foot_body.size(); ++f) {
      if (foot_contact[f] == 0) continue;
      if (f < ref.stance.size() && ref.stance[f] == 0) continue;
      const double nn = foot_normal[f].norm();
      if (nn == 0.0) continue;
      const math::Vector3 n = foot_normal[f] / nn;
      multibody::point_jacobian(*model, ws, foot_body[f], p_BF[f], J_foot);
      double vn = n.dot(J_foot * v);
      int k = 0;
      for (size_t j = 0; j < actuated.size(); ++j) {
        const Eigen::Vector3d col = J_foot.col(actuated[j]);
        vn += dt * n.dot(col) * qdd[j];
        if (col.squaredNorm() > 1e-16 && k < kMaxLegJoints) {
          leg_columns(k) = static_cast<int>(j);
          J_leg.col(k++) = col;
        }
      }
      // Approaches slower than approach_speed are left alone: a standing foot's slight approach
      // is the stance's business (LCP,μ lost the A1's balance standing when every foot was
      // corrected every step).
      if (vn >= -approach_speed || k == 0) continue;
      // Least-norm δ with n·(J_leg δ) = −vn: δ = J_legᵀ n (−vn) / ‖J_legᵀ n‖².
      Eigen::Matrix<double, kMaxLegJoints, 1> g = Eigen::Matrix<double, kMaxLegJoints, 1>::Zero();
      g.head(k) = J_leg.leftCols(k).transpose() * n;
      const double gg = g.head(k).squaredNorm();
      if (gg < 1e-16) continue;
      for (int c = 0; c < k; ++c) qdd[leg_columns(c)] += g(c) * (-vn) / (gg * dt);
    }
  }
  static constexpr int kMaxLegJoints = 8;
  Eigen::Matrix<double, 3, kMaxLegJoints> J_leg;
  Eigen::Matrix<int, kMaxLegJoints, 1> leg_columns;

  template <typename ContactRange>
  void mark_feet(const ContactRange& range) {
    std::fill(foot_contact.begin(), foot_contact.end(), 0);
    for (math::Vector3& n : foot_normal) n.setZero();
    for (const auto& c : range) {
      for (size_t f = 0; f < foot_body.size(); ++f) {
        if (c.body_b == foot_body[f] && c.body_a != foot_body[f]) {
          ++foot_contact[f];
          foot_normal[f] += c.n_W;  // the normal points from A into B = into the foot
        } else if (c.body_a == foot_body[f] && c.body_b != foot_body[f]) {
          ++foot_contact[f];
          foot_normal[f] -= c.n_W;
        }
      }
    }
  }

  /// Non-negative least squares min ‖A λ − w‖² + ε‖λ‖², λ ≥ 0, over the first k columns of A.
  void solve_nnls(int k) {
    H.topLeftCorner(k, k).noalias() = A.leftCols(k).transpose() * A.leftCols(k);
    const double eps = 1e-8 * std::max(1e-12, H.topLeftCorner(k, k).trace() / k);
    H.topLeftCorner(k, k).diagonal().array() += eps;
    g.head(k).noalias() = A.leftCols(k).transpose() * w;
    lambda.head(k).setZero();
    if (k <= kMaxEnumeratedFeet) {
      // Every active set: the restricted unconstrained minimizer, kept when non-negative; the
      // best of them is the NNLS solution (the problem is strictly convex).
      double best = 0.0;  // objective ½λᵀHλ − gᵀλ of λ = 0
      SmallMatrix Hs;
      SmallVector gs, xs;
      int idx[kMaxEnumeratedFeet];
      for (int mask = 1; mask < (1 << k); ++mask) {
        int m = 0;
        for (int i = 0; i < k; ++i)
          if (mask & (1 << i)) idx[m++] = i;
        Hs.resize(m, m);
        gs.resize(m);
        for (int r = 0; r < m; ++r) {
          gs[r] = g[idx[r]];
          for (int c = 0; c < m; ++c) Hs(r, c) = H(idx[r], idx[c]);
        }
        Eigen::LLT<SmallMatrix> llt(Hs);
        if (llt.info() != Eigen::Success) continue;
        xs = llt.solve(gs);
        if ((xs.array() < 0.0).any()) continue;
        const double objective = -0.5 * gs.dot(xs);  // at the restricted optimum
        if (objective < best) {
          best = objective;
          lambda.head(k).setZero();
          for (int r = 0; r < m; ++r) lambda[idx[r]] = xs[r];
        }
      }
    } else {
      // Projected Gauss–Seidel on the normal equations (H is SPD: converges).
      for (int it = 0; it < 500; ++it) {
        double change = 0.0;
        for (int i = 0; i < k; ++i) {
          const double r = g[i] - H.row(i).head(k).dot(lambda.head(k));
          const double next = std::max(0.0, lambda[i] + r / H(i, i));
          change = std::max(change, std::abs(next - lambda[i]));
          lambda[i] = next;
        }
        if (change <= 1e-12 * (1.0 + lambda.head(k).cwiseAbs().maxCoeff())) break;
      }
    }
  }
};

TrackingController::TrackingController(const simulation::Simulator& sim, std::shared_ptr<ReferenceGenerator> reference,
                                       ControllerKind kind, ControlGains gains, inverse_dynamics::IdParameters id)
    : kind_(kind), reference_(std::move(reference)), impl_(std::make_unique<Impl>(sim)) {
  if (!reference_) throw std::invalid_argument("TrackingController: the reference generator is null");
  kind_name(kind);  // validates the enum value
  check_gains(gains);
  Impl& d = *impl_;
  const multibody::Model& model = sim.model();
  const scene::Scene& scene = sim.scene();
  d.gains = gains;
  d.dt = sim.parameters().time_step;

  // Actuated coordinates: velocity index → configuration index and scene actuator.
  d.actuated = reference_->actuated();
  d.na = static_cast<int>(d.actuated.size());
  for (int k = 0; k < d.na; ++k) {
    const int v = d.actuated[k];
    if (v < 0 || v >= model.nv())
      throw std::invalid_argument("TrackingController: the reference's actuated velocity index " + std::to_string(v) +
                                  " is outside [0, " + std::to_string(model.nv()) + ")");
    if (k > 0 && v <= d.actuated[k - 1])
      throw std::invalid_argument("TrackingController: the reference's actuated coordinates must be distinct and "
                                  "ascending (" + model.dof_names()[v] + ")");
    int qi = -1;
    for (int b = 1; b < model.num_bodies(); ++b) {
      const multibody::Joint& j = model.body(b).joint;
      if (j.nv == 1 && j.v_index == v) qi = j.q_index;
    }
    if (qi < 0)
      throw std::invalid_argument("TrackingController: the reference's coordinate " + model.dof_names()[v] +
                                  " is not a 1-dof joint");
    d.q_index.push_back(qi);
    int a = -1;
    for (size_t i = 0; i < scene.actuators.size(); ++i)
      if (scene.actuators[i].v_index == v) a = static_cast<int>(i);
    if (a < 0)
      throw std::invalid_argument("TrackingController: the reference's coordinate " + model.dof_names()[v] +
                                  " has no actuator in the scene");
    d.actuator.push_back(a);
  }

  // The floating root of the robot the reference actuates (the balance term's base).
  if (d.na > 0) {
    for (int b = 1; b < model.num_bodies(); ++b) {
      const multibody::Joint& j = model.body(b).joint;
      if (j.nv == 1 && j.v_index == d.actuated[0]) {
        const int root = model.body(b).tree;
        if (root > 0 && model.body(root).joint.type == multibody::JointType::kFloating) d.base_body = root;
      }
    }
  }
  for (int f : reference_->feet()) {
    if (f < 0 || f >= static_cast<int>(model.frames().size()))
      throw std::invalid_argument("TrackingController: the reference's foot frame " + std::to_string(f) +
                                  " is not a frame of the model");
    d.foot_body.push_back(model.frame(f).body);
    d.p_BF.push_back(model.frame(f).X_BF.p);
  }
  const int nf = static_cast<int>(d.foot_body.size());
  d.foot_contact.assign(nf, 0);
  d.foot_normal.assign(nf, math::Vector3::Zero());
  d.active.reserve(nf);
  d.A.setZero(5, std::max(nf, 1));
  d.w.setZero(5);
  d.H.setZero(std::max(nf, 1), std::max(nf, 1));
  d.g.setZero(std::max(nf, 1));
  d.lambda.setZero(std::max(nf, 1));
  d.J_foot.setZero(3, model.nv());

  d.e.setZero(d.na);
  d.edot.setZero(d.na);
  d.integral.setZero(d.na);
  d.qdd.setZero(d.na);
  d.tau_b.setZero(d.na);
  d.tau_prev.setZero(d.na);
  d.qdd_balance.setZero(d.na);
  d.gcf_lag.setZero(model.nv());
  d.gcf_previous.setZero(model.nv());
  d.u.setZero(model.nv());
  d.tau_v.setZero(model.nv());
  d.in_held_leg.assign(model.nv(), 0);
  d.M_llt.compute(Eigen::MatrixXd::Identity(model.nv(), model.nv()));
  for (int k = 0; k <= nf; ++k) {
    d.Jc.push_back(Eigen::MatrixXd::Zero(3 * k, model.nv()));
    d.MinvJt.push_back(Eigen::MatrixXd::Zero(model.nv(), 3 * k));
    d.S.push_back(Eigen::MatrixXd::Identity(3 * k, 3 * k));
    d.S_ldlt.emplace_back(d.S.back());
    d.y.push_back(Eigen::VectorXd::Zero(3 * k));
    d.z.push_back(Eigen::VectorXd::Zero(3 * k));
  }

  if (is_id(kind)) {
    id.formulation = id_formulation(kind, id.formulation);
    d.id = std::make_unique<inverse_dynamics::InverseDynamics>(model, d.actuated, id);
  }
  if (is_predictive(kind)) {
    d.world = std::make_unique<geometry::CollisionWorld>(model, scene.geometries, scene.collision);
    d.speculative = sim.parameters().speculative_contact || scene.collision.speculative;
    d.contacts.contacts.reserve(64);
  }

  info_.tau.setZero(d.na);
  info_.predicted_normal_impulse = std::numeric_limits<double>::quiet_NaN();
  ref_.q.setZero(d.na);
  ref_.v.setZero(d.na);
  ref_.vdot.setZero(d.na);
  ref_.stance.assign(nf, 1);
}

TrackingController::~TrackingController() = default;

void TrackingController::update(const simulation::State& state, const simulation::StepResults& last,
                                simulation::Commands& commands) {
  const auto start = std::chrono::steady_clock::now();
  Impl& d = *impl_;
  const multibody::Model& model = *d.model;
  const ControlGains& gains = d.gains;
  const int na = d.na;

  // 1. The reference of the coming step.
  reference_->update(state, last, ref_);
  if (ref_.q.size() != na || ref_.v.size() != na || ref_.vdot.size() != na)
    throw std::logic_error("TrackingController: the reference generator filled q, v, vdot with " +
                           std::to_string(ref_.q.size()) + ", " + std::to_string(ref_.v.size()) + ", " +
                           std::to_string(ref_.vdot.size()) + " entries for " + std::to_string(na) +
                           " actuated coordinates");

  // 2. Error feedback.
  for (int j = 0; j < na; ++j) {
    d.e[j] = ref_.q[j] - state.q[d.q_index[j]];
    d.edot[j] = ref_.v[j] - state.v[d.actuated[j]];
    d.integral[j] = std::clamp(d.integral[j] + d.e[j] * d.dt, -gains.integral_limit, gains.integral_limit);
  }

  // 3. Kinematics at the state and the contacts the controller uses.
  multibody::forward_kinematics(model, d.ws, state.q, state.v);
  if (is_predictive(kind_)) {
    // The coming step gathers its contacts at q₀ = state.q: the same gather here.
    if (d.speculative) d.world->set_speculative_margins(d.ws, d.dt);
    d.world->update_poses(d.ws);
    contact::gather_contacts(*d.world, d.sim->scene().contact, d.contacts);
    // Feet the plan has in swing leave the ground in this step: their contacts are left out of
    // the prediction (as PACER passes only the active end effectors). The QP models have no
    // complementarity, so a lifting foot kept in the set may be given load it will not carry:
    // on the A1 at liftoff QP,μ predicted 73 N where the simulator applied 19 N, and the swing
    // legs, driven by torques computed for that load, did not lift.
    if (!ref_.stance.empty()) {
      auto in_swing = [&](int body) {
        for (size_t f = 0; f < d.foot_body.size() && f < ref_.stance.size(); ++f)
          if (d.foot_body[f] == body && ref_.stance[f] == 0) return true;
        return false;
      };
      std::vector<contact::Contact>& cs = d.contacts.contacts;
      cs.erase(std::remove_if(cs.begin(), cs.end(),
                              [&](const contact::Contact& c) { return in_swing(c.body_a) || in_swing(c.body_b); }),
               cs.end());
    }
    // φ ≥ 0: the ID's rigid contact reads an overlap −φ as a push-out N ⁺v ≥ −φ/Δt the ground will
    // make within one step. A compliant ground's static sink (1 mm on the compliant terrains) is
    // then 1 m/s of predicted push-out at Δt = 1 ms; every predictive controller fell within
    // 0.7 s on compliant ground before this (docs/inverse-dynamics-forward-check.md, "phi>=0").
    for (contact::Contact& c : d.contacts.contacts) c.phi = std::max(c.phi, 0.0);
    d.mark_feet(d.contacts.contacts);
    info_.contacts = d.contacts.size();
  } else {
    d.mark_feet(last.contacts);
    info_.contacts = static_cast<int>(last.contacts.size());
  }

  // 4. Balance: a PD wrench on the base realized by compressive normal forces at the stance
  // feet in contact.
  d.tau_b.setZero();
  bool balancing = false;
  if (gains.balance && ref_.has_base && d.base_body > 0 && !d.foot_body.empty()) {
    d.active.clear();
    for (size_t f = 0; f < d.foot_body.size(); ++f) {
      const bool stance = f >= ref_.stance.size() || ref_.stance[f] != 0;
      if (stance && d.foot_contact[f] > 0) d.active.push_back(static_cast<int>(f));
    }
    if (!d.active.empty()) {
      const math::Transform& X_WB = d.ws.X_WB[d.base_body];
      const math::SpatialMotion& V_B = d.ws.V_B[d.base_body];
      const math::Vector3 omega = X_WB.R * V_B.w, vel = X_WB.R * V_B.v;
      // Desired wrench on the base (world frame, moments about the base origin).
      math::Vector3 force;
      force.x() = gains.balance_kd_horizontal * (ref_.v_WB.x() - vel.x());
      force.y() = gains.balance_kd_horizontal * (ref_.v_WB.y() - vel.y());
      force.z() = gains.balance_kp_height * (ref_.p_WB.z() - X_WB.p.z()) +
                  gains.balance_kd_height * (ref_.v_WB.z() - vel.z());
      // Tilt: the rotation taking the base's z axis to the world vertical (roll = pitch = 0 at
      // any heading, the reference's yaw included).
      const math::Vector3 z_B = X_WB.R.col(2);
      const math::Vector3 axis = z_B.cross(math::Vector3::UnitZ());
      const double s = axis.norm(), angle = std::atan2(s, z_B.z());
      const math::Vector3 tilt = s > 1e-12 ? math::Vector3(axis * (angle / s)) : math::Vector3::Zero();
      const double mx = gains.balance_kp_tilt * tilt.x() - gains.balance_kd_tilt * omega.x();
      const double my = gains.balance_kp_tilt * tilt.y() - gains.balance_kd_tilt * omega.y();
      // Moments weighted by 1/ℓ (ℓ: the feet's mean distance from the base) to compare with forces.
      const int k = static_cast<int>(d.active.size());
      double ell = 0.0;
      for (int i = 0; i < k; ++i) {
        const int f = d.active[i];
        ell += (d.ws.X_WB[d.foot_body[f]].act(d.p_BF[f]) - X_WB.p).norm() / k;
      }
      ell = std::max(ell, 0.05);
      d.w << force, mx / ell, my / ell;
      for (int i = 0; i < k; ++i) {
        const int f = d.active[i];
        math::Vector3 n = d.foot_normal[f];
        const double nn = n.norm();
        n = nn > 1e-12 ? math::Vector3(n / nn) : math::Vector3::UnitZ();
        d.foot_normal[f] = n;
        const math::Vector3 r = d.ws.X_WB[d.foot_body[f]].act(d.p_BF[f]) - X_WB.p;
        const math::Vector3 m = r.cross(n);
        d.A.col(i) << n, m.x() / ell, m.y() / ell;
      }
      d.solve_nnls(k);
      for (int i = 0; i < k; ++i) {
        const int f = d.active[i];
        if (!(d.lambda[i] > 0.0)) continue;
        multibody::point_jacobian(model, d.ws, d.foot_body[f], d.p_BF[f], d.J_foot);
        const math::Vector3 force_i = d.lambda[i] * d.foot_normal[f];
        for (int j = 0; j < na; ++j) d.tau_b[j] -= force_i.dot(d.J_foot.col(d.actuated[j]));
      }
      balancing = true;
    }
  }

  // 5. Commands.
  info_.time = state.time;
  if (kind_ == ControllerKind::kPid) {
    for (int j = 0; j < na; ++j) {
      const int a = d.actuator[j];
      commands.q_target[a] = ref_.q[j];
      commands.v_target[a] = ref_.v[j];
      commands.kp[a] = gains.kp;
      commands.kd[a] = gains.kd;
      info_.tau[j] = gains.ki * d.integral[j] + d.tau_b[j];
      commands.actuation[a] = info_.tau[j];
    }
    info_.predicted_normal_impulse = std::numeric_limits<double>::quiet_NaN();
    info_.id_status = inverse_dynamics::IdStatus::kSolved;
  } else {
    for (int j = 0; j < na; ++j)
      d.qdd[j] = ref_.vdot[j] + gains.kp_accel * d.e[j] + gains.kd_accel * d.edot[j] + gains.ki_accel * d.integral[j];
    if (balancing) {
      d.constrained_response();
      d.qdd += d.qdd_balance;
    }
    const inverse_dynamics::IdResults* r = nullptr;
    if (is_predictive(kind_) && gains.touchdown_consistency)
      d.consistent_touchdowns(ref_, state.v, gains.touchdown_approach_speed);
    const bool shifted = gains.qp_desired_base_frame && ref_.has_base && d.base_body > 0 &&
                         (kind_ == ControllerKind::kIdQpCoulomb || kind_ == ControllerKind::kIdQpNoSlip);
    if (is_predictive(kind_) && shifted) {
      // Stage I's maximal dissipation measured in the frame that moves with the desired base
      // motion (a Galilean change of frame): v' = v − v_ref, with v_ref the desired base twist
      // (joints unchanged), φ' = φ + Δt n·v_ref(p) so that N ⁺v ≥ −φ/Δt is the same constraint,
      // and the Coriolis forces kept at the true v through the external forces.
      const multibody::Body& base = model.body(d.base_body);
      const int b0 = base.joint.v_index;
      const math::Transform& X_WB = d.ws.X_WB[d.base_body];
      const math::Vector3 w_ref(0.0, 0.0, ref_.yaw_rate);
      const math::Vector3 v_ref = ref_.v_WB;
      d.v_shift = state.v;
      d.v_shift.segment<3>(b0) -= w_ref;
      d.v_shift.segment<3>(b0 + 3) -= v_ref;
      auto moves = [&](int b) {  // b is in the subtree of the base: shifted with it
        for (; b > 0; b = model.body(b).parent)
          if (b == d.base_body) return 1.0;
        return 0.0;
      };
      for (contact::Contact& c : d.contacts.contacts)
        c.phi += d.dt * c.n_W.dot(v_ref + w_ref.cross(c.p_W - X_WB.p)) * (moves(c.body_b) - moves(c.body_a));
      d.bias_true = multibody::bias_forces(model, d.ws_shift, state.q, state.v);
      d.f_shift = multibody::bias_forces(model, d.ws_shift, state.q, d.v_shift);
      d.f_shift -= d.bias_true;
      d.id->set_external_forces(d.f_shift);
      r = &d.id->solve(state.q, d.v_shift, d.qdd, d.dt, d.contacts);
    } else if (is_predictive(kind_)) {
      r = &d.id->solve(state.q, state.v, d.qdd, d.dt, d.contacts);
    }
    if (is_predictive(kind_)) {
      double sum = 0.0;
      for (int i = 0; i < d.contacts.size(); ++i) sum += r->contact_impulses[3 * i + 2];
      info_.predicted_normal_impulse = sum;
    } else {
      // ID(t_{i−k}): the generalized contact forces of the step k steps before as known forces.
      const long long step = d.sim->step_count();
      const bool last_valid = step >= 1 && last.generalized_contact_forces.size() == model.nv();
      if (kind_ == ControllerKind::kIdLagged1) {
        if (last_valid)
          d.gcf_lag = last.generalized_contact_forces;
        else
          d.gcf_lag.setZero();
      } else {
        if (d.previous_valid && d.previous_step == step - 1)
          d.gcf_lag = d.gcf_previous;
        else
          d.gcf_lag.setZero();
        d.previous_valid = last_valid;
        d.previous_step = step;
        if (last_valid) d.gcf_previous = last.generalized_contact_forces;
      }
      d.id->set_external_forces(d.gcf_lag);
      r = &d.id->solve(state.q, state.v, d.qdd, d.dt, d.no_contacts);
      info_.predicted_normal_impulse = std::numeric_limits<double>::quiet_NaN();
    }
    info_.id_status = r->status;
    // A failed solve's τ is still commanded when finite (status in info); else the previous τ.
    if (r->tau.size() == na && r->tau.allFinite()) d.tau_prev = r->tau;
    info_.tau = d.tau_prev;
    for (int j = 0; j < na; ++j) {
      const int a = d.actuator[j];
      commands.kp[a] = gains.id_torque_feedback ? gains.kp : 0.0;
      commands.kd[a] = gains.id_torque_feedback ? gains.kd : 0.0;
      commands.q_target[a] = ref_.q[j];
      commands.v_target[a] = ref_.v[j];
      commands.actuation[a] = info_.tau[j];
    }
  }
  info_.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace coulomb::control
