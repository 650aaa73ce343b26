// Session options, TF_Session (a sluice::Session fed the graph's operations as they appear),
// TF_SessionRun, partial runs (TF_SessionPRunSetup/TF_SessionPRun over the session's
// ordinary steps) and device lists.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "c_api/sluice_c_api.h"
#include "framework/cancellation.h"
#include "framework/status.h"
#include "proto/config.pb.h"

namespace sluice {
namespace {

// Sends the session the operations added to its graph since it last saw it: Create the
// first time, Extend after that.
absl::Status SyncSessionGraph(TF_Session* s) {
  absl::MutexLock lock(&s->mu);
  if (s->closed) return absl::FailedPreconditionError("the session is closed");
  GraphDef delta;
  size_t num_ops;
  int num_functions;
  {
    absl::ReaderMutexLock graph_lock(&s->graph->mu);
    num_ops = s->graph->ops.size();
    for (size_t i = s->num_ops_sent; i < num_ops; ++i) {
      *delta.add_node() = s->graph->ops[i]->node->def();
    }
    const FunctionDefLibrary& library = s->graph->graph.library();
    num_functions = library.function_size();
    for (int i = s->num_functions_sent; i < num_functions; ++i) {
      *delta.mutable_library()->add_function() = library.function(i);
    }
  }
  if (!s->created) {
    SL_RETURN_IF_ERROR(s->session->Create(std::move(delta)));
    s->created = true;
  } else if (delta.node_size() > 0) {
    SL_RETURN_IF_ERROR(s->session->Extend(delta));
  }
  s->num_ops_sent = num_ops;
  s->num_functions_sent = num_functions;
  return absl::OkStatus();
}

absl::Status SessionRun(TF_Session* session, const TF_Buffer* run_options,
                        const TF_Output* inputs, TF_Tensor* const* input_values, int ninputs,
                        const TF_Output* outputs, TF_Tensor** output_values, int noutputs,
                        const TF_Operation* const* target_opers, int ntargets,
                        TF_Buffer* run_metadata, CancellationManager* cancellation = nullptr,
                        const char* kFn = "TF_SessionRun") {
  if (session == nullptr) return NullArgument(kFn, "session");
  if (ninputs < 0 || noutputs < 0 || ntargets < 0) {
    return absl::InvalidArgumentError(absl::StrCat(kFn, ": negative count (ninputs ", ninputs,
                                                   ", noutputs ", noutputs, ", ntargets ",
                                                   ntargets, ")"));
  }
  if (ninputs > 0 && inputs == nullptr) return NullArgument(kFn, "inputs");
  if (ninputs > 0 && input_values == nullptr) return NullArgument(kFn, "input_values");
  if (noutputs > 0 && outputs == nullptr) return NullArgument(kFn, "outputs");
  if (noutputs > 0 && output_values == nullptr) return NullArgument(kFn, "output_values");
  if (ntargets > 0 && target_opers == nullptr) return NullArgument(kFn, "target_opers");
  if (run_metadata != nullptr && run_metadata->data != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": run_metadata must be an empty TF_Buffer (data == NULL)"));
  }

