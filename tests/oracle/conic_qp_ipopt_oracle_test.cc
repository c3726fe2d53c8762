// Oracle test: solvers/qp's ConicQpSolver against Ipopt 3.11 (coinor-libipopt-dev) on random
// problems of every type the solver is used for (issue 11: "every problem type is cross-checked
// against Ipopt"):
//
//   minimize ½ xᵀPx + qᵀx   s.t.  s = h − Gx ∈ ℝ₊^l × 𝒬^{m₁} × … × 𝒬^{m_k}.
//
// Ipopt gets its own smooth formulation (ConeNlp below): every orthant row as the linear row
// G_i x ≤ h_i, every cone as the linear row s₀ ≥ 0 plus the quadratic ‖s₁‖² − s₀² ≤ 0 (for a
// friction cone on (γ_t1, γ_t2, γ_n) with G = −diag(1, 1, μ): μ²γ_n² − ‖γ_t‖² ≥ 0 with γ_n ≥ 0),
// exact first and second derivatives, tol = 1e-12, no gradient-based NLP scaling, a strictly
// feasible start that every generator provides; the first pass with Ipopt's default
// bound_relax_factor = 1e-8, every later one (and always the last) with 0, i.e. exactly feasible. The smooth form is degenerate at a cone's apex (∇(‖s₁‖² − s₀²) = 0 at s = 0: no KKT
// multipliers, Ipopt stalls with ‖s₁‖ ~ √tolerance), so Ipopt's answer is polished as in
// sap_ipopt_oracle_test.cc: the cones whose s_k is ~0 after a pass are re-solved as the equalities
// G_k x = h_k, and kept so only if Ipopt's multipliers of those equalities lie in the (self-dual)
// cone, z_k ∈ 𝒬 (the KKT condition of the true problem: convex, so sufficient). A cone whose axis row
// is identically zero (friction μ = 0) is the equality s₁ = 0 from the start.
//
// Classes (each a few random instances): linear inequalities, box QP, friction SOCP, mixed
// (orthant + box + cones), L-stable-like (P = W + R from W = J A⁻¹ Jᵀ, contacts with cones and
// frictionless ones, limits γ ≥ 0, effort/joint-friction rows |γ| ≤ b, free bilateral rows, as
// solvers/lstable writes them), degenerate ones (redundant rows; μ = 0 cones; cones at the apex
// with strict and with non-strict complementarity, the latter two constructed from a chosen
// KKT point so the minimizer x* is also known exactly) and ill-conditioned P (cond 1e10).
//
// Tolerances. Both solvers stop on scaled KKT residuals: ConicQpSolver at 1e-10 (dual and primal
// residual relative to max(1, ‖q‖), max(1, ‖h‖); gap sᵀz ≤ 1e-10 |f|), Ipopt at 1e-12 (its scaled
// NLP error). For a feasible point, f(x) − f* ≤ gap + O(residuals), hence the objective is
// compared to 1e-7 relative to the objective's scale |½xᵀPx| + |qᵀx| (three orders of margin).
// x is then determined to ‖x − x*‖²_P ≤ 2 (f(x) − f*), i.e. ‖x − x*‖ ≲ √(2 · 1e-10 |f| / λ_min(P)):
// ~1e-5 relative on the well-conditioned classes (λ_min(P) ≥ 1e-1 ‖P‖), which is the x tolerance
// there. For cond(P) = 1e10 the x error in the flat directions is bounded only by ‖P⁻¹‖ · the dual
// residual, so there x is compared in the P-norm (the physically meaningful one: it is the error of
// the velocity A^{1/2}(v − v*) for L-stable problems), and the objective as before.
#include <IpIpoptApplication.hpp>
#include <IpSolveStatistics.hpp>
#include <IpTNLP.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/solvers/qp/conic_qp.h"

namespace coulomb::solvers::qp {
namespace {

constexpr double kInf = 2e19;  // > nlp_{lower,upper}_bound_inf (1e19): no bound

// How Ipopt sees each cone of the problem.
enum class ConeMode { kSmooth, kEquality, kAxisZero };

// The conic QP as an Ipopt NLP. Constraint rows, in order: each orthant row i (G_i x ≤ h_i); per
// cone k, kSmooth: G_k0 x ≤ h_k0 and (h_k − G_k x)ᵀ D (h_k − G_k x) ≤ 0 with D = diag(−1, 1, …, 1);
// kEquality: G_k x = h_k (m_k rows); kAxisZero (G_k0 = 0, h_k0 = 0): G_k1 x = h_k1 (m_k − 1 rows).
class ConeNlp : public Ipopt::TNLP {
 public:
  ConeNlp(const ConicQp& p, std::vector<ConeMode> modes, Eigen::VectorXd x0)
      : p_(p), modes_(std::move(modes)), x0_(std::move(x0)) {
    const int n = p.num_variables();
    for (int i = 0; i < p.num_orthant; ++i) rows_.push_back({Row::kLinear, i, 0});
    int o = p.num_orthant;
    for (size_t k = 0; k < p.cone_sizes.size(); ++k) {
      const int m = p.cone_sizes[k];
      if (modes_[k] == ConeMode::kSmooth) {
        rows_.push_back({Row::kLinear, o, 0});
        rows_.push_back({Row::kQuadratic, o, m});
      } else {
        for (int j = modes_[k] == ConeMode::kEquality ? 0 : 1; j < m; ++j) rows_.push_back({Row::kEquality, o + j, 0});
      }
      o += m;
    }
    (void)n;
  }

