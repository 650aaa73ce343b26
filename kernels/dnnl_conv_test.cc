// DnnlConv: its weight cache (reordered weights are reused only for the same weight buffer,
// never for new values at an address an old buffer had, as with weights fed per run in
// training), primitives run on threads other than the one that made them, and huge
// convolutions run in bands of output rows that a cancelled step stops between.
#include "kernels/dnnl_conv.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "framework/status_matchers.h"
#include "kernels/winograd_conv.h"
#include "gtest/gtest.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace sluice {
namespace {

// Choices from the table (WinogradPays) only: no measuring, so a test of the table's choices
// does not depend on how fast this machine ran each kernel just now.
TuningCache* TableOnly() {
  static TuningCache* cache = new TuningCache("", "test", 0, /*enabled=*/false);
  return cache;
}

// A 1x1 convolution of one channel: y = w * x.
float ConvOf(const DnnlConv& conv, const Tensor& x, const Tensor& w) {
  WindowAttrs attrs;
  auto g = ComputeWindowGeometry({2, 2}, {1, 1}, attrs, false);
  EXPECT_OK(g);
  Tensor y(DT_FLOAT, TensorShape({1, 1, 2, 2}));
  auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
  EXPECT_TRUE(done.ok() && *done);
  return y.flat<float>()[0];
}

TEST(DnnlConvTest, NewWeightsAtAReusedAddress) {
  DnnlConv conv;
  Tensor x(DT_FLOAT, TensorShape({1, 1, 2, 2}));
  for (float& v : x.flat<float>()) v = 3;
  // Two buffers over the same memory, one after the other, as an allocator hands out a freed
  // block again.
  alignas(64) static float storage[1];
  storage[0] = 2;
  {
    Tensor w(DT_FLOAT, TensorShape({1, 1, 1, 1}), TensorBuffer::Wrap(storage, sizeof(storage), [](void*, size_t) {}));
    EXPECT_EQ(ConvOf(conv, x, w), 6);
    EXPECT_EQ(ConvOf(conv, x, w), 6);  // Cached.
  }
  storage[0] = 5;
  Tensor w(DT_FLOAT, TensorShape({1, 1, 1, 1}), TensorBuffer::Wrap(storage, sizeof(storage), [](void*, size_t) {}));
  EXPECT_EQ(ConvOf(conv, x, w), 15);
  // And a fresh buffer with other values.
  Tensor w2(DT_FLOAT, TensorShape({1, 1, 1, 1}));
  w2.flat<float>()[0] = -1;
  EXPECT_EQ(ConvOf(conv, x, w2), -3);
  EXPECT_EQ(ConvOf(conv, x, w), 15);
}

// A convolution made on one thread runs on others: each run brings its scratchpad (grouped
// 1-D convolutions go through oneDNN's gemm implementation, which needs one for im2col).
// Before, the primitive used oneDNN's per-thread scratchpad of the thread that made it: on
// other threads it wrote through a null pointer (`sluice bench` crashed in 7 runs of 20).
TEST(DnnlConvTest, OnePrimitiveRunsOnManyThreads) {
  constexpr int64_t kBatch = 2, kChannels = 6, kGroups = 2, kLength = 50, kKernel = 7;
  constexpr int64_t kOut = kLength - kKernel + 1, kPerGroup = kChannels / kGroups;
  Tensor x(DT_FLOAT, TensorShape({kBatch, kChannels, kLength}));
  Tensor w(DT_FLOAT, TensorShape({kChannels, kPerGroup, kKernel}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = static_cast<float>(i % 13) - 6;
  for (int64_t i = 0; i < w.NumElements(); ++i) w.flat<float>()[i] = static_cast<float>(i % 5) - 2;
  // The expected values, by the definition of a grouped convolution.
  std::vector<float> want(kBatch * kChannels * kOut, 0.0f);
  for (int64_t n = 0; n < kBatch; ++n) {
    for (int64_t o = 0; o < kChannels; ++o) {
      const int64_t group = o / kPerGroup;
      for (int64_t t = 0; t < kOut; ++t) {
        float sum = 0;
        for (int64_t c = 0; c < kPerGroup; ++c) {
          for (int64_t k = 0; k < kKernel; ++k) {
            sum += x.flat<float>()[(n * kChannels + group * kPerGroup + c) * kLength + t + k] *
                   w.flat<float>()[(o * kPerGroup + c) * kKernel + k];
          }
        }
        want[(n * kChannels + o) * kOut + t] = sum;
      }
    }
  }
  WindowAttrs attrs;
  auto g = ComputeWindowGeometry({kLength}, {kKernel}, attrs, false);
  ASSERT_OK(g);
  DnnlConv conv;
  auto run_and_check = [&] {
    Tensor y(DT_FLOAT, TensorShape({kBatch, kChannels, kOut}));
    auto done = conv.Run(x, w, nullptr, *g, kGroups, ConvPostOp::kNone, 0, 0, 1, &y);
    if (!done.ok() || !*done) return false;
    for (int64_t i = 0; i < y.NumElements(); ++i) {
      if (y.flat<float>()[i] != want[i]) return false;
    }
    return true;
  };
  ASSERT_TRUE(run_and_check());  // Made here.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (!run_and_check()) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A convolution by its definition, NCHW (any spatial rank), for comparing with oneDNN's.
std::vector<float> ReferenceConv(const Tensor& x, const Tensor& w, const Tensor* bias, const WindowGeometry& g,
                                 int64_t group) {
  const int spatial = x.dims() - 2;
  const int64_t n = x.dim_size(0), c = x.dim_size(1), m = w.dim_size(0), cg = c / group, mg = m / group;
  std::vector<int64_t> in(spatial), out = g.out;
  int64_t out_size = 1, k_size = 1;
  for (int i = 0; i < spatial; ++i) {
    in[i] = x.dim_size(2 + i);
    out_size *= out[i];
    k_size *= g.kernel[i];
  }
  std::vector<float> y(n * m * out_size);
  std::vector<int64_t> o(spatial), k(spatial);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < m; ++oc) {
      for (int64_t op = 0; op < out_size; ++op) {
        for (int64_t r = op, i = spatial - 1; i >= 0; --i) o[i] = r % out[i], r /= out[i];
        double sum = bias != nullptr ? bias->flat<float>()[oc] : 0.0;
        for (int64_t ic = 0; ic < cg; ++ic) {
          for (int64_t kp = 0; kp < k_size; ++kp) {
            for (int64_t r = kp, i = spatial - 1; i >= 0; --i) k[i] = r % g.kernel[i], r /= g.kernel[i];
            int64_t xi = b * c + (oc / mg) * cg + ic;
            bool inside = true;
            for (int i = 0; i < spatial; ++i) {
              const int64_t pos = o[i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
              inside = inside && pos >= 0 && pos < in[i];
              xi = xi * in[i] + pos;
            }
            if (inside) sum += double{x.flat<float>()[xi]} * w.flat<float>()[oc * cg * k_size + ic * k_size + kp];
          }
        }
        y[(b * m + oc) * out_size + op] = static_cast<float>(sum);
      }
    }
  }
  return y;
}

struct BandCase {
  std::vector<int64_t> x_dims, kernel, strides, dilations, pads;
  int64_t out_channels, group;
};

// Bands of output rows give exactly the values of the whole convolution: padded and unpadded
// edges, strides that leave input rows unread, dilations, groups, 1 to 3 spatial dims, batches.
TEST(DnnlConvTest, BandsOfRowsMatchTheDefinition) {
  const std::vector<BandCase> cases = {
      {{1, 3, 11, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4, 1},
      {{2, 4, 13, 7}, {3, 2}, {2, 1}, {1, 1}, {2, 0, 1, 1}, 6, 2},
      {{1, 2, 17, 5}, {3, 3}, {3, 2}, {2, 1}, {0, 1, 2, 0}, 4, 1},
      {{1, 6, 9, 9}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 6, 6},  // Depthwise.
      {{2, 3, 20}, {4}, {2}, {1}, {1, 2}, 5, 1},
      {{1, 2, 7, 5, 4}, {3, 2, 2}, {1, 2, 1}, {1, 1, 1}, {1, 0, 1, 1, 1, 0}, 3, 1},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1, 1);
  for (const BandCase& t : cases) {
    SCOPED_TRACE(::testing::PrintToString(t.x_dims) + " kernel " + ::testing::PrintToString(t.kernel));
    const int spatial = static_cast<int>(t.x_dims.size()) - 2;
    WindowAttrs attrs;
    attrs.strides = t.strides;
    attrs.dilations = t.dilations;
    attrs.pads = t.pads;
    std::vector<int64_t> in(t.x_dims.begin() + 2, t.x_dims.end());
    auto g = ComputeWindowGeometry(in, t.kernel, attrs, false);
    ASSERT_OK(g);
    Tensor x(DT_FLOAT, TensorShape(DimVector(t.x_dims.begin(), t.x_dims.end())));
    DimVector w_dims = {t.out_channels, t.x_dims[1] / t.group};
    w_dims.insert(w_dims.end(), t.kernel.begin(), t.kernel.end());
    Tensor w(DT_FLOAT, TensorShape(w_dims));
    Tensor bias(DT_FLOAT, TensorShape({t.out_channels}));
    for (Tensor* v : {&x, &w, &bias}) {
      for (float& f : v->flat<float>()) f = value(rng);
    }
    const std::vector<float> want = ReferenceConv(x, w, &bias, *g, t.group);
    DimVector y_dims = {t.x_dims[0], t.out_channels};
    y_dims.insert(y_dims.end(), g->out.begin(), g->out.end());
    // Slices of one multiply-add: one output row per band.
    for (int64_t slice : {int64_t{1} << 40, int64_t{1}, int64_t{200}}) {
      SCOPED_TRACE(slice);
      DnnlConv conv(slice);
      for (int repeat = 0; repeat < 2; ++repeat) {  // Made, then cached.
        Tensor y(DT_FLOAT, TensorShape(y_dims));
        auto done = conv.Run(x, w, &bias, *g, t.group, ConvPostOp::kNone, 0, 0, 1, &y);
        ASSERT_OK(done);
        ASSERT_TRUE(*done);
        ASSERT_EQ(y.NumElements(), static_cast<int64_t>(want.size()));
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y.flat<float>()[i], want[i], 1e-4) << "at " << i;
      }
    }
    (void)spatial;
  }
}

// Grouped convolutions of a few channels per group (run, where that is faster or forced by
// SLUICE_CONV_MERGE_GROUPS=1, as merged groups with block-diagonal weights) give the
// definition's values: NCHW and NHWC, strides, a bias, factors of 2, 4 and 8, and new weights
// for the same convolution. //kernels:dnnl_conv_merged_groups_test runs this with the merging
// forced on.
TEST(DnnlConvTest, FewChannelGroupsMatchTheDefinition) {
  struct Case { int64_t c, m, group, stride; bool nhwc; };
  const Case cases[] = {{128, 128, 32, 1, true}, {128, 128, 32, 2, false}, {32, 32, 16, 1, true},
                        {16, 16, 16, 1, false},  {48, 48, 8, 1, true},    {24, 48, 8, 2, true}};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1, 1);
  for (const Case& t : cases) {
    SCOPED_TRACE(::testing::Message() << t.c << "->" << t.m << " in " << t.group << " groups, stride " << t.stride
                                      << (t.nhwc ? " NHWC" : " NCHW"));
    const int64_t n = 1, h = 9, wd = 7;
    WindowAttrs attrs;
    attrs.strides = {t.stride, t.stride};
    attrs.pads = {1, 1, 1, 1};
    auto g = ComputeWindowGeometry({h, wd}, {3, 3}, attrs, false);
    ASSERT_OK(g);
    Tensor x(DT_FLOAT, TensorShape({n, t.c, h, wd})), bias(DT_FLOAT, TensorShape({t.m}));
    for (Tensor* v : {&x, &bias}) {
      for (float& f : v->flat<float>()) f = value(rng);
    }
    const int64_t oh = g->out[0], ow = g->out[1];
    // NHWC copies of X and of Y's definition: logical dims N,C,H,W, values stored N,H,W,C.
    auto to_nhwc = [](const Tensor& t) {
      const int64_t n = t.dim_size(0), c = t.dim_size(1), h = t.dim_size(2), w = t.dim_size(3);
      Tensor out(DT_FLOAT, t.shape());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t i = 0; i < h * w; ++i) out.flat<float>()[(b * h * w + i) * c + ch] = t.flat<float>()[(b * c + ch) * h * w + i];
      return out;
    };
    DnnlConv conv;
    for (int weights = 0; weights < 2; ++weights) {  // New weights: reordered (and expanded) again.
      Tensor w(DT_FLOAT, TensorShape({t.m, t.c / t.group, 3, 3}));
      for (float& f : w.flat<float>()) f = value(rng);
      const std::vector<float> want_nchw = ReferenceConv(x, w, &bias, *g, t.group);
      Tensor want(DT_FLOAT, TensorShape({n, t.m, oh, ow}));
      std::copy(want_nchw.begin(), want_nchw.end(), want.flat<float>().begin());
      const Tensor expect = t.nhwc ? to_nhwc(want) : want;
      const Tensor input = t.nhwc ? to_nhwc(x) : x;
      for (int repeat = 0; repeat < 2; ++repeat) {
        Tensor y(DT_FLOAT, TensorShape({n, t.m, oh, ow}));
        auto done = conv.Run(input, w, &bias, *g, t.group, ConvPostOp::kNone, 0, 0, 1, &y, t.nhwc, t.nhwc);
        ASSERT_OK(done);
        ASSERT_TRUE(*done);
        for (int64_t i = 0; i < y.NumElements(); ++i) {
          ASSERT_NEAR(y.flat<float>()[i], expect.flat<float>()[i], 1e-4) << "at " << i << ", weights " << weights;
        }
      }
    }
  }
}

// NHWC layouts, whole and in bands (a band of one image is a dense block), plain and grouped
// (oneDNN has no optimized kernel for grouped convolutions on plain NHWC; the blocked one it
// runs instead must read and write NHWC all the same).
TEST(DnnlConvTest, NhwcLayouts) {
  struct Case { int64_t c, m, group; };
  for (const Case& t : {Case{3, 4, 1}, Case{24, 24, 3}, Case{8, 8, 8}}) {
    SCOPED_TRACE(t.group);
    const int64_t n = 2, h = 10, wd = 6;
    WindowAttrs attrs;
    attrs.pads = {1, 1, 1, 1};
    auto g = ComputeWindowGeometry({h, wd}, {3, 3}, attrs, false);
    ASSERT_OK(g);
    Tensor x(DT_FLOAT, TensorShape({n, t.c, h, wd})), w(DT_FLOAT, TensorShape({t.m, t.c / t.group, 3, 3}));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> value(-1, 1);
    for (Tensor* v : {&x, &w}) {
      for (float& f : v->flat<float>()) f = value(rng);
    }
    const std::vector<float> want = ReferenceConv(x, w, nullptr, *g, t.group);  // NCHW.
    Tensor x_nhwc(DT_FLOAT, x.shape());  // Logical dims N,C,H,W; values stored N,H,W,C.
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < t.c; ++ch)
        for (int64_t p = 0; p < h * wd; ++p)
          x_nhwc.flat<float>()[(b * h * wd + p) * t.c + ch] = x.flat<float>()[(b * t.c + ch) * h * wd + p];
    for (int64_t slice : {int64_t{1} << 40, int64_t{1}}) {
      DnnlConv conv(slice);
      Tensor y(DT_FLOAT, TensorShape({n, t.m, h, wd}));
      auto done = conv.Run(x_nhwc, w, nullptr, *g, t.group, ConvPostOp::kRelu, 0, 0, 1, &y, /*x_nhwc=*/true,
                           /*y_nhwc=*/true);
      ASSERT_OK(done);
      ASSERT_TRUE(*done);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t o = 0; o < t.m; ++o)
          for (int64_t p = 0; p < h * wd; ++p)
            ASSERT_NEAR(y.flat<float>()[(b * h * wd + p) * t.m + o], std::max(0.0f, want[(b * t.m + o) * h * wd + p]),
                        1e-4);
    }
  }
}

