// SDFormat → multibody::Model, through libsdformat 12's DOM.
//
// Three steps:
//  1. sdf::Root::Load parses the file (converting older SDF versions and URDF), follows its
//     <include>s through a find-file callback over the file's directory and COULOMB_MODEL_PATH,
//     and builds the pose graph. Unrecognized elements are errors (ParserConfig policy).
//  2. Every file libsdformat read (the element tree records each element's file) is read again
//     with tinyxml to check what libsdformat accepts silently: a numeric element whose text is
//     not entirely a finite number ("1.x5" parses as 1 there). Then libsdformat's errors, if
//     any, become an SdfError naming the file, line and element (sdf::Error::FilePath,
//     LineNumber, XmlPath).
//  3. Each <model> is checked to be a tree (one parent joint per link, no cycle, one root) and
//     walked from its root, parents before children, children in joint declaration order; every
//     link becomes a link of the multibody::ModelBuilder with poses resolved by libsdformat's
//     pose graph (SemanticPose().Resolve).
#include "coulomb/io/sdf_loader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <utility>

#include <console_bridge/console.h>
#include <sdf/sdf.hh>
#include <tinyxml.h>

#include "../util/format.h"
#include "io/model_path.h"

namespace coulomb::io {

namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Transform;
using math::Vector3;
using multibody::JointSpec;
using multibody::JointType;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

/// "<file>:<line>: <message>" (line left out when unknown).
[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw SdfError((line > 0 ? file + ":" + std::to_string(line) : file) + ": " + message);
}

std::string where(const std::string& file, int line) { return line > 0 ? file + ":" + std::to_string(line) : file; }

Transform to_transform(const ignition::math::Pose3d& pose) {
  const ignition::math::Quaterniond& r = pose.Rot();
  const math::Quaternion q(r.W(), r.X(), r.Y(), r.Z());
  const double n = q.norm();
  const Matrix3 R = n > 0.0 ? Matrix3(q.normalized().toRotationMatrix()) : Matrix3::Identity();
  return {R, Vector3(pose.Pos().X(), pose.Pos().Y(), pose.Pos().Z())};
}

Vector3 to_vector(const ignition::math::Vector3d& v) { return {v.X(), v.Y(), v.Z()}; }

using internal::model_path_dirs;

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

/// The find-file callback of the parser: `uri` of an <include> (model://NAME[/REST], file://,
/// relative or absolute path) → an existing file or directory, or "" when there is none.
/// Roots: the directory of the file being loaded, then COULOMB_MODEL_PATH.
std::string find_uri(const std::string& uri, const fs::path& base_directory) {
  std::vector<fs::path> roots{base_directory};
  for (const fs::path& d : model_path_dirs()) roots.push_back(d);
  std::string name = uri;
  if (name.rfind("file://", 0) == 0) name = name.substr(7);
  for (const char* scheme : {"model://", "package://"})
    if (name.rfind(scheme, 0) == 0) name = name.substr(std::strlen(scheme));
  const fs::path p(name);
  if (p.is_absolute()) return path_exists(p) ? p.string() : std::string();
  for (const fs::path& r : roots)
    if (path_exists(r / p)) return fs::absolute(r / p).string();
  return {};
}

/// A mesh <uri> → an existing file (resolve_model_file's search; model:// is treated as
/// package://, whose NAME is looked for among the ancestors of the SDF file's directory and in
/// COULOMB_MODEL_PATH), or "".
std::string resolve_mesh_uri(const std::string& uri, const std::string& directory) {
  std::string name = uri;
  if (name.rfind("model://", 0) == 0) name = "package://" + name.substr(8);
  return resolve_model_file(name, directory);
}

// ------------------------------------------------------------------------------------------
// Errors of libsdformat

/// "/sdf/model[@name=\"m\"]/link[@name=\"a\"]/inertial/mass" → "model 'm' link 'a' <inertial><mass>".
std::string describe_xml_path(const std::string& xml_path) {
  std::string out;
  std::istringstream in(xml_path);
  std::string part;
  while (std::getline(in, part, '/')) {
    if (part.empty() || part == "sdf") continue;
    const auto bracket = part.find('[');
    const std::string tag = part.substr(0, bracket);
    std::string name;
    const auto at = part.find("[@name=\"");
    if (at != std::string::npos) {
      const auto end = part.find('"', at + 8);
      name = part.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
    }
    if (!name.empty())
      out += (out.empty() ? "" : " ") + tag + " " + in_quotes(name);
    else
      out += (out.empty() || out.back() == '>' ? "" : " ") + ("<" + tag + ">");
  }
  return out;
}

/// The SdfError for libsdformat's errors: the first one that has a line number (libsdformat
/// reports the innermost element first, then "Error reading element <...>" for its ancestors).
[[noreturn]] void fail_with(const sdf::Errors& errors, const std::string& abs_path, const std::string& path) {
  const sdf::Error* primary = &errors.front();
  for (const sdf::Error& e : errors)
    if (e.LineNumber()) {
      primary = &e;
      break;
    }
  std::string file = primary->FilePath().value_or(path);
  if (file == abs_path || file.empty()) file = path;
  const int line = primary->LineNumber().value_or(0);
  std::string message;
  if (primary->XmlPath()) {
    const std::string element = describe_xml_path(*primary->XmlPath());
    if (!element.empty()) message = element + ": ";
  }
  std::string text = primary->Message();
  // An unrecognized element: libsdformat's text goes on to say it copies the element, which
  // it does not do here (unrecognized elements are errors).
  if (const auto copying = text.find(" Copying["); copying != std::string::npos &&
                                                   text.find("not defined in SDF") != std::string::npos)
    text = text.substr(0, copying) + " Unrecognized elements are errors here (misspelled?).";
  message += text;
  // Keep libsdformat's own phrasing but drop its trailing newline.
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const size_t more = errors.size() - 1;
  if (more > 0) message += " (libsdformat reported " + std::to_string(more) + " more error" + (more == 1 ? "" : "s") + ")";
  fail(file, line, message);
}

/// Silences console_bridge (libsdformat's URDF fall-back logs through it) and libsdformat's own
/// console while it parses; both are process-global, so parses are serialized.
class QuietParse {
 public:
  QuietParse() : lock_(mutex()) {
    previous_ = console_bridge::getOutputHandler();
    console_bridge::useOutputHandler(&sink_);
    sdf::Console::Instance()->SetQuiet(true);
  }
  ~QuietParse() { console_bridge::useOutputHandler(previous_); }
  QuietParse(const QuietParse&) = delete;
  QuietParse& operator=(const QuietParse&) = delete;

