#include "coulomb/solvers/sap/sap_solver.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/CholmodSupport>
#include <Eigen/SparseCore>

#include "coulomb/linalg/block_sparse_cholesky.h"
#include "coulomb/solvers/sap/sap_line_search.h"

namespace coulomb::solvers::sap {

const char* to_string(SapSolverStatus status) {
  switch (status) {
    case SapSolverStatus::kSuccess: return "success";
    case SapSolverStatus::kMaxIterations: return "max-iterations";
    case SapSolverStatus::kLineSearchFailure: return "line-search-failure";
    case SapSolverStatus::kLinearSolverFailure: return "linear-solver-failure";
  }
  return "unknown";
}

SapSolver::SapSolver(SapSolverParameters parameters) : parameters_(parameters) {}

namespace {

// Everything one solve evaluates at an iterate v.
struct Evaluation {
  Eigen::VectorXd vc, gamma, grad, Av_minus, jc, p;
  std::vector<Eigen::MatrixXd> G;  // per constraint, num_rows × num_rows
  double cost = 0.0;
};

void evaluate(const SapProblem& problem, const Eigen::VectorXd& v, bool with_G, Evaluation& e) {
  const int nv = problem.nv(), m = problem.num_rows();
  e.vc.resize(m);
  e.gamma.resize(m);
  e.Av_minus.resize(nv);
  e.jc.resize(nv);
  e.p.resize(nv);
  problem.multiply_J(v, e.vc);
  const Eigen::VectorXd dv = v - problem.v_star();
  problem.multiply_A(dv, e.Av_minus);
  problem.multiply_A(v, e.p);
  e.cost = 0.5 * dv.dot(e.Av_minus);
  if (with_G) e.G.resize(problem.num_constraints());
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    const int r = problem.row_start(i), n = c.num_rows();
    if (with_G) {
      e.G[i].resize(n, n);
      Eigen::Ref<Eigen::MatrixXd> G_ref(e.G[i]);
      e.cost += c.calc(e.vc.segment(r, n), e.gamma.segment(r, n), &G_ref);
    } else {
      e.cost += c.calc(e.vc.segment(r, n), e.gamma.segment(r, n), nullptr);
    }
  }
  problem.multiply_J_transpose(e.gamma, e.jc);
  e.grad = e.Av_minus - e.jc;  // ∇ℓ_p = A(v − v*) − Jᵀγ, the momentum residual
}

// Adds Σ_i J_iᵀ G_i J_i to the dense H.
void add_constraint_hessians(const SapProblem& problem, const std::vector<Eigen::MatrixXd>& G, Eigen::MatrixXd& H) {
  for (int i = 0; i < problem.num_constraints(); ++i) {
    const SapConstraint& c = problem.constraint(i);
    for (int a = 0; a < c.num_trees(); ++a) {
      const Eigen::MatrixXd GJ = G[i] * c.jacobian(a);
      for (int b = 0; b < c.num_trees(); ++b) {
        H.block(problem.tree_start(c.tree(b)), problem.tree_start(c.tree(a)), c.jacobian(b).cols(),
                c.jacobian(a).cols())
            .noalias() += c.jacobian(b).transpose() * GJ;
      }
    }
  }
}

// H = A + Jᵀ G J as a sparse matrix whose pattern has dense tree×tree blocks: the diagonal blocks
// and, for every constraint coupling two trees, the off-diagonal blocks. The pattern depends
// only on the problem, so CHOLMOD's symbolic analysis is done once per solve.
class SparseHessian {
 public:
  explicit SparseHessian(const SapProblem& problem) : problem_(problem) {
    const int T = problem.num_trees();
    coupled_.assign(static_cast<size_t>(T) * T, false);
    for (int t = 0; t < T; ++t) coupled_[t * T + t] = true;
    for (int i = 0; i < problem.num_constraints(); ++i) {
      const SapConstraint& c = problem.constraint(i);
      if (c.num_trees() == 2) {
        coupled_[c.tree(0) * T + c.tree(1)] = true;
        coupled_[c.tree(1) * T + c.tree(0)] = true;
      }
    }
  }

