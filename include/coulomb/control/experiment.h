// Running a controller on a scene and measuring it: the terrains of Zapolsky & Drumwright §7.5,
// the metrics of their Tables 3–5 and Figs. 14–18 (digest ../shared/digests/inverse-dynamics.md
// §8.4–8.5), and the loop behind `coulomb control` and `coulomb experiment id-tables`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/control/arm_reference.h"
#include "coulomb/control/controllers.h"
#include "coulomb/control/trot_planner.h"
#include "coulomb/scene/scene.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::control {

// ---------------------------------------------------------------------------------------------
// Terrains (§7.5)

enum class TerrainKind {
  kScene,          ///< "scene": the scene's own ground and contact settings, unchanged
  kRigidLow,       ///< "rigid-low":  rigid half-space, μ = low_mu (0.1)
  kRigidHigh,      ///< "rigid-high": rigid half-space, μ = high_mu (100, the paper's "∞")
  kCompliantLow,   ///< "compliant-low":  half-space with stiffness k = m g / (4 sink), μ = low_mu
  kCompliantHigh,  ///< "compliant-high": the same with μ = high_mu
  kHeightMap,      ///< "heightmap": rigid piecewise-linear height map, per-cell μ ~ U(mu_min, mu_max)
};
const char* to_string(TerrainKind kind);
/// Parses the names above; throws std::invalid_argument listing them.
TerrainKind parse_terrain_kind(const std::string& name);
/// The four planar terrains of Tables 3 and 5 (rigid low, rigid high, compliant low, compliant high).
const std::vector<TerrainKind>& planar_terrains();

struct TerrainParameters {
  double low_mu = 0.1;
  double high_mu = 100.0;
  /// Compliant terrains: static sink of each of the robot's feet under its weight shared by
  /// `feet_in_stance` feet [m] → k = m g / (feet_in_stance · sink); dissipation time τ_d.
  double sink = 1e-3;
  int feet_in_stance = 4;
  double compliant_dissipation_time = 0.01;  ///< [s]
  /// Rigid terrains: SAP with k = rigid_stiffness, τ_d = 0 and near-rigid β = rigid_beta (the
  /// model the ID's rigid contact is the limit of: docs/inverse-dynamics-forward-check.md).
  double rigid_stiffness = 1e10;  ///< [N/m]
  double rigid_beta = 0.01;
  /// Height map: square cells of `cell` [m] over [−extent, extent]² around the robot's start,
  /// each split into two triangles (convex prisms down to the base level); heights from a sum of
  /// smooth random bumps with the highest point `bump_height` above the lowest (≤ 0: 1/5 of the
  /// robot's leg length); per-cell μ ~ U(mu_min, mu_max); `seed` makes it reproducible.
  double cell = 0.1, extent = 1.5, bump_height = 0.0;
  double mu_min = 0.1, mu_max = 1.5;
  unsigned seed = 1;
};

/// A terrain made concrete for one scene.
struct Terrain {
  TerrainKind kind = TerrainKind::kScene;
  /// YAML for the scene's `bodies:` list (fixed bodies) replacing any body named "ground";
  /// empty for kScene.
  std::string bodies_yaml;
  double mu = 1.0;                ///< scene default μ (height map: per cell, this is the mean)
  double stiffness = 0.0;         ///< contact stiffness [N/m]
  double dissipation_time = 0.0;  ///< [s]
  double sap_beta = 1.0;          ///< SimulatorParameters::regularization.beta
  /// Height of the terrain at (x, y) [m] (world): for the planner's touchdown heights.
  std::function<double(double, double)> height;
  std::string description;        ///< one line for reports
};

/// Makes `kind` concrete for the robot of `scene` (its total mass, its leg length for the
/// height map's bumps: hip to foot of the first leg at full extension). Throws
/// std::invalid_argument on parameters out of range (naming field and value).
Terrain make_terrain(TerrainKind kind, const scene::Scene& scene, const TerrainParameters& parameters = {});

/// The scene's YAML text with the terrain applied (contact defaults and approximation "sap",
/// the ground body replaced, the terrain's bodies added), loadable by io::parse_scene with the
/// same source_name (relative paths resolve as before). Throws std::invalid_argument naming the
/// scene if it is not a YAML mapping.
std::string apply_terrain(const std::string& scene_yaml, const Terrain& terrain);

// ---------------------------------------------------------------------------------------------
// Metrics (Tables 3–5)

