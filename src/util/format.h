// Internal helpers shared by the library's sources (not installed).
#pragma once

#include <sstream>
#include <string>

namespace coulomb::util {

/// A number for an error message: 10 significant digits, "nan" / "inf" as the stream writes them.
inline std::string format_number(double x) {
  std::ostringstream os;
  os.precision(10);
  os << x;
  return os.str();
}

}  // namespace coulomb::util
