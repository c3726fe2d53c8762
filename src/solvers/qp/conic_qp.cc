// Primal–dual interior-point method for dense convex quadratic cone programs (conic_qp.h).
#include "coulomb/solvers/qp/conic_qp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace coulomb::solvers::qp {

const char* to_string(ConicQpStatus status) {
  switch (status) {
    case ConicQpStatus::kOptimal: return "optimal";
    case ConicQpStatus::kMaxIterations: return "max_iterations";
    case ConicQpStatus::kNumericalError: return "numerical_error";
  }
  return "unknown";
}

void ConicQp::resize(int n, int l, const std::vector<int>& cones) {
  int m = l;
  for (int c : cones) m += c;
  P.setZero(n, n);
  q.setZero(n);
  G.setZero(m, n);
  h.setZero(m);
  num_orthant = l;
  cone_sizes = cones;
}

void ConicQp::validate() const {
  const int n = num_variables();
  auto fail = [](const std::string& what) { throw std::invalid_argument("conic QP: " + what); };
  if (P.rows() != n || P.cols() != n)
    fail("P is " + std::to_string(P.rows()) + "x" + std::to_string(P.cols()) + ", expected " + std::to_string(n) +
         "x" + std::to_string(n));
  if (num_orthant < 0) fail("num_orthant = " + std::to_string(num_orthant) + " < 0");
  int m = num_orthant;
  for (size_t k = 0; k < cone_sizes.size(); ++k) {
    if (cone_sizes[k] < 2) fail("cone " + std::to_string(k) + " has size " + std::to_string(cone_sizes[k]) + " < 2");
    m += cone_sizes[k];
  }
  if (h.size() != m) fail("h has " + std::to_string(h.size()) + " rows, the cones need " + std::to_string(m));
  if (G.rows() != m || G.cols() != n)
    fail("G is " + std::to_string(G.rows()) + "x" + std::to_string(G.cols()) + ", expected " + std::to_string(m) +
         "x" + std::to_string(n));
  if (!P.allFinite() || !q.allFinite() || !G.allFinite() || !h.allFinite()) fail("non-finite data");
}

namespace {

// x ∘ y blockwise (orthant: elementwise; cone: (xᵀy, x₀y₁ + y₀x₁)).
void jordan_product(const ConicQp& p, const Eigen::VectorXd& x, const Eigen::VectorXd& y, Eigen::VectorXd& out) {
  const int l = p.num_orthant;
  out.head(l) = x.head(l).cwiseProduct(y.head(l));
  int o = l;
  for (int m : p.cone_sizes) {
    const double x0 = x[o], y0 = y[o];
    out[o] = x.segment(o, m).dot(y.segment(o, m));
    out.segment(o + 1, m - 1) = x0 * y.segment(o + 1, m - 1) + y0 * x.segment(o + 1, m - 1);
    o += m;
  }
}

// The identity e of the Jordan algebra.
void identity(const ConicQp& p, Eigen::VectorXd& e) {
  e.setZero(p.num_rows());
  e.head(p.num_orthant).setOnes();
  int o = p.num_orthant;
  for (int m : p.cone_sizes) {
    e[o] = 1.0;
    o += m;
  }
}

// Smallest α with x + α e on the boundary of K: −min over blocks of (x_i, x₀ − ‖x₁‖).
double depth_outside(const ConicQp& p, const Eigen::VectorXd& x) {
  double a = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.num_orthant; ++i) a = std::max(a, -x[i]);
  int o = p.num_orthant;
  for (int m : p.cone_sizes) {
    a = std::max(a, x.segment(o + 1, m - 1).norm() - x[o]);
    o += m;
  }
  return a;
}

// Smallest positive root of a α² + 2 b α + c = 0 with c > 0 (∞ if none).
double first_positive_root(double a, double b, double c) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (a == 0.0) return b < 0.0 ? -c / (2.0 * b) : kInf;
  const double disc = b * b - a * c;
  if (disc < 0.0) return kInf;
  const double sq = std::sqrt(disc);
  const double qq = -(b + std::copysign(sq, b));
  double best = kInf;
  if (qq != 0.0) {
    const double r1 = qq / a, r2 = c / qq;
    if (r1 > 0.0) best = std::min(best, r1);
    if (r2 > 0.0) best = std::min(best, r2);
  }
  return best;
}

}  // namespace