struct ControlMetrics {
  std::string controller, terrain;
  double duration = 0.0;             ///< simulated time [s] (up to the fall when stop_on_fall)
  long long steps = 0;
  double joint_position_error = 0.0;  ///< E[E|θ − θ_des|] over steps and actuated joints [rad]
  double joint_velocity_error = 0.0;  ///< E[E|θ̇ − θ̇_des|] [rad/s]
  double torque_rate = 0.0;           ///< E|Δτ|/δt over steps and joints [N·m/s] (applied torques)
  double torque_step = 0.0;           ///< E|Δτ| per step [N·m]
  double torque = 0.0;                ///< E|τ| [N·m]
  double max_torque_rate = 0.0;       ///< max |Δτ|/δt [N·m/s]
  /// Normal-force prediction (predictive ID only, steps where the simulator's Σ f_N > 0):
  /// E|Σ f̂_N − Σ f_N| [N] and E|Σ f̂_N − Σ f_N| / E[Σ f_N]; NaN for other controllers.
  double normal_force_error = 0.0, normal_force_error_relative = 0.0;
  double mean_normal_force = 0.0;     ///< E[Σ f_N] of the simulator over those steps [N]
  bool fell = false;
  double fall_time = 0.0;             ///< [s] (NaN when not fallen)
  std::string fall_reason;            ///< "base height 0.07 m < 0.12 m" or "tilt 63° > 60°"
  double distance = 0.0;              ///< base path length in the horizontal plane [m]
  double net_displacement = 0.0;      ///< |p_xy(end) − p_xy(start)| [m]
  double mean_forward_speed = 0.0;    ///< mean of the base velocity along its heading [m/s]
  double controller_time_mean = 0.0, controller_time_max = 0.0;  ///< per update [s]
  long long id_not_solved = 0;        ///< ID solves whose status was not kSolved
  long long simulator_failures = 0;   ///< steps whose solver did not report success
  int waypoints_reached = 0;
  // Arm runs (ArmReference): the box.
  bool box_dropped = false;
  double box_drop_time = 0.0;         ///< [s] (NaN when held)
  /// Static hold (the first `static_hold_steps`): mean over steps of Σ vertical impulse on the
  /// box from the fingers ÷ (m_box g δt).
  double box_hold_ratio = 0.0;
};
/// JSON text (one object, keys as the fields, NaN as null, units in the key names' docs).
std::string to_json(const ControlMetrics& metrics);

/// Time series of a run, one entry per step (for plots: Fig. 14 joint error over time, Fig. 17
/// base path, Fig. 15 torque rate, Fig. 18 arm error).
struct ControlSeries {
  std::vector<double> t, joint_position_error, joint_velocity_error, torque_rate, predicted_normal,
      simulated_normal, base_x, base_y, base_z;
};

// ---------------------------------------------------------------------------------------------
// Runs

struct ControlRunOptions {
  ControllerKind controller = ControllerKind::kIdQpCoulomb;
  TerrainKind terrain = TerrainKind::kScene;
  TerrainParameters terrain_parameters;
  double duration = 0.0;      ///< [s]; ≤ 0: the scene's
  ControlGains gains;         ///< defaults chosen per robot by default_gains() when `gains_set` is false
  bool gains_set = false;
  inverse_dynamics::IdParameters id;  ///< formulation set from `controller`
  TrotPlannerParameters trot;         ///< A1 and other quadrupeds
  ArmReferenceParameters arm;         ///< arms holding a box
  double fall_height = 0.0;   ///< base below this height above its start terrain = fall [m]; ≤ 0: 40 % of the initial height
  double fall_tilt = 60.0;    ///< [deg]
  bool stop_on_fall = true;
  bool record_series = true;
  /// Called after every step (for the trajectory/contacts/replay writers and progress).
  std::function<void(const simulation::Simulator&, const TrackingController&)> on_step;
};

/// What the run was and what it measured.
struct ControlRun {
  ControlMetrics metrics;
  ControlSeries series;
  std::string reference_kind;  ///< "trot" or "arm"
};

/// Gains per robot kind ("trot" or "arm").
ControlGains default_gains(const std::string& reference_kind);

/// Picks the reference generator for the scene's robot: a quadruped with the A1's leg names
/// → TrotPlanner; a robot with the Panda's joints and a free box → ArmReference. Throws
/// std::invalid_argument saying which robots are supported otherwise.
std::shared_ptr<ReferenceGenerator> make_reference(const simulation::Simulator& sim, const ControlRunOptions& options,
                                                   const Terrain& terrain, std::string* kind = nullptr);

/// The simulator parameters a control run uses on `terrain` (δt from the scene; near-rigid β on
/// rigid terrains; tight SAP tolerance).
simulation::SimulatorParameters control_simulator_parameters(const scene::Scene& scene, const Terrain& terrain);

/// Runs `controller` on the scene (already carrying the terrain: apply_terrain) for the
/// duration, measuring as it goes. Stops at a fall when options.stop_on_fall. Throws what the
/// simulator or controller throw.
ControlRun run_control(scene::Scene scene, const Terrain& terrain, const ControlRunOptions& options);

}  // namespace coulomb::control
