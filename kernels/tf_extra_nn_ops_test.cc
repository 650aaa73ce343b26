// Tests of kernels/tf_extra_nn_ops.cc (and FusedBatchNorm in tf_nn_ops.cc). Expected values are
// worked out by hand in the comments.
#include <cmath>
#include <vector>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"
#include "kernels/philox.h"

namespace sluice {
namespace {

std::vector<int64_t> Ints(std::vector<int64_t> v) { return v; }

// ---- FusedBatchNorm ----

TEST(FusedBatchNormTest, InferenceUsesGivenStatistics) {
  KernelTester t("FusedBatchNorm");
  t.Attr("is_training", false).Attr("epsilon", 0.0f);
  // x [1,1,2,2] NHWC, channel 0: {1, 3}, channel 1: {2, 4}; mean {1, 2}, variance {4, 1},
  // scale {2, 1}, offset {0, 10}: y0 = (x - 1) * 2 / 2, y1 = (x - 2) / 1 + 10.
  t.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4})
      .Input<float>({2}, {2, 1})
      .Input<float>({2}, {0, 10})
      .Input<float>({2}, {1, 2})
      .Input<float>({2}, {4, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 2, 2}, {0, 10, 2, 12});
  t.ExpectOutput<float>(1, {2}, {1, 2});
  t.ExpectOutput<float>(2, {2}, {4, 1});
  t.ExpectOutput<float>(4, {2}, {4, 1});
}

TEST(FusedBatchNormTest, TrainingUsesBatchStatistics) {
  KernelTester t("FusedBatchNorm");
  t.Attr("epsilon", 0.0f);
  // One channel {1, 3}: mean 2, biased variance 1 (y = x - 2), unbiased variance 2.
  t.Input<float>({1, 1, 2, 1}, {1, 3}).Input<float>({1}, {1}).Input<float>({1}, {0});
  t.Input<float>({0}, {}).Input<float>({0}, {});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 2, 1}, {-1, 1});
  t.ExpectOutput<float>(1, {1}, {2});
  t.ExpectOutput<float>(2, {1}, {2});
}

TEST(FusedBatchNormTest, BadShapes) {
  KernelTester t("FusedBatchNorm");
  t.Attr("is_training", false);
  t.Input<float>({1, 1, 1, 2}, {1, 2}).Input<float>({3}, {1, 1, 1}).Input<float>({2}, {0, 0});
  t.Input<float>({2}, {0, 0}).Input<float>({2}, {1, 1});
  ExpectInvalid(t, "scale must have as many values");
}

// ---- MaxPool3D / AvgPool3D ----