 private:
  class Sink : public console_bridge::OutputHandler {
   public:
    void log(const std::string&, console_bridge::LogLevel, const char*, int) override {}
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::lock_guard<std::mutex> lock_;
  Sink sink_;
  console_bridge::OutputHandler* previous_ = nullptr;
};

// ------------------------------------------------------------------------------------------
// Step 2: numbers libsdformat accepts without complaint

/// SDF elements whose text is one or more numbers.
constexpr const char* kNumericElements[] = {
    "pose",   "mass",     "ixx",       "ixy",    "ixz",      "iyy",      "iyz",     "izz",
    "xyz",    "lower",    "upper",     "effort", "velocity", "damping",  "friction", "spring_reference",
    "spring_stiffness", "stiffness", "dissipation", "size", "radius", "length", "scale", "normal",
    "gravity", "initial_position"};

using util::parse_number;

/// "model 'm' link 'a' <inertial><mass>" for element e.
std::string describe_element(const TiXmlElement* e) {
  std::vector<std::string> parts;
  for (const TiXmlNode* n = e; n != nullptr; n = n->Parent()) {
    const TiXmlElement* el = n->ToElement();
    if (el == nullptr || std::strcmp(el->Value(), "sdf") == 0) continue;
    const char* name = el->Attribute("name");
    if (el != e && name != nullptr)
      parts.push_back(std::string(el->Value()) + " " + in_quotes(name));
    else
      parts.push_back("<" + std::string(el->Value()) + ">");
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it)
    out += (out.empty() || (out.back() == '>' && it->front() == '<') ? "" : " ") + *it;
  return out;
}

void check_numbers(const TiXmlElement* parent, const std::string& file) {
  for (const TiXmlElement* e = parent->FirstChildElement(); e != nullptr; e = e->NextSiblingElement()) {
    const std::string tag = e->Value();
    // Plugins and sensors hold free-form or unrelated content; namespaced elements are not SDF.
    if (tag == "plugin" || tag == "sensor" || tag == "light" || tag == "actor" || tag == "gui" ||
        tag.find(':') != std::string::npos)
      continue;
    if (std::find_if(std::begin(kNumericElements), std::end(kNumericElements),
                     [&](const char* t) { return tag == t; }) != std::end(kNumericElements) &&
        e->FirstChildElement() == nullptr) {
      const char* text = e->GetText();
      std::istringstream tokens{std::string(text ? text : "")};
      std::string token;
      bool all_zero = true;
      while (tokens >> token) {
        double x = 0.0;
        if (!parse_number(token, x))
          fail(file, e->Row(), describe_element(e) + " is not a number: " + in_quotes(text));
        if (!std::isfinite(x)) fail(file, e->Row(), describe_element(e) + " is not finite: " + in_quotes(text));
        all_zero = all_zero && x == 0.0;
      }
      // libsdformat rejects it too, without saying where.
      if (tag == "xyz" && all_zero && (std::strcmp(parent->Value(), "axis") == 0 || std::strcmp(parent->Value(), "axis2") == 0))
        fail(file, e->Row(), describe_element(e) + " is the zero vector: " + in_quotes(text ? text : ""));
    }
    check_numbers(e, file);
  }
}

/// Checks the numbers of every SDF file libsdformat read (files that are not SDF, such as a
/// URDF converted by libsdformat, are left to their parser).
void check_files(const std::set<std::string>& files, const std::string& abs_path, const std::string& path) {
  for (const std::string& f : files) {
    TiXmlDocument doc;
    if (!doc.LoadFile(f.c_str())) continue;  // libsdformat read it; its errors are reported next
    const TiXmlElement* root = doc.RootElement();
    if (root == nullptr || std::strcmp(root->Value(), "sdf") != 0) continue;
    check_numbers(root, f == abs_path ? path : f);
  }
}

void collect_files(const sdf::ElementPtr& e, std::set<std::string>& files) {
  if (!e) return;
  if (!e->FilePath().empty()) files.insert(e->FilePath());
  for (sdf::ElementPtr c = e->GetFirstElement(); c; c = c->GetNextElement()) collect_files(c, files);
}

// ------------------------------------------------------------------------------------------
// Step 3: models

/// Where an element of the DOM came from, for messages.
struct Origin {
  std::string file;
  int line = 0;
};

Origin origin_of(const sdf::ElementPtr& e, const std::string& abs_path, const std::string& path) {
  Origin o;
  o.file = path;
  if (!e) return o;
  if (!e->FilePath().empty() && e->FilePath() != abs_path) o.file = e->FilePath();
  o.line = e->LineNumber().value_or(0);
  return o;
}

/// Poses and errors of pose resolution.
Transform resolve(const sdf::SemanticPose& sp, const std::string& to, const Origin& o, const std::string& what) {
  ignition::math::Pose3d pose;
  const sdf::Errors errors = sp.Resolve(pose, to);
  if (!errors.empty()) fail(o.file, o.line, what + ": cannot resolve its pose: " + errors.front().Message());
  return to_transform(pose);
}

class ModelAdder {
 public:
  ModelAdder(multibody::ModelBuilder& builder, const SdfAttachOptions& options, std::string abs_path,
             std::string path, SdfAttachment& out)
      : builder_(builder), options_(options), abs_path_(std::move(abs_path)), path_(std::move(path)), out_(out) {}

