// URDF → multibody::Model.
//
// Three passes over the file:
//  1. tinyxml (the XML library urdfdom itself is built on) reads the document. This pass gives
//     line numbers for messages, the declaration order of joints (urdfdom keeps joints in a
//     name-sorted map, which would make the coordinate order depend on joint names), and the
//     checks urdfdom does not make or makes silently: several parents, kinematic cycles,
//     several roots, unsupported joint types, and every numeric attribute must be a finite
//     number (urdfdom logs some parse failures and carries on with zeros).
//  2. urdfdom (urdf::parseURDF) builds its model from the same text. Its console_bridge log is
//     captured: an error-level message is fatal, a warning becomes a UrdfModel warning.
//     Revolute and prismatic joints written without <limit> (legal in practice, e.g. Drake's
//     iiwa model, but rejected by urdfdom) are given a placeholder <limit> first and end up
//     unlimited.
//  3. The tree is walked from the root, parents before children, children in the order the
//     file declares their joints, and every link is added to a multibody::ModelBuilder.
#include "coulomb/io/urdf_loader.h"

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <utility>

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>
#include "../util/format.h"
#include "coulomb/geometry/shape.h"
#include "io/model_path.h"

namespace coulomb::io {

namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Transform;
using math::Vector3;
using multibody::JointSpec;
using multibody::JointType;

// ------------------------------------------------------------------------------------------
// Formatting helpers


std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

/// Builds the messages of UrdfError: "<source>:<line>: <what>" (line omitted when unknown).
class ErrorContext {
 public:
  explicit ErrorContext(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  std::string where(int line) const {
    return line > 0 ? source_ + ":" + std::to_string(line) : source_;
  }
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw UrdfError(where(line) + ": " + message);
  }
  [[noreturn]] void fail(const std::string& message) const { throw UrdfError(source_ + ": " + message); }

 private:
  std::string source_;
};

// ------------------------------------------------------------------------------------------
// Pass 1: the XML document

/// A <link> or <joint> as declared in the file.
struct LinkDecl {
  std::string name;
  const TiXmlElement* element = nullptr;
};

struct JointDecl {
  std::string name;
  std::string type;
  std::string parent;
  std::string child;
  const TiXmlElement* element = nullptr;
  bool has_limit = false;
};

struct Document {
  TiXmlDocument xml;
  const TiXmlElement* robot = nullptr;
  std::string robot_name;
  std::vector<LinkDecl> links;    // declaration order
  std::vector<JointDecl> joints;  // declaration order
  std::vector<const TiXmlElement*> transmissions;  // <transmission>: read, not simulated
  std::unordered_map<std::string, int> link_index, joint_index;
};

/// Numeric attributes of URDF elements and how many numbers each holds. Every one that is
/// present anywhere in a <link>, <joint> or <material> is checked to be finite.
struct NumericAttribute {
  const char* element;
  const char* attribute;
  int count;
};
constexpr NumericAttribute kNumericAttributes[] = {
    {"origin", "xyz", 3},         {"origin", "rpy", 3},
    {"axis", "xyz", 3},           {"limit", "lower", 1},
    {"limit", "upper", 1},        {"limit", "effort", 1},
    {"limit", "velocity", 1},     {"dynamics", "damping", 1},
    {"dynamics", "friction", 1},  {"mass", "value", 1},
    {"inertia", "ixx", 1},        {"inertia", "ixy", 1},
    {"inertia", "ixz", 1},        {"inertia", "iyy", 1},
    {"inertia", "iyz", 1},        {"inertia", "izz", 1},
    {"box", "size", 3},           {"sphere", "radius", 1},
    {"cylinder", "radius", 1},    {"cylinder", "length", 1},
    {"mesh", "scale", 3},         {"color", "rgba", 4},
    {"safety_controller", "soft_lower_limit", 1},
    {"safety_controller", "soft_upper_limit", 1},
    {"safety_controller", "k_position", 1},
    {"safety_controller", "k_velocity", 1},
    {"calibration", "rising", 1}, {"calibration", "falling", 1},
    {"mimic", "multiplier", 1},   {"mimic", "offset", 1},
};

using util::parse_number;

/// "<inertial><origin xyz>": the element path from the owning <link>/<joint> (exclusive).
std::string element_path(const TiXmlElement* element, const TiXmlElement* owner, const char* attribute) {
  std::string path;
  for (const TiXmlNode* n = element; n != nullptr && n != owner; n = n->Parent())
    if (n->ToElement() != nullptr) path = "<" + std::string(n->Value()) + ">" + path;
  if (path.size() >= 1 && attribute != nullptr) path.insert(path.size() - 1, std::string(" ") + attribute);
  return path;
}

/// Checks every numeric attribute below `parent`, which is `owner` (a <link>, <joint> or
/// <material>) or one of its descendants. The walk is iterative (depth first, document order):
/// a deep file cannot overflow the stack here (its depth is also capped before parsing,
/// check_nesting_depth).
void check_numeric_attributes(const TiXmlElement* owner, const TiXmlElement* parent, const std::string& owner_desc,
                              const ErrorContext& ctx) {
  std::vector<const TiXmlElement*> pending;  // next sibling to visit at each open level
  pending.push_back(parent->FirstChildElement());
  while (!pending.empty()) {
    const TiXmlElement* e = pending.back();
    if (e == nullptr) {
      pending.pop_back();
      continue;
    }
    pending.back() = e->NextSiblingElement();
    for (const NumericAttribute& na : kNumericAttributes) {
      if (std::strcmp(e->Value(), na.element) != 0) continue;
      const char* text = e->Attribute(na.attribute);
      if (text == nullptr) continue;
      std::istringstream tokens{std::string(text)};
      std::string token;
      int n = 0;
      bool finite = true, in_range = true;
      const bool offset = std::strcmp(na.element, "origin") == 0 && std::strcmp(na.attribute, "xyz") == 0;
      while (tokens >> token) {
        double x = 0.0;
        if (!parse_number(token, x))
          ctx.fail(e->Row(), owner_desc + ": " + element_path(e, owner, na.attribute) + " is not a number: " +
                                 in_quotes(text));
        finite = finite && std::isfinite(x);
        in_range = in_range && !(offset && std::abs(x) > geometry::kMaxShapeDimension);
        ++n;
      }
      if (n != na.count)
        ctx.fail(e->Row(), owner_desc + ": " + element_path(e, owner, na.attribute) + " must hold " +
                               std::to_string(na.count) + (na.count == 1 ? " number" : " numbers") + ", got " +
                               std::to_string(n) + ": " + in_quotes(text));
      if (!finite)
        ctx.fail(e->Row(), owner_desc + ": " + element_path(e, owner, na.attribute) + " is not finite: " +
                               in_quotes(text));
      // An offset beyond ±1e6 m, the range of scene positions and shape sizes (a collision
      // <origin xyz="0 1e308 0"> crashed FCL's broadphase: mutation campaign, URDF 16928).
      if (!in_range)
        ctx.fail(e->Row(), owner_desc + ": " + element_path(e, owner, na.attribute) + " = " + in_quotes(text) +
                               ": each coordinate must lie within 1e6 m (geometry::kMaxShapeDimension)");
    }
    pending.push_back(e->FirstChildElement());
  }
}

/// Throws naming the element, attribute and byte if an attribute value anywhere in the document
/// is not UTF-8 (names and file names reach JSON output, which must be UTF-8; TinyXML passes
/// such bytes through).
void check_attributes_utf8(const TiXmlElement* root, const ErrorContext& ctx) {
  std::vector<const TiXmlElement*> pending = {root};
  while (!pending.empty()) {
    const TiXmlElement* e = pending.back();
    pending.pop_back();
    for (const TiXmlAttribute* a = e->FirstAttribute(); a != nullptr; a = a->Next()) {
      const std::string value = a->Value();
      const std::size_t at = util::invalid_utf8_offset(value);
      if (at == std::string::npos) continue;
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(value[at])));
      ctx.fail(e->Row(), "<" + std::string(e->Value()) + " " + a->Name() + ">: not valid UTF-8 (byte " + byte +
                             " at offset " + std::to_string(at) + "); URDF files must be UTF-8");
    }
    const size_t first = pending.size();  // children pushed last to first: visited in document order
    for (const TiXmlElement* c = e->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) pending.push_back(c);
    std::reverse(pending.begin() + static_cast<std::ptrdiff_t>(first), pending.end());
  }
}

