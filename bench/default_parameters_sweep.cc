// Sweep of candidate default contact parameters over the acceptance scenarios of
// tests/simulation/default_parameter_scenarios.h (docs/contact.md, "Default parameters").
//
// Build:  cmake --build build --target coulomb_default_parameters_sweep
// Run:    build/bin/coulomb_default_parameters_sweep [--no-clutter] CANDIDATE...
// A CANDIDATE is a comma-separated list of KEY=VALUE (no spaces), the empty candidate "-" being
// coulomb's current defaults:
//   k=STIFFNESS [N/m]   tau=DISSIPATION_TIME [s]   margin=MARGIN [m]   beta=BETA   sigma=SIGMA
//   approx=sap|similar|lagged   d=HUNT_CROSSLEY_DISSIPATION [s/m]   vs=STICTION_TOLERANCE [m/s]
// e.g.  coulomb_default_parameters_sweep - k=1e7,beta=0.3 approx=lagged,k=1e7,d=20
// Prints one Markdown table row per candidate (criteria from the test; PASS when all four hold):
//   stack: top-box drift over 10 s [mm] and max tilt [deg]; pair: max penetration [mm] and tilt
//   [deg]; rest: penetration [mm]; slide: max tilt [deg], max |ω| [rad/s], max rise [mm],
//   stopping distance [m]; clutter (examples/scenes/clutter.yaml, 10 s): mean / max SAP
//   iterations, steady mean (t > 5 s), max penetration [mm], with the file's contact block
//   (k = 1e12, τ_d = δt: only β, σ and the approximation reach it) and again with the file's
//   contact line removed ("clutter, candidate material": the candidate's k, τ_d, d, approximation);
//   failed SAP solves over all runs.
// Not a test: it takes a minute or two per candidate.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "default_parameter_scenarios.h"

namespace dp = coulomb::simulation::default_parameters;

namespace {

dp::Overrides parse_candidate(const std::string& spec) {
  dp::Overrides o;
  if (spec == "-") return o;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("expected KEY=VALUE, got '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "approx") {
      o.approximation = value;
      continue;
    }
    const double x = std::stod(value);
    if (key == "k") o.stiffness = x;
    else if (key == "tau") o.dissipation_time = x;
    else if (key == "margin") o.margin = x;
    else if (key == "beta") o.beta = x;
    else if (key == "sigma") o.sigma = x;
    else if (key == "d") o.hunt_crossley_dissipation = x;
    else if (key == "vs") o.stiction_tolerance = x;
    else throw std::invalid_argument("unknown key '" + key + "'");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  bool clutter = true;
  std::vector<std::string> candidates;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-clutter") == 0) clutter = false;
    else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: %s [--no-clutter] CANDIDATE...  (see the comment at the top of bench/default_parameters_sweep.cc)\n",
                  argv[0]);
      return 0;
    } else candidates.push_back(argv[i]);
  }
  if (candidates.empty()) candidates.push_back("-");
  const std::string clutter_file = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/clutter.yaml";
  const double deg = M_PI / 180.0;
  std::printf("| candidate | stack drift mm | stack tilt deg | pair pen mm | pair tilt deg | rest pen mm | slide tilt deg "
              "| slide max w rad/s | slide rise mm | slide dist m | clutter iters mean/max (steady) | clutter pen mm "
              "| clutter, candidate material: iters (steady), pen mm | failures | all four |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  int status = 0;
  for (const std::string& spec : candidates) {
    try {
      const dp::Overrides o = parse_candidate(spec);
      const dp::StackResult s = dp::run_stack(o);
      const dp::PairResult p = dp::run_pair(o);
      const dp::RestingResult r = dp::run_resting(o);
      const dp::SlidingResult sl = dp::run_sliding(o);
      const double expected = dp::kSlideSpeed * dp::kSlideSpeed / (2.0 * 9.81);
      const bool pass = s.top_drift <= 2e-3 && s.max_tilt < 1 * deg && p.run.max_penetration <= 2e-3 &&
                        p.max_tilt < 1 * deg && r.run.max_penetration <= 0.5e-3 && sl.max_tilt < 5 * deg &&
                        sl.final_tilt < 1 * deg && sl.final_speed < 1e-3 &&
                        std::abs(sl.distance - expected) < 0.1 * expected;
      int failures = s.run.failures + p.run.failures + r.run.failures + sl.run.failures;
      char clutter_text[160] = "-", clutter_pen[64] = "-", clutter_own[160] = "-";
      if (clutter) {
        const dp::ClutterResult c = dp::run_clutter(clutter_file, o);
        failures += c.run.failures;
        std::snprintf(clutter_text, sizeof clutter_text, "%.2f / %d (%.2f)", c.run.iterations, c.run.max_iterations,
                      c.steady_iterations);
        std::snprintf(clutter_pen, sizeof clutter_pen, "%.1f (steady %.2f)", 1e3 * c.run.max_penetration,
                      1e3 * c.steady_penetration);
        const dp::ClutterResult d = dp::run_clutter(clutter_file, o, 10.0, /*own_material=*/false);
        failures += d.run.failures;
        std::snprintf(clutter_own, sizeof clutter_own, "%.2f / %d (%.2f), %.1f", d.run.iterations, d.run.max_iterations,
                      d.steady_iterations, 1e3 * d.run.max_penetration);
      }
      std::printf("| `%s` | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3f | %s | %s | %s | %d | %s |\n",
                  spec.c_str(), 1e3 * s.top_drift, s.max_tilt / deg, 1e3 * p.run.max_penetration, p.max_tilt / deg,
                  1e3 * r.run.max_penetration, sl.max_tilt / deg, sl.max_angular_speed, 1e3 * sl.max_rise, sl.distance,
                  clutter_text, clutter_pen, clutter_own, failures, pass ? "PASS" : "fail");
    } catch (const std::exception& e) {
      std::printf("| `%s` | error: %s |\n", spec.c_str(), e.what());
      status = 1;
    }
    std::fflush(stdout);
  }
  return status;
}
