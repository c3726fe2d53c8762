// Drumwright's L-stable first-order constraint solver (lstable_solver.h).
#include "coulomb/solvers/lstable/lstable_solver.h"

#include <cmath>

#include <Eigen/QR>
#include <limits>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::lstable {

const char* to_string(LStableStatus status) {
  switch (status) {
    case LStableStatus::kSuccess: return "success";
    case LStableStatus::kLinearSolve: return "linear_solve_failure";
    case LStableStatus::kQpNotConverged: return "qp_not_converged";
    case LStableStatus::kQpNumericalError: return "qp_numerical_error";
  }
  return "unknown";
}

const char* to_string(FrictionModel model) { return model == FrictionModel::kCone ? "cone" : "staggered"; }

FrictionModel parse_friction_model(const std::string& name) {
  if (name == "staggered") return FrictionModel::kStaggered;
  if (name == "cone") return FrictionModel::kCone;
  throw std::invalid_argument("unknown lstable friction model '" + name + "' (staggered, cone)");
}

namespace {


// R and v̂ of a spring–damper row (K, B ≥ 0, K + B > 0) with the integrator's prediction
// φ₁ = φ₀ + δt ((1 − θ) φ̇₀ + θ φ̇₁): φ̇₁ = v̂ − R γ.
void spring_damper(double dt, double theta, double K, double B, double phi0, double phidot0, double& R, double& vhat) {
  const double c = dt * theta * K + B;
  R = 1.0 / (dt * c);
  vhat = K > 0.0 ? -K * (phi0 + dt * (1.0 - theta) * phidot0) / c : 0.0;
}

// A frictional contact whose second tangent row t2 is identically zero in every block moves in
// the plane of t1 and n (a planar model): the paper's 2-D contact (§6.1–6.2).
bool is_planar(const constraints::ContactConstraint& c) {
  for (int b = 0; b < c.num_blocks; ++b)
    if (!c.blocks[b].J.row(1).isZero(0.0)) return false;
  return true;
}

}  // namespace

