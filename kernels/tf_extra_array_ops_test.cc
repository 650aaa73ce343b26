// The TensorFlow ops of ops/tf_extra_array_ops.cc (kernels in tf_extra_array_ops.cc, Cumprod in
// cumsum_op.cc, Einsum in einsum_op.cc); every expected value worked out by hand from
// TensorFlow's documented semantics.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kHuge = int64_t{1} << 62;

// ---- UnsortedSegmentSum / Prod / Max / Min.

TEST(UnsortedSegmentTest, SumAddsRowsPerSegment) {
  // TensorFlow's documented example: rows 0 and 2 go to segment 0, row 1 to segment 1.
  KernelTester t("UnsortedSegmentSum");
  t.Input<int32_t>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 4, 3, 2, 1}).Input<int32_t>({3}, {0, 1, 0}).Input<int32_t>({}, {2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {2, 4}, {5, 5, 5, 5, 5, 6, 7, 8});
}

TEST(UnsortedSegmentTest, NegativeIdsAreDroppedAndEmptySegmentsAreZero) {
  KernelTester t("UnsortedSegmentSum");
  t.Input<float>({4}, {1, 2, 3, 4}).Input<int32_t>({4}, {0, -1, 1, 0}).Input<int64_t>({}, {3});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {3}, {5, 3, 0});
}

TEST(UnsortedSegmentTest, MultiDimensionalIdsArePrefixOfData) {
  // ids [2, 2] over data [2, 2, 2]: each id picks a vector of 2.
  KernelTester t("UnsortedSegmentSum");
  t.Input<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}).Input<int32_t>({2, 2}, {1, 0, 1, 1}).Input<int32_t>({}, {2});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {2, 2}, {3, 4, 1 + 5 + 7, 2 + 6 + 8});
}

TEST(UnsortedSegmentTest, ProdMaxMinAndTheirIdentities) {
  {
    KernelTester t("UnsortedSegmentProd");
    t.Input<int32_t>({3}, {2, 3, 4}).Input<int32_t>({3}, {0, 0, 1}).Input<int32_t>({}, {3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {6, 4, 1});
  }
  {
    KernelTester t("UnsortedSegmentMax");
    t.Input<float>({4}, {1, 5, 3, 2}).Input<int32_t>({4}, {0, 0, 1, 2}).Input<int32_t>({}, {4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4}, {5, 3, 2, std::numeric_limits<float>::lowest()});
  }
  {
    KernelTester t("UnsortedSegmentMin");
    t.Input<int32_t>({3}, {4, 2, 7}).Input<int64_t>({3}, {1, 1, 0}).Input<int32_t>({}, {3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3}, {7, 2, std::numeric_limits<int32_t>::max()});
  }
}

TEST(UnsortedSegmentTest, IntegerSumsWrap) {
  KernelTester t("UnsortedSegmentSum");
  t.Input<int8_t>({2}, {100, 100}).Input<int32_t>({2}, {0, 0}).Input<int32_t>({}, {1});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int8_t>(0, {1}, {-56});  // 200 - 256.
}

TEST(UnsortedSegmentTest, Errors) {
  {
    KernelTester t("UnsortedSegmentSum");
    t.Input<float>({2}, {1, 2}).Input<int32_t>({2}, {0, 2}).Input<int32_t>({}, {2});
    ExpectInvalid(t, "segment_ids[1] = 2 is out of range [0, 2)");
  }
  {
    KernelTester t("UnsortedSegmentSum");
    t.Input<float>({2}, {1, 2}).Input<int32_t>({2}, {0, 0}).Input<int32_t>({}, {-1});
    ExpectInvalid(t, "must not be negative");
  }
  {
    KernelTester t("UnsortedSegmentMax");
    t.Input<float>({3}, {1, 2, 3}).Input<int32_t>({2}, {0, 0}).Input<int32_t>({}, {1});
    ExpectInvalid(t, "does not start with segment_ids.shape");
  }
  {
    KernelTester t("UnsortedSegmentSum");
    t.Input<float>({2}, {1, 2}).Input<int32_t>({2}, {0, 0}).Input<int32_t>({2}, {1, 1});
    ExpectInvalid(t, "num_segments must be a scalar");
  }
  {
    // 2^62 segments of 4 elements: the output's element count overflows int64.
    KernelTester t("UnsortedSegmentSum");
    t.Input<float>({1, 4}, {1, 2, 3, 4}).Input<int32_t>({1}, {0}).Input<int64_t>({}, {kHuge});
    ExpectInvalid(t, "more elements than fit in int64");
  }
  {
    // 2^50 floats: counts fine, but far past what one tensor may hold.
    KernelTester t("UnsortedSegmentSum");
    t.Input<float>({1}, {1}).Input<int32_t>({1}, {0}).Input<int64_t>({}, {int64_t{1} << 50});
    EXPECT_EQ(t.Run().code(), absl::StatusCode::kResourceExhausted);
  }
}

// ---- ReverseV2.

TEST(ReverseV2Test, ReversesTheListedAxes) {
  {
    KernelTester t("ReverseV2");
    t.Input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int32_t>({1}, {1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 3}, {3, 2, 1, 6, 5, 4});
  }
  {
    KernelTester t("ReverseV2");
    t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int64_t>({2}, {0, -1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3}, {6, 5, 4, 3, 2, 1});
  }
  {
    KernelTester t("ReverseV2");
    t.Input<std::string>({2, 2}, {"a", "b", "c", "d"}).Input<int32_t>({1}, {-2});
    ASSERT_OK(t.Run());
    t.ExpectOutput<std::string>(0, {2, 2}, {"c", "d", "a", "b"});
  }
  {
    KernelTester t("ReverseV2");  // No axes: a copy.
    t.Input<bool>({3}, {true, false, false}).Input<int32_t>({0}, {});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {3}, {true, false, false});
  }
  {
    KernelTester t("ReverseV2");
    t.Input(Tensor(DT_FLOAT, TensorShape({0, 3}))).Input<int32_t>({1}, {1});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), TensorShape({0, 3}));
  }
}