/// Elements nested deeper than this are an error (a URDF needs 5: robot, link, collision,
/// geometry, box); the XML reader and urdfdom are recursive and would overflow the stack on a
/// file nested ~10,000 deep.
constexpr int kMaxElementDepth = 64;

/// Throws naming the line of the first element nested deeper than kMaxElementDepth, from a
/// scan of the text before any XML parser (all recursive) sees it. Comments, CDATA, processing
/// instructions and declarations are skipped and quoted attribute values may hold '>'; what is
/// malformed is left to the parser.
void check_nesting_depth(const std::string& xml, const ErrorContext& ctx) {
  int depth = 0, line = 1;
  const size_t n = xml.size();
  auto skip_past = [&](size_t& i, const char* end) {
    size_t e = xml.find(end, i);
    e = e == std::string::npos ? n : e + std::strlen(end);
    line += static_cast<int>(std::count(xml.begin() + static_cast<std::ptrdiff_t>(i),
                                        xml.begin() + static_cast<std::ptrdiff_t>(e), '\n'));
    i = e;
  };
  for (size_t i = 0; i < n;) {
    if (xml[i] != '<') {
      if (xml[i] == '\n') ++line;
      ++i;
      continue;
    }
    if (xml.compare(i, 4, "<!--") == 0) {
      skip_past(i, "-->");
    } else if (xml.compare(i, 9, "<![CDATA[") == 0) {
      skip_past(i, "]]>");
    } else if (xml.compare(i, 2, "<?") == 0) {
      skip_past(i, "?>");
    } else if (xml.compare(i, 2, "<!") == 0) {
      skip_past(i, ">");
    } else {
      const int tag_line = line;
      const bool closing = i + 1 < n && xml[i + 1] == '/';
      size_t j = i + 1;
      char quote = 0;
      for (; j < n; ++j) {
        const char c = xml[j];
        if (c == '\n') ++line;
        if (quote != 0) {
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '>') {
          break;
        }
      }
      const bool self_closing = j < n && xml[j - 1] == '/';
      if (closing) {
        --depth;
      } else if (!self_closing && ++depth > kMaxElementDepth) {
        ctx.fail(tag_line, "elements are nested more than " + std::to_string(kMaxElementDepth) +
                               " levels deep (a URDF needs 5: robot, link, collision, geometry, box); not read");
      }
      i = j + 1;
    }
  }
}

/// The `link` attribute of a joint's <parent> or <child> element.
std::string joint_link_attribute(const TiXmlElement* joint, const char* which, const std::string& desc,
                                 const ErrorContext& ctx) {
  const TiXmlElement* e = joint->FirstChildElement(which);
  if (e == nullptr) ctx.fail(joint->Row(), desc + " has no <" + std::string(which) + "> element");
  if (e->NextSiblingElement(which) != nullptr)
    ctx.fail(e->NextSiblingElement(which)->Row(), desc + " has more than one <" + std::string(which) + "> element");
  const char* link = e->Attribute("link");
  if (link == nullptr || link[0] == '\0')
    ctx.fail(e->Row(), desc + ": <" + std::string(which) + "> has no link attribute");
  return link;
}

