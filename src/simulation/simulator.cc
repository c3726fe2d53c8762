#include "coulomb/simulation/simulator.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include <Eigen/Cholesky>

#include "coulomb/multibody/configuration.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/frame_jacobian.h"
#include "coulomb/multibody/momentum.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_hunt_crossley_constraint.h"
#include "coulomb/solvers/sap/sap_limit_constraint.h"
#include "coulomb/solvers/sap/sap_pd_controller_constraint.h"
#include "linalg/dense_kernels.h"

namespace coulomb::simulation {

namespace sap = solvers::sap;
constexpr double kInf = std::numeric_limits<double>::infinity();

namespace {
// Whether a joint gets a limit constraint: one velocity, lower < upper, some limit finite.
bool has_limit_constraint(const multibody::Joint& j) {
  return j.nv == 1 && j.limits.lower < j.limits.upper && (std::isfinite(j.limits.lower) || std::isfinite(j.limits.upper));
}
}  // namespace

const char* to_string(Integrator integrator) {
  switch (integrator) {
    case Integrator::kImplicitEuler: return "implicit-euler";
    case Integrator::kSymplecticEuler: return "symplectic-euler";
    case Integrator::kMidpoint: return "midpoint";
  }
  return "unknown";
}

const char* to_string(Solver solver) { return solver == Solver::kSap ? "sap" : "lstable"; }

Solver parse_solver(const std::string& name) {
  if (name == "sap") return Solver::kSap;
  if (name == "lstable") return Solver::kLStable;
  throw std::invalid_argument("unknown solver '" + name + "' (sap, lstable)");
}

Integrator parse_integrator(const std::string& name) {
  if (name == "implicit-euler") return Integrator::kImplicitEuler;
  if (name == "symplectic-euler") return Integrator::kSymplecticEuler;
  if (name == "midpoint") return Integrator::kMidpoint;
  throw std::invalid_argument("unknown integrator '" + name + "' (expected implicit-euler, symplectic-euler or midpoint)");
}

const char* to_string(ContactRegion region) {
  switch (region) {
    case ContactRegion::kNoContact: return "no_contact";
    case ContactRegion::kStiction: return "stiction";
    case ContactRegion::kSliding: return "sliding";
  }
  return "unknown";
}

Theta theta_of(Integrator integrator) {
  switch (integrator) {
    case Integrator::kImplicitEuler: return {1.0, 1.0};
    case Integrator::kSymplecticEuler: return {0.0, 1.0};
    case Integrator::kMidpoint: return {0.5, 0.5};
  }
  return {};
}

Simulator::Simulator(scene::Scene scene, SimulatorParameters parameters)
    : scene_(std::move(scene)),
      parameters_(parameters),
      theta_(theta_of(parameters.integrator)),
      world_(scene_.model, scene_.geometries, scene_.collision),
      ws_(scene_.model),
      lstable_(parameters.lstable),
      solver_(parameters.sap) {
  const multibody::Model& model = scene_.model;
  if (!(parameters_.time_step > 0.0) || !std::isfinite(parameters_.time_step))
    throw std::invalid_argument("simulator: time step must be > 0, got " + std::to_string(parameters_.time_step));
  if (!(parameters_.joint_limit_window >= 0.0))
    throw std::invalid_argument("simulator: joint_limit_window must be >= 0 (or +inf), got " +
                                std::to_string(parameters_.joint_limit_window));
  model.check_configuration(scene_.q0);
  model.check_velocity(scene_.v0, "v0");
  if (const std::optional<scene::InitialDynamicsProblem> problem = scene::check_initial_dynamics(scene_))
    throw std::invalid_argument("simulator: " + problem->message);
  state_.q = scene_.q0;
  state_.v = scene_.v0;
  trees_ = contact::tree_ranges(model);
  tree_of_root_.assign(model.num_bodies(), -1);
  for (size_t t = 0; t < trees_.size(); ++t) tree_of_root_[trees_[t].root] = static_cast<int>(t);
  damping_ = model.damping();
  stiffness_ = Eigen::VectorXd::Zero(model.nv());
  rest_ = Eigen::VectorXd::Zero(model.nv());
  for (const scene::JointSpring& s : scene_.springs) {
    stiffness_[s.v_index] += s.stiffness;
    damping_[s.v_index] += s.damping;
    rest_[s.v_index] = s.rest_position;
  }
  contact_impulses_.resize(0);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& j = model.body(b).joint;
    if (j.type == multibody::JointType::kFloating && model.body(b).parent == 0) floating_roots_.push_back({j.q_index, j.v_index});
  }
  // Velocity index → (tree, index within the tree).
  tree_of_velocity_.assign(model.nv(), -1);
  local_of_velocity_.assign(model.nv(), 0);
  for (size_t t = 0; t < trees_.size(); ++t)
    for (int k = 0; k < trees_[t].nv; ++k) {
      tree_of_velocity_[trees_[t].v_start + k] = static_cast<int>(t);
      local_of_velocity_[trees_[t].v_start + k] = k;
    }
  // Commands start as the scene sets them.
  const int na = num_actuators();
  commands_.actuation = Eigen::VectorXd::Zero(na);
  commands_.q_target.resize(na);
  commands_.v_target.resize(na);
  commands_.kp.resize(na);
  commands_.kd.resize(na);
  for (int i = 0; i < na; ++i) {
    const scene::Actuator& a = scene_.actuators[i];
    if (a.v_index < 0 || a.v_index >= model.nv())
      throw std::invalid_argument("simulator: actuator on joint '" + a.joint + "' has velocity index " +
                                  std::to_string(a.v_index) + " outside 0 … " + std::to_string(model.nv() - 1));
    commands_.q_target[i] = a.q_target;
    commands_.v_target[i] = a.v_target;
    commands_.kp[i] = a.kp;
    commands_.kd[i] = a.kd;
  }
  check_commands(commands_);
  for (const scene::Coupler& c : scene_.couplers)
    if (c.v_index < 0 || c.v_index >= model.nv() || c.leader_v_index < 0 || c.leader_v_index >= model.nv() ||
        c.v_index == c.leader_v_index || tree_of_velocity_[c.v_index] != tree_of_velocity_[c.leader_v_index])
      throw std::invalid_argument("simulator: coupler on joint '" + c.joint + "' has invalid velocity indices (the two joints must differ and move in one tree)");
  for (const scene::JointFriction& f : scene_.joint_frictions)
    if (f.v_index < 0 || f.v_index >= model.nv() || !(f.friction >= 0.0) || !std::isfinite(f.friction))
      throw std::invalid_argument("simulator: joint friction on '" + f.joint + "' is invalid (friction " +
                                  std::to_string(f.friction) + ")");
  // Bilateral constraints (Scene::constraints): checked here as well, since scenes can be built
  // in code; their Jacobian buffers and results are sized once.
  for (size_t i = 0; i < scene_.constraints.size(); ++i) {
    const scene::BilateralConstraint& c = scene_.constraints[i];
    const std::string what = "simulator: constraint '" + c.name + "' (" + scene::to_string(c.type) + ")";
    if (c.body_a < 0 || c.body_a >= model.num_bodies() || c.body_b < 0 || c.body_b >= model.num_bodies())
      throw std::invalid_argument(what + ": body index outside 0 … " + std::to_string(model.num_bodies() - 1) +
                                  " (body_a " + std::to_string(c.body_a) + ", body_b " + std::to_string(c.body_b) + ")");
    if (c.body_a == c.body_b)
      throw std::invalid_argument(what + ": body_a and body_b are the same body ('" + model.body(c.body_a).name + "')");
    if (!(c.stiffness > 0.0))
      throw std::invalid_argument(what + ": stiffness must be > 0 (or +inf), got " + std::to_string(c.stiffness));
    if (!(c.damping >= 0.0) || !std::isfinite(c.damping))
      throw std::invalid_argument(what + ": damping must be finite and >= 0, got " + std::to_string(c.damping));
    if (c.type == scene::BilateralType::kDistance && (!(c.length > 0.0) || !std::isfinite(c.length)))
      throw std::invalid_argument(what + ": length must be > 0, got " + std::to_string(c.length));
    if (std::abs(c.axis_F.norm() - 1.0) > 1e-9)
      throw std::invalid_argument(what + ": axis must be a unit vector, its norm is " + std::to_string(c.axis_F.norm()));
    const int rows = scene::num_rows(c.type);
    J_bilateral_.push_back(Eigen::MatrixXd::Zero(rows, model.nv()));
    if (std::isinf(c.stiffness)) rigid_bilateral_rows_ += rows;
    BilateralResult br;
    br.phi = Eigen::VectorXd::Zero(rows);
    br.impulse = Eigen::VectorXd::Zero(rows);
    br.force = Eigen::VectorXd::Zero(rows);
    results_.bilaterals.push_back(br);
  }
  results_.contact_wrenches.assign(model.num_bodies(), math::SpatialForce::Zero());
  results_.generalized_contact_forces = Eigen::VectorXd::Zero(model.nv());
  results_.actuator_forces = Eigen::VectorXd::Zero(na);
  results_.actuator_saturated = Eigen::VectorXi::Zero(na);
  results_.generalized_actuation = Eigen::VectorXd::Zero(model.nv());
  results_.joint_limit_impulses = Eigen::VectorXd::Zero(model.nv());
  tau_applied_ = Eigen::VectorXd::Zero(model.nv());
  J_wrench_ = Eigen::MatrixXd::Zero(6, model.nv());
  q0_.resize(model.nq());
  v0_.resize(model.nv());
  v_star_.resize(model.nv());
  v_thvq_.resize(model.nv());
  p_WBo0_.assign(model.num_bodies(), math::Vector3::Zero());
  multibody::forward_kinematics(model, ws_, state_.q);
  for (int b = 0; b < model.num_bodies(); ++b) p_WBo0_[b] = ws_.X_WB[b].p;
  monitor_ = RunMonitor(scene_, p_WBo0_, parameters_.monitor);
}

