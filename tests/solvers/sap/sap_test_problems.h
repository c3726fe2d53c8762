// Random SAP problems for the solver tests (digest §7 test 8: near-rigid, n_v 30–70,
// n_c 20–100).
#pragma once

#include <cmath>
#include <limits>

#include <memory>
#include <random>

#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_problem.h"
#include "test_models.h"

namespace coulomb::testing {

inline Eigen::MatrixXd random_spd(std::mt19937& rng, int n, double scale = 1.0) {
  std::normal_distribution<double> N(0.0, 1.0);
  Eigen::MatrixXd Q(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) Q(i, j) = N(rng);
  return scale * (Q.transpose() * Q / n + 0.1 * Eigen::MatrixXd::Identity(n, n));
}

/// Trees of 3–9 velocities up to ~nv_target, n_c contacts between one or two random trees with
/// Gaussian Jacobian blocks, near-rigid contacts (k = ∞, τ_d = 0), μ ∈ [0.1, 1.5],
/// φ₀ ∈ [−2 mm, 1 mm], v* Gaussian. `mu`, when given, is every contact's μ instead.
inline std::unique_ptr<solvers::sap::SapProblem> random_sap_problem(std::mt19937& rng, int nv_target, int num_contacts,
                                                                    double time_step = 0.01,
                                                                    double mu = std::numeric_limits<double>::quiet_NaN()) {
  std::uniform_int_distribution<int> tree_size(3, 9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> N(0.0, 1.0);
  std::vector<Eigen::MatrixXd> A;
  int nv = 0;
  while (nv < nv_target) {
    const int n = std::min(tree_size(rng), std::max(1, nv_target - nv));
    A.push_back(random_spd(rng, n, 0.5 + 2.0 * u(rng)));
    nv += n;
  }
  Eigen::VectorXd v_star(nv);
  for (int i = 0; i < nv; ++i) v_star[i] = N(rng);
  auto problem = std::make_unique<solvers::sap::SapProblem>(time_step, A, v_star);
  const int T = static_cast<int>(A.size());
  std::uniform_int_distribution<int> pick(0, T - 1);
  for (int i = 0; i < num_contacts; ++i) {
    solvers::sap::FrictionConeParameters p;
    p.mu = 0.1 + 1.4 * u(rng);
    if (!std::isnan(mu)) p.mu = mu;
    p.stiffness = std::numeric_limits<double>::infinity();
    p.dissipation_time = 0.0;
    p.phi0 = -2e-3 + 3e-3 * u(rng);
    const int t1 = pick(rng);
    int t2 = pick(rng);
    auto block = [&](int t) {
      Eigen::MatrixXd J(3, A[t].rows());
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < J.cols(); ++c) J(r, c) = N(rng);
      return J;
    };
    if (t2 == t1 || u(rng) < 0.3) {
      problem->add_constraint(std::make_unique<solvers::sap::SapFrictionConeConstraint>(p, t1, block(t1)));
    } else {
      problem->add_constraint(std::make_unique<solvers::sap::SapFrictionConeConstraint>(p, t1, block(t1), t2, block(t2)));
    }
  }
  return problem;
}

}  // namespace coulomb::testing
