#include "framework/thread_pool.h"

#include <algorithm>

#include "absl/synchronization/blocking_counter.h"

namespace sluice {

ThreadPool::ThreadPool(std::string name, int num_threads) : name_(std::move(name)) {
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (auto& t : threads_) t.join();
}

void ThreadPool::Schedule(std::function<void()> fn) {
  if (threads_.empty()) {
    fn();
    return;
  }
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(fn));
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // Stopping and drained.
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    fn();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_block,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int64_t max_blocks = NumThreads() + 1;
  int64_t blocks = std::min<int64_t>(max_blocks, std::max<int64_t>(1, n / std::max<int64_t>(1, min_block)));
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  int64_t per = (n + blocks - 1) / blocks;
  absl::BlockingCounter counter(static_cast<int>(blocks - 1));
  for (int64_t b = 1; b < blocks; ++b) {
    int64_t begin = b * per, end = std::min(n, begin + per);
    Schedule([&fn, &counter, begin, end] {
      if (begin < end) fn(begin, end);
      counter.DecrementCount();
    });
  }
  fn(0, std::min(n, per));
  counter.Wait();
}

int ThreadPool::DefaultThreads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace sluice
