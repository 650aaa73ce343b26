#include "framework/rendezvous.h"

#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace sluice {

std::string Rendezvous::CreateKey(absl::string_view src_device, uint64_t src_incarnation,
                                  absl::string_view dst_device, absl::string_view name,
                                  const FrameAndIter& frame_iter) {
  return absl::StrCat(src_device, ";", absl::StrFormat("%016x", src_incarnation), ";", dst_device,
                      ";", name, ";", frame_iter.frame_id, ":", frame_iter.iter_id);
}

absl::StatusOr<Rendezvous::ParsedKey> Rendezvous::ParseKey(absl::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  if (parts.size() != 5 || parts[0].empty() || parts[2].empty() || parts[3].empty()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid rendezvous key '", key, "'"));
  }
  ParsedKey p;
  if (!absl::SimpleHexAtoi(parts[1], &p.src_incarnation)) {
    return absl::InvalidArgumentError(absl::StrCat("invalid incarnation in rendezvous key '", key, "'"));
  }
  p.full_key = std::string(key);
  p.src_device = std::string(parts[0]);
  p.dst_device = std::string(parts[2]);
  p.edge_name = std::string(parts[3]);
  return p;
}

absl::Status Rendezvous::Recv(const ParsedKey& key, Tensor* value, absl::Duration timeout) {
  struct State {
    absl::Notification done;
    absl::Status status;
    Tensor value;
  };
  auto state = std::make_shared<State>();
  RecvAsync(key, [state](const absl::Status& s, const Tensor& v) {
    state->status = s;
    state->value = v;
    state->done.Notify();
  });
  if (!state->done.WaitForNotificationWithTimeout(timeout)) {
    return absl::DeadlineExceededError(
        absl::StrCat("timed out waiting for tensor '", key.edge_name, "'"));
  }
  if (state->status.ok()) *value = state->value;
  return state->status;
}

}  // namespace sluice
