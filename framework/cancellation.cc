#include "framework/cancellation.h"

#include <utility>

namespace sluice {

absl::Status CancellationManager::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void CancellationManager::StartCancel(const absl::Status& status) {
  absl::flat_hash_map<Token, Callback> callbacks;
  const absl::Status why = status.ok() ? absl::CancelledError("cancelled") : status;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;
    status_ = why;
    cancelled_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  // Outside the lock: a callback may cancel other managers, or ask this one for status().
  for (auto& [token, callback] : callbacks) callback(why);
  absl::MutexLock lock(&mu_);
  callbacks_done_ = true;
}

bool CancellationManager::RegisterCallback(Callback callback, Token* token) {
  absl::MutexLock lock(&mu_);
  if (!status_.ok()) return false;
  *token = next_token_++;
  callbacks_.emplace(*token, std::move(callback));
  return true;
}

void CancellationManager::DeregisterCallback(Token token) {
  absl::MutexLock lock(&mu_);
  if (callbacks_.erase(token) > 0 || status_.ok()) return;
  // StartCancel took the callbacks and may be running this one: wait for it.
  mu_.Await(absl::Condition(&callbacks_done_));
}

}  // namespace sluice