// x [1,2,2,2,1] holding 1..8 in (d, h, w) order.
KernelTester Pool3D(const char* op, const char* padding, std::vector<int64_t> ksize, std::vector<int64_t> strides) {
  KernelTester t(op);
  t.Attr("ksize", ksize).Attr("strides", strides).Attr("padding", std::string(padding));
  t.Input<float>({1, 2, 2, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  return t;
}

TEST(Pool3DTest, MaxAndAvgValid) {
  KernelTester m = Pool3D("MaxPool3D", "VALID", {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1});
  ASSERT_OK(m.Run());
  m.ExpectOutput<float>(0, {1, 1, 1, 1, 1}, {8});
  KernelTester a = Pool3D("AvgPool3D", "VALID", {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1});
  ASSERT_OK(a.Run());
  a.ExpectOutput<float>(0, {1, 1, 1, 1, 1}, {4.5});  // (1 + ... + 8) / 8
}

TEST(Pool3DTest, SameCountsOnlyInBoundsValues) {
  // ksize 2, stride 1, SAME: out 2x2x2, padding after. Window at (1,1,1) holds only x=8;
  // at (0,0,1): w=1 only, d,h in {0,1}: {2,4,6,8}, mean 5.
  KernelTester a = Pool3D("AvgPool3D", "SAME", {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1});
  ASSERT_OK(a.Run());
  // (d,h,w): 000 all: 4.5; 001 {2,4,6,8}: 5; 010 {3,4,7,8}: 5.5; 011 {4,8}: 6;
  // 100 {5,6,7,8}: 6.5; 101 {6,8}: 7; 110 {7,8}: 7.5; 111 {8}: 8.
  a.ExpectOutput<float>(0, {1, 2, 2, 2, 1}, {4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8});
  KernelTester m = Pool3D("MaxPool3D", "SAME", {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1});
  ASSERT_OK(m.Run());
  m.ExpectOutput<float>(0, {1, 1, 1, 1, 1}, {8});
}

TEST(Pool3DTest, BadAttrsAndShapes) {
  {
    KernelTester t = Pool3D("MaxPool3D", "VALID", {1, 2, 2, 2}, {1, 1, 1, 1, 1});
    ExpectInvalid(t, "less than the minimum 5");
  }
  {
    KernelTester t = Pool3D("MaxPool3D", "VALID", {2, 1, 1, 1, 1}, {1, 1, 1, 1, 1});
    ExpectInvalid(t, "batch and depth dimensions must be 1");
  }
  {
    KernelTester t = Pool3D("AvgPool3D", "VALID", {1, 1, 1, 1, 1}, {1, 0, 1, 1, 1});
    ExpectInvalid(t, "strides must be positive");
  }
  {
    KernelTester t = Pool3D("AvgPool3D", "VALID", {1, 3, 1, 1, 1}, {1, 1, 1, 1, 1});
    ExpectInvalid(t, "would be negative");
  }
  {
    KernelTester t("MaxPool3D");
    t.Attr("ksize", Ints({1, 1, 1, 1, 1})).Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"));
    t.Input<float>({2, 2}, {1, 2, 3, 4});
    ExpectInvalid(t, "must be 5-D");
  }
  {
    KernelTester t = Pool3D("MaxPool3D", "VALID", {1, int64_t{1} << 62, 1, 1, 1}, {1, 1, 1, 1, 1});
    ExpectInvalid(t, "would be negative");
  }
}

// ---- MaxPoolGrad / AvgPoolGrad / 3-D grads ----

TEST(MaxPoolGradTest, GradGoesToFirstMax) {
  KernelTester t("MaxPoolGrad");
  t.Attr("ksize", Ints({1, 2, 2, 1})).Attr("strides", Ints({1, 2, 2, 1})).Attr("padding", std::string("VALID"));
  // x [1,2,4,1]: windows {1,5 / 3,5} (max 5 first at index 1) and {2,0 / 7,7} (first 7 at 6).
  t.Input<float>({1, 2, 4, 1}, {1, 5, 2, 0, 3, 5, 7, 7})
      .Input<float>({1, 1, 2, 1}, {5, 7})
      .Input<float>({1, 1, 2, 1}, {10, 20});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 2, 4, 1}, {0, 10, 0, 0, 0, 0, 20, 0});
}

TEST(MaxPoolGradTest, GradShapeMustMatchOutput) {
  KernelTester t("MaxPoolGrad");
  t.Attr("ksize", Ints({1, 2, 2, 1})).Attr("strides", Ints({1, 2, 2, 1})).Attr("padding", std::string("VALID"));
  t.Input<float>({1, 2, 2, 1}, {1, 2, 3, 4}).Input<float>({1, 1, 1, 1}, {4}).Input<float>({1, 2, 1, 1}, {1, 1});
  ExpectInvalid(t, "grad has shape");
}

TEST(MaxPool3DGradTest, GradGoesToEveryMax) {
  KernelTester t("MaxPool3DGrad");
  t.Attr("ksize", Ints({1, 1, 2, 2, 1})).Attr("strides", Ints({1, 1, 2, 2, 1})).Attr("padding", std::string("VALID"));
  // One window {1, 4, 4, 2}: both 4s (within 1e-5 of the max) get the gradient 3.
  t.Input<float>({1, 1, 2, 2, 1}, {1, 4, 4, 2}).Input<float>({1, 1, 1, 1, 1}, {4}).Input<float>({1, 1, 1, 1, 1}, {3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 2, 2, 1}, {0, 3, 3, 0});
}

TEST(AvgPoolGradTest, SharesOverInBoundsInputs) {
  KernelTester t("AvgPoolGrad");
  t.Attr("ksize", Ints({1, 2, 2, 1})).Attr("strides", Ints({1, 2, 2, 1})).Attr("padding", std::string("SAME"));
  // Input 3x3, ksize 2, stride 2, SAME: out 2x2, no padding before. Windows: rows {0,1}x{0,1}
  // (4 inputs), {0,1}x{2} (2), {2}x{0,1} (2), {2}x{2} (1). grad {4, 2, 6, 1}.
  t.Input<int32_t>({4}, {1, 3, 3, 1}).Input<float>({1, 2, 2, 1}, {4, 2, 6, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 3, 3, 1}, {1, 1, 1, 1, 1, 1, 3, 3, 1});
}