// A cancelled step stops a banded convolution after the band that was running, with the
// step's status; an uncancelled one runs every band.
TEST(DnnlConvTest, CancellationStopsBetweenBands) {
  WindowAttrs attrs;
  auto g = ComputeWindowGeometry({8, 8}, {3, 3}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({1, 2, 8, 8})), w(DT_FLOAT, TensorShape({2, 2, 3, 3}));
  for (float& f : x.flat<float>()) f = 1;
  for (float& f : w.flat<float>()) f = 1;
  DnnlConv conv(1);
  CancellationManager cm;
  Tensor y(DT_FLOAT, TensorShape({1, 2, 6, 6}));
  for (float& f : y.flat<float>()) f = -1;
  cm.StartCancel(absl::DeadlineExceededError("step 3 ran past its deadline"));
  auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y, false, false, &cm);
  EXPECT_EQ(done.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(y.flat<float>()[0], 18);  // The first band ran...
  EXPECT_EQ(y.flat<float>()[y.NumElements() - 1], -1);  // ...the last did not.
  CancellationManager live;
  auto all = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y, false, false, &live);
  ASSERT_OK(all);
  EXPECT_TRUE(*all);
  EXPECT_EQ(y.flat<float>()[y.NumElements() - 1], 18);
}

// A batch of small images runs in runs of whole images (here 2, 2 and 1 for slices of 80
// multiply-adds and 36 per image), and a cancelled step stops after the first run.
TEST(DnnlConvTest, SmallImagesRunInBatchesOfImages) {
  WindowAttrs attrs;
  auto g = ComputeWindowGeometry({4, 4}, {3, 3}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({5, 1, 4, 4})), w(DT_FLOAT, TensorShape({1, 1, 3, 3}));
  for (float& f : x.flat<float>()) f = 1;
  for (float& f : w.flat<float>()) f = 1;
  DnnlConv conv(80);
  Tensor y(DT_FLOAT, TensorShape({5, 1, 2, 2}));
  for (float& f : y.flat<float>()) f = -1;
  CancellationManager cm;
  cm.StartCancel(absl::CancelledError("stop"));
  auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y, false, false, &cm);
  EXPECT_EQ(done.status().code(), absl::StatusCode::kCancelled);
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(y.flat<float>()[i], i < 8 ? 9 : -1) << "at " << i;
  auto all = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
  ASSERT_OK(all);
  ASSERT_TRUE(*all);
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(y.flat<float>()[i], 9) << "at " << i;
}

