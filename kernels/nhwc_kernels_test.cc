// AddNhwc, MulNhwc and GlobalAveragePoolNhwc: inputs and outputs have N,C,H,W shapes but hold
// their values in N,H,W,C order.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

// Where value (n, c, h, w) of an N,C,H,W-shaped tensor lies, its values in N,H,W,C order or not.
int64_t Offset(const Tensor& t, bool nhwc, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t C = t.dim_size(1), H = t.dim_size(2), W = t.dim_size(3);
  return nhwc ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

Tensor Filled(bool nhwc, int64_t n, int64_t c, int64_t h, int64_t w,
              const std::function<float(int64_t, int64_t, int64_t, int64_t)>& value) {
  Tensor t(DT_FLOAT, TensorShape({n, c, h, w}));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) t.flat<float>()[Offset(t, nhwc, in, ic, ih, iw)] = value(in, ic, ih, iw);
  return t;
}

// An N,C,H,W-shaped tensor whose values lie in N,H,W,C order, value(n, c, h, w) at each place.
Tensor HeldNhwc(int64_t n, int64_t c, int64_t h, int64_t w,
                const std::function<float(int64_t, int64_t, int64_t, int64_t)>& value) {
  return Filled(true, n, c, h, w, value);
}

float A(int64_t n, int64_t c, int64_t h, int64_t w) { return 1000.f * n + 100.f * c + 10.f * h + w; }

void ExpectBinary(const std::string& op, const Tensor& b,
                  const std::function<float(int64_t, int64_t, int64_t, int64_t)>& b_value) {
  KernelTester t(op);
  t.Input(HeldNhwc(2, 3, 2, 4, A)).Input(b);
  ASSERT_OK(t.Run());
  Tensor want = HeldNhwc(2, 3, 2, 4, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return op == "AddNhwc" ? A(n, c, h, w) + b_value(n, c, h, w) : A(n, c, h, w) * b_value(n, c, h, w);
  });
  ASSERT_EQ(t.output(0).shape(), want.shape());
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    ASSERT_EQ(t.output(0).flat<float>()[i], want.flat<float>()[i]) << "at " << i << " of " << b.shape().DebugString();
  }
}

void ExpectAdd(const Tensor& b, const std::function<float(int64_t, int64_t, int64_t, int64_t)>& b_value) {
  ExpectBinary("AddNhwc", b, b_value);
}

TEST(AddNhwcTest, EqualShapesAddInPlace) {
  auto b = [](int64_t n, int64_t c, int64_t h, int64_t w) { return 0.5f * (c - n) + 0.25f * (h + w); };
  ExpectAdd(HeldNhwc(2, 3, 2, 4, b), b);
}

TEST(AddNhwcTest, BroadcastsAsNumpyDoesOnTheNchwShapes) {
  // [1,C,H,W] over the batch.
  auto per_image = [](int64_t, int64_t c, int64_t h, int64_t w) { return 0.5f * c + 0.25f * (h - w); };
  ExpectAdd(HeldNhwc(1, 3, 2, 4, per_image), per_image);
  // [N,C,1,1]: one value per image and channel.
  auto per_channel = [](int64_t n, int64_t c, int64_t, int64_t) { return 7.f * n - 3.f * c; };
  ExpectAdd(HeldNhwc(2, 3, 1, 1, per_channel), per_channel);
  // [N,1,H,W]: one value per pixel, over the channels.
  auto per_pixel = [](int64_t n, int64_t, int64_t h, int64_t w) { return 0.125f * (n + h * 4 + w); };
  ExpectAdd(HeldNhwc(2, 1, 2, 4, per_pixel), per_pixel);
}

// A squeeze-and-excitation scale: one value per image and channel times every pixel.
TEST(MulNhwcTest, ScalesChannelsAsMulDoesOnTheNchwShapes) {
  auto per_channel = [](int64_t n, int64_t c, int64_t, int64_t) { return 0.5f + n - 0.25f * c; };
  ExpectBinary("MulNhwc", HeldNhwc(2, 3, 1, 1, per_channel), per_channel);
  auto b = [](int64_t n, int64_t c, int64_t h, int64_t w) { return 0.5f * (c - n) + 0.25f * (h + w); };
  ExpectBinary("MulNhwc", HeldNhwc(2, 3, 2, 4, b), b);
}

