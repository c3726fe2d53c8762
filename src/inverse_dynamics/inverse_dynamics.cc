// InverseDynamics: builds the IdProblem of a Model at (q, v) with the given contacts and solves
// it (inverse_dynamics.h).
#include "coulomb/inverse_dynamics/inverse_dynamics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/scene/scene.h"

namespace coulomb::inverse_dynamics {

std::vector<int> joint_dofs(const multibody::Model& model) {
  std::vector<int> dofs;
  for (const multibody::Body& body : model.bodies()) {
    const multibody::Joint& j = body.joint;
    if (j.nv == 1) dofs.push_back(j.v_index);
  }
  std::sort(dofs.begin(), dofs.end());
  return dofs;
}

std::vector<int> actuated_dofs(const scene::Scene& scene) {
  if (scene.actuators.empty()) return joint_dofs(scene.model);
  std::vector<int> dofs;
  for (const scene::Actuator& a : scene.actuators) dofs.push_back(a.v_index);
  std::sort(dofs.begin(), dofs.end());
  dofs.erase(std::unique(dofs.begin(), dofs.end()), dofs.end());
  return dofs;
}

InverseDynamics::InverseDynamics(const multibody::Model& model, std::vector<int> actuated, IdParameters parameters)
    : model_(&model), actuated_(std::move(actuated)), solver_(parameters), ws_(model) {
  std::sort(actuated_.begin(), actuated_.end());
  for (size_t k = 0; k < actuated_.size(); ++k) {
    if (actuated_[k] < 0 || actuated_[k] >= model.nv())
      throw std::invalid_argument("InverseDynamics: actuated velocity index " + std::to_string(actuated_[k]) +
                                  " is outside [0, " + std::to_string(model.nv()) + ")");
    if (k > 0 && actuated_[k] == actuated_[k - 1])
      throw std::invalid_argument("InverseDynamics: actuated velocity index " + std::to_string(actuated_[k]) +
                                  " (" + model.dof_names()[actuated_[k]] + ") is listed twice");
  }
  external_.setZero(model.nv());
  damping_ = model.damping();
  per_count_.push_back(std::make_unique<PerCount>());
  current_ = per_count_[0].get();
}

void InverseDynamics::set_external_forces(const Eigen::VectorXd& f) {
  model_->check_velocity(f, "external forces");
  external_ = f;
}

void InverseDynamics::prepare(const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qdd_des,
                              double dt, int num_contacts) {
  const multibody::Model& model = *model_;
  model.check_configuration(q);
  model.check_velocity(v, "v");
  const int nq = num_actuated();
  if (qdd_des.size() != nq)
    throw std::invalid_argument("InverseDynamics: qdd_des must have one entry per actuated coordinate (" +
                                std::to_string(nq) + "), got " + std::to_string(qdd_des.size()));
  for (int j = 0; j < nq; ++j)
    if (!std::isfinite(qdd_des[j]))
      throw std::invalid_argument("InverseDynamics: qdd_des[" + std::to_string(j) + "] (" +
                                  model.dof_names()[actuated_[j]] + ") is not finite");
  if (!(dt > 0.0) || !std::isfinite(dt))
    throw std::invalid_argument("InverseDynamics: the time step dt must be > 0 and finite, got " + std::to_string(dt));
  const int m = model.nv();
  if (static_cast<int>(per_count_.size()) <= num_contacts) per_count_.resize(num_contacts + 1);
  if (!per_count_[num_contacts]) per_count_[num_contacts] = std::make_unique<PerCount>();
  current_ = per_count_[num_contacts].get();
  IdProblem& problem = current_->problem;
  if (problem.num_velocities() != m || problem.num_actuated() != nq || problem.num_contacts() != num_contacts)
    problem.resize(m, nq, num_contacts);
  problem.actuated = actuated_;
  problem.time_step = dt;
  problem.M = multibody::crba(model, ws_, q);
  // f_ext = −(C v + ∂V/∂q) − D v + external
  problem.f_ext = multibody::bias_forces(model, ws_, q, v);
  problem.f_ext *= -1.0;
  problem.f_ext -= damping_.cwiseProduct(v);
  problem.f_ext += external_;
  problem.v = v;
  for (int j = 0; j < nq; ++j) problem.qdot_des[j] = v[actuated_[j]] + dt * qdd_des[j];
  problem.N.setZero();
  problem.S.setZero();
  problem.T.setZero();
}

const IdResults& InverseDynamics::solve(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                        const Eigen::VectorXd& qdd_des, double dt,
                                        const contact::ContactSet& contacts) {
  const int n = contacts.size();
  prepare(q, v, qdd_des, dt, n);
  IdProblem& problem = current_->problem;
  contact::ContactJacobian& jacobian = current_->jacobian;
  for (int i = 0; i < n; ++i) {
    const contact::Contact& c = contacts.contacts[i];
    if (!std::isfinite(c.phi) || !c.p_W.allFinite() || !c.n_W.allFinite() || !c.R_WC.allFinite())
      throw std::invalid_argument("InverseDynamics: contact " + std::to_string(i) + " has a non-finite point, normal or φ");
    if (!(c.material.mu >= 0.0) || !std::isfinite(c.material.mu))
      throw std::invalid_argument("InverseDynamics: contact " + std::to_string(i) + " has friction coefficient mu = " +
                                  std::to_string(c.material.mu) + " (must be finite and >= 0)");
    problem.phi[i] = c.phi;
    problem.mu[i] = c.material.mu;
  }
  if (n > 0) {
    multibody::forward_kinematics(*model_, ws_, q);
    contact::contact_jacobian(*model_, ws_, contacts, jacobian);
    for (const contact::ContactJacobian::Block& blk : jacobian.blocks) {
      const int cols = static_cast<int>(blk.J.cols());
      problem.S.row(blk.contact).segment(blk.v_start, cols) += blk.J.row(0);
      problem.T.row(blk.contact).segment(blk.v_start, cols) += blk.J.row(1);
      problem.N.row(blk.contact).segment(blk.v_start, cols) += blk.J.row(2);
    }
  }
  solver_.solve(problem, current_->results);
  return current_->results;
}

const IdResults& InverseDynamics::solve(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                        const Eigen::VectorXd& qdd_des, const constraints::ConstraintSet& set) {
  const int n = static_cast<int>(set.contacts.size());
  if (set.nv != model_->nv())
    throw std::invalid_argument("InverseDynamics: the constraint set has n_v = " + std::to_string(set.nv) +
                                " but the model has " + std::to_string(model_->nv()));
  prepare(q, v, qdd_des, set.time_step, n);
  IdProblem& problem = current_->problem;
  for (int i = 0; i < n; ++i) {
    const constraints::ContactConstraint& c = set.contacts[i];
    problem.phi[i] = c.phi0;
    problem.mu[i] = c.material.mu;
    for (int b = 0; b < c.num_blocks; ++b) {
      const constraints::TreeBlock& blk = c.blocks[b];
      const int cols = static_cast<int>(blk.J.cols());
      problem.S.row(i).segment(blk.v_start, cols) += blk.J.row(0);
      problem.T.row(i).segment(blk.v_start, cols) += blk.J.row(1);
      problem.N.row(i).segment(blk.v_start, cols) += blk.J.row(2);
    }
  }
  solver_.solve(problem, current_->results);
  return current_->results;
}

}  // namespace coulomb::inverse_dynamics