// Padding wider than a band: the first band would read no input row. oneDNN is not asked;
// the caller's GEMM path runs it.
TEST(DnnlConvTest, BandOfPaddingOnlyFallsBack) {
  WindowAttrs attrs;
  attrs.pads = {4, 0, 0, 0};
  auto g = ComputeWindowGeometry({3, 3}, {2, 2}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({1, 1, 3, 3})), w(DT_FLOAT, TensorShape({1, 1, 2, 2}));
  Tensor y(DT_FLOAT, TensorShape({1, 1, g->out[0], g->out[1]}));
  DnnlConv conv(1);
  auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
  ASSERT_OK(done);
  EXPECT_FALSE(*done);
}

// Stores an N,C,H,W tensor's values in N,H,W,C order (the logical dims stay N,C,H,W).
Tensor ToNhwc(const Tensor& x) {
  const int64_t n = x.dim_size(0), c = x.dim_size(1), hw = x.dim_size(2) * x.dim_size(3);
  Tensor out(DT_FLOAT, x.shape());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) out.flat<float>()[(b * hw + p) * c + ch] = x.flat<float>()[(b * c + ch) * hw + p];
  return out;
}

bool HasAvx512() { return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core; }

// 3x3 convolutions with enough channels and pixels run as Winograd's transform (on CPUs where
// oneDNN has one) and still give the definition's values: NCHW and NHWC, bias, a fused Relu,
// and a residual added in place (the reorder into the blocked layout must carry y's values
// in). On 1 and 2 threads (the choice depends on both).
TEST(DnnlConvTest, WinogradMatchesTheDefinition) {
  const int64_t n = 1, c = 64, m = 64, h = 40, wd = 40;
  WindowAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  auto g = ComputeWindowGeometry({h, wd}, {3, 3}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({n, c, h, wd})), w(DT_FLOAT, TensorShape({m, c, 3, 3}));
  Tensor bias(DT_FLOAT, TensorShape({m})), residual(DT_FLOAT, TensorShape({n, m, h, wd}));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1, 1);
  for (Tensor* v : {&x, &w, &bias, &residual}) {
    for (float& f : v->flat<float>()) f = value(rng);
  }
  const std::vector<float> conv = ReferenceConv(x, w, &bias, *g, 1);
  for (bool nhwc : {false, true}) {
    for (bool accumulate : {false, true}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "nhwc " << nhwc << " accumulate " << accumulate << " threads " << threads);
        DnnlConv dnnl_conv;
        dnnl_conv.UseTuningCache(TableOnly());
        for (int repeat = 0; repeat < 2; ++repeat) {  // Made, then cached.
          Tensor y(DT_FLOAT, TensorShape({n, m, h, wd}));
          std::copy_n(residual.flat<float>().data(), residual.NumElements(), y.flat<float>().data());
          if (nhwc) y = ToNhwc(y);
          auto done = dnnl_conv.Run(nhwc ? ToNhwc(x) : x, w, &bias, *g, 1, ConvPostOp::kRelu, 0, 0, threads, &y, nhwc,
                                    nhwc, nullptr, accumulate);
          ASSERT_OK(done);
          ASSERT_TRUE(*done);
          for (int64_t o = 0; o < m; ++o) {
            for (int64_t p = 0; p < h * wd; ++p) {
              const int64_t nchw = o * h * wd + p;
              const float want = std::max(0.0f, conv[nchw] + (accumulate ? residual.flat<float>()[nchw] : 0.0f));
              // Winograd's F(4x4, 3x3) rounds to about 1e-6 of the sum of the terms' magnitudes
              // (576 terms of 0.25 on average here).
              ASSERT_NEAR(y.flat<float>()[nhwc ? p * m + o : nchw], want, 2e-4) << "channel " << o << " pixel " << p;
            }
          }
        }
        ASSERT_FALSE(dnnl_conv.ImplementationNames().empty());
        const std::string kernel = dnnl_conv.ImplementationNames()[0];
        if (HasAvx512()) {
          EXPECT_TRUE(absl::StrContains(kernel, "wino")) << kernel;
        } else if (nhwc && WinogradConv3x3::Available()) {
          // No Winograd in oneDNN below AVX-512: Sluice's own runs.
          EXPECT_TRUE(absl::StartsWith(kernel, "sluice_wino_4x3")) << kernel;
        }
      }
    }
  }
}

