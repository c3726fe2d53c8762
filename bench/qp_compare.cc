// qp_compare: solvers/qp's ConicQpSolver against ProxQP (dense, from the proxsuite package) on
// the QPs solvers/lstable builds without friction cones (ProxQP has no second-order cones):
//
//   minimize ½ γᵀ(W + R)γ + (J v* − v̂)ᵀγ  s.t. γ_i ≥ 0 (contacts without friction, limits),
//   |γ_i| ≤ b_i (effort-limited PD rows, joint friction), the other rows free (couplers),
//
// W = J A⁻¹ Jᵀ with A an SPD "mass matrix" of nv = rows/2 dofs and cond(A) = mass_ratio, R from
// compliances (10⁻⁴…10⁻¹ W_ii) and rigid rows (W_ii / 4π², solvers/lstable's
// rigid_compliance_factor). Rows n = 12, 30, 100, 300; 60 % orthant, 25 % box, 15 % free.
//
// It is NOT part of the project build (the project does not depend on proxsuite; docs/solvers.md,
// "solvers/qp: our interior point or ProxQP", records the measurement and the decision). Built and
// run by hand, with proxsuite 0.8.0 installed from the Python package index into a throwaway
// virtual environment (its wheel ships the C++ headers under site-packages/cmeel.prefix/include;
// the dense solver is header-only and needs Eigen 3.4 only, simde only for the vectorized build):
//
//   python3 -m venv /tmp/venv && /tmp/venv/bin/pip install proxsuite==0.8.0
//   PX=$(echo /tmp/venv/lib/python3*/site-packages/cmeel.prefix/include)
//   g++ -std=c++20 -O2 -DNDEBUG -I include -I /usr/include/eigen3 -I $PX \
//       bench/qp_compare.cc src/solvers/qp/conic_qp.cc -o /tmp/qp_compare
//   /tmp/qp_compare
//
// For ProxQP's SIMD build add -march=native -DPROXSUITE_VECTORIZE (needs libsimde-dev; -march
// changes our solver's code too, as Eigen vectorizes with it). Results and the decision:
// docs/solvers.md, "solvers/qp: our interior point or ProxQP".
//
// -O2 -DNDEBUG are the project's Release flags. Accuracy: every solution is compared with a
// reference (ConicQpSolver at tolerance 1e-12, cross-checked against Ipopt by
// tests/oracle/conic_qp_ipopt_oracle_test.cc) in x and in the objective; times are the median over
// repetitions of one cold solve of a new problem (ProxQP: init, which includes its Ruiz
// equilibration and factorization, plus solve; ours: solve), single thread.
#include <proxsuite/proxqp/dense/dense.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/solvers/qp/conic_qp.h"

namespace {

using coulomb::solvers::qp::ConicQp;
using coulomb::solvers::qp::ConicQpSolver;
using coulomb::solvers::qp::ConicQpStatus;

struct Problem {
  Eigen::MatrixXd P;
  Eigen::VectorXd q, lo, hi;  // lo ≤ γ ≤ hi (±∞ where free)
  std::vector<int> orthant, box;
};

Problem make_problem(std::mt19937& rng, int n, double mass_ratio) {
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const int nv = std::max(3, n / 2);
  Eigen::MatrixXd J(n, nv), B(nv, nv);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < nv; ++j) J(i, j) = N(rng);
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) B(i, j) = N(rng);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(B);
  const Eigen::MatrixXd Q = qr.householderQ();
  Eigen::VectorXd eig(nv);
  for (int i = 0; i < nv; ++i) eig[i] = std::pow(mass_ratio, -static_cast<double>(i) / (nv - 1));
  const Eigen::MatrixXd A = Q * eig.asDiagonal() * Q.transpose();
  Eigen::MatrixXd W = J * A.llt().solve(J.transpose());
  W = 0.5 * (W + W.transpose());
  Problem p;
  p.P = W;
  for (int i = 0; i < n; ++i)
    p.P(i, i) += U(rng) < 0.3 ? W(i, i) / (4.0 * M_PI * M_PI) : std::pow(10.0, -4.0 + 3.0 * U(rng)) * W(i, i);
  Eigen::VectorXd v_star(nv);
  for (int j = 0; j < nv; ++j) v_star[j] = N(rng);
  p.q = J * v_star;
  for (int i = 0; i < n; ++i) p.q[i] -= 0.3 * N(rng);
  p.lo = Eigen::VectorXd::Constant(n, -std::numeric_limits<double>::infinity());
  p.hi = Eigen::VectorXd::Constant(n, std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i) {
    const double u = U(rng);
    if (u < 0.6) {
      p.orthant.push_back(i);
      p.lo[i] = 0.0;
    } else if (u < 0.85) {
      p.box.push_back(i);
      const double b = 0.05 + U(rng);
      p.lo[i] = -b;
      p.hi[i] = b;
    }
  }
  return p;
}

