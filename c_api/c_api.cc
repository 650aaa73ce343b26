// The C API over sluice::Session, the op registry and GraphDef. Internals use absl::Status;
// each exported function converts to TF_Status at its boundary and never lets a null pointer
// or malformed input reach code that would crash.
#include "c_api/c_api.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "c_api/c_api_internal.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/shape_inference.h"
#include "proto/attr_value.pb.h"
#include "proto/config.pb.h"

namespace sluice {
namespace {

constexpr char kVersion[] = "0.1.0-sluice";

void SetStatus(TF_Status* status, const absl::Status& s) {
  if (status != nullptr) status->Set(s);
}

absl::Status NullArgument(absl::string_view function, absl::string_view arg) {
  return absl::InvalidArgumentError(absl::StrCat(function, ": '", arg, "' is null"));
}

// Prefixes "node 'name': " unless the message already names the node (most validation
// helpers do), so every graph-building error says which node it is about.
absl::Status NameNode(const absl::Status& s, const NodeDef& node) {
  if (s.ok() || absl::StrContains(s.message(), absl::StrCat("'", node.name(), "'"))) return s;
  return AddContext(s, absl::StrCat("node '", node.name(), "' (op '", node.op(), "')"));
}

void FreeBufferData(void* data, size_t) { std::free(data); }

// Serializes into an empty TF_Buffer; the bytes are released by TF_DeleteBuffer.
absl::Status MessageToBuffer(const google::protobuf::MessageLite& message, TF_Buffer* out) {
  if (out->data != nullptr) {
    return absl::InvalidArgumentError("the output TF_Buffer must be empty (data == NULL)");
  }
  size_t size = message.ByteSizeLong();
  void* data = std::malloc(size > 0 ? size : 1);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory serializing ", size, " bytes"));
  }
  if (!message.SerializeToArray(data, static_cast<int>(size))) {
    std::free(data);
    return absl::InternalError(absl::StrCat("failed to serialize a ", message.GetTypeName()));
  }
  out->data = data;
  out->length = size;
  out->data_deallocator = FreeBufferData;
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> ShapeFromDims(const int64_t* dims, int num_dims) {
  if (num_dims < 0) return absl::InvalidArgumentError(absl::StrCat("negative num_dims ", num_dims));
  if (num_dims > 0 && dims == nullptr) return absl::InvalidArgumentError("dims is null");
  return TensorShape::FromDims(absl::Span<const int64_t>(dims, num_dims));
}

// The number of bytes a tensor of `shape` and fixed-size type `dt` needs, or an error when it
// does not fit in size_t.
absl::StatusOr<size_t> ByteSize(DataType dt, const TensorShape& shape) {
  size_t elem = DataTypeSize(dt);
  uint64_t n = static_cast<uint64_t>(shape.num_elements());
  if (elem != 0 && n > std::numeric_limits<size_t>::max() / elem) {
    return absl::InvalidArgumentError(absl::StrCat("tensor of shape ", shape.DebugString(),
                                                   " is too large"));
  }
  return static_cast<size_t>(n) * elem;
}

// Types a TF_Tensor can hold: fixed-size numerics and bool (strings need a C layout we do
// not offer).
bool CanCrossCApi(DataType dt) { return DataTypeIsSupported(dt) && DataTypeSize(dt) > 0; }

// True when `op` is an operation of `graph` (and not, say, a dangling or foreign pointer that
// happens to be passed in).
bool InGraph(const TF_Graph& graph, const TF_Operation* op) ABSL_SHARED_LOCKS_REQUIRED(graph.mu) {
  if (op == nullptr) return false;
  auto it = graph.by_name.find(op->node_def.name());
  return it != graph.by_name.end() && it->second == op;
}

absl::Status CheckOutput(const TF_Graph& graph, const TF_Output& out, absl::string_view what)
    ABSL_SHARED_LOCKS_REQUIRED(graph.mu) {
  if (out.oper == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, ": operation is null"));
  if (!InGraph(graph, out.oper)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": operation is not in this graph"));
  }
  int n = static_cast<int>(out.oper->output_types.size());
  if (out.index < 0 || out.index >= n) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": output index ", out.index, " is out of range for operation '",
        out.oper->node_def.name(), "' (op '", out.oper->node_def.op(), "'), which has ", n,
        n == 1 ? " output" : " outputs"));
  }
  return absl::OkStatus();
}

