// Internal helpers shared by the library's sources (not installed).
#pragma once

#include <charconv>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

namespace coulomb::util {

/// A number for an error message: 10 significant digits, "nan" / "inf" as the stream writes them.
inline std::string format_number(double x) {
  std::ostringstream os;
  os.precision(10);
  os << x;
  return os.str();
}

/// Parses one number of a model or scene file in the C locale (std::from_chars): decimal or
/// scientific notation, a leading '+', "nan" and "inf" (so that loaders can report them as not
/// finite rather than as garbage). A magnitude beyond double's range ("1e999", "-1e999") reads as
/// ±infinity, to be reported as not finite too. Returns false if `token` is not one number.
inline bool parse_number(std::string_view token, double& out) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  if (token.empty()) return false;
  const char* last = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), last, out);
  if (ec == std::errc::result_out_of_range) {
    out = token.front() == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return ptr == last;
  }
  return ec == std::errc() && ptr == last;
}

/// The byte offset of the first byte of `s` that does not belong to a well-formed UTF-8
/// sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF), or std::string::npos
/// when `s` is valid UTF-8. Names and paths reach JSON writers, which require UTF-8.
inline std::size_t invalid_utf8_offset(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    std::size_t length = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + length > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return i;
    for (std::size_t k = 2; k < length; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += length;
  }
  return std::string::npos;
}

}  // namespace coulomb::util
