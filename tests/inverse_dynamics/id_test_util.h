// Shared set-ups of the inverse-dynamics tests: the Unitree A1 (../shared/models/a1.urdf)
// standing on flat ground with its four foot contacts, and a symmetrized copy of it.
#pragma once

#include <fstream>
#include <string>

#include <Eigen/Core>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/scene/scene.h"

namespace coulomb::inverse_dynamics::testing {

inline std::string a1_urdf() { return std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf"; }

/// The A1 with its trunk's centre of mass and products of inertia zeroed: every other link is
/// mirrored left–right and front–back in the URDF, so this robot is symmetric about both
/// vertical planes through the base origin. Written once to a temporary file; returns its path.
inline std::string symmetric_a1_urdf() {
  static const std::string path = [] {
    std::ifstream in(a1_urdf());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto replace = [&](const std::string& from, const std::string& to) {
      const size_t at = text.find(from);
      if (at == std::string::npos) throw std::runtime_error("symmetric_a1_urdf: '" + from + "' not in a1.urdf");
      text.replace(at, from.size(), to);
    };
    replace("xyz=\"0.0 0.0041 -0.0005\"", "xyz=\"0 0 0\"");
    replace("ixy=\"-3.66e-05\" ixz=\"-6.11e-05\"", "ixy=\"0\" ixz=\"0\"");
    replace("iyz=\"-2.75e-05\"", "iyz=\"0\"");
    const std::string out = ::testing::TempDir() + "/coulomb_symmetric_a1.urdf";
    std::ofstream(out) << text;
    return out;
  }();
  return path;
}

/// The project's own quadruped (examples/models/coulomb_quadruped.urdf): A1 dimensions, every
/// link's centre of mass on its axis and a trunk centred at its origin, so it is symmetric about
/// both vertical planes when the rear legs mirror the front ones.
inline std::string coulomb_quadruped_urdf() {
  return std::string(COULOMB_SOURCE_DIR) + "/examples/models/coulomb_quadruped.urdf";
}

/// A scene with an A1-like quadruped (from `urdf`) standing on flat ground (a half-space at
/// z = 0), hips 0, front thighs 0.8 and calves −1.5 rad, rear ones the same times `rear_sign`
/// (−1: knees mirrored front–back, outside the A1's joint limits, which inverse dynamics does
/// not check), base at `height` (0.3123 m: the feet touch), friction μ; the contacts there.
struct A1Stance {
  scene::Scene scene;
  contact::ContactSet contacts;

  explicit A1Stance(const std::string& urdf = a1_urdf(), double mu = 1.0, double height = 0.3123,
                    double rear_sign = 1.0) {
    const std::string rt = std::to_string(0.8 * rear_sign), rc = std::to_string(-1.5 * rear_sign);
    const std::string yaml = "time_step: 0.001\nduration: 1\ncontact: {mu: " + std::to_string(mu) +
                             "}\nbodies:\n  - name: ground\n    fixed: true\n    shapes: [{type: halfspace, normal: [0, 0, 1]}]\n"
                             "robots:\n  - urdf: " + urdf + "\n    floating: true\n    position: [0, 0, " +
                             std::to_string(height) +
                             "]\n    joint_positions: {FR_thigh_joint: 0.8, FL_thigh_joint: 0.8, RR_thigh_joint: " + rt +
                             ", RL_thigh_joint: " + rt + ", FR_calf_joint: -1.5, FL_calf_joint: -1.5, RR_calf_joint: " +
                             rc + ", RL_calf_joint: " + rc + "}\n";
    scene = io::parse_scene(yaml, "<a1 stance>");
    update_contacts(scene.q0);
  }
  /// Sets every contact's φ to 0 (touching exactly: the static stance of digest §10.3; at the
  /// scene's height the feet overlap the ground by about 1e-5 m, which φ/Δt pushes out).
  void touch() {
    for (contact::Contact& c : contacts.contacts) c.phi = 0.0;
  }
  /// Recomputes `contacts` at q.
  void update_contacts(const Eigen::VectorXd& q) {
    geometry::CollisionWorld world(scene.model, scene.geometries, scene.collision);
    multibody::Workspace ws(scene.model);
    multibody::forward_kinematics(scene.model, ws, q);
    world.update_poses(ws);
    contact::gather_contacts(world, scene.contact, contacts);
  }
};

}  // namespace coulomb::inverse_dynamics::testing
