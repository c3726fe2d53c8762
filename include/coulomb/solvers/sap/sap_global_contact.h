// A global frictional contact problem (FCLIB, solvers/global_contact_problem.h) solved by SAP in
// the near-rigid limit (Castro, Permenter, Han, §III–§V; digest ../shared/digests/sap.md §2.5–§4.3).
//
// The mapping. FCLIB's M v = H r + f is SAP's momentum balance A (v − v*) = Jᵀ γ (Eq. 18) with
//   A = M, v* = M⁻¹ f, and per contact i one SapFrictionConeConstraint with
//   J_i = the contact's three columns of H, transposed and reordered to SAP's [t1, t2, n] rows
//         (FCLIB stores [N, T1, T2]: SAP row 0 = H column 3i+1, row 1 = 3i+2, row 2 = 3i),
//   γ_i = [r_T1, r_T2, r_N] (the impulse, N·s), μ_i, and the bias w_i through v̂_n = −w_N,i:
//         with τ_d = 0 and θ_vq = 1 SAP's v̂_n = −φ₀/δt (Castro et al. §V), so φ₀ = w_N,i δt.
//   The time step δt only enters through φ₀ and the physical compliance, so any δt > 0 gives the
//   same problem; we use δt = 1 s. k = +∞ (rigid), so Eq. 29 takes the near-rigid branch
//   R_n = β² w_i/(4π²), and R_t = σ w_i (Eq. 30), w_i = ‖W_ii‖_F/3 with W_ii ≈ J_i A⁻¹ J_iᵀ.
//   SAP's tangential bias is v̂_t = 0: a problem with w_T ≠ 0 is rejected (std::invalid_argument).
//
// What SAP solves, then, is the convex problem of Eq. 19 with regularization R: in stiction
// u_i = −R_i γ_i (a slip σ w γ_T and an approach R_n γ_N that vanish as σ, β → 0), and in sliding
// the cone complementarity of Anitescu's relaxation, u_N = μ ‖u_T‖ > 0 instead of u_N = 0
// (Castro et al. §V-A, "gliding"; digest §4.2). That normal gap does not vanish as R → 0, so SAP
// does not in general satisfy the exact Coulomb/Signorini law (coulomb_residuals().complementarity
// is O(μ ‖u_T‖) on sliding contacts); it does on problems where every loaded contact sticks.
//
// Trees. SapProblem needs A block-diagonal with one block per tree and every constraint on at
// most two trees. partition_global_contact_dofs() finds the trees: the connected components of
// M's sparsity graph, joined with aligned blocks of b consecutive DOFs for the smallest divisor b
// of n_v for which every contact touches at most two trees (b = 6 for rigid bodies stored as
// 6 DOFs each; b = n_v, one tree, always works).
#pragma once

#include <vector>

#include <Eigen/Core>

#include "coulomb/solvers/global_contact_problem.h"
#include "coulomb/solvers/sap/sap_constraint.h"
#include "coulomb/solvers/sap/sap_solver.h"

namespace coulomb::solvers::sap {

/// The trees of a global problem: tree t's DOFs (increasing), and which block size b was used.
struct GlobalContactTrees {
  std::vector<std::vector<int>> dofs;  ///< per tree, the global DOF indices
  std::vector<int> tree_of_dof;        ///< n_v
  int block_size = 1;                  ///< b (see the file comment)
};

/// Trees of `problem` as described above. The problem must pass check_global_contact_problem.
GlobalContactTrees partition_global_contact_dofs(const GlobalContactProblem& problem);

struct SapGlobalContactParameters {
  /// Near-rigid parameter β of Eq. 29 (R_n = β² w/(4π²)). The paper's 1 is for simulation; for
  /// the rigid FCLIB problems we default to 0.01 (R_n ≈ 2.5e-6 w).
  SapRegularization regularization{0.01, 1e-6};
  SapSolverParameters solver = default_solver_parameters();

  /// SapSolverParameters with rel_tolerance 1e-10 and 200 iterations.
  static SapSolverParameters default_solver_parameters() {
    SapSolverParameters p;
    p.rel_tolerance = 1e-10;
    p.max_iterations = 200;
    return p;
  }
};

struct SapGlobalContactSolution {
  Eigen::VectorXd v;  ///< n_v, the generalized velocities (FCLIB order)
  Eigen::VectorXd r;  ///< 3n_c, the impulses, FCLIB order [r_N, r_T1, r_T2] per contact [N·s]
  Eigen::VectorXd u;  ///< 3n_c, u = Hᵀ v + w [m/s]
  SapSolverStatus status = SapSolverStatus::kSuccess;
  int iterations = 0;             ///< Newton iterations
  double momentum_error = 0.0;    ///< e_m of Eq. 32 at the solution
  int num_trees = 0;
  int block_size = 1;
  double setup_seconds = 0.0;     ///< trees, blocks of A, v*, constraints
  double solve_seconds = 0.0;     ///< SapSolver::solve
};

/// Solves `problem` with SAP as described above, starting from v = 0 (v* if try_zero_guess finds
/// it better). Throws std::invalid_argument (message prefixed by check_global_contact_problem's
/// rules) for an invalid problem, a tangential bias w_T ≠ 0, or a block of M that is not
/// positive definite (naming the tree's first DOF).
SapGlobalContactSolution solve_global_contact_with_sap(const GlobalContactProblem& problem,
                                                       const SapGlobalContactParameters& parameters = {});

}  // namespace coulomb::solvers::sap
