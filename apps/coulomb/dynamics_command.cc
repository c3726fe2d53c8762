// `coulomb dynamics`: joint-space dynamics terms of a URDF model at one state.
//
// Prints the mass matrix M(q), the bias forces b(q, v) = C(q, v) v + ∂V/∂q (Coriolis,
// centrifugal and gravity) and the inverse dynamics τ = M(q) v̇ + b(q, v), either as a table
// or, with --json, as the object documented in ARCHITECTURE.md ("Contracts"):
//   {"dof_names":[...], "mass_matrix":[[...]], "bias":[...], "inverse_dynamics":[...],
//    "total_mass":x, ...}
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "state_options.h"
#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace coulomb::cli {

namespace {

constexpr const char* kFooter = R"(Coordinates (the model's own order; --json reports position_names and dof_names):
  The tree is numbered depth-first from the root link, children in the order the URDF
  declares their joints. Fixed joints are welded away and have no coordinates.
  revolute/continuous joint: 1 coordinate named by the URDF joint, q [rad], v [rad/s],
      vdot [rad/s^2], force [N*m].
  prismatic joint: 1 coordinate, q [m], v [m/s], vdot [m/s^2], force [N].
  floating base (--floating; joint 'root_joint', coordinates root_joint.x ... ): 7 positions
      q = [x, y, z, qw, qx, qy, qz]: position [m] of the root link frame in the world and
      its orientation as a quaternion (w first; normalized before use, must be non-zero),
      and 6 velocities v = [wx, wy, wz, vx, vy, vz]: the angular velocity of the root link
      [rad/s] and the velocity [m/s] of its origin, both in world-frame components (not the
      root link frame); vdot: their time derivatives, world frame [rad/s^2, m/s^2];
      forces [N*m, N]. A URDF joint of type 'floating' has the same 7 + 6 coordinates, for
      its child link relative to the joint frame and expressed in it.
  Defaults: q = neutral configuration (zeros, identity quaternion), v = 0, vdot = 0.

Output:
  mass_matrix       M(q), nv x nv, symmetric [kg*m^2, kg*m or kg by coordinate pair]
  bias              b(q, v) = C(q, v) v + dV/dq, nv [N*m or N]; gravity (0, 0, -9.81) m/s^2
  inverse_dynamics  tau = M(q) vdot + b(q, v), nv [N*m or N] (joint damping and friction
                    are not included)
  total_mass        sum of all link masses [kg] (links without <inertial> are massless)

Examples:
  coulomb dynamics kuka_iiwa_robot.urdf --q 0,0.1,-0.2,0.3,0,0,0 --v 0,0,0,0,0,0,1
  coulomb dynamics a1.urdf --floating --q=0,0,0.3,1,0,0,0,0,0.8,-1.6,0,0.8,-1.6,0,0.8,-1.6,0,0.8,-1.6 --json)";

/// x right-aligned in `width` characters, always preceded by at least one space.
std::string num(double x, int width = 16, int precision = 9) {
  std::ostringstream os;
  os << ' ' << std::setw(width - 1) << std::setprecision(precision) << x;
  return os.str();
}

struct DynamicsOptions {
  std::string model_path;
  bool floating = false;
  bool json = false;
  std::string q, v, vdot;
  CLI::Option* q_opt = nullptr;
  CLI::Option* v_opt = nullptr;
  CLI::Option* vdot_opt = nullptr;
};

