#include "master/client_graph.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "framework/cancellation.h"
#include "framework/status.h"
#include "master/deadline_timer.h"

namespace sluice {

ClientGraph::ClientGraph(std::string session_handle, ConfigProto config, std::vector<Part> parts,
                         std::vector<Feed> feeds, std::vector<Fetch> fetches)
    : session_handle_(std::move(session_handle)),
      config_(std::move(config)),
      parts_(std::move(parts)),
      feeds_(std::move(feeds)),
      fetches_(std::move(fetches)),
      part_feeds_(parts_.size()),
      part_fetches_(parts_.size()) {
  for (size_t i = 0; i < feeds_.size(); ++i) part_feeds_[feeds_[i].part].push_back(static_cast<int>(i));
  for (size_t i = 0; i < fetches_.size(); ++i) {
    part_fetches_[fetches_[i].part].push_back(static_cast<int>(i));
  }
}

absl::Status ClientGraph::EnsureRegistered() {
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](State* s) { return *s != State::kRegistering; }, &state_));
    if (state_ == State::kRegistered) return absl::OkStatus();
    if (state_ == State::kFailed) return registration_error_;
    state_ = State::kRegistering;
  }

  // Every part at once: one thread per part beyond the first, which registers on this one.
  std::vector<absl::Status> statuses(parts_.size());
  std::vector<std::string> handles(parts_.size());
  auto register_part = [&](size_t i) {
    RegisterGraphRequest req;
    req.session_handle = session_handle_;
    req.config = config_;
    req.graph_def = parts_[i].graph_def;
    req.constants = parts_[i].constants;
    RegisterGraphResponse resp;
    statuses[i] = parts_[i].worker->RegisterGraph(req, &resp);
    handles[i] = std::move(resp.graph_handle);
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < parts_.size(); ++i) threads.emplace_back(register_part, i);
  if (!parts_.empty()) register_part(0);
  for (std::thread& t : threads) t.join();

  absl::Status error;
  for (size_t i = 0; i < parts_.size() && error.ok(); ++i) {
    if (!statuses[i].ok()) error = AddContext(statuses[i], absl::StrCat("registering on ", parts_[i].task));
  }
  if (!error.ok()) {
    for (size_t i = 0; i < parts_.size(); ++i) {
      if (statuses[i].ok()) parts_[i].worker->DeregisterGraph(handles[i]).IgnoreError();
    }
  }
  absl::MutexLock lock(&mu_);
  if (error.ok()) {
    graph_handles_ = std::move(handles);
    state_ = State::kRegistered;
  } else {
    registration_error_ = error;
    state_ = State::kFailed;
  }
  return error;
}

void ClientGraph::Deregister() {
  std::vector<std::string> handles;
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](State* s) { return *s != State::kRegistering; }, &state_));
    if (state_ != State::kRegistered) return;
    handles.swap(graph_handles_);
    state_ = State::kFailed;
    registration_error_ = absl::AbortedError(
        "the session dropped this graph (closed, or a worker failed); run the step again");
  }
  for (size_t i = 0; i < parts_.size(); ++i) {
    parts_[i].worker->DeregisterGraph(handles[i]).IgnoreError();
  }
}

// What one step shares with the callbacks of its parts. Each callback holds a plain pointer
// to its Call (std::function keeps only trivially copyable callables without allocating) and
// a reference: a part may still be returning from its callback after RunStep stopped waiting.
// Whoever drops the last reference deletes it, unless RunStep did: then it is kept for the
// next step.
struct ClientGraph::StepCalls {
  struct Call {
    StepCalls* step = nullptr;
    size_t index = 0;
    RunGraphRequest request;
    RunGraphResponse response;
  };
  explicit StepCalls(size_t parts) : calls(parts) {}

  void Unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  const ClientGraph* graph = nullptr;
  absl::InlinedVector<Call, 1> calls;
  int64_t step_id = 0;
  std::atomic<int> refs{0};
  absl::Mutex mu;
  // Parts still running; the last to finish sets `done` under mu (only it takes the lock).
  std::atomic<int> remaining{0};
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Status first_error ABSL_GUARDED_BY(mu);
};

ClientGraph::~ClientGraph() = default;

