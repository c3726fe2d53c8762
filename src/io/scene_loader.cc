// Scene files (YAML, read with yaml-cpp) → io::Scene: one multibody::Model holding every free
// body, fixed body and robot, the collision geometries, the initial state, PD actuators, joint
// springs and the simulation settings. Schema: docs/scene-format.md.
//
// Two passes. The first walks the document, checks every key and value (each error names the
// file, the line and the key path, e.g. "bodies[3].shapes[0].radius") and adds bodies and
// robots to one ModelBuilder. The second runs on the built Model (whose coordinates are
// renumbered tree by tree) and fills the initial state, actuators, springs and geometries,
// resolving joint names against the robots' URDF joints.
#include "coulomb/io/scene_loader.h"

#include "coulomb/geometry/mesh_loader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <tuple>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "coulomb/io/mjcf_loader.h"
#include "coulomb/io/sdf_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody/forward_kinematics.h"
#include "coulomb/scene/placement.h"
#include "../util/format.h"

namespace coulomb::io {

namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Transform;
using math::Vector3;
using multibody::JointSpec;
using multibody::JointType;

constexpr double kInf = std::numeric_limits<double>::infinity();


std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// ------------------------------------------------------------------------------------------
// Error reporting

/// Builds SceneError messages "<source>:<line>: <key path>: <what>" (line 1-based; omitted when
/// unknown, key path omitted when empty).
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  static int line_of(const YAML::Node& node) {
    if (!node.IsDefined()) return 0;
    const YAML::Mark mark = node.Mark();
    return mark.is_null() ? 0 : mark.line + 1;
  }

  [[noreturn]] void fail_line(int line, const std::string& path, const std::string& what) const {
    std::string msg = source_;
    if (line > 0) msg += ":" + std::to_string(line);
    msg += ": ";
    if (!path.empty()) msg += path + ": ";
    throw SceneError(msg + what);
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& path, const std::string& what) const {
    fail_line(line_of(at), path, what);
  }
  std::string where(const YAML::Node& at) const {
    const int line = line_of(at);
    return line > 0 ? source_ + ":" + std::to_string(line) : source_;
  }

 private:
  std::string source_;
};

std::string node_text(const YAML::Node& node) {
  if (node.IsNull()) return "nothing (null)";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return in_quotes(node.Scalar());
}

// ------------------------------------------------------------------------------------------
// Typed values

/// Parses a YAML scalar as a double: decimal/scientific notation, YAML's .nan/.inf/-.inf and
/// nan/inf (so that they can be reported as not finite rather than as garbage).
bool parse_double(std::string text, double& out) {
  static const std::map<std::string, double> kSpecial = {
      {".nan", NAN},  {".NaN", NAN},   {".NAN", NAN},   {".inf", kInf},   {".Inf", kInf},
      {".INF", kInf}, {"+.inf", kInf}, {"+.Inf", kInf}, {"+.INF", kInf},  {"-.inf", -kInf},
      {"-.Inf", -kInf}, {"-.INF", -kInf}};
  if (auto it = kSpecial.find(text); it != kSpecial.end()) {
    out = it->second;
    return true;
  }
  return util::parse_number(text, out);
}

enum class Finite { kRequired, kAllowPositiveInfinity };

double number(const Reader& r, const YAML::Node& node, const std::string& path,
              Finite finite = Finite::kRequired) {
  if (!node.IsScalar()) r.fail(node, path, "expected a number, got " + node_text(node));
  double x = 0.0;
  if (node.Tag() == "!" || !parse_double(node.Scalar(), x))  // "!": a quoted string
    r.fail(node, path, "expected a number, got " + node_text(node));
  if (std::isnan(x) || (std::isinf(x) && (finite == Finite::kRequired || x < 0.0)))
    r.fail(node, path,
           std::string(finite == Finite::kRequired ? "must be a finite number" : "must be a number or .inf") +
               ", got " + node.Scalar());
  return x;
}

std::vector<double> numbers(const Reader& r, const YAML::Node& node, const std::string& path, int count) {
  if (!node.IsSequence() || (count >= 0 && static_cast<int>(node.size()) != count))
    r.fail(node, path,
           "expected a list of " + std::to_string(count) + " numbers, got " +
               (node.IsSequence() ? "a list of " + std::to_string(node.size()) : node_text(node)));
  std::vector<double> out;
  for (size_t k = 0; k < node.size(); ++k) out.push_back(number(r, node[k], path + "[" + std::to_string(k) + "]"));
  return out;
}

Vector3 vector3(const Reader& r, const YAML::Node& node, const std::string& path) {
  const std::vector<double> x = numbers(r, node, path, 3);
  return {x[0], x[1], x[2]};
}

bool boolean(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && node.Tag() != "!") {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  r.fail(node, path, "expected true or false, got " + node_text(node));
}

std::string string(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) r.fail(node, path, "expected a string, got " + node_text(node));
  return node.Scalar();
}

/// A 32-bit collision group or mask: a decimal or 0x-hexadecimal integer in [0, 2³² − 1].
std::uint32_t bits32(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && node.Tag() != "!") {
    std::string_view t(node.Scalar());
    int base = 10;
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
      t.remove_prefix(2);
      base = 16;
    }
    std::uint64_t x = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), x, base);
    if (ec == std::errc() && ptr == t.data() + t.size() && !t.empty()) {
      if (x > 0xFFFFFFFFull) r.fail(node, path, "must fit in 32 bits (at most 0xFFFFFFFF), got " + node.Scalar());
      return static_cast<std::uint32_t>(x);
    }
  }
  r.fail(node, path, "expected a non-negative integer (decimal or 0x hexadecimal), got " + node_text(node));
}

// ------------------------------------------------------------------------------------------
// Mappings with checked keys

struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

/// A YAML mapping at key path `path`, with its keys checked against an allowed list.
class Map {
 public:
  Map(const Reader& r, const YAML::Node& node, std::string path, std::initializer_list<const char*> allowed)
      : r_(r), node_(node), path_(std::move(path)) {
    if (!node.IsMap()) r.fail(node, path_, "expected a mapping (key: value entries), got " + node_text(node));
    std::vector<std::string> allowed_keys(allowed.begin(), allowed.end());
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) r.fail(key, path_, "a key must be a string, got " + node_text(key));
      const std::string& k = key.Scalar();
      if (find(k) != nullptr)
        r.fail(key, child(k), "duplicate key " + in_quotes(k) + " (first on line " +
                                  std::to_string(Reader::line_of(find(k)->key_node)) + ")");
      if (allowed.size() > 0 && std::find(allowed_keys.begin(), allowed_keys.end(), k) == allowed_keys.end())
        r.fail(key, child(k), "unknown key " + in_quotes(k) + " (expected one of: " + join(allowed_keys) + ")");
      entries_.push_back({k, key, it->second});
    }
  }

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::string child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  const Entry* find(const std::string& key) const {
    for (const Entry& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }
  const YAML::Node& value(const std::string& key) const {
    const Entry* e = find(key);
    if (e == nullptr) missing(key);
    return e->value;
  }
  [[noreturn]] void missing(const std::string& key) const {
    r_.fail(node_, path_, "missing required key " + in_quotes(key));
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    const Entry* e = find(key);
    r_.fail(e ? e->value : node_, child(key), what);
  }

  double number(const std::string& key, std::optional<double> fallback = std::nullopt,
                Finite finite = Finite::kRequired) const {
    if (!has(key)) {
      if (!fallback) missing(key);
      return *fallback;
    }
    return io::number(r_, value(key), child(key), finite);
  }
  Vector3 vector3(const std::string& key, const Vector3& fallback) const {
    return has(key) ? io::vector3(r_, value(key), child(key)) : fallback;
  }
  bool boolean(const std::string& key, bool fallback) const {
    return has(key) ? io::boolean(r_, value(key), child(key)) : fallback;
  }
  std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt) const {
    if (!has(key)) {
      if (!fallback) missing(key);
      return *fallback;
    }
    return io::string(r_, value(key), child(key));
  }

 private:
  const Reader& r_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
};

// ------------------------------------------------------------------------------------------
// Pieces shared by bodies, shapes and robots

void require(bool ok, const Map& m, const std::string& key, const std::string& what, double value) {
  if (!ok) m.fail(key, what + ", got " + util::format_number(value));
}

/// position + (rpy | quaternion [w, x, y, z]); identity when absent. Each coordinate of the
/// position within ±kMaxShapeDimension (1e6 m, the range of shape sizes and mesh vertices): a
/// static box at y = 1e308 crashed FCL's broadphase, a body at z = -1e308 gave an infinite energy
/// (mutation campaign, scene mutants 13621, 15340, 11869, 16295).
Transform read_pose(const Reader& r, const Map& m) {
  Transform X;
  X.p = m.vector3("position", Vector3::Zero());
  if (!(X.p.cwiseAbs().maxCoeff() <= geometry::kMaxShapeDimension))
    m.fail("position", "each coordinate must lie within 1e6 m of the origin, got [" + util::format_number(X.p.x()) +
                           ", " + util::format_number(X.p.y()) + ", " + util::format_number(X.p.z()) + "]");
  if (m.has("rpy") && m.has("quaternion"))
    r.fail(m.find("quaternion")->key_node, m.child("quaternion"), "give either rpy or quaternion, not both");
  if (m.has("rpy")) {
    const Vector3 rpy = vector3(r, m.value("rpy"), m.child("rpy"));
    X.R = math::rotation_from_rpy(rpy.x(), rpy.y(), rpy.z());
  } else if (m.has("quaternion")) {
    const std::vector<double> q = numbers(r, m.value("quaternion"), m.child("quaternion"), 4);
    const math::Quaternion quat(q[0], q[1], q[2], q[3]);
    if (!(quat.norm() > 1e-9)) m.fail("quaternion", "must be non-zero ([w, x, y, z]), got a zero quaternion");
    X.R = quat.normalized().toRotationMatrix();
  }
  return X;
}

/// The `contact:` override block of a body or robot (mu ≥ 0, stiffness > 0 or .inf, τ_d ≥ 0).
geometry::ContactMaterial read_material(const Reader& r, const Map& parent) {
  geometry::ContactMaterial material;
  if (!parent.has("contact")) return material;
  const Map m(r, parent.value("contact"), parent.child("contact"),
              {"mu", "stiffness", "dissipation_time", "hunt_crossley_dissipation", "stiction_tolerance"});
  if (m.has("mu")) {
    material.mu = m.number("mu");
    require(*material.mu >= 0.0, m, "mu", "must be >= 0", *material.mu);
  }
  if (m.has("stiffness")) {
    material.stiffness = m.number("stiffness", {}, Finite::kAllowPositiveInfinity);
    require(*material.stiffness > 0.0, m, "stiffness", "must be > 0 (or .inf for a rigid side)", *material.stiffness);
  }
  if (m.has("dissipation_time")) {
    material.dissipation_time = m.number("dissipation_time");
    require(*material.dissipation_time >= 0.0, m, "dissipation_time", "must be >= 0", *material.dissipation_time);
  }
  if (m.has("hunt_crossley_dissipation")) {
    material.hunt_crossley_dissipation = m.number("hunt_crossley_dissipation");
    require(*material.hunt_crossley_dissipation >= 0.0, m, "hunt_crossley_dissipation", "must be >= 0 s/m",
            *material.hunt_crossley_dissipation);
  }
  if (m.has("stiction_tolerance")) {
    material.stiction_tolerance = m.number("stiction_tolerance");
    require(*material.stiction_tolerance > 0.0, m, "stiction_tolerance", "must be > 0 m/s",
            *material.stiction_tolerance);
  }
  return material;
}

