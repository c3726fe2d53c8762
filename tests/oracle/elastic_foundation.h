// The L-stable paper's "box on an elastic foundation" (Drumwright, §5.5, Figure 7, Tables 1–2;
// digest ../shared/digests/lstable.md §5.4 and §6 test 18), shared by
// tests/oracle/elastic_foundation_oracle_test.cc and bench/elastic_foundation.cc.
//
// Setup: a rigid cube of side s = 1 m and mass m = 8 kg (density 8 kg/m³) rests on a Winkler
// foundation of depth 1 m made of n_side × n_side unilateral spring–damper elements under its
// bottom face, element i at the body-frame point p_Bi = (x_i, y_i, −s/2) (the centre of its cell).
// Each element has stiffness k = E · (s/n_side)² / depth [N/m] and damping B = 1 N·s/m, and acts
// along the world's +z (the foundation's normal, its undeformed surface the plane z = 0). No
// friction. Gravity g = 9.81 m/s² and an extra load P [N] straight down, applied at the
// body-frame point r_B(t) = (s/2) (cos 10t, sin 10t, 1) (a circle of radius s/2 on the top face).
// The body starts at rest with its bottom face on z = 0 (foundation undeformed).
//
// Generalized coordinates q = (p_WB [m], quaternion q_WB (w, x, y, z)); velocities
// V = (ω_WB, v_WB) in the world frame [rad/s, m/s]; mass matrix M = diag(R I_B Rᵀ, m I₃),
// I_B = m s²/6 I₃ (a uniform cube: the gyroscopic term ω × I ω is zero, but it is kept).
//
// Element model (the same in both integrators). With φ_i = z-coordinate of the element's body
// point (> 0 separated, < 0 sunk into the foundation) and φ̇_i = (J_i V) its rate,
//     f_i = max(0, −k φ_i − B φ̇_i)   along +z,
// i.e. max(0, k d + B ḋ) with d = −φ. This is exactly what LStableSolver computes for a
// frictionless ContactConstraint with stiffness k and dissipation time τ = B/k (K = k,
// B = k τ): the complementarity form γ ≥ 0 ⊥ φ̇₁ − v̂ + R γ ≥ 0 with R = 1/(h (h k + k τ)),
// v̂ = −φ₀/(h + τ) gives λ = γ/h = max(0, −k φ₁ − k τ φ̇₁) evaluated implicitly at the end of
// the step (φ₁ = φ₀ + h φ̇₁). A Hunt–Crossley or "spring only while d > 0" model would be a
// different ODE; the reference must integrate the model the solver discretizes, so that the
// measured difference is the time-discretization error alone.
//
//  - lstable: one LStableSolver::solve per step (h = 0.01 in the paper): stage 1 is the free
//    motion V* = V₀ + h M⁻¹ (f_ext(t₀) − (ω × I ω, 0)) with gravity, the load at t₀ and the
//    gyroscopic term; the n_side² elements are frictionless ContactConstraints (row n of the
//    contact-frame Jacobian J_i = [(r_i × e_z)ᵀ, e_zᵀ], r_i = R p_Bi); then the pose is
//    integrated with the new velocities, p₁ = p₀ + h v₁, q₁ = exp(h ω₁) ⊗ q₀ (normalized).
//  - reference: the ODE above (13 states) by SUNDIALS CVODE, BDF with Newton and a dense direct
//    linear solver (difference-quotient Jacobian), at tight tolerances.
#pragma once

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "coulomb/constraints/constraint_set.h"
#include "coulomb/solvers/lstable/lstable_solver.h"

