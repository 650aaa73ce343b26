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

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "framework/cancellation.h"
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
  // Cancelling it (a gRPC call cancelled, its client gone or past its deadline) cancels the
  // step on every worker with its status. Not owned; null: none.
  CancellationManager* cancellation = nullptr;
};

struct RunStepResponse {
  std::vector<Tensor> outputs;  // In the order of the request's fetches.
  RunMetadata metadata;
};

// The client side of feeds and fetches in rendezvous keys.
inline constexpr char kClientDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";
inline constexpr uint64_t kClientIncarnation = 1;

class MasterSession;

class Master {
 public:
  // `workers` is not owned and must outlive the master.
  explicit Master(const WorkerCache* workers);
  ~Master();

  absl::StatusOr<std::string> CreateSession(const GraphDef& graph, const ConfigProto& config);
  absl::Status ExtendSession(const std::string& handle, const GraphDef& graph);
  absl::Status RunStep(const RunStepRequest& request, RunStepResponse* response);
  absl::Status CloseSession(const std::string& handle);
  absl::Status ListDevices(std::vector<DeviceAttributes>* devices);
  // Closes every session, deregistering their graphs (TensorFlow's Reset).
  absl::Status Reset();

 private:
  absl::StatusOr<std::shared_ptr<MasterSession>> FindSession(const std::string& handle);

  const WorkerCache* workers_;
  RecentRequestIds request_ids_;  // Of RunStep: a retried step is refused, not run twice.
  absl::Mutex mu_;
  // By handle: 128 random bits, so that a client cannot reach another's session, nor a stale
  // handle a new session after a restart.
  absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_MASTER_MASTER_H_
