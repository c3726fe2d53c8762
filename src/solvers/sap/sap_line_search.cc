#include "coulomb/solvers/sap/sap_line_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "linalg/block_kernels.h"  // COULOMB_TARGET_AVX2, use_avx2_kernels
#include "linalg/simd.h"

namespace coulomb::solvers::sap {

SapLineSearchFunction::SapLineSearchFunction(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
                                             const Eigen::Ref<const Eigen::VectorXd>& vc,
                                             const Eigen::Ref<const Eigen::VectorXd>& dv) {
  reset(problem, v, vc, dv);
}

void SapLineSearchFunction::reset(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
                                  const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dv) {
  dv_minus_ = v - problem.v_star();
  a_dv_minus_.resize(problem.nv());
  problem.multiply_A(dv_minus_, a_dv_minus_);
  reset(problem, dv_minus_, a_dv_minus_, vc, dv);
}

void SapLineSearchFunction::reset(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& dv_minus,
                                  const Eigen::Ref<const Eigen::VectorXd>& A_dv_minus,
                                  const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dv) {
  problem_ = &problem;
  const int m = problem.num_rows(), nv = problem.nv();
  vc_ = vc;
  dvc_.resize(m);
  gamma_.resize(m);
  vc_alpha_.resize(m);
  dp_.resize(nv);
  problem.multiply_J(dv, dvc_);
  problem.multiply_A(dv, dp_);
  cost_A0_ = 0.5 * dv_minus.dot(A_dv_minus);
  r0_ = dv.dot(A_dv_minus);  // Δpᵀ(v − v*) with A symmetric
  dv_dp_ = dv.dot(dp_);
  vc_data_ = vc_.data();
  dvc_data_ = dvc_.data();
  cones_.clear();  // keeps its capacity: no allocation once the contacts have peaked
  others_.clear();
  for (int i = 0; i < problem.num_constraints(); ++i) add_constraint(i);
  pack_cones();
}

void SapLineSearchFunction::reset_island(const SapProblem& problem, const double* vc, const double* dvc, double cost_A0,
                                         double r0, double dv_dp, const int* constraints, int count) {
  problem_ = &problem;
  vc_data_ = vc;
  dvc_data_ = dvc;
  cost_A0_ = cost_A0;
  r0_ = r0;
  dv_dp_ = dv_dp;
  const int m = problem.num_rows();
  if (gamma_.size() < m) gamma_.resize(m);  // grow only: no allocation once the rows have peaked
  if (vc_alpha_.size() < m) vc_alpha_.resize(m);
  cones_.clear();
  others_.clear();
  for (int k = 0; k < count; ++k) add_constraint(constraints[k]);
  pack_cones();
}

// Field f of block g, lane l: packed_[(g * kPackedFields + f) * 4 + l]. With y(α) = y(0) + α dy
// (Castro et al. Eq. 23: y = −R⁻¹(v_c − v̂), v_c = v_c0 + α Δv_c), the quantities of
// SapFrictionConeConstraint::calc_along_inline that do not move along the line are formed here
// once: ‖Δv_t‖², and the stiction curvature Δv_tᵀΔv_t/R_t + Δv_n²/R_n.
namespace {
enum PackedField {
  kY0t0, kY0t1, kY0n, kDyt0, kDyt1, kDyn, kB0, kB1, kB2, kMu, kMuHat, kInv1p, kInvRn1p, kMuInvRt, kBt2, kCurvSt
};
}  // namespace

void SapLineSearchFunction::pack_cones() {
  static_assert(kPackedFields == kCurvSt + 1);
  const int n = static_cast<int>(cones_.size());
  packed_blocks_ = (n + 3) / 4;
  const size_t size = static_cast<size_t>(packed_blocks_) * kPackedFields * 4;
  if (packed_.size() < size) packed_.resize(size);  // grow only: no allocation once the contacts have peaked
  double* out = packed_.data();
  for (int k = 0; k < packed_blocks_ * 4; ++k) {
    double* f = out + static_cast<size_t>(k / 4) * kPackedFields * 4 + (k % 4);
    auto set = [f](int field, double x) { f[field * 4] = x; };
    if (k >= n) {  // padding: y = (0, 0, −1) for every α, out of contact (μ = μ̂ = 0): adds 0
      for (int field = 0; field < kPackedFields; ++field) set(field, 0.0);
      set(kY0n, -1.0);
      continue;
    }
    const SapFrictionConeConstraint& c = *cones_[k].constraint;
    const double* a = vc_data_ + cones_[k].row;
    const double* b = dvc_data_ + cones_[k].row;
    set(kY0t0, -a[0] * c.inv_Rt_);
    set(kY0t1, -a[1] * c.inv_Rt_);
    set(kY0n, (c.vn_hat_ - a[2]) * c.inv_Rn_);
    set(kDyt0, -b[0] * c.inv_Rt_);
    set(kDyt1, -b[1] * c.inv_Rt_);
    set(kDyn, -b[2] * c.inv_Rn_);
    set(kB0, b[0]);
    set(kB1, b[1]);
    set(kB2, b[2]);
    set(kMu, c.parameters_.mu);
    set(kMuHat, c.mu_hat_);
    set(kInv1p, c.inv_1p_mu_tilde2_);
    set(kInvRn1p, c.inv_Rn_1p_mu_tilde2_);
    set(kMuInvRt, c.mu_inv_Rt_);
    const double bt2 = b[0] * b[0] + b[1] * b[1];
    set(kBt2, bt2);
    set(kCurvSt, bt2 * c.inv_Rt_ + b[2] * b[2] * c.inv_Rn_);
  }
}

void SapLineSearchFunction::add_constraint(int i) {
  const SapProblem& problem = *problem_;
  if (const SapFrictionConeConstraint* cone = problem.constraint(i).as_friction_cone())
    cones_.push_back({cone, problem.row_start(i)});
  else
    others_.push_back(i);
}

double SapLineSearchFunction::cost(double alpha) const {
  const SapProblem& problem = *problem_;
  double ell = cost_A0_ + alpha * r0_ + 0.5 * alpha * alpha * dv_dp_;
  const double* vc = vc_data_;
  const double* dvc = dvc_data_;
  for (const Cone& k : cones_) {
    const double* a = vc + k.row;
    const double* b = dvc + k.row;
    const double y[3] = {a[0] + alpha * b[0], a[1] + alpha * b[1], a[2] + alpha * b[2]};
    double g[3];
    ell += k.constraint->calc_along_inline(y, b, g, nullptr);
  }
  for (int i : others_) {
    const SapConstraint& c = problem.constraint(i);
    const int r = problem.row_start(i), n = c.num_rows();
    for (int a = r; a < r + n; ++a) vc_alpha_[a] = vc[a] + alpha * dvc[a];
    ell += c.calc(vc_alpha_.segment(r, n), gamma_.segment(r, n), nullptr);
  }
  return ell;
}

namespace {

// The contacts' part of ℓ'(α) and ℓ''(α), four contacts at a time on the packed blocks
// (pack_cones): each lane computes all three regions' terms of calc_along_inline (Castro et al.
// Eq. 23 and 27, digest §3.2) and keeps its region's, with no branch per contact. Compiled twice,
// like the block kernels (linalg/block_kernels.h): one 4-wide AVX2 + FMA register per field where
// the processor has it, two SSE2 ones otherwise. Adds ℓ' terms −Δv_cᵀγ to d and ℓ'' terms to d2.
using linalg::internal::simd::load4;
using linalg::internal::simd::v4;
typedef long long m4 __attribute__((vector_size(32)));

// Lane by lane: GCC forms one vsqrtpd (two sqrtpd in the baseline copy) from it.
[[gnu::always_inline]] inline v4 sqrt4(v4 x) {
  v4 r;
  for (int i = 0; i < 4; ++i) r[i] = __builtin_sqrt(x[i]);
  return r;
}

template <bool kWide>
[[gnu::always_inline]] inline void add_cone_derivatives_body(const double* packed, int blocks, double alpha, double& d,
                                                             double& d2) {
  constexpr int F = 16;
  const v4 zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
  v4 acc_d = zero, acc_c = zero;
  for (int g = 0; g < blocks; ++g) {
    const double* p = packed + static_cast<ptrdiff_t>(g) * F * 4;
    auto field = [p](int f) { return load4(p + 4 * f); };
    const v4 y0 = field(0) + alpha * field(3), y1 = field(1) + alpha * field(4), y2 = field(2) + alpha * field(5);
    const v4 yr = sqrt4(y0 * y0 + y1 * y1);
    const v4 mu = field(9), mu_hat = field(10);
    const m4 stiction = (yr <= mu * y2) & (y2 >= 0.0);
    const m4 no_contact = y2 < -mu_hat * yr;
    const m4 sliding = ~(stiction | no_contact);  // y_r > 0 there
    const v4 inv_yr = one / (sliding ? yr : one);
    const v4 b0 = field(6), b1 = field(7), b2 = field(8);
    const v4 gn = (y2 + mu_hat * yr) * field(11);
    const v4 t0 = y0 * inv_yr, t1 = y1 * inv_yr;
    const v4 td = t0 * b0 + t1 * b1;
    const v4 fd = mu * td + b2;
    const v4 d_sliding = gn * fd;
    const v4 c_sliding = fd * fd * field(12) + (field(13) * gn * inv_yr) * (field(14) - td * td);
    const v4 d_stiction = b0 * y0 + b1 * y1 + b2 * y2;
    acc_d += stiction ? d_stiction : (sliding ? d_sliding : zero);
    acc_c += stiction ? field(15) : (sliding ? c_sliding : zero);
  }
  d -= (acc_d[0] + acc_d[1]) + (acc_d[2] + acc_d[3]);
  d2 += (acc_c[0] + acc_c[1]) + (acc_c[2] + acc_c[3]);
}
void add_cone_derivatives_baseline(const double* packed, int blocks, double alpha, double& d, double& d2) {
  add_cone_derivatives_body<false>(packed, blocks, alpha, d, d2);
}
COULOMB_TARGET_AVX2 void add_cone_derivatives_avx2(const double* packed, int blocks, double alpha, double& d,
                                                   double& d2) {
  add_cone_derivatives_body<true>(packed, blocks, alpha, d, d2);
}

}  // namespace

double SapLineSearchFunction::derivative(double alpha, double* second) const {
  const SapProblem& problem = *problem_;
  double d2 = dv_dp_, d = r0_ + alpha * dv_dp_;
  const double* vc = vc_data_;
  const double* dvc = dvc_data_;
  if (linalg::internal::use_avx2_kernels())
    add_cone_derivatives_avx2(packed_.data(), packed_blocks_, alpha, d, d2);
  else
    add_cone_derivatives_baseline(packed_.data(), packed_blocks_, alpha, d, d2);
  const double* g = gamma_.data();
  for (int i : others_) {
    const SapConstraint& c = problem.constraint(i);
    const int r = problem.row_start(i), n = c.num_rows();
    for (int a = r; a < r + n; ++a) vc_alpha_[a] = vc[a] + alpha * dvc[a];
    double curvature = 0.0;
    c.calc_along(vc_alpha_.segment(r, n), Eigen::Map<const Eigen::VectorXd>(dvc + r, n), gamma_.segment(r, n),
                 second != nullptr ? &curvature : nullptr);
    d2 += curvature;
    for (int a = r; a < r + n; ++a) d -= dvc[a] * g[a];
  }
  if (second != nullptr) *second = d2;
  return d;
}

LineSearchOutcome exact_line_search(const SapLineSearchFunction& f, double alpha_max, double f_tolerance,
                                    int max_iterations, double d0_given) {
  LineSearchOutcome out;
  const double d0 = std::isnan(d0_given) ? f.derivative(0.0) : d0_given;
  if (!(d0 < 0.0)) {
    out.descent = false;
    return out;
  }
  double d2_max = 0.0;
  const double d_max = f.derivative(alpha_max, &d2_max);
  out.iterations = 1;
  if (d_max <= 0.0) {  // ℓ still decreasing at α_max: take it (digest §3.3 [ext])
    out.alpha = alpha_max;
    return out;
  }
  // rtsafe on ℓ'(α): bracket [lo, hi] with ℓ'(lo) < 0 < ℓ'(hi). First guess: the Newton step
  // from 0 with the curvature at α_max (exact for a quadratic ℓ, giving α = 1 in stiction).
  double lo = 0.0, hi = alpha_max;
  double x = std::min(-d0 / d2_max, alpha_max);
  if (!(x > 0.0)) x = 0.5 * alpha_max;
  double dx_old = hi - lo, dx = dx_old;
  const double tolerance = f_tolerance * std::abs(d0);
  for (int it = 0; it < max_iterations; ++it) {
    double d2 = 0.0;
    const double d = f.derivative(x, &d2);
    ++out.iterations;
    if (std::abs(d) <= tolerance) break;
    if (d < 0.0) lo = x; else hi = x;
    // Newton step if it stays inside the bracket and shrinks fast enough, else bisection.
    const bool newton_ok = d2 > 0.0 && ((x - d / d2) - lo) * ((x - d / d2) - hi) < 0.0 &&
                           std::abs(2.0 * d) <= std::abs(dx_old * d2);
    dx_old = dx;
    if (newton_ok) {
      dx = d / d2;
      x -= dx;
    } else {
      dx = 0.5 * (hi - lo);
      x = lo + dx;
    }
    if (hi - lo <= 4.0 * std::numeric_limits<double>::epsilon() * alpha_max) break;
  }
  out.alpha = x;
  return out;
}

LineSearchOutcome backtracking_line_search(const SapLineSearchFunction& f, double alpha_max, double rho, double c,
                                           int max_iterations) {
  LineSearchOutcome out;
  const double d0 = f.derivative(0.0);
  if (!(d0 < 0.0)) {
    out.descent = false;
    return out;
  }
  const double ell0 = f.cost(0.0);
  double alpha = alpha_max;
  for (int it = 0; it < max_iterations; ++it) {
    ++out.iterations;
    if (f.cost(alpha) < ell0 + c * alpha * d0) break;
    alpha *= rho;
  }
  out.alpha = alpha;
  return out;
}

}  // namespace coulomb::solvers::sap
