// Runs callbacks at given times on one thread of its own: step deadlines fire even while the
// thread that started a step runs it inline (the embedded session does), and a step with a
// deadline costs a map insertion, not a thread.
//
//   DeadlineTimer::Id id = DeadlineTimer::Global()->Schedule(
//       absl::Now() + absl::Seconds(2), [&] { step_cancel.StartCancel(deadline_error); });
//   ...                                        // Run the step.
//   DeadlineTimer::Global()->Cancel(id);       // Before what the callback uses goes away.
#ifndef SLUICE_MASTER_DEADLINE_TIMER_H_
#define SLUICE_MASTER_DEADLINE_TIMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sluice {

// Thread-safe.
class DeadlineTimer {
 public:
  using Id = int64_t;

  // The process's timer; its thread starts on first use and is never joined.
  static DeadlineTimer* Global();

  // Runs `callback` on the timer's thread at `when` (at once if past), unless cancelled first.
  // Callbacks should be short: they delay the ones after them.
  Id Schedule(absl::Time when, std::function<void()> callback) ABSL_LOCKS_EXCLUDED(mu_);
  // After this returns the callback will not start; if it is running, this waits for it to
  // return. Must not be called from a callback.
  void Cancel(Id id) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  DeadlineTimer() = default;
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;
  Id next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // By (time, id): the first entry is the next to run.
  std::map<std::pair<absl::Time, Id>, std::function<void()>> pending_ ABSL_GUARDED_BY(mu_);
  Id running_ ABSL_GUARDED_BY(mu_) = 0;  // The callback running now; 0 when none.
  int64_t changes_ ABSL_GUARDED_BY(mu_) = 0;  // Bumped by Schedule: wakes the thread.
};

}  // namespace sluice

#endif  // SLUICE_MASTER_DEADLINE_TIMER_H_
