// TensorFlow's deprecated session API (TF_NewDeprecatedSession, TF_ExtendGraph, TF_Run,
// TF_PRunSetup, TF_PRun, TF_Reset), for bindings and programs written before TF_Graph: a
// deprecated session is a TF_Session over a TF_Graph of its own. TF_ExtendGraph imports
// GraphDefs into that graph; runs name tensors ("op:index", "op" for index 0) and target
// operations by name and go through TF_SessionRun and the partial runs of c_api_session.cc.
// As in TensorFlow, TF_Run and TF_PRun take ownership of their input tensors.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_def_util.h"
#include "framework/status.h"

struct TF_DeprecatedSession {
  TF_Graph* graph = nullptr;
  TF_Session* session = nullptr;
};

namespace sluice {
namespace {

absl::StatusOr<TF_Output> OutputByName(TF_Graph* g, const char* name, absl::string_view what) {
  if (name == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name), what);
  if (id.index == kControlSlot) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " '", name, "' names a control input, not a tensor"));
  }
  TF_Operation* op = TF_GraphOperationByName(g, id.node.c_str());
  if (op == nullptr) {
    return absl::NotFoundError(absl::StrCat(what, ": no operation '", id.node,
                                            "' in the session's graph"));
  }
  TF_Output out{op, id.index};
  SL_RETURN_IF_ERROR(CheckOutput(*g, out, what));
  return out;
}

// Resolves names into outputs and target operations; the first bad name is the error.
absl::Status Resolve(TF_Graph* g, const char* fn, const char** input_names, int ninputs,
                     const char** output_names, int noutputs, const char** target_names,
                     int ntargets, std::vector<TF_Output>* inputs,
                     std::vector<TF_Output>* outputs, std::vector<TF_Operation*>* targets) {
  if (ninputs < 0 || noutputs < 0 || ntargets < 0) {
    return absl::InvalidArgumentError(absl::StrCat(fn, ": negative count"));
  }
  if ((ninputs > 0 && input_names == nullptr) || (noutputs > 0 && output_names == nullptr) ||
      (ntargets > 0 && target_names == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(fn, ": a null array with a nonzero count"));
  }
  for (int i = 0; i < ninputs; ++i) {
    SL_ASSIGN_OR_RETURN(TF_Output o, OutputByName(g, input_names[i],
                                                  absl::StrCat(fn, ": input_names[", i, "]")));
    inputs->push_back(o);
  }
  for (int i = 0; i < noutputs; ++i) {
    SL_ASSIGN_OR_RETURN(TF_Output o, OutputByName(g, output_names[i],
                                                  absl::StrCat(fn, ": output_names[", i, "]")));
    outputs->push_back(o);
  }
  for (int i = 0; i < ntargets; ++i) {
    TF_Operation* op =
        target_names[i] == nullptr ? nullptr : TF_GraphOperationByName(g, target_names[i]);
    if (op == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          fn, ": target_oper_names[", i, "] ('",
          target_names[i] == nullptr ? "(null)" : target_names[i],
          "') names no operation of the session's graph"));
    }
    targets->push_back(op);
  }
  return absl::OkStatus();
}