TEST(AvgPoolGradTest, BadOrigShape) {
  KernelTester t("AvgPoolGrad");
  t.Attr("ksize", Ints({1, 2, 2, 1})).Attr("strides", Ints({1, 2, 2, 1})).Attr("padding", std::string("SAME"));
  t.Input<int32_t>({3}, {1, 3, 3}).Input<float>({1, 2, 2, 1}, {4, 2, 6, 1});
  ExpectInvalid(t, "orig_input_shape");
  KernelTester big("AvgPoolGrad");
  big.Attr("ksize", Ints({1, 1, 1, 1})).Attr("strides", Ints({1, 1, 1, 1})).Attr("padding", std::string("VALID"));
  // 2^31-1 ^ 3 * 4 overflows int64.
  big.Input<int32_t>({4}, {2147483647, 2147483647, 2147483647, 4}).Input<float>({1, 1, 1, 1}, {1});
  ExpectInvalid(big, "orig_input_shape");
}

TEST(AvgPool3DGradTest, SharesEqually) {
  KernelTester t("AvgPool3DGrad");
  t.Attr("ksize", Ints({1, 2, 1, 1, 1})).Attr("strides", Ints({1, 2, 1, 1, 1})).Attr("padding", std::string("VALID"));
  // Depth 2 pooled to 1: each of the two inputs gets half of 6.
  t.Input<int32_t>({5}, {1, 2, 1, 1, 1}).Input<float>({1, 1, 1, 1, 1}, {6});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 2, 1, 1, 1}, {3, 3});
}

// ---- Conv3D ----

