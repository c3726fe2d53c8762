// Model, Workspace, load_urdf and the rigid-body algorithms (rnea, crba, aba, bias_forces,
// generalized_gravity, frame_jacobian, frame_pose).
#include <nanobind/eigen/dense.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/variant.h>

#include <optional>
#include <variant>

#include "common.h"
#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace coulomb::python {

namespace mb = coulomb::multibody;
using Vec = nb::DRef<const Eigen::VectorXd>;

namespace {

// The workspace the algorithms use: the caller's (checked against the model) or a new one.
struct WorkspaceArg {
  std::optional<mb::Workspace> own;
  mb::Workspace* ws = nullptr;
  WorkspaceArg(const mb::Model& model, mb::Workspace* given) {
    if (given) {
      if (static_cast<int>(given->X_PB.size()) != model.num_bodies() || given->tau.size() != model.nv())
        throw std::invalid_argument("workspace was made for another model (" + std::to_string(given->X_PB.size()) +
                                    " bodies, nv = " + std::to_string(given->tau.size()) + "; model '" +
                                    model.name() + "' has " + std::to_string(model.num_bodies()) +
                                    " bodies, nv = " + std::to_string(model.nv()) + ")");
      ws = given;
    } else {
      own.emplace(model);
      ws = &*own;
    }
  }
};

int frame_of(const mb::Model& model, const std::variant<int, std::string>& frame) {
  if (const auto* name = std::get_if<std::string>(&frame)) return model.frame_index(*name);
  const int f = std::get<int>(frame);
  if (f < 0 || f >= static_cast<int>(model.frames().size()))
    throw std::out_of_range("frame index " + std::to_string(f) + " is not in 0 … " +
                            std::to_string(model.frames().size() - 1));
  return f;
}

mb::ReferenceFrame parse_reference_frame(const std::string& name) {
  if (name == "world") return mb::ReferenceFrame::kWorld;
  if (name == "local_world_aligned") return mb::ReferenceFrame::kLocalWorldAligned;
  if (name == "local") return mb::ReferenceFrame::kLocal;
  throw std::invalid_argument("reference_frame: unknown value '" + name + "' (world, local_world_aligned, local)");
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<mb::Model>(m, "Model",
                        "A multibody model: a forest of rigid bodies connected by joints, with named frames. Body 0 "
                        "is the world. Immutable once built (load_urdf, Scene.model); the algorithms take it "
                        "with a Workspace.")
      .def_prop_ro("name", &mb::Model::name)
      .def_prop_ro("nq", &mb::Model::nq, "Number of configuration coordinates n_q.")
      .def_prop_ro("nv", &mb::Model::nv, "Number of velocity coordinates (degrees of freedom) n_v.")
      .def_prop_ro("nbodies", &mb::Model::num_bodies, "Number of bodies, the world (body 0) included.")
      .def_prop_ro("nframes", [](const mb::Model& model) { return static_cast<int>(model.frames().size()); },
                   "Number of frames (every URDF link is one).")
      .def_prop_ro(
          "body_names",
          [](const mb::Model& model) {
            std::vector<std::string> names;
            for (const mb::Body& b : model.bodies()) names.push_back(b.name);
            return names;
          },
          "Body names, index = body index (0: the world).")
      .def_prop_ro(
          "joint_names",
          [](const mb::Model& model) {
            std::vector<std::string> names;
            for (int b = 1; b < model.num_bodies(); ++b) names.push_back(model.body(b).joint.name);
            return names;
          },
          "Names of the joints of bodies 1 … nbodies − 1 (the joint attaching each body to its parent).")
      .def_prop_ro(
          "frame_names",
          [](const mb::Model& model) {
            std::vector<std::string> names;
            for (const mb::Frame& f : model.frames()) names.push_back(f.name);
            return names;
          },
          "Frame names, index = frame index.")
      .def_prop_ro("dof_names", &mb::Model::dof_names,
                   "Names of the n_v velocity coordinates: the joint name for 1-dof joints, JOINT.wx … JOINT.vz "
                   "for a floating joint.")
      .def_prop_ro("position_names", &mb::Model::position_names,
                   "Names of the n_q configuration coordinates: the joint name for 1-dof joints, JOINT.x, .y, .z, "
                   ".qw, .qx, .qy, .qz for a floating joint.")
      .def_prop_ro("gravity", [](const mb::Model& model) { return Eigen::Vector3d(model.gravity()); },
                   "Gravity acceleration in the world frame, shape (3,) [m/s²].")
      .def_prop_ro("total_mass", &mb::Model::total_mass, "Sum of all link masses [kg].")
      .def_prop_ro(
          "body_masses",
          [](const mb::Model& model) {
            Eigen::VectorXd m(model.num_bodies());
            for (int b = 0; b < model.num_bodies(); ++b) m[b] = model.body(b).inertia.mass;
            return m;
          },
          "Mass of every body (links welded into it included), shape (nbodies,) [kg].")
      .def("neutral_configuration", &mb::Model::neutral_configuration,
           "The zero configuration, shape (nq,): joint coordinates 0, identity quaternions.")
      .def("body_index", &mb::Model::body_index, "name"_a, "Index of the body named `name` (IndexError if absent).")
      .def("frame_index", &mb::Model::frame_index, "name"_a, "Index of the frame named `name` (IndexError if absent).")
      .def("joint_body", &mb::Model::joint_body, "joint"_a,
           "Index of the body whose joint is named `joint`, or −1 if there is none.")
      .def("__repr__", [](const mb::Model& model) {
        return "<coulomb.Model '" + model.name() + "': nq=" + std::to_string(model.nq()) +
               ", nv=" + std::to_string(model.nv()) + ", nbodies=" + std::to_string(model.num_bodies()) + ">";
      });

  nb::class_<mb::Workspace>(m, "Workspace",
                            "Every buffer the algorithms write, preallocated for one Model. Pass one to the "
                            "algorithms to avoid allocating a new one per call.")
      .def(nb::init<const mb::Model&>(), "model"_a);

  m.def(
      "load_urdf",
      [](const std::string& path, bool floating, const std::string& floating_joint_name) {
        io::UrdfOptions options;
        options.floating = floating;
        options.floating_joint_name = floating_joint_name;
        return io::load_urdf(path, options).model;
      },
      "path"_a, "floating"_a = false, "floating_joint_name"_a = "root_joint",
      "Loads a URDF file into a Model. floating=True attaches the root link with a floating joint "
      "(q = [x, y, z, qw, qx, qy, qz, joints…], v = [ω; v of the base origin, world frame; joints…]). "
      "Raises UrdfError naming the file, line, element and value.");

  m.def(
      "rnea",
      [](const mb::Model& model, Vec q, Vec v, Vec vdot, mb::Workspace* ws) {
        model.check_configuration(q);
        model.check_velocity(v, "v");
        model.check_velocity(vdot, "vdot");
        WorkspaceArg w(model, ws);
        return Eigen::VectorXd(mb::rnea(model, *w.ws, q, v, vdot));
      },
      "model"_a, "q"_a, "v"_a, "vdot"_a, "workspace"_a.none() = nb::none(),
      "Inverse dynamics (recursive Newton–Euler): τ = M(q) v̇ + C(q, v) v + ∂V/∂q, shape (nv,) [N·m or N]. "
      "q: (nq,), v: (nv,) [rad/s, m/s], vdot: (nv,) [rad/s², m/s²].");
  m.def(
      "crba",
      [](const mb::Model& model, Vec q, mb::Workspace* ws) {
        model.check_configuration(q);
        WorkspaceArg w(model, ws);
        return Eigen::MatrixXd(mb::crba(model, *w.ws, q));
      },
      "model"_a, "q"_a, "workspace"_a.none() = nb::none(),
      "Mass matrix M(q) (composite-rigid-body algorithm), shape (nv, nv), symmetric positive definite.");
  m.def(
      "aba",
      [](const mb::Model& model, Vec q, Vec v, Vec tau, mb::Workspace* ws) {
        model.check_configuration(q);
        model.check_velocity(v, "v");
        model.check_velocity(tau, "tau");
        WorkspaceArg w(model, ws);
        return Eigen::VectorXd(mb::aba(model, *w.ws, q, v, tau));
      },
      "model"_a, "q"_a, "v"_a, "tau"_a, "workspace"_a.none() = nb::none(),
      "Forward dynamics (articulated-body algorithm): v̇ = M⁻¹ (τ − b(q, v)), shape (nv,) [rad/s², m/s²]. "
      "tau: (nv,) [N·m or N].");
  m.def(
      "bias_forces",
      [](const mb::Model& model, Vec q, Vec v, mb::Workspace* ws) {
        model.check_configuration(q);
        model.check_velocity(v, "v");
        WorkspaceArg w(model, ws);
        return Eigen::VectorXd(mb::bias_forces(model, *w.ws, q, v));
      },
      "model"_a, "q"_a, "v"_a, "workspace"_a.none() = nb::none(),
      "Bias forces b(q, v) = C(q, v) v + ∂V/∂q, shape (nv,) [N·m or N]: M v̇ + b = τ.");
  m.def(
      "generalized_gravity",
      [](const mb::Model& model, Vec q, mb::Workspace* ws) {
        model.check_configuration(q);
        WorkspaceArg w(model, ws);
        return Eigen::VectorXd(mb::generalized_gravity(model, *w.ws, q));
      },
      "model"_a, "q"_a, "workspace"_a.none() = nb::none(), "Generalized gravity ∂V/∂q, shape (nv,) [N·m or N].");
  m.def(
      "frame_jacobian",
      [](const mb::Model& model, Vec q, const std::variant<int, std::string>& frame, const std::string& reference_frame,
         mb::Workspace* ws) {
        model.check_configuration(q);
        const int f = frame_of(model, frame);
        const mb::ReferenceFrame rf = parse_reference_frame(reference_frame);
        WorkspaceArg w(model, ws);
        mb::forward_kinematics(model, *w.ws, q);
        Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, model.nv());
        mb::frame_jacobian(model, *w.ws, f, rf, J);
        return J;
      },
      "model"_a, "q"_a, "frame"_a, "reference_frame"_a = "local_world_aligned", "workspace"_a.none() = nb::none(),
      "Frame Jacobian, shape (6, nv), rows [ω; v]: J v is the spatial velocity of the frame (name or index). "
      "reference_frame: 'local_world_aligned' (ω and the velocity of the frame origin, world axes), 'world' "
      "(spatial velocity in world coordinates, at the world origin), 'local' (frame axes).");
  m.def(
      "frame_pose",
      [](const mb::Model& model, Vec q, const std::variant<int, std::string>& frame, mb::Workspace* ws) {
        model.check_configuration(q);
        const int f = frame_of(model, frame);
        WorkspaceArg w(model, ws);
        mb::forward_kinematics(model, *w.ws, q);
        const mb::Frame& fr = model.frame(f);
        const math::Transform X_WF = w.ws->X_WB[fr.body] * fr.X_BF;
        Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
        T.topLeftCorner<3, 3>() = X_WF.R;
        T.topRightCorner<3, 1>() = X_WF.p;
        return T;
      },
      "model"_a, "q"_a, "frame"_a, "workspace"_a.none() = nb::none(),
      "Pose of a frame (name or index) in the world, a 4 × 4 homogeneous transform [m].");
}

}  // namespace coulomb::python
