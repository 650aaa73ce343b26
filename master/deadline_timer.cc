#include "master/deadline_timer.h"

#include <thread>

#include "absl/time/clock.h"

namespace sluice {

DeadlineTimer* DeadlineTimer::Global() {
  static DeadlineTimer* const timer = [] {
    auto* t = new DeadlineTimer();
    std::thread([t] { t->Loop(); }).detach();
    return t;
  }();
  return timer;
}

DeadlineTimer::Id DeadlineTimer::Schedule(absl::Time when, std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  const Id id = next_id_++;
  pending_.emplace(std::make_pair(when, id), std::move(callback));
  ++changes_;
  return id;
}

void DeadlineTimer::Cancel(Id id) {
  absl::MutexLock lock(&mu_);
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->first.second == id) {
      pending_.erase(it);
      return;
    }
  }
  struct NotRunning {
    DeadlineTimer* timer;
    Id id;
    bool operator()() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(timer->mu_) {
      return timer->running_ != id;
    }
  } not_running{this, id};
  mu_.Await(absl::Condition(&not_running));
}

void DeadlineTimer::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    const int64_t seen = changes_;
    auto changed = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return changes_ != seen; };
    if (pending_.empty()) {
      mu_.Await(absl::Condition(&changed));
      continue;
    }
    auto first = pending_.begin();
    if (first->first.first > absl::Now()) {
      mu_.AwaitWithDeadline(absl::Condition(&changed), first->first.first);
      continue;
    }
    std::function<void()> callback = std::move(first->second);
    running_ = first->first.second;
    pending_.erase(first);
    mu_.Unlock();
    callback();
    callback = nullptr;  // Its captures go before Cancel may return.
    mu_.Lock();
    running_ = 0;
  }
}

}  // namespace sluice
