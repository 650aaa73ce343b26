// The master: owns sessions, and for each step prunes the session's graph to what the
// fetches need, places it, partitions it by device, registers the pieces on the workers
// (once per feeds/fetches/targets signature) and runs them with one step id.
//
//   Master master(&worker_cache);
//   SL_ASSIGN_OR_RETURN(std::string handle, master.CreateSession(graph_def, config));
//   RunStepRequest req{handle, {}, {{"x:0", x}}, {"y:0"}, {}};
//   RunStepResponse resp;
//   SL_RETURN_IF_ERROR(master.RunStep(req, &resp));
#ifndef SLUICE_MASTER_MASTER_H_
#define SLUICE_MASTER_MASTER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "framework/cancellation.h"
#include "framework/graph.h"
#include "framework/tensor.h"
#include "master/worker_cache.h"
#include "proto/config.pb.h"
#include "worker/recent_request_ids.h"
#include "proto/graph.pb.h"

namespace sluice {

struct RunStepRequest {
  std::string session_handle;
  RunOptions options;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  int64_t request_id = 0;  // Non-zero: a retry with the same id is refused.
  std::string owner;        // Who calls (see Master); "" for callers without an identity.
  // Cancelling it (a gRPC call cancelled, its client gone or past its deadline) cancels the
  // step on every worker with its status. Not owned; null: none.
  CancellationManager* cancellation = nullptr;
};

// A RunStep's inputs by reference, for an in-process caller (the embedded session): its own
// vectors are read where they are, not copied into a RunStepRequest. They must outlive the call.
struct RunStepArgs {
  const std::string& session_handle;
  const RunOptions& options;
  const std::vector<std::pair<std::string, Tensor>>& feeds;
  const std::vector<std::string>& fetches;
  const std::vector<std::string>& targets;
  int64_t request_id = 0;
  const std::string& owner;
  CancellationManager* cancellation = nullptr;

  static RunStepArgs Of(const RunStepRequest& r) {
    return RunStepArgs{r.session_handle, r.options,    r.feeds, r.fetches,
                       r.targets,        r.request_id, r.owner, r.cancellation};
  }
};

struct RunStepResponse {
  std::vector<Tensor> outputs;  // In the order of the request's fetches.
  RunMetadata metadata;
};

// The client side of feeds and fetches in rendezvous keys.
inline constexpr char kClientDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";
inline constexpr uint64_t kClientIncarnation = 1;

class MasterSession;

// Bounds on what clients can make a master hold.
struct MasterOptions {
  // Sessions open at once; CreateSession beyond them fails with RESOURCE_EXHAUSTED.
  int max_sessions = 10000;
  // A session that no call has used for this long is closed, its graphs deregistered, when
  // the next session is created. Infinite: sessions live until closed.
  absl::Duration session_idle_timeout = absl::InfiniteDuration();
  // Nodes one session's graph may have, function bodies included; a session's ConfigProto
  // (resource_limits.max_graph_nodes) may ask for fewer. Beyond it CreateSession and
  // ExtendSession fail with RESOURCE_EXHAUSTED.
  int64_t max_graph_nodes = kDefaultMaxGraphNodes;
  // The clock idle times are measured with (tests set their own).
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class Master {
 public:
  // `workers` is not owned and must outlive the master.
  explicit Master(const WorkerCache* workers, MasterOptions options = MasterOptions());
  ~Master();

  // `owner`: the caller's authenticated identity (the subject of its TLS client certificate),
  // or "" for callers that have none (a shared cluster secret, an in-process client). A
  // session is reachable only by calls of the owner that created it: others get the answer
  // of an unknown handle.
  absl::StatusOr<std::string> CreateSession(GraphDef graph, const ConfigProto& config,
                                            const std::string& owner = "");
  absl::Status ExtendSession(const std::string& handle, const GraphDef& graph, const std::string& owner = "");
  absl::Status RunStep(const RunStepRequest& request, RunStepResponse* response);
  absl::Status RunStep(const RunStepArgs& args, RunStepResponse* response);
  absl::Status CloseSession(const std::string& handle, const std::string& owner = "");
  absl::Status ListDevices(std::vector<DeviceAttributes>* devices);
  // Closes every session of `owner`, deregistering their graphs (TensorFlow's Reset, which
  // closes all: here a client with a certificate of its own cannot close other clients').
  absl::Status Reset(const std::string& owner = "");

 private:
  // How a session is used. A call takes it under mu_ and ends without mu_: the master's lock
  // and the handle's lookup once per call, not twice.
  struct Usage {
    std::atomic<int> calls_under_way{0};  // Not idle while a call runs, however long.
    std::atomic<int64_t> last_used_ns{0};  // Unix nanoseconds: creation or the last call's end.
  };
  struct SessionEntry {
    std::shared_ptr<MasterSession> session;
    std::string owner;
    std::shared_ptr<Usage> usage;
  };
  // Marks the session in use until the guard goes.
  class InUse;
  absl::Status UseSession(const std::string& handle, const std::string& owner,
                          std::shared_ptr<MasterSession>* session, InUse* in_use);
  // Takes the sessions idle beyond the timeout out of `sessions_`; the caller closes them.
  std::vector<std::shared_ptr<MasterSession>> TakeIdleSessions() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WorkerCache* workers_;
  const MasterOptions options_;
  RecentRequestIds request_ids_;  // Of RunStep: a retried step is refused, not run twice.
  absl::Mutex mu_;
  // By handle: 128 random bits, so that a client cannot reach another's session, nor a stale
  // handle a new session after a restart.
  absl::flat_hash_map<std::string, SessionEntry> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_MASTER_MASTER_H_
