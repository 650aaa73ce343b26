// NonMaxSuppression, RoiAlign, GridSample, StringNormalizer, TfIdfVectorizer and the random
// generators. Expected values are worked out by hand (the arithmetic is in the comments); the
// seeded random values are numpy's after np.random.seed(0).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// ---- NonMaxSuppression ----

// b0 = b3 = [0,0,2,2]; b1 = [0,1,2,3] overlaps them with IoU 2 / (4 + 4 - 2) = 1/3; b2 is apart.
const std::vector<float> kBoxes = {0, 0, 2, 2, 0, 1, 2, 3, 5, 5, 6, 6, 0, 0, 2, 2};
const std::vector<float> kScores = {0.9f, 0.8f, 0.7f, 0.95f,   // class 0
                                    0.1f, 0.6f, 0.2f, 0.3f};  // class 1

KernelTester Nms(int64_t max_boxes, float iou, float score) {
  KernelTester t("Onnx>NonMaxSuppression");
  t.Input<float>({1, 4, 4}, kBoxes).Input<float>({1, 2, 4}, kScores);
  t.Input<int64_t>({1}, {max_boxes}).Input<float>({1}, {iou}).Input<float>({1}, {score});
  return t;
}

TEST(NonMaxSuppressionTest, SuppressesByIouPerClass) {
  {
    // Class 0 in score order b3, b0 (IoU 1: out), b1 (IoU 1/3 > 0.3: out), b2. Class 1 keeps
    // scores > 0.15: b1, b3 (IoU 1/3: out), b2.
    KernelTester t = Nms(10, 0.3f, 0.15f);
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {4, 3}, {0, 0, 3, 0, 0, 2, 0, 1, 1, 0, 1, 2});
  }
  {
    // IoU 1/3 <= 0.5 keeps b1 beside b3 in class 0, and b3 beside b1 in class 1.
    KernelTester t = Nms(10, 0.5f, 0.15f);
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {6, 3}, {0, 0, 3, 0, 0, 1, 0, 0, 2, 0, 1, 1, 0, 1, 3, 0, 1, 2});
  }
  {
    KernelTester t = Nms(1, 0.5f, 0.0f);  // One box per class: its best.
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {2, 3}, {0, 0, 3, 0, 1, 1});
  }
}

TEST(NonMaxSuppressionTest, OptionalInputsAndCenterFormat) {
  {
    KernelTester t("Onnx>NonMaxSuppression");  // max_output_boxes_per_class defaults to 0.
    t.Input<float>({1, 4, 4}, kBoxes).Input<float>({1, 2, 4}, kScores);
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {0, 3}, {});
  }
  {
    // [x_center, y_center, w, h]: [1,1,2,2] and [2,1,2,2] are squares shifted by 1, IoU 1/3.
    KernelTester t("Onnx>NonMaxSuppression");
    t.Attr("center_point_box", int64_t{1});
    t.Input<float>({1, 2, 4}, {1, 1, 2, 2, 2, 1, 2, 2}).Input<float>({1, 1, 2}, {0.5f, 0.7f});
    t.Input<int64_t>({}, {5}).Input<float>({}, {0.3f}).Input<float>({}, {0.0f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {1, 3}, {0, 0, 1});
  }
  {
    KernelTester t("Onnx>NonMaxSuppression");  // A NaN score is never selected.
    t.Input<float>({1, 2, 4}, {0, 0, 1, 1, 5, 5, 6, 6}).Input<float>({1, 1, 2}, {NAN, 0.5f});
    t.Input<int64_t>({}, {5}).Input<float>({}, {0.5f}).Input<float>({}, {0.0f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {1, 3}, {0, 0, 1});
  }
  {
    KernelTester t("Onnx>NonMaxSuppression");
    t.Input<float>({1, 4, 3}, std::vector<float>(12)).Input<float>({1, 1, 4}, std::vector<float>(4));
    EXPECT_THAT(t.Run().message(), HasSubstr("boxes must be"));
  }
}

// ---- RoiAlign ----

// x[y][x] = 4y + x on a 4 x 4 plane: bilinear samples are exact, so an average of samples is
// the plane at the average sample point.
std::vector<float> Ramp4x4() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return v;
}