absl::Status FinishOperationLocked(TF_OperationDescription* desc, TF_Operation** result)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(desc->graph->mu) {
  TF_Graph* graph = desc->graph;
  NodeDef& node = desc->node_def;
  if (graph->by_name.contains(node.name())) {
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
      types.push_back(in.oper->output_types[in.index]);
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
    for (const auto& a : op_def.input_arg()) absl::StrAppend(&args, args.empty() ? "" : ", ", a.name());
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name(), "' (op '", node.op(), "'): got ", arg_types.size(),
        " input args (TF_AddInput/TF_AddInputList calls) but the op takes ",
        op_def.input_arg_size(), args.empty() ? "" : absl::StrCat(" (", args, ")")));
  }
  SL_RETURN_IF_ERROR(NameNode(InferAttrsFromInputTypes(op_def, arg_types, &node), node));
  SL_ASSIGN_OR_RETURN(std::unique_ptr<TF_Operation> op,
                      BuildOperation(std::move(node), inputs, desc->control_inputs));
  TF_Operation* raw = op.get();
  graph->by_name[raw->node_def.name()] = raw;
  graph->ops.push_back(std::move(op));
  *result = raw;
  return absl::OkStatus();
}

// Orders a GraphDef's nodes so every node follows the nodes it names as inputs.
absl::StatusOr<std::vector<int>> TopologicalOrder(
    const GraphDef& def, const absl::flat_hash_map<std::string, int>& index,
    std::vector<std::vector<TensorId>>* parsed_inputs) {
  int n = def.node_size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  parsed_inputs->assign(n, {});
  for (int i = 0; i < n; ++i) {
    const NodeDef& node = def.node(i);
    for (const std::string& in : node.input()) {
      auto id = ParseTensorName(in);
      if (!id.ok()) return NameNode(id.status(), node);
      auto it = index.find(id->node);
      if (it == index.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", node.name(), "' (op '", node.op(), "'): input '", in,
            "' names a node that is not in the imported GraphDef"));
      }
      ++pending[i];
      consumers[it->second].push_back(i);
      (*parsed_inputs)[i].push_back(*std::move(id));
    }
  }
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) order.push_back(i);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (int c : consumers[order[k]]) {
      if (--pending[c] == 0) order.push_back(c);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the imported GraphDef has a cycle through node '", def.node(i).name(), "'"));
      }
    }
  }
  return order;
}

}  // namespace

absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def, std::string prefix) {
  // Functions join the graph's library; one already there must be the same function.
  std::vector<const FunctionDef*> new_functions;
  for (const FunctionDef& f : def.library().function()) {
    const FunctionDef* existing = nullptr;
    for (const FunctionDef& g : graph->library.function()) {
      if (g.signature().name() == f.signature().name()) existing = &g;
    }
    if (existing == nullptr) {
      new_functions.push_back(&f);
    } else if (existing->SerializeAsString() != f.SerializeAsString()) {
      return absl::InvalidArgumentError(absl::StrCat("the graph already has a different function named '",
                                                     f.signature().name(), "'"));
    }
  }
  if (!prefix.empty() && !absl::EndsWith(prefix, "/")) prefix += '/';
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < def.node_size(); ++i) {
    const NodeDef& node = def.node(i);
    if (node.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", i, " (op '", node.op(),
                                                     "') of the GraphDef has no name"));
    }
    if (!index.emplace(node.name(), i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("the GraphDef has two nodes named '", node.name(), "'"));
    }
    std::string new_name = prefix + node.name();
    if (graph->by_name.contains(new_name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", new_name, "' already exists in the graph", prefix.empty() ? " (use a prefix to import a second copy)" : ""));
    }
  }
  std::vector<std::vector<TensorId>> inputs;
  SL_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(def, index, &inputs));

  // Built first, added together, so a failure leaves the graph as it was.
  std::vector<std::unique_ptr<TF_Operation>> staged(def.node_size());
  for (int i : order) {
    NodeDef node = def.node(i);
    node.set_name(prefix + node.name());
    std::vector<TF_Output> data;
    std::vector<TF_Operation*> control;
    for (const TensorId& id : inputs[i]) {
      TF_Operation* src = staged[index.at(id.node)].get();
      if (id.index == kControlSlot) {
        control.push_back(src);
        continue;
      }
      if (!control.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "': data input '",
                                                       id.ToString(), "' after control inputs"));
      }
      int n = static_cast<int>(src->output_types.size());
      if (id.index >= n) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", node.name(), "' (op '", node.op(), "'): input '", id.ToString(),
            "' is out of range: node '", src->node_def.name(), "' has ", n,
            n == 1 ? " output" : " outputs"));
      }
      data.push_back(TF_Output{src, id.index});
    }
    SL_ASSIGN_OR_RETURN(staged[i], BuildOperation(std::move(node), data, control));
  }
  for (const FunctionDef* f : new_functions) *graph->library.add_function() = *f;
  for (int i : order) {
    TF_Operation* op = staged[i].get();
    graph->by_name[op->node_def.name()] = op;
    graph->ops.push_back(std::move(staged[i]));
  }
  return absl::OkStatus();
}

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
      *delta.add_node() = s->graph->ops[i]->node_def;
    }
    num_functions = s->graph->library.function_size();
    for (int i = s->num_functions_sent; i < num_functions; ++i) {
      *delta.mutable_library()->add_function() = s->graph->library.function(i);
    }
  }
  if (!s->created) {
    SL_RETURN_IF_ERROR(s->session->Create(delta));
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
                        TF_Buffer* run_metadata) {
  constexpr char kFn[] = "TF_SessionRun";
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
  if (run_options != nullptr && run_options->length > 0) {
    if (run_options->data == nullptr ||
        run_options->length > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !options.ParseFromArray(run_options->data, static_cast<int>(run_options->length))) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": run_options is not a valid serialized RunOptions"));
    }
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  {
    absl::ReaderMutexLock lock(&session->graph->mu);
    for (int i = 0; i < ninputs; ++i) {
      SL_RETURN_IF_ERROR(CheckOutput(*session->graph, inputs[i], absl::StrCat(kFn, ": input ", i)));
      if (input_values[i] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(kFn, ": input_values[", i, "] (for '",
                                                       OutputName(inputs[i]), "') is null"));
      }
      feeds.emplace_back(OutputName(inputs[i]), input_values[i]->tensor);
    }
    for (int i = 0; i < noutputs; ++i) {
      SL_RETURN_IF_ERROR(
          CheckOutput(*session->graph, outputs[i], absl::StrCat(kFn, ": output ", i)));
      fetches.push_back(OutputName(outputs[i]));
    }
    for (int i = 0; i < ntargets; ++i) {
      if (!InGraph(*session->graph, target_opers[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            kFn, ": target ", i, target_opers[i] == nullptr ? " is null" : " is not in the session's graph"));
      }
      targets.push_back(target_opers[i]->node_def.name());
    }
  }

  SL_RETURN_IF_ERROR(SyncSessionGraph(session));
  std::vector<Tensor> results;
  RunMetadata metadata;
  SL_RETURN_IF_ERROR(session->session->Run(options, feeds, fetches, targets, &results,
                                           run_metadata != nullptr ? &metadata : nullptr));
  if (static_cast<int>(results.size()) != noutputs) {
    return absl::InternalError(absl::StrCat(kFn, ": the session returned ", results.size(),
                                            " values for ", noutputs, " fetches"));
  }
  for (int i = 0; i < noutputs; ++i) {
    if (!CanCrossCApi(results[i].dtype())) {
      return absl::UnimplementedError(absl::StrCat(
          kFn, ": fetched '", fetches[i], "' has type ", DataTypeString(results[i].dtype()),
          ", which the C API cannot return"));
    }
  }
  if (run_metadata != nullptr) SL_RETURN_IF_ERROR(MessageToBuffer(metadata, run_metadata));
  for (int i = 0; i < noutputs; ++i) {
    // Shares the session's buffer: no copy.
    output_values[i] = new TF_Tensor{std::move(results[i])};
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

absl::StatusOr<const PartialShape*> OutputShape(TF_Graph* graph, const TF_Output& output) {
  if (graph == nullptr) return absl::InvalidArgumentError("the graph is null");
  absl::ReaderMutexLock lock(&graph->mu);
  SL_RETURN_IF_ERROR(CheckOutput(*graph, output, "TF_Output"));
  return &output.oper->output_shapes[output.index];
}

// Records an attr on a description; problems are kept for TF_FinishOperation.
template <typename Fill>
void SetAttr(TF_OperationDescription* desc, const char* attr_name, Fill fill) {
  if (desc == nullptr) return;
  if (attr_name == nullptr) {
    if (desc->deferred.ok()) desc->deferred = absl::InvalidArgumentError("an attr name is null");
    return;
  }
  AttrValue value;
  absl::Status s = fill(&value);
  if (!s.ok()) {
    if (desc->deferred.ok()) {
      desc->deferred = AddContext(s, absl::StrCat("attr '", attr_name, "'"));
    }
    return;
  }
  (*desc->node_def.mutable_attr())[attr_name] = std::move(value);
}

template <typename T>
absl::Status CheckList(const T* values, int n) {
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("negative list length ", n));
  if (n > 0 && values == nullptr) return absl::InvalidArgumentError("list values are null");
  return absl::OkStatus();
}

