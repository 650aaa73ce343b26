// A fixed-size pool of worker threads with a FIFO queue.
//
//   ThreadPool pool("inter_op", 4);
//   pool.Schedule([] { ... });
//   pool.ParallelFor(n, [&](int64_t begin, int64_t end) { ... });  // blocks until done
#ifndef SLUICE_FRAMEWORK_THREAD_POOL_H_
#define SLUICE_FRAMEWORK_THREAD_POOL_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace sluice {

class ThreadPool {
 public:
  ThreadPool(std::string name, int num_threads);
  // Runs what is queued, then joins the threads.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const { return static_cast<int>(threads_.size()); }

  // Splits [0, n) into at most NumThreads()+1 blocks, runs them here and on the pool, and
  // returns when all are done. Blocks of fewer than `min_block` items are not split further.
  void ParallelFor(int64_t n, int64_t min_block,
                   const std::function<void(int64_t begin, int64_t end)>& fn);

  // Default number of threads: the machine's hardware concurrency (at least 1).
  static int DefaultThreads();

 private:
  void WorkerLoop();

  std::string name_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_THREAD_POOL_H_
