// TF_Graph over the framework's Graph: finishing operations (checks, edges, shape inference),
// output shapes, OpDefs and GraphDef export. GraphDef import is c_api_import.cc's; reading
// operations back is c_api_operation.cc's.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "google/protobuf/util/message_differencer.h"
#include "ops/shape_inference.h"

namespace sluice {

std::string OutputName(const TF_Output& output) {
  return absl::StrCat(output.oper->node->name(), ":", output.index);
}

bool InGraph(const TF_Graph& graph, const TF_Operation* op) {
  return op != nullptr && op->graph == &graph;
}

absl::Status CheckOutput(const TF_Graph& graph, const TF_Output& out, absl::string_view what) {
  if (out.oper == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": operation is null"));
  }
  if (!InGraph(graph, out.oper)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": operation is not in this graph"));
  }
  const Node& node = *out.oper->node;
  int n = node.num_outputs();
  if (out.index < 0 || out.index >= n) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": output index ", out.index, " is out of range for operation '", node.name(),
        "' (op '", node.type_string(), "'), which has ", n, n == 1 ? " output" : " outputs"));
  }
  return absl::OkStatus();
}

// Checks that data input `i` of `node` may take output `index` of `src`: the output exists and
// has the type the input expects.
absl::Status CheckInput(const Node& node, int i, const Node& src, int index) {
  std::string what = absl::StrCat("node '", node.name(), "' (op '", node.type_string(), "')");
  std::string input = absl::StrCat(src.name(), ":", index);
  int n = src.num_outputs();
  if (index < 0 || index >= n) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": input '", input,
                                                   "' is out of range: node '", src.name(),
                                                   "' has ", n, n == 1 ? " output" : " outputs"));
  }
  DataType got = src.output_types()[index];
  DataType want = node.input_types()[i];
  if (got != want) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": input ", i, " expects ",
                                                   DataTypeString(want), " but '", input, "' is ",
                                                   DataTypeString(got)));
  }
  return absl::OkStatus();
}

namespace {

// Wires a new node's edges and infers its output shapes into `op`.
absl::Status ConnectAndInferShapes(Graph* graph, Node* node, const OpRegistrationData& reg,
                                   absl::Span<const TF_Output> inputs,
                                   absl::Span<TF_Operation* const> control_inputs,
                                   TF_Operation* op) {
  const NodeDef& def = node->def();
  // The number of inputs, and no data input after a control input.
  SL_RETURN_IF_ERROR(NameNode(ValidateNodeDef(def, node->op_def()), def));
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_tensors;
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    const TF_Operation* src = inputs[i].oper;
    SL_RETURN_IF_ERROR(CheckInput(*node, i, *src->node, inputs[i].index));
    SL_RETURN_IF_ERROR(graph->AddEdge(src->node, inputs[i].index, node, i));
    input_shapes.push_back(src->output_shapes[inputs[i].index]);
    input_tensors.push_back(src->const_value.has_value() ? &*src->const_value : nullptr);
  }
  for (const TF_Operation* c : control_inputs) graph->AddControlEdge(c->node, node);
  if (def.op() == "Const") {
    Tensor value;
    // A bad value is the kernel's to report; shape inference just goes without it.
    if (GetNodeAttr(AttrSlice(def), "value", &value).ok()) op->const_value = std::move(value);
  }
  InferenceContext ctx(def, node->op_def(), std::move(input_shapes), std::move(input_tensors),
                       node->num_outputs());
  SL_RETURN_IF_ERROR(NameNode(reg.shape_fn(&ctx), def));
  op->output_shapes = ctx.outputs();
  return absl::OkStatus();
}

}  // namespace

