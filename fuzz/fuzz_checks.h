// What every harness checks of an input its loader ACCEPTED (fuzz/*_fuzzer.cc): an accepted model
// must be usable, so a non-finite total mass, mass matrix or generalized gravity at the neutral
// configuration (or at a scene's q0, v0) is a wrongly accepted input; the harness aborts so that
// libFuzzer records it.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

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

}  // namespace coulomb::fuzz
