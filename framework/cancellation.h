// Cancellation of one step (TensorFlow's CancellationManager is the model). Whoever ends a step
// early (a deadline, a client that went away, another task's failure) calls StartCancel once;
// kernels and the executor poll IsCancelled(), one atomic load, between nodes, loop iterations
// or chunks of work; waits that cannot poll register a callback.
//
//   CancellationManager cm;
//   CancellationManager::Token token;
//   if (!cm.RegisterCallback([&](const absl::Status& s) { rendezvous->StartAbort(s); }, &token))
//     return cm.status();                          // Cancelled already.
//   ...                                            // if (cm.IsCancelled()) return cm.status();
//   cm.DeregisterCallback(token);
//   cm.StartCancel(absl::DeadlineExceededError("step 7 did not finish within 2000 ms"));
#ifndef SLUICE_FRAMEWORK_CANCELLATION_H_
#define SLUICE_FRAMEWORK_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

// Thread-safe.
class CancellationManager {
 public:
  using Token = int64_t;
  using Callback = std::function<void(const absl::Status&)>;

  CancellationManager() = default;
  CancellationManager(const CancellationManager&) = delete;
  CancellationManager& operator=(const CancellationManager&) = delete;

  // Cheap enough for every node and every loop iteration.
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // OK until cancelled; then the status the first StartCancel gave.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

  // Cancels with `status` (not OK) and runs the registered callbacks on this thread. Only the
  // first call counts; later ones return at once.
  void StartCancel(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `callback` when cancelled. False, without registering or running it, when already
  // cancelled: the caller then acts on status() itself.
  bool RegisterCallback(Callback callback, Token* token) ABSL_LOCKS_EXCLUDED(mu_);
  // After this returns the callback will not start; if StartCancel is running it, this waits
  // for it to return (so its captures may go). Must not be called from the callback.
  void DeregisterCallback(Token token) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  std::atomic<bool> cancelled_{false};
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool callbacks_done_ ABSL_GUARDED_BY(mu_) = false;  // StartCancel ran every callback.
  Token next_token_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<Token, Callback> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_CANCELLATION_H_
