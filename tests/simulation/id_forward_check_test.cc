// Forward check of inverse dynamics (issue acceptance; Zapolsky & Drumwright Table 5, digest
// ../shared/digests/inverse-dynamics.md §8.5(c), §10 item 15): the A1 stands in the simulator
// under a controller that, before every step (decimation 1, δt = 1 ms), predicts the contact
// impulses of the coming step with InverseDynamics and commands the ID torques as pure
// feed-forward (the actuators' kp = kd = 0). After the step, the predicted ℓ1 norm of the normal
// impulses, Σ f_N, is compared with the simulator's, Σ last_results().contacts[i].impulse_normal
// (the paper compares the ℓ1 norm of the normal forces), over 1 s after 0.2 s of settling.
//
// Which contacts. The simulator gathers the step's contacts once, at q₀ of the step, which is
// the state the controller is given. So the controller gathers them itself from a CollisionWorld
// of the same scene at state.q: the same pairs, points, normals and φ₀, in the same order.
// Simulator::constraint_set() holds the previous step's contacts, at the previous q₀: their φ is
// one step stale, which through the ID's Baumgarte term −φ/Δt shifts the predicted normal
// velocity by the step's normal velocity (negligible while standing: a reported variant).
//
// What to expect. On flat ground every normal is vertical, so Σ f_N is the vertical contact
// impulse, m (v_z,CoM⁺ − v_z,CoM⁻) + m g δt, in the ID and in the simulator alike: the relative
// error of Σ f_N is |v_z,CoM⁺(ID) − v_z,CoM⁺(sim)| / (g δt). 2 % is 0.2 mm/s of disagreement
// in one step's vertical velocity: the contact models must agree on where the feet go.
//
// Which simulator models are close to the ID's. The ID's contact is rigid with the
// Anitescu–Hart stabilization N ⁺v ≥ −φ₀/Δt. Every simulator model here tends to exactly that
// when its compliance vanishes and its dissipation time is 0:
//  - sap: the normal row is v_n = v̂ − R_n γ_n with v̂ = −φ₀/(δt + τ_d) (= −φ₀/δt at τ_d = 0)
//    and R_n = max(β² w/(4π²), 1/(δt² k)). With the default β = 1, R_n is clamped at the
//    near-rigid value whatever k (a contact period of one step): the feet sink ≈ 2.3 µm under
//    the A1's weight, which the ID's −φ/Δt reads as a 2.3 mm/s push-out the simulator never
//    makes (2.5 % error with QP,μ; the LCP controllers lose the robot). β = 0.01 (period
//    0.01 δt) with k = 10¹⁰ N/m makes R_n ~10⁴ times smaller: the sink is 3.4 nm (= m g/(4k)).
//  - lstable: v_n = −k φ₀/(δt k + B) − γ/(δt (δt k + B)): at τ_d = 0 (B = 0), v̂ = −φ₀/δt and
//    R = 1/(δt² k), no near-rigid clamp: k = 10¹⁰ N/m gives the same 3.4 nm.
//  - similar, lagged (Hunt–Crossley): γ_n = δt (k x₀ − δt k v_n)(1 − d v_n)₊, whose rigid limit
//    is v_n = x₀/δt = −φ₀/δt; k = 10¹⁰ N/m, sink 3.4 nm.
// A sink x costs up to x/(g δt²) of relative error (3.4e6/k for the A1; the joint PD absorbs
// about 90 % of it in closed loop: 3.7 % at k = 10⁷, 0.35 % at 10⁸). At k = 10¹⁰ what remains is
// not the sink (k = 10¹¹, or φ clamped to ≥ 0, changes it by < 2 %): QP,μ's 3.2e-4 is its
// complementarity-free model itself — it predicts the loaded feet to leave the ground at
// 3–4 µm/s (N ⁺v > 0 with f_N > 0: with the joints moving slowly under the PD, the least kinetic
// energy lifts the feet rather than moving the base; digest §6.2), where the simulator keeps
// them down; LCP,μ (complementarity) reaches 0.8–1.8e-4.
// Asserted (2 % max, 0.2 % mean, 4 contacts throughout): QP,μ with all four simulator models,
// LCP,μ with sap (β = 0.01) and lstable. Printed only: LCP,μ with similar (it passes) and lagged
// (Lemke's vertex of the indeterminate stance loads two diagonal feet, the robot tips onto three
// and, with lagged friction, falls), and LCP,∞ everywhere: its warm-started basic solution also
// carries the robot on two diagonal feet (rank(N Γ_X Nᵀ) = 3, digest §4.7), the robot tips, the
// tipping makes the no-slip request inconsistent, and the §4.5 consistency QP — which has no
// complementarity — answers with a launch (10⁴ N·s impulses, the robot leaves the ground). With
// the old slip tolerance 1e-9 m/s every step went through that QP from the start, whose
// min-norm impulses load all four feet: the robot stood and Σ f_N matched to 3.2e-4 (reported).
// Reported too: the default sap (β = 1), the previous step's contacts, φ clamped to ≥ 0.
// Numbers and the command: docs/inverse-dynamics-forward-check.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