  RunOptions options;
  if (run_options != nullptr &&
      !ParseFromBytes(run_options->data, run_options->length, &options)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": run_options is not a valid serialized RunOptions"));
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  // Operations, their names and outputs never change once in the graph: no lock needed.
  for (int i = 0; i < ninputs; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(*session->graph, inputs[i], absl::StrCat(kFn, ": input ", i)));
    if (input_values[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(kFn, ": input_values[", i, "] (for '",
                                                     OutputName(inputs[i]), "') is null"));
    }
    SL_ASSIGN_OR_RETURN(Tensor value, ToRuntimeTensor(*input_values[i]), kFn, ": input ", i,
                        " (for '", OutputName(inputs[i]), "')");
    feeds.emplace_back(OutputName(inputs[i]), std::move(value));
  }
  for (int i = 0; i < noutputs; ++i) {
    SL_RETURN_IF_ERROR(
        CheckOutput(*session->graph, outputs[i], absl::StrCat(kFn, ": output ", i)));
    fetches.push_back(OutputName(outputs[i]));
  }
  for (int i = 0; i < ntargets; ++i) {
    if (!InGraph(*session->graph, target_opers[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": target ", i,
                       target_opers[i] == nullptr ? " is null" : " is not in the session's graph"));
    }
    targets.push_back(target_opers[i]->node->name());
  }

  SL_RETURN_IF_ERROR(SyncSessionGraph(session));
  std::vector<Tensor> results;
  RunMetadata metadata;
  SL_RETURN_IF_ERROR(session->session->RunCancellable(options, feeds, fetches, targets, &results,
                                                     run_metadata != nullptr ? &metadata : nullptr,
                                                     cancellation));
  if (static_cast<int>(results.size()) != noutputs) {
    return absl::InternalError(absl::StrCat(kFn, ": the session returned ", results.size(),
                                            " values for ", noutputs, " fetches"));
  }
  // Numbers share the session's buffers (no copy); strings are copied into TF_TStrings. All or
  // nothing: no output is handed out unless every one converts.
  std::vector<std::unique_ptr<TF_Tensor>> converted;
  for (int i = 0; i < noutputs; ++i) {
    SL_ASSIGN_OR_RETURN(TF_Tensor * value, NewCApiTensor(std::move(results[i])), kFn,
                        ": fetched '", fetches[i], "'");
    converted.emplace_back(value);
  }
  if (run_metadata != nullptr) SL_RETURN_IF_ERROR(MessageToBuffer(metadata, run_metadata));
  for (int i = 0; i < noutputs; ++i) output_values[i] = converted[i].release();
  return absl::OkStatus();
}

absl::Status CheckCounts(const char* fn, int ninputs, int noutputs, int ntargets) {
  if (ninputs < 0 || noutputs < 0 || ntargets < 0) {
    return absl::InvalidArgumentError(absl::StrCat(fn, ": negative count (ninputs ", ninputs,
                                                   ", noutputs ", noutputs, ", ntargets ",
                                                   ntargets, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PartialRunSetup(TF_Session* session, const TF_Output* inputs,
                                            int ninputs, const TF_Output* outputs, int noutputs,
                                            const TF_Operation* const* target_opers,
                                            int ntargets) {
  constexpr char kFn[] = "TF_SessionPRunSetup";
  if (session == nullptr) return NullArgument(kFn, "session");
  SL_RETURN_IF_ERROR(CheckCounts(kFn, ninputs, noutputs, ntargets));
  if (ninputs > 0 && inputs == nullptr) return NullArgument(kFn, "inputs");
  if (noutputs > 0 && outputs == nullptr) return NullArgument(kFn, "outputs");
  if (ntargets > 0 && target_opers == nullptr) return NullArgument(kFn, "target_opers");
  auto run = std::make_shared<PartialRun>();
  for (int i = 0; i < ninputs; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(*session->graph, inputs[i], absl::StrCat(kFn, ": input ", i)));
    if (!run->feeds.insert(OutputName(inputs[i])).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": '", OutputName(inputs[i]), "' is declared as a feed twice"));
    }
  }
  for (int i = 0; i < noutputs; ++i) {
    SL_RETURN_IF_ERROR(
        CheckOutput(*session->graph, outputs[i], absl::StrCat(kFn, ": output ", i)));
    const std::string name = OutputName(outputs[i]);
    if (run->feeds.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": '", name, "' is declared as both a feed and a fetch"));
    }
    if (!run->fetches.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": '", name, "' is declared as a fetch twice"));
    }
  }
  for (int i = 0; i < ntargets; ++i) {
    if (!InGraph(*session->graph, target_opers[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": target ", i,
                       target_opers[i] == nullptr ? " is null" : " is not in the session's graph"));
    }
    run->targets.push_back(const_cast<TF_Operation*>(target_opers[i]));
  }
  // The session learns the graph now, so that a graph it refuses fails setup.
  SL_RETURN_IF_ERROR(SyncSessionGraph(session));
  absl::MutexLock lock(&session->partial_runs_mu);
  std::string handle = absl::StrCat("prun:", session->next_partial_run++);
  session->partial_runs[handle] = std::move(run);
  return handle;
}

