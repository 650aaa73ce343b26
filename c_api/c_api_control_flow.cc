// While loops over a TF_Graph (TF_NewWhile, TF_FinishWhile, TF_AbortWhile). TF_NewWhile hands
// out a cond graph and a body graph whose inputs are placeholders; TF_FinishWhile turns them
// into two functions of the parent graph's library (as TF_GraphToFunction would) and adds one
// TensorFlow While op over the loop's inputs, so the loop runs as a functional While. Gradients
// are in c_api_gradients.cc.
#include <cctype>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/status.h"

namespace sluice {
namespace {

constexpr char kDefaultName[] = "while";

TF_WhileParams EmptyParams() {
  return TF_WhileParams{0, nullptr, nullptr, TF_Output{nullptr, -1}, nullptr, nullptr, nullptr,
                        nullptr};
}

void FreeParams(const TF_WhileParams& params) {
  delete[] params.cond_inputs;
  delete[] params.body_inputs;
  delete[] params.body_outputs;
  TF_DeleteGraph(params.cond_graph);
  TF_DeleteGraph(params.body_graph);
}

// A graph with one Placeholder per loop value, "input_<i>", typed as the loop's inputs.
absl::StatusOr<TF_Graph*> NewLoopGraph(TF_Graph* parent, const std::vector<TF_Output>& inputs,
                                       TF_Output* placeholders) {
  TF_Graph* g = TF_NewGraph();
  g->while_parent = parent;
  g->while_inputs = inputs;
  TF_Status status;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TF_OperationDescription* d =
        TF_NewOperation(g, "Placeholder", absl::StrCat("input_", i).c_str());
    TF_SetAttrType(d, "dtype", TF_OperationOutputType(inputs[i]));
    TF_Operation* op = TF_FinishOperation(d, &status);
    if (op == nullptr) {
      TF_DeleteGraph(g);
      return status.status;
    }
    placeholders[i] = TF_Output{op, 0};
  }
  return g;
}

// A function name from the loop's name: TensorFlow's characters only.
std::string FunctionBase(absl::string_view loop, absl::string_view part) {
  std::string name = absl::StrCat(loop, "_", part);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return name;
}

absl::Status CheckInGraph(const TF_Graph* g, const TF_Output& out, absl::string_view what) {
  if (out.oper == nullptr || out.oper->graph != g) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TF_FinishWhile: ", what, out.oper == nullptr ? " is not set" : " is not in its graph"));
  }
  return CheckOutput(*g, out, absl::StrCat("TF_FinishWhile: ", what));
}

// The library function for a loop graph; added to the parent, named by the returned function.
absl::StatusOr<std::string> AddFunction(TF_Graph* parent, TF_Graph* g, const std::string& base,
                                        int ninputs, const TF_Output* inputs, int noutputs,
                                        const TF_Output* outputs) {
  TF_Status status;
  TF_Function* fn = TF_GraphToFunction(g, base.c_str(), /*append_hash_to_fn_name=*/1, -1, nullptr,
                                       ninputs, inputs, noutputs, outputs, nullptr, nullptr,
                                       nullptr, &status);
  if (fn == nullptr) return status.status;
  TF_GraphCopyFunction(parent, fn, nullptr, &status);
  std::string name = TF_FunctionName(fn);
  TF_DeleteFunction(fn);
  SL_RETURN_IF_ERROR(status.status);
  return name;
}