// The problem as solvers/lstable writes it: G = −I on the orthant rows, ±I on the box rows.
ConicQp to_conic(const Problem& p) {
  const int n = static_cast<int>(p.q.size());
  const int l = static_cast<int>(p.orthant.size() + 2 * p.box.size());
  ConicQp c;
  c.resize(n, l, {});
  c.P = p.P;
  c.q = p.q;
  int m = 0;
  for (int i : p.orthant) c.G(m++, i) = -1.0;
  for (int i : p.box) {
    c.G(m, i) = 1.0;
    c.h[m++] = p.hi[i];
    c.G(m, i) = -1.0;
    c.h[m++] = -p.lo[i];
  }
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double time_us(F&& f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(t);
}

struct Row {
  double time = 0, x_err = 0, f_err = 0;
  int iterations = 0, failures = 0;
};

void add(Row& r, double t, const Eigen::VectorXd& x, const Eigen::VectorXd& x_ref, double f, double f_ref, int it,
         bool ok) {
  r.time += t;
  r.x_err = std::max(r.x_err, (x - x_ref).norm() / std::max(x_ref.norm(), 1e-12));
  r.f_err = std::max(r.f_err, std::abs(f - f_ref) / std::max(std::abs(f_ref), 1e-12));
  r.iterations = std::max(r.iterations, it);
  r.failures += ok ? 0 : 1;
}

}  // namespace

int main() {
  namespace pq = proxsuite::proxqp;
  const int kProblems = 5;
  std::printf("ConicQpSolver vs ProxQP %s (dense); lstable-like QPs without cones, %d problems per size;\n"
              "time = mean over problems of the median of repeated cold solves [us]; x_err, f_err = max relative\n"
              "difference to the reference (ConicQpSolver, tolerance 1e-12); it = max iterations.\n\n",
              PROXSUITE_VERSION, kProblems);
  for (double mass_ratio : {1e2, 1e6}) {
    std::printf("cond(A) = %.0e\n", mass_ratio);
    std::printf("%5s | %-30s | %-30s | %-30s | %-30s\n", "rows", "ours tol 1e-10", "ours tol 1e-7",
                "ProxQP box eps_abs 1e-9", "ProxQP box eps_abs 1e-6");
    for (int n : {12, 30, 100, 300}) {
      std::mt19937 rng(1000 + n);
      const int reps = n <= 30 ? 200 : (n <= 100 ? 30 : 5);
      Row ours10, ours7, prox9, prox6;
      for (int k = 0; k < kProblems; ++k) {
        const Problem p = make_problem(rng, n, mass_ratio);
        const ConicQp c = to_conic(p);
        auto f = [&](const Eigen::VectorXd& x) { return 0.5 * x.dot(p.P * x) + p.q.dot(x); };
        ConicQpSolver ref;
        ref.mutable_parameters().tolerance = 1e-12;
        ref.mutable_parameters().max_iterations = 100;
        const Eigen::VectorXd x_ref = ref.solve(c).x;
        const double f_ref = f(x_ref);
        for (auto [tol, row] : {std::pair{1e-10, &ours10}, std::pair{1e-7, &ours7}}) {
          ConicQpSolver s;
          s.mutable_parameters().tolerance = tol;
          const double t = time_us([&] { s.solve(c); }, reps);
          add(*row, t, s.results().x, x_ref, f(s.results().x), f_ref, s.results().iterations,
              s.results().status == ConicQpStatus::kOptimal);
        }
        for (auto [eps, row] : {std::pair{1e-9, &prox9}, std::pair{1e-6, &prox6}}) {
          Eigen::VectorXd x;
          int it = 0;
          bool ok = false;
          const double t = time_us(
              [&] {
                pq::dense::QP<double> qp(n, 0, 0, true);
                qp.settings.eps_abs = eps;
                qp.settings.eps_rel = 0.0;
                qp.settings.max_iter = 100000;
                qp.init(p.P, p.q, proxsuite::nullopt, proxsuite::nullopt, proxsuite::nullopt, proxsuite::nullopt, proxsuite::nullopt, p.lo, p.hi);
                qp.solve();
                x = qp.results.x;
                it = static_cast<int>(qp.results.info.iter);
                ok = qp.results.info.status == pq::QPSolverOutput::PROXQP_SOLVED;
              },
              reps);
          add(*row, t, x, x_ref, f(x), f_ref, it, ok);
        }
      }
      auto cell = [&](const Row& r) {
        static char buf[8][64];
        static int i = 0;
        char* b = buf[i++ % 8];
        std::snprintf(b, 64, "%8.1f it %3d x %.0e f %.0e%s", r.time / kProblems, r.iterations, r.x_err, r.f_err,
                      r.failures ? " F" : "");
        return b;
      };
      std::printf("%5d | %-30s | %-30s | %-30s | %-30s\n", n, cell(ours10), cell(ours7), cell(prox9), cell(prox6));
    }
    std::printf("\n");
  }
  return 0;
}
