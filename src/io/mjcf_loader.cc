// MJCF (MuJoCo XML) → multibody::Model, geometry, actuators and options.
//
// Passes:
//  1. tinyxml2 reads the file (line numbers for messages); <include file> elements are replaced
//     by the children of the included file's <mujoco> root, recursively (cycles are errors), into
//     a tree of Element records that remember their file and line.
//  2. <compiler>, <option>, <default> classes (each class a copy of its parent's attribute
//     defaults with its own on top) and <asset><mesh> are read.
//  3. <worldbody> is walked depth-first in file order (MuJoCo's body and joint order), every body
//     becoming links of a ModelBuilder (see add_mjcf in the header for the joint chain), its
//     inertia given or computed from its geoms with MuJoCo's formulas.
//  4. <actuator>, <contact>: motors, position servos and excluded body pairs.
//  5. <equality>: connect and weld (the others are unsupported).
// Every element is checked against the MJCF schema's element names: unknown ones are errors;
// known ones that change the simulation but are not supported are collected into one warning.
#include "coulomb/io/mjcf_loader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <tinyxml2.h>

#include "coulomb/geometry/mesh_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "../util/format.h"

namespace coulomb::io {

namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Quaternion;
using math::SpatialInertia;
using math::Transform;
using math::Vector3;
using multibody::JointSpec;
using multibody::JointType;

constexpr double kPi = 3.14159265358979323846;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// ------------------------------------------------------------------------------------------
// Pass 1: the element tree, includes expanded

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // file order
  std::string file;  // the file it is in (as given, for messages)
  std::string directory;
  int line = 0;
  std::vector<std::unique_ptr<Element>> children;

  const std::string* attribute(const std::string& key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return &v;
    return nullptr;
  }
  std::string where() const { return file + ":" + std::to_string(line); }
  /// "<geom name='x'>" or "<geom>".
  std::string label() const {
    const std::string* n = attribute("name");
    return "<" + name + (n != nullptr ? " name=" + in_quotes(*n) : std::string()) + ">";
  }
  [[noreturn]] void fail(const std::string& message) const { throw MjcfError(where() + ": " + label() + ": " + message); }
};

class TreeReader {
 public:
  std::unique_ptr<Element> read_file(const std::string& path, const std::string& shown_name, const Element* from) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(path, ec);
    const std::string key = ec ? path : canonical.string();
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end()) {
      std::string chain;
      for (const std::string& s : stack_) chain += s + " -> ";
      from->fail("attribute 'file': include cycle: " + chain + key);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (from != nullptr) from->fail("attribute 'file': cannot read included file " + in_quotes(path));
      throw MjcfError(shown_name + ": cannot read the file");
    }
    std::stringstream ss;
    ss << in.rdbuf();
    stack_.push_back(key);
    auto root = read_string(ss.str(), shown_name, fs::path(path).parent_path().string());
    stack_.pop_back();
    return root;
  }

  std::unique_ptr<Element> read_string(const std::string& xml, const std::string& source, const std::string& dir) {
    tinyxml2::XMLDocument doc;
    if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
      const int line = doc.ErrorLineNum();
      throw MjcfError(source + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                      ": malformed XML: " + (doc.ErrorStr() != nullptr ? doc.ErrorStr() : "parse error"));
    }
    const tinyxml2::XMLElement* root = doc.RootElement();
    if (root == nullptr) throw MjcfError(source + ": no root element");
    if (std::string(root->Name()) != "mujoco")
      throw MjcfError(source + ":" + std::to_string(root->GetLineNum()) + ": root element is <" + root->Name() +
                      ">, expected <mujoco> (an MJCF file)");
    return convert(root, source, dir);
  }

 private:
  std::unique_ptr<Element> convert(const tinyxml2::XMLElement* x, const std::string& source, const std::string& dir) {
    auto e = std::make_unique<Element>();
    e->name = x->Name();
    e->file = source;
    e->directory = dir.empty() ? "." : dir;
    e->line = x->GetLineNum();
    for (const tinyxml2::XMLAttribute* a = x->FirstAttribute(); a != nullptr; a = a->Next())
      e->attributes.emplace_back(a->Name(), a->Value());
    for (const tinyxml2::XMLElement* c = x->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
      if (std::string(c->Name()) == "include") {
        auto inc = convert(c, source, dir);  // for its file and line
        for (const auto& [k, v] : inc->attributes)
          if (k != "file") inc->fail("unknown attribute " + in_quotes(k));
        const std::string* file = inc->attribute("file");
        if (file == nullptr) inc->fail("attribute 'file' is missing");
        fs::path p(*file);
        if (p.is_relative()) p = fs::path(e->directory) / p;
        auto included = read_file(p.string(), p.string(), inc.get());
        for (auto& child : included->children) e->children.push_back(std::move(child));
        continue;
      }
      e->children.push_back(convert(c, source, dir));
    }
    return e;
  }

  std::vector<std::string> stack_;
};

// ------------------------------------------------------------------------------------------
// Attribute values: explicit, or from the element's default class

struct Value {
  std::string text;
  const Element* element = nullptr;  // where it was written (the element or a <default> child)
};

using AttributeMap = std::map<std::string, Value>;

struct DefaultClass {
  std::string name;
  std::map<std::string, AttributeMap> by_kind;  // element kind ("geom", "joint", …) → attributes
};

/// Known attributes per element kind (MJCF reference, version 2.2). Unknown ones are errors.
const std::map<std::string, std::set<std::string>>& known_attributes() {
  static const std::map<std::string, std::set<std::string>> k = {
      {"body", {"name", "childclass", "pos", "quat", "mocap", "axisangle", "xyaxes", "zaxis", "euler", "gravcomp",
                "user"}},
      {"inertial", {"pos", "quat", "axisangle", "xyaxes", "zaxis", "euler", "mass", "diaginertia", "fullinertia"}},
      {"joint", {"name", "class", "type", "group", "pos", "axis", "springdamper", "limited", "solreflimit",
                 "solimplimit", "solreffriction", "solimpfriction", "stiffness", "range", "margin", "ref",
                 "springref", "armature", "damping", "frictionloss", "user", "actuatorfrclimited",
                 "actuatorfrcrange"}},
      {"freejoint", {"name", "group"}},
      {"geom", {"name", "class", "type", "contype", "conaffinity", "condim", "group", "priority", "size", "material",
                "friction", "mass", "density", "shellinertia", "solmix", "solref", "solimp", "margin", "gap",
                "fromto", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler", "hfield", "mesh", "fitscale",
                "rgba", "fluidshape", "fluidcoef", "user"}},
      {"motor", {"name", "class", "group", "ctrllimited", "forcelimited", "ctrlrange", "forcerange", "lengthrange",
                 "gear", "cranklength", "joint", "jointinparent", "tendon", "cranksite", "slidersite", "site",
                 "refsite", "user", "actlimited", "actrange"}},
      {"position", {"name", "class", "group", "ctrllimited", "forcelimited", "ctrlrange", "forcerange",
                    "lengthrange", "gear", "cranklength", "joint", "jointinparent", "tendon", "cranksite",
                    "slidersite", "site", "refsite", "user", "kp", "actlimited", "actrange"}},
      {"compiler", {"boundmass", "boundinertia", "settotalmass", "balanceinertia", "strippath", "coordinate",
                    "angle", "fitaabb", "eulerseq", "meshdir", "texturedir", "discardvisual", "convexhull",
                    "usethread", "fusestatic", "inertiafromgeom", "inertiagrouprange", "exactmeshinertia",
                    "autolimits", "assetdir"}},
      {"option", {"timestep", "apirate", "impratio", "tolerance", "noslip_tolerance", "mpr_tolerance", "gravity",
                  "wind", "magnetic", "density", "viscosity", "o_margin", "o_solref", "o_solimp", "integrator",
                  "collision", "cone", "jacobian", "solver", "iterations", "noslip_iterations", "mpr_iterations"}},
      {"mesh", {"name", "class", "content_type", "file", "vertex", "normal", "texcoord", "face", "refpos", "refquat",
                "scale", "smoothnormal"}},
      {"exclude", {"name", "body1", "body2"}},
      {"connect", {"name", "class", "active", "solref", "solimp", "body1", "body2", "anchor"}},
      {"weld", {"name", "class", "active", "solref", "solimp", "body1", "body2", "relpose"}},
      {"mujoco", {"model"}},
      {"default", {"class"}},
  };
  return k;
}