void read_document(const std::string& xml, Document& doc, const ErrorContext& ctx) {
  check_nesting_depth(xml, ctx);
  doc.xml.Parse(xml.c_str(), nullptr, TIXML_ENCODING_UTF8);
  if (doc.xml.Error()) {
    std::string msg = "malformed XML: ";
    msg += doc.xml.ErrorDesc();
    if (doc.xml.ErrorRow() > 0) msg += " (column " + std::to_string(doc.xml.ErrorCol()) + ")";
    ctx.fail(doc.xml.ErrorRow(), msg);
  }
  doc.robot = doc.xml.RootElement();
  if (doc.robot == nullptr) ctx.fail("malformed XML: no root element");
  check_attributes_utf8(doc.robot, ctx);
  if (std::strcmp(doc.robot->Value(), "robot") != 0)
    ctx.fail(doc.robot->Row(), "the root element is <" + std::string(doc.robot->Value()) + ">, expected <robot>");
  const char* robot_name = doc.robot->Attribute("name");
  if (robot_name == nullptr || robot_name[0] == '\0') ctx.fail(doc.robot->Row(), "<robot> has no name attribute");
  doc.robot_name = robot_name;

  for (const TiXmlElement* e = doc.robot->FirstChildElement(); e != nullptr; e = e->NextSiblingElement()) {
    const std::string tag = e->Value();
    if (tag == "transmission") doc.transmissions.push_back(e);
    if (tag == "link") {
      const char* name = e->Attribute("name");
      if (name == nullptr || name[0] == '\0') ctx.fail(e->Row(), "<link> has no name attribute");
      if (doc.link_index.count(name))
        ctx.fail(e->Row(), "duplicate link name " + in_quotes(name) + " (first declared on line " +
                               std::to_string(doc.links[doc.link_index[name]].element->Row()) + ")");
      doc.link_index[name] = static_cast<int>(doc.links.size());
      doc.links.push_back({name, e});
      check_numeric_attributes(e, e, "link " + in_quotes(name), ctx);
    } else if (tag == "joint") {
      const char* name = e->Attribute("name");
      if (name == nullptr || name[0] == '\0') ctx.fail(e->Row(), "<joint> has no name attribute");
      const std::string desc = "joint " + in_quotes(name);
      if (doc.joint_index.count(name))
        ctx.fail(e->Row(), "duplicate joint name " + in_quotes(name) + " (first declared on line " +
                               std::to_string(doc.joints[doc.joint_index[name]].element->Row()) + ")");
      JointDecl j;
      j.name = name;
      j.element = e;
      const char* type = e->Attribute("type");
      if (type == nullptr) ctx.fail(e->Row(), desc + " has no type attribute");
      j.type = type;
      if (j.type == "planar")
        ctx.fail(e->Row(), desc + ": joint type 'planar' is not supported (supported: revolute, continuous, "
                                  "prismatic, fixed, floating)");
      if (j.type != "revolute" && j.type != "continuous" && j.type != "prismatic" && j.type != "fixed" &&
          j.type != "floating")
        ctx.fail(e->Row(), desc + ": unknown joint type " + in_quotes(j.type) +
                               " (URDF types: revolute, continuous, prismatic, fixed, floating, planar)");
      j.parent = joint_link_attribute(e, "parent", desc, ctx);
      j.child = joint_link_attribute(e, "child", desc, ctx);
      j.has_limit = e->FirstChildElement("limit") != nullptr;
      check_numeric_attributes(e, e, desc, ctx);
      doc.joint_index[j.name] = static_cast<int>(doc.joints.size());
      doc.joints.push_back(std::move(j));
    } else if (tag == "material") {
      const char* name = e->Attribute("name");
      check_numeric_attributes(e, e, "material " + in_quotes(name ? name : ""), ctx);
    }
  }
  if (doc.links.empty()) ctx.fail(doc.robot->Row(), "<robot> " + in_quotes(doc.robot_name) + " has no <link>");
}

/// Checks that links and joints form one tree and returns the index (into doc.links) of its
/// root. children[l] receives the indices (into doc.joints) of the joints whose parent is link
/// l, in declaration order.
int check_tree(const Document& doc, std::vector<std::vector<int>>& children, const ErrorContext& ctx) {
  const int n_links = static_cast<int>(doc.links.size());
  std::vector<int> parent_joint(n_links, -1);
  children.assign(n_links, {});
  for (int j = 0; j < static_cast<int>(doc.joints.size()); ++j) {
    const JointDecl& jd = doc.joints[j];
    const int row = jd.element->Row();
    auto p = doc.link_index.find(jd.parent);
    if (p == doc.link_index.end())
      ctx.fail(row, "joint " + in_quotes(jd.name) + ": parent link " + in_quotes(jd.parent) + " is not declared");
    auto c = doc.link_index.find(jd.child);
    if (c == doc.link_index.end())
      ctx.fail(row, "joint " + in_quotes(jd.name) + ": child link " + in_quotes(jd.child) + " is not declared");
    if (p->second == c->second)
      ctx.fail(row, "joint " + in_quotes(jd.name) + " connects link " + in_quotes(jd.child) +
                        " to itself (a kinematic cycle; a URDF must be a tree)");
    if (parent_joint[c->second] >= 0)
      ctx.fail(row, "link " + in_quotes(jd.child) + " is the child of two joints, " +
                        in_quotes(doc.joints[parent_joint[c->second]].name) + " and " + in_quotes(jd.name) +
                        " (a URDF must be a tree)");
    parent_joint[c->second] = j;
    children[p->second].push_back(j);
  }

  auto world = doc.link_index.find("world");
  if (world != doc.link_index.end() && parent_joint[world->second] >= 0)
    ctx.fail(doc.links[world->second].element->Row(),
             "link 'world' is the child of joint " + in_quotes(doc.joints[parent_joint[world->second]].name) +
                 "; the name 'world' is reserved for the world frame and may only be the root link");

  std::vector<int> roots;
  for (int l = 0; l < n_links; ++l)
    if (parent_joint[l] < 0) roots.push_back(l);
  if (roots.size() > 1) {
    std::string names;
    for (int r : roots) names += (names.empty() ? "" : ", ") + in_quotes(doc.links[r].name);
    ctx.fail(doc.links[roots[1]].element->Row(), "several root links (links that are no joint's child): " + names +
                                                     "; a URDF must have exactly one");
  }

  // Every link must be reachable from the root; since each link has at most one parent, a
  // link that is not lies on, or hangs below, a cycle.
  std::vector<char> reached(n_links, 0);
  if (!roots.empty()) {
    std::vector<int> stack{roots[0]};
    while (!stack.empty()) {
      const int l = stack.back();
      stack.pop_back();
      reached[l] = 1;
      for (int j : children[l]) stack.push_back(doc.link_index.at(doc.joints[j].child));
    }
  }
  for (int l = 0; l < n_links; ++l) {
    if (reached[l]) continue;
    // Walk up the parents until a link repeats: that link is on the cycle.
    std::vector<char> seen(n_links, 0);
    int k = l;
    while (!seen[k]) {
      seen[k] = 1;
      k = doc.link_index.at(doc.joints[parent_joint[k]].parent);
    }
    // The cycle, listed from `start` downwards (parent before child).
    std::vector<int> cycle;
    const int start = k;
    do {
      cycle.push_back(k);
      k = doc.link_index.at(doc.joints[parent_joint[k]].parent);
    } while (k != start);
    std::reverse(cycle.begin() + 1, cycle.end());  // start, child of start, ..., parent of start
    std::string links, joints;
    for (size_t m = 0; m < cycle.size(); ++m) {
      const int child = cycle[(m + 1) % cycle.size()];
      links += in_quotes(doc.links[cycle[m]].name) + " -> ";
      joints += (m == 0 ? "" : ", ") + in_quotes(doc.joints[parent_joint[child]].name);
    }
    ctx.fail(doc.joints[parent_joint[start]].element->Row(),
             "joints " + joints + " form a kinematic cycle through links " + links +
                 in_quotes(doc.links[start].name) + " (a URDF must be a tree)");
  }
  return roots.at(0);
}

