#include "coulomb/math/spatial.h"

#include <algorithm>

#include <cmath>

namespace coulomb::math {

Matrix3 rotation_from_rpy(double roll, double pitch, double yaw) {
  return (Eigen::AngleAxisd(yaw, Vector3::UnitZ()) * Eigen::AngleAxisd(pitch, Vector3::UnitY()) *
          Eigen::AngleAxisd(roll, Vector3::UnitX()))
      .toRotationMatrix();
}

Vector3 rpy_from_rotation(const Matrix3& R) {
  // R = Rz(y) Ry(p) Rx(r): R(2,0) = −sin p, R(2,1) = cos p sin r, R(2,2) = cos p cos r,
  // R(1,0) = sin y cos p, R(0,0) = cos y cos p.
  const double sp = std::clamp(-R(2, 0), -1.0, 1.0);
  const double cp = std::hypot(R(0, 0), R(1, 0));
  if (cp < 1e-12) {  // gimbal lock: only yaw ± roll is defined
    const double yaw = std::atan2(-R(0, 1), R(1, 1));
    return {0.0, std::atan2(sp, cp), yaw};
  }
  return {std::atan2(R(2, 1), R(2, 2)), std::atan2(sp, cp), std::atan2(R(1, 0), R(0, 0))};
}

Matrix3 rotation_about_axis(const Vector3& a, double angle) {
  const double s = std::sin(angle), c = std::cos(angle), t = 1.0 - c;
  Matrix3 R;
  R << t * a.x() * a.x() + c, t * a.x() * a.y() - s * a.z(), t * a.x() * a.z() + s * a.y(),
      t * a.x() * a.y() + s * a.z(), t * a.y() * a.y() + c, t * a.y() * a.z() - s * a.x(),
      t * a.x() * a.z() - s * a.y(), t * a.y() * a.z() + s * a.x(), t * a.z() * a.z() + c;
  return R;
}

Quaternion quaternion_exp(const Vector3& theta) {
  const double angle = theta.norm();
  const double half = 0.5 * angle;
  // sin(half)/angle, with its Taylor series near 0 so that small rotations stay accurate.
  const double k = angle < 1e-8 ? 0.5 - angle * angle / 48.0 : std::sin(half) / angle;
  return Quaternion(std::cos(half), k * theta.x(), k * theta.y(), k * theta.z());
}

Matrix3 so3_exp(const Vector3& theta) { return quaternion_exp(theta).toRotationMatrix(); }

Vector3 so3_log(const Matrix3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

}  // namespace coulomb::math
