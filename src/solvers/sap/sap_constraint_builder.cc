#include "coulomb/solvers/sap/sap_constraint_builder.h"

#include <cmath>
#include <stdexcept>

namespace coulomb::solvers::sap {

namespace {
// The pool slot of a limit (SapConstraintBuilder::limits_): 3 per velocity, for a finite lower
// side, a finite upper side, or both.
size_t limit_slot(const constraints::JointLimitConstraint& l) {
  const int sides = (std::isfinite(l.lower) ? 1 : 0) + (std::isfinite(l.upper) ? 2 : 0);
  if (sides == 0) throw std::invalid_argument("SapConstraintBuilder: a joint limit with no finite side");
  return 3 * static_cast<size_t>(l.v_index) + static_cast<size_t>(sides - 1);
}
// The SAP parameters of a joint limit of the set.
LimitParameters limit_parameters(const constraints::JointLimitConstraint& l, double theta_vq,
                                 const SapBuildParameters& parameters) {
  LimitParameters lp;
  lp.lower = l.lower;
  lp.upper = l.upper;
  lp.regularization = parameters.limit_regularization;
  lp.theta_vq = theta_vq;
  lp.v0 = l.v0;
  return lp;
}
}  // namespace

bool SapConstraintBuilder::limit_acts(const constraints::JointLimitConstraint& limit, double v, double time_step,
                                      double theta_vq, const SapBuildParameters& parameters) {
  return SapLimitConstraint::acts(limit.q0, v, time_step, limit_parameters(limit, theta_vq, parameters));
}

void SapConstraintBuilder::build(const constraints::ConstraintSet& set, const SapBuildParameters& parameters,
                                 SapProblem& problem) {
  const bool hunt_crossley = parameters.approximation != contact::ContactApproximation::kSap;
  // Frictional contacts: SAP's friction cone (approximation sap) or the Hunt–Crossley constraint
  // (similar, lagged; docs/contact.md "Contact approximations"), which needs v_n0.
  contact_index_.resize(set.contacts.size());
  size_t num_cones = 0, num_hc = 0;
  for (size_t i = 0; i < set.contacts.size(); ++i) {
    const constraints::ContactConstraint& c = set.contacts[i];
    const constraints::TreeBlock &b0 = c.blocks[0], &b1 = c.blocks[1];
    const bool two = c.num_blocks == 2;
    SapConstraint* constraint = nullptr;
    if (hunt_crossley) {
      HuntCrossleyParameters p;
      p.mu = c.material.mu;
      p.stiffness = c.material.stiffness;
      p.dissipation = c.material.hunt_crossley_dissipation;
      p.stiction_tolerance = c.material.stiction_tolerance;
      p.sigma = parameters.regularization.sigma;
      p.phi0 = c.phi0;
      p.vn0 = c.vn0;
      p.approximation = parameters.approximation;
      p.theta_vq = set.theta_vq;
      if (num_hc == hunt_crossley_.size())
        hunt_crossley_.push_back(std::make_unique<SapHuntCrossleyConstraint>(p, b0.tree, b0.J));
      SapHuntCrossleyConstraint& hc = *hunt_crossley_[num_hc++];
      if (two) hc.reset(p, b0.tree, b0.J, b1.tree, b1.J);
      else hc.reset(p, b0.tree, b0.J);
      constraint = &hc;
    } else {
      FrictionConeParameters p;
      p.mu = c.material.mu;
      p.stiffness = c.material.stiffness;
      p.dissipation_time = c.material.dissipation_time;
      p.phi0 = c.phi0;
      p.regularization = parameters.regularization;
      p.theta_vq = set.theta_vq;
      p.vn0 = c.vn0;
      if (num_cones == cones_.size()) cones_.push_back(std::make_unique<SapFrictionConeConstraint>(p, b0.tree, b0.J));
      SapFrictionConeConstraint& cone = *cones_[num_cones++];
      if (two) cone.reset(p, b0.tree, b0.J, b1.tree, b1.J);
      else cone.reset(p, b0.tree, b0.J);
      constraint = &cone;
    }
    contact_index_[i] = problem.add_constraint(constraint);
  }
  // Joint limits: recycled constraints per limited velocity, one for each set of finite sides
  // (lower, upper, both: a step's window, SimulatorParameters::joint_limit_window, may keep one).
  if (static_cast<int>(limits_.size()) < 3 * set.nv) limits_.resize(3 * set.nv);
  limit_index_.resize(set.limits.size());
  for (size_t i = 0; i < set.limits.size(); ++i) {
    const constraints::JointLimitConstraint& l = set.limits[i];
    const LimitParameters lp = limit_parameters(l, set.theta_vq, parameters);
    std::unique_ptr<SapLimitConstraint>& limit = limits_[limit_slot(l)];
    if (!limit) limit = std::make_unique<SapLimitConstraint>(l.tree, set.trees[l.tree].nv, l.local, l.q0, lp);
    else limit->reset(l.q0, lp);
    limit_index_[i] = problem.add_constraint(limit.get());
  }
  // Couplers (URDF <mimic>), near-rigid. β = 1 (with the limits' 0.1 a coupled pair of fingers
  // on their limits overshoots more under midpoint).
  coupler_index_.resize(set.couplers.size());
  for (size_t i = 0; i < set.couplers.size(); ++i) {
    const constraints::CouplerConstraint& c = set.couplers[i];
    CouplerParameters cp;
    cp.gear_ratio = c.gear_ratio;
    cp.offset = c.offset;
    cp.regularization = parameters.regularization;
    cp.theta_vq = set.theta_vq;
    cp.vc0 = c.vc0;
    if (static_cast<int>(couplers_.size()) <= c.coupler) couplers_.resize(c.coupler + 1);
    std::unique_ptr<SapCouplerConstraint>& coupler = couplers_[c.coupler];
    if (!coupler)
      coupler = std::make_unique<SapCouplerConstraint>(c.tree, set.trees[c.tree].nv, c.local, c.leader_local, c.q0,
                                                       c.leader_q0, cp);
    else
      coupler->reset(c.q0, c.leader_q0, cp);
    coupler_index_[i] = problem.add_constraint(coupler.get());
  }
  // Joint dry friction: the friction cone in one dimension.
  friction_index_.resize(set.joint_frictions.size());
  for (size_t i = 0; i < set.joint_frictions.size(); ++i) {
    const constraints::JointFrictionConstraint& f = set.joint_frictions[i];
    JointFrictionParameters fp;
    fp.friction = f.friction;
    fp.sigma = parameters.regularization.sigma;
    if (static_cast<int>(frictions_.size()) <= f.index) frictions_.resize(f.index + 1);
    std::unique_ptr<SapJointFrictionConstraint>& friction = frictions_[f.index];
    if (!friction) friction = std::make_unique<SapJointFrictionConstraint>(f.tree, set.trees[f.tree].nv, f.local, fp);
    else friction->reset(fp);
    friction_index_[i] = problem.add_constraint(friction.get());
  }
  // Actuators with PD gains: the implicit PD with the feed-forward inside the effort limit.
  pd_index_.resize(set.pd_actuators.size());
  for (size_t i = 0; i < set.pd_actuators.size(); ++i) {
    const constraints::PdActuatorConstraint& a = set.pd_actuators[i];
    PdControllerParameters pd{a.kp, a.kd, a.q_target, a.v_target, a.effort_limit};
    pd.theta_vq = set.theta_vq;
    pd.v0 = a.v0;
    pd.feedforward = a.feedforward;
    if (static_cast<int>(pds_.size()) <= a.actuator) pds_.resize(a.actuator + 1);
    std::unique_ptr<SapPdControllerConstraint>& c = pds_[a.actuator];
    if (!c) c = std::make_unique<SapPdControllerConstraint>(a.tree, set.trees[a.tree].nv, a.local, a.q0, pd);
    else c->reset(a.q0, pd);
    pd_index_[i] = problem.add_constraint(c.get());
  }
  // Bilateral constraints (ball, weld, distance, joint): compliant, near-rigid when rigid.
  bilateral_index_.resize(set.bilaterals.size());
  for (size_t i = 0; i < set.bilaterals.size(); ++i) {
    const constraints::BilateralConstraint& b = set.bilaterals[i];
    BilateralParameters& bp = bilateral_parameters_;
    bp.phi0 = b.phi0;
    bp.phidot0 = b.phidot0;
    bp.stiffness = b.stiffness;
    bp.damping = b.damping;
    bp.inert.resize(b.num_rows);
    for (int r = 0; r < b.num_rows; ++r) bp.inert[r] = b.inert_row(r) ? 1 : 0;
    bp.regularization = parameters.regularization;
    bp.theta_vq = set.theta_vq;
    const constraints::TreeBlock &b0 = b.blocks[0], &b1 = b.blocks[1];
    const bool two = b.num_blocks == 2;
    if (static_cast<int>(bilaterals_.size()) <= b.constraint) bilaterals_.resize(b.constraint + 1);
    std::unique_ptr<SapBilateralConstraint>& c = bilaterals_[b.constraint];
    if (!c || c->num_rows() != b.num_rows) {
      if (two) c = std::make_unique<SapBilateralConstraint>(bp, b0.tree, b0.J, b1.tree, b1.J);
      else c = std::make_unique<SapBilateralConstraint>(bp, b0.tree, b0.J);
    } else if (two) {
      c->reset(bp, b0.tree, b0.J, b1.tree, b1.J);
    } else {
      c->reset(bp, b0.tree, b0.J);
    }
    bilateral_index_[i] = problem.add_constraint(c.get());
  }
}

void SapConstraintBuilder::impulses(const constraints::ConstraintSet& set, const SapProblem& problem,
                                    const SapSolverResults* results, constraints::ConstraintImpulses& out) const {
  out.resize(set);
  if (results == nullptr) return;
  const SapSolverResults& r = *results;
  for (size_t i = 0; i < set.contacts.size(); ++i) {
    const int row = problem.row_start(contact_index_[i]);
    out.contacts.segment<3>(3 * i) = r.gamma.segment<3>(row);
    out.contact_velocities.segment<3>(3 * i) = r.vc.segment<3>(row);
  }
  // One-coordinate constraints: the generalized impulse on the joint is Σ_rows J(row, dof) γ_row.
  auto generalized = [&](const SapConstraint& c, int index, int local) {
    const int row = problem.row_start(index);
    const Eigen::MatrixXd& J = c.jacobian(0);
    double sum = 0.0;
    for (int rr = 0; rr < c.num_rows(); ++rr) sum += J(rr, local) * r.gamma[row + rr];
    return sum;
  };
  for (size_t i = 0; i < set.limits.size(); ++i)
    out.limits[i] = generalized(*limits_[limit_slot(set.limits[i])], limit_index_[i], set.limits[i].local);
  for (size_t i = 0; i < set.couplers.size(); ++i)
    out.couplers[i] = generalized(*couplers_[set.couplers[i].coupler], coupler_index_[i], set.couplers[i].local);
  for (size_t i = 0; i < set.joint_frictions.size(); ++i)
    out.joint_frictions[i] =
        generalized(*frictions_[set.joint_frictions[i].index], friction_index_[i], set.joint_frictions[i].local);
  for (size_t i = 0; i < set.pd_actuators.size(); ++i) out.pd_actuators[i] = r.gamma[problem.row_start(pd_index_[i])];
  for (size_t i = 0, row = 0; i < set.bilaterals.size(); ++i) {
    const int n = set.bilaterals[i].num_rows;
    out.bilaterals.segment(row, n) = r.gamma.segment(problem.row_start(bilateral_index_[i]), n);
    row += n;
  }
}

}  // namespace coulomb::solvers::sap
