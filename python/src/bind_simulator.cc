// Simulator: stepping (GIL released), state, run-time actuation, step results (contacts as packed
// records that coulomb/__init__.py views as a NumPy structured array), Python controllers.
#include <nanobind/eigen/dense.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <variant>

#include "common.h"

namespace coulomb::python {

namespace sim = coulomb::simulation;

namespace {

// Calls a Python object's update(state, results, commands) from Simulator::step() (which runs
// with the GIL released): takes the GIL for the call. `commands` is the simulator's own Commands,
// changed in place. Holds `target` strongly when `owning`; otherwise the Python Simulator object
// holds it (in its __dict__, where the garbage collector sees it: a controller that refers back
// to the simulator makes a cycle the collector can break).
class CallbackController final : public sim::Controller {
 public:
  CallbackController(nb::handle target, double time_step, bool owning)
      : target_(target), time_step_(time_step) {
    if (owning) owner_ = nb::borrow(target);
  }
  ~CallbackController() override {
    if (owner_.is_valid()) {
      nb::gil_scoped_acquire gil;
      owner_.reset();
    }
  }
  void update(const sim::State& state, const sim::StepResults& last_step, sim::Commands& commands) override {
    nb::gil_scoped_acquire gil;
    StateCopy s{state.time, state.q, state.v};
    StepResultsCopy r{last_step, time_step_};
    target_.attr("update")(s, r, nb::cast(&commands, nb::rv_policy::reference));
  }