const LStableResults& LStableSolver::solve(const constraints::ConstraintSet& set,
                                           const std::vector<Eigen::MatrixXd>& A_blocks, const Eigen::VectorXd& v_star) {
  const int nv = set.nv;
  const double dt = set.time_step, theta = set.theta_vq;
  if (v_star.size() != nv)
    throw std::invalid_argument("lstable: v* has " + std::to_string(v_star.size()) + " entries, expected " +
                                std::to_string(nv));
  if (A_blocks.size() != set.trees.size())
    throw std::invalid_argument("lstable: " + std::to_string(A_blocks.size()) + " A blocks for " +
                                std::to_string(set.trees.size()) + " trees");
  if (!(dt > 0.0)) throw std::invalid_argument("lstable: time step " + std::to_string(dt) + " must be > 0");
  LStableResults& out = results_;
  out.status = LStableStatus::kSuccess;
  out.qp_iterations = 0;
  out.residual = 0.0;
  out.used_qp = false;
  out.impulses.resize(set);

  // Rows. Count first.
  int n = 0;
  // Rows per contact: [t1, t2, n] with friction, [t1, n] for a planar one (2-D friction),
  // [n] without friction.
  auto contact_rows = [&](const constraints::ContactConstraint& c) {
    if (!(c.material.mu > 0.0)) return 1;
    return parameters_.planar_friction_qp && is_planar(c) ? 2 : 3;
  };
  for (const constraints::ContactConstraint& c : set.contacts) n += contact_rows(c);
  for (const constraints::JointLimitConstraint& l : set.limits)
    n += (std::isfinite(l.lower) ? 1 : 0) + (std::isfinite(l.upper) ? 1 : 0);
  n += static_cast<int>(set.pd_actuators.size() + set.couplers.size() + set.joint_frictions.size());
  n += set.num_bilateral_rows();
  out.num_rows = n;
  G_.setZero(n, nv);
  R_.resize(n);
  vhat_.resize(n);
  orthant_rows_.clear();
  box_rows_.clear();
  bound_.clear();
  cone_rows_.clear();
  cone_dim_.clear();
  mu_.clear();
  const double B_r = parameters_.tangential_damping / dt;

  // Factor A per tree.
  llt_.resize(A_blocks.size());
  for (size_t t = 0; t < A_blocks.size(); ++t) {
    llt_[t].compute(A_blocks[t]);
    if (llt_[t].info() != Eigen::Success)
      throw std::invalid_argument("lstable: the A block of tree " + std::to_string(t) + " is not positive definite");
  }

  int row = 0;
  std::vector<int>& rigid = rigid_rows_;  // rows of rigid contact normals (R from W, once formed)
  rigid.clear();
  out.planar_contacts = 0;
  for (const constraints::ContactConstraint& c : set.contacts) {
    const bool friction = c.material.mu > 0.0;
    const int rows = contact_rows(c);
    if (rows == 2) {
      ++out.planar_contacts;
      for (int b = 0; b < c.num_blocks; ++b) {
        G_.block(row, c.blocks[b].v_start, 1, c.blocks[b].J.cols()) += c.blocks[b].J.row(0);
        G_.block(row + 1, c.blocks[b].v_start, 1, c.blocks[b].J.cols()) += c.blocks[b].J.row(2);
      }
    } else {
      const int first = friction ? 0 : 2;  // contact-frame row of the first problem row
      for (int b = 0; b < c.num_blocks; ++b)
        G_.block(row, c.blocks[b].v_start, rows, c.blocks[b].J.cols()) += c.blocks[b].J.middleRows(first, rows);
    }
    const int rn = row + rows - 1;
    const double k = c.material.stiffness, tau = c.material.dissipation_time;
    vhat_[rn] = -(c.phi0 + dt * (1.0 - theta) * c.vn0) / (dt * theta + tau);
    if (std::isfinite(k)) R_[rn] = 1.0 / (dt * (dt * theta * k + k * tau));
    else R_[rn] = 0.0, rigid.push_back(rn);
    if (friction) {
      for (int t = 0; t < rows - 1; ++t) {
        R_[row + t] = 1.0 / (dt * B_r);
        vhat_[row + t] = 0.0;
      }
      cone_rows_.push_back(row);
      cone_dim_.push_back(rows);
      mu_.push_back(c.material.mu);
    } else {
      orthant_rows_.push_back(rn);
    }
    row += rows;
  }
  for (const constraints::JointLimitConstraint& l : set.limits) {
    const int col = set.trees[l.tree].v_start + l.local;
    for (int side = 0; side < 2; ++side) {
      const double bound = side == 0 ? l.lower : l.upper;
      if (!std::isfinite(bound)) continue;
      const double sign = side == 0 ? 1.0 : -1.0;  // φ = q − lower or upper − q
      G_(row, col) = sign;
      spring_damper(dt, theta, parameters_.limit_stiffness, parameters_.limit_damping, sign * (l.q0 - bound),
                    sign * l.v0, R_[row], vhat_[row]);
      orthant_rows_.push_back(row);
      ++row;
    }
  }
  for (const constraints::PdActuatorConstraint& a : set.pd_actuators) {
    G_(row, set.trees[a.tree].v_start + a.local) = 1.0;
    // λ = −kp (q₁ − q_t) − kd (v₁ − v_t) + u with q₁ = q₀ + δt ((1 − θ) v₀ + θ v₁).
    const double c = dt * theta * a.kp + a.kd;
    R_[row] = 1.0 / (dt * c);
    vhat_[row] = (-a.kp * (a.q0 + dt * (1.0 - theta) * a.v0 - a.q_target) + a.kd * a.v_target + a.feedforward) / c;
    if (std::isfinite(a.effort_limit)) {
      box_rows_.push_back(row);
      bound_.push_back(dt * a.effort_limit);
    }
    ++row;
  }
  for (const constraints::CouplerConstraint& c : set.couplers) {
    const int v0 = set.trees[c.tree].v_start;
    G_(row, v0 + c.local) += 1.0;
    G_(row, v0 + c.leader_local) -= c.gear_ratio;
    spring_damper(dt, theta, parameters_.coupler_stiffness, parameters_.coupler_damping,
                  c.q0 - c.gear_ratio * c.leader_q0 - c.offset, c.vc0, R_[row], vhat_[row]);
    ++row;
  }
  for (const constraints::JointFrictionConstraint& f : set.joint_frictions) {
    G_(row, set.trees[f.tree].v_start + f.local) = 1.0;
    R_[row] = 1.0 / (dt * B_r);
    vhat_[row] = 0.0;
    box_rows_.push_back(row);
    bound_.push_back(dt * f.friction);
    ++row;
  }
  // Bilateral constraints (ball, weld, distance, joint): free rows, each a spring–damper with the
  // constraint's K and B; rigid rows (K = ∞) take the rigid contacts' near-rigid R (set from W
  // below) with critical damping τ = δt θ / π; inert rows (zero Jacobian row) carry nothing.
  for (const constraints::BilateralConstraint& b : set.bilaterals)
    for (int r = 0; r < b.num_rows; ++r, ++row) {
      for (int k = 0; k < b.num_blocks; ++k) G_.block(row, b.blocks[k].v_start, 1, b.blocks[k].J.cols()) += b.blocks[k].J.row(r);
      const double phi = b.phi0[r] + dt * (1.0 - theta) * b.phidot0[r];
      if (b.inert_row(r)) R_[row] = 1.0, vhat_[row] = 0.0;
      else if (std::isfinite(b.stiffness[r])) spring_damper(dt, theta, b.stiffness[r], b.damping[r], b.phi0[r], b.phidot0[r], R_[row], vhat_[row]);
      else R_[row] = 0.0, vhat_[row] = -phi / (dt * theta * (1.0 + 1.0 / 3.141592653589793)), rigid.push_back(row);
    }

  // W = G A⁻¹ Gᵀ, tree by tree.
  AinvGt_.resize(nv, n);
  for (size_t t = 0; t < set.trees.size(); ++t) {
    const contact::TreeRange& tr = set.trees[t];
    AinvGt_.middleRows(tr.v_start, tr.nv) = llt_[t].solve(G_.middleCols(tr.v_start, tr.nv).transpose());
  }
  W_.noalias() = G_ * AinvGt_;
  for (int r : rigid) R_[r] = parameters_.rigid_compliance_factor * W_(r, r);

  // P = W + R, q = G v* − v̂.
  rhs_.noalias() = G_ * v_star;
  rhs_ -= vhat_;
  gamma_.setZero(n);
  const int l = static_cast<int>(orthant_rows_.size() + 2 * box_rows_.size());
  if (n > 0 && l == 0 && cone_rows_.empty()) {
    // Bilateral rows only: one linear solve in the symmetric form.
    W_.diagonal() += R_;
    ldlt_.compute(W_);
    gamma_ = ldlt_.solve(-rhs_);
    if (ldlt_.info() != Eigen::Success || !gamma_.allFinite()) {
      // Redundant rows with R below round-off next to W (K ≳ 1e17 at large δt): the minimum-norm
      // least-squares solution by a complete orthogonal decomposition (digest §4 item 1).
      Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(W_);
      gamma_ = cod.solve(-rhs_);
      if (!gamma_.allFinite()) {
        out.status = LStableStatus::kLinearSolve;
        gamma_.setZero();
      }
    }
  } else if (n > 0) {
    out.used_qp = true;
    solve_qp(set, n, out);
  }

  // v = v* + A⁻¹ Gᵀ γ, and the impulses in the set's layout.
  out.v = v_star;
  out.v.noalias() += AinvGt_ * gamma_;
  row = 0;
  for (size_t k = 0; k < set.contacts.size(); ++k) {
    const constraints::ContactConstraint& c = set.contacts[k];
    const bool friction = c.material.mu > 0.0;
    const int rows = contact_rows(c);
    if (rows == 2) {
      out.impulses.contacts[3 * k] = gamma_[row];
      out.impulses.contacts[3 * k + 2] = gamma_[row + 1];
    } else {
      const int first = friction ? 0 : 2;
      out.impulses.contacts.segment(3 * k + first, rows) = gamma_.segment(row, rows);
    }
    for (int b = 0; b < c.num_blocks; ++b)
      out.impulses.contact_velocities.segment<3>(3 * k).noalias() +=
          c.blocks[b].J * out.v.segment(c.blocks[b].v_start, c.blocks[b].J.cols());
    row += rows;
  }
  for (size_t k = 0; k < set.limits.size(); ++k) {
    const constraints::JointLimitConstraint& lim = set.limits[k];
    if (std::isfinite(lim.lower)) out.impulses.limits[k] += gamma_[row++];
    if (std::isfinite(lim.upper)) out.impulses.limits[k] -= gamma_[row++];
  }
  for (size_t k = 0; k < set.pd_actuators.size(); ++k) out.impulses.pd_actuators[k] = gamma_[row++];
  for (size_t k = 0; k < set.couplers.size(); ++k) out.impulses.couplers[k] = gamma_[row++];
  for (size_t k = 0; k < set.joint_frictions.size(); ++k) out.impulses.joint_frictions[k] = gamma_[row++];
  for (int k = 0; k < out.impulses.bilaterals.size(); ++k) out.impulses.bilaterals[k] = gamma_[row++];
  return out;
}

