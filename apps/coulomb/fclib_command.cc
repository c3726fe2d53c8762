// `coulomb fclib FILE.hdf5 [FILE...] [--json] [--tolerance T] [--solvers sap,nsgs,newton-ac]
//  [--repeats K] [--beta B] [--sigma S] [--max-iterations N]`: solves FCLIB global problems with
// SAP in the near-rigid limit (solvers/sap/sap_global_contact.h) and with Siconos numerics' NSGS
// and Newton-AC (solvers/siconos_global_contact.h) in the same run, and reports for each solver
// its status, iterations, median time, and the residuals of the exact Coulomb problem computed
// by coulomb itself on its (v, r) (solvers/global_contact_problem.h), beside those of the file's
// stored solution.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coulomb/io/fclib_reader.h"
#include "coulomb/solvers/global_contact_problem.h"
#include "coulomb/solvers/sap/sap_global_contact.h"
#include "coulomb/solvers/siconos_global_contact.h"

#include "commands.h"

namespace coulomb::cli {

namespace {

struct FclibOptions {
  std::vector<std::string> files;
  bool json = false;
  double tolerance = 1e-8;
  std::string solvers = "sap,nsgs,newton-ac";
  int repeats = 3;
  double beta = 0.01;
  double sigma = 1e-6;
  int max_iterations = 10000;
};

// One solver's row.
struct Row {
  std::string solver;
  bool converged = false;
  std::string status;
  int iterations = 0;
  double seconds = 0.0;  // median over the repeats
  Eigen::VectorXd v, r;
  solvers::CoulombResiduals residuals;
  std::optional<double> distance_to_file;  // ‖r − r_file‖ / ‖r_file‖
  std::string note;
};

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

std::vector<std::string> parse_solvers(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item != "sap" && item != "nsgs" && item != "newton-ac")
      throw UsageError("--solvers: unknown solver '" + item + "' (choose from sap, nsgs, newton-ac)");
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) throw UsageError("--solvers: no solver given (choose from sap, nsgs, newton-ac)");
  return out;
}

Row run_sap(const solvers::GlobalContactProblem& p, const FclibOptions& o, int* num_trees, int* block_size) {
  solvers::sap::SapGlobalContactParameters params;
  params.regularization.beta = o.beta;
  params.regularization.sigma = o.sigma;
  params.solver.rel_tolerance = o.tolerance;
  params.solver.max_iterations = std::min(o.max_iterations, 1000);
  Row row;
  row.solver = "sap";
  std::vector<double> times;
  solvers::sap::SapGlobalContactSolution s;
  for (int k = 0; k < o.repeats; ++k) {
    s = solvers::sap::solve_global_contact_with_sap(p, params);
    times.push_back(s.setup_seconds + s.solve_seconds);
  }
  row.seconds = median(times);
  row.converged = s.status == solvers::sap::SapSolverStatus::kSuccess;
  row.status = row.converged ? "converged" : solvers::sap::to_string(s.status);
  row.iterations = s.iterations;
  row.v = s.v;
  row.r = s.r;
  *num_trees = s.num_trees;
  *block_size = s.block_size;
  return row;
}

Row run_siconos(const solvers::GlobalContactProblem& p, solvers::SiconosSolver solver, const FclibOptions& o) {
  solvers::SiconosOptions options;
  options.tolerance = o.tolerance;
  options.max_iterations = o.max_iterations;
  Row row;
  row.solver = solvers::to_string(solver);
  std::vector<double> times;
  solvers::SiconosSolution s;
  for (int k = 0; k < o.repeats; ++k) {
    s = solvers::solve_global_contact_with_siconos(p, solver, options);
    times.push_back(s.seconds);
  }
  row.seconds = median(times);
  row.converged = s.info == 0;
  row.status = row.converged ? "converged" : "not converged (info " + std::to_string(s.info) + ")";
  row.iterations = s.iterations;
  row.v = s.v;
  row.r = s.r;
  std::ostringstream note;
  note << "Siconos' own error " << s.siconos_error;
  row.note = note.str();
  return row;
}