/// Elements by parent: known, and what happens to them.
enum class Handling { kRead, kIgnored, kUnsupported };

const std::map<std::string, Handling>& children_of(const std::string& parent) {
  using H = Handling;
  static const std::map<std::string, std::map<std::string, Handling>> table = {
      {"mujoco",
       {{"compiler", H::kRead}, {"option", H::kRead}, {"size", H::kIgnored}, {"visual", H::kIgnored},
        {"statistic", H::kIgnored}, {"default", H::kRead}, {"extension", H::kUnsupported},
        {"custom", H::kIgnored}, {"asset", H::kRead}, {"worldbody", H::kRead}, {"contact", H::kRead},
        {"equality", H::kRead}, {"tendon", H::kUnsupported}, {"actuator", H::kRead},
        {"sensor", H::kUnsupported}, {"keyframe", H::kIgnored}, {"skin", H::kIgnored}}},
      {"worldbody",
       {{"body", H::kRead}, {"geom", H::kRead}, {"site", H::kIgnored}, {"camera", H::kIgnored},
        {"light", H::kIgnored}, {"composite", H::kUnsupported}, {"flexcomp", H::kUnsupported},
        {"plugin", H::kUnsupported}, {"replicate", H::kUnsupported}, {"frame", H::kUnsupported}}},
      {"body",
       {{"body", H::kRead}, {"geom", H::kRead}, {"joint", H::kRead}, {"freejoint", H::kRead},
        {"inertial", H::kRead}, {"site", H::kIgnored}, {"camera", H::kIgnored}, {"light", H::kIgnored},
        {"composite", H::kUnsupported}, {"flexcomp", H::kUnsupported}, {"plugin", H::kUnsupported},
        {"replicate", H::kUnsupported}, {"frame", H::kUnsupported}}},
      {"asset",
       {{"mesh", H::kRead}, {"texture", H::kIgnored}, {"material", H::kIgnored}, {"hfield", H::kUnsupported},
        {"skin", H::kIgnored}}},
      {"actuator",
       {{"motor", H::kRead}, {"position", H::kRead}, {"general", H::kUnsupported}, {"velocity", H::kUnsupported},
        {"intvelocity", H::kUnsupported}, {"damper", H::kUnsupported}, {"cylinder", H::kUnsupported},
        {"muscle", H::kUnsupported}, {"adhesion", H::kUnsupported}, {"plugin", H::kUnsupported}}},
      {"contact", {{"exclude", H::kRead}, {"pair", H::kUnsupported}}},
      {"equality",
       {{"connect", H::kRead}, {"weld", H::kRead}, {"joint", H::kUnsupported}, {"tendon", H::kUnsupported},
        {"distance", H::kUnsupported}}},
      {"default",
       {{"default", H::kRead}, {"mesh", H::kRead}, {"material", H::kIgnored}, {"joint", H::kRead},
        {"geom", H::kRead}, {"site", H::kIgnored}, {"camera", H::kIgnored}, {"light", H::kIgnored},
        {"pair", H::kIgnored}, {"equality", H::kIgnored}, {"tendon", H::kIgnored}, {"general", H::kIgnored},
        {"motor", H::kRead}, {"position", H::kRead}, {"velocity", H::kIgnored}, {"intvelocity", H::kIgnored},
        {"damper", H::kIgnored}, {"cylinder", H::kIgnored}, {"muscle", H::kIgnored}, {"adhesion", H::kIgnored}}},
      {"option", {{"flag", H::kIgnored}}},
  };
  static const std::map<std::string, Handling> none;
  auto it = table.find(parent);
  return it == table.end() ? none : it->second;
}

// ------------------------------------------------------------------------------------------
// The loader

struct BodyRecord {
  std::string link;        // prefixed link name of the body's frame
  int weld_root = 0;       // index in bodies of the nearest ancestor-or-self with joints (0: world)
  bool has_joints = false;
};

struct MeshAsset {
  std::string name;
  std::string path;  // resolved
  Vector3 scale = Vector3::Ones();
  const Element* element = nullptr;
};

class Loader {
 public:
  Loader(multibody::ModelBuilder& builder, const MjcfAttachOptions& options) : builder_(builder), options_(options) {}

  MjcfAttachment run(const Element& root) {
    root_ = &root;
    check_attributes(root, "mujoco");
    if (const std::string* m = root.attribute("model")) out_.model_name = *m;
    classify(root);
    // Pass 2: compiler first (angle units), then defaults, options, assets.
    for (const auto& c : root.children)
      if (c->name == "compiler") read_compiler(*c);
    DefaultClass main;
    main.name = "main";
    classes_["main"] = main;
    for (const auto& c : root.children)
      if (c->name == "default") read_default(*c, "", true);
    for (const auto& c : root.children) {
      if (c->name == "option") read_option(*c);
      if (c->name == "asset")
        for (const auto& a : c->children)
          if (a->name == "mesh") read_mesh(*a);
    }
    // Pass 3: bodies.
    bodies_.push_back(BodyRecord{"world", 0, false});
    body_by_name_["world"] = 0;
    for (const auto& c : root.children)
      if (c->name == "worldbody") read_worldbody(*c);
    // Pass 4: actuators, contact exclusions.
    for (const auto& c : root.children) {
      if (c->name == "actuator")
        for (const auto& a : c->children)
          if (a->name == "motor" || a->name == "position") read_actuator(*a);
      if (c->name == "contact")
        for (const auto& x : c->children)
          if (x->name == "exclude") read_exclude(*x);
      if (c->name == "equality")
        for (const auto& x : c->children)
          if (x->name == "connect" || x->name == "weld") read_equality(*x);
    }
    if (!unsupported_.empty()) {
      std::string w = source_ + ": not supported, ignored (the simulation differs from MuJoCo's):";
      for (const std::string& u : unsupported_) w += " " + u + ";";
      w.pop_back();
      out_.warnings.insert(out_.warnings.begin(), w);
    }
    if (!legacy_meshes_.empty()) {
      std::string w = source_ + ": mesh inertia is the exact solid's; MuJoCo 2.2 without <compiler "
                                "exactmeshinertia=\"true\"> approximates it (differs for non-convex meshes):";
      for (const std::string& m : legacy_meshes_) w += " " + m;
      out_.warnings.push_back(w);
    }
    if (!ellipsoids_.empty()) {
      std::string w = source_ + ": ellipsoid geoms collide as their best-fit sphere or capsule (inertia exact):";
      for (const std::string& e : ellipsoids_) w += " " + e;
      out_.warnings.push_back(w);
    }
    return std::move(out_);
  }

  void set_source(const std::string& s) { source_ = s; }

  /// "line N" for an element of the loaded file, "FILE:N" for one from an included file.
  std::string at(const Element& e) const {
    return e.file == source_ ? "line " + std::to_string(e.line) : e.file + ":" + std::to_string(e.line);
  }

