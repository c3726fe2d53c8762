// Inverse dynamics with rigid contact and friction (Zapolsky & Drumwright; digest
// ../shared/digests/inverse-dynamics.md §10): the model-level checks on real robots.
//  - §10.1 zero contacts: plain inverse dynamics (RNEA for a fixed base; the Y_P closed form,
//    computed here with dense inverses, for a floating base);
//  - §10.2 hard equalities after every solve on random states;
//  - §10.3 the A1's static four-foot stance: Σ vertical impulse = m g Δt, Σ horizontal = 0,
//    ⁺v = 0; QP,μ after Stage II loads all four feet; a symmetric robot gets symmetric loads.
#include "coulomb/inverse_dynamics/inverse_dynamics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include <Eigen/Dense>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/rnea.h"
#include "inverse_dynamics/id_test_util.h"

namespace coulomb::inverse_dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using testing::A1Stance;

const Formulation kAll[] = {Formulation::kLcpNoSlip, Formulation::kLcpCoulomb, Formulation::kQpCoulomb,
                            Formulation::kQpNoSlip};

IdParameters params(Formulation f) {
  IdParameters p;
  p.formulation = f;
  return p;
}

TEST(InverseDynamicsTest, ZeroContactsFixedBaseIsRnea) {
  io::UrdfModel urdf = io::load_urdf(std::string(COULOMB_SHARED_DIR) + "/models/kuka_iiwa_robot.urdf");
  const multibody::Model& model = urdf.model;
  multibody::Workspace ws(model);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (Formulation f : kAll) {
    InverseDynamics id(model, joint_dofs(model), params(f));
    for (int trial = 0; trial < 5; ++trial) {
      VectorXd q(7), v(7), a(7);
      for (int i = 0; i < 7; ++i) q[i] = u(rng), v[i] = u(rng), a[i] = 3 * u(rng);
      const double dt = trial == 0 ? 1e-4 : 1e-3 * (trial + 1);
      const IdResults& r = id.solve(q, v, a, dt, contact::ContactSet{});
      ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f);
      // M (v + Δt a − v) − Δt (−b) = Δt (M a + b): τ = rnea(q, v, a) exactly in exact arithmetic.
      const VectorXd tau = multibody::rnea(model, ws, q, v, a);
      EXPECT_LE((r.tau - tau).norm(), 1e-9 * tau.norm()) << to_string(f) << " dt " << dt;
      EXPECT_LE((r.v_next - (v + dt * a)).norm(), 1e-12);
    }
  }
}

TEST(InverseDynamicsTest, ZeroContactsFloatingBaseIsTheClosedForm) {
  A1Stance stance;
  const multibody::Model& model = stance.scene.model;
  multibody::Workspace ws(model);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<int> act = joint_dofs(model);
  ASSERT_EQ(act.size(), 12u);
  for (Formulation f : kAll) {
    InverseDynamics id(model, act, params(f));
    VectorXd q = stance.scene.q0, v(18), a(12);
    q[2] += 1.0;  // in the air
    for (int i = 0; i < 18; ++i) v[i] = u(rng);
    for (int i = 0; i < 12; ++i) a[i] = 5 * u(rng);
    const double dt = 2e-3;
    const IdResults& r = id.solve(q, v, a, dt, contact::ContactSet{});
    ASSERT_EQ(r.status, IdStatus::kSolved);
    // τ = Y_P (q̇_des − P M⁻¹ (M v + Δt f_ext)) / Δt with Y_P = (P M⁻¹ Pᵀ)⁻¹ (digest §10.1).
    const MatrixXd M = multibody::crba(model, ws, q);
    const VectorXd fext = -multibody::bias_forces(model, ws, q, v);
    MatrixXd P = MatrixXd::Zero(12, 18);
    for (int j = 0; j < 12; ++j) P(j, act[j]) = 1.0;
    const MatrixXd Minv = M.inverse();
    const MatrixXd Y = (P * Minv * P.transpose()).inverse();
    const VectorXd qdot_des = P * v + dt * a;
    const VectorXd tau = Y * (qdot_des - P * Minv * (M * v + dt * fext)) / dt;
    EXPECT_LE((r.tau - tau).norm(), 1e-9 * tau.norm()) << to_string(f);
    const VectorXd v_next = v + Minv * (dt * fext + P.transpose() * (dt * tau));
    EXPECT_LE((r.v_next - v_next).norm(), 1e-9 * v_next.norm());
  }
}