// Whether `op` can run with `known` tensors available: walking back from it along its inputs
// (data and control), it reaches no declared feed that is not known yet.
bool CanRunWith(const TF_Operation& op, const PartialRun& run,
                const absl::flat_hash_map<std::string, const Tensor*>& known) {
  absl::ReaderMutexLock lock(&op.graph->mu);
  std::vector<const Node*> stack = {op.node};
  absl::flat_hash_set<const Node*> seen = {op.node};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const Edge* edge : node->in_edges()) {
      if (!edge->IsControl()) {
        const std::string name = absl::StrCat(edge->src->name(), ":", edge->src_output);
        if (known.contains(name)) continue;  // Fed: nothing above it is needed.
        if (run.feeds.contains(name)) return false;
      }
      if (seen.insert(edge->src).second) stack.push_back(edge->src);
    }
  }
  return true;
}

absl::Status PartialRunStep(TF_Session* session, const char* handle, const TF_Output* inputs,
                            TF_Tensor* const* input_values, int ninputs,
                            const TF_Output* outputs, TF_Tensor** output_values, int noutputs,
                            const TF_Operation* const* target_opers, int ntargets) {
  constexpr char kFn[] = "TF_SessionPRun";
  if (session == nullptr) return NullArgument(kFn, "session");
  if (handle == nullptr) return NullArgument(kFn, "handle");
  SL_RETURN_IF_ERROR(CheckCounts(kFn, ninputs, noutputs, ntargets));
  if (ninputs > 0 && inputs == nullptr) return NullArgument(kFn, "inputs");
  if (ninputs > 0 && input_values == nullptr) return NullArgument(kFn, "input_values");
  if (noutputs > 0 && outputs == nullptr) return NullArgument(kFn, "outputs");
  if (noutputs > 0 && output_values == nullptr) return NullArgument(kFn, "output_values");
  if (ntargets > 0 && target_opers == nullptr) return NullArgument(kFn, "target_opers");
  std::shared_ptr<PartialRun> run;
  {
    absl::MutexLock lock(&session->partial_runs_mu);
    auto it = session->partial_runs.find(handle);
    if (it == session->partial_runs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": '", handle,
          "' is not a partial run of this session, or it has already fed, fetched and run "
          "everything its TF_SessionPRunSetup declared"));
    }
    run = it->second;
  }
  absl::MutexLock run_lock(&run->mu);

  // This call's feeds, checked against setup and earlier calls; the step feeds them with
  // every value known so far.
  absl::flat_hash_map<std::string, Tensor> new_values;
  for (int i = 0; i < ninputs; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(*session->graph, inputs[i], absl::StrCat(kFn, ": input ", i)));
    const std::string name = OutputName(inputs[i]);
    if (!run->feeds.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": '", name, "' is fed but TF_SessionPRunSetup did not declare it as a feed"));
    }
    if (run->values.contains(name) || new_values.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": '", name, "' has already been fed in this partial run"));
    }
    if (input_values[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": input_values[", i, "] (for '", name, "') is null"));
    }
    SL_ASSIGN_OR_RETURN(Tensor value, ToRuntimeTensor(*input_values[i]), kFn, ": input ", i,
                        " (for '", name, "')");
    new_values.emplace(name, std::move(value));
  }
  std::vector<std::string> fetches;
  for (int i = 0; i < noutputs; ++i) {
    SL_RETURN_IF_ERROR(
        CheckOutput(*session->graph, outputs[i], absl::StrCat(kFn, ": output ", i)));
    std::string name = OutputName(outputs[i]);
    if (!run->fetches.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": '", name, "' is fetched but TF_SessionPRunSetup did not declare it as a fetch"));
    }
    if (run->fetched.contains(name) ||
        std::find(fetches.begin(), fetches.end(), name) != fetches.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": '", name, "' has already been fetched in this partial run"));
    }
    fetches.push_back(std::move(name));
  }
  absl::flat_hash_set<const TF_Operation*> asked;
  for (int i = 0; i < ntargets; ++i) {
    const TF_Operation* op = target_opers[i];
    if (std::find(run->targets.begin(), run->targets.end(), op) == run->targets.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": target ", i, " was not declared as a target in TF_SessionPRunSetup"));
    }
    if (run->targets_run.contains(op)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": target '", op->node->name(), "' has already run in this partial run"));
    }
    asked.insert(op);
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  absl::flat_hash_map<std::string, const Tensor*> known;
  for (auto* values : {&run->values, &new_values}) {
    for (const auto& [name, value] : *values) {
      feeds.emplace_back(name, value);
      known.emplace(name, &value);
    }
  }
  // As in TensorFlow, a declared target runs in the first call whose feeds are all it needs;
  // one named by this call must be able to run now.
  std::vector<std::string> targets;
  std::vector<const TF_Operation*> targets_now;
  for (const TF_Operation* op : run->targets) {
    if (run->targets_run.contains(op)) continue;
    const bool can_run = CanRunWith(*op, *run, known);
    if (!can_run && asked.contains(op)) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": target '", op->node->name(),
                       "' needs a declared feed that has not been fed yet"));
    }
    if (can_run) {
      targets.push_back(op->node->name());
      targets_now.push_back(op);
    }
  }
  for (int i = 0; i < noutputs; ++i) {
    if (!CanRunWith(*outputs[i].oper, *run, known)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": fetching '", fetches[i], "' needs a declared feed that has not been fed yet"));
    }
  }

  SL_RETURN_IF_ERROR(SyncSessionGraph(session));
  std::vector<Tensor> results;
  SL_RETURN_IF_ERROR(
      session->session->Run(RunOptions(), feeds, fetches, targets, &results, nullptr));
  if (static_cast<int>(results.size()) != noutputs) {
    return absl::InternalError(absl::StrCat(kFn, ": the session returned ", results.size(),
                                            " values for ", noutputs, " fetches"));
  }
  std::vector<std::unique_ptr<TF_Tensor>> converted;
  for (int i = 0; i < noutputs; ++i) {
    SL_ASSIGN_OR_RETURN(TF_Tensor * value, NewCApiTensor(results[i]), kFn, ": fetched '",
                        fetches[i], "'");
    converted.emplace_back(value);
  }
  // The step ran: remember what it fed, fetched and ran.
  for (auto& [name, value] : new_values) run->values.emplace(name, std::move(value));
  for (int i = 0; i < noutputs; ++i) {
    run->fetched.insert(fetches[i]);
    run->values.emplace(fetches[i], std::move(results[i]));
  }
  for (const TF_Operation* op : targets_now) run->targets_run.insert(op);
  for (int i = 0; i < noutputs; ++i) output_values[i] = converted[i].release();

  bool done = run->fetched.size() == run->fetches.size() &&
              run->targets_run.size() == run->targets.size();
  for (const std::string& feed : run->feeds) done = done && run->values.contains(feed);
  if (done) {
    absl::MutexLock lock(&session->partial_runs_mu);
    session->partial_runs.erase(handle);
  }
  return absl::OkStatus();
}