 private:
  // ---- schema checks ----

  void classify(const Element& e) {
    const auto& kids = children_of(e.name);
    for (const auto& c : e.children) {
      auto it = kids.find(c->name);
      if (it == kids.end()) {
        std::string known;
        for (const auto& [k, h] : kids) known += (known.empty() ? "" : ", ") + k;
        c->fail("unknown element <" + c->name + "> inside <" + e.name + ">" +
                (known.empty() ? std::string(" (it takes no child elements)") : " (known here: " + known + ")"));
      }
      if (it->second == Handling::kUnsupported) {
        unsupported_.push_back("<" + c->name + "> (" + at(*c) + ")");
        continue;
      }
      if (it->second == Handling::kIgnored) continue;
      if (e.name == "default" && c->name != "default") continue;  // attribute sets, checked when read
      classify(*c);
    }
  }

  void check_attributes(const Element& e, const std::string& kind) const {
    auto it = known_attributes().find(kind);
    if (it == known_attributes().end()) return;
    for (const auto& [k, v] : e.attributes)
      if (!it->second.count(k)) e.fail("unknown attribute " + in_quotes(k) + " (value " + in_quotes(v) + ")");
  }

  // ---- number parsing ----

  static bool parse_number(std::string_view token, double& out) { return util::parse_number(token, out); }

  /// The numbers of attribute `key` (count between min_count and max_count), finite.
  static std::vector<double> numbers(const Element& e, const std::string& key, const std::string& text,
                                     size_t min_count, size_t max_count) {
    std::vector<double> out;
    std::istringstream in(text);
    std::string token;
    while (in >> token) {
      double x = 0.0;
      if (!parse_number(token, x))
        e.fail("attribute " + in_quotes(key) + ": not a number: " + in_quotes(token) + " (value " + in_quotes(text) +
               ")");
      if (!std::isfinite(x)) e.fail("attribute " + in_quotes(key) + ": not finite: " + in_quotes(token));
      out.push_back(x);
    }
    if (out.size() < min_count || out.size() > max_count)
      e.fail("attribute " + in_quotes(key) + ": expected " +
             (min_count == max_count ? std::to_string(min_count)
                                     : std::to_string(min_count) + " to " + std::to_string(max_count)) +
             " numbers, got " + std::to_string(out.size()) + " (" + in_quotes(text) + ")");
    return out;
  }

  // ---- attribute access with defaults ----

  /// The attributes of element `e` of `kind` under class `cls`: explicit first, then the class.
  struct Attrs {
    const Element* e = nullptr;
    const AttributeMap* defaults = nullptr;

    const Value* find(const std::string& key, Value& scratch) const {
      if (const std::string* v = e->attribute(key)) {
        scratch = Value{*v, e};
        return &scratch;
      }
      if (defaults != nullptr) {
        auto it = defaults->find(key);
        if (it != defaults->end()) return &it->second;
      }
      return nullptr;
    }
    bool has(const std::string& key) const {
      Value s;
      return find(key, s) != nullptr;
    }
    std::string text(const std::string& key, const std::string& fallback) const {
      Value s;
      const Value* v = find(key, s);
      return v != nullptr ? v->text : fallback;
    }
    std::vector<double> numbers(const std::string& key, size_t min_count, size_t max_count,
                                std::vector<double> fallback) const {
      Value s;
      const Value* v = find(key, s);
      if (v == nullptr) return fallback;
      return Loader::numbers(*v->element, key, v->text, min_count, max_count);
    }
    double number(const std::string& key, double fallback) const {
      return numbers(key, 1, 1, {fallback})[0];
    }
    Vector3 vector3(const std::string& key, const Vector3& fallback) const {
      const auto v = numbers(key, 3, 3, {fallback.x(), fallback.y(), fallback.z()});
      return Vector3(v[0], v[1], v[2]);
    }
    /// A keyword among `allowed`.
    std::string keyword(const std::string& key, const std::string& fallback,
                        std::initializer_list<const char*> allowed) const {
      Value s;
      const Value* v = find(key, s);
      if (v == nullptr) return fallback;
      for (const char* a : allowed)
        if (v->text == a) return v->text;
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      v->element->fail("attribute " + in_quotes(key) + ": unknown value " + in_quotes(v->text) + " (expected " + list +
                       ")");
    }
    bool boolean(const std::string& key, bool fallback) const {
      const std::string k = keyword(key, fallback ? "true" : "false", {"true", "false"});
      return k == "true";
    }
    [[noreturn]] void fail(const std::string& message) const { e->fail(message); }
  };

  const DefaultClass& lookup_class(const Element& e, const std::string& active) const {
    std::string cls = active;
    if (const std::string* c = e.attribute("class")) cls = *c;
    auto it = classes_.find(cls);
    if (it == classes_.end()) e.fail("attribute 'class': unknown default class " + in_quotes(cls));
    return it->second;
  }

  Attrs attrs(const Element& e, const std::string& kind, const std::string& active_class) const {
    check_attributes(e, kind);
    const DefaultClass& cls = lookup_class(e, active_class);
    auto it = cls.by_kind.find(kind);
    return Attrs{&e, it == cls.by_kind.end() ? nullptr : &it->second};
  }

  // ---- pass 2 ----

  void read_compiler(const Element& e) {
    const Attrs a{&e, nullptr};
    check_attributes(e, "compiler");
    degrees_ = a.keyword("angle", degrees_ ? "degree" : "radian", {"degree", "radian"}) == "degree";
    if (a.has("eulerseq")) {
      eulerseq_ = a.text("eulerseq", "xyz");
      if (eulerseq_.size() != 3 || eulerseq_.find_first_not_of("xyzXYZ") != std::string::npos)
        e.fail("attribute 'eulerseq': expected 3 letters among xyzXYZ, got " + in_quotes(eulerseq_));
    }
    if (a.has("meshdir")) meshdir_ = (fs::path(e.directory) / a.text("meshdir", "")).string();
    if (a.has("assetdir") && !a.has("meshdir")) meshdir_ = (fs::path(e.directory) / a.text("assetdir", "")).string();
    inertiafromgeom_ = a.keyword("inertiafromgeom", inertiafromgeom_, {"true", "false", "auto"});
    if (a.has("inertiagrouprange")) {
      const auto r = a.numbers("inertiagrouprange", 2, 2, {});
      inertia_group_lo_ = static_cast<int>(r[0]);
      inertia_group_hi_ = static_cast<int>(r[1]);
    }
    autolimits_ = a.boolean("autolimits", autolimits_);
    exactmeshinertia_ = a.boolean("exactmeshinertia", exactmeshinertia_);
    if (a.keyword("coordinate", "local", {"local", "global"}) == "global")
      e.fail("attribute 'coordinate': 'global' is not supported (MuJoCo 2.2 removed it too)");
    for (const char* k : {"boundmass", "boundinertia", "settotalmass"})
      if (a.has(k)) {
        const double x = a.number(k, 0.0);
        if ((std::string(k) == "settotalmass" && x > 0.0) || (std::string(k) != "settotalmass" && x > 0.0))
          unsupported_.push_back("<compiler " + std::string(k) + "> (" + at(e) + ")");
      }
    if (a.boolean("balanceinertia", false))
      unsupported_.push_back("<compiler balanceinertia> (" + at(e) + ")");
  }