// Adds `node_def` (name, op and attrs; its inputs are replaced by `inputs` and
// `control_inputs`, which are operations of `graph`) to the graph: defaults filled, checked
// against its OpDef, type-checked and shape-inferred. On error the graph is unchanged and the
// error names the node.
absl::StatusOr<TF_Operation*> AddOperationLocked(TF_Graph* graph, NodeDef node_def,
                                                 absl::Span<const TF_Output> inputs,
                                                 absl::Span<TF_Operation* const> control_inputs)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu) {
  if (node_def.name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("an operation of type '", node_def.op(),
                                                   "' has an empty name"));
  }
  // Looked up here too for the shape function, and so that an unknown op is reported as
  // everything else is.
  auto reg = OpRegistry::Global()->LookUp(node_def.op());
  if (!reg.ok()) return NameNode(reg.status(), node_def);
  node_def.clear_input();
  for (const TF_Output& in : inputs) {
    *node_def.add_input() = TensorId{in.oper->node->name(), in.index}.ToString();
  }
  absl::flat_hash_set<const TF_Operation*> seen;  // One control edge per source, as in Graph.
  for (const TF_Operation* c : control_inputs) {
    if (seen.insert(c).second) *node_def.add_input() = absl::StrCat("^", c->node->name());
  }
  // Graph::AddNode's errors name the node.
  SL_ASSIGN_OR_RETURN(Node * node, graph->graph.AddNode(std::move(node_def)));
  auto op = std::make_unique<TF_Operation>();
  op->graph = graph;
  op->node = node;
  absl::Status s =
      ConnectAndInferShapes(&graph->graph, node, **reg, inputs, control_inputs, op.get());
  if (!s.ok()) {
    graph->graph.RemoveNode(node);
    return s;
  }
  graph->op_by_node_id.resize(graph->graph.num_node_ids(), nullptr);
  graph->op_by_node_id[node->id()] = op.get();
  graph->ops.push_back(std::move(op));
  return graph->ops.back().get();
}

// Removes the operations added after the first `num_ops`, newest first.
void TruncateOperationsLocked(TF_Graph* graph, size_t num_ops)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu) {
  while (graph->ops.size() > num_ops) {
    Node* node = graph->ops.back()->node;
    graph->op_by_node_id[node->id()] = nullptr;
    graph->graph.RemoveNode(node);
    graph->ops.pop_back();
  }
}

namespace {

absl::Status FinishOperationLocked(TF_OperationDescription* desc, TF_Operation** result)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(desc->graph->mu) {
  TF_Graph* graph = desc->graph;
  graph->mu.AssertHeld();  // Tells clang's thread-safety analysis that the alias is locked.
  NodeDef& node = desc->node_def;
  if (graph->OperationByName(node.name()) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Duplicate node name in graph: '", node.name(), "'"));
  }
  auto reg = OpRegistry::Global()->LookUp(node.op());
  if (!reg.ok()) return NameNode(reg.status(), node);
  const OpDef& op_def = (*reg)->op_def;

  std::vector<TF_Output> inputs;
  std::vector<DataTypeVector> arg_types;
  for (const auto& group : desc->input_args) {
    DataTypeVector types;
    for (const TF_Output& in : group) {
      SL_RETURN_IF_ERROR(
          CheckOutput(*graph, in, absl::StrCat("input ", inputs.size())), "node '", node.name(),
          "' (op '", node.op(), "')");
      types.push_back(in.oper->node->output_types()[in.index]);
      inputs.push_back(in);
    }
    arg_types.push_back(std::move(types));
  }
  for (TF_Operation* c : desc->control_inputs) {
    if (!InGraph(*graph, c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name(), "': control input is not an operation of this graph"));
    }
  }
  if (static_cast<int>(arg_types.size()) != op_def.input_arg_size()) {
    std::string args;
    for (const auto& a : op_def.input_arg()) {
      absl::StrAppend(&args, args.empty() ? "" : ", ", a.name());
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name(), "' (op '", node.op(), "'): got ", arg_types.size(),
        " input args (TF_AddInput/TF_AddInputList calls) but the op takes ",
        op_def.input_arg_size(), args.empty() ? "" : absl::StrCat(" (", args, ")")));
  }
  SL_RETURN_IF_ERROR(NameNode(InferAttrsFromInputTypes(op_def, arg_types, &node), node));
  SL_ASSIGN_OR_RETURN(*result,
                      AddOperationLocked(graph, std::move(node), inputs, desc->control_inputs));
  return absl::OkStatus();
}