/// `color: [r, g, b]` or `[r, g, b, a]`, each in [0, 1].
std::optional<std::array<double, 4>> read_color(const Reader& r, const Map& m) {
  if (!m.has("color")) return std::nullopt;
  const YAML::Node& node = m.value("color");
  if (!node.IsSequence() || (node.size() != 3 && node.size() != 4))
    r.fail(node, m.child("color"), "expected [r, g, b] or [r, g, b, a] with entries in [0, 1], got " + node_text(node));
  std::array<double, 4> rgba = {0.0, 0.0, 0.0, 1.0};
  for (size_t k = 0; k < node.size(); ++k) {
    const std::string path = m.child("color") + "[" + std::to_string(k) + "]";
    rgba[k] = number(r, node[k], path);
    if (rgba[k] < 0.0 || rgba[k] > 1.0) r.fail(node[k], path, "must be in [0, 1], got " + util::format_number(rgba[k]));
  }
  return rgba;
}

struct Filter {
  std::uint32_t group = 1;
  std::uint32_t mask = 0xFFFFFFFFu;
};

Filter read_filter(const Reader& r, const Map& m) {
  Filter f;
  if (m.has("collision_group")) f.group = bits32(r, m.value("collision_group"), m.child("collision_group"));
  if (m.has("collision_mask")) f.mask = bits32(r, m.value("collision_mask"), m.child("collision_mask"));
  return f;
}

// ------------------------------------------------------------------------------------------
// Shapes

struct ShapeSpec {
  geometry::Shape shape;
  Transform X_BG;
  std::string name;  // empty: "shapeK"
  std::optional<std::array<double, 4>> rgba;
  YAML::Node node;
  std::string path;
  bool triangles_as_given = false;  // type mesh with convex: false (a static kMesh)
};

constexpr const char* kShapeTypes = "sphere, box, capsule, cylinder, halfspace, convex_mesh, mesh";

double positive(const Map& m, const std::string& key) {
  const double x = m.number(key);
  require(x > 0.0, m, key, "must be > 0", x);
  return x;
}

// A shape's radius, length or box edge: in [kMinShapeDimension, kMaxShapeDimension] m
// (geometry/shape.h; sizes whose square overflows crash the broadphase).
const std::string kShapeDimensionRange = "must be in [" + util::format_number(geometry::kMinShapeDimension) + ", " +
                                         util::format_number(geometry::kMaxShapeDimension) + "] m";
double shape_dimension(const Map& m, const std::string& key) {
  const double x = positive(m, key);
  require(x >= geometry::kMinShapeDimension && x <= geometry::kMaxShapeDimension, m, key, kShapeDimensionRange, x);
  return x;
}

// A mesh file's `scale`: a number (uniform) or [sx, sy, sz], each finite and non-zero.
Vector3 mesh_scale(const Reader& r, const Map& m) {
  if (!m.has("scale")) return Vector3::Ones();
  const YAML::Node& node = m.value("scale");
  Vector3 scale;
  if (node.IsScalar()) {
    scale.setConstant(number(r, node, m.child("scale")));
  } else if (node.IsSequence() && node.size() == 3) {
    scale = vector3(r, node, m.child("scale"));
  } else {
    r.fail(node, m.child("scale"), "expected a number or [sx, sy, sz], got " + node_text(node));
  }
  for (int k = 0; k < 3; ++k)
    if (!(scale[k] != 0.0))
      r.fail(node, m.child("scale"), "must be non-zero on every axis, got " + util::format_number(scale[k]));
  return scale;
}

ShapeSpec read_shape(const Reader& r, const YAML::Node& node, const std::string& path, const std::string& body,
                     const std::string& base_directory) {
  // Keys are checked against the type's list below, once the type is known.
  const Map any(r, node, path, {});
  const std::string type = any.string("type");
  ShapeSpec s;
  s.node = node;
  s.path = path;
#define COMMON "type", "name", "position", "rpy", "quaternion", "color"
  if (type == "sphere") {
    const Map m(r, node, path, {COMMON, "radius"});
    s.shape = geometry::Shape::Sphere(shape_dimension(m, "radius"));
  } else if (type == "box") {
    const Map m(r, node, path, {COMMON, "size"});
    const Vector3 size = vector3(r, m.value("size"), m.child("size"));
    for (int k = 0; k < 3; ++k)
      if (!(size[k] > 0.0))
        r.fail(m.value("size")[k], m.child("size") + "[" + std::to_string(k) + "]",
               "must be > 0 (full edge lengths), got " + util::format_number(size[k]));
      else if (!(size[k] >= geometry::kMinShapeDimension && size[k] <= geometry::kMaxShapeDimension))
        r.fail(m.value("size")[k], m.child("size") + "[" + std::to_string(k) + "]",
               kShapeDimensionRange + ", got " + util::format_number(size[k]));
    s.shape = geometry::Shape::Box(size);
  } else if (type == "capsule" || type == "cylinder") {
    const Map m(r, node, path, {COMMON, "radius", "length"});
    const double radius = shape_dimension(m, "radius");
    const double length = shape_dimension(m, "length");
    s.shape = type == "capsule" ? geometry::Shape::Capsule(radius, length) : geometry::Shape::Cylinder(radius, length);
  } else if (type == "halfspace") {
    const Map m(r, node, path, {COMMON, "normal"});
    s.shape = geometry::Shape::HalfSpace();
    if (m.has("normal") && (m.has("rpy") || m.has("quaternion")))
      r.fail(m.find("normal")->key_node, m.child("normal"),
             "give either normal or rpy/quaternion for a half-space, not both");
  } else if (type == "convex_mesh") {
    const Map m(r, node, path, {COMMON, "vertices", "triangles"});
    const YAML::Node& vs = m.value("vertices");
    if (!vs.IsSequence() || vs.size() < 4)
      r.fail(vs, m.child("vertices"), "expected a list of at least 4 points [x, y, z], got " + node_text(vs));
    std::vector<Vector3> vertices;
    for (size_t k = 0; k < vs.size(); ++k) {
      vertices.push_back(vector3(r, vs[k], m.child("vertices") + "[" + std::to_string(k) + "]"));
      if (!(vertices.back().cwiseAbs().maxCoeff() <= geometry::kMaxShapeDimension))
        r.fail(vs[k], m.child("vertices") + "[" + std::to_string(k) + "]",
               "coordinates must lie within +-" + util::format_number(geometry::kMaxShapeDimension) + " m, got " +
                   node_text(vs[k]));
    }
    const YAML::Node& ts = m.value("triangles");
    if (!ts.IsSequence() || ts.size() < 4)
      r.fail(ts, m.child("triangles"), "expected a list of at least 4 index triples [i, j, k], got " + node_text(ts));
    std::vector<std::array<int, 3>> triangles;
    for (size_t k = 0; k < ts.size(); ++k) {
      const std::string tp = m.child("triangles") + "[" + std::to_string(k) + "]";
      const std::vector<double> t = numbers(r, ts[k], tp, 3);
      std::array<int, 3> tri{};
      for (int i = 0; i < 3; ++i) {
        if (t[i] != std::floor(t[i]) || t[i] < 0 || t[i] >= static_cast<double>(vertices.size()))
          r.fail(ts[k][i], tp + "[" + std::to_string(i) + "]",
                 "must be a vertex index in [0, " + std::to_string(vertices.size() - 1) + "], got " + util::format_number(t[i]));
        tri[i] = static_cast<int>(t[i]);
      }
      triangles.push_back(tri);
    }
    s.shape = geometry::Shape::ConvexMesh(std::move(vertices), std::move(triangles));
  } else if (type == "mesh") {
    // A mesh file: its convex hull (convex: true, as for URDF meshes) or its triangles as they
    // are (convex: false; static geometry, fixed bodies only — checked by read_body).
    const Map m(r, node, path, {COMMON, "file", "scale", "convex"});
    const std::string file = m.string("file");
    const std::string resolved = resolve_model_file(file, base_directory);
    if (resolved.empty())
      m.fail("file", "body " + in_quotes(body) + ": mesh file " + in_quotes(file) + " not found (looked relative to " +
                         in_quotes(base_directory) + ", then along COULOMB_MODEL_PATH)");
    const Vector3 scale = mesh_scale(r, m);
    const bool convex = m.boolean("convex", true);
    try {
      s.shape = convex ? geometry::load_convex_hull(resolved, scale) : geometry::load_mesh(resolved, scale);
    } catch (const geometry::MeshError& e) {
      m.fail("file", "body " + in_quotes(body) + ": mesh " + in_quotes(file) + " (" + e.file() + "): " + e.reason());
    }
    s.triangles_as_given = !convex;
  } else {
    r.fail(any.value("type"), any.child("type"), "unknown shape type " + in_quotes(type) + " (expected one of: " +
                                                     kShapeTypes + ")");
  }
#undef COMMON
  const Map m(r, node, path, {});
  s.name = m.string("name", "");
  if (m.has("name") && (s.name.empty() || s.name.find('/') != std::string::npos))
    m.fail("name", "must be non-empty and contain no '/', got " + in_quotes(s.name));
  s.X_BG = read_pose(r, m);
  if (m.has("normal")) {
    const Vector3 n = vector3(r, m.value("normal"), m.child("normal"));
    if (!(n.norm() > 1e-12)) m.fail("normal", "must be a non-zero vector");
    s.X_BG.R = math::Quaternion::FromTwoVectors(Vector3::UnitZ(), n.normalized()).toRotationMatrix();
  }
  s.rgba = read_color(r, m);
  return s;
}

// ------------------------------------------------------------------------------------------
// Bodies

struct BodySpec {
  std::string name;
  bool fixed = false;
  Transform X_WB;
  Vector3 v_W = Vector3::Zero(), w_W = Vector3::Zero();
  std::vector<ShapeSpec> shapes;
  geometry::ContactMaterial material;
  Filter filter;
  std::optional<std::array<double, 4>> rgba;
};

