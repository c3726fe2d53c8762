// `coulomb inspect SCENE.yaml [--json]`: what a scene file assembles to, without simulating.
//
// Loads the scene or model file (io::load_scene_or_model), places every geometry at the initial configuration q0
// (forward kinematics, CollisionWorld::update_poses) and gathers the contacts there
// (contact::gather_contacts, with the scene's contact defaults and collision margin). Prints
// the model (trees, bodies with masses, DOFs), robots, actuators, springs, geometries and the
// initial contacts (pairs, points, normals, signed distances φ), as text or, with --json, as
// one object documented in docs/scene-format.md ("Inspecting a scene").
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "coulomb/constraints/bilateral_kinematics.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody.h"
#include "coulomb/scene/placement.h"

namespace coulomb::cli {

namespace {

constexpr const char* kFooter = R"(Output (text, or one JSON object with --json; see docs/scene-format.md):
  model      nq, nv (DOFs), total mass [kg], gravity [m/s^2]
  trees      every kinematic tree hanging from the world: root body, bodies, DOFs
  bodies     every moving body: index, name, mass [kg] (welded links included), tree, parent,
             joint and joint type; bodies fixed to the world are fused into 'world'
  poses      every body's world pose at q0 (position, roll pitch yaw), and the frames of links
             welded into a body (JSON: bodies[].pose_W, frames[] with quaternion w x y z too)
  robots     URDF robots: name prefix, file, floating or welded, root body, the lowest collision
             point at q0 and its height above the ground below it (the highest upward
             half-space or box top); robots[].place_on_ground: true puts it there
  actuators  PD actuators (kp, kd, target, effort limit), springs (stiffness, rest position)
  constraints  bilateral constraints (scene constraints:): type, rows, bodies, stiffness, and
             their value g(q0) at the initial state (JSON: constraints[].g0)
  contacts   at the initial state q0: geometry and body pair (normal from A into B), point
             [m], unit normal, signed distance phi [m] (< 0: overlap), combined mu,
             stiffness [N/m] and dissipation time [s]. Pairs with phi <= margin are listed.
Warnings (e.g. skipped mesh collisions) go to stderr.

Examples:
  coulomb inspect examples/scenes/a1_drop.yaml
  coulomb inspect examples/scenes/clutter.yaml --json)";

std::vector<double> to_std(const Eigen::VectorXd& x) { return {x.data(), x.data() + x.size()}; }
std::vector<double> to_std(const math::Vector3& x) { return {x.x(), x.y(), x.z()}; }

std::string vec3(const math::Vector3& x, int precision = 6) {
  std::ostringstream os;
  os << std::setprecision(precision) << "(" << x.x() + 0.0 << ", " << x.y() + 0.0 << ", " << x.z() + 0.0 << ")";  // + 0.0: no "-0"
  return os.str();
}

/// Positive numbers print as is; infinity as "inf" (JSON: null would lose meaning, so a string).
nlohmann::ordered_json json_number(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

struct InspectOptions {
  std::string scene_path;
  bool json = false;
};

int run_inspect(const InspectOptions& opt) {
  const io::Scene scene = io::load_scene_or_model(opt.scene_path);
  print_warnings_and_notes(scene.warnings, scene.notes, opt.json ? "the JSON's \"notes\"" : "");
  const multibody::Model& model = scene.model;

  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, scene.q0);
  geometry::CollisionWorld world(model, scene.geometries, scene.collision);
  world.update_poses(ws);
  contact::ContactSet contacts;
  contact::gather_contacts(world, scene.contact, contacts);
  const std::vector<geometry::Geometry>& geometries = world.geometries();
  // Bilateral constraints: their value g(q0) (constraints/bilateral_kinematics.h).
  std::vector<Eigen::VectorXd> constraint_values;
  constraints::BilateralKinematicsScratch constraint_scratch;
  for (const scene::BilateralConstraint& c : scene.constraints) {
    Eigen::VectorXd g(scene::num_rows(c.type));
    Eigen::MatrixXd J(g.size(), model.nv());
    constraints::bilateral_kinematics(model, ws, c, constraint_scratch, g, J);
    constraint_values.push_back(g);
  }

  // Trees: root body → bodies; DOFs per tree.
  std::map<int, std::vector<int>> trees;
  for (int b = 1; b < model.num_bodies(); ++b) trees[model.body(b).tree].push_back(b);
  auto body_mass = [&](int b) { return model.body(b).inertia.mass; };
  // World poses at q0: every body, and every frame that is not a body's own frame (links welded
  // into a body, frames added to the model).
  auto pose_json = [](const math::Transform& X) {
    const math::Quaternion quat(X.R);
    return nlohmann::ordered_json{{"position", to_std(X.p)},
                                  {"quaternion", {quat.w(), quat.x(), quat.y(), quat.z()}},
                                  {"rpy", to_std(math::rpy_from_rotation(X.R))}};
  };
  std::vector<int> extra_frames;
  for (int f = 0; f < static_cast<int>(model.frames().size()); ++f) {
    const multibody::Frame& fr = model.frame(f);
    if (fr.body > 0 && fr.name == model.body(fr.body).name) continue;  // the body's own frame
    if (fr.body == 0 && fr.name == "world") continue;
    extra_frames.push_back(f);
  }
  auto X_WF = [&](int f) { return ws.X_WB[model.frame(f).body] * model.frame(f).X_BF; };
  // Per robot: the lowest collision point and the ground below it.
  struct RobotLow {
    scene::CollisionPoint low;
    std::optional<double> ground;
  };
  std::vector<RobotLow> robot_low;
  for (const io::SceneRobot& r : scene.robots) {
    RobotLow rl;
    rl.low = scene::lowest_collision_point(scene, ws.X_WB, r.id);
    if (rl.low.found) rl.ground = scene::ground_height(scene, rl.low.p_W.x(), rl.low.p_W.y());
    robot_low.push_back(rl);
  }

  if (opt.json) {
    nlohmann::ordered_json out;
    out["scene"] = opt.scene_path;
    out["description"] = scene.description;
    out["num_dofs"] = model.nv();
    out["num_positions"] = model.nq();
    out["num_bodies"] = model.num_bodies() - 1;
    out["total_mass"] = model.total_mass();
    out["gravity"] = to_std(model.gravity());
    out["time_step"] = scene.time_step;
    out["duration"] = scene.duration;
    out["solver"] = scene.solver;
    out["integrator"] = scene.integrator;
    out["contact_approximation"] = contact::to_string(scene.contact.approximation);
    out["contact_defaults"] = {{"mu", scene.contact.mu},
                               {"stiffness", scene.contact.stiffness},
                               {"dissipation_time", scene.contact.dissipation_time},
                               {"hunt_crossley_dissipation", scene.contact.hunt_crossley_dissipation},
                               {"stiction_tolerance", scene.contact.stiction_tolerance}};
    out["margin"] = scene.collision.margin;
    out["dof_names"] = model.dof_names();
    out["position_names"] = model.position_names();
    out["q0"] = to_std(scene.q0);
    out["v0"] = to_std(scene.v0);
    out["world_mass"] = body_mass(0);
    nlohmann::ordered_json tree_list = nlohmann::ordered_json::array();
    for (const auto& [root, bodies] : trees) {
      int dofs = 0;
      std::vector<std::string> names;
      for (int b : bodies) {
        dofs += model.body(b).joint.nv;
        names.push_back(model.body(b).name);
      }
      tree_list.push_back({{"root_body", root}, {"root", model.body(root).name}, {"bodies", names}, {"num_dofs", dofs}});
    }
    out["trees"] = tree_list;
    nlohmann::ordered_json body_list = nlohmann::ordered_json::array();
    for (int b = 1; b < model.num_bodies(); ++b) {
      const multibody::Body& body = model.body(b);
      body_list.push_back({{"index", b},
                           {"name", body.name},
                           {"mass", body.inertia.mass},
                           {"tree", body.tree},
                           {"parent", model.body(body.parent).name},
                           {"joint", body.joint.name},
                           {"joint_type", multibody::joint_type_name(body.joint.type)},
                           {"q_index", body.joint.q_index},
                           {"v_index", body.joint.v_index},
                           {"nv", body.joint.nv},
                           {"pose_W", pose_json(ws.X_WB[b])}});
    }
    out["bodies"] = body_list;
    nlohmann::ordered_json frame_list = nlohmann::ordered_json::array();
    for (int f : extra_frames)
      frame_list.push_back({{"name", model.frame(f).name}, {"body", model.body(model.frame(f).body).name}, {"pose_W", pose_json(X_WF(f))}});
    out["frames"] = frame_list;
    nlohmann::ordered_json robot_list = nlohmann::ordered_json::array();
    for (const io::SceneRobot& r : scene.robots)
      robot_list.push_back({{"name", r.name},
                            {"urdf", r.urdf_path},
                            {"format", r.model_format},
                            {"floating", r.floating},
                            {"floating_joint", r.floating_joint},
                            {"root_body", r.root_body},
                            {"warnings", r.warnings},
                            {"notes", r.notes},
                            {"lowest_collision_point", robot_low[r.id].low.found
                                 ? nlohmann::ordered_json{{"position", to_std(robot_low[r.id].low.p_W)},
                                                          {"geometry", geometries[robot_low[r.id].low.geometry].name},
                                                          {"body", model.body(robot_low[r.id].low.body).name},
                                                          {"ground_height", robot_low[r.id].ground ? nlohmann::ordered_json(*robot_low[r.id].ground) : nlohmann::ordered_json(nullptr)},
                                                          {"height_above_ground", robot_low[r.id].ground ? nlohmann::ordered_json(robot_low[r.id].low.p_W.z() - *robot_low[r.id].ground) : nlohmann::ordered_json(nullptr)}}
                                 : nlohmann::ordered_json(nullptr)}});
    out["robots"] = robot_list;
    nlohmann::ordered_json actuator_list = nlohmann::ordered_json::array();
    for (const io::Actuator& a : scene.actuators)
      actuator_list.push_back({{"joint", a.joint},
                               {"kp", a.kp},
                               {"kd", a.kd},
                               {"target", a.q_target},
                               {"velocity_target", a.v_target},
                               {"effort_limit", json_number(a.effort_limit)}});
    out["actuators"] = actuator_list;
    nlohmann::ordered_json spring_list = nlohmann::ordered_json::array();
    for (const io::JointSpring& s : scene.springs)
      spring_list.push_back({{"joint", s.joint},
                             {"stiffness", s.stiffness},
                             {"damping", s.damping},
                             {"rest_position", s.rest_position}});
    out["springs"] = spring_list;
    nlohmann::ordered_json constraint_list = nlohmann::ordered_json::array();
    for (size_t i = 0; i < scene.constraints.size(); ++i) {
      const scene::BilateralConstraint& c = scene.constraints[i];
      constraint_list.push_back({{"name", c.name},
                                 {"type", scene::to_string(c.type)},
                                 {"body_a", model.body(c.body_a).name},
                                 {"body_b", model.body(c.body_b).name},
                                 {"rows", scene::num_rows(c.type)},
                                 {"stiffness", json_number(c.stiffness)},
                                 {"damping", c.damping},
                                 {"g0", to_std(constraint_values[i])}});
    }
    out["constraints"] = constraint_list;
    out["num_geometries"] = geometries.size();
    nlohmann::ordered_json geometry_list = nlohmann::ordered_json::array();
    for (const geometry::Geometry& g : geometries) {
      nlohmann::ordered_json entry = {
          {"name", g.name}, {"body", model.body(g.body).name}, {"shape", geometry::shape_type_name(g.shape.type)}};
      if (g.shape.type == geometry::ShapeType::kConvexMesh) {
        entry["hull_vertices"] = g.shape.vertices.size();
        entry["hull_faces"] = g.shape.triangles.size();
        if (!g.shape.mesh_file.empty()) entry["mesh_file"] = g.shape.mesh_file;
      } else if (g.shape.type == geometry::ShapeType::kMesh) {
        entry["mesh_vertices"] = g.shape.vertices.size();
        entry["mesh_triangles"] = g.shape.triangles.size();
        if (!g.shape.mesh_file.empty()) entry["mesh_file"] = g.shape.mesh_file;
      }
      geometry_list.push_back(entry);
    }
    out["geometries"] = geometry_list;
    out["num_contacts"] = contacts.size();
    nlohmann::ordered_json contact_list = nlohmann::ordered_json::array();
    for (const contact::Contact& c : contacts.contacts)
      contact_list.push_back({{"body_a", model.body(c.body_a).name},
                              {"body_b", model.body(c.body_b).name},
                              {"geometry_a", geometries[c.geometry_a].name},
                              {"geometry_b", geometries[c.geometry_b].name},
                              {"point", to_std(c.p_W)},
                              {"normal", to_std(c.n_W)},
                              {"distance", c.phi},
                              {"mu", c.material.mu},
                              {"stiffness", json_number(c.material.stiffness)},
                              {"dissipation_time", c.material.dissipation_time},
                              {"hunt_crossley_dissipation", c.material.hunt_crossley_dissipation},
                              {"stiction_tolerance", c.material.stiction_tolerance}});
    out["contacts"] = contact_list;
    out["warnings"] = scene.warnings;
    out["notes"] = scene.notes;
    std::cout << out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }

  std::cout << std::setprecision(6);
  std::cout << "scene        " << opt.scene_path << "\n";
  if (!scene.description.empty()) {
    std::string d = scene.description;
    while (!d.empty() && d.back() == '\n') d.pop_back();
    std::cout << "             " << d << "\n";
  }
  std::cout << "settings     time_step " << scene.time_step << " s, duration " << scene.duration << " s, solver "
            << scene.solver << ", integrator " << scene.integrator << ", contact_approximation "
            << contact::to_string(scene.contact.approximation) << "\n"
            << "contact      mu " << scene.contact.mu << ", stiffness " << scene.contact.stiffness
            << " N/m, dissipation_time " << scene.contact.dissipation_time << " s, hunt_crossley_dissipation "
            << scene.contact.hunt_crossley_dissipation << " s/m, stiction_tolerance " << scene.contact.stiction_tolerance
            << " m/s, margin " << scene.collision.margin << " m\n"
            << "model        nq = " << model.nq() << ", nv = " << model.nv() << " DOFs, " << (model.num_bodies() - 1)
            << " moving bodies, total mass " << std::setprecision(10) << model.total_mass() << std::setprecision(6)
            << " kg (" << body_mass(0) << " kg fixed to the world)\n"
            << "gravity      " << vec3(model.gravity()) << " m/s^2\n\n";

  std::cout << "trees (" << trees.size() << "):\n";
  for (const auto& [root, bodies] : trees) {
    int dofs = 0;
    for (int b : bodies) dofs += model.body(b).joint.nv;
    std::cout << "  tree " << root << ": root " << model.body(root).name << ", " << bodies.size() << " bod"
              << (bodies.size() == 1 ? "y" : "ies") << ", " << dofs << " DOFs\n";
  }
  std::cout << "\nbodies:\n";
  size_t width = 4;
  for (int b = 1; b < model.num_bodies(); ++b) width = std::max(width, model.body(b).name.size());
  std::cout << "  " << std::setw(4) << "#" << "  " << std::left << std::setw(static_cast<int>(width)) << "name"
            << std::right << std::setw(12) << "mass [kg]" << std::setw(6) << "tree" << "  joint (type, dofs)\n";
  for (int b = 1; b < model.num_bodies(); ++b) {
    const multibody::Body& body = model.body(b);
    std::cout << "  " << std::setw(4) << b << "  " << std::left << std::setw(static_cast<int>(width)) << body.name
              << std::right << std::setw(12) << body.inertia.mass << std::setw(6) << body.tree << "  "
              << body.joint.name << " (" << multibody::joint_type_name(body.joint.type) << ", " << body.joint.nv
              << ")\n";
  }
  std::cout << "\nworld poses at q0 (position [m], roll pitch yaw [rad]):\n";
  for (int b = 1; b < model.num_bodies(); ++b) {
    const math::Transform& X = ws.X_WB[b];
    std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << model.body(b).name << std::right << "  p "
              << vec3(X.p) << "  rpy " << vec3(math::rpy_from_rotation(X.R)) << "\n";
  }
  if (!extra_frames.empty()) {
    std::cout << "  frames (links welded into a body):\n";
    for (int f : extra_frames) {
      const math::Transform X = X_WF(f);
      std::cout << "    " << model.frame(f).name << " (on " << model.body(model.frame(f).body).name << ")  p " << vec3(X.p)
                << "  rpy " << vec3(math::rpy_from_rotation(X.R)) << "\n";
    }
  }
  if (!scene.robots.empty()) {
    std::cout << "\nrobots:\n";
    for (const io::SceneRobot& r : scene.robots) {
      std::cout << "  " << (r.name.empty() ? "(unnamed)" : r.name) << ": " << r.urdf_path << ", "
                << (r.floating ? "floating (" + r.floating_joint + ")" : std::string("welded")) << ", root body "
                << r.root_body << "\n";
      const RobotLow& rl = robot_low[r.id];
      if (!rl.low.found) {
        std::cout << "      no collision geometry\n";
        continue;
      }
      std::cout << "      lowest collision point " << vec3(rl.low.p_W) << " m on " << geometries[rl.low.geometry].name;
      if (rl.ground)
        std::cout << ", " << rl.low.p_W.z() - *rl.ground << " m above the ground (top at z = " << *rl.ground << " m)";
      else
        std::cout << ", no ground below it";
      std::cout << "\n";
    }
  }
  if (!scene.actuators.empty()) {
    std::cout << "\nactuators (" << scene.actuators.size() << "):\n";
    for (const io::Actuator& a : scene.actuators)
      std::cout << "  " << a.joint << ": kp " << a.kp << ", kd " << a.kd << ", target " << a.q_target
                << ", effort limit " << a.effort_limit << "\n";
  }
  if (!scene.springs.empty()) {
    std::cout << "\nsprings (" << scene.springs.size() << "):\n";
    for (const io::JointSpring& s : scene.springs)
      std::cout << "  " << s.joint << ": stiffness " << s.stiffness << ", damping " << s.damping << ", rest "
                << s.rest_position << "\n";
  }
  if (!scene.constraints.empty()) {
    std::cout << "\nconstraints (" << scene.constraints.size() << "):\n";
    for (size_t i = 0; i < scene.constraints.size(); ++i) {
      const scene::BilateralConstraint& c = scene.constraints[i];
      std::cout << "  " << c.name << ": " << scene::to_string(c.type) << " (" << scene::num_rows(c.type) << " rows) "
                << model.body(c.body_a).name << " -> " << model.body(c.body_b).name << ", "
                << (std::isfinite(c.stiffness) ? "stiffness " + std::to_string(c.stiffness) : std::string("rigid"))
                << ", |g(q0)| " << constraint_values[i].norm() << "\n";
    }
  }
  std::cout << "\ngeometries: " << geometries.size() << "\n";
  // Convex hulls of mesh files (geometry/mesh_loader.h): their size and where they came from.
  for (const geometry::Geometry& g : geometries)
    if (g.shape.type == geometry::ShapeType::kConvexMesh && !g.shape.mesh_file.empty())
      std::cout << "  " << g.name << ": convex hull, " << g.shape.vertices.size() << " vertices, "
                << g.shape.triangles.size() << " faces, of " << g.shape.mesh_file << "\n";
  // Static (non-convex) meshes: their triangles as given.
  for (const geometry::Geometry& g : geometries)
    if (g.shape.type == geometry::ShapeType::kMesh)
      std::cout << "  " << g.name << ": static mesh, " << g.shape.vertices.size() << " vertices, "
                << g.shape.triangles.size() << " triangles"
                << (g.shape.mesh_file.empty() ? std::string() : ", of " + g.shape.mesh_file) << "\n";
  std::cout << "\ncontacts at the initial state: " << contacts.size() << "\n";
  for (const contact::Contact& c : contacts.contacts) {
    std::cout << "  " << geometries[c.geometry_a].name << " (" << model.body(c.body_a).name << ") -> "
              << geometries[c.geometry_b].name << " (" << model.body(c.body_b).name << ")\n"
              << "      point " << vec3(c.p_W) << "  normal " << vec3(c.n_W) << "  phi " << c.phi << " m  mu "
              << c.material.mu << "\n";
  }
  return 0;
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect", "Load a scene file and print its model (trees, bodies, DOFs, masses) and the contacts at its "
                 "initial state (pairs, points, normals, signed distances).");
  sub->add_option("SCENE", opt->scene_path,
                  "Scene file (YAML, docs/scene-format.md), or a model file (MJCF, URDF) as `coulomb simulate` runs "
                  "it; model paths resolve against its directory, then COULOMB_MODEL_PATH")
      ->required();
  sub->add_flag("--json", opt->json,
                "Print one JSON object: num_dofs, bodies [{name, mass, ...}], contacts [{body_a, body_b, point, "
                "normal, distance, ...}], trees, robots, actuators, geometries, ... (docs/scene-format.md)");
  sub->footer(kFooter);
  return Command{sub, [opt]() { return run_inspect(*opt); }};
}

}  // namespace coulomb::cli
