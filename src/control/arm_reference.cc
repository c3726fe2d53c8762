// The arm's reference of Zapolsky & Drumwright's manipulator experiment (§7.2, §8.4.1; digest
// ../shared/digests/inverse-dynamics.md §8.2, §8.5(g)): a joint sinusoid about the initial pose,
// fingers holding still while they touch the box and closing when they do not.
//
// Choices the header leaves open:
//  - The ramp. After hold_time t_h the amplitude grows as a·r(u), u = f (t − t_h) ∈ [0, 1],
//    r(u) = u − sin(2πu)/(2π): r(0) = 0, r(1) = 1 and r', r'' vanish at both ends, so θ_des, θ̇_des
//    and θ̈_des are continuous (a linear ramp would jump θ̈_des by 2aω/T at its end). After the
//    ramp θ_des = θ₀ + a sin(2πf (t − t_h)) exactly.
//  - "Touching" is one flag for all fingers: some contact of the last step between a finger
//    body and the box. All fingers then hold (θ̇_des = 0) or all close together. Per-finger
//    flags would command the Panda's two fingers differently while the scene's <mimic> coupler
//    ties them (q₂ = q₁): inverse dynamics, which knows no couplers, would plan a motion the
//    simulator's coupler then fights.
//  - Before the first step (`last` has stats.time = 0 and no contacts) the flag comes from the
//    contacts at the initial configuration, gathered once in the constructor: a box placed
//    between the fingertips is held from the first step instead of being squeezed by a
//    one-step closing command (two velocity-prescribed fingers closing on a rigid box are an
//    infeasible inverse-dynamics request).
//  - A closing finger's θ_des starts from its position when it lost the box (or from q₀) and
//    stops at the joint's lower limit (θ̇_des = 0 there).
#include "coulomb/control/arm_reference.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::control {

namespace {

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// True if one body is the box and the other carries one of the fingertip frames.
bool finger_box_pair(const multibody::Model& model, const std::vector<int>& fingertips, int box, int body_a,
                     int body_b) {
  const int other = body_a == box ? body_b : body_b == box ? body_a : -1;
  if (other < 0) return false;
  for (int f : fingertips)
    if (model.frame(f).body == other) return true;
  return false;
}

}  // namespace

ArmReference::ArmReference(const simulation::Simulator& sim, ArmReferenceParameters parameters)
    : sim_(&sim), p_(std::move(parameters)) {
  const scene::Scene& scene = sim.scene();
  const multibody::Model& model = sim.model();
  if (!(p_.frequency > 0.0) || !std::isfinite(p_.frequency))
    throw std::invalid_argument("ArmReference: frequency must be > 0 and finite, got " + std::to_string(p_.frequency));
  if (!std::isfinite(p_.amplitude))
    throw std::invalid_argument("ArmReference: amplitude must be finite, got " + std::to_string(p_.amplitude));
  if (!(p_.closing_speed >= 0.0) || !std::isfinite(p_.closing_speed))
    throw std::invalid_argument("ArmReference: closing_speed must be >= 0 and finite, got " +
                                std::to_string(p_.closing_speed));
  if (!std::isfinite(p_.hold_time))
    throw std::invalid_argument("ArmReference: hold_time must be finite, got " + std::to_string(p_.hold_time));

  // The box: a free body of the scene.
  box_ = -1;
  for (int b = 1; b < model.num_bodies(); ++b)
    if (model.body(b).name == p_.box_body) box_ = b;
  if (box_ < 0) {
    std::string free;
    for (int b = 1; b < model.num_bodies(); ++b)
      if (model.body(b).joint.type == multibody::JointType::kFloating)
        free += (free.empty() ? "" : ", ") + model.body(b).name;
    throw std::invalid_argument("ArmReference: no body '" + p_.box_body + "' in the scene (its free bodies: " +
                                (free.empty() ? "none" : free) + ")");
  }
  if (model.body(box_).joint.type != multibody::JointType::kFloating)
    throw std::invalid_argument("ArmReference: body '" + p_.box_body + "' is not a free body");
  box_mass_ = model.body(box_).inertia.mass;

  // The robot: the scene's first robot with 1-dof joints; its 1-dof joints in velocity order.
  const scene::SceneRobot* robot = nullptr;
  struct Dof {
    int v, q, body;
    std::string name;  // without the robot's prefix
    multibody::JointType type;
  };
  std::vector<Dof> dofs;
  for (const scene::SceneRobot& r : scene.robots) {
    const std::string prefix = r.name.empty() ? "" : r.name + "/";
    for (const std::string& j : r.joints) {
      const int b = model.joint_body(j);
      if (b < 1 || model.body(b).joint.nv != 1) continue;
      const multibody::Joint& joint = model.body(b).joint;
      dofs.push_back({joint.v_index, joint.q_index, b, j.substr(prefix.size()), joint.type});
    }
    if (!dofs.empty()) {
      robot = &r;
      break;
    }
  }
  if (robot == nullptr) throw std::invalid_argument("ArmReference: the scene has no robot with 1-dof joints");
  std::sort(dofs.begin(), dofs.end(), [](const Dof& a, const Dof& b) { return a.v < b.v; });

  const int n = static_cast<int>(dofs.size());
  for (const Dof& d : dofs) {
    actuated_.push_back(d.v);
    q_index_.push_back(d.q);
    const bool finger = d.type == multibody::JointType::kPrismatic && contains(d.name, "finger");
    finger_.push_back(finger);
    if (finger) {
      finger_dofs_.push_back(d.v);
      fingertips_.push_back(model.frame_index(model.body(d.body).name));
    }
  }
  // Moving joints: the named ones, or every revolute arm joint.
  moving_.assign(n, false);
  if (p_.moving_joints.empty()) {
    for (int i = 0; i < n; ++i) moving_[i] = !finger_[i] && dofs[i].type == multibody::JointType::kRevolute;
  } else {
    const std::string prefix = robot->name.empty() ? "" : robot->name + "/";
    for (const std::string& name : p_.moving_joints) {
      int found = -1;
      for (int i = 0; i < n; ++i)
        if (dofs[i].name == name || prefix + dofs[i].name == name) found = i;
      if (found < 0) {
        std::string names;
        for (const Dof& d : dofs) names += (names.empty() ? "" : ", ") + d.name;
        throw std::invalid_argument("ArmReference: moving joint '" + name +
                                    "' is not a 1-dof joint of the robot (its 1-dof joints: " + names + ")");
      }
      if (finger_[found])
        throw std::invalid_argument("ArmReference: moving joint '" + name + "' is a finger (fingers hold or close)");
      moving_[found] = true;
    }
  }

  q0_.resize(n);
  for (int i = 0; i < n; ++i) q0_[i] = scene.q0[q_index_[i]];
  finger_target_ = q0_;

  // Whether a finger touches the box at the initial configuration (used until the first step).
  if (!fingertips_.empty()) {
    geometry::CollisionWorld world(model, scene.geometries, scene.collision);
    multibody::Workspace ws(model);
    multibody::forward_kinematics(model, ws, scene.q0);
    world.update_poses(ws);
    contact::ContactSet set;
    contact::gather_contacts(world, scene.contact, set);
    for (const contact::Contact& c : set.contacts)
      if (finger_box_pair(model, fingertips_, box_, c.body_a, c.body_b)) touching_ = true;
  }
}

