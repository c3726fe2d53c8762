// Terrains, metrics and the control loop of Zapolsky & Drumwright's experiments (§7.5, §8;
// digest ../shared/digests/inverse-dynamics.md §8.4–8.5). See experiment.h for the contract.
//
// Choices made here (the header leaves them open):
//  - Robot mass for the compliant terrains: the sum of the masses of the moving bodies (every
//    body but the world), i.e. the robot plus any free body of the scene; fixed bodies (the
//    ground) do not count.
//  - Leg length (the height map's default bump height is 1/5 of it): the first leg of
//    TrotPlanner::a1_legs(prefix) found in the model, |thigh joint → knee joint| + |knee joint →
//    foot frame|, the straight leg's hip-to-foot distance (0.4 m for the A1: 8 cm bumps).
//  - Height map: n × n square cells (n = round(2 extent / cell)) centred on the start position of
//    the first floating robot's base (the world origin without one). Vertex heights
//    h = w(p) Σ_k a_k exp(−|p − c_k|² / (2 σ_k²)) with positive amplitudes (hills only), scaled
//    so that max h = bump_height and min h = 0. The window w is 0 within the start area (the
//    origins of every moving body's collision geometries at q0, plus 10 cm, around the base) and
//    at the map's border, and rises to 1 over 25 cm (smoothstep), so the robot starts on flat ground and the map meets the ground
//    half-space (z = 0, also the terrain beyond the extent) without a step. Each cell (i, j) is
//    split along its diagonal from (i, j) to (i + 1, j + 1) into two triangles; every triangle
//    with a vertex above 0 is one fixed body with one convex_mesh shape, the prism between the
//    triangle and z = −5 cm, with its own μ; flat triangles are left to the half-space.
//  - Random numbers: std::mt19937 seeded with `seed`, its 32-bit outputs mapped to (0, 1) as
//    (r + 0.5) / 2³², drawn in a fixed order (bumps: centre x, centre y, σ, amplitude; then one μ
//    per triangle, row by row, flat triangles included), so the terrain is the same on every
//    platform.
//  - Metrics: see run_control below.
#include "coulomb/control/experiment.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/scene/placement.h"