nlohmann::json residuals_json(const solvers::CoulombResiduals& r) {
  return {{"complementarity", r.complementarity}, {"equation", r.equation}, {"normal_gap", r.normal_gap},
          {"penetration_velocity", r.penetration_velocity}, {"sliding_contacts", r.sliding_contacts}};
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

nlohmann::json solve_file(const std::string& path, const FclibOptions& o, const std::vector<std::string>& solver_names) {
  const io::FclibGlobalFile file = io::read_fclib_global(path);
  const solvers::GlobalContactProblem& p = file.problem;
  std::vector<Row> rows;
  int num_trees = 0, block_size = 0;
  for (const std::string& name : solver_names) {
    if (name == "sap")
      rows.push_back(run_sap(p, o, &num_trees, &block_size));
    else
      rows.push_back(run_siconos(p, name == "nsgs" ? solvers::SiconosSolver::kNsgs
                                                   : solvers::SiconosSolver::kNewtonAlartCurnier, o));
  }
  std::optional<Row> stored;
  if (file.solution) {
    Row row;
    row.solver = "file";
    row.status = "stored solution";
    row.v = file.solution->v;
    row.r = file.solution->r;
    stored = row;
  }
  for (Row& row : rows) {
    row.residuals = solvers::coulomb_residuals(p, row.v, row.r);
    if (stored && stored->r.norm() > 0.0) row.distance_to_file = (row.r - stored->r).norm() / stored->r.norm();
  }
  if (stored) stored->residuals = solvers::coulomb_residuals(p, stored->v, stored->r);

  nlohmann::json j;
  j["file"] = path;
  j["title"] = file.info.title;
  j["contacts"] = p.num_contacts();
  j["dofs"] = p.num_dofs();
  j["mu"] = {{"min", p.mu.size() ? p.mu.minCoeff() : 0.0}, {"max", p.mu.size() ? p.mu.maxCoeff() : 0.0}};
  j["f_norm"] = p.f.norm();
  j["stored_solution"] = file.solution.has_value();
  j["guesses"] = file.num_guesses;
  if (num_trees > 0) j["sap_trees"] = {{"count", num_trees}, {"block_size", block_size}};
  nlohmann::json js = nlohmann::json::array();
  for (const Row& row : rows) {
    nlohmann::json r = {{"solver", row.solver},         {"converged", row.converged},
                        {"status", row.status},         {"iterations", row.iterations},
                        {"seconds", row.seconds},       {"residuals", residuals_json(row.residuals)}};
    if (row.distance_to_file) r["distance_to_stored_r"] = *row.distance_to_file;
    if (!row.note.empty()) r["note"] = row.note;
    js.push_back(r);
  }
  j["solvers"] = js;
  if (stored) j["stored"] = {{"residuals", residuals_json(stored->residuals)}};

  if (!o.json) {
    std::printf("%s: global problem, %d contacts, %d dofs, mu %g..%g, |f| %.3g; stored solution: %s",
                file_name(path).c_str(), p.num_contacts(), p.num_dofs(), j["mu"]["min"].get<double>(),
                j["mu"]["max"].get<double>(), p.f.norm(), file.solution ? "yes" : "no");
    if (num_trees > 0) std::printf("; SAP trees: %d (block %d)", num_trees, block_size);
    std::printf("\n");
    std::printf("  %-10s %-22s %6s %10s %10s %10s %10s %10s %7s %10s\n", "solver", "status", "iter", "time [s]",
                "residual", "eq. resid", "gap [m/s]", "pen [m/s]", "sliding", "|dr|/|r*|");
    auto print_row = [](const Row& row, bool timed) {
      std::string dist = row.distance_to_file ? ([&] {
        char b[32];
        std::snprintf(b, sizeof b, "%.2e", *row.distance_to_file);
        return std::string(b);
      })()
                                              : std::string("-");
      if (timed)
        std::printf("  %-10s %-22s %6d %10.3e %10.2e %10.2e %10.2e %10.2e %7d %10s\n", row.solver.c_str(),
                    row.status.c_str(), row.iterations, row.seconds, row.residuals.complementarity,
                    row.residuals.equation, row.residuals.normal_gap, row.residuals.penetration_velocity,
                    row.residuals.sliding_contacts, dist.c_str());
      else
        std::printf("  %-10s %-22s %6s %10s %10.2e %10.2e %10.2e %10.2e %7d %10s\n", row.solver.c_str(),
                    row.status.c_str(), "-", "-", row.residuals.complementarity, row.residuals.equation,
                    row.residuals.normal_gap, row.residuals.penetration_velocity, row.residuals.sliding_contacts,
                    dist.c_str());
    };
    for (const Row& row : rows) print_row(row, true);
    if (stored) print_row(*stored, false);
  }
  return j;
}

int run_fclib(const FclibOptions& o) {
  if (!(o.tolerance > 0.0 && o.tolerance < 1.0))
    throw UsageError("--tolerance must be in (0, 1), got " + util::format_number(o.tolerance));
  if (o.repeats < 1) throw UsageError("--repeats must be >= 1, got " + std::to_string(o.repeats));
  if (o.max_iterations < 1) throw UsageError("--max-iterations must be >= 1, got " + std::to_string(o.max_iterations));
  if (!(o.beta > 0.0 && o.beta <= 1.0)) throw UsageError("--beta must be in (0, 1], got " + util::format_number(o.beta));
  if (!(o.sigma > 0.0 && o.sigma <= 1.0)) throw UsageError("--sigma must be in (0, 1], got " + util::format_number(o.sigma));
  const std::vector<std::string> solver_names = parse_solvers(o.solvers);

  // One file: its error is the command's (exit 1). Several: every file is tried, errors are
  // printed as they come, and the exit status is 1 if any file failed.
  if (o.files.size() == 1) {
    const nlohmann::json j = solve_file(o.files[0], o, solver_names);
    if (o.json) std::cout << nlohmann::json::array({j}).dump(2) << "\n";
    return 0;
  }
  nlohmann::json all = nlohmann::json::array();
  int failed = 0;
  for (size_t k = 0; k < o.files.size(); ++k) {
    try {
      all.push_back(solve_file(o.files[k], o, solver_names));
    } catch (const std::exception& e) {
      std::cerr << "coulomb: error: " << e.what() << "\n";
      ++failed;
    }
    if (!o.json && k + 1 < o.files.size()) std::printf("\n");
  }
  if (o.json) std::cout << all.dump(2) << "\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace

Command add_fclib_command(CLI::App& app) {
  auto options = std::make_shared<FclibOptions>();
  CLI::App* sub = app.add_subcommand(
      "fclib",
      "Solves FCLIB global frictional contact problems (HDF5: M v = H r + f, u = H^T v + w,\n"
      "Coulomb's law on (u, r) per contact, normal component first) with SAP and with Siconos\n"
      "numerics (NSGS, Newton-AC) in the same run, and prints per solver: status, iterations,\n"
      "median time over --repeats solves, and coulomb's own residuals of the EXACT Coulomb\n"
      "problem on its (v, r):\n"
      "  residual   natural map with De Saxce's u~ = u + mu |u_T| e_N:\n"
      "             |(r - P_C(r - u~))_i| / (1 + |f|)  (the error Siconos reports)\n"
      "  eq. resid  |M v - H r - f| / (1 + |f|)\n"
      "  gap        largest normal velocity u_N > 0 of a loaded contact (r_N > 0) [m/s]\n"
      "  pen        largest approach velocity -u_N of a loaded contact [m/s]\n"
      "  sliding    loaded contacts with |u_T| > 0\n"
      "  |dr|/|r*|  distance of r to the file's stored solution\n"
      "and the same residuals for the stored solution (row 'file').\n\n"
      "What SAP can and cannot match: SAP solves a convex relaxation (Anitescu's, regularized;\n"
      "Castro et al. Eq. 19) with A = M, v* = M^-1 f, J = H^T, v_hat_n = -w_N, rigid contact\n"
      "(k = inf, near-rigid R_n = beta^2 w / (4 pi^2), R_t = sigma w). Where every loaded\n"
      "contact sticks, its solution tends to the exact one as beta, sigma -> 0 (residual\n"
      "~ R r). Where a contact slides, the relaxation gives u_N = mu |u_T| > 0 (a separating\n"
      "'gliding' velocity) instead of u_N = 0: the residual stays O(mu |u_T|) whatever the\n"
      "tolerance. The 'gap' column shows it. Local (W, q) problems are not supported.\n\n"
      "Example:\n"
      "  coulomb fclib ../shared/fclib/Box_Stacks-i0122-82-5.hdf5\n\n"
      "Exit status: 0 (also when a solver does not converge: that is a reported result),\n"
      "1 a file that is missing or not a usable FCLIB global problem (the file is named),\n"
      "2 usage error.");
  sub->add_option("files", options->files, "FCLIB problem files (HDF5)")->required();
  sub->add_flag("--json", options->json, "One JSON array (one object per file) on stdout instead of the tables");
  sub->add_option("--tolerance", options->tolerance,
                  "Tolerance: Siconos' error for NSGS and Newton-AC, SAP's relative momentum residual (Eq. 26)")
      ->capture_default_str();
  sub->add_option("--solvers", options->solvers, "Comma-separated solvers: sap, nsgs, newton-ac")->capture_default_str();
  sub->add_option("--repeats", options->repeats, "Solves per solver; the time reported is their median")
      ->capture_default_str();
  sub->add_option("--beta", options->beta, "SAP near-rigid parameter beta (R_n = beta^2 w / (4 pi^2))")
      ->capture_default_str();
  sub->add_option("--sigma", options->sigma, "SAP friction regularization sigma (R_t = sigma w)")->capture_default_str();
  sub->add_option("--max-iterations", options->max_iterations,
                  "Iteration limit (Siconos; SAP's Newton iterations are capped at 1000)")
      ->capture_default_str();
  return Command{sub, [options] { return run_fclib(*options); }};
}

}  // namespace coulomb::cli