TEST(ReverseV2Test, Errors) {
  {
    KernelTester t("ReverseV2");
    t.Input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int32_t>({2}, {1, -1});
    ExpectInvalid(t, "specified more than once");
  }
  {
    KernelTester t("ReverseV2");
    t.Input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int32_t>({1}, {2});
    ExpectInvalid(t, "is out of range for rank 2");
  }
  {
    KernelTester t("ReverseV2");
    t.Input<int32_t>({2}, {1, 2}).Input<int32_t>({}, {0});
    ExpectInvalid(t, "axis must be a vector");
  }
}

// ---- SpaceToBatchND and BatchToSpaceND (TensorFlow's documented examples).

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(SpaceToBatchNDTest, DocumentedExamples) {
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 2, 2, 1}, {1, 2, 3, 4}).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4, 1, 1, 1}, {1, 2, 3, 4});
  }
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 2, 2, 3}, Iota(12)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4, 1, 1, 3}, Iota(12));
  }
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 4, 4, 1}, Iota(16)).Input<int64_t>({2}, {2, 2}).Input<int64_t>({2, 2}, {0, 0, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4, 2, 2, 1}, {1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16});
  }
  {
    // Two batches, width padded by 2 in front: output batch (o0 * 2 + o1) * 2 + b.
    KernelTester t("SpaceToBatchND");
    t.Input<float>({2, 2, 4, 1}, Iota(16)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 2, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {8, 1, 3, 1}, {0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12,
                                            0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16});
  }
}

TEST(SpaceToBatchNDTest, Errors) {
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 3, 2, 1}, Iota(6)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ExpectInvalid(t, "is not divisible by block size 2");
  }
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 2, 2, 1}, Iota(4)).Input<int32_t>({2}, {2, 0}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ExpectInvalid(t, "must be positive");
  }
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 2, 2, 1}, Iota(4)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, -2, 0, 0});
    ExpectInvalid(t, "must be non-negative");
  }
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({1, 2, 2, 1}, Iota(4)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2}, {0, 0});
    ExpectInvalid(t, "paddings must have shape [2, 2]");
  }
  {
    KernelTester t("SpaceToBatchND");
    t.Input<float>({2, 2}, Iota(4)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ExpectInvalid(t, "needs rank >= 1 + 2");
  }
  {
    // A block of 2^62 (padded to fit) times a batch of 2 overflows int64.
    KernelTester t("SpaceToBatchND");
    t.Input<float>({2, 1}, {1, 2}).Input<int64_t>({1}, {kHuge}).Input<int64_t>({1, 2}, {0, kHuge - 1});
    ExpectInvalid(t, "overflows int64");
  }
}

