// IsInf, Diag, DepthToSpace, BroadcastArgs and EluGrad against values worked out by hand.
#include <limits>

#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

TEST(TfMiscOpsTest, IsInfAndDiag) {
  KernelTester inf("IsInf");
  const float kInf = std::numeric_limits<float>::infinity();
  inf.Input<float>({4}, {1, kInf, -kInf, std::numeric_limits<float>::quiet_NaN()});
  ASSERT_OK(inf.Run());
  inf.ExpectOutput<bool>(0, {4}, {false, true, true, false});

  KernelTester diag("Diag");
  diag.Input<int32_t>({2}, {3, 4});
  ASSERT_OK(diag.Run());
  diag.ExpectOutput<int32_t>(0, {2, 2}, {3, 0, 0, 4});

  KernelTester scalar("Diag");
  scalar.Input<float>({}, {1});
  ExpectInvalid(scalar, "at least 1-D");
}

TEST(TfMiscOpsTest, DepthToSpaceMovesChannelBlocksToPixels) {
  // One pixel with channels 1..4 and block 2: [[1, 2], [3, 4]] as a 2x2 image of one channel.
  KernelTester t("DepthToSpace");
  t.Attr("block_size", int64_t{2}).Input<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 2, 2, 1}, {1, 2, 3, 4});
  // Two output channels: pixel (i, j) takes channels [(i * 2 + j) * 2, +2).
  KernelTester two("DepthToSpace");
  two.Attr("block_size", int64_t{2}).Input<int32_t>({1, 1, 1, 8}, {0, 1, 2, 3, 4, 5, 6, 7});
  ASSERT_OK(two.Run());
  two.ExpectOutput<int32_t>(0, {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});

  KernelTester bad("DepthToSpace");
  bad.Attr("block_size", int64_t{2}).Input<float>({1, 1, 1, 3}, {1, 2, 3});
  ExpectInvalid(bad, "divisible by block_size");
}

TEST(TfMiscOpsTest, BroadcastArgsAndEluGrad) {
  KernelTester b("BroadcastArgs");
  b.Input<int32_t>({2}, {3, 1}).Input<int32_t>({3}, {2, 1, 4});
  ASSERT_OK(b.Run());
  b.ExpectOutput<int32_t>(0, {3}, {2, 3, 4});

  KernelTester clash("BroadcastArgs");
  clash.Input<int32_t>({1}, {3}).Input<int32_t>({1}, {4});
  ExpectInvalid(clash, "Incompatible shapes");

  // Values are plain integers (TensorFlow's BCast): -1 against 1 stays -1, against 5 clashes.
  KernelTester unknown("BroadcastArgs");
  unknown.Input<int64_t>({3}, {1, 6, -1}).Input<int64_t>({4}, {3, 1, 1, 1});
  ASSERT_OK(unknown.Run());
  unknown.ExpectOutput<int64_t>(0, {4}, {3, 1, 6, -1});

  KernelTester both("BroadcastArgs");
  both.Input<int32_t>({2}, {-1, 2}).Input<int32_t>({2}, {-1, 1});
  ASSERT_OK(both.Run());
  both.ExpectOutput<int32_t>(0, {2}, {-1, 2});

  KernelTester minus_five("BroadcastArgs");
  minus_five.Input<int32_t>({1}, {-1}).Input<int32_t>({1}, {5});
  ExpectInvalid(minus_five, "Incompatible shapes");

  KernelTester g("EluGrad");  // y < 0: g * (y + 1); y >= 0: g.
  g.Input<float>({3}, {2, 2, 2}).Input<float>({3}, {-0.5f, 0, 3});
  ASSERT_OK(g.Run());
  g.ExpectOutput<float>(0, {3}, {1, 2, 2});
}

}  // namespace
}  // namespace sluice
