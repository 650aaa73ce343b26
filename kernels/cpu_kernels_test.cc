#include <limits>
#include <string>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(MatMulTest, FloatMatchesHandComputedProduct) {
  KernelTester t("MatMul");
  t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  ASSERT_OK(t.Run());
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
  t.ExpectOutput<float>(0, {2, 2}, {58, 64, 139, 154});
}

TEST(MatMulTest, TransposesForEveryType) {
  // a^T with a = [1 4; 2 5; 3 6] is [1 2 3; 4 5 6]; b^T with b = [7 9 11; 8 10 12].
  {
    KernelTester t("MatMul");
    t.Attr("transpose_a", true).Attr("transpose_b", true);
    t.Input<double>({3, 2}, {1, 4, 2, 5, 3, 6}).Input<double>({2, 3}, {7, 9, 11, 8, 10, 12});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2, 2}, {58, 64, 139, 154});
  }
  {
    KernelTester t("MatMul");
    t.Attr("transpose_a", true).Attr("transpose_b", true);
    t.Input<int32_t>({3, 2}, {1, 4, 2, 5, 3, 6}).Input<int32_t>({2, 3}, {7, 9, 11, 8, 10, 12});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 2}, {58, 64, 139, 154});
  }
}

TEST(MatMulTest, InnerDimensionMismatchIsAnError) {
  KernelTester t("MatMul");
  t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2, 2}, {1, 2, 3, 4});
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("inner dimensions differ"));
}

TEST(MatMulTest, EmptyInnerDimensionGivesZeros) {
  KernelTester t("MatMul");
  t.Input(Tensor(DT_FLOAT, TensorShape({2, 0}))).Input(Tensor(DT_FLOAT, TensorShape({0, 3})));
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(BinaryOpTest, SameShape) {
  KernelTester t("Sub");
  t.Input<int64_t>({3}, {10, 20, 30}).Input<int64_t>({3}, {1, 2, 3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {3}, {9, 18, 27});
}

TEST(BinaryOpTest, BroadcastsRowColumnAndScalar) {
  {
    KernelTester t("Add");  // [2,3] + [3]
    t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({3}, {10, 20, 30});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3}, {11, 22, 33, 14, 25, 36});
  }
  {
    KernelTester t("Mul");  // [2,1] * [1,3] -> outer product
    t.Input<int32_t>({2, 1}, {2, 3}).Input<int32_t>({1, 3}, {1, 10, 100});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 3}, {2, 20, 200, 3, 30, 300});
  }
  {
    KernelTester t("Div");  // scalar / [2]
    t.Input<double>({}, {1}).Input<double>({2}, {2, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {2}, {0.5, 0.25});
  }
  {
    KernelTester t("AddV2");  // [2,1,2] + [3,1]: rank extension on both sides
    t.Input<float>({2, 1, 2}, {1, 2, 3, 4}).Input<float>({3, 1}, {10, 20, 30});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3, 2},
                          {11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34});
  }
}

TEST(BinaryOpTest, IncompatibleShapesAreAnError) {
  KernelTester t("Add");
  t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2}, {1, 2});
  absl::Status s = t.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("Incompatible shapes: [2,3] vs. [2]"));
}