// ------------------------------------------------------------------------------------------
// Pass 2: urdfdom, with its console log captured

/// Collects console_bridge messages while installed (see CapturedParse).
class LogCapture : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char* /*filename*/,
           int /*line*/) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR)
      errors.push_back(text);
    else if (level == console_bridge::CONSOLE_BRIDGE_LOG_WARN)
      warnings.push_back(text);
  }
  std::vector<std::string> errors, warnings;
};

/// urdf::parseURDF with urdfdom's console output redirected into `capture` (and so silenced).
/// console_bridge's handler is process-global: a mutex serializes parses.
urdf::ModelInterfaceSharedPtr captured_parse(const std::string& xml, LogCapture& capture) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  console_bridge::OutputHandler* previous = console_bridge::getOutputHandler();
  console_bridge::useOutputHandler(&capture);
  urdf::ModelInterfaceSharedPtr model;
  try {
    model = urdf::parseURDF(xml);
  } catch (const std::exception& e) {
    capture.errors.push_back(e.what());
    model.reset();
  }
  console_bridge::useOutputHandler(previous);
  return model;
}

/// urdfdom rejects revolute and prismatic joints without <limit>; gives them a placeholder
/// one (the loader makes these joints unlimited). Returns the text to give urdfdom.
std::string text_for_urdfdom(const std::string& xml, Document& doc) {
  bool patched = false;
  for (JointDecl& j : doc.joints) {
    if (j.has_limit || (j.type != "revolute" && j.type != "prismatic")) continue;
    TiXmlElement limit("limit");
    limit.SetAttribute("effort", "0");
    limit.SetAttribute("velocity", "0");
    const_cast<TiXmlElement*>(j.element)->InsertEndChild(limit);
    patched = true;
  }
  if (!patched) return xml;
  TiXmlPrinter printer;
  doc.xml.Accept(&printer);
  return printer.CStr();
}

// ------------------------------------------------------------------------------------------
// Pass 3: the Model

Transform to_transform(const urdf::Pose& pose) {
  const math::Quaternion q(pose.rotation.w, pose.rotation.x, pose.rotation.y, pose.rotation.z);
  const double n = q.norm();
  const Matrix3 R = n > 0.0 ? Matrix3(q.normalized().toRotationMatrix()) : Matrix3::Identity();
  return Transform(R, Vector3(pose.position.x, pose.position.y, pose.position.z));
}

Vector3 to_vector(const urdf::Vector3& v) { return {v.x, v.y, v.z}; }

using internal::model_path_dirs;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

/// Resolves a mesh file name as written in a URDF. Returns the path of an existing file, or an
/// empty path. Candidates, in order (roots = base_directory, then COULOMB_MODEL_PATH entries):
///  - absolute path or file:///abs: that path;
///  - relative path: root/path;
///  - package://PKG/REST: DIR/REST for every ancestor DIR of base_directory named PKG, then
///    root/PKG/REST, then root/SUFFIX for every trailing part SUFFIX of REST, longest first
///    (so meshes/x.dae next to the URDF is found for package://pkg/some/dir/meshes/x.dae).
fs::path resolve_mesh(const std::string& uri, const std::string& base_directory) {
  std::vector<fs::path> roots{fs::path(base_directory.empty() ? "." : base_directory)};
  for (const fs::path& d : model_path_dirs()) roots.push_back(d);

  std::string name = uri;
  if (name.rfind("file://", 0) == 0) name = name.substr(7);
  if (name.rfind("package://", 0) != 0) {
    const fs::path p(name);
    if (p.is_absolute()) return is_file(p) ? p : fs::path();
    for (const fs::path& r : roots)
      if (is_file(r / p)) return r / p;
    return {};
  }
  const std::string rest_of_uri = name.substr(10);
  const auto slash = rest_of_uri.find('/');
  if (slash == std::string::npos) return {};
  const std::string package = rest_of_uri.substr(0, slash);
  const fs::path rest(rest_of_uri.substr(slash + 1));

  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(roots.front(), ec), ec);  // no "..": real ancestors
  for (; !ec && !dir.empty(); dir = dir.parent_path()) {
    if (dir.filename() == package && is_file(dir / rest)) return dir / rest;
    if (dir == dir.parent_path()) break;
  }
  for (const fs::path& r : roots)
    if (is_file(r / package / rest)) return r / package / rest;
  std::vector<fs::path> parts(rest.begin(), rest.end());
  for (size_t first = 0; first < parts.size(); ++first) {
    fs::path suffix;
    for (size_t k = first; k < parts.size(); ++k) suffix /= parts[k];
    for (const fs::path& r : roots)
      if (is_file(r / suffix)) return r / suffix;
  }
  return {};
}

