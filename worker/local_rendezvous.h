// The in-process rendezvous of one step on one worker: a table from key to either queued
// values (sent, not yet received) or queued receivers (waiting). Thread-safe.
//
//   auto r = std::make_shared<LocalRendezvous>();
//   r->Send(key, tensor);
//   r->RecvAsync(key, [](const absl::Status& s, const Tensor& t) { ... });  // called inline
#ifndef SLUICE_WORKER_LOCAL_RENDEZVOUS_H_
#define SLUICE_WORKER_LOCAL_RENDEZVOUS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/synchronization/mutex.h"
#include "framework/rendezvous.h"

namespace sluice {

class LocalRendezvous : public Rendezvous {
 public:
  LocalRendezvous() = default;
  ~LocalRendezvous() override;

  absl::Status Send(const ParsedKey& key, const Tensor& value) override;
  void RecvAsync(const ParsedKey& key, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;
  // OK while not aborted.
  absl::Status status() const;
  // Takes the value sent under `key` into `*value` if there is one, without waiting:
  // `*taken` says whether it did. Not OK once aborted. Only this table is looked at (a
  // subclass that fetches remote values does not fetch here).
  absl::Status TakeIfSent(const ParsedKey& key, Tensor* value, bool* taken);

 private:
  // Almost always one value or one waiter: inline, not a deque's two allocations each.
  struct Entry {
    absl::InlinedVector<Tensor, 1> values;
    absl::InlinedVector<DoneCallback, 1> waiters;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> table_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_WORKER_LOCAL_RENDEZVOUS_H_