TEST(BatchToSpaceNDTest, InvertsSpaceToBatchND) {
  {
    KernelTester t("BatchToSpaceND");
    t.Input<float>({4, 1, 1, 1}, {1, 2, 3, 4}).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 2, 2, 1}, {1, 2, 3, 4});
  }
  {
    KernelTester t("BatchToSpaceND");
    t.Input<float>({4, 2, 2, 1}, {1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16})
        .Input<int32_t>({2}, {2, 2})
        .Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 4, 4, 1}, Iota(16));
  }
  {
    // The cropped inverse of the padded SpaceToBatchND example.
    KernelTester t("BatchToSpaceND");
    t.Input<float>({8, 1, 3, 1}, {0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16})
        .Input<int32_t>({2}, {2, 2})
        .Input<int64_t>({2, 2}, {0, 0, 2, 0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2, 4, 1}, Iota(16));
  }
  {
    // Strings move by value; crop one row after a block of 2 along the only spatial dim.
    KernelTester t("BatchToSpaceND");
    t.Input<std::string>({2, 2}, {"a", "b", "c", "d"}).Input<int32_t>({1}, {2}).Input<int32_t>({1, 2}, {0, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<std::string>(0, {1, 3}, {"a", "c", "b"});
  }
}

TEST(BatchToSpaceNDTest, Errors) {
  {
    KernelTester t("BatchToSpaceND");
    t.Input<float>({3, 1, 1, 1}, Iota(3)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, 0, 0});
    ExpectInvalid(t, "is not divisible by the product of block_shape");
  }
  {
    KernelTester t("BatchToSpaceND");
    t.Input<float>({4, 1, 1, 1}, Iota(4)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {1, 2, 0, 0});
    ExpectInvalid(t, "are more than its size 2");
  }
  {
    KernelTester t("BatchToSpaceND");
    t.Input<float>({4, 1, 1, 1}, Iota(4)).Input<int32_t>({2}, {2, 2}).Input<int32_t>({2, 2}, {0, 0, -1, 0});
    ExpectInvalid(t, "must be non-negative");
  }
  {
    // Blocks of 2^62 and 4: their product overflows int64.
    KernelTester t("BatchToSpaceND");
    t.Input<float>({1, 1, 1}, {1}).Input<int64_t>({2}, {kHuge, 4}).Input<int64_t>({2, 2}, {0, 0, 0, 0});
    ExpectInvalid(t, "overflows int64");
  }
}

// ---- LinSpace.

TEST(LinSpaceTest, IncludesBothEnds) {
  {
    KernelTester t("LinSpace");
    t.Input<float>({}, {10}).Input<float>({}, {12}).Input<int32_t>({}, {3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3}, {10, 11, 12});
  }
  {
    KernelTester t("LinSpace");
    t.Input<double>({}, {1}).Input<double>({}, {0}).Input<int64_t>({}, {5});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {5}, {1, 0.75, 0.5, 0.25, 0});
  }
  {
    KernelTester t("LinSpace");
    t.Input<float>({}, {4}).Input<float>({}, {9}).Input<int32_t>({}, {1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1}, {4});
  }
}

TEST(LinSpaceTest, Errors) {
  {
    KernelTester t("LinSpace");
    t.Input<float>({}, {0}).Input<float>({}, {1}).Input<int32_t>({}, {0});
    ExpectInvalid(t, "num = 0 must be positive");
  }
  {
    KernelTester t("LinSpace");
    t.Input<float>({1}, {0}).Input<float>({}, {1}).Input<int32_t>({}, {2});
    ExpectInvalid(t, "must be scalars");
  }
  {
    KernelTester t("LinSpace");
    t.Input<float>({}, {0}).Input<float>({}, {1}).Input<int64_t>({}, {kHuge});
    EXPECT_EQ(t.Run().code(), absl::StatusCode::kResourceExhausted);
  }
}

// ---- Unique and UniqueV2.