TEST(Conv3DTest, ValidSumsTheWindow) {
  KernelTester t("Conv3D");
  t.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"));
  // x 1..8 in [1,2,2,2,1]; filter all ones [2,2,2,1,2] but output channel 1 weights 2:
  // out = {36, 72}.
  t.Input<float>({1, 2, 2, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  t.Input<float>({2, 2, 2, 1, 2}, {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 1, 2}, {36, 72});
}

TEST(Conv3DTest, SameWithTwoInputChannels) {
  KernelTester t("Conv3D");
  t.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("SAME"));
  // x [1,1,1,2,2]: pixels (1,2), (3,4). filter [1,1,2,2,1] taps w0: (1,0), w1: (0,1).
  // SAME, kw 2: pad 0 before, 1 after. out w0 = x0.c0*1 + x1.c1*1 = 1 + 4 = 5;
  // out w1 = x1.c0 = 3 (its second tap falls off the end).
  t.Input<float>({1, 1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({1, 1, 2, 2, 1}, {1, 0, 0, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 2, 1}, {5, 3});
}

TEST(Conv3DTest, BackpropsMatchHandDerivatives) {
  // y = sum over the 2-tap window along w (filter [1,1,2,1,1] = {a, b}) of x [1,1,1,3,1]:
  // y0 = a x0 + b x1, y1 = a x1 + b x2. With a = 1, b = 2, dy = {1, 10}:
  // dx = {a dy0, b dy0 + a dy1, b dy1} = {1, 12, 20};
  // with x = {1, 2, 3}: da = x0 dy0 + x1 dy1 = 21, db = x1 dy0 + x2 dy1 = 32.
  KernelTester in("Conv3DBackpropInputV2");
  in.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"));
  in.Input<int32_t>({5}, {1, 1, 1, 3, 1}).Input<float>({1, 1, 2, 1, 1}, {1, 2}).Input<float>({1, 1, 1, 2, 1}, {1, 10});
  ASSERT_OK(in.Run());
  in.ExpectOutput<float>(0, {1, 1, 1, 3, 1}, {1, 12, 20});
  KernelTester f("Conv3DBackpropFilterV2");
  f.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"));
  f.Input<float>({1, 1, 1, 3, 1}, {1, 2, 3}).Input<int32_t>({5}, {1, 1, 2, 1, 1}).Input<float>({1, 1, 1, 2, 1}, {1, 10});
  ASSERT_OK(f.Run());
  f.ExpectOutput<float>(0, {1, 1, 2, 1, 1}, {21, 32});
}

TEST(Conv3DTest, Errors) {
  {
    KernelTester t("Conv3D");
    t.Attr("strides", Ints({1, 1, 1, 1})).Attr("padding", std::string("VALID"));
    t.Input<float>({1, 1, 1, 1, 1}, {1}).Input<float>({1, 1, 1, 1, 1}, {1});
    ExpectInvalid(t, "less than the minimum 5");
  }
  {
    KernelTester t("Conv3D");
    t.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"));
    t.Input<float>({1, 1, 1, 1, 3}, {1, 2, 3}).Input<float>({1, 1, 1, 2, 1}, {1, 1});
    ExpectInvalid(t, "must be a multiple of the filter's input depth");
  }
  {
    KernelTester t("Conv3D");
    t.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"));
    t.Input<float>({1, 1, 1, 1}, {1}).Input<float>({1, 1, 1, 1, 1}, {1});
    ExpectInvalid(t, "input must be 5-D");
  }
  {
    KernelTester t("Conv3D");
    t.Attr("strides", Ints({1, 1, 1, 1, 1})).Attr("padding", std::string("VALID"))
        .Attr("data_format", std::string("NCDHW"));
    t.Input<float>({1, 1, 1, 1, 1}, {1}).Input<float>({1, 1, 1, 1, 1}, {1});
    ExpectInvalid(t, "only data_format NDHWC");
  }
}

// ---- LRN ----

TEST(LrnTest, NormalizesOverNeighbouringChannels) {
  KernelTester t("LRN");
  t.Attr("depth_radius", int64_t{1}).Attr("bias", 1.0f).Attr("alpha", 1.0f).Attr("beta", 1.0f);
  // x {1, 2, 3}: sqr_sum {1+4, 1+4+9, 4+9} = {5, 14, 13}; y = x / (1 + s) = {1/6, 2/15, 3/14}.
  t.Input<float>({1, 1, 1, 3}, {1, 2, 3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 3}, {1.0f / 6, 2.0f / 15, 3.0f / 14});
}

TEST(LrnTest, GradMatchesHandDerivative) {
  KernelTester t("LRNGrad");
  t.Attr("depth_radius", int64_t{1}).Attr("bias", 1.0f).Attr("alpha", 1.0f).Attr("beta", 1.0f);
  // x {1, 2}, radius 1: n_0 = n_1 = 1 + 1 + 4 = 6, y = x / 6 = {1/6, 1/3}. dy = {1, 0}:
  // dx_k = dy_0 ([k == 0] / 6 - 2 x_k y_0 / 6): dx_0 = 1/6 - 2/36 = 1/9, dx_1 = -4/36 = -1/9.
  t.Input<float>({1, 1, 1, 2}, {1, 0}).Input<float>({1, 1, 1, 2}, {1, 2}).Input<float>({1, 1, 1, 2}, {1.0f / 6, 1.0f / 3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 1, 2}, {1.0f / 9, -1.0f / 9});
}

TEST(LrnTest, Errors) {
  KernelTester t("LRN");
  t.Input<float>({1, 3}, {1, 2, 3});
  ExpectInvalid(t, "must be 4-D");
  KernelTester r("LRN");
  r.Attr("depth_radius", int64_t{-1}).Input<float>({1, 1, 1, 1}, {1});
  ExpectInvalid(r, "depth_radius");
  KernelTester g("LRNGrad");
  g.Input<float>({1, 1, 1, 2}, {1, 0}).Input<float>({1, 1, 1, 1}, {1}).Input<float>({1, 1, 1, 2}, {1, 1});
  ExpectInvalid(g, "must have the same shape");
}

// ---- Dilation2D ----

KernelTester Dilation(const char* op, const char* padding) {
  KernelTester t(op);
  t.Attr("strides", Ints({1, 1, 1, 1})).Attr("rates", Ints({1, 1, 1, 1})).Attr("padding", std::string(padding));
  // x [1,1,3,1] = {1, 5, 2}, filter [1,2,1] = {0, 1}.
  t.Input<float>({1, 1, 3, 1}, {1, 5, 2}).Input<float>({1, 2, 1}, {0, 1});
  return t;
}

TEST(Dilation2DTest, MaxOfInputPlusFilter) {
  // VALID: out w0 = max(1+0, 5+1) = 6, w1 = max(5+0, 2+1) = 5.
  KernelTester v = Dilation("Dilation2D", "VALID");
  ASSERT_OK(v.Run());
  v.ExpectOutput<float>(0, {1, 1, 2, 1}, {6, 5});
  // SAME: pad 0 before, 1 after; w2 = 2 + 0 (the second tap is out of bounds).
  KernelTester s = Dilation("Dilation2D", "SAME");
  ASSERT_OK(s.Run());
  s.ExpectOutput<float>(0, {1, 1, 3, 1}, {6, 5, 2});
}

TEST(Dilation2DTest, BackpropsFollowTheWinningTap) {
  // VALID winners: out0 at x1 / f1, out1 at x1 / f0. dy = {1, 10}.
  KernelTester in = Dilation("Dilation2DBackpropInput", "VALID");
  in.Input<float>({1, 1, 2, 1}, {1, 10});
  ASSERT_OK(in.Run());
  in.ExpectOutput<float>(0, {1, 1, 3, 1}, {0, 11, 0});
  KernelTester f = Dilation("Dilation2DBackpropFilter", "VALID");
  f.Input<float>({1, 1, 2, 1}, {1, 10});
  ASSERT_OK(f.Run());
  f.ExpectOutput<float>(0, {1, 2, 1}, {10, 1});
}

TEST(Dilation2DTest, Errors) {
  KernelTester t("Dilation2D");
  t.Attr("strides", Ints({1, 1, 1, 1})).Attr("rates", Ints({1, 1, 1, 1})).Attr("padding", std::string("VALID"));
  t.Input<float>({1, 1, 3, 2}, {1, 5, 2, 1, 1, 1}).Input<float>({1, 2, 1}, {0, 1});
  ExpectInvalid(t, "same depth");
  KernelTester r("Dilation2D");
  r.Attr("strides", Ints({1, 1, 1, 1})).Attr("rates", Ints({1, 0, 1, 1})).Attr("padding", std::string("VALID"));
  r.Input<float>({1, 1, 3, 1}, {1, 5, 2}).Input<float>({1, 2, 1}, {0, 1});
  ExpectInvalid(r, "rates must be positive");
  KernelTester g = Dilation("Dilation2DBackpropInput", "VALID");
  g.Input<float>({1, 1, 3, 1}, {1, 10, 1});
  ExpectInvalid(g, "out_backprop has shape");
}

// ---- CropAndResize ----

TEST(CropAndResizeTest, BilinearAndNearest) {
  // image [1,2,2,1] = {0, 1 / 2, 3}; box [0,0,1,1] at 3x3 samples y, x in {0, 0.5, 1}:
  // rows {0, 0.5, 1}, {1, 1.5, 2}, {2, 2.5, 3}.
  KernelTester t("CropAndResize");
  t.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {0, 0, 1, 1}).Input<int32_t>({1}, {0}).Input<int32_t>({2}, {3, 3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 3, 3, 1}, {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
  // Nearest at 2x2 over the box [0, 0, 0.4, 1]: y in {0, 0.4} -> rows 0, 0; x {0, 1}.
  KernelTester n("CropAndResize");
  n.Attr("method", std::string("nearest"));
  n.Input<uint8_t>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {0, 0, 0.4f, 1}).Input<int32_t>({1}, {0}).Input<int32_t>({2}, {2, 2});
  ASSERT_OK(n.Run());
  n.ExpectOutput<float>(0, {1, 2, 2, 1}, {0, 1, 0, 1});
}

TEST(CropAndResizeTest, OutOfRangeSamplesTakeExtrapolationValue) {
  // Box [0, 0, 2, 1] at 2x1 (one column: x = 0.5 * (0 + 1) * 1 = 0.5): y {0, 2}; y = 2 is out.
  // Row 0, x 0.5: (0 + 1) / 2 = 0.5.
  KernelTester t("CropAndResize");
  t.Attr("extrapolation_value", -7.0f);
  t.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {0, 0, 2, 1}).Input<int32_t>({1}, {0}).Input<int32_t>({2}, {2, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 2, 1, 1}, {0.5, -7});
  // A NaN coordinate samples nowhere.
  KernelTester nan("CropAndResize");
  nan.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {NAN, 0, 1, 1}).Input<int32_t>({1}, {0}).Input<int32_t>({2}, {1, 1});
  ASSERT_OK(nan.Run());
  nan.ExpectOutput<float>(0, {1, 1, 1, 1}, {0});
}

TEST(CropAndResizeTest, Errors) {
  {
    KernelTester t("CropAndResize");
    t.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {0, 0, 1, 1}).Input<int32_t>({1}, {1}).Input<int32_t>({2}, {2, 2});
    ExpectInvalid(t, "box_ind[0] = 1 is not in [0, 1)");
  }
  {
    KernelTester t("CropAndResize");
    t.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 3}, {0, 0, 1}).Input<int32_t>({1}, {0}).Input<int32_t>({2}, {2, 2});
    ExpectInvalid(t, "boxes must be [num_boxes, 4]");
  }
  {
    KernelTester t("CropAndResize");
    t.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {0, 0, 1, 1}).Input<int32_t>({1}, {0}).Input<int32_t>({2}, {0, 2});
    ExpectInvalid(t, "crop dimensions must be positive");
  }
  {
    KernelTester t("CropAndResize");
    t.Input<float>({1, 2, 2, 1}, {0, 1, 2, 3}).Input<float>({1, 4}, {0, 0, 1, 1}).Input<int32_t>({2}, {0, 0}).Input<int32_t>({2}, {2, 2});
    ExpectInvalid(t, "box_ind must be a vector of 1");
  }
  {
    // The output would hold 4 boxes x (2^31-1)^2 x 2 channels > 2^63 values.
    KernelTester t("CropAndResize");
    t.Input(Tensor(DT_FLOAT, TensorShape({1, 1, 1, 2})));
    t.Input<float>({4, 4}, std::vector<float>(16, 0)).Input<int32_t>({4}, {0, 0, 0, 0});
    t.Input<int32_t>({2}, {2147483647, 2147483647});
    ExpectInvalid(t, "more elements than fit in int64");
  }
}

