// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter (tf_nn_ops.cc):
// small cases worked by hand, then random cases checked two ways: element by element against
// a scatter loop written here from the definition, and against the forward kernel through
// the adjoint identities <dy, conv(x, f)> = <backprop_input(dy), x> = <backprop_filter(dy), f>
// (exact, since the convolution is linear in each operand).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

struct Conv {
  std::vector<int64_t> strides = {1, 1, 1, 1}, dilations = {1, 1, 1, 1}, explicit_paddings = {};
  std::string padding = "VALID", format = "NHWC";
};

KernelTester Op(const char* op, const Conv& c) {
  KernelTester t(op);
  t.Attr("strides", c.strides).Attr("dilations", c.dilations).Attr("padding", c.padding);
  t.Attr("data_format", c.format).Attr("explicit_paddings", c.explicit_paddings);
  return t;
}

std::vector<int32_t> Sizes(const std::vector<int64_t>& dims) { return {dims.begin(), dims.end()}; }

TEST(DepthwiseBackpropTest, HandWorkedValid) {
  // x [1,3,3,1] = 1..9, filter [2,2,1,1] = {1, 2, 3, 4}, VALID: y is 2x2.
  Conv c;
  KernelTester in = Op("DepthwiseConv2dNativeBackpropInput", c);
  in.Input<int32_t>({4}, {1, 3, 3, 1}).Input<float>({2, 2, 1, 1}, {1, 2, 3, 4});
  in.Input<float>({1, 2, 2, 1}, {1, 1, 1, 1});
  ASSERT_OK(in.Run());
  // Each input pixel sums the taps that read it: the corners one tap, the centre all four.
  in.ExpectOutput<float>(0, {1, 3, 3, 1}, {1, 3, 2, 4, 10, 6, 3, 7, 4});

  KernelTester f = Op("DepthwiseConv2dNativeBackpropFilter", c);
  f.Input<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}).Input<int32_t>({4}, {2, 2, 1, 1});
  f.Input<float>({1, 2, 2, 1}, {1, 1, 1, 1});
  ASSERT_OK(f.Run());
  // Tap (i, j) sums the 2x2 block of x starting at (i, j): 1+2+4+5, 2+3+5+6, 4+5+7+8, 5+6+8+9.
  f.ExpectOutput<float>(0, {2, 2, 1, 1}, {12, 16, 24, 28});
}

TEST(DepthwiseBackpropTest, HandWorkedMultiplier) {
  // One pixel of channels {2, 3}; filter [1,1,2,2]: channel 0 -> {1, 2}, channel 1 -> {3, 4};
  // y = {2, 4, 9, 12}. With dy = {1, 10, 100, 1000}: dx = {1 + 20, 300 + 4000},
  // df = {2, 20, 300, 3000}.
  Conv c;
  KernelTester in = Op("DepthwiseConv2dNativeBackpropInput", c);
  in.Input<int32_t>({4}, {1, 1, 1, 2}).Input<double>({1, 1, 2, 2}, {1, 2, 3, 4});
  in.Input<double>({1, 1, 1, 4}, {1, 10, 100, 1000});
  ASSERT_OK(in.Run());
  in.ExpectOutput<double>(0, {1, 1, 1, 2}, {21, 4300});

  KernelTester f = Op("DepthwiseConv2dNativeBackpropFilter", c);
  f.Input<double>({1, 1, 1, 2}, {2, 3}).Input<int32_t>({4}, {1, 1, 2, 2});
  f.Input<double>({1, 1, 1, 4}, {1, 10, 100, 1000});
  ASSERT_OK(f.Run());
  f.ExpectOutput<double>(0, {1, 1, 2, 2}, {2, 20, 300, 3000});
}

// Values in [-1, 1) from a linear congruential sequence.
std::vector<float> Values(int64_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return v;
}

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

double Dot(const std::vector<float>& a, const Tensor& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double{a[i]} * b.flat<float>()[i];
  return s;
}

