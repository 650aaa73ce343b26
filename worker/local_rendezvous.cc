#include "worker/local_rendezvous.h"

#include <vector>

namespace sluice {

LocalRendezvous::~LocalRendezvous() {
  // Only waiters need an answer; building one for every finished step was a cost of its own.
  bool waiting = false;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, e] : table_) waiting = waiting || !e.waiters.empty();
  }
  if (waiting) StartAbort(absl::CancelledError("rendezvous destroyed before the value arrived"));
}

absl::Status LocalRendezvous::Send(const ParsedKey& key, const Tensor& value) {
  DoneCallback waiter;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return status_;
    // One lookup per call: erasing by iterator does not hash the key again.
    auto it = table_.try_emplace(key.full_key).first;
    Entry& e = it->second;
    if (e.waiters.empty()) {
      e.values.push_back(value);
      return absl::OkStatus();
    }
    waiter = std::move(e.waiters.front());
    e.waiters.erase(e.waiters.begin());
    if (e.waiters.empty() && e.values.empty()) table_.erase(it);
  }
  waiter(absl::OkStatus(), value);  // Outside the lock: the receiver may run its graph on.
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const ParsedKey& key, DoneCallback done) {
  Tensor value;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) {
      status = status_;
    } else {
      auto it = table_.try_emplace(key.full_key).first;
      Entry& e = it->second;
      if (e.values.empty()) {
        e.waiters.push_back(std::move(done));
        return;
      }
      value = std::move(e.values.front());
      e.values.erase(e.values.begin());
      if (e.values.empty() && e.waiters.empty()) table_.erase(it);
    }
  }
  done(status, value);
}

absl::Status LocalRendezvous::TakeIfSent(const ParsedKey& key, Tensor* value, bool* taken) {
  absl::MutexLock lock(&mu_);
  *taken = false;
  if (!status_.ok()) return status_;
  auto it = table_.find(key.full_key);
  if (it == table_.end() || it->second.values.empty()) return absl::OkStatus();
  Entry& e = it->second;
  *value = std::move(e.values.front());
  e.values.erase(e.values.begin());
  if (e.values.empty() && e.waiters.empty()) table_.erase(it);
  *taken = true;
  return absl::OkStatus();
}

void LocalRendezvous::StartAbort(const absl::Status& status) {
  std::vector<DoneCallback> waiters;
  {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;
    status_ = status.ok() ? absl::CancelledError("rendezvous aborted") : status;
    for (auto& [key, e] : table_) {
      for (auto& w : e.waiters) waiters.push_back(std::move(w));
    }
    table_.clear();
  }
  for (auto& w : waiters) w(status, Tensor());
}

absl::Status LocalRendezvous::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

}  // namespace sluice