// Weights that change between runs (a training step's) leave Winograd, whose weight transform
// would run on every change, for the direct kernel; each run computes with its own weights,
// also when new weights come in the buffer of the previous ones' entry.
TEST(DnnlConvTest, ChangingWeightsLeaveWinograd) {
  const int64_t c = 64, m = 64, h = 40, wd = 40;
  WindowAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  auto g = ComputeWindowGeometry({h, wd}, {3, 3}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({1, c, h, wd}));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  for (float& f : x.flat<float>()) f = value(rng);
  DnnlConv dnnl_conv;
  dnnl_conv.UseTuningCache(TableOnly());
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    Tensor w(DT_FLOAT, TensorShape({m, c, 3, 3}));
    for (float& f : w.flat<float>()) f = value(rng);
    const std::vector<float> want = ReferenceConv(x, w, nullptr, *g, 1);
    for (int repeat = 0; repeat < 2; ++repeat) {
      Tensor y(DT_FLOAT, TensorShape({1, m, h, wd}));
      auto done = dnnl_conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
      ASSERT_OK(done);
      ASSERT_TRUE(*done);
      for (int64_t i = 0; i < y.NumElements(); i += 97) ASSERT_NEAR(y.flat<float>()[i], want[i], 1e-4) << i;
    }
    ASSERT_FALSE(dnnl_conv.ImplementationNames().empty());
    if (step > 0) {
      EXPECT_FALSE(absl::StrContains(dnnl_conv.ImplementationNames()[0], "wino"))
          << dnnl_conv.ImplementationNames()[0];
    } else if (HasAvx512()) {
      EXPECT_TRUE(absl::StrContains(dnnl_conv.ImplementationNames()[0], "wino"));
    }
  }
}

