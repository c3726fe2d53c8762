#include "coulomb/io/simulation_output.h"

#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::io {

namespace {
std::ofstream open_or_throw(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  out.precision(9);
  return out;
}
}  // namespace

std::vector<std::string> TrajectoryWriter::header(const multibody::Model& model) {
  std::vector<std::string> h = {"t"};
  for (int b = 1; b < model.num_bodies(); ++b)
    for (const char* s : {"x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"})
      h.push_back(model.body(b).name + "." + s);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& j = model.body(b).joint;
    if (j.nv == 1) {
      h.push_back(j.name + ".q");
      h.push_back(j.name + ".v");
    }
  }
  return h;
}

TrajectoryWriter::TrajectoryWriter(const std::string& path, const multibody::Model& model)
    : path_(path), model_(model), ws_(model), out_(open_or_throw(path)) {
  const std::vector<std::string> h = header(model);
  for (size_t i = 0; i < h.size(); ++i) out_ << (i ? "," : "") << h[i];
  out_ << "\n";
}

void TrajectoryWriter::write(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  multibody::forward_kinematics(model_, ws_, q, v);
  out_ << t;
  for (int b = 1; b < model_.num_bodies(); ++b) {
    const math::Transform& X = ws_.X_WB[b];
    const math::Quaternion quat(X.R);
    const math::Vector3 v_W = X.R * ws_.V_B[b].v, w_W = X.R * ws_.V_B[b].w;
    out_ << ',' << X.p.x() << ',' << X.p.y() << ',' << X.p.z() << ',' << quat.w() << ',' << quat.x() << ','
         << quat.y() << ',' << quat.z() << ',' << v_W.x() << ',' << v_W.y() << ',' << v_W.z() << ',' << w_W.x()
         << ',' << w_W.y() << ',' << w_W.z();
  }
  for (int b = 1; b < model_.num_bodies(); ++b) {
    const multibody::Joint& j = model_.body(b).joint;
    if (j.nv == 1) out_ << ',' << q[j.q_index] << ',' << v[j.v_index];
  }
  out_ << '\n';
  if (!out_) throw std::runtime_error(path_ + ": write failed");
}

StepsWriter::StepsWriter(const std::string& path) : path_(path), out_(open_or_throw(path)) {
  out_ << "t,solver_iterations,line_search_iterations,contacts,momentum_error,max_penetration_m,energy_J,"
          "wall_time_s,status,mean_slip_m_per_s\n";
}

void StepsWriter::write(const simulation::StepStats& s) {
  out_ << s.time << ',' << s.solver_iterations << ',' << s.line_search_iterations << ',' << s.contacts << ','
       << s.momentum_error << ',' << s.max_penetration << ',' << s.energy << ',' << s.wall_time << ','
       << solvers::sap::to_string(s.status) << ',' << s.mean_slip << '\n';
  if (!out_) throw std::runtime_error(path_ + ": write failed");
}

void RunStatistics::add(const simulation::StepStats& s) {
  ++steps;
  sim_time = s.time;
  wall_time += s.wall_time;
  iterations_sum += s.solver_iterations;
  iterations_max = std::max(iterations_max, s.solver_iterations);
  momentum_error_sum += s.momentum_error;
  momentum_error_max = std::max(momentum_error_max, s.momentum_error);
  contacts_sum += s.contacts;
  contacts_max = std::max(contacts_max, s.contacts);
  max_penetration = std::max(max_penetration, s.max_penetration);
  if (s.status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
  energy_final = s.energy;
}

void write_stats_json(const std::string& path, const RunStatistics& st, const std::string& solver,
                      const std::string& integrator, double time_step, const std::string& scene, int dofs,
                      const std::string& contact_approximation) {
  const double n = std::max(1, st.steps);
  nlohmann::ordered_json j;
  j["steps"] = st.steps;
  j["sim_time_s"] = st.sim_time;
  j["wall_time_s"] = st.wall_time;
  j["real_time_factor"] = st.wall_time > 0.0 ? st.sim_time / st.wall_time : 0.0;
  j["solver"] = solver;
  j["integrator"] = integrator;
  j["contact_approximation"] = contact_approximation;
  j["time_step_s"] = time_step;
  j["solver_iterations"] = {{"mean", st.iterations_sum / n}, {"max", st.iterations_max}};
  j["momentum_error"] = {{"mean", st.momentum_error_sum / n}, {"max", st.momentum_error_max}};
  j["contacts"] = {{"mean", st.contacts_sum / n}, {"max", st.contacts_max}};
  j["max_penetration_m"] = st.max_penetration;
  j["failures"] = st.failures;
  j["energy"] = {{"initial_J", st.energy_initial}, {"final_J", st.energy_final}};
  j["scene"] = scene;
  j["dofs"] = dofs;
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  out << j.dump(2) << "\n";
}

}  // namespace coulomb::io
