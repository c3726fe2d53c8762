#include "coulomb/simulation/run_monitor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "../util/format.h"

namespace coulomb::simulation {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string position_text(const math::Vector3& p) { return util::format_point(p.x(), p.y(), p.z()); }

/// The robot whose floating root is `root`, or whose geometries ride on a body of the tree; −1.
int robot_of_tree(const scene::Scene& scene, int root) {
  for (const scene::SceneRobot& r : scene.robots)
    if (r.floating && r.root_body == root) return r.id;
  for (const geometry::Geometry& g : scene.geometries)
    if (g.body > 0 && g.robot >= 0 && scene.model.body(g.body).tree == root) return g.robot;
  return -1;
}

std::string tree_name(const scene::Scene& scene, int root) {
  const int robot = robot_of_tree(scene, root);
  std::string text = "body " + quoted(scene.model.body(root).name);
  if (robot >= 0) {
    const scene::SceneRobot& r = scene.robots[robot];
    text += " (robot " + quoted(r.name.empty() ? r.robot_name : r.name) + ", " + r.urdf_path + ")";
  }
  return text;
}

}  // namespace

RunMonitor::RunMonitor(const scene::Scene& scene, const std::vector<math::Vector3>& p_WBo,
                       const MonitorParameters& parameters)
    : parameters_(parameters) {
  const multibody::Model& model = scene.model;
  for (int b = 1; b < model.num_bodies(); ++b)
    if (model.body(b).tree == b) roots_.push_back(b);
  fell_.assign(roots_.size(), 0);
  left_.assign(roots_.size(), 0);
  if (!parameters_.enabled) return;

  // Collision geometry: per robot, then per tree not attributed to a robot.
  std::vector<int> geometries_of_robot(scene.robots.size(), 0);
  std::vector<int> geometries_of_tree(model.num_bodies(), 0);
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.robot >= 0 && g.robot < static_cast<int>(geometries_of_robot.size())) ++geometries_of_robot[g.robot];
    if (g.body > 0) ++geometries_of_tree[model.body(g.body).tree];
  }
  bool welded_robot_without_geometry = false;
  for (const scene::SceneRobot& r : scene.robots) {
    if (geometries_of_robot[r.id] > 0) continue;
    welded_robot_without_geometry = welded_robot_without_geometry || !r.floating;
    warnings_.push_back("robot " + quoted(r.name.empty() ? r.robot_name : r.name) + " (" + r.urdf_path +
                        ") has no collision geometry: " +
                        (r.floating ? "nothing stops it falling through the ground and other bodies"
                                    : "it passes through every other body") +
                        " (add primitive <collision> elements, or shapes in the scene)");
  }
  for (int root : roots_) {
    if (geometries_of_tree[root] > 0) continue;
    bool floating_robot = false;
    for (const scene::SceneRobot& r : scene.robots) floating_robot = floating_robot || (r.floating && r.root_body == root);
    if (floating_robot || welded_robot_without_geometry) continue;  // reported with its robot above
    warnings_.push_back("body " + quoted(model.body(root).name) +
                        " has no collision geometry: nothing stops it falling through the ground and other bodies");
  }

  // Fall height: below the lowest point of every static geometry (a horizontal-ish half-space
  // at its surface). Bounds: the initial body origins and the bounded static geometry.
  double fall = kInf;
  bool any_static = false;
  lower_ = math::Vector3::Constant(kInf);
  upper_ = math::Vector3::Constant(-kInf);
  for (int b = 1; b < model.num_bodies(); ++b) {
    lower_ = lower_.cwiseMin(p_WBo[b]);
    upper_ = upper_.cwiseMax(p_WBo[b]);
  }
  for (const geometry::Geometry& g : scene.geometries) {
    if (g.body != 0) continue;
    const math::Transform& X_WG = g.X_BG;  // static: the world is body 0
    if (g.shape.type == geometry::ShapeType::kHalfSpace) {
      const math::Vector3 n_W = X_WG.R.col(2);
      if (n_W.z() < std::sqrt(0.5)) continue;  // a wall, not a floor
      any_static = true;
      fall = std::min(fall, X_WG.p.z());
      continue;
    }
    any_static = true;
    fall = std::min(fall, geometry::lowest_height(g.shape, X_WG));
    lower_ = lower_.cwiseMin(X_WG.p);
    upper_ = upper_.cwiseMax(X_WG.p);
  }
  fall_height_ = any_static ? fall - parameters_.fall_distance : -kInf;
  if (!(lower_.array() <= upper_.array()).all()) lower_ = upper_ = math::Vector3::Zero();
  lower_.array() -= parameters_.bound_margin;
  upper_.array() += parameters_.bound_margin;
}

void RunMonitor::check_initial_contacts(const scene::Scene& scene, const contact::ContactSet& contacts) {
  if (!parameters_.enabled) return;
  const contact::Contact* deepest = nullptr;
  int count = 0;
  for (const contact::Contact& c : contacts.contacts) {
    if (!(c.phi < -parameters_.initial_overlap)) continue;
    ++count;
    if (!deepest || c.phi < deepest->phi) deepest = &c;
  }
  if (!deepest) return;
  const multibody::Model& model = scene.model;
  auto geometry_text = [&](int g, int body) {
    std::string text = g >= 0 && g < static_cast<int>(scene.geometries.size()) ? quoted(scene.geometries[g].name) : "?";
    return text + " (body " + quoted(model.body(body).name) + ")";
  };
  std::ostringstream os;
  os << "initial overlap of " << util::format_number(-deepest->phi * 1e3) << " mm between "
     << geometry_text(deepest->geometry_a, deepest->body_a) << " and " << geometry_text(deepest->geometry_b, deepest->body_b)
     << " at " << position_text(deepest->p_W) << " m";
  if (count > 1) os << " (" << count << " contacts deeper than " << util::format_number(parameters_.initial_overlap * 1e3) << " mm)";
  os << ": the contact stiffness will push them apart violently in the first steps; move them apart"
        " (`coulomb inspect` lists the initial contacts)";
  warnings_.push_back(os.str());
}

void RunMonitor::check_bodies(const scene::Scene& scene, const std::vector<math::Vector3>& p_WBo, double time) {
  if (!parameters_.enabled) return;
  for (size_t i = 0; i < roots_.size(); ++i) {
    const math::Vector3& p = p_WBo[roots_[i]];
    if (!fell_[i] && p.z() < fall_height_) {
      fell_[i] = 1;
      left_[i] = 1;  // one report per tree
      warnings_.push_back(tree_name(scene, roots_[i]) + " fell off or through the static geometry: at t = " + util::format_number(time) +
                          " s its origin is at z = " + util::format_number(p.z()) + " m, more than " +
                          util::format_number(parameters_.fall_distance) +
                          " m below every static geometry (check its collision geometry, the contact stiffness "
                          "and the time step)");
    } else if (!left_[i] && ((p.array() < lower_.array()).any() || (p.array() > upper_.array()).any())) {
      left_[i] = 1;
      warnings_.push_back(tree_name(scene, roots_[i]) + " left the scene: at t = " + util::format_number(time) +
                          " s its origin is at " + position_text(p) + " m, more than " +
                          util::format_number(parameters_.bound_margin) +
                          " m beyond the box of the initial bodies and static geometry");
    }
  }
}

}  // namespace coulomb::simulation
