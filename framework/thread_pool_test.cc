#include "framework/thread_pool.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(ThreadPoolTest, RunsEveryScheduledTask) {
  constexpr int kTasks = 1000;
  std::atomic<int> ran{0};
  absl::BlockingCounter done(kTasks);
  ThreadPool pool("test", 4);
  EXPECT_EQ(pool.NumThreads(), 4);
  for (int i = 0; i < kTasks; ++i) {
    pool.Schedule([&] {
      ran.fetch_add(1);
      done.DecrementCount();
    });
  }
  done.Wait();
  EXPECT_EQ(ran.load(), kTasks);
}

TEST(ThreadPoolTest, DestructorRunsWhatIsQueuedThenJoins) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool("test", 2);
    // Tasks that schedule more tasks: all of them run before the destructor returns.
    for (int i = 0; i < 100; ++i) {
      pool.Schedule([&] {
        ran.fetch_add(1);
        pool.Schedule([&] { ran.fetch_add(1); });
      });
    }
  }
  EXPECT_EQ(ran.load(), 200);
}

TEST(ThreadPoolTest, WithoutThreadsScheduleRunsInline) {
  ThreadPool pool("inline", 0);
  int ran = 0;
  pool.Schedule([&] { ++ran; });
  EXPECT_EQ(ran, 1);
  std::vector<int> seen(10, 0);
  pool.ParallelFor(10, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ++seen[i];
  });
  EXPECT_EQ(seen, std::vector<int>(10, 1));
}

TEST(ThreadPoolTest, ParallelForCoversEachIndexExactlyOnce) {
  ThreadPool pool("test", 3);
  for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 1001}) {
    for (int64_t min_block : {1, 5, 2000}) {
      std::vector<std::atomic<int>> seen(n);
      std::atomic<int> blocks{0};
      pool.ParallelFor(n, min_block, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LE(begin, end);
        ASSERT_LE(end, n);
        blocks.fetch_add(1);
        for (int64_t i = begin; i < end; ++i) seen[i].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "n=" << n << " index " << i;
      EXPECT_LE(blocks.load(), pool.NumThreads() + 1) << "n=" << n;
      if (n > 0 && n < 2 * min_block) {
        EXPECT_EQ(blocks.load(), 1) << "n=" << n << " min_block=" << min_block;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
