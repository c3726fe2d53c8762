// Inverse dynamics with rigid contact and friction (Zapolsky & Drumwright): InverseDynamics over a
// Model, solved with the contacts of a Simulator's last step.
#include <nanobind/eigen/dense.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "common.h"
#include "coulomb/contact/contact_set.h"
#include "coulomb/geometry/collision_world.h"
#include "coulomb/inverse_dynamics/inverse_dynamics.h"
#include "coulomb/multibody/forward_kinematics.h"

namespace coulomb::python {

namespace id = coulomb::inverse_dynamics;

namespace {

// InverseDynamics over a scene: the contacts come from the scene's collision geometry at the state
// of each solve (as examples/cpp/id_stance.cc gathers them).
struct SceneInverseDynamics {
  SceneInverseDynamics(const scene::Scene& s, const std::vector<int>& actuated, const id::IdParameters& parameters)
      : scene(&s), world(s.model, s.geometries, s.collision), ws(s.model), solver(s.model, actuated, parameters) {}
  const scene::Scene* scene;
  geometry::CollisionWorld world;
  multibody::Workspace ws;
  contact::ContactSet contacts;
  id::InverseDynamics solver;
};

}  // namespace

void bind_inverse_dynamics(nb::module_& m) {
  m.def("joint_dofs", &id::joint_dofs, "model"_a, "Velocity indices of every 1-dof joint, ascending.");
  m.def("actuated_dofs", &id::actuated_dofs, "scene"_a,
        "Velocity indices of the scene's actuators (ascending), or joint_dofs(scene.model) without actuators.");

  nb::class_<SceneInverseDynamics>(
      m, "InverseDynamics",
      "Inverse dynamics with rigid contact and friction (Zapolsky & Drumwright; docs/inverse-dynamics.md) for "
      "a scene: actuator torques and contact impulses together, for desired accelerations of the actuated "
      "coordinates, with the contacts of the scene's collision geometry at the state solved for.")
      .def(
          "__init__",
          [](SceneInverseDynamics* self, const scene::Scene& scene, std::optional<std::vector<int>> actuated,
             const std::string& formulation, int friction_edges, bool stage_two) {
            id::IdParameters parameters;
            parameters.formulation = id::parse_formulation(formulation);
            parameters.friction_edges = friction_edges;
            parameters.stage_two = stage_two;
            new (self) SceneInverseDynamics(scene, actuated ? *actuated : id::actuated_dofs(scene), parameters);
          },
          "scene"_a, "actuated"_a.none() = nb::none(), "formulation"_a = "qp-coulomb", "friction_edges"_a = 4,
          "stage_two"_a = true, nb::keep_alive<1, 2>(),
          "scene: the Scene (kept alive; Simulator.scene will do); actuated: velocity indices of the actuated "
          "coordinates (default: actuated_dofs(scene)); formulation: 'lcp-noslip', 'lcp-coulomb', 'qp-coulomb' "
          "(default) or 'qp-noslip'; friction_edges: edges of the friction polygon (≥ 3); stage_two: the QP "
          "formulations' torque smoothing.")
      .def_prop_ro("actuated", [](const SceneInverseDynamics& x) { return x.solver.actuated(); },
                   "Velocity indices of the actuated coordinates.")
      .def_prop_ro("formulation",
                   [](const SceneInverseDynamics& x) {
                     return std::string(id::to_string(x.solver.parameters().formulation));
                   })
      .def(
          "solve",
          [](SceneInverseDynamics& x, nb::handle q_in, nb::handle v_in, nb::handle qdd_in, double dt) {
            const Eigen::VectorXd q = to_vector(q_in, "q"), v = to_vector(v_in, "v");
            const Eigen::VectorXd qdd_des = to_vector(qdd_in, "qdd_des");
            const multibody::Model& model = x.scene->model;
            model.check_configuration(q);
            multibody::forward_kinematics(model, x.ws, q);
            x.world.update_poses(x.ws);
            contact::gather_contacts(x.world, x.scene->contact, x.contacts);
            const id::IdResults& r = x.solver.solve(q, v, qdd_des, dt, x.contacts);
            const int n = x.contacts.size();
            Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor> impulses(n, 3), p_W(n, 3), n_W(n, 3), f_W(n, 3);
            Eigen::VectorXi body_a(n), body_b(n);
            for (int i = 0; i < n; ++i) {
              const contact::Contact& c = x.contacts.contacts[i];
              const Eigen::Vector3d gamma = r.contact_impulses.segment<3>(3 * i);
              impulses.row(i) = gamma.transpose();
              p_W.row(i) = c.p_W.transpose();
              n_W.row(i) = c.n_W.transpose();
              f_W.row(i) = (c.R_WC * gamma / dt).transpose();
              body_a[i] = c.body_a;
              body_b[i] = c.body_b;
            }
            nb::dict out;
            out["status"] = std::string(id::to_string(r.status));
            out["ok"] = r.ok();
            out["message"] = r.message;
            out["tau"] = Eigen::VectorXd(r.tau);
            out["v_next"] = Eigen::VectorXd(r.v_next);
            out["contact_impulses"] = impulses;
            out["force_W"] = f_W;
            out["p_W"] = p_W;
            out["n_W"] = n_W;
            out["body_a"] = body_a;
            out["body_b"] = body_b;
            out["active_set"] = r.active_set;
            out["solver_iterations"] = r.stats.solver_iterations;
            return out;
          },
          "q"_a, "v"_a, "qdd_des"_a, "dt"_a,
          "Solves at state (q (nq,), v (nv,)) for the desired accelerations qdd_des (one per actuated "
          "coordinate) [rad/s², m/s²] over the control period dt [s], with the contacts the scene's geometry has "
          "at q. Returns a dict: status, ok, message, tau (one per actuated coordinate [N·m or N]), v_next "
          "(nv,), and per contact (rows): contact_impulses [f_S, f_T, f_N] in the contact frame [N·s], force_W "
          "(on body B, world frame [N]), p_W [m], n_W (A → B), body_a, body_b; active_set, solver_iterations.")
      .def("reset", [](SceneInverseDynamics& x) { x.solver.reset(); }, "Forgets warm starts.");
}

}  // namespace coulomb::python
