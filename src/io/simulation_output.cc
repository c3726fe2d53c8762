#include "coulomb/io/simulation_output.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::io {

// ---- CsvFile

namespace {
constexpr size_t kBufferBytes = 256 * 1024;
constexpr size_t kNumberBytes = 32;  // "-1.23456789e-308" fits with room to spare
}  // namespace

CsvFile::CsvFile(const std::string& path) : path_(path), buffer_(kBufferBytes) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw std::runtime_error(path + ": cannot open for writing");
}

CsvFile::~CsvFile() {
  if (file_ == nullptr) return;
  if (used_ > 0) std::fwrite(buffer_.data(), 1, used_, file_);
  std::fclose(file_);
}

void CsvFile::flush() {
  if (used_ > 0 && std::fwrite(buffer_.data(), 1, used_, file_) != used_)
    throw std::runtime_error(path_ + ": write failed (disk full?); the file is incomplete");
  used_ = 0;
}

void CsvFile::close() {
  if (file_ == nullptr) return;
  flush();
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed) throw std::runtime_error(path_ + ": write failed (disk full?); the file is incomplete");
}

void CsvFile::text(const char* s) {
  for (; *s != '\0'; ++s) put(*s);
}

void CsvFile::field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) {
    text(s);
    return;
  }
  put('"');
  for (const char c : s) {
    if (c == '"') put('"');
    put(c);
  }
  put('"');
}