TEST(UniqueTest, VectorInFirstOccurrenceOrder) {
  KernelTester t("Unique");
  t.Input<int32_t>({9}, {1, 1, 2, 4, 4, 4, 7, 8, 8});
  ASSERT_OK(t.Run());
  t.ExpectOutput<int32_t>(0, {5}, {1, 2, 4, 7, 8});
  t.ExpectOutput<int32_t>(1, {9}, {0, 0, 1, 2, 2, 2, 3, 4, 4});
}

TEST(UniqueTest, V2AlongAxes) {
  {
    KernelTester t("UniqueV2");
    t.Input<int32_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 0, 0}).Input<int32_t>({1}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 3}, {1, 0, 0, 2, 0, 0});
    t.ExpectOutput<int32_t>(1, {3}, {0, 0, 1});
  }
  {
    KernelTester t("UniqueV2");
    t.Attr("out_idx", DT_INT64).Input<int32_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 0, 0}).Input<int64_t>({1}, {-1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {3, 2}, {1, 0, 1, 0, 2, 0});
    t.ExpectOutput<int64_t>(1, {3}, {0, 1, 1});
  }
  {
    // No axis: a vector, here of strings.
    KernelTester t("UniqueV2");
    t.Input<std::string>({4}, {"b", "a", "b", "c"}).Input<int32_t>({0}, {});
    ASSERT_OK(t.Run());
    t.ExpectOutput<std::string>(0, {3}, {"b", "a", "c"});
    t.ExpectOutput<int32_t>(1, {4}, {0, 1, 0, 2});
  }
  {
    // Floats compare by value: -0 equals 0.
    KernelTester t("UniqueV2");
    t.Input<float>({3}, {0.f, -0.f, 1.5f}).Input<int32_t>({1}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2}, {0, 1.5f});
    t.ExpectOutput<int32_t>(1, {3}, {0, 0, 1});
  }
  {
    KernelTester t("UniqueV2");
    t.Input<bool>({2, 0}, {}).Input<int32_t>({1}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {1, 0}, {});  // Two empty rows are equal.
    t.ExpectOutput<int32_t>(1, {2}, {0, 0});
  }
}

TEST(UniqueTest, Errors) {
  {
    KernelTester t("Unique");
    t.Input<int32_t>({2, 2}, {1, 2, 3, 4});
    ExpectInvalid(t, "x must be a vector");
  }
  {
    KernelTester t("UniqueV2");
    t.Input<int32_t>({2, 2}, {1, 2, 3, 4}).Input<int32_t>({1}, {2});
    ExpectInvalid(t, "out of range for rank 2");
  }
  {
    KernelTester t("UniqueV2");
    t.Input<int32_t>({2, 2}, {1, 2, 3, 4}).Input<int32_t>({2}, {0, 1});
    ExpectInvalid(t, "at most one value");
  }
}

// ---- SparseToDense.

TEST(SparseToDenseTest, ScatterIntoDefault) {
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2, 2}, {0, 1, 1, 2}).Input<int32_t>({2}, {2, 3}).Input<float>({2}, {5, 6}).Input<float>({}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 3}, {0, 5, 0, 0, 0, 6});
  }
  {
    // A scalar index into a vector, a scalar value.
    KernelTester t("SparseToDense");
    t.Input<int64_t>({}, {2}).Input<int64_t>({1}, {4}).Input<int32_t>({}, {7}).Input<int32_t>({}, {-1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {4}, {-1, -1, 7, -1});
  }
  {
    // A vector of indices into a vector, one scalar value for all.
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2}, {0, 3}).Input<int32_t>({1}, {5}).Input<bool>({}, {true}).Input<bool>({}, {false});
    ASSERT_OK(t.Run());
    t.ExpectOutput<bool>(0, {5}, {true, false, false, true, false});
  }
  {
    // Unordered indices pass without validation.
    KernelTester t("SparseToDense");
    t.Attr("validate_indices", false)
        .Input<int32_t>({2}, {3, 0})
        .Input<int32_t>({1}, {4})
        .Input<std::string>({2}, {"x", "y"})
        .Input<std::string>({}, {"-"});
    ASSERT_OK(t.Run());
    t.ExpectOutput<std::string>(0, {4}, {"y", "-", "-", "x"});
  }
}

