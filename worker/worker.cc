#include "worker/worker.h"

#include <atomic>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "framework/device_name.h"
#include "framework/mutex_settings.h"
#include "framework/node_attr.h"
#include "framework/random_ids.h"
#include "framework/resource_mgr.h"
#include "kernels/threading.h"

namespace sluice {

namespace {

// Adds the rendezvous key of each client-terminated _Recv and _Send of `def` (the keys RunGraph
// names feeds and fetches by), built from the attrs as the kernels build theirs.
void AddClientKeys(const GraphDef& def,
                   absl::flat_hash_map<std::string, Rendezvous::ParsedKey>* keys) {
  for (const NodeDef& node : def.node()) {
    if (node.op() != "_Recv" && node.op() != "_Send") continue;
    AttrSlice attrs(node);
    bool client_terminated = false;
    std::string send_device, recv_device, tensor_name;
    int64_t incarnation = 0;
    if (!GetNodeAttr(attrs, "client_terminated", &client_terminated).ok() || !client_terminated ||
        !GetNodeAttr(attrs, "send_device", &send_device).ok() ||
        !GetNodeAttr(attrs, "recv_device", &recv_device).ok() ||
        !GetNodeAttr(attrs, "tensor_name", &tensor_name).ok() ||
        !GetNodeAttr(attrs, "send_device_incarnation", &incarnation).ok()) {
      continue;  // Parsed per step instead, if RunGraph ever names it.
    }
    std::string key = Rendezvous::CreateKey(send_device, static_cast<uint64_t>(incarnation),
                                            recv_device, tensor_name, FrameAndIter{});
    auto parsed = Rendezvous::ParseKey(key);
    if (parsed.ok()) keys->emplace(std::move(key), *std::move(parsed));
  }
}

// The tighter of two limits where <= 0 means none.
int64_t Smaller(int64_t a, int64_t b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

}  // namespace

Worker::Worker(const WorkerOptions& options)
    : session_memory_limit_bytes_(options.session_memory_limit_bytes),
      max_graph_nodes_(options.max_graph_nodes),
      return_before_running_nodes_(options.return_before_running_nodes),
      rendezvous_factory_(options.rendezvous_factory) {
  ConfigureMutexDeadlockDetection();
  task_name_ = absl::StrCat("/job:", options.job, "/replica:0/task:", options.task);
  int inter = options.inter_op_threads > 0 ? options.inter_op_threads : ThreadPool::DefaultThreads();
  int intra = options.intra_op_threads > 0 ? options.intra_op_threads : ThreadPool::DefaultThreads();
  inter_op_pool_ = std::make_unique<ThreadPool>("inter_op", inter);
  // The caller of ParallelFor works on one block itself, so one thread fewer suffices.
  intra_op_pool_ = std::make_unique<ThreadPool>("intra_op", std::max(0, intra - 1));
  if (options.intra_op_threads > 0) SetBlasThreads(options.intra_op_threads);
  absl::BitGen gen;
  // A new incarnation per process: a restarted worker's keys never match stale ones.
  const uint64_t incarnation = absl::Uniform<uint64_t>(gen, 1, UINT64_MAX);
  for (int i = 0; i < std::max(1, options.num_cpu_devices); ++i) {
    DeviceAttributes attrs;
    attrs.set_name(DeviceName::Full(options.job, 0, options.task, DEVICE_CPU, i));
    attrs.set_device_type(DEVICE_CPU);
    attrs.set_incarnation(incarnation + i);
    attrs.set_physical_device_desc("host CPU");
    devices_.push_back(std::make_unique<Device>(attrs, intra_op_pool_.get()));
  }
}

Worker::~Worker() {
  AbortAllSteps(absl::CancelledError(absl::StrCat(task_name_, " is shutting down")));
  // Executors still use the pools and devices destroyed next.
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* running) { return *running == 0; }, &running_graphs_));
  }
  // Resources (summary writers: their files are flushed) end with their devices.
  for (const auto& d : devices_) ReleaseResourceMgr(d.get());
}

absl::Status Worker::GetStatus(std::vector<DeviceAttributes>* devices) {
  devices->clear();
  for (const auto& d : devices_) devices->push_back(d->attributes());
  return absl::OkStatus();
}

Device* Worker::FindDevice(absl::string_view name) const {
  for (const auto& d : devices_) {
    if (d->name() == name) return d.get();
  }
  return nullptr;
}

