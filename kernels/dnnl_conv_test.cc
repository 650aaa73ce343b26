// DnnlConv's weight cache: reordered weights are reused only for the same weight buffer, never
// for new values at an address an old buffer had (weights fed per run, as in training).
#include "kernels/dnnl_conv.h"

#include <atomic>
#include <thread>
#include <vector>

#include "framework/status_matchers.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

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

}  // namespace
}  // namespace sluice