TEST(SparseToDenseTest, Errors) {
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2}, {0, 4}).Input<int32_t>({1}, {4}).Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "sparse_indices[1] = [4] is out of bounds");
  }
  {
    KernelTester t("SparseToDense");
    t.Attr("validate_indices", false).Input<int32_t>({1}, {-1}).Input<int32_t>({1}, {4});
    t.Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "is out of bounds");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2}, {1, 1}).Input<int32_t>({1}, {4}).Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "is repeated");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2, 2}, {1, 0, 0, 2}).Input<int32_t>({2}, {2, 3}).Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "is out of order");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2}, {0, 1}).Input<int32_t>({1}, {4}).Input<float>({3}, {1, 2, 3}).Input<float>({}, {0});
    ExpectInvalid(t, "sparse_values must be a scalar or a vector of 2");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({1}, {0}).Input<int32_t>({1}, {4}).Input<float>({}, {1}).Input<float>({1}, {0});
    ExpectInvalid(t, "default_value must be a scalar");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({2, 2}, {0, 0, 0, 1}).Input<int32_t>({1}, {4}).Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "output_shape must be a vector of 2");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int32_t>({1}, {0}).Input<int32_t>({1}, {-4}).Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "has a negative dim");
  }
  {
    KernelTester t("SparseToDense");
    t.Input<int64_t>({1, 2}, {0, 0}).Input<int64_t>({2}, {kHuge, 8}).Input<float>({}, {1}).Input<float>({}, {0});
    ExpectInvalid(t, "more elements than fit in int64");
  }
}

// ---- Bincount.

TEST(BincountTest, CountsOrSumsWeights) {
  {
    KernelTester t("Bincount");
    t.Input<int32_t>({5}, {1, 1, 2, 5, 0}).Input<int32_t>({}, {4}).Input<float>({0}, {});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4}, {1, 2, 1, 0});  // 5 is past size: left out.
  }
  {
    KernelTester t("Bincount");
    t.Input<int32_t>({2, 2}, {1, 1, 3, 0}).Input<int32_t>({}, {4}).Input<double>({2, 2}, {0.5, 1, 2, 3});
    ASSERT_OK(t.Run());
    t.ExpectOutput<double>(0, {4}, {3, 1.5, 0, 2});
  }
  {
    KernelTester t("Bincount");
    t.Input<int32_t>({3}, {0, 0, 2}).Input<int32_t>({}, {0}).Input<int32_t>({0}, {});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {0}, {});
  }
}

TEST(BincountTest, Errors) {
  {
    KernelTester t("Bincount");
    t.Input<int32_t>({2}, {1, -1}).Input<int32_t>({}, {4}).Input<float>({0}, {});
    ExpectInvalid(t, "arr[1] = -1 is negative");
  }
  {
    KernelTester t("Bincount");
    t.Input<int32_t>({2}, {1, 1}).Input<int32_t>({}, {-3}).Input<float>({0}, {});
    ExpectInvalid(t, "size = -3 must be non-negative");
  }
  {
    KernelTester t("Bincount");
    t.Input<int32_t>({2}, {1, 1}).Input<int32_t>({}, {3}).Input<float>({3}, {1, 2, 3});
    ExpectInvalid(t, "weights must have arr's shape");
  }
}

// ---- TensorScatterUpdate.

TEST(TensorScatterUpdateTest, ReplacesSlicesAndElements) {
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<float>({3, 2}, {1, 2, 3, 4, 5, 6}).Input<int32_t>({2, 1}, {0, 2}).Input<float>({2, 2}, {9, 9, 8, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {3, 2}, {9, 9, 3, 4, 8, 8});
  }
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<int32_t>({2, 2}, {1, 2, 3, 4}).Input<int64_t>({2, 2}, {1, 0, 0, 1}).Input<int32_t>({2}, {10, 11});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 2}, {1, 11, 10, 4});
  }
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<std::string>({3}, {"a", "b", "c"}).Input<uint16_t>({1, 1}, {1}).Input<std::string>({1}, {"z"});
    ASSERT_OK(t.Run());
    t.ExpectOutput<std::string>(0, {3}, {"a", "z", "c"});
  }
}