absl::StatusOr<const PartialShape*> OutputShape(TF_Graph* graph, const TF_Output& output)
    ABSL_SHARED_LOCKS_REQUIRED(graph->mu) {
  SL_RETURN_IF_ERROR(CheckOutput(*graph, output, "TF_Output"));
  return &output.oper->output_shapes[output.index];
}

// `known` refined by `given`; an error when they disagree.
absl::StatusOr<PartialShape> MergeShapes(const PartialShape& known, const PartialShape& given) {
  if (given.unknown_rank()) return known;
  if (known.unknown_rank()) return given;
  if (known.rank() != given.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("the shapes must have the same rank, but ",
                                                   known.DebugString(), " has rank ",
                                                   known.rank(), " and ", given.DebugString(),
                                                   " has rank ", given.rank()));
  }
  std::vector<int64_t> dims(known.dims().begin(), known.dims().end());
  for (int i = 0; i < given.rank(); ++i) {
    if (given.dim(i) < 0) continue;
    if (dims[i] >= 0 && dims[i] != given.dim(i)) {
      return absl::InvalidArgumentError(absl::StrCat("dimension ", i, " is ", dims[i],
                                                     " in the known shape ", known.DebugString(),
                                                     " but ", given.dim(i), " in ",
                                                     given.DebugString()));
    }
    dims[i] = given.dim(i);
  }
  return PartialShape(dims);
}

// TF_UpdateEdge: dst's input now reads new_src; its output shapes are inferred again.
absl::Status UpdateEdgeLocked(TF_Graph* graph, TF_Output new_src, TF_Input dst)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph->mu) {
  constexpr char kFn[] = "TF_UpdateEdge";
  SL_RETURN_IF_ERROR(CheckOutput(*graph, new_src, absl::StrCat(kFn, ": new_src")));
  if (!InGraph(*graph, dst.oper)) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": dst's operation is ", dst.oper == nullptr ? "null" : "not in this graph"));
  }
  Node* node = dst.oper->node;
  if (dst.index < 0 || dst.index >= node->num_inputs()) {
    return absl::OutOfRangeError(absl::StrCat(kFn, ": input index ", dst.index,
                                              " is out of range for operation '", node->name(),
                                              "', which has ", node->num_inputs(), " inputs"));
  }
  SL_RETURN_IF_ERROR(CheckInput(*node, dst.index, *new_src.oper->node, new_src.index), kFn);
  if (graph->num_sessions > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        kFn, ": a session runs this graph and already holds its edges; update edges before "
             "creating sessions"));
  }
  // The new edge must not close a cycle: dst may not be an ancestor of new_src.
  std::vector<const Node*> stack = {new_src.oper->node};
  absl::flat_hash_set<const Node*> seen = {new_src.oper->node};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n == node) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": '", OutputName(new_src), "' depends on '", node->name(),
          "', so feeding it to that operation would make a cycle"));
    }
    for (const Edge* e : n->in_edges()) {
      if (seen.insert(e->src).second) stack.push_back(e->src);
    }
  }
  // Infer the shapes with the new input before changing anything.
  SL_ASSIGN_OR_RETURN(const OpRegistrationData* reg,
                      OpRegistry::Global()->LookUp(node->type_string()), kFn);
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_tensors;
  for (int i = 0; i < node->num_inputs(); ++i) {
    TF_Output in = new_src;
    if (i != dst.index) {
      const Edge* e = node->input_edge(i);
      if (e == nullptr) return absl::InternalError(absl::StrCat(kFn, ": input ", i, " has no edge"));
      in = TF_Output{graph->OperationOf(e->src), e->src_output};
    }
    input_shapes.push_back(in.oper->output_shapes[in.index]);
    input_tensors.push_back(in.oper->const_value.has_value() ? &*in.oper->const_value : nullptr);
  }
  InferenceContext ctx(node->def(), node->op_def(), std::move(input_shapes),
                       std::move(input_tensors), node->num_outputs());
  SL_RETURN_IF_ERROR(NameNode(reg->shape_fn(&ctx), node->def()), kFn);
  if (const Edge* old = node->input_edge(dst.index)) graph->graph.RemoveEdge(old);
  SL_RETURN_IF_ERROR(graph->graph.AddEdge(new_src.oper->node, new_src.index, node, dst.index),
                     kFn);
  node->mutable_def()->set_input(
      dst.index, TensorId{new_src.oper->node->name(), new_src.index}.ToString());
  dst.oper->output_shapes = ctx.outputs();
  return absl::OkStatus();
}

}  // namespace

}  // namespace sluice

