// Frictionless contact (μ = 0) in the simulator (issue 9 item 1): a compliant contact pushes, it
// never pulls. Before the fix the friction cone's stiction test accepted y = (0, 0, y_n < 0) when
// μ = 0 and returned an adhesive impulse while φ was within the margin: a sphere launched off the
// ground rose 0.245 mm instead of v²/2g, and a row of spheres hit at one end travelled glued
// together. Analytic truths: ballistic rise v₀²/(2g); conservation of linear momentum; bodies that
// separate after an impact keep separating (no force at a distance).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::simulation {
namespace {

std::string num(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// A 1 kg sphere (r = 0.05 m) resting on the ground, μ = 0, launched upward at v₀ = 0.5 m/s:
// it rises v₀²/(2g) = 12.74 mm. Every integrator; stiff and soft contact; δt = 1 ms and 10 ms.
TEST(FrictionlessContactTest, SphereLaunchedOffTheGroundRisesBallistically) {
  const double v0 = 0.5, g = 9.81, r = 0.05, expected = v0 * v0 / (2 * g);
  for (const char* approximation : {"sap", "similar", "lagged"})
  for (double dt : {1e-3, 1e-2})
    for (double k : {1e4, 1e6})
      for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kSymplecticEuler, Integrator::kMidpoint}) {
        const std::string yaml =
            "gravity: [0, 0, -9.81]\ncontact_approximation: " + std::string(approximation) + "\n"
            "contact: {mu: 0.0, stiffness: " + num(k) + ", dissipation_time: 0.1, hunt_crossley_dissipation: 10}\n"
            "bodies:\n"
            "  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
            "  - name: ball\n    mass: 1.0\n    shapes: [{type: sphere, radius: " + num(r) + "}]\n"
            "    position: [0, 0, " + num(r) + "]\n    linear_velocity: [0, 0, " + num(v0) + "]\n";
        SimulatorParameters params;
        params.time_step = dt;
        params.integrator = integrator;
        Simulator sim(io::parse_scene(yaml, "launch"), params);
        const int iz = sim.model().body(sim.model().joint_body("ball")).joint.q_index + 2;
        double z_max = sim.q()[iz];
        for (int s = 0; s < static_cast<int>(std::lround(0.3 / dt)); ++s) {
          sim.step();
          z_max = std::max(z_max, sim.q()[iz]);
        }
        const double rise = z_max - r;
        // The discrete apex of a ballistic flight sampled every δt: within v₀δt of the truth
        // for the Euler schemes (first order), far closer for midpoint.
        std::printf("[ measured ] mu = 0 launch, %s, dt %g, k %g, %s: rise %.4f mm (v0^2/2g = %.4f mm, rel. error %.2e)\n",
                    approximation, dt, k, to_string(integrator), 1e3 * rise, 1e3 * expected, (rise - expected) / expected);
        EXPECT_NEAR(rise, expected, v0 * dt + 1e-4) << approximation << " " << to_string(integrator) << " dt " << dt << " k " << k;
      }
}

