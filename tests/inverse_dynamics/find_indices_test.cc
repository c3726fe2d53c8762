// FIND-INDICES (Zapolsky & Drumwright Alg. 1, App. E; digest §4.3 and §10 test 5) against
// independent truths: a from-scratch rank-revealing version of Algorithm 1 (FullPivLU per
// decision), rank([P; S; T]) by FullPivLU, a from-scratch Cholesky of Xᵀ M⁻¹ X, the
// minimum-norm (CompleteOrthogonalDecomposition) projection with ALL rows, and the closed-form
// rank of a rigid body's tangential rows for coplanar contacts.
#include "coulomb/inverse_dynamics/find_indices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/QR>
#include <Eigen/SVD>

namespace coulomb::inverse_dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

MatrixXd RandomSpd(int m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MatrixXd A(m, m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) A(i, j) = u(rng);
  // Scales over two decades (mixed kg / kg·m² units).
  VectorXd D(m);
  for (int i = 0; i < m; ++i) D(i) = std::pow(10.0, u(rng));
  MatrixXd M = A * A.transpose() + 0.5 * m * MatrixXd::Identity(m, m);
  return D.asDiagonal() * M * D.asDiagonal();
}

MatrixXd RandomRows(int rows, int m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MatrixXd R(rows, m);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < m; ++j) R(i, j) = u(rng);
  return R;
}

// p rows of a selector (distinct actuated columns) or dense random rows.
MatrixXd RandomP(int p, int m, bool selector, std::mt19937& rng) {
  if (!selector) return RandomRows(p, m, rng);
  std::vector<int> cols(m);
  for (int j = 0; j < m; ++j) cols[j] = j;
  std::shuffle(cols.begin(), cols.end(), rng);
  MatrixXd P = MatrixXd::Zero(p, m);
  for (int k = 0; k < p; ++k) P(k, cols[k]) = 1.0;
  return P;
}

struct Instance {
  MatrixXd M, P, S, T;
};

// n contacts whose S/T rows are either new random rows (at most `budget` of them) or dependent:
// a duplicate of an earlier contact, a scaled earlier row (collinear), or a random combination
// of earlier rows (including P rows when allow_p).
Instance RandomInstance(int m, int p, int n, int budget, bool allow_p, std::mt19937& rng) {
  Instance in;
  in.M = RandomSpd(m, rng);
  in.P = RandomP(p, m, std::uniform_int_distribution<int>(0, 1)(rng) == 0, rng);
  in.S.resize(n, m);
  in.T.resize(n, m);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> kind(0, 3);
  std::vector<Eigen::RowVectorXd> earlier;  // all rows generated so far (S/T, and P if allowed)
  if (allow_p)
    for (int k = 0; k < p; ++k) earlier.push_back(in.P.row(k));
  auto make_row = [&]() -> Eigen::RowVectorXd {
    const int c = earlier.empty() ? 0 : kind(rng);
    if (c == 0 && budget > 0) {
      --budget;
      return RandomRows(1, m, rng).row(0);
    }
    if (earlier.empty()) return Eigen::RowVectorXd::Zero(m);
    if (c == 1) {  // collinear: a scaled earlier row
      const auto& e = earlier[std::uniform_int_distribution<int>(0, earlier.size() - 1)(rng)];
      return (2.0 * u(rng)) * e;
    }
    Eigen::RowVectorXd x = Eigen::RowVectorXd::Zero(m);
    for (int t = 0; t < 3; ++t)
      x += u(rng) * earlier[std::uniform_int_distribution<int>(0, earlier.size() - 1)(rng)];
    return x;
  };
  for (int i = 0; i < n; ++i) {
    if (i > 0 && kind(rng) == 0) {  // duplicated contact
      const int j = std::uniform_int_distribution<int>(0, i - 1)(rng);
      in.S.row(i) = in.S.row(j);
      in.T.row(i) = in.T.row(j);
    } else {
      in.S.row(i) = make_row();
      earlier.push_back(in.S.row(i));
      in.T.row(i) = make_row();
      earlier.push_back(in.T.row(i));
    }
  }
  return in;
}