TEST(GlobalAveragePoolNhwcTest, MeansEachChannelOverItsPixels) {
  KernelTester t("GlobalAveragePoolNhwc");
  t.Input(HeldNhwc(2, 3, 2, 4, A));
  ASSERT_OK(t.Run());
  // A = 1000n + 100c + 10h + w: the mean over h in {0,1}, w in {0..3} adds 5 + 1.5.
  std::vector<float> want;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c) want.push_back(1000.f * n + 100.f * c + 6.5f);
  t.ExpectOutput<float>(0, {2, 3, 1, 1}, want);
}

TEST(AddNhwcTest, NonFourDimensionalInputsAreErrors) {
  KernelTester t("AddNhwc");
  t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectInvalid(t, "4-D");
}

// Bad inputs of the ops the importer's rewrites produce: errors that name the problem.
TEST(NhwcRewriteOpsTest, BadInputsAreErrors) {
  KernelTester mul("MulNhwc");
  mul.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectInvalid(mul, "4-D");
  KernelTester pool("GlobalAveragePoolNhwc");
  pool.Input<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectInvalid(pool, "4-D");
  // A fused activation with the wrong number of parameters (LeakyRelu takes its alpha).
  KernelTester conv("Onnx>Conv");
  conv.Attr("activation", std::string("LeakyRelu")).Attr("activation_params", std::vector<float>{});
  conv.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({1, 1, 1, 1}, {1}).ArgSizes({1, 1, 0, 0});
  ExpectInvalid(conv, "LeakyRelu takes 1 activation_params");
}

// The same values, as a plain N,C,H,W tensor.
Tensor PlainNchw(int64_t n, int64_t c, int64_t h, int64_t w,
                 const std::function<float(int64_t, int64_t, int64_t, int64_t)>& value) {
  return Filled(false, n, c, h, w, value);
}

// value(n, c, h, w) of a tensor held in N,H,W,C order, or in N,C,H,W order.
float AtNhwc(const Tensor& t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return t.flat<float>()[Offset(t, true, n, c, h, w)];
}
float AtNchw(const Tensor& t, int64_t n, int64_t c, int64_t h, int64_t w) {
  return t.flat<float>()[Offset(t, false, n, c, h, w)];
}

// `nchw` and `nhwc` (N,C,H,W-shaped, values in N,H,W,C order) hold the same values, each within
// `tolerance`.
void ExpectSameValues(const Tensor& nchw, const Tensor& nhwc, float tolerance) {
  ASSERT_EQ(nchw.shape(), nhwc.shape());
  for (int64_t n = 0; n < nchw.dim_size(0); ++n)
    for (int64_t ch = 0; ch < nchw.dim_size(1); ++ch)
      for (int64_t h = 0; h < nchw.dim_size(2); ++h)
        for (int64_t w = 0; w < nchw.dim_size(3); ++w) {
          ASSERT_NEAR(AtNhwc(nhwc, n, ch, h, w), AtNchw(nchw, n, ch, h, w), tolerance)
              << n << " " << ch << " " << h << " " << w;
        }
}

float Wavy(int64_t n, int64_t c, int64_t h, int64_t w) {
  return std::sin(0.3f * (1 + n) * (c + 1) + 0.7f * h - 0.45f * w) * 4.0f;
}

TEST(ChannelAffineNhwcTest, ScalesAndShiftsEachChannel) {
  KernelTester t("ChannelAffineNhwc");
  t.Input(HeldNhwc(2, 3, 2, 5, A)).Input<float>({3}, {0.5f, -2.0f, 1.0f}).Input<float>({3}, {1.0f, 0.0f, -3.0f});
  ASSERT_OK(t.Run());
  const float scale[] = {0.5f, -2.0f, 1.0f}, shift[] = {1.0f, 0.0f, -3.0f};
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t w = 0; w < 5; ++w) {
          ASSERT_EQ(AtNhwc(t.output(0), n, c, h, w), A(n, c, h, w) * scale[c] + shift[c]);
        }
  KernelTester relu("ChannelAffineNhwc");
  relu.Attr("relu", true).Input(HeldNhwc(1, 3, 2, 5, A)).Input<float>({3}, {-0.01f, 1.0f, 0.5f}).Input<float>({3}, {1, -150, 2});
  ASSERT_OK(relu.Run());
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t w = 0; w < 5; ++w) {
        const float s = c == 0 ? -0.01f : c == 1 ? 1.0f : 0.5f, b = c == 0 ? 1.0f : c == 1 ? -150.0f : 2.0f;
        ASSERT_EQ(AtNhwc(relu.output(0), 0, c, h, w), std::max(0.0f, A(0, c, h, w) * s + b)) << c << h << w;
      }
  KernelTester bad("ChannelAffineNhwc");
  bad.Input(HeldNhwc(1, 3, 2, 2, A)).Input<float>({2}, {1, 1}).Input<float>({3}, {0, 0, 0});
  ExpectInvalid(bad, "[C] scale and shift");
}

