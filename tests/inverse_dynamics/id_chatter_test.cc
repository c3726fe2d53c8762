// Torque chatter (digest ../shared/digests/inverse-dynamics.md §10 item 11; the paper's §4.6 and
// §6.2.4, Fig. 15, Table 4). The A1's four-foot stance is indeterminate (a four-legged table): a
// controller that returns an arbitrary one of the valid impulse distributions makes the torques
// jump between actuators from one control step to the next. The stance (φ = 0, ⁻v = 0,
// q̈_des = 0) is held for 2000 control steps (Δt = 1 ms) with fresh Gaussian noise of standard
// deviation 1e-9 (m/s, rad/s) added to every component of ⁻v at every step.
//
// What O(noise) means here. The ID makes P ⁺v = q̇_des hold at the end of the step, so a change
// δv of ⁻v needs an actuator impulse of about M δv, i.e. torques M δv/Δt: within one basis (one
// set of loaded contacts and active rows) the solution is affine in ⁻v, τ(⁻v) = τ₀ + K ⁻v with
// K = ∂τ/∂⁻v of size ‖M‖/Δt ~ 10³–10⁴ N·m per m/s. Chatter-free means Δτ_k = K Δv_k: the
// torque change is the linear response to the noise and nothing else. K is measured by finite
// differences (step 1e-9) and the excess max_k |Δτ_k − K Δv_k| is reported and asserted.
//
//  - QP,μ with Stage II (the unique least-torque optimum): max |Δτ| ≤ 1e-5 N·m asserted.
//  - LCP,∞ warm-started from the previous active set (the modified PPM keeps its basis): the
//    active set must not change, the excess must be round-off (1e-9). Its max |Δτ| is 2.2e-5:
//    all of it the linear response, because its basis carries the robot on three feet
//    ({0, 3, 1}, rank(N Γ_X Nᵀ) = 3), which makes ∂τ/∂⁻v 4 times larger than QP,μ's four-foot
//    optimum (row 1-norms 1.0e4 vs 2.6e3 N·m per m/s). The 1e-5 N·m is therefore not met
//    by LCP,∞ whatever the noise's distribution (worst case for |noise| ≤ 1e-9: 2.1e-5); it is
//    asserted at 3e-5 (docs/inverse-dynamics-forward-check.md reports the numbers).
//  - QP,μ one-stage (Stage I's Lemke vertex) and LCP,μ (Lemke, not warm-started: the paper's
//    "may jump O(1)") are reported, not asserted.
// The slow-motion variant commands a smooth q̈_des(t) = sin(2π · 1 Hz · t) · a, a the crouching
// motion that keeps the feet in place (base straight up, legs following) with 0.2 rad/s² on the
// thighs: the contact set does not change. The noise may add only the linear response to the
// smooth step-to-step change: max_k |Δτ_k(noisy) − Δτ_k(noise-free)| is bounded like max |Δτ|
// above. (QP,μ's noise-free torques have kinks where q̈_des changes sign: its model lets loaded
// feet separate, N ⁺v > 0, when the legs retract instead of lowering the base — the
// complementarity-free artifact of digest §6.2 — so its Δτ jumps by ~1e-4 N·m there. Reported.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "coulomb/contact/contact_jacobian.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "inverse_dynamics/id_test_util.h"

namespace coulomb::inverse_dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using testing::A1Stance;

constexpr int kSteps = 2000;
constexpr double kDt = 1e-3;
constexpr double kNoise = 1e-9;
constexpr unsigned kSeed = 7;

struct Variant {
  const char* name;
  Formulation formulation;
  bool stage_two;
  bool asserted;
  double max_dtau;  ///< asserted bound on max |Δτ| [N·m]
};
const Variant kVariants[] = {
    {"QP,mu + Stage II", Formulation::kQpCoulomb, true, true, 1e-5},
    {"LCP,inf warm PPM", Formulation::kLcpNoSlip, true, true, 3e-5},
    {"QP,mu one-stage", Formulation::kQpCoulomb, false, false, 0.0},
    {"LCP,mu (Lemke)", Formulation::kLcpCoulomb, true, false, 0.0},
};

IdParameters parameters(const Variant& variant) {
  IdParameters p;
  p.formulation = variant.formulation;
  p.stage_two = variant.stage_two;
  return p;
}

// The noise sequence: v_k, k = 0 … kSteps − 1 (zero without noise).
std::vector<VectorXd> noise_sequence(int nv, bool noise) {
  std::mt19937 rng(kSeed);
  std::normal_distribution<double> gauss;
  std::vector<VectorXd> v(kSteps, VectorXd::Zero(nv));
  if (noise)
    for (VectorXd& vk : v)
      for (int i = 0; i < nv; ++i) vk[i] = kNoise * gauss(rng);
  return v;
}

