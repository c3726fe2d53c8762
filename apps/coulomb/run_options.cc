#include "run_options.h"

#include <cmath>

#include "commands.h"

namespace coulomb::cli {

void add_run_options(CLI::App* sub, RunOverrides& o) {
  sub->add_option("--time-step", o.time_step, "Time step dt [s] (default: the scene's time_step)");
  sub->add_option("--solver", o.solver,
                  "Contact solver: sap (Castro et al., the default) | lstable (Drumwright's L-stable first-order "
                  "solver: one linear solve or convex QP/SOCP per step, no Newton iterations); overrides the "
                  "scene's solver:");
  sub->add_option("--lstable-friction", o.lstable_friction,
                  "Friction model of --solver lstable: staggered (default: normal and friction passes to the discrete "
                  "Coulomb fixed point, no normal lift while sliding) | cone (one SOCP with the friction cone, the "
                  "convex relaxation: sliding contacts lift by about mu*slip); overrides the scene's lstable_friction:");
  sub->add_option("--integrator", o.integrator,
                  "implicit-euler | symplectic-euler | midpoint (default: the scene's integrator)");
  sub->add_option("--contact-approximation", o.contact_approximation,
                  "Contact model: sap | similar | lagged (default: the scene's contact_approximation, else lagged; "
                  "docs/contact.md)");
  sub->add_option("--rel-tolerance", o.rel_tolerance,
                  "SAP relative stopping tolerance eps_r on the momentum residual (default 1e-6)");
  sub->add_flag("--speculative-contact", o.speculative_contact,
                "Widen each body's contact margin by the distance it can travel in the step, so fast impacts "
                "do not sink in for a step (same as collision: {speculative: true} in the scene; "
                "docs/contact.md)");
}

namespace {

struct ParsedOverrides {
  std::optional<simulation::Integrator> integrator;
  std::optional<contact::ContactApproximation> approximation;
};

ParsedOverrides parse_run_options(const RunOverrides& o) {
  // Options are checked as options (UsageError, exit 2); values from the scene were checked by
  // the loader against the scene's keys.
  if (o.time_step && !(*o.time_step > 0.0 && std::isfinite(*o.time_step)))
    throw UsageError("--time-step must be a finite number > 0 s, got " + util::format_number(*o.time_step));
  if (o.rel_tolerance && !(*o.rel_tolerance > 0.0 && *o.rel_tolerance < 1.0))
    throw UsageError("--rel-tolerance must be in (0, 1), got " + util::format_number(*o.rel_tolerance));
  if (!o.solver.empty() && o.solver != "sap" && o.solver != "lstable")
    throw UsageError("--solver: unknown solver '" + o.solver + "' (sap, lstable)");
  if (!o.lstable_friction.empty() && o.lstable_friction != "staggered" && o.lstable_friction != "cone")
    throw UsageError("--lstable-friction: unknown friction model '" + o.lstable_friction + "' (staggered, cone)");
  std::optional<simulation::Integrator> integrator;
  if (!o.integrator.empty()) {
    try {
      integrator = simulation::parse_integrator(o.integrator);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--integrator: ") + e.what());
    }
  }
  std::optional<contact::ContactApproximation> approximation;
  if (!o.contact_approximation.empty()) {
    try {
      approximation = contact::parse_contact_approximation(o.contact_approximation);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--contact-approximation: ") + e.what());
    }
  }
  return {integrator, approximation};
}

}  // namespace

void check_run_options(const RunOverrides& o) { parse_run_options(o); }

simulation::SimulatorParameters apply_run_options(const RunOverrides& o, io::Scene& scene, const std::string& scene_name) {
  const auto [integrator, approximation] = parse_run_options(o);
  const std::string solver = o.solver.empty() ? scene.solver : o.solver;
  if (solver != "sap" && solver != "lstable")
    throw std::invalid_argument(scene_name + ": solver: unknown solver '" + solver + "' (sap, lstable)");
  simulation::SimulatorParameters params;
  params.solver = simulation::parse_solver(solver);
  params.lstable.friction =
      solvers::lstable::parse_friction_model(o.lstable_friction.empty() ? scene.lstable_friction : o.lstable_friction);
  params.time_step = o.time_step.value_or(scene.time_step);
  params.integrator = integrator ? *integrator : simulation::parse_integrator(scene.integrator);
  if (approximation) scene.contact.approximation = *approximation;
  if (o.rel_tolerance) params.sap.rel_tolerance = *o.rel_tolerance;
  params.speculative_contact = o.speculative_contact;
  return params;
}

}  // namespace coulomb::cli
