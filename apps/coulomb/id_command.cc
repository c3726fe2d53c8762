// `coulomb id`: inverse dynamics with rigid contact and friction at one state (Zapolsky &
// Drumwright, "Inverse Dynamics with Rigid Contact and Friction"; include/coulomb/inverse_dynamics).
//
// The positional argument is a URDF model (with a ground half-space added here) or a scene
// file (by its extension, .yaml / .yml). The contacts at q come from a CollisionWorld of the
// model's collision geometry, as in `coulomb inspect`; inverse_dynamics::InverseDynamics then
// computes, for one control period dt, the actuator torques that give the actuated coordinates
// the desired accelerations together with the contact impulses, the velocity at the end of the
// period and the solver's figures. Printed as text or, with --json, as one object:
//   {"formulation", "status", "message", "time_step", "dof_names", "actuated", "tau", "v_next",
//    "contacts": [{"body_a", "body_b", "p_W", "n_W", "phi", "impulse", "force_W", "active", ...}],
//    "stats": {every IdStats field}, ...}
// Exit status: 0 solved, 3 inconsistent (lcp-noslip: the desired motion is not reachable; the
// closest feasible one is reported), 1 infeasible / not converged / numerical error (after the
// output) and every other error, 2 usage errors.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/geometry/shape.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"
#include "state_options.h"

namespace coulomb::cli {

namespace {

namespace id = inverse_dynamics;

constexpr const char* kFooter = R"(Formulations (Zapolsky & Drumwright, "Inverse Dynamics with Rigid Contact and Friction"):
  qp-coulomb   ID_QP,mu (Sec. 6, the default): convex two-stage QP. Stage I minimizes the
               kinetic energy after the step over the contact impulses (non-penetration,
               friction polygon, no complementarity); Stage II minimizes |tau|^2 among
               Stage I's optima (skipped with --one-stage).
  qp-noslip    ID_QP,inf (Sec. 6): the same QP without the friction bound (no slip).
  lcp-coulomb  ID_LCP,mu (Sec. 5): Coulomb friction on a k-edge polygon (--friction-edges),
               a copositive LCP solved by Lemke; --mindiff enumerates the LCP's solutions
               (Alg. 3, small problems only).
  lcp-noslip   ID_LCP,inf (Sec. 4): no-slip contacts, an LCP solved by the modified PPM (Alg.
               2); a desired motion that is not reachable is replaced by the closest feasible
               one (status inconsistent, exit 3).

Problem: over one control period dt the actuated coordinates reach
  v+ = v + dt * qdd_des; the contact impulses keep every contact from penetrating
  (normal velocity + phi/dt >= 0) and, for the *-coulomb formulations, inside the friction
  polygon; the unactuated coordinates (a floating base) move as the impulses and gravity make
  them. Contacts come from the model's collision geometry at q (pairs closer than
  --max-distance); a URDF gets a ground half-space (top at --ground-height, friction --mu).
  Actuated: in a URDF every 1-dof joint; in a scene its actuators (every 1-dof joint if it
  declares none). Scene springs and URDF joint damping are included as known forces.

Units and conventions: SI. tau [N*m for revolute joints, N for prismatic], contact impulses
  [N*s], mean contact force = impulse / dt [N], v+ [rad/s, m/s], phi [m] (< 0: overlap).
  Contact i joins body A and body B (a URDF's ground is A); its normal n_W points from A
  into B; its frame is (t1, t2, n_W), right-handed; the impulse is the one B receives (A
  receives its opposite): impulse = (t1, t2, n) components, force_W = (t1 t1_W + t2 t2_W +
  n n_W) / dt in the world frame. A floating base's v is [wx, wy, wz, vx, vy, vz], world frame (see coulomb dynamics
  --help).

Defaults: --formulation qp-coulomb, --q and --v the neutral configuration and zero (a scene:
  its initial state), --qdd-des zeros, --dt 0.001 s (a scene: its time_step), --mu 1.0 (a
  scene: its materials), --friction-edges 4, --max-distance 0.002 m, --ground-height 0 m.

Exit status: 0 solved; 3 inconsistent (lcp-noslip: the desired motion is not reachable; a
  warning gives the tracking residual and the closest feasible motion is printed); 1 error:
  unreadable model or scene, wrong vector sizes, and an infeasible, unconverged or failed
  solve ("inverse dynamics infeasible: ..."; the output, --json included, is printed first);
  2 usage error (unknown formulation, --dt <= 0, --mu < 0, --friction-edges outside 3 … 64, ...).

Examples (from the repository root):
  build/bin/coulomb id ../shared/models/a1.urdf --floating --q 0,0,0.31231,1,0,0,0,0,0.8,-1.5,0,0.8,-1.5,0,0.8,-1.5,0,0.8,-1.5 --dt 0.001 --json
  build/bin/coulomb id examples/scenes/a1_stand.yaml --formulation lcp-noslip)";

