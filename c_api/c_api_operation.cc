// Reading operations back: names, types, inputs and the outputs feeding them, input and output
// list lengths, consumers, control edges and NodeDefs. A node's NodeDef and in-edges never
// change once it is in a graph, so they are read without the graph's lock; out-edges (the
// consumers) grow as operations are added, and nodes map to operations through the graph, so
// those are read under it.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"

namespace sluice {
namespace {

// The tensors of the input (or output) arg `arg_name` on this node: 1 for a single tensor, N
// or the type list's length for a list.
absl::StatusOr<int> ArgLength(const TF_Operation& op, const char* arg_name, bool is_input) {
  const char* kind = is_input ? "input" : "output";
  if (arg_name == nullptr) return absl::InvalidArgumentError(absl::StrCat(kind, " arg name is null"));
  const OpDef& op_def = op.node->op_def();
  const auto& args = is_input ? op_def.input_arg() : op_def.output_arg();
  for (const OpDef::ArgDef& arg : args) {
    if (arg.name() != arg_name) continue;
    DataTypeVector types;
    SL_RETURN_IF_ERROR(ArgTypes(AttrSlice(op.node->def()), arg, &types));
    return static_cast<int>(types.size());
  }
  return absl::InvalidArgumentError(absl::StrCat("op '", op.node->type_string(), "' has no ",
                                                 kind, " arg named '", arg_name, "'"));
}

int ListLength(TF_Operation* oper, const char* arg_name, bool is_input, TF_Status* status) {
  const char* fn = is_input ? "TF_OperationInputListLength" : "TF_OperationOutputListLength";
  if (oper == nullptr) {
    SetStatus(status, NullArgument(fn, "oper"));
    return -1;
  }
  auto n = ArgLength(*oper, arg_name, is_input);
  SetStatus(status, AddContext(n.status(), fn));
  return n.ok() ? *n : -1;
}

// Fills out[0, min(max, n)) with what `pick` yields for each edge it accepts; returns n.
template <typename T, typename Pick>
int CollectEdges(const std::vector<const Edge*>& edges, T* out, int max, Pick pick) {
  int n = 0;
  for (const Edge* e : edges) {
    T value;
    if (!pick(e, &value)) continue;
    if (out != nullptr && n < max) out[n] = value;
    ++n;
  }
  return n;
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

extern "C" {

const char* TF_OperationName(TF_Operation* oper) {
  return oper == nullptr ? "" : oper->node->name().c_str();
}

const char* TF_OperationOpType(TF_Operation* oper) {
  return oper == nullptr ? "" : oper->node->type_string().c_str();
}

const char* TF_OperationDevice(TF_Operation* oper) {
  return oper == nullptr ? "" : oper->node->def().device().c_str();
}

int TF_OperationNumOutputs(TF_Operation* oper) {
  return oper == nullptr ? 0 : oper->node->num_outputs();
}

TF_DataType TF_OperationOutputType(TF_Output oper_out) {
  const TF_Operation* op = oper_out.oper;
  if (op == nullptr || oper_out.index < 0 || oper_out.index >= op->node->num_outputs()) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(op->node->output_types()[oper_out.index]);
}

int TF_OperationOutputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status) {
  return sluice::ListLength(oper, arg_name, /*is_input=*/false, status);
}

int TF_OperationNumInputs(TF_Operation* oper) {
  return oper == nullptr ? 0 : oper->node->num_inputs();
}

TF_DataType TF_OperationInputType(TF_Input oper_in) {
  const TF_Operation* op = oper_in.oper;
  if (op == nullptr || oper_in.index < 0 || oper_in.index >= op->node->num_inputs()) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(op->node->input_types()[oper_in.index]);
}

int TF_OperationInputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status) {
  return sluice::ListLength(oper, arg_name, /*is_input=*/true, status);
}

TF_Output TF_OperationInput(TF_Input oper_in) {
  const TF_Operation* op = oper_in.oper;
  if (op == nullptr || oper_in.index < 0 || oper_in.index >= op->node->num_inputs()) {
    return TF_Output{nullptr, -1};
  }
  const sluice::Edge* edge = op->node->input_edge(oper_in.index);
  absl::ReaderMutexLock lock(&op->graph->mu);
  return TF_Output{op->graph->OperationOf(edge->src), edge->src_output};
}

void TF_OperationAllInputs(TF_Operation* oper, TF_Output* inputs, int max_inputs) {
  if (oper == nullptr || inputs == nullptr) return;
  int n = std::min(max_inputs, oper->node->num_inputs());
  for (int i = 0; i < n; ++i) inputs[i] = TF_OperationInput(TF_Input{oper, i});
}

int TF_OperationOutputNumConsumers(TF_Output oper_out) {
  return TF_OperationOutputConsumers(oper_out, nullptr, 0);
}

int TF_OperationOutputConsumers(TF_Output oper_out, TF_Input* consumers, int max_consumers) {
  TF_Operation* op = oper_out.oper;
  if (op == nullptr || oper_out.index < 0 || oper_out.index >= op->node->num_outputs()) return 0;
  TF_Graph* graph = op->graph;
  absl::ReaderMutexLock lock(&graph->mu);
  return sluice::CollectEdges(op->node->out_edges(), consumers, max_consumers,
                              [&](const sluice::Edge* e, TF_Input* in) {
                                graph->mu.AssertReaderHeld();
                                if (e->src_output != oper_out.index) return false;
                                *in = TF_Input{graph->OperationOf(e->dst), e->dst_input};
                                return true;
                              });
}

int TF_OperationNumControlInputs(TF_Operation* oper) {
  return TF_OperationGetControlInputs(oper, nullptr, 0);
}

int TF_OperationGetControlInputs(TF_Operation* oper, TF_Operation** control_inputs,
                                 int max_control_inputs) {
  if (oper == nullptr) return 0;
  TF_Graph* graph = oper->graph;
  absl::ReaderMutexLock lock(&graph->mu);
  return sluice::CollectEdges(oper->node->in_edges(), control_inputs, max_control_inputs,
                              [&](const sluice::Edge* e, TF_Operation** src) {
                                graph->mu.AssertReaderHeld();
                                if (!e->IsControl()) return false;
                                *src = graph->OperationOf(e->src);
                                return true;
                              });
}

int TF_OperationNumControlOutputs(TF_Operation* oper) {
  return TF_OperationGetControlOutputs(oper, nullptr, 0);
}

int TF_OperationGetControlOutputs(TF_Operation* oper, TF_Operation** control_outputs,
                                  int max_control_outputs) {
  if (oper == nullptr) return 0;
  TF_Graph* graph = oper->graph;
  absl::ReaderMutexLock lock(&graph->mu);
  return sluice::CollectEdges(oper->node->out_edges(), control_outputs, max_control_outputs,
                              [&](const sluice::Edge* e, TF_Operation** dst) {
                                graph->mu.AssertReaderHeld();
                                if (!e->IsControl()) return false;
                                *dst = graph->OperationOf(e->dst);
                                return true;
                              });
}

void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def, TF_Status* status) {
  if (oper == nullptr || output_node_def == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_OperationToNodeDef",
                                           oper == nullptr ? "oper" : "output_node_def"));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(oper->node->def(), output_node_def),
                                       "TF_OperationToNodeDef"));
}

}  // extern "C"