int Rank(const MatrixXd& A) {
  if (A.rows() == 0) return 0;
  Eigen::FullPivLU<MatrixXd> lu(A);
  lu.setThreshold(1e-9);
  return static_cast<int>(lu.rank());
}

// Algorithm 1 with every decision made from scratch by a rank-revealing LU of the stacked rows.
void ReferenceAlgorithm1(const Instance& in, std::vector<int>* s_set, std::vector<int>* t_set) {
  MatrixXd kept = in.P;
  auto try_add = [&](const Eigen::RowVectorXd& x) {
    MatrixXd cand(kept.rows() + 1, kept.cols());
    cand << kept, x;
    if (Rank(cand) == cand.rows()) {
      kept = cand;
      return true;
    }
    return false;
  };
  for (int i = 0; i < in.S.rows(); ++i) {
    if (try_add(in.S.row(i))) s_set->push_back(i);
    if (try_add(in.T.row(i))) t_set->push_back(i);
  }
}

MatrixXd KeptRows(const FindIndices& fi, const Instance& in) {
  MatrixXd X(fi.size(), in.M.cols());
  for (int k = 0; k < fi.size(); ++k) {
    const EqualityRow& r = fi.rows()[k];
    X.row(k) = r.kind == EqualityRowKind::kActuated        ? in.P.row(r.index)
               : r.kind == EqualityRowKind::kFirstTangent ? in.S.row(r.index)
                                                           : in.T.row(r.index);
  }
  return X;
}

MatrixXd Stack(const Instance& in) {
  MatrixXd A(in.P.rows() + 2 * in.S.rows(), in.M.cols());
  A << in.P, in.S, in.T;
  return A;
}

// v⁺ = argmin ½‖v − v⁻‖²_M s.t. A v = d, by the minimum-norm solve in u = L_Mᵀ v (all rows).
VectorXd ProjectCod(const MatrixXd& M, const MatrixXd& A, const VectorXd& v_minus,
                    const VectorXd& d) {
  Eigen::LLT<MatrixXd> llt(M);
  const MatrixXd LinvT = llt.matrixU().solve(MatrixXd::Identity(M.rows(), M.cols()));  // L⁻ᵀ
  const MatrixXd B = A * LinvT;
  Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(B);
  cod.setThreshold(1e-10);
  const VectorXd du = cod.solve(d - A * v_minus);
  return v_minus + LinvT * du;
}

// The same projection with the kept rows only (App. E): v⁺ = v⁻ + M⁻¹ X Y_X (d_k − Xᵀ v⁻).
VectorXd ProjectReduced(const FindIndices& fi, const Instance& in, const VectorXd& v_minus,
                        const VectorXd& d_kept) {
  const MatrixXd X = KeptRows(fi, in);
  VectorXd lambda = d_kept - X * v_minus;
  fi.solve_in_place(lambda);
  return v_minus + in.M.llt().solve(X.transpose() * lambda);
}