// ---- NonMaxSuppression ----

// Boxes: 0 and 1 overlap with IoU 1/3 (unit squares offset by half), 2 is apart.
KernelTester Nms(const char* op, float iou, float score_threshold) {
  KernelTester t(op);
  t.Input<float>({3, 4}, {0, 0, 1, 1, 0, 0.5f, 1, 1.5f, 5, 5, 6, 6})
      .Input<float>({3}, {0.9f, 0.8f, 0.7f})
      .Input<int32_t>({}, {3})
      .Input<float>({}, {iou})
      .Input<float>({}, {score_threshold});
  return t;
}

TEST(NonMaxSuppressionTest, V3SuppressesOverlaps) {
  // Box 1's IoU with box 0: intersection 0.5, union 1.5: 1/3 > 0.3, suppressed.
  KernelTester t = Nms("NonMaxSuppressionV3", 0.3f, -INFINITY);
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {2}, {0, 2});
  // Score threshold 0.75 leaves boxes 0 and 1; 0.5 IoU threshold keeps both.
  KernelTester s = Nms("NonMaxSuppressionV3", 0.5f, 0.75f);
  ASSERT_OK(s.Run());
  s.ExpectOutput<int32_t>(0, {2}, {0, 1});
}

TEST(NonMaxSuppressionTest, V3IouEqualToThresholdSuppresses) {
  // TensorFlow drops a candidate whose IoU equals the threshold (ONNX keeps it).
  KernelTester t("NonMaxSuppressionV3");
  t.Input<float>({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}).Input<float>({2}, {0.5f, 0.9f}).Input<int32_t>({}, {5});
  t.Input<float>({}, {1.0f}).Input<float>({}, {-INFINITY});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {1}, {1});
}