/// Row of a link's or joint's element (0 when unknown).
int row_of(const std::unordered_map<std::string, int>& index, const auto& decls, const std::string& name) {
  auto it = index.find(name);
  return it == index.end() ? 0 : decls[it->second].element->Row();
}

/// The link's spatial inertia about its origin in link coordinates, validated.
math::SpatialInertia link_inertia(const urdf::Link& link, int row, const ErrorContext& ctx) {
  if (!link.inertial) return math::SpatialInertia::Zero();
  const urdf::Inertial& in = *link.inertial;
  const std::string desc = "link " + in_quotes(link.name) + ": <inertial>";
  if (!std::isfinite(in.mass)) ctx.fail(row, desc + "<mass value> is not finite: " + util::format_number(in.mass));
  if (in.mass < 0.0) ctx.fail(row, desc + "<mass value> is negative: " + util::format_number(in.mass));
  Matrix3 I;
  I << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  try {
    multibody::validate_inertia(in.mass, I, desc + "<inertia>");
  } catch (const std::invalid_argument& e) {
    std::string values = "ixx=" + util::format_number(in.ixx) + " ixy=" + util::format_number(in.ixy) + " ixz=" + util::format_number(in.ixz) +
                         " iyy=" + util::format_number(in.iyy) + " iyz=" + util::format_number(in.iyz) + " izz=" + util::format_number(in.izz);
    ctx.fail(row, std::string(e.what()) + " [" + values + "]");
  }
  const Transform X_LI = to_transform(in.origin);  // inertial frame in the link frame
  if (!X_LI.R.allFinite() || !X_LI.p.allFinite()) ctx.fail(row, desc + "<origin> is not finite");
  const Matrix3 I_com_L = X_LI.R * I * X_LI.R.transpose();
  return math::SpatialInertia::FromCenterOfMass(in.mass, X_LI.p, I_com_L);
}

/// The JointSpec of URDF joint `j`, validated (axis, limits, dynamics).
JointSpec joint_spec(const urdf::Joint& j, const JointDecl& decl, const ErrorContext& ctx) {
  const int row = decl.element->Row();
  const std::string desc = "joint " + in_quotes(j.name);
  JointSpec spec;
  spec.name = j.name;
  spec.X_PJ = to_transform(j.parent_to_joint_origin_transform);
  if (!spec.X_PJ.R.allFinite() || !spec.X_PJ.p.allFinite()) ctx.fail(row, desc + ": <origin> is not finite");
  switch (j.type) {
    case urdf::Joint::REVOLUTE:
    case urdf::Joint::CONTINUOUS:
      spec.type = JointType::kRevolute;
      break;
    case urdf::Joint::PRISMATIC:
      spec.type = JointType::kPrismatic;
      break;
    case urdf::Joint::FIXED:
      spec.type = JointType::kFixed;
      break;
    case urdf::Joint::FLOATING:
      spec.type = JointType::kFloating;
      break;
    default:  // planar and unknown types are rejected in pass 1; defensive
      ctx.fail(row, desc + ": unsupported joint type " + in_quotes(decl.type));
  }
  const bool one_dof = spec.type == JointType::kRevolute || spec.type == JointType::kPrismatic;
  if (one_dof) {
    spec.axis = to_vector(j.axis);
    if (!spec.axis.allFinite()) ctx.fail(row, desc + ": <axis xyz> is not finite");
    if (spec.axis.norm() < 1e-12)
      ctx.fail(row, desc + ": <axis xyz> is the zero vector (" + util::format_number(spec.axis.x()) + " " + util::format_number(spec.axis.y()) +
                        " " + util::format_number(spec.axis.z()) + ")");
  }
  if (one_dof && decl.has_limit && j.limits) {
    const urdf::JointLimits& L = *j.limits;
    for (const auto& [value, attr] : {std::pair{L.lower, "lower"}, std::pair{L.upper, "upper"},
                                      std::pair{L.effort, "effort"}, std::pair{L.velocity, "velocity"}})
      if (!std::isfinite(value)) ctx.fail(row, desc + ": <limit " + attr + "> is not finite: " + util::format_number(value));
    if (L.effort < 0.0) ctx.fail(row, desc + ": <limit effort> is negative: " + util::format_number(L.effort));
    if (L.velocity < 0.0) ctx.fail(row, desc + ": <limit velocity> is negative: " + util::format_number(L.velocity));
    spec.limits.effort = L.effort;
    spec.limits.velocity = L.velocity;
    if (j.type != urdf::Joint::CONTINUOUS) {
      if (L.lower > L.upper)
        ctx.fail(row, desc + ": <limit lower> " + util::format_number(L.lower) + " is greater than <limit upper> " + util::format_number(L.upper));
      spec.limits.lower = L.lower;
      spec.limits.upper = L.upper;
    }
  }
  if (j.dynamics) {
    const double d = j.dynamics->damping, f = j.dynamics->friction;
    if (!std::isfinite(d)) ctx.fail(row, desc + ": <dynamics damping> is not finite: " + util::format_number(d));
    if (!std::isfinite(f)) ctx.fail(row, desc + ": <dynamics friction> is not finite: " + util::format_number(f));
    if (d < 0.0) ctx.fail(row, desc + ": <dynamics damping> is negative: " + util::format_number(d));
    if (f < 0.0) ctx.fail(row, desc + ": <dynamics friction> is negative: " + util::format_number(f));
    if (one_dof) {
      spec.damping = d;
      spec.friction = f;
    }
  }
  return spec;
}