TEST(FindIndices, MatchesFromScratchAlgorithm1RankAndCholesky) {
  std::mt19937 rng(12);
  int instances = 0, total_kept = 0;
  double worst_factor = 0.0, worst_cond = 0.0;
  for (int m = 6; m <= 18; ++m) {
    for (int rep = 0; rep < 12; ++rep) {
      const int p = std::uniform_int_distribution<int>(0, m / 2)(rng);
      const int n = std::uniform_int_distribution<int>(0, 10)(rng);
      const int budget = std::uniform_int_distribution<int>(0, m - p + 2)(rng);
      const Instance in = RandomInstance(m, p, n, budget, rep % 2 == 0, rng);
      FindIndices fi;
      fi.compute(in.M, in.P, in.S, in.T);
      std::vector<int> s_ref, t_ref;
      ReferenceAlgorithm1(in, &s_ref, &t_ref);
      EXPECT_EQ(fi.s_indices(), s_ref) << "m " << m << " rep " << rep;
      EXPECT_EQ(fi.t_indices(), t_ref) << "m " << m << " rep " << rep;
      ASSERT_EQ(fi.size(), p + static_cast<int>(fi.s_indices().size() + fi.t_indices().size()));
      ASSERT_LE(fi.size(), m);
      // (3) rank([P; S_𝒮; T_𝒯]) = rank([P; S; T]) and the kept rows are independent.
      const MatrixXd X = KeptRows(fi, in);
      EXPECT_EQ(Rank(X), fi.size());
      EXPECT_EQ(Rank(X), Rank(Stack(in)));
      if (fi.size() == 0) {  // p = 0 and no nonzero contact row: nothing to factor
        EXPECT_EQ(Rank(Stack(in)), 0);
        continue;
      }
      // (4) Xᵀ M⁻¹ X factors, cond < 1e10; (5) incremental factor = from-scratch Cholesky.
      const MatrixXd G = X * in.M.llt().solve(X.transpose());
      Eigen::LLT<MatrixXd> g_llt(G);
      ASSERT_EQ(g_llt.info(), Eigen::Success);
      const VectorXd sv = Eigen::JacobiSVD<MatrixXd>(G).singularValues();
      const double cond = sv.size() ? sv(0) / sv(sv.size() - 1) : 1.0;
      EXPECT_LT(cond, 1e10);
      worst_cond = std::max(worst_cond, cond);
      const MatrixXd L_ref = g_llt.matrixL();
      const MatrixXd L = fi.factor();
      const double err = (L - L_ref).norm() / std::max(L_ref.norm(), 1e-300);
      EXPECT_LE(err, 1e-10);
      worst_factor = std::max(worst_factor, err);
      ++instances;
      total_kept += fi.size();
    }
  }
  std::printf("[find_indices] %d instances (m 6…18), %d rows kept, worst factor rel. error %.2e, "
              "worst cond(XᵀM⁻¹X) %.2e\n",
              instances, total_kept, worst_factor, worst_cond);
}

TEST(FindIndices, DuplicatedAndCollinearContactsAreExcluded) {
  std::mt19937 rng(3);
  const int m = 12, p = 5;
  Instance in;
  in.M = RandomSpd(m, rng);
  in.P = RandomP(p, m, true, rng);
  const MatrixXd R = RandomRows(6, m, rng);  // S0 T0 S1 T1 T3 S5; T5 below
  in.S.resize(6, m);
  in.T.resize(6, m);
  in.S.row(0) = R.row(0);
  in.T.row(0) = R.row(1);
  in.S.row(1) = R.row(2);
  in.T.row(1) = R.row(3);
  in.S.row(2) = in.S.row(0);  // (1) contact 2 duplicates contact 0
  in.T.row(2) = in.T.row(0);
  in.S.row(3) = 0.7 * in.S.row(0) - 1.1 * in.T.row(1);  // (2) combination of kept rows
  in.T.row(3) = R.row(4);
  in.S.row(4) = -2.0 * in.T.row(3);  // collinear with a kept row
  in.T.row(4) = in.S.row(0) + in.S.row(1) - in.T.row(0);
  in.S.row(5) = R.row(5);
  in.T.row(5) = RandomRows(1, m, rng).row(0);
  FindIndices fi;
  fi.compute(in.M, in.P, in.S, in.T);
  EXPECT_EQ(fi.s_indices(), (std::vector<int>{0, 1, 5}));
  EXPECT_EQ(fi.t_indices(), (std::vector<int>{0, 1, 3, 5}));
  EXPECT_EQ(fi.size(), m);
  // Scaling rows (units) does not change the decisions.
  Instance scaled = in;
  scaled.S *= 1e6;
  scaled.T *= 1e-4;
  scaled.M *= 1e3;
  FindIndices fs;
  fs.compute(scaled.M, scaled.P, scaled.S, scaled.T);
  EXPECT_EQ(fs.s_indices(), fi.s_indices());
  EXPECT_EQ(fs.t_indices(), fi.t_indices());

  // (6) App. E: the projection with the kept rows equals the minimum-norm one with all rows,
  // target [q̇_des; 0; 0], and the dropped rows hold too.
  const VectorXd v_minus = VectorXd::Random(m);
  const VectorXd qd_des = VectorXd::Random(p);
  VectorXd d = VectorXd::Zero(p + 2 * 6);
  d.head(p) = qd_des;
  const VectorXd v_full = ProjectCod(in.M, Stack(in), v_minus, d);
  VectorXd d_kept = VectorXd::Zero(fi.size());
  d_kept.head(p) = qd_des;  // rows() starts with the p rows of P
  const VectorXd v_red = ProjectReduced(fi, in, v_minus, d_kept);
  EXPECT_LE((v_red - v_full).norm(), 1e-9 * std::max(1.0, v_full.norm()));
  EXPECT_LE((Stack(in) * v_red - d).norm(), 1e-9);
}