// Found by fuzzing: an empty plane (width 0) was sampled at offset -1. It has nothing to
// sample, so every bin is 0.
TEST(RoiAlignTest, EmptyPlaneGivesZeros) {
  KernelTester t("Onnx>RoiAlign");
  t.Attr("sampling_ratio", int64_t{2});
  t.Input<float>({1, 1, 4, 0}, {}).Input<float>({1, 4}, {0, 0, 3, 3}).Input<int64_t>({1}, {0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 1}, {0.0f});
}

TEST(RoiAlignTest, CoordinateModesAndScale) {
  {
    // half_pixel: roi [0, 2] shifts to [-0.5, 1.5]; samples at 0 and 1 on each axis:
    // mean(0, 1, 4, 5) = 2.5.
    KernelTester t("Onnx>RoiAlign");
    t.Attr("sampling_ratio", int64_t{2});
    t.Input<float>({1, 1, 4, 4}, Ramp4x4()).Input<float>({1, 4}, {0, 0, 2, 2}).Input<int64_t>({1}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 1, 1}, {2.5f});
  }
  {
    // output_half_pixel: samples at 0.5 and 1.5: the plane at (1, 1) = 5. spatial_scale 0.5
    // maps roi [0, 4] onto [0, 2].
    KernelTester t("Onnx>RoiAlign");
    t.Attr("sampling_ratio", int64_t{2}).Attr("spatial_scale", 0.5f);
    t.Attr("coordinate_transformation_mode", "output_half_pixel");
    t.Input<float>({1, 1, 4, 4}, Ramp4x4()).Input<float>({1, 4}, {0, 0, 4, 4}).Input<int64_t>({1}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 1, 1}, {5.0f});
  }
  {
    // 2 x 2 bins of roi [0, 4] with sampling_ratio 1: one sample per bin, at 1 and 3.
    KernelTester t("Onnx>RoiAlign");
    t.Attr("output_height", int64_t{2}).Attr("output_width", int64_t{2}).Attr("sampling_ratio", int64_t{1});
    t.Attr("coordinate_transformation_mode", "output_half_pixel");
    t.Input<float>({1, 1, 4, 4}, Ramp4x4()).Input<float>({1, 4}, {0, 0, 4, 4}).Input<int64_t>({1}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 2, 2}, {5, 7, 13, 15});
  }
}

TEST(RoiAlignTest, MaxModeTakesTheLargestWeightedCorner) {
  // Samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5), each between four pixels with
  // weight 1/4; the largest weighted corners are 5/4, 6/4, 9/4 and 10/4.
  KernelTester t("Onnx>RoiAlign");
  t.Attr("mode", "max").Attr("sampling_ratio", int64_t{2});
  t.Attr("coordinate_transformation_mode", "output_half_pixel");
  t.Input<float>({1, 1, 4, 4}, Ramp4x4()).Input<float>({1, 4}, {0, 0, 2, 2}).Input<int64_t>({1}, {0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 1}, {2.5f});
}

TEST(RoiAlignTest, RejectsBadBatchIndexAndNonFiniteRois) {
  {
    KernelTester t("Onnx>RoiAlign");
    t.Input<float>({1, 1, 4, 4}, Ramp4x4()).Input<float>({1, 4}, {0, 0, 2, 2}).Input<int64_t>({1}, {3});
    EXPECT_THAT(t.Run().message(), HasSubstr("batch index 3"));
  }
  {
    KernelTester t("Onnx>RoiAlign");
    t.Input<float>({1, 1, 4, 4}, Ramp4x4()).Input<float>({1, 4}, {0, 0, INFINITY, 2}).Input<int64_t>({1}, {0});
    EXPECT_THAT(t.Run().message(), HasSubstr("not finite"));
  }
}

// ---- GridSample ----

// x = [[0, 1], [2, 3]]: the value at (x, y) is 2y + x.
const std::vector<float> kPlane2x2 = {0, 1, 2, 3};

TEST(GridSampleTest, BilinearAlignCorners) {
  // align_corners: -1 and 1 are the pixel centres 0 and 1. (0, 0) -> (0.5, 0.5) = 1.5.
  KernelTester t("Onnx>GridSample");
  t.Attr("align_corners", int64_t{1});
  t.Input<float>({1, 1, 2, 2}, kPlane2x2).Input<float>({1, 1, 4, 2}, {-1, -1, 1, 1, 0, 0, 1, -1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 4}, {0, 3, 1.5f, 1});
}

