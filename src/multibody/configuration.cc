#include "coulomb/multibody/configuration.h"

#include <cmath>
#include <numbers>

namespace coulomb::multibody {

void kinematic_map(const Model& model, const ConstVectorRef& q, Eigen::Ref<Eigen::MatrixXd> N) {
  N.setZero();
  for (const Body& body : model.bodies()) {
    const Joint& j = body.joint;
    if (j.nv == 1) {
      N(j.q_index, j.v_index) = 1.0;
    } else if (j.type == JointType::kFloating) {
      const int iq = j.q_index, iv = j.v_index;
      const double w = q[iq + 3], x = q[iq + 4], y = q[iq + 5], z = q[iq + 6];
      // ṗ = v (joint-frame velocity of the origin)
      N.block<3, 3>(iq, iv + 3) = math::Matrix3::Identity();
      // q̇ = ½ (0, ω) ⊗ q with ω in the joint frame:  ẇ = −½ q_v·ω,  q̇_v = ½ (w 1 − [q_v]×) ω
      N.block<1, 3>(iq + 3, iv) = -0.5 * math::Vector3(x, y, z).transpose();
      N.block<3, 3>(iq + 4, iv) = 0.5 * (w * math::Matrix3::Identity() - math::skew(math::Vector3(x, y, z)));
    } else if (j.type == JointType::kBall) {
      const int iq = j.q_index, iv = j.v_index;
      const double w = q[iq], x = q[iq + 1], y = q[iq + 2], z = q[iq + 3];
      N.block<1, 3>(iq, iv) = -0.5 * math::Vector3(x, y, z).transpose();
      N.block<3, 3>(iq + 1, iv) = 0.5 * (w * math::Matrix3::Identity() - math::skew(math::Vector3(x, y, z)));
    }
  }
}

void velocity_to_qdot(const Model& model, const ConstVectorRef& q, const ConstVectorRef& v,
                      Eigen::Ref<Eigen::VectorXd> qdot) {
  for (const Body& body : model.bodies()) {
    const Joint& j = body.joint;
    if (j.nv == 1) {
      qdot[j.q_index] = v[j.v_index];
    } else if (j.type == JointType::kFloating) {
      const int iq = j.q_index, iv = j.v_index;
      const math::Quaternion quat(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]);
      const math::Vector3 w = v.segment<3>(iv);
      qdot.segment<3>(iq) = v.segment<3>(iv + 3);
      const math::Quaternion dq = math::Quaternion(0.0, w.x(), w.y(), w.z()) * quat;
      qdot[iq + 3] = 0.5 * dq.w();
      qdot.segment<3>(iq + 4) = 0.5 * dq.vec();
    } else if (j.type == JointType::kBall) {
      const int iq = j.q_index, iv = j.v_index;
      const math::Quaternion quat(q[iq], q[iq + 1], q[iq + 2], q[iq + 3]);
      const math::Vector3 w = v.segment<3>(iv);
      const math::Quaternion dq = math::Quaternion(0.0, w.x(), w.y(), w.z()) * quat;
      qdot[iq] = 0.5 * dq.w();
      qdot.segment<3>(iq + 1) = 0.5 * dq.vec();
    }
  }
}

void integrate(const Model& model, const ConstVectorRef& q, const ConstVectorRef& v, double dt,
               Eigen::Ref<Eigen::VectorXd> q_next) {
  for (const Body& body : model.bodies()) {
    const Joint& j = body.joint;
    if (j.nv == 1) {
      q_next[j.q_index] = q[j.q_index] + dt * v[j.v_index];
    } else if (j.type == JointType::kFloating) {
      const int iq = j.q_index, iv = j.v_index;
      const math::Quaternion quat = math::Quaternion(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]).normalized();
      const math::Vector3 p = q.segment<3>(iq) + dt * v.segment<3>(iv + 3);
      math::Quaternion next = (math::quaternion_exp(dt * v.segment<3>(iv)) * quat).normalized();
      if (next.w() < 0.0) next.coeffs() = -next.coeffs();
      q_next.segment<3>(iq) = p;
      q_next[iq + 3] = next.w();
      q_next.segment<3>(iq + 4) = next.vec();
    } else if (j.type == JointType::kBall) {
      const int iq = j.q_index, iv = j.v_index;
      const math::Quaternion quat = math::Quaternion(q[iq], q[iq + 1], q[iq + 2], q[iq + 3]).normalized();
      math::Quaternion next = (math::quaternion_exp(dt * v.segment<3>(iv)) * quat).normalized();
      if (next.w() < 0.0) next.coeffs() = -next.coeffs();
      q_next[iq] = next.w();
      q_next.segment<3>(iq + 1) = next.vec();
    }
  }
}