using inverse_dynamics::Formulation;
using inverse_dynamics::IdStatus;

const std::string kShared = COULOMB_SHARED_DIR;
constexpr double kDt = 1e-3;

// The simulator's contact model.
struct SimContact {
  std::string name;
  std::string approximation;  // sap | similar | lagged (the scene's contact_approximation)
  Solver solver = Solver::kSap;
  double stiffness = 1e10;       // k [N/m]
  double dissipation_time = 0.0;  // τ_d [s] (sap, lstable)
  double beta = 1.0;             // SAP's near-rigid β
};

// Where the ID's contacts come from.
enum class IdContacts {
  kGathered,      // CollisionWorld at state.q: the coming step's own contacts
  kClampedPhi,    // the same with φ := max(φ, 0) (no push-out of the compliant sink)
  kPreviousStep,  // Simulator::constraint_set() of the previous step
};
const char* to_string(IdContacts c) {
  return c == IdContacts::kGathered ? "gathered" : c == IdContacts::kClampedPhi ? "phi>=0" : "previous step";
}

std::string a1_scene(const SimContact& sc, double height) {
  char contact[200];
  std::snprintf(contact, sizeof contact, "contact: {mu: 1.0, stiffness: %.6g, dissipation_time: %.6g}\n", sc.stiffness,
                sc.dissipation_time);
  return "time_step: 0.001\nduration: 2\ngravity: [0, 0, -9.81]\ncontact_approximation: " + sc.approximation + "\n" +
         contact +
         "bodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
         "robots:\n  - urdf: " + kShared + "/models/a1.urdf\n    floating: true\n    position: [0, 0, " +
         std::to_string(height) +
         "]\n    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: 0.8, RL_thigh_joint: 0.8, "
         "FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: -1.5, RL_calf_joint: -1.5}\n"
         "    actuators: {all: {kp: 80, kd: 2}}\n";
}

// Predicts the coming step's contact impulses with inverse dynamics and commands its torques:
// q̈_des = kp (q_ref − q) − kd q̇ on the joints (the standing pose), τ = the ID's.
class IdController : public Controller {
 public:
  IdController(const Simulator& sim, const inverse_dynamics::IdParameters& parameters, IdContacts source)
      : sim_(sim),
        world_(sim.model(), sim.scene().geometries, sim.scene().collision),
        ws_(sim.model()),
        id_(sim.model(), inverse_dynamics::actuated_dofs(sim.scene()), parameters),
        source_(source) {
    const std::vector<int>& act = id_.actuated();
    const multibody::Model& model = sim.model();
    for (const scene::Actuator& a : sim.scene().actuators)
      column_.push_back(static_cast<int>(std::find(act.begin(), act.end(), a.v_index) - act.begin()));
    for (int v : act)
      for (int b = 1; b < model.num_bodies(); ++b)
        if (model.body(b).joint.v_index == v) q_index_.push_back(model.body(b).joint.q_index);
    q_ref_.resize(act.size());
    for (size_t j = 0; j < act.size(); ++j) q_ref_[j] = sim.scene().q0[q_index_[j]];
    qdd_.resize(act.size());
  }

