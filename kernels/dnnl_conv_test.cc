// DnnlConv's weight cache: reordered weights are reused only for the same weight buffer, never
// for new values at an address an old buffer had (weights fed per run, as in training).
#include "kernels/dnnl_conv.h"

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

}  // namespace
}  // namespace sluice