// The mixed problem min ½γᵀPγ + qᵀγ, P = W + R, q = G v* − v̂, with the free rows (bilateral
// spring–dampers: PD actuators without an effort limit, couplers) and the constrained rows
// (orthant, box, cone). With `eliminate_free_rows` the free rows are removed first, as in the
// paper's Appendix A (eqs. 158–161, 187–198 with the digest's §7.4 corrections): stationarity in
// the free rows, P_FF γ_F + P_FC γ_C + q_F = 0, gives γ_F = −P_FF⁻¹(q_F + P_FC γ_C), and the
// reduced problem in γ_C has the Schur complement
//
//   P̂ = P_CC − P_CF P_FF⁻¹ P_FC,   q̂ = q_C − P_CF P_FF⁻¹ q_F.
//
// This is the paper's Λ = (M + G_bᵀ(h²K_b + hB_b)G_b)⁻¹ written in impulses: by the Woodbury
// identity G_C Λ G_Cᵀ + R_C equals P̂ (the bilateral springs absorbed into an implicit mass
// matrix). P_FF = W_FF + R_F is positive definite whenever R_F > 0, also for redundant rows.
void LStableSolver::solve_qp(const constraints::ConstraintSet& set, int n, LStableResults& out) {
  const int nv = set.nv;
  // Row kinds.
  enum : char { kFree, kOrthant, kBox, kConeNormal, kConeTangent };
  row_kind_.assign(n, kFree);
  row_data_.assign(n, 0);  // box: index into bound_; cone rows: index of the cone contact
  for (int r : orthant_rows_) row_kind_[r] = kOrthant;
  for (size_t k = 0; k < box_rows_.size(); ++k) row_kind_[box_rows_[k]] = kBox, row_data_[box_rows_[k]] = static_cast<int>(k);
  for (size_t k = 0; k < cone_rows_.size(); ++k) {
    const int r0 = cone_rows_[k], d = cone_dim_[k];  // rows [t1, (t2,) n]
    for (int i = 0; i < d - 1; ++i) row_kind_[r0 + i] = kConeTangent;
    row_kind_[r0 + d - 1] = kConeNormal;
    for (int i = 0; i < d; ++i) row_data_[r0 + i] = static_cast<int>(k);
  }
  free_rows_.clear();
  for (int r = 0; r < n; ++r)
    if (row_kind_[r] == kFree) free_rows_.push_back(r);
  const int nf = static_cast<int>(free_rows_.size());
  const bool eliminate = parameters_.eliminate_free_rows && nf > 0;
  // V: the QP's candidate variables (the constrained rows after elimination, else every row).
  std::vector<int>& V = constrained_rows_;
  V.clear();
  for (int r = 0; r < n; ++r)
    if (!eliminate || row_kind_[r] != kFree) V.push_back(r);
  const int nV = static_cast<int>(V.size());
  Phat_.resize(nV, nV);
  qhat_.resize(nV);
  if (!eliminate) {
    Phat_ = W_;
    Phat_.diagonal() += R_;
    qhat_ = rhs_;
  } else {
    // With A = L Lᵀ per tree and Y = L⁻¹ Gᵀ (n_v × n), W = YᵀY. The Schur complement is formed
    // without P_FF⁻¹, which would amplify round-off by 1/R in the directions where W_FF is
    // singular (redundant free rows) or R_F tiny (stiff rows): the Householder QR of
    //   Z = [Y_F; R_F^½]   ((n_v + n_F) × n_F),   Z = Q [R_z; 0],   R_zᵀR_z = P_FF,
    // applied to [Y_C; 0] gives Qᵀ[Y_C; 0] = [X₁; X₂], and
    //   P̂ = X₂ᵀX₂ + R_C (positive semidefinite by construction),
    //   q̂ = q_C − X₁ᵀ w,  w = R_z⁻ᵀ q_F,     γ_F = −R_z⁻¹ (w + X₁ γ_C).
    Y_.resize(nv, n);
    for (size_t t = 0; t < llt_.size(); ++t) {
      const contact::TreeRange& tr = set.trees[t];
      Y_.middleRows(tr.v_start, tr.nv) = G_.middleCols(tr.v_start, tr.nv).transpose();
      llt_[t].matrixL().solveInPlace(Y_.middleRows(tr.v_start, tr.nv));
    }
    Z_.setZero(nv + nf, nf);
    YC_.setZero(nv + nf, nV);
    qf_.resize(nf);
    for (int i = 0; i < nf; ++i) {
      Z_.col(i).head(nv) = Y_.col(free_rows_[i]);
      Z_(nv + i, i) = std::sqrt(R_[free_rows_[i]]);
      qf_[i] = rhs_[free_rows_[i]];
    }
    for (int j = 0; j < nV; ++j) YC_.col(j).head(nv) = Y_.col(V[j]);
    qr_.compute(Z_);
    YC_.applyOnTheLeft(qr_.householderQ().adjoint());
    w_ = qf_;
    qr_.matrixQR().topLeftCorner(nf, nf).triangularView<Eigen::Upper>().transpose().solveInPlace(w_);
    Phat_.noalias() = YC_.bottomRows(nv).transpose() * YC_.bottomRows(nv);
    for (int i = 0; i < nV; ++i) {
      Phat_(i, i) += R_[V[i]];
      qhat_[i] = rhs_[V[i]];
    }
    qhat_.noalias() -= YC_.topRows(nf).transpose() * w_;
  }

  // One QP over the rows of V that take part. `radius` (staggered passes): the disc radius
  // μ γ̂_n of each cone contact's tangential impulse, whose normal is then an orthant row; a
  // contact with radius ≤ `exclude_below` keeps γ_t = 0 (its tangent rows leave the problem).
  xV_.setZero(nV);
  const int num_cones = static_cast<int>(cone_rows_.size());
  cone_normal_v_.assign(num_cones, 0);
  for (int i = 0; i < nV; ++i)
    if (row_kind_[V[i]] == kConeNormal) cone_normal_v_[row_data_[V[i]]] = i;
  auto gamma_normal = [&](int k) { return xV_[cone_normal_v_[k]]; };
  LStableStatus pass_status = LStableStatus::kSuccess;
  double pass_residual = 0.0;
  auto run_pass = [&](bool cone_mode, const std::vector<double>& radius, double exclude_below) -> bool {
    position_.assign(nV, -1);
    int ns = 0, l = 0, cones = 0;
    for (int i = 0; i < nV; ++i) {
      const char kind = row_kind_[V[i]];
      const bool planar = (kind == kConeTangent || kind == kConeNormal) && cone_dim_[row_data_[V[i]]] == 2;
      if (kind == kConeTangent && !cone_mode && radius[row_data_[V[i]]] <= exclude_below) continue;
      position_[i] = ns++;
      if (kind == kOrthant || (kind == kConeNormal && !cone_mode)) l += 1;
      if (kind == kBox) l += 2;
      if (planar && kind == kConeNormal && cone_mode) l += 2;    // |γ_t| ≤ μ γ_n: two half-planes
      if (planar && kind == kConeTangent && !cone_mode) l += 2;  // |γ_t| ≤ r: a box
    }
    for (int k = 0; k < num_cones; ++k)
      if (cone_dim_[k] == 3 && (cone_mode || radius[k] > exclude_below)) ++cones;
    cone_sizes_.assign(cones, 3);
    qp_.resize(ns, l, cone_sizes_);
    for (int i = 0; i < nV; ++i) {
      if (position_[i] < 0) continue;
      qp_.q[position_[i]] = qhat_[i];
      for (int j = 0; j < nV; ++j)
        if (position_[j] >= 0) qp_.P(position_[i], position_[j]) = Phat_(i, j);
    }
    int m = 0;
    for (int i = 0; i < nV; ++i) {  // orthant rows first: γ ≥ 0, |γ| ≤ bound, planar friction
      const char kind = row_kind_[V[i]];
      const int c = position_[i];
      if (c < 0) continue;
      const bool planar = (kind == kConeTangent || kind == kConeNormal) && cone_dim_[row_data_[V[i]]] == 2;
      if (kind == kOrthant || (kind == kConeNormal && !cone_mode)) qp_.G(m++, c) = -1.0;
      if (planar && kind == kConeNormal && cone_mode) {  // ±γ_t − μ γ_n ≤ 0 (t1 is the row before)
        const double mu = mu_[row_data_[V[i]]];
        qp_.G(m, position_[i - 1]) = 1.0;
        qp_.G(m++, c) = -mu;
        qp_.G(m, position_[i - 1]) = -1.0;
        qp_.G(m++, c) = -mu;
      }
      if (planar && kind == kConeTangent && !cone_mode) {  // |γ_t| ≤ r
        const double r = radius[row_data_[V[i]]];
        qp_.G(m, c) = 1.0;
        qp_.h[m++] = r;
        qp_.G(m, c) = -1.0;
        qp_.h[m++] = r;
      }
      if (kind == kBox) {
        const double bound = bound_[row_data_[V[i]]];
        qp_.G(m, c) = 1.0;
        qp_.h[m++] = bound;
        qp_.G(m, c) = -1.0;
        qp_.h[m++] = bound;
      }
    }
    for (int i = 0; i < nV; ++i) {  // then the cones, in contact order
      if (row_kind_[V[i]] != kConeNormal) continue;
      const int k = row_data_[V[i]];
      if (cone_dim_[k] == 2) continue;  // planar: linear rows above
      const int t1 = position_[i - 2], t2 = position_[i - 1];  // [t1, t2, n] are consecutive in V
      if (cone_mode) {
        qp_.G(m++, position_[i]) = -mu_[k];  // (μ γ_n, γ_t) ∈ 𝒬³
      } else {
        if (t1 < 0) continue;
        qp_.h[m++] = radius[k];  // (r, γ_t) ∈ 𝒬³: ‖γ_t‖ ≤ r
      }
      qp_.G(m++, t1) = -1.0;
      qp_.G(m++, t2) = -1.0;
    }
    qp_solver_.mutable_parameters() = parameters_.qp;
    const qp::ConicQpResults& r = qp_solver_.solve(qp_);
    out.qp_iterations += r.iterations;
    pass_residual = std::max(r.primal_residual, r.dual_residual);
    pass_status = LStableStatus::kSuccess;
    if (r.status == qp::ConicQpStatus::kMaxIterations) pass_status = LStableStatus::kQpNotConverged;
    if (r.status == qp::ConicQpStatus::kNumericalError) pass_status = LStableStatus::kQpNumericalError;
    if (!r.x.allFinite()) return false;
    for (int i = 0; i < nV; ++i) xV_[i] = position_[i] >= 0 ? r.x[position_[i]] : 0.0;
    return pass_status == LStableStatus::kSuccess;
  };

  // Pass 0: the single-cone problem (kCone's only pass). Its status is the step's; a failed
  // pass keeps its last finite iterate (xV_ is only written when finite).
  const bool first_ok = run_pass(true, radius_, 0.0);
  out.status = pass_status;
  out.residual = pass_residual;
  out.friction_iterations = 0;
  out.friction_converged = true;
  if (first_ok && num_cones > 0 && parameters_.friction == FrictionModel::kStaggered) {
    // Staggered normal/friction passes (digest §7.3 fix 3, iterated to its fixed point): pass k
    // bounds each contact's friction by the disc ‖γ_t‖ ≤ μ γ_n of pass k − 1 while the normals
    // are unilateral spring–dampers of their own. At the fixed point γ_n obeys its own law (no
    // μ·slip lift of the single cone) and γ_t is Coulomb's maximal dissipation within μ γ_n.
    // Starting from the cone's normals (an upper estimate while sliding) keeps the solution the
    // cone finds where friction wedges a contact (a Painlevé rod jams: with the cone's normal the
    // jam is a fixed point at once; from the frictionless normal the iteration would have to grow
    // by μ W_nt/W_nn per pass). Every pass is a convex problem with a fixed friction bound, so no
    // pass adds energy. A pass whose QP fails ends the iteration with the last pass that
    // succeeded (friction_converged = false); only a failed first pass is a failure.
    radius_.assign(num_cones, 0.0);
    normal_prev_.resize(num_cones);
    for (int k = 0; k < num_cones; ++k) normal_prev_[k] = gamma_normal(k);
    x_good_ = xV_;
    out.friction_converged = false;
    double last_change = std::numeric_limits<double>::infinity();
    for (int it = 1; it <= parameters_.max_friction_iterations; ++it) {
      double rmax = 0.0;
      for (int k = 0; k < num_cones; ++k) {
        radius_[k] = mu_[k] * std::max(0.0, normal_prev_[k]);
        rmax = std::max(rmax, radius_[k]);
      }
      // A disc far below the largest (a contact that barely touches) has almost no interior for
      // the interior point: its friction stays 0 in this pass.
      if (!run_pass(false, radius_, 1e-9 * rmax)) {
        xV_ = x_good_;
        break;
      }
      out.friction_iterations = it;
      out.residual = pass_residual;
      x_good_ = xV_;
      // The next bound: the new normals, averaged with the previous bound when the iteration
      // stops contracting (strongly coupled contacts can make the plain iteration alternate
      // between two states; the average has the same fixed point). The change is measured
      // against the largest impulse of the problem: normals at the interior point's round-off
      // (contacts that do not carry load) need not settle relative to themselves.
      double change = 0.0, scale = 0.0;
      for (int k = 0; k < num_cones; ++k) change = std::max(change, std::abs(gamma_normal(k) - normal_prev_[k]));
      for (int i = 0; i < nV; ++i) scale = std::max(scale, std::abs(xV_[i]));
      const double relax = change > 0.9 * last_change ? 0.5 : 1.0;
      last_change = change;
      for (int k = 0; k < num_cones; ++k) normal_prev_[k] = relax * gamma_normal(k) + (1.0 - relax) * normal_prev_[k];
      if (change <= parameters_.friction_tolerance * scale) {
        out.friction_converged = true;
        break;
      }
    }
  }
  for (int i = 0; i < nV; ++i) gamma_[V[i]] = xV_[i];
  if (!eliminate) return;
  // Back-substitution (the paper's λ_b = C⁻¹(c + D_A G*ᵀλ*), eq. 158, in impulses).
  w_.noalias() += YC_.topRows(nf) * xV_;
  qr_.matrixQR().topLeftCorner(nf, nf).triangularView<Eigen::Upper>().solveInPlace(w_);
  for (int i = 0; i < nf; ++i) gamma_[free_rows_[i]] = -w_[i];
}