// Five equal 1 kg spheres in a row along x (r = 0.05 m), μ = 0, no gravity. Sphere 0 moves at
// 1 m/s toward the other four, which touch each other at rest. Whatever the contact's
// dissipation: total momentum stays 1 kg·m/s, kinetic energy never grows, and no contact ever
// pulls (every normal impulse of every step ≥ 0). After the impacts no sphere approaches the
// one in front (non-decreasing velocities). Undamped (τ_d = 0, d = 0) and resolved in time, the row must come apart: the last
// sphere leaves faster than the 0.2 m/s of the glued row the adhesive bug produced. (With the
// default τ_d = 0.1 s the Kelvin–Voigt contact is ~50× overdamped, the impacts are plastic and a
// common 0.2 m/s is the right answer — without any pull.)
TEST(FrictionlessContactTest, RowOfSpheresHitAtOneEndDoesNotStickTogether) {
  const double r = 0.05;
  for (const std::string approximation : {"sap", "similar", "lagged"})
  for (bool dissipative : {false, true})
    for (double dt : {1e-3, 1e-2})
      for (Integrator integrator : {Integrator::kImplicitEuler, Integrator::kMidpoint}) {
        // Undamped (τ_d = 0, d = 0) or the old defaults' damping (τ_d = 0.1 s; d = 10 s/m).
        const double tau_d = dissipative ? 0.1 : 0.0, d = dissipative ? 10.0 : 0.0;
        std::string yaml =
            "gravity: [0, 0, 0]\ncontact_approximation: " + approximation + "\n"
            "contact: {mu: 0.0, stiffness: 1.0e6, dissipation_time: " + num(tau_d) +
            ", hunt_crossley_dissipation: " + num(d) + "}\nbodies:\n";
        for (int i = 0; i < 5; ++i) {
          const double x = i == 0 ? -0.05 : 2 * r * i;
          yaml += "  - name: s" + std::to_string(i) + "\n    mass: 1.0\n    shapes: [{type: sphere, radius: " + num(r) +
                  "}]\n    position: [" + num(x) + ", 0, 0]\n";
          if (i == 0) yaml += "    linear_velocity: [1.0, 0, 0]\n";
        }
        SimulatorParameters params;
        params.time_step = dt;
        params.integrator = integrator;
        Simulator sim(io::parse_scene(yaml, "row"), params);
        std::vector<int> ix(5);
        std::vector<int> iv(5);
        for (int i = 0; i < 5; ++i) {
          const multibody::Joint& j = sim.model().body(sim.model().joint_body("s" + std::to_string(i))).joint;
          ix[i] = j.q_index;
          iv[i] = j.v_index + 3;
        }
        double min_normal_impulse = 0.0;
        for (int s = 0; s < static_cast<int>(std::lround(1.0 / dt)); ++s) {
          sim.step();
          const Eigen::VectorXd& gamma = sim.contact_impulses();
          for (int c = 0; c < gamma.size() / 3; ++c) min_normal_impulse = std::min(min_normal_impulse, gamma[3 * c + 2]);
        }
        double momentum = 0.0, energy = 0.0;
        std::vector<double> vel(5);
        for (int i = 0; i < 5; ++i) {
          vel[i] = sim.v()[iv[i]];
          momentum += vel[i];
          energy += 0.5 * vel[i] * vel[i];
        }
        std::printf("[ measured ] row of 5, %s, tau_d %g, d %g, dt %g, %s: v = %.4f %.4f %.4f %.4f %.4f m/s, "
                    "momentum error %.2e, energy %.4f J (of 0.5), min normal impulse %.2e N s\n",
                    approximation.c_str(), tau_d, d, dt, to_string(integrator), vel[0], vel[1], vel[2], vel[3], vel[4], momentum - 1.0, energy,
                    min_normal_impulse);
        const std::string label =
            approximation + " " + to_string(integrator) + " tau_d " + num(tau_d) + " d " + num(d) + " dt " + num(dt);
        // Contacts between free bodies exchange equal and opposite impulses; what is left is SAP's
        // stopping tolerance (ε_r = 1e-6 bounds the momentum error e_m, Eq. 32). The cone's
        // stiction region is linear, so Newton lands on it exactly; the Hunt–Crossley law is not.
        EXPECT_NEAR(momentum, 1.0, approximation == "sap" ? 1e-9 : 1e-6) << label;
        EXPECT_LE(energy, 0.5 + 1e-9) << label;
        EXPECT_GE(min_normal_impulse, 0.0) << label;
        for (int i = 0; i + 1 < 5; ++i) {
          EXPECT_GE(vel[i + 1], vel[i] - 1e-5) << label << " pair " << i;
          const double gap = sim.q()[ix[i + 1]] - sim.q()[ix[i]] - 2 * r;
          EXPECT_GT(gap, -1e-6) << label << " pair " << i;
        }
        // Implicit Euler at δt = 10 ms steps over the whole 2.2 ms contact: its own damping makes the
        // impact plastic (0.207 m/s), with no pull; the claim is checked where the contact is resolved.
        if (!dissipative && (dt == 1e-3 || integrator == Integrator::kMidpoint)) {
          EXPECT_GT(vel[4], 0.22) << label;
        }
      }
}

}  // namespace
}  // namespace coulomb::simulation
