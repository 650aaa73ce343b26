// DeformConv: offsets move each tap's sample (bilinear, zero outside), mask scales it, and
// offset groups give channels their own offsets. Expected values are worked out by hand.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

// x = [[0, 1], [2, 3]]: the value at (y, x) is 2y + x inside, 0 outside.
const std::vector<float> kPlane = {0, 1, 2, 3};

TEST(DeformConvTest, OffsetsMaskAndBias) {
  // 1x1 kernel of weight 2. Offsets (dy, dx) per output point: (0.5, 0.5) at (0, 0) samples
  // (0.5, 0.5) = 1.5; (0, 0.5) at (0, 1) samples (0, 1.5), half of 1 and half of the zero
  // past the edge = 0.5; (-1, 0) at (1, 0) samples (0, 0) = 0; none at (1, 1): 3.
  // Times 2, times mask [1, 1, 1, 0.5], plus bias 1: 4, 2, 1, 4.
  KernelTester t("Onnx>DeformConv");
  t.Input<float>({1, 1, 2, 2}, kPlane).Input<float>({1, 1, 1, 1}, {2});
  t.Input<float>({1, 2, 2, 2}, {0.5f, 0, -1, 0, 0.5f, 0.5f, 0, 0});
  t.Input<float>({1}, {1}).Input<float>({1, 1, 2, 2}, {1, 1, 1, 0.5f}).ArgSizes({1, 1, 1, 1, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 2, 2}, {4, 2, 1, 4});
}

TEST(DeformConvTest, OffsetGroups) {
  // Two channels, [[0, 1], [2, 3]] and [[4, 5], [6, 7]], weights 1 and 10; offset group 0
  // (channel 0) stays put, group 1 (channel 1) reads one pixel to the right: [[5, 0], [7, 0]].
  // y = channel 0 + 10 * shifted channel 1 = [50, 1, 72, 3].
  KernelTester t("Onnx>DeformConv");
  t.Attr("offset_group", int64_t{2});
  t.Input<float>({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}).Input<float>({1, 2, 1, 1}, {1, 10});
  std::vector<float> offset(16, 0.0f);
  for (int i = 12; i < 16; ++i) offset[i] = 1;  // Group 1's dx.
  t.Input<float>({1, 4, 2, 2}, offset).ArgSizes({1, 1, 1, 0, 0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 2, 2}, {50, 1, 72, 3});
}

TEST(DeformConvTest, KernelStrideAndBadShapes) {
  // A 2x2 kernel of ones over the whole plane with no offsets: one output, 0 + 1 + 2 + 3.
  {
    KernelTester t("Onnx>DeformConv");
    t.Input<double>({1, 1, 2, 2}, {0, 1, 2, 3}).Input<double>({1, 1, 2, 2}, {1, 1, 1, 1});
    t.Input<double>({1, 8, 1, 1}, std::vector<double>(8, 0.0)).ArgSizes({1, 1, 1, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {1, 1, 1, 1}, {6});
  }
  {
    KernelTester t("Onnx>DeformConv");
    t.Input<float>({1, 1, 2, 2}, kPlane).Input<float>({1, 1, 1, 1}, {2});
    t.Input<float>({1, 2, 3, 2}, std::vector<float>(12, 0.0f)).ArgSizes({1, 1, 1, 0, 0});
    ExpectInvalid(t, "offset must be [1, 2, 2, 2]");
  }
  {
    KernelTester t("Onnx>DeformConv");
    t.Input<float>({1, 1, 4}, {0, 1, 2, 3}).Input<float>({1, 1, 1}, {2});
    t.Input<float>({1, 1, 4}, std::vector<float>(4, 0.0f)).ArgSizes({1, 1, 1, 0, 0});
    EXPECT_EQ(t.Run().code(), absl::StatusCode::kUnimplemented);
  }
}

}  // namespace
}  // namespace sluice
