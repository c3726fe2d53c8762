// util::parse_number (src/util/format.h), the number reader of the URDF, MJCF, SDF and scene
// loaders: what it does at and beyond the ends of double's range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../../src/util/format.h"  // private to the library: header-only

namespace coulomb {
namespace {

double parsed(const char* token) {
  double value = 12345.0;
  EXPECT_TRUE(util::parse_number(token, value)) << token;
  return value;
}

TEST(ParseNumberTest, OverflowReadsAsSignedInfinity) {
  EXPECT_EQ(parsed("1e999"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parsed("-1e999"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(parsed("+0.001e312"), std::numeric_limits<double>::infinity());  // 1e309
  EXPECT_EQ(parsed("123456789e305"), std::numeric_limits<double>::infinity());
}

// Regression (issue 18 review): "1e-400" read as +inf, and so was reported as "not finite",
// because the reader took every out-of-range result for an overflow. It rounds to zero, as
// strtod does.
TEST(ParseNumberTest, UnderflowReadsAsSignedZero) {
  EXPECT_EQ(parsed("1e-400"), 0.0);
  EXPECT_FALSE(std::signbit(parsed("1e-400")));
  EXPECT_EQ(parsed("-1e-400"), 0.0);
  EXPECT_TRUE(std::signbit(parsed("-1e-400")));
  EXPECT_EQ(parsed("0.00001e-320"), 0.0);  // 1e-325: below the smallest subnormal
  EXPECT_EQ(parsed("99999e-330"), 0.0);    // 9.9999e-326
  EXPECT_EQ(parsed("1e-99999999999999999999"), 0.0);  // an exponent beyond long long
  EXPECT_EQ(parsed("1e+99999999999999999999"), std::numeric_limits<double>::infinity());
}

TEST(ParseNumberTest, EndsOfTheRangeAreKept) {
  EXPECT_EQ(parsed("1e-310"), 1e-310);  // subnormal
  EXPECT_EQ(parsed("1.7976931348623157e308"), std::numeric_limits<double>::max());
  EXPECT_EQ(parsed("0.0001e312"), 1e308);  // a large exponent on a small mantissa
}

TEST(ParseNumberTest, NotANumberIsRefused) {
  double value = 0.0;
  for (const char* token : {"", "+", "1e", "e5", "1.0.0", "1e-400x", "0x10", " 1"}) {
    EXPECT_FALSE(util::parse_number(token, value)) << "'" << token << "'";
  }
}

}  // namespace
}  // namespace coulomb
