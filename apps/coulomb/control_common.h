// Pieces shared by `coulomb control` and `coulomb experiment id-tables`: names of controllers and
// terrains as command-line values, the trot course of the experiments, reading a scene with a
// terrain applied, and the per-run files metrics.json and series.csv.
#pragma once

#include <string>
#include <vector>

#include "coulomb/control/experiment.h"
#include "coulomb/io/scene_loader.h"

namespace coulomb::cli {

/// "id-qp-mu, id-qp-inf, …" (control::all_controller_kinds(), the paper's table order).
std::string controller_names();
/// "scene, rigid-low, …, heightmap".
std::string terrain_names();
/// Parses a controller or terrain name given to `option`; throws UsageError (exit 2) naming the
/// option, the value and the valid names.
control::ControllerKind parse_controller_option(const std::string& name, const std::string& option);
control::TerrainKind parse_terrain_option(const std::string& name, const std::string& option);

/// The trot of the experiments (Zapolsky & Drumwright §7.6 scaled to the A1, whose legs are
/// about twice as long as the paper's robot's): the paper's gait, its five waypoints × 2 walked
/// at 0.3 m/s.
control::TrotPlannerParameters experiment_trot_parameters();

/// The whole text of a file; throws std::runtime_error naming it when it cannot be read.
std::string read_text_file(const std::string& path);

/// A scene file with a terrain made for it and applied (control::make_terrain, apply_terrain):
/// the scene is parsed once as it is (for the robot's mass, legs and start), then again with
/// the terrain. Relative paths in the file resolve against its folder.
struct TerrainScene {
  io::Scene scene;
  control::Terrain terrain;
};
TerrainScene load_scene_with_terrain(const std::string& path, control::TerrainKind kind,
                                     const control::TerrainParameters& parameters);

/// metrics.json (control::to_json).
void write_metrics_json(const std::string& path, const control::ControlMetrics& metrics);

/// series.csv of a run (control::ControlSeries), at most `rate` rows per simulated second: each row
/// is a bucket of consecutive steps (t: its first step's; errors, normal forces: their means;
/// torque_rate: the largest |Δτ|/δt mean of the bucket's steps; base or box position: the
/// first step's). Columns: t, joint_position_error, joint_velocity_error, torque_rate,
/// predicted_normal, simulated_normal, then base_x, base_y, base_z (trot runs) or box_x, box_y,
/// box_z (arm runs). Empty cells for NaN.
void write_series_csv(const std::string& path, const control::ControlSeries& series, const std::string& reference_kind,
                      double rate = 100.0);

}  // namespace coulomb::cli
