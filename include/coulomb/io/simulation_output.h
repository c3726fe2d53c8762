// Writers for the files `coulomb simulate` produces (contract: ../shared/design/ARCHITECTURE.md):
// trajectory.csv, steps.csv, contacts.csv and stats.json.
//
// The CSV writers format numbers with std::to_chars (9 significant digits, the `%.9g` of the
// contract) into one reusable buffer flushed in 256 kB blocks: no allocation per row after the
// first, and writing stays a small fraction of simulating (docs/user-guide.md, "Outputs").
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"
#include "coulomb/scene/scene.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::io {

/// Writes x as printf's "%.9g" does (9 significant digits, trailing zeros dropped, exponent
/// form below 1e-4 and from 1e9) at p, which must have 32 bytes free; returns the end. Fast
/// path for 1e-29 ≤ |x| < 1e30: a scaling by exact powers of ten, exact rounding near ties
/// (fma), std::to_chars for the rest. Used by CsvFile::number.
char* format_g9(double x, char* p);

/// A CSV file written through a reusable buffer. Throws std::runtime_error naming the file when
/// it cannot be opened or written (the message says the file is incomplete). The destructor flushes (errors there are swallowed: call
/// close() to see them).
class CsvFile {
 public:
  explicit CsvFile(const std::string& path);
  ~CsvFile();
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;

  void text(const char* s);  ///< written as it is (for the writers' own fixed strings)
  void text(const std::string& s) { text(s.c_str()); }
  /// A name from the model or scene as one CSV field (RFC 4180): quoted, with inner quotes
  /// doubled, when it holds a comma, a double quote, CR or LF; as it is otherwise.
  void field(const std::string& s);
  void number(double x);  ///< 9 significant digits, shortest form ("%.9g"); nan, inf, -inf
  void integer(long long x);
  void comma() { put(','); }
  void end_row();  ///< '\n', and a flush when the buffer is full
  void close();    ///< flushes and closes; throws naming the file on a write error

 private:
  void put(char c) {
    if (used_ == buffer_.size()) flush();
    buffer_[used_++] = c;
  }
  void flush();
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  size_t used_ = 0;
};

/// Splits one line of CSV into its fields (RFC 4180: a field in double quotes may hold commas,
/// and "" stands for one quote inside it), the inverse of CsvFile::field for one row. A quoted
/// field is read up to its closing quote on the same line.
std::vector<std::string> split_csv_row(const std::string& line);

/// trajectory.csv: header `t`, then for every non-world body B
/// `B.x,B.y,B.z,B.qw,B.qx,B.qy,B.qz,B.vx,B.vy,B.vz,B.wx,B.wy,B.wz` (pose of the body frame in the
/// world; velocity of the body origin and angular velocity, world frame), then for every 1-dof
/// joint J `J.q,J.v`; then, when built with a scene, `J.tau` for every actuator (the force it
/// applied in the step that ended at t [N·m or N], implicit PD and feed-forward after the effort
/// limit: StepResults::actuator_forces) and `B.contact_fx,B.contact_fy,B.contact_fz` for every
/// non-world body with collision geometry (the net contact force on B over the step, world
/// frame [N]: StepResults::contact_wrenches). The row at t = 0 has zero torques and forces.
/// Numbers with 9 significant digits. Names are CSV fields (CsvFile::field: a name with a comma
/// or a quote is quoted). Throws std::runtime_error naming the file if it cannot be written.
class TrajectoryWriter {
 public:
  TrajectoryWriter(const std::string& path, const multibody::Model& model);
  TrajectoryWriter(const std::string& path, const scene::Scene& scene);
  /// Appends the row for time t [s] at state (q, v), with the results of the step that ended
  /// there (nullptr: zeros).
  void write(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             const simulation::StepResults* results = nullptr);
  void close() { out_.close(); }
  /// Column names, in order (without a scene: no torque and contact-force columns).
  static std::vector<std::string> header(const multibody::Model& model);
  static std::vector<std::string> header(const scene::Scene& scene);
  /// Bodies with collision geometry (the contact-force columns), ascending.
  static std::vector<int> contact_bodies(const scene::Scene& scene);

 private:
  const multibody::Model& model_;
  multibody::Workspace ws_;
  int num_actuators_ = 0;
  std::vector<int> contact_bodies_;
  CsvFile out_;
};