/// The body's spatial inertia about its origin: explicit `inertia` (+ `com`) or from the
/// shapes at uniform density; zero for a fixed body without `mass`.
math::SpatialInertia body_inertia(const Reader& r, const Map& m, const BodySpec& b) {
  if (!m.has("mass")) {
    if (!b.fixed) m.missing("mass");
    if (m.has("inertia")) r.fail(m.find("inertia")->key_node, m.child("inertia"), "inertia requires mass");
    if (m.has("com")) r.fail(m.find("com")->key_node, m.child("com"), "com requires mass");
    return math::SpatialInertia::Zero();
  }
  const double mass = m.number("mass");
  require(mass > 0.0, m, "mass", "must be > 0 kg", mass);
  if (m.has("inertia")) {
    const std::vector<double> i = numbers(r, m.value("inertia"), m.child("inertia"), 6);
    Matrix3 I;
    I << i[0], i[3], i[4], i[3], i[1], i[5], i[4], i[5], i[2];
    const Vector3 com = m.vector3("com", Vector3::Zero());
    try {
      multibody::validate_inertia(mass, I, "[ixx, iyy, izz, ixy, ixz, iyz] about the centre of mass");
    } catch (const std::invalid_argument& e) {
      m.fail("inertia", e.what());
    }
    return math::SpatialInertia::FromCenterOfMass(mass, com, I);
  }
  if (m.has("com"))
    r.fail(m.find("com")->key_node, m.child("com"), "com is only used with an explicit inertia");
  if (b.shapes.empty())
    r.fail(m.node(), m.path(),
           "cannot compute the inertia of body " + in_quotes(b.name) + ": it has no shapes (give shapes or inertia)");
  double volume = 0.0;
  for (const ShapeSpec& s : b.shapes) {
    if (s.shape.type == geometry::ShapeType::kHalfSpace)
      r.fail(s.node, s.path,
             "a half-space has infinite volume: the inertia of body " + in_quotes(b.name) +
                 " cannot come from its shapes (make the body fixed, or give inertia)");
    if (s.shape.type == geometry::ShapeType::kMesh)
      r.fail(s.node, s.path,
             "a mesh with convex: false has no volume: the inertia of body " + in_quotes(b.name) +
                 " cannot come from its shapes (give inertia, or leave out mass)");
    volume += s.shape.volume();
  }
  if (!(volume > 0.0) || !std::isfinite(volume))
    r.fail(m.node(), m.path(), "the shapes of body " + in_quotes(b.name) + " have volume " + util::format_number(volume));
  const double density = mass / volume;
  if (!std::isfinite(density))
    m.fail("mass", "body " + in_quotes(b.name) + ": " + util::format_number(mass) + " kg over its shapes' volume " +
                       util::format_number(volume) + " m^3 gives a density that is not finite in double precision (" +
                       util::format_number(density) + " kg/m^3)");
  math::SpatialInertia I = math::SpatialInertia::Zero();
  try {
    for (const ShapeSpec& s : b.shapes) I += s.X_BG.act(s.shape.mass_properties(density));
  } catch (const std::invalid_argument& e) {  // an inertia that overflows
    m.fail("mass", "body " + in_quotes(b.name) + ": the inertia from its shapes at density " +
                       util::format_number(density) + " kg/m^3: " + e.what());
  }
  return I;
}

BodySpec read_body(const Reader& r, const YAML::Node& node, const std::string& path,
                   const std::string& base_directory, multibody::ModelBuilder& builder) {
  const Map m(r, node, path,
              {"name", "fixed", "mass", "inertia", "com", "shapes", "position", "rpy", "quaternion",
               "linear_velocity", "angular_velocity", "contact", "color", "collision_group", "collision_mask"});
  BodySpec b;
  b.name = m.string("name");
  if (b.name.empty() || b.name == "world")
    m.fail("name", "must be non-empty and not 'world' (the world body), got " + in_quotes(b.name));
  b.fixed = m.boolean("fixed", false);
  b.X_WB = read_pose(r, m);
  for (const char* key : {"linear_velocity", "angular_velocity"})
    if (b.fixed && m.has(key))
      r.fail(m.find(key)->key_node, m.child(key), "a fixed body has no velocity (remove it or set fixed: false)");
  b.v_W = m.vector3("linear_velocity", Vector3::Zero());
  b.w_W = m.vector3("angular_velocity", Vector3::Zero());
  if (m.has("shapes")) {
    const YAML::Node& shapes = m.value("shapes");
    if (!shapes.IsSequence()) r.fail(shapes, m.child("shapes"), "expected a list of shapes, got " + node_text(shapes));
    for (size_t k = 0; k < shapes.size(); ++k)
      b.shapes.push_back(
          read_shape(r, shapes[k], m.child("shapes") + "[" + std::to_string(k) + "]", b.name, base_directory));
  }
  // Shape names are unique within the body (docs/scene-format.md): BODY/NAME names one geometry.
  for (size_t k = 0; k < b.shapes.size(); ++k)
    for (size_t i = 0; i < k; ++i)
      if (!b.shapes[k].name.empty() && b.shapes[k].name == b.shapes[i].name)
        Map(r, b.shapes[k].node, b.shapes[k].path, {})
            .fail("name", "duplicate shape name " + in_quotes(b.shapes[k].name) + " in body " + in_quotes(b.name) +
                              " (also " + b.shapes[i].path + ")");
  for (const ShapeSpec& s : b.shapes) {
    if (!s.triangles_as_given || b.fixed) continue;
    const Map sm(r, s.node, s.path, {});
    sm.fail("convex", "body " + in_quotes(b.name) + ": mesh " + in_quotes(s.shape.mesh_file) +
                          ": convex: false (its triangles as they are, not a solid) is for static geometry only; "
                          "set fixed: true on the body, or use convex: true (the mesh's convex hull)");
  }
  b.material = read_material(r, m);
  b.filter = read_filter(r, m);
  b.rgba = read_color(r, m);
  const math::SpatialInertia inertia = body_inertia(r, m, b);

  JointSpec joint;
  if (b.fixed) {
    joint.type = JointType::kFixed;  // welded at its pose, fused into the world body
    joint.X_PJ = b.X_WB;
  } else {
    joint.name = b.name;
    joint.type = JointType::kFloating;
  }
  if (builder.has_link(b.name)) m.fail("name", "duplicate body name " + in_quotes(b.name));
  try {
    builder.add_link(b.name, "world", joint, inertia);
  } catch (const std::invalid_argument& e) {
    m.fail("name", e.what());
  }
  return b;
}

// ------------------------------------------------------------------------------------------
// Robots

struct ActuatorSpec {
  std::optional<double> kp, kd, target, v_target, effort;
  YAML::Node node;
  std::string path;
};

ActuatorSpec read_actuator(const Reader& r, const YAML::Node& node, const std::string& path) {
  const Map m(r, node, path, {"kp", "kd", "target", "velocity_target", "effort_limit"});
  ActuatorSpec a;
  a.node = node;
  a.path = path;
  auto get = [&](const char* key, Finite finite) -> std::optional<double> {
    if (!m.has(key)) return std::nullopt;
    return m.number(key, {}, finite);
  };
  a.kp = get("kp", Finite::kRequired);
  a.kd = get("kd", Finite::kRequired);
  a.target = get("target", Finite::kRequired);
  a.v_target = get("velocity_target", Finite::kRequired);
  a.effort = get("effort_limit", Finite::kAllowPositiveInfinity);
  if (a.kp) require(*a.kp >= 0.0, m, "kp", "must be >= 0", *a.kp);
  if (a.kd) require(*a.kd >= 0.0, m, "kd", "must be >= 0", *a.kd);
  if (a.effort) require(*a.effort > 0.0, m, "effort_limit", "must be > 0 (or .inf)", *a.effort);
  return a;
}

struct SpringSpec {
  double stiffness = 0.0, damping = 0.0, rest = 0.0;
};

SpringSpec read_spring(const Reader& r, const YAML::Node& node, const std::string& path) {
  const Map m(r, node, path, {"stiffness", "damping", "rest_position"});
  SpringSpec s;
  s.stiffness = m.number("stiffness");
  require(s.stiffness >= 0.0, m, "stiffness", "must be >= 0", s.stiffness);
  s.damping = m.number("damping", 0.0);
  require(s.damping >= 0.0, m, "damping", "must be >= 0", s.damping);
  s.rest = m.number("rest_position", 0.0);
  return s;
}

struct RobotSpec {
  std::string name;  // "" for the first unnamed robot
  std::string prefix;
  std::string urdf_path;  // the URDF or SDF file
  bool floating = false;  // some model of it is attached by a floating joint
  /// Its floating joints and their initial poses: the URDF's root_joint at X_WR, or every free
  /// model of an SDF file at its pose in the file moved by X_WR.
  std::vector<std::pair<std::string, Transform>> floating_bases;
  std::optional<Vector3> sdf_gravity;  // an SDF <world>'s <gravity>
  bool is_sdf = false;                 // one model of a robots[].sdf entry (split_sdf_robot)
  /// robots[].sdf: the file's models (split_sdf_robot makes each its own robot) and the joints of
  /// all of them (a joint key of the entry names one of these).
  std::vector<SdfModelAttachment> sdf_models;
  std::vector<std::string> entry_joints;
  Transform X_WR;
  Vector3 v_W = Vector3::Zero(), w_W = Vector3::Zero();
  bool self_collision = false;
  bool place_on_ground = false;
  Filter filter;
  geometry::ContactMaterial material;
  std::optional<std::array<double, 4>> rgba;
  UrdfAttachment attachment;  // for an MJCF robot: joints, robot_name, root_link, floating_joint filled from it
  std::optional<MjcfAttachment> mjcf;  // robots[].mjcf
  std::optional<Map> map;  // the robot's mapping, for pass 2
};

/// robots[].sdf: every <model> of the SDF file (one model, or the models and includes of a
/// <world>) is added as a tree; the entry's keys apply to all of them. `floating` absent keeps
/// the file's own attachment (a static model welded, a model jointed to the world hanging from
/// it, any other free), true frees every non-static model, false welds every model. The pose
/// (position, rpy/quaternion) moves the whole file. The robot's prefix comes first, then
/// "MODEL/" for the models of a world.
RobotSpec read_sdf_robot(const Reader& r, RobotSpec rs, const std::string& base_directory,
                         multibody::ModelBuilder& builder) {
  const Map& m = *rs.map;
  if (m.has("urdf")) m.fail("sdf", "give either `urdf` or `sdf`, not both");
  const std::string uri = m.string("sdf");
  rs.urdf_path = resolve_model_file(uri, base_directory);
  if (rs.urdf_path.empty())
    m.fail("sdf", "SDF file " + in_quotes(uri) + " not found (looked relative to " + in_quotes(base_directory) +
                      ", then along COULOMB_MODEL_PATH)");
  SdfAttachOptions options;
  if (m.has("floating"))
    options.base = m.boolean("floating", false) ? SdfAttachOptions::Base::kFloating : SdfAttachOptions::Base::kWelded;
  options.prefix = rs.prefix;
  rs.X_WR = read_pose(r, m);
  options.X_W_file = rs.X_WR;
  SdfAttachment sdf;
  try {
    sdf = add_sdf(builder, rs.urdf_path, options);
  } catch (const SdfError& e) {
    m.fail("sdf", e.what());
  }
  for (const SdfModelAttachment& model : sdf.models)
    if (!model.floating_joint.empty()) rs.floating_bases.emplace_back(model.floating_joint, model.X_W_root);
  rs.floating = !rs.floating_bases.empty();
  for (const char* key : {"linear_velocity", "angular_velocity"})
    if (!rs.floating && m.has(key))
      r.fail(m.find(key)->key_node, m.child(key), "only a floating robot has a base velocity (no model of " +
                                                      in_quotes(uri) + " is free; set floating: true)");
  rs.v_W = m.vector3("linear_velocity", Vector3::Zero());
  rs.w_W = m.vector3("angular_velocity", Vector3::Zero());
  rs.self_collision = m.boolean("self_collision", false);
  rs.place_on_ground = m.boolean("place_on_ground", false);
  if (rs.place_on_ground && !rs.floating)
    m.fail("place_on_ground", "no model of " + in_quotes(uri) + " is free (set floating: true)");
  rs.filter = read_filter(r, m);
  rs.material = read_material(r, m);
  rs.rgba = read_color(r, m);
  if (sdf.is_world) rs.sdf_gravity = sdf.gravity;
  rs.attachment.robot_name = sdf.name;
  rs.attachment.warnings = std::move(sdf.warnings);
  rs.attachment.notes = std::move(sdf.notes);
  rs.entry_joints = std::move(sdf.joints);
  rs.sdf_models = std::move(sdf.models);
  return rs;
}

