#include "coulomb/multibody/frame_jacobian.h"

#include <stdexcept>
#include <string>

namespace coulomb::multibody {

namespace {

// Jacobian with rows [ω; v_Q] in world coordinates (kLocalWorldAligned), optionally mapped to
// kWorld (velocity of the point at W's origin) or rotated by R_WLᵀ into a local frame L.
// Calls f(column, ω, v_Q) for every velocity coordinate on the path from `body` to its root:
// the angular velocity of the body and the velocity of its point at p_WQ per unit rate of that
// coordinate, world coordinates (ω = R_WK s_ω, v_Q = R_WK s_v + ω × (p_WQ − p_WK)).
template <class F>
void for_each_point_jacobian_column(const Model& model, const Workspace& ws, int body, const math::Vector3& p_WQ,
                                    F&& f) {
  // The columns of joint_subspace_column(), type by type, without its zero halves: the same
  // products, so the same bits (a contact on a free body is 6 columns per contact side).
  const auto& bodies = model.bodies();
  for (int k = body; k > 0; k = bodies[k].parent) {
    const Joint& joint = bodies[k].joint;
    const math::Transform& X_WK = ws.X_WB[k];
    const math::Vector3 r = p_WQ - X_WK.p;
    switch (joint.type) {
      case JointType::kRevolute: {
        const math::Vector3 w = X_WK.R * joint.axis;
        f(joint.v_index, w, math::Vector3(w.cross(r)));
        break;
      }
      case JointType::kPrismatic:
        f(joint.v_index, math::Vector3::Zero(), math::Vector3(X_WK.R * joint.axis));
        break;
      case JointType::kFloating:
      case JointType::kBall: {
        // Column c of S is R_JKᵀ e_c (angular, then for a floating joint linear): in W,
        // R_WK R_JKᵀ e_c = R_WJ e_c, column c of R_WJ = R_WP R_PJ (the joint frame J is fixed in
        // the parent P). A root's R_WP is the identity: R_WJ is R_PJ itself, exactly (for a free
        // body usually the identity: its velocities are world-aligned).
        const int parent = bodies[k].parent;
        const math::Matrix3 R_WJ = parent == 0 ? joint.X_PJ.R : math::Matrix3(ws.X_WB[parent].R * joint.X_PJ.R);
        for (int c = 0; c < 3; ++c) {
          const math::Vector3 e_W = R_WJ.col(c);
          f(joint.v_index + c, e_W, math::Vector3(e_W.cross(r)));
        }
        if (joint.type == JointType::kFloating)
          for (int c = 0; c < 3; ++c) f(joint.v_index + 3 + c, math::Vector3::Zero(), math::Vector3(R_WJ.col(c)));
        break;
      }
      case JointType::kFixed:
        break;
    }
  }
}

void point_jacobian_impl(const Model& model, const Workspace& ws, int body, const math::Vector3& p_BQ,
                         ReferenceFrame rf, const math::Matrix3& R_WL, Eigen::Ref<Eigen::MatrixXd> J) {
  J.setZero();
  const math::Vector3 p_WQ = ws.X_WB[body].act(p_BQ);
  for_each_point_jacobian_column(model, ws, body, p_WQ, [&](int index, const math::Vector3& w, const math::Vector3& v) {
    auto col = J.col(index);
    switch (rf) {
      case ReferenceFrame::kLocalWorldAligned:
        col.head<3>() = w;
        col.tail<3>() = v;
        break;
      case ReferenceFrame::kWorld:
        col.head<3>() = w;
        col.tail<3>() = v + p_WQ.cross(w);  // velocity of the point at the world origin
        break;
      case ReferenceFrame::kLocal:
        col.head<3>() = R_WL.transpose() * w;
        col.tail<3>() = R_WL.transpose() * v;
        break;
    }
  });
}

// Spatial acceleration of `body` in W, expressed in the body frame, when v̇ = 0 and gravity is
// off: recursion a_k = X_kλ a_λ + v_k × (S q̇)_k along the path from the root.
math::SpatialMotion bias_acceleration(const Model& model, const Workspace& ws, int body) {
  // Recursion from the root down; the depth is the body's depth in its tree.
  const auto& bodies = model.bodies();
  if (body == 0) return math::SpatialMotion::Zero();
  const int p = bodies[body].parent;
  const math::SpatialMotion a_parent = bias_acceleration(model, ws, p);
  const math::Transform& X = ws.X_PB[body];
  const math::SpatialMotion vJ = ws.V_B[body] - X.act_inv(ws.V_B[p]);
  return X.act_inv(a_parent) + joint_bias_acceleration(bodies[body].joint, vJ) + ws.V_B[body].cross(vJ);
}

math::Vector6 jdot_v_impl(const Model& model, const Workspace& ws, int body, const math::Vector3& p_BQ,
                          ReferenceFrame rf, const math::Matrix3& R_BL) {
  const math::SpatialMotion a = bias_acceleration(model, ws, body);
  const math::SpatialMotion& V = ws.V_B[body];
  math::Vector6 out;
  switch (rf) {
    case ReferenceFrame::kWorld:
      // d/dt (X_WB V_B) = X_WB a_B.
      out = ws.X_WB[body].act(a).vector();
      break;
    case ReferenceFrame::kLocal: {
      // Spatial acceleration shifted to Q, in L = B·R_BL coordinates.
      const math::Vector3 a_Q = a.v + a.w.cross(p_BQ);
      out << R_BL.transpose() * a.w, R_BL.transpose() * a_Q;
      break;
    }
    case ReferenceFrame::kLocalWorldAligned: {
      // Classical acceleration of Q: a_v + α × r + ω × (v + ω × r).
      const math::Vector3 a_Q = a.v + a.w.cross(p_BQ) + V.w.cross(V.v + V.w.cross(p_BQ));
      const math::Matrix3& R = ws.X_WB[body].R;
      out << R * a.w, R * a_Q;
      break;
    }
  }
  return out;
}

}  // namespace

void body_point_jacobian(const Model& model, const Workspace& ws, int body, const math::Vector3& p_BQ,
                         ReferenceFrame rf, Eigen::Ref<Eigen::MatrixXd> J) {
  point_jacobian_impl(model, ws, body, p_BQ, rf, ws.X_WB[body].R, J);
}

void frame_jacobian(const Model& model, const Workspace& ws, int frame, ReferenceFrame rf,
                    Eigen::Ref<Eigen::MatrixXd> J) {
  const Frame& F = model.frame(frame);
  point_jacobian_impl(model, ws, F.body, F.X_BF.p, rf, ws.X_WB[F.body].R * F.X_BF.R, J);
}

namespace {
// Out of line: the throw's string code kept out of accumulate_point_jacobian's column loop.
[[noreturn, gnu::cold, gnu::noinline]] void throw_column_outside(int index, int body, int column_offset, int cols) {
  throw std::invalid_argument("accumulate_point_jacobian: column " + std::to_string(index) + " of body " +
                              std::to_string(body) + "'s path is outside J (columns " + std::to_string(column_offset) +
                              " to " + std::to_string(column_offset + cols - 1) + ")");
}
}  // namespace

void accumulate_point_jacobian(const Model& model, const Workspace& ws, int body, const math::Vector3& p_WQ,
                               const math::Matrix3& R, Eigen::Ref<Eigen::MatrixXd> J, int column_offset) {
  if (J.rows() != 3)
    throw std::invalid_argument("accumulate_point_jacobian: J must have 3 rows, got " + std::to_string(J.rows()));
  double* J0 = J.data();
  const Eigen::Index ld = J.outerStride();
  const int first = column_offset, end = column_offset + static_cast<int>(J.cols());
  for_each_point_jacobian_column(model, ws, body, p_WQ, [&](int index, const math::Vector3&, const math::Vector3& v) {
    if (index < first || index >= end) [[unlikely]] throw_column_outside(index, body, first, end - first);
    double* column = J0 + static_cast<ptrdiff_t>(index - first) * ld;  // J has 3 rows
    for (int a = 0; a < 3; ++a) column[a] += R(a, 0) * v[0] + R(a, 1) * v[1] + R(a, 2) * v[2];
  });
}

void point_jacobian(const Model& model, const Workspace& ws, int body, const math::Vector3& p_BQ,
                    Eigen::Ref<Eigen::MatrixXd> J) {
  J.setZero();
  accumulate_point_jacobian(model, ws, body, ws.X_WB[body].act(p_BQ), math::Matrix3::Identity(), J);
}

math::Vector6 body_point_jacobian_time_derivative_product(const Model& model, const Workspace& ws, int body,
                                                          const math::Vector3& p_BQ, ReferenceFrame rf) {
  return jdot_v_impl(model, ws, body, p_BQ, rf, math::Matrix3::Identity());
}

math::Vector6 frame_jacobian_time_derivative_product(const Model& model, const Workspace& ws, int frame,
                                                     ReferenceFrame rf) {
  const Frame& F = model.frame(frame);
  return jdot_v_impl(model, ws, F.body, F.X_BF.p, rf, F.X_BF.R);
}

}  // namespace coulomb::multibody