absl::Status CheckDeviceIndex(const TF_DeviceList* list, int index) {
  if (list == nullptr) return absl::InvalidArgumentError("the TF_DeviceList is null");
  if (index < 0 || index >= static_cast<int>(list->devices.size())) {
    return absl::OutOfRangeError(absl::StrCat("device index ", index, " is out of range (",
                                              list->devices.size(), " devices)"));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TF_SessionOptions* TF_NewSessionOptions(void) { return new TF_SessionOptions; }

void TF_SetTarget(TF_SessionOptions* options, const char* target) {
  if (options != nullptr) options->options.target = target != nullptr ? target : "";
}

void TF_SetConfig(TF_SessionOptions* options, const void* proto, size_t proto_len,
                  TF_Status* status) {
  if (options == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_SetConfig", "options"));
    return;
  }
  sluice::ConfigProto config;
  if (!sluice::ParseFromBytes(proto, proto_len, &config)) {
    SetStatus(status, absl::InvalidArgumentError(
                          "TF_SetConfig: the bytes are not a valid serialized ConfigProto"));
    return;
  }
  options->options.config = std::move(config);
  SetStatus(status, absl::OkStatus());
}

void TF_DeleteSessionOptions(TF_SessionOptions* options) { delete options; }

TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts, TF_Status* status) {
  if (graph == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_NewSession", "graph"));
    return nullptr;
  }
  auto session =
      sluice::NewSession(opts != nullptr ? opts->options : sluice::SessionOptions());
  if (!session.ok()) {
    SetStatus(status, sluice::AddContext(session.status(), "TF_NewSession"));
    return nullptr;
  }
  auto* s = new TF_Session;
  s->session = *std::move(session);
  s->graph = graph;
  {
    absl::MutexLock lock(&graph->mu);
    ++graph->num_sessions;
  }
  SetStatus(status, absl::OkStatus());
  return s;
}

void TF_CloseSession(TF_Session* s, TF_Status* status) {
  if (s == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_CloseSession", "session"));
    return;
  }
  absl::MutexLock lock(&s->mu);
  if (s->closed) {
    SetStatus(status, absl::OkStatus());
    return;
  }
  s->closed = true;
  SetStatus(status, s->session->Close());
}

void TF_DeleteSession(TF_Session* s, TF_Status* status) {
  if (s == nullptr) {
    SetStatus(status, absl::OkStatus());
    return;
  }
  absl::Status result;
  {
    absl::MutexLock lock(&s->mu);
    if (!s->closed) {
      s->closed = true;
      result = s->session->Close();
    }
  }
  TF_Graph* graph = s->graph;
  delete s;
  bool free_graph;
  {
    absl::MutexLock lock(&graph->mu);
    free_graph = --graph->num_sessions == 0 && graph->delete_requested;
  }
  if (free_graph) delete graph;
  SetStatus(status, result);
}

void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
                   TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                   TF_Tensor** output_values, int noutputs,
                   const TF_Operation* const* target_opers, int ntargets,
                   TF_Buffer* run_metadata, TF_Status* status) {
  // As in TensorFlow, outputs read NULL unless the run succeeds.
  if (output_values != nullptr) {
    for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  }
  SetStatus(status, sluice::SessionRun(session, run_options, inputs, input_values, ninputs,
                                       outputs, output_values, noutputs, target_opers, ntargets,
                                       run_metadata));
}

