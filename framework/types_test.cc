#include "framework/types.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Bit patterns worked out by hand from each format's definition (sign, exponent with bias,
// mantissa; the OCP 8-bit float spec's tables and ONNX's Cast-19 table), not from the code
// under test. 2^-9 is E4M3FN's smallest subnormal (2^(1-7) * 2^-3), 2^-10 E4M3FNUZ's,
// 2^-16 E5M2's, 2^-17 E5M2FNUZ's.
struct Float8Case {
  float value;
  uint8_t saturated;
  uint8_t unsaturated;
};

void CheckEncodings(Float8Format f, const std::vector<Float8Case>& cases, const char* name) {
  for (const auto& c : cases) {
    EXPECT_EQ(Float8FromFloat(f, c.value, true), c.saturated) << name << " " << c.value << " saturate";
    EXPECT_EQ(Float8FromFloat(f, c.value, false), c.unsaturated) << name << " " << c.value;
  }
}

TEST(Float8Test, E4M3FNEncodings) {
  CheckEncodings(Float8Format::kE4M3FN,
                 {{0.0f, 0x00, 0x00},
                  {-0.0f, 0x80, 0x80},
                  {1.0f, 0x38, 0x38},          // exponent 7 (bias 7), mantissa 0
                  {-1.0f, 0xb8, 0xb8},
                  {0.5f, 0x30, 0x30},
                  {1.125f, 0x39, 0x39},
                  {1.0625f, 0x38, 0x38},       // halfway 1.0 / 1.125: to the even mantissa
                  {1.1875f, 0x3a, 0x3a},       // halfway 1.125 / 1.25: to the even mantissa
                  {448.0f, 0x7e, 0x7e},        // the largest finite value, 1.75 * 2^8
                  {464.0f, 0x7e, 0x7e},        // halfway to 480 rounds to even (448)
                  {470.0f, 0x7e, 0x7f},        // beyond: clamps, or NaN
                  {-1e6f, 0xfe, 0xff},
                  {kInf, 0x7e, 0x7f},
                  {-kInf, 0xfe, 0xff},
                  {0.015625f, 0x08, 0x08},     // 2^-6, the smallest normal
                  {0.001953125f, 0x01, 0x01},  // 2^-9, the smallest subnormal
                  {0.0009765625f, 0x00, 0x00}, // 2^-10: halfway to 0, even
                  {0.00146484375f, 0x01, 0x01},  // 1.5 * 2^-10 rounds up
                  {-1e-7f, 0x80, 0x80},
                  {kNaN, 0x7f, 0x7f}},
                 "e4m3fn");
}

TEST(Float8Test, E4M3FNUZEncodings) {
  CheckEncodings(Float8Format::kE4M3FNUZ,
                 {{0.0f, 0x00, 0x00},
                  {-0.0f, 0x00, 0x00},         // no negative zero
                  {1.0f, 0x40, 0x40},          // bias 8
                  {-1.0f, 0xc0, 0xc0},
                  {240.0f, 0x7f, 0x7f},        // 1.875 * 2^7, the largest
                  {-240.0f, 0xff, 0xff},
                  {244.0f, 0x7f, 0x7f},        // rounds down to 240
                  {248.0f, 0x7f, 0x80},        // halfway to 256: the even side overflows
                  {300.0f, 0x7f, 0x80},
                  {kInf, 0x7f, 0x80},
                  {-kInf, 0xff, 0x80},
                  {0.0009765625f, 0x01, 0x01},  // 2^-10
                  {-1e-7f, 0x00, 0x00},
                  {kNaN, 0x80, 0x80}},
                 "e4m3fnuz");
}

TEST(Float8Test, E5M2Encodings) {
  CheckEncodings(Float8Format::kE5M2,
                 {{0.0f, 0x00, 0x00},
                  {-0.0f, 0x80, 0x80},
                  {1.0f, 0x3c, 0x3c},          // bias 15
                  {-2.0f, 0xc0, 0xc0},
                  {1.125f, 0x3c, 0x3c},        // halfway 1.0 / 1.25: even
                  {1.375f, 0x3e, 0x3e},        // halfway 1.25 / 1.5: even
                  {57344.0f, 0x7b, 0x7b},      // 1.75 * 2^15, the largest
                  {61440.0f, 0x7b, 0x7c},      // halfway to 2^16: rounds to inf unless saturating
                  {-1e6f, 0xfb, 0xfc},
                  {kInf, 0x7b, 0x7c},
                  {-kInf, 0xfb, 0xfc},
                  {0.0000152587890625f, 0x01, 0x01},  // 2^-16
                  {kNaN, 0x7f, 0x7f}},
                 "e5m2");
}

