// InverseDynamics: the model-aware front end of IdSolver (id_solver.h). Given a Model, the state
// (q, v), the desired accelerations of the actuated coordinates and the contacts — those of the
// simulator's ConstraintSet, a ContactSet the caller built, or the ones a CollisionWorld finds
// at q — it assembles the IdProblem (M by CRBA, f_ext = −(C v + ∂V/∂q) − D v + external forces,
// N, S, T from the contact Jacobian) and returns torques, per-contact impulses, ⁺v, the active
// set and the solver's figures. Zapolsky & Drumwright, "Inverse Dynamics with Rigid Contact and
// Friction"; digest ../shared/digests/inverse-dynamics.md.
//
// The contact frame convention is contact::ContactSet's: rows [t1, t2, n] of R_WC, the normal
// from body A into body B; the impulses are those body B receives (A receives their opposite).
// Nothing is allocated once a solve with the same contact count has been done: the problem, the
// results and the contact Jacobian are kept per contact count, so a gait cycling through 4, 2, 4
// contacts is allocation-free once each count has been solved (tests/simulation/allocation_test.cc).
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "coulomb/constraints/constraint_set.h"
#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/inverse_dynamics/id_solver.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::scene {
struct Scene;
}

namespace coulomb::inverse_dynamics {

/// Every velocity index of a 1-dof joint (revolute, prismatic, continuous), ascending: the
/// actuated coordinates of a robot whose joints are all motorized (floating bases and free
/// bodies are not).
std::vector<int> joint_dofs(const multibody::Model& model);
/// The scene's actuators' velocity indices (ascending), or joint_dofs(scene.model) when the
/// scene declares none.
std::vector<int> actuated_dofs(const scene::Scene& scene);

class InverseDynamics {
 public:
  /// `model` must outlive this object. `actuated`: velocity indices of the actuated
  /// coordinates (P's rows), distinct; sorted here. Throws std::invalid_argument naming the
  /// index for one out of [0, n_v) or repeated, and for invalid parameters.
  InverseDynamics(const multibody::Model& model, std::vector<int> actuated, IdParameters parameters = {});

  const multibody::Model& model() const { return *model_; }
  const std::vector<int>& actuated() const { return actuated_; }
  int num_actuated() const { return static_cast<int>(actuated_.size()); }
  const IdParameters& parameters() const { return solver_.parameters(); }

  /// Generalized external forces added to f_ext (n_v) [N, N·m], e.g. joint springs or a
  /// known push; zero by default. Throws std::invalid_argument on a wrong size or NaN.
  void set_external_forces(const Eigen::VectorXd& f);

  /// Solves with the contacts of `contacts` (points, normals, φ, μ at q; the contact Jacobian is
  /// computed here). q n_q, v n_v, qdd_des n_q-actuated [rad/s², m/s²], dt > 0 [s]. Contacts
  /// with φ > parameters().max_distance are left out; results are per contact of `contacts`
  /// (zero for those left out). Throws std::invalid_argument naming the vector and index on
  /// wrong sizes or non-finite values, and from IdSolver::solve.
  const IdResults& solve(const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qdd_des,
                         double dt, const contact::ContactSet& contacts);
  /// Same with the contacts of a simulator step (Simulator::constraint_set(): Jacobian blocks
  /// at q₀, φ₀, μ; Δt = set.time_step), in set.contacts order.
  const IdResults& solve(const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qdd_des,
                         const constraints::ConstraintSet& set);

  const IdResults& results() const { return current_->results; }
  /// The problem of the last solve (for inspection and tests).
  const IdProblem& problem() const { return current_->problem; }
  /// Forgets warm starts.
  void reset() { solver_.reset(); }

 private:
  void prepare(const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qdd_des, double dt,
               int num_contacts);

  const multibody::Model* model_;
  std::vector<int> actuated_;
  IdSolver solver_;
  multibody::Workspace ws_;
  Eigen::VectorXd external_;
  Eigen::VectorXd damping_;
  /// Everything sized by the contact count n, one set per n seen (Eigen's resize reallocates on
  /// every size change, so one shared set would allocate whenever n changes).
  struct PerCount {
    IdProblem problem;
    IdResults results;
    contact::ContactJacobian jacobian;
  };
  std::vector<std::unique_ptr<PerCount>> per_count_;
  PerCount* current_ = nullptr;  ///< the set of the last solve (n = 0 before the first)
};

}  // namespace coulomb::inverse_dynamics
