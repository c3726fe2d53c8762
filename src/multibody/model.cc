#include "coulomb/multibody/model.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include "../util/format.h"

namespace coulomb::multibody {

namespace {

bool finite(const math::Transform& X) { return X.R.allFinite() && X.p.allFinite(); }


}  // namespace

int Model::body_index(const std::string& name) const {
  auto it = body_by_name_.find(name);
  if (it == body_by_name_.end()) throw std::out_of_range("model '" + name_ + "' has no body named '" + name + "'");
  return it->second;
}

int Model::frame_index(const std::string& name) const {
  auto it = frame_by_name_.find(name);
  if (it == frame_by_name_.end()) throw std::out_of_range("model '" + name_ + "' has no frame named '" + name + "'");
  return it->second;
}

int Model::joint_body(const std::string& joint_name) const {
  auto it = body_by_joint_.find(joint_name);
  return it == body_by_joint_.end() ? -1 : it->second;
}

Eigen::VectorXd Model::neutral_configuration() const {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(nq_);
  for (const Body& b : bodies_)
    if (b.joint.type == JointType::kFloating) q[b.joint.q_index + 3] = 1.0;
    else if (b.joint.type == JointType::kBall) q[b.joint.q_index] = 1.0;
  return q;
}

Eigen::VectorXd Model::damping() const {
  Eigen::VectorXd d = Eigen::VectorXd::Zero(nv_);
  for (const Body& b : bodies_)
    if (b.joint.nv == 1) d[b.joint.v_index] = b.joint.damping;
  return d;
}

void Model::check_configuration(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (q.size() != nq_)
    throw std::invalid_argument("configuration q has " + std::to_string(q.size()) + " entries; model '" + name_ +
                                "' has nq = " + std::to_string(nq_));
  for (int i = 0; i < nq_; ++i)
    if (!std::isfinite(q[i]))
      throw std::invalid_argument("configuration q[" + std::to_string(i) + "] (" + position_names_[i] +
                                  ") is not finite: " + util::format_number(q[i]));
  for (const Body& b : bodies_) {
    if (b.joint.type == JointType::kFloating && q.segment<4>(b.joint.q_index + 3).norm() < 1e-12)
      throw std::invalid_argument("configuration of floating joint '" + b.joint.name +
                                  "' has a zero quaternion");
    if (b.joint.type == JointType::kBall && q.segment<4>(b.joint.q_index).norm() < 1e-12)
      throw std::invalid_argument("configuration of ball joint '" + b.joint.name + "' has a zero quaternion");
  }
}

void Model::check_velocity(const Eigen::Ref<const Eigen::VectorXd>& v, const char* what) const {
  if (v.size() != nv_)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(v.size()) + " entries; model '" +
                                name_ + "' has nv = " + std::to_string(nv_));
  for (int i = 0; i < nv_; ++i)
    if (!std::isfinite(v[i]))
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] (" + dof_names_[i] +
                                  ") is not finite: " + util::format_number(v[i]));
}

void Model::scale_body_inertia(int b, double factor) {
  if (b < 1 || b >= num_bodies())
    throw std::invalid_argument("model '" + name_ + "': scale_body_inertia: body index " + std::to_string(b) +
                                " is not in 1 … " + std::to_string(num_bodies() - 1));
  if (!(std::isfinite(factor) && factor > 0.0))
    throw std::invalid_argument("model '" + name_ + "': scale_body_inertia: body '" + bodies_[b].name +
                                "': factor must be finite and > 0, got " + util::format_number(factor));
  math::SpatialInertia& I = bodies_[b].inertia;
  total_mass_ += (factor - 1.0) * I.mass;
  I.mass *= factor;
  I.h *= factor;
  I.I_o *= factor;
  for (Frame& frame : frames_) {
    if (frame.body != b) continue;
    frame.inertia.mass *= factor;
    frame.inertia.h *= factor;
    frame.inertia.I_o *= factor;
  }
}

void validate_inertia(double mass, const math::Matrix3& I, const std::string& context) {
  if (!std::isfinite(mass)) throw std::invalid_argument(context + ": mass is not finite: " + util::format_number(mass));
  if (mass < 0.0) throw std::invalid_argument(context + ": negative mass " + util::format_number(mass) + " kg");
  if (!I.allFinite()) throw std::invalid_argument(context + ": inertia has a non-finite entry");
  const double scale = std::max(1.0, I.cwiseAbs().maxCoeff());
  if ((I - I.transpose()).cwiseAbs().maxCoeff() > 1e-12 * scale)
    throw std::invalid_argument(context + ": inertia matrix is not symmetric");
  Eigen::SelfAdjointEigenSolver<math::Matrix3> es(I);
  const math::Vector3 d = es.eigenvalues();  // ascending
  const double tol = 1e-9 * std::max(d.cwiseAbs().maxCoeff(), 1e-300);
  if (d[0] < -tol)
    throw std::invalid_argument(context + ": inertia is not positive semidefinite (principal moment " + util::format_number(d[0]) +
                                " kg·m²)");
  if (d[0] + d[1] < d[2] - tol)
    throw std::invalid_argument(context + ": principal moments (" + util::format_number(d[0]) + ", " + util::format_number(d[1]) + ", " +
                                util::format_number(d[2]) + ") kg·m² violate the triangle inequality I1 + I2 >= I3");
}