double ConicQpSolver::max_step(const ConicQp& p, const Eigen::VectorXd& x, const Eigen::VectorXd& dx) const {
  double alpha = std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.num_orthant; ++i)
    if (dx[i] < 0.0) alpha = std::min(alpha, -x[i] / dx[i]);
  int o = p.num_orthant;
  for (int m : p.cone_sizes) {
    const double x0 = x[o], d0 = dx[o];
    const auto x1 = x.segment(o + 1, m - 1);
    const auto d1 = dx.segment(o + 1, m - 1);
    const double a = d0 * d0 - d1.squaredNorm();
    const double b = x0 * d0 - x1.dot(d1);
    const double x1n = x1.norm();
    const double c = std::max((x0 - x1n) * (x0 + x1n), 0.0);
    alpha = std::min(alpha, first_positive_root(a, b, c));
    if (d0 < 0.0) alpha = std::min(alpha, -x0 / d0);
    o += m;
  }
  return alpha;
}

void ConicQpSolver::compute_scaling(const ConicQp& p) {
  const Eigen::VectorXd &s = results_.s, &z = results_.z;
  const int l = p.num_orthant;
  for (int i = 0; i < l; ++i) {
    w_orthant_[i] = std::sqrt(s[i] / z[i]);
    lambda_[i] = std::sqrt(s[i] * z[i]);
  }
  int o = l;
  for (size_t k = 0; k < p.cone_sizes.size(); ++k) {
    const int m = p.cone_sizes[k];
    const auto sk = s.segment(o, m);
    const auto zk = z.segment(o, m);
    const double s1 = sk.tail(m - 1).norm(), z1 = zk.tail(m - 1).norm();
    const double sn = std::sqrt(std::max((sk[0] - s1) * (sk[0] + s1), 1e-300));
    const double zn = std::sqrt(std::max((zk[0] - z1) * (zk[0] + z1), 1e-300));
    // s̄ = s/‖s‖_J, z̄ = z/‖z‖_J, γ = √((1 + s̄ᵀz̄)/2), w̄ = (s̄ + J z̄)/(2γ), η = √(‖s‖_J/‖z‖_J).
    const double gamma = std::sqrt(0.5 * (1.0 + sk.dot(zk) / (sn * zn)));
    auto wb = wbar_.segment(o, m);
    wb[0] = (sk[0] / sn + zk[0] / zn) / (2.0 * gamma);
    wb.tail(m - 1) = (sk.tail(m - 1) / sn - zk.tail(m - 1) / zn) / (2.0 * gamma);
    // w̄ is the NT point (H(w̄) z̄ = s̄ with H(x) = 2xxᵀ − J); the scaling is its Jordan square
    // root v = (w̄ + e)/√(2(w̄₀ + 1)): W = η H(v), W² z = s, η = √(‖s‖_J/‖z‖_J).
    const double scale = 1.0 / std::sqrt(2.0 * (wb[0] + 1.0));
    wb[0] = (wb[0] + 1.0) * scale;
    wb.tail(m - 1) *= scale;
    eta_[k] = std::sqrt(sn / zn);
    o += m;
  }
  apply_scaling(p, z, false, tmp_);
  lambda_.tail(p.num_rows() - l) = tmp_.tail(p.num_rows() - l);
}

void ConicQpSolver::apply_scaling(const ConicQp& p, const Eigen::VectorXd& x, bool inverse, Eigen::VectorXd& y) const {
  const int l = p.num_orthant;
  if (inverse) y.head(l) = x.head(l).cwiseQuotient(w_orthant_.head(l));
  else y.head(l) = x.head(l).cwiseProduct(w_orthant_.head(l));
  int o = l;
  for (size_t k = 0; k < p.cone_sizes.size(); ++k) {
    const int m = p.cone_sizes[k];
    const auto wb = wbar_.segment(o, m);
    const auto xk = x.segment(o, m);
    auto yk = y.segment(o, m);
    if (!inverse) {
      // W x = η (2 w̄ (w̄ᵀx) − J x)
      const double a = 2.0 * wb.dot(xk);
      yk[0] = eta_[k] * (a * wb[0] - xk[0]);
      yk.tail(m - 1) = eta_[k] * (a * wb.tail(m - 1) + xk.tail(m - 1));
    } else {
      // W⁻¹ x = (2 J w̄ (w̄ᵀ J x) − J x) / η
      const double a = 2.0 * (wb[0] * xk[0] - wb.tail(m - 1).dot(xk.tail(m - 1)));
      yk[0] = (a * wb[0] - xk[0]) / eta_[k];
      yk.tail(m - 1) = (-a * wb.tail(m - 1) + xk.tail(m - 1)) / eta_[k];
    }
    o += m;
  }
}