void TakeInputs(TF_Tensor** inputs, int ninputs) {
  if (inputs == nullptr) return;
  for (int i = 0; i < ninputs; ++i) TF_DeleteTensor(inputs[i]);
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

TF_DeprecatedSession* TF_NewDeprecatedSession(const TF_SessionOptions* opts, TF_Status* status) {
  TF_Graph* graph = TF_NewGraph();
  TF_Session* session = TF_NewSession(graph, opts, status);
  if (session == nullptr) {
    TF_DeleteGraph(graph);
    return nullptr;
  }
  return new TF_DeprecatedSession{graph, session};
}

void TF_CloseDeprecatedSession(TF_DeprecatedSession* s, TF_Status* status) {
  if (s == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_CloseDeprecatedSession", "session"));
    return;
  }
  TF_CloseSession(s->session, status);
}

void TF_DeleteDeprecatedSession(TF_DeprecatedSession* s, TF_Status* status) {
  if (s == nullptr) {
    SetStatus(status, absl::OkStatus());
    return;
  }
  TF_DeleteSession(s->session, status);
  TF_DeleteGraph(s->graph);
  delete s;
}

void TF_Reset(const TF_SessionOptions* opt, const char** containers, int ncontainers,
              TF_Status* status) {
  const std::string target = opt != nullptr ? opt->options.target : "";
  if (!target.empty() && target != "local") {
    SetStatus(status, absl::UnimplementedError(absl::StrCat(
                          "TF_Reset: resetting the sessions of remote target '", target,
                          "' is not supported; close each session instead")));
    return;
  }
  // In-process sessions share no containers: each session's variables are its own and go
  // with it, so there is nothing to clear.
  SetStatus(status, absl::OkStatus());
}

void TF_ExtendGraph(TF_DeprecatedSession* s, const void* proto, size_t proto_len,
                    TF_Status* status) {
  if (s == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_ExtendGraph", "session"));
    return;
  }
  TF_Buffer buffer{proto, proto_len, nullptr};
  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  TF_GraphImportGraphDef(s->graph, &buffer, opts, status);
  TF_DeleteImportGraphDefOptions(opts);
}

void TF_Run(TF_DeprecatedSession* s, const TF_Buffer* run_options, const char** input_names,
            TF_Tensor** inputs, int ninputs, const char** output_names, TF_Tensor** outputs,
            int noutputs, const char** target_oper_names, int ntargets,
            TF_Buffer* run_metadata, TF_Status* status) {
  if (outputs != nullptr) {
    for (int i = 0; i < noutputs; ++i) outputs[i] = nullptr;
  }
  if (s == nullptr) {
    sluice::TakeInputs(inputs, ninputs);
    SetStatus(status, sluice::NullArgument("TF_Run", "session"));
    return;
  }
  std::vector<TF_Output> in, out;
  std::vector<TF_Operation*> targets;
  absl::Status r = sluice::Resolve(s->graph, "TF_Run", input_names, ninputs, output_names,
                                   noutputs, target_oper_names, ntargets, &in, &out, &targets);
  if (r.ok() && ninputs > 0 && inputs == nullptr) r = sluice::NullArgument("TF_Run", "inputs");
  if (!r.ok()) {
    sluice::TakeInputs(inputs, ninputs);
    SetStatus(status, r);
    return;
  }
  TF_SessionRun(s->session, run_options, in.data(), inputs, ninputs, out.data(), outputs,
                noutputs, targets.data(), ntargets, run_metadata, status);
  sluice::TakeInputs(inputs, ninputs);
}

void TF_PRunSetup(TF_DeprecatedSession* s, const char** input_names, int ninputs,
                  const char** output_names, int noutputs, const char** target_oper_names,
                  int ntargets, const char** handle, TF_Status* status) {
  if (handle != nullptr) *handle = nullptr;
  if (s == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_PRunSetup", "session"));
    return;
  }
  std::vector<TF_Output> in, out;
  std::vector<TF_Operation*> targets;
  absl::Status r = sluice::Resolve(s->graph, "TF_PRunSetup", input_names, ninputs, output_names,
                                   noutputs, target_oper_names, ntargets, &in, &out, &targets);
  if (!r.ok()) {
    SetStatus(status, r);
    return;
  }
  TF_SessionPRunSetup(s->session, in.data(), ninputs, out.data(), noutputs, targets.data(),
                      ntargets, handle, status);
}

void TF_PRun(TF_DeprecatedSession* s, const char* handle, const char** input_names,
             TF_Tensor** inputs, int ninputs, const char** output_names, TF_Tensor** outputs,
             int noutputs, const char** target_oper_names, int ntargets, TF_Status* status) {
  if (outputs != nullptr) {
    for (int i = 0; i < noutputs; ++i) outputs[i] = nullptr;
  }
  if (s == nullptr) {
    sluice::TakeInputs(inputs, ninputs);
    SetStatus(status, sluice::NullArgument("TF_PRun", "session"));
    return;
  }
  std::vector<TF_Output> in, out;
  std::vector<TF_Operation*> targets;
  absl::Status r = sluice::Resolve(s->graph, "TF_PRun", input_names, ninputs, output_names,
                                   noutputs, target_oper_names, ntargets, &in, &out, &targets);
  if (r.ok() && ninputs > 0 && inputs == nullptr) r = sluice::NullArgument("TF_PRun", "inputs");
  if (!r.ok()) {
    sluice::TakeInputs(inputs, ninputs);
    SetStatus(status, r);
    return;
  }
  TF_SessionPRun(s->session, handle, in.data(), inputs, ninputs, out.data(), outputs, noutputs,
                 targets.data(), ntargets, status);
  sluice::TakeInputs(inputs, ninputs);
}

TF_DeviceList* TF_DeprecatedSessionListDevices(TF_DeprecatedSession* s, TF_Status* status) {
  if (s == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_DeprecatedSessionListDevices", "session"));
    return nullptr;
  }
  return TF_SessionListDevices(s->session, status);
}

}  // extern "C"