ModelBuilder::ModelBuilder(std::string model_name) {
  model_.name_ = std::move(model_name);
  Body world;
  world.name = "world";
  world.parent = -1;
  world.tree = 0;
  world.joint.name = "";
  model_.bodies_.push_back(world);
  model_.body_by_name_["world"] = 0;
  model_.frames_.push_back(Frame{"world", 0, math::Transform::Identity(), {}});
  model_.frame_by_name_["world"] = 0;
}

int ModelBuilder::add_frame(const std::string& name, const std::string& parent, const math::Transform& X_PF) {
  if (model_.frame_by_name_.count(name)) throw std::invalid_argument("duplicate frame/link name '" + name + "'");
  auto it = model_.frame_by_name_.find(parent);
  if (it == model_.frame_by_name_.end())
    throw std::invalid_argument("frame '" + name + "': unknown parent link '" + parent + "'");
  if (!finite(X_PF)) throw std::invalid_argument("frame '" + name + "': pose is not finite");
  const Frame& P = model_.frames_[it->second];
  const int index = static_cast<int>(model_.frames_.size());
  model_.frames_.push_back(Frame{name, P.body, P.X_BF * X_PF, {}});
  model_.frame_by_name_[name] = index;
  return index;
}

int ModelBuilder::add_link(const std::string& name, const std::string& parent, const JointSpec& spec,
                           const math::SpatialInertia& inertia) {
  const std::string ctx = "link '" + name + "' (joint '" + spec.name + "')";
  if (model_.frame_by_name_.count(name)) throw std::invalid_argument("duplicate link name '" + name + "'");
  auto pit = model_.frame_by_name_.find(parent);
  if (pit == model_.frame_by_name_.end()) throw std::invalid_argument(ctx + ": unknown parent link '" + parent + "'");
  if (!spec.name.empty() && model_.body_by_joint_.count(spec.name))
    throw std::invalid_argument(ctx + ": duplicate joint name '" + spec.name + "'");
  if (!finite(spec.X_PJ)) throw std::invalid_argument(ctx + ": joint origin is not finite");
  if (!std::isfinite(inertia.mass) || inertia.mass < 0.0 || !inertia.h.allFinite() || !inertia.I_o.allFinite())
    throw std::invalid_argument(ctx + ": invalid inertia (mass " + util::format_number(inertia.mass) + ")");
  if (spec.limits.lower > spec.limits.upper)
    throw std::invalid_argument(ctx + ": joint limits lower " + util::format_number(spec.limits.lower) + " > upper " +
                                util::format_number(spec.limits.upper));
  if (!(spec.damping >= 0.0) || !std::isfinite(spec.damping))
    throw std::invalid_argument(ctx + ": damping must be finite and >= 0, got " + util::format_number(spec.damping));
  if (!(spec.armature >= 0.0) || !std::isfinite(spec.armature))
    throw std::invalid_argument(ctx + ": armature must be finite and >= 0, got " + util::format_number(spec.armature));

  const Frame parent_frame = model_.frames_[pit->second];
  const math::Transform X_BparentJ = parent_frame.X_BF * spec.X_PJ;  // joint frame in the parent BODY frame
  const int frame_index = static_cast<int>(model_.frames_.size());
  model_.total_mass_ += inertia.mass;

  if (spec.type == JointType::kFixed) {
    // Fuse the link into the parent's body: a frame plus its inertia added to the body.
    Body& body = model_.bodies_[parent_frame.body];
    body.inertia += X_BparentJ.act(inertia);
    model_.frames_.push_back(Frame{name, parent_frame.body, X_BparentJ, inertia});
    model_.frame_by_name_[name] = frame_index;
    return frame_index;
  }

  Body body;
  body.name = name;
  body.parent = parent_frame.body;
  body.inertia = inertia;
  body.joint.name = spec.name;
  body.joint.type = spec.type;
  body.joint.X_PJ = X_BparentJ;
  body.joint.limits = spec.limits;
  body.joint.damping = spec.damping;
  body.joint.friction = spec.friction;
  body.joint.armature = spec.armature;
  body.joint.nq = joint_nq(spec.type);
  body.joint.nv = joint_nv(spec.type);
  body.joint.q_index = model_.nq_;
  body.joint.v_index = model_.nv_;
  if (spec.type == JointType::kRevolute || spec.type == JointType::kPrismatic) {
    const double n = spec.axis.norm();
    if (!std::isfinite(n) || n < 1e-12) throw std::invalid_argument(ctx + ": joint axis is zero or not finite");
    body.joint.axis = spec.axis / n;
    const math::Matrix3 K = math::skew(body.joint.axis);
    body.joint.R_PJ_axis_skew = X_BparentJ.R * K;
    body.joint.R_PJ_axis_skew2 = X_BparentJ.R * K * K;
  }
  const int index = static_cast<int>(model_.bodies_.size());
  body.tree = body.parent == 0 ? index : model_.bodies_[body.parent].tree;
  model_.nq_ += body.joint.nq;
  model_.nv_ += body.joint.nv;
  const std::string& jn = spec.name.empty() ? name : spec.name;
  body.joint.name = jn;
  if (spec.type == JointType::kFloating) {
    for (const char* s : {"x", "y", "z", "qw", "qx", "qy", "qz"}) model_.position_names_.push_back(jn + "." + s);
    for (const char* s : {"wx", "wy", "wz", "vx", "vy", "vz"}) model_.dof_names_.push_back(jn + "." + s);
  } else if (spec.type == JointType::kBall) {
    for (const char* s : {"qw", "qx", "qy", "qz"}) model_.position_names_.push_back(jn + "." + s);
    for (const char* s : {"wx", "wy", "wz"}) model_.dof_names_.push_back(jn + "." + s);
  } else {
    model_.position_names_.push_back(jn);
    model_.dof_names_.push_back(jn);
  }
  model_.body_by_joint_[jn] = index;
  model_.body_by_name_[name] = index;
  model_.bodies_.push_back(std::move(body));
  model_.frames_.push_back(Frame{name, index, math::Transform::Identity(), inertia});
  model_.frame_by_name_[name] = frame_index;
  return frame_index;
}