// §10.3: the A1 standing still on flat ground, q̈_des = 0, μ = 1.
TEST(InverseDynamicsTest, A1StaticStanceCarriesItsWeight) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  ASSERT_EQ(stance.contacts.size(), 4);
  EXPECT_NEAR(model.total_mass(), 13.741, 1e-3);
  const double dt = 1e-3, mg_dt = model.total_mass() * 9.81 * dt;
  const VectorXd v = VectorXd::Zero(18), a = VectorXd::Zero(12);
  for (Formulation f : kAll) {
    InverseDynamics id(model, joint_dofs(model), params(f));
    const IdResults& r = id.solve(stance.scene.q0, v, a, dt, stance.contacts);
    ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f) << ": " << r.message;
    Eigen::Vector3d sum = Eigen::Vector3d::Zero();
    int loaded = 0;
    for (int i = 0; i < 4; ++i) {
      const contact::Contact& c = stance.contacts.contacts[i];
      const Eigen::Vector3d g_W = c.R_WC * r.contact_impulses.segment<3>(3 * i);
      sum += g_W;
      if (r.contact_impulses[3 * i + 2] > 1e-3 * mg_dt) ++loaded;
    }
    EXPECT_NEAR(sum.z(), mg_dt, 1e-6 * mg_dt) << to_string(f);
    EXPECT_NEAR(sum.x(), 0.0, 1e-6 * mg_dt) << to_string(f);
    EXPECT_NEAR(sum.y(), 0.0, 1e-6 * mg_dt) << to_string(f);
    EXPECT_LE(r.v_next.cwiseAbs().maxCoeff(), 1e-9) << to_string(f);
    EXPECT_LE(r.stats.tracking_residual, 1e-10);
    EXPECT_LE(r.stats.dynamics_residual, 1e-9 * mg_dt);
    if (f == Formulation::kQpCoulomb || f == Formulation::kQpNoSlip) {
      EXPECT_EQ(loaded, 4) << to_string(f);
    }
    std::printf("%-12s loads [N]: %.4f %.4f %.4f %.4f  |tau| %.4f  it %d + %d  %.1f us\n", to_string(f),
                r.contact_impulses[2] / dt, r.contact_impulses[5] / dt, r.contact_impulses[8] / dt,
                r.contact_impulses[11] / dt, r.tau.norm(), r.stats.solver_iterations, r.stats.stage_two_iterations,
                1e6 * r.stats.solve_time);
  }
}