using sluice::SetStatus;


extern "C" {

TF_Graph* TF_NewGraph(void) { return new TF_Graph; }

void TF_DeleteGraph(TF_Graph* graph) {
  if (graph == nullptr) return;
  bool free_now;
  {
    absl::MutexLock lock(&graph->mu);
    graph->delete_requested = true;
    free_now = graph->num_sessions == 0;
  }
  if (free_now) delete graph;
}

void TF_GraphSetTensorShape(TF_Graph* graph, TF_Output output, const int64_t* dims,
                            const int num_dims, TF_Status* status) {
  constexpr char kFn[] = "TF_GraphSetTensorShape";
  if (graph == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "graph"));
    return;
  }
  if (num_dims > 0 && dims == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "dims"));
    return;
  }
  sluice::PartialShape given;  // Unknown rank for num_dims < 0.
  if (num_dims >= 0) {
    for (int i = 0; i < num_dims; ++i) {
      if (dims[i] < -1) {
        SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                              kFn, ": dimension ", i, " is ", dims[i], " (use -1 for unknown)")));
        return;
      }
    }
    given = sluice::PartialShape(absl::Span<const int64_t>(dims, num_dims));
  }
  absl::MutexLock lock(&graph->mu);
  auto known = sluice::OutputShape(graph, output);
  if (!known.ok()) {
    SetStatus(status, sluice::AddContext(known.status(), kFn));
    return;
  }
  auto merged = sluice::MergeShapes(**known, given);
  if (!merged.ok()) {
    SetStatus(status, sluice::AddContext(
                          merged.status(), absl::StrCat(kFn, ": '", sluice::OutputName(output), "'")));
    return;
  }
  output.oper->output_shapes[output.index] = *std::move(merged);
  SetStatus(status, absl::OkStatus());
}

int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output, TF_Status* status) {
  if (graph == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_GraphGetTensorNumDims", "graph"));
    return -1;
  }
  absl::ReaderMutexLock lock(&graph->mu);
  auto shape = sluice::OutputShape(graph, output);
  if (!shape.ok()) {
    SetStatus(status, sluice::AddContext(shape.status(), "TF_GraphGetTensorNumDims"));
    return -1;
  }
  SetStatus(status, absl::OkStatus());
  return (*shape)->rank();
}

void TF_GraphGetTensorShape(TF_Graph* graph, TF_Output output, int64_t* dims, int num_dims,
                            TF_Status* status) {
  constexpr char kFn[] = "TF_GraphGetTensorShape";
  if (graph == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "graph"));
    return;
  }
  absl::ReaderMutexLock lock(&graph->mu);
  auto shape = sluice::OutputShape(graph, output);
  if (!shape.ok()) {
    SetStatus(status, sluice::AddContext(shape.status(), kFn));
    return;
  }
  const sluice::PartialShape& s = **shape;
  if (num_dims > 0 && dims == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "dims"));
    return;
  }
  if (s.unknown_rank()) {
    for (int i = 0; i < num_dims; ++i) dims[i] = -1;
    SetStatus(status, absl::OkStatus());
    return;
  }
  if (num_dims != s.rank()) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          kFn, ": '", sluice::OutputName(output), "' has rank ", s.rank(),
                          " but num_dims is ", num_dims)));
    return;
  }
  for (int i = 0; i < num_dims; ++i) dims[i] = s.dim(i);
  SetStatus(status, absl::OkStatus());
}