void ShapeToProto(const int64_t* dims, int num_dims, TensorShapeProto* proto) {
  if (num_dims < 0) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int i = 0; i < num_dims; ++i) proto->add_dim()->set_size(dims[i] < 0 ? -1 : dims[i]);
}

absl::Status TensorToProto(const TF_Tensor* t, TensorProto* proto) {
  if (t == nullptr) return absl::InvalidArgumentError("the tensor is null");
  t->tensor.AsProtoTensorContent(proto);
  return absl::OkStatus();
}

}  // namespace

std::string OutputName(const TF_Output& output) {
  return absl::StrCat(output.oper->node_def.name(), ":", output.index);
}

absl::StatusOr<std::unique_ptr<TF_Operation>> BuildOperation(
    NodeDef node_def, const std::vector<TF_Output>& inputs,
    const std::vector<TF_Operation*>& control_inputs) {
  if (node_def.name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("an operation of type '", node_def.op(),
                                                   "' has an empty name"));
  }
  auto op = std::make_unique<TF_Operation>();
  auto reg = OpRegistry::Global()->LookUp(node_def.op());
  if (!reg.ok()) return NameNode(reg.status(), node_def);
  op->op = *reg;
  const OpDef& op_def = op->op->op_def;

  node_def.clear_input();
  for (const TF_Output& in : inputs) {
    *node_def.add_input() = TensorId{in.oper->node_def.name(), in.index}.ToString();
  }
  for (const TF_Operation* c : control_inputs) {
    *node_def.add_input() = absl::StrCat("^", c->node_def.name());
  }
  AddDefaultsToNodeDef(op_def, &node_def);
  SL_RETURN_IF_ERROR(NameNode(ValidateNodeDef(node_def, op_def), node_def));
  SL_RETURN_IF_ERROR(
      NameNode(InOutTypesForNode(node_def, op_def, &op->input_types, &op->output_types), node_def));
  if (inputs.size() != op->input_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat("node '", node_def.name(), "' (op '",
                                                   node_def.op(), "'): expected ",
                                                   op->input_types.size(), " inputs but got ",
                                                   inputs.size()));
  }
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TF_Operation* src = inputs[i].oper;
    DataType got = src->output_types[inputs[i].index];
    if (got != op->input_types[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node_def.name(), "' (op '", node_def.op(), "'): input ", i, " expects ",
          DataTypeString(op->input_types[i]), " but '", OutputName(inputs[i]), "' is ",
          DataTypeString(got)));
    }
    input_shapes.push_back(src->output_shapes[inputs[i].index]);
    input_tensors.push_back(src->const_value.has_value() ? &*src->const_value : nullptr);
  }
  if (node_def.op() == "Const") {
    Tensor value;
    // A bad value is the kernel's to report; shape inference just goes without it.
    if (GetNodeAttr(AttrSlice(node_def), "value", &value).ok()) op->const_value = std::move(value);
  }
  InferenceContext ctx(node_def, op_def, std::move(input_shapes), std::move(input_tensors),
                       static_cast<int>(op->output_types.size()));
  SL_RETURN_IF_ERROR(NameNode(op->op->shape_fn(&ctx), node_def));
  op->output_shapes = ctx.outputs();
  op->inputs = inputs;
  op->control_inputs = control_inputs;
  op->node_def = std::move(node_def);
  return op;
}

}  // namespace sluice

