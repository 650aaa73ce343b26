#include "worker/executor.h"

#include <algorithm>
#include <atomic>
#include <new>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "framework/graph.h"
#include "framework/status.h"
#include "kernels/kernel_registry.h"
#include "ops/op_registry.h"
#include "worker/function_body.h"

namespace sluice {

using ReadyQueue = absl::InlinedVector<int, 16>;

// The state of one run, in one allocation with its pending counts and its inputs (three
// allocations per run were a visible part of a tiny step). Deletes itself after calling `done`.
class Executor::RunState {
 public:
  static RunState* New(const Executor* exec, const Args& args, DoneCallback done) {
    static_assert(alignof(RunState) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    const Layout layout(*exec);
    void* memory = ::operator new(layout.bytes);
    char* base = static_cast<char*>(memory);
    auto* pending = reinterpret_cast<std::atomic<int>*>(base + layout.pending_offset);
    for (size_t i = 0; i < exec->nodes_.size(); ++i) {
      new (&pending[i]) std::atomic<int>(exec->nodes_[i].initial_pending);
    }
    auto* inputs = reinterpret_cast<Tensor*>(base + layout.inputs_offset);
    for (int i = 0; i < exec->total_inputs_; ++i) new (&inputs[i]) Tensor();
    for (const auto& [slot, value] : exec->constant_inputs_) inputs[slot] = value;
    return new (memory) RunState(exec, args, std::move(done), pending, inputs);
  }

  void Start() {
    const auto& roots = exec_->roots_;
    if (roots.empty()) {
      Finish();
      return;
    }
    outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
    if (!args_.caller_runs_nodes && args_.runner != nullptr) {
      // The caller must not run nodes (nor the nodes they make ready): all go to the runner.
      args_.runner->Schedule([this] {
        ReadyQueue queue;
        Schedule(exec_->roots_.begin(), exec_->roots_.end(), &queue);
        Drain(&queue);
      });
      return;
    }
    ReadyQueue queue;
    Schedule(roots.begin(), roots.end(), &queue);
    Drain(&queue);
  }

 private:
  template <typename It>
  void Schedule(It begin, It end, ReadyQueue* queue) {
    bool kept_expensive = false;
    // One inter-op thread means nodes run one after another: when this thread runs nodes too,
    // handing one to the runner would run two at once, each with all intra-op threads (twice
    // as many OpenMP threads as cores: libgomp then sleeps between regions, and ShuffleNet's
    // branches ran 3x slower at two intra-op threads than at one).
    const bool sequential = args_.runner != nullptr && args_.caller_runs_nodes && args_.runner->NumThreads() <= 1;
    for (It it = begin; it != end; ++it) {
      const int id = *it;
      const NodeItem& item = exec_->nodes_[id];
      if (!item.expensive || args_.runner == nullptr || sequential) {
        queue->push_back(id);
      } else if (!kept_expensive && std::none_of(queue->begin(), queue->end(),
                                                  [&](int q) { return exec_->nodes_[q].expensive; })) {
        // Keep one expensive node on this thread; it is free once the cheap ones queued (the
        // Consts of a step's roots) are done. Handing it to the runner would cost two thread
        // switches per step when the graph is a chain.
        kept_expensive = true;
        queue->push_back(id);
      } else {
        args_.runner->Schedule([this, id] {
          ReadyQueue q{id};
          Drain(&q);
        });
      }
    }
  }

  // Runs queued nodes until none is left; the state may be gone when this returns.
  void Drain(ReadyQueue* queue) {
    while (!queue->empty()) {
      int id = queue->back();
      queue->pop_back();
      RunNode(id, queue);
    }
  }

  void RunNode(int id, ReadyQueue* queue) {
    const NodeItem& item = exec_->nodes_[id];
    if (aborted_.load(std::memory_order_acquire)) {
      Complete(id, absl::OkStatus(), nullptr, 0, queue);
      return;
    }
    if (args_.cancellation != nullptr && args_.cancellation->IsCancelled()) {
      Complete(id, args_.cancellation->status(), nullptr, 0, queue);  // Names this node.
      return;
    }
    OpKernelContext::Params params;
    params.step_id = args_.step_id;
    params.device = exec_->device_;
    params.rendezvous = args_.rendezvous;
    params.kernel = item.kernel.get();
    params.inputs = absl::Span<const Tensor>(inputs_ + item.input_start, item.num_inputs);
    params.call_frame = args_.call_frame;
    params.cancellation = args_.cancellation;
    const int64_t start = args_.stats ? absl::GetCurrentTimeNanos() : 0;
    MemoryBudget::Scope budget_scope(args_.memory_budget);
    if (!item.is_async) {
      OpKernelContext ctx(params);
      // No exception escapes a kernel: one thrown by the library it calls (bad_alloc for a
      // size from input data, dnnl::error) fails this node like any other error.
      absl::Status s = CatchExceptions([&] { return item.kernel->Compute(&ctx); });
      // A long kernel stops between slices of work once the step is cancelled, leaving its
      // outputs partial: the node fails with the step's status instead.
      if (s.ok() && args_.cancellation != nullptr && args_.cancellation->IsCancelled()) {
        s = args_.cancellation->status();
      }
      // Allocations that cannot fail where they happen are charged past the limit; the node
      // that made them fails here instead.
      const std::shared_ptr<MemoryBudget>& budget = MemoryBudget::Current();
      if (s.ok() && budget != nullptr && budget->Exceeded()) {
        s = absl::ResourceExhaustedError(absl::StrCat("the session's memory limit of ", budget->limit(),
                                                      " bytes is exceeded (", budget->used(), " in use)"));
      }
      Complete(id, s, &ctx, start, queue);
      return;
    }
    // One allocation for the context and what the callback needs; the callback holds only a
    // pointer to it (std::function keeps only trivially copyable callables without allocating).
    auto* call = new AsyncCall{this, id, start, OpKernelContext(params)};
    static_cast<const AsyncOpKernel*>(item.kernel.get())
        ->ComputeAsync(&call->ctx, [call](absl::Status s) {
          RunState* self = call->state;
          ReadyQueue q;
          self->Complete(call->id, s, &call->ctx, call->start, &q);
          delete call;
          // When Complete ended the step, this state is gone (and nothing was ready: a ready
          // node keeps the step outstanding), so no member may be read (ASan found one).
          if (q.empty()) return;
          if (self->args_.caller_runs_nodes || self->args_.runner == nullptr) {
            self->Drain(&q);
            return;
          }
          // This may be an RPC system's thread (a RecvTensor answer): what became ready runs on
          // the runner (a Loop fed by a _Recv held such a thread for hours).
          for (int ready : q) {
            self->args_.runner->Schedule([self, ready] {
              ReadyQueue one{ready};
              self->Drain(&one);
            });
          }
        });
  }

  // An asynchronous node under way.
  struct AsyncCall {
    RunState* state;
    int id;
    int64_t start;
    OpKernelContext ctx;
  };

  // Records the node's outcome, hands its outputs to consumers and queues those now ready.
  void Complete(int id, absl::Status s, OpKernelContext* ctx, int64_t start, ReadyQueue* queue) {
    const NodeItem& item = exec_->nodes_[id];
    if (ctx != nullptr && s.ok()) {
      for (int i = 0; i < item.num_outputs; ++i) {
        if (!ctx->output(i).IsInitialized()) {
          s = absl::InternalError(absl::StrCat("output ", i, " was not produced"));
          break;
        }
      }
    }
    if (!s.ok()) {
      RecordError(AddContext(s, absl::StrCat("node '", item.kernel->name(), "' (op '",
                                             item.kernel->type_string(), "')")));
    }
    for (int i = 0; i < item.num_inputs; ++i) inputs_[item.input_start + i] = Tensor();
    ReadyQueue ready;
    if (ctx != nullptr && s.ok() && !aborted_.load(std::memory_order_acquire)) {
      for (const OutEdge& e : item.out_edges) {
        if (e.dst_slot >= 0) inputs_[e.dst_slot] = ctx->output(e.src_output);
        if (pending_[e.dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(e.dst);
      }
    }
    if (args_.stats != nullptr && ctx != nullptr) RecordStats(item, start);
    if (!ready.empty()) {
      outstanding_.fetch_add(static_cast<int>(ready.size()), std::memory_order_relaxed);
      Schedule(ready.begin(), ready.end(), queue);
    }
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
  }

  void RecordError(const absl::Status& s) {
    {
      absl::MutexLock lock(&mu_);
      if (!status_.ok()) return;
      status_ = s;
    }
    aborted_.store(true, std::memory_order_release);
    if (args_.rendezvous != nullptr) args_.rendezvous->StartAbort(s);
  }

  void RecordStats(const NodeItem& item, int64_t start) {
    const int64_t end = absl::GetCurrentTimeNanos();
    absl::MutexLock lock(&mu_);
    NodeExecStats* ns = args_.stats->add_node_stats();
    ns->set_node_name(item.kernel->name());
    ns->set_timeline_label(item.kernel->type_string());
    ns->set_all_start_micros(start / 1000);
    ns->set_all_start_nanos(start);
    ns->set_op_end_rel_micros((end - start) / 1000);
    ns->set_all_end_rel_micros((end - start) / 1000);
    ns->set_op_end_rel_nanos(end - start);
    ns->set_all_end_rel_nanos(end - start);
    ns->set_thread_id(static_cast<uint32_t>(std::hash<std::thread::id>()(std::this_thread::get_id())));
  }

  void Finish() {
    DoneCallback done = std::move(done_);
    absl::Status s;
    // Every node has completed (outstanding_ reached zero), so an error recorded is visible;
    // without one there is nothing to lock for.
    if (aborted_.load(std::memory_order_acquire)) {
      absl::MutexLock lock(&mu_);
      s = status_;
    }
    Delete();
    done(s);
  }

  // Where the pending counts and the inputs lie after the state.
  struct Layout {
    explicit Layout(const Executor& exec)
        : pending_offset(RoundUp(sizeof(RunState), alignof(std::atomic<int>))),
          inputs_offset(RoundUp(pending_offset + exec.nodes_.size() * sizeof(std::atomic<int>),
                                alignof(Tensor))),
          bytes(inputs_offset + static_cast<size_t>(exec.total_inputs_) * sizeof(Tensor)) {}
    static size_t RoundUp(size_t n, size_t align) { return (n + align - 1) / align * align; }
    size_t pending_offset, inputs_offset, bytes;
  };

  RunState(const Executor* exec, const Args& args, DoneCallback done, std::atomic<int>* pending,
           Tensor* inputs)
      : exec_(exec), args_(args), done_(std::move(done)), inputs_(inputs), pending_(pending) {}

  void Delete() {
    for (int i = 0; i < exec_->total_inputs_; ++i) inputs_[i].~Tensor();
    // std::atomic<int> needs no destruction.
    this->~RunState();
    ::operator delete(static_cast<void*>(this));
  }

  const Executor* exec_;
  const Args args_;
  DoneCallback done_;
  Tensor* const inputs_;             // total_inputs_ of them, after the pending counts.
  std::atomic<int>* const pending_;  // One per node, right after this object.
  std::atomic<int> outstanding_{0};
  std::atomic<bool> aborted_{false};
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

namespace {

// Functions of one graph's library, each built once into its own executor on `device`.
class LibraryRuntime : public FunctionRuntime {
 public:
  LibraryRuntime(FunctionDefLibrary library, Device* device)
      : library_(std::move(library)), device_(device) {}

  absl::StatusOr<Handle> Instantiate(const std::string& name) override {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < functions_.size(); ++i) {
      if (functions_[i].name == name) return static_cast<Handle>(i);
    }
    const FunctionDef* fdef = nullptr;
    for (const auto& f : library_.function()) {
      if (f.signature().name() == name) fdef = &f;
    }
    if (fdef == nullptr) return absl::NotFoundError(absl::StrCat("function '", name, "' is not in the library"));
    SL_ASSIGN_OR_RETURN(GraphDef body, FunctionBodyGraph(*fdef, library_));
    auto exec = Executor::Create(body, device_);
    SL_RETURN_IF_ERROR(exec.status(), "function '", name, "'");
    functions_.push_back({name, *std::move(exec), fdef->signature().output_arg_size()});
    return static_cast<Handle>(functions_.size() - 1);
  }

  absl::Status Run(Handle handle, const std::vector<Tensor>& args, std::vector<Tensor>* rets,
                   const CancellationManager* cancellation) const override {
    const Executor* exec;
    int num_rets;
    std::string name;
    {
      absl::MutexLock lock(&mu_);
      exec = functions_[handle].executor.get();
      num_rets = functions_[handle].num_rets;
      name = functions_[handle].name;
    }
    CallFrame frame(args, num_rets);
    Executor::Args run;
    run.call_frame = &frame;  // No runner: the body runs on this thread.
    run.cancellation = cancellation;
    SL_RETURN_IF_ERROR(exec->Run(run), "in function '", name, "'");
    for (int i = 0; i < num_rets; ++i) {
      if (!frame.rets()[i].IsInitialized()) {
        return absl::InternalError(absl::StrCat("function '", name, "' did not set result ", i));
      }
    }
    *rets = std::move(frame.rets());
    return absl::OkStatus();
  }

  int NumRets(Handle handle) const override {
    absl::MutexLock lock(&mu_);
    return functions_[handle].num_rets;
  }

 private:
  struct Instance {
    std::string name;
    std::unique_ptr<Executor> executor;
    int num_rets;
  };
  const FunctionDefLibrary library_;
  Device* device_;
  mutable absl::Mutex mu_;
  std::vector<Instance> functions_ ABSL_GUARDED_BY(mu_);  // Indexed by handle.
};

}  // namespace

absl::Status CallFrame::GetArg(int index, Tensor* value) const {
  if (index < 0 || index >= static_cast<int>(args_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("function argument ", index, " does not exist (", args_.size(), " given)"));
  }
  *value = args_[index];
  return absl::OkStatus();
}

absl::Status CallFrame::SetRetval(int index, const Tensor& value) {
  if (index < 0 || index >= static_cast<int>(rets_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("function result ", index, " does not exist"));
  }
  rets_[index] = value;
  return absl::OkStatus();
}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(const GraphDef& def, Device* device,
                                                           const HoistedConstants* constants) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, Graph::FromGraphDef(def, *OpRegistry::Global()));
  auto exec = std::unique_ptr<Executor>(new Executor());
  exec->device_ = device;
  if (def.library().function_size() > 0) {
    exec->functions_ = std::make_unique<LibraryRuntime>(def.library(), device);
  }
  std::vector<Node*> nodes = graph->nodes();
  std::vector<int> index(graph->num_node_ids(), -1);
  exec->nodes_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node* n = nodes[i];
    index[n->id()] = static_cast<int>(i);
    NodeItem& item = exec->nodes_[i];
    SL_ASSIGN_OR_RETURN(item.kernel, KernelRegistry::Global()->CreateOpKernel(
                                         device, n->def(), n->op_def(), exec->functions_.get(), constants));
    item.is_async = item.kernel->IsAsync();
    item.expensive = item.kernel->IsExpensive();
    item.input_start = exec->total_inputs_;
    item.num_inputs = n->num_inputs();
    item.num_outputs = n->num_outputs();
    item.initial_pending = static_cast<int>(n->in_edges().size());
    exec->total_inputs_ += n->num_inputs();
  }
  for (Node* n : nodes) {
    NodeItem& item = exec->nodes_[index[n->id()]];
    for (const Edge* e : n->out_edges()) {
      int dst = index[e->dst->id()];
      int slot = e->IsControl() ? -1 : exec->nodes_[dst].input_start + e->dst_input;
      item.out_edges.push_back(OutEdge{dst, slot, e->src_output});
    }
  }
  // Consts without inputs run once, now; their consumers start each run with the value.
  std::vector<bool> folded(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeItem& item = exec->nodes_[i];
    if (nodes[i]->type_string() != "Const" || item.initial_pending != 0 || item.is_async || item.num_outputs != 1) {
      continue;
    }
    OpKernelContext::Params params;
    params.device = device;
    params.kernel = item.kernel.get();
    OpKernelContext ctx(params);
    if (!CatchExceptions([&] { return item.kernel->Compute(&ctx); }).ok() || !ctx.output(0).IsInitialized()) {
      continue;  // Left to fail in the run, naming the node, as before.
    }
    folded[i] = true;
    for (const OutEdge& e : item.out_edges) {
      if (e.dst_slot >= 0) exec->constant_inputs_.emplace_back(e.dst_slot, ctx.output(0));
      --exec->nodes_[e.dst].initial_pending;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!folded[i] && exec->nodes_[i].initial_pending == 0) exec->roots_.push_back(static_cast<int>(i));
  }
  return exec;
}

void Executor::RunAsync(const Args& args, DoneCallback done) const {
  RunState::New(this, args, std::move(done))->Start();
}

absl::Status Executor::Run(const Args& args) const {
  absl::Notification n;
  absl::Status status;
  RunAsync(args, [&](const absl::Status& s) {
    status = s;
    n.Notify();
  });
  n.WaitForNotification();
  return status;
}

}  // namespace sluice
