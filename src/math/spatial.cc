#include "coulomb/math/spatial.h"

#include <cmath>

namespace coulomb::math {

Matrix3 rotation_from_rpy(double roll, double pitch, double yaw) {
  return (Eigen::AngleAxisd(yaw, Vector3::UnitZ()) * Eigen::AngleAxisd(pitch, Vector3::UnitY()) *
          Eigen::AngleAxisd(roll, Vector3::UnitX()))
      .toRotationMatrix();
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