RobotSpec read_robot(const Reader& r, const YAML::Node& node, const std::string& path, int index,
                     bool& unnamed_taken, std::set<std::string>& robot_names, const std::string& base_directory,
                     multibody::ModelBuilder& builder) {
  RobotSpec rs;
  rs.map.emplace(r, node, path,
                 std::initializer_list<const char*>{"name", "urdf", "mjcf", "sdf", "floating", "position", "rpy", "quaternion",
                                                    "linear_velocity", "angular_velocity", "joint_positions",
                                                    "joint_velocities", "actuators", "springs", "self_collision",
                                                    "collision_group", "collision_mask", "contact", "color",
                                                    "place_on_ground"});
  const Map& m = *rs.map;
  if (m.has("name")) {
    rs.name = m.string("name");
    if (rs.name.empty() || rs.name.find('/') != std::string::npos || rs.name == "world")
      m.fail("name", "must be non-empty, contain no '/' and not be 'world', got " + in_quotes(rs.name));
  } else if (!unnamed_taken) {
    unnamed_taken = true;
  } else {
    rs.name = "robot" + std::to_string(index);
  }
  if (!rs.name.empty() && !robot_names.insert(rs.name).second)
    m.fail("name", "duplicate robot name " + in_quotes(rs.name));
  rs.prefix = rs.name.empty() ? "" : rs.name + "/";

  {
    int files = 0;
    for (const char* key : {"urdf", "mjcf", "sdf"}) files += m.has(key) ? 1 : 0;
    if (files > 1) m.fail(m.has("sdf") ? "sdf" : "mjcf", "a robot has one of 'urdf', 'mjcf' and 'sdf', not several");
  }
  // robots[].sdf: an SDFormat model or world (read_sdf_robot); otherwise a URDF or an MJCF.
  if (m.has("sdf")) return read_sdf_robot(r, std::move(rs), base_directory, builder);
  const bool is_mjcf = m.has("mjcf");
  const char* file_key = is_mjcf ? "mjcf" : "urdf";
  const std::string uri = m.string(file_key);
  rs.urdf_path = resolve_model_file(uri, base_directory);
  if (rs.urdf_path.empty())
    m.fail(file_key, std::string(is_mjcf ? "MJCF" : "URDF") + " file " + in_quotes(uri) +
                         " not found (looked relative to " + in_quotes(base_directory) + ", then along COULOMB_MODEL_PATH)");
  if (is_mjcf && m.has("floating"))
    m.fail("floating", "an MJCF robot floats where its file has a free joint; 'floating' is for URDF robots");
  if (is_mjcf) {
    // Floating when the file has a free joint: peek at the file (a builder of its own).
    multibody::ModelBuilder peek("peek");
    try {
      rs.floating = !add_mjcf(peek, rs.urdf_path, {}).free_joints.empty();
    } catch (const MjcfError& e) {
      m.fail("mjcf", e.what());
    }
  } else {
    rs.floating = m.boolean("floating", false);
  }
  rs.X_WR = read_pose(r, m);
  for (const char* key : {"linear_velocity", "angular_velocity"})
    if (!rs.floating && m.has(key))
      r.fail(m.find(key)->key_node, m.child(key), "only a floating robot has a base velocity (set floating: true)");
  rs.v_W = m.vector3("linear_velocity", Vector3::Zero());
  rs.w_W = m.vector3("angular_velocity", Vector3::Zero());
  rs.self_collision = m.boolean("self_collision", false);
  rs.place_on_ground = m.boolean("place_on_ground", false);
  if (rs.place_on_ground && !rs.floating)
    m.fail("place_on_ground", "only a floating robot can be placed on the ground (set floating: true); a welded "
                              "robot's base is where `position` puts it");
  rs.filter = read_filter(r, m);
  rs.material = read_material(r, m);
  rs.rgba = read_color(r, m);

  if (is_mjcf) {
    MjcfAttachOptions options;
    options.prefix = rs.prefix;
    options.X_W_root = rs.X_WR;
    try {
      rs.mjcf = add_mjcf(builder, rs.urdf_path, options);
    } catch (const MjcfError& e) {
      m.fail("mjcf", e.what());
    }
    // What the URDF code paths below read.
    rs.attachment.robot_name = rs.mjcf->model_name;
    rs.attachment.root_link = rs.mjcf->bodies.empty() ? "world" : rs.mjcf->bodies.front();
    if (!rs.mjcf->free_joints.empty()) rs.attachment.floating_joint = rs.mjcf->free_joints.front();
    for (const MjcfJoint& j : rs.mjcf->joints) rs.attachment.joints.push_back(j.name);
    rs.attachment.warnings = rs.mjcf->warnings;
    // MuJoCo collides the bodies of one model with each other (parent–child pairs excluded).
    if (!m.has("self_collision")) rs.self_collision = true;
    return rs;
  }
  UrdfAttachOptions options;
  options.floating = rs.floating;
  options.floating_joint_name = rs.prefix + "root_joint";
  options.prefix = rs.prefix;
  options.X_W_root = rs.X_WR;
  try {
    rs.attachment = add_urdf(builder, rs.urdf_path, options);
  } catch (const UrdfError& e) {
    m.fail("urdf", e.what());
  }
  if (rs.floating) rs.floating_bases.emplace_back(rs.attachment.floating_joint, rs.X_WR);
  return rs;
}

/// An SDF entry becomes one robot per <model> (so that its models collide with each other, as
/// separate robots do, and each free model has its own base); the entry's keys apply to each.
/// Its joint keys keep naming joints relative to the entry's prefix (rs.prefix). A URDF entry
/// is passed on as it is.
void split_sdf_robot(RobotSpec rs, std::vector<RobotSpec>& robots) {
  if (rs.sdf_models.empty()) {
    robots.push_back(std::move(rs));
    return;
  }
  std::vector<SdfModelAttachment> models = std::move(rs.sdf_models);
  for (size_t k = 0; k < models.size(); ++k) {
    SdfModelAttachment& model = models[k];
    RobotSpec one = rs;
    one.is_sdf = true;
    // The robot's name: its prefix without the trailing '/' ("" for a lone unnamed model file).
    one.name = model.prefix.empty() ? "" : model.prefix.substr(0, model.prefix.size() - 1);
    one.floating_bases.clear();
    if (!model.floating_joint.empty()) one.floating_bases.emplace_back(model.floating_joint, model.X_W_root);
    one.floating = !one.floating_bases.empty();
    one.place_on_ground = rs.place_on_ground && one.floating;
    if (k > 0) one.sdf_gravity.reset();  // warned once
    UrdfAttachment& a = one.attachment;
    a.robot_name = model.name;
    a.root_link = model.root_link;
    a.floating_joint = model.floating_joint;
    a.joints = std::move(model.joints);
    a.collisions = std::move(model.collisions);
    a.colors = std::move(model.colors);
    a.visuals = std::move(model.visuals);
    if (k > 0) {
      a.warnings.clear();
      a.notes.clear();
    }
    robots.push_back(std::move(one));
  }
}

/// True when `key` of a joint map names a joint of another model of the robot's SDF entry
/// (that model's robot reads it).
bool sibling_joint(const RobotSpec& rs, const std::string& key) {
  auto in = [&](const std::vector<std::string>& joints, const std::string& name) {
    return std::find(joints.begin(), joints.end(), name) != joints.end();
  };
  for (const std::string& name : {rs.prefix + key, key})
    if (!in(rs.attachment.joints, name) && in(rs.entry_joints, name)) return true;
  return false;
}

/// Looks up a joint named in a robot's joint map: KEY as written in the URDF (the robot's
/// prefix is added) or already prefixed. Returns the Model body index of a 1-dof joint; fails
/// naming the key otherwise.
int robot_joint(const Reader& r, const RobotSpec& rs, const multibody::Model& model, const Entry& e,
                const std::string& path, bool allow_ball = false) {
  auto is_robot_joint = [&](const std::string& name) {
    return std::find(rs.attachment.joints.begin(), rs.attachment.joints.end(), name) != rs.attachment.joints.end();
  };
  std::string name = rs.prefix + e.key;
  if (!is_robot_joint(name) && !rs.prefix.empty() && e.key.rfind(rs.prefix, 0) == 0 && is_robot_joint(e.key))
    name = e.key;
  std::vector<std::string> movable;
  for (const std::string& j : rs.attachment.joints) {
    const int b = model.joint_body(j);
    if (b >= 1 && model.body(b).joint.nv == 1) movable.push_back(j.substr(rs.prefix.size()));
  }
  if (!is_robot_joint(name))
    r.fail(e.key_node, path + "." + e.key,
           "unknown joint " + in_quotes(e.key) + " in " + in_quotes(rs.attachment.robot_name) + " (its 1-dof joints: " +
               join(movable) + ")");
  const int b = model.joint_body(name);
  if (b < 1)
    r.fail(e.key_node, path + "." + e.key, "joint " + in_quotes(e.key) + " is a fixed joint (it has no coordinate)");
  if (allow_ball && model.body(b).joint.type == JointType::kBall) return b;
  if (model.body(b).joint.nv != 1)
    r.fail(e.key_node, path + "." + e.key,
           "joint " + in_quotes(e.key) + " is a " + multibody::joint_type_name(model.body(b).joint.type) +
               " joint; only 1-dof (revolute, continuous, prismatic) joints are allowed here");
  return b;
}

/// Writes a floating joint's q (position, quaternion w x y z) and v ([ω_W; v_W], the world-frame
/// angular velocity and velocity of the body origin: a free body's joint frame is the world).
void set_floating_state(const multibody::Model& model, const std::string& joint, const Transform& X_WB,
                        const Vector3& v_W, const Vector3& w_W, Eigen::VectorXd& q, Eigen::VectorXd& v) {
  const multibody::Joint& j = model.body(model.joint_body(joint)).joint;
  const math::Quaternion quat(X_WB.R);
  q.segment<3>(j.q_index) = X_WB.p;
  q[j.q_index + 3] = quat.w();
  q[j.q_index + 4] = quat.x();
  q[j.q_index + 5] = quat.y();
  q[j.q_index + 6] = quat.z();
  v.segment<3>(j.v_index) = w_W;
  v.segment<3>(j.v_index + 3) = v_W;
}

/// A unique geometry name: `name`, or name#2, name#3, … if taken.
std::string unique_name(const std::string& name, std::unordered_set<std::string>& taken) {
  std::string out = name;
  for (int k = 2; !taken.insert(out).second; ++k) out = name + "#" + std::to_string(k);
  return out;
}


// ------------------------------------------------------------------------------------------
// Bilateral constraints (`constraints:`), resolved on the built Model at q0

/// A body or link name (scene body, robot link, or `world`) → its Model body and the link
/// frame's pose in that body (a link fused into its parent body by a fixed joint is a frame).
std::pair<int, Transform> constraint_body(const Map& m, const std::string& key, const multibody::Model& model) {
  const std::string name = m.string(key);
  int f = -1;
  try {
    f = model.frame_index(name);
  } catch (const std::out_of_range&) {
    std::vector<std::string> names;
    for (const multibody::Frame& frame : model.frames()) names.push_back(frame.name);
    if (names.size() > 25) {
      names.resize(25);
      names.push_back("…");
    }
    m.fail(key, "unknown body " + in_quotes(name) + " (expected a scene body, a robot link or 'world': " + join(names) + ")");
  }
  const multibody::Frame& frame = model.frame(f);
  return {frame.body, frame.X_BF};
}