// Max and average pools in NHWC layout give what the N,C,H,W kernel gives, over padding,
// strides, dilations, ceil mode and both count_include_pad settings.
TEST(PoolNhwcTest, MatchesTheNchwKernel) {
  struct Case {
    std::string op;
    std::vector<int64_t> kernel, strides, pads, dilations;
    int64_t ceil_mode, count_include_pad;
  };
  const std::vector<Case> cases = {
      {"Onnx>MaxPool", {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 0},
      {"Onnx>MaxPool", {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, 0},
      {"Onnx>MaxPool", {2, 3}, {1, 2}, {1, 0, 0, 1}, {2, 1}, 0, 0},
      {"Onnx>AveragePool", {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 0},
      {"Onnx>AveragePool", {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 1},
      {"Onnx>AveragePool", {3, 2}, {2, 2}, {1, 0, 1, 1}, {1, 1}, 1, 1},
      {"Onnx>AveragePool", {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, 0},
      {"Onnx>AveragePool", {2, 2}, {1, 1}, {1, 1, 0, 0}, {2, 2}, 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " ceil " + std::to_string(c.ceil_mode) + " count_pad " + std::to_string(c.count_include_pad));
    Tensor outs[2];
    for (int nhwc = 0; nhwc < 2; ++nhwc) {
      KernelTester t(c.op);
      t.Attr("kernel_shape", c.kernel).Attr("strides", c.strides).Attr("pads", c.pads).Attr("dilations", c.dilations);
      t.Attr("ceil_mode", c.ceil_mode).Attr("layout", std::string(nhwc ? "NHWC" : "NCHW"));
      if (c.op == "Onnx>MaxPool") {
        t.Attr("produce_indices", false);
      } else {
        t.Attr("count_include_pad", c.count_include_pad);
      }
      t.Input(nhwc ? HeldNhwc(2, 45, 7, 6, Wavy) : PlainNchw(2, 45, 7, 6, Wavy));  // 16 + 16 + 8 + 5 channels.
      ASSERT_OK(t.Run());
      outs[nhwc] = t.output(0);
    }
    ExpectSameValues(outs[0], outs[1], 1e-5f);
  }
}

// TensorFlow's MaxPool and AvgPool on NHWC floats (their channels in vectors) give what the
// same kernels give on NCHW (one channel at a time), over SAME and VALID padding and strides,
// with 16 + 16 + 8 + 5 channels.
TEST(TfPoolNhwcTest, MatchesNchw) {
  const int64_t n = 2, c = 45, h = 7, w = 6;
  Tensor nhwc(DT_FLOAT, TensorShape({n, h, w, c})), nchw(DT_FLOAT, TensorShape({n, c, h, w}));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          nhwc.flat<float>()[((b * h + y) * w + x) * c + ch] = Wavy(b, ch, y, x);
          nchw.flat<float>()[((b * c + ch) * h + y) * w + x] = Wavy(b, ch, y, x);
        }
  for (const std::string op : {"MaxPool", "AvgPool"}) {
    for (const std::string padding : {"SAME", "VALID"}) {
      for (int64_t stride : {1, 2}) {
        SCOPED_TRACE(op + " " + padding + " stride " + std::to_string(stride));
        Tensor outs[2];
        for (int channels_last = 0; channels_last < 2; ++channels_last) {
          KernelTester t(op);
          const std::vector<int64_t> ksize = channels_last ? std::vector<int64_t>{1, 3, 2, 1} : std::vector<int64_t>{1, 1, 3, 2};
          const std::vector<int64_t> strides = channels_last ? std::vector<int64_t>{1, stride, stride, 1}
                                                             : std::vector<int64_t>{1, 1, stride, stride};
          t.Attr("ksize", ksize).Attr("strides", strides).Attr("padding", padding);
          t.Attr("data_format", std::string(channels_last ? "NHWC" : "NCHW"));
          t.Input(channels_last ? nhwc : nchw);
          ASSERT_OK(t.Run());
          outs[channels_last] = t.output(0);
        }
        const Tensor& a = outs[0];
        const Tensor& b = outs[1];
        ASSERT_EQ(a.dim_size(1), c);
        ASSERT_EQ(b.dim_size(3), c);
        const int64_t oh = a.dim_size(2), ow = a.dim_size(3);
        ASSERT_EQ(b.dim_size(1), oh);
        ASSERT_EQ(b.dim_size(2), ow);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t x = 0; x < ow; ++x) {
                ASSERT_NEAR(b.flat<float>()[((i * oh + y) * ow + x) * c + ch],
                            a.flat<float>()[((i * c + ch) * oh + y) * ow + x], 1e-5f)
                    << i << " " << ch << " " << y << " " << x;
              }
      }
    }
  }
}

// Conv with a residual input is activation(Conv(x) + residual): checked against a Conv without
// one, on oneDNN's path (float, both layouts) and the GEMM path (double).
TEST(ConvResidualTest, AddsTheResidualBeforeTheActivation) {
  const int64_t n = 2, c = 3, m = 4, h = 5, w = 6;
  auto weight = [](int64_t i) { return std::cos(0.37f * i) * 0.5f; };
  std::vector<float> wv(m * c * 3 * 3), bv = {0.25f, -0.5f, 0.0f, 1.0f};
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = weight(i);
  auto residual = [](int64_t b, int64_t ch, int64_t y, int64_t x) { return 0.5f * Wavy(b + 1, ch, x, y); };
  auto conv = [&](bool nhwc, bool with_residual, const std::string& activation) {
    KernelTester t("Onnx>Conv");
    t.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("activation", activation);
    t.Attr("input_layout", std::string(nhwc ? "NHWC" : "NCHW")).Attr("output_layout", std::string(nhwc ? "NHWC" : "NCHW"));
    t.Input(nhwc ? HeldNhwc(n, c, h, w, Wavy) : PlainNchw(n, c, h, w, Wavy));
    t.Input<float>({m, c, 3, 3}, wv).Input<float>({m}, bv);
    if (with_residual) t.Input(nhwc ? HeldNhwc(n, m, h, w, residual) : PlainNchw(n, m, h, w, residual));
    t.ArgSizes({1, 1, 1, with_residual ? 1 : 0});
    EXPECT_OK(t.Run());
    return t.output(0);
  };
  const Tensor plain = conv(false, false, "");
  for (bool nhwc : {false, true}) {
    for (const std::string activation : {"", "Relu"}) {
      SCOPED_TRACE(std::string(nhwc ? "NHWC" : "NCHW") + " " + activation);
      const Tensor got = conv(nhwc, true, activation);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < m; ++ch)
          for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x) {
              float want = AtNchw(plain, b, ch, y, x) + residual(b, ch, y, x);
              if (activation == "Relu") want = std::max(want, 0.0f);
              ASSERT_NEAR(nhwc ? AtNhwc(got, b, ch, y, x) : AtNchw(got, b, ch, y, x), want, 1e-4f) << b << ch << y << x;
            }
    }
  }
  // Double convolutions take the GEMM path.
  KernelTester d("Onnx>Conv");
  d.Attr("activation", std::string("Relu"));
  d.Input<double>({1, 1, 2, 2}, {1, -2, 3, -4}).Input<double>({1, 1, 1, 1}, {2}).Input<double>({1, 1, 2, 2}, {1, 1, -7, 1});
  d.ArgSizes({1, 1, 0, 1});
  ASSERT_OK(d.Run());
  d.ExpectOutput<double>(0, {1, 1, 2, 2}, {3, 0, 0, 0});
  // A residual of another shape is an error naming both.
  KernelTester bad("Onnx>Conv");
  bad.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({1, 1, 1, 1}, {1}).Input<float>({1, 1, 1, 2}, {1, 2});
  bad.ArgSizes({1, 1, 0, 1});
  ExpectInvalid(bad, "Conv residual is [1,1,1,2]");
}

// Resize in NHWC layout gives what the N,C,H,W kernel gives: nearest and linear, several coordinate
// transforms, up- and downsampling, 16 + 16 + 5 channels; a Resize of N or C is an error.
TEST(ResizeNhwcTest, MatchesTheNchwKernel) {
  for (const char* mode : {"nearest", "linear"}) {
    for (const char* transform : {"half_pixel", "align_corners", "asymmetric"}) {
      for (const std::vector<float>& scales : {std::vector<float>{1, 1, 2, 1.5f}, std::vector<float>{1, 1, 0.5f, 0.75f}}) {
        SCOPED_TRACE(std::string(mode) + " " + transform + " " + std::to_string(scales[2]));
        Tensor outs[2];
        for (int nhwc = 0; nhwc < 2; ++nhwc) {
          KernelTester t("Onnx>Resize");
          t.Attr("mode", std::string(mode)).Attr("coordinate_transformation_mode", std::string(transform));
          t.Attr("layout", std::string(nhwc ? "NHWC" : "NCHW"));
          t.Input(nhwc ? HeldNhwc(2, 37, 6, 8, Wavy) : PlainNchw(2, 37, 6, 8, Wavy));
          t.Input<float>({4}, scales).ArgSizes({1, 0, 1, 0});
          ASSERT_OK(t.Run());
          outs[nhwc] = t.output(0);
        }
        ExpectSameValues(outs[0], outs[1], 1e-4f);
      }
    }
  }
  KernelTester bad("Onnx>Resize");
  bad.Attr("layout", std::string("NHWC")).Input(HeldNhwc(1, 4, 2, 2, A)).Input<float>({4}, {1, 2, 1, 1}).ArgSizes({1, 0, 1, 0});
  ExpectInvalid(bad, "resizes H and W of a 4-D input only");
}

// ChannelShuffle in both layouts against its definition (output channel j*g+i is input
// channel i*(C/g)+j), for 2 groups (the interleaving path) and 3; and its error for channels
// the groups do not divide.
TEST(NhwcKernelsTest, ChannelShuffleMovesChannelsByTheDefinition) {
  for (int64_t groups : {2, 3}) {
    for (bool nhwc : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "groups " << groups << " nhwc " << nhwc);
      const int64_t n = 2, c = 6 * groups, h = 3, w = 5, per = c / groups;
      KernelTester t("ChannelShuffle");
      t.Attr("T", DT_FLOAT).Attr("groups", groups).Attr("layout", std::string(nhwc ? "NHWC" : "NCHW"));
      t.Attr("shape", std::vector<int64_t>{n, c, h, w});
      t.Input(Filled(nhwc, n, c, h, w, A));
      ASSERT_OK(t.Run());
      const Tensor& y = t.output(0);
      ASSERT_EQ(y.shape(), TensorShape({n, c, h, w}));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < groups; ++i)
          for (int64_t j = 0; j < per; ++j)
            for (int64_t ih = 0; ih < h; ++ih)
              for (int64_t iw = 0; iw < w; ++iw)
                ASSERT_EQ(y.flat<float>()[Offset(y, nhwc, b, j * groups + i, ih, iw)], A(b, i * per + j, ih, iw));
    }
  }
  KernelTester bad("ChannelShuffle");
  bad.Attr("T", DT_FLOAT).Attr("groups", int64_t{4}).Attr("shape", std::vector<int64_t>{1, 6, 2, 2});
  bad.Input(Filled(false, 1, 6, 2, 2, A));
  const absl::Status s = bad.Run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("groups"), std::string::npos) << s.message();
}