namespace coulomb::testing::foundation {

/// CPU time of this process [s] (single-threaded runs: the machine these were measured on was
/// shared, so wall time would measure the other jobs too).
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct FoundationSetup {
  int n_side = 10;          ///< elements per side (n_side² in all)
  double E = 1e7;           ///< Young's modulus of the foundation [N/m²]
  double load = 5.0;        ///< extra load P [N], straight down
  double h = 0.01;          ///< lstable step [s]
  double duration = 1.0;    ///< [s]
  double side = 1.0;        ///< cube side s [m]
  double mass = 8.0;        ///< [kg]
  double depth = 1.0;       ///< foundation depth [m]
  double damping = 1.0;     ///< B per element [N·s/m]
  double gravity = 9.81;    ///< [m/s²]
  double load_rate = 10.0;  ///< angular rate of the load point [rad/s]

  int num_elements() const { return n_side * n_side; }
  double element_stiffness() const {
    const double a = side / n_side;
    return E * a * a / depth;
  }
  double inertia() const { return mass * side * side / 6.0; }
  void validate() const {
    if (n_side < 1) throw std::invalid_argument("foundation: n_side = " + std::to_string(n_side) + " must be >= 1");
    if (!(E > 0.0)) throw std::invalid_argument("foundation: E = " + std::to_string(E) + " must be > 0");
    if (!(h > 0.0)) throw std::invalid_argument("foundation: h = " + std::to_string(h) + " must be > 0");
    if (!(duration > 0.0))
      throw std::invalid_argument("foundation: duration = " + std::to_string(duration) + " must be > 0");
    if (!(load >= 0.0)) throw std::invalid_argument("foundation: load = " + std::to_string(load) + " must be >= 0");
  }
};

/// Pose and world-frame velocities of the cube.
struct State {
  Eigen::Vector3d p_WB{0.0, 0.0, 0.5};
  Eigen::Quaterniond q_WB = Eigen::Quaterniond::Identity();
  Eigen::Vector3d w_WB = Eigen::Vector3d::Zero();
  Eigen::Vector3d v_WB = Eigen::Vector3d::Zero();
};

/// At rest, bottom face on the undeformed foundation (z = 0).
inline State initial_state(const FoundationSetup& s) {
  State x;
  x.p_WB = Eigen::Vector3d(0.0, 0.0, 0.5 * s.side);
  return x;
}

/// Body-frame element points p_Bi, 3 × n (cell centres of the bottom face).
inline Eigen::Matrix3Xd element_points(const FoundationSetup& s) {
  Eigen::Matrix3Xd P(3, s.num_elements());
  const double a = s.side / s.n_side;
  for (int i = 0; i < s.n_side; ++i)
    for (int j = 0; j < s.n_side; ++j)
      P.col(i * s.n_side + j) = Eigen::Vector3d(-0.5 * s.side + (i + 0.5) * a, -0.5 * s.side + (j + 0.5) * a, -0.5 * s.side);
  return P;
}

/// The load's application point in the body frame at time t [m].
inline Eigen::Vector3d load_point_B(const FoundationSetup& s, double t) {
  return 0.5 * s.side * Eigen::Vector3d(std::cos(s.load_rate * t), std::sin(s.load_rate * t), 1.0);
}

/// Generalized-coordinate error ‖(p_a − p_b, q_a − q_b)‖ (quaternions sign-aligned), the
/// measure of the paper's Table 2.
inline double coordinate_error(const State& a, const State& b) {
  Eigen::Vector4d qa = a.q_WB.normalized().coeffs(), qb = b.q_WB.normalized().coeffs();
  if (qa.dot(qb) < 0.0) qb = -qb;
  Eigen::Matrix<double, 7, 1> e;
  e << a.p_WB - b.p_WB, qa - qb;
  return e.norm();
}

/// Elements above the foundation (φ_i > tol) at the pose of `x`.
inline int lifted_elements(const FoundationSetup& s, const State& x, double tol = 0.0) {
  const Eigen::Matrix3Xd P = element_points(s);
  const Eigen::Matrix3d R = x.q_WB.normalized().toRotationMatrix();
  int lifted = 0;
  for (int i = 0; i < P.cols(); ++i)
    if (x.p_WB.z() + (R * P.col(i)).z() > tol) ++lifted;
  return lifted;
}

/// ‖(p, q)‖ of a state (for the relative error).
inline double coordinate_norm(const State& a) { return std::sqrt(a.p_WB.squaredNorm() + 1.0); }

/// Mean sink of the elements, −mean(φ_i) [m] (= the sink of the bottom face's centre: the
/// grid is symmetric and φ is affine in the body point).
inline double mean_sink(const FoundationSetup& s, const State& x) {
  const Eigen::Matrix3d R = x.q_WB.normalized().toRotationMatrix();
  const Eigen::Vector3d c = x.p_WB + R * Eigen::Vector3d(0.0, 0.0, -0.5 * s.side);
  return -c.z();
}

// ---------------------------------------------------------------------------------------------
// The L-stable scheme.

struct LStableRun {
  State final_state;
  double seconds = 0.0;  ///< CPU time of the whole run (set up + solves + pose updates)
  int steps = 0;
  int solver_calls = 0;
  int failures = 0;          ///< steps whose status was not kSuccess
  long qp_iterations = 0;    ///< summed over the steps
  double max_qp_residual = 0.0;
  double final_total_force = 0.0;  ///< Σ γ_i / h of the last step [N]
  int final_active = 0;            ///< elements with γ_i > 0 in the last step
};

/// Simulates `s` with one LStableSolver::solve per step of size s.h.
inline LStableRun run_lstable(const FoundationSetup& s, solvers::lstable::LStableParameters parameters = {}) {
  s.validate();
  const double start = process_cpu_seconds();
  LStableRun run;
  const int n = s.num_elements();
  const Eigen::Matrix3Xd P = element_points(s);
  const double k = s.element_stiffness();
  const double Ib = s.inertia();
  const double h = s.h;
  const int steps = static_cast<int>(std::llround(s.duration / h));

  constraints::ConstraintSet set;
  set.time_step = h;
  set.theta_vq = 1.0;
  set.nv = 6;
  set.trees = {{0, 0, 6}};
  solvers::lstable::LStableSolver solver(parameters);
  std::vector<Eigen::MatrixXd> A(1, Eigen::MatrixXd::Zero(6, 6));
  Eigen::VectorXd V(6), Vstar(6), f(6);
  State x = initial_state(s);

  for (int step = 0; step < steps; ++step) {
    const double t0 = step * h;
    const Eigen::Matrix3d R = x.q_WB.toRotationMatrix();
    const Eigen::Matrix3d I_W = Ib * R * R.transpose();  // R I_B Rᵀ (I_B = Ib·I₃)
    V << x.w_WB, x.v_WB;
    // Stage 1: free motion with gravity, the load at t₀ and the gyroscopic term.
    const Eigen::Vector3d r_load = R * load_point_B(s, t0);
    const Eigen::Vector3d F_load(0.0, 0.0, -s.load);
    f << r_load.cross(F_load) - x.w_WB.cross(I_W * x.w_WB), F_load + Eigen::Vector3d(0.0, 0.0, -s.mass * s.gravity);
    A[0].setZero();
    A[0].topLeftCorner<3, 3>() = I_W;
    A[0].bottomRightCorner<3, 3>() = s.mass * Eigen::Matrix3d::Identity();
    Vstar = V + h * A[0].ldlt().solve(f);
    // The foundation elements, frictionless contacts with rows [t1 = x, t2 = y, n = z].
    set.clear();
    for (int i = 0; i < n; ++i) {
      const Eigen::Vector3d r = R * P.col(i);
      constraints::ContactConstraint& c = set.contacts.add();
      c.contact = i;
      c.num_blocks = 1;
      c.blocks[0].tree = 0;
      c.blocks[0].v_start = 0;
      c.blocks[0].J.resize(3, 6);
      for (int row = 0; row < 3; ++row) {
        const Eigen::Vector3d d = Eigen::Vector3d::Unit(row);
        c.blocks[0].J.row(row) << r.cross(d).transpose(), d.transpose();  // d·(v + ω × r)
      }
      c.phi0 = x.p_WB.z() + r.z();
      c.vn0 = c.blocks[0].J.row(2).dot(V);
      c.material.mu = 0.0;
      c.material.stiffness = k;
      c.material.dissipation_time = s.damping / k;
    }
    const solvers::lstable::LStableResults& res = solver.solve(set, A, Vstar);
    ++run.solver_calls;
    if (res.status != solvers::lstable::LStableStatus::kSuccess) ++run.failures;
    run.qp_iterations += res.qp_iterations;
    run.max_qp_residual = std::max(run.max_qp_residual, res.residual);
    if (!res.v.allFinite()) throw std::runtime_error("foundation: lstable returned non-finite velocities at step " + std::to_string(step));
    // Pose update with the new velocities.
    x.w_WB = res.v.head<3>();
    x.v_WB = res.v.tail<3>();
    x.p_WB += h * x.v_WB;
    const Eigen::Vector3d dtheta = h * x.w_WB;
    const double angle = dtheta.norm();
    const Eigen::Quaterniond dq =
        angle > 0.0 ? Eigen::Quaterniond(Eigen::AngleAxisd(angle, dtheta / angle)) : Eigen::Quaterniond::Identity();
    x.q_WB = (dq * x.q_WB).normalized();
    if (step == steps - 1) {
      run.final_total_force = 0.0;
      run.final_active = 0;
      for (int i = 0; i < n; ++i) {
        const double g = res.impulses.contacts[3 * i + 2];
        run.final_total_force += g / h;
        if (g > 0.0) ++run.final_active;
      }
    }
    ++run.steps;
  }
  run.final_state = x;
  run.seconds = process_cpu_seconds() - start;
  return run;
}

// ---------------------------------------------------------------------------------------------
// The reference: the same penalty ODE by CVODE (BDF).

struct CvodeOptions {
  double rtol = 1e-12;
  double atol_position = 1e-16;  ///< on p [m] and on the quaternion
  double atol_velocity = 1e-12;  ///< on ω [rad/s] and v [m/s]
  int max_order = 5;
  long max_steps = 50'000'000;
};

struct CvodeRun {
  State final_state;
  double seconds = 0.0;  ///< CPU time of the whole run
  long steps = 0, rhs_evaluations = 0, jacobian_evaluations = 0, error_test_failures = 0,
       nonlinear_failures = 0;
  int last_order = 0;
};

namespace detail {

struct OdeData {
  const FoundationSetup* setup = nullptr;
  Eigen::Matrix3Xd points;
  double k = 0.0;
};

// y = (p (3), q (w, x, y, z), ω (3), v (3)).
inline int foundation_rhs(double t, N_Vector y_vec, N_Vector ydot_vec, void* user) {
  const OdeData& d = *static_cast<const OdeData*>(user);
  const FoundationSetup& s = *d.setup;
  const double* y = N_VGetArrayPointer(y_vec);
  double* yd = N_VGetArrayPointer(ydot_vec);
  const Eigen::Vector3d p(y[0], y[1], y[2]);
  const Eigen::Quaterniond q_raw(y[3], y[4], y[5], y[6]);
  const Eigen::Vector3d w(y[7], y[8], y[9]), v(y[10], y[11], y[12]);
  const Eigen::Quaterniond q = q_raw.normalized();
  const Eigen::Matrix3d R = q.toRotationMatrix();
  Eigen::Vector3d F(0.0, 0.0, -s.mass * s.gravity - s.load);
  const Eigen::Vector3d r_load = R * load_point_B(s, t);
  Eigen::Vector3d T = r_load.cross(Eigen::Vector3d(0.0, 0.0, -s.load));
  for (int i = 0; i < d.points.cols(); ++i) {
    const Eigen::Vector3d r = R * d.points.col(i);
    const double phi = p.z() + r.z();
    const double phidot = v.z() + w.x() * r.y() - w.y() * r.x();  // e_z · (v + ω × r)
    const double fi = std::max(0.0, -d.k * phi - s.damping * phidot);
    if (fi > 0.0) {
      F.z() += fi;
      T += Eigen::Vector3d(r.y() * fi, -r.x() * fi, 0.0);  // r × (f e_z)
    }
  }
  const double Ib = s.inertia();
  const Eigen::Matrix3d I_W = Ib * R * R.transpose();
  const Eigen::Vector3d wdot = I_W.ldlt().solve(T - w.cross(I_W * w));
  const Eigen::Vector3d vdot = F / s.mass;
  // q̇ = ½ (0, ω) ⊗ q (world-frame ω), on the unnormalized state.
  const Eigen::Quaterniond qd = Eigen::Quaterniond(0.0, w.x(), w.y(), w.z()) * q_raw;
  yd[0] = v.x(), yd[1] = v.y(), yd[2] = v.z();
  yd[3] = 0.5 * qd.w(), yd[4] = 0.5 * qd.x(), yd[5] = 0.5 * qd.y(), yd[6] = 0.5 * qd.z();
  yd[7] = wdot.x(), yd[8] = wdot.y(), yd[9] = wdot.z();
  yd[10] = vdot.x(), yd[11] = vdot.y(), yd[12] = vdot.z();
  return 0;
}

inline void check(int flag, const char* what) {
  if (flag < 0) throw std::runtime_error(std::string("foundation: CVODE ") + what + " failed with flag " + std::to_string(flag));
}

}  // namespace detail

/// Integrates the penalty ODE over [0, s.duration] with CVODE BDF.
inline CvodeRun run_cvode(const FoundationSetup& s, const CvodeOptions& o = {}) {
  s.validate();
  const double start = process_cpu_seconds();
  detail::OdeData data;
  data.setup = &s;
  data.points = element_points(s);
  data.k = s.element_stiffness();
  SUNContext ctx = nullptr;
  detail::check(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  N_Vector y = N_VNew_Serial(13, ctx), atol = N_VNew_Serial(13, ctx);
  SUNMatrix J = SUNDenseMatrix(13, 13, ctx);
  SUNLinearSolver LS = SUNLinSol_Dense(y, J, ctx);
  void* mem = CVodeCreate(CV_BDF, ctx);
  CvodeRun run;
  try {
    if (y == nullptr || atol == nullptr || J == nullptr || LS == nullptr || mem == nullptr)
      throw std::runtime_error("foundation: CVODE allocation failed");
    const State x0 = initial_state(s);
    double* yv = N_VGetArrayPointer(y);
    const double init[13] = {x0.p_WB.x(), x0.p_WB.y(), x0.p_WB.z(), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    std::copy(init, init + 13, yv);
    double* av = N_VGetArrayPointer(atol);
    for (int i = 0; i < 13; ++i) av[i] = i < 7 ? o.atol_position : o.atol_velocity;
    detail::check(CVodeInit(mem, detail::foundation_rhs, 0.0, y), "CVodeInit");
    detail::check(CVodeSVtolerances(mem, o.rtol, atol), "CVodeSVtolerances");
    detail::check(CVodeSetUserData(mem, &data), "CVodeSetUserData");
    detail::check(CVodeSetLinearSolver(mem, LS, J), "CVodeSetLinearSolver");
    detail::check(CVodeSetMaxNumSteps(mem, o.max_steps), "CVodeSetMaxNumSteps");
    detail::check(CVodeSetMaxOrd(mem, o.max_order), "CVodeSetMaxOrd");
    detail::check(CVodeSetStopTime(mem, s.duration), "CVodeSetStopTime");
    double t = 0.0;
    detail::check(CVode(mem, s.duration, y, &t, CV_NORMAL), "CVode");
    CVodeGetNumSteps(mem, &run.steps);
    CVodeGetNumRhsEvals(mem, &run.rhs_evaluations);
    CVodeGetNumJacEvals(mem, &run.jacobian_evaluations);
    CVodeGetNumErrTestFails(mem, &run.error_test_failures);
    CVodeGetNumNonlinSolvConvFails(mem, &run.nonlinear_failures);
    CVodeGetLastOrder(mem, &run.last_order);
    run.final_state.p_WB = Eigen::Vector3d(yv[0], yv[1], yv[2]);
    run.final_state.q_WB = Eigen::Quaterniond(yv[3], yv[4], yv[5], yv[6]).normalized();
    run.final_state.w_WB = Eigen::Vector3d(yv[7], yv[8], yv[9]);
    run.final_state.v_WB = Eigen::Vector3d(yv[10], yv[11], yv[12]);
  } catch (...) {
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(J);
    N_VDestroy(atol);
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    throw;
  }
  CVodeFree(&mem);
  SUNLinSolFree(LS);
  SUNMatDestroy(J);
  N_VDestroy(atol);
  N_VDestroy(y);
  SUNContext_Free(&ctx);
  run.seconds = process_cpu_seconds() - start;
  if (!run.final_state.p_WB.allFinite() || !run.final_state.q_WB.coeffs().allFinite())
    throw std::runtime_error("foundation: CVODE returned a non-finite state");
  return run;
}

}  // namespace coulomb::testing::foundation
