// Output sizes computed from input data or attributes that overflow, or that no machine could
// hold, fail the node cleanly: before the checks, each of these wrote past a wrapped buffer,
// overflowed window geometry into oneDNN, or threw bad_alloc.
#include <cstdint>
#include <vector>

#include <cmath>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kHuge = (int64_t{1} << 62) + 16;  // Times 4 bytes wraps to 64.

void ExpectRefused(KernelTester& t) {
  absl::Status s = t.Run();
  EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument ||
              s.code() == absl::StatusCode::kResourceExhausted)
      << s;
}

TEST(SizeChecksTest, ConstantOfShapeWhoseBytesWrap) {
  KernelTester t("Onnx>ConstantOfShape");
  t.Attr("value", Tensor::Scalar<float>(1.0f)).Attr("dtype", DT_FLOAT).Input<int64_t>({1}, {kHuge});
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(SizeChecksTest, ExpandAndTileToHugeShapes) {
  {
    KernelTester t("Onnx>Expand");
    t.Input<float>({1}, {1.0f}).Input<int64_t>({1}, {kHuge});
    ExpectRefused(t);
  }
  {
    KernelTester t("Onnx>Expand");
    t.Input<float>({1, 1}, {1.0f}).Input<int64_t>({2}, {int64_t{1} << 40, int64_t{1} << 40});
    ExpectRefused(t);
  }
  {
    // 4 * 2^62 wraps to 0 in int64: the output was empty while the view read 2^62 rows.
    KernelTester t("Onnx>Tile");
    t.Input<float>({4}, {1, 2, 3, 4}).Input<int64_t>({1}, {int64_t{1} << 62});
    absl::Status s = t.Run();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("overflow"));
  }
}

TEST(SizeChecksTest, PadsThatOverflowTheDim) {
  KernelTester t("Onnx>Pad");
  t.Input<float>({2}, {1, 2}).Input<int64_t>({2}, {INT64_MAX, INT64_MAX}).ArgSizes({1, 1, 0, 0});
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(SizeChecksTest, ResizeWithHugeScales) {
  KernelTester t("Onnx>Resize");
  t.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({4}, {1, 1, 1e9f, 1e9f}).ArgSizes({1, 0, 1, 0});
  ExpectRefused(t);
  KernelTester u("Onnx>Resize");
  u.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({4}, {1, 1, 1e30f, 1}).ArgSizes({1, 0, 1, 0});
  ExpectRefused(u);
}

// Found by fuzzing: a NaN size and a roi of 1e30 reached casts to int64 (undefined behaviour).
TEST(SizeChecksTest, ResizeWithNanSizesAndHugeRois) {
  KernelTester t("Onnx>Resize");
  t.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({4}, {1, 1, std::nanf(""), 2}).ArgSizes({1, 0, 0, 1});
  ExpectRefused(t);
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    KernelTester u("Onnx>Resize");
    u.Attr("coordinate_transformation_mode", std::string("tf_crop_and_resize"))
        .Attr("mode", std::string(mode))
        .Input<float>({1, 1, 2, 2}, {1, 2, 3, 4})
        .Input<float>({8}, {0, 0, -1e30f, 0, 1, 1, 1e30f, 1})
        .Input<float>({4}, {1, 1, 2, 2})
        .ArgSizes({1, 1, 1, 0});
    EXPECT_OK(u.Run()) << mode;  // Points outside the input take the extrapolation value.
  }
}

TEST(SizeChecksTest, ConvWithPadsNear2To62) {
  KernelTester t("Onnx>Conv");
  t.Attr("pads", std::vector<int64_t>{int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62})
      .Input<float>({1, 1, 2, 2}, {1, 2, 3, 4})
      .Input<float>({1, 1, 1, 1}, {1})
      .ArgSizes({1, 1, 0, 0});
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("overflow"));
}

TEST(SizeChecksTest, ConvTransposeWithHugeStrides) {
  KernelTester t("Onnx>ConvTranspose");
  t.Attr("strides", std::vector<int64_t>{int64_t{1} << 62, 1})
      .Input<float>({1, 1, 5, 1}, {1, 2, 3, 4, 5})
      .Input<float>({1, 1, 1, 1}, {1})
      .ArgSizes({1, 1, 0});
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("overflow"));
}

TEST(SizeChecksTest, PoolWithZeroStride) {
  KernelTester t("Onnx>MaxPool");
  t.Attr("kernel_shape", std::vector<int64_t>{1, 1})
      .Attr("strides", std::vector<int64_t>{0, 1})
      .Input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(t.Run().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