/// A pose block {position, rpy | quaternion} under `key`, identity when absent.
Transform constraint_frame(const Reader& r, const Map& m, const std::string& key) {
  if (!m.has(key)) return Transform();
  const Map fm(r, m.value(key), m.child(key), {"position", "rpy", "quaternion"});
  return read_pose(r, fm);
}

void read_constraints(const Reader& r, const YAML::Node& list, Scene& scene) {
  if (list.IsNull()) return;
  if (!list.IsSequence()) r.fail(list, "constraints", "expected a list of constraints, got " + node_text(list));
  const multibody::Model& model = scene.model;
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0);
  std::set<std::string> names;
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string path = "constraints[" + std::to_string(k) + "]";
    const Map m(r, list[k], path,
                {"name", "type", "joint_type", "body_a", "body_b", "point_a", "point_b", "frame_a", "frame_b", "axis",
                 "length", "stiffness", "damping", "dissipation_time"});
    scene::BilateralConstraint c;
    c.name = m.string("name", path);
    if (c.name.empty()) m.fail("name", "must be non-empty");
    if (!names.insert(c.name).second) m.fail("name", "duplicate constraint name " + in_quotes(c.name));
    const std::string type = m.string("type");
    if (type == "ball") c.type = scene::BilateralType::kBall;
    else if (type == "weld") c.type = scene::BilateralType::kWeld;
    else if (type == "distance") c.type = scene::BilateralType::kDistance;
    else if (type == "joint") c.type = scene::BilateralType::kRevolute;
    else m.fail("type", "unknown constraint type " + in_quotes(type) + " (expected one of: ball, weld, distance, joint)");
    const bool joint = type == "joint", points = type == "ball" || type == "distance";
    if (joint) {
      const std::string jt = m.string("joint_type");
      if (jt == "revolute") c.type = scene::BilateralType::kRevolute;
      else if (jt == "prismatic") c.type = scene::BilateralType::kPrismatic;
      else m.fail("joint_type", "unknown joint type " + in_quotes(jt) + " (expected one of: revolute, prismatic)");
    }
    // Keys that do not belong to this type.
    auto reject = [&](const char* key, const std::string& why) {
      if (m.has(key)) r.fail(m.find(key)->key_node, m.child(key), "not used by a " + type + " constraint (" + why + ")");
    };
    if (!joint) reject("joint_type", "only a joint has a joint_type");
    if (!joint) reject("axis", "only a joint has an axis");
    if (type != "distance") reject("length", "only a distance constraint has a length");
    if (points) {
      reject("frame_a", "give point_a");
      reject("frame_b", "give point_b");
    } else {
      reject("point_a", "give frame_a");
      reject("point_b", "give frame_b");
    }
    Transform X_A, X_B;  // link frames in their bodies
    std::tie(c.body_a, X_A) = constraint_body(m, "body_a", model);
    std::tie(c.body_b, X_B) = constraint_body(m, "body_b", model);
    if (c.body_a == c.body_b)
      m.fail("body_b", "body_a " + in_quotes(m.string("body_a")) + " and body_b " + in_quotes(m.string("body_b")) +
                           " are the same rigid body " + in_quotes(model.body(c.body_a).name) +
                           " (links joined by fixed joints, or both fixed to the world)");
    // F on A as given; M on B as given, or where F is at q0.
    Transform X_LF, X_LM;  // in the named links' frames
    if (points) X_LF.p = m.vector3("point_a", Vector3::Zero());
    else X_LF = constraint_frame(r, m, "frame_a");
    c.X_AF = X_A * X_LF;
    const Transform X_WF = ws.X_WB[c.body_a] * c.X_AF;
    const std::string b_key = points ? "point_b" : "frame_b";
    if (m.has(b_key)) {
      if (points) X_LM.p = m.vector3("point_b", Vector3::Zero());
      else X_LM = constraint_frame(r, m, "frame_b");
      c.X_BM = X_B * X_LM;
    } else if (type == "distance") {
      c.X_BM = X_B;  // the link's origin
    } else {
      c.X_BM = ws.X_WB[c.body_b].inverse() * X_WF;  // coincides with F at q0
    }
    if (joint) {
      const Vector3 axis = m.vector3("axis", Vector3::UnitZ());
      if (!(axis.norm() > 1e-12)) m.fail("axis", "must be a non-zero vector, got [0, 0, 0]");
      c.axis_F = axis.normalized();
    }
    if (type == "distance") {
      const double d0 = (ws.X_WB[c.body_b].act(c.X_BM.p) - X_WF.p).norm();
      c.length = m.number("length", d0);
      if (m.has("length")) require(c.length > 0.0, m, "length", "must be > 0 m", c.length);
      else if (!(c.length > 0.0))
        r.fail(m.node(), m.path(), "the two points coincide at the initial configuration: give length > 0");
    }
    c.stiffness = m.number("stiffness", kInf, Finite::kAllowPositiveInfinity);
    require(c.stiffness > 0.0, m, "stiffness", "must be > 0 (N/m, N·m/rad on rotational rows) or .inf", c.stiffness);
    if (m.has("damping") && m.has("dissipation_time"))
      r.fail(m.find("dissipation_time")->key_node, m.child("dissipation_time"), "give either damping or dissipation_time, not both");
    for (const char* key : {"damping", "dissipation_time"})
      if (m.has(key) && !std::isfinite(c.stiffness))
        r.fail(m.find(key)->key_node, m.child(key),
               "needs a finite stiffness (a rigid constraint is damped by the solver's near-rigid rule)");
    if (m.has("damping")) {
      c.damping = m.number("damping");
      require(c.damping >= 0.0, m, "damping", "must be >= 0 (N·s/m, N·m·s/rad on rotational rows)", c.damping);
    }
    if (m.has("dissipation_time")) {
      const double tau = m.number("dissipation_time");
      require(tau >= 0.0, m, "dissipation_time", "must be >= 0 s", tau);
      c.damping = tau * c.stiffness;
    }
    scene.constraints.push_back(c);
  }
}
}  // namespace

/// An MJCF's actuators and joint springs, before the scene's own (which replace them per joint):
/// <motor> → a pure-force actuator (kp = kd = 0; commands set its force gear · ctrl), <position>
/// → a PD actuator with kp = gear² · kp and set-point 0 (MuJoCo's ctrl = 0 at the start, a
/// set-point ctrl / gear); the effort limit is gear · forcerange (forcelimited) or
/// gear · ctrlrange for a motor (ctrllimited). Joint stiffness → a spring about springref.
void add_mjcf_forces(const MjcfAttachment& mjcf, const multibody::Model& model, std::map<int, Actuator>& actuators,
                     std::map<int, JointSpring>& springs, std::vector<std::string>& warnings) {
  for (const MjcfActuator& act : mjcf.actuators) {
    const multibody::Joint& j = model.body(model.joint_body(act.joint)).joint;
    Actuator a;
    a.joint = j.name;
    a.q_index = j.q_index;
    a.v_index = j.v_index;
    const double gear = std::abs(act.gear);
    if (act.type == MjcfActuator::Type::kPosition) a.kp = act.kp * act.gear * act.gear;
    double limit = kInf;
    if (act.forcelimited) limit = gear * std::max(std::abs(act.force_lower), std::abs(act.force_upper));
    if (act.type == MjcfActuator::Type::kMotor && act.ctrllimited)
      limit = std::min(limit, gear * std::max(std::abs(act.ctrl_lower), std::abs(act.ctrl_upper)));
    a.effort_limit = limit;
    if (actuators.count(a.v_index))
      warnings.push_back(mjcf.model_name + ": line " + std::to_string(act.line) + ": a second actuator on joint " +
                         in_quotes(j.name) + " (coulomb has one per joint), ignored");
    else
      actuators[a.v_index] = a;
  }
  for (const MjcfJoint& mj : mjcf.joints) {
    if (!(mj.stiffness > 0.0)) continue;
    const multibody::Joint& j = model.body(model.joint_body(mj.name)).joint;
    springs[j.v_index] = JointSpring{j.name, j.q_index, j.v_index, mj.stiffness, 0.0, mj.springref};
  }
}

/// An MJCF's geoms as scene geometries: friction → μ (unless the robot's `contact` sets it),
/// contype/conaffinity → group/mask (unless the robot sets collision_group/collision_mask; a geom
/// with both 0 is visual only and left out), excluded pairs → the collision options.
void add_mjcf_geometries(const RobotSpec& rs, const Map& m, int robot_id, const multibody::Model& model, Scene& scene,
                         std::unordered_set<std::string>& geometry_names) {
  const MjcfAttachment& mjcf = *rs.mjcf;
  std::map<std::string, int> per_link;
  bool asymmetric = false;
  for (const MjcfGeom& mg : mjcf.geoms) {
    const int k = per_link[mg.link]++;
    if (mg.contype == 0 && mg.conaffinity == 0 && !m.has("collision_group") && !m.has("collision_mask")) continue;
    if (mg.contype != mg.conaffinity) asymmetric = true;
    const multibody::Frame& frame = model.frame(model.frame_index(mg.link));
    geometry::Geometry g;
    const std::string base = mg.link == "world" ? rs.prefix + "world" : mg.link;
    g.name = unique_name(mg.name.empty() ? base + "/geom" + std::to_string(k) : mg.name, geometry_names);
    g.body = frame.body;
    g.X_BG = frame.X_BF * mg.X_LG;
    g.shape = mg.shape;
    g.material = rs.material;
    if (!g.material.mu) g.material.mu = mg.mu;
    g.group = m.has("collision_group") ? rs.filter.group : static_cast<std::uint32_t>(mg.contype);
    g.mask = m.has("collision_mask") ? rs.filter.mask : static_cast<std::uint32_t>(mg.conaffinity);
    // Worldbody geoms (a floor) are static scenery: they collide with the robot even when its
    // self-collision is off.
    g.robot = g.body == 0 ? -1 : robot_id;
    g.self_collision = rs.self_collision;
    g.rgba = rs.rgba ? *rs.rgba : mg.rgba;
    scene.geometries.push_back(std::move(g));
  }
  if (asymmetric)
    scene.warnings.push_back(rs.urdf_path + ": geoms with contype != conaffinity: coulomb collides two geoms when "
                             "each one's contype matches the other's conaffinity (MuJoCo: when either does)");
  for (const auto& [a, b] : mjcf.excluded_pairs)
    scene.collision.excluded_body_pairs.emplace_back(model.frame(model.frame_index(a)).body,
                                                     model.frame(model.frame_index(b)).body);
}

