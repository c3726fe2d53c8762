// State vectors on the command line (state_options.h) and parse_number_list (commands.h).
#include "state_options.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "commands.h"

namespace coulomb::cli {

std::vector<double> parse_number_list(const std::string& text, const std::string& option) {
  std::vector<double> values;
  if (text.find_first_not_of(" \t") == std::string::npos) return values;
  std::istringstream in(text);
  std::string entry;
  int position = 0;
  while (std::getline(in, entry, ',')) {
    ++position;
    const auto first = entry.find_first_not_of(" \t");
    const auto last = entry.find_last_not_of(" \t");
    std::string_view token;
    if (first != std::string::npos) token = std::string_view(entry).substr(first, last - first + 1);
    if (!token.empty() && token.front() == '+') token.remove_prefix(1);
    double x = 0.0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), x);
    if (token.empty() || ec != std::errc() || ptr != token.data() + token.size())
      throw std::invalid_argument(option + ": value " + std::to_string(position) + " is not a number: '" + entry +
                                  "' (expected comma-separated numbers)");
    if (!std::isfinite(x))
      throw std::invalid_argument(option + ": value " + std::to_string(position) + " is not finite: '" + entry + "'");
    values.push_back(x);
  }
  if (!text.empty() && text.back() == ',')
    throw std::invalid_argument(option + ": value " + std::to_string(position + 1) +
                                " is empty (trailing comma in '" + text + "')");
  return values;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<double> to_std(const Eigen::VectorXd& x) { return {x.data(), x.data() + x.size()}; }

void check_finite_result(const Eigen::MatrixXd& x, const std::string& what, const std::vector<std::string>& names,
                         const std::string& inputs, const std::string& model_file) {
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      if (std::isfinite(x(i, j))) continue;
      std::ostringstream message;
      if (!model_file.empty()) message << model_file << ": ";
      message << what << "[" << (i < static_cast<Eigen::Index>(names.size()) ? names[i] : std::to_string(i)) << "]";
      if (x.cols() > 1) message << "[" << (j < static_cast<Eigen::Index>(names.size()) ? names[j] : std::to_string(j)) << "]";
      message << " = " << x(i, j) << " is not finite: the values given to " << inputs
              << (model_file.empty() ? "" : ", or the model's masses, inertias or lengths,")
              << " are too large for the result to be represented in double precision";
      throw std::runtime_error(message.str());
    }
}

Eigen::VectorXd state_vector(const CLI::Option* opt, const std::string& text, const std::string& option,
                             const Eigen::VectorXd& fallback, const std::string& what,
                             const std::vector<std::string>& names) {
  if (opt->count() == 0) return fallback;
  const std::vector<double> values = parse_number_list(text, option);
  if (static_cast<Eigen::Index>(values.size()) != fallback.size())
    throw std::invalid_argument(option + " has " + std::to_string(values.size()) + " value" +
                                (values.size() == 1 ? "" : "s") + " but the model has " +
                                std::to_string(fallback.size()) + " " + what + " (" + join_names(names) + ")");
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

void check_configuration(const multibody::Model& model, const Eigen::VectorXd& q, const std::string& option) {
  try {
    model.check_configuration(q);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(option + ": " + e.what());
  }
}

std::vector<DofInfo> dof_info(const multibody::Model& model) {
  std::vector<DofInfo> info(model.nv());
  for (const multibody::Body& body : model.bodies()) {
    const multibody::Joint& j = body.joint;
    if (j.nv == 0) continue;
    if (j.type == multibody::JointType::kFloating) {
      for (int k = 0; k < 6; ++k) info[j.v_index + k] = {-1, k < 3 ? "rad" : "m"};
    } else if (j.type == multibody::JointType::kBall) {
      for (int k = 0; k < 3; ++k) info[j.v_index + k] = {-1, "rad"};
    } else {
      info[j.v_index] = {j.q_index, j.type == multibody::JointType::kPrismatic ? "m" : "rad"};
    }
  }
  return info;
}

}  // namespace coulomb::cli
