// Oracle test: SAP's primal optimum against the DUAL problem solved by Ipopt 3.11
// (coinor-libipopt-dev), Castro et al. Eq. 22 (digest ../shared/digests/sap.md §2.5, §7 item 11):
//
//   min_γ ℓ_d(γ) = ½ γᵀ(W + R)γ + rᵀγ,   W = J A⁻¹ Jᵀ,  r = J v* − v̂,
//   s.t. γ_i ∈ ℱ_i = {‖γ_t‖ ≤ μ_i γ_n} for every contact i (rows [t1, t2, n]).
//
// W is formed densely from SapProblem::dense_J() / dense_A() with an LLT of A; R and v̂ are read
// from the constraints after SapSolver::solve() prepared them. That is all the two computations
// share: the dual never sees SAP's v, γ or Hessians. Ipopt gets the cone in smooth form
// (γ_n ≥ 0, μ²γ_n² − ‖γ_t‖² ≥ 0) with exact first and second derivatives, tol = 1e-12, a cold start
// at γ = (0, 0, scale) per contact, and an active-set polish for the contacts whose optimum is the
// cone's apex (see solve_dual_with_ipopt: the smooth form is degenerate there), certified by the
// dual-cone condition on the gradient. Its γ is finally projected onto the exact cones, so it is
// exactly dual feasible and −ℓ_d(γ) ≤ ℓ_p(v) must hold for every v (weak duality, checked).
//
// Checked on 24 problems from testing::random_sap_problem (n_v 10–40, n_c 5–30; 6 rebuilt with
// small μ ∈ [0.005, 0.05], 6 with v* scaled ×10 so that most contacts slide):
//  1. strong duality: SAP's ℓ_p(v_opt) (rel_tolerance 1e-12) = −ℓ_d(γ_ipopt) to 1e-6 relative;
//  2. γ_SAP = γ_ipopt to 1e-4 of ‖γ_ipopt‖ (the dual optimum is unique: W + R ≻ 0);
//  3. SAP's v satisfies the momentum balance with Ipopt's impulses, A(v − v*) = Jᵀγ_ipopt, to
//     1e-5 of max(‖A(v − v*)‖, ‖Jᵀγ_ipopt‖) (Eq. 21a: an independent check of the primal v);
//  4. Ipopt's γ is in the cones to 1e-9 ‖γ‖, and its zero set (the certified apex contacts) is
//     exactly SAP's no-contact set (region III of Eq. 27 at SAP's solution).
// The three regions (stiction, sliding, no contact) are counted at SAP's solution and printed
// with the errors; measured worst relative cost difference: 1.3e-12 (γ 9e-11, momentum 1e-10).
#include <IpIpoptApplication.hpp>
#include <IpSolveStatistics.hpp>
#include <IpTNLP.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_problem.h"
#include "coulomb/solvers/sap/sap_solver.h"
#include "solvers/sap/sap_test_problems.h"

namespace coulomb::solvers::sap {
namespace {

// The dual of the SAP problem restricted to a set of contacts (the others held at γ_i = 0), as an
// Ipopt TNLP. Variables: γ (3 per contact, contact frame [t1, t2, n]); bounds γ_n ≥ 0; one smooth
// cone constraint per contact, c_i(γ) = μ_i² γ_n² − γ_t1² − γ_t2² ≥ 0.
class SapDualTnlp : public Ipopt::TNLP {
 public:
  SapDualTnlp(Eigen::MatrixXd H, Eigen::VectorXd r, std::vector<double> mu, double gamma_n0)
      : H_(std::move(H)), r_(std::move(r)), mu_(std::move(mu)), gamma_n0_(gamma_n0) {}

  bool get_nlp_info(Ipopt::Index& n, Ipopt::Index& m, Ipopt::Index& nnz_jac_g, Ipopt::Index& nnz_h_lag,
                    IndexStyleEnum& index_style) override {
    n = static_cast<Ipopt::Index>(r_.size());
    m = static_cast<Ipopt::Index>(mu_.size());
    nnz_jac_g = 3 * m;
    nnz_h_lag = n * (n + 1) / 2;  // dense lower triangle (contains the constraints' diagonals)
    index_style = C_STYLE;
    return true;
  }