// §10.3: a robot symmetric about both vertical planes, in a symmetric pose, gets four equal
// normal impulses (m g Δt / 4 each) from the QP formulations after Stage II; the A1 with its
// trunk symmetrized (left–right mirror, all knees bent alike) gets equal left and right loads.
TEST(InverseDynamicsTest, SymmetricStanceGetsSymmetricLoads) {
  for (const bool four_fold : {true, false}) {
    A1Stance stance(four_fold ? testing::coulomb_quadruped_urdf() : testing::symmetric_a1_urdf(), 1.0, 0.3123,
                    four_fold ? -1.0 : 1.0);
    stance.touch();
    const multibody::Model& model = stance.scene.model;
    ASSERT_EQ(stance.contacts.size(), 4);
    const double dt = 1e-3, quarter = model.total_mass() * 9.81 * dt / 4;
    const VectorXd v = VectorXd::Zero(18), a = VectorXd::Zero(12);
    for (Formulation f : {Formulation::kQpCoulomb, Formulation::kQpNoSlip}) {
      InverseDynamics id(model, joint_dofs(model), params(f));
      const IdResults& r = id.solve(stance.scene.q0, v, a, dt, stance.contacts);
      ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f);
      // Contacts by foot: the body each one touches, named FR/FL/RR/RL.
      double load[4] = {0, 0, 0, 0};  // FR, FL, RR, RL
      for (int i = 0; i < 4; ++i) {
        const std::string name = model.body(stance.contacts.contacts[i].body_b).name;
        const int leg = name.rfind("FR", 0) == 0 ? 0 : name.rfind("FL", 0) == 0 ? 1 : name.rfind("RR", 0) == 0 ? 2 : 3;
        load[leg] = r.contact_impulses[3 * i + 2];
      }
      std::printf("%s %-10s loads/quarter: %.9f %.9f %.9f %.9f\n", four_fold ? "quadruped" : "A1-sym", to_string(f),
                  load[0] / quarter, load[1] / quarter, load[2] / quarter, load[3] / quarter);
      if (four_fold) {
        for (int leg = 0; leg < 4; ++leg) EXPECT_NEAR(load[leg], quarter, 1e-6 * quarter) << to_string(f) << " leg " << leg;
      } else {
        EXPECT_NEAR(load[0], load[1], 1e-6 * quarter) << to_string(f);
        EXPECT_NEAR(load[2], load[3], 1e-6 * quarter) << to_string(f);
      }
    }
  }
}

// §10.2: hard equalities after every solve, on random states of the A1 near the ground.
TEST(InverseDynamicsTest, HardEqualitiesHoldOnRandomStates) {
  A1Stance stance;
  const multibody::Model& model = stance.scene.model;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (Formulation f : kAll) {
    InverseDynamics id(model, joint_dofs(model), params(f));
    int solved = 0;
    for (int trial = 0; trial < 20; ++trial) {
      VectorXd q = stance.scene.q0;
      for (int j = 7; j < 19; ++j) q[j] += 0.05 * u(rng);
      VectorXd v = 0.1 * VectorXd::NullaryExpr(18, [&] { return u(rng); });
      VectorXd a = 2.0 * VectorXd::NullaryExpr(12, [&] { return u(rng); });
      stance.update_contacts(q);
      const double dt = 1e-3;
      const IdResults& r = id.solve(q, v, a, dt, stance.contacts);
      const double scale = model.total_mass() * 9.81 * dt;
      EXPECT_LE(r.stats.dynamics_residual, 1e-9 * scale) << to_string(f) << " trial " << trial;
      if (r.status == IdStatus::kSolved) {
        ++solved;
        EXPECT_LE(r.stats.tracking_residual, 1e-10) << to_string(f);
        EXPECT_GE(r.stats.min_normal_velocity, -1e-8) << to_string(f);
        if (f == Formulation::kLcpNoSlip) {
          EXPECT_LE(r.stats.slip_residual, 1e-9) << to_string(f);
        }
      } else {
        EXPECT_TRUE(r.status == IdStatus::kInconsistent) << to_string(f) << ": " << to_string(r.status) << " " << r.message;
      }
      EXPECT_TRUE(r.tau.allFinite());
    }
    EXPECT_GT(solved, 0) << to_string(f);
    std::printf("%-12s solved %d of 20 random requests\n", to_string(f), solved);
  }
}