TEST(GridSampleTest, PaddingModes) {
  // Without align_corners, grid 1 is pixel 1.5: zeros padding weighs pixel (1, 1) by 1/4
  // (0.75); border clamps to 1 (3); reflection about -0.5 and 1.5 stays 1.5, then clamps (3).
  // Grid 0 is pixel 0.5 in every mode: 1.5.
  const std::vector<std::pair<std::string, float>> modes = {{"zeros", 0.75f}, {"border", 3}, {"reflection", 3}};
  for (const auto& [mode, want] : modes) {
    KernelTester t("Onnx>GridSample");
    t.Attr("padding_mode", mode);
    t.Input<float>({1, 1, 2, 2}, kPlane2x2).Input<float>({1, 1, 2, 2}, {1, 1, 0, 0});
    ASSERT_OK(t.Run()) << mode;
    t.ExpectOutput<float>(0, {1, 1, 1, 2}, {want, 1.5f});
  }
}

TEST(GridSampleTest, NearestAndBicubic) {
  {
    // align_corners: (-0.1, 0.1) -> (0.45, 0.55) rounds to (0, 1): 2; (0, 0) -> (0.5, 0.5)
    // rounds half to even: (0, 0): 0.
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "nearest").Attr("align_corners", int64_t{1});
    t.Input<float>({1, 1, 2, 2}, kPlane2x2).Input<float>({1, 1, 2, 2}, {-0.1f, 0.1f, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 1, 2}, {2, 0});
  }
  {
    // Bicubic at (0.5, 0.5), A = -0.75: tap weights at t = 0.5 are -0.09375, 0.59375,
    // 0.59375, -0.09375; with zeros padding only the four pixels count:
    // 0.59375^2 * (0 + 1 + 2 + 3) = 2.115234375.
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "bicubic").Attr("align_corners", int64_t{1});
    t.Input<float>({1, 1, 2, 2}, kPlane2x2).Input<float>({1, 1, 1, 2}, {0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 1, 1}, {2.115234375f});
  }
  {
    // With border padding every tap reads the plane: a constant plane stays constant.
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "bicubic").Attr("padding_mode", "border");
    t.Input<float>({1, 1, 2, 2}, {5, 5, 5, 5}).Input<float>({1, 1, 2, 2}, {0.3f, -0.7f, 1e30f, -1e30f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 1, 2}, {5, 5});
  }
  {
    KernelTester t("Onnx>GridSample");
    t.Input<float>({1, 1, 2, 2}, kPlane2x2).Input<float>({1, 1, 1, 3}, {0, 0, 0});
    EXPECT_THAT(t.Run().message(), HasSubstr("grid must be"));
  }
}

