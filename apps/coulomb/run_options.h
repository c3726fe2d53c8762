// The options by which `coulomb simulate` and `coulomb bench` override a scene's simulation
// settings (--time-step, --solver, --lstable-friction, --integrator, --contact-approximation,
// --rel-tolerance, --speculative-contact): one registration, one validation, one mapping onto
// SimulatorParameters, so that the two commands accept the same values with the same messages.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::cli {

struct RunOverrides {
  std::optional<double> time_step;     ///< --time-step [s]
  std::optional<double> rel_tolerance;  ///< --rel-tolerance (SAP's ε_r)
  std::string solver;                   ///< --solver: sap | lstable ("" = the scene's)
  std::string lstable_friction;         ///< --lstable-friction: staggered | cone
  std::string integrator;               ///< --integrator: implicit-euler | symplectic-euler | midpoint
  std::string contact_approximation;    ///< --contact-approximation: sap | similar | lagged
  bool speculative_contact = false;     ///< --speculative-contact
};

/// Registers the options above on `sub`, writing into `o` (which must outlive the parse).
void add_run_options(CLI::App* sub, RunOverrides& o);

/// Checks the values given: throws UsageError (exit status 2) naming the option and the value
/// ("--time-step must be a finite number > 0 s, got -1"). Called before the scene is loaded, so
/// that a mistyped option fails at once.
void check_run_options(const RunOverrides& o);

/// check_run_options, then builds the simulator parameters from the scene and the options: the options
/// win, the scene gives the rest (solver, lstable_friction, integrator, time_step), and a
/// --contact-approximation is written into scene.contact. Throws std::invalid_argument naming
/// `scene_name` for a scene whose solver is unknown.
simulation::SimulatorParameters apply_run_options(const RunOverrides& o, io::Scene& scene, const std::string& scene_name);

}  // namespace coulomb::cli