absl::Status Worker::RegisterGraph(const RegisterGraphRequest& request,
                                   RegisterGraphResponse* response) {
  const ResourceLimits& limits = request.config.resource_limits();
  SL_RETURN_IF_ERROR(CheckGraphSize(request.graph_def, Smaller(max_graph_nodes_, limits.max_graph_nodes())),
                     "registering on ", task_name_);
  // Split by device: the master already cut every cross-device edge.
  // Large constants that came inline (over the network) are hoisted out of the copies as
  // they are made, into the table the master's hoisted ones are already in.
  HoistedConstants constants;
  std::map<std::string, GraphDef> by_device;
  for (const NodeDef& node : request.graph_def.node()) {
    if (FindDevice(node.device()) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' is placed on '",
                                                     node.device(), "', which is not a device of ",
                                                     task_name_));
    }
    NodeDef* copy = by_device[node.device()].add_node();
    *copy = node;
    if (IsHoisted(node) && request.constants != nullptr) {
      auto it = request.constants->find(node.name());
      if (it != request.constants->end()) constants.insert(*it);
    } else {
      HoistConstant(copy, &constants);
    }
  }
  auto item = std::make_shared<GraphItem>();
  AddClientKeys(request.graph_def, &item->client_keys);
  for (auto& [device, def] : by_device) {
    *def.mutable_library() = request.graph_def.library();
    *def.mutable_versions() = request.graph_def.versions();
    SL_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec, Executor::Create(def, FindDevice(device), &constants));
    item->executors.push_back(std::move(exec));
  }
  absl::MutexLock lock(&mu_);
  item->memory_budget = SessionBudget(
      request.session_handle, Smaller(session_memory_limit_bytes_, limits.memory_limit_bytes()));
  response->graph_handle = NewRandomHandle("graph");
  graphs_[response->graph_handle] = std::move(item);
  return absl::OkStatus();
}

std::shared_ptr<MemoryBudget> Worker::SessionBudget(const std::string& session_handle, int64_t limit) {
  if (limit <= 0) return nullptr;
  // Forget the budgets of sessions whose graphs are all gone (their last tensors may still
  // hold the budget object; that is fine).
  absl::erase_if(session_budgets_, [](const auto& kv) { return kv.second.expired(); });
  std::shared_ptr<MemoryBudget> budget = session_budgets_[session_handle].lock();
  if (budget == nullptr || budget->limit() != static_cast<uint64_t>(limit)) {
    budget = std::make_shared<MemoryBudget>(static_cast<uint64_t>(limit));
    session_budgets_[session_handle] = budget;
  }
  return budget;
}

absl::Status Worker::DeregisterGraph(const std::string& graph_handle) {
  absl::MutexLock lock(&mu_);
  if (graphs_.erase(graph_handle) == 0) {
    return absl::NotFoundError(absl::StrCat("graph handle '", graph_handle, "' is not registered on ",
                                            task_name_));
  }
  return absl::OkStatus();
}

Worker::Step Worker::FindOrCreateStepLocked(int64_t step_id, bool run_graph,
                                            std::vector<Step>* stale, bool* cleaned) {
  Step& s = steps_[step_id];
  if (run_graph) s.ran = true;
  *cleaned = false;
  if (s.rendezvous == nullptr) {
    s.rendezvous = rendezvous_factory_ ? rendezvous_factory_(step_id)
                                       : std::make_shared<LocalRendezvous>();
    s.cancellation = std::make_shared<CancellationManager>();
    *cleaned = cleaned_steps_.Contains(step_id);
    if (!run_graph) {
      unstarted_order_.emplace_back(step_id, absl::Now());
      TakeStaleUnstartedSteps(stale);
    }
  }
  return s;
}

void Worker::AbortStaleSteps(const std::vector<Step>& stale) {
  for (const Step& old : stale) {
    Abort(old, absl::AbortedError(absl::StrCat("no step ran on ", task_name_,
                                               " for a value asked of it")));
  }
}

Worker::Step Worker::FindOrCreateStep(int64_t step_id, bool run_graph) {
  Step step;
  std::vector<Step> stale;
  bool cleaned = false;
  {
    absl::MutexLock lock(&mu_);
    step = FindOrCreateStepLocked(step_id, run_graph, &stale, &cleaned);
  }
  AbortStaleSteps(stale);
  // A step cleaned up already gets nothing more: fail at once rather than wait forever.
  if (cleaned) {
    Abort(step, absl::AbortedError(absl::StrCat("step ", step_id, " already finished on ",
                                                task_name_)));
  }
  return step;
}

void Worker::TakeStaleUnstartedSteps(std::vector<Step>* stale) {
  const absl::Time now = absl::Now();
  while (!unstarted_order_.empty() &&
         (unstarted_order_.size() > kMaxUnstartedSteps ||
          now - unstarted_order_.front().second > kUnstartedStepTimeout)) {
    const int64_t id = unstarted_order_.front().first;
    unstarted_order_.pop_front();
    auto it = steps_.find(id);
    if (it == steps_.end() || it->second.ran) continue;  // Cleaned up, or it ran after all.
    stale->push_back(std::move(it->second));
    steps_.erase(it);
    cleaned_steps_.Insert(id);
  }
}