// A 3x3 convolution of 64 channels into 64 on a 40x40 map, padded by 1 (one Winograd may
// pay for), every input value `xv` and every weight `wv`.
struct Conv64At40 {
  explicit Conv64At40(float xv, float wv)
      : g(*ComputeWindowGeometry({40, 40}, {3, 3}, Padded(), false)),
        x(DT_FLOAT, TensorShape({1, 64, 40, 40})),
        w(DT_FLOAT, TensorShape({64, 64, 3, 3})) {
    for (float& f : x.flat<float>()) f = xv;
    for (float& f : w.flat<float>()) f = wv;
  }
  static WindowAttrs Padded() {
    WindowAttrs attrs;
    attrs.pads = {1, 1, 1, 1};
    return attrs;
  }
  WindowGeometry g;
  Tensor x, w;
};

// Told up front that weights vary (the trainer's convolutions), the kernel never runs Winograd.
TEST(DnnlConvTest, AssumedVaryingWeightsNeverRunWinograd) {
  const Conv64At40 c(0.5f, 0.25f);
  const WindowGeometry* g = &c.g;
  const Tensor &x = c.x, &w = c.w;
  DnnlConv conv;
  conv.AssumeWeightsVary();
  Tensor y(DT_FLOAT, TensorShape({1, 64, 40, 40}));
  auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
  ASSERT_OK(done);
  ASSERT_TRUE(*done);
  EXPECT_FLOAT_EQ(y.flat<float>()[41], 64 * 9 * 0.125f);  // An inner pixel: all 9 taps.
  ASSERT_EQ(conv.ImplementationNames().size(), 1u);
  EXPECT_FALSE(absl::StrContains(conv.ImplementationNames()[0], "wino")) << conv.ImplementationNames()[0];
}

