// What every harness checks of an input its loader ACCEPTED (fuzz/*_fuzzer.cc): an accepted model
// must be usable, so a non-finite total mass, mass matrix or generalized gravity at the neutral
// configuration (or at a scene's q0, v0) is a wrongly accepted input; the harness aborts so that
// libFuzzer records it.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string>

#include <Eigen/Core>

#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/model.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/multibody/workspace.h"

namespace coulomb::fuzz {

[[noreturn]] inline void accepted_but(const char* what) {
  std::fprintf(stderr, "wrongly accepted input: %s\n", what);
  std::abort();
}

/// Aborts unless the model's mass, its mass matrix M(q) and its generalized gravity g(q) are
/// finite at q (and q, v are finite).
inline void check_accepted_model(const multibody::Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (!std::isfinite(model.total_mass()) || model.total_mass() < 0.0) accepted_but("total mass not finite or negative");
  if (q.size() != model.nq() || v.size() != model.nv()) accepted_but("q or v of the wrong size");
  if (!q.allFinite() || !v.allFinite()) accepted_but("q or v not finite");
  multibody::Workspace ws(model);
  if (!multibody::crba(model, ws, q).allFinite()) accepted_but("mass matrix not finite");
  if (!multibody::generalized_gravity(model, ws, q).allFinite()) accepted_but("generalized gravity not finite");
}

inline void check_accepted_model(const multibody::Model& model) {
  check_accepted_model(model, model.neutral_configuration(), Eigen::VectorXd::Zero(model.nv()));
}

// Strict mode, COULOMB_FUZZ_STRICT set in the environment (scripts/fuzz.sh sets it unless
// FUZZ_STRICT=0): the house rule wants every user error reported as the loader's documented error,
// naming the file. In that mode an exception other than the loader's documented error types (a
// std::out_of_range from a container, a yaml-cpp or builder exception that does not name the file)
// aborts, so that libFuzzer records the input, and so does a documented error whose message does
// not contain `source` (the file name given to the loader).
inline bool strict_mode() {
  static const bool strict = std::getenv("COULOMB_FUZZ_STRICT") != nullptr;
  return strict;
}

/// A documented rejection: in strict mode, aborts unless e.what() contains one of `sources`.
inline void check_rejection_names_source(const std::exception& e, std::initializer_list<const char*> sources) {
  if (!strict_mode()) return;
  const std::string what = e.what();
  for (const char* source : sources)
    if (what.find(source) != std::string::npos) return;
  std::fprintf(stderr, "error message without the file name: %s\n", e.what());
  std::abort();
}

/// An exception that is not the loader's documented error: aborts in strict mode.
inline void unexpected_exception(const std::exception& e) {
  if (!strict_mode()) return;
  std::fprintf(stderr, "undocumented exception: %s\n", e.what());
  std::abort();
}

}  // namespace coulomb::fuzz