void ConicQpSolver::jordan_divide(const ConicQp& p, const Eigen::VectorXd& d, Eigen::VectorXd& u) const {
  const int l = p.num_orthant;
  u.head(l) = d.head(l).cwiseQuotient(lambda_.head(l));
  int o = l;
  for (int m : p.cone_sizes) {
    const double l0 = lambda_[o];
    const auto l1 = lambda_.segment(o + 1, m - 1);
    const double det = l0 * l0 - l1.squaredNorm();
    const double u0 = (l0 * d[o] - l1.dot(d.segment(o + 1, m - 1))) / det;
    u[o] = u0;
    u.segment(o + 1, m - 1) = (d.segment(o + 1, m - 1) - u0 * l1) / l0;
    o += m;
  }
}

void ConicQpSolver::direction(const ConicQp& p, const Eigen::VectorXd& rx, const Eigen::VectorXd& rz,
                              const Eigen::VectorXd& d, Eigen::VectorXd& dx, Eigen::VectorXd& ds, Eigen::VectorXd& dz) {
  // λ ∘ (W dz + W⁻¹ ds) = d  ⇒  W dz + W⁻¹ ds = t := λ \ d.
  // With u = W⁻¹ r_z + t:  (P + GᵀW⁻²G) dx = −r_x − (W⁻¹G)ᵀ u,  W dz = W⁻¹G dx + u,
  // ds = W (t − W dz).
  jordan_divide(p, d, t_);
  apply_scaling(p, rz, true, u_);
  u_ += t_;
  dx.noalias() = -rx;
  dx.noalias() -= Gs_.transpose() * u_;
  llt_.solveInPlace(dx);
  tmp_.noalias() = Gs_ * dx;
  tmp_ += u_;                          // W dz
  apply_scaling(p, tmp_, true, dz);    // dz
  tmp2_ = t_ - tmp_;
  apply_scaling(p, tmp2_, false, ds);  // ds
}

