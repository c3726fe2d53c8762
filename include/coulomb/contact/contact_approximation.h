// ContactApproximation: which discrete contact model the SAP problem uses (a per-scene choice).
// A dependency-free header so that both the contact layer (ContactDefaults) and the SAP solver
// layer (SapHuntCrossleyConstraint) can name it without including each other.
#pragma once

#include <string>

namespace coulomb::contact {

/// The discrete contact model (docs/contact.md "Contact approximations"):
///  - kSap: SAP's compliant friction cone (Castro, Permenter, Han 2022; τ_d, relaxation time);
///  - kSimilar: Hunt–Crossley compliance + regularized friction coupled through
///    z = v_n − μ‖v_t‖_s (Castro, Han, Masterjohn 2023; digest contact-approximations.md);
///  - kLagged: Hunt–Crossley compliance + regularized friction bounded by the step-start normal
///    impulse n₀ (same digest).
enum class ContactApproximation { kSap, kSimilar, kLagged };

/// "sap", "similar" or "lagged".
const char* to_string(ContactApproximation approximation);

/// Inverse of to_string. Throws std::invalid_argument naming `name` for anything else.
ContactApproximation parse_contact_approximation(const std::string& name);

}  // namespace coulomb::contact
