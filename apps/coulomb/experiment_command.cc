// `coulomb experiment id-tables -o DIR [--scene A1.yaml] [--panda-scene PANDA.yaml] [--duration S]
//  [--arm-duration S] [--controllers LIST] [--terrains LIST] [--jobs N] [--seed N] [--no-plots]
//  [--quiet]`: the experiments of Zapolsky & Drumwright §8 (digest
// ../shared/digests/inverse-dynamics.md §8.4–8.5) on coulomb's simulator: every controller on
// every planar terrain (Tables 3–5), four controllers on the height map (Fig. 16), the Panda
// holding a box with μ = 10⁶ and μ = 1 (Fig. 18). Runs in parallel on `--jobs` threads; writes
// one folder per run (metrics.json, series.csv), the tables as Markdown and CSV, a summary, and
// the figures through an embedded matplotlib script (DIR/plots.py).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "coulomb/control/experiment.h"

#include "commands.h"
#include "control_common.h"
#include "embedded.h"

namespace coulomb::cli {

namespace fs = std::filesystem;

namespace {

struct ExperimentOptions {
  std::string output;
  std::string scene = "examples/scenes/a1_trot.yaml";
  std::string panda_scene = "examples/scenes/panda_box.yaml";
  double duration = 30.0;
  double arm_duration = 3.0;
  std::string controllers, terrains;
  int jobs = 2;
  unsigned seed = 1;
  bool no_plots = false;
  bool quiet = false;
};

enum class Group { kPlanar, kHeightMap, kArm };

struct Task {
  std::string name;  // folder under runs/
  Group group = Group::kPlanar;
  std::string scene;
  control::ControllerKind controller = control::ControllerKind::kIdQpCoulomb;
  control::TerrainKind terrain = control::TerrainKind::kRigidLow;
  control::TerrainParameters terrain_parameters;
  std::string terrain_label;  // "rigid-low", …, "mu-1e6", "mu-1"
  double duration = 0.0;
};

struct Outcome {
  bool done = false;
  std::string error;
  control::ControlMetrics metrics;
  std::string reference_kind;
  double wall_time = 0.0;  // [s]
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string format(double x, const char* spec = "%.4f") {
  if (!std::isfinite(x)) return "";
  char text[64];
  std::snprintf(text, sizeof text, spec, x);
  return text;
}

std::string label(control::ControllerKind kind) { return control::paper_label(kind); }
// The paper's label as a CSV field: quoted (QP,μ has a comma).
std::string csv_label(control::ControllerKind kind) { return "\"" + label(kind) + "\""; }

// The paper's numbers (digest §8.5 (a)–(c)), for side-by-side reading; "–" where it fell.
const std::map<std::string, std::vector<std::string>> kPaperTable3 = {
    {"id-qp-mu", {"0.0310 / 1.9425", "0.0486 / 2.2596", "0.0217 / 2.0365", "0.0342 / 2.9360"}},
    {"id-qp-inf", {"0.0483 / 2.6295", "0.0654 / 2.5737", "–", "0.0446 / 3.9779"}},
    {"id-lcp-mu", {"0.0239 / 1.8386", "0.0259 / 1.8784", "0.0219 / 2.0786", "0.0226 / 2.1243"}},
    {"id-lcp-inf", {"–", "0.0260 / 1.8950", "–", "–"}},
    {"pid", {"0.0895 / 1.5569", "0.0916 / 1.4653", "0.0850 / 1.5845", "0.0850 / 1.5845"}},
    {"id-t-1", {"0.0325 / 1.7952", "0.1317 / 2.5585", "0.0265 / 1.8858", "0.1270 / 4.4377"}},
    {"id-t-2", {"0.0328 / 1.7830", "0.1316 / 2.5608", "0.0267 / 1.8742", "0.1270 / 4.2061"}}};
const std::map<std::string, std::string> kPaperTable4 = {
    {"id-qp-mu", "52.5718 | 0.2016"},  {"id-qp-inf", "245.5117 | 0.4239"}, {"id-lcp-mu", "677.9693 | 0.8351"},
    {"id-lcp-inf", "351.1803 | 0.4055"}, {"id-t-1", "974.3312 | 0.9918"},  {"id-t-2", "17528.0 | 2.7416"},
    {"pid", "100.1571 | 0.3413"}};
const std::map<std::string, std::vector<std::string>> kPaperTable5 = {
    {"id-qp-mu", {"3.8009 N (12.53%)", "13.8457 N (27.48%)", "7.8260 N (17.12%)", "14.9225 N (30.86%)"}},
    {"id-qp-inf", {"8.4567 N (22.26%)", "12.4153 N (25.26%)", "–", "15.1897 N (30.66%)"}},
    {"id-lcp-mu", {"0.9371 N (1.94%)", "1.2768 N (1.55%)", "4.6385 N (6.37%)", "12.4896 N (24.00%)"}},
    {"id-lcp-inf", {"–", "0.3572 N (1.16%)", "–", "–"}}};

class Writer {
 public:
  explicit Writer(const fs::path& path) : path_(path), out_(path) {
    if (!out_) throw std::runtime_error("cannot write '" + path.string() + "'");
  }
  template <class T>
  Writer& operator<<(const T& x) {
    out_ << x;
    return *this;
  }
  void close() {
    out_.close();
    if (!out_) throw std::runtime_error("cannot write '" + path_.string() + "'");
  }

