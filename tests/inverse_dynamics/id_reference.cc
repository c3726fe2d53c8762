// Definitions of id_reference.h.
#include "inverse_dynamics/id_reference.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

namespace coulomb::inverse_dynamics::testing {

Dense::Dense(const IdProblem& p)
    : m(p.num_velocities()), nq(p.num_actuated()), n(p.num_contacts()), dt(p.time_step), M(p.M),
      N(p.N), S(p.S), T(p.T), v(p.v), fext(p.f_ext), qdot_des(p.qdot_des), phi(p.phi), mu(p.mu),
      act(p.actuated) {
  Minv = M.inverse();
  Minv = 0.5 * (Minv + Minv.transpose()).eval();
  P = MatrixXd::Zero(nq, m);
  for (int j = 0; j < nq; ++j) P(j, act[j]) = 1.0;
  for (int i = 0; i < m; ++i)
    if (std::find(act.begin(), act.end(), i) == act.end()) unact.push_back(i);
  b = M * v + dt * fext;
}

MatrixXd Dense::F() const {
  MatrixXd F(4 * n, m);
  for (int i = 0; i < n; ++i) {
    F.row(4 * i) = S.row(i);
    F.row(4 * i + 1) = T.row(i);
    F.row(4 * i + 2) = -S.row(i);
    F.row(4 * i + 3) = -T.row(i);
  }
  return F;
}

MatrixXd Dense::R() const {
  MatrixXd R(5 * n, m);
  R << N, F();
  return R;
}

MatrixXd Dense::E() const {
  MatrixXd E = MatrixXd::Zero(4 * n, n);
  for (int i = 0; i < n; ++i) E.block(4 * i, i, 4, 1).setOnes();
  return E;
}

MatrixXd Dense::gamma_P() const {
  MatrixXd G = Minv - Minv * P.transpose() * Y_P() * P * Minv;
  return 0.5 * (G + G.transpose());
}

MatrixXd Dense::Y_P() const { return (P * Minv * P.transpose()).inverse(); }

MatrixXd Dense::delta_P() const { return Minv * P.transpose() * Y_P(); }

VectorXd Dense::vstar() const { return gamma_P() * b + delta_P() * qdot_des; }

VectorXd Dense::v_free(const VectorXd& iota) const { return Minv * (b + P.transpose() * iota); }

Lcp ap_lcp(const Dense& d, const MatrixXd& Gamma, const VectorXd& v0) {
  const int n = d.n;
  const MatrixXd R = d.R(), E = d.E();
  Lcp l;
  l.Q = MatrixXd::Zero(6 * n, 6 * n);
  l.Q.topLeftCorner(5 * n, 5 * n) = R * Gamma * R.transpose();
  l.Q.block(n, 5 * n, 4 * n, n) = E;
  l.Q.block(5 * n, 0, n, n) = d.mu.asDiagonal();
  l.Q.block(5 * n, n, n, 4 * n) = -E.transpose();
  l.r = VectorXd::Zero(6 * n);
  l.r.head(5 * n) = R * v0;
  l.r.head(n) += d.phi / d.dt;
  return l;
}

VectorXd z_from_results(const Dense& d, const IdResults& r) {
  const int n = d.n;
  VectorXd z = VectorXd::Zero(6 * n);
  for (int i = 0; i < n; ++i) {
    const double fs = r.contact_impulses[3 * i], ft = r.contact_impulses[3 * i + 1];
    z[i] = r.contact_impulses[3 * i + 2];
    z[n + 4 * i] = std::max(fs, 0.0);
    z[n + 4 * i + 1] = std::max(ft, 0.0);
    z[n + 4 * i + 2] = std::max(-fs, 0.0);
    z[n + 4 * i + 3] = std::max(-ft, 0.0);
    if (r.sliding_speed.size() == n) z[5 * n + i] = r.sliding_speed[i];
  }
  return z;
}

LcpCheck check_lcp(const Lcp& l, const VectorXd& z) {
  const VectorXd w = l.Q * z + l.r;
  LcpCheck c;
  c.min_z = z.size() ? z.minCoeff() : 0.0;
  c.min_w = w.size() ? w.minCoeff() : 0.0;
  c.complementarity = z.size() ? z.cwiseProduct(w).cwiseAbs().maxCoeff() : 0.0;
  return c;
}

VectorXd contact_impulse(const Dense& d, const IdResults& r) {
  VectorXd g = VectorXd::Zero(d.m);
  for (int i = 0; i < d.n; ++i)
    g += r.contact_impulses[3 * i] * d.S.row(i).transpose() + r.contact_impulses[3 * i + 1] * d.T.row(i).transpose() +
         r.contact_impulses[3 * i + 2] * d.N.row(i).transpose();
  return g;
}

Constrained constrain(const Dense& dd, const MatrixXd& X, const VectorXd& d) {
  const MatrixXd K = X.transpose() * dd.Minv * X;
  Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(K);
  cod.setThreshold(1e-10);
  const MatrixXd Y = cod.pseudoInverse();
  Constrained c;
  c.Gamma = dd.Minv - dd.Minv * X * Y * X.transpose() * dd.Minv;
  c.Gamma = 0.5 * (c.Gamma + c.Gamma.transpose()).eval();
  c.v_particular = dd.Minv * X * Y * d;
  return c;
}

int rank_of(const MatrixXd& A, double tol) {
  if (A.size() == 0) return 0;
  Eigen::JacobiSVD<MatrixXd> svd(A);
  const VectorXd s = svd.singularValues();
  if (s.size() == 0 || s[0] == 0.0) return 0;
  int r = 0;
  for (int i = 0; i < s.size(); ++i)
    if (s[i] > tol * s[0]) ++r;
  return r;
}

}  // namespace coulomb::inverse_dynamics::testing
