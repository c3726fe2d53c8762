// Writers for the files `coulomb simulate` produces (contract: ../shared/design/ARCHITECTURE.md):
// trajectory.csv, steps.csv and stats.json.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::io {

/// trajectory.csv: header `t`, then for every non-world body B
/// `B.x,B.y,B.z,B.qw,B.qx,B.qy,B.qz,B.vx,B.vy,B.vz,B.wx,B.wy,B.wz` (pose of the body frame in the
/// world; velocity of the body origin and angular velocity, world frame), then for every 1-dof
/// joint J `J.q,J.v`. Numbers with 9 significant digits. Throws std::runtime_error naming the
/// file if it cannot be written.
class TrajectoryWriter {
 public:
  TrajectoryWriter(const std::string& path, const multibody::Model& model);
  /// Appends the row for time t [s] at state (q, v).
  void write(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);
  /// Column names, in order.
  static std::vector<std::string> header(const multibody::Model& model);

 private:
  std::string path_;
  const multibody::Model& model_;
  multibody::Workspace ws_;
  std::ofstream out_;
};

/// steps.csv: one row per step: t, solver_iterations, line_search_iterations, contacts,
/// momentum_error, max_penetration_m, energy_J, wall_time_s, status, mean_slip_m_per_s.
class StepsWriter {
 public:
  explicit StepsWriter(const std::string& path);
  void write(const simulation::StepStats& s);

 private:
  std::string path_;
  std::ofstream out_;
};

/// Running statistics of a simulation, for stats.json.
struct RunStatistics {
  int steps = 0;
  double sim_time = 0.0, wall_time = 0.0;
  double iterations_sum = 0.0, momentum_error_sum = 0.0, contacts_sum = 0.0;
  int iterations_max = 0, contacts_max = 0;
  double momentum_error_max = 0.0, max_penetration = 0.0;
  int failures = 0;  ///< steps whose SAP solve did not report success
  double energy_initial = 0.0, energy_final = 0.0;
  void add(const simulation::StepStats& s);
};

/// Writes stats.json with the keys of the contract: steps, sim_time_s, wall_time_s,
/// real_time_factor, solver, integrator, time_step_s, solver_iterations{mean,max},
/// momentum_error{mean,max}, contacts{mean,max}, max_penetration_m, failures,
/// energy{initial_J,final_J}; plus scene, dofs and contact_approximation (sap | similar | lagged).
void write_stats_json(const std::string& path, const RunStatistics& stats, const std::string& solver,
                      const std::string& integrator, double time_step, const std::string& scene, int dofs,
                      const std::string& contact_approximation = "sap");

}  // namespace coulomb::io