struct SL_RunCancellation {
  sluice::CancellationManager manager;
};

SL_RunCancellation* SL_NewRunCancellation(void) { return new SL_RunCancellation; }

void SL_CancelRun(SL_RunCancellation* cancellation, const char* message) {
  if (cancellation == nullptr) return;
  cancellation->manager.StartCancel(absl::CancelledError(
      message != nullptr && *message != '\0' ? message : "the run was cancelled (SL_CancelRun)"));
}

unsigned char SL_RunIsCancelled(const SL_RunCancellation* cancellation) {
  return cancellation != nullptr && cancellation->manager.IsCancelled() ? 1 : 0;
}

void SL_DeleteRunCancellation(SL_RunCancellation* cancellation) { delete cancellation; }

void SL_SessionRunCancellable(TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
                              TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                              TF_Tensor** output_values, int noutputs,
                              const TF_Operation* const* target_opers, int ntargets,
                              TF_Buffer* run_metadata, SL_RunCancellation* cancellation,
                              TF_Status* status) {
  if (output_values != nullptr) {
    for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  }
  SetStatus(status, sluice::SessionRun(session, run_options, inputs, input_values, ninputs, outputs,
                                       output_values, noutputs, target_opers, ntargets, run_metadata,
                                       cancellation != nullptr ? &cancellation->manager : nullptr,
                                       "SL_SessionRunCancellable"));
}