TEST(NhwcKernelsTest, SliceChannelsNhwcKeepsItsRange) {
  KernelTester t("SliceChannelsNhwc");
  t.Attr("T", DT_FLOAT).Attr("begin", int64_t{2}).Attr("end", int64_t{5});
  t.Input(HeldNhwc(2, 7, 3, 4, A));
  ASSERT_OK(t.Run());
  const Tensor& y = t.output(0);
  ASSERT_EQ(y.shape(), TensorShape({2, 3, 3, 4}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t ch = 0; ch < 3; ++ch)
      for (int64_t ih = 0; ih < 3; ++ih)
        for (int64_t iw = 0; iw < 4; ++iw) ASSERT_EQ(y.flat<float>()[Offset(y, true, b, ch, ih, iw)], A(b, ch + 2, ih, iw));
  KernelTester bad("SliceChannelsNhwc");
  bad.Attr("T", DT_FLOAT).Attr("begin", int64_t{2}).Attr("end", int64_t{9}).Input(HeldNhwc(1, 7, 2, 2, A));
  const absl::Status s = bad.Run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("[2, 9)"), std::string::npos) << s.message();
}

// x of another shape than the output (the first Reshape regroups it): read in N,C,H,W order as
// the Reshape reads it, in both layouts.
TEST(NhwcKernelsTest, ChannelShuffleReadsXAsTheReshapeDoes) {
  for (bool nhwc : {false, true}) {
    SCOPED_TRACE(nhwc);
    const Tensor x = Filled(nhwc, 1, 2, 12, 3, A);  // 72 values, shuffled as [1, 6, 2, 6].
    KernelTester t("ChannelShuffle");
    t.Attr("T", DT_FLOAT).Attr("groups", int64_t{3}).Attr("shape", std::vector<int64_t>{1, 6, 2, 6});
    t.Attr("layout", std::string(nhwc ? "NHWC" : "NCHW")).Input(x);
    ASSERT_OK(t.Run());
    const Tensor& y = t.output(0);
    std::vector<float> flat;  // x's values in N,C,H,W order.
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t h = 0; h < 12; ++h)
        for (int64_t w = 0; w < 3; ++w) flat.push_back(A(0, c, h, w));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t p = 0; p < 12; ++p)
          ASSERT_EQ(y.flat<float>()[Offset(y, nhwc, 0, j * 3 + i, p / 6, p % 6)], flat[(i * 2 + j) * 12 + p]);
  }
}

