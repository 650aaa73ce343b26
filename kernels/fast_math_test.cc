// FastExp, FastSigmoid and FastTanh against the C library over their whole useful ranges.
#include "kernels/fast_math.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu_isa.h"

namespace sluice {
namespace {

// Relative error in units of float's epsilon; exact zeros and infinities must match.
double Ulps(float got, double want) {
  if (want == 0 || std::isinf(want)) return got == want ? 0 : 1e9;
  return std::fabs(got - want) / std::fabs(want) / std::numeric_limits<float>::epsilon();
}

// The kernels below run on the instruction set MaxCpuIsa picks: the CPU's, or SLUICE_MAX_ISA's
// cap (fast_math_avx2_test runs them all capped at AVX2).
TEST(FastMathTest, TheInstructionSetCapTakes) {
  const char* cap = std::getenv("SLUICE_MAX_ISA");
  std::printf("CPU: %s, kernels: %s\n", CpuIsaName(DetectedCpuIsa()), CpuIsaName(MaxCpuIsa()));
  if (cap == nullptr) {
    EXPECT_EQ(MaxCpuIsa(), DetectedCpuIsa());
  } else if (std::string(cap) == "avx2") {
    EXPECT_EQ(MaxCpuIsa(), std::min(DetectedCpuIsa(), CpuIsa::kAvx2));
    // oneDNN gets the same cap unless the environment gave it one.
    const char* onednn = std::getenv("ONEDNN_MAX_CPU_ISA");
    if (DetectedCpuIsa() == CpuIsa::kAvx512) {
      EXPECT_STREQ(onednn, "AVX2");
    }
  }
}

TEST(FastMathTest, ExpIsWithinAFewUlps) {
  double worst = 0;
  for (float x = -86.5f; x <= 88.7f; x += 0.0137f) worst = std::max(worst, Ulps(FastExp(x), std::exp(double{x})));
  for (float x = -1.0f; x <= 1.0f; x += 1.0f / 4096) worst = std::max(worst, Ulps(FastExp(x), std::exp(double{x})));
  EXPECT_LT(worst, 4.0);
}

TEST(FastMathTest, SigmoidAndTanhAreWithinAFewUlps) {
  double worst_sigmoid = 0, worst_tanh = 0;
  for (float x = -30.0f; x <= 30.0f; x += 0.00731f) {
    worst_sigmoid = std::max(worst_sigmoid, Ulps(FastSigmoid(x), 1.0 / (1.0 + std::exp(-double{x}))));
    worst_tanh = std::max(worst_tanh, Ulps(FastTanh(x), std::tanh(double{x})));
  }
  // Small arguments, where tanh(x) ~ x must keep its relative precision.
  for (float x = 1e-6f; x < 0.5f; x *= 1.01f) {
    worst_tanh = std::max(worst_tanh, Ulps(FastTanh(x), std::tanh(double{x})));
    worst_tanh = std::max(worst_tanh, Ulps(FastTanh(-x), std::tanh(-double{x})));
  }
  EXPECT_LT(worst_sigmoid, 4.0);
  EXPECT_LT(worst_tanh, 4.0);
}

// The array forms (vectorized clones, which may fuse multiply-adds) give the scalar forms'
// values to within an ulp or two, remainders included.
TEST(FastMathTest, ArraysMatchTheScalarForms) {
  for (int64_t n : {0, 1, 7, 16, 33, 1000}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = -20.0f + 40.0f * i / std::max<int64_t>(1, n - 1);
    if (n > 3) x[3] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> e = x, s = x, t = x;
    ExpInPlace(e.data(), n);
    SigmoidInPlace(s.data(), n);
    TanhInPlace(t.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(e[i]) && std::isnan(s[i]) && std::isnan(t[i]));
        continue;
      }
      EXPECT_LE(Ulps(e[i], FastExp(x[i])), 2.0) << x[i];
      EXPECT_LE(Ulps(s[i], FastSigmoid(x[i])), 2.0) << x[i];
      EXPECT_LE(Ulps(t[i], FastTanh(x[i])), 2.0) << x[i];
    }
  }
}