std::vector<std::string> split_csv_row(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

namespace {
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
// 10^-31 … 10^31 (index + 31); those from 10^0 to 10^22 are exact.
constexpr double kPowers[] = {1e-31, 1e-30, 1e-29, 1e-28, 1e-27, 1e-26, 1e-25, 1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31};
constexpr int kPowersOffset = 31;
}  // namespace

char* format_g9(double x, char* p) {
  if (std::isnan(x)) {
    std::memcpy(p, "nan", 3);
    return p + 3;
  }
  if (std::signbit(x)) {
    *p++ = '-';
    x = -x;
  }
  if (x == 0.0) {
    *p++ = '0';
    return p;
  }
  if (std::isinf(x)) {
    std::memcpy(p, "inf", 3);
    return p + 3;
  }
  if (!(x >= 1e-29 && x < 1e30))  // outside the fast path's table: the library's (slower) formatting
    return std::to_chars(p, p + kNumberBytes - 1, x, std::chars_format::general, 9).ptr;
  // Decimal exponent from the binary one (floor(e2 log10 2), off by at most one), corrected.
  const int e2 = static_cast<int>((std::bit_cast<std::uint64_t>(x) >> 52) & 0x7ff) - 1022;  // x = f·2^e2, f ∈ [½, 1)
  int e = ((e2 - 1) * 78913) >> 18;
  if (x >= kPowers[e + 1 + kPowersOffset]) ++e;
  if (x < kPowers[e + kPowersOffset]) --e;
  // m = x·10^(8−e) rounded half-even to 9 digits. 10^|k| ≤ 10^22 is exact, so q is one rounding
  // (two for k > 22: x·10^22·10^(k−22)), an error ≤ 3e-7 on q ∈ [1e8, 1e9]: unless q is within
  // 1e-4 of a tie, rounding q gives printf's digits. Near a tie, one rounding is undone exactly
  // with fma (one rounding of an exact difference keeps its sign); two go to std::to_chars.
  const int k = 8 - e;
  const double P = kPowers[(k >= 0 ? std::min(k, 22) : -k) + kPowersOffset];
  const double q = k > 22 ? (x * 1e22) * kPowers[k - 22 + kPowersOffset] : (k >= 0 ? x * P : x / P);
  long long m = static_cast<long long>(q + 0.5);
  const double frac = q - static_cast<double>(m);
  if (!(frac > -0.4999 && frac < 0.4999)) {
    if (k > 22) return std::to_chars(p, p + kNumberBytes - 1, x, std::chars_format::general, 9).ptr;
    auto above = [&](double t) { return k >= 0 ? std::fma(x, P, -t) : -std::fma(t, P, -x); };  // sign(exact − t)
    const double lo = above(static_cast<double>(m) - 0.5);
    if (lo < 0.0 || (lo == 0.0 && m % 2 != 0)) {
      --m;
    } else {
      const double hi = above(static_cast<double>(m) + 0.5);
      if (hi > 0.0 || (hi == 0.0 && m % 2 != 0)) ++m;
    }
  }
  if (m >= 1000000000LL) {  // rounded up to the next power of ten: 9.999999995 → 10.0000000
    m /= 10;
    ++e;
  }
  char digits[9];
  digits[0] = static_cast<char>('0' + m / 100000000);
  unsigned rest = static_cast<unsigned>(m % 100000000);
  for (int i = 7; i >= 1; i -= 2) {
    const unsigned pair = rest % 100;
    rest /= 100;
    digits[i] = kDigitPairs[2 * pair];
    digits[i + 1] = kDigitPairs[2 * pair + 1];
  }
  int last = 8;  // drop trailing zeros (%g)
  while (last > 0 && digits[last] == '0') --last;
  if (e >= -4 && e < 9) {  // fixed notation
    if (e >= 0) {
      for (int i = 0; i <= e; ++i) *p++ = digits[i];
      if (last > e) {
        *p++ = '.';
        for (int i = e + 1; i <= last; ++i) *p++ = digits[i];
      }
    } else {
      *p++ = '0';
      *p++ = '.';
      for (int i = 0; i < -e - 1; ++i) *p++ = '0';
      for (int i = 0; i <= last; ++i) *p++ = digits[i];
    }
    return p;
  }
  *p++ = digits[0];  // scientific: d.dddde±XX
  if (last > 0) {
    *p++ = '.';
    for (int i = 1; i <= last; ++i) *p++ = digits[i];
  }
  *p++ = 'e';
  *p++ = e < 0 ? '-' : '+';
  const int a = e < 0 ? -e : e;
  *p++ = kDigitPairs[2 * a];
  *p++ = kDigitPairs[2 * a + 1];
  return p;
}

void CsvFile::number(double x) {
  if (buffer_.size() - used_ < kNumberBytes) flush();
  char* first = buffer_.data() + used_;
  used_ += static_cast<size_t>(format_g9(x, first) - first);
}

void CsvFile::integer(long long x) {
  if (buffer_.size() - used_ < kNumberBytes) flush();
  char* first = buffer_.data() + used_;
  const auto r = std::to_chars(first, first + kNumberBytes, x);
  used_ += static_cast<size_t>(r.ptr - first);
}

void CsvFile::end_row() {
  put('\n');
  if (used_ > kBufferBytes - 4096) flush();
}

// ---- trajectory.csv

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

std::vector<int> TrajectoryWriter::contact_bodies(const scene::Scene& scene) {
  std::set<int> bodies;
  for (const geometry::Geometry& g : scene.geometries)
    if (g.body > 0) bodies.insert(g.body);
  return {bodies.begin(), bodies.end()};
}

std::vector<std::string> TrajectoryWriter::header(const scene::Scene& scene) {
  std::vector<std::string> h = header(scene.model);
  for (const scene::Actuator& a : scene.actuators) h.push_back(a.joint + ".tau");
  for (int b : contact_bodies(scene))
    for (const char* s : {"contact_fx", "contact_fy", "contact_fz"}) h.push_back(scene.model.body(b).name + "." + s);
  return h;
}

namespace {
void write_header(CsvFile& out, const std::vector<std::string>& h) {
  for (size_t i = 0; i < h.size(); ++i) {
    if (i) out.comma();
    out.field(h[i]);
  }
  out.end_row();
}
}  // namespace

TrajectoryWriter::TrajectoryWriter(const std::string& path, const multibody::Model& model)
    : model_(model), ws_(model), out_(path) {
  write_header(out_, header(model));
}

TrajectoryWriter::TrajectoryWriter(const std::string& path, const scene::Scene& scene)
    : model_(scene.model),
      ws_(scene.model),
      num_actuators_(static_cast<int>(scene.actuators.size())),
      contact_bodies_(contact_bodies(scene)),
      out_(path) {
  write_header(out_, header(scene));
}

void TrajectoryWriter::write(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                             const simulation::StepResults* results) {
  multibody::forward_kinematics(model_, ws_, q, v);
  out_.number(t);
  for (int b = 1; b < model_.num_bodies(); ++b) {
    const math::Transform& X = ws_.X_WB[b];
    const math::Quaternion quat(X.R);
    const math::Vector3 v_W = X.R * ws_.V_B[b].v, w_W = X.R * ws_.V_B[b].w;
    for (double x : {X.p.x(), X.p.y(), X.p.z(), quat.w(), quat.x(), quat.y(), quat.z(), v_W.x(), v_W.y(), v_W.z(),
                     w_W.x(), w_W.y(), w_W.z()}) {
      out_.comma();
      out_.number(x);
    }
  }
  for (int b = 1; b < model_.num_bodies(); ++b) {
    const multibody::Joint& j = model_.body(b).joint;
    if (j.nv != 1) continue;
    out_.comma();
    out_.number(q[j.q_index]);
    out_.comma();
    out_.number(v[j.v_index]);
  }
  const bool have = results != nullptr && results->actuator_forces.size() == num_actuators_;
  for (int i = 0; i < num_actuators_; ++i) {
    out_.comma();
    out_.number(have ? results->actuator_forces[i] : 0.0);
  }
  for (int b : contact_bodies_) {
    const bool has_wrench = results != nullptr && b < static_cast<int>(results->contact_wrenches.size());
    const math::Vector3 f = has_wrench ? results->contact_wrenches[b].f : math::Vector3::Zero();
    for (int k = 0; k < 3; ++k) {
      out_.comma();
      out_.number(f[k]);
    }
  }
  out_.end_row();
}

// ---- steps.csv

StepsWriter::StepsWriter(const std::string& path) : out_(path) {
  out_.text(
      "t,solver_iterations,line_search_iterations,contacts,momentum_error,max_penetration_m,energy_J,"
      "wall_time_s,status,mean_slip_m_per_s");
  out_.end_row();
}

void StepsWriter::write(const simulation::StepStats& s) {
  out_.number(s.time);
  out_.comma();
  out_.integer(s.solver_iterations);
  out_.comma();
  out_.integer(s.line_search_iterations);
  out_.comma();
  out_.integer(s.contacts);
  for (double x : {s.momentum_error, s.max_penetration, s.energy, s.wall_time}) {
    out_.comma();
    out_.number(x);
  }
  out_.comma();
  out_.text(solvers::sap::to_string(s.status));
  out_.comma();
  out_.number(s.mean_slip);
  out_.end_row();
}

// ---- contacts.csv

ContactsWriter::ContactsWriter(const std::string& path, const scene::Scene& scene, double time_step)
    : scene_(scene), time_step_(time_step), out_(path) {
  out_.text(
      "t,body_a,body_b,geometry_a,geometry_b,x,y,z,nx,ny,nz,phi,impulse_n,impulse_t,fx,fy,fz,slip_speed,region");
  out_.end_row();
}

void ContactsWriter::write(double t, const simulation::StepResults& results) {
  const multibody::Model& model = scene_.model;
  const int num_geometries = static_cast<int>(scene_.geometries.size());
  auto geometry_name = [&](int g) { return g >= 0 && g < num_geometries ? scene_.geometries[g].name.c_str() : ""; };
  for (const simulation::ContactResult& c : results.contacts) {
    out_.number(t);
    out_.comma();
    out_.field(model.body(c.body_a).name);
    out_.comma();
    out_.field(model.body(c.body_b).name);
    out_.comma();
    out_.field(geometry_name(c.geometry_a));
    out_.comma();
    out_.field(geometry_name(c.geometry_b));
    const math::Vector3 f = c.impulse_W / time_step_;
    for (double x : {c.p_W.x(), c.p_W.y(), c.p_W.z(), c.n_W.x(), c.n_W.y(), c.n_W.z(), c.phi, c.impulse_normal,
                     c.impulse_tangential.norm(), f.x(), f.y(), f.z(), c.slip_speed}) {
      out_.comma();
      out_.number(x);
    }
    out_.comma();
    out_.text(simulation::to_string(c.region));
    out_.end_row();
  }
}

// ---- stats.json

void RunStatistics::add(const simulation::StepStats& s) {
  ++steps;
  sim_time = s.time;
  wall_time += s.wall_time;
  iterations_sum += s.solver_iterations;
  iterations_max = std::max(iterations_max, s.solver_iterations);
  if (std::isfinite(s.momentum_error)) {  // an overflowed residual of a failed solve: in `failures`
    momentum_error_sum += s.momentum_error;
    momentum_error_max = std::max(momentum_error_max, s.momentum_error);
    ++momentum_error_steps;
  }
  contacts_sum += s.contacts;
  contacts_max = std::max(contacts_max, s.contacts);
  max_penetration = std::max(max_penetration, s.max_penetration);
  if (s.status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
  energy_final = s.energy;
  if (s.constraint_rows > 0) {
    rows_sum += s.constraint_rows;
    rows_max = std::max(rows_max, s.constraint_rows);
    if (s.used_qp) {
      ++qp_steps;
      qp_iterations_sum += s.solver_iterations;
      qp_iterations_max = std::max(qp_iterations_max, s.solver_iterations);
      residual_sum += s.solver_residual;
      residual_max = std::max(residual_max, s.solver_residual);
      friction_iterations_sum += s.friction_iterations;
      friction_iterations_max = std::max(friction_iterations_max, s.friction_iterations);
      if (!s.friction_converged) ++friction_not_converged;
    } else {
      ++linear_solve_steps;
    }
  }
  switch (s.lstable_status) {
    case solvers::lstable::LStableStatus::kSuccess: break;
    case solvers::lstable::LStableStatus::kQpNotConverged: ++qp_not_converged; break;
    case solvers::lstable::LStableStatus::kQpNumericalError: ++qp_numerical_error; break;
    case solvers::lstable::LStableStatus::kLinearSolve: ++linear_solve_failures; break;
  }
}

void write_stats_json(const std::string& path, const RunStatistics& st, const std::string& solver,
                      const std::string& integrator, double time_step, const std::string& scene, int dofs,
                      const std::string& contact_approximation, const scene::Scene* robots_of) {
  const double n = std::max(1, st.steps);
  nlohmann::ordered_json j;
  j["status"] = st.status;
  j["steps"] = st.steps;
  j["sim_time_s"] = st.sim_time;
  j["wall_time_s"] = st.wall_time;
  j["real_time_factor"] = st.wall_time > 0.0 ? st.sim_time / st.wall_time : 0.0;
  j["solver"] = solver;
  j["integrator"] = integrator;
  j["contact_approximation"] = contact_approximation;
  j["time_step_s"] = time_step;
  j["solver_iterations"] = {{"mean", st.iterations_sum / n}, {"max", st.iterations_max}};
  j["momentum_error"] = {{"mean", st.momentum_error_sum / std::max(1, st.momentum_error_steps)},
                         {"max", st.momentum_error_max},
                         {"non_finite_steps", st.steps - st.momentum_error_steps}};
  j["contacts"] = {{"mean", st.contacts_sum / n}, {"max", st.contacts_max}};
  j["max_penetration_m"] = st.max_penetration;
  j["failures"] = st.failures;
  j["energy"] = {{"initial_J", st.energy_initial}, {"final_J", st.energy_final}};
  if (solver == "lstable") {
    const double solved = std::max(1, st.qp_steps + st.linear_solve_steps), qp = std::max(1, st.qp_steps);
    j["lstable"] = {{"friction_model", st.friction_model},
                    {"rows", {{"mean", st.rows_sum / solved}, {"max", st.rows_max}}},
                    {"qp_steps", st.qp_steps},
                    {"linear_solve_steps", st.linear_solve_steps},
                    {"qp_iterations", {{"mean", st.qp_iterations_sum / qp}, {"max", st.qp_iterations_max}}},
                    {"residual", {{"mean", st.residual_sum / qp}, {"max", st.residual_max}}},
                    {"friction_passes", {{"mean", st.friction_iterations_sum / qp}, {"max", st.friction_iterations_max}}},
                    {"friction_not_converged_steps", st.friction_not_converged},
                    {"failures",
                     {{"qp_not_converged", st.qp_not_converged},
                      {"qp_numerical_error", st.qp_numerical_error},
                      {"linear_solve", st.linear_solve_failures}}}};
  }
  j["scene"] = scene;
  j["dofs"] = dofs;
  if (robots_of != nullptr) {
    const multibody::Model& model = robots_of->model;
    nlohmann::ordered_json robots = nlohmann::ordered_json::array();
    for (const scene::SceneRobot& r : robots_of->robots) {
      std::vector<std::string> joints, actuated, bodies;
      for (const std::string& name : r.joints) {
        const int b = model.joint_body(name);
        if (b < 0) continue;
        bodies.push_back(model.body(b).name);
        if (model.body(b).joint.nv != 1) continue;
        joints.push_back(name);
        for (const scene::Actuator& a : robots_of->actuators)
          if (a.joint == name) actuated.push_back(name);
      }
      std::string base = r.root_link;
      if (r.floating && r.root_body > 0) {
        base = model.body(r.root_body).name;
        bodies.insert(bodies.begin(), base);
      }
      robots.push_back({{"name", r.name.empty() ? r.robot_name : r.name},
                        {"urdf", r.urdf_path},
                        {"floating", r.floating},
                        {"base", base},
                        {"joints", joints},
                        {"actuated", actuated},
                        {"bodies", bodies}});
    }
    j["robots"] = robots;
  }
  j["warnings"] = st.warnings;
  j["notes"] = st.notes;
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.close();
  if (!out) throw std::runtime_error(path + ": write failed (disk full?); the file is incomplete");
}

}  // namespace coulomb::io
