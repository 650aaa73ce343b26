// ThreadsForWork's floor and its override, and OmpParallelFor covering its range once.
#include "kernels/threading.h"

#include <atomic>
#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(ThreadsForWorkTest, SmallWorkStaysOnOneThread) {
  // The floor is read once per process; this test runs without SLUICE_MIN_PARALLEL_MACS and
  // threading_floor_test with it set to 0.
  const char* env = std::getenv("SLUICE_MIN_PARALLEL_MACS");
  if (env == nullptr) {
    EXPECT_EQ(ThreadsForWork(1e4, 2), 1);
    EXPECT_EQ(ThreadsForWork(9e4, 4), 1);
    EXPECT_EQ(ThreadsForWork(5e5, 2), 2);
    EXPECT_EQ(ThreadsForWork(5e7, 2), 2);
    EXPECT_EQ(ThreadsForWork(5e7, 8), 8);
  } else {
    EXPECT_EQ(ThreadsForWork(1e4, 2), 2);  // A floor of 0: always the full team.
    EXPECT_EQ(ThreadsForWork(0, 4), 4);
  }
  EXPECT_EQ(ThreadsForWork(5e7, 1), 1);
  EXPECT_EQ(ThreadsForWork(1e4, 0), 0);  // Not more than asked.
}

TEST(OmpParallelForTest, CoversTheRangeOnce) {
  for (int threads : {1, 2, 3}) {
    for (int64_t n : {1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      OmpParallelFor(n, 3, threads, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << n << " " << i;
    }
  }
}

}  // namespace
}  // namespace sluice