/// A <collision> dimension: 0 (skipped later with a warning, as before) or within
/// [kMinShapeDimension, kMaxShapeDimension] m (geometry/shape.h); sizes whose square overflows
/// would crash the broadphase.
void check_collision_dimension(double value, const char* field, const std::string& desc, int row,
                               const ErrorContext& ctx) {
  if (value == 0.0 || (value >= geometry::kMinShapeDimension && value <= geometry::kMaxShapeDimension)) return;
  ctx.fail(row, desc + ": <collision>" + field + " = " + util::format_number(value) + " m is outside [" +
                    util::format_number(geometry::kMinShapeDimension) + ", " +
                    util::format_number(geometry::kMaxShapeDimension) + "] m");
}

/// Records collision geometry and visual colours of `link`; warns about missing meshes.
void record_geometry(const urdf::Link& link, const std::string& frame, int row, const std::string& base_directory,
                     const ErrorContext& ctx, UrdfAttachment& out) {
  const std::string desc = "link " + in_quotes(link.name);
  for (const urdf::CollisionSharedPtr& c : link.collision_array) {
    if (!c || !c->geometry) continue;
    UrdfCollision uc;
    uc.link = frame;
    uc.name = c->name;
    uc.X_LG = to_transform(c->origin);
    switch (c->geometry->type) {
      case urdf::Geometry::SPHERE: {
        const auto& g = static_cast<const urdf::Sphere&>(*c->geometry);
        uc.type = UrdfCollision::Type::kSphere;
        uc.radius = g.radius;
        if (!(g.radius >= 0.0)) ctx.fail(row, desc + ": <collision><sphere radius> is negative: " + util::format_number(g.radius));
        check_collision_dimension(g.radius, "<sphere radius>", desc, row, ctx);
        break;
      }
      case urdf::Geometry::BOX: {
        const auto& g = static_cast<const urdf::Box&>(*c->geometry);
        uc.type = UrdfCollision::Type::kBox;
        uc.size = to_vector(g.dim);
        if (!(uc.size.minCoeff() >= 0.0))
          ctx.fail(row, desc + ": <collision><box size> has a negative edge: " + util::format_number(g.dim.x) + " " + util::format_number(g.dim.y) +
                            " " + util::format_number(g.dim.z));
        for (int k = 0; k < 3; ++k) check_collision_dimension(uc.size[k], "<box size>", desc, row, ctx);
        break;
      }
      case urdf::Geometry::CYLINDER: {
        const auto& g = static_cast<const urdf::Cylinder&>(*c->geometry);
        uc.type = UrdfCollision::Type::kCylinder;
        uc.radius = g.radius;
        uc.length = g.length;
        if (!(g.radius >= 0.0))
          ctx.fail(row, desc + ": <collision><cylinder radius> is negative: " + util::format_number(g.radius));
        if (!(g.length >= 0.0))
          ctx.fail(row, desc + ": <collision><cylinder length> is negative: " + util::format_number(g.length));
        check_collision_dimension(g.radius, "<cylinder radius>", desc, row, ctx);
        check_collision_dimension(g.length, "<cylinder length>", desc, row, ctx);
        break;
      }
      case urdf::Geometry::MESH: {
        const auto& g = static_cast<const urdf::Mesh&>(*c->geometry);
        uc.type = UrdfCollision::Type::kMesh;
        uc.mesh_filename = g.filename;
        uc.mesh_scale = to_vector(g.scale);
        uc.mesh_path = resolve_mesh(g.filename, base_directory).string();
        if (uc.mesh_path.empty())
          out.warnings.push_back(ctx.where(row) + ": " + desc + ": <collision> mesh " + in_quotes(g.filename) +
                                 " not found (relative to " + in_quotes(base_directory) +
                                 " or COULOMB_MODEL_PATH); its mesh_path is left empty");
        break;
      }
    }
    out.collisions.push_back(std::move(uc));
  }
  for (const urdf::VisualSharedPtr& v : link.visual_array) {
    if (!v) continue;
    UrdfVisual uv;
    uv.link = frame;
    uv.name = v->name;
    uv.X_LG = to_transform(v->origin);
    bool keep = v->geometry != nullptr;
    if (keep) {
      switch (v->geometry->type) {
        case urdf::Geometry::SPHERE:
          uv.type = UrdfVisual::Type::kSphere;
          uv.radius = static_cast<const urdf::Sphere&>(*v->geometry).radius;
          keep = uv.radius > 0.0;
          break;
        case urdf::Geometry::BOX:
          uv.type = UrdfVisual::Type::kBox;
          uv.size = to_vector(static_cast<const urdf::Box&>(*v->geometry).dim);
          keep = uv.size.allFinite() && uv.size.minCoeff() > 0.0;
          break;
        case urdf::Geometry::CYLINDER: {
          const auto& g = static_cast<const urdf::Cylinder&>(*v->geometry);
          uv.type = UrdfVisual::Type::kCylinder;
          uv.radius = g.radius;
          uv.length = g.length;
          keep = uv.radius > 0.0 && uv.length > 0.0;
          break;
        }
        case urdf::Geometry::MESH: {
          const auto& g = static_cast<const urdf::Mesh&>(*v->geometry);
          uv.type = UrdfVisual::Type::kMesh;
          uv.mesh_filename = g.filename;
          uv.mesh_scale = to_vector(g.scale);
          uv.mesh_path = resolve_mesh(g.filename, base_directory).string();
          if (uv.mesh_path.empty()) {
            out.notes.push_back(ctx.where(row) + ": " + desc + ": <visual> mesh " + in_quotes(g.filename) +
                                " not found (relative to " + in_quotes(base_directory) +
                                " or COULOMB_MODEL_PATH); visual skipped");
            keep = false;
          }
          break;
        }
      }
    }
    // The colour is the link's, kept even when the visual's mesh is missing (viewers use it
    // to paint the collision shapes).
    if (v->material) {
      const urdf::Color& c = v->material->color;
      UrdfColor color;
      color.link = frame;
      color.rgba[0] = c.r;
      color.rgba[1] = c.g;
      color.rgba[2] = c.b;
      color.rgba[3] = c.a;
      out.colors.push_back(color);
      std::copy(color.rgba, color.rgba + 4, uv.rgba);
      uv.has_rgba = true;
    }
    if (keep) out.visuals.push_back(std::move(uv));
  }
}

