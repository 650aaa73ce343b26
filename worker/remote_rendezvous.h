// The rendezvous of one step on one task of a cluster. A _Recv whose sender is on another
// task asks that task's worker for the value (RecvTensor) and the answer is delivered through
// this rendezvous's own table, so an abort reaches the waiting _Recv at once; every other key
// is local. Keys whose source task is not in the cluster (the client's feeds, sent with
// RunGraph) are local too.
//
//   WorkerOptions options;
//   options.rendezvous_factory = [&](int64_t step_id) {
//     return std::make_shared<RemoteRendezvous>(task_name, step_id, find_worker);
//   };
#ifndef SLUICE_WORKER_REMOTE_RENDEZVOUS_H_
#define SLUICE_WORKER_REMOTE_RENDEZVOUS_H_

#include <functional>
#include <memory>
#include <string>

#include "worker/local_rendezvous.h"
#include "worker/worker_interface.h"

namespace sluice {

// The worker of a task ("/job:J/replica:0/task:T"), or null when the cluster has no such
// task. The returned worker is not owned and must outlive the step.
using WorkerLookup = std::function<WorkerInterface*(const std::string& task)>;

class RemoteRendezvous : public LocalRendezvous,
                         public std::enable_shared_from_this<RemoteRendezvous> {
 public:
  // `local_task` is the task this rendezvous lives on.
  RemoteRendezvous(std::string local_task, int64_t step_id, WorkerLookup workers);

  void RecvAsync(const ParsedKey& key, DoneCallback done) override;

 private:
  const std::string local_task_;
  const int64_t step_id_;
  const WorkerLookup workers_;
};

}  // namespace sluice

#endif  // SLUICE_WORKER_REMOTE_RENDEZVOUS_H_