Model ModelBuilder::build() {
  Model& m = model_;
  // Renumber bodies tree by tree (stable within a tree, so parents still precede children) so
  // that every tree's bodies are consecutive and its coordinates contiguous.
  const int n = static_cast<int>(m.bodies_.size());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin() + 1, order.end(),
                   [&](int a, int b) { return m.bodies_[a].tree < m.bodies_[b].tree; });
  std::vector<int> new_index(n);
  for (int i = 0; i < n; ++i) new_index[order[i]] = i;
  std::vector<Body> bodies;
  bodies.reserve(n);
  std::vector<std::string> dof_names, position_names;
  int nq = 0, nv = 0;
  for (int i = 0; i < n; ++i) {
    Body body = m.bodies_[order[i]];
    if (i > 0) {
      body.parent = new_index[body.parent];
      body.tree = new_index[body.tree];
      for (int k = 0; k < body.joint.nq; ++k) position_names.push_back(m.position_names_[body.joint.q_index + k]);
      for (int k = 0; k < body.joint.nv; ++k) dof_names.push_back(m.dof_names_[body.joint.v_index + k]);
      body.joint.q_index = nq;
      body.joint.v_index = nv;
      nq += body.joint.nq;
      nv += body.joint.nv;
    }
    bodies.push_back(std::move(body));
  }
  m.bodies_ = std::move(bodies);
  m.dof_names_ = std::move(dof_names);
  m.position_names_ = std::move(position_names);
  for (Frame& f : m.frames_) f.body = new_index[f.body];
  for (auto& [name, index] : m.body_by_name_) index = new_index[index];
  for (auto& [name, index] : m.body_by_joint_) index = new_index[index];
  m.armature_ = Eigen::VectorXd::Zero(m.nv_);
  m.has_armature_ = false;
  for (const Body& b : m.bodies_) {
    if (b.joint.armature != 0.0) m.has_armature_ = true;
    m.armature_.segment(b.joint.v_index, b.joint.nv).setConstant(b.joint.armature);
  }
  m.floating_in_world_.assign(m.bodies_.size(), 0);
  for (size_t i = 1; i < m.bodies_.size(); ++i) {
    const Body& b = m.bodies_[i];
    m.floating_in_world_[i] = b.joint.type == JointType::kFloating && b.parent == 0 &&
                              b.joint.X_PJ.R == math::Matrix3::Identity() && b.joint.X_PJ.p == math::Vector3::Zero();
  }
  Model out = std::move(model_);
  model_ = Model();
  return out;
}

}  // namespace coulomb::multibody
