// Small systems for the L-stable solver's paper tests (lstable_paper_test.cc), built directly as
// ConstraintSets: the range-of-motion pendulum (digest §5.3), a vertical stack of spheres (§5.6)
// and a rod with a frictional contact candidate at each end (Painlevé). Each keeps its own state
// (q, v), builds the step's ConstraintSet, A blocks and free velocity v*, advances
// q₁ = q₀ + δt v₁ (θ_vq = 1, the paper's scheme), and reports its total energy
// (kinetic + gravity + the constraint springs' ½ K min(φ, 0)²).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Geometry>

#include "coulomb/constraints/constraint_set.h"
#include "coulomb/solvers/lstable/lstable_solver.h"

namespace coulomb::solvers::lstable::test_util {

inline double spring_energy(double K, double phi) { return phi < 0.0 ? 0.5 * K * phi * phi : 0.0; }

inline Eigen::Matrix3d skew(const Eigen::Vector3d& a) {
  Eigen::Matrix3d S;
  S << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return S;
}

// Range-of-motion pendulum in minimal coordinates (digest §5.3): θ = 0 is the lowest bob
// position, the limit is θ ≥ 0 (LStableParameters::limit_stiffness K, limit_damping B), m = 1,
// L = 1, so M = m L² = 1 = M̂, and gravity f = −m g L sin θ is explicit (in v*).
struct RomPendulum {
  double g = 9.81;
  double theta = M_PI / 2, omega = 0.0;

  /// One step of size h; returns the solver's results (the limit impulse is impulses.limits[0]).
  const LStableResults& step(LStableSolver& solver, double h) {
    set.time_step = h;
    set.theta_vq = 1.0;
    set.nv = 1;
    set.trees = {{1, 0, 1}};
    set.clear();
    constraints::JointLimitConstraint& l = set.limits.add();
    l.body = 1;
    l.q0 = theta;
    l.v0 = omega;
    l.lower = 0.0;
    l.upper = std::numeric_limits<double>::infinity();
    v_star.setConstant(1, omega - h * g * std::sin(theta));
    const LStableResults& r = solver.solve(set, A, v_star);
    omega = r.v[0];
    theta += h * omega;
    return r;
  }
  double gravity_energy(double th) const { return g * (1.0 - std::cos(th)); }
  double energy(double K) const { return 0.5 * omega * omega + gravity_energy(theta) + spring_energy(K, theta); }

  constraints::ConstraintSet set;
  std::vector<Eigen::MatrixXd> A{Eigen::MatrixXd::Ones(1, 1)};
  Eigen::VectorXd v_star;
};

// A vertical stack of N spheres (mass m, radius r) on the ground z = 0, contact i joins sphere
// i − 1 (the ground for i = 0) and sphere i, normal +z, contact point midway. Linear contact
// model: the Jacobians are those of the vertical stack and do not change with q (the spheres
// stay aligned when no lateral motion is given; with lateral motion the model is the linear one
// of digest §4 item 1, which is what the energy proof needs).
//  - frictionless (mu = 0): each sphere on a vertical slider, 1 dof (z), one row per contact;
//  - frictional: each sphere a free body, 6 dofs [v_WS; ω_WS] (world frame), rows [t1, t2, n] =
//    world [x, y, z], v_c = (v_i + ω_i × (−r ẑ)) − (v_{i−1} + ω_{i−1} × (r ẑ)).
// The contact's spring: stiffness K, dissipation time τ = B / K (B the normal damper).
struct SphereStack {
  int N = 10;
  double m = 1.0, r = 0.1, K = 1e8, B = 1.0, mu = 0.0, g = 9.81;
  Eigen::VectorXd q, v;  ///< per sphere: z (1 dof) or [x, y, z, rotation vector increments] (6 dofs)

  int dofs() const { return mu > 0.0 ? 6 : 1; }
  int z_index(int i) const { return dofs() * i + (mu > 0.0 ? 2 : 0); }
  double inertia() const { return 0.4 * m * r * r; }

