// replay.html: a self-contained 3-D replay of a simulation (contract:
// ../shared/design/ARCHITECTURE.md). One HTML file that opens offline in a browser: three.js
// (npm package `three`) and the viewer code are inlined, the scene (every body with its
// collision geometries as real shapes, in their colours) and the trajectory are embedded as
// compressed data. The page plays the motion with play/pause, a time slider, speed 0.25×–4×,
// orbit/pan/zoom, a clock and toggles for contact points and contact impulse arrows.
//
// Frame data, as stored (see tools/viewer/src/replay.js for the decoder):
//  - at most `max_frame_rate` frames per simulated second (default 60): a step becomes a frame
//    when it is the first step in a new 1/max_frame_rate-long interval of time, plus the last
//    step when asked (record(..., force = true));
//  - body positions quantized to replay_encoding::kPositionQuantum = 0.1 mm (int32), body
//    orientations to int16 per quaternion component (w, x, y, z), both delta-coded along the
//    frames; contact points at 0.1 mm; contact impulses (normal and friction parts in the world
//    frame) to int16 with one scale for the run; all zlib-deflated and base64-encoded.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/geometry/visual_mesh.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::io {

/// The number encodings of replay.html, exposed for tests.
namespace replay_encoding {

inline constexpr double kPositionQuantum = 1e-4;       ///< [m] per unit of a quantized position
inline constexpr double kQuaternionScale = 32767.0;    ///< units per 1 of a quaternion component

/// round(x / kPositionQuantum). Throws std::out_of_range naming the value when x is not finite or
/// |x| is beyond the int32 range (about 214 km).
std::int32_t quantize_position(double x);
/// q · kPositionQuantum [m].
double dequantize_position(std::int32_t q);

/// The unit quaternion (w, x, y, z) (normalized here) as round(component · kQuaternionScale).
/// Throws std::invalid_argument for a zero or non-finite quaternion.
std::array<std::int16_t, 4> quantize_quaternion(const Eigen::Vector4d& wxyz);
/// Back to a unit quaternion (w, x, y, z).
Eigen::Vector4d dequantize_quaternion(const std::array<std::int16_t, 4>& q);

/// Standard base64 (RFC 4648, with '=' padding).
std::string base64_encode(const std::uint8_t* data, std::size_t size);
std::string base64_encode(const std::vector<std::uint8_t>& data);
/// Throws std::invalid_argument for characters outside the alphabet or a bad length.
std::vector<std::uint8_t> base64_decode(const std::string& text);

/// zlib stream (RFC 1950, what the browser's DecompressionStream("deflate") reads), level 9.
std::vector<std::uint8_t> deflate(const std::vector<std::uint8_t>& data);
/// Throws std::runtime_error for a corrupt stream.
std::vector<std::uint8_t> inflate(const std::vector<std::uint8_t>& data);

}  // namespace replay_encoding

struct ReplayOptions {
  double max_frame_rate = 60.0;  ///< frames per simulated second, > 0
  /// Visual meshes: at most this many triangles per distinct mesh file, and about
  /// visual_triangle_budget in all (shared among the files in proportion to their size).
  int max_triangles_per_mesh = 20000;
  int visual_triangle_budget = 250000;
  std::string title = "coulomb";  ///< shown in the page (e.g. the scene file)
  double time_step = 0.0;        ///< [s], shown, and used to convert impulses to forces in the legend
};

/// Collects frames of a simulation and writes replay.html.
///
/// The body of frame data is the Model's bodies 1 … num_bodies()−1 (the world is static), in the
/// order of trajectory.csv. Each body becomes one object with its geometries (box, sphere,
/// capsule, cylinder, half-space as a large plane, convex mesh) at their X_BG; geometries on the
/// world (body 0) are drawn as static scenery.
class ReplayRecorder {
 public:
  /// Copies what it needs of the geometries; keeps a reference to `model`, which must outlive
  /// the recorder. Throws std::invalid_argument for max_frame_rate ≤ 0 or a geometry whose body
  /// is not in the model.
  ReplayRecorder(const multibody::Model& model, const std::vector<geometry::Geometry>& geometries,
                 ReplayOptions options = {});
  /// With visual geometry (scene::Scene::visuals): drawn by default, the collision shapes of
  /// bodies that have visuals become an optional overlay. Each distinct mesh file (and scale) is
  /// read once (geometry::load_visual_mesh), decimated to its triangle budget
  /// (geometry::decimate) and stored once, positions quantized to 16 bits per axis over the
  /// part's bounding box; the browser recomputes the normals. A mesh that cannot be read is
  /// left out, with a note (notes()).
  ReplayRecorder(const multibody::Model& model, const std::vector<geometry::Geometry>& geometries,
                 const std::vector<geometry::VisualGeometry>& visuals, ReplayOptions options = {});

  /// Visual meshes left out (unreadable files).
  const std::vector<std::string>& notes() const { return notes_; }

  /// Offers the state at time t [s] with the contacts of the step that ended there and their
  /// impulses (3 per contact, contact frame [t1, t2, n], N·s, as Simulator::contact_impulses();
  /// empty for no contacts). Becomes a frame when t falls in a later 1/max_frame_rate interval
  /// than the last frame's time, or when `force` and t is later than the last frame. Times must
  /// not decrease. Returns whether a frame was kept. Throws std::invalid_argument for a q of the
  /// wrong size, impulses whose size is not 3 × contacts, or a decreasing time.
  bool record(double t, const Eigen::VectorXd& q, const contact::ContactSet& contacts,
              const Eigen::VectorXd& impulses, bool force = false);

  int num_frames() const { return static_cast<int>(times_.size()); }
  const std::vector<double>& frame_times() const { return times_; }
  int num_bodies() const { return num_bodies_; }

  /// The complete replay.html.
  std::string html() const;
  /// Writes html() to `path`; returns the file size in bytes. Throws std::runtime_error naming
  /// the file if it cannot be written.
  std::size_t write(const std::string& path) const;

 private:
  const multibody::Model& model_;
  ReplayOptions options_;
  multibody::Workspace ws_;
  int num_bodies_ = 0;
  std::string scene_json_;  ///< "bodies" and "static_geometries" members, serialized once
  std::string mesh_json_;   ///< "visual_meshes" member (JSON array), serialized once
  std::string mesh_data_;   ///< base64 of the deflated mesh arrays ("" without meshes)
  std::vector<std::string> notes_;
  std::vector<double> times_;
  std::vector<std::int32_t> positions_;      ///< [frame][body][3]
  std::vector<std::int16_t> quaternions_;    ///< [frame][body][4], hemisphere-continuous per body
  std::vector<std::int32_t> contact_counts_; ///< [frame]
  std::vector<std::int32_t> contact_points_; ///< [contact][3]
  std::vector<float> contact_impulses_;      ///< [contact][6]: normal xyz, friction xyz (world) [N·s]
};

}  // namespace coulomb::io
