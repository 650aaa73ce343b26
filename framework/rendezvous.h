// A rendezvous is where a _Send and its _Recv meet. Keys name both ends and the tensor:
//   "src_device;src_incarnation;dst_device;tensor_name;frame_id:iter_id"
// (the incarnation as 16 hex digits). Send never blocks; RecvAsync calls back when the value
// arrives or the rendezvous is aborted.
//
//   std::string key = Rendezvous::CreateKey(src, incarnation, dst, "x:0", FrameAndIter{});
//   SL_ASSIGN_OR_RETURN(Rendezvous::ParsedKey parsed, Rendezvous::ParseKey(key));
//   rendezvous->RecvAsync(parsed, [](const absl::Status& s, const Tensor& t) { ... });
//   rendezvous->Send(parsed, tensor);
#ifndef SLUICE_FRAMEWORK_RENDEZVOUS_H_
#define SLUICE_FRAMEWORK_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "framework/tensor.h"

namespace sluice {

struct FrameAndIter {
  int64_t frame_id = 0;
  int64_t iter_id = 0;
};

class Rendezvous {
 public:
  struct ParsedKey {
    std::string full_key;
    std::string src_device;
    uint64_t src_incarnation = 0;
    std::string dst_device;
    std::string edge_name;
  };

  static std::string CreateKey(absl::string_view src_device, uint64_t src_incarnation,
                               absl::string_view dst_device, absl::string_view name,
                               const FrameAndIter& frame_iter);
  static absl::StatusOr<ParsedKey> ParseKey(absl::string_view key);

  using DoneCallback = std::function<void(const absl::Status& status, const Tensor& value)>;

  virtual ~Rendezvous() = default;
  // Makes `value` available under the key; at most once per key per step.
  virtual absl::Status Send(const ParsedKey& key, const Tensor& value) = 0;
  // Calls `done` exactly once: with the value, or with the abort status. May call it inline.
  virtual void RecvAsync(const ParsedKey& key, DoneCallback done) = 0;
  // Fails every pending and future Send/Recv with `status` (not OK).
  virtual void StartAbort(const absl::Status& status) = 0;

  // Blocking receive for clients; DEADLINE_EXCEEDED after `timeout`.
  absl::Status Recv(const ParsedKey& key, Tensor* value,
                    absl::Duration timeout = absl::InfiniteDuration());
};

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_RENDEZVOUS_H_
