// What a master asks of a worker. The embedded session calls a Worker directly through this
// interface; the distributed runtime puts the same calls behind gRPC.
//
//   RegisterGraphResponse reg;
//   SL_RETURN_IF_ERROR(worker->RegisterGraph({session, partition_graph}, &reg));
//   RunGraphRequest run{reg.graph_handle, step_id, {{feed_key, tensor}}, {fetch_key}};
//   worker->RunGraphAsync(&run, &response, [](const absl::Status& s) { ... });
#ifndef SLUICE_WORKER_WORKER_INTERFACE_H_
#define SLUICE_WORKER_WORKER_INTERFACE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "framework/hoisted_constants.h"
#include "framework/tensor.h"
#include "proto/config.pb.h"
#include "proto/device_attributes.pb.h"
#include "proto/graph.pb.h"
#include "proto/step_stats.pb.h"

namespace sluice {

struct RegisterGraphRequest {
  std::string session_handle;
  // Every node carries the full name of a device of this worker.
  GraphDef graph_def;
  // The values of graph_def's hoisted Consts (framework/hoisted_constants.h), shared with the
  // master in-process; a worker reached over the network gets them inlined instead.
  std::shared_ptr<const HoistedConstants> constants;
  // The session's; the worker reads its resource_limits.
  ConfigProto config;
};

struct RegisterGraphResponse {
  std::string graph_handle;
};

struct RunGraphRequest {
  std::string graph_handle;
  int64_t step_id = 0;
  // Values for client-terminated _Recv nodes, by rendezvous key.
  std::vector<std::pair<std::string, Tensor>> send;
  // Keys of client-terminated _Send nodes whose values come back.
  std::vector<std::string> recv_key;
  bool collect_stats = false;
  int64_t request_id = 0;  // Non-zero: retries carry the same id and are refused.
};

struct RunGraphResponse {
  std::vector<std::pair<std::string, Tensor>> recv;
  StepStats step_stats;
};

// Asks the worker that owns the key's source device for the value sent under it.
struct RecvTensorRequest {
  int64_t step_id = 0;
  std::string rendezvous_key;
  int64_t request_id = 0;  // Non-zero: retries carry the same id and are refused.
};

struct RecvTensorResponse {
  Tensor tensor;
  bool is_dead = false;
  int64_t send_start_micros = 0;
};

using StatusCallback = std::function<void(const absl::Status&)>;

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;
  virtual absl::Status GetStatus(std::vector<DeviceAttributes>* devices) = 0;
  virtual absl::Status RegisterGraph(const RegisterGraphRequest& request,
                                     RegisterGraphResponse* response) = 0;
  virtual absl::Status DeregisterGraph(const std::string& graph_handle) = 0;
  // `request` and `response` must stay valid until `done` runs.
  virtual void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                             StatusCallback done) = 0;
  // Cancels a running step (another worker failed): its pending receives fail with `status`.
  virtual void AbortStep(int64_t step_id, const absl::Status& status) = 0;
  // Waits for a value a _Send of this worker makes available in the step and answers with
  // it (the server side of a cross-task _Recv). Same lifetime rule as RunGraphAsync.
  virtual void RecvTensorAsync(const RecvTensorRequest* request, RecvTensorResponse* response,
                               StatusCallback done) {
    done(absl::UnimplementedError("this worker does not serve RecvTensor"));
  }
  // Drops what a finished step left on this worker (values sent but not received). The
  // master calls it once every part of the step has finished; it does not wait for it.
  virtual void CleanupGraph(int64_t step_id) {}
};

}  // namespace sluice

#endif  // SLUICE_WORKER_WORKER_INTERFACE_H_