// ---- Run-time actuation.

int Simulator::actuator_index(const std::string& joint) const {
  for (int i = 0; i < num_actuators(); ++i)
    if (scene_.actuators[i].joint == joint) return i;
  std::string names;
  for (const scene::Actuator& a : scene_.actuators) names += (names.empty() ? "" : ", ") + a.joint;
  throw std::invalid_argument("simulator: no actuator on joint '" + joint + "' (actuated joints: " +
                              (names.empty() ? "none" : names) + ")");
}

void Simulator::check_actuator(int actuator) const {
  if (actuator < 0 || actuator >= num_actuators())
    throw std::invalid_argument("simulator: actuator index " + std::to_string(actuator) + " outside 0 … " +
                                std::to_string(num_actuators() - 1));
}

void Simulator::check_commands(const Commands& c) const {
  const int na = num_actuators();
  auto check_vector = [&](const Eigen::VectorXd& x, const char* what, bool non_negative) {
    if (x.size() != na)
      throw std::invalid_argument(std::string("simulator: commands.") + what + " has " + std::to_string(x.size()) +
                                  " entries, expected one per actuator (" + std::to_string(na) + ")");
    for (int i = 0; i < na; ++i)
      if (!std::isfinite(x[i]) || (non_negative && x[i] < 0.0))
        throw std::invalid_argument(std::string("simulator: commands.") + what + " of actuator " + std::to_string(i) +
                                    " ('" + scene_.actuators[i].joint + "') must be " +
                                    (non_negative ? "finite and >= 0" : "finite") + ", got " + std::to_string(x[i]));
  };
  check_vector(c.actuation, "actuation", false);
  check_vector(c.q_target, "q_target", false);
  check_vector(c.v_target, "v_target", false);
  check_vector(c.kp, "kp", true);
  check_vector(c.kd, "kd", true);
  for (const ExternalWrench& w : c.external_wrenches) check_wrench(w);
}

void Simulator::check_wrench(const ExternalWrench& w) const {
  if (w.body < 1 || w.body >= scene_.model.num_bodies())
    throw std::invalid_argument("simulator: external wrench on body " + std::to_string(w.body) + ", outside 1 … " +
                                std::to_string(scene_.model.num_bodies() - 1));
  if (!w.tau_W.allFinite() || !w.f_W.allFinite() || !w.p_BoBq_B.allFinite())
    throw std::invalid_argument("simulator: external wrench on body '" + scene_.model.body(w.body).name +
                                "' has a non-finite entry");
}

void Simulator::set_actuation(const Eigen::VectorXd& u) {
  Commands c = commands_;
  c.actuation = u;
  check_commands(c);
  commands_.actuation = u;
}

void Simulator::set_actuation(int actuator, double u) {
  check_actuator(actuator);
  if (!std::isfinite(u))
    throw std::invalid_argument("simulator: actuation of '" + scene_.actuators[actuator].joint + "' must be finite, got " +
                                std::to_string(u));
  commands_.actuation[actuator] = u;
}

void Simulator::set_actuation(const std::string& joint, double u) { set_actuation(actuator_index(joint), u); }

void Simulator::set_pd_targets(const Eigen::VectorXd& q_target, const Eigen::VectorXd& v_target) {
  Commands c = commands_;
  c.q_target = q_target;
  c.v_target = v_target;
  check_commands(c);
  commands_.q_target = q_target;
  commands_.v_target = v_target;
}

void Simulator::set_pd_target(int actuator, double q_target, double v_target) {
  check_actuator(actuator);
  if (!std::isfinite(q_target) || !std::isfinite(v_target))
    throw std::invalid_argument("simulator: PD targets of '" + scene_.actuators[actuator].joint + "' must be finite, got " +
                                std::to_string(q_target) + ", " + std::to_string(v_target));
  commands_.q_target[actuator] = q_target;
  commands_.v_target[actuator] = v_target;
}

void Simulator::set_pd_gains(int actuator, double kp, double kd) {
  check_actuator(actuator);
  if (!(kp >= 0.0) || !(kd >= 0.0) || !std::isfinite(kp) || !std::isfinite(kd))
    throw std::invalid_argument("simulator: PD gains of '" + scene_.actuators[actuator].joint +
                                "' must be finite and >= 0, got kp = " + std::to_string(kp) + ", kd = " + std::to_string(kd));
  commands_.kp[actuator] = kp;
  commands_.kd[actuator] = kd;
}

void Simulator::add_external_wrench(const ExternalWrench& wrench) {
  check_wrench(wrench);
  commands_.external_wrenches.push_back(wrench);
}

void Simulator::clear_external_wrenches() { commands_.external_wrenches.clear(); }

void Simulator::set_commands(const Commands& commands) {
  check_commands(commands);
  commands_ = commands;
}

void Simulator::set_controller(std::shared_ptr<Controller> controller, int decimation) {
  if (decimation < 1) throw std::invalid_argument("simulator: controller decimation must be >= 1, got " + std::to_string(decimation));
  controller_ = std::move(controller);
  decimation_ = decimation;
}

void Simulator::set_state(const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  scene_.model.check_configuration(q);
  scene_.model.check_velocity(v);
  state_.q = q;
  state_.v = v;
  fm_.increments = 0;      // the next free motion starts from v₀: a step from a set state is a function of it alone
  v0_last_valid_ = false;  // and SAP from v₀ alone
  solver_.clear_pattern_hint();  // (its elimination order too)
}

double Simulator::energy(const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const multibody::Model& model = scene_.model;
  double E = multibody::kinetic_energy(model, ws_, q, v) + multibody::potential_energy(model, ws_, q);
  for (const scene::JointSpring& s : scene_.springs) {
    const double x = q[s.q_index] - s.rest_position;
    E += 0.5 * s.stiffness * x * x;
  }
  return E;
}

