// Runs the `coulomb` CLI from tests: the path comes from COULOMB_CLI, else COULOMB_CLI_PATH
// (tests/CMakeLists.txt).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace coulomb::testing {

/// The `coulomb` binary: the environment variable COULOMB_CLI when set (ctest sets it, and the
/// sanitizer build points it at its instrumented CLI), else the one built with the tests.
inline const std::string kCli = [] {
  if (const char* env = std::getenv("COULOMB_CLI"); env != nullptr && *env != '\0') return std::string(env);
#ifdef COULOMB_CLI_PATH
  return std::string(COULOMB_CLI_PATH);
#else
  return std::string();
#endif
}();

/// The simulated duration (s) of a test that runs the CLI over many scenes: `normal`, or `short_`
/// when the environment variable COULOMB_TEST_SHORT is set to 1. `make test-sanitize` sets it:
/// under ASan + UBSan at -O1 the CLI steps 15–50 times slower, and the sweeps' point there is that
/// every scene loads and steps with no sanitizer report, which the first steps already show.
inline double sweep_duration(double normal, double short_) {
  const char* env = std::getenv("COULOMB_TEST_SHORT");
  return env != nullptr && std::string(env) == "1" ? short_ : normal;
}

struct RunResult {
  int status = -1;  ///< exit status (−1 if the process did not exit normally)
  std::string out;  ///< standard output
  std::string err;  ///< standard error
};

/// Whether `text` contains `what` (for checking CLI messages).
inline bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/// `s` as one single-quoted shell word.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs the CLI with `args` (each passed as one shell word), capturing both streams.
inline RunResult run_cli(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path err_file =
      fs::temp_directory_path() / ("coulomb_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string command = shell_quote(kCli);
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " 2>" + shell_quote(err_file.string());
  RunResult r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  fs::remove(err_file);
  return r;
}

}  // namespace coulomb::testing