 private:
  fs::path path_;
  std::ofstream out_;
};

struct Results {
  const std::vector<Task>& tasks;
  const std::vector<Outcome>& outcomes;
  const Outcome* find(Group group, control::ControllerKind controller, const std::string& terrain_label) const {
    for (size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].group == group && tasks[i].controller == controller && tasks[i].terrain_label == terrain_label)
        return &outcomes[i];
    return nullptr;
  }
};

// A table cell: "" when not run, "error" when it failed, "–" when the robot fell.
std::string cell(const Outcome* o, const std::function<std::string(const control::ControlMetrics&)>& text) {
  if (o == nullptr) return "";
  if (!o->error.empty()) return "error";
  if (o->metrics.fell) return "–";
  return text(o->metrics);
}

void write_tables(const fs::path& dir, const Results& r, const std::vector<control::ControllerKind>& controllers,
                  const ExperimentOptions& o) {
  const std::vector<control::TerrainKind>& planar = control::planar_terrains();
  const char* planar_titles[] = {"Rigid, low μ", "Rigid, high μ", "Compliant, low μ", "Compliant, high μ"};
  const std::string header = "| Controller | " + std::string(planar_titles[0]) + " | " + planar_titles[1] + " | " +
                             planar_titles[2] + " | " + planar_titles[3] + " |\n|---|---|---|---|---|\n";
  const std::string note = "“–”: the robot fell (time and reason in runs.csv); empty: not run; “error”: the run failed.\n";

  // Table 3.
  {
    Writer md(dir / "table3.md"), csv(dir / "table3.csv");
    md << "# Table 3: joint tracking on planar terrains\n\n"
       << "E[E|θ − θ_des|] [rad] / E[E|θ̇ − θ̇_des|] [rad/s] over the steps and the actuated joints, "
       << o.duration << " s of trotting per run (coulomb's SAP simulator, the A1).\n" << note << "\n" << header;
    csv << "controller,label,terrain,fell,fall_time_s,joint_position_error_rad,joint_velocity_error_rad_s,error\n";
    for (control::ControllerKind c : controllers) {
      md << "| " << label(c) << " |";
      for (control::TerrainKind t : planar) {
        const Outcome* out = r.find(Group::kPlanar, c, control::to_string(t));
        md << " " << cell(out, [](const control::ControlMetrics& m) {
          return format(m.joint_position_error) + " / " + format(m.joint_velocity_error);
        }) << " |";
        if (out)
          csv << control::to_string(c) << "," << csv_label(c) << "," << control::to_string(t) << ","
              << (out->metrics.fell ? 1 : 0) << "," << format(out->metrics.fall_time, "%.6g") << ","
              << format(out->metrics.joint_position_error, "%.9g") << ","
              << format(out->metrics.joint_velocity_error, "%.9g") << ",\"" << out->error << "\"\n";
      }
      md << "\n";
    }
    md << "\nThe paper's Table 3 (MOBY, its 16 cm quadruped, 30 s):\n\n" << header;
    for (control::ControllerKind c : controllers) {
      const auto it = kPaperTable3.find(control::to_string(c));
      if (it == kPaperTable3.end()) continue;
      md << "| " << label(c) << " | " << it->second[0] << " | " << it->second[1] << " | " << it->second[2] << " | "
         << it->second[3] << " |\n";
    }
    md.close();
    csv.close();
  }

  // Table 4: torque smoothness, averaged over the planar terrains where the robot did not fall.
  {
    Writer md(dir / "table4.md"), csv(dir / "table4.csv");
    md << "# Table 4: torque smoothness\n\n"
       << "E|Δτ|/δt [N·m/s] and E|τ| [N·m] over the steps and the actuators (the torques the simulator "
          "applied), averaged over the planar terrains where the robot did not fall; max |Δτ|/δt over those "
          "runs.\n\n"
       << "| Controller | E[\\|Δτ\\|]/δt [N·m/s] | E[\\|τ\\|] [N·m] | max \\|Δτ\\|/δt [N·m/s] | terrains |\n"
          "|---|---|---|---|---|\n";
    csv << "controller,label,torque_rate_N_m_per_s,torque_N_m,max_torque_rate_N_m_per_s,terrains\n";
    for (control::ControllerKind c : controllers) {
      double rate = 0.0, torque = 0.0, max_rate = 0.0;
      int used = 0;
      std::string names;
      for (control::TerrainKind t : planar) {
        const Outcome* out = r.find(Group::kPlanar, c, control::to_string(t));
        if (!out || !out->error.empty() || !out->done || out->metrics.fell) continue;
        rate += out->metrics.torque_rate;
        torque += out->metrics.torque;
        max_rate = std::max(max_rate, out->metrics.max_torque_rate);
        names += (names.empty() ? "" : " ") + std::string(control::to_string(t));
        ++used;
      }
      if (used == 0) {
        md << "| " << label(c) << " | – | – | – | none |\n";
        csv << control::to_string(c) << "," << csv_label(c) << ",,,,\n";
        continue;
      }
      md << "| " << label(c) << " | " << format(rate / used, "%.2f") << " | " << format(torque / used) << " | "
         << format(max_rate, "%.4g") << " | " << names << " |\n";
      csv << control::to_string(c) << "," << csv_label(c) << "," << format(rate / used, "%.9g") << ","
          << format(torque / used, "%.9g") << "," << format(max_rate, "%.9g") << "," << names << "\n";
    }
    md << "\nThe paper's Table 4 (E[|Δτ|] and E[|τ|], no units given):\n\n| Controller | E[\\|Δτ\\|] | E[\\|τ\\|] |\n"
          "|---|---|---|\n";
    for (control::ControllerKind c : controllers)
      if (const auto it = kPaperTable4.find(control::to_string(c)); it != kPaperTable4.end())
        md << "| " << label(c) << " | " << it->second << " |\n";
    md.close();
    csv.close();
  }

  // Table 5: normal-force prediction of the predictive controllers.
  {
    Writer md(dir / "table5.md"), csv(dir / "table5.csv");
    md << "# Table 5: contact-force prediction\n\n"
       << "E|Σ f̂_N − Σ f_N| [N] (and relative to Σ f_N) between the normal force the predictive controller "
          "expected for the coming step and the one the simulator applied, over the steps with contact.\n"
       << note << "\n" << header;
    csv << "controller,label,terrain,fell,normal_force_error_N,normal_force_error_relative,mean_normal_force_N\n";
    for (control::ControllerKind c : controllers) {
      if (!control::is_predictive(c)) continue;
      md << "| " << label(c) << " |";
      for (control::TerrainKind t : planar) {
        const Outcome* out = r.find(Group::kPlanar, c, control::to_string(t));
        md << " " << cell(out, [](const control::ControlMetrics& m) {
          return format(m.normal_force_error) + " N (" + format(100.0 * m.normal_force_error_relative, "%.2f") + "%)";
        }) << " |";
        if (out)
          csv << control::to_string(c) << "," << csv_label(c) << "," << control::to_string(t) << ","
              << (out->metrics.fell ? 1 : 0) << "," << format(out->metrics.normal_force_error, "%.9g") << ","
              << format(out->metrics.normal_force_error_relative, "%.9g") << ","
              << format(out->metrics.mean_normal_force, "%.9g") << "\n";
      }
      md << "\n";
    }
    md << "\nThe paper's Table 5:\n\n" << header;
    for (control::ControllerKind c : controllers)
      if (const auto it = kPaperTable5.find(control::to_string(c)); it != kPaperTable5.end())
        md << "| " << label(c) << " | " << it->second[0] << " | " << it->second[1] << " | " << it->second[2] << " | "
           << it->second[3] << " |\n";
    md.close();
    csv.close();
  }

  // Height map (Fig. 16).
  {
    Writer md(dir / "heightmap.md"), csv(dir / "heightmap.csv");
    md << "# Rigid height map with random friction (Fig. 16)\n\n"
       << "Bumps up to 1/5 of the A1's leg length, μ ~ U(0.1, 1.5) per triangle, seed " << o.seed << ", "
       << o.duration << " s per run.\n\n"
       << "| Controller | position error [rad] | velocity error [rad/s] | fell | base path [m] | net [m] | "
          "E\\|Δτ\\|/δt [N·m/s] | E\\|τ\\| [N·m] |\n|---|---|---|---|---|---|---|---|\n";
    csv << "controller,label,fell,fall_time_s,joint_position_error_rad,joint_velocity_error_rad_s,distance_m,"
           "net_displacement_m,torque_rate_N_m_per_s,torque_N_m,error\n";
    const Outcome* pid = r.find(Group::kHeightMap, control::ControllerKind::kPid, "heightmap");
    for (control::ControllerKind c : controllers) {
      const Outcome* out = r.find(Group::kHeightMap, c, "heightmap");
      if (!out) continue;
      const control::ControlMetrics& m = out->metrics;
      if (!out->error.empty()) {
        md << "| " << label(c) << " | error | | | | | | |\n";
        csv << control::to_string(c) << "," << csv_label(c) << ",,,,,,,,,\"" << out->error << "\"\n";
        continue;
      }
      md << "| " << label(c) << " | " << format(m.joint_position_error) << " | " << format(m.joint_velocity_error)
         << " | " << (m.fell ? "at " + format(m.fall_time, "%.2f") + " s" : std::string("no")) << " | "
         << format(m.distance, "%.2f") << " | " << format(m.net_displacement, "%.2f") << " | "
         << format(m.torque_rate, "%.2f") << " | " << format(m.torque) << " |\n";
      csv << control::to_string(c) << "," << csv_label(c) << "," << (m.fell ? 1 : 0) << "," << format(m.fall_time, "%.6g")
          << "," << format(m.joint_position_error, "%.9g") << "," << format(m.joint_velocity_error, "%.9g") << ","
          << format(m.distance, "%.9g") << "," << format(m.net_displacement, "%.9g") << ","
          << format(m.torque_rate, "%.9g") << "," << format(m.torque, "%.9g") << ",\n";
    }
    const Outcome* qp = r.find(Group::kHeightMap, control::ControllerKind::kIdQpCoulomb, "heightmap");
    if (pid && qp && pid->error.empty() && qp->error.empty() && pid->metrics.joint_position_error > 0.0)
      md << "\nID(t_i)_{QP,μ} against PID: joint position error "
         << format(100.0 * (qp->metrics.joint_position_error / pid->metrics.joint_position_error - 1.0), "%+.0f")
         << " % (the paper: −19 %; both measured up to a fall, if any).\n";
    md.close();
    csv.close();
  }
}

void write_arm_table(const fs::path& dir, const Results& r, const std::vector<control::ControllerKind>& controllers,
                     const std::string& note) {
  Writer md(dir / "arm.md"), csv(dir / "arm.csv");
  md << "# The Panda holding a box (Fig. 18)\n\n";
  if (!note.empty()) md << note << "\n";
  md << "\n| Controller | box friction | position error [rad] | velocity error [rad/s] | box | hold ratio |\n"
        "|---|---|---|---|---|---|\n";
  csv << "controller,label,mu,joint_position_error_rad,joint_velocity_error_rad_s,box_dropped,box_drop_time_s,"
         "box_hold_ratio,error\n";
  for (const char* mu : {"mu-1e6", "mu-1"})
    for (control::ControllerKind c : controllers) {
      const Outcome* out = r.find(Group::kArm, c, mu);
      if (!out) continue;
      const control::ControlMetrics& m = out->metrics;
      const std::string mu_text = std::string(mu) == "mu-1e6" ? "μ = 1e6" : "μ = 1";
      if (!out->error.empty()) {
        md << "| " << label(c) << " | " << mu_text << " | error | | | |\n";
        csv << control::to_string(c) << "," << csv_label(c) << "," << mu << ",,,,,,\"" << out->error << "\"\n";
        continue;
      }
      md << "| " << label(c) << " | " << mu_text << " | " << format(m.joint_position_error) << " | "
         << format(m.joint_velocity_error) << " | "
         << (m.box_dropped ? "dropped at " + format(m.box_drop_time, "%.2f") + " s" : std::string("held")) << " | "
         << format(m.box_hold_ratio, "%.3f") << " |\n";
      csv << control::to_string(c) << "," << csv_label(c) << "," << mu << "," << format(m.joint_position_error, "%.9g")
          << "," << format(m.joint_velocity_error, "%.9g") << "," << (m.box_dropped ? 1 : 0) << ","
          << format(m.box_drop_time, "%.6g") << "," << format(m.box_hold_ratio, "%.9g") << ",\n";
    }
  md << "\nThe paper: with μ = ∞, PID and ID(t_{i−1}) track worst; with μ = 1, PID and ID(t_i)_{QP,μ} drop the box "
        "at about 1.5 s, ID(t_{i−1}) holds it.\n";
  md.close();
  csv.close();
}

// The first of python3 (PATH) and /usr/bin/python3 that can import matplotlib; "" if none.
std::string python_with_matplotlib() {
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(python) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return python;
  return "";
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_experiment(const ExperimentOptions& o) {
  if (!(o.duration > 0.0 && std::isfinite(o.duration)))
    throw UsageError("--duration must be a finite number > 0 s, got " + util::format_number(o.duration));
  if (!(o.arm_duration > 0.0 && std::isfinite(o.arm_duration)))
    throw UsageError("--arm-duration must be a finite number > 0 s, got " + util::format_number(o.arm_duration));
  if (o.jobs < 1 || o.jobs > 256) throw UsageError("--jobs must be in 1 … 256, got " + std::to_string(o.jobs));

  // Controllers and terrains chosen (paper order).
  std::vector<control::ControllerKind> controllers;
  if (o.controllers.empty()) {
    controllers = control::all_controller_kinds();
  } else {
    std::vector<control::ControllerKind> asked;
    for (const std::string& name : split_list(o.controllers)) asked.push_back(parse_controller_option(name, "--controllers"));
    for (control::ControllerKind c : control::all_controller_kinds())
      if (std::find(asked.begin(), asked.end(), c) != asked.end()) controllers.push_back(c);
  }
  std::vector<control::TerrainKind> terrains;
  if (o.terrains.empty()) {
    terrains = control::planar_terrains();
    terrains.push_back(control::TerrainKind::kHeightMap);
  } else {
    for (const std::string& name : split_list(o.terrains)) {
      const control::TerrainKind t = parse_terrain_option(name, "--terrains");
      if (t == control::TerrainKind::kScene)
        throw UsageError("--terrains: 'scene' is not one of the experiment's terrains (rigid-low, rigid-high, "
                         "compliant-low, compliant-high, heightmap)");
      if (std::find(terrains.begin(), terrains.end(), t) == terrains.end()) terrains.push_back(t);
    }
  }
  if (!fs::exists(o.scene))
    throw std::runtime_error("--scene: '" + o.scene +
                             "' not found (run from the repository root, or give the A1 trot scene with --scene)");

  std::vector<Task> tasks;
  control::TerrainParameters terrain_parameters;
  terrain_parameters.seed = o.seed;
  const std::vector<control::ControllerKind> heightmap_controllers = {
      control::ControllerKind::kIdQpCoulomb, control::ControllerKind::kPid, control::ControllerKind::kIdLagged1,
      control::ControllerKind::kIdLagged2};
  // Height-map runs first (the slowest: most contacts candidates), then the planar ones.
  if (std::find(terrains.begin(), terrains.end(), control::TerrainKind::kHeightMap) != terrains.end())
    for (control::ControllerKind c : controllers)
      if (std::find(heightmap_controllers.begin(), heightmap_controllers.end(), c) != heightmap_controllers.end())
        tasks.push_back(Task{std::string(control::to_string(c)) + "_heightmap", Group::kHeightMap, o.scene, c,
                             control::TerrainKind::kHeightMap, terrain_parameters, "heightmap", o.duration});
  for (control::TerrainKind t : control::planar_terrains()) {
    if (std::find(terrains.begin(), terrains.end(), t) == terrains.end()) continue;
    for (control::ControllerKind c : controllers)
      tasks.push_back(Task{std::string(control::to_string(c)) + "_" + control::to_string(t), Group::kPlanar, o.scene, c,
                           t, terrain_parameters, control::to_string(t), o.duration});
  }
  std::string arm_note;
  const std::vector<control::ControllerKind> arm_controllers = {
      control::ControllerKind::kIdQpCoulomb, control::ControllerKind::kPid, control::ControllerKind::kIdLagged1};
  if (!fs::exists(o.panda_scene)) {
    arm_note = "The Panda scene '" + o.panda_scene + "' does not exist: the arm runs were skipped.";
  } else {
    for (const auto& [label_text, high] : {std::pair{"mu-1e6", true}, std::pair{"mu-1", false}})
      for (control::ControllerKind c : controllers) {
        if (std::find(arm_controllers.begin(), arm_controllers.end(), c) == arm_controllers.end()) continue;
        control::TerrainParameters tp = terrain_parameters;
        tp.high_mu = 1e6;  // "μ = ∞"
        tp.low_mu = 1.0;
        tasks.push_back(Task{"panda_" + std::string(control::to_string(c)) + "_" + label_text, Group::kArm,
                             o.panda_scene, c, high ? control::TerrainKind::kRigidHigh : control::TerrainKind::kRigidLow,
                             tp, label_text, o.arm_duration});
      }
    arm_note = "Box friction through the terrain's contact defaults (rigid SAP contact, k 1e10 N/m, β 0.01): μ = 1e6 "
               "(the paper's ∞) and μ = 1; " + format(o.arm_duration, "%g") + " s per run.";
  }

  const fs::path dir(o.output);
  fs::create_directories(dir / "runs");
  for (const char* stale : {"table3.md", "table3.csv", "table4.md", "table4.csv", "table5.md", "table5.csv",
                            "heightmap.md", "heightmap.csv", "arm.md", "arm.csv", "runs.csv", "runs.json",
                            "summary.md"})
    fs::remove(dir / stale);

  if (!o.quiet)
    std::cerr << "coulomb experiment id-tables: " << tasks.size() << " runs on " << o.jobs << " thread"
              << (o.jobs == 1 ? "" : "s") << " (" << o.duration << " s each"
              << (arm_note.find("skipped") == std::string::npos ? std::string(", arm runs ") + format(o.arm_duration, "%g") + " s" : "")
              << ") into " << dir.string() << "\n";
  if (!o.quiet && arm_note.find("skipped") != std::string::npos) std::cerr << "coulomb: note: " << arm_note << "\n";

  std::vector<Outcome> outcomes(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex print_mutex;
  size_t finished = 0;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      const Task& task = tasks[i];
      Outcome& out = outcomes[i];
      const auto t0 = std::chrono::steady_clock::now();
      try {
        TerrainScene loaded = load_scene_with_terrain(task.scene, task.terrain, task.terrain_parameters);
        control::ControlRunOptions options;
        options.controller = task.controller;
        options.terrain = task.terrain;
        options.terrain_parameters = task.terrain_parameters;
        options.duration = task.duration;
        options.trot = experiment_trot_parameters();
        options.record_series = true;
        const control::ControlRun run = control::run_control(std::move(loaded.scene), loaded.terrain, options);
        out.metrics = run.metrics;
        out.reference_kind = run.reference_kind;
        const fs::path run_dir = dir / "runs" / task.name;
        fs::create_directories(run_dir);
        write_metrics_json((run_dir / "metrics.json").string(), run.metrics);
        write_series_csv((run_dir / "series.csv").string(), run.series, run.reference_kind);
        out.done = true;
      } catch (const std::exception& e) {
        out.error = e.what();
      }
      out.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(print_mutex);
      ++finished;
      if (o.quiet) continue;
      std::fprintf(stderr, "[%2zu/%zu] %-28s ", finished, tasks.size(), task.name.c_str());
      if (!out.error.empty()) {
        std::fprintf(stderr, "ERROR: %s\n", out.error.c_str());
      } else {
        const control::ControlMetrics& m = out.metrics;
        std::fprintf(stderr, "%5.1f s in %6.1f s wall   pos %.4f rad  vel %.3f rad/s%s\n", m.duration, out.wall_time,
                     m.joint_position_error, m.joint_velocity_error,
                     m.fell ? ("   FELL at " + format(m.fall_time, "%.2f") + " s (" + m.fall_reason + ")").c_str()
                            : m.box_dropped ? ("   box dropped at " + format(m.box_drop_time, "%.2f") + " s").c_str()
                                            : "");
      }
    }
  };
  std::vector<std::thread> threads;
  const int num_threads = std::min<int>(o.jobs, static_cast<int>(std::max<size_t>(1, tasks.size())));
  for (int k = 0; k < num_threads; ++k) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Tables and the run index.
  const Results results{tasks, outcomes};
  write_tables(dir, results, controllers, o);
  write_arm_table(dir, results, controllers, arm_note);
  {
    Writer csv(dir / "runs.csv");
    csv << "run,group,controller,label,terrain,duration_s,steps,fell,fall_time_s,fall_reason,box_dropped,wall_time_s,"
           "controller_time_mean_s,controller_time_max_s,id_not_solved,simulator_failures,error\n";
    nlohmann::ordered_json index = nlohmann::ordered_json::array();
    for (size_t i = 0; i < tasks.size(); ++i) {
      const Task& t = tasks[i];
      const Outcome& out = outcomes[i];
      const control::ControlMetrics& m = out.metrics;
      const char* group = t.group == Group::kPlanar ? "planar" : t.group == Group::kHeightMap ? "heightmap" : "arm";
      csv << t.name << "," << group << "," << control::to_string(t.controller) << "," << csv_label(t.controller) << ","
          << t.terrain_label << "," << format(m.duration, "%.6g") << "," << m.steps << "," << (m.fell ? 1 : 0) << ","
          << format(m.fall_time, "%.6g") << ",\"" << m.fall_reason << "\"," << (m.box_dropped ? 1 : 0) << ","
          << format(out.wall_time, "%.3f") << "," << format(m.controller_time_mean, "%.6g") << ","
          << format(m.controller_time_max, "%.6g") << "," << m.id_not_solved << "," << m.simulator_failures << ",\""
          << out.error << "\"\n";
      index.push_back({{"name", t.name},
                       {"group", group},
                       {"controller", control::to_string(t.controller)},
                       {"label", label(t.controller)},
                       {"terrain", t.terrain_label},
                       {"reference_kind", out.reference_kind},
                       {"done", out.done},
                       {"fell", m.fell},
                       {"box_dropped", m.box_dropped},
                       {"error", out.error}});
    }
    csv.close();
    Writer json(dir / "runs.json");
    json << index.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    json.close();
    Writer waypoints(dir / "waypoints.csv");
    waypoints << "x,y\n";
    for (const Eigen::Vector2d& w : experiment_trot_parameters().waypoints.waypoints)
      waypoints << format(w.x(), "%.9g") << "," << format(w.y(), "%.9g") << "\n";
    waypoints.close();
  }
  {
    Writer md(dir / "summary.md");
    md << "# Zapolsky & Drumwright's experiments on coulomb\n\n"
       << "`coulomb experiment id-tables`: " << tasks.size() << " runs, " << format(wall, "%.0f") << " s wall time on "
       << num_threads << " thread" << (num_threads == 1 ? "" : "s") << ". A1 scene: " << o.scene << "; "
       << o.duration << " s per run.\n\n"
       << "- [Table 3](table3.md): joint tracking on planar terrains\n"
       << "- [Table 4](table4.md): torque smoothness\n"
       << "- [Table 5](table5.md): contact-force prediction\n"
       << "- [Height map](heightmap.md) (Fig. 16)\n"
       << "- [Panda](arm.md) (Fig. 18)\n"
       << "- runs.csv: every run (fall, wall time, controller time, failures); runs/NAME/metrics.json and series.csv\n"
       << "- Figures (plots.py): fig14_joint_position_error.png, fig15_torque_rate.png, fig16_heightmap.png, "
          "fig17_base_path.png, fig18_arm.png\n";
    md.close();
  }

  // Figures.
  {
    std::ofstream(dir / "plots.py") << kEmbeddedExperimentPlots;
    const std::string arguments = shell_quote((dir / "plots.py").string()) + " " + shell_quote(dir.string());
    const std::string python = o.no_plots ? std::string() : python_with_matplotlib();
    if (o.no_plots) {
      if (!o.quiet) std::cerr << "figures: run `python3 " << arguments << "` (needs matplotlib)\n";
    } else if (!python.empty()) {
      const std::string command = python + " " + arguments + (o.quiet ? " >/dev/null" : "");
      if (std::system(command.c_str()) != 0) std::cerr << "coulomb: warning: `" << command << "` failed\n";
    } else {
      std::cerr << "figures: python3 with matplotlib not found; install it (apt install python3-matplotlib) and run "
                   "`python3 "
                << arguments << "`\n";
    }
  }

  int errors = 0, falls = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    errors += outcomes[i].error.empty() ? 0 : 1;
    falls += outcomes[i].metrics.fell ? 1 : 0;
  }
  if (!o.quiet)
    std::cout << "ran " << tasks.size() << " runs in " << format(wall, "%.0f") << " s wall time (" << falls
              << " fell, " << errors << " failed); wrote " << dir.string()
              << "/summary.md, table3.md, table4.md, table5.md, heightmap.md, arm.md (and .csv), runs.csv, runs/\n";
  return errors > 0 ? 1 : 0;
}

}  // namespace