const ConicQpResults& ConicQpSolver::solve(const ConicQp& p) {
  p.validate();
  const int n = p.num_variables(), m = p.num_rows(), l = p.num_orthant;
  const int num_cones = static_cast<int>(p.cone_sizes.size());
  ConicQpResults& r = results_;
  r.iterations = 0;
  r.status = ConicQpStatus::kNumericalError;
  r.x.resize(n);
  r.s.resize(m);
  r.z.resize(m);
  for (Eigen::VectorXd* v : {&rz_, &d_, &t_, &u_, &tmp_, &tmp2_, &ds_, &dz_, &dsa_, &dza_, &lambda_, &wbar_}) v->resize(m);
  for (Eigen::VectorXd* v : {&rx_, &dx_, &dxa_, &px_}) v->resize(n);
  w_orthant_.resize(l);
  eta_.resize(num_cones);
  identity(p, e_);
  // Sparsity of G for assembling Gᵀ W⁻² G: an orthant row with one nonzero (γ ≥ 0, |γ| ≤ b in
  // solvers/lstable) adds to one diagonal entry of K; a cone block touches only the columns where
  // its rows have nonzeros (3 for a friction cone). The remaining (dense) orthant rows go through
  // one matrix product.
  active_.reserve(m);  // polish()'s active set never outgrows it
  single_col_.assign(l, -1);
  dense_rows_.clear();
  for (int i = 0; i < l; ++i) {
    int nnz = 0, col = -1;
    for (int j = 0; j < n && nnz < 2; ++j)
      if (p.G(i, j) != 0.0) ++nnz, col = j;
    if (nnz == 1) single_col_[i] = col;
    else dense_rows_.push_back(i);
  }
  cone_cols_.resize(num_cones);
  for (int k = 0, o = l; k < num_cones; o += p.cone_sizes[k], ++k) {
    cone_cols_[k].clear();
    for (int j = 0; j < n; ++j)
      if (!p.G.block(o, j, p.cone_sizes[k], 1).isZero(0.0)) cone_cols_[k].push_back(j);
  }
  const double q_scale = std::max(1.0, p.q.norm()), h_scale = std::max(1.0, p.h.norm());
  const double degree = l + num_cones;

  // Cholesky of K_; if it fails, K_ + δI with δ growing from 1e-14 of the largest diagonal.
  auto factor = [&]() -> bool {
    llt_.compute(K_);
    double delta = 1e-14 * std::max(1.0, K_.diagonal().cwiseAbs().maxCoeff());
    for (int attempt = 0; llt_.info() != Eigen::Success && attempt < 6; ++attempt, delta *= 100.0) {
      K_.diagonal().array() += delta;
      llt_.compute(K_);
    }
    return llt_.info() == Eigen::Success;
  };

  // The best iterate so far by the largest of the three scaled stopping measures. Near the end,
  // round-off in the Newton solve (W⁻² spans s/z ratios up to ~1e30 once the gap has collapsed)
  // can make the dual residual grow again while the gap keeps shrinking; the iterates then wander
  // (measured on a random 10-variable, 20-row inequality QP: dual residual 5e-10 at iteration 13,
  // 1.6 after 60). The best iterate is what a stall returns.
  double best_merit = std::numeric_limits<double>::infinity();
  int best_iteration = 0;
  auto merit = [&]() {
    return std::max({r.dual_residual, r.primal_residual, r.gap / std::max(1e-6, std::abs(r.objective))});
  };

  // Stalled in round-off (a singular Newton matrix, a non-finite direction, no step that stays in
  // the cone, or no new best for kNoProgress iterations after an acceptable one): the best iterate is accepted if it meets
  // the acceptable tolerance, else it is kept with kNumericalError.
  auto stalled = [&]() -> const ConicQpResults& {
    if (best_merit < merit()) {
      r.x = best_x_;
      r.s = best_s_;
      r.z = best_z_;
      r.dual_residual = best_residuals_[0];
      r.primal_residual = best_residuals_[1];
      r.gap = best_residuals_[2];
      r.objective = best_residuals_[3];
    }
    // The primal residual is judged against the size of the slacks as well: with h ≈ 0 (cone
    // rows, γ ≥ 0) and large impulses, ‖Gx + s − h‖ stalls at round-off of ‖s‖, not of ‖h‖.
    const double acc = parameters_.acceptable_tolerance;
    const double primal = m > 0 ? r.primal_residual * h_scale / std::max(h_scale, r.s.norm()) : 0.0;
    if (r.dual_residual <= acc && primal <= acc && r.gap <= acc * std::max(1.0, std::abs(r.objective)))
      r.status = ConicQpStatus::kOptimal;
    return r;
  };
  constexpr int kNoProgress = 5;

  // Start (Vandenberghe §6): x minimizes ½xᵀPx + qᵀx + ½‖Gx − h‖², s = h − Gx, z = −s, both
  // shifted into the interior of K along e.
  K_ = p.P;
  K_.noalias() += p.G.transpose() * p.G;
  if (!factor()) return r;
  rx_.noalias() = p.G.transpose() * p.h;  // products into scratch: no temporaries (allocation-free)
  r.x = -p.q + rx_;
  llt_.solveInPlace(r.x);
  rz_.noalias() = p.G * r.x;
  r.s = p.h - rz_;
  r.z = -r.s;
  if (m > 0) {
    const double as = depth_outside(p, r.s);
    if (as >= -1e-8) r.s += (1.0 + std::max(as, 0.0)) * e_;
    const double az = depth_outside(p, r.z);
    if (az >= -1e-8) r.z += (1.0 + std::max(az, 0.0)) * e_;
  }

  for (;; ++r.iterations) {
    px_.noalias() = p.P * r.x;  // P x into scratch (P x + q as one expression allocated a temporary)
    rx_ = px_ + p.q;
    rx_.noalias() += p.G.transpose() * r.z;
    rz_.noalias() = p.G * r.x;
    rz_ += r.s - p.h;
    r.gap = m > 0 ? r.s.dot(r.z) : 0.0;
    r.objective = 0.5 * r.x.dot(px_) + p.q.dot(r.x);
    r.dual_residual = rx_.norm() / q_scale;
    r.primal_residual = m > 0 ? rz_.norm() / h_scale : 0.0;
    const double tol = parameters_.tolerance;
    if (r.dual_residual <= tol && r.primal_residual <= tol && r.gap <= tol * std::max(1e-6, std::abs(r.objective))) {
      r.status = ConicQpStatus::kOptimal;
      return r;
    }
    if (merit() < best_merit) {
      best_merit = merit();
      best_iteration = r.iterations;
      best_x_ = r.x;
      best_s_ = r.s;
      best_z_ = r.z;
      best_residuals_ = {r.dual_residual, r.primal_residual, r.gap, r.objective};
    } else if (r.iterations - best_iteration >= kNoProgress && best_merit <= parameters_.acceptable_tolerance) {
      return stalled();
    }
    if (r.iterations >= parameters_.max_iterations) {
      r.status = ConicQpStatus::kMaxIterations;
      return r;
    }
    if (m == 0) {  // unconstrained: one Newton step is exact
      K_ = p.P;
      if (!factor()) return r;
      dx_ = -rx_;
      llt_.solveInPlace(dx_);
      r.x += dx_;
      continue;
    }
    // Scaling and the reduced Newton matrix.
    compute_scaling(p);
    Gs_.resize(m, n);
    for (int j = 0; j < n; ++j) {
      tmp2_ = p.G.col(j);
      apply_scaling(p, tmp2_, true, tmp_);
      Gs_.col(j) = tmp_;
    }
    K_ = p.P;
    for (int i = 0; i < l; ++i)
      if (single_col_[i] >= 0) K_(single_col_[i], single_col_[i]) += Gs_(i, single_col_[i]) * Gs_(i, single_col_[i]);
    if (!dense_rows_.empty()) {
      if (static_cast<int>(dense_rows_.size()) == l) {
        K_.noalias() += Gs_.topRows(l).transpose() * Gs_.topRows(l);
      } else {
        block_ = Gs_(dense_rows_, Eigen::all);
        K_.noalias() += block_.transpose() * block_;
      }
    }
    for (int k = 0, o = l; k < num_cones; o += p.cone_sizes[k], ++k) {
      const std::vector<int>& cols = cone_cols_[k];
      if (2 * static_cast<int>(cols.size()) >= n) {
        K_.noalias() += Gs_.middleRows(o, p.cone_sizes[k]).transpose() * Gs_.middleRows(o, p.cone_sizes[k]);
      } else {
        block_ = Gs_(Eigen::seqN(o, p.cone_sizes[k]), cols);
        K_(cols, cols) += block_.transpose() * block_;
      }
    }
    if (!factor()) return stalled();
    const double mu = r.gap / degree;

    // Predictor (affine scaling): d = −λ∘λ.
    jordan_product(p, lambda_, lambda_, d_);
    d_ = -d_;
    direction(p, rx_, rz_, d_, dxa_, dsa_, dza_);
    const double alpha_a = std::min(1.0, std::min(max_step(p, r.s, dsa_), max_step(p, r.z, dza_)));
    const double rho = (r.s + alpha_a * dsa_).dot(r.z + alpha_a * dza_) / r.gap;
    const double sigma = std::pow(std::clamp(rho, 0.0, 1.0), 3);

    // Corrector: d = −λ∘λ + σμe − (W⁻¹Δs_a) ∘ (WΔz_a).
    apply_scaling(p, dsa_, true, tmp_);
    apply_scaling(p, dza_, false, tmp2_);
    jordan_product(p, tmp_, tmp2_, t_);
    jordan_product(p, lambda_, lambda_, d_);
    d_ = -d_ + sigma * mu * e_ - t_;
    direction(p, rx_, rz_, d_, dx_, ds_, dz_);
    const double alpha_max = std::min(max_step(p, r.s, ds_), max_step(p, r.z, dz_));
    const double alpha = std::min(1.0, parameters_.step_fraction * alpha_max);
    if (!dx_.allFinite() || !ds_.allFinite() || !dz_.allFinite() || !(alpha > 1e-14)) return stalled();
    r.x += alpha * dx_;
    r.s += alpha * ds_;
    r.z += alpha * dz_;
  }
}