// Stage 1 in momentum form (docs/sap.md, "Stage 1 in momentum form"; issue 9 item 2). Castro
// et al. Eq. 14 writes the free motion as M(q^θ)(v − v₀) = δt k(q^θ, v^θ); with world-frame
// floating velocities that scheme is not momentum-conserving (a torque-free box spun about its
// intermediate axis gained 16 % energy under implicit Euler). We solve instead
//   m(v) = p(q₁, v) − p̄₀ − δt [β(q^θ, v^θ) + k₁(q^θ, v^θ)] = 0,
//   q₁ = q₀ ⊕ δt v^{θ_vq},  q^θ = q₀ ⊕ θ δt v^{θ_vq},  v^θ = θ v + (1 − θ) v₀,
// with p = M v the generalized momentum and β = Ṁ v − C v − ∂V/∂q (multibody/momentum.h), and
// p̄₀ = p(q₀, v₀), except on the angular rows of a floating joint attached to the world, which
// are written so that the momentum about the world origin, L_W = L_O + p_O × P, balances exactly:
//   P₁ − P₀ = δt F^θ,
//   L_O₁ − L_O₀ + (p_O₁ − p_O₀) × P^{θ_vq} = δt τ_O^θ,   P^{θ_vq} = θ_vq P₁ + (1 − θ_vq) P₀
// (L_O about the body origin O, P the subtree's linear momentum, F^θ and τ_O^θ the applied
// force and its moment about O at the θ state). The identity
//   p₁ × P₁ − p₀ × P₀ = (p₁ − p₀) × P^{θ_vq} + p_b × (P₁ − P₀),  p_b = θ_vq p₀ + (1 − θ_vq) p₁
// then gives L_W₁ − L_W₀ = δt (τ_O^θ + p_b × F^θ): zero for a free system, whatever θ. For
// implicit Euler these rows are the plain θ-method on p (the transport term equals δt v_O × P,
// which is β's −v_O × P); for a body whose centre of mass is its origin (P ∥ v_O) they keep
// L_O = I ω unchanged in free flight for every scheme. A contact impulse Jᵀγ (J = J(q₀)) enters
// the O rows as its moment about the body origin, which is what the body feels. Newton
// iterations with the SPD approximation A = M(q₁) + δt²θθ_vq K + δtθ D of ∂m/∂v (the Eq. 15
// matrix, evaluated where the momentum is). M and A are block-diagonal by tree. Leaves
// A_blocks_ evaluated at q₁(v*). Works in fm_ and A_blocks_, sized on the first call: no
// allocation after.
void Simulator::free_motion(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0, Eigen::VectorXd& v_star) {
  const multibody::Model& model = scene_.model;
  const double dt = parameters_.time_step, th = theta_.theta, thvq = theta_.theta_vq;
  const int nv = model.nv();
  FreeMotionScratch& s = fm_;
  if (s.v_theta.size() != nv || s.llt.size() != trees_.size()) {
    s.q_theta.resize(model.nq());
    s.q1.resize(model.nq());
    for (Eigen::VectorXd* x : {&s.v_theta, &s.v_thvq, &s.k1, &s.m, &s.dv, &s.p0, &s.p_theta, &s.beta_theta})
      x->resize(nv);
    for (Eigen::VectorXd& x : s.increment) x.resize(nv);
    s.factor_current = false;
    s.increments = 0;
    s.llt = std::vector<Eigen::LLT<Eigen::MatrixXd>>(trees_.size());  // built in place: copying a default LLT reads its uninitialized info
    s.factor.resize(trees_.size());
    s.factor_inv6.assign(36 * trees_.size(), 0.0);
    A_blocks_.resize(trees_.size());
    for (size_t t = 0; t < trees_.size(); ++t) {
      A_blocks_[t].resize(trees_[t].nv, trees_[t].nv);
      s.factor[t].resize(trees_[t].nv, trees_[t].nv);
      if (trees_[t].nv > linalg::internal::kPlainKernelMaxSize)
        s.llt[t].compute(Eigen::MatrixXd::Identity(trees_[t].nv, trees_[t].nv));  // sizes its storage
    }
  }
  // The chord matrix per tree: the dense kernels up to 32 velocities (linalg/dense_kernels.h),
  // Eigen's LLT above. A that is not positive definite (a bad inertia that passed the loaders)
  // is left to SAP's check of the same A (SapProblem: "A block t is not positive definite").
  // s.factor_ok: every factorization succeeded (SAP may then take the factors of trees up to
  // 32 velocities, SapProblem::set_A_factors).
  auto factor_A = [&] {
    s.factor_ok = true;
    for (size_t t = 0; t < trees_.size(); ++t) {
      if (trees_[t].nv > linalg::internal::kPlainKernelMaxSize) {
        s.llt[t].compute(A_blocks_[t]);
        if (s.llt[t].info() != Eigen::Success) s.factor_ok = false;
      } else {
        s.factor[t] = A_blocks_[t];
        if (trees_[t].nv == 6) {  // a free body: the fixed-size kernel, and L⁻¹ for the solves
          double* L_inv = s.factor_inv6.data() + 36 * t;
          if (linalg::internal::small_cholesky_in_place<6>(s.factor[t].data())) {
            linalg::internal::lower_triangular_inverse6(s.factor[t].data(), L_inv);
          } else {  // as the other kernels' partial factor: the solves give NaN, SAP's check of A throws
            s.factor_ok = false;
            std::fill(L_inv, L_inv + 36, std::numeric_limits<double>::quiet_NaN());
          }
        } else if (!linalg::internal::dense_cholesky(s.factor[t].data(), trees_[t].nv)) {
          s.factor_ok = false;
        }
      }
    }
  };
  auto solve_A = [&](size_t t, Eigen::Ref<Eigen::VectorXd> x) {
    if (trees_[t].nv > linalg::internal::kPlainKernelMaxSize) s.llt[t].solveInPlace(x);
    else if (trees_[t].nv == 6) linalg::internal::cholesky_solve_with_inverse6(s.factor_inv6.data() + 36 * t, x.data());
    else linalg::internal::dense_cholesky_solve(s.factor[t].data(), trees_[t].nv, x.data());
  };
  Eigen::VectorXd &q_theta = s.q_theta, &q1 = s.q1, &v_theta = s.v_theta, &v_thvq = s.v_thvq, &m = s.m,
                  &dv = s.dv, &p0 = s.p0, &p_theta = s.p_theta, &beta_theta = s.beta_theta;
  // A = M + δt²θθ_vq K + δtθ D per tree, from M's tree blocks (crba_trees: M is never formed
  // n_v × n_v; trees_ and the blocks list the trees in the same, body, order).
  const double c_K = dt * dt * th * thvq, c_D = dt * th;
  auto assemble_A = [&](const multibody::TreeMassMatrix& M) {
    for (size_t t = 0; t < trees_.size(); ++t) {
      const contact::TreeRange& r = trees_[t];
      Eigen::MatrixXd& A = A_blocks_[t];
      A = M.block(static_cast<int>(t));
      for (int j = 0; j < r.nv; ++j) {
        const int k = r.v_start + j;
        A(j, j) += c_K * stiffness_[k] + c_D * damping_[k];
      }
    }
  };
  // θ = θ_vq = 1 (implicit Euler): q^θ = q₁ and v^θ = v, one momentum pass per iteration
  // (free_motion_residual).
  multibody::generalized_momentum(model, ws_, q0, v0, /*with_bias=*/th == 0.0);  // β(q₀, v₀): explicit forces only
  p0 = ws_.momentum;
  // The iteration matrix: A at q₀, factored once per step (a chord method). Newton's exact
  // Jacobian of m(v) would add δt ∂(M v)/∂q terms that A at q₁ omits as well, so A(q₀) converges
  // as fast; the converged v* is the same to the tolerance, and A is then evaluated at q₁(v*).
  // With the warm start (SimulatorParameters::free_motion_warm_start) the last step's A at its
  // q₁(v*), still in A_blocks_, serves instead: it differs from A(q₀) by δt times the contact
  // impulses' change of velocity, and it saves a CRBA per step. A step from a state set by
  // set_state() (no warm start) uses A(q₀): it depends on (q₀, v₀) only. If an iteration does
  // not contract the correction by 4× (fast motion at a large δt), A is refreshed at q₁ of the
  // current iterate from then on (the plain quasi-Newton iteration). The last step factored its A
  // at the end (for SAP), so the warm start's chord matrix is factored already.
  const bool warm = parameters_.free_motion_warm_start && s.increments > 0;
  if (!warm) assemble_A(multibody::crba_trees_from_joint_poses(model, ws_));
  if (!warm || !s.factor_current) factor_A();
  if (th == 0.0) {  // explicit forces: evaluated once, at (q₀, v₀)
    p_theta = ws_.momentum;
    beta_theta = ws_.momentum_bias;
    q_theta = q0;
    v_theta = v0;
  }
  // Start from the last steps' increments v* − v₀ extrapolated by the polynomial through the m
  // at hand, Σₖ (−1)^{k+1} C(m, k) iₖ (SimulatorParameters::free_motion_warm_start: the
  // increment is δt times an acceleration that varies smoothly between impacts, so the chord
  // iteration starts closer), else from v₀.
  v_star = v0;
  if (!warm) {  // a step from a set state: its own corrections only
    s.contraction = std::numeric_limits<double>::quiet_NaN();
    s.first_correction = std::numeric_limits<double>::quiet_NaN();
  } else {
    double binomial = 1.0;  // C(m, k), from C(m, 0)
    for (int k = 1; k <= s.increments; ++k) {
      binomial = binomial * (s.increments - k + 1) / k;
      v_star += (k % 2 == 1 ? binomial : -binomial) * s.increment[k - 1];
    }
  }
  results_.stats.free_motion_iterations = 0;
  bool refresh = false, converged = false;
  double last_correction = std::numeric_limits<double>::infinity();
  for (int it = 0; it < parameters_.free_motion_max_iterations; ++it) {
    free_motion_residual(q0, v0, v_star, m);  // leaves the joint poses of q₁ in ws_
    const bool refreshed = refresh;  // A changes in this iteration: its correction is no contraction of the last
    if (refresh) {  // joint poses at q₁ of this iterate, from the momentum pass
      assemble_A(multibody::crba_trees_from_joint_poses(model, ws_));
      factor_A();
    }
    for (size_t t = 0; t < trees_.size(); ++t) {
      const contact::TreeRange& r = trees_[t];
      auto dv_t = dv.segment(r.v_start, r.nv);
      dv_t = m.segment(r.v_start, r.nv);
      solve_A(t, dv_t);
      dv_t = -dv_t;
    }
    v_star += dv;
    ++results_.stats.free_motion_iterations;
    const double correction = dv.norm();
    const double scale = parameters_.free_motion_tolerance * std::max(1.0, v_star.norm());
    if (it > 0 && !refreshed) {  // the contraction of this step's iteration (see below)
      s.contraction = correction / last_correction;
      s.steps_on_contraction = 0;
    }
    if (std::isfinite(correction) && correction <= scale) {
      converged = true;  // (an infinite correction met the test against an infinite ‖v*‖)
      break;
    }
    // The error left in the new iterate: at most ρ/(1 − ρ) times the correction just applied
    // when the iteration contracts by ρ < 1 (Hairer & Wanner, Solving ODEs II, §IV.8, the
    // stopping test of simplified Newton iterations). Within a step ρ is the ratio of the last
    // two corrections; a step's first correction takes the last measured ρ (the chord matrix and
    // the motion change little from one step to the next), measured again after at most
    // kContractionSteps steps that stopped on it, and only while this step's first correction is
    // no more than 4× the last step's (a joint thrown back from 50 rad past its limit in one step
    // is not the motion whose ρ was measured). Only a fast contraction (ρ < ½) is trusted.
    // Hairer and Wanner's safety factor κ on the tolerance: ρ from two corrections is an
    // estimate. (SimulatorParameters::free_motion_stop_on_contraction; NaN: the plain test only.)
    constexpr double kStopSafety = 0.1;
    double rho = std::numeric_limits<double>::quiet_NaN();
    if (parameters_.free_motion_stop_on_contraction) {
      if (it > 0 && !refreshed) {
        rho = s.contraction;  // measured just above
      } else if (it == 0) {
        const double last_first = s.first_correction;
        s.first_correction = correction;
        if (warm && s.steps_on_contraction < FreeMotionScratch::kContractionSteps && correction <= 4.0 * last_first)
          rho = s.contraction;
      }
    }
    if (rho < 0.5 && rho / (1.0 - rho) * correction <= kStopSafety * scale) {
      if (it == 0) ++s.steps_on_contraction;
      converged = true;
      break;
    }
    // A poor contraction far from the tolerance means fast motion: refresh A. Near it (a warm
    // start's first correction can already be within 1e3 of the tolerance) the ratio of two
    // corrections is round-off, and a refresh would cost a CRBA and a Cholesky for nothing.
    if (correction > 0.25 * last_correction &&
        correction > 1e3 * parameters_.free_motion_tolerance * std::max(1.0, v_star.norm()))
      refresh = true;
    last_correction = correction;
  }
  // At |v| δt of a radian or more (a joint started far past its limit, taken back by SAP's
  // near-rigid limit constraint in one step) the chord iteration oscillates or diverges: it
  // omits δt ∂(M v)/∂q, then as large as M. Newton's method with the exact Jacobian takes over.
  if (!converged) converged = free_motion_newton(q0, v0, v_star);
  results_.stats.free_motion_converged = converged;
  if (converged) {
    for (int k = FreeMotionScratch::kIncrements - 1; k > 0; --k)  // storage only: the oldest
      s.increment[k].swap(s.increment[k - 1]);                     // becomes the newest's buffer
    s.increment[0] = v_star - v0;
    s.increments = std::min(s.increments + 1, FreeMotionScratch::kIncrements);
  } else {
    s.increments = 0;
  }
  // A at the converged v* (digest §2.4: evaluated once, at v*), where the momentum is: q₁(v*).
  v_thvq = thvq * v_star + (1.0 - thvq) * v0;
  multibody::integrate(model, q0, v_thvq, dt, q1);
  assemble_A(multibody::crba_trees(model, ws_, q1));
  factor_A();  // for SAP's Delassus estimates and the next step's chord iteration
  s.factor_current = s.factor_ok;  // a failed one is redone (and fails again) at the next step's start
}

