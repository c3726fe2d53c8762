// Oracle test: SAP's primal optimum against the DUAL problem solved by Ipopt 3.11
// (coinor-libipopt-dev), Castro et al. Eq. 22 (digest ../shared/digests/sap.md §2.5, §7 item 11):
//
//   min_γ ℓ_d(γ) = ½ γᵀ(W + R)γ + rᵀγ,   W = J A⁻¹ Jᵀ,  r = J v* − v̂,
//   s.t. for every contact i (rows [t1, t2, n]):  γ_n ≥ 0  (variable bound),
//                                                 μ² γ_n² − γ_t1² − γ_t2² ≥ 0  (smooth cone).
//
// W is formed densely from SapProblem::dense_J() / dense_A() with an LLT of A; R and
// v̂ are read from the constraints after SapSolver::solve() prepared them (the only data the two
// computations share is the problem itself: the dual never sees SAP's v, γ or Hessians). Ipopt
// gets exact first and second derivatives (dense lower triangle of W + R plus the constraint
// Hessians λ_i diag(−2, −2, 2μ²)) and tol = 1e-12, and starts cold at γ = (0, 0, 1) per contact.
//
// Checked on 24 problems from testing::random_sap_problem (n_v 10–40, n_c 5–30; some rebuilt
// with small μ ∈ [0.005, 0.05], some with large v* so that many contacts slide):
//  1. strong duality: SAP's ℓ_p(v_opt) (rel_tolerance 1e-12) = −ℓ_d(γ_ipopt) to 1e-6 relative;
//  2. γ_SAP = γ_ipopt to 1e-4 of ‖γ_ipopt‖ (the dual optimum is unique: W + R ≻ 0);
//  3. SAP's v satisfies the momentum balance with Ipopt's impulses, A(v − v*) = Jᵀγ_ipopt, to
//     1e-5 of max(‖A(v − v*)‖, ‖Jᵀγ_ipopt‖) (Eq. 21a: an independent check of the primal v);
//  4. γ_ipopt is in the cones (γ_n ≥ −1e-9‖γ‖, ‖γ_t‖ ≤ μγ_n + 1e-9‖γ‖).
// The three contact regions of Eq. 27 (stiction, sliding, no contact) are counted at SAP's
// solution; every group must contain sliding contacts.
#include <IpIpoptApplication.hpp>
#include <IpSolveStatistics.hpp>
#include <IpTNLP.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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

// The dual of the SAP problem as an Ipopt TNLP. Variables: γ (3 n_c), contact-frame
// [t1, t2, n] per contact; constraints: one smooth cone constraint per contact.
class SapDualTnlp : public Ipopt::TNLP {
 public:
  SapDualTnlp(Eigen::MatrixXd H, Eigen::VectorXd r, std::vector<double> mu)
      : H_(std::move(H)), r_(std::move(r)), mu_(std::move(mu)) {}

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
    for (Ipopt::Index k = 0; k < n; ++k) x[k] = (k % 3 == 2) ? 1.0 : 0.0;  // strictly inside every cone
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
          const double mu = mu_[i];
          values[3 * i + k] = (k < 2) ? -2.0 * x[3 * i + k] : 2.0 * mu * mu * x[3 * i + 2];
        }
      }
    }
    return true;
  }

  bool eval_h(Ipopt::Index n, const Ipopt::Number*, bool, Ipopt::Number obj_factor, Ipopt::Index,
              const Ipopt::Number* lambda, bool, Ipopt::Index, Ipopt::Index* iRow, Ipopt::Index* jCol,
              Ipopt::Number* values) override {
    Ipopt::Index idx = 0;
    for (Ipopt::Index a = 0; a < n; ++a) {
      for (Ipopt::Index b = 0; b <= a; ++b, ++idx) {
        if (values == nullptr) {
          iRow[idx] = a;
          jCol[idx] = b;
        } else {
          double h = obj_factor * H_(a, b);
          if (a == b) {
            const int i = a / 3;
            h += lambda[i] * ((a % 3 == 2) ? 2.0 * mu_[i] * mu_[i] : -2.0);
          }
          values[idx] = h;
        }
      }
    }
    return true;
  }

  void finalize_solution(Ipopt::SolverReturn status, Ipopt::Index n, const Ipopt::Number* x, const Ipopt::Number*,
                         const Ipopt::Number*, Ipopt::Index, const Ipopt::Number*, const Ipopt::Number*,
                         Ipopt::Number obj_value, const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    status_ = status;
    gamma_ = Eigen::Map<const Eigen::VectorXd>(x, n);
    objective_ = obj_value;
  }

  Ipopt::SolverReturn status() const { return status_; }
  const Eigen::VectorXd& gamma() const { return gamma_; }
  double objective() const { return objective_; }

 private:
  static constexpr double kInf = 2e19;  // > nlp_{lower,upper}_bound_inf (1e19): no bound
  Eigen::MatrixXd H_;  // W + R
  Eigen::VectorXd r_;
  std::vector<double> mu_;
  Ipopt::SolverReturn status_ = Ipopt::UNASSIGNED;
  Eigen::VectorXd gamma_;
  double objective_ = 0.0;
};