namespace {

// In-place LDLᵀ of the leading r × r block of K, reading and writing its UPPER triangle
// (column-major, so column i's entries above the diagonal, U(l, i) = L(i, l), are contiguous and
// every inner loop is a dot product or an axpy); no pivoting: K is quasi-definite, so every pivot
// is nonzero. `work` has at least r entries. Returns false on a zero or non-finite pivot.
bool ldlt_in_place(Eigen::MatrixXd& K, int r, Eigen::VectorXd& work) {
  for (int j = 0; j < r; ++j) {
    auto v = work.head(j);
    v = K.col(j).head(j).cwiseProduct(K.diagonal().head(j));  // v_l = L(j, l) d_l
    const double d = K(j, j) - K.col(j).head(j).dot(v);
    if (!(std::abs(d) > 0.0) || !std::isfinite(d)) return false;
    K(j, j) = d;
    for (int i = j + 1; i < r; ++i) K(j, i) = (K(j, i) - K.col(i).head(j).dot(v)) / d;
  }
  return true;
}

// Solves (L D Lᵀ) x = b in place (factor from ldlt_in_place).
void ldlt_solve(const Eigen::MatrixXd& K, int r, Eigen::VectorXd& b) {
  for (int i = 1; i < r; ++i) b[i] -= K.col(i).head(i).dot(b.head(i));
  for (int i = 0; i < r; ++i) b[i] /= K(i, i);
  for (int i = r - 1; i > 0; --i) b.head(i) -= b[i] * K.col(i).head(i);
}

}  // namespace