// GridSample-20: N-D input, modes named linear, nearest and cubic.
TEST(GridSampleTest, VolumetricAndOneDimensional) {
  // x[z][y][x] = 4z + 2y + x; the grid lists (x, y, z). align_corners: -1 and 1 are pixel
  // centres 0 and 1. (0, 0, 0) -> (0.5, 0.5, 0.5): linear in each dim, 2 + 1 + 0.5 = 3.5;
  // (1, -1, 0) -> x 1, y 0, z 0.5: 1 + 0 + 2 = 3.
  const std::vector<float> cube = {0, 1, 2, 3, 4, 5, 6, 7};
  {
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "linear").Attr("align_corners", int64_t{1});
    t.Input<float>({1, 1, 2, 2, 2}, cube).Input<float>({1, 1, 1, 2, 3}, {0, 0, 0, 1, -1, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 1, 1, 2}, {3.5f, 3});
  }
  {
    // Nearest: (1, -1, 1) -> x 1, y 0, z 1: 5; (0.2, 0.2, -0.2) -> (0.6, 0.6, 0.4) -> (1, 1, 0): 3.
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "nearest").Attr("align_corners", int64_t{1});
    t.Input<float>({1, 1, 2, 2, 2}, cube).Input<float>({1, 2, 1, 1, 3}, {1, -1, 1, 0.2f, 0.2f, -0.2f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 2, 1, 1}, {5, 3});
  }
  {
    // 1-D [0, 10, 20] without align_corners: grid 0 is pixel ((0 + 1) * 3 - 1) / 2 = 1: 10;
    // grid 1 is pixel 2.5, half of pixel 2 and half of the zero past the edge: 10.
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "linear");
    t.Input<float>({1, 1, 3}, {0, 10, 20}).Input<float>({1, 2, 1}, {0, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 2}, {10, 10});
  }
  {
    // 1-D [0, 10, 20, 30], border padding, align_corners, grid 2 -> pixel 4.5 (past the end).
    // Both cubic (20) and bicubic (16) keep the point where it is and clamp each tap, as
    // PyTorch's grid_sample and ONNX Runtime do: taps 3..6 all read 30, so 30. At pixel 3.5 the
    // taps 2..5 read (20, 30, 30, 30); the weights sum to 1 and tap 2 weighs -0.09375:
    // 30 + (-0.09375) * (20 - 30) = 30.9375 (clamping the point first would give 30).
    for (const char* mode : {"cubic", "bicubic"}) {
      KernelTester t("Onnx>GridSample");
      t.Attr("mode", mode).Attr("padding_mode", "border").Attr("align_corners", int64_t{1});
      // x = (g + 1) / 2 * 3: g = 2 -> 4.5, g = 4 / 3 -> 3.5.
      t.Input<float>({1, 1, 1, 4}, {0, 10, 20, 30}).Input<float>({1, 1, 2, 2}, {2, 0, 4.0f / 3, 0});
      ASSERT_OK(t.Run());
      t.ExpectOutput<float>(0, {1, 1, 1, 2}, {30, 30.9375f});
    }
  }
  {
    // Infinite and NaN coordinates and an empty input dim read zeros (or the border), never
    // out of bounds.
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (const char* mode : {"linear", "nearest", "cubic", "bicubic"}) {
        KernelTester t("Onnx>GridSample");
        t.Attr("mode", mode).Attr("padding_mode", padding);
        t.Input<float>({1, 1, 2, 2}, {1, 1, 1, 1}).Input<float>({1, 1, 3, 2}, {inf, 0, -inf, nan, nan, 1e30f});
        ASSERT_OK(t.Run());
        KernelTester e("Onnx>GridSample");
        e.Attr("mode", mode).Attr("padding_mode", padding);
        e.Input<float>({1, 1, 0, 2}, {}).Input<float>({1, 1, 1, 2}, {0.5f, 0.5f});
        ASSERT_OK(e.Run());
        e.ExpectOutput<float>(0, {1, 1, 1, 1}, {0});
      }
    }
  }
  {
    KernelTester t("Onnx>GridSample");
    t.Attr("mode", "cubic");
    t.Input<float>({1, 1, 2, 2, 2}, cube).Input<float>({1, 1, 1, 1, 3}, {0, 0, 0});
    ExpectInvalid(t, "cubic mode needs 2-D input");
  }
}

// ---- AffineGrid ----

TEST(AffineGridTest, TwoAndThreeDims) {
  {
    // 2 x 2 pixel centres without align_corners: -0.5 and 0.5 along each dim. theta maps
    // (x, y) to (2x + 0.1, y - 1).
    KernelTester t("Onnx>AffineGrid");
    t.Input<float>({1, 2, 3}, {2, 0, 0.1f, 0, 1, -1}).Input<int64_t>({4}, {1, 1, 2, 2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 2, 2}, {-0.9f, -1.5f, 1.1f, -1.5f, -0.9f, -0.5f, 1.1f, -0.5f});
  }
  {
    // align_corners, H 1 and W 3: y is -1 (a single row), x is -1, 0, 1; identity theta.
    KernelTester t("Onnx>AffineGrid");
    t.Attr("align_corners", int64_t{1});
    t.Input<double>({1, 2, 3}, {1, 0, 0, 0, 1, 0}).Input<int64_t>({4}, {1, 3, 1, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {1, 1, 3, 2}, {-1, -1, 0, -1, 1, -1});
  }
  {
    // 3-D, D 2, H 1, W 1: centres z = -0.5, 0.5, y = x = 0; theta puts z first: (z, x, y).
    KernelTester t("Onnx>AffineGrid");
    t.Input<float>({1, 3, 4}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0}).Input<int64_t>({5}, {1, 1, 2, 1, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 1, 1, 3}, {-0.5f, 0, 0, 0.5f, 0, 0});
  }
  {
    KernelTester t("Onnx>AffineGrid");
    t.Input<float>({1, 2, 3}, std::vector<float>(6, 0.0f)).Input<int64_t>({5}, {1, 1, 2, 1, 1});
    ExpectInvalid(t, "theta must be [1, 3, 4]");
  }
  {
    KernelTester t("Onnx>AffineGrid");
    t.Input<float>({1, 2, 3}, std::vector<float>(6, 0.0f)).Input<int64_t>({4}, {1, 1, -2, 2});
    EXPECT_FALSE(t.Run().ok());
  }
}

