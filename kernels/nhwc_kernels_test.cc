// AddNhwc, MulNhwc and GlobalAveragePoolNhwc: inputs and outputs have N,C,H,W shapes but hold
// their values in N,H,W,C order.
#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

// An N,C,H,W-shaped tensor whose values lie in N,H,W,C order, value(n, c, h, w) at each place.
Tensor HeldNhwc(int64_t n, int64_t c, int64_t h, int64_t w,
                const std::function<float(int64_t, int64_t, int64_t, int64_t)>& value) {
  Tensor t(DT_FLOAT, TensorShape({n, c, h, w}));
  float* p = t.flat<float>().data();
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ih = 0; ih < h; ++ih)
      for (int64_t iw = 0; iw < w; ++iw)
        for (int64_t ic = 0; ic < c; ++ic) *p++ = value(in, ic, ih, iw);
  return t;
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
  conv.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({1, 1, 1, 1}, {1}).ArgSizes({1, 1, 0});
  ExpectInvalid(conv, "LeakyRelu takes 1 activation_params");
}

}  // namespace
}  // namespace sluice