using sluice::DataType;
using sluice::SetStatus;

extern "C" {

const char* TF_Version(void) { return sluice::kVersion; }

size_t TF_DataTypeSize(TF_DataType dt) {
  return sluice::DataTypeSize(static_cast<DataType>(dt));
}

// ---- Status ----

TF_Status* TF_NewStatus(void) { return new TF_Status; }

void TF_DeleteStatus(TF_Status* s) { delete s; }

void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg) {
  if (s == nullptr) return;
  if (code == TF_OK) {
    s->Set(absl::OkStatus());
    return;
  }
  int c = static_cast<int>(code);
  if (c < 0 || c > static_cast<int>(absl::StatusCode::kUnauthenticated)) c = TF_UNKNOWN;
  s->Set(absl::Status(static_cast<absl::StatusCode>(c), msg != nullptr ? msg : ""));
}

TF_Code TF_GetCode(const TF_Status* s) {
  return s == nullptr ? TF_OK : static_cast<TF_Code>(s->status.code());
}

const char* TF_Message(const TF_Status* s) { return s == nullptr ? "" : s->message.c_str(); }

// ---- Buffers ----

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  auto* buf = new TF_Buffer{nullptr, 0, nullptr};
  if (proto == nullptr || proto_len == 0) return buf;
  void* copy = std::malloc(proto_len);
  if (copy == nullptr) return buf;
  std::memcpy(copy, proto, proto_len);
  buf->data = copy;
  buf->length = proto_len;
  buf->data_deallocator = sluice::FreeBufferData;
  return buf;
}

TF_Buffer* TF_NewBuffer(void) { return new TF_Buffer{nullptr, 0, nullptr}; }

void TF_DeleteBuffer(TF_Buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->data_deallocator != nullptr) {
    buffer->data_deallocator(const_cast<void*>(buffer->data), buffer->length);
  }
  delete buffer;
}

TF_Buffer TF_GetBuffer(TF_Buffer* buffer) {
  return buffer == nullptr ? TF_Buffer{nullptr, 0, nullptr} : *buffer;
}

// ---- Tensors ----

TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims, void* data,
                        size_t len, void (*deallocator)(void* data, size_t len, void* arg),
                        void* deallocator_arg) {
  DataType dt = static_cast<DataType>(dtype);
  if (!sluice::CanCrossCApi(dt)) return nullptr;
  auto shape = sluice::ShapeFromDims(dims, num_dims);
  if (!shape.ok()) return nullptr;
  auto bytes = sluice::ByteSize(dt, *shape);
  if (!bytes.ok() || len < *bytes || (data == nullptr && *bytes > 0)) return nullptr;
  auto buffer = sluice::TensorBuffer::Wrap(
      data, len, [deallocator, deallocator_arg](void* d, size_t n) {
        if (deallocator != nullptr) deallocator(d, n, deallocator_arg);
      });
  return new TF_Tensor{sluice::Tensor(dt, *shape, std::move(buffer))};
}

TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len) {
  DataType dt = static_cast<DataType>(dtype);
  if (!sluice::CanCrossCApi(dt)) return nullptr;
  auto shape = sluice::ShapeFromDims(dims, num_dims);
  if (!shape.ok()) return nullptr;
  auto bytes = sluice::ByteSize(dt, *shape);
  if (!bytes.ok() || len != *bytes) return nullptr;
  auto tensor = sluice::Tensor::Allocate(dt, *shape);
  if (!tensor.ok()) return nullptr;
  return new TF_Tensor{*std::move(tensor)};
}

void TF_DeleteTensor(TF_Tensor* t) { delete t; }

TF_DataType TF_TensorType(const TF_Tensor* t) {
  return t == nullptr ? static_cast<TF_DataType>(0) : static_cast<TF_DataType>(t->tensor.dtype());
}

int TF_NumDims(const TF_Tensor* t) { return t == nullptr ? 0 : t->tensor.dims(); }

int64_t TF_Dim(const TF_Tensor* t, int dim_index) {
  if (t == nullptr || dim_index < 0 || dim_index >= t->tensor.dims()) return -1;
  return t->tensor.dim_size(dim_index);
}

size_t TF_TensorByteSize(const TF_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.AllocatedBytes();
}

void* TF_TensorData(const TF_Tensor* t) { return t == nullptr ? nullptr : t->tensor.raw_data(); }

int64_t TF_TensorElementCount(const TF_Tensor* t) {
  return t == nullptr ? 0 : t->tensor.NumElements();
}

// ---- Session options ----

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
  if ((proto == nullptr && proto_len > 0) ||
      proto_len > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !config.ParseFromArray(proto, static_cast<int>(proto_len))) {
    SetStatus(status, absl::InvalidArgumentError(
                          "TF_SetConfig: the bytes are not a valid serialized ConfigProto"));
    return;
  }
  options->options.config = std::move(config);
  SetStatus(status, absl::OkStatus());
}

void TF_DeleteSessionOptions(TF_SessionOptions* options) { delete options; }

// ---- Graphs ----

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
  auto it = graph->by_name.find(oper_name);
  return it == graph->by_name.end() ? nullptr : it->second;
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
    for (const auto& op : graph->ops) *def.add_node() = op->node_def;
    *def.mutable_library() = graph->library;
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
  if ((graph_def->data == nullptr && graph_def->length > 0) ||
      graph_def->length > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !def.ParseFromArray(graph_def->data, static_cast<int>(graph_def->length))) {
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

// ---- Operations ----

TF_OperationDescription* TF_NewOperation(TF_Graph* graph, const char* op_type,
                                         const char* oper_name) {
  auto* desc = new TF_OperationDescription;
  desc->graph = graph;
  if (op_type != nullptr) desc->node_def.set_op(op_type);
  if (oper_name != nullptr) desc->node_def.set_name(oper_name);
  if (graph == nullptr) {
    desc->deferred = sluice::NullArgument("TF_NewOperation", "graph");
  } else if (op_type == nullptr || *op_type == '\0') {
    desc->deferred = absl::InvalidArgumentError(absl::StrCat(
        "TF_NewOperation: the op type of '", oper_name != nullptr ? oper_name : "", "' is empty"));
  } else if (oper_name == nullptr || *oper_name == '\0') {
    desc->deferred = absl::InvalidArgumentError(
        absl::StrCat("TF_NewOperation: an operation of type '", op_type, "' has an empty name"));
  }
  return desc;
}

void TF_SetDevice(TF_OperationDescription* desc, const char* device) {
  if (desc != nullptr) desc->node_def.set_device(device != nullptr ? device : "");
}

void TF_AddInput(TF_OperationDescription* desc, TF_Output input) {
  if (desc != nullptr) desc->input_args.push_back({input});
}

void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs, int num_inputs) {
  if (desc == nullptr) return;
  absl::Status s = sluice::CheckList(inputs, num_inputs);
  if (!s.ok()) {
    if (desc->deferred.ok()) desc->deferred = sluice::AddContext(s, "TF_AddInputList");
    return;
  }
  desc->input_args.emplace_back(inputs, inputs + num_inputs);
}