int run_dynamics(const DynamicsOptions& opt) {
  io::UrdfOptions urdf_options;
  urdf_options.floating = opt.floating;
  const io::UrdfModel urdf = io::load_urdf(opt.model_path, urdf_options);
  print_warnings_and_notes(urdf.warnings, urdf.notes);
  const multibody::Model& model = urdf.model;

  const Eigen::VectorXd q = state_vector(opt.q_opt, opt.q, "--q", model.neutral_configuration(),
                                         "configuration coordinates (nq)", model.position_names());
  const Eigen::VectorXd zeros = Eigen::VectorXd::Zero(model.nv());
  const Eigen::VectorXd v =
      state_vector(opt.v_opt, opt.v, "--v", zeros, "velocity coordinates (nv)", model.dof_names());
  const Eigen::VectorXd vdot =
      state_vector(opt.vdot_opt, opt.vdot, "--vdot", zeros, "velocity coordinates (nv)", model.dof_names());
  check_configuration(model, q, "--q");
  model.check_velocity(v, "--v");
  model.check_velocity(vdot, "--vdot");

  multibody::Workspace ws(model);
  const Eigen::MatrixXd M = multibody::crba(model, ws, q);
  const Eigen::VectorXd bias = multibody::bias_forces(model, ws, q, v);
  const Eigen::VectorXd tau = multibody::rnea(model, ws, q, v, vdot);
  check_finite_result(M, "mass_matrix", model.dof_names(), "--q", opt.model_path);
  check_finite_result(bias, "bias", model.dof_names(), "--q, --v", opt.model_path);
  check_finite_result(tau, "inverse_dynamics", model.dof_names(), "--q, --v, --vdot", opt.model_path);

  if (opt.json) {
    nlohmann::ordered_json out;
    out["dof_names"] = model.dof_names();
    std::vector<std::vector<double>> rows;
    for (Eigen::Index i = 0; i < M.rows(); ++i) rows.push_back(to_std(M.row(i).transpose()));
    out["mass_matrix"] = rows;
    out["bias"] = to_std(bias);
    out["inverse_dynamics"] = to_std(tau);
    out["total_mass"] = model.total_mass();
    out["model"] = model.name();
    out["file"] = opt.model_path;
    out["floating"] = opt.floating;
    out["nq"] = model.nq();
    out["nv"] = model.nv();
    out["position_names"] = model.position_names();
    out["q"] = to_std(q);
    out["v"] = to_std(v);
    out["vdot"] = to_std(vdot);
    out["gravity"] = to_std(model.gravity());
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }

  std::cout << "model       " << model.name() << "  (" << opt.model_path << ")\n"
            << "base        " << (opt.floating ? "floating (root_joint)" : "fixed") << ",  nq = " << model.nq()
            << ",  nv = " << model.nv() << "\n"
            << "total mass  " << std::setprecision(10) << model.total_mass() << " kg\n"
            << "gravity     (" << model.gravity().x() << ", " << model.gravity().y() << ", "
            << model.gravity().z() << ") m/s^2\n\n";

  const std::vector<DofInfo> info = dof_info(model);
  if (model.nq() != model.nv()) {
    std::cout << "floating-joint positions (q):\n";
    for (const multibody::Body& body : model.bodies()) {
      if (body.joint.type != multibody::JointType::kFloating && body.joint.type != multibody::JointType::kBall) continue;
      const bool ball = body.joint.type == multibody::JointType::kBall;
      for (int k = 0; k < body.joint.nq; ++k) {
        const int i = body.joint.q_index + k;
        std::cout << "  " << std::left << std::setw(24) << model.position_names()[i] << std::right << num(q[i])
                  << (!ball && k < 3 ? "  m" : "") << "\n";
      }
    }
    std::cout << "\n";
  }

  size_t name_width = 4;
  for (const std::string& n : model.dof_names()) name_width = std::max(name_width, n.size());
  std::cout << std::left << std::setw(static_cast<int>(name_width)) << "dof" << "  unit" << std::right
            << std::setw(16) << "q" << std::setw(16) << "v" << std::setw(16) << "vdot" << std::setw(16) << "bias"
            << std::setw(16) << "tau" << "\n";
  for (int i = 0; i < model.nv(); ++i) {
    std::cout << std::left << std::setw(static_cast<int>(name_width)) << model.dof_names()[i] << "  "
              << std::setw(4) << info[i].unit << std::right
              << (info[i].q_index >= 0 ? num(q[info[i].q_index]) : std::string(15, ' ') + "-") << num(v[i])
              << num(vdot[i]) << num(bias[i]) << num(tau[i]) << "\n";
  }
  std::cout << "(unit rad: q rad, v rad/s, vdot rad/s^2, bias and tau N*m;"
               " unit m: m, m/s, m/s^2, N)\n"
               "bias = C(q,v) v + dV/dq;  tau = M(q) vdot + bias  (joint damping not included)\n\n";

  std::cout << "mass matrix M(q) (" << model.nv() << " x " << model.nv() << ", rows and columns in dof order):\n";
  for (Eigen::Index i = 0; i < M.rows(); ++i) {
    for (Eigen::Index k = 0; k < M.cols(); ++k) std::cout << num(M(i, k), 14, 6);
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

Command add_dynamics_command(CLI::App& app) {
  auto opt = std::make_shared<DynamicsOptions>();
  CLI::App* sub = app.add_subcommand(
      "dynamics",
      "Mass matrix M(q), bias forces b(q,v) = C(q,v)v + dV/dq and inverse dynamics tau = M(q)vdot + b of a URDF "
      "model at one state (q, v, vdot).");
  sub->add_option("MODEL", opt->model_path, "URDF file of the model (relative mesh paths and package:// URIs "
                                            "resolve against its directory, then COULOMB_MODEL_PATH)")
      ->required();
  sub->add_flag("--floating", opt->floating,
                "Attach the root link to the world with a floating joint 'root_joint' (nq += 7, nv += 6) "
                "instead of welding it");
  opt->q_opt = sub->add_option("--q", opt->q,
                               "Configuration: nq comma-separated values in position_names order [rad for "
                               "revolute, m for prismatic; floating base x,y,z [m], qw,qx,qy,qz]. Default: "
                               "neutral configuration (zeros, identity quaternion)");
  opt->v_opt = sub->add_option("--v", opt->v,
                               "Velocity: nv comma-separated values in dof_names order [rad/s or m/s; floating "
                               "base wx,wy,wz [rad/s] and vx,vy,vz [m/s] of the root link origin, world frame]. Default: zeros");
  opt->vdot_opt = sub->add_option("--vdot", opt->vdot,
                                  "Acceleration: nv comma-separated values in dof_names order [rad/s^2 or "
                                  "m/s^2; floating base angular then linear, world frame]. Default: zeros");
  sub->add_flag("--json", opt->json,
                "Print one JSON object: dof_names, mass_matrix, bias, inverse_dynamics, total_mass [kg], plus "
                "model, file, floating, nq, nv, position_names, q, v, vdot, gravity");
  sub->footer(kFooter);
  return Command{sub, [opt]() { return run_dynamics(*opt); }};
}

}  // namespace coulomb::cli
