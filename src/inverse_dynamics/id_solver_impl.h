// Private state of IdSolver, shared by the formulation files:
//   id_solver.cc       validation, the unactuated subspace, v*, contact rows, results and stats
//   lcp_no_slip.cc     ID_LCP,∞ (§4): FIND-INDICES, modified PPM, Lemke fallback
//   consistency_qp.cc  the §4.5 QP for inconsistent no-slip requests
//   lcp_coulomb.cc     ID_LCP,μ (§5): the copositive LCP by Lemke, MINDIFF
//   qp_two_stage.cc    ID_QP,μ / ID_QP,∞ (§6): Stage I and Stage II
//
// Notation (digest ../shared/digests/inverse-dynamics.md §2, P a selection of the coordinates
// 𝒜, 𝒰 the rest, n_b = |𝒰|):
//   A = M_𝒰𝒰 = L Lᵀ, b = M ⁻v + Δt f_ext (the free momentum, −κ),
//   v*: P v* = q̇_des, v*_𝒰 = A⁻¹ (b_𝒰 − M_𝒰𝒜 q̇_des)   (the motion without contact impulses),
//   impulses z on rows R (n_z × m):  ⁺v_𝒰 = v*_𝒰 + A⁻¹ R_𝒰ᵀ z,  ⁺v_𝒜 = q̇_des,
//   ι = [M ⁺v − b − Rᵀ z]_𝒜  (the actuated rows of the dynamics; the others hold by construction).
// So Γ_P = E_𝒰 A⁻¹ E_𝒰ᵀ (digest §2) and every formulation lives in the n_b-dimensional
// unactuated subspace (for a floating base n_b = 6: the "6 × 6 closed form" of §6.4).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/QR>

#include "coulomb/inverse_dynamics/find_indices.h"
#include "coulomb/inverse_dynamics/id_solver.h"
#include "coulomb/inverse_dynamics/mindiff.h"

namespace coulomb::inverse_dynamics {

/// Buffers whose sizes depend on the number n of contacts kept; one set per n seen, so a gait
/// that cycles between contact counts is allocation-free once every count has been solved.
struct ContactBuffers {
  // Kept contacts: rows restricted to 𝒰 (n × n_b), velocities at v* (n), φ/Δt, μ.
  Eigen::MatrixXd NU, SU, TU;
  Eigen::VectorXd cN, cS, cT, phi_dt, mu;
  // Polygon rows R = [N; F] (n_z × m): 𝒰 part RU, 𝒜 part RA, B = L⁻¹ RUᵀ (n_b × n_z), cR = R v*.
  Eigen::MatrixXd RU, RA, B;
  Eigen::VectorXd cR;
  std::vector<int> friction_offset;  ///< per contact: first friction variable of z, or −1
  // LCP,μ
  Eigen::MatrixXd Q;
  Eigen::VectorXd r;
  solvers::lcp::LemkeResults lemke;
  solvers::lcp::PpmResult ppm_result;
  // QP Stage I and II
  solvers::qp::ConicQp qp1, qp2;
  solvers::qp::ConicQpSolver qp1_solver, qp2_solver;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr;
  Eigen::MatrixXd W, RAW, Qfull;
  Eigen::VectorXd z, bU, g0, stage1_warm;  ///< bU: Stage I's b_𝒰 (n_b), g0: Stage II's (n_q)
  std::vector<int> stage1_active, stage2_active;  ///< last active rows of Stage I / II (warm start)
  bool stage1_has_active = false;
  int stage1_dim = -1;
  int stage1_misses = 0, stage1_skipped = 0;  ///< consecutive rejected warm starts, solves since
  bool stage2_has_active = false;
  int stage2_dim = -1;
  Eigen::RowVectorXd hh_work;
  // LCP,∞: kept tangential rows X (r × n_b), G = A⁻¹ Xᵀ, Γ_X, targets cX, v** (vss), offsets.
  Eigen::MatrixXd X, G, Yg, Gamma, Qlcp;
  Eigen::VectorXd cX, y, vss, boff, rlcp, dv;
  // MINDIFF: x = [⁺v_𝒰; ι] = x0 + Xmd z, and the previous solution.
  Eigen::MatrixXd Xmd;
  Eigen::VectorXd x0md, xprev;
  bool has_prev = false;
  Mindiff mindiff;
  MindiffResults mindiff_results;
  /// Storage of IdSolver::Impl's fN, fS, fT, lambda for this contact count while another count
  /// is being solved (Impl::use_buffers swaps it in and out: no reallocation when n changes).
  Eigen::VectorXd fN, fS, fT, lambda;
};

struct IdSolver::Impl {
  explicit Impl(const IdParameters& parameters);