bool ConicQpSolver::polish(const ConicQp& p, double tolerance) {
  if (!p.cone_sizes.empty()) throw std::invalid_argument("ConicQpSolver::polish: only problems without cones");
  // Guesses of the active set, tried in turn: the strict s < z, then rows whose slack is below
  // max(multiplier, θ) for growing θ (degenerate rows, active with a zero multiplier, have
  // slacks of the order of the square root of the interior point's tolerance).
  const double smax = std::max(1.0, results_.s.size() ? results_.s.cwiseAbs().maxCoeff() : 0.0);
  for (double theta : {0.0, 1e-8, 1e-6, 1e-4})
    if (polish_with(p, tolerance, theta * smax)) return true;
  return false;
}

bool ConicQpSolver::polish_with(const ConicQp& p, double tolerance, double theta) {
  const int n = p.num_variables(), m = p.num_rows();
  ConicQpResults& r = results_;
  if (r.x.size() != n || r.s.size() != m || r.z.size() != m)
    throw std::invalid_argument("ConicQpSolver::polish: call solve() on this problem first");
  if (!r.x.allFinite() || !r.s.allFinite() || !r.z.allFinite()) return false;
  active_.clear();
  for (int i = 0; i < m; ++i)
    if (r.s[i] < std::max(r.z[i], theta)) active_.push_back(i);
  const double zscale = m > 0 ? r.z.cwiseAbs().maxCoeff() : 0.0;
  return solve_on_active(p, tolerance, zscale);
}

bool ConicQpSolver::solve_active_set(const ConicQp& p, const std::vector<int>& active, double tolerance) {
  if (!p.cone_sizes.empty()) throw std::invalid_argument("ConicQpSolver::solve_active_set: only problems without cones");
  p.validate();
  const int n = p.num_variables(), m = p.num_rows();
  for (int i : active)
    if (i < 0 || i >= m)
      throw std::invalid_argument("ConicQpSolver::solve_active_set: row " + std::to_string(i) + " outside [0, " +
                                  std::to_string(m) + ")");
  if (&active != &active_) active_.assign(active.begin(), active.end());
  ConicQpResults& r = results_;
  if (r.x.size() != n) r.x.setZero(n);
  if (r.s.size() != m) r.s.setZero(m);
  if (r.z.size() != m) r.z.setZero(m);
  if (!solve_on_active(p, tolerance, 0.0)) return false;
  r.status = ConicQpStatus::kOptimal;
  r.iterations = 0;
  return true;
}

