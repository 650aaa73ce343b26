#include "worker/recent_request_ids.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"

namespace sluice {

RecentIds::RecentIds(size_t capacity)
    : ring_(std::max<size_t>(1, capacity), 0), used_(ring_.size(), false) {}

bool RecentIds::Insert(int64_t id) {
  if (!seen_.insert(id).second) return false;
  if (used_[next_]) seen_.erase(ring_[next_]);
  ring_[next_] = id;
  used_[next_] = true;
  next_ = (next_ + 1) % ring_.size();
  return true;
}

RecentRequestIds::RecentRequestIds(size_t capacity) : ids_(capacity) {}

absl::Status RecentRequestIds::TrackUnique(int64_t request_id, absl::string_view method,
                                           absl::string_view where) {
  if (request_id == 0) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  if (!ids_.Insert(request_id)) {
    return absl::AbortedError(absl::StrCat(
        "request id ", request_id, " of ", method, " was already received by ", where,
        ": a retried request is refused rather than carried out twice"));
  }
  return absl::OkStatus();
}

int64_t NewRequestId() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen();
  absl::MutexLock lock(&mu);
  return absl::Uniform<int64_t>(*gen, 1, INT64_MAX);
}

}  // namespace sluice
