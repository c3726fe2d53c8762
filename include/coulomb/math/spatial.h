// Spatial (6-D) algebra for rigid-body dynamics: motions, forces, rigid transforms and
// rigid-body inertias, with the algebra as operators so that algorithms read like
// Featherstone, "Rigid Body Dynamics Algorithms" (2008), ch. 2.
//
// Conventions (used everywhere in coulomb):
//  - Spatial vectors are stored angular part first: a motion is [ω; v], a force is [τ; f].
//    A motion "expressed in frame B" is (ω, v_Bo): the angular velocity and the velocity of
//    the point fixed to the moving body that instantaneously coincides with B's origin, both
//    with components in B. A force expressed in B is the moment about B's origin and the
//    force, components in B.
//  - Transform X_AB is the pose of frame B in frame A (monogram notation, as in Drake):
//    p_A = R_AB p_B + p_AB for a point with coordinates p_B in B.
//  - SI units: m, kg, s, N, rad.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace coulomb::math {

using Vector3 = Eigen::Vector3d;
using Matrix3 = Eigen::Matrix3d;
using Vector6 = Eigen::Matrix<double, 6, 1>;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Quaternion = Eigen::Quaterniond;

/// Skew-symmetric cross-product matrix: skew(a) * b == a.cross(b). 3×3.
inline Matrix3 skew(const Vector3& a) {
  Matrix3 S;
  S << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return S;
}

struct SpatialForce;

/// A spatial motion vector (twist or spatial acceleration), [ω; v]. Units: rad/s and m/s
/// (velocities) or rad/s² and m/s² (accelerations).
struct SpatialMotion {
  Vector3 w = Vector3::Zero();  ///< angular part
  Vector3 v = Vector3::Zero();  ///< linear part (velocity of the point at the frame origin)

  SpatialMotion() = default;
  SpatialMotion(const Vector3& w_in, const Vector3& v_in) : w(w_in), v(v_in) {}
  /// From a 6-vector [ω; v].
  explicit SpatialMotion(const Vector6& m) : w(m.head<3>()), v(m.tail<3>()) {}

  static SpatialMotion Zero() { return {}; }
  Vector6 vector() const {
    Vector6 m;
    m.head<3>() = w;
    m.tail<3>() = v;
    return m;
  }

  SpatialMotion operator+(const SpatialMotion& o) const { return {w + o.w, v + o.v}; }
  SpatialMotion operator-(const SpatialMotion& o) const { return {w - o.w, v - o.v}; }
  SpatialMotion operator-() const { return {-w, -v}; }
  SpatialMotion operator*(double s) const { return {w * s, v * s}; }
  SpatialMotion& operator+=(const SpatialMotion& o) {
    w += o.w;
    v += o.v;
    return *this;
  }

  /// Motion cross product (Featherstone's ×): this × m = [ω×m.ω; ω×m.v + v×m.ω].
  SpatialMotion cross(const SpatialMotion& m) const {
    return {w.cross(m.w), w.cross(m.v) + v.cross(m.w)};
  }
  /// Force cross product (Featherstone's ×*): this ×* f = [ω×f.τ + v×f.f; ω×f.f].
  inline SpatialForce cross(const SpatialForce& f) const;
  /// Power pairing m · f [W or J when m is a displacement].
  inline double dot(const SpatialForce& f) const;
};

/// A spatial force vector (wrench or momentum), [τ; f]. Units: N·m and N (or N·m·s, N·s).
struct SpatialForce {
  Vector3 tau = Vector3::Zero();  ///< moment about the frame origin
  Vector3 f = Vector3::Zero();    ///< force

  SpatialForce() = default;
  SpatialForce(const Vector3& tau_in, const Vector3& f_in) : tau(tau_in), f(f_in) {}
  explicit SpatialForce(const Vector6& m) : tau(m.head<3>()), f(m.tail<3>()) {}

  static SpatialForce Zero() { return {}; }
  Vector6 vector() const {
    Vector6 m;
    m.head<3>() = tau;
    m.tail<3>() = f;
    return m;
  }