Command add_experiment_command(CLI::App& app) {
  auto options = std::make_shared<ExperimentOptions>();
  CLI::App* sub = app.add_subcommand("experiment", "Reproduce the experiments of a paper with coulomb (see SUBCOMMAND --help)");
  sub->require_subcommand(1);
  CLI::App* tables = sub->add_subcommand(
      "id-tables",
      "Zapolsky & Drumwright, \"Inverse Dynamics with Rigid Contact and Friction\", section 8, on the A1:\n"
      "every controller (see `coulomb control --help`) trots for --duration on the four planar terrains\n"
      "(rigid/compliant x low/high friction: Tables 3, 4, 5), ID(t_i)_{QP,mu}, PID, ID(t_{i-1}) and\n"
      "ID(t_{i-2}) also on the random height map (Fig. 16); and, when --panda-scene exists, the Panda\n"
      "holding a box with mu = 1e6 and mu = 1 under ID(t_i)_{QP,mu}, PID and ID(t_{i-1}) (Fig. 18).\n"
      "Writes into DIR: runs/NAME/{metrics.json, series.csv} per run, table3/4/5.md and .csv,\n"
      "heightmap.md/.csv, arm.md/.csv, runs.csv (falls, wall and controller times), summary.md, and\n"
      "the figures fig14..fig18 *.png from plots.py (run when python3 has matplotlib).\n"
      "Exit status: 0 every run completed (falls are results), 1 a run failed (error in runs.csv).");
  tables->add_option("-o,--output", options->output, "Output folder (created if missing)")->required();
  tables->add_option("--scene", options->scene, "The A1 trot scene")->capture_default_str();
  tables->add_option("--panda-scene", options->panda_scene, "The Panda-with-box scene (skipped with a note if missing)")
      ->capture_default_str();
  tables->add_option("--duration", options->duration, "Simulated time per A1 run [s]")->capture_default_str();
  tables->add_option("--arm-duration", options->arm_duration, "Simulated time per Panda run [s]")->capture_default_str();
  tables->add_option("--controllers", options->controllers,
                     "Comma-separated controllers (default: all: " + controller_names() + ")");
  tables->add_option("--terrains", options->terrains,
                     "Comma-separated terrains (default: rigid-low,rigid-high,compliant-low,compliant-high,heightmap)");
  tables->add_option("--jobs", options->jobs, "Runs in parallel (threads)")->capture_default_str();
  tables->add_option("--seed", options->seed, "Seed of the height map")->capture_default_str();
  tables->add_flag("--no-plots", options->no_plots, "Write plots.py but do not run it");
  tables->add_flag("-q,--quiet", options->quiet, "No progress lines and no summary");
  return Command{sub, [options, tables] {
                   if (tables->parsed()) return run_experiment(*options);
                   throw UsageError("experiment: give the experiment to run (id-tables)");
                 }};
}

}  // namespace coulomb::cli