// m(v) of free_motion: p(q₁, v) − p₀ − δt (β^θ + k^θ), with the floating roots' angular rows
// balanced about the world origin. For θ = 0 the explicit p^θ, β^θ set by free_motion are used.
void Simulator::free_motion_residual(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0, const Eigen::VectorXd& v,
                                     Eigen::VectorXd& m) {
  const multibody::Model& model = scene_.model;
  const double dt = parameters_.time_step, th = theta_.theta, thvq = theta_.theta_vq;
  const bool theta_at_end = th == 1.0 && thvq == 1.0;
  FreeMotionScratch& s = fm_;
  s.v_thvq = thvq * v + (1.0 - thvq) * v0;
  multibody::integrate(model, q0, s.v_thvq, dt, s.q1);  // q₁ = q₀ ⊕ δt v^{θ_vq}
  if (th != 0.0 && !theta_at_end) {
    multibody::integrate(model, q0, s.v_thvq, th * dt, s.q_theta);  // q^θ = q₀ ⊕ θ δt v^{θ_vq}
    s.v_theta = th * v + (1.0 - th) * v0;
    multibody::generalized_momentum(model, ws_, s.q_theta, s.v_theta);
    s.p_theta = ws_.momentum;
    s.beta_theta = ws_.momentum_bias;
  }
  // p(q₁, v), and the joint poses at q₁ for crba; β(q₁, v) only where q^θ = q₁.
  multibody::generalized_momentum(model, ws_, s.q1, v, /*with_bias=*/theta_at_end);
  const Eigen::VectorXd& p1 = ws_.momentum;
  if (theta_at_end) {
    s.q_theta = s.q1;
    s.v_theta = v;
    s.p_theta = p1;
    s.beta_theta = ws_.momentum_bias;
  }
  s.k1 = tau_applied_ - damping_.cwiseProduct(s.v_theta);
  for (const scene::JointSpring& sp : scene_.springs)
    s.k1[sp.v_index] -= sp.stiffness * (s.q_theta[sp.q_index] - sp.rest_position);
  m = p1 - s.p0 - dt * (s.beta_theta + s.k1);
  // Floating joints on the world: their angular rows balance the momentum about the world
  // origin exactly (see free_motion). β's force rows are F^θ and its moment rows τ_O^θ − v_O^θ × P^θ;
  // applied forces (external wrenches) add their moment about O, as their generalized force
  // J_WBqᵀ [τ; f] does on these rows.
  for (const FloatingRoot& f : floating_roots_) {
    const math::Vector3 P_vq = thvq * p1.segment<3>(f.v_index + 3) + (1.0 - thvq) * s.p0.segment<3>(f.v_index + 3);
    const math::Vector3 tau_O = s.beta_theta.segment<3>(f.v_index) + tau_applied_.segment<3>(f.v_index) +
                                s.v_theta.segment<3>(f.v_index + 3).cross(s.p_theta.segment<3>(f.v_index + 3));
    // p_O₁ − p_O₀ = δt v_O^{θ_vq} (multibody::integrate), taken from v: q₁ − q₀ would carry the
    // round-off of positions far from the origin.
    const math::Vector3 dp_O = dt * s.v_thvq.segment<3>(f.v_index + 3);
    m.segment<3>(f.v_index) = p1.segment<3>(f.v_index) - s.p0.segment<3>(f.v_index) + dp_O.cross(P_vq) - dt * tau_O;
  }
}