Eigen::VectorXd unilateral_min_norm(const Eigen::MatrixXd& W, const Eigen::VectorXd& d, const Eigen::VectorXd& r) {
  const int n = static_cast<int>(r.size());
  qp::ConicQp p;
  p.resize(n, 2 * n, {});
  p.P.setIdentity();
  p.G.topRows(n) = -(Eigen::MatrixXd::Identity(n, n) + d.asDiagonal() * W);  // (I + DW) λ ≥ r
  p.h.head(n) = -r;
  p.G.bottomRows(n) = -Eigen::MatrixXd::Identity(n, n);  // λ ≥ 0
  qp::ConicQpSolver solver;
  const qp::ConicQpResults& res = solver.solve(p);
  if (res.status != qp::ConicQpStatus::kOptimal)
    throw std::runtime_error(std::string("lstable: min-norm unilateral QP ") + qp::to_string(res.status));
  return res.x;
}

Eigen::VectorXd unilateral_complementarity(const Eigen::MatrixXd& W, const Eigen::VectorXd& d, const Eigen::VectorXd& r) {
  const int n = static_cast<int>(r.size());
  qp::ConicQp p;
  p.resize(n, n, {});
  p.P = W;
  p.P.diagonal() += d.cwiseInverse();
  p.q = -d.cwiseInverse().cwiseProduct(r);
  p.G = -Eigen::MatrixXd::Identity(n, n);
  qp::ConicQpSolver solver;
  const qp::ConicQpResults& res = solver.solve(p);
  if (res.status != qp::ConicQpStatus::kOptimal)
    throw std::runtime_error(std::string("lstable: complementarity unilateral QP ") + qp::to_string(res.status));
  return res.x;
}

}  // namespace coulomb::solvers::lstable