bool ConicQpSolver::solve_on_active(const ConicQp& p, double tolerance, double zscale) {
  const int n = p.num_variables(), m = p.num_rows();
  ConicQpResults& r = results_;
  if (kkt_.rows() < n + m) {
    kkt_.resize(n + m, n + m);
    kkt_rhs_.resize(n + m);
    kkt_sol_.resize(n + m);
    kkt_res_.resize(n + m);
    kkt_corr_.resize(n + m);
  }
  if (in_active_.size() < static_cast<size_t>(m)) in_active_.resize(m);
  std::fill(in_active_.begin(), in_active_.begin() + m, 0);
  for (int i : active_) in_active_[i] = 1;
  const double delta = 1e-10 * std::max(1.0, p.P.diagonal().cwiseAbs().maxCoeff());
  const double htol = tolerance * std::max(1.0, p.h.cwiseAbs().maxCoeff());
  // Primal–dual active-set corrections from the guess: add the most violated row, else drop the
  // most negative multiplier, until a KKT point (or the cap).
  const int max_changes = 10;
  for (int change = 0;; ++change) {
    const int na = static_cast<int>(active_.size());
    const int dim = n + na;
    // Upper triangle of the regularized KKT matrix.
    for (int j = 0; j < n; ++j) {
      kkt_.col(j).head(j + 1) = p.P.col(j).head(j + 1);
      kkt_(j, j) += delta;
    }
    for (int a = 0; a < na; ++a) {
      kkt_.col(n + a).head(n) = p.G.row(active_[a]).transpose();
      kkt_.col(n + a).segment(n, a + 1).setZero();
      kkt_(n + a, n + a) = -delta;
    }
    kkt_rhs_.head(n) = -p.q;
    for (int a = 0; a < na; ++a) kkt_rhs_[n + a] = p.h[active_[a]];
    if (!ldlt_in_place(kkt_, dim, kkt_corr_)) return false;
    kkt_sol_.head(dim) = kkt_rhs_.head(dim);
    ldlt_solve(kkt_, dim, kkt_sol_);
    // Iterative refinement against the unregularized KKT matrix [P Gᵀ; G 0].
    for (int it = 0; it < 3; ++it) {
      auto x = kkt_sol_.head(n);
      kkt_res_.head(n) = kkt_rhs_.head(n);
      kkt_res_.head(n).noalias() -= p.P * x;
      for (int a = 0; a < na; ++a) {
        kkt_res_.head(n).noalias() -= kkt_sol_[n + a] * p.G.row(active_[a]).transpose();
        kkt_res_[n + a] = kkt_rhs_[n + a] - p.G.row(active_[a]).dot(x);
      }
      kkt_corr_.head(dim) = kkt_res_.head(dim);
      ldlt_solve(kkt_, dim, kkt_corr_);
      kkt_sol_.head(dim) += kkt_corr_.head(dim);
    }
    if (!kkt_sol_.head(dim).allFinite()) return false;
    polish_x_ = kkt_sol_.head(n);
    polish_s_ = p.h;
    polish_s_.noalias() -= p.G * polish_x_;
    // The most violated inactive row, and the most negative multiplier.
    int add = -1, drop = -1;
    double worst_s = -htol;
    for (int i = 0; i < m; ++i)
      if (!in_active_[i] && polish_s_[i] < worst_s) {
        worst_s = polish_s_[i];
        add = i;
      }
    double zmax = zscale;
    for (int a = 0; a < na; ++a) zmax = std::max(zmax, std::abs(kkt_sol_[n + a]));
    double worst_z = -1e3 * tolerance * std::max(1.0, zmax);
    for (int a = 0; a < na; ++a)
      if (kkt_sol_[n + a] < worst_z) {
        worst_z = kkt_sol_[n + a];
        drop = a;
      }
    if (add < 0 && drop < 0) break;  // a KKT point: optimal (convex problem)
    if (change == max_changes) return false;
    if (add >= 0) {
      active_.push_back(add);
      in_active_[add] = 1;
    } else {
      in_active_[active_[drop]] = 0;
      active_.erase(active_.begin() + drop);
    }
  }
  const int na = static_cast<int>(active_.size());
  px_.noalias() = p.P * polish_x_;
  const double objective = 0.5 * polish_x_.dot(px_) + p.q.dot(polish_x_);
  r.x = polish_x_;
  r.s = polish_s_.cwiseMax(0.0);
  r.z.setZero();
  for (int a = 0; a < na; ++a) r.z[active_[a]] = std::max(0.0, kkt_sol_[n + a]);
  std::sort(active_.begin(), active_.end());
  r.objective = objective;
  r.gap = r.s.dot(r.z);
  r.status = ConicQpStatus::kOptimal;  // a KKT point, whatever the interior point's status was
  // Residuals of the accepted point (stationarity to the refinement's accuracy).
  kkt_res_.head(n) = p.q;
  kkt_res_.head(n).noalias() += p.P * r.x;
  kkt_res_.head(n).noalias() += p.G.transpose() * r.z;
  r.dual_residual = kkt_res_.head(n).norm() / std::max(1.0, p.q.norm());
  r.primal_residual = 0.0;
  return true;
}

}  // namespace coulomb::solvers::qp