// numpy's answers, never SIGFPE: x / 0 == 0, INT_MIN / -1 wraps to INT_MIN.
TEST(BinaryOpTest, IntegerDivisionIsDefinedForEveryInput) {
  {
    KernelTester t("Div");
    t.Input<int32_t>({4}, {4, 6, INT32_MIN, 7}).Input<int32_t>({4}, {2, 0, -1, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {4}, {2, 0, INT32_MIN, -7});
  }
  {
    KernelTester t("Div");
    t.Input<int64_t>({3}, {INT64_MIN, INT64_MIN, 9}).Input<int64_t>({3}, {-1, 0, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int64_t>(0, {3}, {INT64_MIN, 0, -9});
  }
  {
    KernelTester t("Div");
    t.Input<int8_t>({2}, {INT8_MIN, 5}).Input<int8_t>({2}, {-1, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int8_t>(0, {2}, {INT8_MIN, 0});
  }
  {
    KernelTester t("Div");
    t.Input<uint32_t>({2}, {7, 9}).Input<uint32_t>({2}, {0, 2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<uint32_t>(0, {2}, {0, 4});
  }
}

TEST(BinaryOpTest, HalfGoesThroughFloat) {
  KernelTester t("Mul");
  t.Input<half>({2}, {half(1.5f), half(-2.0f)}).Input<half>({2}, {half(2.0f), half(0.25f)});
  ASSERT_OK(t.Run());
  EXPECT_EQ(static_cast<float>(t.output(0).flat<half>()[0]), 3.0f);
  EXPECT_EQ(static_cast<float>(t.output(0).flat<half>()[1]), -0.5f);
}

TEST(ReluTest, ClampsNegatives) {
  KernelTester t("Relu");
  t.Input<float>({4}, {-1, 0, 2, -0.5});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {4}, {0, 0, 2, 0});
}

// Integer products and sums wrap as numpy's do (signed overflow was undefined behaviour):
// [2^30, 2^30] . [4, 1] = 2^32 + 2^30, which is 2^30 in int32.
TEST(MatMulTest, IntegerOverflowWraps) {
  KernelTester t("MatMul");
  t.Input<int32_t>({1, 2}, {1 << 30, 1 << 30}).Input<int32_t>({2, 1}, {4, 1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {1, 1}, {1 << 30});
}

// Found by fuzzing: Abs and Neg of the most negative integer negated it in the signed type
// (undefined behaviour). They wrap, as numpy's do: abs(INT64_MIN) == INT64_MIN.
TEST(AbsNegTest, TheMostNegativeIntegerWraps) {
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  for (const char* op : {"Abs", "Neg"}) {
    KernelTester t(op);
    t.Input<int64_t>({3}, {kMin64, -5, 7});
    ASSERT_OK(t.Run());
    const bool abs = std::string(op) == "Abs";
    t.ExpectOutput<int64_t>(0, {3}, {kMin64, abs ? 5 : 5, abs ? 7 : -7});
    KernelTester t32(op);
    t32.Input<int32_t>({2}, {kMin32, kMin32 + 1});
    ASSERT_OK(t32.Run());
    t32.ExpectOutput<int32_t>(0, {2}, {kMin32, std::numeric_limits<int32_t>::max()});
  }
}

TEST(AddNTest, SumsAListInput) {
  KernelTester t("AddN");
  t.Input<float>({2}, {1, 2}).Input<float>({2}, {10, 20}).Input<float>({2}, {100, 200});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2}, {111, 222});
}

// Past one vector, with a tail, for floats and doubles; one input alone; and in order: each
// element sums as ((x0 + x1) + x2) + x3, so float rounding is the running sum's.
TEST(AddNTest, VectorsTailsAndOrder) {
  std::vector<float> a, b, c, d;
  for (int i = 0; i < 11; ++i) {
    a.push_back(1e8f);
    b.push_back(static_cast<float>(i) + 0.25f);
    c.push_back(-1e8f);
    d.push_back(static_cast<float>(i) * -0.5f);
  }
  KernelTester t("AddN");
  t.Input<float>({11}, a).Input<float>({11}, b).Input<float>({11}, c).Input<float>({11}, d);
  ASSERT_OK(t.Run());
  std::vector<float> want;
  for (int i = 0; i < 11; ++i) want.push_back(((a[i] + b[i]) + c[i]) + d[i]);
  t.ExpectOutput<float>(0, {11}, want);
  KernelTester twice("AddN");
  twice.Input<double>({3}, {1, 2, 3}).Input<double>({3}, {0.5, 0.25, 0.125});
  ASSERT_OK(twice.Run());
  twice.ExpectOutput<double>(0, {3}, {1.5, 2.25, 3.125});
  KernelTester one("AddN");
  one.Input<float>({2}, {4, 5});
  ASSERT_OK(one.Run());
  one.ExpectOutput<float>(0, {2}, {4, 5});
}

TEST(PlaceholderTest, UnfedPlaceholderNamesItself) {
  KernelTester t("Placeholder");
  t.Attr("dtype", DT_FLOAT);
  absl::Status s = t.Run();
  EXPECT_THAT(s.message(), HasSubstr("You must feed a value for placeholder tensor 'test_node'"));
}

TEST(ConstTest, OutputsItsValue) {
  KernelTester t("Const");
  t.Attr("value", Tensor::FromVector<int64_t>({5, 6}, TensorShape({2}))).Attr("dtype", DT_INT64);
  ASSERT_OK(t.Run());
  t.ExpectOutput<int64_t>(0, {2}, {5, 6});
}

}  // namespace
}  // namespace sluice