void TF_SessionPRunSetup(TF_Session* session, const TF_Output* inputs, int ninputs,
                         const TF_Output* outputs, int noutputs,
                         const TF_Operation* const* target_opers, int ntargets,
                         const char** handle, TF_Status* status) {
  if (handle == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_SessionPRunSetup", "handle"));
    return;
  }
  *handle = nullptr;
  auto new_handle = sluice::PartialRunSetup(session, inputs, ninputs, outputs, noutputs,
                                            target_opers, ntargets);
  SetStatus(status, new_handle.status());
  if (!new_handle.ok()) return;
  char* copy = new char[new_handle->size() + 1];
  std::memcpy(copy, new_handle->c_str(), new_handle->size() + 1);
  *handle = copy;
}

void TF_SessionPRun(TF_Session* session, const char* handle, const TF_Output* inputs,
                    TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                    TF_Tensor** output_values, int noutputs,
                    const TF_Operation* const* target_opers, int ntargets, TF_Status* status) {
  if (output_values != nullptr) {
    for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  }
  SetStatus(status, sluice::PartialRunStep(session, handle, inputs, input_values, ninputs,
                                           outputs, output_values, noutputs, target_opers,
                                           ntargets));
}

// The handle is only the partial run's name: its state stays with the session until the run
// is complete or the session is deleted.
void TF_DeletePRunHandle(const char* handle) { delete[] handle; }

TF_DeviceList* TF_SessionListDevices(TF_Session* session, TF_Status* status) {
  if (session == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_SessionListDevices", "session"));
    return nullptr;
  }
  auto* list = new TF_DeviceList;
  absl::Status s = session->session->ListDevices(&list->devices);
  if (!s.ok()) {
    delete list;
    SetStatus(status, sluice::AddContext(s, "TF_SessionListDevices"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return list;
}

void TF_DeleteDeviceList(TF_DeviceList* list) { delete list; }

int TF_DeviceListCount(const TF_DeviceList* list) {
  return list == nullptr ? -1 : static_cast<int>(list->devices.size());
}

const char* TF_DeviceListName(const TF_DeviceList* list, int index, TF_Status* status) {
  absl::Status s = sluice::CheckDeviceIndex(list, index);
  SetStatus(status, s);
  return s.ok() ? list->devices[index].name().c_str() : nullptr;
}

const char* TF_DeviceListType(const TF_DeviceList* list, int index, TF_Status* status) {
  absl::Status s = sluice::CheckDeviceIndex(list, index);
  SetStatus(status, s);
  return s.ok() ? list->devices[index].device_type().c_str() : nullptr;
}

int64_t TF_DeviceListMemoryBytes(const TF_DeviceList* list, int index, TF_Status* status) {
  absl::Status s = sluice::CheckDeviceIndex(list, index);
  SetStatus(status, s);
  return s.ok() ? list->devices[index].memory_limit() : -1;
}

uint64_t TF_DeviceListIncarnation(const TF_DeviceList* list, int index, TF_Status* status) {
  absl::Status s = sluice::CheckDeviceIndex(list, index);
  SetStatus(status, s);
  return s.ok() ? list->devices[index].incarnation() : 0;
}

}  // extern "C"