TEST(FastMathTest, ErfIsWithinItsBounds) {
  double worst_abs = 0, worst_small_rel = 0;
  for (float x = -6.0f; x <= 6.0f; x += 0.00093f) worst_abs = std::max(worst_abs, std::fabs(FastErf(x) - std::erf(double{x})));
  for (float x = 1e-6f; x < 0.5f; x *= 1.01f) {
    worst_small_rel = std::max(worst_small_rel, std::fabs(FastErf(x) - std::erf(double{x})) / std::erf(double{x}));
  }
  EXPECT_LT(worst_abs, 4e-7);
  EXPECT_LT(worst_small_rel, 4e-7);
  std::vector<float> x = {-3.0f, -0.25f, 0.0f, 0.25f, 0.75f, 3.0f, std::numeric_limits<float>::infinity()}, y(x.size());
  ErfArray(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], std::erf(double{x[i]}), 4e-7) << x[i];
  EXPECT_TRUE(std::isnan(FastErf(std::numeric_limits<float>::quiet_NaN())));
}

// ErfArray and GeluArray run whole vector registers (8 lanes on AVX2, 16 on AVX-512) and the
// scalar FastErf/FastGelu on the tail: over every length up to 40 from each offset, and over a
// dense range with the special values among them, each element agrees with the scalar form
// (NaN where it is NaN, infinities and signed zeros as it gives them).
TEST(FastMathTest, ErfAndGeluArraysAgreeWithTheScalarForms) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0.0f, -0.0f, inf, -inf, nan, 1e6f, -1e6f, 1e-40f, -1e-40f, 0.49999997f, 0.5f, -0.5f,
                          9.3f, -9.3f, 13.2f, -13.2f, 1e-30f, 3.4e38f, -3.4e38f};
  for (float v = -14.0f; v <= 14.0f; v += 0.00377f) x.push_back(v);
  for (float v = 1e-7f; v < 0.8f; v *= 1.013f) x.insert(x.end(), {v, -v});
  const auto same = [](float got, float want) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want)) return got == want;
    return std::fabs(got - want) <= 2e-7f * (1.0f + std::fabs(want));
  };
  std::vector<float> erf(x.size()), gelu(x.size());
  ErfArray(x.data(), erf.data(), static_cast<int64_t>(x.size()));
  GeluArray(x.data(), gelu.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(same(erf[i], FastErf(x[i]))) << "erf(" << x[i] << ") = " << erf[i] << ", scalar " << FastErf(x[i]);
    EXPECT_TRUE(same(gelu[i], FastGelu(x[i]))) << "gelu(" << x[i] << ") = " << gelu[i] << ", scalar " << FastGelu(x[i]);
  }
  for (int64_t n = 0; n <= 40; ++n) {
    for (int64_t offset : {0, 3}) {  // 3: unaligned loads and stores.
      std::vector<float> y(static_cast<size_t>(n + offset), -7.0f), g(y);
      ErfArray(x.data() + offset, y.data() + offset, n);
      GeluArray(x.data() + offset, g.data() + offset, n);
      for (int64_t i = 0; i < offset; ++i) EXPECT_EQ(y[i], -7.0f);  // Nothing before the range written.
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_TRUE(same(y[offset + i], FastErf(x[offset + i]))) << n << " " << i;
        EXPECT_TRUE(same(g[offset + i], FastGelu(x[offset + i]))) << n << " " << i;
      }
    }
  }
  // In place, as the kernels call it for a forwarded input.
  std::vector<float> in_place(x);
  GeluArray(in_place.data(), in_place.data(), static_cast<int64_t>(in_place.size()));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(same(in_place[i], FastGelu(x[i]))) << x[i];
}

// GELU against 0.5 x (1 + erf(x / sqrt 2)) in double (and its tanh fit against std::tanh):
// within 1e-6 of the value plus 1e-6 absolutely (the erf's 4e-7 times |x| / 2 in the tails,
// where the result is near 0), and the array forms agree with the scalar ones.
TEST(FastMathTest, GeluIsWithinItsBounds) {
  const auto gelu = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  const auto gelu_tanh = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.00071f) x.push_back(v);
  for (float v = 1e-6f; v < 0.5f; v *= 1.01f) x.insert(x.end(), {v, -v});
  x.insert(x.end(), {0.0f, 100.0f, -100.0f, 1e6f, -1e6f});
  std::vector<float> y(x.size()), t(x.size());
  GeluArray(x.data(), y.data(), static_cast<int64_t>(x.size()));
  GeluTanhArray(x.data(), t.data(), static_cast<int64_t>(x.size()));
  double worst = 0, worst_tanh = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = gelu(x[i]), want_tanh = gelu_tanh(x[i]);
    worst = std::max(worst, std::fabs(FastGelu(x[i]) - want) / (1e-6 + 1e-6 * std::fabs(want)));
    worst_tanh = std::max(worst_tanh, std::fabs(FastGeluTanh(x[i]) - want_tanh) / (1e-6 + 1e-6 * std::fabs(want_tanh)));
    EXPECT_LE(std::fabs(y[i] - FastGelu(x[i])), 2e-7 * (1 + std::fabs(want))) << x[i];
    EXPECT_LE(std::fabs(t[i] - FastGeluTanh(x[i])), 2e-7 * (1 + std::fabs(want_tanh))) << x[i];
  }
  EXPECT_LT(worst, 1.0);
  EXPECT_LT(worst_tanh, 1.0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(FastGelu(nan)));
  EXPECT_TRUE(std::isnan(FastGeluTanh(nan)));
}