 private:
  nb::handle target_;
  nb::object owner_;
  double time_step_;
};

}  // namespace

std::shared_ptr<sim::Controller> make_callback_controller(nb::object target, double time_step) {
  return std::make_shared<CallbackController>(target, time_step, true);
}

namespace {

int actuator_of(const sim::Simulator& s, const std::variant<int, std::string>& a) {
  if (const auto* name = std::get_if<std::string>(&a)) return s.actuator_index(*name);
  return std::get<int>(a);  // the simulator checks the range
}

int body_of(const sim::Simulator& s, const std::variant<int, std::string>& b) {
  if (const auto* name = std::get_if<std::string>(&b)) return s.model().body_index(*name);
  return std::get<int>(b);
}

// A writable view of one of Commands' vectors, kept valid by the Commands Python object.
nb::ndarray<nb::numpy, double> command_view(Eigen::VectorXd& x, nb::handle owner) {
  const size_t n = static_cast<size_t>(x.size());
  return nb::ndarray<nb::numpy, double>(x.data(), 1, &n, owner);
}

void assign_command(Eigen::VectorXd& x, nb::handle object, const char* what) {
  const Eigen::VectorXd value = to_vector(object, what);
  if (value.size() != x.size())
    throw std::invalid_argument(std::string("commands.") + what + " has " + std::to_string(value.size()) +
                                " entries; the scene has " + std::to_string(x.size()) + " actuators");
  x = value;
}

nb::ndarray<nb::numpy, double> wrenches_array(const std::vector<math::SpatialForce>& wrenches) {
  std::vector<double> data(6 * wrenches.size());
  for (size_t b = 0; b < wrenches.size(); ++b) {
    for (int i = 0; i < 3; ++i) {
      data[6 * b + i] = wrenches[b].tau[i];
      data[6 * b + 3 + i] = wrenches[b].f[i];
    }
  }
  return owned_copy(data.data(), data.size(), {wrenches.size(), 6});
}

// The contacts as a NumPy structured array of dtype coulomb.CONTACT_DTYPE (a view of the packed
// records, no copy).
nb::object contacts_array(const sim::StepResults& results, double time_step) {
  nb::object records = nb::cast(contact_records(results, time_step));
  return records.attr("view")(nb::module_::import_("coulomb").attr("CONTACT_DTYPE"));
}

}  // namespace

nb::ndarray<nb::numpy, std::uint8_t> contact_records(const sim::StepResults& results, double time_step) {
  const size_t n = results.contacts.size();
  auto* records = new ContactRecord[n > 0 ? n : 1];
  for (size_t i = 0; i < n; ++i) {
    const sim::ContactResult& c = results.contacts[i];
    ContactRecord& r = records[i];
    r.body_a = c.body_a;
    r.body_b = c.body_b;
    r.geometry_a = c.geometry_a;
    r.geometry_b = c.geometry_b;
    for (int k = 0; k < 3; ++k) {
      r.p_W[k] = c.p_W[k];
      r.n_W[k] = c.n_W[k];
      r.impulse_W[k] = c.impulse_W[k];
      r.force_W[k] = c.impulse_W[k] / time_step;
    }
    r.phi = c.phi;
    r.impulse_normal = c.impulse_normal;
    r.impulse_tangential[0] = c.impulse_tangential[0];
    r.impulse_tangential[1] = c.impulse_tangential[1];
    r.slip_speed = c.slip_speed;
    r.region = static_cast<std::int32_t>(c.region);
    r.padding = 0;
  }
  nb::capsule owner(records, [](void* p) noexcept { delete[] static_cast<ContactRecord*>(p); });
  const size_t bytes = n * sizeof(ContactRecord);
  return nb::ndarray<nb::numpy, std::uint8_t>(reinterpret_cast<std::uint8_t*>(records), 1, &bytes, owner);
}

void bind_simulator(nb::module_& m) {
  m.attr("_CONTACT_RECORD_SIZE") = sizeof(ContactRecord);

  nb::class_<sim::StepStats>(m, "StepStats", "Solver statistics of one step.")
      .def_ro("time", &sim::StepStats::time, "Simulated time at the end of the step [s].")
      .def_ro("solver_iterations", &sim::StepStats::solver_iterations, "SAP Newton iterations.")
      .def_ro("line_search_iterations", &sim::StepStats::line_search_iterations)
      .def_ro("free_motion_iterations", &sim::StepStats::free_motion_iterations)
      .def_ro("free_motion_converged", &sim::StepStats::free_motion_converged,
              "Stage 1 met its tolerance (False: v* is the best iterate; the step does not conserve momentum exactly).")
      .def_ro("contacts", &sim::StepStats::contacts, "Contact points at the start of the step.")
      .def_ro("momentum_error", &sim::StepStats::momentum_error, "SAP's e_m (Eq. 32).")
      .def_ro("max_penetration", &sim::StepStats::max_penetration, "max(0, −min φ) [m].")
      .def_ro("mean_slip", &sim::StepStats::mean_slip, "Mean tangential speed of loaded contacts [m/s].")
      .def_ro("energy", &sim::StepStats::energy, "Kinetic + gravitational + spring energy at the end [J].")
      .def_ro("wall_time", &sim::StepStats::wall_time, "[s]")
      .def_prop_ro("status", [](const sim::StepStats& s) { return std::string(solvers::sap::to_string(s.status)); },
                   "The solver's status ('success' when converged).")
      .def("__repr__", [](const sim::StepStats& s) {
        return "<coulomb.StepStats time=" + std::to_string(s.time) + " iterations=" +
               std::to_string(s.solver_iterations) + " contacts=" + std::to_string(s.contacts) + ">";
      });

  nb::class_<StepResultsCopy>(m, "StepResults",
                              "What a step did (a copy, independent of later steps). Forces are the step's "
                              "impulses / δt.")
      .def_prop_ro("stats", [](const StepResultsCopy& r) { return r.results.stats; })
      .def_prop_ro("time_step", [](const StepResultsCopy& r) { return r.time_step; }, "δt [s].")
      .def_prop_ro(
          "_contact_records", [](const StepResultsCopy& r) { return contact_records(r.results, r.time_step); },
          nb::rv_policy::automatic)
      .def_prop_ro(
          "contacts", [](const StepResultsCopy& r) { return contacts_array(r.results, r.time_step); },
          nb::sig("def contacts(self) -> numpy.ndarray"),
          "The step's contacts, a NumPy structured array of dtype coulomb.CONTACT_DTYPE, shape (num_contacts,): "
          "body_a, body_b, geometry_a, geometry_b, p_W (3,) [m], n_W (3,) (A → B), phi [m], impulse_normal [N·s], "
          "impulse_tangential (2,) [N·s], impulse_W (3,) [N·s], force_W (3,) [N], slip_speed [m/s], region.")
      .def_prop_ro("num_contacts", [](const StepResultsCopy& r) { return r.results.contacts.size(); })
      .def_prop_ro(
          "contact_wrenches", [](const StepResultsCopy& r) { return wrenches_array(r.results.contact_wrenches); },
          nb::rv_policy::automatic,
          "Net contact wrench on every body, shape (nbodies, 6): moment about the body origin then force, world "
          "frame [N·m, N] (row 0, the world, is zero).")
      .def_prop_ro(
          "generalized_contact_forces", [](const StepResultsCopy& r) { return r.results.generalized_contact_forces; }, nb::rv_policy::copy,
          "Jᵀγ/δt, shape (nv,) [N·m or N].")
      .def_prop_ro(
          "actuator_forces", [](const StepResultsCopy& r) { return r.results.actuator_forces; }, nb::rv_policy::copy,
          "Force each actuator applied (feed-forward + PD after the effort limit), shape (num_actuators,) [N·m or N].")
      .def_prop_ro(
          "actuator_saturated", [](const StepResultsCopy& r) { return Eigen::VectorXi(r.results.actuator_saturated); }, nb::rv_policy::automatic,
          "1 where the actuator hit its effort limit, shape (num_actuators,).")
      .def_prop_ro(
          "generalized_actuation", [](const StepResultsCopy& r) { return r.results.generalized_actuation; }, nb::rv_policy::copy,
          "Actuator forces scattered to their velocity index, shape (nv,) [N·m or N].")
      .def_prop_ro(
          "joint_limit_impulses", [](const StepResultsCopy& r) { return r.results.joint_limit_impulses; }, nb::rv_policy::copy,
          "Joint-limit impulse on every velocity, shape (nv,) [N·m·s or N·s].");

  nb::class_<StateCopy>(m, "State", "The state a controller sees: time [s], q (nq,), v (nv,) (copies).")
      .def_ro("time", &StateCopy::time)
      .def_ro("q", &StateCopy::q)
      .def_ro("v", &StateCopy::v);

  nb::class_<sim::Commands>(m, "Commands",
                            "The commands the actuators follow (one entry per actuator, Scene.actuators order), "
                            "held until changed. In a controller's update() the arrays are writable views into the "
                            "simulator's commands, valid during the call: write `commands.actuation[:] = u` or "
                            "assign a whole array.")
      .def_prop_rw(
          "actuation", [](nb::handle self) { return command_view(nb::cast<sim::Commands&>(self).actuation, self); },
          [](sim::Commands& c, nb::handle u) { assign_command(c.actuation, u, "actuation"); }, nb::rv_policy::automatic,
          "Feed-forward force per actuator [N·m or N], added to the PD term before the effort limit.")
      .def_prop_rw(
          "q_target", [](nb::handle self) { return command_view(nb::cast<sim::Commands&>(self).q_target, self); },
          [](sim::Commands& c, nb::handle x) { assign_command(c.q_target, x, "q_target"); }, nb::rv_policy::automatic, "PD position targets [rad or m].")
      .def_prop_rw(
          "v_target", [](nb::handle self) { return command_view(nb::cast<sim::Commands&>(self).v_target, self); },
          [](sim::Commands& c, nb::handle x) { assign_command(c.v_target, x, "v_target"); }, nb::rv_policy::automatic,
          "PD velocity targets [rad/s or m/s].")
      .def_prop_rw(
          "kp", [](nb::handle self) { return command_view(nb::cast<sim::Commands&>(self).kp, self); },
          [](sim::Commands& c, nb::handle x) { assign_command(c.kp, x, "kp"); }, nb::rv_policy::automatic, "PD stiffness ≥ 0 [N·m/rad or N/m].")
      .def_prop_rw(
          "kd", [](nb::handle self) { return command_view(nb::cast<sim::Commands&>(self).kd, self); },
          [](sim::Commands& c, nb::handle x) { assign_command(c.kd, x, "kd"); }, nb::rv_policy::automatic, "PD damping ≥ 0 [N·m·s/rad or N·s/m].");

  nb::class_<sim::Simulator>(m, "Simulator", nb::dynamic_attr(),
                             "Forward simulation of a Scene with SAP (or the L-stable solver): θ-method two-stage "
                             "time stepping. Takes a copy of the scene.")
      .def(
          "__init__",
          [](sim::Simulator* self, const scene::Scene& scene, std::optional<double> time_step,
             std::optional<std::string> integrator, std::optional<std::string> solver,
             std::optional<std::string> contact_approximation, std::optional<double> rel_tolerance,
             bool speculative_contact) {
            scene::Scene copy = scene;
            sim::SimulatorParameters params = parameters_from_scene(copy);
            if (time_step) params.time_step = *time_step;
            if (integrator) params.integrator = sim::parse_integrator(*integrator);
            if (solver) params.solver = sim::parse_solver(*solver);
            if (contact_approximation)
              copy.contact.approximation = contact::parse_contact_approximation(*contact_approximation);
            if (rel_tolerance) {
              if (!(*rel_tolerance > 0.0 && *rel_tolerance < 1.0))
                throw std::invalid_argument("rel_tolerance must be in (0, 1), got " + std::to_string(*rel_tolerance));
              params.sap.rel_tolerance = *rel_tolerance;
            }
            params.speculative_contact = speculative_contact;
            new (self) sim::Simulator(std::move(copy), params);
          },
          "scene"_a, "time_step"_a.none() = nb::none(), "integrator"_a.none() = nb::none(),
          "solver"_a.none() = nb::none(), "contact_approximation"_a.none() = nb::none(),
          "rel_tolerance"_a.none() = nb::none(), "speculative_contact"_a = false,
          "Makes a simulator from a copy of `scene`. Unset parameters come from the scene file, exactly as "
          "`coulomb simulate` takes them: time_step [s], integrator ('implicit-euler', 'symplectic-euler', "
          "'midpoint'), solver ('sap', 'lstable'), contact_approximation ('sap', 'similar', 'lagged'), "
          "rel_tolerance (SAP's ε_r, default 1e-6), speculative_contact.")
      .def("step", [](sim::Simulator& s) -> sim::StepStats {
            nb::gil_scoped_release release;
            return s.step();
          },
          "Advances one time step (the GIL is released meanwhile) and returns its StepStats. Other Python threads "
          "run meanwhile; a Simulator itself is stepped by one thread at a time (one Simulator per thread).")
      .def(
          "advance",
          [](sim::Simulator& s, long long steps) {
            if (steps < 0) throw std::invalid_argument("steps must be ≥ 0, got " + std::to_string(steps));
            nb::gil_scoped_release release;
            for (long long k = 0; k < steps; ++k) s.step();
          },
          "steps"_a, "Takes `steps` time steps in C++ (the GIL released throughout).")
      .def_prop_ro("time", &sim::Simulator::time, "Simulated time [s].")
      .def_prop_ro("step_count", &sim::Simulator::step_count)
      .def_prop_ro("time_step", [](const sim::Simulator& s) { return s.parameters().time_step; }, "δt [s].")
      .def_prop_ro(
          "q",
          [](nb::handle self) {
            const sim::Simulator& s = nb::cast<const sim::Simulator&>(self);
            return readonly_view(s.q().data(), {static_cast<size_t>(s.q().size())}, self);
          },
          nb::rv_policy::automatic,
          "Configuration, shape (nq,): a read-only view into the simulator (no copy) that follows it as it "
          "steps; .copy() to keep a value.")
      .def_prop_ro(
          "v",
          [](nb::handle self) {
            const sim::Simulator& s = nb::cast<const sim::Simulator&>(self);
            return readonly_view(s.v().data(), {static_cast<size_t>(s.v().size())}, self);
          },
          nb::rv_policy::automatic,
          "Velocities, shape (nv,) [rad/s, m/s]: a read-only live view, as q.")
      .def(
          "set_state",
          [](sim::Simulator& s, nb::handle q, nb::handle v) { s.set_state(to_vector(q, "q"), to_vector(v, "v")); },
          "q"_a, "v"_a,
           "Replaces the state: q (nq,), v (nv,). Raises ValueError naming a wrong size or non-finite entry.")
      .def_prop_ro(
          "model", [](const sim::Simulator& s) -> const multibody::Model& { return s.model(); },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "scene", [](const sim::Simulator& s) -> const scene::Scene& { return s.scene(); },
          nb::rv_policy::reference_internal, "The simulator's own copy of the scene (read it, do not change it).")
      .def_prop_ro("num_actuators", &sim::Simulator::num_actuators)
      .def("actuator_index", &sim::Simulator::actuator_index, "joint"_a)
      .def(
          "set_actuation", [](sim::Simulator& s, nb::handle u) { s.set_actuation(to_vector(u, "u")); }, "u"_a,
          "Feed-forward forces, one per actuator, shape (num_actuators,) [N·m or N].")
      .def(
          "set_actuation",
          [](sim::Simulator& s, const std::variant<int, std::string>& actuator, double u) {
            s.set_actuation(actuator_of(s, actuator), u);
          },
          "actuator"_a, "u"_a, "Feed-forward force of one actuator (index or joint name) [N·m or N].")
      .def(
          "set_pd_targets",
          [](sim::Simulator& s, nb::handle q_target, nb::handle v_target) {
            s.set_pd_targets(to_vector(q_target, "q_target"), v_target.is_none()
                                                                  ? Eigen::VectorXd::Zero(s.num_actuators()).eval()
                                                                  : to_vector(v_target, "v_target"));
          },
          "q_target"_a, "v_target"_a.none() = nb::none(),
          "PD targets, shape (num_actuators,) each [rad or m, rad/s or m/s] (v_target default 0).")
      .def(
          "set_pd_target",
          [](sim::Simulator& s, const std::variant<int, std::string>& actuator, double q_target, double v_target) {
            s.set_pd_target(actuator_of(s, actuator), q_target, v_target);
          },
          "actuator"_a, "q_target"_a, "v_target"_a = 0.0)
      .def(
          "set_pd_gains",
          [](sim::Simulator& s, const std::variant<int, std::string>& actuator, double kp, double kd) {
            s.set_pd_gains(actuator_of(s, actuator), kp, kd);
          },
          "actuator"_a, "kp"_a, "kd"_a, "PD gains of one actuator (index or joint name), ≥ 0 [N·m/rad, N·m·s/rad].")
      .def(
          "add_external_wrench",
          [](sim::Simulator& s, const std::variant<int, std::string>& body, const std::array<double, 3>& force,
             const std::array<double, 3>& torque, const std::array<double, 3>& point) {
            sim::ExternalWrench w;
            w.body = body_of(s, body);
            w.f_W = math::Vector3(force[0], force[1], force[2]);
            w.tau_W = math::Vector3(torque[0], torque[1], torque[2]);
            w.p_BoBq_B = math::Vector3(point[0], point[1], point[2]);
            s.add_external_wrench(w);
          },
          "body"_a, "force"_a, "torque"_a = std::array<double, 3>{0.0, 0.0, 0.0},
          "point"_a = std::array<double, 3>{0.0, 0.0, 0.0},
          "Applies force f_W [N] and moment τ_W [N·m] (world frame) at `point` (body frame [m]) of a body (index "
          "or name) for every coming step, until clear_external_wrenches().")
      .def("clear_external_wrenches", &sim::Simulator::clear_external_wrenches)
      .def_prop_ro(
          "commands", [](const sim::Simulator& s) { return s.commands(); },
          "A copy of the commands in force (Commands).")
      .def(
          "set_controller",
          [](nb::handle self, nb::object controller, int decimation) {
            sim::Simulator& s = nb::cast<sim::Simulator&>(self);
            if (controller.is_none()) {
              s.set_controller(nullptr, decimation);
              nb::setattr(self, "_controller", nb::none());
              return;
            }
            if (!nb::hasattr(controller, "update"))
              throw nb::type_error("controller must have a method update(state, results, commands)");
            s.set_controller(std::make_shared<CallbackController>(controller, s.parameters().time_step, false),
                             decimation);
            nb::setattr(self, "_controller", controller);  // the strong reference (see CallbackController)
          },
          "controller"_a.none(), "decimation"_a = 1,
          "Calls controller.update(state, results, commands) before every `decimation`-th step: state (State: "
          "time, q, v), results (StepResults of the last step), commands (Commands, change it in place). None "
          "removes the controller. Exceptions raised in update() propagate out of step().")
      .def_prop_ro(
          "last_step", [](const sim::Simulator& s) { return s.last_step(); }, "StepStats of the last step.")
      .def(
          "last_results", [](const sim::Simulator& s) { return StepResultsCopy{s.last_results(), s.parameters().time_step}; },
          "A copy of the last step's results (StepResults).")
      .def(
          "contacts", [](const sim::Simulator& s) { return contacts_array(s.last_results(), s.parameters().time_step); },
          nb::sig("def contacts(self) -> numpy.ndarray"),
          "The last step's contacts (gathered at its start), a NumPy structured array of dtype "
          "coulomb.CONTACT_DTYPE, shape (num_contacts,) (a new array: later steps do not change it).")
      .def_prop_ro("warnings", &sim::Simulator::warnings, "Warnings raised so far (run monitor).")
      .def(
          "energy", [](sim::Simulator& s) { return s.energy(s.q(), s.v()); },
          "Kinetic + gravitational + spring energy at the current state [J].");
}

}  // namespace coulomb::python