  void update(const State& state, const StepResults&, Commands& commands) override {
    const std::vector<int>& act = id_.actuated();
    for (size_t j = 0; j < act.size(); ++j)
      qdd_[j] = kKp * (q_ref_[j] - state.q[q_index_[j]]) - kKd * state.v[act[j]];
    const inverse_dynamics::IdResults* r = nullptr;
    if (source_ == IdContacts::kPreviousStep && sim_.step_count() > 0) {
      r = &id_.solve(state.q, state.v, qdd_, sim_.constraint_set());
      num_contacts = static_cast<int>(sim_.constraint_set().contacts.size());
    } else {
      // The coming step gathers its contacts at q₀ = state.q: the same gather here.
      multibody::forward_kinematics(sim_.model(), ws_, state.q);
      world_.update_poses(ws_);
      contact::gather_contacts(world_, sim_.scene().contact, contacts_);
      if (source_ == IdContacts::kClampedPhi)
        for (contact::Contact& c : contacts_.contacts) c.phi = std::max(c.phi, 0.0);
      r = &id_.solve(state.q, state.v, qdd_, kDt, contacts_);
      num_contacts = contacts_.size();
    }
    status = r->status;
    tracking_residual = r->stats.tracking_residual;
    solve_time = r->stats.solve_time;
    predicted.resize(num_contacts);
    predicted_sum = 0.0;
    for (int i = 0; i < num_contacts; ++i) predicted_sum += (predicted[i] = r->contact_impulses[3 * i + 2]);
    for (size_t i = 0; i < column_.size(); ++i) commands.actuation[i] = r->tau[column_[i]];
    if (tau_prev_.size() == r->tau.size()) max_dtau = std::max(max_dtau, (r->tau - tau_prev_).cwiseAbs().maxCoeff());
    tau_prev_ = r->tau;
  }

  IdStatus status = IdStatus::kSolved;
  double tracking_residual = 0.0, solve_time = 0.0;
  int num_contacts = 0;
  double predicted_sum = 0.0;   ///< Σ f_N predicted for the coming step [N·s]
  std::vector<double> predicted;  ///< per contact [N·s]
  double max_dtau = 0.0;        ///< max |τ_k − τ_{k−1}| [N·m]

 private:
  static constexpr double kKp = 100.0, kKd = 20.0;  // [1/s², 1/s]: critically damped at 10 rad/s
  const Simulator& sim_;
  geometry::CollisionWorld world_;
  multibody::Workspace ws_;
  contact::ContactSet contacts_;
  inverse_dynamics::InverseDynamics id_;
  IdContacts source_;
  std::vector<int> column_, q_index_;
  Eigen::VectorXd q_ref_, qdd_, tau_prev_;
};

struct CheckResult {
  double mean_rel = 0, max_rel = 0;  // |Σ pred − Σ sim| / Σ sim per step
  double mean_abs = 0, mean_force = 0;  // [N]
  double per_contact = 0;  // max_k,i |pred_i − sim_i| / (Σ sim / 4) (same contact list only)
  double sink = 0;         // mean −φ₀ of the loaded contacts in the last step [m]
  double max_dtau = 0;     // [N·m]
  double max_tracking = 0;  // max ‖P ⁺v − q̇_des‖∞ of the ID (> 0 when the consistency QP ran) [rad/s]
  double mean_solve_time = 0;  // [s]
  int steps = 0, not_solved = 0, contact_changes = 0, min_contacts = 1 << 30, max_contacts = 0;
  bool fell() const { return contact_changes > 0 || min_contacts < 4; }
};

inverse_dynamics::IdParameters id_parameters(Formulation f) {
  inverse_dynamics::IdParameters p;
  p.formulation = f;
  return p;
}

