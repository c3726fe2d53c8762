// One whole rollout in C++ (coulomb.batch): a scene with its variation (initial state, contact
// parameters, masses, PD gains and targets, feed-forward), stepped for a duration with the GIL
// released, returning the chosen signals as arrays.
#include <nanobind/eigen/dense.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "common.h"
#include "coulomb/simulation/controller.h"

namespace coulomb::python {

namespace sim = coulomb::simulation;

namespace {

Eigen::VectorXd per_actuator(nb::handle value, int n, const char* key) {
  if (nb::isinstance<nb::float_>(value) || nb::isinstance<nb::int_>(value))
    return Eigen::VectorXd::Constant(n, nb::cast<double>(value));
  Eigen::VectorXd x = to_vector(value, key);
  if (x.size() != n)
    throw std::invalid_argument(std::string("parameters['") + key + "'] has " + std::to_string(x.size()) +
                                " entries; the scene has " + std::to_string(n) + " actuators");
  return x;
}

struct Signal {
  std::string name;
  int width = 1;
  std::function<void(const sim::Simulator&, double*)> fill;  // one row
};

}  // namespace

void bind_rollout(nb::module_& m) {
  m.def(
      "_rollout",
      [](const scene::Scene& base, nb::dict parameters, double duration, std::vector<std::string> signals,
         int record_every, nb::object controller, int decimation) {
        if (!(std::isfinite(duration) && duration > 0.0))
          throw std::invalid_argument("duration must be a finite number > 0 s, got " + std::to_string(duration));
        if (record_every < 1) throw std::invalid_argument("record_every must be ≥ 1, got " + std::to_string(record_every));
        scene::Scene scene = base;
        std::optional<Eigen::VectorXd> q0, v0, kp, kd, q_target, v_target, actuation;
        const int na = static_cast<int>(scene.actuators.size());
        for (auto [key_handle, value] : parameters) {
          const std::string key = nb::cast<std::string>(key_handle);
          if (key == "q0") {
            q0 = to_vector(value, "parameters['q0']");
            scene.model.check_configuration(*q0);
            scene.q0 = *q0;
          } else if (key == "v0") {
            v0 = to_vector(value, "parameters['v0']");
            scene.model.check_velocity(*v0, "parameters['v0']");
            scene.v0 = *v0;
          } else if (key == "contact") {
            for (auto [k, x] : nb::cast<nb::dict>(value)) {
              const std::string field = nb::cast<std::string>(k);
              const double d = nb::cast<double>(x);
              const bool positive = field == "stiffness" || field == "stiction_tolerance";
              if (!(std::isfinite(d) && (positive ? d > 0.0 : d >= 0.0)))
                throw std::invalid_argument("parameters['contact']['" + field + "'] must be finite and " +
                                            (positive ? "> 0" : "≥ 0") + ", got " + std::to_string(d));
              if (field == "mu") scene.contact.mu = d;
              else if (field == "stiffness") scene.contact.stiffness = d;
              else if (field == "dissipation_time") scene.contact.dissipation_time = d;
              else if (field == "hunt_crossley_dissipation") scene.contact.hunt_crossley_dissipation = d;
              else if (field == "stiction_tolerance") scene.contact.stiction_tolerance = d;
              else
                throw std::invalid_argument("parameters['contact']: unknown key '" + field +
                                            "' (mu, stiffness, dissipation_time, hunt_crossley_dissipation, "
                                            "stiction_tolerance)");
            }
          } else if (key == "mass_scale") {
            for (auto [body, factor] : nb::cast<nb::dict>(value))
              scene.model.scale_body_inertia(scene.model.body_index(nb::cast<std::string>(body)), nb::cast<double>(factor));
          } else if (key == "mass") {
            for (auto [body, mass] : nb::cast<nb::dict>(value)) {
              const std::string name = nb::cast<std::string>(body);
              const int b = scene.model.body_index(name);
              const double kg = nb::cast<double>(mass), old = scene.model.body(b).inertia.mass;
              if (!(std::isfinite(kg) && kg > 0.0) || !(old > 0.0))
                throw std::invalid_argument("parameters['mass']['" + name + "']: must be finite and > 0 for a body "
                                            "with mass, got " + std::to_string(kg));
              scene.model.scale_body_inertia(b, kg / old);
            }
          } else if (key == "kp") {
            kp = per_actuator(value, na, "kp");
          } else if (key == "kd") {
            kd = per_actuator(value, na, "kd");
          } else if (key == "q_target") {
            q_target = per_actuator(value, na, "q_target");
          } else if (key == "v_target") {
            v_target = per_actuator(value, na, "v_target");
          } else if (key == "actuation") {
            actuation = per_actuator(value, na, "actuation");
          } else if (key == "time_step") {
            const double dt = nb::cast<double>(value);
            if (!(std::isfinite(dt) && dt > 0.0))
              throw std::invalid_argument("parameters['time_step'] must be finite and > 0, got " + std::to_string(dt));
            scene.time_step = dt;
          } else if (key == "integrator") {
            scene.integrator = nb::cast<std::string>(value);
            sim::parse_integrator(scene.integrator);
          } else if (key == "solver") {
            scene.solver = nb::cast<std::string>(value);
            sim::parse_solver(scene.solver);
          } else if (key == "contact_approximation") {
            scene.contact.approximation = contact::parse_contact_approximation(nb::cast<std::string>(value));
          } else {
            throw std::invalid_argument("parameters: unknown key '" + key +
                                        "' (q0, v0, contact, mass_scale, mass, kp, kd, q_target, v_target, "
                                        "actuation, time_step, integrator, solver, contact_approximation)");
          }
        }
        const sim::SimulatorParameters params = parameters_from_scene(scene);
        auto simulator = std::make_unique<sim::Simulator>(std::move(scene), params);
        sim::Simulator& s = *simulator;
        if (kp || kd) {
          sim::Commands c = s.commands();
          if (kp) c.kp = *kp;
          if (kd) c.kd = *kd;
          s.set_commands(c);
        }
        if (q_target || v_target)
          s.set_pd_targets(q_target ? *q_target : s.commands().q_target, v_target ? *v_target : s.commands().v_target);
        if (actuation) s.set_actuation(*actuation);
        if (!controller.is_none()) {
          s.set_controller(make_callback_controller(controller, params.time_step), decimation);
        }

        // The signals, one row per recorded state.
        const int nq = s.model().nq(), nv = s.model().nv();
        std::vector<Signal> table;
        std::set<std::string> seen;
        for (const std::string& name : signals) {
          if (!seen.insert(name).second) continue;
          Signal g;
          g.name = name;
          if (name == "time") g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.time(); };
          else if (name == "q") {
            g.width = nq;
            g.fill = [nq](const sim::Simulator& x, double* r) { std::copy(x.q().data(), x.q().data() + nq, r); };
          } else if (name == "v") {
            g.width = nv;
            g.fill = [nv](const sim::Simulator& x, double* r) { std::copy(x.v().data(), x.v().data() + nv, r); };
          } else if (name == "energy") g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.last_step().energy; };
          else if (name == "contacts") g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.last_step().contacts; };
          else if (name == "max_penetration")
            g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.last_step().max_penetration; };
          else if (name == "solver_iterations")
            g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.last_step().solver_iterations; };
          else if (name == "momentum_error")
            g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.last_step().momentum_error; };
          else if (name == "mean_slip") g.fill = [](const sim::Simulator& x, double* r) { r[0] = x.last_step().mean_slip; };
          else if (name == "actuator_forces") {
            g.width = na;
            g.fill = [na](const sim::Simulator& x, double* r) {
              const Eigen::VectorXd& f = x.last_results().actuator_forces;
              for (int i = 0; i < na; ++i) r[i] = f.size() == na ? f[i] : 0.0;
            };
          } else if (name == "generalized_contact_forces") {
            g.width = nv;
            g.fill = [nv](const sim::Simulator& x, double* r) {
              const Eigen::VectorXd& f = x.last_results().generalized_contact_forces;
              for (int i = 0; i < nv; ++i) r[i] = f.size() == nv ? f[i] : 0.0;
            };
          } else {
            throw std::invalid_argument("signals: unknown signal '" + name +
                                        "' (time, q, v, energy, contacts, max_penetration, solver_iterations, "
                                        "momentum_error, mean_slip, actuator_forces, generalized_contact_forces)");
          }
          table.push_back(std::move(g));
        }
        const double steps_needed = std::ceil(duration / params.time_step - 1e-9);
        if (!(steps_needed < 2e9)) throw std::invalid_argument("duration / time_step is too many steps");
        const long long num_steps = static_cast<long long>(steps_needed);
        const long long rows = 1 + num_steps / record_every + (num_steps % record_every ? 1 : 0);
        std::vector<double*> data;
        for (const Signal& g : table) data.push_back(new double[std::max<long long>(1, rows * g.width)]());
        int failures = 0;
        double iterations = 0.0, max_penetration = 0.0, wall = 0.0;
        long long row = 0;
        try {
          nb::gil_scoped_release release;
          // Row 0: the initial state (step statistics are zero there).
          for (size_t i = 0; i < table.size(); ++i) table[i].fill(s, data[i]);
          ++row;
          const auto start = std::chrono::steady_clock::now();
          for (long long k = 1; k <= num_steps; ++k) {
            const sim::StepStats& st = s.step();
            iterations += st.solver_iterations;
            max_penetration = std::max(max_penetration, st.max_penetration);
            if (st.status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
            if (k % record_every == 0 || k == num_steps) {
              for (size_t i = 0; i < table.size(); ++i) table[i].fill(s, data[i] + row * table[i].width);
              ++row;
            }
          }
          wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        } catch (...) {
          for (double* p : data) delete[] p;
          throw;
        }
        nb::dict out;
        for (size_t i = 0; i < table.size(); ++i) {
          nb::capsule owner(data[i], [](void* p) noexcept { delete[] static_cast<double*>(p); });
          const int w = table[i].width;
          const bool vector_signal = table[i].name == "q" || table[i].name == "v" ||
                                     table[i].name == "actuator_forces" || table[i].name == "generalized_contact_forces";
          if (vector_signal) {
            size_t shape[2] = {static_cast<size_t>(row), static_cast<size_t>(w)};
            out[table[i].name.c_str()] = nb::ndarray<nb::numpy, double>(data[i], 2, shape, owner);
          } else {
            size_t shape[1] = {static_cast<size_t>(row)};
            out[table[i].name.c_str()] = nb::ndarray<nb::numpy, double>(data[i], 1, shape, owner);
          }
        }
        out["final_q"] = Eigen::VectorXd(s.q());
        out["final_v"] = Eigen::VectorXd(s.v());
        out["final_time"] = s.time();
        out["steps"] = num_steps;
        out["failures"] = failures;
        out["mean_solver_iterations"] = num_steps > 0 ? iterations / num_steps : 0.0;
        out["max_penetration_max"] = max_penetration;
        out["wall_time"] = wall;
        // The simulator (and a Python controller it holds) goes with the GIL held.
        simulator.reset();
        return out;
      },
      "scene"_a, "parameters"_a, "duration"_a, "signals"_a, "record_every"_a = 1, "controller"_a.none() = nb::none(),
      "decimation"_a = 1,
      "One rollout wholly in C++ (the GIL released unless a Python controller is called): see coulomb.batch.");
}

}  // namespace coulomb::python