TEST(NonMaxSuppressionTest, V4PadsAndCounts) {
  KernelTester t = Nms("NonMaxSuppressionV4", 0.3f, -INFINITY);
  t.Attr("pad_to_max_output_size", true);
  // max_output_size 3 with two selected: [0, 2, 0], valid 2.
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {3}, {0, 2, 0});
  t.ExpectOutput<int32_t>(1, {}, {2});
}

TEST(NonMaxSuppressionTest, V5SoftNmsDecaysScores) {
  KernelTester t = Nms("NonMaxSuppressionV5", 0.5f, 0.0f);
  t.Input<float>({}, {0.5f});
  // sigma 0.5: scale -1; box 1 decays by exp(-(1/3)^2) = exp(-1/9) to 0.8 * 0.894839 = 0.715871,
  // still above box 2's 0.7, so the order is 0, 1, 2.
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {3}, {0, 1, 2});
  t.ExpectOutput<float>(1, {3}, {0.9f, 0.8f * std::exp(-1.0f / 9), 0.7f});
  t.ExpectOutput<int32_t>(2, {}, {3});
}

TEST(NonMaxSuppressionTest, Errors) {
  {
    KernelTester t = Nms("NonMaxSuppressionV3", 1.5f, 0);
    ExpectInvalid(t, "iou_threshold must be in [0, 1]");
  }
  {
    KernelTester t("NonMaxSuppressionV3");
    t.Input<float>({3, 3}, std::vector<float>(9, 0)).Input<float>({3}, {1, 2, 3}).Input<int32_t>({}, {3});
    t.Input<float>({}, {0.5f}).Input<float>({}, {0.0f});
    ExpectInvalid(t, "boxes must be [num_boxes, 4]");
  }
  {
    KernelTester t("NonMaxSuppressionV3");
    t.Input<float>({1, 4}, {0, 0, 1, 1}).Input<float>({2}, {1, 2}).Input<int32_t>({}, {3});
    t.Input<float>({}, {0.5f}).Input<float>({}, {0.0f});
    ExpectInvalid(t, "scores must be a vector of 1");
  }
  {
    KernelTester t("NonMaxSuppressionV3");
    t.Input<float>({1, 4}, {0, 0, 1, 1}).Input<float>({1}, {1}).Input<int32_t>({}, {-1});
    t.Input<float>({}, {0.5f}).Input<float>({}, {0.0f});
    ExpectInvalid(t, "max_output_size must be non-negative");
  }
  {
    KernelTester t = Nms("NonMaxSuppressionV5", 0.5f, 0.0f);
    t.Input<float>({}, {-1.0f});
    ExpectInvalid(t, "soft_nms_sigma must be non-negative");
  }
}

