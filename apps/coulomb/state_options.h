// State vectors on the command line, shared by the subcommands that take a robot state
// (`coulomb dynamics`, `coulomb id`): comma-separated lists checked against the model's sizes,
// with errors that name the option, the expected count and the coordinate names.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "coulomb/multibody/model.h"

namespace coulomb::cli {

/// "a, b, c".
std::string join_names(const std::vector<std::string>& names);

/// The values of `x` as a std::vector (for JSON output).
std::vector<double> to_std(const Eigen::VectorXd& x);

/// The vector given to option `option` (its text `text`, parsed by parse_number_list), or
/// `fallback` when the option was not given (opt->count() == 0). Throws std::invalid_argument
/// naming the option, the given count and the expected one ("--q has 3 values but the model has
/// 7 configuration coordinates (nq) (a, b, ...)"): `what` describes the coordinates, `names`
/// lists them.
Eigen::VectorXd state_vector(const CLI::Option* opt, const std::string& text, const std::string& option,
                             const Eigen::VectorXd& fallback, const std::string& what,
                             const std::vector<std::string>& names);

/// model.check_configuration(q) with its message prefixed by `option` ("--q: ...").
void check_configuration(const multibody::Model& model, const Eigen::VectorXd& q, const std::string& option);

/// Throws std::runtime_error if an entry of the result `x` (a vector of `names.size()` entries
/// or a matrix of that many rows) is not finite, naming the output (`what`), the entry and the
/// options it was computed from (`inputs`, e.g. "--q, --v, --vdot"): finite inputs can
/// overflow (|v| ~ 1e308 squares to infinity), and NaN must never be printed as a result.
/// With `model_file` (the model the result was computed for), the message starts with it and
/// names the model's mass properties as the other possible cause (a link of 1e308 kg: m g
/// overflows at any state).
void check_finite_result(const Eigen::MatrixXd& x, const std::string& what, const std::vector<std::string>& names,
                         const std::string& inputs, const std::string& model_file = "");

/// Per velocity coordinate: the index of its position coordinate (−1 for floating joints) and
/// its unit, "rad" (revolute, continuous, the angular part of a floating joint) or "m"
/// (prismatic, the linear part of a floating joint).
struct DofInfo {
  int q_index = -1;
  const char* unit = "rad";
};
std::vector<DofInfo> dof_info(const multibody::Model& model);

}  // namespace coulomb::cli