// NhwcView renames the order of the same values: an N,C,H,W-shaped tensor held N,H,W,C is the
// [N,H,W,C] tensor of those values, and back; no value moves (the output shares x's buffer).
TEST(NhwcKernelsTest, NhwcViewRenamesTheOrder) {
  const Tensor x = HeldNhwc(2, 3, 4, 5, A);
  KernelTester to_last("NhwcView");
  to_last.Attr("T", DT_FLOAT).Attr("channels_last", true).Input(x);
  ASSERT_OK(to_last.Run());
  const Tensor& y = to_last.output(0);
  ASSERT_EQ(y.shape(), TensorShape({2, 4, 5, 3}));
  EXPECT_EQ(y.data<float>(), x.data<float>());
  for (int64_t i = 0; i < y.NumElements(); ++i) ASSERT_EQ(y.flat<float>()[i], x.flat<float>()[i]);
  KernelTester back("NhwcView");
  back.Attr("T", DT_FLOAT).Attr("channels_last", false).Input(y);
  ASSERT_OK(back.Run());
  EXPECT_EQ(back.output(0).shape(), TensorShape({2, 3, 4, 5}));
  EXPECT_EQ(back.output(0).data<float>(), x.data<float>());
  KernelTester bad("NhwcView");
  bad.Attr("T", DT_FLOAT).Attr("channels_last", true).Input(Tensor(DT_FLOAT, TensorShape({2, 3, 4})));
  const absl::Status s = bad.Run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("4-D"), std::string::npos) << s.message();
}

// Attributes a hand-written GraphDef may carry: a shape of 2^62 dims (whose product overflows),
// a negative dim, and a slice of channels [2^62, 2^62 + 1) fail with an error, not a crash.
TEST(NhwcKernelsTest, HostileSizesFailByName) {
  const int64_t huge = int64_t{1} << 62;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{huge, 4, huge, 1}, std::vector<int64_t>{1, -4, 2, 2}}) {
    KernelTester t("ChannelShuffle");
    t.Attr("T", DT_FLOAT).Attr("groups", int64_t{2}).Attr("shape", shape).Input(Filled(false, 1, 4, 2, 2, A));
    const absl::Status s = t.Run();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(std::string(s.message()).find("ChannelShuffle"), std::string::npos) << s.message();
  }
  KernelTester slice("SliceChannelsNhwc");
  slice.Attr("T", DT_FLOAT).Attr("begin", huge).Attr("end", huge + 1).Input(HeldNhwc(1, 7, 2, 2, A));
  const absl::Status s = slice.Run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("SliceChannelsNhwc"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sluice
