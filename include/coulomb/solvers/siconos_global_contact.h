// The peer: Siconos numerics (Debian libsiconos-numerics-dev 4.4) on the same global frictional
// contact problem (solvers/global_contact_problem.h), through its C API (gfc3d_driver). Siconos'
// global problem is M v = q + H r, u = Hᵀ v + b, which is FCLIB's with q = f, b = w.
// Siconos types stay inside siconos_global_contact.cc (library coulomb_fclib, not libcoulomb).
#pragma once

#include <string>

#include <Eigen/Core>

#include "coulomb/solvers/global_contact_problem.h"

namespace coulomb::solvers {

enum class SiconosSolver {
  /// SICONOS_GLOBAL_FRICTION_3D_NSGS_WR: Siconos forms the local problem W = H M⁻¹ Hᵀ,
  /// q_loc = Hᵀ M⁻¹ f + w and runs its FC3D non-smooth Gauss–Seidel (one-contact Alart–Curnier
  /// Newton per contact), then recovers v = M⁻¹ (f + H r).
  kNsgs,
  /// SICONOS_GLOBAL_FRICTION_3D_NSN_AC: the non-smooth Newton method on Alart & Curnier's
  /// augmented Lagrangian equations of the global problem (sparse, MUMPS).
  kNewtonAlartCurnier,
};

/// "nsgs", "newton-ac".
const char* to_string(SiconosSolver solver);

struct SiconosOptions {
  double tolerance = 1e-8;    ///< on Siconos' own error (natural map / (1 + ‖q‖) family)
  int max_iterations = 10000;
};

struct SiconosSolution {
  Eigen::VectorXd v;  ///< n_v
  Eigen::VectorXd r;  ///< 3n_c, normal first [N·s]
  Eigen::VectorXd u;  ///< 3n_c = Hᵀ v + w
  int info = 0;       ///< the driver's return: 0 converged, otherwise not
  int iterations = 0;
  double siconos_error = 0.0;  ///< the error Siconos reports (dparam[SICONOS_DPARAM_RESIDU])
  double seconds = 0.0;        ///< wall time of the driver call (building Siconos' matrices excluded)
};

/// Solves `problem` (which must pass check_global_contact_problem) with `solver`, starting from
/// r = 0, v = 0. Siconos' messages go to its own stdout/stderr; it never returns NaN silently:
/// a non-finite result gives info ≠ 0.
SiconosSolution solve_global_contact_with_siconos(const GlobalContactProblem& problem, SiconosSolver solver,
                                                  const SiconosOptions& options = {});

}  // namespace coulomb::solvers