  bool get_nlp_info(Ipopt::Index& n, Ipopt::Index& m, Ipopt::Index& nnz_jac_g, Ipopt::Index& nnz_h_lag,
                    IndexStyleEnum& index_style) override {
    n = p_.num_variables();
    m = static_cast<Ipopt::Index>(rows_.size());
    nnz_jac_g = n * m;  // dense
    nnz_h_lag = n * (n + 1) / 2;
    index_style = C_STYLE;
    return true;
  }

  bool get_bounds_info(Ipopt::Index n, Ipopt::Number* x_l, Ipopt::Number* x_u, Ipopt::Index m, Ipopt::Number* g_l,
                       Ipopt::Number* g_u) override {
    for (Ipopt::Index j = 0; j < n; ++j) x_l[j] = -kInf, x_u[j] = kInf;
    for (Ipopt::Index i = 0; i < m; ++i) {
      const Row& r = rows_[i];
      if (r.kind == Row::kLinear) g_l[i] = -kInf, g_u[i] = p_.h[r.first];
      if (r.kind == Row::kQuadratic) g_l[i] = -kInf, g_u[i] = 0.0;
      if (r.kind == Row::kEquality) g_l[i] = g_u[i] = p_.h[r.first];
    }
    return true;
  }

  bool get_starting_point(Ipopt::Index n, bool init_x, Ipopt::Number* x, bool init_z, Ipopt::Number*, Ipopt::Number*,
                          Ipopt::Index, bool init_lambda, Ipopt::Number*) override {
    if (!init_x || init_z || init_lambda) return false;
    Eigen::Map<Eigen::VectorXd>(x, n) = x0_;
    return true;
  }

  bool eval_f(Ipopt::Index n, const Ipopt::Number* x, bool, Ipopt::Number& f) override {
    const Eigen::Map<const Eigen::VectorXd> v(x, n);
    f = 0.5 * v.dot(p_.P * v) + p_.q.dot(v);
    return true;
  }

  bool eval_grad_f(Ipopt::Index n, const Ipopt::Number* x, bool, Ipopt::Number* g) override {
    const Eigen::Map<const Eigen::VectorXd> v(x, n);
    Eigen::Map<Eigen::VectorXd>(g, n) = p_.P * v + p_.q;
    return true;
  }

  bool eval_g(Ipopt::Index n, const Ipopt::Number* x, bool, Ipopt::Index m, Ipopt::Number* g) override {
    const Eigen::Map<const Eigen::VectorXd> v(x, n);
    for (Ipopt::Index i = 0; i < m; ++i) {
      const Row& r = rows_[i];
      if (r.kind != Row::kQuadratic) {
        g[i] = p_.G.row(r.first).dot(v);
      } else {
        const Eigen::VectorXd s = p_.h.segment(r.first, r.size) - p_.G.middleRows(r.first, r.size) * v;
        g[i] = s.tail(r.size - 1).squaredNorm() - s[0] * s[0];
      }
    }
    return true;
  }

  bool eval_jac_g(Ipopt::Index n, const Ipopt::Number* x, bool, Ipopt::Index m, Ipopt::Index, Ipopt::Index* iRow,
                  Ipopt::Index* jCol, Ipopt::Number* values) override {
    if (values == nullptr) {
      for (Ipopt::Index i = 0, idx = 0; i < m; ++i)
        for (Ipopt::Index j = 0; j < n; ++j, ++idx) iRow[idx] = i, jCol[idx] = j;
      return true;
    }
    const Eigen::Map<const Eigen::VectorXd> v(x, n);
    for (Ipopt::Index i = 0; i < m; ++i) {
      const Row& r = rows_[i];
      Eigen::Map<Eigen::RowVectorXd> out(values + i * n, n);
      if (r.kind != Row::kQuadratic) {
        out = p_.G.row(r.first);
      } else {  // ∇ sᵀDs = −2 Gᵀ D s
        Eigen::VectorXd Ds = p_.h.segment(r.first, r.size) - p_.G.middleRows(r.first, r.size) * v;
        Ds[0] = -Ds[0];
        out = -2.0 * Ds.transpose() * p_.G.middleRows(r.first, r.size);
      }
    }
    return true;
  }

  // ∇²L = obj_factor P + Σ λ_i 2 G_kᵀ D G_k over the quadratic rows.
  bool eval_h(Ipopt::Index n, const Ipopt::Number*, bool, Ipopt::Number obj_factor, Ipopt::Index m,
              const Ipopt::Number* lambda, bool, Ipopt::Index, Ipopt::Index* iRow, Ipopt::Index* jCol,
              Ipopt::Number* values) override {
    if (values == nullptr) {
      for (Ipopt::Index a = 0, idx = 0; a < n; ++a)
        for (Ipopt::Index b = 0; b <= a; ++b, ++idx) iRow[idx] = a, jCol[idx] = b;
      return true;
    }
    Eigen::MatrixXd H = obj_factor * p_.P;
    for (Ipopt::Index i = 0; i < m; ++i) {
      const Row& r = rows_[i];
      if (r.kind != Row::kQuadratic || lambda[i] == 0.0) continue;
      const auto Gk = p_.G.middleRows(r.first, r.size);
      Eigen::MatrixXd DG = Gk;
      DG.row(0) *= -1.0;
      H.noalias() += 2.0 * lambda[i] * Gk.transpose() * DG;
    }
    for (Ipopt::Index a = 0, idx = 0; a < n; ++a)
      for (Ipopt::Index b = 0; b <= a; ++b, ++idx) values[idx] = H(a, b);
    return true;
  }

