// Issue 13's acceptance on the A1 (examples/scenes/a1_trot.yaml): QP,μ trots straight on flat
// rigid ground at the commanded speed, and only because Stage I's maximal dissipation is
// measured in the desired base frame (ControlGains::qp_desired_base_frame); QP,μ walks every
// planar terrain of the paper without falling (digest ../shared/digests/inverse-dynamics.md
// §8.5, §10 item 15). Controller time is reported in docs/experiments.md, not asserted here.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb/control/experiment.h"
#include "coulomb/io/scene_loader.h"

namespace coulomb::control {
namespace {

const std::string kScene = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/a1_trot.yaml";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// seed > 0: the floating base's starting position offset by U[−1e-9, 1e-9] m per coordinate (a
// trot's contact events amplify round-off: one trajectory can be lucky or unlucky).
ControlRun trot(ControllerKind kind, TerrainKind terrain_kind, double duration, bool straight,
                bool desired_frame = true, bool touchdown_consistency = true, bool torque_feedback = true,
                int seed = 0) {
  const std::string text = read(kScene);
  const scene::Scene plain = io::parse_scene(text, kScene, COULOMB_SOURCE_DIR "/examples/scenes");
  const Terrain terrain = make_terrain(terrain_kind, plain);
  scene::Scene scene = io::parse_scene(apply_terrain(text, terrain), kScene, COULOMB_SOURCE_DIR "/examples/scenes");
  if (seed > 0) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::uniform_real_distribution<double> u(-1e-9, 1e-9);
    for (const multibody::Body& body : scene.model.bodies())
      if (body.joint.type == multibody::JointType::kFloating)
        for (int k = 0; k < 3; ++k) scene.q0[body.joint.q_index + k] += u(rng);
  }
  ControlRunOptions options;
  options.controller = kind;
  options.terrain = terrain_kind;
  options.duration = duration;
  options.gains = default_gains("trot");
  options.gains.qp_desired_base_frame = desired_frame;
  options.gains.touchdown_consistency = touchdown_consistency;
  options.gains.id_torque_feedback = torque_feedback;
  options.gains_set = true;
  if (straight) {
    options.trot.waypoints.waypoints.clear();
    options.trot.waypoints.speed = 0.3;
  } else {
    options.trot.waypoints = WaypointParameters::paper(2.0, 0.3);
  }
  options.record_series = true;
  return run_control(std::move(scene), terrain, options);
}

// 10 s straight on rigid ground with μ = 100: no fall, mean forward speed within 20 % of the
// commanded 0.3 m/s (the mean includes the 0.2 s standing start and the 0.3 s ramp, 3.5 % of the
// run). The same controller with maximal dissipation in the world frame (the paper's Stage I
// as written) is printed beside it: it measured 0.027 m/s.
TEST(ControlAcceptanceTest, QpMuTrotsStraightAtTheCommandedSpeed) {
  const ControlRun run = trot(ControllerKind::kIdQpCoulomb, TerrainKind::kRigidHigh, 10.0, true);
  const ControlRun world = trot(ControllerKind::kIdQpCoulomb, TerrainKind::kRigidHigh, 10.0, true, false);
  std::printf("QP,mu straight 10 s, rigid mu 100: desired-base frame %.3f m/s (fell %d), world frame %.3f m/s (fell %d); "
              "controller %.1f us mean, %.1f us max; joint error %.4f rad\n",
              run.metrics.mean_forward_speed, run.metrics.fell, world.metrics.mean_forward_speed, world.metrics.fell,
              1e6 * run.metrics.controller_time_mean, 1e6 * run.metrics.controller_time_max,
              run.metrics.joint_position_error);
  EXPECT_FALSE(run.metrics.fell) << run.metrics.fall_reason;
  EXPECT_NEAR(run.metrics.mean_forward_speed, 0.3, 0.06);
  EXPECT_EQ(run.metrics.id_not_solved, 0);
  EXPECT_EQ(run.metrics.simulator_failures, 0);
  // The premise of the option: in the world frame the QP does not propel the robot.
  EXPECT_LT(world.metrics.mean_forward_speed, 0.5 * run.metrics.mean_forward_speed);
}

// QP,μ completes every planar terrain of Tables 3–5 through the paper's waypoints (10 s each
// here; 30 s in `coulomb experiment id-tables`).
TEST(ControlAcceptanceTest, QpMuWalksEveryPlanarTerrainWithoutFalling) {
  for (TerrainKind terrain : planar_terrains()) {
    const ControlRun run = trot(ControllerKind::kIdQpCoulomb, terrain, 10.0, false);
    std::printf("QP,mu on %s: fell %d, distance %.2f m, joint error %.4f rad, normal-force error %.1f %%\n",
                to_string(terrain), run.metrics.fell, run.metrics.distance, run.metrics.joint_position_error,
                100.0 * run.metrics.normal_force_error_relative);
    EXPECT_FALSE(run.metrics.fell) << to_string(terrain) << ": " << run.metrics.fall_reason;
    EXPECT_GT(run.metrics.distance, 1.0) << to_string(terrain);  // it walked, not stood
  }
}

// Touchdown consistency (ControlGains::touchdown_consistency): without it, rigid inverse dynamics
// answers a foot that lands while its leg still moves down by lifting the whole robot off it in
// one step, a predicted impulse the simulator never applies. The largest predicted Σ f_N over 3 s
// of trotting must drop by half or more with it (measured: 9686 N without, 1115 N with).
TEST(ControlAcceptanceTest, TouchdownConsistencyRemovesThePredictedLiftOffSpikes) {
  auto peak = [](const ControlRun& run) {
    double p = 0.0;
    for (double f : run.series.predicted_normal) p = std::max(p, f);
    return p;
  };
  const ControlRun with = trot(ControllerKind::kIdQpCoulomb, TerrainKind::kRigidHigh, 3.0, true);
  const ControlRun without = trot(ControllerKind::kIdQpCoulomb, TerrainKind::kRigidHigh, 3.0, true, true, false);
  std::printf("peak predicted normal force over 3 s: %.0f N with touchdown consistency, %.0f N without; "
              "normal-force error %.1f %% vs %.1f %%\n",
              peak(with), peak(without), 100.0 * with.metrics.normal_force_error_relative,
              100.0 * without.metrics.normal_force_error_relative);
  EXPECT_FALSE(with.metrics.fell);
  EXPECT_LT(peak(with), 0.5 * peak(without));
  EXPECT_LT(with.metrics.normal_force_error_relative, without.metrics.normal_force_error_relative);
}

// Where the prediction error of the trot comes from: the PID torque feedback every controller
// shares on the A1 acts outside the ID's prediction. Without it (and so only over the first
// 0.45 s: the standing start and the first steps) QP,μ predicts the coming step's Σ f_N within a
// few percent, against about 10 % with the feedback. One trajectory is not enough to say so: the
// error moves with round-off-level changes of the step (4.3 % here, 5.7 % in the -O1 sanitizer
// build, 7.2 % with a chord iteration that stopped one iteration later), so the test takes the
// median over the scene's own start and four starts perturbed by 1e-9 m (measured 3.95–7.18 %,
// median 4.28 %; with the feedback 9.8–11.5 %). LCP,μ without the feedback falls within those
// 0.45 s (printed).
TEST(ControlAcceptanceTest, WithoutTorqueFeedbackTheNormalForceIsPredictedWithinAFewPercent) {
  std::vector<double> off, on;
  for (int seed = 0; seed < 5; ++seed) {
    const ControlRun a = trot(ControllerKind::kIdQpCoulomb, TerrainKind::kRigidHigh, 0.45, true, true, true, false, seed);
    const ControlRun b = trot(ControllerKind::kIdQpCoulomb, TerrainKind::kRigidHigh, 0.45, true, true, true, true, seed);
    EXPECT_FALSE(a.metrics.fell) << "seed " << seed;
    off.push_back(a.metrics.normal_force_error_relative);
    on.push_back(b.metrics.normal_force_error_relative);
    std::printf("QP,mu, first 0.45 s, start %d: normal-force error %.2f %% without torque feedback, %.2f %% with\n", seed,
                100.0 * off.back(), 100.0 * on.back());
  }
  const ControlRun lcp = trot(ControllerKind::kIdLcpCoulomb, TerrainKind::kRigidHigh, 0.45, true, true, true, false);
  std::printf("LCP,mu without: %.2f %% (fell %d at %.3f s)\n", 100.0 * lcp.metrics.normal_force_error_relative,
              lcp.metrics.fell, lcp.metrics.fall_time);
  auto median = [](std::vector<double> x) {
    std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end());
    return x[x.size() / 2];
  };
  EXPECT_LT(median(off), 0.06);
  EXPECT_LT(median(off), 0.75 * median(on));
}

}  // namespace
}  // namespace coulomb::control