  bool factorize(const std::vector<Eigen::MatrixXd>& G) {
    const int nv = problem_.nv();
    const int T = problem_.num_trees();
    // Accumulate block values (lower triangle of tree pairs: b ≥ a).
    std::vector<Eigen::MatrixXd> blocks(static_cast<size_t>(T) * T);
    for (int t = 0; t < T; ++t) blocks[t * T + t] = problem_.A(t);
    for (int i = 0; i < problem_.num_constraints(); ++i) {
      const SapConstraint& c = problem_.constraint(i);
      for (int a = 0; a < c.num_trees(); ++a) {
        const Eigen::MatrixXd GJ = G[i] * c.jacobian(a);
        for (int b = 0; b < c.num_trees(); ++b) {
          const int ta = c.tree(a), tb = c.tree(b);
          if (tb < ta) continue;
          Eigen::MatrixXd& B = blocks[tb * T + ta];
          if (B.size() == 0) B = Eigen::MatrixXd::Zero(problem_.tree_size(tb), problem_.tree_size(ta));
          B.noalias() += c.jacobian(b).transpose() * GJ;
        }
      }
    }
    triplets_.clear();
    for (int ta = 0; ta < T; ++ta)
      for (int tb = ta; tb < T; ++tb) {
        if (!coupled_[tb * T + ta]) continue;
        const Eigen::MatrixXd& B = blocks[tb * T + ta];
        const int r0 = problem_.tree_start(tb), c0 = problem_.tree_start(ta);
        for (int cc = 0; cc < problem_.tree_size(ta); ++cc)
          for (int rr = 0; rr < problem_.tree_size(tb); ++rr) {
            const int row = r0 + rr, col = c0 + cc;
            if (row < col) continue;  // lower triangle only
            triplets_.emplace_back(row, col, B.size() ? B(rr, cc) : 0.0);
          }
      }
    H_.resize(nv, nv);
    H_.setFromTriplets(triplets_.begin(), triplets_.end());
    if (!analyzed_) {
      llt_.analyzePattern(H_);
      analyzed_ = true;
    }
    llt_.factorize(H_);
    return llt_.info() == Eigen::Success;
  }

  Eigen::VectorXd solve(const Eigen::VectorXd& b) { return llt_.solve(b); }