// Newton's method on m(v) = 0 for the steps where free_motion's chord iteration does not
// converge. ∂m/∂v is block diagonal by tree (trees do not couple in m), so one forward
// difference perturbs dof j of every tree at once: max tree size + 1 residuals per Jacobian.
// Steps: Δv = −J⁻¹m per tree (LU), halved until ‖m‖ decreases (at most 30 times). Starts from
// the better (by ‖m‖) of the chord iterate and v₀. Stops at ‖Δv‖ ≤ tol·max(1, ‖v‖), after 50
// iterations, or when no step decreases ‖m‖; v_star is then the best iterate. Measured
// (MomentumConservationTest.FreeFloatingA1AtARadianPerStepConservesMomentum): 4–8 iterations,
// quadratic; now and then it stalls at a stationary point of ‖m‖ that is not a root (one step in
// 20 of the A1 at 1 rad per step), which StepStats::free_motion_converged reports. Allocates
// the Jacobian blocks on its first use only.
bool Simulator::free_motion_newton(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0, Eigen::VectorXd& v_star) {
  FreeMotionScratch& s = fm_;
  const int nv = scene_.model.nv();
  int max_tree_nv = 0;
  if (s.jacobian.size() != trees_.size()) {
    s.jacobian.resize(trees_.size());
    for (size_t t = 0; t < trees_.size(); ++t) s.jacobian[t].resize(trees_[t].nv, trees_[t].nv);
    for (Eigen::VectorXd* x : {&s.m_base, &s.v_trial, &s.m_trial}) x->resize(nv);
  }
  for (const contact::TreeRange& r : trees_) max_tree_nv = std::max(max_tree_nv, r.nv);
  free_motion_residual(q0, v0, v_star, s.m_base);
  double residual = s.m_base.norm();
  free_motion_residual(q0, v0, v0, s.m_trial);
  if (!(residual <= s.m_trial.norm())) {  // NaN too
    v_star = v0;
    s.m_base = s.m_trial;
    residual = s.m_base.norm();
  }
  for (int it = 0; it < 50; ++it) {
    for (int j = 0; j < max_tree_nv; ++j) {
      s.v_trial = v_star;
      for (const contact::TreeRange& r : trees_)
        if (j < r.nv) s.v_trial[r.v_start + j] += 1e-7 * std::max(1.0, std::abs(v_star[r.v_start + j]));
      free_motion_residual(q0, v0, s.v_trial, s.m_trial);
      for (size_t t = 0; t < trees_.size(); ++t) {
        const contact::TreeRange& r = trees_[t];
        if (j >= r.nv) continue;
        const double h = s.v_trial[r.v_start + j] - v_star[r.v_start + j];  // as represented
        s.jacobian[t].col(j) = (s.m_trial.segment(r.v_start, r.nv) - s.m_base.segment(r.v_start, r.nv)) / h;
      }
    }
    for (size_t t = 0; t < trees_.size(); ++t) {
      const contact::TreeRange& r = trees_[t];
      s.dv.segment(r.v_start, r.nv) = -s.jacobian[t].partialPivLu().solve(s.m_base.segment(r.v_start, r.nv));
    }
    ++results_.stats.free_motion_iterations;
    if (!s.dv.allFinite()) return false;
    double alpha = 1.0;
    bool decreased = false;
    for (int k = 0; k < 30 && !decreased; ++k, alpha *= 0.5) {
      s.v_trial = v_star + alpha * s.dv;
      free_motion_residual(q0, v0, s.v_trial, s.m_trial);
      const double trial = s.m_trial.norm();
      if (trial < residual) {
        decreased = true;
        v_star = s.v_trial;
        s.m_base = s.m_trial;
        residual = trial;
        if (alpha * s.dv.norm() <= parameters_.free_motion_tolerance * std::max(1.0, v_star.norm())) return true;
      }
    }
    // No step decreases ‖m‖: at round-off level when the full step is already within the
    // tolerance (give or take 1000×); else a stationary point of ‖m‖ that is not a root.
    if (!decreased) return s.dv.norm() <= 1e3 * parameters_.free_motion_tolerance * std::max(1.0, v_star.norm());
  }
  return false;
}

// Gains enter SAP (and the first-order solver) through the PD constraint's compliance
// R = 1 / (δt (θ_vq δt kp + kd)) and bias v̂ = (kp (target − q) + kd v_target + u) / (θ_vq δt kp + kd).
// For gains whose implicit damping δt (δt kp + kd) is below kMinImplicitPdDamping, R and v̂
// overflow (kp = 5e-324 gave R = ∞ and τ = ∞ in trajectory.csv: mutation campaign, scene
// 16405). Such an actuator applies its PD law explicitly at the start of the step
// (applied_forces()): that changes the step's velocity by a fraction δt (δt kp + kd) / M_jj of
// its change, below 1e-6 for a joint inertia M_jj above 1e-6 kg m², and is stable for any
// M_jj above 1e-12.
bool Simulator::pd_is_implicit(int actuator) const {
  const double kp = commands_.kp[actuator], kd = commands_.kd[actuator], dt = parameters_.time_step;
  return dt * (dt * kp + kd) >= kMinImplicitPdDamping;
}

// Generalized forces of this step that do not depend on v: the force of each actuator outside
// the implicit PD constraint (pure force, kp = kd = 0, or gains below pd_is_implicit's bound:
// its PD law at q₀, v₀ plus its feed-forward) clamped to its effort limit, and the external
// wrenches J_WBqᵀ [τ_W; f_W] with J at q₀ (ws_ holds the kinematics of q₀). Fills those
// actuators' entries of results_.actuator_forces.
void Simulator::applied_forces() {
  const multibody::Model& model = scene_.model;
  tau_applied_.setZero();
  for (int i = 0; i < num_actuators(); ++i) {
    const scene::Actuator& a = scene_.actuators[i];
    if (pd_is_implicit(i)) continue;
    // Pure force, or gains too small for the implicit PD constraint (pd_is_implicit): the PD law
    // at the start of the step, explicitly. Its kp, kd terms vanish for kp = kd = 0.
    double u = commands_.actuation[i];
    if (commands_.kp[i] > 0.0 || commands_.kd[i] > 0.0)
      u += commands_.kp[i] * (commands_.q_target[i] - state_.q[a.q_index]) +
           commands_.kd[i] * (commands_.v_target[i] - state_.v[a.v_index]);
    const double e = a.effort_limit;
    const double tau = std::clamp(u, -e, e);
    results_.actuator_forces[i] = tau;
    results_.actuator_saturated[i] = std::abs(u) > e ? 1 : 0;
    tau_applied_[a.v_index] += tau;
  }
  for (const ExternalWrench& w : commands_.external_wrenches) {
    multibody::body_point_jacobian(model, ws_, w.body, w.p_BoBq_B, multibody::ReferenceFrame::kLocalWorldAligned,
                                   J_wrench_);
    math::Vector6 F;
    F << w.tau_W, w.f_W;
    tau_applied_.noalias() += J_wrench_.transpose() * F;
  }
}