void ArmReference::update(const simulation::State& state, const simulation::StepResults& last, JointReference& ref) {
  const multibody::Model& model = sim_->model();
  if (state.q.size() != model.nq() || state.v.size() != model.nv())
    throw std::invalid_argument("ArmReference::update: state sizes q " + std::to_string(state.q.size()) + ", v " +
                                std::to_string(state.v.size()) + " (the model has n_q " + std::to_string(model.nq()) +
                                ", n_v " + std::to_string(model.nv()) + ")");
  const int n = static_cast<int>(actuated_.size());
  if (ref.q.size() != n || ref.v.size() != n || ref.vdot.size() != n) {
    ref.q.resize(n);
    ref.v.resize(n);
    ref.vdot.resize(n);
  }
  ref.stance.resize(fingertips_.size());  // no allocation once sized
  ref.time = state.time;
  ref.has_base = false;

  // Touching: from the last step's contacts once a step has been taken.
  if (last.stats.time > 0.0 || !last.contacts.empty()) {
    touching_ = false;
    for (const simulation::ContactResult& c : last.contacts)
      if (finger_box_pair(model, fingertips_, box_, c.body_a, c.body_b)) {
        touching_ = true;
        break;
      }
  }
  const double dt = std::isnan(last_time_) ? 0.0 : std::max(0.0, state.time - last_time_);
  last_time_ = state.time;

  // Arm sinusoid with its ramp (see the file comment).
  const double two_pi = 2.0 * std::numbers::pi;
  const double f = p_.frequency, w = two_pi * f, a = p_.amplitude;
  const double tau = state.time - p_.hold_time;
  double A = 0.0, dA = 0.0, ddA = 0.0, s = 0.0, c = 1.0;
  if (tau > 0.0) {
    const double u = f * tau;
    if (u < 1.0) {
      A = a * (u - std::sin(two_pi * u) / two_pi);
      dA = a * f * (1.0 - std::cos(two_pi * u));
      ddA = a * f * f * two_pi * std::sin(two_pi * u);
    } else {
      A = a;
    }
    s = std::sin(w * tau);
    c = std::cos(w * tau);
  }
  const double x = A * s, xd = dA * s + A * w * c, xdd = ddA * s + 2.0 * dA * w * c - A * w * w * s;

  for (int i = 0, k = 0; i < n; ++i) {
    const double theta = state.q[q_index_[i]];
    if (finger_[i]) {
      const double lower = model.body(model.frame(fingertips_[k++]).body).joint.limits.lower;
      if (touching_) {
        finger_target_[i] = theta;
        ref.q[i] = theta;
        ref.v[i] = 0.0;
      } else {
        double target = finger_target_[i] - p_.closing_speed * dt;
        double speed = -p_.closing_speed;
        if (target <= lower) {
          target = lower;
          speed = 0.0;
        }
        finger_target_[i] = target;
        ref.q[i] = target;
        ref.v[i] = speed;
      }
      ref.vdot[i] = 0.0;
    } else if (moving_[i]) {
      ref.q[i] = q0_[i] + x;
      ref.v[i] = xd;
      ref.vdot[i] = xdd;
    } else {
      ref.q[i] = q0_[i];
      ref.v[i] = 0.0;
      ref.vdot[i] = 0.0;
    }
  }
  for (int& st : ref.stance) st = touching_ ? 1 : 0;
}

}  // namespace coulomb::control
