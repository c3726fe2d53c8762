// Translates the solver-neutral constraints::ConstraintSet of a step into a SapProblem (one SAP
// constraint per contact, limited joint, coupler, joint friction and PD actuator), and SAP's
// impulses back into the set's neutral layout (constraints::ConstraintImpulses).
//
// Contacts become SapFrictionConeConstraint (approximation sap: linear compliant model with
// dissipation time τ_d, Castro et al. §V) or SapHuntCrossleyConstraint (similar, lagged); limits
// near-rigid SapLimitConstraint; couplers SapCouplerConstraint; joint friction
// SapJointFrictionConstraint; PD actuators SapPdControllerConstraint; bilateral constraints
// (ball, weld, distance, joint) SapBilateralConstraint (near-rigid when rigid). Every constraint predicts
// its position at the end of the step as the integrator moves it (set.theta_vq).
//
// The SAP constraint objects are pooled and reset each step: nothing is allocated once the
// numbers of contacts and constraints have peaked.
#pragma once

#include <memory>
#include <vector>

#include "coulomb/constraints/constraint_set.h"
#include "coulomb/contact/contact_approximation.h"
#include "coulomb/solvers/sap/sap_bilateral_constraint.h"
#include "coulomb/solvers/sap/sap_coupler_constraint.h"
#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_hunt_crossley_constraint.h"
#include "coulomb/solvers/sap/sap_joint_friction_constraint.h"
#include "coulomb/solvers/sap/sap_limit_constraint.h"
#include "coulomb/solvers/sap/sap_pd_controller_constraint.h"
#include "coulomb/solvers/sap/sap_problem.h"
#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::solvers::sap {

struct SapBuildParameters {
  contact::ContactApproximation approximation = contact::ContactApproximation::kSap;
  SapRegularization regularization;                ///< contacts, couplers (β, σ)
  SapRegularization limit_regularization{0.1, 1e-3};  ///< joint limits
};

class SapConstraintBuilder {
 public:
  /// Adds the constraints of `set` to `problem` (which reset() has prepared with δt, A and v*).
  void build(const constraints::ConstraintSet& set, const SapBuildParameters& parameters, SapProblem& problem);
  /// Whether `limit` (a joint limit as build() would add it) pushes at joint velocity v [rad/s
  /// or m/s] in a step of time_step [s] with the integrator's θ_vq (SapLimitConstraint::acts).
  static bool limit_acts(const constraints::JointLimitConstraint& limit, double v, double time_step, double theta_vq,
                         const SapBuildParameters& parameters);
  /// The impulses of the last build's constraints from SAP's results (γ, v_c), in the set's
  /// layout. Zero if `results` is null (no solve: no constraints or no velocities).
  void impulses(const constraints::ConstraintSet& set, const SapProblem& problem, const SapSolverResults* results,
                constraints::ConstraintImpulses& out) const;

 private:
  std::vector<std::unique_ptr<SapFrictionConeConstraint>> cones_;
  std::vector<std::unique_ptr<SapHuntCrossleyConstraint>> hunt_crossley_;
  /// Keyed by velocity index and finite sides, 3 per velocity (a limit constraint's rows depend on
  /// which limits are finite; the simulator's window may keep one side only).
  std::vector<std::unique_ptr<SapLimitConstraint>> limits_;
  std::vector<std::unique_ptr<SapCouplerConstraint>> couplers_;
  std::vector<std::unique_ptr<SapJointFrictionConstraint>> frictions_;
  std::vector<std::unique_ptr<SapPdControllerConstraint>> pds_;
  std::vector<std::unique_ptr<SapBilateralConstraint>> bilaterals_;  ///< keyed by scene constraint index
  BilateralParameters bilateral_parameters_;
  // Problem constraint index of each set entry, in the set's order.
  std::vector<int> contact_index_, limit_index_, coupler_index_, friction_index_, pd_index_, bilateral_index_;
};

}  // namespace coulomb::solvers::sap