// Joint accelerations along which the feet stay in place: the joint part of the null-space
// motion of the four foot contacts whose base velocity is a pure vertical translation (the
// robot rises; negative: it crouches), scaled to `thigh_amplitude` on the thighs.
VectorXd crouch_direction(const A1Stance& stance, double thigh_amplitude) {
  const multibody::Model& model = stance.scene.model;
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, stance.scene.q0);
  contact::ContactJacobian J;
  contact::contact_jacobian(model, ws, stance.contacts, J);
  const MatrixXd Jd = J.dense();  // 12 × 18: the floating base's [ω, v] first, then the joints
  VectorXd vb = VectorXd::Zero(6);
  vb[5] = 1.0;
  const MatrixXd Jj = Jd.rightCols(12);
  const VectorXd vj = Jj.fullPivLu().solve(-Jd.leftCols(6) * vb);
  EXPECT_LE((Jd.leftCols(6) * vb + Jj * vj).norm(), 1e-12);
  double thigh = 0.0;
  for (int j = 0; j < 12; ++j)
    if (model.dof_names()[6 + j].find("thigh") != std::string::npos) thigh = std::max(thigh, std::abs(vj[j]));
  return vj * (thigh_amplitude / thigh);
}

VectorXd qdd_at(const VectorXd& direction, int k) {
  if (direction.size() == 0) return VectorXd::Zero(12);
  return std::sin(2.0 * M_PI * 1.0 * k * kDt) * direction;
}

struct ChatterRun {
  std::vector<VectorXd> tau;   ///< per step
  int active_set_changes = 0;  ///< steps whose active set differs from the previous step's
  int not_solved = 0;          ///< steps with status != kSolved
  std::vector<int> first_active_set;
  std::string first_message;
};

ChatterRun run(const Variant& variant, const A1Stance& stance, const VectorXd& direction,
               const std::vector<VectorXd>& v) {
  InverseDynamics id(stance.scene.model, joint_dofs(stance.scene.model), parameters(variant));
  ChatterRun out;
  std::vector<int> last_active;
  for (int k = 0; k < kSteps; ++k) {
    const IdResults& r = id.solve(stance.scene.q0, v[k], qdd_at(direction, k), kDt, stance.contacts);
    if (r.status != IdStatus::kSolved && out.not_solved++ == 0)
      out.first_message = std::string(to_string(r.status)) + ": " + r.message;
    out.tau.push_back(r.tau);
    if (k == 0) out.first_active_set = r.active_set;
    if (k > 0 && r.active_set != last_active) ++out.active_set_changes;
    last_active = r.active_set;
  }
  return out;
}

// K = ∂τ/∂⁻v at ⁻v = 0, q̈_des = 0 by forward differences of step 1e-9 (inside every tolerance,
// so the basis does not change), from a solver warm-started at ⁻v = 0.
MatrixXd torque_velocity_jacobian(const Variant& variant, const A1Stance& stance) {
  const multibody::Model& model = stance.scene.model;
  InverseDynamics id(model, joint_dofs(model), parameters(variant));
  VectorXd v = VectorXd::Zero(model.nv());
  const VectorXd qdd = VectorXd::Zero(12);
  id.solve(stance.scene.q0, v, qdd, kDt, stance.contacts);
  const VectorXd tau0 = id.solve(stance.scene.q0, v, qdd, kDt, stance.contacts).tau;
  MatrixXd K(12, model.nv());
  const double h = 1e-9;
  for (int i = 0; i < model.nv(); ++i) {
    v.setZero();
    v[i] = h;
    K.col(i) = (id.solve(stance.scene.q0, v, qdd, kDt, stance.contacts).tau - tau0) / h;
  }
  return K;
}

struct Statistics {
  double max_dtau = 0.0, mean_dtau = 0.0;  ///< of Δτ_k (minus the noise-free Δτ_k if given)
  double excess = 0.0;                      ///< max_k |Δτ_k − K Δv_k|∞
};
Statistics statistics(const ChatterRun& r, const ChatterRun* clean, const MatrixXd& K,
                      const std::vector<VectorXd>& v) {
  Statistics s;
  for (int k = 1; k < kSteps; ++k) {
    VectorXd d = r.tau[k] - r.tau[k - 1];
    if (clean) d -= clean->tau[k] - clean->tau[k - 1];
    const double m = d.cwiseAbs().maxCoeff();
    s.max_dtau = std::max(s.max_dtau, m);
    s.mean_dtau += m / (kSteps - 1);
    s.excess = std::max(s.excess, (d - K * (v[k] - v[k - 1])).cwiseAbs().maxCoeff());
  }
  return s;
}