// ---- StringNormalizer ----

std::vector<std::string> Strings(const Tensor& t) {
  std::vector<std::string> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.push_back(t.flat<tstring>()[i]);
  return v;
}

// ---- StringConcat, StringSplit, RegexFullMatch (opset 20) ----

TEST(StringConcatTest, Broadcasts) {
  KernelTester t("Onnx>StringConcat");
  t.Input<tstring>({2, 1}, {"a", "b"}).Input<tstring>({3}, {"1", "2", ""});
  ASSERT_OK(t.Run());
  EXPECT_EQ(t.output(0).shape(), TensorShape({2, 3}));
  EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"a1", "a2", "a", "b1", "b2", "b"}));
  KernelTester bad("Onnx>StringConcat");
  bad.Input<tstring>({2}, {"a", "b"}).Input<tstring>({3}, {"1", "2", "3"});
  EXPECT_FALSE(bad.Run().ok());
}

// Expected pieces are Python's: "a,b,,c".split(",") is ['a', 'b', '', 'c'], "".split(",") is
// [''], "  hello  world ".split() is ['hello', 'world'], "".split() is [], and
// " a b  c ".split(None, 1) is ['a', 'b  c '].
TEST(StringSplitTest, LikePythonsSplit) {
  {
    KernelTester t("Onnx>StringSplit");
    t.Attr("delimiter", ",").Input<tstring>({2}, {"a,b,,c", ""});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), TensorShape({2, 4}));
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"a", "b", "", "c", "", "", "", ""}));
    t.ExpectOutput<int64_t>(1, {2}, {4, 1});
  }
  {
    KernelTester t("Onnx>StringSplit");
    t.Attr("delimiter", "<>").Attr("maxsplit", int64_t{1}).Input<tstring>({1}, {"a<>b<>c"});
    ASSERT_OK(t.Run());
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"a", "b<>c"}));
  }
  {
    KernelTester t("Onnx>StringSplit");
    t.Input<tstring>({3}, {"  hello  world ", "", " a b  c "});
    ASSERT_OK(t.Run());
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"hello", "world", "", "", "", "", "a", "b", "c"}));
    t.ExpectOutput<int64_t>(1, {3}, {2, 0, 3});
  }
  {
    KernelTester t("Onnx>StringSplit");
    t.Attr("maxsplit", int64_t{1}).Input<tstring>({1}, {" a b  c "});
    ASSERT_OK(t.Run());
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"a", "b  c "}));
  }
  {
    // Unicode spaces count too: "a\u3000b\xa0c\u2009".split() is ['a', 'b', 'c']; "\u00e9" (C3 A9)
    // and "\u2010" (a hyphen, E2 80 90) are not spaces.
    KernelTester t("Onnx>StringSplit");
    t.Input<tstring>({2}, {"a\xE3\x80\x80" "b\xC2\xA0" "c\xE2\x80\x89", "\xC3\xA9 x\xE2\x80\x90y"});
    ASSERT_OK(t.Run());
    EXPECT_EQ(Strings(t.output(0)),
              (std::vector<std::string>{"a", "b", "c", "\xC3\xA9", "x\xE2\x80\x90y", ""}));
  }
  {
    KernelTester t("Onnx>StringSplit");  // Nothing to split: one more dim, of 0.
    t.Input<tstring>({2}, {" ", ""});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), TensorShape({2, 0}));
  }
}

TEST(RegexFullMatchTest, WholeStringsOnlyAndBadPatterns) {
  KernelTester t("Onnx>RegexFullMatch");
  t.Attr("pattern", "[a-z]+@[a-z]+\\.com").Input<tstring>({2, 2}, {"ab@cd.com", "ab@cd.comx", "AB@cd.com", ""});
  ASSERT_OK(t.Run());
  t.ExpectOutput<bool>(0, {2, 2}, {true, false, false, false});
  KernelTester bad("Onnx>RegexFullMatch");
  bad.Attr("pattern", "a(").Input<tstring>({1}, {"a"});
  ExpectInvalid(bad, "not valid RE2");
}

