// KernelTester's grouping of inputs into an op's args: the default, and ArgSizes for optional
// inputs that the default cannot place. (Here rather than in kernels/ to keep this harness test
// apart from the kernel families' files.)
#include "kernels/kernel_test_util.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(KernelTesterTest, ArgSizesPlaceOptionalInputs) {
  // Clip(input, min: list, max: list) with one bound: which one is up to ArgSizes.
  {
    KernelTester t("Onnx>Clip");  // The default gives a lone bound to the last list: max.
    t.Input<int32_t>({3}, {-5, 5, 50}).Input<int32_t>({}, {10});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {-5, 5, 10});
  }
  {
    KernelTester t("Onnx>Clip");  // First optional present, second absent.
    t.Input<int32_t>({3}, {-5, 5, 50}).Input<int32_t>({}, {10}).ArgSizes({1, 1, 0});
    absl::Status s = t.Run();
    ASSERT_OK(s);
    t.ExpectOutput<int32_t>(0, {3}, {10, 10, 50});
  }
  {
    KernelTester t("Onnx>Clip");
    t.Input<int32_t>({3}, {-5, 5, 50}).Input<int32_t>({}, {10}).ArgSizes({1, 0, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {-5, 5, 10});
  }
  {
    // Pad(data, pads, constant_value: list, axes: list): a constant without axes. The default
    // would hand the constant to axes.
    KernelTester t("Onnx>Pad");
    t.Input<float>({2, 2}, {1, 2, 3, 4}).Input<int64_t>({4}, {1, 0, 0, 1}).Input<float>({}, {9});
    t.ArgSizes({1, 1, 1, 0});
    absl::Status s = t.Run();
    ASSERT_OK(s);
    t.ExpectOutput<float>(0, {3, 3}, {9, 9, 9, 1, 2, 9, 3, 4, 9});
  }
}

TEST(KernelTesterTest, FewInputsGoInOrder) {
  // NonMaxSuppression(boxes, scores, max_output: list, iou: list, score: list) with only
  // max_output: fewer inputs than later args (this once wrapped a size_t around).
  KernelTester t("Onnx>NonMaxSuppression");
  t.Input<float>({1, 2, 4}, {0, 0, 1, 1, 5, 5, 6, 6}).Input<float>({1, 1, 2}, {0.9f, 0.5f});
  t.Input<int64_t>({}, {1});
  absl::Status s = t.Run();
  ASSERT_OK(s);
  t.ExpectOutput<int64_t>(0, {1, 3}, {0, 0, 0});  // One box per class: the best.

  KernelTester none("Onnx>Clip");  // No inputs at all: an error, not a crash.
  EXPECT_FALSE(none.Run().ok());
}

TEST(KernelTesterTest, ArgSizesAreCheckedAgainstTheOp) {
  KernelTester t("Onnx>Clip");
  t.Input<float>({1}, {1}).Input<float>({}, {0});
  EXPECT_THAT(t.ArgSizes({1, 1}).Run().message(), HasSubstr("ArgSizes has 2 entries but Onnx>Clip has 3"));
  EXPECT_THAT(t.ArgSizes({1, 1, 1}).Run().message(), HasSubstr("adds up to 3 inputs but 2 were given"));
  EXPECT_THAT(t.ArgSizes({0, 1, 1}).Run().message(), HasSubstr("arg 'input' of Onnx>Clip, which takes exactly one"));
  EXPECT_THAT(t.ArgSizes({1, -1, 2}).Run().message(), HasSubstr("gives -1 inputs to arg 'min'"));
}

}  // namespace
}  // namespace sluice
