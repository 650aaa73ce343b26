// WinogradConv3x3 against the definition of a 3x3 convolution, computed in double: channel
// counts that fill no vector (and ones that fill several), maps that are no multiple of the
// 4x4 tiles, padding on one side only or none, batches, the epilogues, accumulating into y, and
// 1 to 3 threads (blocks of tiles split among them).
#include "kernels/winograd_conv.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu_isa.h"

namespace sluice {
namespace {

struct Case {
  int64_t n, c, k, h, w, pad_top, pad_left, out_h, out_w;
};

// y[n][i][j][k] = sum over c, di, dj of x[n][i + di - pad_top][j + dj - pad_left][c] * w[k][c][di][dj].
std::vector<double> Reference(const Case& t, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias) {
  std::vector<double> y(t.n * t.out_h * t.out_w * t.k);
  for (int64_t n = 0; n < t.n; ++n) {
    for (int64_t i = 0; i < t.out_h; ++i) {
      for (int64_t j = 0; j < t.out_w; ++j) {
        for (int64_t k = 0; k < t.k; ++k) {
          double sum = bias[k];
          for (int64_t di = 0; di < 3; ++di) {
            for (int64_t dj = 0; dj < 3; ++dj) {
              const int64_t ih = i + di - t.pad_top, iw = j + dj - t.pad_left;
              if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
              for (int64_t c = 0; c < t.c; ++c) {
                sum += static_cast<double>(x[((n * t.h + ih) * t.w + iw) * t.c + c]) * w[((k * t.c + c) * 3 + di) * 3 + dj];
              }
            }
          }
          y[((n * t.out_h + i) * t.out_w + j) * t.k + k] = sum;
        }
      }
    }
  }
  return y;
}

TEST(WinogradConv3x3Test, AvailableWhereTheCpuHasAvx2) {
  EXPECT_EQ(WinogradConv3x3::Available(), MaxCpuIsa() >= CpuIsa::kAvx2);
}

TEST(WinogradConv3x3Test, MatchesTheDefinition) {
  if (!WinogradConv3x3::Available()) GTEST_SKIP() << "no AVX2 on this CPU";
  const std::vector<Case> cases = {
      {1, 64, 64, 16, 16, 1, 1, 16, 16},    // Whole tiles, vectors and panels.
      {1, 3, 5, 9, 7, 1, 1, 9, 7},          // Channels of part of a vector; maps of part of a tile.
      {2, 20, 40, 13, 11, 1, 1, 13, 11},    // A batch; 20 = 8 + 8 + 4 channels; 40 = 16 + 16 + 8.
      {1, 17, 33, 10, 10, 0, 0, 8, 8},      // No padding.
      {1, 16, 24, 11, 9, 0, 1, 10, 9},      // Padding on one side of each dim.
      {3, 8, 16, 6, 6, 2, 2, 8, 8},         // Padding wider than the kernel's reach: zeros.
      {1, 130, 70, 23, 29, 1, 1, 23, 29},   // Many panels of rows and channels, several blocks.
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  for (const Case& t : cases) {
    std::vector<float> x(t.n * t.h * t.w * t.c), w(t.k * t.c * 9), bias(t.k), residual(t.n * t.out_h * t.out_w * t.k);
    for (std::vector<float>* v : {&x, &w, &bias, &residual}) {
      for (float& f : *v) f = value(rng);
    }
    const std::vector<double> want = Reference(t, x, w, bias);
    const WinogradConv3x3 conv(w.data(), t.k, t.c);
    // Rounding of the transforms grows with the number of terms summed: C * 9.
    const double tolerance = 5e-7 * static_cast<double>(t.c * 9) + 1e-5;
    for (auto [epilogue, accumulate, threads] :
         {std::tuple{WinogradConv3x3::kNone, false, 1}, {WinogradConv3x3::kRelu, true, 2},
          {WinogradConv3x3::kClip, false, 3}, {WinogradConv3x3::kLeakyRelu, true, 1}}) {
      SCOPED_TRACE(::testing::Message() << "case c" << t.c << " k" << t.k << " " << t.h << "x" << t.w << " epilogue "
                                        << epilogue << " accumulate " << accumulate << " threads " << threads);
      const float alpha = epilogue == WinogradConv3x3::kClip ? -0.5f : 0.1f, beta = 0.75f;
      std::vector<float> y = accumulate ? residual : std::vector<float>(residual.size(), 1e9f);
      // Past y's end: must stay untouched.
      y.push_back(-7.0f);
      omp_set_num_threads(threads);
      conv.Run(x.data(), {t.n, t.h, t.w, t.pad_top, t.pad_left, t.out_h, t.out_w}, bias.data(), epilogue, alpha, beta,
               accumulate, threads, y.data());
      ASSERT_EQ(y.back(), -7.0f);
      for (size_t i = 0; i < want.size(); ++i) {
        double v = want[i] + (accumulate ? residual[i] : 0.0);
        if (epilogue == WinogradConv3x3::kRelu) v = std::max(v, 0.0);
        if (epilogue == WinogradConv3x3::kClip) v = std::min(std::max(v, double{alpha}), double{beta});
        if (epilogue == WinogradConv3x3::kLeakyRelu && v < 0) v *= alpha;
        ASSERT_NEAR(y[i], v, tolerance) << "at " << i;
      }
    }
  }
}

// No bias: zeros are added.
TEST(WinogradConv3x3Test, NoBias) {
  if (!WinogradConv3x3::Available()) GTEST_SKIP() << "no AVX2 on this CPU";
  const Case t{1, 8, 8, 5, 5, 1, 1, 5, 5};
  std::vector<float> x(t.h * t.w * t.c, 1.0f), w(t.k * t.c * 9, 0.5f), y(t.out_h * t.out_w * t.k);
  const WinogradConv3x3 conv(w.data(), t.k, t.c);
  conv.Run(x.data(), {t.n, t.h, t.w, t.pad_top, t.pad_left, t.out_h, t.out_w}, nullptr, WinogradConv3x3::kNone, 0, 0,
           false, 1, y.data());
  EXPECT_NEAR(y[0], 8 * 4 * 0.5, 1e-4);               // A corner: 4 taps of 8 channels.
  EXPECT_NEAR(y[(1 * 5 + 1) * 8], 8 * 9 * 0.5, 1e-4);  // Inside: all 9.
}

}  // namespace
}  // namespace sluice
