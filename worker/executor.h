// Runs one partition graph on one device as a dataflow graph. Kernels are built once, when
// the executor is created; each run keeps its values in a flat vector indexed by input slot.
// Ready nodes run inline on the calling thread when cheap and go to the thread pool when
// expensive; asynchronous kernels (_Recv) wait without holding a thread. The first error
// aborts the step's rendezvous, so no node waits forever, and is what the run returns. A
// cancelled step (Args::cancellation) starts no further node.
//
//   SL_ASSIGN_OR_RETURN(auto exec, Executor::Create(graph_def, device));
//   Executor::Args args{.step_id = 1, .rendezvous = &rendezvous, .runner = &pool};
//   SL_RETURN_IF_ERROR(exec->Run(args));              // or RunAsync(args, done)
#ifndef SLUICE_WORKER_EXECUTOR_H_
#define SLUICE_WORKER_EXECUTOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/cancellation.h"
#include "framework/device.h"
#include "framework/hoisted_constants.h"
#include "framework/memory_budget.h"
#include "framework/rendezvous.h"
#include "framework/thread_pool.h"
#include "kernels/op_kernel.h"
#include "proto/graph.pb.h"
#include "proto/step_stats.pb.h"

namespace sluice {

// A call's arguments (not owned: they outlive the frame) and the results its _Retval nodes set;
// for running a function body through Executor::Args::call_frame.
class CallFrame : public CallFrameInterface {
 public:
  CallFrame(absl::Span<const Tensor> args, int num_rets) : args_(args), rets_(num_rets) {}
  absl::Status GetArg(int index, Tensor* value) const override;
  absl::Status SetRetval(int index, const Tensor& value) override;
  std::vector<Tensor>& rets() { return rets_; }

 private:
  absl::Span<const Tensor> args_;
  std::vector<Tensor> rets_;
};

class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;  // Not owned; must outlive the run.
    ThreadPool* runner = nullptr;      // Where expensive ready nodes go; null runs all inline.
    DeviceStepStats* stats = nullptr;  // When set, one NodeExecStats per node is appended.
    CallFrameInterface* call_frame = nullptr;  // Args and results when running a function.
    // The step's; once cancelled no further node starts and the run returns its status,
    // naming the first node that did not run. Not owned; null: not cancellable.
    const CancellationManager* cancellation = nullptr;
    // The session's: kernels allocate against it, and a node whose allocations take it past
    // its limit fails with RESOURCE_EXHAUSTED. Null: no limit (a function body run inside a
    // kernel keeps its caller's).
    std::shared_ptr<MemoryBudget> memory_budget;
    // Whether RunAsync's caller, and whoever completes an asynchronous node (a _Recv's value
    // arriving), may run the nodes that are ready then. False: every node runs on `runner`,
    // for callers on an RPC system's threads, which must return at once: a gRPC callback
    // thread that runs a Loop of hours starves the server of the threads that would deliver
    // its cancellation, and every other call.
    bool caller_runs_nodes = true;
  };
  using DoneCallback = std::function<void(const absl::Status&)>;

  // Validates the graph, checks it has no cycle and builds every kernel; errors name the node.
  // Functions of the graph's library are instantiated on demand for kernels that call them.
  // `constants` holds the values of the graph's hoisted Consts (framework/hoisted_constants.h);
  // the kernels share their buffers, so the table need not outlive Create.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const GraphDef& graph, Device* device,
                                                          const HoistedConstants* constants = nullptr);
  ~Executor();

  // Calls `done` once every started node has finished. Thread-safe; runs may overlap.
  void RunAsync(const Args& args, DoneCallback done) const;
  absl::Status Run(const Args& args) const;

  Device* device() const { return device_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

 private:
  struct OutEdge {
    int dst;         // Node index.
    int dst_slot;    // Index into the run's flat input vector; -1 for control edges.
    int src_output;
  };
  struct NodeItem {
    std::unique_ptr<OpKernel> kernel;
    bool is_async = false;
    bool expensive = true;
    int input_start = 0;
    int num_inputs = 0;
    int num_outputs = 0;
    int initial_pending = 0;
    std::vector<OutEdge> out_edges;
  };
  class RunState;

  Executor() = default;

  Device* device_ = nullptr;
  // Declared before nodes_: kernels hold it, so it must outlive them.
  std::unique_ptr<FunctionRuntime> functions_;
  std::vector<NodeItem> nodes_;
  std::vector<int> roots_;
  int total_inputs_ = 0;
  // Outputs of the Consts without inputs, made once when the executor is built: each run
  // starts with them in their consumers' input slots instead of running the Consts (a
  // 240-node model ran 123 of them, a fifth of its 0.05 ms).
  std::vector<std::pair<int, Tensor>> constant_inputs_;  // (input slot, value)
};

}  // namespace sluice

#endif  // SLUICE_WORKER_EXECUTOR_H_