namespace coulomb::control {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

// Shortest round-trip text of x (platform-independent, locale-free).
std::string number(double x) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

std::string short_number(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

void require(bool ok, const std::string& field, double value, const std::string& what) {
  if (!ok)
    throw std::invalid_argument("make_terrain: TerrainParameters::" + field + " must be " + what + ", got " +
                                short_number(value));
}

// The A1 among the scene's robots: its prefix and legs, if every leg's joints and foot frame exist.
struct LeggedRobot {
  int robot = -1;
  std::string prefix;
  std::vector<LegDescription> legs;
};

bool frame_exists(const multibody::Model& model, const std::string& name) {
  for (const multibody::Frame& f : model.frames())
    if (f.name == name) return true;
  return false;
}

std::optional<LeggedRobot> find_a1(const scene::Scene& scene) {
  const multibody::Model& model = scene.model;
  for (size_t r = 0; r < scene.robots.size(); ++r) {
    const scene::SceneRobot& robot = scene.robots[r];
    if (!robot.floating) continue;
    const std::string prefix = robot.name.empty() ? std::string() : robot.name + "/";
    std::vector<LegDescription> legs = TrotPlanner::a1_legs(prefix);
    bool ok = !legs.empty();
    for (const LegDescription& leg : legs) {
      for (const std::string& joint : leg.joints) ok = ok && model.joint_body(joint) >= 0;
      ok = ok && frame_exists(model, leg.foot_frame);
    }
    if (ok) return LeggedRobot{static_cast<int>(r), prefix, std::move(legs)};
  }
  return std::nullopt;
}

// The first floating robot's base body (0 if none).
int floating_base_body(const scene::Scene& scene) {
  for (const scene::SceneRobot& robot : scene.robots)
    if (robot.floating) return robot.root_body;
  return 0;
}

double moving_mass(const multibody::Model& model) {
  double m = 0.0;
  for (int b = 1; b < model.num_bodies(); ++b) m += model.body(b).inertia.mass;
  return m;
}

// Hip-to-foot length of a straight leg: |thigh joint → knee joint| + |knee joint → foot frame|.
double leg_length(const multibody::Model& model, const LegDescription& leg) {
  const int knee_body = model.joint_body(leg.joints[2]);
  const multibody::Frame& foot = model.frame(model.frame_index(leg.foot_frame));
  if (knee_body < 0 || foot.body != knee_body)
    throw std::invalid_argument("make_terrain: leg " + leg.name + ": the foot frame '" + leg.foot_frame +
                                "' is not on the body of the joint '" + leg.joints[2] + "'");
  return model.body(knee_body).joint.X_PJ.p.norm() + foot.X_BF.p.norm();
}

// Uniform numbers in (0, 1) from std::mt19937's raw 32-bit output (the same on every platform).
class Uniform {
 public:
  explicit Uniform(unsigned seed) : engine_(seed) {}
  double operator()() { return (static_cast<double>(engine_()) + 0.5) / 4294967296.0; }
  double operator()(double lo, double hi) { return lo + (hi - lo) * (*this)(); }

 private:
  std::mt19937 engine_;
};

double smoothstep(double t) {
  t = std::clamp(t, 0.0, 1.0);
  return t * t * (3.0 - 2.0 * t);
}

// The vertex grid of a height map and its piecewise-linear interpolation (the prisms' tops).
struct HeightGrid {
  int n = 0;             // cells per side
  double x0 = 0.0, y0 = 0.0, cell = 0.1;  // lower-left corner [m], cell size [m]
  std::vector<double> h;  // (n + 1)² vertex heights, index i + (n + 1) j
  double at(int i, int j) const { return h[static_cast<size_t>(i + (n + 1) * j)]; }
  double operator()(double x, double y) const {
    const double u = (x - x0) / cell, w = (y - y0) / cell;
    if (!(u >= 0.0 && w >= 0.0 && u <= n && w <= n)) return 0.0;  // beyond the map: the half-space z = 0
    const int i = std::min(static_cast<int>(u), n - 1), j = std::min(static_cast<int>(w), n - 1);
    const double fu = u - i, fw = w - j;
    const double h00 = at(i, j), h11 = at(i + 1, j + 1);
    if (fu >= fw) return h00 + fu * (at(i + 1, j) - h00) + fw * (h11 - at(i + 1, j));  // triangle (00, 10, 11)
    return h00 + fw * (at(i, j + 1) - h00) + fu * (h11 - at(i, j + 1));               // triangle (00, 11, 01)
  }
};

std::string ground_body_yaml() {
  return "- {name: ground, fixed: true, color: [0.55, 0.55, 0.5], shapes: [{type: halfspace, normal: [0, 0, 1]}]}\n";
}

// Colour of a height-map cell from its μ: icy blue (low) to earth brown (high).
std::string mu_colour(double mu, double mu_min, double mu_max) {
  const double t = mu_max > mu_min ? std::clamp((mu - mu_min) / (mu_max - mu_min), 0.0, 1.0) : 0.5;
  const double r = 0.65 + t * (0.5 - 0.65), g = 0.8 + t * (0.38 - 0.8), b = 0.95 + t * (0.2 - 0.95);
  char text[64];
  std::snprintf(text, sizeof text, "[%.3f, %.3f, %.3f]", r, g, b);
  return text;
}

Terrain make_height_map(const scene::Scene& scene, const TerrainParameters& p, Terrain t) {
  const multibody::Model& model = scene.model;
  double bump = p.bump_height;
  if (!(bump > 0.0)) {
    const std::optional<LeggedRobot> a1 = find_a1(scene);
    if (!a1)
      throw std::invalid_argument(
          "make_terrain: heightmap: no legged robot (the A1's legs) in the scene to take the bump height from; set "
          "TerrainParameters::bump_height");
    bump = 0.2 * leg_length(model, a1->legs.front());
  }
  const int n = static_cast<int>(std::lround(2.0 * p.extent / p.cell));
  if (n < 2 || n > 200)
    throw std::invalid_argument("make_terrain: heightmap: 2 extent / cell must give 2 to 200 cells per side, got " +
                                short_number(2.0 * p.extent / p.cell) + " (extent " + short_number(p.extent) +
                                ", cell " + short_number(p.cell) + ")");

  // Start position (the first floating robot's base) and the start area's radius.
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0);
  Eigen::Vector2d centre = Eigen::Vector2d::Zero();
  if (const int base = floating_base_body(scene); base > 0) centre = ws.X_WB[base].p.head<2>();
  double start_radius = 0.0;
  for (const geometry::Geometry& g : scene.geometries)
    if (g.body != 0) start_radius = std::max(start_radius, ((ws.X_WB[g.body] * g.X_BG).p.head<2>() - centre).norm());
  start_radius += 0.1;
  constexpr double kRamp = 0.25;  // [m] of the window's rise

  auto grid = std::make_shared<HeightGrid>();
  grid->n = n;
  grid->cell = p.cell;
  const double half = 0.5 * n * p.cell;
  grid->x0 = centre.x() - half;
  grid->y0 = centre.y() - half;
  if (start_radius + kRamp >= half - kRamp)
    throw std::invalid_argument("make_terrain: heightmap: extent " + short_number(p.extent) +
                                " m leaves no room for bumps around the robot's start area (radius " +
                                short_number(start_radius) + " m)");

  Uniform uniform(p.seed);
  struct Bump {
    double x, y, sigma, amplitude;
  };
  const int num_bumps = std::max(4, static_cast<int>(std::lround(4.0 * half * half / 0.25)));  // one per (0.5 m)²
  std::vector<Bump> bumps(static_cast<size_t>(num_bumps));
  for (Bump& b : bumps) {
    b.x = uniform(grid->x0, grid->x0 + 2 * half);
    b.y = uniform(grid->y0, grid->y0 + 2 * half);
    b.sigma = uniform(1.5 * p.cell, 3.0 * p.cell);
    b.amplitude = uniform(0.3, 1.0);
  }
  grid->h.assign(static_cast<size_t>((n + 1) * (n + 1)), 0.0);
  double highest = 0.0;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const double x = grid->x0 + i * p.cell, y = grid->y0 + j * p.cell;
      const double r = std::hypot(x - centre.x(), y - centre.y());
      const double edge = std::min({x - grid->x0, grid->x0 + 2 * half - x, y - grid->y0, grid->y0 + 2 * half - y});
      const double window = smoothstep((r - start_radius) / kRamp) * smoothstep(edge / kRamp);
      double sum = 0.0;
      for (const Bump& b : bumps) {
        const double d2 = (x - b.x) * (x - b.x) + (y - b.y) * (y - b.y);
        sum += b.amplitude * std::exp(-d2 / (2.0 * b.sigma * b.sigma));
      }
      const double h = window * sum;
      grid->h[static_cast<size_t>(i + (n + 1) * j)] = h;
      highest = std::max(highest, h);
    }
  if (!(highest > 0.0)) throw std::invalid_argument("make_terrain: heightmap: no bump reached the map (seed " + std::to_string(p.seed) + ")");
  for (double& h : grid->h) {
    h *= bump / highest;
    if (h < 1e-6 * bump) h = 0.0;  // flat: left to the half-space (no sliver prisms)
  }