  bool get_bounds_info(Ipopt::Index n, Ipopt::Number* x_l, Ipopt::Number* x_u, Ipopt::Index m,
                       Ipopt::Number* g_l, Ipopt::Number* g_u) override {
    for (Ipopt::Index k = 0; k < n; ++k) {
      x_l[k] = (k % 3 == 2) ? 0.0 : -kInf;  // γ_n ≥ 0
      x_u[k] = kInf;
    }
    for (Ipopt::Index i = 0; i < m; ++i) {
      g_l[i] = 0.0;  // μ²γ_n² − ‖γ_t‖² ≥ 0
      g_u[i] = kInf;
    }
    return true;
  }

  bool get_starting_point(Ipopt::Index n, bool init_x, Ipopt::Number* x, bool init_z, Ipopt::Number*,
                          Ipopt::Number*, Ipopt::Index, bool init_lambda, Ipopt::Number*) override {
    if (!init_x || init_z || init_lambda) return false;
    for (Ipopt::Index k = 0; k < n; ++k) x[k] = (k % 3 == 2) ? gamma_n0_ : 0.0;  // inside every cone
    return true;
  }

  bool eval_f(Ipopt::Index n, const Ipopt::Number* x, bool, Ipopt::Number& obj_value) override {
    const Eigen::Map<const Eigen::VectorXd> g(x, n);
    obj_value = 0.5 * g.dot(H_ * g) + r_.dot(g);
    return true;
  }

  bool eval_grad_f(Ipopt::Index n, const Ipopt::Number* x, bool, Ipopt::Number* grad_f) override {
    const Eigen::Map<const Eigen::VectorXd> g(x, n);
    Eigen::Map<Eigen::VectorXd>(grad_f, n) = H_ * g + r_;
    return true;
  }

  bool eval_g(Ipopt::Index, const Ipopt::Number* x, bool, Ipopt::Index m, Ipopt::Number* g) override {
    for (Ipopt::Index i = 0; i < m; ++i) {
      const double t1 = x[3 * i], t2 = x[3 * i + 1], gn = x[3 * i + 2], mu = mu_[i];
      g[i] = mu * mu * gn * gn - t1 * t1 - t2 * t2;
    }
    return true;
  }

  bool eval_jac_g(Ipopt::Index, const Ipopt::Number* x, bool, Ipopt::Index m, Ipopt::Index, Ipopt::Index* iRow,
                  Ipopt::Index* jCol, Ipopt::Number* values) override {
    for (Ipopt::Index i = 0; i < m; ++i) {
      for (int k = 0; k < 3; ++k) {
        if (values == nullptr) {
          iRow[3 * i + k] = i;
          jCol[3 * i + k] = 3 * i + k;
        } else {
          values[3 * i + k] = (k < 2) ? -2.0 * x[3 * i + k] : 2.0 * mu_[i] * mu_[i] * x[3 * i + 2];
        }
      }
    }
    return true;
  }

  // ∇²L = obj_factor (W + R) + Σ_i λ_i diag(−2, −2, 2μ_i²).
  bool eval_h(Ipopt::Index n, const Ipopt::Number*, bool, Ipopt::Number obj_factor, Ipopt::Index,
              const Ipopt::Number* lambda, bool, Ipopt::Index, Ipopt::Index* iRow, Ipopt::Index* jCol,
              Ipopt::Number* values) override {
    Ipopt::Index idx = 0;
    for (Ipopt::Index a = 0; a < n; ++a) {
      for (Ipopt::Index b = 0; b <= a; ++b, ++idx) {
        if (values == nullptr) {
          iRow[idx] = a;
          jCol[idx] = b;
          continue;
        }
        double h = obj_factor * H_(a, b);
        if (a == b) {
          const int i = a / 3;
          h += lambda[i] * ((a % 3 == 2) ? 2.0 * mu_[i] * mu_[i] : -2.0);
        }
        values[idx] = h;
      }
    }
    return true;
  }

  void finalize_solution(Ipopt::SolverReturn, Ipopt::Index n, const Ipopt::Number* x, const Ipopt::Number*,
                         const Ipopt::Number*, Ipopt::Index, const Ipopt::Number*, const Ipopt::Number*,
                         Ipopt::Number obj_value, const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    gamma_ = Eigen::Map<const Eigen::VectorXd>(x, n);
    objective_ = obj_value;
  }

  const Eigen::VectorXd& gamma() const { return gamma_; }
  double objective() const { return objective_; }