// ---- Multinomial ----

TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  // Random123's kat_vectors for philox4x32_10.
  Philox4x32 zero({0, 0, 0, 0}, 0, 0);
  EXPECT_EQ(zero.Next(), (Philox4x32::Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  Philox4x32 ones({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffu, 0xffffffffu);
  EXPECT_EQ(ones.Next(), (Philox4x32::Block{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  Philox4x32 pi({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(pi.Next(), (Philox4x32::Block{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(MultinomialTest, SeededDrawsRepeatAndFollowTheDistribution) {
  // logits log([0.1, 0.0, 0.9]) (class 1 impossible: -inf), 4000 samples.
  auto make = [] {
    KernelTester t("Multinomial");
    t.Attr("seed", int64_t{7}).Attr("seed2", int64_t{49}).Attr("output_dtype", DT_INT32);
    t.Input<float>({1, 3}, {std::log(0.1f), -INFINITY, std::log(0.9f)}).Input<int32_t>({}, {4000});
    return t;
  };
  KernelTester a = make(), b = make();
  ASSERT_OK(a.Run());
  ASSERT_OK(b.Run());
  const auto da = a.output(0).flat<int32_t>(), db = b.output(0).flat<int32_t>();
  ASSERT_EQ(da.size(), 4000u);
  int count[3] = {0, 0, 0};
  for (size_t i = 0; i < da.size(); ++i) {
    ASSERT_TRUE(da[i] >= 0 && da[i] < 3) << da[i];
    ++count[da[i]];
    EXPECT_EQ(da[i], db[i]) << "the same seeds draw the same stream";
  }
  EXPECT_EQ(count[1], 0);
  // Class 0: mean 400, standard deviation sqrt(4000 * 0.1 * 0.9) = 19: allow 5 sigma.
  EXPECT_NEAR(count[0], 400, 95);
}

TEST(MultinomialTest, Errors) {
  {
    KernelTester t("Multinomial");
    t.Input<float>({3}, {1, 2, 3}).Input<int32_t>({}, {2});
    ExpectInvalid(t, "logits must be a matrix");
  }
  {
    KernelTester t("Multinomial");
    t.Input<float>({1, 3}, {1, 2, 3}).Input<int32_t>({}, {-2});
    ExpectInvalid(t, "num_samples must be non-negative");
  }
  {
    KernelTester t("Multinomial");
    t.Input<float>({1, 0}, {}).Input<int32_t>({}, {2});
    ExpectInvalid(t, "num_classes must be positive");
  }
}

}  // namespace
}  // namespace sluice