const StepStats& Simulator::step() {
  const auto start = std::chrono::steady_clock::now();
  const multibody::Model& model = scene_.model;
  const double dt = parameters_.time_step;
  const int nv = model.nv();
  // The controller sees the state at the start of this step and the last step's results.
  if (controller_ && step_count_ % decimation_ == 0) {
    controller_->update(state_, results_, commands_);
    check_commands(commands_);
  }
  q0_ = state_.q;
  v0_ = state_.v;
  const Eigen::VectorXd &q0 = q0_, &v0 = v0_;
  StepStats& stats = results_.stats;
  stats = StepStats();
  // Stage timing (SimulatorParameters::profile_stages): lap() adds the time since the last lap to
  // one stage; without profiling it does nothing.
  const bool profile = parameters_.profile_stages;
  auto last_lap = start;
  auto lap = [&](double& stage) {
    if (!profile) return;
    const auto now = std::chrono::steady_clock::now();
    stage += std::chrono::duration<double>(now - last_lap).count();
    last_lap = now;
  };
  if (profile) last_lap = std::chrono::steady_clock::now();

  // 0. Contacts at q₀, within the collision margin plus, with speculative contact, the distance
  // each body can travel in this step at v₀.
  if (parameters_.speculative_contact || scene_.collision.speculative) {
    multibody::forward_kinematics(model, ws_, q0, v0);
    world_.set_speculative_margins(ws_, dt);
  } else {
    multibody::forward_kinematics(model, ws_, q0);
  }
  world_.update_poses(ws_);
  contact::gather_contacts(world_, scene_.contact, contacts_);
  contact::contact_jacobian(model, ws_, contacts_, Jc_);
  stats.contacts = contacts_.size();
  for (int b = 0; b < model.num_bodies(); ++b) p_WBo0_[b] = ws_.X_WB[b].p;
  if (step_count_ == 0) monitor_.check_initial_contacts(scene_, contacts_);
  monitor_.check_bodies(scene_, p_WBo0_, state_.time);
  for (const contact::Contact& c : contacts_.contacts) stats.max_penetration = std::max(stats.max_penetration, -c.phi);
  results_.actuator_forces.setZero();
  results_.actuator_saturated.setZero();
  applied_forces();  // with the kinematics of q₀ still in ws_
  lap(stats.stage_time.contacts);

  if (nv == 0) {
    constraint_set_.clear();
    solved_ = false;
    state_.time += dt;
    stats.time = state_.time;
    ++step_count_;
    fill_results();
    return stats;
  }

  // 1. Free motion.
  Eigen::VectorXd& v_star = v_star_;
  free_motion(q0, v0, v_star);
  lap(stats.stage_time.free_motion);

  // 2. Constraints: the step's solver-neutral description (constraints/constraint_set.h), then
  // the solver's own problem. Both are recycled from step to step (no allocation once the
  // number of contacts has peaked).
  build_constraint_set(q0, v0);
  if (parameters_.solver == Solver::kLStable) lap(stats.stage_time.constraints);
  Eigen::VectorXd& v = v_thvq_;  // v, then v^{θ_vq} below
  v = v_star;
  solved_ = constraint_set_.size() > 0;
  if (parameters_.solver == Solver::kLStable) {
    // Drumwright's first-order solver: one linear solve or one convex QP/SOCP.
    if (solved_) {
      const solvers::lstable::LStableResults& r = lstable_.solve(constraint_set_, A_blocks_, v_star);
      switch (r.status) {
        case solvers::lstable::LStableStatus::kSuccess: stats.status = sap::SapSolverStatus::kSuccess; break;
        case solvers::lstable::LStableStatus::kQpNotConverged: stats.status = sap::SapSolverStatus::kMaxIterations; break;
        default: stats.status = sap::SapSolverStatus::kLinearSolverFailure; break;
      }
      stats.solver_iterations = r.qp_iterations;
      stats.constraint_rows = r.num_rows;
      stats.used_qp = r.used_qp;
      stats.solver_residual = r.residual;
      stats.lstable_status = r.status;
      stats.friction_iterations = r.friction_iterations;
      stats.friction_converged = r.friction_converged;
      v = r.v;
    }
  } else {
    sap::SapProblem& problem = problem_;
    problem.reset(dt, A_blocks_, v_star);
    if (fm_.factor_ok) problem.set_A_factors(fm_.factor);  // free_motion factored A at q₁(v*)
    sap::SapBuildParameters build;
    build.approximation = scene_.contact.approximation;
    build.regularization = parameters_.regularization;
    build.limit_regularization = parameters_.limit_regularization;
    sap_builder_.build(constraint_set_, build, problem);
    lap(stats.stage_time.constraints);
    if (solved_) {
      if (parameters_.acceleration_warm_start && v0_last_valid_) {
        v_held_acceleration_ = 2.0 * v0 - v0_last_;
        solver_.solve(problem, v0, v_held_acceleration_, solver_results_);
      } else {
        solver_.solve(problem, v0, solver_results_);
      }
      const sap::SapSolverResults& r = solver_results_;
      stats.status = r.status;
      stats.solver_iterations = r.iterations;
      stats.line_search_iterations = r.line_search_iterations;
      stats.momentum_error = r.momentum_error;
      v = r.v;
    }
    // Limits the window left out that the solution reaches (an impulse of this step threw the
    // joint farther than the window): added, and SAP solves again from its solution. The step
    // is then the one with every limit to SAP's tolerance (a limit that does not act has zero
    // cost and gradient there; the problem is strictly convex).
    while (add_missed_limits(build, v)) {
      problem.reset(dt, A_blocks_, v_star);
      if (fm_.factor_ok) problem.set_A_factors(fm_.factor);
      sap_builder_.build(constraint_set_, build, problem);
      solved_ = true;
      solver_.solve(problem, v, solver_results_);
      const sap::SapSolverResults& r = solver_results_;
      stats.status = r.status;
      stats.solver_iterations += r.iterations;
      stats.line_search_iterations += r.line_search_iterations;
      stats.momentum_error = r.momentum_error;
      ++stats.limit_resolves;
      v = r.v;
    }
  }
  lap(stats.stage_time.solve);
  fill_results();

  // 3. Positions on the manifold: q = q₀ ⊕ δt v^{θ_vq}.
  state_.v = v;
  v = theta_.theta_vq * state_.v + (1.0 - theta_.theta_vq) * v0;
  multibody::integrate(model, q0, v, dt, state_.q);
  if (parameters_.project_rigid_constraints && rigid_bilateral_rows_ > 0) project_rigid_constraints(state_.q);
  state_.time += dt;
  ++step_count_;
  if (!state_.q.allFinite() || !state_.v.allFinite())
    throw std::runtime_error("simulator: the state became non-finite at t = " + std::to_string(state_.time) + " s");
  v0_last_ = v0;
  v0_last_valid_ = true;
  stats.time = state_.time;
  stats.energy = parameters_.compute_energy ? energy(state_.q, state_.v) : std::numeric_limits<double>::quiet_NaN();
  lap(stats.stage_time.finish);
  stats.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

// Post-stabilization of the rigid bilateral constraints (SimulatorParameters::
// project_rigid_constraints): Gauss–Newton steps on g(q) = 0 in the metric of the step's A
// (block diagonal per tree, SPD), Δ = −A⁻¹Jᵀ(J A⁻¹ Jᵀ + εI)⁻¹ g, q ← q ⊕ Δ, at most three, until
// ‖g‖ ≤ 1e-12 (or it stops decreasing). Rows whose Jacobian vanishes (a planar linkage's
// out-of-plane rows) have JA⁻¹Jᵀ = 0: the ε = 1e-12·max diag keeps S positive definite and leaves
// their g alone. Velocities are not changed, so no kinetic energy is added.
void Simulator::project_rigid_constraints(Eigen::VectorXd& q) {
  const multibody::Model& model = scene_.model;
  const int m = rigid_bilateral_rows_, nv = model.nv();
  proj_g_.resize(m);
  proj_J_.resize(m, nv);
  proj_llt_.resize(A_blocks_.size());
  for (size_t t = 0; t < A_blocks_.size(); ++t) proj_llt_[t].compute(A_blocks_[t]);
  double last = std::numeric_limits<double>::infinity();
  for (int iteration = 0; iteration < 3; ++iteration) {
    multibody::forward_kinematics(model, ws_, q);
    int row = 0;
    for (size_t i = 0; i < scene_.constraints.size(); ++i) {
      const scene::BilateralConstraint& c = scene_.constraints[i];
      if (!std::isinf(c.stiffness)) continue;
      const int rows = scene::num_rows(c.type);
      constraints::bilateral_kinematics(model, ws_, c, bilateral_scratch_, proj_g_.segment(row, rows),
                                        proj_J_.middleRows(row, rows));
      row += rows;
    }
    const double norm = proj_g_.norm();
    if (!(norm > 1e-12) || !(norm < last)) break;
    last = norm;
    proj_AinvJt_.resize(nv, m);
    for (size_t t = 0; t < trees_.size(); ++t) {
      const contact::TreeRange& tr = trees_[t];
      proj_AinvJt_.middleRows(tr.v_start, tr.nv) = proj_J_.middleCols(tr.v_start, tr.nv).transpose();
      proj_llt_[t].solveInPlace(proj_AinvJt_.middleRows(tr.v_start, tr.nv));
    }
    proj_S_.noalias() = proj_J_ * proj_AinvJt_;
    const double eps = 1e-12 * std::max(1.0, proj_S_.diagonal().maxCoeff());
    proj_S_.diagonal().array() += eps;
    proj_ldlt_.compute(proj_S_);
    proj_lambda_ = proj_ldlt_.solve(proj_g_);
    proj_dq_.noalias() = -proj_AinvJt_ * proj_lambda_;
    if (!proj_dq_.allFinite()) break;
    proj_q_ = q;
    multibody::integrate(model, proj_q_, proj_dq_, 1.0, q);
  }
}

// The step's ConstraintSet at (q₀, v₀): contacts (with their Jacobian blocks Jc_), limits of
// 1-dof joints, couplers, joint friction, and the actuators with PD gains (pure-force actuators
// are applied forces, see applied_forces()).
void Simulator::build_constraint_set(const Eigen::VectorXd& q0, const Eigen::VectorXd& v0) {
  const multibody::Model& model = scene_.model;
  constraints::ConstraintSet& set = constraint_set_;
  set.clear();
  set.time_step = parameters_.time_step;
  set.theta_vq = theta_.theta_vq;
  set.nv = model.nv();
  set.trees = trees_;
  constraints::add_contacts(contacts_, Jc_, tree_of_root_, v0, set);
  limit_entry_.assign(model.num_bodies(), -1);
  // SAP only: the first-order solver takes every limit (it has no check of the left-out ones).
  const double window = parameters_.solver == Solver::kSap ? parameters_.joint_limit_window : kInf;
  if (parameters_.joint_limits) {
    for (int b = 1; b < model.num_bodies(); ++b) {
      const multibody::Joint& j = model.body(b).joint;
      if (!has_limit_constraint(j)) continue;
      // The window of SimulatorParameters::joint_limit_window (q₀ at or past a limit: inside).
      const double q_j = q0[j.q_index];
      // (An infinite window reaches every limit, also of a joint at rest: ∞ · 0 would be NaN.)
      const double reach = std::isinf(window) ? kInf
                                              : window * parameters_.time_step *
                                                    std::max(std::abs(v0[j.v_index]), std::abs(v_star_[j.v_index]));
      const double lower = q_j - j.limits.lower <= reach ? j.limits.lower : -kInf;
      const double upper = j.limits.upper - q_j <= reach ? j.limits.upper : kInf;
      if (lower == -kInf && upper == kInf) continue;
      add_limit_entry(b, lower, upper);
    }
  }
  for (size_t i = 0; i < scene_.couplers.size(); ++i) {
    const scene::Coupler& c = scene_.couplers[i];
    constraints::CouplerConstraint& cc = set.couplers.add();
    cc.coupler = static_cast<int>(i);
    cc.tree = tree_of_velocity_[c.v_index];
    cc.local = local_of_velocity_[c.v_index];
    cc.leader_local = local_of_velocity_[c.leader_v_index];
    cc.v_index = c.v_index;
    cc.leader_v_index = c.leader_v_index;
    cc.q0 = q0[c.q_index];
    cc.leader_q0 = q0[c.leader_q_index];
    cc.vc0 = v0[c.v_index] - c.gear_ratio * v0[c.leader_v_index];
    cc.gear_ratio = c.gear_ratio;
    cc.offset = c.offset;
  }
  for (size_t i = 0; i < scene_.joint_frictions.size(); ++i) {
    const scene::JointFriction& f = scene_.joint_frictions[i];
    constraints::JointFrictionConstraint& jf = set.joint_frictions.add();
    jf.index = static_cast<int>(i);
    jf.v_index = f.v_index;
    jf.tree = tree_of_velocity_[f.v_index];
    jf.local = local_of_velocity_[f.v_index];
    jf.friction = f.friction;
    jf.v0 = v0[f.v_index];
  }
  for (int i = 0; i < num_actuators(); ++i) {
    if (!pd_is_implicit(i)) continue;  // pure force, or negligible gains: in applied_forces()
    const scene::Actuator& a = scene_.actuators[i];
    constraints::PdActuatorConstraint& pd = set.pd_actuators.add();
    pd.actuator = i;
    pd.v_index = a.v_index;
    pd.q_index = a.q_index;
    pd.tree = tree_of_velocity_[a.v_index];
    pd.local = local_of_velocity_[a.v_index];
    pd.q0 = q0[a.q_index];
    pd.v0 = v0[a.v_index];
    pd.kp = commands_.kp[i];
    pd.kd = commands_.kd[i];
    pd.q_target = commands_.q_target[i];
    pd.v_target = commands_.v_target[i];
    pd.feedforward = commands_.actuation[i];
    pd.effort_limit = a.effort_limit;
  }
  // Bilateral constraints: φ₀ = g(q₀), J at q₀ split per tree, φ̇₀ = J v₀.
  if (!scene_.constraints.empty()) multibody::forward_kinematics(model, ws_, q0);  // free_motion moved ws_
  for (size_t i = 0; i < scene_.constraints.size(); ++i) {
    const scene::BilateralConstraint& c = scene_.constraints[i];
    constraints::BilateralConstraint& bc = set.bilaterals.add();
    const int rows = scene::num_rows(c.type);
    Eigen::MatrixXd& J = J_bilateral_[i];
    bc.constraint = static_cast<int>(i);
    bc.num_rows = rows;
    bc.phi0.resize(rows);
    constraints::bilateral_kinematics(model, ws_, c, bilateral_scratch_, bc.phi0, J);
    bc.phidot0.resize(rows);
    bc.phidot0.noalias() = J * v0;
    bc.stiffness.setConstant(rows, c.stiffness);
    bc.damping.setConstant(rows, c.damping);
    // The trees of A and B (the world has none), each once, in tree order (the same slots every
    // step, so that the blocks keep their storage).
    int tree_a = c.body_a == 0 ? -1 : tree_of_root_[model.body(c.body_a).tree];
    int tree_b = c.body_b == 0 ? -1 : tree_of_root_[model.body(c.body_b).tree];
    if (tree_a == tree_b) tree_a = -1;
    if (tree_a > tree_b) std::swap(tree_a, tree_b);
    bc.num_blocks = 0;
    for (int tree : {tree_a, tree_b}) {
      if (tree < 0) continue;
      constraints::TreeBlock& block = bc.blocks[bc.num_blocks++];
      block.tree = tree;
      block.v_start = trees_[tree].v_start;
      block.J = J.middleCols(block.v_start, trees_[tree].nv);
    }
  }
}

// The limits that build_constraint_set's window left out and that act at the velocities v
// (SapConstraintBuilder::limit_acts): their joints' entries get both finite limits (a new entry
// when the window kept neither side). Returns whether any was added. Only while the window is
// finite, under SAP.
bool Simulator::add_missed_limits(const sap::SapBuildParameters& build, const Eigen::VectorXd& v) {
  if (!parameters_.joint_limits || !std::isfinite(parameters_.joint_limit_window) || parameters_.solver != Solver::kSap)
    return false;
  const multibody::Model& model = scene_.model;
  constraints::ConstraintSet& set = constraint_set_;
  const Eigen::VectorXd& q0 = q0_;
  const Eigen::VectorXd& v0 = v0_;
  bool added = false;
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& j = model.body(b).joint;
    if (!has_limit_constraint(j)) continue;
    const int entry = limit_entry_[b];
    constraints::JointLimitConstraint missing;
    missing.v_index = j.v_index;
    missing.q0 = q0[j.q_index];
    missing.v0 = v0[j.v_index];
    missing.lower = entry >= 0 && std::isfinite(set.limits[entry].lower) ? -kInf : j.limits.lower;
    missing.upper = entry >= 0 && std::isfinite(set.limits[entry].upper) ? kInf : j.limits.upper;
    if (missing.lower == -kInf && missing.upper == kInf) continue;
    if (!sap::SapConstraintBuilder::limit_acts(missing, v[j.v_index], parameters_.time_step, theta_.theta_vq, build))
      continue;
    if (entry < 0) {
      add_limit_entry(b, j.limits.lower, j.limits.upper);
    } else {
      set.limits[entry].lower = j.limits.lower;
      set.limits[entry].upper = j.limits.upper;
    }
    added = true;
  }
  return added;
}