  /// Spheres at rest, the bottom one's centre at height r + gap, each next one 2 r + gap higher.
  void place(double gap) {
    q.setZero(N * dofs());
    v.setZero(N * dofs());
    for (int i = 0; i < N; ++i) q[z_index(i)] = r + gap + i * (2 * r + gap);
  }
  /// Signed gap of contact i (< 0 overlapping).
  double phi(int i) const { return i == 0 ? q[z_index(0)] - r : q[z_index(i)] - q[z_index(i - 1)] - 2 * r; }
  double normal_velocity(int i) const { return i == 0 ? v[z_index(0)] : v[z_index(i)] - v[z_index(i - 1)]; }
  /// The load on contact i (from the bottom, 0-based) at rest: (N − i) m g, i.e. (N − i + 1) m g
  /// with 1-based contacts (digest test 11).
  double static_load(int i) const { return (N - i) * m * g; }

  void fill(constraints::ConstraintSet& set, double h) const {
    const int d = dofs();
    set.time_step = h;
    set.theta_vq = 1.0;
    set.nv = N * d;
    set.trees.clear();
    for (int i = 0; i < N; ++i) set.trees.push_back({i + 1, d * i, d});
    set.clear();
    Eigen::MatrixXd J_above(3, d), J_below(3, d);  // the upper sphere's and the lower sphere's Jacobian at the point
    J_above.setZero();
    J_below.setZero();
    if (d == 1) {
      J_above(2, 0) = 1.0;
      J_below(2, 0) = 1.0;
    } else {
      J_above.leftCols(3).setIdentity();
      J_above.rightCols(3) = -skew(Eigen::Vector3d(0, 0, -r));
      J_below.leftCols(3).setIdentity();
      J_below.rightCols(3) = -skew(Eigen::Vector3d(0, 0, r));
    }
    for (int i = 0; i < N; ++i) {
      constraints::ContactConstraint& c = set.contacts.add();
      c.contact = i;
      c.material.mu = mu;
      c.material.stiffness = K;
      c.material.dissipation_time = B / K;
      c.num_blocks = i == 0 ? 1 : 2;
      c.blocks[0].tree = i;
      c.blocks[0].v_start = d * i;
      c.blocks[0].J = J_above;
      if (i > 0) {
        c.blocks[1].tree = i - 1;
        c.blocks[1].v_start = d * (i - 1);
        c.blocks[1].J = -J_below;
      }
      c.phi0 = phi(i);
      c.vn0 = normal_velocity(i);
    }
  }
  std::vector<Eigen::MatrixXd> A_blocks() const {
    Eigen::MatrixXd Ai = Eigen::MatrixXd::Identity(dofs(), dofs()) * m;
    if (dofs() == 6) Ai.bottomRightCorner(3, 3) *= inertia() / m;
    return std::vector<Eigen::MatrixXd>(N, Ai);
  }
  Eigen::VectorXd v_star(double h) const {
    Eigen::VectorXd vs = v;
    for (int i = 0; i < N; ++i) vs[z_index(i)] -= h * g;
    return vs;
  }
  void advance(const Eigen::VectorXd& v1, double h) {
    v = v1;
    q += h * v;
  }
  double energy() const {
    double E = 0.0;
    for (int i = 0; i < N; ++i) {
      const int d = dofs();
      E += 0.5 * m * v.segment(d * i, std::min(d, 3)).squaredNorm() + m * g * q[z_index(i)] + spring_energy(K, phi(i));
      if (d == 6) E += 0.5 * inertia() * v.segment(d * i + 3, 3).squaredNorm();
    }
    return E;
  }
};

// A uniform rod (mass m, length L, a thin cylinder of radius rho for a positive-definite
// inertia) as a free body in 3-D, v = [v_WB; ω_WB] (world frame, B at the centre of mass), its
// body x-axis along the rod, with a frictional contact candidate at each end E (end 0 at
// p_WB − R_WB (L/2) x̂, the "lower" end; end 1 at p_WB + R_WB (L/2) x̂) against the ground z = 0:
// frame [t1, t2, n] = world [x, y, z], J = [[dᵀ, (p_BE × d)ᵀ]] for d = t1, t2, n
// (p_BE = p_WE − p_WB), φ₀ = z of the end (the signed distance; the solver's row acts only when
// the predicted φ₁ < 0). Gravity and the gyroscopic term are explicit (in v*).
struct Rod {
  double m = 1.0, L = 1.0, rho = 0.01, g = 9.81;
  double K = 1e8, tau = 1e-4, mu = 1.5;
  Eigen::Vector3d p_WB = Eigen::Vector3d::Zero(), v_WB = Eigen::Vector3d::Zero(), w_WB = Eigen::Vector3d::Zero();
  Eigen::Matrix3d R_WB = Eigen::Matrix3d::Identity();

