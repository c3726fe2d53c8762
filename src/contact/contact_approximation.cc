#include "coulomb/contact/contact_approximation.h"

#include <stdexcept>

namespace coulomb::contact {

const char* to_string(ContactApproximation approximation) {
  switch (approximation) {
    case ContactApproximation::kSap: return "sap";
    case ContactApproximation::kSimilar: return "similar";
    case ContactApproximation::kLagged: return "lagged";
  }
  return "unknown";
}

ContactApproximation parse_contact_approximation(const std::string& name) {
  if (name == "sap") return ContactApproximation::kSap;
  if (name == "similar") return ContactApproximation::kSimilar;
  if (name == "lagged") return ContactApproximation::kLagged;
  throw std::invalid_argument("unknown contact approximation '" + name + "' (expected sap, similar or lagged)");
}

}  // namespace coulomb::contact