// Appends body b's joint limit, with the given sides (±∞: left out), to constraint_set_ at
// (q0_, v0_) and records its entry in limit_entry_.
void Simulator::add_limit_entry(int b, double lower, double upper) {
  const multibody::Joint& j = scene_.model.body(b).joint;
  limit_entry_[b] = static_cast<int>(constraint_set_.limits.size());
  constraints::JointLimitConstraint& l = constraint_set_.limits.add();
  l.body = b;
  l.v_index = j.v_index;
  l.q_index = j.q_index;
  l.tree = tree_of_velocity_[j.v_index];
  l.local = local_of_velocity_[j.v_index];
  l.q0 = q0_[j.q_index];
  l.v0 = v0_[j.v_index];
  l.lower = lower;
  l.upper = upper;
}

// The step's results from SAP's impulses (docs/simulation-api.md): per contact, per body, per
// actuator and per limited joint; moments about the body origins at q₀ (p_WBo0_).
void Simulator::fill_results() {
  const multibody::Model& model = scene_.model;
  const double dt = parameters_.time_step;
  const bool solved = solved_;
  StepResults& out = results_;
  // The solver's impulses in the ConstraintSet's layout, then per ContactSet entry.
  if (parameters_.solver == Solver::kLStable) {
    if (solved) impulses_ = lstable_.results().impulses;
    else impulses_.resize(constraint_set_);
  } else {
    sap_builder_.impulses(constraint_set_, problem_, solved ? &solver_results_ : nullptr, impulses_);
  }
  contact_impulses_.setZero(3 * contacts_.size());
  contact_velocities_.setZero(3 * contacts_.size());
  if (solved)
    for (size_t k = 0; k < constraint_set_.contacts.size(); ++k) {
      const int i = constraint_set_.contacts[k].contact;
      contact_impulses_.segment<3>(3 * i) = impulses_.contacts.segment<3>(3 * k);
      contact_velocities_.segment<3>(3 * i) = impulses_.contact_velocities.segment<3>(3 * k);
    }
  out.contacts.resize(contacts_.size());
  for (math::SpatialForce& w : out.contact_wrenches) w = math::SpatialForce::Zero();
  out.generalized_contact_forces.setZero();
  out.joint_limit_impulses.setZero();
  double slip_sum = 0.0;
  int loaded = 0;
  for (int i = 0; i < contacts_.size(); ++i) {
    const contact::Contact& c = contacts_.contacts[i];
    ContactResult& cr = out.contacts[i];
    cr.body_a = c.body_a;
    cr.body_b = c.body_b;
    cr.geometry_a = c.geometry_a;
    cr.geometry_b = c.geometry_b;
    cr.p_W = c.p_W;
    cr.n_W = c.n_W;
    cr.phi = c.phi;
    const Eigen::Vector3d gamma = contact_impulses_.segment<3>(3 * i);
    cr.slip_speed = contact_velocities_.segment<2>(3 * i).norm();
    cr.impulse_normal = gamma[2];
    cr.impulse_tangential = gamma.head<2>();
    cr.impulse_W = c.R_WC * gamma;
    const double gt = gamma.head<2>().norm();
    if (!(gamma[2] > 0.0)) cr.region = ContactRegion::kNoContact;
    else if (gt < c.material.mu * gamma[2] * (1.0 - 1e-9)) cr.region = ContactRegion::kStiction;
    else cr.region = ContactRegion::kSliding;
    if (gamma[2] > 0.0) {
      slip_sum += cr.slip_speed;
      ++loaded;
    }
    // Net wrench about each body's origin (world frame): B receives γ, A its opposite.
    const math::Vector3 f_W = cr.impulse_W / dt;
    if (c.body_b > 0) {
      math::SpatialForce& w = out.contact_wrenches[c.body_b];
      w.f += f_W;
      w.tau += (c.p_W - p_WBo0_[c.body_b]).cross(f_W);
    }
    if (c.body_a > 0) {
      math::SpatialForce& w = out.contact_wrenches[c.body_a];
      w.f -= f_W;
      w.tau -= (c.p_W - p_WBo0_[c.body_a]).cross(f_W);
    }
  }
  results_.stats.mean_slip = loaded > 0 ? slip_sum / loaded : 0.0;
  // Jᵀγ/δt over the contact Jacobian blocks (J(q₀), contact frame rows).
  for (const contact::ContactJacobian::Block& b : Jc_.blocks) {
    const math::Vector3 f = contact_impulses_.segment<3>(3 * b.contact) / dt;
    if (b.J.cols() == 6) {  // 3 × 6 (a free body): the fixed-size product, a third of the run-time-size one
      out.generalized_contact_forces.segment<6>(b.v_start).noalias() +=
          Eigen::Map<const Eigen::Matrix<double, 3, 6>>(b.J.data()).transpose() * f;
    } else {
      out.generalized_contact_forces.segment(b.v_start, b.J.cols()).noalias() += b.J.transpose() * f;
    }
  }
  // Actuators with a PD constraint: γ/δt, saturated when γ sits at ±δt e.
  for (size_t k = 0; k < constraint_set_.pd_actuators.size(); ++k) {
    const constraints::PdActuatorConstraint& a = constraint_set_.pd_actuators[k];
    const double gamma = impulses_.pd_actuators[k];
    out.actuator_forces[a.actuator] = gamma / dt;
    out.actuator_saturated[a.actuator] = solved && std::abs(gamma) >= dt * a.effort_limit * (1.0 - 1e-12) ? 1 : 0;
  }
  out.generalized_actuation.setZero();
  for (int i = 0; i < num_actuators(); ++i) out.generalized_actuation[scene_.actuators[i].v_index] += out.actuator_forces[i];
  // Bilateral constraints: row impulses on B, and the constraint value at q₀.
  for (size_t k = 0, row = 0; k < constraint_set_.bilaterals.size(); ++k) {
    const constraints::BilateralConstraint& b = constraint_set_.bilaterals[k];
    BilateralResult& br = out.bilaterals[b.constraint];
    br.phi = b.phi0;
    br.impulse = impulses_.bilaterals.segment(row, b.num_rows);
    br.force = br.impulse / dt;
    row += b.num_rows;
  }
  // Joint limits: the generalized impulse on the joint's velocity.
  for (size_t k = 0; k < constraint_set_.limits.size(); ++k)
    out.joint_limit_impulses[constraint_set_.limits[k].v_index] += impulses_.limits[k];
  (void)model;
}

}  // namespace coulomb::simulation