/// An MJCF's <equality> connect (ball) and weld constraints, rigid, with their second frame taken
/// where the first is at q0 (MuJoCo's connect/weld without relpose).
void add_mjcf_equalities(const RobotSpec& rs, const multibody::Model& model, Scene& scene) {
  if (rs.mjcf->equalities.empty()) return;
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0);
  for (const MjcfEquality& eq : rs.mjcf->equalities) {
    const multibody::Frame& f1 = model.frame(model.frame_index(eq.body1));
    const multibody::Frame& f2 = model.frame(model.frame_index(eq.body2));
    const std::string where = rs.urdf_path + ":" + std::to_string(eq.line);
    if (f1.body == f2.body)
      throw SceneError(where + ": <equality> between " + in_quotes(eq.body1) + " and " + in_quotes(eq.body2) +
                       ", which are one rigid body");
    scene::BilateralConstraint c;
    c.name = eq.name.empty() ? rs.prefix + "equality" + std::to_string(eq.line) : eq.name;
    c.type = eq.type == MjcfEquality::Type::kConnect ? scene::BilateralType::kBall : scene::BilateralType::kWeld;
    c.body_a = f1.body;
    c.body_b = f2.body;
    c.X_AF = f1.X_BF * Transform(Matrix3::Identity(), eq.anchor);
    c.X_BM = ws.X_WB[f2.body].inverse() * ws.X_WB[f1.body] * c.X_AF;
    scene.constraints.push_back(c);
  }
}