/// <transmission> elements are not simulated (actuators come from the scene file). One that
/// would change the dynamics — a mechanicalReduction other than 1, or a type other than
/// SimpleTransmission — is a warning naming it; plain 1:1 simple transmissions are one note.
void transmission_messages(const Document& doc, const ErrorContext& ctx, UrdfAttachment& out) {
  int plain = 0;
  for (const TiXmlElement* t : doc.transmissions) {
    const char* name_attr = t->Attribute("name");
    const std::string name = in_quotes(name_attr ? name_attr : "");
    const TiXmlElement* type = t->FirstChildElement("type");
    const std::string type_text = type && type->GetText() ? type->GetText() : "";
    std::string reduction_text = "1";
    for (const TiXmlElement* a = t->FirstChildElement("actuator"); a; a = a->NextSiblingElement("actuator"))
      if (const TiXmlElement* r = a->FirstChildElement("mechanicalReduction"); r && r->GetText()) reduction_text = r->GetText();
    char* end = nullptr;
    const double reduction = std::strtod(reduction_text.c_str(), &end);
    const bool simple = type_text.empty() || type_text.find("SimpleTransmission") != std::string::npos;
    if (simple && reduction == 1.0) {
      ++plain;
      continue;
    }
    out.warnings.push_back(ctx.where(t->Row()) + ": <transmission " + name + "> (" +
                           (type_text.empty() ? std::string("no type") : type_text) + ", mechanicalReduction " +
                           reduction_text + ") is read but not simulated: the joint is driven by the scene's "
                           "actuators (docs/scene-format.md), without this reduction or coupling");
  }
  if (plain > 0)
    out.notes.push_back(ctx.source() + ": " + std::to_string(plain) + " <transmission> element" + (plain == 1 ? "" : "s") +
                        " (1:1 simple) not read: actuators come from the scene's `actuators`");
}

/// Passes 1 and 2 over one document. Not copyable (doc holds the XML tree).
struct ParsedUrdf {
  Document doc;
  std::vector<std::vector<int>> children;
  int root = 0;
  urdf::ModelInterfaceSharedPtr model;
  std::vector<std::string> warnings;
};

void parse_passes_1_2(const std::string& xml, ParsedUrdf& p, const ErrorContext& ctx) {
  // Pass 1.
  read_document(xml, p.doc, ctx);
  p.root = check_tree(p.doc, p.children, ctx);

  // Pass 2.
  LogCapture log;
  p.model = captured_parse(text_for_urdfdom(xml, p.doc), log);
  if (!p.model || !log.errors.empty()) {
    std::string msg = "URDF parser (urdfdom) rejected the file";
    for (size_t k = 0; k < log.errors.size(); ++k) msg += (k == 0 ? ": " : "; ") + log.errors[k];
    ctx.fail(msg);
  }
  std::set<std::string> seen;  // urdfdom repeats some warnings (visual and visual_array)
  for (const std::string& w : log.warnings)
    if (seen.insert(w).second) p.warnings.push_back(ctx.source() + ": urdfdom: " + w);
}

