#include "coulomb/solvers/siconos_global_contact.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "GlobalFrictionContactProblem.h"
#include "Friction_cst.h"
#include "NonSmoothDrivers.h"
#include "NumericsMatrix.h"
#include "NumericsSparseMatrix.h"
#include "SolverOptions.h"

namespace coulomb::solvers {

const char* to_string(SiconosSolver solver) {
  switch (solver) {
    case SiconosSolver::kNsgs:
      return "nsgs";
    case SiconosSolver::kNewtonAlartCurnier:
      return "newton-ac";
  }
  return "?";
}

namespace {

// A Siconos sparse matrix (triplet origin) holding A's non-zeros.
NumericsMatrix* to_numerics(const Eigen::SparseMatrix<double>& A) {
  NumericsMatrix* out = NM_create(NM_SPARSE, static_cast<int>(A.rows()), static_cast<int>(A.cols()));
  NM_triplet_alloc(out, static_cast<CS_INT>(std::max<Eigen::Index>(A.nonZeros(), 1)));
  out->matrix2->origin = NSM_TRIPLET;
  for (int k = 0; k < A.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, k); it; ++it)
      NM_entry(out, static_cast<int>(it.row()), static_cast<int>(it.col()), it.value());
  return out;
}

double* malloc_copy(const Eigen::VectorXd& x) {
  auto* p = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(std::max<Eigen::Index>(x.size(), 1))));
  if (p == nullptr) throw std::bad_alloc();
  if (x.size() > 0) std::memcpy(p, x.data(), sizeof(double) * static_cast<size_t>(x.size()));
  return p;
}

}  // namespace

SiconosSolution solve_global_contact_with_siconos(const GlobalContactProblem& p, SiconosSolver solver,
                                                  const SiconosOptions& options) {
  check_global_contact_problem(p, "");
  const int n = p.num_dofs(), nc = p.num_contacts(), m = 3 * nc;

  GlobalFrictionContactProblem* problem = globalFrictionContactProblem_new();
  problem->dimension = 3;
  problem->numberOfContacts = nc;
  problem->M = to_numerics(p.M);
  problem->H = to_numerics(p.H);
  problem->q = malloc_copy(p.f);  // freed by globalFrictionContact_free
  problem->b = malloc_copy(p.w);
  problem->mu = malloc_copy(p.mu);
  problem->env = nullptr;

  const int id = solver == SiconosSolver::kNsgs ? SICONOS_GLOBAL_FRICTION_3D_NSGS_WR : SICONOS_GLOBAL_FRICTION_3D_NSN_AC_WR;
  SolverOptions* so = solver_options_create(id);
  so->iparam[SICONOS_IPARAM_MAX_ITER] = options.max_iterations;
  so->dparam[SICONOS_DPARAM_TOL] = options.tolerance;
  for (size_t k = 0; k < so->numberOfInternalSolvers; ++k) {  // NSGS_WR: the FC3D NSGS it runs
    SolverOptions* inner = so->internalSolvers[k];
    if (inner == nullptr) continue;
    if (solver == SiconosSolver::kNsgs) {
      inner->iparam[SICONOS_IPARAM_MAX_ITER] = options.max_iterations;
      inner->dparam[SICONOS_DPARAM_TOL] = options.tolerance;
    }
  }

  SiconosSolution out;
  out.v = Eigen::VectorXd::Zero(n);
  out.r = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd u = Eigen::VectorXd::Zero(m);
  const auto t0 = std::chrono::steady_clock::now();
  out.info = gfc3d_driver(problem, out.r.data(), u.data(), out.v.data(), so);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.iterations = so->iparam[SICONOS_IPARAM_ITER_DONE];
  out.siconos_error = so->dparam[SICONOS_DPARAM_RESIDU];
  if (solver == SiconosSolver::kNsgs && so->numberOfInternalSolvers > 0 && so->internalSolvers[0] != nullptr &&
      out.iterations == 0) {
    out.iterations = so->internalSolvers[0]->iparam[SICONOS_IPARAM_ITER_DONE];
    out.siconos_error = so->internalSolvers[0]->dparam[SICONOS_DPARAM_RESIDU];
  }
  solver_options_delete(so);
  globalFrictionContact_free(problem);

  if (!out.v.allFinite() || !out.r.allFinite()) {
    if (out.info == 0) out.info = -1;
    out.v = out.v.unaryExpr([](double x) { return std::isfinite(x) ? x : 0.0; });
    out.r = out.r.unaryExpr([](double x) { return std::isfinite(x) ? x : 0.0; });
  }
  out.u = local_velocity(p, out.v);
  return out;
}

}  // namespace coulomb::solvers