  SpatialForce operator+(const SpatialForce& o) const { return {tau + o.tau, f + o.f}; }
  SpatialForce operator-(const SpatialForce& o) const { return {tau - o.tau, f - o.f}; }
  SpatialForce operator-() const { return {-tau, -f}; }
  SpatialForce operator*(double s) const { return {tau * s, f * s}; }
  SpatialForce& operator+=(const SpatialForce& o) {
    tau += o.tau;
    f += o.f;
    return *this;
  }
  SpatialForce& operator-=(const SpatialForce& o) {
    tau -= o.tau;
    f -= o.f;
    return *this;
  }
};

inline SpatialForce SpatialMotion::cross(const SpatialForce& F) const {
  return {w.cross(F.tau) + v.cross(F.f), w.cross(F.f)};
}
inline double SpatialMotion::dot(const SpatialForce& F) const { return w.dot(F.tau) + v.dot(F.f); }

/// Spatial inertia of a rigid body about a frame's origin, in that frame's components.
/// Stored as mass m [kg], first moment h = m·c [kg·m] (c: centre of mass) and rotational
/// inertia I_o about the frame origin [kg·m²]. The 6×6 form is [[I_o, [h]×], [[h]×ᵀ, m·1]].
struct SpatialInertia {
  double mass = 0.0;
  Vector3 h = Vector3::Zero();
  Matrix3 I_o = Matrix3::Zero();

  SpatialInertia() = default;
  SpatialInertia(double m, const Vector3& h_in, const Matrix3& I_o_in) : mass(m), h(h_in), I_o(I_o_in) {}

  /// From mass [kg], centre of mass p_BoBcm [m] and rotational inertia about the centre of
  /// mass I_Bcm [kg·m²] (parallel-axis theorem). No validation; see validate_inertia().
  static SpatialInertia FromCenterOfMass(double m, const Vector3& com, const Matrix3& I_com) {
    return {m, m * com, I_com - m * skew(com) * skew(com)};
  }
  static SpatialInertia Zero() { return {}; }

  /// Centre of mass [m]; the origin when mass is zero.
  Vector3 com() const { return mass > 0.0 ? Vector3(h / mass) : Vector3::Zero(); }
  /// Rotational inertia about the centre of mass [kg·m²].
  Matrix3 inertia_about_com() const {
    if (mass <= 0.0) return I_o;
    const Vector3 c = h / mass;
    return I_o + mass * skew(c) * skew(c);
  }

  /// Momentum / force of a motion: I * V = [I_o ω + h × v; m v − h × ω].
  SpatialForce operator*(const SpatialMotion& V) const {
    return {I_o * V.w + h.cross(V.v), mass * V.v - h.cross(V.w)};
  }
  SpatialInertia operator+(const SpatialInertia& o) const { return {mass + o.mass, h + o.h, I_o + o.I_o}; }
  SpatialInertia& operator+=(const SpatialInertia& o) {
    mass += o.mass;
    h += o.h;
    I_o += o.I_o;
    return *this;
  }
  /// Dense 6×6 matrix, angular rows/columns first.
  Matrix6 matrix() const {
    Matrix6 M;
    const Matrix3 H = skew(h);
    M.topLeftCorner<3, 3>() = I_o;
    M.topRightCorner<3, 3>() = H;
    M.bottomLeftCorner<3, 3>() = H.transpose();
    M.bottomRightCorner<3, 3>() = mass * Matrix3::Identity();
    return M;
  }
  /// Kinetic energy ½ Vᵀ I V [J].
  double kinetic_energy(const SpatialMotion& V) const { return 0.5 * V.dot((*this) * V); }
};

/// Rigid transform X_AB (pose of frame B in frame A): rotation R_AB and translation p_AB.
struct Transform {
  Matrix3 R = Matrix3::Identity();
  Vector3 p = Vector3::Zero();

  Transform() = default;
  Transform(const Matrix3& R_in, const Vector3& p_in) : R(R_in), p(p_in) {}
  static Transform Identity() { return {}; }

