#include "coulomb/solvers/sap/sap_global_contact.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_problem.h"
#include "util/format.h"

namespace coulomb::solvers::sap {

namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int i) {
    while (parent[i] != i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// DOFs with a non-zero entry in contact i's three columns of H.
std::vector<std::vector<int>> contact_dofs(const GlobalContactProblem& p) {
  std::vector<std::vector<int>> dofs(static_cast<size_t>(p.num_contacts()));
  for (int col = 0; col < p.H.cols(); ++col)
    for (Eigen::SparseMatrix<double>::InnerIterator it(p.H, col); it; ++it)
      if (it.value() != 0.0) dofs[col / 3].push_back(static_cast<int>(it.row()));
  for (auto& d : dofs) {
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
  }
  return dofs;
}

}  // namespace

GlobalContactTrees partition_global_contact_dofs(const GlobalContactProblem& p) {
  const int n = p.num_dofs();
  UnionFind coupled(n);
  for (int k = 0; k < p.M.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(p.M, k); it; ++it)
      if (it.value() != 0.0) coupled.unite(static_cast<int>(it.row()), static_cast<int>(it.col()));
  const std::vector<std::vector<int>> touched = contact_dofs(p);

  for (int b = 1; b <= n; ++b) {
    if (n % b != 0) continue;
    UnionFind uf = coupled;
    for (int start = 0; start < n; start += b)
      for (int i = start + 1; i < start + b; ++i) uf.unite(start, i);
    bool ok = true;
    for (const std::vector<int>& dofs : touched) {
      int first = -1, second = -1;
      for (int d : dofs) {
        const int root = uf.find(d);
        if (root == first || root == second) continue;
        if (first < 0) {
          first = root;
        } else if (second < 0) {
          second = root;
        } else {
          ok = false;
          break;
        }
      }
      if (!ok) break;
    }
    if (!ok) continue;
    GlobalContactTrees trees;
    trees.block_size = b;
    trees.tree_of_dof.assign(static_cast<size_t>(n), -1);
    std::vector<int> tree_of_root(static_cast<size_t>(n), -1);
    for (int i = 0; i < n; ++i) {
      const int root = uf.find(i);
      if (tree_of_root[root] < 0) {
        tree_of_root[root] = static_cast<int>(trees.dofs.size());
        trees.dofs.emplace_back();
      }
      trees.tree_of_dof[i] = tree_of_root[root];
      trees.dofs[tree_of_root[root]].push_back(i);
    }
    return trees;
  }
  throw std::logic_error("partition_global_contact_dofs: no block size found");  // b = n always works
}

SapGlobalContactSolution solve_global_contact_with_sap(const GlobalContactProblem& p,
                                                       const SapGlobalContactParameters& parameters) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  check_global_contact_problem(p, "");
  const int n = p.num_dofs(), nc = p.num_contacts();
  for (int i = 0; i < nc; ++i)
    if (p.w[3 * i + 1] != 0.0 || p.w[3 * i + 2] != 0.0)
      throw std::invalid_argument("contact " + std::to_string(i) + ": tangential bias w_T = (" +
                                  util::format_number(p.w[3 * i + 1]) + ", " + util::format_number(p.w[3 * i + 2]) +
                                  ") is not zero; SAP's friction cone has no tangential bias (v_hat_t = 0, "
                                  "Castro et al. Sec. V)");

  const GlobalContactTrees trees = partition_global_contact_dofs(p);
  const int num_trees = static_cast<int>(trees.dofs.size());
  // SAP orders the velocities tree by tree: position of global DOF d in SAP's v, and its index
  // inside its tree.
  std::vector<int> sap_index(static_cast<size_t>(n)), local_index(static_cast<size_t>(n));
  {
    int k = 0;
    for (const std::vector<int>& dofs : trees.dofs)
      for (size_t j = 0; j < dofs.size(); ++j) {
        sap_index[dofs[j]] = k++;
        local_index[dofs[j]] = static_cast<int>(j);
      }
  }

  // A = M block by block, v* = M⁻¹ f.
  std::vector<Eigen::MatrixXd> A_blocks(static_cast<size_t>(num_trees));
  for (int t = 0; t < num_trees; ++t) {
    const int size = static_cast<int>(trees.dofs[t].size());
    A_blocks[t] = Eigen::MatrixXd::Zero(size, size);
  }
  for (int k = 0; k < p.M.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(p.M, k); it; ++it) {
      const int row = static_cast<int>(it.row()), col = static_cast<int>(it.col());
      A_blocks[trees.tree_of_dof[row]](local_index[row], local_index[col]) += it.value();
    }
  // v* = M⁻¹ f with each block as stored (LU), and A = ½(M + Mᵀ): SAP's cost only sees the
  // symmetric part, and FCLIB's FEM problems have an asymmetric M (|M − Mᵀ| ~ 1.5e-7 |M|). With v*
  // from the stored M, the momentum equation M v = H r + f is off by (M − Mᵀ)(v − v*)/2 only.
  Eigen::VectorXd v_star(n);
  for (int t = 0; t < num_trees; ++t) {
    const std::vector<int>& dofs = trees.dofs[t];
    Eigen::VectorXd f_t(dofs.size());
    for (size_t j = 0; j < dofs.size(); ++j) f_t[static_cast<Eigen::Index>(j)] = p.f[dofs[j]];
    const Eigen::VectorXd v_t = A_blocks[t].partialPivLu().solve(f_t);
    A_blocks[t] = (0.5 * (A_blocks[t] + A_blocks[t].transpose())).eval();
    Eigen::LLT<Eigen::MatrixXd> llt(A_blocks[t]);
    if (llt.info() != Eigen::Success || !v_t.allFinite())
      throw std::invalid_argument("M is not positive definite: its diagonal block of DOFs " + std::to_string(dofs.front()) +
                                  ".." + std::to_string(dofs.back()) + " (" + std::to_string(dofs.size()) +
                                  " DOFs) has no Cholesky factorization");
    for (size_t j = 0; j < dofs.size(); ++j) v_star[sap_index[dofs[j]]] = v_t[static_cast<Eigen::Index>(j)];
  }
  const double time_step = 1.0;  // any δt > 0: see the header
  SapProblem problem(time_step, A_blocks, v_star);

  // One friction cone per contact: J rows [t1, t2, n] = H columns [3i+1, 3i+2, 3i], transposed.
  static constexpr int kSapRowOfFclibComponent[3] = {2, 0, 1};  // FCLIB N, T1, T2 → SAP row
  std::vector<int> constraint_of_contact(static_cast<size_t>(nc), -1);
  for (int i = 0; i < nc; ++i) {
    int trees_of_contact[2] = {-1, -1};
    for (int c = 0; c < 3; ++c)
      for (Eigen::SparseMatrix<double>::InnerIterator it(p.H, 3 * i + c); it; ++it) {
        if (it.value() == 0.0) continue;
        const int t = trees.tree_of_dof[it.row()];
        if (t == trees_of_contact[0] || t == trees_of_contact[1]) continue;
        (trees_of_contact[0] < 0 ? trees_of_contact[0] : trees_of_contact[1]) = t;
      }
    if (trees_of_contact[0] < 0) continue;  // H has no entry for this contact: u = w, nothing to solve
    Eigen::MatrixXd J[2];
    for (int k = 0; k < 2; ++k)
      if (trees_of_contact[k] >= 0) J[k] = Eigen::MatrixXd::Zero(3, static_cast<Eigen::Index>(trees.dofs[trees_of_contact[k]].size()));
    for (int c = 0; c < 3; ++c)
      for (Eigen::SparseMatrix<double>::InnerIterator it(p.H, 3 * i + c); it; ++it) {
        const int row = static_cast<int>(it.row());
        const int k = trees.tree_of_dof[row] == trees_of_contact[0] ? 0 : 1;
        J[k](kSapRowOfFclibComponent[c], local_index[row]) += it.value();
      }
    FrictionConeParameters cone;
    cone.mu = p.mu[i];
    cone.stiffness = std::numeric_limits<double>::infinity();
    cone.dissipation_time = 0.0;
    cone.phi0 = p.w[3 * i] * time_step;  // v̂_n = −φ₀/δt = −w_N
    cone.regularization = parameters.regularization;
    constraint_of_contact[i] = problem.add_constraint(std::make_unique<SapFrictionConeConstraint>(
        cone, trees_of_contact[0], std::move(J[0]), trees_of_contact[1], std::move(J[1])));
  }

  SapGlobalContactSolution out;
  out.num_trees = num_trees;
  out.block_size = trees.block_size;
  const auto t1 = Clock::now();
  out.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  const SapSolver solver(parameters.solver);
  const SapSolverResults results = solver.solve(problem, v_star);
  out.solve_seconds = std::chrono::duration<double>(Clock::now() - t1).count();

  out.status = results.status;
  out.iterations = results.iterations;
  out.momentum_error = results.momentum_error;
  out.v.resize(n);
  for (int d = 0; d < n; ++d) out.v[d] = results.v[sap_index[d]];
  out.r = Eigen::VectorXd::Zero(3 * nc);
  for (int i = 0; i < nc; ++i) {
    if (constraint_of_contact[i] < 0) continue;
    const int row = problem.row_start(constraint_of_contact[i]);
    for (int c = 0; c < 3; ++c) out.r[3 * i + c] = results.gamma[row + kSapRowOfFclibComponent[c]];
  }
  out.u = local_velocity(p, out.v);
  return out;
}

}  // namespace coulomb::solvers::sap
