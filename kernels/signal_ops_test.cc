// DFT (radix-2 and Bluestein lengths, onesided, inverse, dft_length), STFT and
// MelWeightMatrix. Expected values are worked out by hand.
#include <cmath>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(DftTest, RealInputPowerOfTwo) {
  // DFT of [1, 2, 3, 4]: [10, -2 + 2i, -2, -2 - 2i].
  KernelTester t("Onnx>DFT");
  t.Input<float>({1, 4, 1}, {1, 2, 3, 4});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
}

TEST(DftTest, OnesidedAndInverse) {
  {
    KernelTester t("Onnx>DFT");
    t.Attr("onesided", int64_t{1}).Input<float>({1, 4, 1}, {1, 2, 3, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 3, 2}, {10, 0, -2, 2, -2, 0});
  }
  {
    KernelTester t("Onnx>DFT");  // Back to [1, 2, 3, 4], scaled by 1/4.
    t.Attr("inverse", int64_t{1}).Input<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0});
  }
}

TEST(DftTest, OddLengthThroughDftLength) {
  // dft_length 3 truncates [1, 2, 3, 4] to [1, 2, 3]: X0 = 6, X1 = 1 + 2w + 3w^2 with
  // w = exp(-2 pi i / 3) = -1/2 - (sqrt 3 / 2) i: -3/2 + (sqrt 3 / 2) i; X2 = conj X1.
  const float h = 0.8660254f;
  KernelTester t("Onnx>DFT");
  t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {3}).ArgSizes({1, 1, 0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 3, 2}, {6, 0, -1.5f, h, -1.5f, -h});
}

TEST(DftTest, ZeroPadsAndTransformsAlongAxis) {
  {
    // dft_length 5 pads [1, 1] with three zeros: X_k = 1 + w^k, w = exp(-2 pi i / 5).
    KernelTester t("Onnx>DFT");
    t.Input<double>({1, 2, 1}, {1, 1}).Input<int32_t>({}, {5}).ArgSizes({1, 1, 0});
    ASSERT_OK(t.Run());
    std::vector<double> want;
    for (int k = 0; k < 5; ++k) {
      want.push_back(1 + std::cos(-2 * M_PI * k / 5));
      want.push_back(std::sin(-2 * M_PI * k / 5));
    }
    t.ExpectOutput<double>(0, {1, 5, 2}, want);
  }
  {
    // axis 2 of [1, 2, 2, 1]: each row [a, b] becomes [a + b, a - b].
    KernelTester t("Onnx>DFT");
    t.Attr("axis", int64_t{2}).Input<float>({1, 2, 2, 1}, {1, 2, 5, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 2, 2}, {3, 0, -1, 0, 8, 0, 2, 0});
  }
}

// DFT-20's axis input overrides the attr; -2 is the last signal dim.
TEST(DftTest, AxisAsAnInput) {
  {
    // axis -2 of [1, 2, 2, 1] is dim 2: each row [a, b] becomes [a + b, a - b].
    KernelTester t("Onnx>DFT");
    t.Input<float>({1, 2, 2, 1}, {1, 2, 5, 3}).Input<int64_t>({}, {-2}).ArgSizes({1, 0, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 2, 2}, {3, 0, -1, 0, 8, 0, 2, 0});
  }
  {
    // axis 1 with dft_length 2: columns [1, 5] and [2, 3] become [6, -4] and [5, -1].
    KernelTester t("Onnx>DFT");
    t.Attr("axis", int64_t{2}).Input<float>({1, 2, 2, 1}, {1, 2, 5, 3}).Input<int64_t>({}, {2});
    t.Input<int64_t>({}, {1}).ArgSizes({1, 1, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 2, 2}, {6, 0, 5, 0, -4, 0, -1, 0});
  }
  {
    KernelTester t("Onnx>DFT");
    t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {-1}).ArgSizes({1, 0, 1});
    ExpectInvalid(t, "is not a signal dim");
  }
}

TEST(DftTest, RejectsBadParameters) {
  {
    KernelTester t("Onnx>DFT");
    t.Attr("axis", int64_t{2}).Input<float>({1, 4, 1}, {1, 2, 3, 4});
    ExpectInvalid(t, "is not a signal dim");
  }
  {
    KernelTester t("Onnx>DFT");
    t.Input<float>({1, 4, 3}, std::vector<float>(12, 0));
    ExpectInvalid(t, "1 or 2");
  }
  {
    KernelTester t("Onnx>DFT");
    t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {0}).ArgSizes({1, 1, 0});
    ExpectInvalid(t, "positive integer");
  }
}

TEST(StftTest, FramesWithAndWithoutWindow) {
  {
    // Frames [1, 2] and [3, 4] (step 2, length 2); a 2-point DFT is [a + b, a - b].
    KernelTester t("Onnx>STFT");
    t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {2}).Input<int64_t>({}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0});
  }
  {
    // Window [1, 0.5] (frame_length agrees), step 1: frames [1, 1], [2, 1.5], [3, 2].
    KernelTester t("Onnx>STFT");
    t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int32_t>({}, {1}).Input<float>({2}, {1, 0.5f});
    t.Input<int32_t>({}, {2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 3, 2, 2}, {2, 0, 0, 0, 3.5f, 0, 0.5f, 0, 5, 0, 1, 0});
  }
}

TEST(StftTest, RejectsFramesLongerThanTheSignalAndDisagreeingLengths) {
  {
    KernelTester t("Onnx>STFT");
    t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {1}).Input<int64_t>({}, {8});
    ExpectInvalid(t, "shorter than a frame");
  }
  {
    KernelTester t("Onnx>STFT");
    t.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {1}).Input<float>({2}, {1, 1});
    t.Input<int64_t>({}, {3});
    ExpectInvalid(t, "differs from the window's length");
  }
}

TEST(MelWeightMatrixTest, MatchesTheOnnxExample) {
  // 8 mel bins over 0-4096 Hz of a 16-point DFT at 8192 Hz: the 10 mel-spaced edges snap to
  // DFT bins 0, 0, 0, 1, 1, 2, 3, 4, 5, 6 (floor(17 * hz / 8192)), so every triangle is a
  // single 1 at its center bin.
  KernelTester t("Onnx>MelWeightMatrix");
  t.Input<int32_t>({}, {8}).Input<int32_t>({}, {16}).Input<int32_t>({}, {8192});
  t.Input<float>({}, {0}).Input<float>({}, {4096});
  ASSERT_OK(t.Run());
  std::vector<float> want(9 * 8, 0.0f);
  for (auto [bin, mel] : std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}}) {
    want[bin * 8 + mel] = 1.0f;
  }
  t.ExpectOutput<float>(0, {9, 8}, want);
}

}  // namespace
}  // namespace sluice
