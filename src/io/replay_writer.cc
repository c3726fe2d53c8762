#include "coulomb/io/replay_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "coulomb/geometry/mesh_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "viewer_assets.h"
#include "../util/format.h"

namespace coulomb::io {

namespace replay_encoding {

std::int32_t quantize_position(double x) {
  const double u = std::round(x / kPositionQuantum);
  if (!std::isfinite(x) || u > std::numeric_limits<std::int32_t>::max() || u < std::numeric_limits<std::int32_t>::min())
    throw std::out_of_range("replay: position " + util::format_number(x) +
                           " m is not finite or too far from the origin to be stored at 0.1 mm (|x| < 214 km); "
                           "write no replay for this scene (coulomb simulate --no-html)");
  return static_cast<std::int32_t>(u);
}

double dequantize_position(std::int32_t q) { return q * kPositionQuantum; }

std::array<std::int16_t, 4> quantize_quaternion(const Eigen::Vector4d& wxyz) {
  const double n = wxyz.norm();
  if (!(n > 0.0) || !std::isfinite(n))
    throw std::invalid_argument("replay: quaternion of norm " + std::to_string(n) + " cannot be stored");
  std::array<std::int16_t, 4> q;
  for (int k = 0; k < 4; ++k)
    q[k] = static_cast<std::int16_t>(std::lround(std::clamp(wxyz[k] / n, -1.0, 1.0) * kQuaternionScale));
  return q;
}

Eigen::Vector4d dequantize_quaternion(const std::array<std::int16_t, 4>& q) {
  Eigen::Vector4d v(q[0], q[1], q[2], q[3]);
  const double n = v.norm();
  return n > 0.0 ? Eigen::Vector4d(v / n) : Eigen::Vector4d(1.0, 0.0, 0.0, 0.0);
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(const std::uint8_t* data, std::size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const std::uint32_t v = (std::uint32_t(data[i]) << 16) | (std::uint32_t(data[i + 1]) << 8) | data[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (size - i == 1) {
    const std::uint32_t v = std::uint32_t(data[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (size - i == 2) {
    const std::uint32_t v = (std::uint32_t(data[i]) << 16) | (std::uint32_t(data[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string base64_encode(const std::vector<std::uint8_t>& data) { return base64_encode(data.data(), data.size()); }

std::vector<std::uint8_t> base64_decode(const std::string& text) {
  if (text.size() % 4 != 0)
    throw std::invalid_argument("base64: length " + std::to_string(text.size()) + " is not a multiple of 4");
  int value[256];
  std::fill(std::begin(value), std::end(value), -1);
  for (int k = 0; k < 64; ++k) value[static_cast<unsigned char>(kAlphabet[k])] = k;
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int pad = 0;
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned char c = text[i + k];
      int d = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
      } else {
        d = value[c];
        if (d < 0 || pad > 0)
          throw std::invalid_argument("base64: unexpected character at offset " + std::to_string(i + k));
      }
      v = (v << 6) | std::uint32_t(d);
    }
    out.push_back(std::uint8_t(v >> 16));
    if (pad < 2) out.push_back(std::uint8_t(v >> 8));
    if (pad < 1) out.push_back(std::uint8_t(v));
  }
  return out;
}

std::vector<std::uint8_t> deflate(const std::vector<std::uint8_t>& data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::vector<std::uint8_t> out(size);
  if (compress2(out.data(), &size, data.data(), static_cast<uLong>(data.size()), 9) != Z_OK)
    throw std::runtime_error("replay: zlib compression failed");
  out.resize(size);
  return out;
}

std::vector<std::uint8_t> inflate(const std::vector<std::uint8_t>& data) {
  z_stream s{};
  if (inflateInit(&s) != Z_OK) throw std::runtime_error("replay: zlib inflateInit failed");
  std::vector<std::uint8_t> out;
  std::uint8_t chunk[1 << 15];
  s.next_in = const_cast<Bytef*>(data.data());
  s.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    s.next_out = chunk;
    s.avail_out = sizeof(chunk);
    rc = ::inflate(&s, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&s);
      throw std::runtime_error("replay: corrupt zlib stream");
    }
    out.insert(out.end(), chunk, chunk + (sizeof(chunk) - s.avail_out));
    if (rc == Z_OK && s.avail_in == 0 && s.avail_out != 0) {
      inflateEnd(&s);
      throw std::runtime_error("replay: truncated zlib stream");
    }
  }
  inflateEnd(&s);
  return out;
}

}  // namespace replay_encoding

namespace {

using Json = nlohmann::ordered_json;
namespace enc = replay_encoding;

double round_to(double x, double quantum) { return std::round(x / quantum) * quantum; }

Json vector_json(const math::Vector3& v, double quantum = 1e-9) {
  return Json::array({round_to(v.x(), quantum), round_to(v.y(), quantum), round_to(v.z(), quantum)});
}

Json geometry_json(const geometry::Geometry& g) {
  Json j;
  j["name"] = g.name;
  j["type"] = geometry::shape_type_name(g.shape.type);
  const geometry::Shape& s = g.shape;
  switch (s.type) {
    case geometry::ShapeType::kSphere:
      j["radius"] = s.radius;
      break;
    case geometry::ShapeType::kBox:
      j["size"] = vector_json(s.size);
      break;
    case geometry::ShapeType::kCapsule:
    case geometry::ShapeType::kCylinder:
      j["radius"] = s.radius;
      j["length"] = s.length;
      break;
    case geometry::ShapeType::kHalfSpace:
      break;
    case geometry::ShapeType::kConvexMesh:
    case geometry::ShapeType::kMesh: {  // drawn from its triangles, as given
      Json vertices = Json::array(), triangles = Json::array();
      for (const math::Vector3& v : s.vertices)
        for (int k = 0; k < 3; ++k) vertices.push_back(round_to(v[k], 1e-7));
      for (const std::array<int, 3>& t : s.triangles)
        for (int k = 0; k < 3; ++k) triangles.push_back(t[k]);
      j["vertices"] = std::move(vertices);
      j["triangles"] = std::move(triangles);
      break;
    }
  }
  const math::Quaternion quat(g.X_BG.R);
  j["p"] = vector_json(g.X_BG.p);
  j["q"] = Json::array({round_to(quat.w(), 1e-12), round_to(quat.x(), 1e-12), round_to(quat.y(), 1e-12),
                        round_to(quat.z(), 1e-12)});
  j["rgba"] = Json::array({g.rgba[0], g.rgba[1], g.rgba[2], g.rgba[3]});
  return j;
}

// Little-endian byte writers (the browser reads the arrays as typed arrays on little-endian hosts).
struct Blob {
  std::vector<std::uint8_t> bytes;
  Json layout = Json::object();
  void begin(const char* name, std::size_t count) { layout[name] = Json::array({bytes.size(), count}); }
  void u16(std::uint16_t v) {
    bytes.push_back(std::uint8_t(v));
    bytes.push_back(std::uint8_t(v >> 8));
  }
  void u32(std::uint32_t v) {
    for (int k = 0; k < 4; ++k) bytes.push_back(std::uint8_t(v >> (8 * k)));
  }
  void f64(double x) {
    std::uint64_t v;
    std::memcpy(&v, &x, sizeof v);
    for (int k = 0; k < 8; ++k) bytes.push_back(std::uint8_t(v >> (8 * k)));
  }
};

void pose_json(Json& j, const math::Transform& X) {
  const math::Quaternion quat(X.R);
  j["p"] = vector_json(X.p);
  j["q"] = Json::array({round_to(quat.w(), 1e-12), round_to(quat.x(), 1e-12), round_to(quat.y(), 1e-12),
                        round_to(quat.z(), 1e-12)});

}

Json visual_json(const geometry::VisualGeometry& v, int mesh) {
  Json j;
  j["name"] = v.name;
  using T = geometry::VisualGeometry::Type;
  switch (v.type) {
    case T::kBox:
      j["type"] = "box";
      j["size"] = vector_json(v.size);
      break;
    case T::kSphere:
      j["type"] = "sphere";
      j["radius"] = v.radius;
      break;
    case T::kCylinder:
      j["type"] = "cylinder";
      j["radius"] = v.radius;
      j["length"] = v.length;
      break;
    case T::kMesh:
      j["type"] = "mesh";
      j["mesh"] = mesh;
      break;
  }
  pose_json(j, v.X_BG);
  if (v.has_rgba) j["rgba"] = Json::array({v.rgba[0], v.rgba[1], v.rgba[2], v.rgba[3]});
  return j;
}

// The parts of a decimated mesh into `blob`: positions uint16[3 nv] over the part's bounding box
// (x, y, z interleaved), indices uint16 (nv ≤ 65536) or uint32 [3 nt].
Json mesh_json(const geometry::VisualMesh& mesh, int file_triangles, Blob& blob) {
  Json parts = Json::array();
  for (const geometry::VisualMesh::Part& part : mesh.parts) {
    math::Vector3 lo = part.vertices.front(), hi = lo;
    for (const math::Vector3& v : part.vertices) {
      lo = lo.cwiseMin(v);
      hi = hi.cwiseMax(v);
    }
    Json pj;
    if (part.has_rgba) pj["rgba"] = Json::array({part.rgba[0], part.rgba[1], part.rgba[2], part.rgba[3]});
    pj["lo"] = Json::array({lo.x(), lo.y(), lo.z()});
    pj["hi"] = Json::array({hi.x(), hi.y(), hi.z()});
    pj["vertices"] = Json::array({blob.bytes.size(), part.vertices.size()});
    for (const math::Vector3& v : part.vertices)
      for (int c = 0; c < 3; ++c) {
        const double span = hi[c] - lo[c];
        blob.u16(span > 0.0 ? static_cast<std::uint16_t>(std::lround((v[c] - lo[c]) / span * 65535.0)) : 0);
      }
    const bool small = part.vertices.size() <= 65536;
    pj["index_bytes"] = small ? 2 : 4;
    pj["indices"] = Json::array({blob.bytes.size(), 3 * part.triangles.size()});
    for (const std::array<int, 3>& t : part.triangles)
      for (int k = 0; k < 3; ++k) {
        if (small)
          blob.u16(static_cast<std::uint16_t>(t[k]));
        else
          blob.u32(static_cast<std::uint32_t>(t[k]));
      }
    parts.push_back(std::move(pj));
  }
  Json j;
  j["file"] = std::filesystem::path(mesh.file).filename().string();
  j["file_triangles"] = file_triangles;
  j["triangles"] = mesh.num_triangles();
  j["parts"] = std::move(parts);
  return j;
}

}  // namespace

ReplayRecorder::ReplayRecorder(const multibody::Model& model, const std::vector<geometry::Geometry>& geometries,
                               ReplayOptions options)
    : ReplayRecorder(model, geometries, {}, std::move(options)) {}

ReplayRecorder::ReplayRecorder(const multibody::Model& model, const std::vector<geometry::Geometry>& geometries,
                               const std::vector<geometry::VisualGeometry>& visuals, ReplayOptions options)
    : model_(model), options_(std::move(options)), ws_(model), num_bodies_(model.num_bodies() - 1) {
  if (!(options_.max_frame_rate > 0.0) || !std::isfinite(options_.max_frame_rate))
    throw std::invalid_argument("replay: max_frame_rate must be > 0, got " + std::to_string(options_.max_frame_rate));
  Json bodies = Json::array(), statics = Json::array(), static_visuals = Json::array();
  for (int b = 1; b < model.num_bodies(); ++b)
    bodies.push_back(Json{{"name", model.body(b).name}, {"geometries", Json::array()}});
  for (const geometry::Geometry& g : geometries) {
    if (g.body < 0 || g.body >= model.num_bodies())
      throw std::invalid_argument("replay: geometry '" + g.name + "' is on body " + std::to_string(g.body) +
                                  ", which the model (" + std::to_string(model.num_bodies()) + " bodies) lacks");
    if (g.body == 0)
      statics.push_back(geometry_json(g));
    else
      bodies[g.body - 1]["geometries"].push_back(geometry_json(g));
  }

  // Visual meshes: each distinct (file, scale) read once, decimated, stored once.
  using Key = std::tuple<std::string, double, double, double>;
  std::map<Key, int> mesh_index;
  std::vector<geometry::VisualMesh> meshes;
  std::vector<int> mesh_of(visuals.size(), -1);
  for (size_t i = 0; i < visuals.size(); ++i) {
    const geometry::VisualGeometry& v = visuals[i];
    if (v.body < 0 || v.body >= model.num_bodies())
      throw std::invalid_argument("replay: visual '" + v.name + "' is on body " + std::to_string(v.body) +
                                  ", which the model (" + std::to_string(model.num_bodies()) + " bodies) lacks");
    if (v.type != geometry::VisualGeometry::Type::kMesh) continue;
    const Key key{v.mesh_file, v.mesh_scale.x(), v.mesh_scale.y(), v.mesh_scale.z()};
    auto it = mesh_index.find(key);
    if (it == mesh_index.end()) {
      int index = -1;
      try {
        meshes.push_back(geometry::load_visual_mesh(v.mesh_file, v.mesh_scale));
        index = static_cast<int>(meshes.size()) - 1;
      } catch (const geometry::MeshError& e) {
        notes_.push_back("replay: visual '" + v.name + "': " + e.what() + "; drawn with its body's collision shapes");
      }
      it = mesh_index.emplace(key, index).first;
    }
    mesh_of[i] = it->second;
  }
  long total = 0;
  for (const geometry::VisualMesh& m : meshes) total += m.num_triangles();
  Blob mesh_blob;
  Json mesh_list = Json::array();
  for (const geometry::VisualMesh& m : meshes) {
    const int n = m.num_triangles();
    long budget = std::min<long>(options_.max_triangles_per_mesh, n);
    if (total > options_.visual_triangle_budget)
      budget = std::min<long>(budget, std::max<long>(500, static_cast<long>(double(options_.visual_triangle_budget) * n / double(total))));
    mesh_list.push_back(mesh_json(geometry::decimate(m, static_cast<int>(budget)), n, mesh_blob));
  }
  for (size_t i = 0; i < visuals.size(); ++i) {
    const geometry::VisualGeometry& v = visuals[i];
    if (v.type == geometry::VisualGeometry::Type::kMesh && mesh_of[i] < 0) continue;
    Json j = visual_json(v, mesh_of[i]);
    if (v.body == 0)
      static_visuals.push_back(std::move(j));
    else
      bodies[v.body - 1]["visuals"].push_back(std::move(j));
  }
  // Collision shapes that a visual stands for become an overlay in the viewer ("covered"): every
  // one on a moving body with visuals; on the world, those of robots (not the ground).
  for (int b = 0; b < model.num_bodies(); ++b) {
    Json& list = b == 0 ? statics : bodies[b - 1]["geometries"];
    const bool has_visuals = b == 0 ? !static_visuals.empty() : bodies[b - 1].contains("visuals");
    if (!has_visuals) continue;
    int k = 0;
    for (const geometry::Geometry& g : geometries) {
      if (g.body != b) continue;
      list[k++]["covered"] = b != 0 || g.robot >= 0;
    }
  }
  Json scene;
  scene["bodies"] = std::move(bodies);
  scene["static_geometries"] = std::move(statics);
  scene["static_visuals"] = std::move(static_visuals);
  scene_json_ = scene.dump(-1, ' ', false, Json::error_handler_t::replace);
  mesh_json_ = mesh_list.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (!meshes.empty()) mesh_data_ = enc::base64_encode(enc::deflate(mesh_blob.bytes));
}

bool ReplayRecorder::record(double t, const Eigen::VectorXd& q, const contact::ContactSet& contacts,
                            const Eigen::VectorXd& impulses, bool force) {
  if (q.size() != model_.nq())
    throw std::invalid_argument("replay: q has " + std::to_string(q.size()) + " entries, the model has n_q = " +
                                std::to_string(model_.nq()));
  if (impulses.size() != 3 * contacts.size())
    throw std::invalid_argument("replay: " + std::to_string(impulses.size()) + " impulse entries for " +
                                std::to_string(contacts.size()) + " contacts (3 per contact expected)");
  if (!std::isfinite(t) || (!times_.empty() && t < times_.back()))
    throw std::invalid_argument("replay: time " + std::to_string(t) + " s is earlier than the last frame's " +
                                std::to_string(times_.empty() ? 0.0 : times_.back()) + " s");
  if (!times_.empty()) {
    // Interval index of a time; the tolerance keeps t = k/rate computed as a sum of steps in
    // interval k.
    const double rate = options_.max_frame_rate;
    const auto interval = [rate](double time) { return std::floor(time * rate + 1e-6); };
    const bool new_interval = interval(t) > interval(times_.back());
    if (!new_interval && !(force && t > times_.back())) return false;
  }

  multibody::forward_kinematics(model_, ws_, q);
  const std::size_t previous = quaternions_.size() - (times_.empty() ? 0 : 4 * num_bodies_);
  times_.push_back(t);
  for (int b = 1; b < model_.num_bodies(); ++b) {
    const math::Transform& X = ws_.X_WB[b];
    for (int k = 0; k < 3; ++k) positions_.push_back(enc::quantize_position(X.p[k]));
    const math::Quaternion quat(X.R);
    std::array<std::int16_t, 4> qq = enc::quantize_quaternion(Eigen::Vector4d(quat.w(), quat.x(), quat.y(), quat.z()));
    if (times_.size() > 1) {  // same hemisphere as the previous frame: small deltas, short interpolation
      const std::int16_t* prev = &quaternions_[previous + 4 * (b - 1)];
      long dot = 0;
      for (int k = 0; k < 4; ++k) dot += long(prev[k]) * qq[k];
      if (dot < 0)
        for (std::int16_t& c : qq) c = static_cast<std::int16_t>(-c);
    }
    quaternions_.insert(quaternions_.end(), qq.begin(), qq.end());
  }
  contact_counts_.push_back(contacts.size());
  for (int i = 0; i < contacts.size(); ++i) {
    const contact::Contact& c = contacts.contacts[i];
    for (int k = 0; k < 3; ++k) contact_points_.push_back(enc::quantize_position(c.p_W[k]));
    const Eigen::Vector3d gamma = impulses.segment<3>(3 * i);
    const math::Vector3 normal = c.R_WC.col(2) * gamma[2];
    const math::Vector3 friction = c.R_WC.col(0) * gamma[0] + c.R_WC.col(1) * gamma[1];
    const auto finite = [](double x) { return static_cast<float>(std::isfinite(x) ? x : 0.0); };
    for (int k = 0; k < 3; ++k) contact_impulses_.push_back(finite(normal[k]));
    for (int k = 0; k < 3; ++k) contact_impulses_.push_back(finite(friction[k]));
  }
  return true;
}

std::string ReplayRecorder::html() const {
  const std::size_t F = times_.size(), B = num_bodies_, C = contact_points_.size() / 3;
  float max_impulse = 0.0f;
  for (float x : contact_impulses_) max_impulse = std::max(max_impulse, std::abs(x));
  const double impulse_quantum = max_impulse > 0.0f ? max_impulse / 32767.0 : 1.0;

  Blob blob;
  blob.begin("times", F);
  for (double t : times_) blob.f64(t);
  blob.begin("positions", B * 3 * F);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t c = 0; c < 3; ++c) {
      std::uint32_t prev = 0;
      for (std::size_t f = 0; f < F; ++f) {
        const std::uint32_t v = static_cast<std::uint32_t>(positions_[(f * B + b) * 3 + c]);
        blob.u32(v - prev);  // wrapping difference; the decoder sums with wrapping int32
        prev = v;
      }
    }
  blob.begin("quaternions", B * 4 * F);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t c = 0; c < 4; ++c) {
      std::uint16_t prev = 0;
      for (std::size_t f = 0; f < F; ++f) {
        const std::uint16_t v = static_cast<std::uint16_t>(quaternions_[(f * B + b) * 4 + c]);
        blob.u16(static_cast<std::uint16_t>(v - prev));
        prev = v;
      }
    }
  blob.begin("contact_counts", F);
  for (std::int32_t n : contact_counts_) blob.u32(static_cast<std::uint32_t>(n));
  blob.begin("contact_points", 3 * C);
  for (std::size_t c = 0; c < 3; ++c) {
    std::uint32_t prev = 0;
    for (std::size_t k = 0; k < C; ++k) {
      const std::uint32_t v = static_cast<std::uint32_t>(contact_points_[3 * k + c]);
      blob.u32(v - prev);
      prev = v;
    }
  }
  blob.begin("contact_impulses", 6 * C);
  for (std::size_t c = 0; c < 6; ++c)
    for (std::size_t k = 0; k < C; ++k) {
      const long u = std::lround(contact_impulses_[6 * k + c] / impulse_quantum);
      blob.u16(static_cast<std::uint16_t>(static_cast<std::int16_t>(std::clamp(u, -32767L, 32767L))));
    }

  Json j;
  j["format"] = "coulomb-replay";
  j["version"] = 1;
  j["title"] = options_.title;
  j["time_step"] = options_.time_step;
  j["max_frame_rate"] = options_.max_frame_rate;
  j["num_frames"] = F;
  j["num_contacts"] = C;
  j["position_quantum"] = enc::kPositionQuantum;
  j["quaternion_scale"] = enc::kQuaternionScale;
  j["impulse_quantum"] = impulse_quantum;
  j["libraries"] = std::string(viewer_assets::kLibraryVersions);
  const Json scene = Json::parse(scene_json_);
  j["bodies"] = scene["bodies"];
  j["static_geometries"] = scene["static_geometries"];
  j["static_visuals"] = scene["static_visuals"];
  j["visual_meshes"] = Json::parse(mesh_json_);
  j["mesh_data"] = mesh_data_;
  j["encoding"] = "zlib+base64";
  j["layout"] = blob.layout;
  j["data"] = enc::base64_encode(enc::deflate(blob.bytes));
  std::string data = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Inside <script>, "</script" or "<!--" in a name would end or confuse the element: every '<'
  // (only ever inside a JSON string) becomes the escape \u003c, the same JSON string.
  for (std::size_t pos = data.find('<'); pos != std::string::npos; pos = data.find('<', pos + 6))
    data.replace(pos, 1, "\\u003c");

  std::string out;
  out.reserve(std::strlen(viewer_assets::kReplayHtmlBefore) + data.size() +
              std::strlen(viewer_assets::kReplayHtmlAfter));
  out += viewer_assets::kReplayHtmlBefore;
  out += data;
  out += viewer_assets::kReplayHtmlAfter;
  return out;
}

std::size_t ReplayRecorder::write(const std::string& path) const {
  const std::string text = html();
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error(path + ": write failed");
  return text.size();
}

}  // namespace coulomb::io