CheckResult forward_check(const SimContact& sc, const inverse_dynamics::IdParameters& idp,
                          IdContacts source = IdContacts::kGathered) {
  // Base height with the feet touching (φ ≈ 0): from the contacts at the nominal height.
  double height = 0.3123;
  {
    scene::Scene probe = io::parse_scene(a1_scene(sc, height), "a1 probe");
    geometry::CollisionWorld world(probe.model, probe.geometries, probe.collision);
    multibody::Workspace ws(probe.model);
    multibody::forward_kinematics(probe.model, ws, probe.q0);
    world.update_poses(ws);
    contact::ContactSet set;
    contact::gather_contacts(world, probe.contact, set);
    double phi = 0;
    for (const contact::Contact& c : set.contacts) phi += c.phi / set.size();
    height -= phi;
  }
  SimulatorParameters params;
  params.time_step = kDt;
  params.solver = sc.solver;
  params.regularization.beta = sc.beta;
  params.sap.rel_tolerance = 1e-10;
  Simulator sim(io::parse_scene(a1_scene(sc, height), "a1 forward check"), params);
  for (int i = 0; i < sim.num_actuators(); ++i) sim.set_pd_gains(i, 0.0, 0.0);  // pure feed-forward
  auto controller = std::make_shared<IdController>(sim, idp, source);
  sim.set_controller(controller, 1);
  CheckResult out;
  const int settle = 200, window = 1000;
  int last_n = -1;
  for (int k = 0; k < settle + window; ++k) {
    sim.step();
    if (k < settle) continue;
    if (k == settle) controller->max_dtau = 0.0;
    const StepResults& r = sim.last_results();
    double sum = 0.0;
    for (const ContactResult& c : r.contacts) sum += c.impulse_normal;
    const double err = std::abs(controller->predicted_sum - sum);
    const double rel = err / std::max(sum, 1e-12);
    out.mean_rel += rel;
    out.max_rel = std::max(out.max_rel, rel);
    out.mean_abs += err / kDt;
    out.mean_force += sum / kDt;
    const int n = static_cast<int>(r.contacts.size());
    if (source != IdContacts::kPreviousStep && controller->num_contacts == n)
      for (int i = 0; i < n; ++i)
        out.per_contact = std::max(out.per_contact, std::abs(controller->predicted[i] - r.contacts[i].impulse_normal) /
                                                        std::max(sum / 4, 1e-12));
    if (last_n >= 0 && n != last_n) ++out.contact_changes;
    last_n = n;
    out.min_contacts = std::min(out.min_contacts, n);
    out.max_contacts = std::max(out.max_contacts, n);
    if (controller->status != IdStatus::kSolved) ++out.not_solved;
    out.max_tracking = std::max(out.max_tracking, controller->tracking_residual);
    out.mean_solve_time += controller->solve_time;
    ++out.steps;
  }
  out.mean_rel /= out.steps;
  out.mean_abs /= out.steps;
  out.mean_force /= out.steps;
  out.mean_solve_time /= out.steps;
  out.max_dtau = controller->max_dtau;
  // Sink: mean −φ₀ of the contacts carrying more than a tenth of the mean load in the last step.
  int loaded = 0;
  double total = 0.0;
  for (const ContactResult& c : sim.last_results().contacts) total += c.impulse_normal;
  for (const ContactResult& c : sim.last_results().contacts)
    if (c.impulse_normal > 0.1 * total / 4) out.sink -= c.phi, ++loaded;
  if (loaded) out.sink /= loaded;
  return out;
}

void print_header() {
  std::printf("| simulator contact | ID | ID contacts | mean rel. error | max rel. error | mean \\|error\\| [N] | "
              "mean Σf_N [N] | max per-contact error | ID not 'solved' | contacts | max \\|Δτ\\| [N·m] | sink [m] | max \\|P⁺v − q̇_des\\| | ID µs |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}
void print_row(const SimContact& sc, const inverse_dynamics::IdParameters& idp, IdContacts source,
               const CheckResult& r) {
  std::string id = inverse_dynamics::to_string(idp.formulation);
  if (idp.formulation == Formulation::kLcpNoSlip && idp.slip_tolerance != inverse_dynamics::IdParameters{}.slip_tolerance) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " (slip_tolerance %g)", idp.slip_tolerance);
    id += buf;
  }
  std::printf("| %s | %s | %s | %.2e | %.2e | %.4f | %.3f | %.2e | %d | %d–%d%s | %.2e | %.1e | %.1e | %.0f |\n", sc.name.c_str(),
              id.c_str(), to_string(source), r.mean_rel, r.max_rel, r.mean_abs, r.mean_force,
              r.per_contact, r.not_solved, r.min_contacts, r.max_contacts,
              r.contact_changes ? (" (" + std::to_string(r.contact_changes) + " changes)").c_str() : "", r.max_dtau,
              r.sink, r.max_tracking, 1e6 * r.mean_solve_time);
}

const SimContact kSapNearRigid{"sap, k 1e10, τ_d 0, β 0.01", "sap", Solver::kSap, 1e10, 0.0, 0.01};
const SimContact kSapDefaultBeta{"sap, k 1e10, τ_d 0, β 1", "sap", Solver::kSap, 1e10, 0.0, 1.0};
const SimContact kLStable{"lstable, k 1e10, τ_d 0", "sap", Solver::kLStable, 1e10, 0.0, 1.0};
const SimContact kSimilar{"similar, k 1e10", "similar", Solver::kSap, 1e10, 0.0, 1.0};
const SimContact kLagged{"lagged, k 1e10", "lagged", Solver::kSap, 1e10, 0.0, 1.0};
const Formulation kFormulations[] = {Formulation::kLcpCoulomb, Formulation::kQpCoulomb, Formulation::kLcpNoSlip};