TF_Operation* TF_GraphOperationByName(TF_Graph* graph, const char* oper_name) {
  if (graph == nullptr || oper_name == nullptr) return nullptr;
  absl::ReaderMutexLock lock(&graph->mu);
  return graph->OperationByName(oper_name);
}

TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos) {
  if (graph == nullptr || pos == nullptr) return nullptr;
  absl::ReaderMutexLock lock(&graph->mu);
  if (*pos >= graph->ops.size()) return nullptr;
  return graph->ops[(*pos)++].get();
}

void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output_graph_def, TF_Status* status) {
  if (graph == nullptr || output_graph_def == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_GraphToGraphDef",
                                           graph == nullptr ? "graph" : "output_graph_def"));
    return;
  }
  sluice::GraphDef def;
  {
    absl::ReaderMutexLock lock(&graph->mu);
    graph->graph.ToGraphDef(&def);
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(def, output_graph_def),
                                       "TF_GraphToGraphDef"));
}

void TF_GraphGetOpDef(TF_Graph* graph, const char* op_name, TF_Buffer* output_op_def,
                      TF_Status* status) {
  constexpr char kFn[] = "TF_GraphGetOpDef";
  if (graph == nullptr || op_name == nullptr || output_op_def == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, graph == nullptr     ? "graph"
                                                : op_name == nullptr ? "op_name"
                                                                     : "output_op_def"));
    return;
  }
  auto op_def = sluice::OpRegistry::Global()->LookUpOpDef(op_name);
  if (op_def.ok()) {
    SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(**op_def, output_op_def), kFn));
    return;
  }
  // A function of the graph's library is called as an op of its name.
  sluice::OpDef signature;
  bool found = false;
  {
    absl::ReaderMutexLock lock(&graph->mu);
    for (const sluice::FunctionDef& f : graph->graph.library().function()) {
      if (f.signature().name() == op_name) {
        signature = f.signature();
        found = true;
      }
    }
  }
  if (!found) {
    SetStatus(status, absl::NotFoundError(absl::StrCat(
                          kFn, ": no op or function named '", op_name, "' is registered")));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(signature, output_op_def), kFn));
}

void TF_GraphVersions(TF_Graph* graph, TF_Buffer* output_version_def, TF_Status* status) {
  if (graph == nullptr || output_version_def == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_GraphVersions",
                                           graph == nullptr ? "graph" : "output_version_def"));
    return;
  }
  sluice::VersionDef versions;
  {
    absl::ReaderMutexLock lock(&graph->mu);
    versions = graph->graph.versions();
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(versions, output_version_def),
                                       "TF_GraphVersions"));
}

void TF_UpdateEdge(TF_Graph* graph, TF_Output new_src, TF_Input dst, TF_Status* status) {
  if (graph == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_UpdateEdge", "graph"));
    return;
  }
  absl::MutexLock lock(&graph->mu);
  SetStatus(status, sluice::UpdateEdgeLocked(graph, new_src, dst));
}

TF_Operation* TF_FinishOperation(TF_OperationDescription* desc, TF_Status* status) {
  if (desc == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_FinishOperation", "desc"));
    return nullptr;
  }
  std::unique_ptr<TF_OperationDescription> owned(desc);
  if (!desc->deferred.ok()) {
    SetStatus(status, sluice::NameNode(desc->deferred, desc->node_def));
    return nullptr;
  }
  TF_Operation* op = nullptr;
  absl::Status s;
  {
    absl::MutexLock lock(&desc->graph->mu);
    s = sluice::FinishOperationLocked(desc, &op);
  }
  SetStatus(status, s);
  return s.ok() ? op : nullptr;
}

}  // extern "C"