  void read_default(const Element& e, const std::string& parent, bool top) {
    check_attributes(e, "default");
    std::string name;
    if (const std::string* c = e.attribute("class")) name = *c;
    else if (top) name = "main";
    else e.fail("attribute 'class' is missing (only the top-level <default> may omit it)");
    if (top && name != "main") {
      // <default class="X"> at the top level: a child of main.
    }
    DefaultClass cls;
    if (!(top && name == "main")) {
      if (classes_.count(name) && name != "main") e.fail("duplicate default class " + in_quotes(name));
      cls = classes_.at(parent.empty() ? "main" : parent);
      cls.name = name;
    } else {
      cls = classes_.at("main");
    }
    for (const auto& c : e.children) {
      if (c->name == "default") continue;
      auto h = children_of("default").find(c->name);
      if (h == children_of("default").end()) continue;  // classify() reported it
      if (h->second == Handling::kRead) check_attributes(*c, c->name);
      AttributeMap& m = cls.by_kind[c->name];
      for (const auto& [k, v] : c->attributes) {
        if (k == "class" || k == "name") continue;
        m[k] = Value{v, c.get()};
      }
    }
    classes_[name] = cls;
    for (const auto& c : e.children)
      if (c->name == "default") read_default(*c, name, false);
  }

  void read_option(const Element& e) {
    check_attributes(e, "option");
    const Attrs a{&e, nullptr};
    if (a.has("timestep")) {
      const double dt = a.number("timestep", 0.002);
      if (!(dt > 0.0)) e.fail("attribute 'timestep': must be > 0, got " + util::format_number(dt));
      out_.timestep = dt;
    }
    if (a.has("gravity")) out_.gravity = a.vector3("gravity", Vector3(0, 0, -9.81));
    for (const char* k : {"density", "viscosity"})
      if (a.has(k) && a.number(k, 0.0) != 0.0)
        unsupported_.push_back("<option " + std::string(k) + "> (fluid forces, " + at(e) + ")");
    for (const char* k : {"wind", "magnetic"})
      if (a.has(k) && k == std::string("wind") && a.vector3(k, Vector3::Zero()).norm() > 0.0)
        unsupported_.push_back("<option wind> (" + at(e) + ")");
  }