// Asserted: the simulator models that tend to the ID's rigid, Baumgarte-stabilized contact (see
// the file comment) predict Σ f_N within 2 % at every step (and 0.2 % on average), and the robot
// keeps its 4 contacts: QP,μ with all four, LCP,μ with sap (β = 0.01) and lstable. The other
// rows are printed: LCP,μ with similar and lagged, LCP,∞ with all four.
TEST(IdForwardCheckTest, NearRigidContactMatchesWithinTwoPercent) {
  print_header();
  for (const SimContact& sc : {kSapNearRigid, kLStable, kSimilar, kLagged})
    for (Formulation f : kFormulations) {
      const bool asserted = f == Formulation::kQpCoulomb || (f == Formulation::kLcpCoulomb && sc.approximation == "sap");
      const CheckResult r = forward_check(sc, id_parameters(f));
      print_row(sc, id_parameters(f), IdContacts::kGathered, r);
      if (!asserted) continue;
      EXPECT_LE(r.max_rel, 0.02) << sc.name << " " << inverse_dynamics::to_string(f);
      EXPECT_LE(r.mean_rel, 0.002) << sc.name << " " << inverse_dynamics::to_string(f);
      EXPECT_FALSE(r.fell()) << sc.name << " " << inverse_dynamics::to_string(f);
      EXPECT_EQ(r.not_solved, 0) << sc.name << " " << inverse_dynamics::to_string(f);
    }
}

// Reported: SAP's default near-rigid β = 1 (compliant at the ID's scale: the φ/Δt push-out
// mismatch), the same with φ clamped at 0 (which removes it), the previous step's contacts, and
// LCP,∞ with the old slip_tolerance 1e-9 m/s (every step then goes through the §4.5 QP).
TEST(IdForwardCheckTest, OtherModelsAreReported) {
  print_header();
  CheckResult compliant, clamped;
  for (Formulation f : kFormulations) {
    const CheckResult r = forward_check(kSapDefaultBeta, id_parameters(f));
    print_row(kSapDefaultBeta, id_parameters(f), IdContacts::kGathered, r);
    if (f == Formulation::kQpCoulomb) compliant = r;
  }
  for (Formulation f : kFormulations) {
    const CheckResult r = forward_check(kSapDefaultBeta, id_parameters(f), IdContacts::kClampedPhi);
    print_row(kSapDefaultBeta, id_parameters(f), IdContacts::kClampedPhi, r);
    if (f == Formulation::kQpCoulomb) clamped = r;
  }
  for (Formulation f : {Formulation::kLcpCoulomb, Formulation::kQpCoulomb})
    print_row(kSapNearRigid, id_parameters(f), IdContacts::kPreviousStep,
              forward_check(kSapNearRigid, id_parameters(f), IdContacts::kPreviousStep));
  inverse_dynamics::IdParameters strict = id_parameters(Formulation::kLcpNoSlip);
  strict.slip_tolerance = 1e-9;
  for (const SimContact& sc : {kSapNearRigid, kLStable, kSimilar, kLagged})
    print_row(sc, strict, IdContacts::kGathered, forward_check(sc, strict));
  // The premise of the reported rows: with β = 1 the QP,μ prediction is off by more than 1 %,
  // and clamping φ brings it back (a test that can fail if the explanation is wrong).
  EXPECT_GT(compliant.mean_rel, 0.01);
  EXPECT_LT(clamped.mean_rel, 0.002);
}

// Not run by default (COULOMB_ID_FORWARD_SWEEP=1): the stiffness and β sweeps of the doc.
TEST(IdForwardCheckTest, StiffnessSweep) {
  if (!std::getenv("COULOMB_ID_FORWARD_SWEEP")) GTEST_SKIP() << "set COULOMB_ID_FORWARD_SWEEP=1";
  print_header();
  for (double beta : {1.0, 0.3, 0.1, 0.03, 0.01, 0.001}) {
    char name[64];
    std::snprintf(name, sizeof name, "sap, k 1e10, τ_d 0, β %g", beta);
    const SimContact sc{name, "sap", Solver::kSap, 1e10, 0.0, beta};
    for (Formulation f : kFormulations)
      print_row(sc, id_parameters(f), IdContacts::kGathered, forward_check(sc, id_parameters(f)));
  }
  for (const char* approximation : {"lstable", "similar", "lagged"})
    for (double k : {1e7, 1e8, 1e9, 1e10, 1e11}) {
      char name[64];
      std::snprintf(name, sizeof name, "%s, k %g", approximation, k);
      const bool lstable = std::string(approximation) == "lstable";
      const SimContact sc{name, lstable ? "sap" : approximation, lstable ? Solver::kLStable : Solver::kSap, k, 0.0, 1.0};
      for (Formulation f : kFormulations)
        print_row(sc, id_parameters(f), IdContacts::kGathered, forward_check(sc, id_parameters(f)));
    }
}

}  // namespace
}  // namespace coulomb::simulation
