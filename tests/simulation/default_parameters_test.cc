// Acceptance of coulomb's default contact parameters (issue 9 item 4; docs/contact.md, "Default
// parameters"): the scenes of tests/simulation/default_parameter_scenarios.h, written with no
// contact, collision or solver keys, at the default δt = 10 ms, must behave as a user expects:
//  - ten 1 kg boxes stacked with ±2 mm / ±3° perturbations stand for 10 s, the top box drifting
//    ≤ 2 mm;
//  - a 1000 kg box on a 1 kg box penetrates ≤ 2 mm and does not topple;
//  - a single resting box penetrates ≤ 0.5 mm;
//  - a box sliding at 2.2 m/s does not tumble.
// Every test prints what it measured ("[ measured ]").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "default_parameter_scenarios.h"

namespace coulomb::simulation {
namespace {

namespace dp = default_parameters;
constexpr double kDeg = M_PI / 180.0;

TEST(DefaultParametersTest, PerturbedStackOfTenBoxesStandsTenSeconds) {
  const dp::StackResult r = dp::run_stack();
  std::printf("[ measured ] ten-box stack, defaults, dt = 10 ms, 10 s: top box drift max %.3f mm (horizontal %.3f mm, "
              "sinking %.3f mm), max tilt of any box %.3f deg, max penetration %.3f mm, SAP iterations mean %.2f "
              "max %d, %d failures\n",
              1e3 * r.top_drift, 1e3 * r.top_horizontal_drift, 1e3 * r.top_drop, r.max_tilt / kDeg,
              1e3 * r.run.max_penetration, r.run.iterations, r.run.max_iterations, r.run.failures);
  EXPECT_EQ(r.run.failures, 0);
  EXPECT_LE(r.top_drift, 2e-3);
  EXPECT_LT(r.max_tilt, 1.0 * kDeg);
}

TEST(DefaultParametersTest, HeavyBoxOnLightBoxPenetratesLittleAndDoesNotTopple) {
  const dp::PairResult r = dp::run_pair();
  std::printf("[ measured ] 1000 kg box on 1 kg box, defaults, dt = 10 ms, 5 s: max penetration %.3f mm (last second "
              "%.3f mm), heavy box sank %.3f mm, max tilt %.3f deg, SAP iterations mean %.2f max %d, %d failures\n",
              1e3 * r.run.max_penetration, 1e3 * r.settled_penetration, 1e3 * r.heavy_drop, r.max_tilt / kDeg,
              r.run.iterations, r.run.max_iterations, r.run.failures);
  EXPECT_EQ(r.run.failures, 0);
  EXPECT_LE(r.run.max_penetration, 2e-3);
  EXPECT_LT(r.max_tilt, 1.0 * kDeg);
}

TEST(DefaultParametersTest, RestingBoxPenetratesAtMostHalfAMillimetre) {
  const dp::RestingResult r = dp::run_resting();
  std::printf("[ measured ] 1 kg box resting, defaults, dt = 10 ms: penetration %.4f mm (last second; max over 2 s "
              "%.4f mm), SAP iterations mean %.2f, %d failures\n",
              1e3 * r.settled_penetration, 1e3 * r.run.max_penetration, r.run.iterations, r.run.failures);
  EXPECT_EQ(r.run.failures, 0);
  EXPECT_LE(r.run.max_penetration, 0.5e-3);
}

TEST(DefaultParametersTest, BoxSlidingAtTwoMetresPerSecondDoesNotTumble) {
  const dp::SlidingResult r = dp::run_sliding();
  const double expected = dp::kSlideSpeed * dp::kSlideSpeed / (2.0 * 1.0 * 9.81);  // v²/(2μg), μ = 1
  std::printf("[ measured ] 1 kg box sliding at %.1f m/s, defaults, dt = 10 ms, 2 s: max tilt %.3f deg, max |w| %.3f "
              "rad/s, max rise %.3f mm, stopped after %.4f m (Coulomb v^2/(2 mu g) = %.4f m), final speed %.2e m/s, "
              "final tilt %.3f deg, %d failures\n",
              dp::kSlideSpeed, r.max_tilt / kDeg, r.max_angular_speed, 1e3 * r.max_rise, r.distance, expected,
              r.final_speed, r.final_tilt / kDeg, r.run.failures);
  EXPECT_EQ(r.run.failures, 0);
  EXPECT_LT(r.max_tilt, 5.0 * kDeg);
  EXPECT_LT(r.final_tilt, 1.0 * kDeg);
  EXPECT_LT(r.final_speed, 1e-3);
  EXPECT_NEAR(r.distance, expected, 0.1 * expected);
}

}  // namespace
}  // namespace coulomb::simulation
