// coulomb_rigid_peer_bench: RNEA, CRBA and ABA of coulomb against Pinocchio's C++ library (the
// one the `pin` wheel ships, headers and libpinocchio_default), same model, same state, same
// process (bench/peers/README.md; built by scripts/bench_peers.sh against the bench venv, not by
// CMake: ctest never needs Pinocchio).
//
// The Pinocchio model is built from coulomb's Model (as the MuJoCo and Drake models of the scene
// benchmarks are): one joint per coulomb body (free flyer, revolute or prismatic, with the
// specialised RX/RY/RZ, PX/PY/PZ joints when the axis is a unit axis, as Pinocchio's URDF parser
// does), placed at X_PJ, carrying the body's inertia; welded bodies are appended to their
// parent's joint. Coordinates: revolute/prismatic alike; a free flyer is q = [p, x y z w] and
// v = [Rᵀ ṗ_W, Rᵀ ω_W] against coulomb's [p, w x y z] and [ω_W, ṗ_W]: v_pin = T v_c.
//
// Checked before timing (exits 1 otherwise), at a random configuration with the floating base at
// rest (there T also maps accelerations): M_c = Tᵀ M_pin T (CRBA), τ_c = Tᵀ τ_pin (RNEA),
// a_c = T⁻¹ a_pin (ABA), to 1e-9 relative.
// Timing: each algorithm from (q, v, a or τ) on both libraries, `batch` calls per sample, the
// samples of the six (library, algorithm) pairs interleaved, the median over `samples`.
//
//   coulomb_rigid_peer_bench SHARED_MODELS_DIR EXAMPLE_MODELS_DIR [samples] [batch]   → JSON on stdout
//   (the iiwa and the A1 from ../shared/models, the 27-DOF humanoid from examples/models)
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace {

namespace mb = coulomb::multibody;
using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Pair {
  mb::Model model;
  pinocchio::Model pin;
  std::vector<int> pin_joint;  // coulomb body → Pinocchio joint carrying it
};

template <class JX, class JY, class JZ, class JU>
pinocchio::JointModel axis_joint(const Eigen::Vector3d& a) {
  if (a == Eigen::Vector3d::UnitX()) return JX();
  if (a == Eigen::Vector3d::UnitY()) return JY();
  if (a == Eigen::Vector3d::UnitZ()) return JZ();
  return JU(a);
}

Pair build(const std::string& urdf, bool floating) {
  Pair p;
  p.model = coulomb::io::load_urdf(urdf, {.floating = floating}).model;
  const mb::Model& m = p.model;
  p.pin.gravity.linear(m.gravity());
  p.pin_joint.assign(m.num_bodies(), 0);
  std::vector<pinocchio::SE3> X_JB(m.num_bodies(), pinocchio::SE3::Identity());  // body frame in its joint frame
  for (int b = 1; b < m.num_bodies(); ++b) {
    const mb::Body& body = m.body(b);
    const mb::Joint& j = body.joint;
    const pinocchio::SE3 X_PJ(j.X_PJ.R, j.X_PJ.p);
    const pinocchio::SE3 placement = X_JB[body.parent] * X_PJ;  // in the parent's joint frame
    const pinocchio::Inertia inertia(body.inertia.mass, body.inertia.com(), body.inertia.inertia_about_com());
    if (j.type == mb::JointType::kFixed) {
      p.pin_joint[b] = p.pin_joint[body.parent];
      X_JB[b] = placement;
      p.pin.appendBodyToJoint(p.pin_joint[b], inertia, placement);
      continue;
    }
    pinocchio::JointModel jm;
    if (j.type == mb::JointType::kFloating) jm = pinocchio::JointModelFreeFlyer();
    else if (j.type == mb::JointType::kRevolute)
      jm = axis_joint<pinocchio::JointModelRX, pinocchio::JointModelRY, pinocchio::JointModelRZ,
                      pinocchio::JointModelRevoluteUnaligned>(j.axis);
    else
      jm = axis_joint<pinocchio::JointModelPX, pinocchio::JointModelPY, pinocchio::JointModelPZ,
                      pinocchio::JointModelPrismaticUnaligned>(j.axis);
    const auto id = p.pin.addJoint(p.pin_joint[body.parent], jm, placement, j.name);
    p.pin.appendBodyToJoint(id, inertia, pinocchio::SE3::Identity());
    p.pin_joint[b] = static_cast<int>(id);
  }
  if (p.pin.nv != m.nv() || p.pin.nq != m.nq()) {
    std::fprintf(stderr, "%s: Pinocchio has nq %d nv %d, coulomb %d %d\n", urdf.c_str(), p.pin.nq, p.pin.nv, m.nq(),
                 m.nv());
    std::exit(1);
  }
  return p;
}

/// coulomb q → Pinocchio q, and T with v_pin = T v_c.
void map_state(const Pair& p, const VectorXd& q, VectorXd& q_pin, MatrixXd& T) {
  q_pin.resize(p.pin.nq);
  T.setZero(p.pin.nv, p.model.nv());
  for (int b = 1; b < p.model.num_bodies(); ++b) {
    const mb::Joint& j = p.model.body(b).joint;
    if (j.nv == 0) continue;
    const auto& jm = p.pin.joints[p.pin_joint[b]];
    const int iq = jm.idx_q(), iv = jm.idx_v();
    if (j.type == mb::JointType::kFloating) {
      const Eigen::Quaterniond quat(q[j.q_index + 3], q[j.q_index + 4], q[j.q_index + 5], q[j.q_index + 6]);
      q_pin.segment<3>(iq) = q.segment<3>(j.q_index);
      q_pin.segment<4>(iq + 3) << quat.x(), quat.y(), quat.z(), quat.w();
      const Eigen::Matrix3d Rt = quat.normalized().toRotationMatrix().transpose();
      T.block<3, 3>(iv, j.v_index + 3) = Rt;  // Rᵀ ṗ_W
      T.block<3, 3>(iv + 3, j.v_index) = Rt;  // Rᵀ ω_W
    } else {
      q_pin[iq] = q[j.q_index];
      T(iv, j.v_index) = 1.0;
    }
  }
}

double rel_diff(const MatrixXd& a, const MatrixXd& b) { return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff()); }