TEST(TensorScatterUpdateTest, Errors) {
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<float>({3}, {1, 2, 3}).Input<int32_t>({2, 1}, {0, 3}).Input<float>({2}, {9, 9});
    ExpectInvalid(t, "index [3] (tuple 1) is out of range");
  }
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<float>({3}, {1, 2, 3}).Input<int32_t>({2, 1}, {0, -1}).Input<float>({2}, {9, 9});
    ExpectInvalid(t, "is out of range");
  }
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<float>({3, 2}, {1, 2, 3, 4, 5, 6}).Input<int32_t>({2, 1}, {0, 1}).Input<float>({2}, {9, 9});
    ExpectInvalid(t, "updates must have shape");
  }
  {
    KernelTester t("TensorScatterUpdate");
    t.Input<float>({3}, {1, 2, 3}).Input<int32_t>({1, 2}, {0, 0}).Input<float>({1}, {9});
    ExpectInvalid(t, "index tuples of length 2");
  }
}

// ---- Cumprod.

TEST(CumprodTest, ExclusiveAndReverse) {
  struct Case {
    bool exclusive, reverse;
    std::vector<float> want;
  };
  for (const Case& c : {Case{false, false, {1, 2, 6, 24}}, Case{true, false, {1, 1, 2, 6}},
                        Case{false, true, {24, 24, 12, 4}}, Case{true, true, {24, 12, 4, 1}}}) {
    KernelTester t("Cumprod");
    t.Attr("exclusive", c.exclusive).Attr("reverse", c.reverse);
    t.Input<float>({4}, {1, 2, 3, 4}).Input<int32_t>({}, {0});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {4}, c.want);
  }
}

TEST(CumprodTest, AlongAnAxisAndErrors) {
  {
    KernelTester t("Cumprod");
    t.Input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int64_t>({}, {-1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {2, 3}, {1, 2, 6, 4, 20, 120});
  }
  {
    KernelTester t("Cumprod");
    t.Input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int32_t>({}, {2});
    ExpectInvalid(t, "out of range");
  }
}

// ---- Einsum (TensorFlow's signature over the ONNX Einsum kernel).

TEST(EinsumTest, MatMulTraceAndErrors) {
  {
    KernelTester t("Einsum");
    t.Attr("equation", std::string("ij,jk->ik"))
        .Input<float>({2, 2}, {1, 2, 3, 4})
        .Input<float>({2, 2}, {5, 6, 7, 8});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {2, 2}, {19, 22, 43, 50});
  }
  {
    KernelTester t("Einsum");
    t.Attr("equation", std::string("ii->")).Input<int32_t>({2, 2}, {1, 2, 3, 4});
    ASSERT_OK(t.Run());
    t.ExpectOutput<int32_t>(0, {}, {5});
  }
  {
    KernelTester t("Einsum");
    t.Attr("equation", std::string("ij,jk->ik")).Input<float>({2, 2}, {1, 2, 3, 4});
    absl::Status s = t.Run();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("node 'test_node'"));
    EXPECT_THAT(s.message(), HasSubstr("has 2 terms for 1 inputs"));
  }
  {
    // TensorFlow's wording, which tfjs matches.
    KernelTester t("Einsum");
    t.Attr("equation", std::string("ij,jk->ik")).Input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    t.Input<float>({2, 2}, {1, 2, 3, 4});
    ExpectInvalid(t, "expected dimension 3 at axis 0 of the input shaped [2,2] but got dimension 2");
  }
}

TEST(EinsumTest, TensorFlowTakesOneOrTwoOperandsAndOneArrow) {
  for (const char* eq : {"ij,jk", "ij,jk->ik->i", ""}) {
    KernelTester t("Einsum");
    t.Attr("equation", std::string(eq)).Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2, 2}, {1, 2, 3, 4});
    ExpectInvalid(t, "Expecting exactly one '->'");
  }
  {
    KernelTester t("Einsum");
    t.Attr("equation", std::string("ij->ji")).Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2, 2}, {1, 2, 3, 4});
    ExpectInvalid(t, "Expected 1 inputs but got: 2");
  }
  {
    KernelTester t("Einsum");
    t.Attr("equation", std::string("ij,jk,kl->il"))
        .Input<float>({2, 2}, {1, 2, 3, 4})
        .Input<float>({2, 2}, {1, 2, 3, 4})
        .Input<float>({2, 2}, {1, 2, 3, 4});
    ExpectInvalid(t, "Expecting 1 or 2 input tensors but got: 3");
  }
}

}  // namespace
}  // namespace sluice