Scene parse_scene(const std::string& yaml, const std::string& source_name, const std::string& base_directory) {
  const Reader r(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    r.fail_line(e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    r.fail_line(0, "", std::string("YAML error: ") + e.what());
  }
  if (!root.IsDefined() || root.IsNull()) r.fail_line(0, "", "the scene is empty");

  Scene scene;
  scene.source = source_name;
  const Map top(r, root, "",
                {"description", "time_step", "duration", "gravity", "solver", "lstable_friction", "integrator", "contact_approximation", "contact",
                 "collision", "bodies", "robots", "constraints"});
  scene.description = top.string("description", "");
  scene.time_step = top.number("time_step", scene.time_step);
  require(scene.time_step > 0.0, top, "time_step", "must be > 0 s", scene.time_step);
  scene.duration = top.number("duration", scene.duration);
  require(scene.duration > 0.0, top, "duration", "must be > 0 s", scene.duration);
  const Vector3 gravity = top.vector3("gravity", Vector3(0.0, 0.0, -9.81));
  scene.solver = top.string("solver", scene.solver);
  if (scene.solver != "sap" && scene.solver != "lstable")
    top.fail("solver", "unknown solver " + in_quotes(scene.solver) + " (expected one of: sap, lstable)");
  scene.lstable_friction = top.string("lstable_friction", scene.lstable_friction);
  if (scene.lstable_friction != "staggered" && scene.lstable_friction != "cone")
    top.fail("lstable_friction",
             "unknown friction model " + in_quotes(scene.lstable_friction) + " (expected one of: staggered, cone)");
  scene.integrator = top.string("integrator", scene.integrator);
  if (scene.integrator != "implicit-euler" && scene.integrator != "symplectic-euler" &&
      scene.integrator != "midpoint")
    top.fail("integrator", "unknown integrator " + in_quotes(scene.integrator) +
                               " (expected one of: implicit-euler, symplectic-euler, midpoint)");
  if (top.has("contact_approximation")) {
    const std::string approximation = top.string("contact_approximation", "sap");
    if (approximation != "sap" && approximation != "similar" && approximation != "lagged")
      top.fail("contact_approximation", "unknown contact approximation " + in_quotes(approximation) +
                                            " (expected one of: sap, similar, lagged)");
    scene.contact.approximation = contact::parse_contact_approximation(approximation);
  }
  if (top.has("contact")) {
    const Map c(r, top.value("contact"), "contact",
                {"mu", "stiffness", "dissipation_time", "hunt_crossley_dissipation", "stiction_tolerance"});
    scene.contact.mu = c.number("mu", scene.contact.mu);
    require(scene.contact.mu >= 0.0, c, "mu", "must be >= 0", scene.contact.mu);
    scene.contact.stiffness = c.number("stiffness", scene.contact.stiffness);
    require(scene.contact.stiffness > 0.0, c, "stiffness", "must be > 0 N/m", scene.contact.stiffness);
    scene.contact.dissipation_time = c.number("dissipation_time", scene.contact.dissipation_time);
    require(scene.contact.dissipation_time >= 0.0, c, "dissipation_time", "must be >= 0 s",
            scene.contact.dissipation_time);
    scene.contact.hunt_crossley_dissipation = c.number("hunt_crossley_dissipation", scene.contact.hunt_crossley_dissipation);
    require(scene.contact.hunt_crossley_dissipation >= 0.0, c, "hunt_crossley_dissipation", "must be >= 0 s/m",
            scene.contact.hunt_crossley_dissipation);
    scene.contact.stiction_tolerance = c.number("stiction_tolerance", scene.contact.stiction_tolerance);
    require(scene.contact.stiction_tolerance > 0.0, c, "stiction_tolerance", "must be > 0 m/s",
            scene.contact.stiction_tolerance);
  }
  if (top.has("collision")) {
    const Map c(r, top.value("collision"), "collision", {"margin", "speculative"});
    scene.collision.margin = c.number("margin", scene.collision.margin);
    scene.collision.speculative = c.boolean("speculative", scene.collision.speculative);
    require(scene.collision.margin >= 0.0, c, "margin", "must be >= 0 m", scene.collision.margin);
  }

  // Pass 1: bodies, then robots, into one builder.
  std::string model_name = fs::path(source_name).stem().string();
  if (model_name.empty()) model_name = "scene";
  multibody::ModelBuilder builder(model_name);
  std::vector<BodySpec> bodies;
  if (top.has("bodies")) {
    const YAML::Node& list = top.value("bodies");
    if (!list.IsSequence() && !list.IsNull())
      r.fail(list, "bodies", "expected a list of bodies, got " + node_text(list));
    for (size_t k = 0; k < list.size(); ++k)
      bodies.push_back(read_body(r, list[k], "bodies[" + std::to_string(k) + "]", base_directory, builder));
  }
  std::vector<RobotSpec> robots;
  if (top.has("robots")) {
    const YAML::Node& list = top.value("robots");
    if (!list.IsSequence() && !list.IsNull())
      r.fail(list, "robots", "expected a list of robots, got " + node_text(list));
    bool unnamed_taken = false;
    std::set<std::string> robot_names;
    for (size_t k = 0; k < list.size(); ++k)
      split_sdf_robot(read_robot(r, list[k], "robots[" + std::to_string(k) + "]", static_cast<int>(k), unnamed_taken,
                                 robot_names, base_directory, builder),
                      robots);
  }

  // An MJCF's <option timestep gravity> where the scene sets none (the first MJCF robot's).
  Vector3 scene_gravity = gravity;
  for (const RobotSpec& rs : robots) {
    if (!rs.mjcf) continue;
    if (!top.has("time_step") && rs.mjcf->timestep) scene.time_step = *rs.mjcf->timestep;
    if (!top.has("gravity") && rs.mjcf->gravity) scene_gravity = *rs.mjcf->gravity;
    // MuJoCo's contact is a convex soft constraint; of coulomb's approximations SAP's own is the
    // one built on the same convex formulation (Castro et al. 2022), so an MJCF scene uses it
    // unless the scene chooses (the humanoid's fall follows MuJoCo's with it, see
    // tests/oracle/mjcf_oracle_test.cc).
    if (!top.has("contact_approximation")) scene.contact.approximation = contact::ContactApproximation::kSap;
    break;
  }

  // Pass 2: on the built Model.
  scene.model = builder.build();
  scene.model.set_gravity(scene_gravity);
  const multibody::Model& model = scene.model;
  scene.q0 = model.neutral_configuration();
  scene.v0 = Eigen::VectorXd::Zero(model.nv());
  std::unordered_set<std::string> geometry_names;

  for (const BodySpec& b : bodies) {
    if (!b.fixed) set_floating_state(model, b.name, b.X_WB, b.v_W, b.w_W, scene.q0, scene.v0);
    const multibody::Frame& frame = model.frame(model.frame_index(b.name));
    for (size_t k = 0; k < b.shapes.size(); ++k) {
      const ShapeSpec& s = b.shapes[k];
      geometry::Geometry g;
      g.name = unique_name(b.name + "/" + (s.name.empty() ? "shape" + std::to_string(k) : s.name), geometry_names);
      g.body = frame.body;
      g.X_BG = frame.X_BF * s.X_BG;
      g.shape = s.shape;
      g.material = b.material;
      g.group = b.filter.group;
      g.mask = b.filter.mask;
      if (s.rgba)
        g.rgba = *s.rgba;
      else if (b.rgba)
        g.rgba = *b.rgba;
      scene.geometries.push_back(std::move(g));
    }
  }

  std::map<int, Actuator> actuators;   // by v_index
  std::map<int, JointSpring> springs;  // by v_index
  for (size_t ri = 0; ri < robots.size(); ++ri) {
    RobotSpec& rs = robots[ri];
    const Map& m = *rs.map;
    SceneRobot robot;
    robot.name = rs.name;
    robot.urdf_path = rs.urdf_path;
    robot.floating = rs.floating;
    robot.floating_joint = rs.attachment.floating_joint;
    robot.id = static_cast<int>(ri);
    robot.warnings = rs.attachment.warnings;
    robot.notes = rs.attachment.notes;
    robot.root_link = rs.attachment.root_link;
    robot.robot_name = rs.attachment.robot_name;
    robot.joints = rs.attachment.joints;
    robot.model_format = rs.mjcf ? "mjcf" : rs.is_sdf ? "sdf" : "urdf";
    if (rs.mjcf) {
      // MuJoCo's qpos0: free bodies where the file puts them (moved by the robot's pose), the
      // root free joint with the robot's velocities; hinge and slide joints at their `ref`.
      for (const MjcfJoint& j : rs.mjcf->joints) {
        const int b = model.joint_body(j.name);
        if (j.type == "free") {
          const bool root = j.name == rs.attachment.floating_joint;
          set_floating_state(model, j.name, j.X_W_initial, root ? rs.v_W : Vector3::Zero(),
                             root ? rs.w_W : Vector3::Zero(), scene.q0, scene.v0);
        } else if (b >= 1 && model.body(b).joint.nq == 1) {  // hinge, slide (a ball joint starts at identity)
          scene.q0[model.body(b).joint.q_index] = j.ref;
        }
      }
      if (rs.floating) robot.root_body = model.joint_body(rs.attachment.floating_joint);
    } else {
      if (rs.floating) robot.root_body = model.joint_body(rs.attachment.floating_joint);
      for (const auto& [joint, X_WB] : rs.floating_bases)
        set_floating_state(model, joint, X_WB, rs.v_W, rs.w_W, scene.q0, scene.v0);
    }
    if (rs.sdf_gravity && (*rs.sdf_gravity - scene_gravity).norm() > 0.0)
      robot.warnings.push_back(r.where(m.node()) + ": " + m.path() + ": the SDF world's <gravity> (" +
                               util::format_number(rs.sdf_gravity->x()) + ", " + util::format_number(rs.sdf_gravity->y()) +
                               ", " + util::format_number(rs.sdf_gravity->z()) +
                               ") is not used: the scene's `gravity` applies");

    // Initial joint positions and velocities.
    std::set<int> explicit_q;
    for (const char* key : {"joint_positions", "joint_velocities"}) {
      if (!m.has(key)) continue;
      const Map jm(r, m.value(key), m.child(key), {});
      for (const Entry& e : jm.entries()) {
        if (sibling_joint(rs, e.key)) continue;
        const multibody::Joint& j = model.body(robot_joint(r, rs, model, e, jm.path(), true)).joint;
        if (j.type == JointType::kBall) {
          // A ball joint: its quaternion [w, x, y, z] (normalized; not zero) or its angular
          // velocity [wx, wy, wz] (rad/s, in the joint frame).
          if (std::strcmp(key, "joint_positions") == 0) {
            const std::vector<double> quat = numbers(r, e.value, jm.child(e.key), 4);
            const Eigen::Vector4d qv(quat[0], quat[1], quat[2], quat[3]);
            if (!(qv.norm() > 1e-12))
              r.fail(e.value, jm.child(e.key), "the quaternion [w, x, y, z] of ball joint " + in_quotes(e.key) + " is zero");
            scene.q0.segment<4>(j.q_index) = qv.normalized();
          } else {
            const std::vector<double> w = numbers(r, e.value, jm.child(e.key), 3);
            scene.v0.segment<3>(j.v_index) = Vector3(w[0], w[1], w[2]);
          }
          continue;
        }
        const double x = number(r, e.value, jm.child(e.key));
        if (std::strcmp(key, "joint_positions") == 0) {
          scene.q0[j.q_index] = x;
          explicit_q.insert(j.q_index);
        } else {
          scene.v0[j.v_index] = x;
        }
      }
    }
    std::vector<int> robot_joints;  // body indices of the robot's 1-dof joints, in model order
    for (const std::string& name : rs.attachment.joints) {
      const int b = model.joint_body(name);
      if (b >= 1 && model.body(b).joint.nv == 1) robot_joints.push_back(b);
    }
    std::sort(robot_joints.begin(), robot_joints.end());
    for (int b : robot_joints) {
      const multibody::Joint& j = model.body(b).joint;
      const double x = scene.q0[j.q_index];
      if (x < j.limits.lower || x > j.limits.upper)
        robot.warnings.push_back(r.where(m.node()) + ": " + m.path() + ": initial position " + util::format_number(x) +
                                 " of joint " + in_quotes(j.name) + (explicit_q.count(j.q_index) ? "" : " (default)") +
                                 " is outside its limits [" + util::format_number(j.limits.lower) + ", " + util::format_number(j.limits.upper) + "]");
    }

    if (rs.mjcf) add_mjcf_forces(*rs.mjcf, model, actuators, springs, robot.warnings);

    // Actuators: "all" for every 1-dof joint, overlaid field by field by the joint's own entry.
    if (m.has("actuators")) {
      const Map am(r, m.value("actuators"), m.child("actuators"), {});
      std::optional<ActuatorSpec> all;
      std::map<int, ActuatorSpec> by_body;
      for (const Entry& e : am.entries()) {
        if (e.key == "all") {
          all = read_actuator(r, e.value, am.child(e.key));
          continue;
        }
        if (sibling_joint(rs, e.key)) continue;
        const int b = robot_joint(r, rs, model, e, am.path());
        by_body[b] = read_actuator(r, e.value, am.child(e.key));
      }
      for (int b : robot_joints) {
        const auto own = by_body.find(b);
        if (!all && own == by_body.end()) continue;
        const ActuatorSpec* s = own != by_body.end() ? &own->second : &*all;
        auto pick = [&](std::optional<double> ActuatorSpec::*field) -> std::optional<double> {
          if (own != by_body.end() && (own->second.*field)) return own->second.*field;
          if (all && ((*all).*field)) return (*all).*field;
          return std::nullopt;
        };
        const multibody::Joint& j = model.body(b).joint;
        Actuator a;
        a.joint = j.name;
        a.q_index = j.q_index;
        a.v_index = j.v_index;
        const std::optional<double> kp = pick(&ActuatorSpec::kp);
        if (!kp) r.fail(s->node, s->path, "missing required key 'kp'");
        a.kp = *kp;
        a.kd = pick(&ActuatorSpec::kd).value_or(0.0);
        a.q_target = pick(&ActuatorSpec::target).value_or(scene.q0[j.q_index]);
        a.v_target = pick(&ActuatorSpec::v_target).value_or(0.0);
        if (const std::optional<double> effort = pick(&ActuatorSpec::effort)) {
          a.effort_limit = *effort;
        } else if (j.limits.effort > 0.0) {
          a.effort_limit = j.limits.effort;
        } else {
          a.effort_limit = kInf;
          robot.warnings.push_back(r.where(s->node) + ": " + s->path + ": joint " + in_quotes(j.name) +
                                   " has <limit effort=\"0\"> in its URDF; its actuator is unlimited "
                                   "(set effort_limit to limit it)");
        }
        // The PD law's force at the initial state must be representable: kd = 20 with
        // velocity_target = 1e308 demands 2e309 N m, infinite torques in every output.
        const double demand = a.kp * std::abs(a.q_target - scene.q0[j.q_index]) +
                              a.kd * std::abs(a.v_target - scene.v0[j.v_index]);
        if (!std::isfinite(demand))
          r.fail(s->node, s->path,
                 "joint " + in_quotes(j.name) + ": the PD force kp |target - q0| + kd |velocity_target - v0| = " +
                     util::format_number(demand) + " is not finite in double precision (kp " + util::format_number(a.kp) +
                     ", target " + util::format_number(a.q_target) + ", kd " + util::format_number(a.kd) +
                     ", velocity_target " + util::format_number(a.v_target) + ")");
        actuators[a.v_index] = a;
      }
    }

    if (m.has("springs")) {
      const Map sm(r, m.value("springs"), m.child("springs"), {});
      for (const Entry& e : sm.entries()) {
        if (sibling_joint(rs, e.key)) continue;
        const multibody::Joint& j = model.body(robot_joint(r, rs, model, e, sm.path())).joint;
        const SpringSpec s = read_spring(r, e.value, sm.child(e.key));
        springs[j.v_index] = JointSpring{j.name, j.q_index, j.v_index, s.stiffness, s.damping, s.rest};
      }
    }

    if (rs.mjcf) add_mjcf_geometries(rs, m, robot.id, model, scene, geometry_names);

    // Geometries from the URDF's <collision> elements.
    std::map<std::string, int> per_link;
    for (const UrdfCollision& uc : rs.attachment.collisions) {
      const int k = per_link[uc.link]++;
      const std::string label = uc.link + "/" + (uc.name.empty() ? "collision" + std::to_string(k) : uc.name);
      geometry::Shape shape;
      switch (uc.type) {
        case UrdfCollision::Type::kSphere:
          shape = geometry::Shape::Sphere(uc.radius);
          break;
        case UrdfCollision::Type::kBox:
          shape = geometry::Shape::Box(uc.size);
          break;
        case UrdfCollision::Type::kCylinder:
          shape = geometry::Shape::Cylinder(uc.radius, uc.length);
          break;
        case UrdfCollision::Type::kCapsule:  // SDF robots
          shape = geometry::Shape::Capsule(uc.radius, uc.length);
          break;
        case UrdfCollision::Type::kPlane:  // SDF robots: the half-space below the plane (z of X_LG = normal)
          shape = geometry::Shape::HalfSpace();
          break;
        case UrdfCollision::Type::kMesh:
          // The mesh's convex hull (geometry/mesh_loader.h). A file that cannot be found was
          // already reported by the URDF loader and is skipped; one that cannot become a hull
          // (unreadable, empty, flat) is an error naming the URDF, the link and the file.
          if (uc.mesh_path.empty()) {
            robot.warnings.push_back(r.where(m.node()) + ": " + m.path() + ": collision " + in_quotes(label) +
                                     ": mesh " + in_quotes(uc.mesh_filename) + " not found, skipped");
            continue;
          }
          try {
            shape = geometry::load_convex_hull(uc.mesh_path, uc.mesh_scale);
          } catch (const geometry::MeshError& e) {
            m.fail("urdf", rs.urdf_path + ": link " + in_quotes(uc.link) + ": <collision> mesh " +
                               in_quotes(uc.mesh_filename) + " (" + e.file() + "): " + e.reason());
          }
          break;
      }
      if (!(shape.radius > 0.0) && uc.type != UrdfCollision::Type::kBox && uc.type != UrdfCollision::Type::kMesh &&
          uc.type != UrdfCollision::Type::kPlane) {
        robot.warnings.push_back(r.where(m.node()) + ": " + m.path() + ": collision " + in_quotes(label) +
                                 " has a zero dimension, skipped");
        continue;
      }
      if (uc.type == UrdfCollision::Type::kBox && !(uc.size.minCoeff() > 0.0)) {
        robot.warnings.push_back(r.where(m.node()) + ": " + m.path() + ": collision " + in_quotes(label) +
                                 " has a zero dimension, skipped");
        continue;
      }
      if (uc.type == UrdfCollision::Type::kCylinder && !(uc.length > 0.0)) {
        robot.warnings.push_back(r.where(m.node()) + ": " + m.path() + ": collision " + in_quotes(label) +
                                 " has a zero dimension, skipped");
        continue;
      }
      const multibody::Frame& frame = model.frame(model.frame_index(uc.link));
      geometry::Geometry g;
      g.name = unique_name(label, geometry_names);
      g.body = frame.body;
      g.X_BG = frame.X_BF * uc.X_LG;
      g.shape = std::move(shape);
      g.material = rs.material;
      g.group = rs.filter.group;
      g.mask = rs.filter.mask;
      g.robot = robot.id;
      g.self_collision = rs.self_collision;
      if (rs.rgba) {
        g.rgba = *rs.rgba;
      } else {
        for (const UrdfColor& c : rs.attachment.colors)
          if (c.link == uc.link) {
            std::copy(c.rgba, c.rgba + 4, g.rgba.begin());
            break;
          }
      }
      scene.geometries.push_back(std::move(g));
    }
    // Visuals from the URDF's <visual> elements (missing meshes were left out, as notes).
    std::map<std::string, int> per_link_visual;
    for (const UrdfVisual& uv : rs.attachment.visuals) {
      const int k = per_link_visual[uv.link]++;
      const multibody::Frame& frame = model.frame(model.frame_index(uv.link));
      geometry::VisualGeometry vg;
      vg.name = uv.link + "/" + (uv.name.empty() ? "visual" + std::to_string(k) : uv.name);
      vg.body = frame.body;
      vg.X_BG = frame.X_BF * uv.X_LG;
      switch (uv.type) {
        case UrdfVisual::Type::kSphere: vg.type = geometry::VisualGeometry::Type::kSphere; break;
        case UrdfVisual::Type::kBox: vg.type = geometry::VisualGeometry::Type::kBox; break;
        case UrdfVisual::Type::kCylinder: vg.type = geometry::VisualGeometry::Type::kCylinder; break;
        case UrdfVisual::Type::kMesh: vg.type = geometry::VisualGeometry::Type::kMesh; break;
      }
      vg.size = uv.size;
      vg.radius = uv.radius;
      vg.length = uv.length;
      vg.mesh_file = uv.mesh_path;
      vg.mesh_scale = uv.mesh_scale;
      if (rs.rgba) {  // the scene's colour for the robot wins, as for its collision shapes
        vg.rgba = *rs.rgba;
        vg.has_rgba = true;
      } else if (uv.has_rgba) {
        std::copy(uv.rgba, uv.rgba + 4, vg.rgba.begin());
        vg.has_rgba = true;
      }
      scene.visuals.push_back(std::move(vg));
    }
    scene.warnings.insert(scene.warnings.end(), robot.warnings.begin(), robot.warnings.end());
    scene.notes.insert(scene.notes.end(), robot.notes.begin(), robot.notes.end());
    scene.robots.push_back(std::move(robot));
  }
  for (auto& [v, a] : actuators) scene.actuators.push_back(a);
  for (auto& [v, s] : springs) scene.springs.push_back(s);

  // URDF <mimic> → couplers (leader and follower 1-dof joints of one tree), <dynamics friction>
  // → joint friction, in velocity order.
  for (size_t ri = 0; ri < robots.size(); ++ri) {
    const Map& m = *robots[ri].map;
    for (const UrdfMimic& mimic : robots[ri].attachment.mimics) {
      const std::string where = robots[ri].urdf_path + ":" + std::to_string(mimic.line) + ": joint " + in_quotes(mimic.joint);
      const int bf = model.joint_body(mimic.joint), bl = model.joint_body(mimic.leader);
      if (bl < 0 || model.body(bl).joint.nv != 1)
        m.fail("urdf", where + ": <mimic joint=" + in_quotes(mimic.leader) + ">: the leader must be a revolute, "
                       "continuous or prismatic joint");
      if (bf < 0 || model.body(bf).tree != model.body(bl).tree)
        m.fail("urdf", where + ": <mimic joint=" + in_quotes(mimic.leader) + ">: follower and leader must move in one "
                       "kinematic tree");
      scene::Coupler c;
      c.joint = mimic.joint;
      c.leader = mimic.leader;
      c.q_index = model.body(bf).joint.q_index;
      c.v_index = model.body(bf).joint.v_index;
      c.leader_q_index = model.body(bl).joint.q_index;
      c.leader_v_index = model.body(bl).joint.v_index;
      c.gear_ratio = mimic.multiplier;
      c.offset = mimic.offset;
      scene.couplers.push_back(c);
    }
  }
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Joint& j = model.body(b).joint;
    if (j.nv != 1 || !(j.friction > 0.0)) continue;
    scene.joint_frictions.push_back({j.name, j.q_index, j.v_index, j.friction});
  }
  std::sort(scene.joint_frictions.begin(), scene.joint_frictions.end(),
            [](const scene::JointFriction& a, const scene::JointFriction& b) { return a.v_index < b.v_index; });

  // robots[].place_on_ground: lower (or raise) the floating base so that the robot's lowest
  // collision point at q0 lies on the ground below it (scene::ground_height).
  for (size_t ri = 0; ri < robots.size(); ++ri) {
    if (!robots[ri].place_on_ground) continue;
    const Map& m = *robots[ri].map;
    multibody::Workspace ws(model);
    multibody::forward_kinematics(model, ws, scene.q0);
    const scene::CollisionPoint low = scene::lowest_collision_point(scene, ws.X_WB, static_cast<int>(ri));
    if (!low.found) m.fail("place_on_ground", "the robot has no collision geometry to place on the ground");
    const std::optional<double> ground = scene::ground_height(scene, low.p_W.x(), low.p_W.y());
    if (!ground)
      m.fail("place_on_ground", "no static geometry (a half-space or a box) below the robot's lowest collision point (" +
                                    util::format_number(low.p_W.x()) + ", " + util::format_number(low.p_W.y()) + ")");
    const multibody::Joint& base = model.body(scene.robots[ri].root_body).joint;
    scene.q0[base.q_index + 2] += *ground - low.p_W.z();
  }
  // MJCF <equality> connect/weld → bilateral constraints, at the final q0.
  for (const RobotSpec& rs : robots)
    if (rs.mjcf) add_mjcf_equalities(rs, model, scene);
  // Bilateral constraints, at the final q0 (defaults such as frame_b are taken there).
  if (top.has("constraints")) read_constraints(r, top.value("constraints"), scene);
  // What no solver can step from (a massless floating robot, velocities whose energy
  // overflows), reported at the robot or body it belongs to.
  if (const std::optional<scene::InitialDynamicsProblem> problem = scene::check_initial_dynamics(scene)) {
    auto owns = [&](const scene::SceneRobot& robot) {
      if (robot.root_body == problem->root_body) return true;
      for (const std::string& joint : robot.joints) {
        const int b = model.joint_body(joint);
        if (b > 0 && model.body(b).tree == problem->root_body) return true;
      }
      return false;
    };
    for (size_t ri = 0; ri < robots.size(); ++ri)
      if (owns(scene.robots[ri])) {
        const Map& m = *robots[ri].map;
        std::string key = "urdf";
        for (const char* k : {"mjcf", "sdf"})
          if (m.has(k)) key = k;
        if (problem->velocity)
          for (const char* k : {"angular_velocity", "linear_velocity", "joint_velocities"})
            if (m.has(k)) key = k;
        m.fail(key, problem->message);
      }
    const std::string& name = model.body(problem->root_body).name;
    for (size_t k = 0; k < bodies.size(); ++k)
      if (bodies[k].name == name)
        r.fail(top.value("bodies")[k], "bodies[" + std::to_string(k) + "]", problem->message);
    r.fail(top.node(), "", problem->message);
  }
  return scene;
}