// Too few channels for the transform to pay: the direct kernel runs.
TEST(DnnlConvTest, NarrowConvolutionsStayDirect) {
  WindowAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  auto g = ComputeWindowGeometry({112, 112}, {3, 3}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({1, 16, 112, 112})), w(DT_FLOAT, TensorShape({16, 16, 3, 3}));
  for (float& f : x.flat<float>()) f = 1;
  for (float& f : w.flat<float>()) f = 0.5f;
  DnnlConv conv;
  conv.UseTuningCache(TableOnly());
  Tensor y(DT_FLOAT, TensorShape({1, 16, 112, 112}));
  auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
  ASSERT_OK(done);
  ASSERT_TRUE(*done);
  EXPECT_EQ(y.flat<float>()[0], 16 * 4 * 0.5f);  // A corner: 2x2 taps inside.
  EXPECT_EQ(y.flat<float>()[113], 16 * 9 * 0.5f);
  ASSERT_EQ(conv.ImplementationNames().size(), 1u);
  EXPECT_FALSE(absl::StrContains(conv.ImplementationNames()[0], "wino"));
}

// Where Winograd may pay, the kernel times it against the direct one once per shape and keeps
// the faster (whichever it is on this machine, the values are the definition's); the choice
// goes to the cache's file, and a second process reading that file (a second cache on it here)
// runs the same kernel without measuring. The file's other machines' and damaged lines are
// passed over.
TEST(DnnlConvTest, MeasuredChoiceIsKeptAndReused) {
  const std::string path = ::testing::TempDir() + "/conv_tuning.tsv";
  std::remove(path.c_str());
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("other machine\tconv3x3 1,2,3\twinograd\t-\nno tabs at all\n\t\t\n", f);
    std::fputs(std::string(10000, 'x').c_str(), f);
    std::fputs("\n", f);
    std::fclose(f);
  }
  const Conv64At40 c(0.5f, 0.25f);
  const WindowGeometry* g = &c.g;
  const Tensor &x = c.x, &w = c.w;
  std::string first_kernel;
  for (int process = 0; process < 2; ++process) {
    SCOPED_TRACE(::testing::Message() << "process " << process);
    TuningCache cache(path, "this machine", 1e9, true);
    DnnlConv conv;
    conv.UseTuningCache(&cache);
    for (int repeat = 0; repeat < 2; ++repeat) {
      Tensor y(DT_FLOAT, TensorShape({1, 64, 40, 40}));
      auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y);
      ASSERT_OK(done);
      ASSERT_TRUE(*done);
      EXPECT_NEAR(y.flat<float>()[41], 64 * 9 * 0.125f, 1e-3);  // An inner pixel: all 9 taps.
      EXPECT_NEAR(y.flat<float>()[0], 64 * 4 * 0.125f, 1e-3);   // A corner: 4.
    }
    EXPECT_EQ(cache.measured(), process == 0 ? 1 : 0);
    ASSERT_EQ(conv.ImplementationNames().size(), 1u);
    if (process == 0) {
      first_kernel = conv.ImplementationNames()[0];
    } else {
      EXPECT_EQ(conv.ImplementationNames()[0], first_kernel);
    }
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(text, "this machine\tconv3x3 ")) << text.substr(0, 300);
  EXPECT_TRUE(absl::StrContains(text, " ms, winograd ")) << "what was measured is written beside the choice";
  // Another machine's line for the same problem is not this machine's choice.
  TuningCache elsewhere(path, "another machine", 1e9, true);
  DnnlConv conv;
  conv.UseTuningCache(&elsewhere);
  Tensor y(DT_FLOAT, TensorShape({1, 64, 40, 40}));
  ASSERT_OK(conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y));
  EXPECT_EQ(elsewhere.measured(), 1);
}