  /// Adds `model`, whose frame is at X_W_M in the world.
  void add(const sdf::Model& model, const std::string& prefix, const Transform& X_W_M);

 private:
  Origin origin(const sdf::ElementPtr& e) const { return origin_of(e, abs_path_, path_); }
  math::SpatialInertia link_inertia(const sdf::Link& link, const std::string& desc) const;
  JointSpec joint_spec(const sdf::Joint& joint, const std::string& desc, JointType type) const;
  void record_geometry(const sdf::Link& link, const std::string& frame, const std::string& desc,
                       const Transform& X_frame_link, SdfModelAttachment& ma);
  void add_link(const std::string& name, const std::string& parent, const JointSpec& spec,
                const math::SpatialInertia& inertia, const Origin& o) {
    if (builder_.has_link(name))
      fail(o.file, o.line, "link name " + in_quotes(name) + " is already in the model (give the model a name prefix)");
    try {
      builder_.add_link(name, parent, spec, inertia);
    } catch (const std::invalid_argument& e) {
      fail(o.file, o.line, e.what());
    }
  }

  multibody::ModelBuilder& builder_;
  const SdfAttachOptions& options_;
  std::string abs_path_, path_;
  SdfAttachment& out_;
};

math::SpatialInertia ModelAdder::link_inertia(const sdf::Link& link, const std::string& desc) const {
  const sdf::ElementPtr inertial = link.Element() ? link.Element()->FindElement("inertial") : nullptr;
  double mass = link.Inertial().MassMatrix().Mass();
  Matrix3 I;
  Transform X_LI = to_transform(link.Inertial().Pose());
  Origin o = origin(link.Element());
  {
    const ignition::math::Matrix3d moi = link.Inertial().MassMatrix().Moi();
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) I(r, c) = moi(r, c);
  }
  if (inertial) {
    // The file's own numbers (libsdformat keeps its defaults for an invalid inertial).
    o = origin(inertial);
    if (const sdf::ElementPtr m = inertial->FindElement("mass")) {
      mass = m->Get<double>();
      if (m->LineNumber()) o = origin(m);
    } else {
      mass = 1.0;
    }
    if (const sdf::ElementPtr pose = inertial->FindElement("pose")) X_LI = to_transform(pose->Get<ignition::math::Pose3d>());
    if (const sdf::ElementPtr in = inertial->FindElement("inertia")) {
      auto get = [&](const char* key, double fallback) {
        const sdf::ElementPtr e = in->FindElement(key);
        return e ? e->Get<double>() : fallback;
      };
      const double ixx = get("ixx", 1.0), iyy = get("iyy", 1.0), izz = get("izz", 1.0);
      const double ixy = get("ixy", 0.0), ixz = get("ixz", 0.0), iyz = get("iyz", 0.0);
      I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
    } else {
      I = Matrix3::Identity();
    }
  }
  if (!std::isfinite(mass)) fail(o.file, o.line, desc + ": <inertial><mass> is not finite: " + util::format_number(mass));
  if (mass < 0.0) fail(o.file, o.line, desc + ": <inertial><mass> is negative: " + util::format_number(mass));
  try {
    multibody::validate_inertia(mass, I, desc + ": <inertial><inertia>");
  } catch (const std::invalid_argument& e) {
    fail(o.file, o.line,
         std::string(e.what()) + " [ixx=" + util::format_number(I(0, 0)) + " ixy=" + util::format_number(I(0, 1)) +
             " ixz=" + util::format_number(I(0, 2)) + " iyy=" + util::format_number(I(1, 1)) +
             " iyz=" + util::format_number(I(1, 2)) + " izz=" + util::format_number(I(2, 2)) + "]");
  }
  return math::SpatialInertia::FromCenterOfMass(mass, X_LI.p, X_LI.R * I * X_LI.R.transpose());
}

/// SDF writes "unlimited" as ±1e16 (limits) or a negative number (effort, velocity).
double sdf_limit(double x) {
  if (x >= 1e16) return std::numeric_limits<double>::infinity();
  if (x <= -1e16) return -std::numeric_limits<double>::infinity();
  return x;
}

JointSpec ModelAdder::joint_spec(const sdf::Joint& joint, const std::string& desc, JointType type) const {
  const Origin o = origin(joint.Element());
  JointSpec spec;
  spec.type = type;
  if (type != JointType::kRevolute && type != JointType::kPrismatic) return spec;
  const sdf::JointAxis* axis = joint.Axis(0);
  if (axis == nullptr) fail(o.file, o.line, desc + " has no <axis>");
  const Origin ao = origin(axis->Element());
  ignition::math::Vector3d xyz;
  const sdf::Errors errors = axis->ResolveXyz(xyz);
  if (!errors.empty()) fail(ao.file, ao.line, desc + ": <axis><xyz> cannot be resolved: " + errors.front().Message());
  spec.axis = to_vector(xyz);
  if (!spec.axis.allFinite() || spec.axis.norm() < 1e-12)
    fail(ao.file, ao.line, desc + ": <axis><xyz> is the zero vector (" + util::format_number(spec.axis.x()) + " " +
                               util::format_number(spec.axis.y()) + " " + util::format_number(spec.axis.z()) + ")");
  const bool continuous = joint.Type() == sdf::JointType::CONTINUOUS;
  if (!continuous) {
    spec.limits.lower = sdf_limit(axis->Lower());
    spec.limits.upper = sdf_limit(axis->Upper());
    if (spec.limits.lower > spec.limits.upper)
      fail(ao.file, ao.line, desc + ": <axis><limit><lower> " + util::format_number(axis->Lower()) +
                                 " is greater than <upper> " + util::format_number(axis->Upper()));
  }
  spec.limits.effort = axis->Effort() < 0.0 ? std::numeric_limits<double>::infinity() : sdf_limit(axis->Effort());
  spec.limits.velocity =
      axis->MaxVelocity() < 0.0 ? std::numeric_limits<double>::infinity() : sdf_limit(axis->MaxVelocity());
  if (axis->Damping() < 0.0)
    fail(ao.file, ao.line, desc + ": <axis><dynamics><damping> is negative: " + util::format_number(axis->Damping()));
  if (axis->Friction() < 0.0)
    fail(ao.file, ao.line, desc + ": <axis><dynamics><friction> is negative: " + util::format_number(axis->Friction()));
  spec.damping = axis->Damping();
  spec.friction = axis->Friction();
  return spec;
}

void ModelAdder::record_geometry(const sdf::Link& link, const std::string& frame, const std::string& desc,
                                 const Transform& X_frame_link, SdfModelAttachment& ma) {
  for (uint64_t k = 0; k < link.CollisionCount(); ++k) {
    const sdf::Collision& c = *link.CollisionByIndex(k);
    const Origin o = origin(c.Element());
    const std::string cdesc = desc + " collision " + in_quotes(c.Name());
    UrdfCollision uc;
    uc.link = frame;
    uc.name = c.Name();
    uc.X_LG = X_frame_link * resolve(c.SemanticPose(), "", o, cdesc);
    const sdf::Geometry* g = c.Geom();
    if (g == nullptr) fail(o.file, o.line, cdesc + " has no <geometry>");
    auto non_negative = [&](double x, const char* what) {
      if (!(x >= 0.0)) fail(o.file, o.line, cdesc + ": " + what + " is negative: " + util::format_number(x));
    };
    switch (g->Type()) {
      case sdf::GeometryType::BOX:
        uc.type = UrdfCollision::Type::kBox;
        uc.size = to_vector(g->BoxShape()->Size());
        for (int i = 0; i < 3; ++i) non_negative(uc.size[i], "<box><size>");
        break;
      case sdf::GeometryType::SPHERE:
        uc.type = UrdfCollision::Type::kSphere;
        uc.radius = g->SphereShape()->Radius();
        non_negative(uc.radius, "<sphere><radius>");
        break;
      case sdf::GeometryType::CYLINDER:
        uc.type = UrdfCollision::Type::kCylinder;
        uc.radius = g->CylinderShape()->Radius();
        uc.length = g->CylinderShape()->Length();
        non_negative(uc.radius, "<cylinder><radius>");
        non_negative(uc.length, "<cylinder><length>");
        break;
      case sdf::GeometryType::CAPSULE:
        uc.type = UrdfCollision::Type::kCapsule;
        uc.radius = g->CapsuleShape()->Radius();
        uc.length = g->CapsuleShape()->Length();
        non_negative(uc.radius, "<capsule><radius>");
        non_negative(uc.length, "<capsule><length>");
        break;
      case sdf::GeometryType::PLANE: {
        uc.type = UrdfCollision::Type::kPlane;
        const Vector3 n = to_vector(g->PlaneShape()->Normal());
        if (!(n.norm() > 1e-12))
          fail(o.file, o.line, cdesc + ": <plane><normal> is the zero vector");
        // The half-space below the plane: z of G along the normal.
        const Matrix3 R = math::Quaternion::FromTwoVectors(Vector3::UnitZ(), n.normalized()).toRotationMatrix();
        uc.X_LG = uc.X_LG * Transform(R, Vector3::Zero());
        uc.normal = n.normalized();
        break;
      }
      case sdf::GeometryType::MESH: {
        const sdf::Mesh& mesh = *g->MeshShape();
        uc.type = UrdfCollision::Type::kMesh;
        uc.mesh_filename = mesh.Uri();
        uc.mesh_scale = to_vector(mesh.Scale());
        const std::string holder = mesh.FilePath().empty() ? abs_path_ : mesh.FilePath();
        uc.mesh_path = resolve_mesh_uri(mesh.Uri(), fs::path(holder).parent_path().string());
        if (uc.mesh_path.empty())
          fail(o.file, o.line, cdesc + ": <mesh><uri> " + in_quotes(mesh.Uri()) + " not found (relative to " +
                                   in_quotes(fs::path(holder).parent_path().string()) + " or COULOMB_MODEL_PATH)");
        if (!mesh.Submesh().empty())
          out_.warnings.push_back(where(o.file, o.line) + ": " + cdesc + ": <submesh> " + in_quotes(mesh.Submesh()) +
                                  " is ignored: the whole mesh's convex hull is used");
        break;
      }
      default:
        fail(o.file, o.line, cdesc + ": this collision geometry type is not supported (supported: box, sphere, "
                                     "cylinder, capsule, mesh, plane)");
    }
    ma.collisions.push_back(std::move(uc));
  }
  bool colored = false;
  for (uint64_t k = 0; k < link.VisualCount(); ++k) {
    const sdf::Visual& v = *link.VisualByIndex(k);
    const Origin o = origin(v.Element());
    const std::string vdesc = desc + " visual " + in_quotes(v.Name());
    UrdfVisual uv;
    uv.link = frame;
    uv.name = v.Name();
    uv.X_LG = X_frame_link * resolve(v.SemanticPose(), "", o, vdesc);
    if (const sdf::Material* m = v.Material()) {
      const ignition::math::Color c = m->Diffuse();
      uv.rgba[0] = c.R();
      uv.rgba[1] = c.G();
      uv.rgba[2] = c.B();
      uv.rgba[3] = c.A();
      uv.has_rgba = true;
      if (!colored) {
        UrdfColor color;
        color.link = frame;
        std::copy(uv.rgba, uv.rgba + 4, color.rgba);
        ma.colors.push_back(color);
        colored = true;
      }
    }
    const sdf::Geometry* g = v.Geom();
    bool keep = g != nullptr;
    if (keep) {
      switch (g->Type()) {
        case sdf::GeometryType::BOX:
          uv.type = UrdfVisual::Type::kBox;
          uv.size = to_vector(g->BoxShape()->Size());
          keep = uv.size.minCoeff() > 0.0;
          break;
        case sdf::GeometryType::SPHERE:
          uv.type = UrdfVisual::Type::kSphere;
          uv.radius = g->SphereShape()->Radius();
          keep = uv.radius > 0.0;
          break;
        case sdf::GeometryType::CYLINDER:
          uv.type = UrdfVisual::Type::kCylinder;
          uv.radius = g->CylinderShape()->Radius();
          uv.length = g->CylinderShape()->Length();
          keep = uv.radius > 0.0 && uv.length > 0.0;
          break;
        case sdf::GeometryType::MESH: {
          const sdf::Mesh& mesh = *g->MeshShape();
          uv.type = UrdfVisual::Type::kMesh;
          uv.mesh_filename = mesh.Uri();
          uv.mesh_scale = to_vector(mesh.Scale());
          const std::string holder = mesh.FilePath().empty() ? abs_path_ : mesh.FilePath();
          uv.mesh_path = resolve_mesh_uri(mesh.Uri(), fs::path(holder).parent_path().string());
          if (uv.mesh_path.empty()) {
            out_.notes.push_back(where(o.file, o.line) + ": " + vdesc + ": mesh " + in_quotes(mesh.Uri()) +
                                 " not found (relative to the SDF file or COULOMB_MODEL_PATH); visual skipped");
            keep = false;
          }
          break;
        }
        default:
          out_.notes.push_back(where(o.file, o.line) + ": " + vdesc +
                               ": only box, sphere, cylinder and mesh visuals are drawn; visual skipped (the "
                               "collision shapes are drawn instead)");
          keep = false;
      }
    }
    if (keep) ma.visuals.push_back(std::move(uv));
  }
}

bool is_identity(const Transform& X) {
  return X.p.cwiseAbs().maxCoeff() < 1e-12 && (X.R - Matrix3::Identity()).cwiseAbs().maxCoeff() < 1e-12;
}

void ModelAdder::add(const sdf::Model& model, const std::string& prefix, const Transform& X_W_M) {
  const Origin mo = origin(model.Element());
  const std::string mdesc = "model " + in_quotes(model.Name());
  if (model.ModelCount() > 0)
    fail(mo.file, mo.line, mdesc + " has a nested <model> " + in_quotes(model.ModelByIndex(0)->Name()) +
                               ": nested models are not supported (flatten it, or include the models side by side "
                               "in a <world>)");
  if (model.LinkCount() == 0) fail(mo.file, mo.line, mdesc + " has no <link>");
  SdfModelAttachment ma;
  ma.name = model.Name();
  ma.prefix = prefix;
  ma.is_static = model.Static();

  // Links and joints by name; the tree.
  const int n_links = static_cast<int>(model.LinkCount());
  std::unordered_map<std::string, int> link_index;
  for (int l = 0; l < n_links; ++l) link_index[model.LinkByIndex(l)->Name()] = l;
  struct JointInfo {
    const sdf::Joint* joint;
    std::string parent, child;  // link names ("world" for the world)
    Origin origin;
  };
  std::vector<JointInfo> joints;
  std::vector<int> parent_joint(n_links, -1);
  std::vector<std::vector<int>> children(n_links);
  std::vector<int> world_children;
  for (uint64_t k = 0; k < model.JointCount(); ++k) {
    const sdf::Joint* j = model.JointByIndex(k);
    JointInfo info{j, "", "", origin(j->Element())};
    const std::string jdesc = mdesc + " joint " + in_quotes(j->Name());
    if (!j->ResolveParentLink(info.parent).empty() || !j->ResolveChildLink(info.child).empty())
      fail(info.origin.file, info.origin.line, jdesc + ": its <parent> " + in_quotes(j->ParentLinkName()) +
                                                   " or <child> " + in_quotes(j->ChildLinkName()) +
                                                   " is not a link or frame of the model");
    if (info.child == "world")
      fail(info.origin.file, info.origin.line, jdesc + ": the world cannot be a joint's <child>");
    const int c = link_index.at(info.child);
    if (info.parent == info.child)
      fail(info.origin.file, info.origin.line,
           jdesc + " connects link " + in_quotes(info.child) + " to itself (a kinematic loop)");
    if (parent_joint[c] >= 0)
      fail(info.origin.file, info.origin.line,
           "link " + in_quotes(info.child) + " of " + mdesc + " is the child of two joints, " +
               in_quotes(joints[parent_joint[c]].joint->Name()) + " and " + in_quotes(j->Name()) +
               " (a kinematic loop; coulomb needs a tree; close loops with the scene's `constraints`)");
    parent_joint[c] = static_cast<int>(joints.size());
    if (info.parent == "world")
      world_children.push_back(static_cast<int>(joints.size()));
    else
      children[link_index.at(info.parent)].push_back(static_cast<int>(joints.size()));
    joints.push_back(info);
  }
  std::vector<int> roots;
  for (int l = 0; l < n_links; ++l)
    if (parent_joint[l] < 0) roots.push_back(l);
  // Reachability from the roots and the world's joints: a link not reached lies on a cycle.
  std::vector<char> reached(n_links, 0);
  {
    std::vector<int> stack(roots);
    for (int j : world_children) stack.push_back(link_index.at(joints[j].child));
    while (!stack.empty()) {
      const int l = stack.back();
      stack.pop_back();
      reached[l] = 1;
      for (int j : children[l]) stack.push_back(link_index.at(joints[j].child));
    }
  }
  for (int l = 0; l < n_links; ++l) {
    if (reached[l]) continue;
    std::string cycle;
    std::vector<char> seen(n_links, 0);
    int k = l;
    while (!seen[k]) {
      seen[k] = 1;
      k = link_index.at(joints[parent_joint[k]].parent);
    }
    const int start = k;
    do {
      cycle += in_quotes(joints[parent_joint[k]].joint->Name()) + " ";
      k = link_index.at(joints[parent_joint[k]].parent);
    } while (k != start);
    cycle.pop_back();
    const JointInfo& j = joints[parent_joint[start]];
    fail(j.origin.file, j.origin.line,
         mdesc + ": joints " + cycle + " form a kinematic loop through link " + in_quotes(model.LinkByIndex(start)->Name()) +
             " (coulomb needs a tree; close loops with the scene's `constraints`)");
  }
  if (!world_children.empty() && !roots.empty())
    fail(mo.file, mo.line, mdesc + ": link " + in_quotes(model.LinkByIndex(roots[0])->Name()) +
                               " is connected neither to the world nor to the links jointed to it; coulomb needs "
                               "one tree per model");
  if (roots.size() > 1) {
    std::string names;
    for (int r : roots) names += (names.empty() ? "" : ", ") + in_quotes(model.LinkByIndex(r)->Name());
    fail(mo.file, mo.line, mdesc + " has several root links (links that are no joint's child): " + names +
                               "; coulomb needs one tree per model (joint them, or make each its own <model>)");
  }

  auto link_pose = [&](int l) {  // X_ML
    const sdf::Link& link = *model.LinkByIndex(l);
    return resolve(link.SemanticPose(), "", origin(link.Element()), mdesc + " link " + in_quotes(link.Name()));
  };
  auto prefixed = [&](const std::string& name) { return prefix + name; };

  // Frames added per SDF link: model frame name of its body link, and X from that frame to the link.
  std::unordered_map<std::string, std::string> frame_name;  // SDF link → coulomb frame of the link
  auto add_tree_link = [&](int l, const std::string& parent_frame, const Transform& X_WorP_J, const JointInfo* jinfo,
                           JointType type, const Transform& X_JL) {
    const sdf::Link& link = *model.LinkByIndex(l);
    const std::string ldesc = mdesc + " link " + in_quotes(link.Name());
    const Origin lo = origin(link.Element());
    // A static model does not move: its links' inertias (SDF's 1 kg default included) play no part.
    math::SpatialInertia I_L = link_inertia(link, ldesc);
    if (ma.is_static) I_L = math::SpatialInertia::Zero();
    JointSpec spec;
    std::string jname;
    if (jinfo != nullptr) {
      spec = joint_spec(*jinfo->joint, mdesc + " joint " + in_quotes(jinfo->joint->Name()), type);
      jname = prefixed(jinfo->joint->Name());
    } else {
      spec.type = type;
      jname = type == JointType::kFloating ? prefix + "root_joint" : "";
    }
    spec.name = jname;
    spec.X_PJ = X_WorP_J;
    const std::string name = prefixed(link.Name());
    const Origin& jo = jinfo != nullptr ? jinfo->origin : lo;
    if (type == JointType::kFixed || is_identity(X_JL)) {
      spec.X_PJ = type == JointType::kFixed ? X_WorP_J * X_JL : X_WorP_J;
      add_link(name, parent_frame, spec, I_L, jo);
      frame_name[link.Name()] = name;
      record_geometry(link, name, ldesc, Transform::Identity(), ma);
    } else {
      // The body sits at the joint frame; the link is a frame of it.
      const std::string body = name + "::" + (jinfo ? jinfo->joint->Name() : std::string("root"));
      add_link(body, parent_frame, spec, X_JL.act(I_L), jo);
      try {
        builder_.add_frame(name, body, X_JL);
      } catch (const std::invalid_argument& e) {
        fail(lo.file, lo.line, e.what());
      }
      frame_name[link.Name()] = name;
      record_geometry(link, name, ldesc, Transform::Identity(), ma);
    }
    if (jinfo != nullptr) ma.joints.push_back(jname);
  };

  auto joint_type = [&](const JointInfo& j) {
    const std::string jdesc = mdesc + " joint " + in_quotes(j.joint->Name());
    if (ma.is_static) return JointType::kFixed;
    switch (j.joint->Type()) {
      case sdf::JointType::REVOLUTE:
      case sdf::JointType::CONTINUOUS:
        return JointType::kRevolute;
      case sdf::JointType::PRISMATIC:
        return JointType::kPrismatic;
      case sdf::JointType::FIXED:
        return JointType::kFixed;
      case sdf::JointType::BALL:
        return JointType::kBall;
      case sdf::JointType::GEARBOX:
      case sdf::JointType::REVOLUTE2:
      case sdf::JointType::SCREW:
      case sdf::JointType::UNIVERSAL:
      default: {
        std::string type = "invalid";
        if (j.joint->Element() && j.joint->Element()->HasAttribute("type"))
          type = j.joint->Element()->Get<std::string>("type");
        fail(j.origin.file, j.origin.line, jdesc + ": joint type " + in_quotes(type) +
                                               " is not supported (supported: revolute, continuous, prismatic, "
                                               "fixed, ball)");
      }
    }
  };

  // Depth-first from the root (or from the world's joints), children in joint declaration order.
  std::vector<int> stack;  // joint indices
  if (roots.size() == 1) {
    const int r = roots[0];
    const Transform X_M_R = link_pose(r);
    ma.X_W_root = X_W_M * X_M_R;
    ma.root_link = prefixed(model.LinkByIndex(r)->Name());
    const bool floating = !ma.is_static && options_.base != SdfAttachOptions::Base::kWelded;
    if (floating) ma.floating_joint = prefix + "root_joint";
    add_tree_link(r, "world", floating ? Transform::Identity() : ma.X_W_root, nullptr,
                  floating ? JointType::kFloating : JointType::kFixed, Transform::Identity());
    stack.assign(children[r].rbegin(), children[r].rend());
  } else {
    if (options_.base == SdfAttachOptions::Base::kFloating && !ma.is_static) {
      const JointInfo& j = joints[world_children[0]];
      fail(j.origin.file, j.origin.line, mdesc + " is attached to the world by joint " + in_quotes(j.joint->Name()) +
                                             "; it cannot also be floating");
    }
    ma.root_link = "world";
    ma.X_W_root = X_W_M;
    stack.assign(world_children.rbegin(), world_children.rend());
  }
  while (!stack.empty()) {
    const JointInfo& j = joints[stack.back()];
    stack.pop_back();
    const std::string jdesc = mdesc + " joint " + in_quotes(j.joint->Name());
    const Transform X_MJ = resolve(j.joint->SemanticPose(), "__model__", j.origin, jdesc);
    const int c = link_index.at(j.child);
    const Transform X_MC = link_pose(c);
    Transform X_PJ;  // joint frame in the parent link frame (the world for the world)
    std::string parent_frame;
    if (j.parent == "world") {
      X_PJ = X_W_M * X_MJ;
      parent_frame = "world";
    } else {
      X_PJ = link_pose(link_index.at(j.parent)).inverse() * X_MJ;
      parent_frame = frame_name.at(j.parent);
    }
    add_tree_link(c, parent_frame, X_PJ, &j, joint_type(j), X_MJ.inverse() * X_MC);
    stack.insert(stack.end(), children[c].rbegin(), children[c].rend());
  }
  out_.joints.insert(out_.joints.end(), ma.joints.begin(), ma.joints.end());
  out_.collisions.insert(out_.collisions.end(), ma.collisions.begin(), ma.collisions.end());
  out_.colors.insert(out_.colors.end(), ma.colors.begin(), ma.colors.end());
  out_.visuals.insert(out_.visuals.end(), ma.visuals.begin(), ma.visuals.end());
  out_.models.push_back(std::move(ma));
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

SdfAttachment add_sdf(multibody::ModelBuilder& builder, const std::string& path, const SdfAttachOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SdfError(path + ": cannot read SDF file: no such file");
  if (fs::is_directory(path, ec)) throw SdfError(path + ": cannot read SDF file: it is a directory");
  {
    std::ifstream in(path);
    if (!in) throw SdfError(path + ": cannot read SDF file: " + std::strerror(errno));
  }
  const std::string abs_path = absolute_path(path);
  const fs::path directory = fs::path(abs_path).parent_path();

  // Step 2 first (it needs no libsdformat): a malformed file is reported by tinyxml with its
  // line; the root element and its version are checked, as libsdformat throws std::stoi's bare
  // "stoi" on a version such as "x1.8" (fuzz_sdf finding). Then a well-formed XML file that
  // libsdformat fails to parse is checked for bad numbers, the more precise message.
  {
    TiXmlDocument doc;
    if (!doc.LoadFile(abs_path.c_str())) {
      std::string msg = "malformed XML: ";
      msg += doc.ErrorDesc();
      fail(path, doc.ErrorRow(), msg);
    }
    const TiXmlElement* top = doc.RootElement();
    if (top == nullptr || std::strcmp(top->Value(), "sdf") != 0)
      fail(path, top ? top->Row() : 0,
           "the root element is <" + std::string(top ? top->Value() : "") + ">, expected <sdf> (an SDFormat file)");
    if (const char* version = top->Attribute("version")) {
      const std::string v = version;
      const std::size_t dot = v.find('.');
      const auto digits = [](const std::string& t) {
        return !t.empty() && t.size() <= 4 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
      };
      if (dot == std::string::npos || !digits(v.substr(0, dot)) || !digits(v.substr(dot + 1)))
        fail(path, top->Row(),
             "<sdf version> " +
                 (util::invalid_utf8_offset(v) == std::string::npos ? in_quotes(v) : std::string("(bytes that are not UTF-8)")) +
                 " is not a version number MAJOR.MINOR (e.g. 1.9)");
    }
  }
  // Step 1.
  sdf::ParserConfig config;
  config.SetUnrecognizedElementsPolicy(sdf::EnforcementPolicy::ERR);
  config.SetFindCallback([directory](const std::string& uri) { return find_uri(uri, directory); });
  sdf::Root root;
  sdf::Errors errors;
  try {
    QuietParse quiet;
    errors = root.Load(abs_path, config);
  } catch (const std::exception& e) {  // libsdformat's own exceptions (std::stoi's, ...) name nothing
    fail(path, 0, std::string("libsdformat could not read the file: ") + e.what());
  }
  std::set<std::string> files{abs_path};
  collect_files(root.Element(), files);
  check_files(files, abs_path, path);
  // Inertias are checked on the DOM below, with the file's numbers and line.
  errors.erase(std::remove_if(errors.begin(), errors.end(),
                              [](const sdf::Error& e) { return e.Code() == sdf::ErrorCode::LINK_INERTIA_INVALID; }),
               errors.end());
  if (!errors.empty()) fail_with(errors, abs_path, path);

  // Step 3.
  SdfAttachment out;
  ModelAdder adder(builder, options, abs_path, path, out);
  if (root.WorldCount() > 0) {
    if (root.WorldCount() > 1)
      fail(path, 0, "the file has " + std::to_string(root.WorldCount()) + " <world>s; coulomb loads one");
    const sdf::World& world = *root.WorldByIndex(0);
    out.name = world.Name();
    out.is_world = true;
    out.gravity = to_vector(world.Gravity());
    for (uint64_t k = 0; k < world.ModelCount(); ++k) {
      const sdf::Model& model = *world.ModelByIndex(k);
      const Origin o = origin_of(model.Element(), abs_path, path);
      const Transform X_W_M = options.X_W_file * resolve(model.SemanticPose(), "", o, "model " + in_quotes(model.Name()));
      adder.add(model, options.prefix + model.Name() + "/", X_W_M);
    }
    if (world.ActorCount() > 0)
      out.warnings.push_back(path + ": world " + in_quotes(world.Name()) + ": " + std::to_string(world.ActorCount()) +
                             " <actor>(s) are not simulated");
  } else if (root.Model() != nullptr) {
    const sdf::Model& model = *root.Model();
    out.name = model.Name();
    adder.add(model, options.prefix, options.X_W_file * to_transform(model.RawPose()));
  } else {
    fail(path, 0, "the file holds neither a <model> nor a <world>");
  }
  return out;
}

SdfModel load_sdf(const std::string& path, const SdfAttachOptions& options) {
  multibody::ModelBuilder builder(fs::path(path).stem().string());
  SdfModel out;
  out.attachment = add_sdf(builder, path, options);
  out.model = builder.build();
  out.model.set_gravity(out.attachment.gravity);
  out.q0 = out.model.neutral_configuration();
  for (const SdfModelAttachment& m : out.attachment.models) {
    if (m.floating_joint.empty()) continue;
    const multibody::Joint& j = out.model.body(out.model.joint_body(m.floating_joint)).joint;
    const math::Quaternion q(m.X_W_root.R);
    out.q0.segment<3>(j.q_index) = m.X_W_root.p;
    out.q0[j.q_index + 3] = q.w();
    out.q0[j.q_index + 4] = q.x();
    out.q0[j.q_index + 5] = q.y();
    out.q0[j.q_index + 6] = q.z();
  }
  return out;
}

bool is_sdf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  size_t pos = 0;
  while (true) {
    pos = head.find('<', pos);
    if (pos == std::string::npos || pos + 1 >= head.size()) return false;
    const char next = head[pos + 1];
    if (next == '?' || next == '!') {  // declaration, comment, doctype
      pos = head.find('>', pos);
      if (pos == std::string::npos) return false;
      continue;
    }
    return head.compare(pos + 1, 3, "sdf") == 0 &&
           (pos + 4 >= head.size() || std::isspace(static_cast<unsigned char>(head[pos + 4])) || head[pos + 4] == '>');
  }
}

}  // namespace coulomb::io
