#include "worker/remote_rendezvous.h"

#include "absl/strings/str_cat.h"
#include "framework/device_name.h"
#include "framework/status.h"

namespace sluice {

RemoteRendezvous::RemoteRendezvous(std::string local_task, int64_t step_id, WorkerLookup workers)
    : local_task_(std::move(local_task)), step_id_(step_id), workers_(std::move(workers)) {}

void RemoteRendezvous::RecvAsync(const ParsedKey& key, DoneCallback done) {
  auto src = DeviceName::Parse(key.src_device);
  const std::string src_task = src.ok() ? src->TaskName() : "";
  WorkerInterface* peer = src_task == local_task_ || !workers_ ? nullptr : workers_(src_task);
  if (peer == nullptr) {
    LocalRendezvous::RecvAsync(key, std::move(done));
    return;
  }
  // Wait here like a local receiver; the fetched value is then sent into this table.
  LocalRendezvous::RecvAsync(key, std::move(done));
  if (!status().ok()) return;  // Aborted: the receiver has its answer already.

  struct Call {
    RecvTensorRequest request;
    RecvTensorResponse response;
  };
  auto call = std::make_shared<Call>();
  call->request.step_id = step_id_;
  call->request.rendezvous_key = key.full_key;
  std::weak_ptr<RemoteRendezvous> self = weak_from_this();
  peer->RecvTensorAsync(&call->request, &call->response,
                        [self, call, key, src_task](const absl::Status& s) {
    std::shared_ptr<RemoteRendezvous> r = self.lock();
    if (r == nullptr) return;  // The step is gone; no one waits.
    if (s.ok()) {
      r->LocalRendezvous::Send(key, call->response.tensor).IgnoreError();  // Fails only if aborted.
      return;
    }
    // A lost transfer fails the step on this task; the master aborts it elsewhere.
    r->StartAbort(AddContext(s, absl::StrCat("receiving '", key.edge_name, "' from ", src_task)));
  });
}

}  // namespace sluice
