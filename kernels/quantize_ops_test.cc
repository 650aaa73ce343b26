// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv. Expected values are worked out by hand in the comments.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(QuantizeLinearTest, RoundsHalfToEvenThenSaturates) {
  // x / 2 = 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 500, -50 rounds to 0, 2, 2, 0, -2, -2, 500, -50;
  // plus 10, clamped to [0, 255].
  KernelTester t("Onnx>QuantizeLinear");
  t.Input<float>({8}, {1, 3, 5, -1, -3, -5, 1000, -100}).Input<float>({}, {2}).Input<uint8_t>({}, {10});
  t.Attr("T2", DT_UINT8);
  ASSERT_OK(t.Run());
  t.ExpectOutput<uint8_t>(0, {8}, {10, 12, 12, 10, 8, 8, 255, 0});
}

TEST(QuantizeLinearTest, Int8SaturatesAtBothEnds) {
  // round(127.5) = 128 -> 127; round(126.5) = 126 -> 125; round(-127.5) = -128 -> -129 -> -128;
  // 200 -> 199 -> 127; round(-0.5) = 0 -> -1.
  KernelTester t("Onnx>QuantizeLinear");
  t.Input<float>({5}, {127.5f, 126.5f, -127.5f, 200, -0.5f}).Input<float>({}, {1}).Input<int8_t>({}, {-1});
  t.Attr("T2", DT_INT8);
  ASSERT_OK(t.Run());
  t.ExpectOutput<int8_t>(0, {5}, {127, 125, -128, 127, -1});
}