  /// Composition X_AC = X_AB * X_BC.
  Transform operator*(const Transform& X_BC) const { return {R * X_BC.R, p + R * X_BC.p}; }
  /// X_BA from X_AB.
  Transform inverse() const { return {R.transpose(), -(R.transpose() * p)}; }

  /// Point p_B [m] (coordinates in B) to coordinates in A.
  Vector3 act(const Vector3& p_B) const { return R * p_B + p; }
  /// Motion expressed in B to the same motion expressed in A.
  SpatialMotion act(const SpatialMotion& m_B) const {
    const Vector3 w = R * m_B.w;
    return {w, R * m_B.v + p.cross(w)};
  }
  /// Motion expressed in A to the same motion expressed in B.
  SpatialMotion act_inv(const SpatialMotion& m_A) const {
    return {R.transpose() * m_A.w, R.transpose() * (m_A.v - p.cross(m_A.w))};
  }
  /// Force expressed in B to the same force expressed in A.
  SpatialForce act(const SpatialForce& f_B) const {
    const Vector3 f = R * f_B.f;
    return {R * f_B.tau + p.cross(f), f};
  }
  /// Force expressed in A to the same force expressed in B.
  SpatialForce act_inv(const SpatialForce& f_A) const {
    return {R.transpose() * (f_A.tau - p.cross(f_A.f)), R.transpose() * f_A.f};
  }
  /// Inertia expressed about B's origin in B to the same inertia about A's origin in A.
  /// I_A = R I_B Rᵀ − m [p]×[p]× − [p]×[h]× − [h]×[p]× with h = R h_B, evaluated with
  /// [a]×[b]× = b aᵀ − (a·b) 1 and the symmetry of the result.
  SpatialInertia act(const SpatialInertia& I_B) const {
    const Vector3 h = R * I_B.h;
    const Matrix3 RI = R * I_B.I_o;
    const double m = I_B.mass;
    const double diag = m * p.squaredNorm() + 2.0 * p.dot(h);
    SpatialInertia out;
    out.mass = m;
    out.h = h + m * p;
    for (int i = 0; i < 3; ++i) {
      for (int j = i; j < 3; ++j) {
        const double v = RI.row(i).dot(R.row(j)) - m * p[i] * p[j] - h[i] * p[j] - p[i] * h[j];
        out.I_o(i, j) = v;
        out.I_o(j, i) = v;
      }
      out.I_o(i, i) += diag;
    }
    return out;
  }
  /// 6×6 matrix mapping a motion expressed in B to the motion expressed in A.
  Matrix6 motion_matrix() const {
    Matrix6 X;
    X << R, Matrix3::Zero(), skew(p) * R, R;
    return X;
  }
  /// 6×6 matrix mapping a force expressed in B to the force expressed in A.
  Matrix6 force_matrix() const {
    Matrix6 X;
    X << R, skew(p) * R, Matrix3::Zero(), R;
    return X;
  }
};

/// Rotation matrix from roll-pitch-yaw (URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll)).
Matrix3 rotation_from_rpy(double roll, double pitch, double yaw);
/// Its inverse: (roll, pitch, yaw) [rad] with pitch in [−π/2, π/2] and roll, yaw in (−π, π];
/// at gimbal lock (|pitch| = π/2) roll is 0 and yaw takes the whole rotation about z.
Vector3 rpy_from_rotation(const Matrix3& R);
/// Rotation about a unit axis by angle [rad] (Rodrigues). axis must be unit length.
Matrix3 rotation_about_axis(const Vector3& axis, double angle);
/// SO(3) exponential: rotation matrix exp([θ]×) for a rotation vector θ [rad].
Matrix3 so3_exp(const Vector3& theta);
/// Quaternion exponential: the unit quaternion of the rotation vector θ [rad].
Quaternion quaternion_exp(const Vector3& theta);
/// SO(3) logarithm: rotation vector θ with so3_exp(θ) == R, |θ| ≤ π.
Vector3 so3_log(const Matrix3& R);

}  // namespace coulomb::math