std::shared_ptr<LocalRendezvous> Worker::StepRendezvous(int64_t step_id) {
  return FindOrCreateStep(step_id).rendezvous;
}

void Worker::Abort(const Step& step, const absl::Status& status) {
  step.cancellation->StartCancel(status);
  step.rendezvous->StartAbort(status);
}

int Worker::NumRunningGraphs() {
  absl::MutexLock lock(&mu_);
  return running_graphs_;
}

void Worker::ClearVariables() {
  for (const auto& d : devices_) {
    d->variables()->Clear();
    ResourceMgrOf(d.get()).Clear();
  }
}

size_t Worker::NumSteps() {
  absl::MutexLock lock(&mu_);
  return steps_.size();
}

void Worker::CleanupGraph(int64_t step_id) {
  Step step;  // Destroyed after the lock is released.
  {
    absl::MutexLock lock(&mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      step = std::move(it->second);
      steps_.erase(it);
    }
    cleaned_steps_.Insert(step_id);
  }
  // Normally every part has finished by now. After a deadline the master cleans up without
  // waiting, and a later AbortStep finds the step gone: whatever still runs stops here. When
  // nothing else holds the step's cancellation (no executor, no RecvTensor), nothing can
  // look at it any more, and building the status would be the step's largest cost.
  if (step.cancellation != nullptr && step.cancellation.use_count() > 1) {
    step.cancellation->StartCancel(absl::AbortedError(
        absl::StrCat("step ", step_id, " was cleaned up on ", task_name_)));
  }
}

void Worker::RecvTensorAsync(const RecvTensorRequest* request, RecvTensorResponse* response,
                             StatusCallback done) {
  if (absl::Status s = request_ids_.TrackUnique(request->request_id, "RecvTensor", task_name_);
      !s.ok()) {
    done(s);
    return;
  }
  auto parsed = Rendezvous::ParseKey(request->rendezvous_key);
  if (!parsed.ok()) {
    done(parsed.status());
    return;
  }
  Device* device = FindDevice(parsed->src_device);
  if (device == nullptr) {
    done(absl::InvalidArgumentError(absl::StrCat("RecvTensor for '", request->rendezvous_key, "': '",
                                                 parsed->src_device, "' is not a device of ",
                                                 task_name_)));
    return;
  }
  if (device->incarnation() != parsed->src_incarnation) {
    done(absl::AbortedError(absl::StrCat(
        "RecvTensor for '", request->rendezvous_key, "': ", device->name(),
        " has another incarnation (", task_name_, " restarted since the graph was registered)")));
    return;
  }
  // The waiter must not hold the rendezvous: the rendezvous holds the waiter.
  StepRendezvous(request->step_id)->RecvAsync(
      *parsed, [response, done = std::move(done)](const absl::Status& s, const Tensor& value) {
        if (s.ok()) {
          response->tensor = value;
          response->send_start_micros = absl::ToUnixMicros(absl::Now());
        }
        done(s);
      });
}

void Worker::AbortStep(int64_t step_id, const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (!steps_.contains(step_id) && cleaned_steps_.Contains(step_id)) {
      return;  // Finished and cleaned up already.
    }
  }
  // A part that has not started yet fails as soon as it does (CleanupGraph drops it).
  Abort(FindOrCreateStep(step_id), status);
}

void Worker::AbortAllSteps(const absl::Status& status) {
  std::vector<Step> steps;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, step] : steps_) steps.push_back(step);
  }
  for (const Step& step : steps) Abort(step, status);
}

absl::StatusOr<const Rendezvous::ParsedKey*> Worker::ParseClientKey(
    const GraphItem& item, const std::string& key, Rendezvous::ParsedKey* storage) {
  auto it = item.client_keys.find(key);
  if (it != item.client_keys.end()) return &it->second;
  SL_ASSIGN_OR_RETURN(*storage, Rendezvous::ParseKey(key));
  return storage;
}

// Shared by the executors' callbacks, which hold it by a plain pointer (std::function keeps
// only trivially copyable callables without allocating); the last one to finish collects the
// fetches and deletes it.
struct Worker::RunGraphState {
  Worker* worker;
  const RunGraphRequest* request;
  RunGraphResponse* response;
  StatusCallback done;
  Step step;
  std::shared_ptr<GraphItem> item;
  std::atomic<int> remaining{0};
  std::atomic<bool> failed{false};  // Set after `status`: without it Finish takes no lock.
  absl::Mutex mu;
  absl::Status status ABSL_GUARDED_BY(mu);
  std::vector<DeviceStepStats> stats;

