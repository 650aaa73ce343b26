#include "worker/recent_request_ids.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(RecentRequestIdsTest, RefusesARepeatAndNamesIt) {
  RecentRequestIds ids;
  EXPECT_TRUE(ids.TrackUnique(42, "RunGraph", "/job:w/replica:0/task:1").ok());
  absl::Status s = ids.TrackUnique(42, "RunGraph", "/job:w/replica:0/task:1");
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(s.message(), HasSubstr("request id 42 of RunGraph"));
  EXPECT_THAT(s.message(), HasSubstr("/job:w/replica:0/task:1"));
  EXPECT_TRUE(ids.TrackUnique(43, "RunGraph", "w").ok());
}

TEST(RecentRequestIdsTest, ZeroIsNeverTracked) {
  RecentRequestIds ids;
  EXPECT_TRUE(ids.TrackUnique(0, "RecvTensor", "w").ok());
  EXPECT_TRUE(ids.TrackUnique(0, "RecvTensor", "w").ok());
}

TEST(RecentRequestIdsTest, ForgetsTheOldestBeyondCapacity) {
  RecentRequestIds ids(3);
  for (int64_t id = 1; id <= 3; ++id) EXPECT_TRUE(ids.TrackUnique(id, "m", "w").ok());
  EXPECT_FALSE(ids.TrackUnique(1, "m", "w").ok());  // Still remembered.
  EXPECT_TRUE(ids.TrackUnique(4, "m", "w").ok());   // Pushes 1 out.
  EXPECT_TRUE(ids.TrackUnique(1, "m", "w").ok());
  EXPECT_FALSE(ids.TrackUnique(4, "m", "w").ok());
}

TEST(RecentRequestIdsTest, NewIdsAreNonZeroAndDistinct) {
  absl::flat_hash_set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    int64_t id = NewRequestId();
    EXPECT_GT(id, 0);
    EXPECT_TRUE(seen.insert(id).second);
  }
}

}  // namespace
}  // namespace sluice