absl::Status FinishWhile(const TF_WhileParams& params, TF_Output* outputs) {
  constexpr char kFn[] = "TF_FinishWhile";
  if (params.cond_graph == nullptr || params.body_graph == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": the params are not from a successful TF_NewWhile"));
  }
  if (outputs == nullptr) return NullArgument(kFn, "outputs");
  TF_Graph* parent = params.cond_graph->while_parent;
  const std::vector<TF_Output>& inputs = params.cond_graph->while_inputs;
  const int n = params.ninputs;
  SL_RETURN_IF_ERROR(CheckInGraph(params.cond_graph, params.cond_output, "cond_output"));
  if (TF_OperationOutputType(params.cond_output) != TF_BOOL) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": cond_output '", OutputName(params.cond_output), "' must be bool, not ",
        DataTypeString(static_cast<DataType>(TF_OperationOutputType(params.cond_output)))));
  }
  for (int i = 0; i < n; ++i) {
    SL_RETURN_IF_ERROR(
        CheckInGraph(params.body_graph, params.body_outputs[i], absl::StrCat("body_outputs[", i, "]")));
    const TF_DataType want = TF_OperationOutputType(inputs[i]);
    const TF_DataType got = TF_OperationOutputType(params.body_outputs[i]);
    if (got != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": body_outputs[", i, "] ('", OutputName(params.body_outputs[i]), "') is ",
          DataTypeString(static_cast<DataType>(got)), ", but loop value ", i, " is ",
          DataTypeString(static_cast<DataType>(want))));
    }
  }

  std::string name = params.name != nullptr && params.name[0] != '\0' ? params.name : kDefaultName;
  {
    // The loop's operation name: `name`, or name_1, name_2, ... if taken.
    absl::ReaderMutexLock lock(&parent->mu);
    const std::string base = name;
    for (int k = 1; parent->graph.FindNode(name) != nullptr; ++k) name = absl::StrCat(base, "_", k);
  }
  SL_ASSIGN_OR_RETURN(std::string cond, AddFunction(parent, params.cond_graph,
                                                    FunctionBase(name, "cond"), n,
                                                    params.cond_inputs, 1, &params.cond_output),
                      kFn, ": the cond graph");
  SL_ASSIGN_OR_RETURN(std::string body, AddFunction(parent, params.body_graph,
                                                    FunctionBase(name, "body"), n,
                                                    params.body_inputs, n, params.body_outputs),
                      kFn, ": the body graph");
  TF_OperationDescription* d = TF_NewOperation(parent, "While", name.c_str());
  TF_AddInputList(d, inputs.data(), n);
  TF_SetAttrFuncName(d, "cond", cond.data(), cond.size());
  TF_SetAttrFuncName(d, "body", body.data(), body.size());
  TF_Status status;
  TF_Operation* loop = TF_FinishOperation(d, &status);
  SL_RETURN_IF_ERROR(status.status, kFn);
  for (int i = 0; i < n; ++i) outputs[i] = TF_Output{loop, i};
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

extern "C" {

TF_WhileParams TF_NewWhile(TF_Graph* g, TF_Output* inputs, int ninputs, TF_Status* status) {
  constexpr char kFn[] = "TF_NewWhile";
  absl::Status s;
  if (g == nullptr) {
    s = sluice::NullArgument(kFn, "g");
  } else if (ninputs <= 0) {
    s = absl::InvalidArgumentError(
        absl::StrCat(kFn, ": a while loop needs at least one input, got ", ninputs));
  } else if (inputs == nullptr) {
    s = sluice::NullArgument(kFn, "inputs");
  }
  for (int i = 0; s.ok() && i < ninputs; ++i) {
    s = sluice::CheckOutput(*g, inputs[i], absl::StrCat(kFn, ": input ", i));
  }
  if (!s.ok()) {
    sluice::SetStatus(status, s);
    return sluice::EmptyParams();
  }
  std::vector<TF_Output> loop_inputs(inputs, inputs + ninputs);
  auto* cond_inputs = new TF_Output[ninputs];
  auto* body_inputs = new TF_Output[ninputs];
  auto cond = sluice::NewLoopGraph(g, loop_inputs, cond_inputs);
  auto body = cond.ok() ? sluice::NewLoopGraph(g, loop_inputs, body_inputs) : cond;
  if (!body.ok()) {
    if (cond.ok()) TF_DeleteGraph(*cond);
    delete[] cond_inputs;
    delete[] body_inputs;
    sluice::SetStatus(status, sluice::AddContext(body.status(), kFn));
    return sluice::EmptyParams();
  }
  // Until the caller sets them, the body passes every value through.
  auto* body_outputs = new TF_Output[ninputs];
  for (int i = 0; i < ninputs; ++i) body_outputs[i] = body_inputs[i];
  sluice::SetStatus(status, absl::OkStatus());
  return TF_WhileParams{ninputs,     *cond,        cond_inputs,  TF_Output{nullptr, 0},
                        *body,       body_inputs,  body_outputs, sluice::kDefaultName};
}

void TF_FinishWhile(const TF_WhileParams* params, TF_Status* status, TF_Output* outputs) {
  if (params == nullptr) {
    sluice::SetStatus(status, sluice::NullArgument("TF_FinishWhile", "params"));
    return;
  }
  sluice::SetStatus(status, sluice::FinishWhile(*params, outputs));
  sluice::FreeParams(*params);
}

void TF_AbortWhile(const TF_WhileParams* params) {
  if (params != nullptr) sluice::FreeParams(*params);
}

}  // extern "C"
