// Remembers the ids of recent requests so that a retried request (gRPC retries, or a client
// that resends after losing an answer) is recognised instead of being carried out twice: a
// RunGraph must not run a step twice, and a RecvTensor must not take a value twice.
//
//   RecentRequestIds ids(/*capacity=*/100000);
//   SL_RETURN_IF_ERROR(ids.TrackUnique(request.request_id, "RunGraph", worker_name));
//
// Thread-safe. Id 0 means "no id" and is never tracked, so that old clients still work.
#ifndef SLUICE_WORKER_RECENT_REQUEST_IDS_H_
#define SLUICE_WORKER_RECENT_REQUEST_IDS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

// The last `capacity` distinct ids inserted; older ones are forgotten. For bookkeeping that
// must stay bounded whatever clients send (steps cleaned up, steps aborted, request ids). Not
// thread-safe: its owner guards it.
class RecentIds {
 public:
  explicit RecentIds(size_t capacity);
  // False, changing nothing, when `id` is remembered already.
  bool Insert(int64_t id);
  bool Contains(int64_t id) const { return seen_.contains(id); }

 private:
  // A ring of the last `capacity` ids, oldest at `next_`, and the same ids as a set.
  std::vector<int64_t> ring_;
  std::vector<bool> used_;  // Which ring slots hold an id (every id, 0 too, may be one).
  size_t next_ = 0;
  absl::flat_hash_set<int64_t> seen_;
};

class RecentRequestIds {
 public:
  // Enough for several minutes of a fast training loop's RPCs; older ids are forgotten.
  static constexpr size_t kDefaultCapacity = 100000;

  explicit RecentRequestIds(size_t capacity = kDefaultCapacity);

  // OK the first time `request_id` is seen (and for 0). ABORTED for a repeat, naming the
  // method and `where`, so the caller refuses the request instead of repeating its effect.
  absl::Status TrackUnique(int64_t request_id, absl::string_view method, absl::string_view where);

 private:
  absl::Mutex mu_;
  RecentIds ids_ ABSL_GUARDED_BY(mu_);
};

// A random non-zero id for a new request.
int64_t NewRequestId();

}  // namespace sluice

#endif  // SLUICE_WORKER_RECENT_REQUEST_IDS_H_
