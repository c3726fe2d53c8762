#include "coulomb/constraints/bilateral_kinematics.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <Eigen/Geometry>

namespace coulomb::constraints {

using math::Matrix3;
using math::Vector3;

void perpendicular_basis(const Vector3& axis, Vector3& t1, Vector3& t2) {
  // The coordinate axis least aligned with `axis`, made perpendicular.
  int k = 0;
  axis.cwiseAbs().minCoeff(&k);
  t1 = Vector3::Unit(k) - axis[k] * axis;
  t1.normalize();
  t2 = axis.cross(t1);
}

namespace {

// Rotation vector of R (axis · angle, angle ∈ [0, π]).
Vector3 log_rotation(const Matrix3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

}  // namespace

void bilateral_kinematics(const multibody::Model& model, const multibody::Workspace& ws,
                          const scene::BilateralConstraint& c, BilateralKinematicsScratch& s,
                          Eigen::Ref<Eigen::VectorXd> phi, Eigen::Ref<Eigen::MatrixXd> J) {
  const int nv = model.nv(), rows = scene::num_rows(c.type);
  if (c.body_a < 0 || c.body_a >= model.num_bodies() || c.body_b < 0 || c.body_b >= model.num_bodies())
    throw std::invalid_argument("bilateral constraint '" + c.name + "': body index outside the model (" +
                                std::to_string(c.body_a) + ", " + std::to_string(c.body_b) + ")");
  if (phi.size() != rows || J.rows() != rows || J.cols() != nv)
    throw std::invalid_argument("bilateral constraint '" + c.name + "': phi / J sized " + std::to_string(phi.size()) +
                                " / " + std::to_string(J.rows()) + " × " + std::to_string(J.cols()) + ", expected " +
                                std::to_string(rows) + " / " + std::to_string(rows) + " × " + std::to_string(nv));
  if (s.J_A.rows() != 6 || s.J_A.cols() != nv) {
    s.J_A.resize(6, nv);
    s.J_B.resize(6, nv);
  }
  const math::Transform X_WF = ws.X_WB[c.body_a] * c.X_AF;
  const math::Transform X_WM = ws.X_WB[c.body_b] * c.X_BM;
  const Vector3 d = X_WM.p - X_WF.p;
  // J_B: [ω_B; v_M]. J_A: [ω_A; v of A's point at F] (at M's position for the prismatic rows).
  const bool at_M = c.type == scene::BilateralType::kPrismatic;
  const Vector3 p_AQ = at_M ? ws.X_WB[c.body_a].inverse().act(X_WM.p) : c.X_AF.p;
  using multibody::ReferenceFrame;
  if (c.body_b > 0) multibody::body_point_jacobian(model, ws, c.body_b, c.X_BM.p, ReferenceFrame::kLocalWorldAligned, s.J_B);
  else s.J_B.setZero();
  if (c.body_a > 0) multibody::body_point_jacobian(model, ws, c.body_a, p_AQ, ReferenceFrame::kLocalWorldAligned, s.J_A);
  else s.J_A.setZero();
  // Relative rows: s.J_B ← J_B − J_A = [ω_B − ω_A; v_M − v_Q].
  s.J_B -= s.J_A;
  const auto Jw = s.J_B.topRows<3>();
  const auto Jv = s.J_B.bottomRows<3>();
  switch (c.type) {
    case scene::BilateralType::kBall:
      phi = d;
      J = Jv;
      break;
    case scene::BilateralType::kDistance: {
      const double r = d.norm();
      const Vector3 u = r > 0.0 ? Vector3(d / r) : Vector3(X_WF.R.col(0));  // any direction at r = 0
      phi[0] = r - c.length;
      J.row(0).noalias() = u.transpose() * Jv;
      break;
    }
    case scene::BilateralType::kWeld:
      phi.head<3>() = X_WF.R * log_rotation(X_WF.R.transpose() * X_WM.R);
      phi.tail<3>() = d;
      J.topRows<3>() = Jw;
      J.bottomRows<3>() = Jv;
      break;
    case scene::BilateralType::kRevolute: {
      Vector3 t1, t2;
      perpendicular_basis(c.axis_F, t1, t2);
      t1 = X_WF.R * t1;
      t2 = X_WF.R * t2;
      const Vector3 a_F = X_WF.R * c.axis_F, a_M = X_WM.R * c.axis_F;
      const Vector3 e = a_F.cross(a_M);
      phi[0] = t1.dot(e);
      phi[1] = t2.dot(e);
      phi.tail<3>() = d;
      J.row(0).noalias() = t1.transpose() * Jw;
      J.row(1).noalias() = t2.transpose() * Jw;
      J.bottomRows<3>() = Jv;
      break;
    }
    case scene::BilateralType::kPrismatic: {
      Vector3 t1, t2;
      perpendicular_basis(c.axis_F, t1, t2);
      t1 = X_WF.R * t1;
      t2 = X_WF.R * t2;
      phi.head<3>() = X_WF.R * log_rotation(X_WF.R.transpose() * X_WM.R);
      phi[3] = t1.dot(d);
      phi[4] = t2.dot(d);
      J.topRows<3>() = Jw;
      J.row(3).noalias() = t1.transpose() * Jv;
      J.row(4).noalias() = t2.transpose() * Jv;
      break;
    }
  }
}

}  // namespace coulomb::constraints
