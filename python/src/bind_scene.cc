// Scene (what is simulated): loading, the settings a run varies, and its contents.
#include <nanobind/eigen/dense.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "common.h"
#include "coulomb/io/scene_loader.h"

namespace coulomb::python {

namespace {

std::string format(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

void check_positive(const char* what, double x) {
  if (!(std::isfinite(x) && x > 0.0))
    throw std::invalid_argument(std::string(what) + " must be a finite number > 0, got " + format(x));
}
void check_non_negative(const char* what, double x) {
  if (!(std::isfinite(x) && x >= 0.0))
    throw std::invalid_argument(std::string(what) + " must be a finite number ≥ 0, got " + format(x));
}

}  // namespace

simulation::SimulatorParameters parameters_from_scene(const scene::Scene& scene) {
  // As `coulomb simulate` does without options (apps/coulomb/simulate_command.cc).
  simulation::SimulatorParameters params;
  params.solver = simulation::parse_solver(scene.solver);
  params.lstable.friction = solvers::lstable::parse_friction_model(scene.lstable_friction);
  params.time_step = scene.time_step;
  params.integrator = simulation::parse_integrator(scene.integrator);
  return params;
}

void bind_scene(nb::module_& m) {
  using scene::Scene;
  nb::class_<contact::ContactDefaults>(m, "ContactDefaults",
                                       "The scene's contact parameters for every pair (a geometry's own `contact:` "
                                       "values override them, docs/contact.md).")
      .def_prop_rw(
          "mu", [](const contact::ContactDefaults& c) { return c.mu; },
          [](contact::ContactDefaults& c, double x) {
            check_non_negative("contact.mu", x);
            c.mu = x;
          },
          "Coulomb friction coefficient ≥ 0.")
      .def_prop_rw(
          "stiffness", [](const contact::ContactDefaults& c) { return c.stiffness; },
          [](contact::ContactDefaults& c, double x) {
            check_positive("contact.stiffness", x);
            c.stiffness = x;
          },
          "Contact stiffness k [N/m] > 0.")
      .def_prop_rw(
          "dissipation_time", [](const contact::ContactDefaults& c) { return c.dissipation_time; },
          [](contact::ContactDefaults& c, double x) {
            check_non_negative("contact.dissipation_time", x);
            c.dissipation_time = x;
          },
          "SAP dissipation time scale τ_d [s] ≥ 0 (contact approximation 'sap').")
      .def_prop_rw(
          "hunt_crossley_dissipation", [](const contact::ContactDefaults& c) { return c.hunt_crossley_dissipation; },
          [](contact::ContactDefaults& c, double x) {
            check_non_negative("contact.hunt_crossley_dissipation", x);
            c.hunt_crossley_dissipation = x;
          },
          "Hunt–Crossley dissipation d [s/m] ≥ 0 (approximations 'similar', 'lagged').")
      .def_prop_rw(
          "stiction_tolerance", [](const contact::ContactDefaults& c) { return c.stiction_tolerance; },
          [](contact::ContactDefaults& c, double x) {
            check_positive("contact.stiction_tolerance", x);
            c.stiction_tolerance = x;
          },
          "Regularized-friction stiction speed v_s [m/s] > 0 ('similar', 'lagged').")
      .def_prop_rw(
          "approximation",
          [](const contact::ContactDefaults& c) { return std::string(contact::to_string(c.approximation)); },
          [](contact::ContactDefaults& c, const std::string& name) {
            c.approximation = contact::parse_contact_approximation(name);
          },
          "Discrete contact model: 'sap', 'similar' or 'lagged'.");

  nb::class_<scene::Actuator>(m, "Actuator", "A PD actuator on a 1-dof joint (scene `actuators`).")
      .def_ro("joint", &scene::Actuator::joint)
      .def_ro("q_index", &scene::Actuator::q_index)
      .def_ro("v_index", &scene::Actuator::v_index)
      .def_ro("kp", &scene::Actuator::kp, "[N·m/rad or N/m]")
      .def_ro("kd", &scene::Actuator::kd, "[N·m·s/rad or N·s/m]")
      .def_ro("q_target", &scene::Actuator::q_target, "[rad or m]")
      .def_ro("v_target", &scene::Actuator::v_target, "[rad/s or m/s]")
      .def_ro("effort_limit", &scene::Actuator::effort_limit, "[N·m or N]");

  nb::class_<Scene>(m, "Scene", nb::dynamic_attr(),
                    "A scene: the Model (every robot and body), collision geometry, initial state, actuators and "
                    "settings. Made by load_scene; a Simulator copies it, so changing a Scene never changes a "
                    "running Simulator.")
      .def(nb::init<const Scene&>(), "other"_a, "A copy.")
      .def_ro("source", &Scene::source, "The file the scene came from (or the name given for YAML text).")
      .def_ro("description", &Scene::description)
      .def_prop_rw(
          "time_step", [](const Scene& s) { return s.time_step; },
          [](Scene& s, double x) {
            check_positive("time_step", x);
            s.time_step = x;
          },
          "δt [s] > 0.")
      .def_prop_rw(
          "duration", [](const Scene& s) { return s.duration; },
          [](Scene& s, double x) {
            check_positive("duration", x);
            s.duration = x;
          },
          "[s] > 0.")
      .def_prop_rw(
          "solver", [](const Scene& s) { return s.solver; },
          [](Scene& s, const std::string& name) {
            simulation::parse_solver(name);
            s.solver = name;
          },
          "'sap' or 'lstable'.")
      .def_prop_rw(
          "integrator", [](const Scene& s) { return s.integrator; },
          [](Scene& s, const std::string& name) {
            simulation::parse_integrator(name);
            s.integrator = name;
          },
          "'implicit-euler', 'symplectic-euler' or 'midpoint'.")
      .def_prop_rw(
          "contact", [](Scene& s) -> contact::ContactDefaults& { return s.contact; },
          [](Scene& s, const contact::ContactDefaults& c) { s.contact = c; }, nb::rv_policy::reference_internal,
          "Contact parameters of every pair (ContactDefaults, changed in place).")
      .def_prop_ro(
          "model", [](Scene& s) -> const multibody::Model& { return s.model; }, nb::rv_policy::reference_internal,
          "The Model of the whole scene (kept alive by the scene).")
      .def_prop_rw(
          "q0", [](const Scene& s) { return s.q0; },
          [](Scene& s, nb::handle object) {
            const Eigen::VectorXd q = to_vector(object, "q0");
            s.model.check_configuration(q);
            s.q0 = q;
          },
          "Initial configuration, shape (nq,) (a copy; assign a new array to change it).")
      .def_prop_rw(
          "v0", [](const Scene& s) { return s.v0; },
          [](Scene& s, nb::handle object) {
            const Eigen::VectorXd v = to_vector(object, "v0");
            s.model.check_velocity(v, "v0");
            s.v0 = v;
          },
          "Initial velocities, shape (nv,) [rad/s, m/s; floating joints: ω then v of the origin, world frame].")
      .def_ro("actuators", &Scene::actuators, "The PD actuators, in the order of their velocity index.")
      .def_prop_ro(
          "actuator_joints",
          [](const Scene& s) {
            std::vector<std::string> names;
            for (const scene::Actuator& a : s.actuators) names.push_back(a.joint);
            return names;
          },
          "Joint names of the actuators, in actuator order.")
      .def_prop_ro(
          "geometry_names",
          [](const Scene& s) {
            std::vector<std::string> names;
            for (const geometry::Geometry& g : s.geometries) names.push_back(g.name);
            return names;
          },
          "Collision geometry names, index = geometry index (ContactResult.geometry_a/b).")
      .def_ro("warnings", &Scene::warnings)
      .def_ro("notes", &Scene::notes)
      .def(
          "scale_body_mass",
          [](Scene& s, const std::string& body, double factor) { s.model.scale_body_inertia(s.model.body_index(body), factor); },
          "body"_a, "factor"_a,
          "Scales the mass and rotational inertia of a body (by name) by `factor` > 0, its centre of mass "
          "unchanged (a uniform change of density).")
      .def(
          "set_body_mass",
          [](Scene& s, const std::string& body, double mass) {
            const int b = s.model.body_index(body);
            check_positive("mass", mass);
            const double old = s.model.body(b).inertia.mass;
            if (!(old > 0.0))
              throw std::invalid_argument("set_body_mass: body '" + body + "' has no mass to scale");
            s.model.scale_body_inertia(b, mass / old);
          },
          "body"_a, "mass"_a,
          "Sets the mass of a body (by name) [kg] > 0, scaling its rotational inertia with it (centre of mass "
          "unchanged).")
      .def("__repr__", [](const Scene& s) {
        return "<coulomb.Scene '" + s.source + "': nq=" + std::to_string(s.model.nq()) +
               ", nv=" + std::to_string(s.model.nv()) + ", " + std::to_string(s.actuators.size()) +
               " actuators, time_step=" + format(s.time_step) + ">";
      });

  m.def(
      "_load_scene_file", [](const std::string& path) { return io::load_scene(path); }, "path"_a,
      "Loads a scene file (YAML). Raises SceneError naming the file, line, key and value.");
  m.def(
      "_parse_scene",
      [](const std::string& yaml, const std::string& source_name, const std::string& base_directory) {
        return io::parse_scene(yaml, source_name, base_directory);
      },
      "yaml"_a, "source_name"_a = "<string>", "base_directory"_a = ".",
      "Loads a scene from YAML text; relative model paths are resolved against base_directory.");
}

}  // namespace coulomb::python