std::unique_ptr<ClientGraph::StepCalls> ClientGraph::TakeStepCalls() const {
  {
    absl::MutexLock lock(&pool_mu_);
    if (!pool_.empty()) {
      std::unique_ptr<StepCalls> calls = std::move(pool_.back());
      pool_.pop_back();
      return calls;
    }
  }
  auto calls = std::make_unique<StepCalls>(parts_.size());
  calls->graph = this;
  {
    absl::MutexLock lock(&mu_);
    // Before registration there are no handles; RunStep then fails before using them.
    if (graph_handles_.size() == parts_.size()) {
      for (size_t i = 0; i < parts_.size(); ++i) {
        calls->calls[i].request.graph_handle = graph_handles_[i];
      }
    }
  }
  for (size_t i = 0; i < parts_.size(); ++i) {
    StepCalls::Call& c = calls->calls[i];
    c.step = calls.get();
    c.index = i;
    c.request.send.resize(part_feeds_[i].size());
    for (size_t j = 0; j < part_feeds_[i].size(); ++j) {
      c.request.send[j].first = feeds_[part_feeds_[i][j]].key;
    }
    for (int f : part_fetches_[i]) c.request.recv_key.push_back(fetches_[f].key);
  }
  return calls;
}

void ClientGraph::ReturnStepCalls(std::unique_ptr<StepCalls> calls) const {
  // Nothing of the step stays: not the caller's feeds, nor what came back.
  for (StepCalls::Call& c : calls->calls) {
    for (auto& [key, value] : c.request.send) value = Tensor();
    for (auto& [key, value] : c.response.recv) value = Tensor();
    c.response.step_stats.Clear();
  }
  absl::MutexLock lock(&pool_mu_);
  if (pool_.size() < kMaxPooledStepCalls) pool_.push_back(std::move(calls));
}

absl::Status ClientGraph::RunStep(const Step& step, absl::Span<Tensor> fetched,
                                  RunMetadata* metadata) const {
  if (step.feeds.size() != feeds_.size() || fetched.size() != fetches_.size()) {
    return absl::InternalError(absl::StrCat("client graph run with ", step.feeds.size(),
                                            " feeds and ", fetched.size(), " fetches for its ",
                                            feeds_.size(), " and ", fetches_.size()));
  }
  // Check feeds against what the graph expects before anything starts.
  for (size_t i = 0; i < feeds_.size(); ++i) {
    const Feed& f = feeds_[i];
    if (step.feeds[i] == nullptr) {
      return absl::InternalError(absl::StrCat("no value for tensor '", f.name, "'"));
    }
    const Tensor& value = *step.feeds[i];
    if (value.dtype() != f.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("feed for tensor '", f.name, "' has dtype ",
                                                     DataTypeString(value.dtype()),
                                                     " but the graph expects ",
                                                     DataTypeString(f.dtype)));
    }
    if (!f.shape.IsCompatibleWith(value.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed for tensor '", f.name, "' has shape ", value.shape().DebugString(),
          ", which does not match the shape ", f.shape.DebugString(), " of placeholder '", f.node,
          "'"));
    }
  }

  const bool collect_stats = step.options->trace_level() != RunOptions::NO_TRACE;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kRegistered) {
      return state_ == State::kFailed ? registration_error_
                                      : absl::InternalError("client graph run before registration");
    }
  }
  // Route the feeds to their tasks; each task's fetches are asked for already.
  std::unique_ptr<StepCalls> owned_calls = TakeStepCalls();
  StepCalls* calls = owned_calls.get();
  calls->step_id = step.step_id;
  for (size_t i = 0; i < parts_.size(); ++i) {
    StepCalls::Call& c = calls->calls[i];
    c.request.step_id = step.step_id;
    c.request.collect_stats = collect_stats;
    const std::vector<int>& part_feeds = part_feeds_[i];
    for (size_t j = 0; j < part_feeds.size(); ++j) {
      c.request.send[j].second = *step.feeds[part_feeds[j]];
    }
  }

  // Cancelling the step (its deadline, or the caller's cancellation) aborts it on every part:
  // their executors start no further node and their receives fail. A step with neither
  // needs no CancellationManager of its own: nothing could cancel it.
  const int64_t step_id = step.step_id;
  std::optional<CancellationManager> step_cancel;
  CancellationManager::Token caller_token = 0;
  bool watching_caller = false;
  DeadlineTimer::Id deadline = 0;
  if (step.cancellation != nullptr || step.timeout_ms > 0) {
    step_cancel.emplace();
    CancellationManager::Token unused;
    step_cancel->RegisterCallback(
        [this, step_id](const absl::Status& s) {
          for (const Part& p : parts_) p.worker->AbortStep(step_id, s);
        },
        &unused);
    watching_caller =
        step.cancellation != nullptr &&
        step.cancellation->RegisterCallback(
            [&step_cancel](const absl::Status& s) { step_cancel->StartCancel(s); }, &caller_token);
    if (step.cancellation != nullptr && !watching_caller) {
      ReturnStepCalls(std::move(owned_calls));
      return AddContext(step.cancellation->status(), absl::StrCat("step ", step_id));
    }
    // Armed before any part starts: a part may run to its end inside RunGraphAsync.
    if (step.timeout_ms > 0) {
      deadline = DeadlineTimer::Global()->Schedule(
          absl::Now() + absl::Milliseconds(step.timeout_ms), [&step_cancel, &step] {
            step_cancel->StartCancel(absl::DeadlineExceededError(absl::StrCat(
                "step ", step.step_id, " did not finish within ", step.timeout_ms, " ms")));
          });
    }
  }

  // Run every part at once; the first failure aborts the step on the others.
  calls->remaining.store(static_cast<int>(parts_.size()), std::memory_order_relaxed);
  if (parts_.empty()) {
    absl::MutexLock lock(&calls->mu);
    calls->done = true;
  }
  calls->refs.store(static_cast<int>(parts_.size()) + 1, std::memory_order_relaxed);
  owned_calls.release();  // Now shared with the callbacks; see StepCalls.
  for (size_t i = 0; i < parts_.size(); ++i) {
    StepCalls::Call* c = &calls->calls[i];
    parts_[i].worker->RunGraphAsync(&c->request, &c->response, [c](const absl::Status& s) {
      StepCalls* st = c->step;
      bool abort_others = false;
      if (!s.ok()) {
        absl::MutexLock lock(&st->mu);
        if (st->first_error.ok()) {
          st->first_error = s;
          abort_others = true;
        }
      }
      if (abort_others) {
        const std::vector<Part>& parts = st->graph->parts_;
        for (size_t j = 0; j < parts.size(); ++j) {
          if (j != c->index) parts[j].worker->AbortStep(st->step_id, s);
        }
      }
      if (st->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        absl::MutexLock lock(&st->mu);
        st->done = true;
      }
      st->Unref();
    });
  }
  // Cancelled parts stop at their next node or loop iteration, so this wait is short.
  absl::Status status;
  {
    absl::MutexLock lock(&calls->mu);
    calls->mu.Await(absl::Condition(&calls->done));
    // Taken, and reset for the step that reuses these calls.
    status = std::move(calls->first_error);
    calls->first_error = absl::OkStatus();
    calls->done = false;
  }
  if (deadline != 0) DeadlineTimer::Global()->Cancel(deadline);
  if (watching_caller) step.cancellation->DeregisterCallback(caller_token);
  // Every part is done; what they left in their rendezvous can go.
  for (const Part& p : parts_) p.worker->CleanupGraph(step_id);
  if (!status.ok()) {
    // A part's error names the node where it stopped; but a remote part that was cancelled
    // only says its call was, and then the step's reason is the better answer.
    if (step_cancel.has_value() && step_cancel->IsCancelled() &&
        status.code() != step_cancel->status().code()) {
      status = step_cancel->status();
    }
  } else {
    status = CollectFetches(*calls, collect_stats, step.options->output_partition_graphs(),
                            fetched, metadata);
  }
  // Kept for the next step unless a part is still returning from its callback (which then
  // deletes it).
  if (calls->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ReturnStepCalls(std::unique_ptr<StepCalls>(calls));
  }
  return status;
}

