#include "master/client_graph.h"

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "framework/cancellation.h"
#include "framework/status.h"
#include "master/deadline_timer.h"

namespace sluice {

ClientGraph::ClientGraph(std::string session_handle, ConfigProto config, std::vector<Part> parts,
                         absl::flat_hash_map<std::string, Feed> feeds,
                         absl::flat_hash_map<std::string, Fetch> fetches)
    : session_handle_(std::move(session_handle)),
      config_(std::move(config)),
      parts_(std::move(parts)),
      feeds_(std::move(feeds)),
      fetches_(std::move(fetches)) {}

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

absl::Status ClientGraph::RunStep(const Step& step,
                                  absl::flat_hash_map<std::string, Tensor>* fetched,
                                  RunMetadata* metadata) const {
  std::vector<std::string> handles;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kRegistered) {
      return state_ == State::kFailed ? registration_error_
                                      : absl::InternalError("client graph run before registration");
    }
    handles = graph_handles_;
  }

  // Check feeds against what the graph expects, then route them to their tasks.
  struct Call {
    RunGraphRequest request;
    RunGraphResponse response;
  };
  auto calls = std::make_shared<std::vector<Call>>(parts_.size());
  const bool collect_stats = step.options->trace_level() != RunOptions::NO_TRACE;
  for (size_t i = 0; i < parts_.size(); ++i) {
    Call& c = (*calls)[i];
    c.request.graph_handle = handles[i];
    c.request.step_id = step.step_id;
    c.request.collect_stats = collect_stats;
  }
  for (const auto& [name, value] : *step.feeds) {
    auto it = feeds_.find(name);
    if (it == feeds_.end()) continue;  // Pruned away: the value is accepted and ignored.
    const Feed& f = it->second;
    if (value->dtype() != f.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("feed for tensor '", name, "' has dtype ",
                                                     DataTypeString(value->dtype()),
                                                     " but the graph expects ",
                                                     DataTypeString(f.dtype)));
    }
    if (!f.shape.IsCompatibleWith(value->shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed for tensor '", name, "' has shape ", value->shape().DebugString(),
          ", which does not match the shape ", f.shape.DebugString(), " of placeholder '", f.node,
          "'"));
    }
    (*calls)[f.part].request.send.emplace_back(f.key, *value);
  }
  for (const auto& [name, fetch] : fetches_) {
    (*calls)[fetch.part].request.recv_key.push_back(fetch.key);
  }

  // Cancelling the step (its deadline, or the caller's cancellation) aborts it on every part:
  // their executors start no further node and their receives fail.
  auto workers = std::make_shared<std::vector<WorkerInterface*>>();
  for (const Part& p : parts_) workers->push_back(p.worker);
  const int64_t step_id = step.step_id;
  CancellationManager step_cancel;
  CancellationManager::Token unused;
  step_cancel.RegisterCallback(
      [workers, step_id](const absl::Status& s) {
        for (WorkerInterface* w : *workers) w->AbortStep(step_id, s);
      },
      &unused);
  CancellationManager::Token caller_token = 0;
  const bool watching_caller =
      step.cancellation != nullptr &&
      step.cancellation->RegisterCallback(
          [&step_cancel](const absl::Status& s) { step_cancel.StartCancel(s); }, &caller_token);
  if (step.cancellation != nullptr && !watching_caller) {
    return AddContext(step.cancellation->status(), absl::StrCat("step ", step_id));
  }
  // Armed before any part starts: a part may run to its end inside RunGraphAsync.
  DeadlineTimer::Id deadline = 0;
  if (step.timeout_ms > 0) {
    deadline = DeadlineTimer::Global()->Schedule(
        absl::Now() + absl::Milliseconds(step.timeout_ms), [&step_cancel, &step] {
          step_cancel.StartCancel(absl::DeadlineExceededError(absl::StrCat(
              "step ", step.step_id, " did not finish within ", step.timeout_ms, " ms")));
        });
  }

  // Run every part at once; the first failure aborts the step on the others. The callbacks
  // share ownership of what they touch.
  struct Sync {
    absl::Mutex mu;
    int remaining ABSL_GUARDED_BY(mu) = 0;
    absl::Status first_error ABSL_GUARDED_BY(mu);
    absl::Notification done;
  };
  auto sync = std::make_shared<Sync>();
  {
    absl::MutexLock lock(&sync->mu);
    sync->remaining = static_cast<int>(calls->size());
  }
  if (calls->empty()) sync->done.Notify();
  for (size_t i = 0; i < calls->size(); ++i) {
    Call* c = &(*calls)[i];
    (*workers)[i]->RunGraphAsync(
        &c->request, &c->response, [calls, sync, workers, i, step_id](const absl::Status& s) {
          bool abort_others = false;
          {
            absl::MutexLock lock(&sync->mu);
            if (!s.ok() && sync->first_error.ok()) {
              sync->first_error = s;
              abort_others = true;
            }
          }
          if (abort_others) {
            for (size_t j = 0; j < workers->size(); ++j) {
              if (j != i) (*workers)[j]->AbortStep(step_id, s);
            }
          }
          bool last;
          {
            absl::MutexLock lock(&sync->mu);
            last = --sync->remaining == 0;
          }
          if (last) sync->done.Notify();
        });
  }
  // Cancelled parts stop at their next node or loop iteration, so this wait is short.
  sync->done.WaitForNotification();
  if (deadline != 0) DeadlineTimer::Global()->Cancel(deadline);
  if (watching_caller) step.cancellation->DeregisterCallback(caller_token);
  // Every part is done; what they left in their rendezvous can go.
  for (WorkerInterface* w : *workers) w->CleanupGraph(step_id);
  {
    absl::MutexLock lock(&sync->mu);
    if (!sync->first_error.ok()) {
      // A part's error names the node where it stopped; but a remote part that was cancelled
      // only says its call was, and then the step's reason is the better answer.
      if (step_cancel.IsCancelled() &&
          sync->first_error.code() != step_cancel.status().code()) {
        return step_cancel.status();
      }
      return sync->first_error;
    }
  }

  absl::flat_hash_map<std::string, Tensor> by_key;
  for (Call& c : *calls) {
    for (auto& [key, value] : c.response.recv) by_key[key] = std::move(value);
  }
  for (const auto& [name, fetch] : fetches_) {
    auto it = by_key.find(fetch.key);
    if (it == by_key.end()) return absl::InternalError(absl::StrCat("fetch '", name, "' lost"));
    (*fetched)[name] = std::move(it->second);
  }
  if (collect_stats) {
    for (Call& c : *calls) {
      for (auto& d : *c.response.step_stats.mutable_dev_stats()) {
        *metadata->mutable_step_stats()->add_dev_stats() = std::move(d);
      }
    }
  }
  if (step.options->output_partition_graphs()) {
    for (const Part& p : parts_) *metadata->add_partition_graphs() = p.graph_def;
  }
  return absl::OkStatus();
}

}  // namespace sluice