struct Timings {
  std::vector<double> ns[6];  // coulomb rnea, pin rnea, coulomb crba, pin crba, coulomb aba, pin aba
};

template <class F>
double time_batch(int batch, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < batch; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / batch;
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

std::string run(const std::string& name, const std::string& urdf, bool floating, int samples, int batch) {
  Pair p = build(urdf, floating);
  const mb::Model& m = p.model;
  mb::Workspace ws(m);
  pinocchio::Data data(p.pin);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VectorXd q = m.neutral_configuration(), v(m.nv()), a(m.nv()), tau(m.nv());
  for (int b = 1; b < m.num_bodies(); ++b) {
    const mb::Joint& j = m.body(b).joint;
    if (j.type == mb::JointType::kFloating) {
      Eigen::Quaterniond quat(u(rng), u(rng), u(rng), u(rng));
      quat.normalize();
      q.segment<3>(j.q_index) << u(rng), u(rng), u(rng);
      q.segment<4>(j.q_index + 3) << quat.w(), quat.x(), quat.y(), quat.z();
    } else if (j.nv == 1) {
      double lo = j.limits.lower, hi = j.limits.upper;
      if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -3.0, hi = 3.0;
      q[j.q_index] = lo + (hi - lo) * 0.5 * (1.0 + u(rng));
    }
  }
  for (int i = 0; i < m.nv(); ++i) v[i] = u(rng), a[i] = u(rng), tau[i] = 10.0 * u(rng);
  VectorXd q_pin;
  MatrixXd T;
  map_state(p, q, q_pin, T);

  // ---- checks, with the floating base at rest ----
  VectorXd v0 = v, a0 = a;
  for (int b = 1; b < m.num_bodies(); ++b)
    if (m.body(b).joint.type == mb::JointType::kFloating) v0.segment<6>(m.body(b).joint.v_index).setZero(),
                                                            a0.segment<6>(m.body(b).joint.v_index).setZero();
  MatrixXd M_pin = pinocchio::crba(p.pin, data, q_pin);
  M_pin.triangularView<Eigen::StrictlyLower>() = M_pin.transpose().triangularView<Eigen::StrictlyLower>();
  const MatrixXd M_c = mb::crba(m, ws, q);
  const double d_crba = rel_diff(T.transpose() * M_pin * T, M_c);
  const VectorXd tau_pin = pinocchio::rnea(p.pin, data, q_pin, T * v0, T * a0);
  const VectorXd tau_c = mb::rnea(m, ws, q, v0, a0);
  const double d_rnea = rel_diff(T.transpose() * tau_pin, tau_c);
  // T is orthogonal (rotation blocks and ones): τ_pin = T τ_c.
  const VectorXd a_pin = pinocchio::aba(p.pin, data, q_pin, T * v0, T * tau);
  const VectorXd a_c = mb::aba(m, ws, q, v0, tau);
  const double d_aba = rel_diff(T.transpose() * a_pin, a_c);
  if (d_crba > 1e-9 || d_rnea > 1e-9 || d_aba > 1e-9) {
    std::fprintf(stderr, "%s: coulomb and Pinocchio differ: CRBA %g, RNEA %g, ABA %g\n", name.c_str(), d_crba, d_rnea,
                 d_aba);
    std::exit(1);
  }

  // ---- timing ----
  const VectorXd v_pin = T * v, a_pin_in = T * a, tau_pin_in = T * tau;
  Timings t;
  volatile double sink = 0.0;
  for (int s = 0; s < samples; ++s) {
    t.ns[0].push_back(time_batch(batch, [&] { sink = sink + mb::rnea(m, ws, q, v, a)[0]; }));
    t.ns[1].push_back(time_batch(batch, [&] { sink = sink + pinocchio::rnea(p.pin, data, q_pin, v_pin, a_pin_in)[0]; }));
    t.ns[2].push_back(time_batch(batch, [&] { sink = sink + mb::crba(m, ws, q)(0, 0); }));
    t.ns[3].push_back(time_batch(batch, [&] { sink = sink + pinocchio::crba(p.pin, data, q_pin)(0, 0); }));
    t.ns[4].push_back(time_batch(batch, [&] { sink = sink + mb::aba(m, ws, q, v, tau)[0]; }));
    t.ns[5].push_back(time_batch(batch, [&] { sink = sink + pinocchio::aba(p.pin, data, q_pin, v_pin, tau_pin_in)[0]; }));
  }
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"model\": \"%s\", \"nv\": %d, \"check\": {\"crba\": %.3g, \"rnea\": %.3g, \"aba\": %.3g}, "
                "\"ns\": {\"rnea\": {\"coulomb\": %.1f, \"pinocchio\": %.1f}, \"crba\": {\"coulomb\": %.1f, "
                "\"pinocchio\": %.1f}, \"aba\": {\"coulomb\": %.1f, \"pinocchio\": %.1f}}, \"samples\": %d, \"batch\": %d}",
                name.c_str(), m.nv(), d_crba, d_rnea, d_aba, median(t.ns[0]), median(t.ns[1]), median(t.ns[2]),
                median(t.ns[3]), median(t.ns[4]), median(t.ns[5]), samples, batch);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: coulomb_rigid_peer_bench SHARED_MODELS_DIR EXAMPLE_MODELS_DIR [samples] [batch]\n");
    return 2;
  }
  const std::string dir = argv[1], examples = argv[2];
  const int samples = argc > 3 ? std::atoi(argv[3]) : 21;
  const int batch = argc > 4 ? std::atoi(argv[4]) : 2000;
  std::printf("{\"pinocchio_version\": \"%s\", \"results\": [\n%s,\n%s,\n%s\n]}\n", PINOCCHIO_VERSION,
              run("kuka_iiwa", dir + "/kuka_iiwa_robot.urdf", false, samples, batch).c_str(),
              run("a1", dir + "/a1.urdf", true, samples, batch).c_str(),
              run("humanoid", examples + "/humanoid.urdf", true, samples, batch).c_str());
  return 0;
}