/// Pass 3: depth-first from the root, children in declaration order of their joints.
void attach_parsed(multibody::ModelBuilder& builder, const ParsedUrdf& p, const UrdfAttachOptions& options,
                   const std::string& base_directory, const ErrorContext& ctx, UrdfAttachment& out) {
  const Document& doc = p.doc;
  out.robot_name = p.model->getName();
  out.warnings.insert(out.warnings.end(), p.warnings.begin(), p.warnings.end());
  transmission_messages(doc, ctx, out);
  const std::string& prefix = options.prefix;
  auto prefixed = [&](const std::string& name) { return name == "world" ? name : prefix + name; };

  const std::string& root_name = doc.links[p.root].name;
  const urdf::LinkConstSharedPtr root_link = p.model->getLink(root_name);
  if (!root_link) ctx.fail("urdfdom lost the root link " + in_quotes(root_name));
  const int root_row = doc.links[p.root].element->Row();

  auto add = [&](const std::string& name, const std::string& parent, const JointSpec& spec,
                 const math::SpatialInertia& inertia, int row) {
    if (builder.has_link(name))
      ctx.fail(row, "link name " + in_quotes(name) + " is already in the model (give the robot a name prefix)");
    try {
      builder.add_link(name, parent, spec, inertia);
    } catch (const std::invalid_argument& e) {
      ctx.fail(row, e.what());
    }
  };

  if (root_name == "world") {
    // The file welds its tree to the world itself: its root *is* the world frame.
    if (options.floating)
      ctx.fail(root_row, "cannot attach a floating base: the root link is 'world', so the URDF welds the robot "
                         "to the world (load it without the floating option)");
    if (root_link->inertial && root_link->inertial->mass > 0.0)
      out.warnings.push_back(ctx.where(root_row) + ": link 'world': <inertial> of the world is ignored");
    const size_t first = out.collisions.size(), first_visual = out.visuals.size();
    record_geometry(*root_link, "world", root_row, base_directory, ctx, out);
    for (size_t k = first; k < out.collisions.size(); ++k)
      out.collisions[k].X_LG = options.X_W_root * out.collisions[k].X_LG;
    for (size_t k = first_visual; k < out.visuals.size(); ++k)
      out.visuals[k].X_LG = options.X_W_root * out.visuals[k].X_LG;
    out.root_link = "world";
  } else {
    JointSpec base;
    if (options.floating) {
      if (options.floating_joint_name.empty()) ctx.fail("the floating joint name is empty");
      const std::string& fj = options.floating_joint_name;
      if (fj.rfind(prefix, 0) == 0 && doc.joint_index.count(fj.substr(prefix.size())))
        ctx.fail(row_of(doc.joint_index, doc.joints, fj.substr(prefix.size())),
                 "the floating joint name " + in_quotes(fj) + " is already the name of a joint of the URDF");
      base.name = fj;
      base.type = JointType::kFloating;
      out.floating_joint = fj;
    } else {
      base.name = "";  // welded: a fixed joint that the builder fuses into the world
      base.type = JointType::kFixed;
      base.X_PJ = options.X_W_root;
    }
    out.root_link = prefixed(root_name);
    add(out.root_link, "world", base, link_inertia(*root_link, root_row, ctx), root_row);
    record_geometry(*root_link, out.root_link, root_row, base_directory, ctx, out);
  }

  std::vector<int> stack(p.children[p.root].rbegin(), p.children[p.root].rend());
  while (!stack.empty()) {
    const JointDecl& decl = doc.joints[stack.back()];
    stack.pop_back();
    const urdf::JointConstSharedPtr joint = p.model->getJoint(decl.name);
    const urdf::LinkConstSharedPtr link = p.model->getLink(decl.child);
    if (!joint || !link) ctx.fail(decl.element->Row(), "urdfdom lost joint " + in_quotes(decl.name));
    const int link_row = row_of(doc.link_index, doc.links, decl.child);
    JointSpec spec = joint_spec(*joint, decl, ctx);
    if (joint->mimic) {
      const std::string desc = "joint " + in_quotes(decl.name);
      const std::string& leader = joint->mimic->joint_name;
      const int row = decl.element->Row();
      if (leader.empty()) ctx.fail(row, desc + ": <mimic> has no joint attribute");
      if (leader == decl.name) ctx.fail(row, desc + ": <mimic joint=" + in_quotes(leader) + "> mimics itself");
      if (!doc.joint_index.count(leader))
        ctx.fail(row, desc + ": <mimic joint=" + in_quotes(leader) + ">: no joint of that name in the file");
      if (!std::isfinite(joint->mimic->multiplier) || !std::isfinite(joint->mimic->offset))
        ctx.fail(row, desc + ": <mimic> multiplier and offset must be finite");
      if (joint->type != urdf::Joint::REVOLUTE && joint->type != urdf::Joint::CONTINUOUS &&
          joint->type != urdf::Joint::PRISMATIC)
        ctx.fail(row, desc + ": <mimic> on a joint that is not revolute, continuous or prismatic");
      out.mimics.push_back({prefix + decl.name, prefix + leader, joint->mimic->multiplier, joint->mimic->offset, row});
    }
    spec.name = prefix + spec.name;
    if (decl.parent == "world") spec.X_PJ = options.X_W_root * spec.X_PJ;
    const std::string child = prefixed(decl.child);
    add(child, prefixed(decl.parent), spec, link_inertia(*link, link_row, ctx), decl.element->Row());
    out.joints.push_back(spec.name);
    record_geometry(*link, child, link_row, base_directory, ctx, out);
    const std::vector<int>& next = p.children[doc.link_index.at(decl.child)];
    stack.insert(stack.end(), next.rbegin(), next.rend());
  }
}

/// The text of a URDF file; throws UrdfError naming it if it cannot be read.
std::string read_urdf_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UrdfError(path + ": cannot read URDF file: no such file");
  if (fs::is_directory(path, ec)) throw UrdfError(path + ": cannot read URDF file: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UrdfError(path + ": cannot read URDF file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UrdfError(path + ": cannot read URDF file: read error");
  return text.str();
}

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

UrdfModel parse_urdf(const std::string& xml, const UrdfOptions& options, const std::string& source_name,
                     const std::string& base_directory) {
  const ErrorContext ctx(source_name);
  ParsedUrdf parsed;
  parse_passes_1_2(xml, parsed, ctx);
  multibody::ModelBuilder builder(parsed.model->getName());
  UrdfAttachOptions attach;
  attach.floating = options.floating;
  attach.floating_joint_name = options.floating_joint_name;
  UrdfAttachment a;
  attach_parsed(builder, parsed, attach, base_directory, ctx, a);
  UrdfModel out;
  out.robot_name = std::move(a.robot_name);
  out.collisions = std::move(a.collisions);
  out.colors = std::move(a.colors);
  out.visuals = std::move(a.visuals);
  out.warnings = std::move(a.warnings);
  out.notes = std::move(a.notes);
  out.mimics = std::move(a.mimics);
  out.model = builder.build();
  return out;
}

UrdfModel load_urdf(const std::string& path, const UrdfOptions& options) {
  return parse_urdf(read_urdf_file(path), options, path, directory_of(path));
}

UrdfAttachment add_urdf_string(multibody::ModelBuilder& builder, const std::string& xml,
                               const UrdfAttachOptions& options, const std::string& source_name,
                               const std::string& base_directory) {
  const ErrorContext ctx(source_name);
  ParsedUrdf parsed;
  parse_passes_1_2(xml, parsed, ctx);
  UrdfAttachment out;
  attach_parsed(builder, parsed, options, base_directory, ctx, out);
  return out;
}

UrdfAttachment add_urdf(multibody::ModelBuilder& builder, const std::string& path, const UrdfAttachOptions& options) {
  return add_urdf_string(builder, read_urdf_file(path), options, path, directory_of(path));
}

std::string resolve_model_file(const std::string& uri, const std::string& base_directory) {
  return resolve_mesh(uri, base_directory).string();
}

}  // namespace coulomb::io