  void Finish() {
    absl::Status s;
    if (failed.load(std::memory_order_acquire)) {
      absl::MutexLock lock(&mu);
      s = status;
    }
    LocalRendezvous* rendezvous = step.rendezvous.get();
    if (s.ok()) {
      // Every executor has finished, so each fetched value was sent already (or never will be).
      auto& recv = response->recv;
      recv.resize(request->recv_key.size());
      for (size_t i = 0; i < request->recv_key.size() && s.ok(); ++i) {
        const std::string& key = request->recv_key[i];
        Rendezvous::ParsedKey storage;
        auto parsed = ParseClientKey(*item, key, &storage);
        if (!parsed.ok()) {
          s = parsed.status();
          break;
        }
        recv[i].first = key;
        bool taken = false;
        s = rendezvous->TakeIfSent(**parsed, &recv[i].second, &taken);
        if (s.ok() && !taken) s = rendezvous->Recv(**parsed, &recv[i].second, absl::ZeroDuration());
      }
      if (!s.ok()) recv.clear();
    }
    for (size_t i = 0; i < stats.size(); ++i) {
      stats[i].set_device(item->executors[i]->device()->name());
      *response->step_stats.add_dev_stats() = std::move(stats[i]);
    }
    {
      absl::MutexLock lock(&worker->mu_);
      --worker->running_graphs_;
    }
    // The rendezvous stays until CleanupGraph: other tasks may still fetch sent values.
    done(s);
  }
};

void Worker::RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                           StatusCallback done) {
  if (absl::Status s = request_ids_.TrackUnique(request->request_id, "RunGraph", task_name_);
      !s.ok()) {
    done(s);
    return;
  }
  // The graph, the step and the count of running graphs, under one lock.
  std::shared_ptr<GraphItem> item;
  Step step;
  std::vector<Step> stale;
  bool cleaned = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(request->graph_handle);
    if (it != graphs_.end()) {
      item = it->second;
      step = FindOrCreateStepLocked(request->step_id, /*run_graph=*/true, &stale, &cleaned);
      ++running_graphs_;
    }
  }
  if (item == nullptr) {
    done(absl::NotFoundError(absl::StrCat("graph handle '", request->graph_handle,
                                          "' is not registered on ", task_name_)));
    return;
  }
  AbortStaleSteps(stale);
  if (cleaned) {
    Abort(step, absl::AbortedError(absl::StrCat("step ", request->step_id, " already finished on ",
                                                task_name_)));
  }
  auto* state = new RunGraphState();
  state->worker = this;
  state->request = request;
  state->response = response;
  state->done = std::move(done);
  state->step = std::move(step);
  // `item` is kept here too: the last executor may finish, and `state` go, inside RunAsync.
  state->item = item;
  const GraphItem& graph = *item;
  LocalRendezvous* rendezvous = state->step.rendezvous.get();
  for (const auto& [key, tensor] : request->send) {
    Rendezvous::ParsedKey storage;
    auto parsed = ParseClientKey(graph, key, &storage);
    absl::Status s = parsed.ok() ? rendezvous->Send(**parsed, tensor) : parsed.status();
    if (!s.ok()) {
      rendezvous->StartAbort(s);  // Dropped by CleanupGraph.
      {
        absl::MutexLock lock(&mu_);
        --running_graphs_;
      }
      StatusCallback done = std::move(state->done);
      delete state;
      done(s);
      return;
    }
  }

  const int n = static_cast<int>(graph.executors.size());
  state->remaining.store(n);
  state->stats.resize(request->collect_stats ? n : 0);
  if (n == 0) {
    state->Finish();
    delete state;
    return;
  }
  for (int i = 0; i < n; ++i) {
    Executor::Args args;
    args.step_id = request->step_id;
    args.rendezvous = rendezvous;
    args.runner = inter_op_pool_.get();
    args.cancellation = state->step.cancellation.get();
    args.memory_budget = graph.memory_budget;
    args.caller_runs_nodes = !return_before_running_nodes_;
    args.stats = request->collect_stats ? &state->stats[i] : nullptr;
    graph.executors[i]->RunAsync(args, [state](const absl::Status& s) {
      if (!s.ok()) {
        absl::MutexLock lock(&state->mu);
        // Keep the root cause: later errors are usually the abort it caused.
        if (state->status.ok()) state->status = s;
        state->failed.store(true, std::memory_order_release);
      }
      if (state->remaining.fetch_sub(1) == 1) {
        state->Finish();
        delete state;
      }
    });
  }
}

}  // namespace sluice
