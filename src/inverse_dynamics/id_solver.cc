// IdSolver: problem validation, the unactuated subspace, v*, the kept contacts' rows, torque
// recovery and statistics, and the dispatch to the formulations (id_solver_impl.h lists the
// files and the notation).
#include "coulomb/inverse_dynamics/id_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include "id_solver_impl.h"

namespace coulomb::inverse_dynamics {

using Eigen::MatrixXd;
using Eigen::VectorXd;

const char* to_string(Formulation formulation) {
  switch (formulation) {
    case Formulation::kLcpNoSlip: return "lcp-noslip";
    case Formulation::kLcpCoulomb: return "lcp-coulomb";
    case Formulation::kQpCoulomb: return "qp-coulomb";
    case Formulation::kQpNoSlip: return "qp-noslip";
  }
  return "unknown";
}

Formulation parse_formulation(const std::string& name) {
  for (Formulation f : {Formulation::kLcpNoSlip, Formulation::kLcpCoulomb, Formulation::kQpCoulomb,
                        Formulation::kQpNoSlip})
    if (name == to_string(f)) return f;
  throw std::invalid_argument("unknown inverse-dynamics formulation '" + name +
                              "' (expected lcp-noslip, lcp-coulomb, qp-coulomb or qp-noslip)");
}

const char* to_string(IdStatus status) {
  switch (status) {
    case IdStatus::kSolved: return "solved";
    case IdStatus::kInconsistent: return "inconsistent";
    case IdStatus::kInfeasible: return "infeasible";
    case IdStatus::kNotConverged: return "not_converged";
    case IdStatus::kNumericalError: return "numerical_error";
  }
  return "unknown";
}

namespace {

std::string num(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

[[noreturn]] void bad_problem(const std::string& what) { throw std::invalid_argument("IdProblem: " + what); }

void require_finite(const Eigen::Ref<const MatrixXd>& X, const char* field) {
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    for (Eigen::Index i = 0; i < X.rows(); ++i)
      if (!std::isfinite(X(i, j))) {
        std::string where = X.cols() == 1 ? "[" + std::to_string(i) + "]"
                                          : "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
        bad_problem(std::string(field) + where + " is not finite: " + num(X(i, j)));
      }
}

}  // namespace

void IdProblem::resize(int m, int nq, int n) {
  M.setZero(m, m);
  v.setZero(m);
  f_ext.setZero(m);
  actuated.resize(nq);
  for (int i = 0; i < nq; ++i) actuated[i] = i;
  qdot_des.setZero(nq);
  N.setZero(n, m);
  S.setZero(n, m);
  T.setZero(n, m);
  phi.setZero(n);
  mu.setZero(n);
}

void IdProblem::validate() const {
  if (!(time_step > 0.0) || !std::isfinite(time_step)) bad_problem("time_step must be > 0 and finite, got " + num(time_step));
  const Eigen::Index m = v.size();
  if (M.rows() != m || M.cols() != m)
    bad_problem("M must be " + std::to_string(m) + " x " + std::to_string(m) + " (m = v.size()), got " +
                std::to_string(M.rows()) + " x " + std::to_string(M.cols()));
  if (f_ext.size() != m) bad_problem("f_ext must have m = " + std::to_string(m) + " entries, got " + std::to_string(f_ext.size()));
  require_finite(M, "M");
  require_finite(v, "v");
  require_finite(f_ext, "f_ext");
  const double scale = std::max(1.0, M.cwiseAbs().maxCoeff());
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = i + 1; j < m; ++j)
      if (std::abs(M(i, j) - M(j, i)) > 1e-9 * scale)
        bad_problem("M is not symmetric: M(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + num(M(i, j)) +
                    " but M(" + std::to_string(j) + ", " + std::to_string(i) + ") = " + num(M(j, i)));
  const int nq = num_actuated();
  for (int k = 0; k < nq; ++k) {
    if (actuated[k] < 0 || actuated[k] >= m)
      bad_problem("actuated[" + std::to_string(k) + "] = " + std::to_string(actuated[k]) + " is outside [0, " +
                  std::to_string(m) + ")");
    if (k > 0 && actuated[k] <= actuated[k - 1])
      bad_problem("actuated must be strictly ascending (distinct), but actuated[" + std::to_string(k) + "] = " +
                  std::to_string(actuated[k]) + " follows " + std::to_string(actuated[k - 1]));
  }
  if (qdot_des.size() != nq)
    bad_problem("qdot_des must have n_q = " + std::to_string(nq) + " entries (one per actuated coordinate), got " +
                std::to_string(qdot_des.size()));
  require_finite(qdot_des, "qdot_des");
  const Eigen::Index n = phi.size();
  for (const auto& [X, name] : {std::pair<const MatrixXd*, const char*>{&N, "N"}, {&S, "S"}, {&T, "T"}})
    if (X->rows() != n || X->cols() != m)
      bad_problem(std::string(name) + " must be n x m = " + std::to_string(n) + " x " + std::to_string(m) +
                  " (n = phi.size()), got " + std::to_string(X->rows()) + " x " + std::to_string(X->cols()));
  if (mu.size() != n) bad_problem("mu must have n = " + std::to_string(n) + " entries, got " + std::to_string(mu.size()));
  require_finite(N, "N");
  require_finite(S, "S");
  require_finite(T, "T");
  require_finite(phi, "phi");
  require_finite(mu, "mu");
  for (Eigen::Index i = 0; i < n; ++i)
    if (mu[i] < 0.0) bad_problem("mu[" + std::to_string(i) + "] must be >= 0, got " + num(mu[i]));
}


// ---------------------------------------------------------------------------------------------

IdSolver::Impl::Impl(const IdParameters& parameters)
    : par(parameters), ppm(parameters.ppm), lemke(parameters.lemke) {
  k = par.friction_edges;
  for (int j = 0; j < k; ++j) {
    const double theta = 2.0 * M_PI * j / k;
    double c = std::cos(theta), s = std::sin(theta);
    if (std::abs(c) < 1e-15) c = 0.0;  // k = 4: exactly ±ŝ, ±t̂
    if (std::abs(s) < 1e-15) s = 0.0;
    cos_theta.push_back(c);
    sin_theta.push_back(s);
  }
}

IdSolver::IdSolver(IdParameters parameters) {
  const IdParameters& p = parameters;
  if (p.friction_edges < 3 || p.friction_edges > 64)  // 1e8 edges exhausted memory and crashed
    throw std::invalid_argument("IdParameters: friction_edges must be in 3 … 64, got " + std::to_string(p.friction_edges));
  if (!(p.stage_two_regularization >= 0.0) || !std::isfinite(p.stage_two_regularization))
    throw std::invalid_argument("IdParameters: stage_two_regularization must be finite and >= 0, got " +
                                num(p.stage_two_regularization));
  if (!(p.find_indices_tolerance >= 0.0 && p.find_indices_tolerance < 1.0))
    throw std::invalid_argument("IdParameters: find_indices_tolerance must be in [0, 1), got " +
                                num(p.find_indices_tolerance));
  if (!(p.slip_tolerance >= 0.0) || !std::isfinite(p.slip_tolerance))
    throw std::invalid_argument("IdParameters: slip_tolerance must be finite and >= 0, got " + num(p.slip_tolerance));
  if (!(p.max_distance >= 0.0))
    throw std::invalid_argument("IdParameters: max_distance must be >= 0, got " + num(p.max_distance));
  if (p.mindiff_max_variables < 0 || p.mindiff_max_variables > Mindiff::kMaxVariables)
    throw std::invalid_argument("IdParameters: mindiff_max_variables must be in [0, " +
                                std::to_string(Mindiff::kMaxVariables) + "], got " +
                                std::to_string(p.mindiff_max_variables));
  impl_ = std::make_unique<Impl>(parameters);
}

IdSolver::~IdSolver() = default;
IdSolver::IdSolver(IdSolver&&) noexcept = default;
IdSolver& IdSolver::operator=(IdSolver&&) noexcept = default;

const IdParameters& IdSolver::parameters() const { return impl_->par; }

void IdSolver::reset() {
  impl_->warm.clear();
  impl_->warm_count = -1;
  for (auto& b : impl_->buffers)
    if (b) {
      b->has_prev = false;
      b->stage1_has_active = false;
      b->stage1_misses = 0;
      b->stage2_has_active = false;
      b->stage1_warm.resize(0);
    }
}

ContactBuffers& IdSolver::Impl::buffers_for(int count) {
  if (static_cast<int>(buffers.size()) <= count) buffers.resize(count + 1);
  if (!buffers[count]) buffers[count] = std::make_unique<ContactBuffers>();
  return *buffers[count];
}

void IdSolver::Impl::use_buffers(ContactBuffers* next) {
  if (swapped == next) return;
  for (ContactBuffers* B : {swapped, next}) {
    if (B == nullptr) continue;
    fN.swap(B->fN);
    fS.swap(B->fS);
    fT.swap(B->fT);
    lambda.swap(B->lambda);
  }
  swapped = next;
}

void IdSolver::Impl::setup(const IdProblem& problem, IdResults& results) {
  p = &problem;
  res = &results;
  m = problem.num_velocities();
  nq = problem.num_actuated();
  nb = m - nq;
  dt = problem.time_step;
  const std::vector<int>& Aidx = problem.actuated;

  // ---- the unactuated block and its factorization
  unactuated.clear();
  for (int i = 0, a = 0; i < m; ++i) {
    if (a < nq && Aidx[a] == i) {
      ++a;
      continue;
    }
    unactuated.push_back(i);
  }
  const std::vector<int>& U = unactuated;
  A.resize(nb, nb);
  M_UA.resize(nb, nq);
  for (int i = 0; i < nb; ++i) {
    for (int j = 0; j < nb; ++j) A(i, j) = problem.M(U[i], U[j]);
    for (int j = 0; j < nq; ++j) M_UA(i, j) = problem.M(U[i], Aidx[j]);
  }
  if (nb > 0) {
    llt.compute(A);
    if (llt.info() != Eigen::Success || !(llt.matrixLLT().diagonal().minCoeff() > 0.0))
      throw std::invalid_argument("IdProblem: the unactuated block M_UU (" + std::to_string(nb) + " x " +
                                  std::to_string(nb) +
                                  ") of M is not positive definite (a free body or floating base without mass?)");
  }

  // ---- free momentum b = M ⁻v + Δt f_ext, and v*
  b.noalias() = problem.M * problem.v;
  b += dt * problem.f_ext;
  vstar.resize(m);
  vU.resize(nb);
  for (int j = 0; j < nq; ++j) vstar[Aidx[j]] = problem.qdot_des[j];
  for (int i = 0; i < nb; ++i) vU[i] = b[U[i]];
  if (nb > 0) {
    vU.noalias() -= M_UA * problem.qdot_des;
    llt.solveInPlace(vU);
  }
  for (int i = 0; i < nb; ++i) vstar[U[i]] = vU[i];

  // ---- kept contacts: rows restricted to 𝒰 and velocities at v*
  kept.clear();
  for (int i = 0; i < problem.num_contacts(); ++i)
    if (problem.phi[i] <= par.max_distance) kept.push_back(i);
  n = static_cast<int>(kept.size());
  buf = &buffers_for(n);
  use_buffers(buf);
  ContactBuffers& B = *buf;
  B.NU.resize(n, nb);
  B.SU.resize(n, nb);
  B.TU.resize(n, nb);
  B.cN.resize(n);
  B.cS.resize(n);
  B.cT.resize(n);
  B.phi_dt.resize(n);
  B.mu.resize(n);
  for (int c = 0; c < n; ++c) {
    const int i = kept[c];
    for (int j = 0; j < nb; ++j) {
      B.NU(c, j) = problem.N(i, U[j]);
      B.SU(c, j) = problem.S(i, U[j]);
      B.TU(c, j) = problem.T(i, U[j]);
    }
    B.cN[c] = problem.N.row(i).dot(vstar);
    B.cS[c] = problem.S.row(i).dot(vstar);
    B.cT[c] = problem.T.row(i).dot(vstar);
    B.phi_dt[c] = problem.phi[i] / dt;
    B.mu[c] = problem.mu[i];
  }
  fN.setZero(n);
  fS.setZero(n);
  fT.setZero(n);
  has_lambda = false;
  results.message.clear();
  results.active_set.clear();
  results.stats = IdStats{};
  results.stats.contacts = n;
  results.stats.unactuated = nb;
}

void IdSolver::Impl::velocity_from_impulses() {
  if (nb == 0) return;
  const ContactBuffers& B = *buf;
  vU.noalias() = B.NU.transpose() * fN;
  vU.noalias() += B.SU.transpose() * fS;
  vU.noalias() += B.TU.transpose() * fT;
  llt.solveInPlace(vU);
  for (int i = 0; i < nb; ++i) vU[i] += vstar[unactuated[i]];
}

int IdSolver::Impl::build_polygon_rows(bool all_friction) {
  ContactBuffers& B = *buf;
  const std::vector<int>& Aidx = p->actuated;
  B.friction_offset.resize(n);
  int nz = n;
  for (int c = 0; c < n; ++c) {
    if (all_friction || B.mu[c] > 0.0) {
      B.friction_offset[c] = nz;
      nz += k;
    } else {
      B.friction_offset[c] = -1;
    }
  }
  B.RU.resize(nz, nb);
  B.RA.resize(nz, nq);
  B.cR.resize(nz);
  for (int c = 0; c < n; ++c) {
    const int i = kept[c];
    B.RU.row(c) = B.NU.row(c);
    for (int j = 0; j < nq; ++j) B.RA(c, j) = p->N(i, Aidx[j]);
    B.cR[c] = B.cN[c];
    const int o = B.friction_offset[c];
    if (o < 0) continue;
    for (int e = 0; e < k; ++e) {
      const double cs = cos_theta[e], sn = sin_theta[e];
      B.RU.row(o + e) = cs * B.SU.row(c) + sn * B.TU.row(c);
      for (int j = 0; j < nq; ++j) B.RA(o + e, j) = cs * p->S(i, Aidx[j]) + sn * p->T(i, Aidx[j]);
      B.cR[o + e] = cs * B.cS[c] + sn * B.cT[c];
    }
  }
  B.B.resize(nb, nz);
  B.B = B.RU.transpose();
  if (nb > 0) llt.matrixL().solveInPlace(B.B);
  return nz;
}

double IdSolver::Impl::actuated_momentum_change(int j) const {
  const int a = p->actuated[j];
  double g = -b[a];
  for (int i = 0; i < nb; ++i) g += p->M(a, unactuated[i]) * vU[i];
  for (int l = 0; l < nq; ++l) g += p->M(a, p->actuated[l]) * p->qdot_des[l];
  return g;
}

void IdSolver::Impl::polygon_to_frame(const VectorXd& z) {
  const ContactBuffers& B = *buf;
  for (int c = 0; c < n; ++c) {
    fN[c] = z[c];
    double fs = 0.0, ft = 0.0;
    const int o = B.friction_offset[c];
    if (o >= 0)
      for (int j = 0; j < k; ++j) {
        fs += z[o + j] * cos_theta[j];
        ft += z[o + j] * sin_theta[j];
      }
    fS[c] = fs;
    fT[c] = ft;
  }
}

void IdSolver::Impl::finish(IdStatus status, bool no_slip, bool complementarity) {
  IdResults& r = *res;
  const IdProblem& P = *p;
  const std::vector<int>& Aidx = P.actuated;
  IdStats& st = r.stats;
  // ⁺v. (consistency_qp() may have changed the actuated part: it writes vstar's 𝒜 entries.)
  r.v_next.resize(m);
  for (int j = 0; j < nq; ++j) r.v_next[Aidx[j]] = vstar[Aidx[j]];
  for (int i = 0; i < nb; ++i) r.v_next[unactuated[i]] = vU[i];
  // Generalized contact impulse Rᵀz over every kept contact: work_m.
  work_m.setZero(m);
  for (int c = 0; c < n; ++c) {
    const int i = kept[c];
    work_m.noalias() += fN[c] * P.N.row(i).transpose();
    work_m.noalias() += fS[c] * P.S.row(i).transpose();
    work_m.noalias() += fT[c] * P.T.row(i).transpose();
  }
  // ι = [M ⁺v − b − Rᵀ z]_𝒜, the dynamics residual on the 𝒰 rows.
  VectorXd& resid = b;  // b is not needed any more: resid = M ⁺v − b − Rᵀz
  resid *= -1.0;
  resid.noalias() += P.M * r.v_next;
  resid -= work_m;
  r.tau.resize(nq);
  for (int j = 0; j < nq; ++j) r.tau[j] = resid[Aidx[j]] / dt;
  double dyn = 0.0;
  for (int i = 0; i < nb; ++i) dyn = std::max(dyn, std::abs(resid[unactuated[i]]));
  st.dynamics_residual = dyn;
  double track = 0.0;
  for (int j = 0; j < nq; ++j) track = std::max(track, std::abs(r.v_next[Aidx[j]] - P.qdot_des[j]));
  st.tracking_residual = track;
  // Contacts: impulses per problem contact, normal velocity, complementarity, slip.
  const int n_all = P.num_contacts();
  r.contact_impulses.setZero(3 * n_all);
  double min_w = std::numeric_limits<double>::infinity(), compl_res = 0.0, slip = 0.0;
  for (int c = 0; c < n; ++c) {
    const int i = kept[c];
    r.contact_impulses[3 * i] = fS[c];
    r.contact_impulses[3 * i + 1] = fT[c];
    r.contact_impulses[3 * i + 2] = fN[c];
    const double w = P.N.row(i).dot(r.v_next) + P.phi[i] / dt;
    min_w = std::min(min_w, w);
    compl_res = std::max(compl_res, std::abs(fN[c] * w));
    if (no_slip)
      slip = std::max({slip, std::abs(P.S.row(i).dot(r.v_next)), std::abs(P.T.row(i).dot(r.v_next))});
  }
  st.min_normal_velocity = min_w;
  st.complementarity_residual = complementarity ? compl_res : 0.0;
  st.slip_residual = slip;
  work_m.noalias() = P.M * r.v_next;
  st.kinetic_energy = 0.5 * r.v_next.dot(work_m);
  if (has_lambda) {
    r.sliding_speed.setZero(n_all);
    for (int c = 0; c < n; ++c) r.sliding_speed[kept[c]] = lambda[c];
  } else {
    r.sliding_speed.resize(0);
  }
  if (r.active_set.empty()) {
    for (int c = 0; c < n; ++c)
      if (fN[c] > 0.0) r.active_set.push_back(kept[c]);
  }
  // Never NaN: a non-finite result is a numerical error with zeroed outputs.
  if (!r.tau.allFinite() || !r.v_next.allFinite() || !r.contact_impulses.allFinite()) {
    r.tau.setZero();
    r.v_next = vstar;
    r.contact_impulses.setZero();
    status = IdStatus::kNumericalError;
    if (r.message.empty()) r.message = "non-finite torques or impulses (ill-conditioned problem)";
  }
  r.status = status;
}

void IdSolver::solve(const IdProblem& problem, IdResults& results) {
  const auto t_start = std::chrono::steady_clock::now();
  problem.validate();
  Impl& s = *impl_;
  s.setup(problem, results);
  IdStatus status = IdStatus::kSolved;
  bool no_slip = false, complementarity = false;
  if (s.n == 0) {
    // ⁺v = v*: plain inverse dynamics (digest §10.1); setup() left v*_𝒰 in vU.
  } else {
    switch (s.par.formulation) {
      case Formulation::kLcpNoSlip:
        status = s.lcp_no_slip();
        no_slip = true;
        complementarity = true;
        break;
      case Formulation::kLcpCoulomb:
        status = s.lcp_coulomb();
        complementarity = true;
        break;
      case Formulation::kQpCoulomb:
      case Formulation::kQpNoSlip:
        status = s.qp_two_stage();
        break;
    }
  }
  s.finish(status, no_slip, complementarity);
  results.stats.solve_time =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
}

}  // namespace coulomb::inverse_dynamics
