#include "optimizer/passes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "framework/checked_size.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "optimizer/rewrite_util.h"
#include "kernels/node_evaluator.h"

namespace sluice {

namespace {

// Folded values past these stay computed at run time: a ConstantOfShape, Expand or Tile of a
// huge shape would bloat the graph (and every copy of it) for little gain.
constexpr uint64_t kMaxFoldedBytes = uint64_t{64} << 20;
constexpr uint64_t kFoldedBytesPerInputByte = 4;  // Casts and dequantizations of weights grow 2-8x.
constexpr uint64_t kAlwaysFoldableBytes = uint64_t{1} << 20;

bool FoldableDtype(DataType dt) { return dt != DT_VARIANT && dt != DT_RESOURCE && dt != DT_INVALID; }

// Ops never evaluated ahead of a run: they are fed, run per step, or run functions.
bool NeverFolded(const NodeDef& n, const OpDef& op) {
  static const auto* never = new absl::flat_hash_set<std::string>{
      "Const", "Placeholder", "PlaceholderWithDefault", "_Arg", "_Retval", "_Send", "_Recv"};
  if (never->contains(n.op()) || op.is_stateful()) return true;
  for (const auto& a : op.attr()) {
    if (a.type() == "func" || a.type() == "list(func)") return true;
  }
  return false;
}

// Shape, Size and Rank of a tensor whose shape is static, computed here: the tensor itself
// need not be constant.
std::optional<Tensor> ShapeFunctionValue(const NodeDef& n, const TensorShape& shape) {
  auto int_attr = [&](const char* name, int64_t fallback) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? fallback : it->second.i();
  };
  auto out_type = [&] {
    auto it = n.attr().find("out_type");
    return it == n.attr().end() ? DT_INT32 : it->second.type();
  };
  auto make = [](DataType dt, std::vector<int64_t> values, bool scalar) -> std::optional<Tensor> {
    Tensor t(dt, scalar ? TensorShape() : TensorShape({static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) {
      if (dt == DT_INT64) {
        t.flat<int64_t>()[i] = values[i];
      } else {
        if (values[i] > std::numeric_limits<int32_t>::max()) return std::nullopt;
        t.flat<int32_t>()[i] = static_cast<int32_t>(values[i]);
      }
    }
    return t;
  };
  const int64_t rank = shape.dims();
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  if (n.op() == "Onnx>Shape") {
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
    const int64_t start = clamp(int_attr("start", 0)), end = clamp(int_attr("end", rank));
    return make(DT_INT64, std::vector<int64_t>(dims.begin() + start, dims.begin() + std::max(start, end)), false);
  }
  if (n.op() == "Shape" && (out_type() == DT_INT32 || out_type() == DT_INT64)) return make(out_type(), dims, false);
  if (n.op() == "Onnx>Size") return make(DT_INT64, {shape.num_elements()}, true);
  if (n.op() == "Size" && (out_type() == DT_INT32 || out_type() == DT_INT64)) {
    return make(out_type(), {shape.num_elements()}, true);
  }
  if (n.op() == "Rank") return make(DT_INT32, {rank}, true);
  return std::nullopt;
}

// Leaves Const `node` its value's dtype and shape only: for a Const that nothing reads any
// more and that is about to be removed. A swap, not Clear(): a cleared proto keeps its
// strings' capacity, and the value with it.
void DropConstValue(NodeDef* node) {
  auto it = node->mutable_attr()->find("value");
  if (it == node->mutable_attr()->end() || it->second.value_case() != AttrValue::kTensor) return;
  TensorProto small;
  small.set_dtype(it->second.tensor().dtype());
  *small.mutable_tensor_shape() = it->second.tensor().tensor_shape();
  it->second.mutable_tensor()->Swap(&small);
}

}  // namespace

namespace {

// The values of node `n` when it folds: run on the values of its inputs (each a Const, or a
// node aliased to one; their names into *sources), or, for a shape-like node of one input
// whose shape is static, from that shape. Nothing when it does not fold.
std::optional<std::vector<Tensor>> FoldedOutputs(const GraphItem& graph,
                                                 const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                                 const absl::flat_hash_map<std::string, std::string>& aliases,
                                                 const NodeDef& n, std::vector<std::string>* sources) {
  std::vector<Tensor> inputs;
  uint64_t input_bytes = 0;
  bool constant = true;
  for (const std::string& in : n.input()) {
    auto id = ParseTensorName(in);
    // A control input orders the node after something that runs: leave it.
    if (!id.ok() || id->index != 0) {
      constant = false;
      break;
    }
    auto alias = aliases.find(id->node);
    const std::string& source = alias == aliases.end() ? id->node : alias->second;
    std::optional<Tensor> v = ConstValue(by_name, graph.hoisted, source);
    if (!v || !FoldableDtype(v->dtype())) {
      constant = false;
      break;
    }
    input_bytes += v->TotalBytes();
    inputs.push_back(*std::move(v));
    sources->push_back(source);
  }
  std::vector<Tensor> outputs;
  if (!constant) {
    sources->clear();
    // Shape-like nodes of tensors whose shape is static fold without their input's value.
    if (n.input_size() != 1) return std::nullopt;
    auto id = ParseTensorName(n.input(0));
    if (!id.ok() || id->index == kControlSlot) return std::nullopt;
    auto shape = graph.shapes.find(TensorId{id->node, id->index}.ToString());
    if (shape == graph.shapes.end() || !shape->second.IsFullyDefined()) return std::nullopt;
    auto dims = TensorShape::FromDims(shape->second.dims());
    if (!dims.ok()) return std::nullopt;
    std::optional<Tensor> v = ShapeFunctionValue(n, *dims);
    if (!v) return std::nullopt;
    outputs.push_back(*std::move(v));
    return outputs;
  }
  const uint64_t limit =
      std::min(kMaxFoldedBytes, std::max(kAlwaysFoldableBytes, kFoldedBytesPerInputByte * input_bytes));
  // A failure leaves the node to fail at run time, as it did unoptimized.
  auto result = (graph.evaluate != nullptr ? graph.evaluate : &EvaluateNode)(n, inputs, 2 * limit);
  if (!result.ok()) return std::nullopt;
  outputs = *std::move(result);
  uint64_t output_bytes = 0;
  bool foldable = !outputs.empty();
  for (const Tensor& t : outputs) {
    output_bytes += t.TotalBytes();
    foldable = foldable && FoldableDtype(t.dtype());
  }
  if (!foldable || output_bytes > limit) return std::nullopt;
  return outputs;
}

absl::StatusOr<int> FoldConstantsOnce(GraphItem* graph) {
  GraphDef& def = graph->graph;
  absl::flat_hash_set<std::string> protected_tensors;
  for (const auto& out : graph->outputs) protected_tensors.insert(Canonical(out));
  absl::flat_hash_map<std::string, NodeDef*> by_name;
  for (NodeDef& n : *def.mutable_node()) by_name[n.name()] = &n;
  // Values are decoded from the Consts as each node reads them and not cached: a cache held a
  // second copy of every weight a fold read (torch's Identity of each shared weight), beside
  // the Consts' protos and the folded results, and the import's peak memory with them.
  // Readers of each node (inputs of any kind); the graph's inputs and outputs are never
  // dropped. A Const that only folded nodes read gives its value's memory back as soon as the
  // last of them has folded, not when the pass ends.
  absl::flat_hash_map<std::string, int> readers;
  absl::flat_hash_set<std::string> pinned, control_read;
  for (const NodeDef& n : def.node()) {
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (!id.ok()) continue;
      ++readers[id->node];
      if (id->index == kControlSlot) control_read.insert(id->node);
    }
  }
  for (const auto& ends : {graph->inputs, graph->outputs}) {
    for (const auto& e : ends) {
      auto id = ParseTensorName(e);
      if (id.ok()) pinned.insert(id->node);
    }
  }
  // A folded node whose value is one of its constant inputs' (Identity: torch reads a weight
  // shared by several layers through one Identity per layer) becomes that input for its
  // readers instead of a copy of it: a copy per reader multiplied the weights in every later
  // copy of the graph and at run time. Folded node -> the Const it reads as.
  absl::flat_hash_map<std::string, std::string> aliases;
  // Outputs k > 0 -> their new Consts; aliased nodes -> their Consts.
  absl::flat_hash_map<std::string, std::string> renamed;
  std::vector<NodeDef> added;
  absl::flat_hash_set<std::string> maybe_unread;  // Consts that folded nodes read.
  int folded = 0;
  // Graph order has every node after its inputs, so chains fold front to back.
  for (NodeDef& n : *def.mutable_node()) {
    auto op = OpRegistry::Global()->LookUpOpDef(n.op());
    if (!op.ok() || NeverFolded(n, **op) || n.input_size() == 0) continue;
    std::vector<std::string> sources;
    std::optional<std::vector<Tensor>> folded_outputs = FoldedOutputs(*graph, by_name, aliases, n, &sources);
    if (!folded_outputs) continue;
    std::vector<Tensor> outputs = *std::move(folded_outputs);
    // Outputs past the first become Consts of their own; one that is a graph output keeps
    // the node as it is.
    bool protected_extra = false;
    for (size_t k = 1; k < outputs.size(); ++k) {
      const std::string extra = TensorId{n.name(), static_cast<int>(k)}.ToString();
      protected_extra = protected_extra || protected_tensors.contains(extra);
    }
    if (protected_extra) continue;
    for (size_t k = 1; k < outputs.size(); ++k) {
      const std::string name = absl::StrCat(n.name(), "/folded_", k);
      if (by_name.contains(name)) {
        protected_extra = true;
        break;
      }
    }
    if (protected_extra) continue;
    for (size_t k = 1; k < outputs.size(); ++k) {
      const std::string name = absl::StrCat(n.name(), "/folded_", k);
      added.push_back(ConstNode(name, n.device(), outputs[k]));
      renamed[TensorId{n.name(), static_cast<int>(k)}.ToString()] = name;
    }
    // The input whose value it is, for an Identity. (Not any output that shares an input's
    // buffer: kernels may write their output over an input they hold the only reference to.)
    const std::string* same = nullptr;
    if (n.op() == "Identity" && sources.size() == 1 && outputs.size() == 1 &&
        !protected_tensors.contains(n.name()) && !control_read.contains(n.name())) {
      same = &sources[0];
    }
    for (const std::string& src : sources) {
      maybe_unread.insert(src);
      --readers[src];
    }
    if (same != nullptr) {
      aliases[n.name()] = *same;
      renamed[n.name()] = *same;
      readers[*same] += readers[n.name()];
    }
    for (const std::string& src : sources) {
      // Removed below with the other unread Consts; its value can go now.
      if (readers[src] == 0 && !pinned.contains(src)) DropConstValue(by_name.at(src));
    }
    // Otherwise the node becomes a Const under its own name, so readers and graph outputs of
    // output 0 stay as they are.
    if (same == nullptr) n = ConstNode(n.name(), n.device(), outputs[0]);
    ++folded;
  }
  if (folded == 0) return 0;
  for (NodeDef& n : *def.mutable_node()) {
    for (std::string& in : *n.mutable_input()) {
      auto it = renamed.find(Canonical(in));
      if (it != renamed.end()) in = it->second;
    }
  }
  for (NodeDef& n : added) *def.add_node() = std::move(n);
  // Constants that only folded nodes read hold no memory any more.
  absl::flat_hash_set<std::string> aliased;  // Their readers read the source now.
  for (const auto& [node, source] : aliases) aliased.insert(node);
  DropUnreadConsts(graph, maybe_unread, aliased);
  return folded;
}

// Rounds of folding past this stop: each needs a node to fold whose shape the previous round
// made known, so real models settle in a few (Swin-T's shape arithmetic took 16).
constexpr int kMaxFoldingRounds = 32;

}  // namespace

absl::StatusOr<int> FoldConstants(GraphItem* graph) {
  int folded = 0;
  for (int round = 0; round < kMaxFoldingRounds; ++round) {
    SL_ASSIGN_OR_RETURN(int now, FoldConstantsOnce(graph));
    folded += now;
    if (now == 0) break;
    // What folded may make more shapes known (a Reshape's shape is a constant now), and with
    // them more Shape nodes foldable.
    InferItemShapes(graph);
  }
  return folded;
}

absl::StatusOr<int> RemoveDeadNodes(GraphItem* graph) {
  GraphDef& def = graph->graph;
  absl::flat_hash_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : def.node()) by_name[n.name()] = &n;
  // Roots: what the outputs name, the inputs (a feed of an unread input must still find its
  // node), the nodes kept by name (a step's targets) and stateful nodes, which run for their
  // effects.
  std::vector<std::string> stack;
  for (const auto& ends : {graph->inputs, graph->outputs}) {
    for (const auto& e : ends) {
      auto id = ParseTensorName(e);
      if (id.ok()) stack.push_back(std::string(id->node));
    }
  }
  for (const std::string& n : graph->keep_nodes) stack.push_back(n);  // Targets and fetch _Sends.
  for (const NodeDef& n : def.node()) {
    absl::StatusOr<const OpDef*> op = OpRegistry::Global()->LookUpOpDef(n.op());
    if (!op.ok() || (*op)->is_stateful()) stack.push_back(n.name());
  }
  absl::flat_hash_set<std::string> live;
  while (!stack.empty()) {
    std::string name = std::move(stack.back());
    stack.pop_back();
    auto it = by_name.find(name);
    if (it == by_name.end() || !live.insert(name).second) continue;
    for (const std::string& in : it->second->input()) {
      auto id = ParseTensorName(in);
      if (id.ok()) stack.push_back(std::string(id->node));
    }
  }
  absl::flat_hash_set<std::string> dead;
  for (const NodeDef& n : def.node()) {
    if (!live.contains(n.name())) dead.insert(n.name());
  }
  if (!dead.empty()) Rewire(&def, {}, dead);
  return static_cast<int>(dead.size());
}

}  // namespace sluice