// The definition, as a scatter over output pixels, in NHWC with the padding before each dim.
void Reference(const std::vector<int64_t>& xd, const std::vector<int64_t>& fd, const std::vector<int64_t>& yd,
               int64_t stride, int64_t dilation, int64_t pad_top, int64_t pad_left, const std::vector<float>& x,
               const std::vector<float>& f, const std::vector<float>& dy, std::vector<double>* dx,
               std::vector<double>* df) {
  const int64_t h = xd[1], w = xd[2], c = xd[3], kh = fd[0], kw = fd[1], m = fd[3];
  dx->assign(x.size(), 0.0);
  df->assign(f.size(), 0.0);
  for (int64_t b = 0; b < yd[0]; ++b)
    for (int64_t oy = 0; oy < yd[1]; ++oy)
      for (int64_t ox = 0; ox < yd[2]; ++ox)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t iy = oy * stride - pad_top + ky * dilation, ix = ox * stride - pad_left + kx * dilation;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t j = 0; j < m; ++j) {
                const double g = dy[((b * yd[1] + oy) * yd[2] + ox) * c * m + ch * m + j];
                const int64_t xi = ((b * h + iy) * w + ix) * c + ch, fi = ((ky * kw + kx) * c + ch) * m + j;
                (*dx)[xi] += f[fi] * g;
                (*df)[fi] += x[xi] * g;
              }
          }
}

struct Case {
  const char* name;
  std::vector<int64_t> x, f;  // x in data_format order; f is [kh, kw, C, M].
  Conv conv;
  int64_t pad_top = 0, pad_left = 0;  // For the reference (NHWC cases only).
};

void CheckCase(const Case& k) {
  SCOPED_TRACE(k.name);
  const std::vector<float> x = Values(Count(k.x), 1), f = Values(Count(k.f), 2);
  KernelTester fwd = Op("DepthwiseConv2dNative", k.conv);
  fwd.Input<float>(k.x, x).Input<float>(k.f, f);
  ASSERT_OK(fwd.Run());
  const Tensor& y = fwd.output(0);
  const std::vector<int64_t> yd(y.shape().dim_sizes().begin(), y.shape().dim_sizes().end());
  const std::vector<float> dy = Values(y.NumElements(), 3);

  KernelTester in = Op("DepthwiseConv2dNativeBackpropInput", k.conv);
  in.Input<int32_t>({4}, Sizes(k.x)).Input<float>(k.f, f).Input<float>(yd, dy);
  ASSERT_OK(in.Run());
  KernelTester fl = Op("DepthwiseConv2dNativeBackpropFilter", k.conv);
  fl.Input<float>(k.x, x).Input<int32_t>({4}, Sizes(k.f)).Input<float>(yd, dy);
  ASSERT_OK(fl.Run());
  const Tensor& dx = in.output(0);
  const Tensor& df = fl.output(0);
  ASSERT_EQ(dx.shape(), TensorShape(k.x));
  ASSERT_EQ(df.shape(), TensorShape(k.f));

  const double forward = Dot(dy, y);
  const double scale = 1e-4 * (1 + std::abs(forward)) * std::sqrt(static_cast<double>(y.NumElements()));
  EXPECT_NEAR(Dot(x, dx), forward, scale) << "<dy, conv(x, f)> against <backprop_input, x>";
  EXPECT_NEAR(Dot(f, df), forward, scale) << "<dy, conv(x, f)> against <backprop_filter, f>";

  if (k.conv.format != "NHWC") return;
  std::vector<double> want_dx, want_df;
  Reference(k.x, k.f, yd, k.conv.strides[1], k.conv.dilations[1], k.pad_top, k.pad_left, x, f, dy, &want_dx,
            &want_df);
  for (size_t i = 0; i < want_dx.size(); ++i) EXPECT_NEAR(dx.flat<float>()[i], want_dx[i], 1e-4) << "dx " << i;
  for (size_t i = 0; i < want_df.size(); ++i) EXPECT_NEAR(df.flat<float>()[i], want_df[i], 1e-4) << "df " << i;
}

