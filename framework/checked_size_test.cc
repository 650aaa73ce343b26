#include "framework/checked_size.h"

#include <cstdint>
#include <vector>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(CheckedSizeTest, MulAndAddReportOverflow) {
  int64_t out = 0;
  EXPECT_TRUE(CheckedMul(int64_t{1} << 31, int64_t{1} << 31, &out));
  EXPECT_EQ(out, int64_t{1} << 62);
  EXPECT_FALSE(CheckedMul(int64_t{1} << 62, int64_t{4}, &out));
  EXPECT_FALSE(CheckedAdd(INT64_MAX, int64_t{1}, &out));
  EXPECT_TRUE(CheckedAdd(INT64_MAX - 1, int64_t{1}, &out));
  uint64_t u = 0;
  EXPECT_FALSE(CheckedAdd(UINT64_MAX, uint64_t{1}, &u));
}

absl::StatusOr<int64_t> Elements(std::vector<int64_t> dims) { return ShapeElements(dims); }

TEST(CheckedSizeTest, ShapeElements) {
  SL_ASSERT_OK_AND_ASSIGN(int64_t n, Elements({2, 3, 4}));
  EXPECT_EQ(n, 24);
  SL_ASSERT_OK_AND_ASSIGN(n, Elements({}));
  EXPECT_EQ(n, 1);
  // A zero dim wins over dims whose product alone would overflow.
  SL_ASSERT_OK_AND_ASSIGN(n, Elements({int64_t{1} << 40, int64_t{1} << 40, 0}));
  EXPECT_EQ(n, 0);
  auto big = ShapeElements({int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(big.status().message(), HasSubstr("more elements than fit in int64"));
  EXPECT_EQ(ShapeElements({2, -1}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckedSizeTest, TensorBytesRefusesWhatNoMachineHolds) {
  SL_ASSERT_OK_AND_ASSIGN(uint64_t bytes, TensorBytes(DT_FLOAT, 16));
  EXPECT_EQ(bytes, 64u);
  // 2^62 + 16 floats: the byte count wraps to 64 in 64 bits.
  auto wrapped = TensorBytes(DT_FLOAT, (int64_t{1} << 62) + 16, "tensor 'c'");
  EXPECT_EQ(wrapped.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(wrapped.status().message(), HasSubstr("tensor 'c'"));
  EXPECT_EQ(TensorBytes(DT_DOUBLE, int64_t{1} << 38).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(TensorBytes(DT_FLOAT, -1).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