  void read_mesh(const Element& e) {
    const Attrs a = attrs(e, "mesh", "main");
    MeshAsset m;
    m.element = &e;
    const std::string file = a.text("file", "");
    if (file.empty()) {
      unsupported_.push_back("<mesh> without a file (inline vertices, " + at(e) + ")");
      return;
    }
    m.name = a.text("name", fs::path(file).stem().string());
    m.scale = a.vector3("scale", Vector3::Ones());
    fs::path p(file);
    if (p.is_relative()) p = fs::path(meshdir_.empty() ? e.directory : meshdir_) / p;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) e.fail("attribute 'file': mesh file not found: " + in_quotes(p.string()));
    m.path = p.string();
    if (meshes_.count(m.name)) e.fail("duplicate mesh name " + in_quotes(m.name));
    meshes_[m.name] = m;
  }

  // ---- orientation ----

  static Quaternion axis_angle(const Vector3& axis, double angle) {
    return Quaternion(Eigen::AngleAxisd(angle, axis.normalized()));
  }

  /// MuJoCo's z-axis → quaternion: the minimal rotation taking (0, 0, 1) to `z` (unit).
  static Quaternion z_to_quaternion(const Vector3& z) {
    Vector3 axis = Vector3::UnitZ().cross(z);
    const double s = axis.norm();
    if (s < 1e-10) axis = Vector3::UnitX();
    else axis /= s;
    const double angle = std::atan2(s, z.z());
    return Quaternion(Eigen::AngleAxisd(angle, axis));
  }

  /// Rotation of a frame from quat, axisangle, euler, xyaxes or zaxis (at most one), identity
  /// when none is given.
  Matrix3 orientation(const Attrs& a) const {
    int count = 0;
    for (const char* k : {"quat", "axisangle", "euler", "xyaxes", "zaxis"})
      if (a.e->attribute(k) != nullptr) ++count;
    if (count > 1) a.fail("more than one orientation attribute (quat, axisangle, euler, xyaxes, zaxis)");
    const double unit = degrees_ ? kPi / 180.0 : 1.0;
    if (a.has("quat")) {
      const auto q = a.numbers("quat", 4, 4, {});
      const Quaternion quat(q[0], q[1], q[2], q[3]);
      if (quat.norm() < 1e-12) a.fail("attribute 'quat': zero quaternion");
      return quat.normalized().toRotationMatrix();
    }
    if (a.has("axisangle")) {
      const auto v = a.numbers("axisangle", 4, 4, {});
      const Vector3 axis(v[0], v[1], v[2]);
      if (axis.norm() < 1e-12) a.fail("attribute 'axisangle': zero axis");
      return axis_angle(axis, v[3] * unit).toRotationMatrix();
    }
    if (a.has("euler")) {
      const auto v = a.numbers("euler", 3, 3, {});
      Quaternion q = Quaternion::Identity();
      for (int i = 0; i < 3; ++i) {
        const char c = eulerseq_[static_cast<size_t>(i)];
        const char lower = static_cast<char>(std::tolower(c));
        const Vector3 axis = lower == 'x' ? Vector3::UnitX() : lower == 'y' ? Vector3::UnitY() : Vector3::UnitZ();
        const Quaternion r = axis_angle(axis, v[static_cast<size_t>(i)] * unit);
        q = (c == lower) ? Quaternion(q * r) : Quaternion(r * q);  // lower case: rotating axes
      }
      return q.normalized().toRotationMatrix();
    }
    if (a.has("xyaxes")) {
      const auto v = a.numbers("xyaxes", 6, 6, {});
      Vector3 x(v[0], v[1], v[2]), y(v[3], v[4], v[5]);
      if (x.norm() < 1e-12) a.fail("attribute 'xyaxes': zero x axis");
      x.normalize();
      y -= x * x.dot(y);
      if (y.norm() < 1e-12) a.fail("attribute 'xyaxes': y axis parallel to x");
      y.normalize();
      Matrix3 R;
      R.col(0) = x;
      R.col(1) = y;
      R.col(2) = x.cross(y);
      return R;
    }
    if (a.has("zaxis")) {
      const Vector3 z = a.vector3("zaxis", Vector3::UnitZ());
      if (z.norm() < 1e-12) a.fail("attribute 'zaxis': zero axis");
      return z_to_quaternion(z.normalized()).toRotationMatrix();
    }
    return Matrix3::Identity();
  }

  Transform frame(const Attrs& a) const { return Transform(orientation(a), a.vector3("pos", Vector3::Zero())); }

  // ---- pass 3: bodies ----

  std::string prefixed(const std::string& name) const { return name == "world" ? name : options_.prefix + name; }

  void read_worldbody(const Element& wb) {
    for (const auto& c : wb.children) {
      if (c->name == "geom") read_geom(*c, 0, "main", nullptr);
      else if (c->name == "body") read_body(*c, 0, "main", options_.X_W_root);
    }
  }

  /// Reads a body whose parent is body record `parent`; X_P_body0 is the pose of the MuJoCo
  /// parent frame for a child of the world (X_W_root), identity otherwise (used for the chain).
  void read_body(const Element& e, int parent, const std::string& parent_childclass, const Transform& X_world) {
    check_attributes(e, "body");
    const Attrs a{&e, nullptr};
    const std::string active = e.attribute("childclass") != nullptr ? *e.attribute("childclass") : parent_childclass;
    if (!classes_.count(active)) e.fail("attribute 'childclass': unknown default class " + in_quotes(active));
    const int index = static_cast<int>(bodies_.size());
    std::string name = a.text("name", "body" + std::to_string(index));
    if (body_by_name_.count(name)) e.fail("duplicate body name " + in_quotes(name));
    if (a.text("mocap", "false") == "true") unsupported_.push_back("<body mocap> (" + at(e) + ")");
    Transform X_PB0 = frame(a);
    if (parent == 0) X_PB0 = X_world * X_PB0;
    const std::string link = prefixed(name);
    const std::string parent_link = bodies_[static_cast<size_t>(parent)].link;

    // The body's own elements.
    std::vector<const Element*> joints, geoms, bodies;
    const Element* inertial = nullptr;
    for (const auto& c : e.children) {
      if (c->name == "joint" || c->name == "freejoint") joints.push_back(c.get());
      else if (c->name == "geom") geoms.push_back(c.get());
      else if (c->name == "body") bodies.push_back(c.get());
      else if (c->name == "inertial") {
        if (inertial != nullptr) c->fail("a body has at most one <inertial>");
        inertial = c.get();
      }
    }

    // Inertia: from <inertial> or from the geoms.
    SpatialInertia I_B = SpatialInertia::Zero();
    const bool from_geoms = inertiafromgeom_ == "true" || (inertiafromgeom_ == "auto" && inertial == nullptr);
    if (!from_geoms && inertial != nullptr) I_B = read_inertial(*inertial);
    for (const Element* g : geoms) {
      const SpatialInertia I_g = read_geom(*g, index, active, &link);
      if (from_geoms) I_B += I_g;
    }

    // Joints → chain.
    std::string current = parent_link;
    Transform X_current_next = X_PB0;  // pose of the next link's frame in `current`
    std::vector<JointSpec> specs;
    bool has_free = false;
    for (size_t k = 0; k < joints.size(); ++k) {
      const Element& je = *joints[k];
      MjcfJoint record;
      JointSpec spec;
      std::string type;
      Vector3 pos = Vector3::Zero(), axis = Vector3::UnitZ();
      double ref = 0.0;
      const int joint_index = joint_count_++;
      if (je.name == "freejoint") {
        check_attributes(je, "freejoint");
        type = "free";
        record.name = prefixed(je.attribute("name") != nullptr ? *je.attribute("name") : "joint" + std::to_string(joint_index));
      } else {
        const Attrs ja = attrs(je, "joint", active);
        type = ja.keyword("type", "hinge", {"hinge", "slide", "ball", "free"});
        record.name = prefixed(ja.text("name", "joint" + std::to_string(joint_index)));
        pos = ja.vector3("pos", Vector3::Zero());
        axis = ja.vector3("axis", Vector3::UnitZ());
        if (type != "free" && axis.norm() < 1e-12) je.fail("attribute 'axis': zero axis");
        const double unit = (type == "hinge" && degrees_) ? kPi / 180.0 : 1.0;
        ref = ja.number("ref", 0.0) * unit;
        record.ref = ref;
        record.springref = ja.number("springref", 0.0) * unit;
        record.stiffness = ja.number("stiffness", 0.0);
        spec.damping = ja.number("damping", 0.0);
        spec.friction = ja.number("frictionloss", 0.0);
        spec.armature = ja.number("armature", 0.0);
        for (const auto& [key, value] : {std::pair<const char*, double>{"stiffness", record.stiffness},
                                         {"damping", spec.damping},
                                         {"frictionloss", spec.friction},
                                         {"armature", spec.armature}})
          if (value < 0.0) je.fail("attribute " + in_quotes(key) + ": must be >= 0, got " + util::format_number(value));
        if (type == "ball") {
          // A ball joint's range is a cone limit on its rotation angle, which coulomb's joint
          // limits (per coordinate) cannot express: read and reported, not enforced.
          const std::string limited = ja.keyword("limited", "auto", {"true", "false", "auto"});
          if (ja.has("range")) ja.numbers("range", 2, 2, {0.0, 0.0});
          if (limited == "true" || (limited == "auto" && autolimits_ && ja.has("range")))
            out_.warnings.push_back(je.where() + ": the cone limit of ball joint " + in_quotes(record.name) +
                                    " (attribute 'range') is not enforced");
        } else if (type != "free") {
          const std::string limited = ja.keyword("limited", "auto", {"true", "false", "auto"});
          const bool has_range = ja.has("range");
          if (limited == "auto" && has_range && !autolimits_)
            je.fail("attribute 'range' without 'limited': set limited=\"true\" or \"false\", or <compiler "
                    "autolimits=\"true\"> (as MuJoCo 2.2 requires)");
          const bool is_limited = limited == "true" || (limited == "auto" && autolimits_ && has_range);
          if (is_limited) {
            const auto r = ja.numbers("range", 2, 2, {0.0, 0.0});
            if (r[0] >= r[1])
              je.fail("attribute 'range': lower " + util::format_number(r[0]) + " must be < upper " +
                      util::format_number(r[1]) + " on a limited joint");
            spec.limits.lower = r[0] * unit;
            spec.limits.upper = r[1] * unit;
          } else if (has_range) {
            ja.numbers("range", 2, 2, {0.0, 0.0});  // checked
          }
        }
      }
      record.type = type;
      record.line = je.line;
      spec.name = record.name;
      if (type == "free") {
        if (parent != 0) je.fail("a free joint is allowed only in a body whose parent is the world");
        if (joints.size() != 1) je.fail("a free joint must be the only joint of its body");
        if (pos.norm() > 0.0)
          out_.warnings.push_back(je.where() + ": free joint 'pos' is ignored (the body origin is the reference)");
        has_free = true;
        spec.type = JointType::kFloating;
        spec.X_PJ = Transform::Identity();
        record.X_W_initial = X_PB0;
        out_.free_joints.push_back(record.name);
        // The body link directly (no pos offset for a free joint).
        builder_add(je, link, current, spec, I_B);
        current = link;
        X_current_next = Transform::Identity();
      } else if (type == "ball") {
        // Rotation about `pos` (quaternion, angular velocity in the joint frame: joint.h); MuJoCo's
        // qpos0 of a ball joint is the identity, so no reference offset.
        spec.type = JointType::kBall;
        spec.X_PJ = X_current_next * Transform(Matrix3::Identity(), pos);
        const bool last = k + 1 == joints.size();
        const bool needs_offset = pos.norm() > 0.0;
        const std::string child = (last && !needs_offset) ? link : link + ":" + record.name.substr(options_.prefix.size());
        builder_add(je, child, current, spec, child == link ? I_B : SpatialInertia::Zero());
        current = child;
        X_current_next = Transform(Matrix3::Identity(), -pos);
      } else {
        spec.type = type == "hinge" ? JointType::kRevolute : JointType::kPrismatic;
        spec.axis = axis;
        // T_k = Trans(pos) · joint motion · Trans(−pos); the joint frame is at `pos`.
        spec.X_PJ = X_current_next * Transform(Matrix3::Identity(), pos);
        const bool last = k + 1 == joints.size();
        const bool needs_offset = pos.norm() > 0.0 || ref != 0.0;
        const std::string child = (last && !needs_offset) ? link : link + ":" + record.name.substr(options_.prefix.size());
        builder_add(je, child, current, spec, child == link ? I_B : SpatialInertia::Zero());
        current = child;
        // Reference offset: MuJoCo moves by q − ref.
        Transform X_ref = Transform::Identity();
        if (ref != 0.0) {
          if (type == "hinge") X_ref.R = axis_angle(axis, -ref).toRotationMatrix();
          else X_ref.p = -ref * axis.normalized();
        }
        X_current_next = X_ref * Transform(Matrix3::Identity(), -pos);
      }
      out_.joints.push_back(record);
    }
    (void)has_free;
    const bool has_joints = !joints.empty();
    if (!has_joints || current != link) {
      // Welded to the parent (no joints), or the offset after the last joint.
      JointSpec weld;
      weld.name = link + ":weld";
      weld.type = JointType::kFixed;
      weld.X_PJ = X_current_next;
      builder_add(e, link, current, weld, I_B);
    }
    body_by_name_[name] = index;
    const int weld_root = has_joints ? index : bodies_[static_cast<size_t>(parent)].weld_root;
    bodies_.push_back(BodyRecord{link, weld_root, has_joints});
    out_.bodies.push_back(link);
    // Parent filter (MuJoCo: both weld groups non-world, one the parent of the other).
    if (has_joints) {
      const int parent_weld = bodies_[static_cast<size_t>(parent)].weld_root;
      if (parent_weld != 0) out_.excluded_pairs.emplace_back(link, bodies_[static_cast<size_t>(parent_weld)].link);
    }

    for (const Element* b : bodies) read_body(*b, index, active, X_world);
  }

  void builder_add(const Element& e, const std::string& link, const std::string& parent, const JointSpec& spec,
                   const SpatialInertia& I) {
    try {
      builder_.add_link(link, parent, spec, I);
    } catch (const std::invalid_argument& ex) {
      e.fail(ex.what());
    }
  }

  SpatialInertia read_inertial(const Element& e) {
    check_attributes(e, "inertial");
    const Attrs a{&e, nullptr};
    const Transform X = frame(a);
    if (!a.has("mass")) e.fail("attribute 'mass' is missing");
    const double mass = a.number("mass", 0.0);
    if (mass < 0.0) e.fail("attribute 'mass': must be >= 0, got " + util::format_number(mass));
    Matrix3 I = Matrix3::Zero();
    if (a.has("fullinertia")) {
      if (a.has("diaginertia")) e.fail("both 'diaginertia' and 'fullinertia' given");
      const auto v = a.numbers("fullinertia", 6, 6, {});
      I << v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2];
    } else if (a.has("diaginertia")) {
      const auto v = a.numbers("diaginertia", 3, 3, {});
      I = Vector3(v[0], v[1], v[2]).asDiagonal();
    } else {
      e.fail("one of 'diaginertia' or 'fullinertia' is required");
    }
    try {
      multibody::validate_inertia(mass, I, e.where() + ": <inertial>");
    } catch (const std::invalid_argument& ex) {
      throw MjcfError(ex.what());
    }
    return SpatialInertia::FromCenterOfMass(mass, X.p, X.R * I * X.R.transpose());
  }

  /// Reads a geom of body record `body` (0 = world); returns its spatial inertia in the body
  /// frame (zero when it does not count).
  SpatialInertia read_geom(const Element& e, int body, const std::string& active, const std::string* link_ptr) {
    const Attrs a = attrs(e, "geom", active);
    MjcfGeom g;
    g.link = link_ptr != nullptr ? *link_ptr : std::string("world");
    g.line = e.line;
    g.file = e.file;
    if (a.has("name")) g.name = prefixed(a.text("name", ""));
    g.type = a.keyword("type", "sphere", {"sphere", "capsule", "ellipsoid", "cylinder", "box", "plane", "mesh", "hfield"});
    if (g.type == "hfield") {
      unsupported_.push_back("<geom type='hfield'> (" + at(e) + ")");
      return SpatialInertia::Zero();
    }
    std::vector<double> size = a.numbers("size", 1, 3, {0.0, 0.0, 0.0});
    size.resize(3, 0.0);
    for (double s : size)
      if (s < 0.0) e.fail("attribute 'size': must be >= 0, got " + a.text("size", ""));
    Transform X = frame(a);
    if (a.has("fromto")) {
      if (g.type != "capsule" && g.type != "cylinder" && g.type != "box" && g.type != "ellipsoid")
        e.fail("attribute 'fromto' is only allowed on capsule, cylinder, box and ellipsoid geoms, not " + g.type);
      const auto v = a.numbers("fromto", 6, 6, {});
      const Vector3 from(v[0], v[1], v[2]), to(v[3], v[4], v[5]);
      const Vector3 d = to - from;
      if (d.norm() < 1e-12) e.fail("attribute 'fromto': the two points coincide");
      X = Transform(z_to_quaternion(d.normalized()).toRotationMatrix(), 0.5 * (from + to));
      if (g.type == "capsule" || g.type == "cylinder") size[1] = 0.5 * d.norm();
      else size[2] = 0.5 * d.norm();
      if (g.type == "box" || g.type == "ellipsoid") size[1] = size[1] > 0.0 ? size[1] : size[0];
    }
    g.X_LG = body == 0 ? options_.X_W_root * X : X;
    const auto fr = a.numbers("friction", 1, 3, {1.0, 0.005, 0.0001});
    g.mu = fr[0];
    if (g.mu < 0.0) e.fail("attribute 'friction': must be >= 0, got " + util::format_number(g.mu));
    g.contype = static_cast<int>(a.number("contype", 1));
    g.conaffinity = static_cast<int>(a.number("conaffinity", 1));
    if (a.has("rgba")) {
      const auto c = a.numbers("rgba", 4, 4, {});
      for (int i = 0; i < 4; ++i) g.rgba[static_cast<size_t>(i)] = c[static_cast<size_t>(i)];
    }
    const int group = static_cast<int>(a.number("group", 0));
    if (a.has("shellinertia") && a.boolean("shellinertia", false))
      unsupported_.push_back("<geom shellinertia='true'> (" + at(e) + ")");

    // Shape, volume and inertia about the geom origin in geom axes (MuJoCo's formulas).
    const std::string where = e.label();
    auto require = [&](bool ok, const char* what) {
      if (!ok) e.fail("attribute 'size': " + std::string(what) + " must be > 0 for a " + g.type + " (size " +
                      in_quotes(a.text("size", "0 0 0")) + ")");
    };
    double volume = 0.0;
    Vector3 I_unit = Vector3::Zero();  // principal inertia per unit mass (diagonal in geom axes)
    Vector3 com_G = Vector3::Zero();
    Matrix3 I_full_unit = Matrix3::Zero();  // meshes: about the COM, per unit mass
    bool full = false;
    const double r = size[0];
    if (g.type == "sphere") {
      require(r > 0.0, "radius");
      g.shape = geometry::Shape::Sphere(r);
      volume = 4.0 / 3.0 * kPi * r * r * r;
      I_unit.setConstant(0.4 * r * r);
    } else if (g.type == "capsule") {
      require(r > 0.0 && size[1] > 0.0, "radius and half-length");
      const double h = 2.0 * size[1];
      g.shape = geometry::Shape::Capsule(r, h);
      volume = kPi * (r * r * h + 4.0 / 3.0 * r * r * r);
      // Cylinder plus two hemispheres (masses by volume share), parallel-axis for the caps.
      const double ms = 4.0 / 3.0 * r * r * r / (r * r * h + 4.0 / 3.0 * r * r * r);  // sphere share
      const double mc = 1.0 - ms;
      const double Ixx = mc * (3.0 * r * r + h * h) / 12.0 + ms * (0.4 * r * r + h * (3.0 * r + 2.0 * h) / 8.0);
      I_unit = Vector3(Ixx, Ixx, mc * 0.5 * r * r + ms * 0.4 * r * r);
    } else if (g.type == "cylinder") {
      require(r > 0.0 && size[1] > 0.0, "radius and half-length");
      const double h = 2.0 * size[1];
      g.shape = geometry::Shape::Cylinder(r, h);
      volume = kPi * r * r * h;
      const double Ixx = (3.0 * r * r + h * h) / 12.0;
      I_unit = Vector3(Ixx, Ixx, 0.5 * r * r);
    } else if (g.type == "ellipsoid") {
      require(size[0] > 0.0 && size[1] > 0.0 && size[2] > 0.0, "all three semi-axes");
      volume = 4.0 / 3.0 * kPi * size[0] * size[1] * size[2];
      const double a2 = size[0] * size[0], b2 = size[1] * size[1], c2 = size[2] * size[2];
      I_unit = Vector3(b2 + c2, a2 + c2, a2 + b2) / 5.0;
      g.shape = best_fit_ellipsoid(size, X, g.X_LG, body == 0 ? options_.X_W_root : Transform::Identity());
      ellipsoids_.push_back(e.label() + " (" + at(e) + ")");
    } else if (g.type == "box") {
      require(size[0] > 0.0 && size[1] > 0.0 && size[2] > 0.0, "all three half-sizes");
      g.shape = geometry::Shape::Box(2.0 * Vector3(size[0], size[1], size[2]));
      volume = 8.0 * size[0] * size[1] * size[2];
      const double x2 = size[0] * size[0], y2 = size[1] * size[1], z2 = size[2] * size[2];
      I_unit = Vector3(y2 + z2, x2 + z2, x2 + y2) / 3.0;
    } else if (g.type == "plane") {
      if (body != 0) e.fail("a plane geom is allowed only in the worldbody (static), not in a moving body");
      g.shape = geometry::Shape::HalfSpace();
      out_.has_plane = true;
    } else if (g.type == "mesh") {
      const std::string mesh = a.text("mesh", "");
      auto it = meshes_.find(mesh);
      if (it == meshes_.end()) e.fail("attribute 'mesh': unknown mesh " + in_quotes(mesh) + " (not in <asset>)");
      try {
        g.shape = geometry::load_convex_hull(it->second.path, it->second.scale);
        const geometry::Shape surface = geometry::load_mesh(it->second.path, it->second.scale);
        mesh_volume(surface, volume, com_G, I_full_unit);
      } catch (const geometry::MeshError& ex) {
        e.fail(std::string("mesh ") + in_quotes(mesh) + ": " + ex.what());
      }
      if (!(volume > 0.0)) e.fail("mesh " + in_quotes(mesh) + ": its volume is not positive (" +
                                  util::format_number(volume) + " m³): the mesh is not closed or inside out");
      full = true;
      if (body != 0 && !exactmeshinertia_) legacy_meshes_.push_back(e.label() + " (" + at(e) + ")");
    }
    (void)where;
    out_.geoms.push_back(g);
    if (body == 0 || g.type == "plane") return SpatialInertia::Zero();
    if (group < inertia_group_lo_ || group > inertia_group_hi_) return SpatialInertia::Zero();
    double mass = 0.0;
    if (a.has("mass")) {
      mass = a.number("mass", 0.0);
      if (mass < 0.0) e.fail("attribute 'mass': must be >= 0, got " + util::format_number(mass));
    } else {
      const double density = a.number("density", 1000.0);
      if (density < 0.0) e.fail("attribute 'density': must be >= 0, got " + util::format_number(density));
      mass = density * volume;
    }
    const Matrix3 I_com_G = full ? Matrix3(mass * I_full_unit) : Matrix3((mass * I_unit).asDiagonal());
    return SpatialInertia::FromCenterOfMass(mass, X.act(com_G), X.R * I_com_G * X.R.transpose());
  }

  /// The ellipsoid's best-fit primitive: a sphere when its semi-axes are within 1% of each
  /// other, else a capsule along the longest semi-axis a with radius the mean of the other two
  /// (b, c) and total half-length a. `X` (geom pose) is updated when the capsule's axis is not z.
  geometry::Shape best_fit_ellipsoid(const std::vector<double>& s, const Transform& X, Transform& X_LG,
                                     const Transform& X_prefix) {
    const double lo = std::min({s[0], s[1], s[2]}), hi = std::max({s[0], s[1], s[2]});
    if (hi <= 1.01 * lo) return geometry::Shape::Sphere((s[0] + s[1] + s[2]) / 3.0);
    const int k = s[0] == hi ? 0 : (s[1] == hi ? 1 : 2);
    const double radius = 0.5 * (s[0] + s[1] + s[2] - hi);
    const double length = std::max(0.0, 2.0 * (hi - radius));
    Matrix3 R_GC = Matrix3::Identity();  // capsule frame C: its z along the ellipsoid's axis k
    if (k == 0) R_GC = axis_angle(Vector3::UnitY(), kPi / 2).toRotationMatrix();
    if (k == 1) R_GC = axis_angle(Vector3::UnitX(), -kPi / 2).toRotationMatrix();
    X_LG = X_prefix * X * Transform(R_GC, Vector3::Zero());
    if (length <= 0.0) return geometry::Shape::Sphere(radius);
    return geometry::Shape::Capsule(radius, length);
  }

  /// Volume, centre of mass and rotational inertia per unit mass about the centre of mass of a
  /// closed triangle surface (signed tetrahedra from the origin; divergence theorem).
  static void mesh_volume(const geometry::Shape& s, double& volume, Vector3& com, Matrix3& I_unit) {
    double V = 0.0;
    Vector3 first = Vector3::Zero();
    Matrix3 C = Matrix3::Zero();  // ∫ x xᵀ dV
    for (const auto& t : s.triangles) {
      const Vector3& a = s.vertices[static_cast<size_t>(t[0])];
      const Vector3& b = s.vertices[static_cast<size_t>(t[1])];
      const Vector3& c = s.vertices[static_cast<size_t>(t[2])];
      const double v = a.dot(b.cross(c)) / 6.0;
      V += v;
      first += v * (a + b + c) / 4.0;
      // Covariance of a tetrahedron (0, a, b, c): v/20 (Σ x_i x_iᵀ + (Σ x_i)(Σ x_i)ᵀ).
      const Vector3 sum = a + b + c;
      C += v / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + sum * sum.transpose());
    }
    volume = V;
    if (!(V > 0.0)) return;
    com = first / V;
    const Matrix3 C_com = C / V - com * com.transpose();  // per unit mass, about the COM
    I_unit = Matrix3::Identity() * C_com.trace() - C_com;
  }

  // ---- pass 4 ----

  void read_actuator(const Element& e) {
    const Attrs a = attrs(e, e.name, "main");
    MjcfActuator act;
    act.type = e.name == "motor" ? MjcfActuator::Type::kMotor : MjcfActuator::Type::kPosition;
    act.line = e.line;
    if (a.has("name")) act.name = prefixed(a.text("name", ""));
    for (const char* k : {"tendon", "site", "cranksite", "jointinparent"})
      if (a.has(k)) {
        unsupported_.push_back(e.label() + " with " + k + " transmission (" + at(e) + ")");
        return;
      }
    if (!a.has("joint")) e.fail("attribute 'joint' is missing (the only transmission supported)");
    const std::string joint = prefixed(a.text("joint", ""));
    auto it = std::find_if(out_.joints.begin(), out_.joints.end(), [&](const MjcfJoint& j) { return j.name == joint; });
    if (it == out_.joints.end()) e.fail("attribute 'joint': unknown joint " + in_quotes(a.text("joint", "")));
    if (it->type == "free") e.fail("attribute 'joint': actuators on free joints are not supported");
    act.joint = joint;
    act.gear = a.numbers("gear", 1, 6, {1.0})[0];
    act.kp = act.type == MjcfActuator::Type::kPosition ? a.number("kp", 1.0) : 0.0;
    if (act.kp < 0.0) e.fail("attribute 'kp': must be >= 0, got " + util::format_number(act.kp));
    const std::string ctrllimited = a.keyword("ctrllimited", "auto", {"true", "false", "auto"});
    for (const char* k : {"ctrl", "force"}) {
      const std::string range = std::string(k) + "range", limited = std::string(k) + "limited";
      if (a.has(range) && a.text(limited, "auto") == "auto" && !autolimits_)
        e.fail("attribute " + in_quotes(range) + " without " + in_quotes(limited) + ": set it, or <compiler "
               "autolimits=\"true\"> (as MuJoCo 2.2 requires)");
    }
    act.ctrllimited = ctrllimited == "true" || (ctrllimited == "auto" && autolimits_ && a.has("ctrlrange"));
    if (act.ctrllimited) {
      const auto r = a.numbers("ctrlrange", 2, 2, {0.0, 0.0});
      act.ctrl_lower = r[0];
      act.ctrl_upper = r[1];
      if (r[0] >= r[1]) e.fail("attribute 'ctrlrange': lower must be < upper, got " + a.text("ctrlrange", ""));
    }
    const std::string forcelimited = a.keyword("forcelimited", "auto", {"true", "false", "auto"});
    act.forcelimited = forcelimited == "true" || (forcelimited == "auto" && autolimits_ && a.has("forcerange"));
    if (act.forcelimited) {
      const auto r = a.numbers("forcerange", 2, 2, {0.0, 0.0});
      act.force_lower = r[0];
      act.force_upper = r[1];
      if (r[0] >= r[1]) e.fail("attribute 'forcerange': lower must be < upper, got " + a.text("forcerange", ""));
    }
    out_.actuators.push_back(act);
  }

  void read_equality(const Element& e) {
    check_attributes(e, e.name);
    const Attrs a{&e, nullptr};
    if (!a.boolean("active", true)) return;  // inactive at the start: nothing to hold
    MjcfEquality eq;
    eq.type = e.name == "connect" ? MjcfEquality::Type::kConnect : MjcfEquality::Type::kWeld;
    eq.line = e.line;
    if (a.has("name")) eq.name = prefixed(a.text("name", ""));
    auto body_link = [&](const std::string& key, bool required) {
      if (!a.has(key)) {
        if (required) e.fail("attribute " + in_quotes(key) + " is missing");
        return std::string("world");
      }
      const std::string name = a.text(key, "");
      auto it = body_by_name_.find(name);
      if (it == body_by_name_.end()) e.fail("attribute " + in_quotes(key) + ": unknown body " + in_quotes(name));
      return bodies_[static_cast<size_t>(it->second)].link;
    };
    eq.body1 = body_link("body1", true);
    eq.body2 = body_link("body2", false);
    if (eq.type == MjcfEquality::Type::kConnect) {
      if (!a.has("anchor")) e.fail("attribute 'anchor' is missing");
      eq.anchor = a.vector3("anchor", Vector3::Zero());
    } else if (a.has("relpose")) {
      unsupported_.push_back("<weld relpose> (" + at(e) + "; the weld holds the initial relative pose)");
    }
    out_.equalities.push_back(eq);
  }

  void read_exclude(const Element& e) {
    check_attributes(e, "exclude");
    const Attrs a{&e, nullptr};
    std::string links[2];
    for (int i = 0; i < 2; ++i) {
      const std::string key = "body" + std::to_string(i + 1);
      if (!a.has(key)) e.fail("attribute " + in_quotes(key) + " is missing");
      const std::string name = a.text(key, "");
      auto it = body_by_name_.find(name);
      if (it == body_by_name_.end()) e.fail("attribute " + in_quotes(key) + ": unknown body " + in_quotes(name));
      links[i] = bodies_[static_cast<size_t>(it->second)].link;
    }
    out_.excluded_pairs.emplace_back(links[0], links[1]);
  }

  multibody::ModelBuilder& builder_;
  MjcfAttachOptions options_;
  MjcfAttachment out_;
  std::string source_;
  const Element* root_ = nullptr;
  std::map<std::string, DefaultClass> classes_;
  std::map<std::string, MeshAsset> meshes_;
  std::vector<BodyRecord> bodies_;
  std::unordered_map<std::string, int> body_by_name_;
  std::vector<std::string> unsupported_, ellipsoids_;
  int joint_count_ = 0;
  bool degrees_ = true;
  std::string eulerseq_ = "xyz";
  std::string meshdir_;
  std::string inertiafromgeom_ = "auto";
  int inertia_group_lo_ = 0, inertia_group_hi_ = 5;
  bool autolimits_ = false;
  bool exactmeshinertia_ = false;  // MuJoCo 2.2's default
  std::vector<std::string> legacy_meshes_;
};