namespace {

constexpr const char* kFormatsRead =
    "coulomb reads YAML scenes, URDF (<robot>), MJCF (<mujoco>) and SDFormat (<sdf>) files";


/// A YAML double-quoted string.
std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

ModelFileKind file_kind(const std::string& path) {
  try {
    return detect_model_file_kind(path);
  } catch (const std::runtime_error& e) {
    throw SceneError(e.what());
  }
}

/// Whether the first non-blank character of the file is '{' or '['.
bool starts_like_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c))
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{' || c == '[';
  return false;
}

/// A message about the one-robot scene that load_scene_or_model generates for a model file run
/// on its own names that scene's line and key ("M.urdf:5: robots[0].urdf: …"), which are not
/// the file's. Drops them: the rest is kept as it is when it names the model file itself (a
/// loader error "M.urdf:12: link 'x': …"), and gets "M.urdf: " in front otherwise (a check of the
/// whole model: "M.urdf: the floating tree rooted at body 'base' has total mass 0 kg").
std::string without_generated_location(const std::string& message, const std::string& path) {
  const std::string head = path + ":";
  if (message.compare(0, head.size(), head) != 0) return message;
  std::size_t end = head.size();
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
  if (end == head.size()) return message;
  for (const std::string key : {": robots[0].urdf: ", ": robots[0].mjcf: ", ": robots[0].sdf: ", ": robots[0]: "}) {
    if (message.compare(end, key.size(), key) != 0) continue;
    const std::string rest = message.substr(end + key.size());
    const std::string where = rest.substr(0, rest.find(": "));  // "DIR/M.urdf:12" if it names a file
    const std::string name = fs::path(path).filename().string();
    const std::size_t at = where.rfind(name);
    const bool names_file = at != std::string::npos &&
                            (at + name.size() == where.size() || where[at + name.size()] == ':');
    return names_file ? rest : path + ": " + rest;
  }
  return message;
}

/// Parses the one-robot scene generated for a model file run on its own; its messages name the
/// model file, not the generated scene (without_generated_location).
Scene parse_generated_scene(const std::string& yaml, const std::string& path, const std::string& directory) {
  Scene scene;
  try {
    scene = parse_scene(yaml, path, directory);
  } catch (const SceneError& e) {
    throw SceneError(without_generated_location(e.what(), path));
  }
  for (std::vector<std::string>* list : {&scene.warnings, &scene.notes})
    for (std::string& m : *list) m = without_generated_location(m, path);
  for (SceneRobot& robot : scene.robots)
    for (std::vector<std::string>* list : {&robot.warnings, &robot.notes})
      for (std::string& m : *list) m = without_generated_location(m, path);
  return scene;
}

}  // namespace

Scene load_scene_or_model(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::is_directory(path, ec)) return load_scene(path);  // its messages
  const ModelFileKind kind = file_kind(path);
  if (kind == ModelFileKind::kYaml) return load_scene(path);
  if (kind == ModelFileKind::kSdf) return load_sdf_scene(path);
  if (kind == ModelFileKind::kUnknown) throw SceneError(path + ": not a scene or model file; " + kFormatsRead);
  const fs::path file(path);
  const std::string directory = file.parent_path().empty() ? std::string(".") : file.parent_path().string();
  bool ground = true;
  if (kind == ModelFileKind::kMjcf) {
    multibody::ModelBuilder peek("peek");
    try {
      ground = !add_mjcf(peek, path, {}).has_plane;
    } catch (const MjcfError& e) {
      throw SceneError(e.what());
    }
  }
  std::string yaml = "description: " + yaml_quoted(std::string(kind == ModelFileKind::kMjcf ? "MJCF" : "URDF") +
                                                   " model " + file.filename().string() + " run on its own") + "\n";
  if (ground) yaml += "bodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n";
  yaml += "robots:\n  - {" + std::string(kind == ModelFileKind::kMjcf ? "mjcf" : "urdf") + ": " +
          yaml_quoted(file.filename().string()) + "}\n";
  return parse_generated_scene(yaml, path, directory);
}

Scene load_scene(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SceneError(path + ": cannot read scene file: no such file");
  if (fs::is_directory(path, ec)) throw SceneError(path + ": cannot read scene file: it is a directory");
  switch (file_kind(path)) {
    case ModelFileKind::kUrdf:
      throw SceneError(path + ": this is a URDF file (root element <robot>), not a scene; `coulomb simulate FILE` "
                              "runs it on its own, a scene lists it under robots: [{urdf: FILE}]");
    case ModelFileKind::kMjcf:
      throw SceneError(path + ": this is an MJCF file (root element <mujoco>), not a scene; `coulomb simulate FILE` "
                              "runs it on its own, a scene lists it under robots: [{mjcf: FILE}]");
    case ModelFileKind::kSdf:
      throw SceneError(path + ": this is an SDFormat file (root element <sdf>), not a scene; `coulomb simulate FILE` "
                              "runs it on its own, a scene lists it under robots: [{sdf: FILE}]");
    case ModelFileKind::kUnknown:
      // JSON is YAML too: a scene written as a JSON object still loads here (not as a model file).
      if (!starts_like_json(path)) throw SceneError(path + ": not a scene file; " + kFormatsRead);
      break;
    case ModelFileKind::kYaml:
      break;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path + ": cannot read scene file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw SceneError(path + ": cannot read scene file: read error");
  const fs::path parent = fs::path(path).parent_path();
  return parse_scene(text.str(), path, parent.empty() ? std::string(".") : parent.string());
}

Scene load_sdf_scene(const std::string& path) {
  SdfModel sdf;
  try {
    sdf = load_sdf(path);
  } catch (const SdfError& e) {
    throw SceneError(e.what());
  }
  const bool has_plane = std::any_of(sdf.attachment.collisions.begin(), sdf.attachment.collisions.end(),
                                     [](const UrdfCollision& c) { return c.type == UrdfCollision::Type::kPlane; });
  // The scene as YAML, so that it is checked and assembled exactly as a scene file is.
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  std::string quoted = "\"";
  for (const char ch : (ec ? fs::path(path) : abs).string()) {
    if (ch == '"' || ch == '\\') quoted += '\\';
    quoted += ch;
  }
  quoted += "\"";
  std::ostringstream yaml;
  yaml.precision(17);
  const Vector3& g = sdf.attachment.gravity;
  yaml << "gravity: [" << g.x() << ", " << g.y() << ", " << g.z() << "]\n";
  if (!has_plane)
    yaml << "bodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n";
  yaml << "robots:\n  - {sdf: " << quoted << "}\n";
  const fs::path parent = fs::path(path).parent_path();
  return parse_generated_scene(yaml.str(), path, parent.empty() ? std::string(".") : parent.string());
}

}  // namespace coulomb::io
