// The partitions the master built for one (feeds, fetches, targets) signature of a session,
// and the two things done with them: registering them on their workers (once, all workers in
// parallel) and running a step over them. TensorFlow's ReffedClientGraph plays this part.
//
//   auto graph = std::make_shared<ClientGraph>(session_handle, config, std::move(parts), feeds,
//                                              fetches);
//   SL_RETURN_IF_ERROR(graph->EnsureRegistered());      // Concurrent callers share one try.
//   SL_RETURN_IF_ERROR(graph->RunStep(step, &outputs, &metadata));  // In fetches() order.
//   graph->Deregister();
#ifndef SLUICE_MASTER_CLIENT_GRAPH_H_
#define SLUICE_MASTER_CLIENT_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "framework/cancellation.h"
#include "framework/tensor.h"
#include "framework/tensor_shape.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "worker/worker_interface.h"

namespace sluice {

class ClientGraph {
 public:
  // One task's partition. The worker is not owned (the WorkerCache owns it).
  struct Part {
    std::string task;
    WorkerInterface* worker = nullptr;
    GraphDef graph_def;
    // The values of graph_def's hoisted Consts (framework/hoisted_constants.h).
    std::shared_ptr<const HoistedConstants> constants;
  };
  // A fed tensor: where its client-terminated _Recv waits, and what it accepts.
  struct Feed {
    std::string name;  // Canonical: "x:0".
    std::string key;   // Rendezvous key.
    int part = 0;
    DataType dtype = DT_INVALID;
    PartialShape shape;  // From the fed Placeholder's shape attr; unknown otherwise.
    std::string node;
  };
  // A fetched tensor: where its client-terminated _Send leaves it.
  struct Fetch {
    std::string name;  // Canonical: "y:0".
    std::string key;
    int part = 0;
  };
  // One step's inputs and the request's options.
  struct Step {
    int64_t step_id = 0;
    // The value of each of feeds(), in that order. Not owned; none null.
    absl::Span<const Tensor* const> feeds;
    const RunOptions* options = nullptr;
    // Past it the step is cancelled everywhere with DEADLINE_EXCEEDED. 0: none.
    int64_t timeout_ms = 0;
    // The caller's (a gRPC call that may be cancelled); cancelling it cancels the step with
    // its status. Not owned; null: none.
    CancellationManager* cancellation = nullptr;
  };

  // `config`: the session's, sent with each part (workers read its resource limits).
  // `feeds`: only those the graph reads (a fed tensor pruned away needs no value).
  ClientGraph(std::string session_handle, ConfigProto config, std::vector<Part> parts,
              std::vector<Feed> feeds, std::vector<Fetch> fetches);

  ~ClientGraph();

  ClientGraph(const ClientGraph&) = delete;
  ClientGraph& operator=(const ClientGraph&) = delete;

  // Registers every part on its worker, all at once. The first caller registers; callers that
  // come while it does wait for its result. After a failure nothing stays registered and the
  // error is returned again (the session then drops this graph and builds a new one).
  absl::Status EnsureRegistered() ABSL_LOCKS_EXCLUDED(mu_);
  // Best effort: the workers may be gone already.
  void Deregister() ABSL_LOCKS_EXCLUDED(mu_);

  // Checks the feeds against what the graph expects, runs every part at once (the first
  // failure aborts the step on the others) and returns the value of each of fetches(), in
  // that order, into `fetched` (as many as fetches()). A deadline or the caller's
  // cancellation aborts the step on every part, which stop at their next node or loop
  // iteration. Needs EnsureRegistered() to have succeeded.
  absl::Status RunStep(const Step& step, absl::Span<Tensor> fetched, RunMetadata* metadata) const;

  const std::vector<Feed>& feeds() const { return feeds_; }
  const std::vector<Fetch>& fetches() const { return fetches_; }
  const std::vector<Part>& parts() const { return parts_; }
  // What the master's optimizer did to this graph before it was partitioned; reported with
  // the partition graphs. Set once, before the graph is shared.
  void set_optimizer_passes(std::vector<OptimizerPassSummary> passes) {
    optimizer_passes_ = std::move(passes);
  }

 private:
  const std::string session_handle_;
  const ConfigProto config_;
  const std::vector<Part> parts_;
  std::vector<OptimizerPassSummary> optimizer_passes_;
  const std::vector<Feed> feeds_;
  const std::vector<Fetch> fetches_;
  // Per part: the indices into feeds_ and fetches_ of the tensors it receives and sends.
  std::vector<std::vector<int>> part_feeds_;
  std::vector<std::vector<int>> part_fetches_;

  // The requests and responses of one step on every part, kept for the next step: their
  // graph handles, keys and vectors are the same every time.
  struct StepCalls;
  std::unique_ptr<StepCalls> TakeStepCalls() const ABSL_LOCKS_EXCLUDED(pool_mu_, mu_);
  void ReturnStepCalls(std::unique_ptr<StepCalls> calls) const ABSL_LOCKS_EXCLUDED(pool_mu_);
  // The fetched values (and stats) out of a step's finished calls.
  absl::Status CollectFetches(StepCalls& calls, bool collect_stats, bool partition_graphs,
                              absl::Span<Tensor> fetched, RunMetadata* metadata) const;
  // Enough for the steps of a few threads running this signature at once.
  static constexpr size_t kMaxPooledStepCalls = 4;
  mutable absl::Mutex pool_mu_;
  mutable std::vector<std::unique_ptr<StepCalls>> pool_ ABSL_GUARDED_BY(pool_mu_);

  enum class State { kUnregistered, kRegistering, kRegistered, kFailed };
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kUnregistered;
  absl::Status registration_error_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> graph_handles_ ABSL_GUARDED_BY(mu_);  // One per part once registered.
};

}  // namespace sluice

#endif  // SLUICE_MASTER_CLIENT_GRAPH_H_