std::string set_string(const std::vector<int>& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "}";
}

// §10.11: the static stance held for 2000 steps with 1e-9 noise on ⁻v.
TEST(IdChatterTest, StaticStanceTorquesMoveByTheNoiseOnly) {
  A1Stance stance;
  stance.touch();
  ASSERT_EQ(stance.contacts.size(), 4);
  const std::vector<VectorXd> v = noise_sequence(stance.scene.model.nv(), true);
  for (const Variant& variant : kVariants) {
    const ChatterRun r = run(variant, stance, VectorXd(), v);
    const MatrixXd K = torque_velocity_jacobian(variant, stance);
    const Statistics s = statistics(r, nullptr, K, v);
    std::printf("[ measured ] %-17s static stance, 2000 steps, noise 1e-9: max |dtau| %.3e N m (mean %.3e), excess "
                "over K dv %.1e, |dtau/dv| row 1-norm %.2e N m s/m, active-set changes %d (first %s), not solved %d%s%s\n",
                variant.name, s.max_dtau, s.mean_dtau, s.excess, K.rowwise().lpNorm<1>().maxCoeff(),
                r.active_set_changes, set_string(r.first_active_set).c_str(), r.not_solved,
                r.not_solved ? ", first: " : "", r.first_message.c_str());
    if (!variant.asserted) continue;
    EXPECT_LE(s.max_dtau, variant.max_dtau) << variant.name;
    EXPECT_EQ(r.not_solved, 0) << variant.name << ": " << r.first_message;
    if (variant.formulation == Formulation::kLcpNoSlip) {
      EXPECT_EQ(r.active_set_changes, 0) << variant.name;
      EXPECT_LE(s.excess, 1e-9) << variant.name;
    } else {
      // QP,μ: the warm-started active-set solves of both stages (one quasi-definite KKT solve with
      // δ = 1e-10 and three refinement steps each) are exact to about 1e-6 of the torques;
      // measured excess 4.1e-6 N·m (the interior point at 1e-13, before the warm starts: 3e-7).
      EXPECT_LE(s.excess, 1e-5) << variant.name;
    }
  }
}

// The slow-motion variant: q̈_des(t) = sin(2π t) · a (the feet-fixed crouch, 0.2 rad/s² on the
// thighs), the same noise; the noise-free run gives the smooth change.
TEST(IdChatterTest, SlowMotionTorquesAreSmoothUpToTheNoise) {
  A1Stance stance;
  stance.touch();
  const VectorXd a = crouch_direction(stance, 0.2);
  const int nv = stance.scene.model.nv();
  const std::vector<VectorXd> v = noise_sequence(nv, true), zero = noise_sequence(nv, false);
  for (const Variant& variant : kVariants) {
    const ChatterRun noisy = run(variant, stance, a, v);
    const ChatterRun clean = run(variant, stance, a, zero);
    const MatrixXd K = torque_velocity_jacobian(variant, stance);
    const Statistics s = statistics(noisy, &clean, K, v);
    const Statistics smooth = statistics(clean, nullptr, MatrixXd::Zero(12, nv), zero);
    double second = 0.0;
    for (int k = 2; k < kSteps; ++k)
      second = std::max(second, (clean.tau[k] - 2 * clean.tau[k - 1] + clean.tau[k - 2]).cwiseAbs().maxCoeff());
    std::printf("[ measured ] %-17s slow motion: smooth max |dtau| %.3e N m (max |d2tau| %.3e); the noise adds max "
                "%.3e N m (excess over K dv %.1e); active-set changes %d noisy, %d noise-free; not solved %d%s%s\n",
                variant.name, smooth.max_dtau, second, s.max_dtau, s.excess, noisy.active_set_changes,
                clean.active_set_changes, noisy.not_solved, noisy.not_solved ? ", first: " : "",
                noisy.first_message.c_str());
    if (!variant.asserted) continue;
    EXPECT_LE(s.max_dtau, variant.max_dtau) << variant.name;
    EXPECT_EQ(noisy.not_solved, 0) << variant.name << ": " << noisy.first_message;
    EXPECT_EQ(noisy.active_set_changes, 0) << variant.name;
    EXPECT_EQ(clean.active_set_changes, 0) << variant.name;
    EXPECT_LE(s.excess, variant.formulation == Formulation::kLcpNoSlip ? 1e-9 : 1e-5) << variant.name;  // see above
  }
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