TEST(FindIndices, ReducedProjectionEqualsMinimumNormProjectionOnRandomInstances) {
  std::mt19937 rng(6);
  double worst = 0.0;
  for (int m = 6; m <= 18; m += 2) {
    for (int rep = 0; rep < 10; ++rep) {
      const int p = std::uniform_int_distribution<int>(0, m / 2)(rng);
      const int n = std::uniform_int_distribution<int>(1, 12)(rng);
      const Instance in = RandomInstance(m, p, n, m, rep % 2 == 0, rng);
      FindIndices fi;
      fi.compute(in.M, in.P, in.S, in.T);
      const MatrixXd A = Stack(in);
      const VectorXd v_minus = VectorXd::Random(m);
      const VectorXd v_target = VectorXd::Random(m);
      const VectorXd d = A * v_target;  // consistent targets
      const VectorXd d_kept = KeptRows(fi, in) * v_target;
      const VectorXd v_full = ProjectCod(in.M, A, v_minus, d);
      const VectorXd v_red = ProjectReduced(fi, in, v_minus, d_kept);
      const double err = (v_red - v_full).norm() / std::max(1.0, v_full.norm());
      EXPECT_LE(err, 1e-9) << "m " << m << " rep " << rep;
      EXPECT_LE((A * v_red - d).norm(), 1e-9 * std::max(1.0, d.norm()));
      worst = std::max(worst, err);
    }
  }
  std::printf("[find_indices] App. E: worst |v_reduced − v_COD| / max(1, |v|) = %.2e\n", worst);
}

// A free rigid body (v = [v_COM; ω], world frame, m = 6, no actuators) standing on 4 coplanar
// contacts at (±a, ±b, 0) relative to the COM. Tangential rows ŝᵀ J_v(p) = [ŝᵀ, (p × ŝ)ᵀ] span
// only {v_x, v_y, ω_z} (closed form: rank 3). Contact 1 shares y with contact 0, so S_1 = S_0.
TEST(FindIndices, RigidBodyOnFourCoplanarContactsKeepsRankThree) {
  const double a = 0.3, b = 0.2;
  MatrixXd M = MatrixXd::Zero(6, 6);
  M.topLeftCorner(3, 3) = 2.0 * Eigen::Matrix3d::Identity();       // kg
  M.bottomRightCorner(3, 3) = Eigen::Vector3d(0.03, 0.05, 0.07).asDiagonal();  // kg·m²
  const std::vector<Eigen::Vector3d> pts = {{a, b, 0}, {-a, b, 0}, {-a, -b, 0}, {a, -b, 0}};
  MatrixXd S(4, 6), T(4, 6);
  for (int i = 0; i < 4; ++i) {
    const Eigen::Vector3d s = Eigen::Vector3d::UnitX(), t = Eigen::Vector3d::UnitY();
    S.row(i) << s.transpose(), pts[i].cross(s).transpose();
    T.row(i) << t.transpose(), pts[i].cross(t).transpose();
  }
  FindIndices fi;
  fi.compute(M, MatrixXd(0, 6), S, T);
  EXPECT_EQ(fi.s_indices(), (std::vector<int>{0}));
  EXPECT_EQ(fi.t_indices(), (std::vector<int>{0, 1}));
  EXPECT_EQ(fi.size(), 3);
}

