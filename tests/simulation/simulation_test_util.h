// Small helpers shared by the simulation tests: scene-number formatting, the world twist of a
// free body, and the check that set_state() restarts the warm starts.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include <Eigen/Core>
#include <gtest/gtest.h>

#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation::test_util {

/// x with 17 significant digits, for numbers written into a scene's YAML.
inline std::string num(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

/// The floating joint of the free body `name`: q = [p (3), quaternion (w, x, y, z)],
/// v = [ω_W; v_W]: the angular velocity and the velocity of the body origin, world coordinates.
inline const multibody::Joint& floating_joint(const multibody::Model& model, const std::string& name) {
  return model.body(model.joint_body(name)).joint;
}

/// World-frame velocity of the body origin and angular velocity of the body with joint j.
inline std::pair<Eigen::Vector3d, Eigen::Vector3d> world_twist(const Simulator& sim, const multibody::Joint& j) {
  const multibody::Model& model = sim.model();
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, sim.q(), sim.v());
  int body = 0;
  for (int b = 1; b < model.num_bodies(); ++b)
    if (&model.body(b).joint == &j) body = b;
  const Eigen::Matrix3d& R = ws.X_WB[body].R;
  return {R * ws.V_B[body].v, R * ws.V_B[body].w};
}

/// After set_state(q, v) on both, `warmed` (a simulator with steps behind it) and `fresh` take
/// `steps` steps with bit-identical states: its warm starts restart from the set state.
inline void expect_same_steps_after_set_state(Simulator& warmed, Simulator& fresh, const Eigen::VectorXd& q,
                                              const Eigen::VectorXd& v, int steps, const std::string& label) {
  warmed.set_state(q, v);
  fresh.set_state(q, v);
  for (int k = 0; k < steps; ++k) {
    warmed.step();
    fresh.step();
    EXPECT_EQ(warmed.q(), fresh.q()) << label << " step " << k;
    EXPECT_EQ(warmed.v(), fresh.v()) << label << " step " << k;
  }
}

}  // namespace coulomb::simulation::test_util