TEST(StringNormalizerTest, StopwordsAndCase) {
  {
    KernelTester t("Onnx>StringNormalizer");  // Case-insensitive by default.
    t.Attr("stopwords", std::vector<std::string>{"the"}).Attr("case_change_action", "LOWER");
    t.Input<tstring>({4}, {"Hello", "WORLD", "the", "The"});
    ASSERT_OK(t.Run());
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"hello", "world"}));
  }
  {
    KernelTester t("Onnx>StringNormalizer");
    t.Attr("stopwords", std::vector<std::string>{"the"}).Attr("case_change_action", "UPPER");
    t.Attr("is_case_sensitive", int64_t{1});
    t.Input<tstring>({1, 4}, {"Hello", "WORLD", "the", "The"});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), TensorShape({1, 3}));
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"HELLO", "WORLD", "THE"}));
  }
  {
    KernelTester t("Onnx>StringNormalizer");  // Beyond ASCII (en_US, or C.UTF-8's mapping).
    t.Attr("case_change_action", "LOWER").Attr("locale", "en_US");
    t.Input<tstring>({1}, {"\xC3\x89" "COLE"});  // "ÉCOLE"
    ASSERT_OK(t.Run());
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{"\xC3\xA9" "cole"}));
  }
}

TEST(StringNormalizerTest, EverythingDroppedAndBadShape) {
  {
    KernelTester t("Onnx>StringNormalizer");
    t.Attr("stopwords", std::vector<std::string>{"a"});
    t.Input<tstring>({1, 2}, {"a", "A"});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), TensorShape({1, 1}));
    EXPECT_EQ(Strings(t.output(0)), (std::vector<std::string>{""}));
  }
  {
    KernelTester t("Onnx>StringNormalizer");
    t.Input<tstring>({2, 1}, {"a", "b"});
    EXPECT_THAT(t.Run().message(), HasSubstr("[C] or [1, C]"));
  }
}

// ---- TfIdfVectorizer ----

// Pool: unigrams "a", "b"; bigram ("a", "b"). Input a x b a b: unigrams a 2, b 2 (counted once
// whatever the skips); bigram a-b adjacent once (3, 4), and once more with one skip (0, 2).
KernelTester TfIdf(const std::string& mode, int64_t max_skip, std::vector<float> weights = {}) {
  KernelTester t("Onnx>TfIdfVectorizer");
  t.Attr("mode", mode).Attr("min_gram_length", int64_t{1}).Attr("max_gram_length", int64_t{2});
  t.Attr("max_skip_count", max_skip).Attr("ngram_counts", std::vector<int64_t>{0, 2});
  t.Attr("ngram_indexes", std::vector<int64_t>{0, 1, 2});
  t.Attr("pool_strings", std::vector<std::string>{"a", "b", "a", "b"});
  if (!weights.empty()) t.Attr("weights", weights);
  t.Input<tstring>({5}, {"a", "x", "b", "a", "b"});
  return t;
}

TEST(TfIdfVectorizerTest, StringSkipGramsAndModes) {
  {
    KernelTester t = TfIdf("TF", 0);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {2, 2, 1});
  }
  {
    KernelTester t = TfIdf("TF", 1);
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {2, 2, 2});
  }
  {
    KernelTester t = TfIdf("IDF", 1);  // No weights: 1 where present.
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {1, 1, 1});
  }
  {
    KernelTester t = TfIdf("IDF", 1, {0.5f, 2, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {0.5f, 2, 3});
  }
  {
    KernelTester t = TfIdf("TFIDF", 1, {0.5f, 2, 3});  // Counts 2, 2, 2 times the weights.
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {1, 4, 6});
  }
}

TEST(TfIdfVectorizerTest, IntBatchWithPermutedIndexes) {
  // Unigram 1 goes to column 1 with weight 10, unigram 3 to column 0 with weight 100.
  KernelTester t("Onnx>TfIdfVectorizer");
  t.Attr("mode", "TFIDF").Attr("min_gram_length", int64_t{1}).Attr("max_gram_length", int64_t{1});
  t.Attr("max_skip_count", int64_t{0}).Attr("ngram_counts", std::vector<int64_t>{0});
  t.Attr("ngram_indexes", std::vector<int64_t>{1, 0}).Attr("pool_int64s", std::vector<int64_t>{1, 3});
  t.Attr("weights", std::vector<float>{10, 100});
  t.Input<int64_t>({2, 3}, {1, 2, 1, 3, 3, 3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2, 2}, {0, 20, 300, 0});
}