TEST(FindIndices, NoContactsAndManyContacts) {
  std::mt19937 rng(7);
  {  // n = 0: only P, factor of P M⁻¹ Pᵀ.
    const Instance in = RandomInstance(9, 4, 0, 0, false, rng);
    FindIndices fi;
    fi.compute(in.M, in.P, in.S, in.T);
    EXPECT_TRUE(fi.s_indices().empty());
    EXPECT_TRUE(fi.t_indices().empty());
    ASSERT_EQ(fi.size(), 4);
    const MatrixXd G = in.P * in.M.llt().solve(in.P.transpose());
    const MatrixXd L_ref = G.llt().matrixL();
    EXPECT_LE((MatrixXd(fi.factor()) - L_ref).norm(), 1e-10 * L_ref.norm());
  }
  {  // n = 200 random contacts, m = 12: exactly m − p rows kept (generic rows), at most m.
    const int m = 12, p = 6, n = 200;
    Instance in;
    in.M = RandomSpd(m, rng);
    in.P = RandomP(p, m, true, rng);
    in.S = RandomRows(n, m, rng);
    in.T = RandomRows(n, m, rng);
    FindIndices fi;
    Eigen::LLT<MatrixXd> llt(in.M);
    fi.compute(llt, in.P, in.S, in.T);  // warm-up
    const int reps = 2000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; ++k) fi.compute(llt, in.P, in.S, in.T);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        reps;
    EXPECT_EQ(fi.size(), m);
    EXPECT_EQ(fi.s_indices().size() + fi.t_indices().size(), static_cast<size_t>(m - p));
    EXPECT_EQ(fi.s_indices(), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(fi.t_indices(), (std::vector<int>{0, 1, 2}));
    std::printf("[find_indices] m 12, p 6, n 200: %.2f µs per compute (M factored)\n", us);
    // Rank-deficient contacts beyond m: n = 200 rows all within a 3-dimensional span.
    const MatrixXd basis = RandomRows(3, m, rng);
    in.S = RandomRows(n, 3, rng) * basis;
    in.T = RandomRows(n, 3, rng) * basis;
    const auto t1 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; ++k) fi.compute(llt, in.P, in.S, in.T);  // all 400 rows tested
    const double us_all =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1).count() /
        reps;
    std::printf("[find_indices] m 12, p 6, n 200 in a rank-3 span (every row tested): %.2f µs\n",
                us_all);
    EXPECT_EQ(fi.size(), p + 3);
    EXPECT_EQ(fi.size(), Rank(Stack(in)));
  }
}