// SiLU over arrays of every length mod 16 (the vector body and the scalar tail), across the
// range where it is neither 0 nor x, and at the extremes: -inf..-87 gives (signed) ~0, large x
// gives x, NaN stays NaN.
TEST(FastMathTest, SiluMatchesItsDefinition) {
  std::vector<float> x;
  for (float v = -90.0f; v <= 90.0f; v += 0.00917f) x.push_back(v);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{15}, int64_t{17}, static_cast<int64_t>(x.size())}) {
    std::vector<float> y(x.begin(), x.begin() + n);
    SiluInPlace(y.data(), n);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = double{x[i]} / (1.0 + std::exp(-double{x[i]}));
      if (std::fabs(want) < 1e-30) {
        ASSERT_LT(std::fabs(y[i]), 1e-30) << x[i];
      } else {
        worst = std::max(worst, Ulps(y[i], want));
      }
    }
    EXPECT_LT(worst, 8.0) << n;
  }
  std::vector<float> special(35, 0.0f);  // Two vectors and a tail of 3.
  special[3] = std::numeric_limits<float>::quiet_NaN();
  special[5] = 1e30f;
  special[21] = -1e30f;
  special[33] = std::numeric_limits<float>::quiet_NaN();
  special[34] = -1e30f;
  SiluInPlace(special.data(), 35);
  EXPECT_TRUE(std::isnan(special[3]));
  EXPECT_TRUE(std::isnan(special[33]));
  EXPECT_EQ(special[5], 1e30f);
  EXPECT_LE(std::fabs(special[21]), 1e-7f);
  EXPECT_LE(std::fabs(special[34]), 1e-7f);
  EXPECT_EQ(special[0], 0.0f);
}

TEST(FastMathTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(FastExp(0.0f), 1.0f);
  EXPECT_EQ(FastExp(inf), inf);
  EXPECT_EQ(FastExp(100.0f), inf);
  EXPECT_EQ(FastExp(-inf), 0.0f);
  EXPECT_EQ(FastExp(-90.0f), 0.0f);  // Subnormal results flush to zero.
  EXPECT_GT(FastExp(88.7f), 3e38f);   // Just below FLT_MAX, not infinite.
  EXPECT_LT(FastExp(88.7f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(FastExp(nan)));
  EXPECT_EQ(FastSigmoid(-inf), 0.0f);
  EXPECT_EQ(FastSigmoid(inf), 1.0f);
  EXPECT_EQ(FastSigmoid(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(FastSigmoid(nan)));
  EXPECT_EQ(FastTanh(inf), 1.0f);
  EXPECT_EQ(FastTanh(-inf), -1.0f);
  EXPECT_EQ(FastTanh(0.0f), 0.0f);
  EXPECT_TRUE(std::isnan(FastTanh(nan)));
}

// The NHWC kernels' array loops, at lengths around the vector widths (whole vectors, tails,
// fewer than one vector) and in place, against the arithmetic written out.
TEST(FastMathTest, ChannelLoopsComputeTheirDefinitions) {
  for (int64_t n : {1, 3, 7, 8, 15, 16, 17, 33, 64, 100}) {
    SCOPED_TRACE(n);
    std::vector<float> x(n), s(n), b(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = std::sin(0.9f * i) * 3;
      s[i] = std::cos(0.4f * i);
      b[i] = 0.25f * (i % 5) - 0.5f;
    }
    std::vector<float> y = b;
    AddInto(y.data(), x.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], b[i] + x[i]);
    y = x;  // In place.
    AffineArray(y.data(), s.data(), b.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], x[i] * s[i] + b[i], 1e-6f);
    AffineReluArray(x.data(), s.data(), b.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], std::max(0.0f, x[i] * s[i] + b[i]), 1e-6f);
    MulArrays(x.data(), s.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * s[i]);
    AddArrays(x.data(), s.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] + s[i]);
    BlendArrays(x.data(), 0.25f, s.data(), 0.75f, y.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], 0.25f * x[i] + 0.75f * s[i], 1e-6f);
  }
}