TEST(DepthwiseBackpropTest, AgainstDefinitionAndForward) {
  Conv valid;
  Conv same_stride2;
  same_stride2.padding = "SAME";
  same_stride2.strides = {1, 2, 2, 1};
  Conv dilated;
  dilated.dilations = {1, 2, 2, 1};
  Conv same_dilated = dilated;
  same_dilated.padding = "SAME";
  Conv explicit_pads;
  explicit_pads.padding = "EXPLICIT";
  explicit_pads.explicit_paddings = {0, 0, 2, 1, 1, 0, 0, 0};
  Conv nchw = same_stride2;
  nchw.format = "NCHW";
  nchw.strides = {1, 1, 2, 2};
  // SAME pads (out - 1) * stride + dilated kernel - in, the odd one at the end.
  const std::vector<Case> cases = {
      {"VALID, multiplier 1", {2, 5, 4, 3}, {3, 2, 3, 1}, valid},
      {"VALID, multiplier 3", {1, 4, 5, 2}, {2, 3, 2, 3}, valid},
      {"SAME, stride 2, multiplier 2", {2, 7, 6, 3}, {3, 3, 3, 2}, same_stride2, 1, 0},  // 2 pads rows (1 before), 1 columns (0 before).
      {"VALID, dilation 2", {1, 7, 6, 4}, {3, 2, 4, 2}, dilated},
      {"SAME, dilation 2", {1, 5, 5, 2}, {3, 3, 2, 1}, same_dilated, 2, 2},  // 0 + 5 - 5 + 4 = 4 -> 2.
      {"EXPLICIT", {1, 4, 4, 2}, {2, 2, 2, 2}, explicit_pads, 2, 1},
      {"NCHW, SAME, stride 2", {2, 3, 6, 5}, {3, 3, 3, 2}, nchw},
      {"one wide channel block", {1, 3, 3, 37}, {2, 2, 37, 1}, valid},
  };
  for (const Case& k : cases) CheckCase(k);
}

TEST(DepthwiseBackpropTest, BadInputs) {
  Conv c;
  KernelTester sizes = Op("DepthwiseConv2dNativeBackpropInput", c);
  sizes.Input<int32_t>({3}, {1, 3, 3}).Input<float>({2, 2, 1, 1}, {1, 2, 3, 4});
  sizes.Input<float>({1, 2, 2, 1}, {1, 1, 1, 1});
  ExpectInvalid(sizes, "input_sizes");

  KernelTester channels = Op("DepthwiseConv2dNativeBackpropInput", c);
  channels.Input<int32_t>({4}, {1, 3, 3, 2}).Input<float>({2, 2, 1, 1}, {1, 2, 3, 4});
  channels.Input<float>({1, 2, 2, 1}, {1, 1, 1, 1});
  ExpectInvalid(channels, "DepthwiseConv2dNativeBackpropInput");

  KernelTester dy = Op("DepthwiseConv2dNativeBackpropInput", c);  // y is 2x2x1, not 3x3x1.
  dy.Input<int32_t>({4}, {1, 3, 3, 1}).Input<float>({2, 2, 1, 1}, {1, 2, 3, 4});
  dy.Input<float>({1, 3, 3, 1}, std::vector<float>(9, 1));
  ExpectInvalid(dy, "out_backprop");

  KernelTester fsizes = Op("DepthwiseConv2dNativeBackpropFilter", c);
  fsizes.Input<float>({1, 3, 3, 1}, std::vector<float>(9, 1)).Input<int32_t>({4}, {2, 2, 2, 1});
  fsizes.Input<float>({1, 2, 2, 2}, std::vector<float>(8, 1));
  ExpectInvalid(fsizes, "DepthwiseConv2dNativeBackpropFilter");

  KernelTester negative = Op("DepthwiseConv2dNativeBackpropFilter", c);
  negative.Input<float>({1, 3, 3, 1}, std::vector<float>(9, 1)).Input<int32_t>({4}, {2, -2, 1, 1});
  negative.Input<float>({1, 2, 2, 1}, std::vector<float>(4, 1));
  ExpectInvalid(negative, "negative");

  KernelTester rank = Op("DepthwiseConv2dNativeBackpropFilter", c);
  rank.Input<float>({3, 3, 1}, std::vector<float>(9, 1)).Input<int32_t>({4}, {2, 2, 1, 1});
  rank.Input<float>({1, 2, 2, 1}, std::vector<float>(4, 1));
  ExpectInvalid(rank, "4-D");
}

}  // namespace
}  // namespace sluice
