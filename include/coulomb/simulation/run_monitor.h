// Loud failures of a simulation that are not errors: the checks that turn a silently wrong
// run (a robot falling through the floor, a scene starting deep in overlap, a robot without
// collision geometry) into warnings. The Simulator owns one and exposes its warnings
// (Simulator::warnings()); `coulomb simulate` prints each once, lists them in stats.json and,
// with --strict, exits 3.
//
// The checks, each reported once:
//   - a robot, or a free body, with no collision geometry (at construction);
//   - an initial overlap deeper than `initial_overlap` (the contacts of the first step);
//   - a kinematic tree whose root body fell more than `fall_distance` below every static
//     geometry (below the lowest point of each; a half-space whose normal is within 45° of +z
//     counts at its surface height), or left the scene's bounds: the box around the initial
//     body origins and the bounded static geometry, grown by `bound_margin` on every side.
// A scene with no static geometry has no fall check (nothing to fall through).
#pragma once

#include <string>
#include <vector>

#include "coulomb/contact/contact_set.h"
#include "coulomb/math/spatial.h"
#include "coulomb/scene/scene.h"

namespace coulomb::simulation {

struct MonitorParameters {
  bool enabled = true;
  double fall_distance = 1.0;     ///< [m] below every static geometry
  double bound_margin = 100.0;    ///< [m] beyond the initial scene box
  double initial_overlap = 5e-3;  ///< [m] deepest initial penetration tolerated silently
};

class RunMonitor {
 public:
  RunMonitor() = default;
  /// Construction-time checks of `scene` (collision geometry) and the fall and bound limits at
  /// the body origins p_WBo (one per body of scene.model, body 0 the world).
  RunMonitor(const scene::Scene& scene, const std::vector<math::Vector3>& p_WBo, const MonitorParameters& parameters);

  /// The contacts gathered at the initial state (call once, with the first step's contacts).
  void check_initial_contacts(const scene::Scene& scene, const contact::ContactSet& contacts);
  /// Checks every tree root's origin at `time` [s]. No allocation unless a warning is raised.
  void check_bodies(const scene::Scene& scene, const std::vector<math::Vector3>& p_WBo, double time);

  /// Every warning so far, in the order raised.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Lowest height [m] below which a tree root counts as fallen through (−inf: no check).
  double fall_height() const { return fall_height_; }

 private:
  MonitorParameters parameters_;
  std::vector<std::string> warnings_;
  std::vector<int> roots_;          ///< tree root bodies
  std::vector<char> fell_, left_;   ///< per tree: already reported
  double fall_height_ = 0.0;
  math::Vector3 lower_ = math::Vector3::Zero(), upper_ = math::Vector3::Zero();  ///< scene bounds [m]
};

}  // namespace coulomb::simulation
