// The global (primal) frictional contact problem of FCLIB (Acary, Brémond, Koziara, Pérignon,
// "FCLIB: a collection of discrete 3D frictional contact problems", INRIA RT-0444, 2014, §2.2)
// and the residual of its exact Coulomb law. Solver-neutral data: io/fclib_reader.h fills it,
// solvers/sap/sap_global_contact.h and the Siconos peer (solvers/siconos_global_contact.h) take it.
//
//   M v = H r + f,   u = Hᵀ v + w,
//   ũ_i = u_i + [μ_i ‖u_T,i‖, 0, 0]ᵀ  (De Saxcé's modified velocity),   C*_μi ∋ ũ_i ⊥ r_i ∈ C_μi,
//
// with C_μ = {r : ‖r_T‖ ≤ μ r_N} and its dual C*_μ = {u : μ‖u_T‖ ≤ u_N}. Per contact the local
// vectors are stored NORMAL FIRST: r_i = [r_N, r_T1, r_T2], u_i = [u_N, u_T1, u_T2] (FCLIB's
// convention; coulomb's SAP friction cone stores [t1, t2, n], see sap_global_contact.h).
#pragma once

#include <string>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace coulomb::solvers {

struct GlobalContactProblem {
  Eigen::SparseMatrix<double> M;  ///< n_v × n_v, symmetric positive definite [kg, kg·m², …]
  Eigen::SparseMatrix<double> H;  ///< n_v × 3n_c: u = Hᵀ v + w; columns 3i..3i+2 are contact i's [N, T1, T2]
  Eigen::VectorXd f;              ///< n_v, the free-motion momentum (M v_free) [N·s]
  Eigen::VectorXd w;              ///< 3n_c, the local velocity bias [m/s]
  Eigen::VectorXd mu;             ///< n_c, friction coefficients ≥ 0

  int num_dofs() const { return static_cast<int>(M.rows()); }
  int num_contacts() const { return static_cast<int>(mu.size()); }
};

/// Checks shapes (M square n_v × n_v, H n_v × 3n_c, f n_v, w 3n_c, μ n_c), finiteness of every
/// entry, μ ≥ 0 and the symmetry of M (max |M − Mᵀ| ≤ 1e-6 max |M|: FCLIB's FEM problems
/// carry ~1.5e-7 of round-off). Throws std::invalid_argument whose
/// message starts with `source` ("file.hdf5: ") and names the field and the offending value.
void check_global_contact_problem(const GlobalContactProblem& problem, const std::string& source);

/// u = Hᵀ v + w (3n_c) [m/s].
Eigen::VectorXd local_velocity(const GlobalContactProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v);

/// Euclidean projection of x = [x_N, x_T1, x_T2] onto C_μ = {‖x_T‖ ≤ μ x_N} (normal first):
/// x if x ∈ C_μ, 0 if x ∈ −C*_μ (the polar cone), else (a, μ a x_T/‖x_T‖) with
/// a = (x_N + μ‖x_T‖)/(1 + μ²). Throws std::invalid_argument if μ < 0.
Eigen::Vector3d project_onto_friction_cone(const Eigen::Vector3d& x, double mu);

/// How far (v, r) is from solving the exact problem above.
struct CoulombResiduals {
  /// Natural-map residual of the Coulomb law with De Saxcé's ũ, ρ = 1 (FCLIB §3, the error
  /// Siconos reports for FC3D and global problems): ‖(r_i − P_{C_μi}(r_i − ũ_i))_i‖₂ / (1 + ‖f‖₂),
  /// with u = Hᵀ v + w. Zero exactly at a solution of the Coulomb/Signorini problem.
  double complementarity = 0.0;
  /// ‖M v − H r − f‖₂ / (1 + ‖f‖₂): the momentum equation.
  double equation = 0.0;
  /// max(0, max u_N,i) over contacts that carry an impulse (r_N,i > 1e-9 max_j r_N,j) [m/s]:
  /// the separating normal velocity of loaded contacts. Exact Coulomb: 0. Anitescu's convex
  /// relaxation (SAP): μ_i ‖u_T,i‖ on sliding contacts.
  double normal_gap = 0.0;
  /// max(0, −min u_N,i) over loaded contacts [m/s]: the approach velocity they keep (SAP's
  /// near-rigid regularization: R_n r_N).
  double penetration_velocity = 0.0;
  /// Loaded contacts with ‖u_T‖ > 1e-6 (1 + max_j ‖u_j‖) (sliding).
  int sliding_contacts = 0;
};

/// The residuals of (v, r) (n_v and 3n_c). Throws std::invalid_argument on wrong sizes.
CoulombResiduals coulomb_residuals(const GlobalContactProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
                                   const Eigen::Ref<const Eigen::VectorXd>& r);

}  // namespace coulomb::solvers
