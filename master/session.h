// The client's view of Sluice: create a session on a graph and run it. With an empty target
// the session is embedded (an in-process master and worker, //master:session); with
// "grpc://host:port" it reaches a `sluice serve` cluster through the same master code
// (//rpc:grpc_session). Each kind registers a factory for its targets; a program has the kinds
// it links.
//
//   SessionOptions options;                       // options.config.device_count["CPU"] = 2
//   SL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
//   SL_RETURN_IF_ERROR(session->Create(graph_def));
//   std::vector<Tensor> outputs;
//   SL_RETURN_IF_ERROR(session->Run({{"x:0", x}}, {"y:0"}, {}, &outputs));
#ifndef SLUICE_MASTER_SESSION_H_
#define SLUICE_MASTER_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/cancellation.h"
#include "framework/tensor.h"
#include "proto/config.pb.h"
#include "proto/device_attributes.pb.h"
#include "proto/graph.pb.h"

namespace sluice {

struct SessionOptions {
  // Empty: embedded. "grpc://host:port": a remote master.
  std::string target;
  ConfigProto config;
};

// Thread-safe: Run may be called from several threads at once.
class Session {
 public:
  virtual ~Session() = default;

  // Sets the session's graph; validates it (errors name the node).
  virtual absl::Status Create(const GraphDef& graph) = 0;
  // The same for a caller done with its GraphDef: an in-process session keeps the moved graph
  // instead of a copy, so a model's weights are not held twice (TensorFlow's overload too).
  virtual absl::Status Create(GraphDef&& graph) { return Create(static_cast<const GraphDef&>(graph)); }
  // Adds nodes to the session's graph (names must be new).
  virtual absl::Status Extend(const GraphDef& graph) = 0;

  // Feeds `inputs` ("node:k" -> value), computes `output_names` ("node:k" or "node") and runs
  // `target_nodes` for their effects. `outputs` gets one tensor per output name, in order.
  virtual absl::Status Run(const RunOptions& run_options,
                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                           const std::vector<std::string>& output_names,
                           const std::vector<std::string>& target_nodes,
                           std::vector<Tensor>* outputs, RunMetadata* run_metadata) = 0;
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs) {
    return Run(RunOptions(), inputs, output_names, target_nodes, outputs, nullptr);
  }
  // Run, ended with `cancellation`'s status (CANCELLED, say) when another thread cancels it
  // while the step runs (not owned; null: none). A kind that cannot stop a step part-way runs
  // it whole; one cancelled before the call does not run it.
  virtual absl::Status RunCancellable(const RunOptions& run_options,
                                      const std::vector<std::pair<std::string, Tensor>>& inputs,
                                      const std::vector<std::string>& output_names,
                                      const std::vector<std::string>& target_nodes,
                                      std::vector<Tensor>* outputs, RunMetadata* run_metadata,
                                      CancellationManager* cancellation) {
    if (cancellation != nullptr && cancellation->IsCancelled()) return cancellation->status();
    return Run(run_options, inputs, output_names, target_nodes, outputs, run_metadata);
  }

  virtual absl::Status ListDevices(std::vector<DeviceAttributes>* devices) = 0;
  // Releases the session's graphs on the workers; later calls fail with FAILED_PRECONDITION.
  virtual absl::Status Close() = 0;
};

// A session of the kind the target names. INVALID_ARGUMENT for a target no linked kind takes.
absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

// Makes sessions for targets that start with a prefix ("" takes only the empty target).
using SessionFactory =
    std::function<absl::StatusOr<std::unique_ptr<Session>>(const SessionOptions& options)>;
// Registers a session kind, typically from a static initializer of the kind's library
// (which is then alwayslink). `example` shows a target of the kind in error messages.
bool RegisterSessionFactory(const std::string& target_prefix, const std::string& example,
                            SessionFactory factory);

}  // namespace sluice

#endif  // SLUICE_MASTER_SESSION_H_
