// Internal helpers shared by the library's sources (not installed).
#pragma once

#include <algorithm>
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

/// A point for an error message: "(x, y, z)", each coordinate as format_number writes it.
inline std::string format_point(double x, double y, double z) {
  return "(" + format_number(x) + ", " + format_number(y) + ", " + format_number(z) + ")";
}

/// Parses one number of a model or scene file in the C locale (std::from_chars): decimal or
/// scientific notation, a leading '+', "nan" and "inf" (so that loaders can report them as not
/// finite rather than as garbage). A magnitude beyond double's range ("1e999", "-1e999") reads as
/// ±infinity, to be reported as not finite too; a magnitude below its smallest subnormal
/// ("1e-400", "-0.0000…1e-320") reads as ±0, as strtod rounds it. Returns false if `token` is not
/// one number.
inline bool parse_number(std::string_view token, double& out) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  if (token.empty()) return false;
  const char* last = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), last, out);
  if (ec == std::errc::result_out_of_range) {
    // from_chars reports overflow and underflow alike. The decimal exponent k of the leading
    // significant digit (value = d.ddd × 10^k) tells them apart: |k| > 300 here, so its sign does.
    const bool negative = token.front() == '-';
    std::string_view s = negative ? token.substr(1) : token;
    const std::size_t e = s.find_first_of("eE");
    const std::string_view mantissa = s.substr(0, e);
    long long k = 0;
    const std::size_t point = std::min(mantissa.find('.'), mantissa.size());
    const std::size_t first = mantissa.find_first_of("123456789");
    if (first != std::string_view::npos) {
      k = first < point ? static_cast<long long>(point - first) - 1 : -static_cast<long long>(first - point);
    }
    if (e != std::string_view::npos) {
      std::string_view exponent = s.substr(e + 1);
      bool exponent_negative = false;
      if (!exponent.empty() && (exponent.front() == '-' || exponent.front() == '+')) {
        exponent_negative = exponent.front() == '-';
        exponent.remove_prefix(1);
      }
      long long value = 0;
      for (const char c : exponent) value = std::min(value * 10 + (c - '0'), 1000000000LL);  // clamp
      k += exponent_negative ? -value : value;
    }
    const double magnitude = k < 0 ? 0.0 : std::numeric_limits<double>::infinity();
    out = negative ? -magnitude : magnitude;
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
