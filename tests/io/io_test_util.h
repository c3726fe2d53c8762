// Independent truths for the loader tests: file text read with regular expressions, and
// rotations written out element by element, so that no library code is used to check itself.
#pragma once

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <Eigen/Core>

namespace coulomb::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The file text without XML comments.
inline std::string text_without_comments(const std::string& path) {
  return std::regex_replace(read_text(path), std::regex("<!--[\\s\\S]*?-->"), "");
}

/// Sum of every <mass value="..."> in a URDF file (comments removed), independent of the loader.
inline double mass_sum_from_text(const std::string& path) {
  const std::string text = text_without_comments(path);
  const std::regex re("<mass\\s+value\\s*=\\s*\"([^\"]+)\"");
  double sum = 0.0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    sum += std::stod((*it)[1].str());
  return sum;
}

/// R = Rz(yaw) Ry(pitch) Rx(roll), written out element by element (independent of the library).
inline Eigen::Matrix3d rpy_by_hand(double r, double p, double y) {
  Eigen::Matrix3d Rx, Ry, Rz;
  Rx << 1, 0, 0, 0, std::cos(r), -std::sin(r), 0, std::sin(r), std::cos(r);
  Ry << std::cos(p), 0, std::sin(p), 0, 1, 0, -std::sin(p), 0, std::cos(p);
  Rz << std::cos(y), -std::sin(y), 0, std::sin(y), std::cos(y), 0, 0, 0, 1;
  return Rz * Ry * Rx;
}

/// Sets an environment variable for the scope of a test, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace coulomb::testing