// A convolution that adds into y (a residual connection) is measured too: the timing runs write
// a copy of y, and the result holds the residual once. On NHWC the measurement includes Sluice's
// own Winograd kernel where the CPU has AVX2 (what was measured says so).
TEST(DnnlConvTest, MeasuredAccumulatingConvolutionAddsItsResidualOnce) {
  const Conv64At40 c(0.5f, 0.25f);
  const std::string path = ::testing::TempDir() + "/accumulating_tuning.tsv";
  std::remove(path.c_str());
  TuningCache cache(path, "this machine", 1e9, true);
  DnnlConv conv;
  conv.UseTuningCache(&cache);
  Tensor y(DT_FLOAT, TensorShape({1, 64, 40, 40}));  // Logical NCHW dims, NHWC values (ToNhwc).
  for (float& f : y.flat<float>()) f = 3;
  auto done = conv.Run(ToNhwc(c.x), c.w, nullptr, c.g, 1, ConvPostOp::kNone, 0, 0, 1, &y, true, true, nullptr,
                       /*accumulate=*/true);
  ASSERT_OK(done);
  ASSERT_TRUE(*done);
  EXPECT_EQ(cache.measured(), 1);
  EXPECT_NEAR(y.flat<float>()[41 * 64], 64 * 9 * 0.125f + 3, 1e-3);  // Pixel (1, 1): all 9 taps.
  EXPECT_NEAR(y.flat<float>()[0], 64 * 4 * 0.125f + 3, 1e-3);        // A corner: 4.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(text, "direct ")) << text;
  if (WinogradConv3x3::Available()) {
    EXPECT_TRUE(absl::StrContains(text, ", sluice winograd ")) << text;
  }
}

// With no measuring time left, the table decides and nothing is recorded.
TEST(DnnlConvTest, SpentBudgetFallsBackToTheTable) {
  const Conv64At40 c(1, 1);
  const WindowGeometry* g = &c.g;
  const Tensor &x = c.x, &w = c.w;
  TuningCache spent("", "this machine", 0, true);
  DnnlConv conv;
  conv.UseTuningCache(&spent);
  Tensor y(DT_FLOAT, TensorShape({1, 64, 40, 40}));
  ASSERT_OK(conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y));
  EXPECT_EQ(spent.measured(), 0);
  EXPECT_NEAR(y.flat<float>()[41], 64 * 9, 1e-2);
}

// Depthwise convolutions on NHWC rows 14 and more wide run on oneDNN's direct depthwise
// kernel (its batch-reduce one, ranked first, was up to 2x slower) with the definition's values.
TEST(DnnlConvTest, WideDepthwiseOnNhwcRunsDirect) {
  const int64_t c = 40, h = 20, wd = 28;
  WindowAttrs attrs;
  attrs.pads = {2, 2, 2, 2};
  auto g = ComputeWindowGeometry({h, wd}, {5, 5}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({1, c, h, wd})), w(DT_FLOAT, TensorShape({c, 1, 5, 5}));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  for (Tensor* v : {&x, &w}) {
    for (float& f : v->flat<float>()) f = value(rng);
  }
  const std::vector<float> want = ReferenceConv(x, w, nullptr, *g, c);
  DnnlConv conv;
  Tensor y(DT_FLOAT, TensorShape({1, c, h, wd}));
  auto done = conv.Run(ToNhwc(x), w, nullptr, *g, c, ConvPostOp::kNone, 0, 0, 1, &y, true, true);
  ASSERT_OK(done);
  ASSERT_TRUE(*done);
  for (int64_t o = 0; o < c; ++o)
    for (int64_t p = 0; p < h * wd; ++p) ASSERT_NEAR(y.flat<float>()[p * c + o], want[o * h * wd + p], 1e-4);
  if (HasAvx512()) {
    EXPECT_TRUE(absl::StartsWith(conv.ImplementationNames()[0], "jit_dw")) << conv.ImplementationNames()[0];
  }
}