void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input) {
  if (desc == nullptr) return;
  if (input == nullptr) {
    if (desc->deferred.ok()) desc->deferred = sluice::NullArgument("TF_AddControlInput", "input");
    return;
  }
  desc->control_inputs.push_back(input);
}

void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name, const void* value,
                      size_t length) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    if (value == nullptr && length > 0) return absl::InvalidArgumentError("the value is null");
    v->set_s(std::string(static_cast<const char*>(value), length));
    return absl::OkStatus();
  });
}

void TF_SetAttrStringList(TF_OperationDescription* desc, const char* attr_name,
                          const void* const* values, const size_t* lengths, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    SL_RETURN_IF_ERROR(sluice::CheckList(lengths, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      if (values[i] == nullptr && lengths[i] > 0) {
        return absl::InvalidArgumentError(absl::StrCat("value ", i, " is null"));
      }
      list->add_s(std::string(static_cast<const char*>(values[i]), lengths[i]));
    }
    return absl::OkStatus();
  });
}

void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name, int64_t value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_i(value);
    return absl::OkStatus();
  });
}

void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name,
                       const int64_t* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();  // An empty list is still a list.
    for (int i = 0; i < num_values; ++i) v->mutable_list()->add_i(values[i]);
    return absl::OkStatus();
  });
}

void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name, float value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_f(value);
    return absl::OkStatus();
  });
}

void TF_SetAttrFloatList(TF_OperationDescription* desc, const char* attr_name,
                         const float* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) v->mutable_list()->add_f(values[i]);
    return absl::OkStatus();
  });
}

void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name, unsigned char value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_b(value != 0);
    return absl::OkStatus();
  });
}

void TF_SetAttrBoolList(TF_OperationDescription* desc, const char* attr_name,
                        const unsigned char* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) v->mutable_list()->add_b(values[i] != 0);
    return absl::OkStatus();
  });
}

void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name, TF_DataType value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_type(static_cast<DataType>(value));
    return absl::OkStatus();
  });
}

void TF_SetAttrTypeList(TF_OperationDescription* desc, const char* attr_name,
                        const TF_DataType* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      v->mutable_list()->add_type(static_cast<DataType>(values[i]));
    }
    return absl::OkStatus();
  });
}

void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name, const int64_t* dims,
                     int num_dims) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    if (num_dims > 0 && dims == nullptr) return absl::InvalidArgumentError("dims is null");
    sluice::ShapeToProto(dims, num_dims, v->mutable_shape());
    return absl::OkStatus();
  });
}

void TF_SetAttrShapeList(TF_OperationDescription* desc, const char* attr_name,
                         const int64_t* const* dims, const int* num_dims, int num_shapes) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(dims, num_shapes));
    SL_RETURN_IF_ERROR(sluice::CheckList(num_dims, num_shapes));
    v->mutable_list();
    for (int i = 0; i < num_shapes; ++i) {
      if (num_dims[i] > 0 && dims[i] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("dims of shape ", i, " are null"));
      }
      sluice::ShapeToProto(dims[i], num_dims[i], v->mutable_list()->add_shape());
    }
    return absl::OkStatus();
  });
}

void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* value,
                      TF_Status* status) {
  if (desc == nullptr || attr_name == nullptr || value == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_SetAttrTensor", desc == nullptr ? "desc"
                                                               : attr_name == nullptr
                                                                   ? "attr_name"
                                                                   : "value"));
    return;
  }
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    return sluice::TensorToProto(value, v->mutable_tensor());
  });
  SetStatus(status, absl::OkStatus());
}

