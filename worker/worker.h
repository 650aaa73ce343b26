// A worker: the devices of one task, the graphs registered on them, and the rendezvous of
// each running step.
//
//   Worker worker({.job = "localhost", .task = 0, .num_cpu_devices = 2});
//   std::vector<DeviceAttributes> devices;
//   worker.GetStatus(&devices);
#ifndef SLUICE_WORKER_WORKER_H_
#define SLUICE_WORKER_WORKER_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "framework/cancellation.h"
#include "framework/device.h"
#include "framework/graph.h"
#include "framework/memory_budget.h"
#include "framework/thread_pool.h"
#include "worker/executor.h"
#include "worker/local_rendezvous.h"
#include "worker/recent_request_ids.h"
#include "worker/worker_interface.h"

namespace sluice {

struct WorkerOptions {
  std::string job = "localhost";
  int task = 0;
  int num_cpu_devices = 1;
  // Threads running ready nodes (0: the machine's core count).
  int inter_op_threads = 0;
  // Threads kernels use for intra-op parallelism (0: the machine's core count).
  int intra_op_threads = 0;
  // Makes each step's rendezvous; null: a LocalRendezvous. The distributed runtime passes
  // one that fetches values sent on other tasks (worker/remote_rendezvous.h).
  std::function<std::shared_ptr<LocalRendezvous>(int64_t step_id)> rendezvous_factory;
  // Bytes of tensors one session's kernels may hold at once on this worker (0: no limit but
  // the session's own, ConfigProto.resource_limits); the smaller limit wins.
  int64_t session_memory_limit_bytes = 0;
  // Nodes a registered graph may have (with a session's own limit, the smaller wins).
  int64_t max_graph_nodes = kDefaultMaxGraphNodes;
  // RunGraphAsync returns before any node runs (all go to the inter-op pool): for callers on
  // an RPC system's threads, which a long node would otherwise hold.
  bool return_before_running_nodes = false;
};

class Worker : public WorkerInterface {
 public:
  explicit Worker(const WorkerOptions& options);
  // Cancels the steps under way and waits for their executors to stop.
  ~Worker() override;

  absl::Status GetStatus(std::vector<DeviceAttributes>* devices) override;
  absl::Status RegisterGraph(const RegisterGraphRequest& request,
                             RegisterGraphResponse* response) override;
  absl::Status DeregisterGraph(const std::string& graph_handle) override;
  void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                     StatusCallback done) override;
  // Cancels the step's executors (no further node starts; Loop and Scan stop between
  // iterations) and fails its pending receives, all with `status`.
  void AbortStep(int64_t step_id, const absl::Status& status) override;
  // Aborts every step under way (a server shutting down).
  void AbortAllSteps(const absl::Status& status);
  void RecvTensorAsync(const RecvTensorRequest* request, RecvTensorResponse* response,
                       StatusCallback done) override;
  // A step's rendezvous outlives its RunGraph (other tasks may still fetch from it) until
  // this runs.
  void CleanupGraph(int64_t step_id) override;

  // "/job:J/replica:0/task:T".
  const std::string& task_name() const { return task_name_; }
  Device* FindDevice(absl::string_view name) const;
  // The rendezvous of a step, created on first use; shared with remote senders.
  std::shared_ptr<LocalRendezvous> StepRendezvous(int64_t step_id);
  // Steps whose rendezvous is held: running, or finished and awaiting CleanupGraph.
  size_t NumSteps();
  // RunGraph calls whose executors have not all finished.
  int NumRunningGraphs();
  // Forgets the variables of every device (WorkerService's CleanupAll).
  void ClearVariables();

