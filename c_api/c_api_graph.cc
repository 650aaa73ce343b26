// TF_Graph over the framework's Graph: finishing operations (checks, edges, shape inference),
// reading them back, and GraphDef import and export.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
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

namespace {

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

// The GraphDef's nodes, renamed under `prefix`, as a graph of their own: every input names a
// node of the GraphDef and an output it has, of the type the input expects. Its breadth-first
// order is the order in which the nodes join the TF_Graph.
absl::StatusOr<std::unique_ptr<Graph>> StageImport(const GraphDef& def, const std::string& prefix) {
  auto staged = std::make_unique<Graph>(OpRegistry::Global());
  for (const NodeDef& original : def.node()) {
    NodeDef node = original;
    node.set_name(prefix + node.name());
    for (std::string& input : *node.mutable_input()) {
      auto id = ParseTensorName(input);
      if (!id.ok()) return NameNode(id.status(), node);
      id->node = prefix + id->node;
      input = id->ToString();
    }
    SL_ASSIGN_OR_RETURN(Node * n, staged->AddNode(std::move(node)));
    SL_RETURN_IF_ERROR(NameNode(ValidateNodeDef(n->def(), n->op_def()), n->def()));
  }
  for (Node* n : staged->nodes()) {
    int data_index = 0;
    for (const std::string& input : n->def().input()) {
      TensorId id = *ParseTensorName(input);  // Parsed above.
      Node* src = staged->FindNode(id.node);
      if (src == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", n->name(), "' (op '", n->type_string(), "'): input '", input,
            "' names a node that is not in the imported GraphDef"));
      }
      if (id.index == kControlSlot) {
        staged->AddControlEdge(src, n);
        continue;
      }
      SL_RETURN_IF_ERROR(CheckInput(*n, data_index, *src, id.index));
      SL_RETURN_IF_ERROR(staged->AddEdge(src, id.index, n, data_index++));
    }
  }
  return staged;
}

absl::StatusOr<const PartialShape*> OutputShape(TF_Graph* graph, const TF_Output& output) {
  if (graph == nullptr) return absl::InvalidArgumentError("the graph is null");
  SL_RETURN_IF_ERROR(CheckOutput(*graph, output, "TF_Output"));
  return &output.oper->output_shapes[output.index];
}

}  // namespace

absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def, std::string prefix) {
  // Functions join the graph's library; one already there must be the same function.
  std::vector<const FunctionDef*> new_functions;
  for (const FunctionDef& f : def.library().function()) {
    const FunctionDef* existing = nullptr;
    for (const FunctionDef& g : graph->graph.library().function()) {
      if (g.signature().name() == f.signature().name()) existing = &g;
    }
    if (existing == nullptr) {
      new_functions.push_back(&f);
    } else if (existing->SerializeAsString() != f.SerializeAsString()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph already has a different function named '", f.signature().name(), "'"));
    }
  }
  if (!prefix.empty() && !absl::EndsWith(prefix, "/")) prefix += '/';
  absl::flat_hash_set<std::string> names;
  for (int i = 0; i < def.node_size(); ++i) {
    const NodeDef& node = def.node(i);
    if (node.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", i, " (op '", node.op(),
                                                     "') of the GraphDef has no name"));
    }
    if (!names.insert(node.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("the GraphDef has two nodes named '", node.name(), "'"));
    }
    if (graph->OperationByName(prefix + node.name()) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", prefix, node.name(), "' already exists in the graph",
                       prefix.empty() ? " (use a prefix to import a second copy)" : ""));
    }
  }
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> staged, StageImport(def, prefix));
  SL_ASSIGN_OR_RETURN(std::vector<Node*> order, staged->BreadthFirstTopologicalOrder(),
                      "the imported GraphDef");

  // Each node's inputs are in the graph before it; a failure takes back what was added.
  size_t num_ops = graph->ops.size();
  std::vector<TF_Operation*> added(staged->num_node_ids(), nullptr);  // By staged node id.
  for (Node* n : order) {
    std::vector<TF_Output> data(n->num_inputs());
    std::vector<TF_Operation*> control;
    for (const Edge* e : n->in_edges()) {
      TF_Operation* src = added[e->src->id()];
      if (e->IsControl()) {
        control.push_back(src);
      } else {
        data[e->dst_input] = TF_Output{src, e->src_output};
      }
    }
    // Moved, not copied (Const values can be large): the staged graph is dropped after this.
    auto op = AddOperationLocked(graph, std::move(*n->mutable_def()), data, control);
    if (!op.ok()) {
      TruncateOperationsLocked(graph, num_ops);
      return op.status();
    }
    added[n->id()] = *op;
  }
  for (const FunctionDef* f : new_functions) *graph->graph.mutable_library()->add_function() = *f;
  return absl::OkStatus();
}

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

int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output, TF_Status* status) {
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
  auto shape = sluice::OutputShape(graph, output);
  if (!shape.ok()) {
    SetStatus(status, sluice::AddContext(shape.status(), "TF_GraphGetTensorShape"));
    return;
  }
  const sluice::PartialShape& s = **shape;
  if (num_dims > 0 && dims == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_GraphGetTensorShape", "dims"));
    return;
  }
  if (s.unknown_rank()) {
    for (int i = 0; i < num_dims; ++i) dims[i] = -1;
    SetStatus(status, absl::OkStatus());
    return;
  }
  if (num_dims != s.rank()) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          "TF_GraphGetTensorShape: '", sluice::OutputName(output), "' has rank ",
                          s.rank(), " but num_dims is ", num_dims)));
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

TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void) {
  return new TF_ImportGraphDefOptions;
}

void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts) { delete opts; }

void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts, const char* prefix) {
  if (opts != nullptr) opts->prefix = prefix != nullptr ? prefix : "";
}

void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                            const TF_ImportGraphDefOptions* options, TF_Status* status) {
  constexpr char kFn[] = "TF_GraphImportGraphDef";
  if (graph == nullptr || graph_def == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, graph == nullptr ? "graph" : "graph_def"));
    return;
  }
  sluice::GraphDef def;
  if (!sluice::ParseFromBytes(graph_def->data, graph_def->length, &def)) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          kFn, ": the buffer (", graph_def->length,
                          " bytes) is not a valid serialized GraphDef")));
    return;
  }
  absl::MutexLock lock(&graph->mu);
  SetStatus(status, sluice::AddContext(sluice::ImportGraphDefLocked(
                                           graph, def, options != nullptr ? options->prefix : ""),
                                       kFn));
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

// Operations, their nodes' NodeDefs and in-edges never change once added: no lock but to map
// an input's node to its operation.

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

TF_Output TF_OperationInput(TF_Input oper_in) {
  const TF_Operation* op = oper_in.oper;
  if (op == nullptr || oper_in.index < 0 || oper_in.index >= op->node->num_inputs()) {
    return TF_Output{nullptr, -1};
  }
  const sluice::Edge* edge = op->node->input_edge(oper_in.index);
  absl::ReaderMutexLock lock(&op->graph->mu);
  return TF_Output{op->graph->OperationOf(edge->src), edge->src_output};
}

int TF_OperationNumControlInputs(TF_Operation* oper) {
  if (oper == nullptr) return 0;
  int n = 0;
  for (const sluice::Edge* e : oper->node->in_edges()) n += e->IsControl() ? 1 : 0;
  return n;
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