  void finalize_solution(Ipopt::SolverReturn, Ipopt::Index n, const Ipopt::Number* x, const Ipopt::Number*,
                         const Ipopt::Number*, Ipopt::Index m, const Ipopt::Number*, const Ipopt::Number* lambda,
                         Ipopt::Number, const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    x_ = Eigen::Map<const Eigen::VectorXd>(x, n);
    // The conic multipliers z (Px + q + Gᵀz = 0) from Ipopt's λ (∇f + ∇g λ = 0 here: no bounds):
    // a linear or equality row gives z_row = λ; a quadratic row (∇ = −2GᵀDs) gives −2λ D s on its cone.
    z_.setZero(p_.num_rows());
    for (Ipopt::Index i = 0; i < m; ++i) {
      const Row& r = rows_[i];
      if (r.kind != Row::kQuadratic) {
        z_[r.first] += lambda[i];
      } else {
        Eigen::VectorXd Ds = p_.h.segment(r.first, r.size) - p_.G.middleRows(r.first, r.size) * x_;
        Ds[0] = -Ds[0];
        z_.segment(r.first, r.size) -= 2.0 * lambda[i] * Ds;
      }
    }
  }

  const Eigen::VectorXd& x() const { return x_; }
  const Eigen::VectorXd& z() const { return z_; }