 private:
  struct GraphItem {
    std::vector<std::unique_ptr<Executor>> executors;  // One per device.
    std::shared_ptr<MemoryBudget> memory_budget;       // The session's; null: unlimited.
    // The keys of the graph's client-terminated _Recv and _Send nodes, parsed once: RunGraph
    // names its feeds and fetches by them, and parsing them on every step cost more than
    // running a tiny graph.
    absl::flat_hash_map<std::string, Rendezvous::ParsedKey> client_keys;
  };
  // One RunGraph call under way: what its executors' callbacks share.
  struct RunGraphState;
  // What one step holds on this worker; both are shared with whoever uses them meanwhile.
  struct Step {
    std::shared_ptr<LocalRendezvous> rendezvous;
    std::shared_ptr<CancellationManager> cancellation;
    bool ran = false;  // A RunGraph of this step came; otherwise only RecvTensor or AbortStep.
  };
  // Created on first use, aborted at once if the step was cleaned up already.
  // `run_graph`: for a RunGraph of the step (which makes it a step that ran).
  Step FindOrCreateStep(int64_t step_id, bool run_graph = false) ABSL_LOCKS_EXCLUDED(mu_);
  // The part of FindOrCreateStep done under mu_; the caller then aborts `stale`, and the step
  // itself when `*cleaned`.
  Step FindOrCreateStepLocked(int64_t step_id, bool run_graph, std::vector<Step>* stale,
                              bool* cleaned) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AbortStaleSteps(const std::vector<Step>& stale);
  // The parsed key: the graph's own (the usual case), else parsed into `storage`.
  static absl::StatusOr<const Rendezvous::ParsedKey*> ParseClientKey(
      const GraphItem& item, const std::string& key, Rendezvous::ParsedKey* storage);
  // Steps that only RecvTensor or AbortStep made (any client can name any step id) are
  // dropped once there are too many or they are too old: their waiters fail with ABORTED.
  void TakeStaleUnstartedSteps(std::vector<Step>* stale) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The budget the graphs of `session_handle` share, made on first use; null when unlimited.
  std::shared_ptr<MemoryBudget> SessionBudget(const std::string& session_handle, int64_t limit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Abort(const Step& step, const absl::Status& status);

  std::string task_name_;
  const int64_t session_memory_limit_bytes_;
  const int64_t max_graph_nodes_;
  const bool return_before_running_nodes_;
  std::function<std::shared_ptr<LocalRendezvous>(int64_t step_id)> rendezvous_factory_;
  std::unique_ptr<ThreadPool> inter_op_pool_;
  std::unique_ptr<ThreadPool> intra_op_pool_;
  std::vector<std::unique_ptr<Device>> devices_;
  // RunGraph and RecvTensor ids seen lately: a retry must not run a step or take a value twice.
  RecentRequestIds request_ids_;

  absl::Mutex mu_;
  // By handle: 128 random bits, so a client cannot run or drop another session's graphs.
  absl::flat_hash_map<std::string, std::shared_ptr<GraphItem>> graphs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, Step> steps_ ABSL_GUARDED_BY(mu_);
  // Each session's memory budget, shared by its graphs while any is registered.
  absl::flat_hash_map<std::string, std::weak_ptr<MemoryBudget>> session_budgets_ ABSL_GUARDED_BY(mu_);
  int running_graphs_ ABSL_GUARDED_BY(mu_) = 0;
  // Recently cleaned-up steps, so that a late RecvTensor or RunGraph for one fails at once
  // instead of waiting for values that will never be sent. Enough for the steps of the last
  // seconds of even a fast loop; older ones are forgotten.
  static constexpr size_t kRememberedCleanedSteps = 4096;
  // A RecvTensor may come before the RunGraph of its step, but not by minutes, and not for
  // thousands of steps at once.
  static constexpr size_t kMaxUnstartedSteps = 1024;
  static constexpr absl::Duration kUnstartedStepTimeout = absl::Seconds(120);
  std::deque<std::pair<int64_t, absl::Time>> unstarted_order_ ABSL_GUARDED_BY(mu_);
  RecentIds cleaned_steps_ ABSL_GUARDED_BY(mu_){kRememberedCleanedSteps};
};

}  // namespace sluice

#endif  // SLUICE_WORKER_WORKER_H_
