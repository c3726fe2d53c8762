// Subcommands of the `coulomb` command-line tool. Each subcommand lives in its own file
// (<name>_command.cc) and registers itself on the top-level CLI11 app through an add_*
// function declared here; main.cc wires them up, runs the one the user chose and turns
// exceptions into "coulomb: error: <message>" with exit status 1.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

// util::format_number (header-only): an option's value in a UsageError with 10 significant
// digits ("1e+308", "-1", "nan"), as the loaders print file values, not std::to_string's fixed
// six decimals (a 309-digit number for 1e308).
#include "../../src/util/format.h"

namespace coulomb::cli {

/// A command-line mistake found after parsing: an option's value out of its range or an
/// unknown name (`--time-step 0`, `--integrator rk4`). main() prints it like CLI11's own parse
/// errors and exits 2, as docs/user-guide.md says. (A bad value read from a scene file is an
/// io::SceneError naming the file, line and key instead: exit 1.)
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The subcommand closest to `word` by edit distance among `names`, or "" when none is within
/// max(2, |word|/3) edits ("simualte" → "simulate").
std::string closest_name(const std::string& word, const std::vector<std::string>& names);

/// A registered subcommand: its CLI11 app (to know whether it was chosen) and the function
/// that runs it after parsing. run() returns the process exit status; it throws on error
/// (std::exception with a message naming the file / option and value).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// `coulomb dynamics MODEL.urdf [--floating] [--q ...] [--v ...] [--vdot ...] [--json]`:
/// mass matrix, bias forces and inverse dynamics of a URDF model at one state.
Command add_dynamics_command(CLI::App& app);

/// `coulomb id MODEL.urdf|SCENE.yaml [--floating] [--q ...] [--v ...] [--qdd-des ...] [--dt S]
/// [--mu MU] [--formulation lcp-noslip|lcp-coulomb|qp-coulomb|qp-noslip] [--json] ...`: inverse
/// dynamics with rigid contact and friction (torques, contact impulses, v+, solver figures) at
/// one state. Exits 3 for an inconsistent request (lcp-noslip), throws (exit 1) for an
/// infeasible or failed solve after printing the results.
Command add_id_command(CLI::App& app);

/// `coulomb inspect SCENE.yaml [--json]`: the model a scene file assembles to (trees, bodies,
/// DOFs, masses, robots, actuators) and the contacts at its initial state.
Command add_inspect_command(CLI::App& app);

/// `coulomb bench SCENE.yaml [--steps N] [--states K] [--perturb M] [--json] ...`: steps per
/// second, iterations, contacts and per-stage time of a scene, medians over K starting states.
Command add_bench_command(CLI::App& app);

/// `coulomb simulate [SCENE.yaml] [-o DIR] ...`: SAP forward simulation; writes
/// trajectory.csv, steps.csv and stats.json, and unless --no-html replay.html and report.html.
Command add_simulate_command(CLI::App& app);

/// `coulomb control SCENE.yaml --controller NAME [--terrain NAME] [--duration S] [--seed N] [-o DIR]
/// [--no-html] [--quiet]`: one of Zapolsky & Drumwright's controllers on the scene's robot (the
/// A1 trotting, the Panda holding a box) on one of their terrains; writes what simulate writes
/// plus metrics.json and series.csv. A fall is a result (exit 0).
Command add_control_command(CLI::App& app);

/// `coulomb experiment id-tables -o DIR [--scene …] [--duration S] [--controllers LIST]
/// [--terrains LIST] [--jobs N] …`: the paper's experiments (Tables 3–5, Figs. 14–18) in parallel
/// runs, with tables, run folders and figures.
Command add_experiment_command(CLI::App& app);

/// `coulomb fclib FILE.hdf5 [FILE...] [--json] [--tolerance T] [--solvers sap,nsgs,newton-ac] …`:
/// FCLIB global problems solved by SAP (near-rigid) and Siconos numerics (NSGS, Newton-AC) in the
/// same run; status, iterations, median time and the exact Coulomb problem's residuals per solver.
Command add_fclib_command(CLI::App& app);

/// `coulomb report DIR`: regenerates DIR/report.html from DIR/steps.csv and DIR/stats.json.
Command add_report_command(CLI::App& app);

/// Parses a comma-separated list of numbers (defined in state_options.cc) ("0.1, -2e-3,3"), as given to option `option`
/// (named in error messages). Throws std::invalid_argument naming the option, the position
/// and the text of an entry that is not a finite number. An empty string gives no values.
std::vector<double> parse_number_list(const std::string& text, const std::string& option);

/// Prints loader warnings ("coulomb: warning: …", every one) and notes ("coulomb: note: …",
/// what does not change the simulation, e.g. missing <visual> meshes: the first 2, then how
/// many more) to stderr. `where_listed` names where the rest can be read ("" for nowhere).
void print_warnings_and_notes(const std::vector<std::string>& warnings, const std::vector<std::string>& notes,
                              const std::string& where_listed = "");

}  // namespace coulomb::cli
