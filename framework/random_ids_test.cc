#include "framework/random_ids.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(RandomIdsTest, HandlesCarry128RandomBitsInHex) {
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string h = NewRandomHandle("session");
    ASSERT_EQ(h.size(), std::string("session_").size() + 32) << h;
    ASSERT_TRUE(absl::StartsWith(h, "session_"));
    for (char c : h.substr(8)) ASSERT_TRUE(absl::ascii_isxdigit(c)) << h;
    ASSERT_TRUE(seen.insert(h).second) << h;
  }
}

TEST(RandomIdsTest, StepIdsArePositiveAndDoNotRepeat) {
  absl::flat_hash_set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    int64_t id = NewRandomStepId();
    ASSERT_GT(id, 0);
    ASSERT_TRUE(seen.insert(id).second);
  }
}

}  // namespace
}  // namespace sluice