struct IdOptions {
  std::string model_path;
  bool floating = false;
  std::string q, v, qdd_des;
  CLI::Option* q_opt = nullptr;
  CLI::Option* v_opt = nullptr;
  CLI::Option* qdd_opt = nullptr;
  CLI::Option* floating_opt = nullptr;
  std::optional<double> dt;
  std::optional<double> mu;
  std::string formulation = "qp-coulomb";
  int friction_edges = 4;
  bool one_stage = false;
  bool mindiff = false;
  double max_distance = 2e-3;
  std::optional<double> ground_height;
  bool no_ground = false;
  bool json = false;
};

bool is_scene_file(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    if (path.size() < suffix.size()) return false;
    std::string tail = path.substr(path.size() - suffix.size());
    std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
    return tail == suffix;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

/// The robot's collision geometry from its URDF <collision> primitives (as the scene loader
/// does for scene robots: robot 0, no self-collision); meshes are skipped with a warning.
std::vector<geometry::Geometry> urdf_geometries(const io::UrdfModel& urdf, const std::string& path,
                                                std::vector<std::string>& warnings) {
  const multibody::Model& model = urdf.model;
  std::vector<geometry::Geometry> out;
  std::map<std::string, int> per_link;
  for (const io::UrdfCollision& uc : urdf.collisions) {
    const int k = per_link[uc.link]++;
    const std::string label = uc.link + "/" + (uc.name.empty() ? "collision" + std::to_string(k) : uc.name);
    geometry::Geometry g;
    switch (uc.type) {
      case io::UrdfCollision::Type::kSphere:
        g.shape = geometry::Shape::Sphere(uc.radius);
        break;
      case io::UrdfCollision::Type::kBox:
        g.shape = geometry::Shape::Box(uc.size);
        break;
      case io::UrdfCollision::Type::kCylinder:
        g.shape = geometry::Shape::Cylinder(uc.radius, uc.length);
        break;
      case io::UrdfCollision::Type::kMesh:
        warnings.push_back(path + ": collision '" + label + "' is a mesh ('" + uc.mesh_filename +
                           "'); meshes are not supported as collision geometry yet, skipped");
        continue;
      case io::UrdfCollision::Type::kCapsule:  // SDF only; a URDF has none
        g.shape = geometry::Shape::Capsule(uc.radius, uc.length);
        break;
      case io::UrdfCollision::Type::kPlane:
        g.shape = geometry::Shape::HalfSpace();
        break;
    }
    try {
      g.shape.validate(label);
    } catch (const std::invalid_argument&) {
      warnings.push_back(path + ": collision '" + label + "' has a zero dimension, skipped");
      continue;
    }
    const multibody::Frame& frame = model.frame(model.frame_index(uc.link));
    g.name = label;
    for (int n = 2; std::any_of(out.begin(), out.end(), [&](const geometry::Geometry& o) { return o.name == g.name; }); ++n)
      g.name = label + "#" + std::to_string(n);
    g.body = frame.body;
    g.X_BG = frame.X_BF * uc.X_LG;
    g.robot = 0;
    g.self_collision = false;
    out.push_back(std::move(g));
  }
  return out;
}

/// Infinity as the string "inf" (as `coulomb inspect --json`), finite numbers as they are.
nlohmann::ordered_json json_number(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

std::vector<double> to_std3(const math::Vector3& x) { return {x.x(), x.y(), x.z()}; }

std::string vec3(const math::Vector3& x, int precision = 6) {
  std::ostringstream os;
  os << std::setprecision(precision) << "(" << x.x() + 0.0 << ", " << x.y() + 0.0 << ", " << x.z() + 0.0 << ")";
  return os.str();
}

const char* formulation_title(id::Formulation f) {
  switch (f) {
    case id::Formulation::kLcpNoSlip:
      return "ID_LCP,inf: no-slip LCP (Sec. 4)";
    case id::Formulation::kLcpCoulomb:
      return "ID_LCP,mu: Coulomb-friction LCP (Sec. 5)";
    case id::Formulation::kQpCoulomb:
      return "ID_QP,mu: convex two-stage QP with Coulomb friction (Sec. 6)";
    case id::Formulation::kQpNoSlip:
      return "ID_QP,inf: convex two-stage QP, no slip (Sec. 6)";
  }
  return "";
}

void check_options(const IdOptions& o) {
  if (o.dt && !(*o.dt > 0.0 && std::isfinite(*o.dt)))
    throw UsageError("--dt must be a finite number > 0 s, got " + util::format_number(*o.dt));
  if (o.mu && !(*o.mu >= 0.0 && std::isfinite(*o.mu)))
    throw UsageError("--mu must be a finite number >= 0, got " + util::format_number(*o.mu));
  // Above 64 edges the polygon is within 0.12 % of the cone; a huge count (1e8) exhausted
  // memory and crashed the process (option audit, issue 18).
  if (o.friction_edges < 3 || o.friction_edges > 64)
    throw UsageError("--friction-edges must be in 3 … 64, got " + std::to_string(o.friction_edges));
  if (!(o.max_distance >= 0.0 && std::isfinite(o.max_distance)))
    throw UsageError("--max-distance must be a finite number >= 0 m, got " + util::format_number(o.max_distance));
  if (o.ground_height && !(std::abs(*o.ground_height) <= geometry::kMaxShapeDimension))  // a scene position's range
    throw UsageError("--ground-height must be a number in [-1e6, 1e6] m, got " + util::format_number(*o.ground_height));
  if (o.ground_height && o.no_ground) throw UsageError("--ground-height and --no-ground exclude each other");
}

int run_id(const IdOptions& o) {
  check_options(o);
  id::IdParameters params;
  try {
    params.formulation = id::parse_formulation(o.formulation);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--formulation: ") + e.what());
  }
  const bool qp = params.formulation == id::Formulation::kQpCoulomb || params.formulation == id::Formulation::kQpNoSlip;
  if (o.one_stage && !qp) throw UsageError("--one-stage applies to --formulation qp-coulomb or qp-noslip");
  if (o.mindiff && params.formulation != id::Formulation::kLcpCoulomb)
    throw UsageError("--mindiff applies to --formulation lcp-coulomb");
  params.friction_edges = o.friction_edges;
  params.stage_two = !o.one_stage;
  params.mindiff = o.mindiff;
  params.max_distance = o.max_distance;
  const bool scene_mode = is_scene_file(o.model_path);
  if (scene_mode && o.floating_opt->count() > 0)
    throw UsageError("--floating applies to a URDF model; a scene says which robots float");
  if (scene_mode && (o.ground_height || o.no_ground))
    throw UsageError(std::string(o.no_ground ? "--no-ground" : "--ground-height") +
                     " applies to a URDF model; a scene has its own ground");

  // The model, its geometry, the default state, the actuated coordinates.
  std::optional<io::Scene> scene;
  std::optional<io::UrdfModel> urdf;
  std::vector<geometry::Geometry> geometries;
  contact::ContactDefaults contact_defaults;
  geometry::CollisionOptions collision;
  std::vector<int> actuated;
  std::vector<std::string> warnings, notes;
  double dt = o.dt.value_or(1e-3);
  if (scene_mode) {
    scene = io::load_scene(o.model_path);
    warnings = scene->warnings;
    notes = scene->notes;
    geometries = scene->geometries;
    contact_defaults = scene->contact;
    collision = scene->collision;
    actuated = id::actuated_dofs(*scene);
    if (!o.dt) dt = scene->time_step;
    const size_t ignored = scene->constraints.size() + scene->couplers.size() + scene->joint_frictions.size();
    if (ignored > 0)
      warnings.push_back(o.model_path + ": the scene's bilateral constraints (" + std::to_string(scene->constraints.size()) +
                         "), couplers (" + std::to_string(scene->couplers.size()) + ") and joint friction (" +
                         std::to_string(scene->joint_frictions.size()) +
                         ") are not part of the inverse-dynamics problem; ignored");
  } else {
    io::UrdfOptions urdf_options;
    urdf_options.floating = o.floating;
    urdf = io::load_urdf(o.model_path, urdf_options);
    warnings = urdf->warnings;
    notes = urdf->notes;
    geometries = urdf_geometries(*urdf, o.model_path, warnings);
    if (!o.no_ground) {
      geometry::Geometry ground;
      ground.name = "ground";
      ground.body = 0;
      ground.shape = geometry::Shape::HalfSpace();
      ground.X_BG = math::Transform::Identity();
      ground.X_BG.p.z() = o.ground_height.value_or(0.0);
      // First, so that it is body A of its contacts (normal +z, up; impulses on the robot).
      geometries.insert(geometries.begin(), std::move(ground));
    }
    if (o.mu) contact_defaults.mu = *o.mu;
    actuated = id::joint_dofs(urdf->model);
  }
  print_warnings_and_notes(warnings, notes);
  const multibody::Model& model = scene ? scene->model : urdf->model;
  // Contacts up to --max-distance must be found to be considered.
  collision.margin = std::max(collision.margin, o.max_distance);

  // The state.
  const std::vector<std::string>& dof_names = model.dof_names();
  std::vector<std::string> actuated_names;
  for (int i : actuated) actuated_names.push_back(dof_names[i]);
  const Eigen::VectorXd q = state_vector(o.q_opt, o.q, "--q", scene ? scene->q0 : model.neutral_configuration(),
                                         "configuration coordinates (nq)", model.position_names());
  const Eigen::VectorXd v = state_vector(o.v_opt, o.v, "--v", scene ? scene->v0 : Eigen::VectorXd::Zero(model.nv()),
                                         "velocity coordinates (nv)", dof_names);
  const Eigen::VectorXd qdd_des =
      state_vector(o.qdd_opt, o.qdd_des, "--qdd-des", Eigen::VectorXd::Zero(static_cast<Eigen::Index>(actuated.size())),
                   "actuated coordinates", actuated_names);
  check_configuration(model, q, "--q");
  model.check_velocity(v, "--v");

  // Contacts at q.
  multibody::Workspace ws(model);
  multibody::forward_kinematics(model, ws, q);
  geometry::CollisionWorld world(model, std::move(geometries), collision);
  world.update_poses(ws);
  contact::ContactSet contacts;
  contact::gather_contacts(world, contact_defaults, contacts);
  if (scene && o.mu)
    for (contact::Contact& c : contacts.contacts) c.material.mu = *o.mu;

  // Solve.
  id::InverseDynamics solver(model, actuated, params);
  if (scene && !scene->springs.empty()) {
    Eigen::VectorXd f = Eigen::VectorXd::Zero(model.nv());
    for (const io::JointSpring& s : scene->springs)
      f[s.v_index] += -s.stiffness * (q[s.q_index] - s.rest_position) - s.damping * v[s.v_index];
    solver.set_external_forces(f);
  }
  const id::IdResults& r = solver.solve(q, v, qdd_des, dt, contacts);
  const id::IdStats& st = r.stats;
  // The solver's message may start with the status ("infeasible: contact 0 ..."): say it once.
  std::string message = r.message;
  const std::string prefix = std::string(id::to_string(r.status)) + ": ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  const std::vector<DofInfo> info = dof_info(model);
  const std::vector<geometry::Geometry>& geoms = world.geometries();

  auto contact_impulse = [&](int i) { return math::Vector3(r.contact_impulses.segment<3>(3 * i)); };
  auto within = [&](int i) { return contacts.contacts[i].phi <= params.max_distance; };
  auto active = [&](int i) { return within(i) && r.contact_impulses[3 * i + 2] > 0.0; };

  check_finite_result(r.tau, "tau", actuated_names, "--q, --v, --qdd-des");
  check_finite_result(r.v_next, "v_next", dof_names, "--q, --v, --qdd-des");
  if (o.json) {
    nlohmann::ordered_json out;
    out["formulation"] = id::to_string(params.formulation);
    out["status"] = id::to_string(r.status);
    out["message"] = r.message;
    out["time_step"] = dt;
    out["model"] = model.name();
    out["file"] = o.model_path;
    out["dof_names"] = dof_names;
    out["position_names"] = model.position_names();
    out["q"] = to_std(q);
    out["v"] = to_std(v);
    out["actuated"] = actuated_names;
    out["qdd_des"] = to_std(qdd_des);
    out["tau"] = to_std(r.tau);
    out["v_next"] = to_std(r.v_next);
    out["max_distance"] = params.max_distance;
    out["friction_edges"] = params.friction_edges;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (int i = 0; i < contacts.size(); ++i) {
      const contact::Contact& c = contacts.contacts[i];
      const math::Vector3 impulse = contact_impulse(i);
      const math::Vector3 force_W = c.R_WC * impulse / dt;
      nlohmann::ordered_json entry{{"body_a", model.body(c.body_a).name},
                                   {"body_b", model.body(c.body_b).name},
                                   {"geometry_a", geoms[c.geometry_a].name},
                                   {"geometry_b", geoms[c.geometry_b].name},
                                   {"p_W", to_std3(c.p_W)},
                                   {"n_W", to_std3(c.n_W)},
                                   {"phi", c.phi},
                                   {"mu", c.material.mu},
                                   {"impulse", to_std3(impulse)},
                                   {"force_W", to_std3(force_W)},
                                   {"active", active(i)},
                                   {"within_max_distance", within(i)}};
      if (r.sliding_speed.size() == contacts.size()) entry["sliding_speed"] = r.sliding_speed[i];
      list.push_back(entry);
    }
    out["contacts"] = list;
    out["stats"] = {{"contacts", st.contacts},
                    {"unactuated", st.unactuated},
                    {"lcp_size", st.lcp_size},
                    {"solver_iterations", st.solver_iterations},
                    {"stage_two_iterations", st.stage_two_iterations},
                    {"stage_two_dimension", st.stage_two_dimension},
                    {"kept_tangent_rows", st.kept_tangent_rows},
                    {"warm_started", st.warm_started},
                    {"used_fallback", st.used_fallback},
                    {"used_mindiff", st.used_mindiff},
                    {"mindiff_leaves", st.mindiff_leaves},
                    {"tracking_residual", st.tracking_residual},
                    {"dynamics_residual", st.dynamics_residual},
                    {"min_normal_velocity", json_number(st.min_normal_velocity)},
                    {"complementarity_residual", st.complementarity_residual},
                    {"slip_residual", st.slip_residual},
                    {"kinetic_energy", st.kinetic_energy},
                    {"solve_time", st.solve_time}};
    out["warnings"] = warnings;
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << std::setprecision(6);
    std::cout << "formulation  " << id::to_string(params.formulation) << "  (" << formulation_title(params.formulation)
              << (qp && o.one_stage ? ", one stage" : "") << ")\n"
              << "model        " << model.name() << "  (" << o.model_path << "), nq = " << model.nq()
              << ", nv = " << model.nv() << ", " << actuated.size() << " actuated, " << st.unactuated
              << " unactuated\n"
              << "time step    " << dt << " s\n"
              << "status       " << id::to_string(r.status) << (message.empty() ? "" : ": " + message) << "\n\n";

    size_t width = 5;
    for (const std::string& n : dof_names) width = std::max(width, n.size());
    const int w = static_cast<int>(width);
    std::cout << "actuated joint torques:\n";
    for (size_t k = 0; k < actuated.size(); ++k) {
      const int i = actuated[k];
      std::cout << "  " << std::left << std::setw(w) << dof_names[i] << std::right << std::setw(16) << r.tau[k] << "  "
                << (std::string(info[i].unit) == "m" ? "N" : "N*m") << "   (qdd_des " << qdd_des[k] << ")\n";
    }

    int n_active = 0, n_within = 0;
    for (int i = 0; i < contacts.size(); ++i) {
      n_active += active(i);
      n_within += within(i);
    }
    std::cout << "\ncontacts: " << contacts.size() << " (" << n_within << " within --max-distance " << params.max_distance
              << " m, " << n_active << " pushing); impulse that body B receives, normal from A into B\n";
    for (int i = 0; i < contacts.size(); ++i) {
      const contact::Contact& c = contacts.contacts[i];
      const math::Vector3 impulse = contact_impulse(i);
      std::cout << "  " << i << ": " << model.body(c.body_a).name << " -> " << model.body(c.body_b).name << "  ("
                << geoms[c.geometry_a].name << " -> " << geoms[c.geometry_b].name << ")"
                << (within(i) ? "" : "  [left out: phi > max distance]") << "\n"
                << "      point " << vec3(c.p_W) << " m  normal " << vec3(c.n_W) << "  phi " << c.phi << " m  mu "
                << c.material.mu << "\n"
                << "      impulse (t1, t2, n) " << vec3(impulse) << " N*s  mean force (t1, t2, n) " << vec3(impulse / dt)
                << " N, world " << vec3(c.R_WC * impulse / dt) << " N\n";
    }

    std::cout << "\nv+ (velocity at the end of the step):\n";
    for (int i = 0; i < model.nv(); ++i)
      std::cout << "  " << std::left << std::setw(w) << dof_names[i] << std::right << std::setw(16) << r.v_next[i]
                << "  " << info[i].unit << "/s\n";

    std::cout << "\nstats:\n"
              << "  contacts " << st.contacts << ", unactuated " << st.unactuated << ", LCP size " << st.lcp_size
              << ", solver iterations " << st.solver_iterations << ", Stage II iterations " << st.stage_two_iterations
              << " (dimension " << st.stage_two_dimension << ")\n"
              << "  kept tangent rows " << st.kept_tangent_rows << ", warm started " << (st.warm_started ? "yes" : "no")
              << ", fallback " << (st.used_fallback ? "yes" : "no") << ", MINDIFF "
              << (st.used_mindiff ? "yes (" + std::to_string(st.mindiff_leaves) + " leaves)" : std::string("no"))
              << "\n"
              << "  residuals: tracking " << st.tracking_residual << " (rad/s or m/s), dynamics " << st.dynamics_residual
              << " N*s, complementarity " << st.complementarity_residual << ", slip " << st.slip_residual << " m/s\n"
              << "  min normal velocity + phi/dt " << st.min_normal_velocity << " m/s, kinetic energy "
              << st.kinetic_energy << " J, solve time " << st.solve_time * 1e3 << " ms\n";
  }

  switch (r.status) {
    case id::IdStatus::kSolved:
      return 0;
    case id::IdStatus::kInconsistent:
      std::cerr << "coulomb: warning: the desired motion is not reachable with no-slip contact (status "
                   "inconsistent): v+ is the closest feasible motion, tracking residual |P v+ - qdot_des|inf = "
                << st.tracking_residual << " (rad/s or m/s)" << (message.empty() ? "" : "; " + message)
                << "; exit status 3\n";
      return 3;
    case id::IdStatus::kInfeasible:
      throw std::runtime_error("inverse dynamics infeasible: " + message);
    case id::IdStatus::kNotConverged:
      throw std::runtime_error("inverse dynamics did not converge: " + message);
    case id::IdStatus::kNumericalError:
      break;
  }
  throw std::runtime_error("inverse dynamics failed (numerical error): " + message);
}

}  // namespace

Command add_id_command(CLI::App& app) {
  auto opt = std::make_shared<IdOptions>();
  CLI::App* sub = app.add_subcommand(
      "id",
      "Inverse dynamics with rigid contact and friction (Zapolsky & Drumwright) at one state: the actuator "
      "torques and contact impulses that give the actuated joints the desired accelerations over one control "
      "period, with the velocity after it and the solver's figures.");
  sub->add_option("MODEL", opt->model_path,
                  "URDF model (a ground half-space is added) or scene file (.yaml/.yml: its geometry, "
                  "actuators and initial state)")
      ->required();
  opt->floating_opt = sub->add_flag("--floating", opt->floating,
                                    "URDF: attach the root link with a floating joint 'root_joint' (nq += 7, "
                                    "nv += 6, unactuated) instead of welding it");
  opt->q_opt = sub->add_option("--q", opt->q,
                               "Configuration: nq comma-separated values in position_names order (as coulomb "
                               "dynamics). Default: neutral configuration (a scene: its initial state)");
  opt->v_opt = sub->add_option("--v", opt->v,
                               "Velocity before the step: nv comma-separated values in dof_names order. Default: "
                               "zeros (a scene: its initial velocities)");
  opt->qdd_opt = sub->add_option("--qdd-des", opt->qdd_des,
                                 "Desired accelerations of the actuated coordinates [rad/s^2 or m/s^2], one per "
                                 "actuated coordinate in dof order. Default: zeros");
  sub->add_option("--dt", opt->dt, "Control period dt [s] > 0 (default 0.001; a scene: its time_step)");
  sub->add_option("--mu", opt->mu,
                  "Friction coefficient >= 0 of every contact (default 1.0; a scene: its materials, overridden "
                  "when given)");
  sub->add_option("--formulation", opt->formulation, "lcp-noslip | lcp-coulomb | qp-coulomb | qp-noslip")
      ->capture_default_str();
  sub->add_option("--friction-edges", opt->friction_edges,
                  "Edges k (3 … 64) of the friction polygon inscribed in the Coulomb cone (*-coulomb)")
      ->capture_default_str();
  sub->add_flag("--one-stage", opt->one_stage, "QP formulations: skip Stage II (torque minimization)");
  sub->add_flag("--mindiff", opt->mindiff,
                "lcp-coulomb: pick the LCP solution by enumeration (MINDIFF, Alg. 3) when (k + 2) n <= 12");
  sub->add_option("--max-distance", opt->max_distance,
                  "Contacts farther apart than this [m] are left out (>= 0; default: the 2 mm collision margin)")
      ->capture_default_str();
  sub->add_option("--ground-height", opt->ground_height,
                  "URDF: height z [m] of the top of the ground half-space (default 0)");
  sub->add_flag("--no-ground", opt->no_ground, "URDF: no ground half-space");
  sub->add_flag("--json", opt->json,
                "Print one JSON object: formulation, status, message, time_step, dof_names, actuated, tau, v_next, "
                "contacts [{body_a, body_b, p_W, n_W, phi, impulse, force_W, active (normal impulse > 0), ...}], stats");
  sub->footer(kFooter);
  return Command{sub, [opt]() { return run_id(*opt); }};
}

}  // namespace coulomb::cli
