#include "worker/recent_request_ids.h"

#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(RecentIdsTest, RemembersTheLastCapacityIdsZeroIncluded) {
  RecentIds ids(2);
  EXPECT_TRUE(ids.Insert(0));
  EXPECT_TRUE(ids.Insert(7));
  EXPECT_FALSE(ids.Insert(0));
  EXPECT_TRUE(ids.Contains(0) && ids.Contains(7));
  EXPECT_TRUE(ids.Insert(-3));  // Forgets 0, the oldest.
  EXPECT_FALSE(ids.Contains(0));
  EXPECT_TRUE(ids.Contains(7) && ids.Contains(-3));
}

TEST(RecentRequestIdsTest, RefusesARepeatAndNamesIt) {
  RecentRequestIds ids;
  EXPECT_OK(ids.TrackUnique(42, "RunGraph", "/job:w/replica:0/task:1"));
  absl::Status s = ids.TrackUnique(42, "RunGraph", "/job:w/replica:0/task:1");
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(s.message(), HasSubstr("request id 42 of RunGraph"));
  EXPECT_THAT(s.message(), HasSubstr("/job:w/replica:0/task:1"));
  EXPECT_OK(ids.TrackUnique(43, "RunGraph", "w"));
}

TEST(RecentRequestIdsTest, ZeroIsNeverTracked) {
  RecentRequestIds ids;
  EXPECT_OK(ids.TrackUnique(0, "RecvTensor", "w"));
  EXPECT_OK(ids.TrackUnique(0, "RecvTensor", "w"));
}

TEST(RecentRequestIdsTest, ForgetsTheOldestBeyondCapacity) {
  RecentRequestIds ids(3);
  for (int64_t id = 1; id <= 3; ++id) EXPECT_OK(ids.TrackUnique(id, "m", "w"));
  EXPECT_FALSE(ids.TrackUnique(1, "m", "w").ok());  // Still remembered.
  EXPECT_OK(ids.TrackUnique(4, "m", "w"));   // Pushes 1 out.
  EXPECT_OK(ids.TrackUnique(1, "m", "w"));
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