MjcfAttachment attach(multibody::ModelBuilder& builder, std::unique_ptr<Element> root, const std::string& source,
                      const MjcfAttachOptions& options) {
  Loader loader(builder, options);
  loader.set_source(source);
  return loader.run(*root);
}

}  // namespace

MjcfAttachment add_mjcf(multibody::ModelBuilder& builder, const std::string& path, const MjcfAttachOptions& options) {
  TreeReader reader;
  auto root = reader.read_file(path, path, nullptr);
  return attach(builder, std::move(root), path, options);
}

MjcfAttachment add_mjcf_string(multibody::ModelBuilder& builder, const std::string& xml,
                               const MjcfAttachOptions& options, const std::string& source_name,
                               const std::string& base_directory) {
  TreeReader reader;
  auto root = reader.read_string(xml, source_name, base_directory);
  return attach(builder, std::move(root), source_name, options);
}

MjcfModel load_mjcf(const std::string& path) {
  multibody::ModelBuilder builder("mjcf");
  MjcfModel out;
  out.attachment = add_mjcf(builder, path, {});
  out.model = builder.build();
  if (out.attachment.gravity) out.model.set_gravity(*out.attachment.gravity);
  return out;
}

ModelFileKind detect_model_file_kind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the file");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  for (unsigned char c : head)
    if (c == 0 || (c < 0x09) || (c > 0x0d && c < 0x20 && c != 0x1b)) return ModelFileKind::kUnknown;  // binary
  size_t i = 0;
  if (head.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
  auto skip_space = [&]() {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  };
  skip_space();
  if (i >= head.size()) return ModelFileKind::kYaml;
  if (head[i] == '{' || head[i] == '[') {
    // JSON (also a YAML flow mapping, but scenes are block mappings).
    return ModelFileKind::kUnknown;
  }
  if (head[i] != '<') return ModelFileKind::kYaml;
  while (i < head.size() && head[i] == '<') {
    if (head.compare(i, 4, "<!--") == 0) {
      const size_t end = head.find("-->", i + 4);
      if (end == std::string::npos) return ModelFileKind::kUnknown;
      i = end + 3;
    } else if (head.compare(i, 2, "<?") == 0 || head.compare(i, 2, "<!") == 0) {
      const size_t end = head.find('>', i);
      if (end == std::string::npos) return ModelFileKind::kUnknown;
      i = end + 1;
    } else {
      size_t j = i + 1;
      while (j < head.size() && (std::isalnum(static_cast<unsigned char>(head[j])) || head[j] == '_' ||
                                 head[j] == ':' || head[j] == '-'))
        ++j;
      const std::string name = head.substr(i + 1, j - i - 1);
      if (name == "robot") return ModelFileKind::kUrdf;
      if (name == "mujoco") return ModelFileKind::kMjcf;
      if (name == "sdf") return ModelFileKind::kSdf;
      return ModelFileKind::kUnknown;
    }
    skip_space();
  }
  return ModelFileKind::kUnknown;
}

}  // namespace coulomb::io