  // The prisms, one fixed body per triangle with a vertex above 0.
  constexpr double kBottom = -0.05;  // [m]
  std::string yaml = ground_body_yaml();
  yaml.reserve(static_cast<size_t>(2 * n * n) * 700);
  int prisms = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      for (int half_cell = 0; half_cell < 2; ++half_cell) {
        const double mu = uniform(p.mu_min, p.mu_max);  // drawn for every triangle, flat ones too
        // Corners counterclockwise seen from above.
        const std::array<std::array<int, 2>, 3> corners =
            half_cell == 0 ? std::array<std::array<int, 2>, 3>{{{i, j}, {i + 1, j}, {i + 1, j + 1}}}
                           : std::array<std::array<int, 2>, 3>{{{i, j}, {i + 1, j + 1}, {i, j + 1}}};
        double top = 0.0;
        for (const auto& c : corners) top = std::max(top, grid->at(c[0], c[1]));
        if (top <= 0.0) continue;
        double px = 0.0, py = 0.0;
        for (const auto& c : corners) {
          px += (grid->x0 + c[0] * p.cell) / 3.0;
          py += (grid->y0 + c[1] * p.cell) / 3.0;
        }
        std::string v;
        for (int level = 0; level < 2; ++level)
          for (const auto& c : corners) {
            const double x = grid->x0 + c[0] * p.cell - px, y = grid->y0 + c[1] * p.cell - py;
            const double z = level == 0 ? grid->at(c[0], c[1]) : kBottom;
            v += (v.empty() ? "[" : ", [") + number(x) + ", " + number(y) + ", " + number(z) + "]";
          }
        yaml += "- {name: terrain_" + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(half_cell) +
                ", fixed: true, position: [" + number(px) + ", " + number(py) + ", 0], contact: {mu: " + number(mu) +
                "}, color: " + mu_colour(mu, p.mu_min, p.mu_max) +
                ", shapes: [{type: convex_mesh, vertices: [" + v +
                "], triangles: [[0, 1, 2], [3, 5, 4], [0, 3, 4], [0, 4, 1], [1, 4, 5], [1, 5, 2], [2, 5, 3], [2, 3, 0]]}]}\n";
        ++prisms;
      }
  t.bodies_yaml = std::move(yaml);
  t.mu = 0.5 * (p.mu_min + p.mu_max);
  t.stiffness = p.rigid_stiffness;
  t.dissipation_time = 0.0;
  t.sap_beta = p.rigid_beta;
  t.height = [grid](double x, double y) { return (*grid)(x, y); };
  std::ostringstream d;
  d << "rigid height map: " << n << " x " << n << " cells of " << p.cell << " m (" << prisms
    << " prisms), bumps up to " << bump << " m, mu ~ U(" << p.mu_min << ", " << p.mu_max << ") per triangle, seed "
    << p.seed << "; k " << p.rigid_stiffness << " N/m, beta " << p.rigid_beta;
  t.description = d.str();
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Terrains

const char* to_string(TerrainKind kind) {
  switch (kind) {
    case TerrainKind::kScene: return "scene";
    case TerrainKind::kRigidLow: return "rigid-low";
    case TerrainKind::kRigidHigh: return "rigid-high";
    case TerrainKind::kCompliantLow: return "compliant-low";
    case TerrainKind::kCompliantHigh: return "compliant-high";
    case TerrainKind::kHeightMap: return "heightmap";
  }
  return "?";
}

TerrainKind parse_terrain_kind(const std::string& name) {
  for (TerrainKind kind : {TerrainKind::kScene, TerrainKind::kRigidLow, TerrainKind::kRigidHigh,
                           TerrainKind::kCompliantLow, TerrainKind::kCompliantHigh, TerrainKind::kHeightMap})
    if (name == to_string(kind)) return kind;
  throw std::invalid_argument("unknown terrain '" + name +
                              "' (scene, rigid-low, rigid-high, compliant-low, compliant-high, heightmap)");
}

const std::vector<TerrainKind>& planar_terrains() {
  static const std::vector<TerrainKind> kinds{TerrainKind::kRigidLow, TerrainKind::kRigidHigh,
                                              TerrainKind::kCompliantLow, TerrainKind::kCompliantHigh};
  return kinds;
}

Terrain make_terrain(TerrainKind kind, const scene::Scene& scene, const TerrainParameters& p) {
  require(std::isfinite(p.low_mu) && p.low_mu >= 0.0, "low_mu", p.low_mu, "a finite number >= 0");
  require(std::isfinite(p.high_mu) && p.high_mu >= 0.0, "high_mu", p.high_mu, "a finite number >= 0");
  require(std::isfinite(p.sink) && p.sink > 0.0, "sink", p.sink, "a finite number > 0 m");
  require(p.feet_in_stance >= 1, "feet_in_stance", p.feet_in_stance, ">= 1");
  require(std::isfinite(p.compliant_dissipation_time) && p.compliant_dissipation_time >= 0.0,
          "compliant_dissipation_time", p.compliant_dissipation_time, "a finite number >= 0 s");
  require(std::isfinite(p.rigid_stiffness) && p.rigid_stiffness > 0.0, "rigid_stiffness", p.rigid_stiffness,
          "a finite number > 0 N/m");
  require(std::isfinite(p.rigid_beta) && p.rigid_beta > 0.0, "rigid_beta", p.rigid_beta, "a finite number > 0");
  require(std::isfinite(p.cell) && p.cell > 0.0, "cell", p.cell, "a finite number > 0 m");
  require(std::isfinite(p.extent) && p.extent > 0.0, "extent", p.extent, "a finite number > 0 m");
  require(std::isfinite(p.bump_height), "bump_height", p.bump_height, "finite (<= 0: 1/5 of the leg length)");
  require(std::isfinite(p.mu_min) && p.mu_min >= 0.0, "mu_min", p.mu_min, "a finite number >= 0");
  require(std::isfinite(p.mu_max) && p.mu_max >= p.mu_min, "mu_max", p.mu_max, "finite and >= mu_min");

  Terrain t;
  t.kind = kind;
  const auto& c = scene.contact;
  switch (kind) {
    case TerrainKind::kScene:
      t.mu = c.mu;
      t.stiffness = c.stiffness;
      t.dissipation_time = c.dissipation_time;
      t.sap_beta = 1.0;
      t.description = "the scene's own ground and contact settings";
      return t;  // height stays empty: the planner's default (flat at the initial foot height)
    case TerrainKind::kRigidLow:
    case TerrainKind::kRigidHigh: {
      t.mu = kind == TerrainKind::kRigidLow ? p.low_mu : p.high_mu;
      t.stiffness = p.rigid_stiffness;
      t.dissipation_time = 0.0;
      t.sap_beta = p.rigid_beta;
      t.bodies_yaml = ground_body_yaml();
      t.height = [](double, double) { return 0.0; };
      std::ostringstream d;
      d << "rigid half-space z = 0, mu " << t.mu << ", k " << t.stiffness << " N/m, tau_d 0, beta " << t.sap_beta;
      t.description = d.str();
      return t;
    }
    case TerrainKind::kCompliantLow:
    case TerrainKind::kCompliantHigh: {
      const double m = moving_mass(scene.model), g = scene.model.gravity().norm();
      if (!(m > 0.0 && g > 0.0))
        throw std::invalid_argument("make_terrain: compliant terrain: the scene has no moving mass or no gravity");
      t.mu = kind == TerrainKind::kCompliantLow ? p.low_mu : p.high_mu;
      t.stiffness = m * g / (p.feet_in_stance * p.sink);
      t.dissipation_time = p.compliant_dissipation_time;
      t.sap_beta = 1.0;
      t.bodies_yaml = ground_body_yaml();
      t.height = [](double, double) { return 0.0; };
      std::ostringstream d;
      d << "compliant half-space z = 0, mu " << t.mu << ", k = m g / (" << p.feet_in_stance << " x " << p.sink
        << " m) = " << t.stiffness << " N/m (m = " << m << " kg), tau_d " << t.dissipation_time << " s";
      t.description = d.str();
      return t;
    }
    case TerrainKind::kHeightMap:
      return make_height_map(scene, p, std::move(t));
  }
  throw std::invalid_argument("make_terrain: unknown terrain kind");
}

std::string apply_terrain(const std::string& scene_yaml, const Terrain& terrain) {
  if (terrain.kind == TerrainKind::kScene) return scene_yaml;
  YAML::Node root;
  try {
    root = YAML::Load(scene_yaml);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(std::string("apply_terrain: the scene is not valid YAML: ") + e.what());
  }
  if (!root.IsMap()) throw std::invalid_argument("apply_terrain: the scene is not a YAML mapping");
  root["contact_approximation"] = "sap";
  if (!root["contact"] || !root["contact"].IsMap()) root["contact"] = YAML::Node(YAML::NodeType::Map);
  root["contact"]["mu"] = terrain.mu;
  root["contact"]["stiffness"] = terrain.stiffness;
  root["contact"]["dissipation_time"] = terrain.dissipation_time;

  YAML::Node bodies(YAML::NodeType::Sequence);
  if (const YAML::Node old = root["bodies"]; old && !old.IsNull()) {
    if (!old.IsSequence()) throw std::invalid_argument("apply_terrain: the scene's `bodies` is not a list");
    for (const YAML::Node& b : old) {
      if (b.IsMap() && b["name"] && b["name"].IsScalar() && b["name"].Scalar() == "ground") continue;
      bodies.push_back(b);
    }
  }
  if (!terrain.bodies_yaml.empty()) {
    const YAML::Node added = YAML::Load(terrain.bodies_yaml);
    if (!added.IsSequence()) throw std::invalid_argument("apply_terrain: the terrain's bodies are not a YAML list");
    for (YAML::Node b : added) {
      b.SetStyle(YAML::EmitterStyle::Flow);
      bodies.push_back(b);
    }
  }
  root["bodies"] = bodies;
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << root;
  if (!out.good()) throw std::runtime_error("apply_terrain: YAML emitter: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

// ---------------------------------------------------------------------------------------------
// Metrics

std::string to_json(const ControlMetrics& m) {
  auto num = [](double x) -> nlohmann::ordered_json {
    if (!std::isfinite(x)) return nullptr;
    return x;
  };
  nlohmann::ordered_json j;
  j["controller"] = m.controller;
  j["terrain"] = m.terrain;
  j["duration"] = num(m.duration);
  j["steps"] = m.steps;
  j["joint_position_error"] = num(m.joint_position_error);
  j["joint_velocity_error"] = num(m.joint_velocity_error);
  j["torque_rate"] = num(m.torque_rate);
  j["torque_step"] = num(m.torque_step);
  j["torque"] = num(m.torque);
  j["max_torque_rate"] = num(m.max_torque_rate);
  j["normal_force_error"] = num(m.normal_force_error);
  j["normal_force_error_relative"] = num(m.normal_force_error_relative);
  j["mean_normal_force"] = num(m.mean_normal_force);
  j["fell"] = m.fell;
  j["fall_time"] = num(m.fall_time);
  j["fall_reason"] = m.fall_reason;
  j["distance"] = num(m.distance);
  j["net_displacement"] = num(m.net_displacement);
  j["mean_forward_speed"] = num(m.mean_forward_speed);
  j["controller_time_mean"] = num(m.controller_time_mean);
  j["controller_time_max"] = num(m.controller_time_max);
  j["id_not_solved"] = m.id_not_solved;
  j["simulator_failures"] = m.simulator_failures;
  j["waypoints_reached"] = m.waypoints_reached;
  j["box_dropped"] = m.box_dropped;
  j["box_drop_time"] = num(m.box_drop_time);
  j["box_hold_ratio"] = num(m.box_hold_ratio);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------------
// Runs

ControlGains default_gains(const std::string& reference_kind) {
  ControlGains g;
  if (reference_kind == "trot") {
    // The A1: the PID torque feedback is shared by every controller (the ID controllers add it
    // to their torques, id_torque_feedback; without it every predictive controller fell within
    // 2 s of trotting). The QP models measure maximal dissipation in the desired base frame
    // (qp_desired_base_frame): in the world frame, with the joints' velocities prescribed, it
    // lets the stance feet slide back rather than push the base forward (digest §6.2 [derived]:
    // S ⁺v = S Δ q̇_des), and QP,μ walked at 0.05 m/s of the commanded 0.3 (docs/experiments.md).
    // kp 80, kd 2: the A1 scenes' own PD (a1_stand.yaml). The torque feedback is outside the
    // ID's prediction, so stiffer gains cost prediction accuracy: QP,μ's normal-force error on
    // rigid μ = 100 ground was 72 % at kp 200, kd 4 and 40 % at 80, 2 (docs/experiments.md).
    g.kp = 80.0;
    g.kd = 2.0;
    g.id_torque_feedback = true;
    g.qp_desired_base_frame = true;
    return g;
  }
  if (reference_kind == "arm") {
    // The Panda holding a heavy box: stiffer joint PD (its joints carry the arm's and the box's
    // weight; PID alone has no model to cancel them), no floating base to balance.
    g.kp = 300.0;
    g.kd = 20.0;
    g.ki = 0.0;
    g.kp_accel = 400.0;
    g.kd_accel = 40.0;
    g.ki_accel = 0.0;
    g.balance = false;
    return g;
  }
  throw std::invalid_argument("default_gains: unknown reference kind '" + reference_kind + "' (trot, arm)");
}

simulation::SimulatorParameters control_simulator_parameters(const scene::Scene& scene, const Terrain& terrain) {
  simulation::SimulatorParameters p;
  p.time_step = scene.time_step;
  p.integrator = simulation::Integrator::kImplicitEuler;
  p.solver = simulation::Solver::kSap;
  p.regularization.beta = terrain.sap_beta;
  p.sap.rel_tolerance = 1e-8;
  return p;
}

namespace {

bool has_panda_joint(const multibody::Model& model) {
  for (const std::string& name : model.dof_names())
    if (name.find("panda") != std::string::npos) return true;
  return false;
}

bool has_free_body(const multibody::Model& model, const std::string& name) {
  for (int b = 1; b < model.num_bodies(); ++b)
    if (model.body(b).name == name) return model.body(b).joint.type == multibody::JointType::kFloating;
  return false;
}

}  // namespace

std::shared_ptr<ReferenceGenerator> make_reference(const simulation::Simulator& sim, const ControlRunOptions& options,
                                                   const Terrain& terrain, std::string* kind) {
  const scene::Scene& scene = sim.scene();
  if (const std::optional<LeggedRobot> a1 = find_a1(scene)) {
    TrotPlannerParameters trot = options.trot;
    if (terrain.height) trot.terrain_height = terrain.height;
    if (kind) *kind = "trot";
    return std::make_shared<TrotPlanner>(sim.model(), a1->legs, scene.q0, std::move(trot));
  }
  if (has_panda_joint(sim.model()) && has_free_body(sim.model(), options.arm.box_body)) {
    if (kind) *kind = "arm";
    return std::make_shared<ArmReference>(sim, options.arm);
  }
  throw std::invalid_argument(
      "make_reference: " + scene.source +
      ": no supported robot; supported: the Unitree A1 (a floating robot with FL_/FR_/RL_/RR_ hip, thigh and calf "
      "joints and *_foot frames, ../shared/models/a1.urdf) → trot planner; the Franka Panda (joints named panda_*) "
      "with a free body named '" +
      options.arm.box_body + "' → arm holding the box");
}

namespace {

// World position of a model frame at the workspace's poses.
math::Vector3 frame_position(const multibody::Model& model, const multibody::Workspace& ws, int frame) {
  const multibody::Frame& f = model.frame(frame);
  return ws.X_WB[f.body].act(f.X_BF.p);
}

}  // namespace

// What run_control measures, step by step (each step k takes the state at t_k to t_{k+1}):
//  - joint errors: |θ − θ_des| and |θ̇ − θ̇_des| at the state at t_k against the reference the
//    controller computed for it (controller.reference() after the step's update), averaged over
//    the reference's actuated coordinates, then over steps;
//  - torques: StepResults::actuator_forces (every scene actuator, the torque the simulator
//    applied): E|τ| over steps and actuators; Δτ between consecutive steps (from the second step),
//    torque_step = E|Δτ|, torque_rate = E|Δτ|/δt, max_torque_rate = max |Δτ|/δt;
//  - normal forces: the simulator's Σ γ_n over every contact of the step, ÷ δt; on steps where it
//    is > 0: mean_normal_force, and for the predictive controllers (and a finite prediction)
//    |Σ f̂_N − Σ f_N| with f̂_N = info().predicted_normal_impulse / δt, absolute (mean) and
//    relative (mean error ÷ mean Σ f_N over the same steps: a mean of per-step ratios is dominated
//    by the steps where a foot just touches and Σ f_N is tiny);
//  - trot runs (the floating base of the robot): fall = base height above the terrain under it
//    (Terrain::height; the ground under the start for the scene's own terrain) below
//    fall_height (≤ 0: 40 % of the initial one), or tilt (angle between the base's z axis and
//    the world's) above fall_tilt, checked after every step; the base's horizontal path length,
//    net displacement and velocity along its heading (the base x axis projected on the ground);
//    waypoints reached = changes of TrotPlanner::current_waypoint();
//  - arm runs: the box is dropped when its origin is more than 5 cm farther from the fingertips'
//    midpoint than at the start (box_drop_time: the first such step's end; the run goes on);
//    box_hold_ratio: over the steps starting before ArmReference's hold_time, the mean of
//    Σ (vertical impulse on the box from contacts with robot bodies) ÷ (m_box g δt) — 1 when the
//    fingers carry the box's weight;
//  - ControlSeries: one entry per step, at t_k (errors, that step's torque rate and normals; the
//    base position at t_k, for arm runs the box's).
ControlRun run_control(scene::Scene scene, const Terrain& terrain, const ControlRunOptions& options) {
  const simulation::SimulatorParameters params = control_simulator_parameters(scene, terrain);
  const double duration = options.duration > 0.0 ? options.duration : scene.duration;
  simulation::Simulator sim(std::move(scene), params);
  const multibody::Model& model = sim.model();
  const double dt = params.time_step;

  ControlRun run;
  std::shared_ptr<ReferenceGenerator> reference = make_reference(sim, options, terrain, &run.reference_kind);
  const ControlGains gains = options.gains_set ? options.gains : default_gains(run.reference_kind);
  inverse_dynamics::IdParameters id = options.id;
  id.formulation = id_formulation(options.controller, id.formulation);
  auto controller = std::make_shared<TrackingController>(sim, reference, options.controller, gains, id);
  sim.set_controller(controller, 1);

  const bool trot = run.reference_kind == "trot";
  const bool arm = run.reference_kind == "arm";
  const bool predictive = is_predictive(options.controller);
  const bool uses_id = options.controller != ControllerKind::kPid;
  const TrotPlanner* planner = dynamic_cast<const TrotPlanner*>(reference.get());
  const ArmReference* arm_reference = dynamic_cast<const ArmReference*>(reference.get());

  // Actuated coordinates: velocity index → configuration index.
  std::vector<int> q_of_v(static_cast<size_t>(model.nv()), -1);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& joint = model.body(b).joint;
    if (joint.nv == 1) q_of_v[static_cast<size_t>(joint.v_index)] = joint.q_index;
  }
  const std::vector<int> actuated = reference->actuated();
  for (int v : actuated)
    if (v < 0 || v >= model.nv() || q_of_v[static_cast<size_t>(v)] < 0)
      throw std::invalid_argument("run_control: the reference's actuated coordinate " + std::to_string(v) +
                                  " is not a 1-dof joint");

  // Base (trot) or box (arm) tracking.
  int base_body = 0, base_q = 0, base_v = 0;
  if (trot) {
    base_body = floating_base_body(sim.scene());
    base_q = model.body(base_body).joint.q_index;
    base_v = model.body(base_body).joint.v_index;
  }
  multibody::Workspace ws(model);
  auto terrain_under = [&](double x, double y, double fallback) { return terrain.height ? terrain.height(x, y) : fallback; };
  double start_ground = 0.0, fall_height = options.fall_height;
  Eigen::Vector2d start_xy = Eigen::Vector2d::Zero(), last_xy = Eigen::Vector2d::Zero();
  if (trot) {
    const Eigen::VectorXd& q = sim.q();
    start_xy = Eigen::Vector2d(q[base_q], q[base_q + 1]);
    last_xy = start_xy;
    start_ground = terrain.height ? terrain.height(start_xy.x(), start_xy.y())
                                  : scene::ground_height(sim.scene(), start_xy.x(), start_xy.y()).value_or(0.0);
    if (!(fall_height > 0.0)) fall_height = 0.4 * (q[base_q + 2] - start_ground);
  }
  double box_start_distance = 0.0, box_mass = 0.0;
  int box_body = 0;
  auto box_distance = [&](const Eigen::VectorXd& q) {
    multibody::forward_kinematics(model, ws, q);
    math::Vector3 mid = math::Vector3::Zero();
    for (int f : arm_reference->feet()) mid += frame_position(model, ws, f);
    if (!arm_reference->feet().empty()) mid /= static_cast<double>(arm_reference->feet().size());
    return (ws.X_WB[box_body].p - mid).norm();
  };
  if (arm && arm_reference) {
    box_body = arm_reference->box_body();
    box_mass = arm_reference->box_mass();
    box_start_distance = box_distance(sim.q());
  }
  const double gravity = model.gravity().norm();

  ControlMetrics& m = run.metrics;
  m.controller = to_string(options.controller);
  m.terrain = to_string(terrain.kind);
  m.fall_time = kNaN;
  m.box_drop_time = kNaN;
  ControlSeries& s = run.series;

  const double steps_needed = std::ceil(duration / dt - 1e-9);
  if (!(steps_needed >= 0.0 && steps_needed < 1e10))
    throw std::invalid_argument("run_control: duration " + short_number(duration) + " s at δt " + short_number(dt) +
                                " s is not a usable number of steps");
  const long long num_steps = static_cast<long long>(steps_needed);
  if (options.record_series) {
    const size_t n = static_cast<size_t>(std::min<long long>(num_steps, 10'000'000));
    for (auto* v : {&s.t, &s.joint_position_error, &s.joint_velocity_error, &s.torque_rate, &s.predicted_normal,
                    &s.simulated_normal, &s.base_x, &s.base_y, &s.base_z})
      v->reserve(n);
  }

  Eigen::VectorXd q_prev, v_prev, tau_prev;
  double pos_sum = 0.0, vel_sum = 0.0, torque_sum = 0.0, dtau_sum = 0.0, speed_sum = 0.0;
  double nf_err_sum = 0.0, nf_rel_sum = 0.0, nf_sum = 0.0, ctrl_time_sum = 0.0, hold_sum = 0.0;
  long long dtau_steps = 0, nf_steps = 0, nf_pred_steps = 0, hold_steps = 0;
  int last_waypoint = planner ? planner->current_waypoint() : 0;
  bool first_update = true;

  for (long long k = 0; k < num_steps; ++k) {
    q_prev = sim.q();
    v_prev = sim.v();
    const double t0 = sim.time();
    const simulation::StepStats& stats = sim.step();
    const simulation::StepResults& results = sim.last_results();
    const ControllerStepInfo& info = controller->info();
    const JointReference& ref = controller->reference();
    ++m.steps;
    m.duration = sim.time();

    // Joint tracking at t_k.
    double pos = 0.0, vel = 0.0;
    const int na = static_cast<int>(actuated.size());
    if (ref.q.size() == na && ref.v.size() == na) {
      for (int i = 0; i < na; ++i) {
        const int vi = actuated[static_cast<size_t>(i)];
        pos += std::abs(q_prev[q_of_v[static_cast<size_t>(vi)]] - ref.q[i]);
        vel += std::abs(v_prev[vi] - ref.v[i]);
      }
      if (na > 0) {
        pos /= na;
        vel /= na;
      }
    } else {
      pos = vel = kNaN;
    }
    pos_sum += pos;
    vel_sum += vel;

    // Torques.
    const Eigen::VectorXd& tau = results.actuator_forces;
    const int nt = static_cast<int>(tau.size());
    double rate = kNaN;
    if (nt > 0) {
      torque_sum += tau.cwiseAbs().sum() / nt;
      if (tau_prev.size() == nt) {
        const double step_change = (tau - tau_prev).cwiseAbs().sum() / nt;
        dtau_sum += step_change;
        rate = step_change / dt;
        m.max_torque_rate = std::max(m.max_torque_rate, (tau - tau_prev).cwiseAbs().maxCoeff() / dt);
        ++dtau_steps;
      }
      tau_prev = tau;
    }

    // Normal forces.
    double normal_impulse = 0.0;
    for (const simulation::ContactResult& c : results.contacts) normal_impulse += c.impulse_normal;
    const double predicted = predictive ? info.predicted_normal_impulse : kNaN;
    if (normal_impulse > 0.0) {
      nf_sum += normal_impulse / dt;
      ++nf_steps;
      if (predictive && std::isfinite(predicted)) {
        const double error = std::abs(predicted - normal_impulse);
        nf_err_sum += error / dt;
        nf_rel_sum += normal_impulse / dt;  // the simulator's force over the same steps
        ++nf_pred_steps;
      }
    }

    // Controller figures.
    ctrl_time_sum += info.wall_time;
    m.controller_time_max = std::max(m.controller_time_max, info.wall_time);
    if (uses_id && info.id_status != inverse_dynamics::IdStatus::kSolved) ++m.id_not_solved;
    if (stats.status != solvers::sap::SapSolverStatus::kSuccess) ++m.simulator_failures;
    if (planner) {
      if (!first_update && planner->current_waypoint() != last_waypoint) ++m.waypoints_reached;
      last_waypoint = planner->current_waypoint();
    }
    first_update = false;

    // Series at t_k.
    if (options.record_series) {
      s.t.push_back(t0);
      s.joint_position_error.push_back(pos);
      s.joint_velocity_error.push_back(vel);
      s.torque_rate.push_back(rate);
      s.predicted_normal.push_back(std::isfinite(predicted) ? predicted / dt : kNaN);
      s.simulated_normal.push_back(normal_impulse / dt);
      if (trot) {
        s.base_x.push_back(q_prev[base_q]);
        s.base_y.push_back(q_prev[base_q + 1]);
        s.base_z.push_back(q_prev[base_q + 2]);
      } else if (arm && box_body > 0) {
        const int bq = model.body(box_body).joint.q_index;
        s.base_x.push_back(q_prev[bq]);
        s.base_y.push_back(q_prev[bq + 1]);
        s.base_z.push_back(q_prev[bq + 2]);
      } else {
        s.base_x.push_back(kNaN);
        s.base_y.push_back(kNaN);
        s.base_z.push_back(kNaN);
      }
    }

    // Arm: the box.
    if (arm && arm_reference) {
      if (t0 < options.arm.hold_time && box_mass > 0.0 && gravity > 0.0) {
        double up = 0.0;
        for (const simulation::ContactResult& c : results.contacts) {
          if (c.body_b == box_body && c.body_a != 0) up += c.impulse_W.z();
          if (c.body_a == box_body && c.body_b != 0) up -= c.impulse_W.z();
        }
        hold_sum += up / (box_mass * gravity * dt);
        ++hold_steps;
      }
      if (!m.box_dropped && box_distance(sim.q()) > box_start_distance + 0.05) {
        m.box_dropped = true;
        m.box_drop_time = sim.time();
      }
    }

    // Trot: the base.
    bool fell = false;
    if (trot) {
      const Eigen::VectorXd& q = sim.q();
      const Eigen::VectorXd& v = sim.v();
      const Eigen::Vector2d xy(q[base_q], q[base_q + 1]);
      m.distance += (xy - last_xy).norm();
      last_xy = xy;
      const Eigen::Matrix3d R =
          Eigen::Quaterniond(q[base_q + 3], q[base_q + 4], q[base_q + 5], q[base_q + 6]).normalized().toRotationMatrix();
      Eigen::Vector2d heading(R(0, 0), R(1, 0));
      if (heading.norm() > 1e-9) heading.normalize();
      speed_sum += heading.dot(Eigen::Vector2d(v[base_v + 3], v[base_v + 4]));
      const double height = q[base_q + 2] - terrain_under(xy.x(), xy.y(), start_ground);
      const double tilt = std::acos(std::clamp(R(2, 2), -1.0, 1.0)) * 180.0 / kPi;
      char reason[96] = "";
      if (height < fall_height)
        std::snprintf(reason, sizeof reason, "base height %.3f m < %.3f m", height, fall_height);
      else if (tilt > options.fall_tilt)
        std::snprintf(reason, sizeof reason, "tilt %.1f° > %.3g°", tilt, options.fall_tilt);
      if (reason[0] != '\0' && !m.fell) {
        m.fell = fell = true;
        m.fall_time = sim.time();
        m.fall_reason = reason;
      }
    }

    if (options.on_step) options.on_step(sim, *controller);
    if (fell && options.stop_on_fall) break;
  }

  const double steps = static_cast<double>(std::max<long long>(1, m.steps));
  m.joint_position_error = pos_sum / steps;
  m.joint_velocity_error = vel_sum / steps;
  m.torque = torque_sum / steps;
  m.torque_step = dtau_steps > 0 ? dtau_sum / static_cast<double>(dtau_steps) : 0.0;
  m.torque_rate = m.torque_step / dt;
  m.mean_normal_force = nf_steps > 0 ? nf_sum / static_cast<double>(nf_steps) : 0.0;
  if (predictive && nf_pred_steps > 0) {
    m.normal_force_error = nf_err_sum / static_cast<double>(nf_pred_steps);
    m.normal_force_error_relative = nf_rel_sum > 0.0 ? nf_err_sum / nf_rel_sum : kNaN;
  } else {
    m.normal_force_error = m.normal_force_error_relative = kNaN;
  }
  m.controller_time_mean = ctrl_time_sum / steps;
  if (trot) {
    m.net_displacement = (last_xy - start_xy).norm();
    m.mean_forward_speed = speed_sum / steps;
  }
  if (arm) m.box_hold_ratio = hold_steps > 0 ? hold_sum / static_cast<double>(hold_steps) : kNaN;
  return run;
}

}  // namespace coulomb::control