// The tolerance is on sin² of the angle (M⁻¹ metric) between a row and the kept rows' span:
// build rows at a prescribed angle θ from span{P rows, S_0} and check the decision on both sides.
TEST(FindIndices, ToleranceIsOnTheSquaredSineOfTheAngle) {
  std::mt19937 rng(11);
  const int m = 10, p = 3;
  const MatrixXd M = RandomSpd(m, rng);
  const MatrixXd P = RandomP(p, m, false, rng);
  const Eigen::RowVectorXd s0 = RandomRows(1, m, rng).row(0);
  Eigen::LLT<MatrixXd> llt(M);
  // y = L_M⁻¹ xᵀ coordinates: orthonormal basis Q of span{y(P rows), y(s0)} and a unit e ⟂ it.
  MatrixXd Y(m, p + 2);
  Y.leftCols(p) = llt.matrixL().solve(P.transpose());
  Y.col(p) = llt.matrixL().solve(s0.transpose());
  Y.col(p + 1) = VectorXd::Random(m);
  Eigen::HouseholderQR<MatrixXd> qr(Y);
  const MatrixXd Q = qr.householderQ() * MatrixXd::Identity(m, p + 2);
  const VectorXd in_span = Q.leftCols(p + 1) * VectorXd::Random(p + 1).normalized();
  const VectorXd e = Q.col(p + 1);
  for (const double sin2 : {1e-12, 1e-11, 3e-10, 1e-9, 1e-6}) {
    const double sn = std::sqrt(sin2), cs = std::sqrt(1.0 - sin2);
    const VectorXd y = 3.7 * (cs * in_span + sn * e);
    MatrixXd S(2, m), T(2, m);
    S.row(0) = s0;
    S.row(1) = (llt.matrixL() * y).transpose();
    T.setZero();  // zero rows are never kept
    for (const double tol : {1e-10, 1e-8}) {
      FindIndices fi;
      fi.compute(llt, P, S, T, tol);
      const bool kept = fi.s_indices().size() == 2;
      EXPECT_EQ(kept, sin2 > tol) << "sin² " << sin2 << " tolerance " << tol;
      EXPECT_TRUE(fi.t_indices().empty());
    }
  }
}

template <typename F>
void ExpectThrowMentioning(F&& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected one naming " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(FindIndices, BadInputThrowsNamingTheField) {
  std::mt19937 rng(9);
  const Instance in = RandomInstance(8, 3, 4, 8, false, rng);
  FindIndices fi;
  ExpectThrowMentioning([&] { fi.compute(MatrixXd(in.M.topRows(7)), in.P, in.S, in.T); }, "M");
  ExpectThrowMentioning([&] { fi.compute(MatrixXd(-in.M), in.P, in.S, in.T); }, "M");
  ExpectThrowMentioning([&] { fi.compute(in.M, MatrixXd(in.P.leftCols(7)), in.S, in.T); }, "P");
  ExpectThrowMentioning([&] { fi.compute(in.M, in.P, MatrixXd(in.S.leftCols(7)), in.T); }, "S");
  ExpectThrowMentioning([&] { fi.compute(in.M, in.P, in.S, MatrixXd(in.T.topRows(3))); }, "T");
  MatrixXd P_dep(4, 8);
  P_dep << in.P, 2.0 * in.P.row(1);
  ExpectThrowMentioning([&] { fi.compute(in.M, P_dep, in.S, in.T); }, "P");
  ExpectThrowMentioning([&] { fi.compute(in.M, RandomRows(9, 8, rng), in.S, in.T); }, "P");
  MatrixXd S_nan = in.S;
  S_nan(2, 5) = std::nan("");
  ExpectThrowMentioning([&] { fi.compute(in.M, in.P, S_nan, in.T); }, "S(2, 5)");
  MatrixXd M_inf = in.M;
  M_inf(1, 1) = INFINITY;
  ExpectThrowMentioning([&] { fi.compute(M_inf, in.P, in.S, in.T); }, "M");
  ExpectThrowMentioning([&] { fi.compute(in.M, in.P, in.S, in.T, -1.0); }, "tolerance");
  ExpectThrowMentioning([&] { fi.compute(in.M, in.P, in.S, in.T, std::nan("")); }, "tolerance");
  fi.compute(in.M, in.P, in.S, in.T);
  VectorXd b(fi.size() + 1);
  ExpectThrowMentioning([&] { fi.solve_in_place(b); }, "b");
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
