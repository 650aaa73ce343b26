#include "tools/cli.h"

#include <cstdint>

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(ParseByteSizeTest, PlainAndSuffixedSizes) {
  SL_ASSERT_OK_AND_ASSIGN(int64_t plain, ParseByteSize("1048576", "--memory-limit"));
  EXPECT_EQ(plain, 1048576);
  SL_ASSERT_OK_AND_ASSIGN(int64_t mega, ParseByteSize("512M", "--memory-limit"));
  EXPECT_EQ(mega, int64_t{512} << 20);
  SL_ASSERT_OK_AND_ASSIGN(int64_t gib, ParseByteSize("2GiB", "--memory-limit"));
  EXPECT_EQ(gib, int64_t{2} << 30);
  SL_ASSERT_OK_AND_ASSIGN(int64_t big, ParseByteSize("4611686018427387904", "--memory-limit"));  // 2^62.
  EXPECT_EQ(big, int64_t{1} << 62);
}

// Sizes a user (or a script) can get wrong: each is refused, naming the flag, never wrapped.
TEST(ParseByteSizeTest, RefusesWhatIsNotAPositiveSizeThatFits) {
  for (const char* text : {"", "0", "-1", "-4G", "12X", "G", "1.5G", "8589934592G", "16777216T",
                           "99999999999999999999"}) {
    absl::StatusOr<int64_t> size = ParseByteSize(text, "--memory-limit");
    EXPECT_EQ(size.status().code(), absl::StatusCode::kInvalidArgument) << "'" << text << "'";
    EXPECT_THAT(size.status().message(), HasSubstr("--memory-limit")) << text;
  }
}

}  // namespace
}  // namespace sluice