  const IdParameters par;  ///< the solver's parameters (IdSolver::parameters() returns these)
  // Set by setup() for the current problem.
  const IdProblem* p = nullptr;
  int m = 0, nq = 0, nb = 0, n = 0, k = 4;
  double dt = 0.0;
  std::vector<int> unactuated;
  Eigen::MatrixXd A, M_UA;
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd b, vstar, vU, iota, work_m;
  /// Per-contact impulses of the current solve (n each) and LCP,μ's λ (valid when has_lambda).
  /// Their storage belongs to the current ContactBuffers (swapped in by use_buffers).
  Eigen::VectorXd fN, fS, fT, lambda;
  bool has_lambda = false;
  std::vector<int> kept;  ///< problem contact index of each kept contact
  std::vector<std::unique_ptr<ContactBuffers>> buffers;  ///< by kept contact count
  ContactBuffers* buf = nullptr;
  std::vector<double> cos_theta, sin_theta;  ///< friction polygon directions
  IdResults* res = nullptr;

  FindIndices find_indices;
  Eigen::MatrixXd no_rows;  ///< 0 × n_b: FIND-INDICES' P in the unactuated subspace
  Eigen::MatrixXd Ks;       ///< consistency QP scratch
  solvers::lcp::ModifiedPpm ppm;
  solvers::lcp::LemkeSolver lemke;
  /// LCP,∞ warm start: the previous B̄ (kept-contact indices) and the kept count it belongs to.
  std::vector<int> warm;
  int warm_count = -1;

  // id_solver.cc
  ContactBuffers& buffers_for(int count);
  /// Makes `next` the current buffers: fN, fS, fT, lambda are swapped back into the previous
  /// buffers and the storage of `next` swapped in (pointer swaps, no allocation).
  void use_buffers(ContactBuffers* next);
  ContactBuffers* swapped = nullptr;  ///< whose fN, fS, fT, lambda storage is swapped in
  void setup(const IdProblem& problem, IdResults& results);
  /// ⁺v_𝒰 = v*_𝒰 + A⁻¹ (N_𝒰ᵀ f_N + S_𝒰ᵀ f_S + T_𝒰ᵀ f_T) from fN, fS, fT into vU.
  void velocity_from_impulses();
  /// Builds R = [N; F] for the kept contacts (friction rows for every contact when
  /// all_friction, else for those with μ > 0): RU, RA, B, cR, friction_offset. Returns n_z.
  int build_polygon_rows(bool all_friction);
  /// [M ⁺v − b]_𝒜 for actuated coordinate j with ⁺v_𝒰 = vU, ⁺v_𝒜 = q̇_des: ι_j before the
  /// contact impulses' share −R_𝒜ᵀ z.
  double actuated_momentum_change(int j) const;
  /// fN, fS, fT from polygon impulses z = [f_N; f_F].
  void polygon_to_frame(const Eigen::VectorXd& z);
  /// ι, ⁺v, per-contact impulses and the statistics, from vU, fN, fS, fT.
  void finish(IdStatus status, bool no_slip, bool complementarity);

  // The formulations: each fills fN, fS, fT (and vU) and returns the status.
  IdStatus lcp_no_slip();       // lcp_no_slip.cc
  IdStatus consistency_qp();    // consistency_qp.cc
  IdStatus lcp_coulomb();       // lcp_coulomb.cc
  IdStatus qp_two_stage();      // qp_two_stage.cc
};

}  // namespace coulomb::inverse_dynamics