TEST(Float8Test, E5M2FNUZEncodings) {
  CheckEncodings(Float8Format::kE5M2FNUZ,
                 {{0.0f, 0x00, 0x00},
                  {-0.0f, 0x00, 0x00},
                  {1.0f, 0x40, 0x40},          // bias 16
                  {57344.0f, 0x7f, 0x7f},      // 1.75 * 2^15
                  {-57344.0f, 0xff, 0xff},
                  {1e6f, 0x7f, 0x80},
                  {kInf, 0x7f, 0x80},
                  {0.00000762939453125f, 0x01, 0x01},  // 2^-17
                  {kNaN, 0x80, 0x80}},
                 "e5m2fnuz");
}

TEST(Float8Test, Decodings) {
  EXPECT_EQ(Float8ToFloat(Float8Format::kE4M3FN, 0x7e), 448.0f);
  EXPECT_EQ(Float8ToFloat(Float8Format::kE4M3FN, 0x01), 0.001953125f);
  EXPECT_EQ(Float8ToFloat(Float8Format::kE4M3FN, 0xb8), -1.0f);
  EXPECT_TRUE(std::signbit(Float8ToFloat(Float8Format::kE4M3FN, 0x80)));
  EXPECT_TRUE(std::isnan(Float8ToFloat(Float8Format::kE4M3FN, 0xff)));
  EXPECT_EQ(Float8ToFloat(Float8Format::kE4M3FNUZ, 0x7f), 240.0f);
  EXPECT_TRUE(std::isnan(Float8ToFloat(Float8Format::kE4M3FNUZ, 0x80)));
  EXPECT_EQ(Float8ToFloat(Float8Format::kE5M2, 0x7c), kInf);
  EXPECT_EQ(Float8ToFloat(Float8Format::kE5M2, 0xfc), -kInf);
  EXPECT_TRUE(std::isnan(Float8ToFloat(Float8Format::kE5M2, 0x7d)));
  EXPECT_EQ(Float8ToFloat(Float8Format::kE5M2, 0x7b), 57344.0f);
  EXPECT_EQ(Float8ToFloat(Float8Format::kE5M2FNUZ, 0x7f), 57344.0f);
  EXPECT_EQ(Float8ToFloat(Float8Format::kE5M2FNUZ, 0x01), 0.00000762939453125f);
  EXPECT_TRUE(std::isnan(Float8ToFloat(Float8Format::kE5M2FNUZ, 0x80)));
}

// Every finite pattern survives a trip through float.
TEST(Float8Test, EveryFinitePatternRoundTrips) {
  for (Float8Format f : {Float8Format::kE4M3FN, Float8Format::kE4M3FNUZ, Float8Format::kE5M2,
                         Float8Format::kE5M2FNUZ}) {
    for (int b = 0; b < 256; ++b) {
      const float v = Float8ToFloat(f, static_cast<uint8_t>(b));
      if (!std::isfinite(v)) continue;
      EXPECT_EQ(Float8FromFloat(f, v, false), b) << static_cast<int>(f) << " " << b;
    }
  }
}

TEST(Int4Test, ConstructionSaturates) {
  EXPECT_EQ(static_cast<int>(int4(-9)), -8);
  EXPECT_EQ(static_cast<int>(int4(7)), 7);
  EXPECT_EQ(static_cast<int>(int4(100)), 7);
  EXPECT_EQ(static_cast<int>(uint4(-1)), 0);
  EXPECT_EQ(static_cast<int>(uint4(15)), 15);
  EXPECT_EQ(static_cast<int>(uint4(16)), 15);
}

TEST(DataTypeTest, NewTypesHaveTensorFlowsNamesAndOneByte) {
  for (auto [dt, name] : std::vector<std::pair<DataType, std::string>>{{DT_FLOAT8_E5M2, "float8_e5m2"},
                                                                      {DT_FLOAT8_E4M3FN, "float8_e4m3fn"},
                                                                      {DT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz"},
                                                                      {DT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz"},
                                                                      {DT_INT4, "int4"},
                                                                      {DT_UINT4, "uint4"}}) {
    EXPECT_EQ(DataTypeString(dt), name);
    EXPECT_EQ(*DataTypeFromString(name), dt);
    EXPECT_EQ(DataTypeSize(dt), 1u) << name;
    EXPECT_TRUE(DataTypeIsSupported(dt)) << name;
  }
  EXPECT_EQ(static_cast<int>(DT_FLOAT8_E5M2), 24);
  EXPECT_EQ(static_cast<int>(DT_UINT4), 30);
  EXPECT_TRUE(DataTypeIsFloating(DT_FLOAT8_E4M3FN));
  EXPECT_TRUE(DataTypeIsInteger(DT_INT4));
  EXPECT_FALSE(DataTypeIsSupported(DT_FLOAT8_E4M3B11FNUZ));
}

}  // namespace
}  // namespace sluice