// Every formulation solves (or, for no-slip, answers kInconsistent) on 200 states of the A1 with
// velocities from 1e-1 down to 1e-9 m/s and the feet from 0.1 mm in the ground to 0.1 mm above:
// round-off-sized data once made Lemke end on a false ray for a robot in free fall.
TEST(InverseDynamicsTest, RobustAcrossVelocityScalesAndGaps) {
  A1Stance stance(testing::a1_urdf(), 0.8);
  const multibody::Model& model = stance.scene.model;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (Formulation f : kAll) {
    InverseDynamics id(model, joint_dofs(model), params(f));
    int failed = 0;
    for (int t = 0; t < 200; ++t) {
      const double scale = std::pow(10.0, -1 - 8 * (t % 10) / 9.0);
      VectorXd v = scale * VectorXd::NullaryExpr(18, [&] { return u(rng); });
      VectorXd q = stance.scene.q0;
      q[2] = 0.3123 + 1e-4 * u(rng);
      stance.update_contacts(q);
      const IdResults& r = id.solve(q, v, VectorXd::Zero(12), 1e-3, stance.contacts);
      if (!r.ok()) {
        ++failed;
        ADD_FAILURE() << to_string(f) << " state " << t << " (|v| scale " << scale << "): " << to_string(r.status)
                      << ": " << r.message;
      }
    }
    EXPECT_EQ(failed, 0) << to_string(f);
  }
}

// A solver that has been moved keeps working (its state does not refer to the moved-from object).
TEST(InverseDynamicsTest, MovedSolverKeepsItsParameters) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  const VectorXd v = VectorXd::Zero(18), a = VectorXd::Zero(12);
  InverseDynamics reference(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
  const VectorXd tau = reference.solve(stance.scene.q0, v, a, 1e-3, stance.contacts).tau;
  std::vector<InverseDynamics> solvers;
  {
    InverseDynamics temporary(model, joint_dofs(model), params(Formulation::kLcpCoulomb));
    solvers.push_back(std::move(temporary));
  }
  for (int i = 0; i < 8; ++i) solvers.emplace_back(model, joint_dofs(model), params(Formulation::kQpNoSlip));
  const IdResults& r = solvers.front().solve(stance.scene.q0, v, a, 1e-3, stance.contacts);
  ASSERT_EQ(r.status, IdStatus::kSolved);
  EXPECT_EQ(solvers.front().parameters().formulation, Formulation::kLcpCoulomb);
  EXPECT_LE((r.tau - tau).norm(), 1e-12 * tau.norm());
}

// Outside the paper's scenes: control periods from 1e-4 to 1e-1 s, and a payload of 1000 times
// the robot's weight pressing on its base (set_external_forces): the four feet must carry
// (1 + payload) m g Δt exactly, with ⁺v = 0, in every formulation.
TEST(InverseDynamicsTest, StanceAcrossTimeStepsAndAHeavyPayload) {
  A1Stance stance;
  stance.touch();
  const multibody::Model& model = stance.scene.model;
  const VectorXd v = VectorXd::Zero(18), a = VectorXd::Zero(12);
  const double mg = model.total_mass() * 9.81;
  for (Formulation f : kAll) {
    for (const double dt : {1e-4, 1e-2, 1e-1}) {
      for (const double payload : {0.0, 1000.0}) {
        InverseDynamics id(model, joint_dofs(model), params(f));
        VectorXd push = VectorXd::Zero(18);
        push[5] = -payload * mg;  // the base's vz row: a vertical force on the base origin [N]
        id.set_external_forces(push);
        const IdResults& r = id.solve(stance.scene.q0, v, a, dt, stance.contacts);
        ASSERT_EQ(r.status, IdStatus::kSolved) << to_string(f) << " dt " << dt << " payload " << payload << ": "
                                               << r.message;
        double fz = 0.0;
        for (int i = 0; i < 4; ++i) fz += (stance.contacts.contacts[i].R_WC * r.contact_impulses.segment<3>(3 * i)).z();
        const double expected = (1.0 + payload) * mg * dt;
        EXPECT_NEAR(fz, expected, 1e-6 * expected) << to_string(f) << " dt " << dt << " payload " << payload;
        EXPECT_LE(r.v_next.cwiseAbs().maxCoeff(), 1e-8) << to_string(f) << " dt " << dt << " payload " << payload;
      }
    }
  }
}

}  // namespace
}  // namespace coulomb::inverse_dynamics