 private:
  struct Row {
    enum Kind { kLinear, kQuadratic, kEquality } kind;
    int first;  // row of G (the cone's first row for kQuadratic)
    int size;   // cone size for kQuadratic
  };
  const ConicQp& p_;
  std::vector<ConeMode> modes_;
  Eigen::VectorXd x0_;
  std::vector<Row> rows_;
  Eigen::VectorXd x_, z_;
};

struct IpoptSolution {
  bool ok = false;
  Ipopt::ApplicationReturnStatus status = Ipopt::Internal_Error;
  Eigen::VectorXd x, z;
  int passes = 0, iterations = 0, apex_cones = 0;
};

Ipopt::ApplicationReturnStatus run_ipopt(const ConicQp& p, const std::vector<ConeMode>& modes,
                                         const Eigen::VectorXd& x0, double bound_relax_factor, Eigen::VectorXd& x,
                                         Eigen::VectorXd& z, int& iterations) {
  Ipopt::SmartPtr<ConeNlp> nlp = new ConeNlp(p, modes, x0);
  Ipopt::SmartPtr<Ipopt::IpoptApplication> app = IpoptApplicationFactory();
  app->Options()->SetIntegerValue("print_level", 0);
  app->Options()->SetStringValue("sb", "yes");
  app->Options()->SetNumericValue("tol", 1e-12);
  app->Options()->SetIntegerValue("max_iter", 1000);
  app->Options()->SetNumericValue("bound_relax_factor", bound_relax_factor);
  app->Options()->SetStringValue("hessian_approximation", "exact");
  // No gradient-based NLP scaling: with P = W + R from cond(A) = 1e10 it scales the objective by
  // ~1e-8 and tol then means nothing (measured: objective 2.5e-4 relative off with it).
  app->Options()->SetStringValue("nlp_scaling_method", "none");
  Ipopt::ApplicationReturnStatus status = app->Initialize("");
  if (status != Ipopt::Solve_Succeeded) return status;
  status = app->OptimizeTNLP(Ipopt::SmartPtr<Ipopt::TNLP>(GetRawPtr(nlp)));
  if (IsValid(app->Statistics())) iterations += app->Statistics()->IterationCount();
  x = nlp->x();
  z = nlp->z();
  return status;
}

// Ipopt with the apex polish of the header.
IpoptSolution solve_with_ipopt(const ConicQp& p, const Eigen::VectorXd& x0) {
  const int nk = static_cast<int>(p.cone_sizes.size());
  std::vector<ConeMode> modes(nk, ConeMode::kSmooth);
  std::vector<bool> readded(nk, false);
  {
    int o = p.num_orthant;
    for (int k = 0; k < nk; ++k) {
      if (p.G.row(o).isZero(0.0) && p.h[o] == 0.0) modes[k] = ConeMode::kAxisZero;
      o += p.cone_sizes[k];
    }
  }
  IpoptSolution out;
  for (out.passes = 1; out.passes <= 6; ++out.passes) {
    // Pass 1 with Ipopt's default relaxation of the constraint bounds (robust start), every later
    // pass exact; the last pass is always an exact one.
    out.status = run_ipopt(p, modes, x0, out.passes == 1 ? 1e-8 : 0.0, out.x, out.z, out.iterations);
    if (out.status != Ipopt::Solve_Succeeded && out.status != Ipopt::Solved_To_Acceptable_Level) return out;
    const Eigen::VectorXd s = p.h - p.G * out.x;
    // Apex candidates: the cone's axis entry s₀ ≤ 1e-6 of the largest axis entry (‖s₁‖ is not a
    // test: at the apex Ipopt leaves ‖s₁‖ ~ √tol).
    double axis_scale = 1e-300;
    for (int k = 0, o = p.num_orthant; k < nk; o += p.cone_sizes[k], ++k) axis_scale = std::max(axis_scale, s[o]);
    const double z_scale = std::max(1e-300, out.z.lpNorm<Eigen::Infinity>());
    bool changed = false;
    out.apex_cones = 0;
    int o = p.num_orthant;
    for (int k = 0; k < nk; ++k) {
      const int m = p.cone_sizes[k];
      if (modes[k] == ConeMode::kSmooth && !readded[k] && s[o] <= 1e-6 * axis_scale) {
        modes[k] = ConeMode::kEquality;
        changed = true;
      } else if (modes[k] == ConeMode::kEquality) {
        ++out.apex_cones;
        const auto zk = out.z.segment(o, m);
        if (zk.tail(m - 1).norm() - zk[0] > 1e-9 * z_scale) {  // z_k ∉ 𝒬: the apex is not optimal
          modes[k] = ConeMode::kSmooth;
          readded[k] = changed = true;
        }
      }
      o += m;
    }
    if (!changed && out.passes > 1) {
      out.ok = true;
      return out;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Problem generators. Each returns the problem, a strictly feasible start for Ipopt, and, when
// constructed from a KKT point, the minimizer.

struct Case {
  std::string label;
  ConicQp p;
  Eigen::VectorXd x0;        // strictly feasible (for the smooth cones), for Ipopt's start
  Eigen::VectorXd x_known;   // empty unless constructed from a KKT point
  bool ill_conditioned = false;
  // Relative x tolerance (well-conditioned classes). 1e-5 from the header's bound; 1e-4 where a
  // cone is at its apex with z = 0 as well (no strict complementarity): there an interior-point
  // method's s_k and z_k both go to 0 like √(gap) ~ √(1e-10 |f|) ~ 1e-5, and so does x_k.
  double x_tolerance = 1e-5;
};

Eigen::MatrixXd gaussian(std::mt19937& rng, int r, int c) {
  std::normal_distribution<double> N;
  Eigen::MatrixXd A(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) A(i, j) = N(rng);
  return A;
}

Eigen::VectorXd gaussian(std::mt19937& rng, int n) { return gaussian(rng, n, 1).col(0); }

// U diag(eig) Uᵀ with eigenvalues log-spaced from 1 down to 1/cond.
Eigen::MatrixXd spd_with_condition(std::mt19937& rng, int n, double cond) {
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian(rng, n, n));
  const Eigen::MatrixXd U = qr.householderQ();
  Eigen::VectorXd eig(n);
  for (int i = 0; i < n; ++i) eig[i] = std::pow(cond, -static_cast<double>(i) / std::max(1, n - 1));
  Eigen::MatrixXd P = U * eig.asDiagonal() * U.transpose();
  return 0.5 * (P + P.transpose());
}

Eigen::MatrixXd random_spd(std::mt19937& rng, int n) {
  const Eigen::MatrixXd B = gaussian(rng, n, n);
  return B * B.transpose() / n + 0.1 * Eigen::MatrixXd::Identity(n, n);
}

// Friction cone k on variables (t1, t2, n) = (3c, 3c+1, 3c+2) at rows o..o+2: s = (μ γ_n, γ_t).
void write_friction_cone(ConicQp& p, int o, int c, double mu) {
  p.G(o, 3 * c + 2) = -mu;
  p.G(o + 1, 3 * c) = -1.0;
  p.G(o + 2, 3 * c + 1) = -1.0;
}

Case linear_inequality_qp(std::mt19937& rng, int n, int m) {
  Case c{"linear inequalities n=" + std::to_string(n) + " m=" + std::to_string(m), {}, {}, {}};
  c.p.resize(n, m, {});
  c.p.P = random_spd(rng, n);
  c.p.q = 3.0 * gaussian(rng, n);
  c.p.G = gaussian(rng, m, n);
  std::uniform_real_distribution<double> U(0.1, 1.0);
  for (int i = 0; i < m; ++i) c.p.h[i] = U(rng);  // x = 0 strictly feasible
  c.x0.setZero(n);
  return c;
}

Case box_qp(std::mt19937& rng, int n) {
  Case c{"box n=" + std::to_string(n), {}, {}, {}};
  c.p.resize(n, 2 * n, {});
  c.p.P = random_spd(rng, n);
  c.p.q = 4.0 * gaussian(rng, n);
  std::uniform_real_distribution<double> U(0.2, 1.5);
  for (int i = 0; i < n; ++i) {
    c.p.G(i, i) = 1.0;  // x ≤ hi
    c.p.h[i] = U(rng);
    c.p.G(n + i, i) = -1.0;  // x ≥ −lo
    c.p.h[n + i] = U(rng);
  }
  c.x0.setZero(n);
  return c;
}

Case friction_socp(std::mt19937& rng, int contacts, double mu_lo, double mu_hi) {
  Case c{"friction SOCP contacts=" + std::to_string(contacts), {}, {}, {}};
  const int n = 3 * contacts;
  c.p.resize(n, 0, std::vector<int>(contacts, 3));
  c.p.P = random_spd(rng, n);
  c.p.q = gaussian(rng, n);
  std::uniform_real_distribution<double> U(mu_lo, mu_hi);
  c.x0.setZero(n);
  for (int k = 0; k < contacts; ++k) {
    write_friction_cone(c.p, 3 * k, k, U(rng));
    c.p.q[3 * k + 2] -= 0.5;  // most contacts pressed
    c.x0[3 * k + 2] = 1.0;
  }
  return c;
}

// Orthant rows (random G), box rows on the first nb variables, then friction cones on 3-variable
// groups after them and one general 4-row cone on random rows.
Case mixed(std::mt19937& rng, int nb, int contacts, int l) {
  const int n = nb + 3 * contacts + 2;
  std::vector<int> cones(contacts, 3);
  cones.push_back(4);
  Case c{"mixed n=" + std::to_string(n), {}, {}, {}};
  c.p.resize(n, l + 2 * nb, cones);
  c.p.P = random_spd(rng, n);
  c.p.q = 2.0 * gaussian(rng, n);
  c.x0.setZero(n);
  std::uniform_real_distribution<double> U(0.2, 1.0), Umu(0.1, 1.0);
  c.p.G.topRows(l) = gaussian(rng, l, n);
  for (int i = 0; i < l; ++i) c.p.h[i] = U(rng) + c.p.G.row(i).dot(c.x0);
  for (int i = 0; i < nb; ++i) {
    c.p.G(l + i, i) = 1.0;
    c.p.h[l + i] = U(rng);
    c.p.G(l + nb + i, i) = -1.0;
    c.p.h[l + nb + i] = U(rng);
  }
  // Friction cones on variables nb + 3k …; x0 puts γ_n = 1 there, so re-set h of the orthant rows.
  int o = l + 2 * nb;
  for (int k = 0; k < contacts; ++k) {
    const int v = nb + 3 * k;
    c.p.G(o, v + 2) = -Umu(rng);
    c.p.G(o + 1, v) = -1.0;
    c.p.G(o + 2, v + 1) = -1.0;
    c.x0[v + 2] = 1.0;
    o += 3;
  }
  for (int i = 0; i < l; ++i) c.p.h[i] = U(rng) + c.p.G.row(i).dot(c.x0);
  // A general 4-cone: h − Gx ∈ 𝒬⁴ with h chosen so x0 is strictly inside.
  c.p.G.middleRows(o, 4) = gaussian(rng, 4, n);
  Eigen::Vector4d s0 = gaussian(rng, 4);
  s0[0] = 0.5 + s0.tail<3>().norm();
  c.p.h.segment<4>(o) = c.p.G.middleRows(o, 4) * c.x0 + s0;
  return c;
}

// What solvers/lstable hands the QP solver: rows of J (nv columns) as contacts with friction
// (3 rows t1, t2, n; cone (μ γ_n, γ_t)), frictionless contacts (1 row, γ ≥ 0), joint limits (unit
// rows, γ ≥ 0), effort-limited PD rows and joint friction (|γ| ≤ b), couplers (free rows);
// P = J A⁻¹ Jᵀ + R with R from compliances or rigid_compliance_factor · W_ii, q = J v* − v̂.
// `mass_ratio` sets cond(A); `duplicate` appends copies of the first contact's rows (redundant
// constraints: W singular, only R keeps P definite).
Case lstable_like(std::mt19937& rng, int nv, int friction_contacts, int frictionless, int limits, int bounded,
                  int couplers, double mass_ratio = 1e2, bool duplicate = false) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const int dup = duplicate ? 2 : 0;  // the first friction contact repeated twice
  const int nfc = friction_contacts + dup;
  const int n = 3 * nfc + frictionless + limits + bounded + couplers;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, nv);
  int row = 0;
  for (int k = 0; k < friction_contacts; ++k, row += 3) J.middleRows(row, 3) = gaussian(rng, 3, nv);
  for (int k = 0; k < dup; ++k, row += 3) J.middleRows(row, 3) = J.topRows(3);
  for (int k = 0; k < frictionless; ++k, ++row) J.row(row) = gaussian(rng, 1, nv);
  for (int k = 0; k < limits + bounded + couplers; ++k, ++row) J(row, static_cast<int>(U(rng) * nv) % nv) = 1.0;
  const Eigen::MatrixXd A = spd_with_condition(rng, nv, mass_ratio);
  Eigen::MatrixXd W = J * A.llt().solve(J.transpose());
  W = 0.5 * (W + W.transpose());
  Eigen::VectorXd R(n);
  for (int i = 0; i < n; ++i) {
    const bool rigid = U(rng) < 0.3;
    R[i] = rigid ? W(i, i) / (4.0 * M_PI * M_PI) : std::pow(10.0, -4.0 + 3.0 * U(rng)) * W(i, i);
  }
  const Eigen::VectorXd v_star = gaussian(rng, nv);
  Eigen::VectorXd v_hat = 0.3 * gaussian(rng, n);
  for (int k = 0; k < nfc; ++k) v_hat[3 * k + 2] = std::abs(v_hat[3 * k + 2]) + 0.2;  // penetrating: push
  const int l = frictionless + limits + 2 * bounded;
  Case c{"lstable-like nv=" + std::to_string(nv) + " rows=" + std::to_string(n) + (duplicate ? " duplicated" : ""),
         {}, {}, {}};
  c.p.resize(n, l, std::vector<int>(nfc, 3));
  c.p.P = W;
  c.p.P.diagonal() += R;
  c.p.q = J * v_star - v_hat;
  c.x0.setZero(n);
  int m = 0;
  row = 3 * nfc;
  for (int k = 0; k < frictionless + limits; ++k) c.p.G(m++, row++) = -1.0;
  for (int k = 0; k < bounded; ++k, ++row) {
    const double b = 0.05 + U(rng);
    c.p.G(m, row) = 1.0;
    c.p.h[m++] = b;
    c.p.G(m, row) = -1.0;
    c.p.h[m++] = b;
  }
  for (int k = 0; k < nfc; ++k) {
    write_friction_cone(c.p, m + 3 * k, k, k < friction_contacts ? 0.1 + U(rng) : 0.5);
    c.x0[3 * k + 2] = 1.0;
  }
  // Strictly feasible start for the orthant rows γ ≥ 0: γ = 1 on those.
  for (int k = 0; k < frictionless + limits; ++k) c.x0[3 * nfc + k] = 1.0;
  return c;
}

// A friction problem built from a chosen KKT point (x*, z*): each contact is at the apex with
// strict complementarity (s = 0, z ∈ int 𝒬), at the apex with z = 0 too (not strictly
// complementary: the hard case for an interior-point method), sliding (s on the cone's boundary,
// z = α (s₀, −s₁)), or sticking (s inside, z = 0); plus orthant rows γ_n ≥ −1 that are active with
// z = 0 (weakly active). q = −Px* − Gᵀz*, P ≻ 0, so x* is the unique minimizer. μ = 0 contacts
// (`zero_friction`) have s₀ ≡ 0: a cone without interior, plus the row γ_n ≥ 0.
Case constructed_friction(std::mt19937& rng, int contacts, const Eigen::MatrixXd& P, const std::string& label,
                          bool zero_friction = false) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const int n = 3 * contacts;
  const int l = zero_friction ? contacts : 0;
  Case c{label, {}, {}, {}};
  c.p.resize(n, l, std::vector<int>(contacts, 3));
  c.p.P = P;
  Eigen::VectorXd x(n), z = Eigen::VectorXd::Zero(l + n);
  c.x0.setZero(n);
  for (int k = 0; k < contacts; ++k) {
    const int o = l + 3 * k;
    const double mu = zero_friction ? (k % 2 == 0 ? 0.0 : 0.3) : 0.2 + 0.8 * U(rng);
    write_friction_cone(c.p, o, k, mu);
    c.x0[3 * k + 2] = 1.0;
    const double th = 2.0 * M_PI * U(rng);
    const Eigen::Vector2d t(std::cos(th), std::sin(th));
    // With zero_friction, the μ > 0 contacts slide or stick (an apex there would make the row
    // γ_n ≥ 0 and the cone both active at γ = 0: Ipopt's multipliers are then not unique).
    const int kind = zero_friction ? 2 + (k / 2) % 2 : k % 4;
    Eigen::Vector3d s, zk;  // in the cone's row order (axis, t1, t2)
    if (mu == 0.0) {        // γ_t = 0; γ_n > 0 (row γ_n ≥ 0 inactive) and the cone's z = (·, −P-balance)
      x.segment<3>(3 * k) << 0.0, 0.0, 0.5 + U(rng);
      zk << 0.0, 2.0 * (U(rng) - 0.5), 2.0 * (U(rng) - 0.5);  // any z₁: s₀ ≡ 0 and z₀ multiplies nothing
      zk[0] = zk.tail<2>().norm() + U(rng);
      s.setZero();
    } else if (kind == 0 || kind == 1) {  // apex, strictly / not strictly complementary
      x.segment<3>(3 * k).setZero();
      s.setZero();
      zk << 1.0 + U(rng), 0.0, 0.0;
      zk.tail<2>() = 0.8 * zk[0] * U(rng) * t;
      if (kind == 1) zk.setZero();
    } else if (kind == 2) {  // sliding
      const double gn = 0.5 + U(rng);
      x.segment<3>(3 * k) << mu * gn * t[0], mu * gn * t[1], gn;
      s << mu * gn, mu * gn * t[0], mu * gn * t[1];
      zk << s[0], -s[1], -s[2];
      zk *= 0.5 + U(rng);
    } else {  // sticking
      const double gn = 0.5 + U(rng);
      x.segment<3>(3 * k) << 0.5 * mu * gn * t[0], 0.5 * mu * gn * t[1], gn;
      zk.setZero();
    }
    z.segment<3>(o) = zk;
    if (zero_friction) c.p.G(k, 3 * k + 2) = -1.0;  // γ_n ≥ 0 with z = 0 (inactive, or weakly active at the apex)
  }
  c.p.q = -P * x - c.p.G.transpose() * z;
  c.x_known = x;
  return c;
}

// ---------------------------------------------------------------------------------------------

struct ClassStats {
  int problems = 0, max_iterations = 0, ipopt_iterations = 0, apex_cones = 0;
  double objective = 0.0, x = 0.0, x_P = 0.0, known = 0.0, ipopt_known = 0.0;
};

void print(const std::string& name, const ClassStats& s) {
  std::printf("  %-34s %2d problems: conic iterations <= %2d, Ipopt %5d total (%d apex cones polished); "
              "max |df|/scale %.1e, |dx|/|x| %.1e, |dx|_P/|x|_P %.1e, vs known x*: conic %.1e Ipopt %.1e\n",
              name.c_str(), s.problems, s.max_iterations, s.ipopt_iterations, s.apex_cones, s.objective, s.x, s.x_P,
              s.known, s.ipopt_known);
}

// Solves `c` with both solvers and checks the header's claims.
void check(const Case& c, ClassStats& stats) {
  SCOPED_TRACE(c.label);
  ConicQpSolver solver;
  const ConicQpResults r = solver.solve(c.p);
  ASSERT_EQ(r.status, ConicQpStatus::kOptimal)
      << to_string(r.status) << " after " << r.iterations << " iterations; residuals " << r.primal_residual << " "
      << r.dual_residual << " gap " << r.gap;
  EXPECT_LE(r.iterations, 40);
  ASSERT_TRUE(r.x.allFinite());

  const IpoptSolution ip = solve_with_ipopt(c.p, c.x0);
  ASSERT_TRUE(ip.ok) << "Ipopt status " << static_cast<int>(ip.status) << " after " << ip.passes << " passes";

  const ConicQp& p = c.p;
  // The oracle's own KKT residual in the conic form (checks the translation of Ipopt's λ to z).
  const double ipopt_dual = (p.P * ip.x + p.q + p.G.transpose() * ip.z).norm() / std::max(1.0, p.q.norm());
  EXPECT_LE(ipopt_dual, 1e-6) << "Ipopt's stationarity in conic form";
  {  // and its feasibility: s = h − Gx in K to 1e-9 of ‖s‖∞
    const Eigen::VectorXd s = p.h - p.G * ip.x;
    const double tol = 1e-9 * std::max(1e-300, s.lpNorm<Eigen::Infinity>());
    double worst = 0.0;
    for (int i = 0; i < p.num_orthant; ++i) worst = std::max(worst, -s[i]);
    for (int k = 0, o = p.num_orthant; k < static_cast<int>(p.cone_sizes.size()); o += p.cone_sizes[k], ++k)
      worst = std::max(worst, s.segment(o + 1, p.cone_sizes[k] - 1).norm() - s[o]);
    EXPECT_LE(worst, tol) << "Ipopt's x violates K; s = " << s.transpose();
  }
  auto f = [&](const Eigen::VectorXd& x) { return 0.5 * x.dot(p.P * x) + p.q.dot(x); };
  const Eigen::VectorXd& xi = ip.x;
  const double scale = std::max(0.5 * std::abs(xi.dot(p.P * xi)) + std::abs(p.q.dot(xi)), 1e-300);
  const double df = std::abs(f(r.x) - f(xi)) / scale;
  const Eigen::VectorXd dx = r.x - xi;
  const double x_err = dx.norm() / std::max(xi.norm(), 1e-6);
  const double x_P = std::sqrt(std::max(0.0, dx.dot(p.P * dx)) / std::max(xi.dot(p.P * xi), 1e-300));
  if (c.ill_conditioned) {
    // Ipopt is the less accurate of the two here (its objective is the higher one while the conic
    // x is feasible to 1e-10): the conic solver must not be worse than 1e-7, and both agree to 1e-5.
    EXPECT_LE((f(r.x) - f(xi)) / scale, 1e-7) << "conic f = " << f(r.x) << ", Ipopt f = " << f(xi);
    EXPECT_LE(df, 1e-5) << "conic f = " << f(r.x) << ", Ipopt f = " << f(xi);
  } else {
    EXPECT_LE(df, 1e-7) << "conic f = " << f(r.x) << ", Ipopt f = " << f(xi);
  }
  if (c.ill_conditioned) {
    EXPECT_LE(x_P, 1e-4) << "P-norm error";
  } else {
    EXPECT_LE(x_err, c.x_tolerance) << "conic x " << r.x.transpose() << "\nIpopt x " << xi.transpose();
  }
  // Ipopt's x is feasible up to its tolerance; the conic solver's s is in K by construction and
  // Gx + s = h to its primal residual.
  EXPECT_LE((p.G * r.x + r.s - p.h).norm(), 1e-8 * std::max(1.0, p.h.norm()));

  stats.problems++;
  stats.max_iterations = std::max(stats.max_iterations, r.iterations);
  stats.ipopt_iterations += ip.iterations;
  stats.apex_cones += ip.apex_cones;
  stats.objective = std::max(stats.objective, df);
  stats.x = std::max(stats.x, x_err);
  stats.x_P = std::max(stats.x_P, x_P);
  if (c.x_known.size() > 0) {
    const double xs = std::max(c.x_known.norm(), 1e-300);
    const double e = (r.x - c.x_known).norm() / xs, ei = (xi - c.x_known).norm() / xs;
    stats.known = std::max(stats.known, e);
    stats.ipopt_known = std::max(stats.ipopt_known, ei);
    if (c.ill_conditioned) {
      const Eigen::VectorXd d = r.x - c.x_known;
      EXPECT_LE(std::sqrt(d.dot(p.P * d) / c.x_known.dot(p.P * c.x_known)), 1e-4) << "P-norm error to x*";
    } else {
      EXPECT_LE(e, c.x_tolerance) << "conic x " << r.x.transpose() << "\nx* " << c.x_known.transpose();
      EXPECT_LE(ei, 1e-5) << "the oracle itself: Ipopt x " << xi.transpose() << "\nx* " << c.x_known.transpose();
    }
  }
}

TEST(ConicQpIpoptOracle, LinearInequalityQp) {
  std::mt19937 rng(101);
  ClassStats s;
  for (auto [n, m] : std::vector<std::pair<int, int>>{{5, 8}, {10, 20}, {20, 10}, {30, 60}, {12, 40}}) check(linear_inequality_qp(rng, n, m), s);
  print("linear inequalities", s);
}

TEST(ConicQpIpoptOracle, BoxQp) {
  std::mt19937 rng(102);
  ClassStats s;
  for (int n : {3, 8, 20, 40, 60}) check(box_qp(rng, n), s);
  print("box", s);
}

TEST(ConicQpIpoptOracle, FrictionSocp) {
  std::mt19937 rng(103);
  ClassStats s;
  for (int contacts : {1, 2, 4, 8, 16}) check(friction_socp(rng, contacts, 0.1, 1.0), s);
  for (int contacts : {3, 10}) check(friction_socp(rng, contacts, 1e-3, 1e-2), s);  // nearly frictionless
  print("friction SOCP", s);
}

TEST(ConicQpIpoptOracle, MixedOrthantBoxCones) {
  std::mt19937 rng(104);
  ClassStats s;
  for (auto [nb, nc, l] : std::vector<std::tuple<int, int, int>>{{2, 1, 2}, {4, 3, 5}, {6, 5, 10}, {10, 8, 4}}) check(mixed(rng, nb, nc, l), s);
  print("mixed", s);
}

TEST(ConicQpIpoptOracle, LStableLikeProblems) {
  std::mt19937 rng(105);
  ClassStats s;
  check(lstable_like(rng, 6, 2, 1, 2, 1, 1), s);
  check(lstable_like(rng, 12, 4, 2, 3, 2, 1), s);
  check(lstable_like(rng, 30, 6, 3, 4, 4, 2), s);  // 30 + … rows
  check(lstable_like(rng, 10, 8, 2, 2, 2, 0), s);  // more rows than dofs: W singular, R keeps P ≻ 0
  check(lstable_like(rng, 40, 20, 4, 6, 6, 2), s);
  print("lstable-like", s);
}

TEST(ConicQpIpoptOracle, RedundantRows) {
  std::mt19937 rng(106);
  ClassStats s;
  // Duplicated contact rows in the L-stable layout (rank-deficient W).
  check(lstable_like(rng, 8, 2, 1, 1, 1, 0, 1e2, true), s);
  check(lstable_like(rng, 20, 5, 2, 2, 2, 1, 1e2, true), s);
  // Duplicated orthant rows of G (non-unique multipliers, unique x).
  for (int trial = 0; trial < 3; ++trial) {
    Case c = linear_inequality_qp(rng, 8, 12);
    ConicQp p;
    p.resize(8, 24, {});
    p.P = c.p.P;
    p.q = c.p.q;
    p.G << c.p.G, c.p.G;
    p.h << c.p.h, c.p.h;
    c.p = p;
    c.label += " duplicated";
    check(c, s);
  }
  print("redundant rows", s);
}

TEST(ConicQpIpoptOracle, ConeApexStrictAndNonStrictComplementarity) {
  std::mt19937 rng(107);
  ClassStats s;
  for (int contacts : {4, 5, 8, 12}) {
    Case c = constructed_friction(rng, contacts, random_spd(rng, 3 * contacts), "apex");
    c.x_tolerance = 1e-4;  // contacts 1, 5, 9: apex with z = 0
    check(c, s);
  }
  print("apex (constructed)", s);
}

TEST(ConicQpIpoptOracle, ZeroFriction) {
  std::mt19937 rng(108);
  ClassStats s;
  for (int contacts : {2, 4, 6})
    check(constructed_friction(rng, contacts, random_spd(rng, 3 * contacts), "mu = 0", true), s);
  print("zero friction (constructed)", s);
}

TEST(ConicQpIpoptOracle, IllConditionedP) {
  std::mt19937 rng(109);
  ClassStats s;
  for (int contacts : {3, 6, 10}) {
    Case c = constructed_friction(rng, contacts, spd_with_condition(rng, 3 * contacts, 1e10), "cond(P) = 1e10");
    c.ill_conditioned = true;
    check(c, s);
  }
  for (int n : {8, 20}) {
    Case c = linear_inequality_qp(rng, n, 2 * n);
    c.p.P = spd_with_condition(rng, n, 1e10);
    c.label = "cond(P) = 1e10 linear n=" + std::to_string(n);
    c.ill_conditioned = true;
    check(c, s);
  }
  for (int nv : {10, 20}) {  // L-stable: mass ratio 1e10 in A
    Case c = lstable_like(rng, nv, 3, 1, 2, 1, 1, 1e10);
    c.ill_conditioned = true;
    c.label += " cond(A) = 1e10";
    check(c, s);
  }
  print("ill-conditioned", s);
}

}  // namespace
}  // namespace coulomb::solvers::qp