// One NHWC pool output pixel over a 3x2 window of a 5x4 image (rows and columns strided as in
// the image), for channel counts that use each vector width and the scalar tail. A NaN in the
// window's first tap stays; a NaN elsewhere is passed over by max (as `acc < v` is false).
TEST(FastMathTest, PoolPixelNhwcMatchesItsDefinition) {
  for (int64_t c : {1, 5, 8, 13, 16, 24, 31, 32, 40, 64}) {
    SCOPED_TRACE(c);
    const int64_t h = 5, w = 4, rows = 3, cols = 2, row_stride = w * c, col_stride = c;
    std::vector<float> x(h * w * c);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 4;
    const float* first = x.data() + (1 * w + 1) * c;  // The window's top-left tap: pixel (1, 1).
    std::vector<float> got(c), want_max(c), want_sum(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      float m = first[ch], sum = 0;
      for (int64_t a = 0; a < rows; ++a) {
        for (int64_t k = 0; k < cols; ++k) {
          const float v = first[a * row_stride + k * col_stride + ch];
          m = std::max(m, v);
          sum += v;
        }
      }
      want_max[ch] = m;
      want_sum[ch] = sum;
    }
    PoolPixelNhwc(true, first, rows, cols, row_stride, col_stride, c, 1.0f, got.data());
    for (int64_t ch = 0; ch < c; ++ch) ASSERT_EQ(got[ch], want_max[ch]) << "channel " << ch;
    PoolPixelNhwc(false, first, rows, cols, row_stride, col_stride, c, 1.0f / 6, got.data());
    for (int64_t ch = 0; ch < c; ++ch) ASSERT_NEAR(got[ch], want_sum[ch] / 6, 1e-5f) << "channel " << ch;

    std::vector<float> nan_x = x;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const int64_t at = (1 * w + 1) * c;
    nan_x[at + c - 1] = nan;                        // First tap, last channel: the result is NaN.
    nan_x[at + row_stride + col_stride] = nan;      // A later tap, channel 0: passed over.
    PoolPixelNhwc(true, nan_x.data() + at, rows, cols, row_stride, col_stride, c, 1.0f, got.data());
    EXPECT_TRUE(std::isnan(got[c - 1]));
    if (c > 1) {
      float m = nan_x[at];
      for (int64_t a = 0; a < rows; ++a) {
        for (int64_t k = 0; k < cols; ++k) {
          const float v = nan_x[at + a * row_stride + k * col_stride];
          if (!std::isnan(v)) m = std::max(m, v);
        }
      }
      EXPECT_EQ(got[0], m);
    }
  }
}

TEST(FastMathTest, NchwToNhwcFewChannelsInterleaves) {
  for (int64_t c = 1; c <= 4; ++c) {
    const int64_t n = 2, hw = 37;  // Not a multiple of any vector width.
    std::vector<float> x(n * c * hw), y(n * c * hw, -1.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    NchwToNhwcFewChannels(x.data(), n, c, hw, y.data());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < hw; ++p) ASSERT_EQ(y[(b * hw + p) * c + ch], x[(b * c + ch) * hw + p]) << c;
  }
}

// SoftmaxRow against the definition in double for every length up to 70 (vector body, tail,
// both), rows spanning a wide range, and its special values: -inf entries give exactly 0, a
// NaN or +inf entry makes the row NaN.
TEST(FastMathTest, SoftmaxRowMatchesItsDefinition) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> x(n), y(n, -1.0f);
    for (int64_t i = 0; i < n; ++i) x[i] = std::sin(1.7 * i) * (i % 3 == 0 ? 60.0f : 4.0f);
    SoftmaxRow(x.data(), y.data(), n);
    double best = x[0], sum = 0;
    for (float v : x) best = std::max(best, double{v});
    for (float v : x) sum += std::exp(v - best);
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(x[i] - best) / sum;
      ASSERT_NEAR(y[i], want, 1e-6 + 1e-5 * want) << "n " << n << " at " << i;
    }
    if (n >= 3) {
      x[n / 2] = -inf;
      SoftmaxRow(x.data(), y.data(), n);
      EXPECT_EQ(y[n / 2], 0.0f) << n;
      x[n - 1] = std::numeric_limits<float>::quiet_NaN();
      SoftmaxRow(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "NaN row, n " << n << " at " << i;
      x[n - 1] = inf;
      SoftmaxRow(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "+inf row, n " << n << " at " << i;
    }
  }
  std::vector<float> one = {3.5f}, out(1);
  SoftmaxRow(one.data(), out.data(), 1);
  EXPECT_EQ(out[0], 1.0f);
}

}  // namespace
}  // namespace sluice