/// steps.csv: one row per step: t, solver_iterations, line_search_iterations, contacts,
/// momentum_error, max_penetration_m, energy_J, wall_time_s, status, mean_slip_m_per_s.
class StepsWriter {
 public:
  explicit StepsWriter(const std::string& path);
  void write(const simulation::StepStats& s);
  void close() { out_.close(); }

 private:
  CsvFile out_;
};

/// contacts.csv (`coulomb simulate --contacts`): one row per contact of each written step:
/// t [s], body_a, body_b, geometry_a, geometry_b (names), x, y, z (contact point, world [m]),
/// nx, ny, nz (unit normal from A into B), phi [m] (signed distance at the step's start),
/// impulse_n, impulse_t [N·s] (normal and tangential magnitude), fx, fy, fz (force on B, world
/// [N], impulse / δt), slip_speed [m/s], region (stiction | sliding | no_contact).
class ContactsWriter {
 public:
  ContactsWriter(const std::string& path, const scene::Scene& scene, double time_step);
  void write(double t, const simulation::StepResults& results);
  void close() { out_.close(); }

 private:
  const scene::Scene& scene_;
  double time_step_;
  CsvFile out_;
};

/// Running statistics of a simulation, for stats.json.
struct RunStatistics {
  int steps = 0;
  double sim_time = 0.0, wall_time = 0.0;
  double iterations_sum = 0.0, momentum_error_sum = 0.0, contacts_sum = 0.0;
  int iterations_max = 0, contacts_max = 0;
  double momentum_error_max = 0.0, max_penetration = 0.0;
  /// Steps whose momentum error is finite: momentum_error{mean,max} are over them (a failed
  /// solve can report an infinite residual; it is counted in `failures`, steps.csv shows it).
  int momentum_error_steps = 0;
  int failures = 0;  ///< steps whose SAP solve did not report success
  double energy_initial = 0.0, energy_final = 0.0;
  /// --solver lstable (StepStats' lstable fields): steps solved as the QP/SOCP and as one linear
  /// solve; QP iterations and residuals over the QP steps; rows over the steps with constraints;
  /// failures by the solver's own status.
  int qp_steps = 0, linear_solve_steps = 0;
  double qp_iterations_sum = 0.0, residual_sum = 0.0, residual_max = 0.0, rows_sum = 0.0;
  int qp_iterations_max = 0, rows_max = 0;
  int qp_not_converged = 0, qp_numerical_error = 0, linear_solve_failures = 0;
  /// staggered friction: passes after the first over the QP steps, and steps whose normals did
  /// not reach the fixed point (the last pass is kept: not a failure).
  double friction_iterations_sum = 0.0;
  int friction_iterations_max = 0, friction_not_converged = 0;
  std::string friction_model = "staggered";  ///< lstable's friction model (written as lstable.friction_model)
  /// stats.json's first key: "running" (the run has not finished: its other files are partial
  /// or missing), "complete" or "failed" (the run stopped early; see the command's error).
  std::string status = "complete";
  std::vector<std::string> warnings;  ///< the scene's and the run's (Simulator::warnings)
  std::vector<std::string> notes;     ///< what does not change the simulation (Scene::notes)
  void add(const simulation::StepStats& s);
};

/// Writes stats.json with `status` (RunStatistics::status) first, then the keys of the contract: steps, sim_time_s, wall_time_s,
/// real_time_factor, solver, integrator, time_step_s, solver_iterations{mean,max},
/// momentum_error{mean,max,non_finite_steps} (mean and max over the steps with a finite momentum
/// error; non_finite_steps counts the others, failed solves), contacts{mean,max}, max_penetration_m, failures,
/// energy{initial_J,final_J}; plus scene, dofs and contact_approximation (sap | similar | lagged);
/// with solver "lstable", `lstable: {rows{mean,max}, qp_steps, linear_solve_steps,
/// qp_iterations{mean,max}, residual{mean,max}, friction_passes{mean,max},
/// friction_not_converged_steps, failures{qp_not_converged, qp_numerical_error,
/// linear_solve}}` (means over the steps with constraints, the QP steps for iterations and residual);
/// plus, when `robots_of` is given, `robots: [{name, urdf, floating, base, joints, actuated,
/// bodies}]`, and `warnings` and `notes` (lists of strings, empty when none).
void write_stats_json(const std::string& path, const RunStatistics& stats, const std::string& solver,
                      const std::string& integrator, double time_step, const std::string& scene, int dofs,
                      const std::string& contact_approximation = "sap", const scene::Scene* robots_of = nullptr);

}  // namespace coulomb::io