TEST(TfIdfVectorizerTest, RejectsInconsistentAttrs) {
  KernelTester t("Onnx>TfIdfVectorizer");
  t.Attr("mode", "TF").Attr("min_gram_length", int64_t{1}).Attr("max_gram_length", int64_t{1});
  t.Attr("max_skip_count", int64_t{0}).Attr("ngram_counts", std::vector<int64_t>{0});
  t.Attr("ngram_indexes", std::vector<int64_t>{0}).Attr("pool_int64s", std::vector<int64_t>{1, 3});
  t.Input<int32_t>({2}, {1, 3});
  EXPECT_THAT(t.Run().message(), HasSubstr("the pool holds 2 n-grams but ngram_indexes has 1"));
}

// ---- Random generators ----

TEST(RandomTest, SeededDrawsAreNumpys) {
  {
    // np.random.seed(0); np.random.uniform(0, 1, 3)
    KernelTester t("Onnx>RandomUniform");
    t.Attr("seed", 0.0f).Attr("shape", std::vector<int64_t>{3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {0.5488135f, 0.71518937f, 0.60276338f});
  }
  {
    // np.random.seed(0); np.random.normal(1, 2, 3) = 1 + 2 * [1.76405235, 0.40015721, 0.97873798]
    KernelTester t("Onnx>RandomNormal");
    t.Attr("seed", 0.0f).Attr("mean", 1.0f).Attr("scale", 2.0f).Attr("dtype", DT_DOUBLE);
    t.Attr("shape", std::vector<int64_t>{3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {3}, {4.5281047, 1.80031442, 2.95747596});
  }
  {
    // Uniform draws 0.549, 0.715, 0.603, 0.545, 0.424 against p: 1 where draw < p.
    KernelTester t("Onnx>Bernoulli");
    t.Attr("seed", 0.0f).Attr("dtype", DT_BOOL);
    t.Input<float>({5}, {0.6f, 0.5f, 0.7f, 0.0f, 1.0f});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {5}, {true, false, true, false, true});
  }
}

TEST(RandomTest, LikeShapesRangesAndErrors) {
  {
    KernelTester t("Onnx>RandomUniformLike");  // Unseeded: in [low, high), the input's shape.
    t.Attr("dtype", DT_FLOAT).Attr("low", -3.0f).Attr("high", -1.0f);
    t.Input<int32_t>({2, 5}, std::vector<int32_t>(10));
    ASSERT_OK(t.Run());
    ASSERT_EQ(t.output(0).shape(), TensorShape({2, 5}));
    for (int i = 0; i < 10; ++i) {
      const float v = t.output(0).flat<float>()[i];
      EXPECT_TRUE(v >= -3.0f && v < -1.0f) << v;
    }
  }
  {
    KernelTester t("Onnx>RandomNormalLike");  // Seeded: the same values on every run.
    t.Attr("dtype", DT_FLOAT).Attr("seed", 42.0f);
    t.Input<float>({4}, std::vector<float>(4));
    ASSERT_OK(t.Run());
    ASSERT_OK(t.Run());
    KernelTester u("Onnx>RandomNormalLike");
    u.Attr("dtype", DT_FLOAT).Attr("seed", 42.0f);
    u.Input<float>({4}, std::vector<float>(4));
    ASSERT_OK(u.Run());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(t.output(0).flat<float>()[i], u.output(0).flat<float>()[i]);
  }
  {
    KernelTester t("Onnx>Bernoulli");
    t.Attr("dtype", DT_FLOAT);
    t.Input<float>({2}, {0.5f, 1.5f});
    EXPECT_THAT(t.Run().message(), HasSubstr("probabilities must be in [0, 1]"));
  }
  {
    KernelTester t("Onnx>RandomUniform");
    t.Attr("shape", std::vector<int64_t>{2, -1});
    EXPECT_THAT(t.Run().message(), HasSubstr("shape dims must be >= 0"));
  }
}

}  // namespace
}  // namespace sluice