void difference(const Model& model, const ConstVectorRef& q0, const ConstVectorRef& q1,
                Eigen::Ref<Eigen::VectorXd> dq) {
  for (const Body& body : model.bodies()) {
    const Joint& j = body.joint;
    if (j.nv == 1) {
      dq[j.v_index] = q1[j.q_index] - q0[j.q_index];
    } else if (j.type == JointType::kFloating) {
      const int iq = j.q_index, iv = j.v_index;
      const math::Matrix3 R0 =
          math::Quaternion(q0[iq + 3], q0[iq + 4], q0[iq + 5], q0[iq + 6]).normalized().toRotationMatrix();
      const math::Matrix3 R1 =
          math::Quaternion(q1[iq + 3], q1[iq + 4], q1[iq + 5], q1[iq + 6]).normalized().toRotationMatrix();
      dq.segment<3>(iv) = math::so3_log(R1 * R0.transpose());
      dq.segment<3>(iv + 3) = q1.segment<3>(iq) - q0.segment<3>(iq);
    } else if (j.type == JointType::kBall) {
      const int iq = j.q_index, iv = j.v_index;
      const math::Matrix3 R0 = math::Quaternion(q0[iq], q0[iq + 1], q0[iq + 2], q0[iq + 3]).normalized().toRotationMatrix();
      const math::Matrix3 R1 = math::Quaternion(q1[iq], q1[iq + 1], q1[iq + 2], q1[iq + 3]).normalized().toRotationMatrix();
      dq.segment<3>(iv) = math::so3_log(R1 * R0.transpose());
    }
  }
}

void normalize_configuration(const Model& model, Eigen::Ref<Eigen::VectorXd> q) {
  for (const Body& body : model.bodies()) {
    const Joint& j = body.joint;
    if (j.type != JointType::kFloating && j.type != JointType::kBall) continue;
    auto quat = q.segment<4>(j.q_index + (j.type == JointType::kFloating ? 3 : 0));
    quat.normalize();
    if (quat[0] < 0.0) quat = -quat;
  }
}

Eigen::VectorXd random_configuration(const Model& model, std::mt19937& rng) {
  Eigen::VectorXd q = model.neutral_configuration();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const Body& body : model.bodies()) {
    const Joint& j = body.joint;
    if (j.nv == 1) {
      const double default_range = j.type == JointType::kRevolute ? std::numbers::pi : 1.0;
      const double lo = std::isfinite(j.limits.lower) ? j.limits.lower : -default_range;
      const double hi = std::isfinite(j.limits.upper) ? j.limits.upper : default_range;
      q[j.q_index] = lo + (hi - lo) * unit(rng);
    } else if (j.type == JointType::kFloating) {
      for (int k = 0; k < 3; ++k) q[j.q_index + k] = 2.0 * unit(rng) - 1.0;
      Eigen::Vector4d quat(normal(rng), normal(rng), normal(rng), normal(rng));  // uniform on S³
      quat.normalize();
      if (quat[0] < 0.0) quat = -quat;
      q.segment<4>(j.q_index + 3) = quat;
    } else if (j.type == JointType::kBall) {
      Eigen::Vector4d quat(normal(rng), normal(rng), normal(rng), normal(rng));  // uniform on S³
      quat.normalize();
      if (quat[0] < 0.0) quat = -quat;
      q.segment<4>(j.q_index) = quat;
    }
  }
  return q;
}

}  // namespace coulomb::multibody
