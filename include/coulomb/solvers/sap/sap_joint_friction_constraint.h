// Dry (Coulomb) friction on one joint (URDF <dynamics friction>) as a SAP constraint: the
// friction cone of Castro et al. (§III, Eq. 16–18) in one dimension. One row, v_c = v_j (the
// joint velocity), v̂ = 0, R = σ w (the cone's tangential regularization, σ = 1e-3 near-rigid
// default; w the Delassus estimate of the row), y = −v_c / R, and γ the projection of y onto
// the impulse interval [−F δt, F δt] (F the friction torque or force):
//   |y| ≤ F δt (stiction):  γ = y,            ℓ = v_c² / (2R),             G = 1/R;
//   |y| > F δt (sliding):   γ = −F δt sign v_c, ℓ = F δt |v_c| − ½ R (F δt)², G = 0.
// ℓ is convex and C¹ (a Huber function of v_c), ∂ℓ/∂v_c = −γ. The regularization lets a joint
// that should stick creep at |v_c| ≤ R F δt = σ w F δt (the stiction velocity).
#pragma once

#include "coulomb/solvers/sap/sap_constraint.h"

namespace coulomb::solvers::sap {

struct JointFrictionParameters {
  double friction = 0.0;  ///< F ≥ 0 [N·m or N]
  double sigma = 1e-3;    ///< σ: R = σ w
};

class SapJointFrictionConstraint : public SapConstraint {
 public:
  /// On velocity `dof` (within tree `tree` of n_t velocities). Throws std::invalid_argument for
  /// a negative or non-finite friction or σ ≤ 0.
  SapJointFrictionConstraint(int tree, int tree_nv, int dof, const JointFrictionParameters& parameters);
  /// Recycling: new parameters, same joint (no allocation).
  void reset(const JointFrictionParameters& parameters);

  void prepare(double time_step, const Eigen::Ref<const Eigen::MatrixXd>& W_ii) override;
  double calc(const Eigen::Ref<const Eigen::VectorXd>& vc, Eigen::Ref<Eigen::VectorXd> gamma,
              Eigen::Ref<Eigen::MatrixXd>* G) const override;
  /// The impulse bound F δt after prepare() [N·m·s or N·s].
  double max_impulse() const { return max_impulse_; }

 private:
  JointFrictionParameters parameters_;
  double max_impulse_ = 0.0;
};

}  // namespace coulomb::solvers::sap
