// FCLIB files (io/fclib_reader.h) and what SAP (solvers/sap/sap_global_contact.h) and Siconos
// (solvers/siconos_global_contact.h) make of them. Truths: the sizes of ../shared/fclib/README.md;
// hand-made problems written with libfclib's own fclib_write_global whose answers are known in
// closed form (a box resting or pushed on a plane); the Moreau decomposition for the cone
// projection.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

extern "C" {
#include <fclib.h>
}

#include "coulomb/io/fclib_reader.h"
#include "coulomb/solvers/global_contact_problem.h"
#include "coulomb/solvers/sap/sap_global_contact.h"
#include "coulomb/solvers/siconos_global_contact.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;
using solvers::GlobalContactProblem;

const std::string kFclibDir = std::string(COULOMB_SHARED_DIR) + "/fclib/";

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("coulomb_fclib_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Writes a global problem with libfclib directly (triplet matrices, CSparse: i rows, p columns),
// bypassing coulomb's checks so that bad data can reach the file.
struct RawGlobal {
  int n = 3, m = 3;            // rows of M (= rows of H), columns of H
  int H_rows = -1;             // -1: n
  std::vector<int> M_i, M_j;   // triplets
  std::vector<double> M_x;
  std::vector<int> H_i, H_j;
  std::vector<double> H_x;
  std::vector<double> f, w, mu;
  int spacedim = 3;
};

void write_raw(const RawGlobal& g, const std::string& path) {
  fs::remove(path);
  auto matrix = [](int rows, int cols, std::vector<int> i, std::vector<int> j, std::vector<double> x,
                   std::vector<int>& si, std::vector<int>& sp, std::vector<double>& sx) {
    si = std::move(i);
    sp = std::move(j);
    sx = std::move(x);
    fclib_matrix a{};
    a.nzmax = static_cast<int>(sx.size());
    a.m = rows;
    a.n = cols;
    a.p = sp.data();
    a.i = si.data();
    a.x = sx.data();
    a.nz = static_cast<int>(sx.size());
    a.info = nullptr;
    return a;
  };
  std::vector<int> Mi, Mp, Hi, Hp;
  std::vector<double> Mx, Hx;
  fclib_matrix M = matrix(g.n, g.n, g.M_i, g.M_j, g.M_x, Mi, Mp, Mx);
  fclib_matrix H = matrix(g.H_rows < 0 ? g.n : g.H_rows, g.m, g.H_i, g.H_j, g.H_x, Hi, Hp, Hx);
  std::vector<double> f = g.f, w = g.w, mu = g.mu;
  fclib_global problem{};
  problem.M = &M;
  problem.H = &H;
  problem.G = nullptr;
  problem.mu = mu.data();
  problem.f = f.data();
  problem.b = nullptr;
  problem.w = w.data();
  problem.spacedim = g.spacedim;
  problem.info = nullptr;
  ASSERT_EQ(fclib_write_global(&problem, path.c_str()), 1);
}

// A box of mass m (its three translational DOFs) resting on the plane z = 0, one contact with
// normal e_z and tangents e_x, e_y, gravity g, a horizontal push F over one step δt from rest:
//   M = m I,  H = [e_z e_x e_y] (normal first),  f = δt (F, 0, −m g),  w = 0.
constexpr double kMass = 2.0, kG = 9.81, kDt = 0.01, kMu = 0.5;

RawGlobal box_on_plane(double push) {
  RawGlobal g;
  g.M_i = {0, 1, 2};
  g.M_j = {0, 1, 2};
  g.M_x = {kMass, kMass, kMass};
  g.H_i = {2, 0, 1};  // column 0 (N) = e_z, column 1 (T1) = e_x, column 2 (T2) = e_y
  g.H_j = {0, 1, 2};
  g.H_x = {1.0, 1.0, 1.0};
  g.f = {kDt * push, 0.0, -kDt * kMass * kG};
  g.w = {0.0, 0.0, 0.0};
  g.mu = {kMu};
  return g;
}

struct Sizes {
  const char* file;
  int contacts, dofs;
};

// ../shared/fclib/README.md's table (M n_v × n_v, H n_v × 3 n_c).
TEST(FclibReaderTest, EveryGlobalFileHasTheReadmeSizes) {
  const Sizes table[] = {{"Box_Stacks-i0122-82-5.hdf5", 82, 450},
                         {"spheres-in-a-box-98-i10000-256-10.hdf5", 256, 588},
                         {"Spheres-i099-356-679.hdf5", 356, 12000},
                         {"CubeH8.hdf5", 1, 162},
                         {"LMGC_GlobalFrictionContactProblem00046.hdf5", 9, 162}};
  for (const Sizes& s : table) {
    const std::string path = kFclibDir + s.file;
    EXPECT_EQ(fclib_problem_kind(path), FclibProblemKind::kGlobal) << s.file;
    const FclibGlobalFile file = read_fclib_global(path);
    const GlobalContactProblem& p = file.problem;
    EXPECT_EQ(p.num_contacts(), s.contacts) << s.file;
    EXPECT_EQ(p.num_dofs(), s.dofs) << s.file;
    EXPECT_EQ(p.M.rows(), s.dofs);
    EXPECT_EQ(p.M.cols(), s.dofs);
    EXPECT_EQ(p.H.rows(), s.dofs);
    EXPECT_EQ(p.H.cols(), 3 * s.contacts);
    EXPECT_EQ(p.w.size(), 3 * s.contacts);
    EXPECT_EQ(p.f.size(), s.dofs);
    EXPECT_GT(p.H.nonZeros(), 0);
  }
  // Box_Stacks: μ = 0.3 everywhere and M diagonal (the README).
  const FclibGlobalFile box = read_fclib_global(kFclibDir + "Box_Stacks-i0122-82-5.hdf5");
  EXPECT_DOUBLE_EQ(box.problem.mu.minCoeff(), 0.3);
  EXPECT_DOUBLE_EQ(box.problem.mu.maxCoeff(), 0.3);
  EXPECT_EQ(box.problem.M.nonZeros(), 450);
  for (int k = 0; k < box.problem.M.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(box.problem.M, k); it; ++it) EXPECT_EQ(it.row(), it.col());
  ASSERT_TRUE(box.solution.has_value());
  EXPECT_EQ(box.solution->v.size(), 450);
  EXPECT_EQ(box.solution->r.size(), 246);
}

TEST(FclibReaderTest, LocalProblemsAreDetectedAndReadButNotSolved) {
  const std::string path = kFclibDir + "local_problem_test.hdf5";
  EXPECT_EQ(fclib_problem_kind(path), FclibProblemKind::kLocal);
  try {
    read_fclib_global(path);
    FAIL() << "a local problem was read as a global one";
  } catch (const FclibError& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
    EXPECT_TRUE(contains(e.what(), "local problem")) << e.what();
    EXPECT_TRUE(contains(e.what(), "not supported")) << e.what();
  }
  // README: 48 contacts, W 144 × 144, μ = 0.7, a solution.
  const FclibLocalFile local = read_fclib_local(path);
  EXPECT_EQ(local.W.rows(), 144);
  EXPECT_EQ(local.W.cols(), 144);
  EXPECT_EQ(local.mu.size(), 48);
  EXPECT_DOUBLE_EQ(local.mu.maxCoeff(), 0.7);
  ASSERT_TRUE(local.solution.has_value());
  EXPECT_EQ(local.solution->r.size(), 144);
}

TEST(FclibReaderTest, BadFilesNameTheFileAndField) {
  const fs::path dir = temp_dir();
  auto expect_error = [](const std::string& path, const std::vector<std::string>& parts) {
    try {
      read_fclib_global(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const FclibError& e) {
      EXPECT_TRUE(contains(e.what(), path)) << e.what();
      for (const std::string& part : parts) EXPECT_TRUE(contains(e.what(), part)) << e.what();
    }
  };
  expect_error((dir / "missing.hdf5").string(), {"file not found"});
  std::ofstream(dir / "text.hdf5") << "not an hdf5 file\n";
  expect_error((dir / "text.hdf5").string(), {"not an HDF5 file"});

  RawGlobal negative_mu = box_on_plane(0.0);
  negative_mu.mu = {-0.5};
  write_raw(negative_mu, (dir / "mu.hdf5").string());
  expect_error((dir / "mu.hdf5").string(), {"mu[0]", "negative", "-0.5"});

  RawGlobal nan_f = box_on_plane(0.0);
  nan_f.f[1] = std::nan("");
  write_raw(nan_f, (dir / "nan.hdf5").string());
  expect_error((dir / "nan.hdf5").string(), {"f[1]", "not finite", "nan"});

  RawGlobal wrong_rows = box_on_plane(0.0);
  wrong_rows.H_rows = 4;
  write_raw(wrong_rows, (dir / "rows.hdf5").string());
  expect_error((dir / "rows.hdf5").string(), {"/fclib_global/H/m", "is 4, expected 3"});

  RawGlobal outside = box_on_plane(0.0);
  outside.H_i[0] = 7;  // row 7 of a 3-row H
  write_raw(outside, (dir / "outside.hdf5").string());
  expect_error((dir / "outside.hdf5").string(), {"/fclib_global/H", "(7, 0)", "outside"});

  RawGlobal two_d = box_on_plane(0.0);
  two_d.spacedim = 2;
  two_d.m = 4;  // two 2-D contacts (libfclib's writer needs the columns divisible by spacedim)
  two_d.w = {0.0, 0.0, 0.0, 0.0};
  two_d.mu = {kMu, kMu};
  write_raw(two_d, (dir / "2d.hdf5").string());
  expect_error((dir / "2d.hdf5").string(), {"/fclib_global/spacedim", "is 2"});
  fs::remove_all(dir);
}

TEST(FclibReaderTest, WriteThenReadRoundTrips) {
  const fs::path dir = temp_dir();
  const std::string path = (dir / "round.hdf5").string();
  write_raw(box_on_plane(3.0), path);
  const GlobalContactProblem a = read_fclib_global(path).problem;
  FclibSolution solution{Eigen::Vector3d(1, 2, 3), Eigen::Vector3d(4, 5, 6), Eigen::Vector3d(7, 8, 9)};
  const std::string copy = (dir / "copy.hdf5").string();
  write_fclib_global(a, copy, FclibInfo{"box", "one box on a plane", ""}, &solution);
  const FclibGlobalFile b = read_fclib_global(copy);
  EXPECT_EQ(b.info.title, "box");
  EXPECT_EQ((Eigen::MatrixXd(a.M) - Eigen::MatrixXd(b.problem.M)).norm(), 0.0);
  EXPECT_EQ((Eigen::MatrixXd(a.H) - Eigen::MatrixXd(b.problem.H)).norm(), 0.0);
  EXPECT_EQ((a.f - b.problem.f).norm(), 0.0);
  EXPECT_EQ((a.mu - b.problem.mu).norm(), 0.0);
  ASSERT_TRUE(b.solution.has_value());
  EXPECT_EQ(b.solution->v, solution.v);
  EXPECT_EQ(b.solution->u, solution.u);
  EXPECT_EQ(b.solution->r, solution.r);
  fs::remove_all(dir);
}

// Moreau: x = P_C(x) + P_{−C*}(x) with P_C(x) ∈ C, x − P_C(x) ∈ −C* and the two orthogonal.
TEST(GlobalContactProblemTest, ConeProjectionIsTheMoreauDecomposition) {
  std::mt19937 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int k = 0; k < 2000; ++k) {
    const double mu = k % 10 == 0 ? 0.0 : std::abs(n(rng));
    const Eigen::Vector3d x(n(rng), n(rng), n(rng));
    const Eigen::Vector3d p = solvers::project_onto_friction_cone(x, mu), d = x - p;
    EXPECT_LE(std::hypot(p[1], p[2]), mu * p[0] + 1e-12);
    EXPECT_LE(mu * std::hypot(d[1], d[2]), -d[0] + 1e-12);
    EXPECT_NEAR(p.dot(d), 0.0, 1e-12);
  }
}

GlobalContactProblem read_box(double push, const fs::path& dir) {
  const std::string path = (dir / "box.hdf5").string();
  write_raw(box_on_plane(push), path);
  return read_fclib_global(path).problem;
}

// Static friction holds: F = 0.3 μ m g < μ m g. Exact: v = 0, r_N = m g δt, r_T1 = −F δt.
TEST(SapGlobalContactTest, StickingBoxHasTheAnalyticImpulses) {
  const fs::path dir = temp_dir();
  const double push = 0.3 * kMu * kMass * kG;
  const GlobalContactProblem p = read_box(push, dir);
  const Eigen::Vector3d r_exact(kMass * kG * kDt, -push * kDt, 0.0);
  // The exact solution has zero residuals (the residual's own check).
  const solvers::CoulombResiduals exact = solvers::coulomb_residuals(p, Eigen::Vector3d::Zero(), r_exact);
  EXPECT_LT(exact.complementarity, 1e-16);
  EXPECT_LT(exact.equation, 1e-16);

  const solvers::sap::SapGlobalContactSolution s = solvers::sap::solve_global_contact_with_sap(p);
  ASSERT_EQ(s.status, solvers::sap::SapSolverStatus::kSuccess);
  // Near-rigid regularization: u = −R r with R_n = β² w/(4π²), R_t = σ w, w = 1/(√3 m) (β = 0.01,
  // σ = 1e-6), so r is exact to ~R m = 1.5e-6 relative.
  EXPECT_NEAR(s.r[0], r_exact[0], 1e-5 * r_exact[0]);
  EXPECT_NEAR(s.r[1], r_exact[1], 1e-5 * r_exact[0]);
  EXPECT_NEAR(s.r[2], 0.0, 1e-12);
  // The velocities SAP leaves are those of its regularization, u = −R γ (Castro et al. Eq. 23 in
  // stiction): v_z = −R_n r_N, v_x = −R_t r_T with w = ‖W‖_F/3 = 1/(√3 m).
  const double w = 1.0 / (std::sqrt(3.0) * kMass), beta = 0.01, sigma = 1e-6;
  const double Rn = beta * beta * w / (4.0 * std::numbers::pi * std::numbers::pi), Rt = sigma * w;
  EXPECT_NEAR(s.v[2], -Rn * r_exact[0], 1e-3 * Rn * r_exact[0]);
  EXPECT_NEAR(s.v[0], -Rt * r_exact[1], 1e-3 * Rt * std::abs(r_exact[1]));
  const solvers::CoulombResiduals res = solvers::coulomb_residuals(p, s.v, s.r);
  // In the cone's interior (r − ũ ∈ C) the natural map is ũ itself: the residual is ‖ũ‖/(1 + ‖f‖),
  // ũ = u + μ‖u_T‖ e_N.
  Eigen::Vector3d u_tilde = s.u;
  u_tilde[0] += kMu * std::hypot(s.u[1], s.u[2]);
  EXPECT_NEAR(res.complementarity, u_tilde.norm() / (1.0 + p.f.norm()), 1e-6 * u_tilde.norm());
  EXPECT_LT(res.equation, 1e-12);
  EXPECT_EQ(res.sliding_contacts, 0);

  // Siconos agrees with the analytic answer, and with SAP to SAP's regularization.
  for (solvers::SiconosSolver solver : {solvers::SiconosSolver::kNsgs, solvers::SiconosSolver::kNewtonAlartCurnier}) {
    const solvers::SiconosSolution q = solvers::solve_global_contact_with_siconos(p, solver);
    EXPECT_EQ(q.info, 0) << solvers::to_string(solver);
    EXPECT_NEAR((q.r - r_exact).norm(), 0.0, 1e-9 * r_exact.norm()) << solvers::to_string(solver);
    EXPECT_LT((q.r - s.r).norm(), 1e-5 * r_exact.norm()) << solvers::to_string(solver);
    EXPECT_LT(q.v.norm(), 1e-9);
  }
  fs::remove_all(dir);
}

// Pushed past the friction limit, F = 2 μ m g. Exact Coulomb: the box slides on the plane,
// u_N = v_z = 0, r_N = m g δt, v_x = (F − μ m g) δt / m. SAP's convex relaxation instead puts r on
// the cone's wall with u ⊥ r, i.e. u_N = μ u_T: the box lifts off at v_z = μ v_x, and
// m v_z = r_N − m g δt, m v_x = F δt − μ r_N give v_x = (F − μ m g) δt / (m (1 + μ²)).
TEST(SapGlobalContactTest, SlidingBoxShowsTheRelaxationGap) {
  const fs::path dir = temp_dir();
  const double push = 2.0 * kMu * kMass * kG;
  const GlobalContactProblem p = read_box(push, dir);
  const double vx_exact = (push - kMu * kMass * kG) * kDt / kMass;
  const Eigen::Vector3d v_exact(vx_exact, 0.0, 0.0), r_exact(kMass * kG * kDt, -kMu * kMass * kG * kDt, 0.0);
  const solvers::CoulombResiduals exact = solvers::coulomb_residuals(p, v_exact, r_exact);
  EXPECT_LT(exact.complementarity, 1e-16);
  EXPECT_LT(exact.equation, 1e-16);

  const solvers::sap::SapGlobalContactSolution s = solvers::sap::solve_global_contact_with_sap(p);
  ASSERT_EQ(s.status, solvers::sap::SapSolverStatus::kSuccess);
  const double vx_relaxed = vx_exact / (1.0 + kMu * kMu);
  EXPECT_NEAR(s.v[0], vx_relaxed, 1e-5 * vx_relaxed);
  EXPECT_NEAR(s.v[2], kMu * s.v[0], 1e-5 * vx_relaxed);  // u_N = μ ‖u_T‖: the gap
  EXPECT_NEAR(s.u[0], kMu * std::hypot(s.u[1], s.u[2]), 1e-5 * vx_relaxed);
  EXPECT_NEAR(s.r[1], -kMu * s.r[0], 1e-9 * s.r[0]);  // on the cone's wall
  const solvers::CoulombResiduals res = solvers::coulomb_residuals(p, s.v, s.r);
  EXPECT_EQ(res.sliding_contacts, 1);
  EXPECT_NEAR(res.normal_gap, kMu * vx_relaxed, 1e-5 * vx_relaxed);
  // What SAP cannot match: the exact law's residual stays at the size of the gap (here the
  // natural map's normal component, r_N − (r_N − 2 μ u_T projected) …, of order μ u_T / (1 + |f|)),
  // far above the solvers' tolerance, while Siconos solves the exact law.
  EXPECT_GT(res.complementarity, 0.1 * res.normal_gap / (1.0 + p.f.norm()));
  const solvers::SiconosSolution q = solvers::solve_global_contact_with_siconos(p, solvers::SiconosSolver::kNewtonAlartCurnier);
  EXPECT_EQ(q.info, 0);
  EXPECT_NEAR((q.v - v_exact).norm(), 0.0, 1e-8 * vx_exact);
  EXPECT_NEAR((q.r - r_exact).norm(), 0.0, 1e-8 * r_exact.norm());
  EXPECT_LT(solvers::coulomb_residuals(p, q.v, q.r).complementarity, 1e-8);
  fs::remove_all(dir);
}

// Two boxes (3 DOFs each, M diagonal) stacked on the plane: contact 0 box 0–ground, contact 1
// box 1 on box 0. Trees must be such that every contact touches at most two of them.
TEST(SapGlobalContactTest, TreesSeparateTheBodies) {
  GlobalContactProblem p;
  p.M = Eigen::SparseMatrix<double>(6, 6);
  p.M.setIdentity();
  p.H = Eigen::SparseMatrix<double>(6, 6);
  std::vector<Eigen::Triplet<double>> h = {{2, 0, 1.0}, {0, 1, 1.0}, {1, 2, 1.0},                   // box 0 on ground
                                           {5, 3, 1.0}, {2, 3, -1.0}, {3, 4, 1.0}, {0, 4, -1.0},   // box 1 on box 0
                                           {4, 5, 1.0}, {1, 5, -1.0}};
  p.H.setFromTriplets(h.begin(), h.end());
  p.f = Eigen::VectorXd::Zero(6);
  p.f[2] = p.f[5] = -kG * kDt;
  p.w = Eigen::VectorXd::Zero(6);
  p.mu = Eigen::Vector2d(kMu, kMu);
  const solvers::sap::GlobalContactTrees trees = solvers::sap::partition_global_contact_dofs(p);
  EXPECT_EQ(trees.block_size, 3);
  ASSERT_EQ(trees.dofs.size(), 2u);
  EXPECT_EQ(trees.dofs[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(trees.dofs[1], (std::vector<int>{3, 4, 5}));
  // At rest under gravity: r_N = 2 m g δt below, m g δt between (m = 1).
  const solvers::sap::SapGlobalContactSolution s = solvers::sap::solve_global_contact_with_sap(p);
  EXPECT_NEAR(s.r[0], 2.0 * kG * kDt, 1e-5 * kG * kDt);
  EXPECT_NEAR(s.r[3], kG * kDt, 1e-5 * kG * kDt);
}

}  // namespace
}  // namespace coulomb::io