TEST(QuantizeLinearTest, WithoutZeroPointGivesUint8AndInt32InputDividesExactly) {
  // 5 / 2 = 2.5 -> 2; 7 / 2 = 3.5 -> 4; -7 / 2 -> -4 -> 0.
  KernelTester t("Onnx>QuantizeLinear");
  t.Input<int32_t>({3}, {5, 7, -7}).Input<float>({}, {2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<uint8_t>(0, {3}, {2, 4, 0});
}

TEST(QuantizeLinearTest, PerAxisScalesAndZeroPoints) {
  {
    // axis 1: columns use (1, 0), (2, 1), (4, 2). Row 1: -3 -> 0 (saturated), 5/2 = 2.5 -> 2 + 1,
    // 10/4 = 2.5 -> 2 + 2.
    KernelTester t("Onnx>QuantizeLinear");
    t.Input<float>({2, 3}, {1, 2, 4, -3, 5, 10}).Input<float>({3}, {1, 2, 4}).Input<uint8_t>({3}, {0, 1, 2});
    t.Attr("T2", DT_UINT8);
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint8_t>(0, {2, 3}, {1, 2, 3, 0, 3, 4});
  }
  {
    // axis -2 (rows), scales 1 and 10: 25/10 = 2.5 -> 2, 35/10 = 3.5 -> 4.
    KernelTester t("Onnx>QuantizeLinear");
    t.Input<float>({2, 3}, {1, 2, 3, 10, 25, 35}).Input<float>({2}, {1, 10});
    t.Attr("axis", int64_t{-2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint8_t>(0, {2, 3}, {1, 2, 3, 1, 2, 4});
  }
}

TEST(QuantizeLinearTest, RejectsMismatchedParameters) {
  {
    KernelTester t("Onnx>QuantizeLinear");
    t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2}, {1, 2});  // axis 1 has 3
    ExpectInvalid(t, "quantization parameters for axis 1");
  }
  {
    KernelTester t("Onnx>QuantizeLinear");
    t.Input<float>({3}, {1, 2, 3}).Input<float>({}, {1}).Input<uint8_t>({2}, {0, 0});
    t.Attr("T2", DT_UINT8);
    ExpectInvalid(t, "does not match the scale");
  }
  {
    KernelTester t("Onnx>QuantizeLinear");
    t.Input<float>({3}, {1, 2, 3}).Input<float>({}, {1}).Input<int8_t>({}, {0});
    t.Attr("T2", DT_UINT8);
    ExpectInvalid(t, "y_zero_point is int8");
  }
}

TEST(DequantizeLinearTest, PerTensorAndPerAxis) {
  {
    // (x + 1) * 0.5
    KernelTester t("Onnx>DequantizeLinear");
    t.Input<int8_t>({3}, {-128, 0, 127}).Input<float>({}, {0.5f}).Input<int8_t>({}, {-1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {-63.5f, 0.5f, 64.0f});
  }
  {
    // axis 0 of [2, 2]: row 0 (x - 10) * 2, row 1 (x - 20) * 0.25.
    KernelTester t("Onnx>DequantizeLinear");
    t.Input<uint8_t>({2, 2}, {10, 255, 0, 24}).Input<float>({2}, {2, 0.25f}).Input<uint8_t>({2}, {10, 20});
    t.Attr("axis", int64_t{0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {0, 490, -5, 1});
  }
}

// ONNX 21's blocked quantization: axis 1 of a [2, 4] input in blocks of 2, so the scale is
// [2, 2], one per row and block. Row 0 scales 1, 2: 1, 2 | 6/2, 8/2; row 1 scales 4, 0.5:
// 10/4 = 2.5 -> 2, 14/4 = 3.5 -> 4 | 1/0.5, 3/0.5.
TEST(QuantizeLinearTest, BlockedScalesAndZeroPoints) {
  KernelTester t("Onnx>QuantizeLinear");
  t.Input<float>({2, 4}, {1, 2, 6, 8, 10, 14, 1, 3})
      .Input<float>({2, 2}, {1, 2, 4, 0.5f})
      .Input<int16_t>({2, 2}, {0, 100, -1, 0});
  t.Attr("T2", DT_INT16).Attr("block_size", int64_t{2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int16_t>(0, {2, 4}, {1, 2, 103, 104, 1, 3, 2, 6});

  // A last block shorter than block_size: axis 1 has 3, blocks of 2 make 2 blocks.
  KernelTester odd("Onnx>QuantizeLinear");
  odd.Input<float>({1, 3}, {2, 4, 9}).Input<float>({1, 2}, {2, 3});
  odd.Attr("block_size", int64_t{2});
  ASSERT_OK(odd.Run());
  odd.ExpectOutput<uint8_t>(0, {1, 3}, {1, 2, 3});

  KernelTester bad("Onnx>QuantizeLinear");
  bad.Input<float>({1, 4}, {1, 2, 3, 4}).Input<float>({1, 3}, {1, 1, 1});
  bad.Attr("block_size", int64_t{2});
  ExpectInvalid(bad, "ceil(dim / block_size)");
}

// int4 saturates at [-8, 7] after the zero point; 8-bit floats round to nearest even and
// `saturate` decides what 1000 (beyond E4M3FN's 448) becomes: 448 (0x7e) or NaN (0x7f).
TEST(QuantizeLinearTest, Int4AndFloat8Outputs) {
  KernelTester t("Onnx>QuantizeLinear");
  t.Input<float>({4}, {3, 20, -20, 5}).Input<float>({}, {2}).Input<int4>({}, {int4(1)});
  t.Attr("T2", DT_INT4);
  ASSERT_OK(t.Run());
  std::vector<int> got;
  for (int4 v : t.output(0).flat<int4>()) got.push_back(v);
  EXPECT_EQ(got, (std::vector<int>{3, 7, -8, 3}));  // 1.5 -> 2 + 1; 2.5 -> 2 + 1

  for (bool saturate : {true, false}) {
    KernelTester f("Onnx>QuantizeLinear");
    f.Input<float>({2}, {2, 2000}).Input<float>({}, {2});
    f.Attr("T2", DT_FLOAT8_E4M3FN).Attr("saturate", saturate);
    ASSERT_OK(f.Run());
    EXPECT_EQ(f.output(0).flat<float8_e4m3fn>()[0].bits, 0x38);  // 1.0
    EXPECT_EQ(f.output(0).flat<float8_e4m3fn>()[1].bits, saturate ? 0x7e : 0x7f);
  }
}

// y takes the scale's type; 8-bit float inputs need no zero point (0 if given).
TEST(DequantizeLinearTest, HalfScalesFloat8AndBlocked) {
  {
    KernelTester t("Onnx>DequantizeLinear");
    t.Input<float8_e4m3fn>({2}, {float8_e4m3fn::FromBits(0x38), float8_e4m3fn::FromBits(0xb0)})
        .Input<half>({}, {half(3.0f)});
    ASSERT_OK(t.Run());
    ASSERT_EQ(t.output(0).dtype(), DT_HALF);
    EXPECT_EQ(static_cast<float>(t.output(0).flat<half>()[0]), 3.0f);
    EXPECT_EQ(static_cast<float>(t.output(0).flat<half>()[1]), -1.5f);
  }
  {
    KernelTester t("Onnx>DequantizeLinear");
    t.Input<float8_e5m2>({1}, {float8_e5m2::FromBits(0x3c)})
        .Input<float>({}, {2})
        .Input<float8_e5m2>({}, {float8_e5m2::FromBits(0x3c)});
    ExpectInvalid(t, "must be 0");
  }
  {
    // [1, 4] in blocks of 2 along axis 1: (x - zp) * scale per block.
    KernelTester t("Onnx>DequantizeLinear");
    t.Input<uint4>({1, 4}, {uint4(1), uint4(15), uint4(8), uint4(0)})
        .Input<float>({1, 2}, {0.5f, 2})
        .Input<uint4>({1, 2}, {uint4(1), uint4(8)});
    t.Attr("block_size", int64_t{2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 4}, {0, 7, 0, -16});
  }
}

TEST(DynamicQuantizeLinearTest, RangeIncludesZero) {
  {
    // min -10, max 245: scale 255 / 255 = 1, zero point 10; y = round_even(x) + 10.
    KernelTester t("Onnx>DynamicQuantizeLinear");
    t.Input<float>({5}, {-10, 245, 0.5f, 1.5f, 100.5f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint8_t>(0, {5}, {0, 255, 10, 12, 110});
    t.ExpectOutput<float>(1, {}, {1.0f});
    t.ExpectOutput<uint8_t>(2, {}, {10});
  }
  {
    // All positive: the range starts at 0, so the zero point is 0.
    KernelTester t("Onnx>DynamicQuantizeLinear");
    t.Input<float>({3}, {2.5f, 5.5f, 255});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint8_t>(0, {3}, {2, 6, 255});
    t.ExpectOutput<uint8_t>(2, {}, {0});
  }
  {
    // All zero: scale 0 and zero point 0 rather than a division by zero.
    KernelTester t("Onnx>DynamicQuantizeLinear");
    t.Input<float>({2}, {0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint8_t>(0, {2}, {0, 0});
    t.ExpectOutput<float>(1, {}, {0.0f});
  }
}

TEST(MatMulIntegerTest, PerRowAndPerColumnZeroPoints) {
  // A - [1, 2] per row = [[0, 1, 2], [2, 3, 4]]; B - [1, 0] per column = [[0, -1], [1, 0], [-4, 4]].
  // Row 0: [1 - 8, 8]; row 1: [3 - 16, -2 + 16].
  KernelTester t("Onnx>MatMulInteger");
  t.Input<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6})
      .Input<int8_t>({3, 2}, {1, -1, 2, 0, -3, 4})
      .Input<uint8_t>({2}, {1, 2})
      .Input<int8_t>({2}, {1, 0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {2, 2}, {-7, 8, -13, 14});
}

TEST(MatMulIntegerTest, BroadcastsBatchesAndRejectsBadShapes) {
  {
    // [2, 1, 2] x [2, 1]: [1*5 + 2*6], [3*5 + 4*6].
    KernelTester t("Onnx>MatMulInteger");
    t.Input<uint8_t>({2, 1, 2}, {1, 2, 3, 4}).Input<uint8_t>({2, 1}, {5, 6});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 1, 1}, {17, 39});
  }
  {
    KernelTester t("Onnx>MatMulInteger");
    t.Input<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<uint8_t>({2, 1}, {5, 6});
    ExpectInvalid(t, "inner dimensions differ");
  }
}

// ONNX 21's float16 scales: numpy forms a_scale * b_scale / y_scale in float16, rounding each
// step. With 0.3, 0.3 and 0.7 (as halves: 0.300048828125, 0.300048828125, 0.7001953125)
// that is 0.128540039... in half (0.12857... in float), so acc 35 gives 4.4989 -> 4, where
// float scales would give 4.5002 -> 5.
TEST(QLinearMatMulTest, HalfScalesMultiplyInHalf) {
  KernelTester t("Onnx>QLinearMatMul");
  t.Input<int8_t>({1, 1}, {35})
      .Input<half>({}, {half(0.3f)})
      .Input<int8_t>({}, {0})
      .Input<int8_t>({1, 1}, {1})
      .Input<half>({}, {half(0.3f)})
      .Input<int8_t>({}, {0})
      .Input<half>({}, {half(0.7f)})
      .Input<uint8_t>({}, {0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<uint8_t>(0, {1, 1}, {4});
}

TEST(QLinearMatMulTest, RequantizesWithRoundingHalfToEven) {
  // a - 10 = [[0, 10], [20, 0]], b - 1 = [2, -2]: acc = [-20, 40]; times 0.5 * 2 / 8:
  // -2.5 -> -2, 5 -> 5; plus 100.
  KernelTester t("Onnx>QLinearMatMul");
  t.Input<uint8_t>({2, 2}, {10, 20, 30, 10})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<int8_t>({2, 1}, {3, -1})
      .Input<float>({}, {2})
      .Input<int8_t>({}, {1})
      .Input<float>({}, {8})
      .Input<uint8_t>({}, {100});
  ASSERT_OK(t.Run());
  t.ExpectOutput<uint8_t>(0, {2, 1}, {98, 105});
}

TEST(ConvIntegerTest, PaddingReadsAsTheZeroPoint) {
  // x - 1 = [[0, 1], [2, 3]]; 1x1 weights minus per-channel zero points: 2 and 3; one row and
  // one column of padding in front.
  KernelTester t("Onnx>ConvInteger");
  t.Input<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4})
      .Input<uint8_t>({2, 1, 1, 1}, {3, 5})
      .Input<uint8_t>({}, {1})
      .Input<uint8_t>({2}, {1, 2});
  t.Attr("pads", std::vector<int64_t>{1, 1, 0, 0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {1, 2, 3, 3}, {0, 0, 0, 0, 0, 2, 0, 4, 6, 0, 0, 0, 0, 0, 3, 0, 6, 9});
}

TEST(ConvIntegerTest, RejectsAZeroPointPerInputChannel) {
  KernelTester t("Onnx>ConvInteger");
  t.Input<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4})
      .Input<uint8_t>({1, 1, 1, 1}, {3})
      .Input<uint8_t>({2}, {1, 1})
      .Input<uint8_t>({}, {0});
  ExpectInvalid(t, "x_zero_point must hold one value");
}

TEST(QLinearConvTest, BiasAndPerChannelWeightScales) {
  // x - 10 = [2, 4]; channel 0: ([2, 4] * 1 + 1) * 0.5 * 1 = [1.5, 2.5] -> [2, 2];
  // channel 1: ([2, 4] * -2 + 3) * 0.5 * 0.25 = [-0.125, -0.625] -> [0, -1]; plus 128.
  KernelTester t("Onnx>QLinearConv");
  t.Input<uint8_t>({1, 1, 1, 2}, {12, 14})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<int8_t>({2, 1, 1, 1}, {1, -2})
      .Input<float>({2}, {1, 0.25f})
      .Input<int8_t>({2}, {0, 0})
      .Input<float>({}, {1})
      .Input<uint8_t>({}, {128})
      .Input<int32_t>({2}, {1, 3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<uint8_t>(0, {1, 2, 1, 2}, {130, 130, 128, 127});
}

}  // namespace
}  // namespace sluice