 private:
  const SapProblem& problem_;
  std::vector<bool> coupled_;
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::SparseMatrix<double> H_;
  Eigen::CholmodSupernodalLLT<Eigen::SparseMatrix<double>, Eigen::Lower> llt_;
  bool analyzed_ = false;
};

// H = A + Jᵀ G J in coulomb's BlockSparseCholesky: one supernode per tree, one off-diagonal
// block per pair of trees coupled by a constraint. The pattern is analyzed once per solve.
class BlockSparseHessian {
 public:
  explicit BlockSparseHessian(const SapProblem& problem) : problem_(problem) {
    std::vector<int> sizes(problem.num_trees());
    for (int t = 0; t < problem.num_trees(); ++t) sizes[t] = problem.tree_size(t);
    std::vector<std::pair<int, int>> edges;
    for (int i = 0; i < problem.num_constraints(); ++i) {
      const SapConstraint& c = problem.constraint(i);
      if (c.num_trees() == 2) edges.emplace_back(c.tree(0), c.tree(1));
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    chol_.analyze(sizes, edges);
  }

  bool factorize(const std::vector<Eigen::MatrixXd>& G) {
    chol_.set_zero();
    for (int t = 0; t < problem_.num_trees(); ++t) chol_.diagonal_block(t) = problem_.A(t);
    for (int i = 0; i < problem_.num_constraints(); ++i) {
      const SapConstraint& c = problem_.constraint(i);
      for (int a = 0; a < c.num_trees(); ++a) {
        GJ_.noalias() = G[i] * c.jacobian(a);
        for (int b = 0; b < c.num_trees(); ++b) {
          if (c.tree(b) < c.tree(a)) continue;  // one of each symmetric pair
          JtGJ_.noalias() = c.jacobian(b).transpose() * GJ_;
          chol_.add_block(c.tree(b), c.tree(a), JtGJ_);
        }
      }
    }
    return chol_.factorize();
  }

  Eigen::VectorXd solve(const Eigen::VectorXd& b) {
    Eigen::VectorXd x = b;
    chol_.solve_in_place(x);
    return x;
  }

 private:
  const SapProblem& problem_;
  linalg::BlockSparseCholesky chol_;
  Eigen::MatrixXd GJ_, JtGJ_;
};

// Prepares each constraint with the Delassus block estimate W_ii ≈ Σ_t J_it A_t⁻¹ J_itᵀ
// (Castro et al. §V-B, with A in place of M; digest §8 item 8).
void prepare_constraints(SapProblem& problem) {
  std::vector<Eigen::LLT<Eigen::MatrixXd>> A_llt(problem.num_trees());
  for (int t = 0; t < problem.num_trees(); ++t) {
    A_llt[t].compute(problem.A(t));
    if (A_llt[t].info() != Eigen::Success)
      throw std::invalid_argument("SapProblem: A block " + std::to_string(t) + " is not positive definite");
  }
  for (int i = 0; i < problem.num_constraints(); ++i) {
    SapConstraint& c = problem.mutable_constraint(i);
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(c.num_rows(), c.num_rows());
    for (int k = 0; k < c.num_trees(); ++k) {
      const Eigen::MatrixXd& J = c.jacobian(k);
      W.noalias() += J * A_llt[c.tree(k)].solve(J.transpose());
    }
    c.prepare(problem.time_step(), W);
  }
}

}  // namespace

SapSolverResults SapSolver::solve(SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v_guess) const {
  const SapSolverParameters& prm = parameters_;
  const int nv = problem.nv();
  if (v_guess.size() != nv)
    throw std::invalid_argument("SapSolver: v_guess has " + std::to_string(v_guess.size()) + " entries, problem has " +
                                std::to_string(nv));
  if (!v_guess.allFinite()) throw std::invalid_argument("SapSolver: v_guess is not finite");
  prepare_constraints(problem);

  // Stopping-criterion scaling D̃ = diag(A)^{-1/2} (Eq. 25; Drake's choice, digest §3.5).
  Eigen::VectorXd D(nv);
  for (int t = 0; t < problem.num_trees(); ++t)
    D.segment(problem.tree_start(t), problem.tree_size(t)) = problem.A(t).diagonal().cwiseSqrt().cwiseInverse();

  SapLinearSolver linear_solver = prm.linear_solver;
  if (linear_solver == SapLinearSolver::kAuto)
    linear_solver = nv >= prm.dense_threshold ? SapLinearSolver::kBlockSparse : SapLinearSolver::kDense;
  const bool use_sparse = linear_solver != SapLinearSolver::kDense;
  std::unique_ptr<SparseHessian> sparse;
  std::unique_ptr<BlockSparseHessian> block_sparse;
  if (linear_solver == SapLinearSolver::kSparse) sparse = std::make_unique<SparseHessian>(problem);
  if (linear_solver == SapLinearSolver::kBlockSparse) block_sparse = std::make_unique<BlockSparseHessian>(problem);
  const Eigen::MatrixXd A_dense = use_sparse ? Eigen::MatrixXd() : problem.dense_A();

  SapSolverResults res;
  res.used_sparse = use_sparse;
  Eigen::VectorXd v = v_guess;
  Evaluation e;
  double previous_cost = 0.0;
  for (int iter = 0;; ++iter) {
    evaluate(problem, v, /*with_G=*/true, e);
    if (prm.record_history) res.cost_history.push_back(e.cost);
    // Eq. 26: ‖D̃∇ℓ‖ < ε_a + ε_r max(‖D̃p‖, ‖D̃j_c‖).
    const double grad_norm = D.cwiseProduct(e.grad).norm();
    const double scale = std::max(D.cwiseProduct(e.p).norm(), D.cwiseProduct(e.jc).norm());
    res.gradient_norm = grad_norm;
    res.momentum_error = scale > 0.0 ? grad_norm / scale : 0.0;
    res.iterations = iter;
    res.cost = e.cost;
    if (prm.record_history) res.momentum_error_history.push_back(res.momentum_error);
    if (grad_norm < prm.abs_tolerance + prm.rel_tolerance * scale) {
      res.status = SapSolverStatus::kSuccess;
      break;
    }
    if (iter > 0 && prm.cost_rel_tolerance > 0.0 && !res.alpha_history.empty() && res.alpha_history.back() > 0.5 &&
        std::abs(previous_cost - e.cost) < prm.cost_abs_tolerance + prm.cost_rel_tolerance * e.cost) {
      res.status = SapSolverStatus::kSuccess;
      break;
    }
    if (iter >= prm.max_iterations) {
      res.status = SapSolverStatus::kMaxIterations;
      break;
    }
    // Newton direction H Δv = −∇ℓ, H = A + Jᵀ G J.
    Eigen::VectorXd dv;
    if (block_sparse) {
      if (!block_sparse->factorize(e.G)) {
        res.status = SapSolverStatus::kLinearSolverFailure;
        break;
      }
      dv = -block_sparse->solve(e.grad);
    } else if (sparse) {
      if (!sparse->factorize(e.G)) {
        res.status = SapSolverStatus::kLinearSolverFailure;
        break;
      }
      dv = -sparse->solve(e.grad);
    } else {
      Eigen::MatrixXd H = A_dense;
      add_constraint_hessians(problem, e.G, H);
      Eigen::LLT<Eigen::MatrixXd> llt(H);
      if (llt.info() != Eigen::Success) {
        res.status = SapSolverStatus::kLinearSolverFailure;
        break;
      }
      dv = -llt.solve(e.grad);
    }
    if (!dv.allFinite()) {
      res.status = SapSolverStatus::kLinearSolverFailure;
      break;
    }
    const SapLineSearchFunction f(problem, v, e.vc, dv);
    const LineSearchOutcome ls =
        prm.line_search == SapLineSearch::kExact
            ? exact_line_search(f, prm.exact_alpha_max, prm.exact_f_tolerance, prm.exact_max_iterations)
            : backtracking_line_search(f, prm.armijo_alpha_max, prm.armijo_rho, prm.armijo_c,
                                       prm.backtracking_max_iterations);
    res.line_search_iterations += ls.iterations;
    if (!ls.descent) {
      res.status = SapSolverStatus::kLineSearchFailure;
      break;
    }
    res.alpha_history.push_back(ls.alpha);
    previous_cost = e.cost;
    v += ls.alpha * dv;
  }
  if (!prm.record_history) res.alpha_history.clear();
  res.v = v;
  res.vc = e.vc;
  res.gamma = e.gamma;
  return res;
}

}  // namespace coulomb::solvers::sap