struct DualSolution {
  Ipopt::ApplicationReturnStatus status;
  Eigen::VectorXd gamma;
  double objective = 0.0;  // ℓ_d(γ_ipopt)
  int iterations = 0;
};

DualSolution solve_dual_with_ipopt(const Eigen::MatrixXd& H, const Eigen::VectorXd& r, const std::vector<double>& mu) {
  Ipopt::SmartPtr<SapDualTnlp> tnlp = new SapDualTnlp(H, r, mu);
  Ipopt::SmartPtr<Ipopt::IpoptApplication> app = IpoptApplicationFactory();
  app->Options()->SetIntegerValue("print_level", 0);
  app->Options()->SetStringValue("sb", "yes");  // no banner
  app->Options()->SetNumericValue("tol", 1e-12);
  app->Options()->SetIntegerValue("max_iter", 500);
  app->Options()->SetStringValue("hessian_approximation", "exact");
  DualSolution out;
  out.status = app->Initialize();
  if (out.status != Ipopt::Solve_Succeeded) return out;
  out.status = app->OptimizeTNLP(Ipopt::SmartPtr<Ipopt::TNLP>(GetRawPtr(tnlp)));
  out.gamma = tnlp->gamma();
  out.objective = tnlp->objective();
  if (IsValid(app->Statistics())) out.iterations = app->Statistics()->IterationCount();
  return out;
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
  ASSERT_TRUE(dual.status == Ipopt::Solve_Succeeded || dual.status == Ipopt::Solved_To_Acceptable_Level)
      << "Ipopt status " << static_cast<int>(dual.status);
  ASSERT_EQ(dual.gamma.size(), m);
  const Eigen::VectorXd& g = dual.gamma;

  // 4. Dual feasibility of Ipopt's γ.
  const double gnorm = g.norm();
  ASSERT_GT(gnorm, 0.0) << "no active contact: the test problem is trivial";
  for (int i = 0; i < nc; ++i) {
    const Eigen::Vector3d gi = g.segment<3>(3 * i);
    EXPECT_GE(gi[2], -1e-9 * gnorm) << "contact " << i;
    EXPECT_LE(gi.head<2>().norm(), mu[i] * gi[2] + 1e-9 * gnorm) << "contact " << i;
  }

  // 1. Strong duality: ℓ_p(v_opt) = −ℓ_d(γ_opt). ℓ_d recomputed here rather than trusting obj_value.
  const double dual_cost = 0.5 * g.dot(H * g) + r.dot(g);
  EXPECT_NEAR(dual_cost, dual.objective, 1e-12 * std::abs(dual_cost));
  ASSERT_GT(sap.cost, 0.0);
  const double cost_err = std::abs(sap.cost + dual_cost) / std::abs(sap.cost);
  EXPECT_LE(cost_err, 1e-6) << "SAP ℓ_p = " << sap.cost << ", −ℓ_d(Ipopt) = " << -dual_cost;

  // 2. Impulses.
  const double gamma_err = (sap.gamma - g).norm() / gnorm;
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
  std::printf("  %-28s n_v %2d n_c %2d | SAP it %2d  Ipopt it %3d (status %d) | ℓ_p %.6e  rel cost %.1e  γ %.1e  "
              "momentum %.1e | stick/slide/free %d/%d/%d\n",
              label.c_str(), nv, nc, sap.iterations, dual.iterations, static_cast<int>(dual.status), sap.cost, cost_err, gamma_err, momentum_err,
              counts[0], counts[1], counts[2]);
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

// 6 problems with v* scaled ×10 (fast tangential motion against near-rigid contacts: sliding).
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
  EXPECT_GT(worst.sliding, 0);
}

}  // namespace
}  // namespace coulomb::solvers::sap