 private:
  static constexpr double kInf = 2e19;  // > nlp_{lower,upper}_bound_inf (1e19): no bound
  Eigen::MatrixXd H_;  // W + R
  Eigen::VectorXd r_;
  std::vector<double> mu_;
  double gamma_n0_;
  Eigen::VectorXd gamma_;
  double objective_ = 0.0;
};

// One Ipopt solve of the dual restricted to the contacts with active[i]; γ (full size) is 0 elsewhere.
Ipopt::ApplicationReturnStatus run_ipopt(const Eigen::MatrixXd& H, const Eigen::VectorXd& r,
                                         const std::vector<double>& mu, const std::vector<bool>& active,
                                         double gamma_scale, double bound_relax_factor, Eigen::VectorXd& gamma,
                                         int& iterations) {
  std::vector<int> rows, contacts;
  for (int i = 0; i < static_cast<int>(mu.size()); ++i) {
    if (!active[i]) continue;
    contacts.push_back(i);
    for (int k = 0; k < 3; ++k) rows.push_back(3 * i + k);
  }
  const int n = static_cast<int>(rows.size());
  gamma = Eigen::VectorXd::Zero(r.size());
  if (n == 0) return Ipopt::Solve_Succeeded;
  Eigen::MatrixXd Hs(n, n);
  Eigen::VectorXd rs(n);
  std::vector<double> mus;
  for (int a = 0; a < n; ++a) {
    rs[a] = r[rows[a]];
    for (int b = 0; b < n; ++b) Hs(a, b) = H(rows[a], rows[b]);
  }
  for (int i : contacts) mus.push_back(mu[i]);

  Ipopt::SmartPtr<SapDualTnlp> tnlp = new SapDualTnlp(Hs, rs, mus, gamma_scale);
  Ipopt::SmartPtr<Ipopt::IpoptApplication> app = IpoptApplicationFactory();
  app->Options()->SetIntegerValue("print_level", 0);
  app->Options()->SetStringValue("sb", "yes");  // no banner
  app->Options()->SetNumericValue("tol", 1e-12);
  app->Options()->SetIntegerValue("max_iter", 500);
  app->Options()->SetStringValue("hessian_approximation", "exact");
  app->Options()->SetNumericValue("bound_relax_factor", bound_relax_factor);
  Ipopt::ApplicationReturnStatus status = app->Initialize("");  // ignore any ipopt.opt in the cwd
  if (status != Ipopt::Solve_Succeeded) return status;
  status = app->OptimizeTNLP(Ipopt::SmartPtr<Ipopt::TNLP>(GetRawPtr(tnlp)));
  if (IsValid(app->Statistics())) iterations += app->Statistics()->IterationCount();
  if (tnlp->gamma().size() == n)
    for (int a = 0; a < n; ++a) gamma[rows[a]] = tnlp->gamma()[a];
  return status;
}

struct DualSolution {
  bool ok = false;          // every Ipopt pass succeeded and the dropped contacts are certified
  Ipopt::ApplicationReturnStatus status = Ipopt::Internal_Error;  // of the last pass
  Eigen::VectorXd gamma;    // Ipopt's γ (full size)
  int passes = 0, iterations = 0, dropped = 0;
  double certificate = 0.0;  // max over dropped contacts of (μ‖d_t‖ − d_n)/‖d‖∞, d = (W + R)γ + r (≤ 0)
};

// Solves the dual with Ipopt, with an active-set polish. The smooth cone constraint has ∇c_i = 0
// at the apex γ_i = 0, where every separated contact's optimum lies: no KKT multipliers exist
// there (Ipopt's λ_i diverge) and Ipopt stalls with ‖γ_t‖ ~ √(constraint violation): measured,
// cost errors up to 1e-2 relative with Ipopt's default bound_relax_factor = 1e-8 (which relaxes
// c_i ≥ 0 to c_i ≥ −1e-8, so ‖γ_t‖ ~ 1e-4), and with bound_relax_factor = 0 up to 2e-6 or an
// "infeasible problem" exit. So: pass 1 solves the full dual with the defaults; contacts with
// γ_n ≤ 1e-6 max_j γ_n,j are dropped (γ_i := 0) and the rest re-solved with bound_relax_factor = 0;
// there every c_i has ∇c_i ≠ 0 at the optimum (LICQ) and Ipopt meets tol. γ_i = 0 is optimal for
// a dropped contact iff the dual gradient d_i = ((W + R)γ + r)_i lies in the dual cone
// ℱ_i* = {μ‖d_t‖ ≤ d_n} (the problem is convex: KKT is sufficient); a dropped contact that fails
// this certificate is re-activated for good and the loop repeats.
DualSolution solve_dual_with_ipopt(const Eigen::MatrixXd& H, const Eigen::VectorXd& r, const std::vector<double>& mu) {
  const int nc = static_cast<int>(mu.size());
  const double gamma_scale = std::max(r.lpNorm<Eigen::Infinity>() / H.diagonal().mean(), 1e-12);
  std::vector<bool> active(nc, true), readded(nc, false);
  DualSolution out;
  for (out.passes = 1; out.passes <= 6; ++out.passes) {
    out.status = run_ipopt(H, r, mu, active, gamma_scale, out.passes == 1 ? 1e-8 : 0.0, out.gamma, out.iterations);
    if (out.status != Ipopt::Solve_Succeeded && out.status != Ipopt::Solved_To_Acceptable_Level) return out;
    double gn_max = 0.0;
    for (int i = 0; i < nc; ++i) gn_max = std::max(gn_max, out.gamma[3 * i + 2]);
    bool changed = false;
    for (int i = 0; i < nc; ++i) {
      if (active[i] && !readded[i] && out.gamma[3 * i + 2] <= 1e-6 * gn_max) {
        active[i] = false;
        out.gamma.segment<3>(3 * i).setZero();
        changed = true;
      }
    }
    const Eigen::VectorXd d = H * out.gamma + r;
    const double dscale = std::max(d.lpNorm<Eigen::Infinity>(), 1e-300);
    out.certificate = -std::numeric_limits<double>::infinity();
    out.dropped = 0;
    for (int i = 0; i < nc; ++i) {
      if (active[i]) continue;
      ++out.dropped;
      const double v = (mu[i] * d.segment<2>(3 * i).norm() - d[3 * i + 2]) / dscale;
      out.certificate = std::max(out.certificate, v);
      if (v > 1e-10) {
        active[i] = readded[i] = true;
        changed = true;
      }
    }
    if (!changed && out.passes > 1) {  // the final pass is always an exact (bound_relax_factor = 0) one
      out.ok = true;
      return out;
    }
  }
  out.passes = 6;
  return out;
}

// Euclidean projection of [γ_t1, γ_t2, γ_n] onto the exact cone ‖γ_t‖ ≤ μγ_n.
Eigen::Vector3d project_onto_cone(const Eigen::Vector3d& g, double mu) {
  const double a = g.head<2>().norm(), n = g[2];
  if (a <= mu * n) return g;
  if (mu * a <= -n) return Eigen::Vector3d::Zero();  // in the polar cone
  const double s = (mu * a + n) / (1.0 + mu * mu);     // onto the ray (μ t̂, 1)
  Eigen::Vector3d p;
  p.head<2>() = (a > 0.0 ? s * mu / a : 0.0) * g.head<2>();
  p[2] = s;
  return p;
}

// The same problem (trees, A, v*, Jacobians, k, τ_d, φ₀) with μ_i ← mu_map(μ_i) and v* ← scale·v*.
template <class MuMap>
std::unique_ptr<SapProblem> rebuild(const SapProblem& p, MuMap mu_map, double v_star_scale = 1.0) {
  std::vector<Eigen::MatrixXd> A;
  for (int t = 0; t < p.num_trees(); ++t) A.push_back(p.A(t));
  auto q = std::make_unique<SapProblem>(p.time_step(), std::move(A), v_star_scale * p.v_star());
  for (int i = 0; i < p.num_constraints(); ++i) {
    const auto& c = dynamic_cast<const SapFrictionConeConstraint&>(p.constraint(i));
    FrictionConeParameters params = c.parameters();
    params.mu = mu_map(params.mu);
    if (c.num_trees() == 1) {
      q->add_constraint(std::make_unique<SapFrictionConeConstraint>(params, c.tree(0), c.jacobian(0)));
    } else {
      q->add_constraint(
          std::make_unique<SapFrictionConeConstraint>(params, c.tree(0), c.jacobian(0), c.tree(1), c.jacobian(1)));
    }
  }
  return q;
}

struct Worst {
  double cost = 0.0, gamma = 0.0, momentum = 0.0;
  int problems = 0, stiction = 0, sliding = 0, no_contact = 0;
};

// Solves `problem` with SAP and its dual with Ipopt and checks items 1–4 of the header.
void check_against_ipopt(SapProblem& problem, const std::string& label, Worst& worst) {
  SCOPED_TRACE(label);
  const int nv = problem.nv(), m = problem.num_rows(), nc = problem.num_constraints();

  // Primal: SAP, cold start at v*. This also prepares R and v̂ of every constraint.
  SapSolverParameters sp;
  sp.rel_tolerance = 1e-12;
  const SapSolverResults sap = SapSolver(sp).solve(problem, problem.v_star());
  ASSERT_EQ(sap.status, SapSolverStatus::kSuccess) << to_string(sap.status);

  // Dual data, formed densely and independently of SAP's iterates.
  const Eigen::MatrixXd J = problem.dense_J(), A = problem.dense_A();
  const Eigen::LLT<Eigen::MatrixXd> llt(A);
  ASSERT_EQ(llt.info(), Eigen::Success);
  Eigen::MatrixXd W = J * llt.solve(J.transpose());
  W = 0.5 * (W + W.transpose());
  Eigen::VectorXd R(m), v_hat(m);
  std::vector<double> mu(nc);
  for (int i = 0; i < nc; ++i) {
    const auto& c = dynamic_cast<const SapFrictionConeConstraint&>(problem.constraint(i));
    ASSERT_EQ(c.num_rows(), 3);
    R.segment<3>(problem.row_start(i)) = c.R();
    v_hat.segment<3>(problem.row_start(i)) = c.v_hat();
    mu[i] = c.parameters().mu;
  }
  ASSERT_TRUE(R.allFinite() && (R.array() > 0).all());
  const Eigen::MatrixXd H = W + Eigen::MatrixXd(R.asDiagonal());
  const Eigen::VectorXd r = J * problem.v_star() - v_hat;

  const DualSolution dual = solve_dual_with_ipopt(H, r, mu);
  ASSERT_TRUE(dual.ok) << "Ipopt status " << static_cast<int>(dual.status) << " after " << dual.passes
                       << " passes; certificate " << dual.certificate;
  ASSERT_EQ(dual.gamma.size(), m);
  const double gnorm = dual.gamma.norm();
  ASSERT_GT(gnorm, 0.0) << "no active contact: the test problem is trivial";
  auto ell_d = [&](const Eigen::VectorXd& gamma) { return 0.5 * gamma.dot(H * gamma) + r.dot(gamma); };

  // 4. Ipopt's γ lies in the cones up to round-off; g := its projection onto the exact cones is
  //    dual feasible.
  Eigen::VectorXd g(m);
  for (int i = 0; i < nc; ++i) {
    const Eigen::Vector3d gi = dual.gamma.segment<3>(3 * i);
    EXPECT_LE(gi.head<2>().norm(), mu[i] * gi[2] + 1e-9 * gnorm) << "contact " << i;
    g.segment<3>(3 * i) = project_onto_cone(gi, mu[i]);
  }
  const double dual_cost = ell_d(g);

  // 1. Weak duality (rigorous for any dual-feasible g and any v): −ℓ_d(g) ≤ ℓ_p(v_SAP). Strong duality:
  //    equal to 1e-6 relative.
  ASSERT_GT(sap.cost, 0.0);
  EXPECT_LE(-dual_cost, sap.cost * (1.0 + 1e-12)) << "weak duality violated";
  const double cost_err = std::abs(sap.cost + dual_cost) / std::abs(sap.cost);
  EXPECT_LE(cost_err, 1e-6) << "SAP ℓ_p = " << sap.cost << ", −ℓ_d(Ipopt) = " << -dual_cost;

  // 2. Impulses.
  const double gamma_err = (sap.gamma - g).norm() / g.norm();
  EXPECT_LE(gamma_err, 1e-4);

  // 3. Momentum balance of SAP's v with Ipopt's γ (Eq. 21a).
  const Eigen::VectorXd lhs = A * (sap.v - problem.v_star());
  const Eigen::VectorXd rhs = J.transpose() * g;
  const double momentum_err = (lhs - rhs).norm() / std::max(lhs.norm(), rhs.norm());
  EXPECT_LE(momentum_err, 1e-5);

  // Contact regions at SAP's solution (Eq. 27), y = −R⁻¹(v_c − v̂).
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < nc; ++i) {
    const int s = problem.row_start(i);
    const Eigen::Vector3d Ri = R.segment<3>(s);
    const Eigen::Vector3d y = -(sap.vc.segment<3>(s) - v_hat.segment<3>(s)).cwiseQuotient(Ri);
    ++counts[static_cast<int>(friction_cone::region(y, mu[i], Ri[0], Ri[2]))];
  }
  // Ipopt's zero set is SAP's no-contact set.
  EXPECT_EQ(dual.dropped, counts[2]);
  std::printf("  %-14s n_v %2d n_c %2d | SAP it %2d | Ipopt passes %d it %3d | ℓ_p %.6e | rel cost %.1e  "
              "γ %.1e  momentum %.1e | stick/slide/free %2d/%2d/%2d\n",
              label.c_str(), nv, nc, sap.iterations, dual.passes, dual.iterations, sap.cost, cost_err, gamma_err,
              momentum_err, counts[0], counts[1], counts[2]);
  worst.cost = std::max(worst.cost, cost_err);
  worst.gamma = std::max(worst.gamma, gamma_err);
  worst.momentum = std::max(worst.momentum, momentum_err);
  worst.stiction += counts[0];
  worst.sliding += counts[1];
  worst.no_contact += counts[2];
  ++worst.problems;
}

void report(const char* group, const Worst& w) {
  std::printf("%s: %d problems, worst rel cost %.2e, worst rel γ %.2e, worst rel momentum %.2e; "
              "contacts stick/slide/free %d/%d/%d\n",
              group, w.problems, w.cost, w.gamma, w.momentum, w.stiction, w.sliding, w.no_contact);
}

// Sizes (n_v target, n_c) spanning n_v 10–40 and n_c 5–30.
struct Size {
  int nv, nc;
};

// 12 problems as the generator makes them: μ ∈ [0.1, 1.5].
TEST(SapIpoptOracle, RandomProblemsDualMatchesPrimal) {
  const Size sizes[] = {{10, 5}, {10, 12}, {15, 8},  {18, 20}, {20, 10}, {24, 30},
                        {28, 15}, {30, 25}, {32, 6}, {35, 18}, {40, 12}, {40, 30}};
  Worst worst;
  int k = 0;
  for (const Size& s : sizes) {
    std::mt19937 rng(1000 + k++);
    auto problem = testing::random_sap_problem(rng, s.nv, s.nc);
    check_against_ipopt(*problem, "random #" + std::to_string(k), worst);
  }
  report("SapIpoptOracle.RandomProblems", worst);
  EXPECT_EQ(worst.problems, 12);
  EXPECT_GT(worst.sliding, 0);
  EXPECT_GT(worst.stiction, 0);
}

// 6 problems rebuilt with small friction, μ ∈ [0.005, 0.05] (thin cones: nearly everything slides).
TEST(SapIpoptOracle, SmallFrictionDualMatchesPrimal) {
  const Size sizes[] = {{10, 6}, {16, 14}, {22, 9}, {27, 22}, {34, 16}, {40, 28}};
  Worst worst;
  int k = 0;
  for (const Size& s : sizes) {
    std::mt19937 rng(2000 + k++);
    auto base = testing::random_sap_problem(rng, s.nv, s.nc);
    std::uniform_real_distribution<double> u(0.005, 0.05);
    auto problem = rebuild(*base, [&](double) { return u(rng); });
    check_against_ipopt(*problem, "small mu #" + std::to_string(k), worst);
  }
  report("SapIpoptOracle.SmallFriction", worst);
  EXPECT_EQ(worst.problems, 6);
  EXPECT_GT(worst.sliding, worst.stiction);
}

// 6 problems with v* scaled ×10 (large contact velocities against near-rigid contacts: most slide).
TEST(SapIpoptOracle, SlidingDualMatchesPrimal) {
  const Size sizes[] = {{12, 5}, {17, 11}, {21, 24}, {26, 13}, {33, 30}, {38, 20}};
  Worst worst;
  int k = 0;
  for (const Size& s : sizes) {
    std::mt19937 rng(3000 + k++);
    auto base = testing::random_sap_problem(rng, s.nv, s.nc);
    auto problem = rebuild(*base, [](double mu) { return mu; }, 10.0);
    check_against_ipopt(*problem, "fast v* #" + std::to_string(k), worst);
  }
  report("SapIpoptOracle.Sliding", worst);
  EXPECT_EQ(worst.problems, 6);
  EXPECT_GT(worst.sliding, worst.stiction + worst.no_contact);
}

}  // namespace
}  // namespace coulomb::solvers::sap