void TF_SetAttrTensorList(TF_OperationDescription* desc, const char* attr_name,
                          TF_Tensor* const* values, int num_values, TF_Status* status) {
  if (desc == nullptr || attr_name == nullptr) {
    SetStatus(status,
              sluice::NullArgument("TF_SetAttrTensorList", desc == nullptr ? "desc" : "attr_name"));
    return;
  }
  absl::Status result = sluice::CheckList(values, num_values);
  for (int i = 0; result.ok() && i < num_values; ++i) {
    if (values[i] == nullptr) result = absl::InvalidArgumentError(absl::StrCat("tensor ", i, " is null"));
  }
  if (!result.ok()) {
    SetStatus(status, sluice::AddContext(result, "TF_SetAttrTensorList"));
    return;
  }
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      SL_RETURN_IF_ERROR(sluice::TensorToProto(values[i], v->mutable_list()->add_tensor()));
    }
    return absl::OkStatus();
  });
  SetStatus(status, absl::OkStatus());
}

void TF_SetAttrValueProto(TF_OperationDescription* desc, const char* attr_name,
                          const void* proto, size_t proto_len, TF_Status* status) {
  if (desc == nullptr || attr_name == nullptr) {
    SetStatus(status,
              sluice::NullArgument("TF_SetAttrValueProto", desc == nullptr ? "desc" : "attr_name"));
    return;
  }
  sluice::AttrValue value;
  if ((proto == nullptr && proto_len > 0) ||
      proto_len > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !value.ParseFromArray(proto, static_cast<int>(proto_len))) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          "TF_SetAttrValueProto: attr '", attr_name,
                          "': the bytes are not a valid serialized AttrValue")));
    return;
  }
  (*desc->node_def.mutable_attr())[attr_name] = std::move(value);
  SetStatus(status, absl::OkStatus());
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

const char* TF_OperationName(TF_Operation* oper) {
  return oper == nullptr ? "" : oper->node_def.name().c_str();
}

const char* TF_OperationOpType(TF_Operation* oper) {
  return oper == nullptr ? "" : oper->node_def.op().c_str();
}

const char* TF_OperationDevice(TF_Operation* oper) {
  return oper == nullptr ? "" : oper->node_def.device().c_str();
}

int TF_OperationNumOutputs(TF_Operation* oper) {
  return oper == nullptr ? 0 : static_cast<int>(oper->output_types.size());
}

TF_DataType TF_OperationOutputType(TF_Output oper_out) {
  const TF_Operation* op = oper_out.oper;
  if (op == nullptr || oper_out.index < 0 ||
      oper_out.index >= static_cast<int>(op->output_types.size())) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(op->output_types[oper_out.index]);
}

int TF_OperationNumInputs(TF_Operation* oper) {
  return oper == nullptr ? 0 : static_cast<int>(oper->inputs.size());
}

TF_DataType TF_OperationInputType(TF_Input oper_in) {
  const TF_Operation* op = oper_in.oper;
  if (op == nullptr || oper_in.index < 0 ||
      oper_in.index >= static_cast<int>(op->input_types.size())) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(op->input_types[oper_in.index]);
}

TF_Output TF_OperationInput(TF_Input oper_in) {
  const TF_Operation* op = oper_in.oper;
  if (op == nullptr || oper_in.index < 0 || oper_in.index >= static_cast<int>(op->inputs.size())) {
    return TF_Output{nullptr, -1};
  }
  return op->inputs[oper_in.index];
}

int TF_OperationNumControlInputs(TF_Operation* oper) {
  return oper == nullptr ? 0 : static_cast<int>(oper->control_inputs.size());
}

void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def, TF_Status* status) {
  if (oper == nullptr || output_node_def == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_OperationToNodeDef",
                                           oper == nullptr ? "oper" : "output_node_def"));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(oper->node_def, output_node_def),
                                       "TF_OperationToNodeDef"));
}

// ---- Sessions ----

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