absl::Status ClientGraph::CollectFetches(StepCalls& calls, bool collect_stats,
                                         bool partition_graphs, absl::Span<Tensor> fetched,
                                         RunMetadata* metadata) const {
  // Each part answers in the order of its recv_key; a worker that does not is looked up.
  for (size_t i = 0; i < parts_.size(); ++i) {
    auto& recv = calls.calls[i].response.recv;
    const std::vector<int>& wanted = part_fetches_[i];
    for (size_t j = 0; j < wanted.size(); ++j) {
      const Fetch& f = fetches_[wanted[j]];
      auto it = j < recv.size() && recv[j].first == f.key
                    ? recv.begin() + j
                    : std::find_if(recv.begin(), recv.end(),
                                   [&](const auto& kv) { return kv.first == f.key; });
      if (it == recv.end()) return absl::InternalError(absl::StrCat("fetch '", f.name, "' lost"));
      fetched[wanted[j]] = std::move(it->second);
    }
  }
  if (collect_stats) {
    for (StepCalls::Call& c : calls.calls) {
      for (auto& d : *c.response.step_stats.mutable_dev_stats()) {
        *metadata->mutable_step_stats()->add_dev_stats() = std::move(d);
      }
    }
  }
  if (partition_graphs) {
    for (const Part& p : parts_) *metadata->add_partition_graphs() = p.graph_def;
    for (const OptimizerPassSummary& p : optimizer_passes_) *metadata->add_optimizer_passes() = p;
  }
  return absl::OkStatus();
}

}  // namespace sluice