  /// Placed with end 0 on the ground at the origin, the rod in the xz-plane at `angle` above the
  /// horizontal (end 1 at +x), end 0 sliding along x at `slip` [m/s], no rotation.
  void place(double angle, double slip) {
    R_WB = Eigen::AngleAxisd(-angle, Eigen::Vector3d::UnitY()).toRotationMatrix();  // x̂_B = (cos, 0, sin)
    p_WB = -p_BE_W(0);
    v_WB = Eigen::Vector3d(slip, 0, 0);
    w_WB.setZero();
  }
  double angle() const {
    const Eigen::Vector3d x = R_WB.col(0);
    return std::atan2(x.z(), x.x());
  }
  Eigen::Matrix3d I_B() const {
    const double Ia = 0.5 * m * rho * rho, It = m * (3 * rho * rho + L * L) / 12.0;
    return Eigen::Vector3d(Ia, It, It).asDiagonal();
  }
  Eigen::Matrix3d I_W() const { return R_WB * I_B() * R_WB.transpose(); }
  Eigen::Vector3d p_BE_W(int end) const { return R_WB * Eigen::Vector3d(end == 0 ? -0.5 * L : 0.5 * L, 0, 0); }
  Eigen::Vector3d p_WE(int end) const { return p_WB + p_BE_W(end); }
  Eigen::Vector3d v_WE(int end) const { return v_WB + w_WB.cross(p_BE_W(end)); }
  Eigen::Matrix<double, 3, 6> J(int end) const {
    Eigen::Matrix<double, 3, 6> Jc;
    Jc.leftCols<3>().setIdentity();
    Jc.rightCols<3>() = -skew(p_BE_W(end));  // ω × p = −[p]× ω
    return Jc;
  }
  Eigen::MatrixXd A() const {
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(6, 6);
    M.topLeftCorner<3, 3>() = m * Eigen::Matrix3d::Identity();
    M.bottomRightCorner<3, 3>() = I_W();
    return M;
  }
  void fill(constraints::ConstraintSet& set, double h) const {
    set.time_step = h;
    set.theta_vq = 1.0;
    set.nv = 6;
    set.trees = {{1, 0, 6}};
    set.clear();
    for (int end = 0; end < 2; ++end) {
      constraints::ContactConstraint& c = set.contacts.add();
      c.contact = end;
      c.material.mu = mu;
      c.material.stiffness = K;
      c.material.dissipation_time = tau;
      c.num_blocks = 1;
      c.blocks[0].tree = 0;
      c.blocks[0].v_start = 0;
      c.blocks[0].J = J(end);
      c.phi0 = p_WE(end).z();
      c.vn0 = v_WE(end).z();
    }
  }
  Eigen::VectorXd v_star(double h) const {
    Eigen::VectorXd vs(6);
    vs.head<3>() = v_WB + h * Eigen::Vector3d(0, 0, -g);
    const Eigen::Matrix3d I = I_W();
    vs.tail<3>() = w_WB - h * I.ldlt().solve(w_WB.cross(I * w_WB));
    return vs;
  }
  void advance(const Eigen::VectorXd& v1, double h) {
    v_WB = v1.head<3>();
    w_WB = v1.tail<3>();
    p_WB += h * v_WB;
    const double a = h * w_WB.norm();
    if (a > 0.0) R_WB = Eigen::AngleAxisd(a, w_WB.normalized()).toRotationMatrix() * R_WB;
  }
  double mechanical_energy() const { return 0.5 * m * v_WB.squaredNorm() + 0.5 * w_WB.dot(I_W() * w_WB) + m * g * p_WB.z(); }
  double energy() const {
    return mechanical_energy() + spring_energy(K, p_WE(0).z()) + spring_energy(K, p_WE(1).z());
  }
};

}  // namespace coulomb::solvers::lstable::test_util