// The Swish post-op (applied after oneDNN's convolution by SiluInPlace): x * sigmoid(x) of the
// definition's values, NCHW and NHWC, with and without a residual added first.
TEST(DnnlConvTest, SwishFollowsTheConvolution) {
  const int64_t c = 8, m = 24, h = 9, wd = 11;
  WindowAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  auto g = ComputeWindowGeometry({h, wd}, {3, 3}, attrs, false);
  ASSERT_OK(g);
  Tensor x(DT_FLOAT, TensorShape({1, c, h, wd})), w(DT_FLOAT, TensorShape({m, c, 3, 3}));
  Tensor residual(DT_FLOAT, TensorShape({1, m, h, wd}));
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-1, 1);
  for (Tensor* v : {&x, &w, &residual}) {
    for (float& f : v->flat<float>()) f = value(rng);
  }
  const std::vector<float> conv = ReferenceConv(x, w, nullptr, *g, 1);
  for (bool nhwc : {false, true}) {
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "nhwc " << nhwc << " accumulate " << accumulate);
      DnnlConv dnnl_conv;
      const Tensor start = nhwc ? ToNhwc(residual) : residual;
      Tensor y(DT_FLOAT, start.shape());  // Its own buffer: the residual is read again below.
      std::copy_n(start.flat<float>().data(), start.NumElements(), y.flat<float>().data());
      auto done = dnnl_conv.Run(nhwc ? ToNhwc(x) : x, w, nullptr, *g, 1, ConvPostOp::kSwish, 0, 0, 1, &y, nhwc, nhwc,
                                nullptr, accumulate);
      ASSERT_OK(done);
      ASSERT_TRUE(*done);
      for (int64_t o = 0; o < m; ++o) {
        for (int64_t p = 0; p < h * wd; ++p) {
          const int64_t nchw = o * h * wd + p;
          const double v = double{conv[nchw]} + (accumulate ? residual.flat<float>()[nchw] : 0.0f);
          ASSERT_NEAR(y.flat<float>()[nhwc ? p * m + o : nchw], v / (1.0 + std::exp(-v)), 1e-4);
        }
      }
    }
  }
}

// A network's first convolution: NCHW input of 1 to 4 channels, NHWC output (the input is
// interleaved by NchwToNhwcFewChannels instead of oneDNN's reorder), batches of 2.
TEST(DnnlConvTest, FewChannelNchwInputIntoNhwc) {
  for (int64_t c : {1, 2, 3, 4}) {
    SCOPED_TRACE(c);
    const int64_t n = 2, m = 16, h = 19, wd = 23;
    WindowAttrs attrs;
    attrs.pads = {1, 1, 1, 1};
    attrs.strides = {2, 2};
    auto g = ComputeWindowGeometry({h, wd}, {3, 3}, attrs, false);
    ASSERT_OK(g);
    Tensor x(DT_FLOAT, TensorShape({n, c, h, wd})), w(DT_FLOAT, TensorShape({m, c, 3, 3}));
    std::mt19937 rng(19);
    std::uniform_real_distribution<float> value(-1, 1);
    for (Tensor* v : {&x, &w}) {
      for (float& f : v->flat<float>()) f = value(rng);
    }
    const std::vector<float> want = ReferenceConv(x, w, nullptr, *g, 1);
    const int64_t oh = g->out[0], ow = g->out[1];
    DnnlConv conv;
    for (int repeat = 0; repeat < 2; ++repeat) {
      Tensor y(DT_FLOAT, TensorShape({n, m, oh, ow}));
      auto done = conv.Run(x, w, nullptr, *g, 1, ConvPostOp::kNone, 0, 0, 1, &y, /*x_nhwc=*/false, /*y_nhwc=*/true);
      ASSERT_OK(done);
      ASSERT_TRUE(*done);
      // x is interleaved into NHWC and the kernel writes y where it lies (AVX2's kernel for
      // NCHW input writes its blocked layout, whose reorder cost a third of the convolution).
      ASSERT_FALSE(conv.ImplementationNames().empty());
      EXPECT_TRUE(absl::StrContains(conv.ImplementationNames()[0], "+interleaved x")) << conv.ImplementationNames()[0];
      EXPECT_FALSE(absl::StrContains(conv.ImplementationNames()[0], "+reordered")) << conv.ImplementationNames()[0];
      for (int64_t b = 0; b < n; ++b)
        for (int64_t o = 0; o < m; ++o)
          for (int64_t p = 0; p < oh * ow; ++p)
            ASSERT_NEAR(y.flat<float>()[(b * oh * ow + p) * m + o], want[(b * m + o) * oh * ow + p], 1e-4);
    }
  }
}

}  // namespace
}  // namespace sluice
