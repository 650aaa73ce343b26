#include "frontend/onnx/optimize.h"

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
#include "ops/node_evaluator.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

std::string Canonical(const std::string& t) {
  auto id = ParseTensorName(t);
  return id.ok() ? TensorId{id->node, id->index}.ToString() : t;
}

// The value of a Const node, if `tensor` names one's output.
std::optional<Tensor> ConstValue(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const std::string& tensor) {
  auto id = ParseTensorName(tensor);
  if (!id.ok() || id->index != 0) return std::nullopt;
  auto it = by_name.find(id->node);
  if (it == by_name.end() || it->second->op() != "Const" || !it->second->attr().contains("value")) {
    return std::nullopt;
  }
  auto value = Tensor::FromProto(it->second->attr().at("value").tensor());
  if (!value.ok()) return std::nullopt;
  return *value;
}

// The scalar value of a float Const node, if `tensor` names one.
std::optional<float> ConstScalar(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const std::string& tensor) {
  std::optional<Tensor> value = ConstValue(by_name, tensor);
  if (!value || value->dtype() != DT_FLOAT || value->NumElements() != 1) return std::nullopt;
  return value->flat<float>()[0];
}

NodeDef ConstNode(const std::string& name, const std::string& device, const Tensor& value) {
  NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  n.set_device(device);
  (*n.mutable_attr())["dtype"].set_type(value.dtype());
  value.AsProtoTensorContent((*n.mutable_attr())["value"].mutable_tensor());
  return n;
}

// What the fusing rewrites look up: nodes by name, how many data inputs read each tensor
// ("node:k"), and the graph's outputs, which must keep their names.
struct GraphIndex {
  absl::flat_hash_map<std::string, NodeDef*> by_name;
  absl::flat_hash_map<std::string, int> consumers;
  absl::flat_hash_map<std::string, std::vector<NodeDef*>> readers;  // Once per data input read.
  absl::flat_hash_set<std::string> protected_tensors;
};

GraphIndex IndexGraph(OnnxGraph* graph) {
  GraphIndex index;
  for (NodeDef& n : *graph->graph.mutable_node()) {
    index.by_name[n.name()] = &n;
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (!id.ok() || id->index == kControlSlot) continue;
      const std::string t = TensorId{id->node, id->index}.ToString();
      ++index.consumers[t];
      index.readers[t].push_back(&n);
    }
  }
  for (const auto& out : graph->outputs) index.protected_tensors.insert(Canonical(out.tensor));
  return index;
}

// Turns a fused-away float node into an Identity of `input` under its own name and device, so
// a graph output it was stays fetchable.
void ForwardAs(NodeDef* node, const std::string& input) {
  NodeDef identity;
  identity.set_name(node->name());
  identity.set_op("Identity");
  identity.set_device(node->device());
  identity.add_input(input);
  (*identity.mutable_attr())["T"].set_type(DT_FLOAT);
  *node = std::move(identity);
}

// Drops the nodes whose output 0 is in `renamed` (its readers read the new tensor instead) and
// the nodes in `dropped`.
void Rewire(GraphDef* def, const absl::flat_hash_map<std::string, std::string>& renamed,
            const absl::flat_hash_set<std::string>& dropped) {
  GraphDef kept;
  for (NodeDef& n : *def->mutable_node()) {
    if (renamed.contains(TensorId{n.name(), 0}.ToString()) || dropped.contains(n.name())) continue;
    for (std::string& in : *n.mutable_input()) {
      auto it = renamed.find(Canonical(in));
      if (it != renamed.end()) in = it->second;
    }
    *kept.add_node() = std::move(n);
  }
  def->mutable_node()->Swap(kept.mutable_node());
}

// Drops the Consts in `candidates` that no node, graph input or graph output reads any more
// (weights a rewrite replaced), so they hold no memory; and the nodes in `dropped`, whose readers
// a rewrite already pointed elsewhere (their own reads do not keep a Const).
void DropUnreadConsts(OnnxGraph* graph, const absl::flat_hash_set<std::string>& candidates,
                      const absl::flat_hash_set<std::string>& dropped = {}) {
  GraphDef& def = graph->graph;
  absl::flat_hash_set<std::string> read;
  for (const NodeDef& n : def.node()) {
    if (dropped.contains(n.name())) continue;  // Its reads go with it.
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (id.ok()) read.insert(id->node);
    }
  }
  for (const auto& ends : {graph->inputs, graph->outputs}) {
    for (const auto& e : ends) {
      auto id = ParseTensorName(e.tensor);
      if (id.ok()) read.insert(id->node);
    }
  }
  absl::flat_hash_set<std::string> unread;
  for (const NodeDef& n : def.node()) {
    if (n.op() == "Const" && candidates.contains(n.name()) && !read.contains(n.name())) unread.insert(n.name());
  }
  unread.insert(dropped.begin(), dropped.end());
  if (!unread.empty()) Rewire(&def, {}, unread);
}

}  // namespace

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

absl::StatusOr<int> FoldConstants(OnnxGraph* graph) {
  const NodeEvaluator evaluate = GetNodeEvaluator();
  GraphDef& def = graph->graph;
  absl::flat_hash_set<std::string> protected_tensors;
  for (const auto& out : graph->outputs) protected_tensors.insert(Canonical(out.tensor));
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
      auto id = ParseTensorName(e.tensor);
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
    std::vector<Tensor> inputs;
    std::vector<std::string> sources;
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
      std::optional<Tensor> v = ConstValue(by_name, source);
      if (!v || !FoldableDtype(v->dtype())) {
        constant = false;
        break;
      }
      input_bytes += v->TotalBytes();
      inputs.push_back(*std::move(v));
      sources.push_back(source);
    }
    std::vector<Tensor> outputs;
    if (!constant) {
      // Shape-like nodes of tensors whose shape is static fold without their input's value.
      if (n.input_size() != 1) continue;
      auto id = ParseTensorName(n.input(0));
      if (!id.ok() || id->index == kControlSlot) continue;
      auto shape = graph->shapes.find(TensorId{id->node, id->index}.ToString());
      if (shape == graph->shapes.end() || !shape->second.IsFullyDefined()) continue;
      auto dims = TensorShape::FromDims(shape->second.dims());
      if (!dims.ok()) continue;
      std::optional<Tensor> v = ShapeFunctionValue(n, *dims);
      if (!v) continue;
      outputs.push_back(*std::move(v));
    } else {
      if (evaluate == nullptr) continue;
      const uint64_t limit =
          std::min(kMaxFoldedBytes, std::max(kAlwaysFoldableBytes, kFoldedBytesPerInputByte * input_bytes));
      // A failure leaves the node to fail at run time, as it did unoptimized.
      auto result = evaluate(n, inputs, 2 * limit);
      if (!result.ok()) continue;
      outputs = *std::move(result);
      uint64_t output_bytes = 0;
      bool foldable = !outputs.empty();
      for (const Tensor& t : outputs) {
        output_bytes += t.TotalBytes();
        foldable = foldable && FoldableDtype(t.dtype());
      }
      if (!foldable || output_bytes > limit) continue;
    }
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
    inputs.clear();
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

namespace {

// The 2-D float BatchMatMulV2 (ONNX MatMul) of a rank-2 A (any rank >= 2 if `batched_ok`) and
// a constant 2-D B whose output `tensor` is, read by that one node and not a graph output; B's
// value in `b`.
NodeDef* ConstWeightMatMul(const OnnxGraph& graph, const GraphIndex& index, const std::string& tensor,
                           std::optional<Tensor>* b, bool batched_ok = false) {
  auto src = ParseTensorName(tensor);
  if (!src.ok() || src->index != 0) return nullptr;
  auto it = index.by_name.find(src->node);
  if (it == index.by_name.end()) return nullptr;
  NodeDef* mm = it->second;
  const std::string out = TensorId{mm->name(), 0}.ToString();
  auto readers = index.consumers.find(out);
  if (mm->op() != "BatchMatMulV2" || mm->input_size() != 2 || mm->attr().at("T").type() != DT_FLOAT ||
      mm->attr().at("adj_x").b() || mm->attr().at("adj_y").b() || readers == index.consumers.end() ||
      readers->second != 1 || index.protected_tensors.contains(out)) {
    return nullptr;
  }
  auto a_shape = graph.shapes.find(Canonical(mm->input(0)));
  if (a_shape == graph.shapes.end() || a_shape->second.rank() < 2 || (a_shape->second.rank() > 2 && !batched_ok)) {
    return nullptr;
  }
  *b = ConstValue(index.by_name, mm->input(1));
  if (!*b || (*b)->dtype() != DT_FLOAT || (*b)->dims() != 2) return nullptr;
  return mm;
}

// Turns `node` (keeping its name and device) into Gemm(a, b, c) with the given attrs.
void MakeGemm(NodeDef* node, const std::string& a, const std::string& b, const std::string& c, float alpha,
              float beta, int64_t trans_a, int64_t trans_b) {
  NodeDef gemm;
  gemm.set_name(node->name());
  gemm.set_op("Onnx>Gemm");
  gemm.set_device(node->device());
  gemm.add_input(a);
  gemm.add_input(b);
  gemm.add_input(c);
  auto& attr = *gemm.mutable_attr();
  attr["T"].set_type(DT_FLOAT);
  attr["Tc"].mutable_list()->add_type(DT_FLOAT);
  attr["alpha"].set_f(alpha);
  attr["beta"].set_f(beta);
  attr["transA"].set_i(trans_a);
  attr["transB"].set_i(trans_b);
  *node = std::move(gemm);
}

}  // namespace

absl::StatusOr<int> FuseMatMulAdds(OnnxGraph* graph) {
  int fused = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped;
  // The Reshapes around batched Gemms, each to go right before the node it feeds.
  absl::flat_hash_map<std::string, std::vector<NodeDef>> inserted;
  absl::flat_hash_set<std::string> maybe_unread;  // Biases of rank 3 and more, reshaped.
  for (NodeDef& add : *graph->graph.mutable_node()) {
    if (add.op() != "Add" || add.input_size() != 2 || !add.attr().contains("T") ||
        add.attr().at("T").type() != DT_FLOAT) {
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      std::optional<Tensor> b;
      NodeDef* mm = ConstWeightMatMul(*graph, index, add.input(i), &b, /*batched_ok=*/true);
      std::optional<Tensor> bias = ConstValue(index.by_name, add.input(1 - i));
      if (mm == nullptr || dropped.contains(mm->name()) || !bias || bias->dtype() != DT_FLOAT) continue;
      const PartialShape& a_shape = graph->shapes.at(Canonical(mm->input(0)));
      const int rank = a_shape.rank();
      // A bias of one row (or one value) broadcasts over Gemm's rows as over the Add's.
      const int64_t k = b->dim_size(0), n = b->dim_size(1);
      const int64_t last = bias->dims() == 0 ? 1 : bias->dim_size(bias->dims() - 1);
      const bool row = bias->dims() <= rank && bias->NumElements() == last && (last == n || last == 1);
      if (!row) continue;
      const std::string a_in = mm->input(0), b_in = mm->input(1), c_in = add.input(1 - i);
      if (rank == 2) {
        dropped.insert(mm->name());
        MakeGemm(&add, a_in, b_in, c_in, 1.0f, 1.0f, 0, 0);
        ++fused;
        break;
      }
      // [..., K] x [K, N]: the rows of A as one [rows, K] matrix (Reshape forwards the buffer),
      // one Gemm, and the result's leading dims back. At most one leading dim may be unknown
      // (-1 in the shape); a 0 would read as "copy the input's dim".
      std::vector<int64_t> out_dims(a_shape.dims().begin(), a_shape.dims().end() - 1);
      out_dims.push_back(n);
      const int64_t a_k = a_shape.dim(rank - 1);
      if (std::count(out_dims.begin(), out_dims.end(), -1) > 1 ||
          std::count(out_dims.begin(), out_dims.end(), 0) > 0 || (a_k != k && a_k != -1)) {
        continue;
      }
      const std::string flat_shape = absl::StrCat(add.name(), "/rows_shape"), flat = absl::StrCat(add.name(), "/rows");
      const std::string gemm = absl::StrCat(add.name(), "/gemm"), out_shape = absl::StrCat(add.name(), "/out_shape");
      bool taken = false;
      for (const std::string& name : {flat_shape, flat, gemm, out_shape}) taken = taken || index.by_name.contains(name);
      if (taken) continue;
      auto reshape = [&](const std::string& name, const std::string& in, const std::string& shape) {
        NodeDef r;
        r.set_name(name);
        r.set_op("Onnx>Reshape");
        r.set_device(add.device());
        r.add_input(in);
        r.add_input(shape);
        (*r.mutable_attr())["T"].set_type(DT_FLOAT);
        (*r.mutable_attr())["allowzero"].set_i(0);
        return r;
      };
      const auto int64_vector = [](const std::vector<int64_t>& v) {
        Tensor t(DT_INT64, TensorShape({static_cast<int64_t>(v.size())}));
        for (size_t j = 0; j < v.size(); ++j) t.flat<int64_t>()[j] = v[j];
        return t;
      };
      std::vector<NodeDef>& before = inserted[add.name()];
      std::string c = c_in;
      if (bias->dims() > 2) {  // Gemm's C has rank 2 at most: the row alone.
        c = absl::StrCat(add.name(), "/bias_row");
        if (index.by_name.contains(c)) continue;
        Tensor row_value(DT_FLOAT, TensorShape({last}));
        std::copy_n(bias->data<float>(), last, row_value.data<float>());
        before.push_back(ConstNode(c, add.device(), row_value));
        maybe_unread.insert(ParseTensorName(c_in)->node);
      }
      before.push_back(ConstNode(flat_shape, add.device(), int64_vector({-1, k})));
      before.push_back(reshape(flat, a_in, flat_shape));
      NodeDef g;
      g.set_name(gemm);
      g.set_device(add.device());
      MakeGemm(&g, flat, b_in, c, 1.0f, 1.0f, 0, 0);
      before.push_back(std::move(g));
      before.push_back(ConstNode(out_shape, add.device(), int64_vector(out_dims)));
      int64_t rows = 1;
      for (int d = 0; d + 1 < rank; ++d) rows = a_shape.dim(d) < 0 || rows < 0 ? -1 : rows * a_shape.dim(d);
      graph->shapes[flat] = PartialShape(std::vector<int64_t>{rows, k});
      graph->shapes[gemm] = PartialShape(std::vector<int64_t>{rows, n});
      dropped.insert(mm->name());
      add = reshape(add.name(), gemm, out_shape);
      ++fused;
      break;
    }
  }
  if (!dropped.empty()) Rewire(&graph->graph, {}, dropped);
  if (!inserted.empty()) {
    GraphDef ordered;
    for (NodeDef& n : *graph->graph.mutable_node()) {
      auto it = inserted.find(n.name());
      if (it != inserted.end()) {
        for (NodeDef& m : it->second) *ordered.add_node() = std::move(m);
      }
      *ordered.add_node() = std::move(n);
    }
    graph->graph.mutable_node()->Swap(ordered.mutable_node());
  }
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

absl::StatusOr<int> FoldBatchNormsIntoConvs(OnnxGraph* graph) {
  int folded = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  auto& by_name = index.by_name;
  auto& consumers = index.consumers;
  const auto& protected_tensors = index.protected_tensors;
  absl::flat_hash_map<std::string, std::string> renamed;  // BN output -> Conv output.
  absl::flat_hash_set<std::string> maybe_unread;
  std::vector<NodeDef> added;
  // BatchNormalization of a [rows, N] Gemm or MatMul output normalizes its N columns: B's
  // columns (rows when transB) scale by scale / sqrt(var + epsilon) and C becomes the
  // normalized bias. The producer becomes (or stays) a Gemm with constant B and C.
  auto fold_into_gemm = [&](NodeDef& bn, NodeDef* producer) {
    std::optional<Tensor> b, c;
    float alpha = 1, beta = 1;
    int64_t trans_a = 0, trans_b = 0;
    std::string a_in;
    const std::string out = TensorId{producer->name(), 0}.ToString();
    if (producer->op() == "BatchMatMulV2") {
      if (ConstWeightMatMul(*graph, index, bn.input(0), &b) != producer) return false;
    } else {
      const auto& pa = producer->attr();
      if (pa.at("T").type() != DT_FLOAT || producer->input_size() < 2 || consumers[out] != 1 ||
          protected_tensors.contains(out)) {
        return false;
      }
      b = ConstValue(by_name, producer->input(1));
      alpha = pa.at("alpha").f();
      beta = pa.at("beta").f();
      trans_a = pa.at("transA").i();
      trans_b = pa.at("transB").i();
      if (producer->input_size() > 2) {
        c = ConstValue(by_name, producer->input(2));
        if (!c || c->dtype() != DT_FLOAT) return false;
      }
    }
    if (!b || b->dtype() != DT_FLOAT || b->dims() != 2) return false;
    a_in = producer->input(0);
    const int64_t n = b->dim_size(trans_b ? 0 : 1), k = b->dim_size(trans_b ? 1 : 0);
    // C must be one row (or one value): a full [rows, N] C would stay per row.
    if (c && !(c->NumElements() == 1 ||
               (c->NumElements() == n && (c->dims() == 1 || (c->dims() == 2 && c->dim_size(0) == 1))))) {
      return false;
    }
    std::optional<Tensor> scale = ConstValue(by_name, bn.input(1)), shift = ConstValue(by_name, bn.input(2)),
                          mean = ConstValue(by_name, bn.input(3)), var = ConstValue(by_name, bn.input(4));
    if (!scale || !shift || !mean || !var) return false;
    for (const Tensor* t : {&*scale, &*shift, &*mean, &*var}) {
      if (t->dtype() != DT_FLOAT || t->NumElements() != n) return false;
    }
    const std::string w_name = producer->name() + "/folded_weights", b_name = producer->name() + "/folded_bias";
    if (by_name.contains(w_name) || by_name.contains(b_name)) return false;
    const double epsilon = bn.attr().at("epsilon").f();
    Tensor new_w(DT_FLOAT, b->shape()), new_c(DT_FLOAT, TensorShape({n}));
    for (int64_t j = 0; j < n; ++j) {
      const double factor = scale->flat<float>()[j] / std::sqrt(double{var->flat<float>()[j]} + epsilon);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t at = trans_b ? j * k + i : i * n + j;
        new_w.flat<float>()[at] = static_cast<float>(b->flat<float>()[at] * factor);
      }
      const double c0 = c ? double{beta} * c->flat<float>()[c->NumElements() == 1 ? 0 : j] : 0.0;
      new_c.flat<float>()[j] = static_cast<float>((c0 - mean->flat<float>()[j]) * factor + shift->flat<float>()[j]);
    }
    for (int i = 1; i < producer->input_size() && i < 3; ++i) {
      maybe_unread.insert(ParseTensorName(producer->input(i))->node);
    }
    for (int i = 1; i < 5; ++i) maybe_unread.insert(ParseTensorName(bn.input(i))->node);
    added.push_back(ConstNode(w_name, producer->device(), new_w));
    added.push_back(ConstNode(b_name, producer->device(), new_c));
    MakeGemm(producer, a_in, w_name, b_name, alpha, 1.0f, trans_a, trans_b);
    const std::string bn_out = TensorId{bn.name(), 0}.ToString();
    if (!protected_tensors.contains(bn_out)) renamed[bn_out] = out;
    ForwardAs(&bn, bn.input(0));
    return true;
  };
  for (NodeDef& bn : *def.mutable_node()) {
    if (bn.op() != "Onnx>BatchNormalization" || bn.input_size() != 5) continue;
    const auto& attr = bn.attr();
    if (attr.at("training_mode").b() || !attr.at("spatial").b() || attr.at("T").type() != DT_FLOAT ||
        attr.at("T1").type() != DT_FLOAT || attr.at("T2").type() != DT_FLOAT) {
      continue;
    }
    bool statistics_read = false;  // Outputs 1-4 (training statistics) must be unused.
    for (int k = 1; k < 5; ++k) {
      const std::string t = TensorId{bn.name(), k}.ToString();
      statistics_read = statistics_read || consumers[t] > 0 || protected_tensors.contains(t);
    }
    if (statistics_read) continue;
    auto src = ParseTensorName(bn.input(0));
    if (!src.ok() || src->index != 0 || !by_name.contains(src->node)) continue;
    NodeDef* conv = by_name.at(src->node);
    if (conv->op() == "Onnx>Gemm" || conv->op() == "BatchMatMulV2") {
      folded += fold_into_gemm(bn, conv);
      continue;
    }
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    if (conv->op() != "Onnx>Conv" || conv->attr().at("T").type() != DT_FLOAT || conv->input_size() < 2 ||
        consumers[conv_out] != 1 || protected_tensors.contains(conv_out) ||
        (conv->attr().contains("activation") && !conv->attr().at("activation").s().empty())) {
      continue;
    }
    std::optional<Tensor> w = ConstValue(by_name, conv->input(1));
    std::optional<Tensor> bias = conv->input_size() > 2 ? ConstValue(by_name, conv->input(2)) : std::nullopt;
    std::optional<Tensor> scale = ConstValue(by_name, bn.input(1)), shift = ConstValue(by_name, bn.input(2)),
                          mean = ConstValue(by_name, bn.input(3)), var = ConstValue(by_name, bn.input(4));
    if (!w || !scale || !shift || !mean || !var || (conv->input_size() > 2 && !bias) || w->dims() < 1 ||
        w->dtype() != DT_FLOAT) {
      continue;
    }
    const int64_t m = w->dim_size(0);
    bool shapes_fit = m > 0 && w->NumElements() % m == 0 && (!bias || (bias->dtype() == DT_FLOAT && bias->NumElements() == m));
    for (const Tensor* t : {&*scale, &*shift, &*mean, &*var}) {
      shapes_fit = shapes_fit && t->dtype() == DT_FLOAT && t->NumElements() == m;
    }
    if (!shapes_fit) continue;
    const float epsilon = attr.at("epsilon").f();
    const int64_t per_channel = w->NumElements() / m;
    Tensor new_w(DT_FLOAT, w->shape()), new_b(DT_FLOAT, TensorShape({m}));
    for (int64_t o = 0; o < m; ++o) {
      const double factor = scale->flat<float>()[o] / std::sqrt(double{var->flat<float>()[o]} + epsilon);
      for (int64_t i = 0; i < per_channel; ++i) {
        new_w.flat<float>()[o * per_channel + i] = static_cast<float>(w->flat<float>()[o * per_channel + i] * factor);
      }
      const double b0 = bias ? bias->flat<float>()[o] : 0.0;
      new_b.flat<float>()[o] = static_cast<float>((b0 - mean->flat<float>()[o]) * factor + shift->flat<float>()[o]);
    }
    const std::string w_name = conv->name() + "/folded_weights", b_name = conv->name() + "/folded_bias";
    if (by_name.contains(w_name) || by_name.contains(b_name)) continue;
    // The constants folded in, dropped below unless something else reads them.
    for (int i = 1; i < conv->input_size() && i < 3; ++i) maybe_unread.insert(ParseTensorName(conv->input(i))->node);
    for (int i = 1; i < 5; ++i) maybe_unread.insert(ParseTensorName(bn.input(i))->node);
    added.push_back(ConstNode(w_name, conv->device(), new_w));
    added.push_back(ConstNode(b_name, conv->device(), new_b));
    conv->set_input(1, w_name);
    if (conv->input_size() > 2) {
      conv->set_input(2, b_name);
    } else {
      // The bias list input goes right after W, before any control inputs.
      conv->add_input(b_name);
      for (int i = conv->input_size() - 1; i > 2; --i) conv->mutable_input()->SwapElements(i, i - 1);
      AttrValue tb;
      tb.mutable_list()->add_type(DT_FLOAT);
      (*conv->mutable_attr())["Tb"] = tb;
    }
    const std::string bn_out = TensorId{bn.name(), 0}.ToString();
    if (!protected_tensors.contains(bn_out)) renamed[bn_out] = conv_out;
    // The normalization forwards the Conv's result under its own name (a graph output).
    ForwardAs(&bn, bn.input(0));
    ++folded;
  }
  Rewire(&def, renamed, {});
  for (NodeDef& n : added) *def.add_node() = std::move(n);
  // Constants no node reads any more (the unfolded weights and statistics) hold no memory.
  DropUnreadConsts(graph, maybe_unread);
  return folded;
}

// Pads past this are not folded (far beyond any real image).
constexpr int64_t kMaxFoldedPad = int64_t{1} << 30;

absl::StatusOr<int> FoldPads(OnnxGraph* graph) {
  int folded = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_map<std::string, std::string> renamed;  // Pad output -> its input.
  absl::flat_hash_set<std::string> maybe_unread;
  for (NodeDef& pad : *graph->graph.mutable_node()) {
    if (pad.op() != "Onnx>Pad" || pad.attr().at("mode").s() != "constant" || pad.input_size() < 2 ||
        pad.attr().at("Taxes").list().type_size() != 0) {
      continue;
    }
    const std::string out = TensorId{pad.name(), 0}.ToString();
    if (index.protected_tensors.contains(out)) continue;
    std::optional<Tensor> pads = ConstValue(index.by_name, pad.input(1));
    if (!pads || pads->dtype() != DT_INT64 || pads->NumElements() % 2 != 0 || pads->NumElements() < 6) continue;
    // Zero fill (the default, or a constant zero), before any control inputs.
    if (pad.attr().at("Tvalue").list().type_size() != 0) {
      std::optional<Tensor> value = ConstValue(index.by_name, pad.input(2));
      if (!value || value->NumElements() != 1 || value->dtype() != DT_FLOAT || value->flat<float>()[0] != 0.0f) continue;
    }
    const int64_t rank = pads->NumElements() / 2;
    const auto p = pads->flat<int64_t>();
    bool spatial_only = p[0] == 0 && p[1] == 0 && p[rank] == 0 && p[rank + 1] == 0, any = false;
    for (int64_t i = 0; i < 2 * rank; ++i) {
      // Non-negative, and small enough that adding the reader's own pads cannot overflow (a
      // hostile model's 2^62 stays a Pad, whose kernel refuses it by name).
      spatial_only = spatial_only && p[i] >= 0 && p[i] <= kMaxFoldedPad;
      any = any || p[i] != 0;
    }
    if (!spatial_only) continue;
    if (any) {
      // The one reader takes the padding into its own pads.
      auto readers = index.readers.find(out);
      if (readers == index.readers.end() || readers->second.size() != 1) continue;
      NodeDef* reader = readers->second[0];
      auto& attrs = *reader->mutable_attr();
      if (Canonical(reader->input(0)) != out || !attrs.contains("auto_pad") || attrs.at("auto_pad").s() != "NOTSET") continue;
      std::vector<int64_t> own(2 * (rank - 2), 0);
      const auto& listed = attrs.at("pads").list();
      if (listed.i_size() != 0 && listed.i_size() != static_cast<int>(own.size())) continue;
      bool own_zero = true, own_ok = true;
      for (int i = 0; i < listed.i_size(); ++i) {
        own[i] = listed.i(i);
        own_ok = own_ok && own[i] >= 0 && own[i] <= kMaxFoldedPad;
        own_zero = own_zero && own[i] == 0;
      }
      if (!own_ok) continue;
      if (reader->op() == "Onnx>AveragePool") {
        // Padded zeros count in the mean: what count_include_pad does, when the pool's own
        // padding (if any) is counted too, and no ceil-mode window overhangs the padding.
        if (attrs.at("ceil_mode").i() != 0 || (!own_zero && attrs.at("count_include_pad").i() == 0)) continue;
        attrs["count_include_pad"].set_i(1);
      } else if (reader->op() != "Onnx>Conv") {
        continue;
      }
      AttrValue merged;
      for (int64_t i = 0; i < rank - 2; ++i) merged.mutable_list()->add_i(own[i] + p[2 + i]);
      for (int64_t i = 0; i < rank - 2; ++i) merged.mutable_list()->add_i(own[rank - 2 + i] + p[rank + 2 + i]);
      attrs["pads"] = merged;
    }
    renamed[out] = pad.input(0);
    for (int i = 1; i < pad.input_size(); ++i) {
      auto id = ParseTensorName(pad.input(i));
      if (id.ok()) maybe_unread.insert(id->node);
    }
    ++folded;
  }
  Rewire(&graph->graph, renamed, {});
  DropUnreadConsts(graph, maybe_unread);
  return folded;
}

absl::StatusOr<int> FuseConvActivations(OnnxGraph* graph) {
  int fused = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  auto& by_name = index.by_name;
  auto& consumers = index.consumers;
  const auto& protected_tensors = index.protected_tensors;
  absl::flat_hash_map<std::string, std::string> renamed;
  absl::flat_hash_set<std::string> dropped;  // Nodes no one reads after a fusion (Swish's Sigmoid).
  // The float Conv (with no activation yet) whose output `tensor` is, read by `readers` nodes.
  auto fusable_conv = [&](const std::string& tensor, int readers) -> NodeDef* {
    auto src = ParseTensorName(tensor);
    if (!src.ok() || src->index != 0) return nullptr;
    auto it = by_name.find(src->node);
    if (it == by_name.end()) return nullptr;
    NodeDef* conv = it->second;
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    if (conv->op() != "Onnx>Conv" || conv->attr().at("T").type() != DT_FLOAT || consumers[conv_out] != readers ||
        protected_tensors.contains(conv_out) ||
        (conv->attr().contains("activation") && !conv->attr().at("activation").s().empty())) {
      return nullptr;
    }
    return conv;
  };
  auto float_attr = [](const NodeDef& n, const char* name, float fallback) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? fallback : it->second.f();
  };
  for (NodeDef& act : *def.mutable_node()) {
    if (act.input_size() == 0) continue;
    NodeDef* conv = nullptr;
    // The attr names the activation as ONNX does: "LeakyRelu", not the op "Onnx>LeakyRelu".
    std::string activation(absl::StripPrefix(act.op(), kOnnxOpPrefix));
    AttrValue params;
    params.mutable_list();  // Empty unless the activation has parameters.
    if (act.op() == "Relu" || act.op() == "Onnx>HardSwish" || act.op() == "Sigmoid") {
      conv = fusable_conv(act.input(0), 1);
    } else if (act.op() == "Onnx>LeakyRelu") {
      conv = fusable_conv(act.input(0), 1);
      params.mutable_list()->add_f(float_attr(act, "alpha", 0.01f));
    } else if (act.op() == "Onnx>HardSigmoid") {
      conv = fusable_conv(act.input(0), 1);
      params.mutable_list()->add_f(float_attr(act, "alpha", 0.2f));
      params.mutable_list()->add_f(float_attr(act, "beta", 0.5f));
    } else if (act.op() == "Mul" && act.input_size() == 2 && act.attr().contains("T") &&
               act.attr().at("T").type() == DT_FLOAT) {
      // Swish (SiLU): Mul(y, Sigmoid(y)) of a Conv's y, the Sigmoid read by this Mul only.
      for (int i = 0; i < 2 && conv == nullptr; ++i) {
        auto sig = ParseTensorName(act.input(1 - i));
        if (!sig.ok() || sig->index != 0) continue;
        auto sig_it = by_name.find(sig->node);
        if (sig_it == by_name.end() || sig_it->second->op() != "Sigmoid" || sig_it->second->input_size() != 1) continue;
        const std::string sig_out = TensorId{sig->node, 0}.ToString();
        if (Canonical(sig_it->second->input(0)) != Canonical(act.input(i)) || consumers[sig_out] != 1 ||
            protected_tensors.contains(sig_out)) {
          continue;
        }
        conv = fusable_conv(act.input(i), 2);
        if (conv != nullptr) {
          dropped.insert(sig->node);
          activation = "Swish";
          // The Mul forwards the Conv's output (input 0 below).
          if (i != 0) act.mutable_input()->SwapElements(0, 1);
        }
      }
    } else if (act.op() == "Onnx>Clip") {
      conv = fusable_conv(act.input(0), 1);
      float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
      // Inputs: input, then min and max when present (which ones is in Tmin/Tmax).
      int next = 1;
      for (const char* which : {"Tmin", "Tmax"}) {
        if (conv == nullptr || act.attr().at(which).list().type_size() == 0) continue;
        auto v = ConstScalar(by_name, act.input(next++));
        if (!v) {
          conv = nullptr;
          break;
        }
        (std::string(which) == "Tmin" ? lo : hi) = *v;
      }
      params.mutable_list()->add_f(lo);
      params.mutable_list()->add_f(hi);
    }
    if (conv == nullptr) continue;
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    (*conv->mutable_attr())["activation"].set_s(activation);
    (*conv->mutable_attr())["activation_params"] = params;
    // Readers of the activation read the fused Conv directly; unless it is a graph output, the
    // activation node is then dropped (below).
    const std::string act_out = TensorId{act.name(), 0}.ToString();
    if (!protected_tensors.contains(act_out)) renamed[act_out] = conv_out;
    // The activation node now forwards the fused result under its own name.
    ForwardAs(&act, act.input(0));
    ++fused;
  }
  // Activations nobody reads by name any more go away; their readers read the Conv.
  Rewire(&def, renamed, dropped);
  return fused;
}

absl::StatusOr<int> FuseChannelShuffles(OnnxGraph* graph) {
  int fused = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped;
  auto known = [&](const std::string& tensor) -> const PartialShape* {
    auto it = graph->shapes.find(Canonical(tensor));
    return it == graph->shapes.end() || !it->second.IsFullyDefined() ? nullptr : &it->second;
  };
  // The node producing `tensor` (output 0) if it has `op`, is float, and only `readers` read it.
  auto producer = [&](const std::string& tensor, const char* op) -> NodeDef* {
    auto id = ParseTensorName(tensor);
    if (!id.ok() || id->index != 0) return nullptr;
    auto it = index.by_name.find(id->node);
    if (it == index.by_name.end() || it->second->op() != op || !it->second->attr().contains("T") ||
        it->second->attr().at("T").type() != DT_FLOAT) {
      return nullptr;
    }
    const std::string out = TensorId{id->node, 0}.ToString();
    if (index.consumers[out] != 1 || index.protected_tensors.contains(out)) return nullptr;
    return it->second;
  };
  for (NodeDef& back : *def.mutable_node()) {
    // Reshape([N, C, H, W]) <- Transpose(perm 0,2,1,3,4) <- Reshape([N, g, C/g, H, W]) <- x.
    if (back.op() != "Onnx>Reshape" || back.input_size() != 2 || back.attr().at("T").type() != DT_FLOAT) continue;
    NodeDef* transpose = producer(back.input(0), "Onnx>Transpose");
    if (transpose == nullptr || transpose->input_size() != 1) continue;
    const auto& perm = transpose->attr().at("perm").list();
    if (perm.i_size() != 5 || perm.i(0) != 0 || perm.i(1) != 2 || perm.i(2) != 1 || perm.i(3) != 3 || perm.i(4) != 4) {
      continue;
    }
    NodeDef* split = producer(transpose->input(0), "Onnx>Reshape");
    if (split == nullptr || split->input_size() != 2) continue;
    // The two Reshapes' results (x's own shape may be unknown: ShuffleNet's halves come from
    // Slices of computed bounds; ChannelShuffle reads any x of as many values).
    const PartialShape* grouped = known(transpose->input(0));
    const PartialShape* out = known(TensorId{back.name(), 0}.ToString());
    if (grouped == nullptr || out == nullptr || grouped->rank() != 5 || out->rank() != 4) continue;
    const int64_t g = grouped->dim(1);
    int64_t channels = 0;  // Declared shapes may be anything: g * C/g checked.
    if (grouped->dim(0) != out->dim(0) || g < 1 || !CheckedMul(g, grouped->dim(2), &channels) || channels != out->dim(1) ||
        grouped->dim(3) != out->dim(2) || grouped->dim(4) != out->dim(3)) {
      continue;
    }
    NodeDef shuffle;
    shuffle.set_name(back.name());
    shuffle.set_op("ChannelShuffle");
    shuffle.set_device(back.device());
    shuffle.add_input(split->input(0));
    (*shuffle.mutable_attr())["T"].set_type(DT_FLOAT);
    (*shuffle.mutable_attr())["groups"].set_i(g);
    for (int k = 0; k < 4; ++k) (*shuffle.mutable_attr())["shape"].mutable_list()->add_i(out->dim(k));
    dropped.insert(split->name());
    dropped.insert(transpose->name());
    back = std::move(shuffle);
    ++fused;
  }
  Rewire(&def, {}, dropped);
  return fused;
}

absl::StatusOr<int> ReduceMeansToGlobalPools(OnnxGraph* graph) {
  int rewritten = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  std::vector<NodeDef> added;
  for (NodeDef& n : *def.mutable_node()) {
    if (n.op() != "Onnx>ReduceMean" || n.attr().at("T").type() != DT_FLOAT || n.input_size() < 2) continue;
    auto in_shape = graph->shapes.find(Canonical(n.input(0)));
    if (in_shape == graph->shapes.end() || in_shape->second.rank() != 4) continue;
    std::optional<Tensor> axes = ConstValue(index.by_name, n.input(1));
    if (!axes || axes->dtype() != DT_INT64 || axes->NumElements() != 2) continue;
    int64_t a = axes->flat<int64_t>()[0], b = axes->flat<int64_t>()[1];
    a = a < 0 ? a + 4 : a;
    b = b < 0 ? b + 4 : b;
    if (std::min(a, b) != 2 || std::max(a, b) != 3) continue;
    auto keep = n.attr().find("keepdims");
    const bool keepdims = keep == n.attr().end() || keep->second.b();
    std::vector<std::string> control;  // Control inputs stay on the node that keeps the name.
    for (int i = 2; i < n.input_size(); ++i) control.push_back(n.input(i));
    NodeDef pool;
    pool.set_name(keepdims ? n.name() : n.name() + "/global_pool");
    pool.set_op("Onnx>GlobalAveragePool");
    pool.set_device(n.device());
    pool.add_input(n.input(0));
    (*pool.mutable_attr())["T"].set_type(DT_FLOAT);
    const PartialShape& x = in_shape->second;
    const int64_t pooled_dims[] = {x.dim(0), x.dim(1), 1, 1};
    graph->shapes[TensorId{pool.name(), 0}.ToString()] = PartialShape(absl::MakeConstSpan(pooled_dims));
    NodeDef* kept = &pool;
    NodeDef flatten;
    if (!keepdims) {  // [N, C, 1, 1] -> [N, C].
      flatten.set_name(n.name());
      flatten.set_op("Onnx>Flatten");
      flatten.set_device(n.device());
      flatten.add_input(pool.name());
      (*flatten.mutable_attr())["T"].set_type(DT_FLOAT);
      (*flatten.mutable_attr())["axis"].set_i(1);
      added.push_back(std::move(pool));
      kept = &flatten;
    }
    for (const std::string& c : control) kept->add_input(c);
    n = std::move(*kept);
    ++rewritten;
  }
  for (NodeDef& n : added) *def.add_node() = std::move(n);
  return rewritten;
}

namespace {

// A 2-D float Conv: its kernel_shape has two dims, or its weights are a 4-D constant.
bool IsFloatConv2D(const NodeDef& n, const absl::flat_hash_map<std::string, NodeDef*>& by_name) {
  if (n.op() != "Onnx>Conv" || n.attr().at("T").type() != DT_FLOAT || n.input_size() < 2) return false;
  auto ks = n.attr().find("kernel_shape");
  if (ks != n.attr().end() && ks->second.list().i_size() > 0) return ks->second.list().i_size() == 2;
  auto w = ParseTensorName(n.input(1));
  if (!w.ok()) return false;
  auto it = by_name.find(w->node);
  if (it == by_name.end() || it->second->op() != "Const") return false;
  return it->second->attr().at("value").tensor().tensor_shape().dim_size() == 4;
}

}  // namespace

absl::StatusOr<int> UseNhwcBetweenConvs(OnnxGraph* graph) {
  int rewritten = 0;
  GraphDef& def = graph->graph;
  absl::flat_hash_map<std::string, NodeDef*> by_name;
  for (NodeDef& n : *def.mutable_node()) by_name[n.name()] = &n;
  // Tensor -> (consumer, input index) for data inputs.
  absl::flat_hash_map<std::string, std::vector<std::pair<NodeDef*, int>>> consumers;
  for (NodeDef& n : *def.mutable_node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      auto id = ParseTensorName(n.input(i));
      if (id.ok() && id->index != kControlSlot) consumers[TensorId{id->node, id->index}.ToString()].push_back({&n, i});
    }
  }
  absl::flat_hash_set<std::string> protected_tensors;
  for (const auto& out : graph->outputs) protected_tensors.insert(Canonical(out.tensor));
  auto read = [&](const std::string& tensor) {
    auto it = consumers.find(tensor);
    return it != consumers.end() && !it->second.empty();
  };

  // Nodes that can read and write NHWC. 2-D float convolutions convert at their edges; every
  // other candidate must have NHWC on both sides, so candidates are dropped until every
  // remaining one does. `LayoutInputs` is how many leading inputs carry the layout (the rest,
  // Clip's bounds or a BatchNormalization's statistics, are per-tensor or per-channel).
  auto is_float = [](const NodeDef& n) { return n.attr().contains("T") && n.attr().at("T").type() == DT_FLOAT; };
  auto is_pool = [&](const NodeDef& n) {
    if ((n.op() != "Onnx>AveragePool" && n.op() != "Onnx>MaxPool") || !is_float(n) ||
        n.attr().at("kernel_shape").list().i_size() != 2) {
      return false;
    }
    if (n.op() == "Onnx>AveragePool") return true;
    return n.op() == "Onnx>MaxPool" && !n.attr().at("produce_indices").b() && n.attr().at("storage_order").i() == 0;
  };
  auto is_concat = [&](const NodeDef& n) {
    return n.op() == "Onnx>Concat" && is_float(n) && (n.attr().at("axis").i() == 1 || n.attr().at("axis").i() == -3);
  };
  // Element-wise Add and Mul of two such tensors (residual connections, squeeze-and-excitation
  // scales) and global average pools (whose [N,C,1,1] output is the same in either order).
  auto is_binary = [&](const NodeDef& n) { return (n.op() == "Add" || n.op() == "Mul") && is_float(n); };
  auto is_global_pool = [&](const NodeDef& n) { return n.op() == "Onnx>GlobalAveragePool" && is_float(n); };
  // Element-wise functions of one tensor do not care how its values lie.
  auto is_unary = [&](const NodeDef& n) {
    static const auto* ops = new absl::flat_hash_set<std::string>{
        "Relu", "Sigmoid", "Tanh", "Elu", "Selu", "Neg", "Abs", "Onnx>HardSwish", "Onnx>HardSigmoid",
        "Onnx>LeakyRelu", "Onnx>Clip", "Onnx>Gelu", "Identity"};
    return ops->contains(n.op()) && is_float(n) && n.input_size() >= 1;
  };
  // An inference BatchNormalization of constant statistics whose extra outputs nobody reads:
  // a per-channel scale and shift (ChannelAffineNhwc).
  auto batch_norm_affine = [&](const NodeDef& n) -> std::optional<std::pair<Tensor, Tensor>> {
    if (n.op() != "Onnx>BatchNormalization" || !is_float(n) || n.input_size() != 5 ||
        n.attr().at("training_mode").b() || n.attr().at("T1").type() != DT_FLOAT ||
        n.attr().at("T2").type() != DT_FLOAT) {
      return std::nullopt;
    }
    for (int k = 1; k < 5; ++k) {
      if (read(TensorId{n.name(), k}.ToString())) return std::nullopt;
    }
    std::optional<Tensor> v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = ConstValue(by_name, n.input(k + 1));
      if (!v[k] || v[k]->dtype() != DT_FLOAT || v[k]->dims() != 1 ||
          v[k]->NumElements() != v[0]->NumElements()) {
        return std::nullopt;
      }
    }
    if (by_name.contains(n.name() + "/scale") || by_name.contains(n.name() + "/shift")) return std::nullopt;
    const int64_t c = v[0]->NumElements();
    const float eps = n.attr().at("epsilon").f();
    Tensor scale(DT_FLOAT, TensorShape({c})), shift(DT_FLOAT, TensorShape({c}));
    for (int64_t i = 0; i < c; ++i) {
      const double s = v[0]->flat<float>()[i] / std::sqrt(static_cast<double>(v[3]->flat<float>()[i]) + eps);
      scale.flat<float>()[i] = static_cast<float>(s);
      shift.flat<float>()[i] = static_cast<float>(v[1]->flat<float>()[i] - s * v[2]->flat<float>()[i]);
    }
    return std::make_pair(std::move(scale), std::move(shift));
  };
  // A nearest or linear Resize of H and W only (N and C known and kept), not tf_crop_and_resize.
  auto is_resize = [&](const NodeDef& n) {
    if (n.op() != "Onnx>Resize" || !is_float(n) || n.attr().at("antialias").i() != 0 ||
        n.attr().at("mode").s() == "cubic" ||  // Cubic taps of a kept dim are not one tap.
        n.attr().at("coordinate_transformation_mode").s() == "tf_crop_and_resize") {
      return false;
    }
    auto in = graph->shapes.find(Canonical(n.input(0)));
    auto out = graph->shapes.find(TensorId{n.name(), 0}.ToString());
    if (in == graph->shapes.end() || out == graph->shapes.end() || in->second.rank() != 4 ||
        out->second.rank() != 4) {
      return false;
    }
    return in->second.dim(0) >= 0 && in->second.dim(0) == out->second.dim(0) && in->second.dim(1) >= 0 &&
           in->second.dim(1) == out->second.dim(1);
  };
  auto is_shuffle = [&](const NodeDef& n) { return n.op() == "ChannelShuffle" && is_float(n); };
  // A Slice of channels [begin, end) of a 4-D float tensor of known channels, step 1.
  auto channel_slice = [&](const NodeDef& n) -> std::optional<std::pair<int64_t, int64_t>> {
    if (n.op() != "Onnx>Slice" || !is_float(n) || n.input_size() < 4 || n.input_size() > 5) return std::nullopt;
    auto in = graph->shapes.find(Canonical(n.input(0)));
    if (in == graph->shapes.end() || in->second.rank() != 4 || in->second.dim(1) < 0) return std::nullopt;
    auto int_values = [&](const std::string& tensor) -> std::optional<std::vector<int64_t>> {
      std::optional<Tensor> v = ConstValue(by_name, tensor);
      if (!v || v->dims() != 1) return std::nullopt;
      std::vector<int64_t> out;
      for (int64_t i = 0; i < v->NumElements(); ++i) {
        if (v->dtype() == DT_INT64) out.push_back(v->flat<int64_t>()[i]);
        else if (v->dtype() == DT_INT32) out.push_back(v->flat<int32_t>()[i]);
        else return std::nullopt;
      }
      return out;
    };
    auto starts = int_values(n.input(1)), ends = int_values(n.input(2)), axes = int_values(n.input(3));
    if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
        ((*axes)[0] != 1 && (*axes)[0] != -3)) {
      return std::nullopt;
    }
    if (n.input_size() == 5) {
      auto steps = int_values(n.input(4));
      if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
    }
    const int64_t c = in->second.dim(1);
    auto clamp = [c](int64_t v) { return std::min(std::max(v < 0 ? v + c : v, int64_t{0}), c); };
    const int64_t begin = clamp((*starts)[0]), end = std::max(begin, clamp((*ends)[0]));
    return std::make_pair(begin, end);
  };
  // A 4-D float Transpose between channels-last and N,C,H,W order (ConvNeXt's blocks permute to
  // [N,H,W,C] for their LayerNorm and Linears and back): from an NHWC tensor to [N,H,W,C] (a
  // "sink", perm 0,2,3,1) its values already lie that way, and so do those of a [N,H,W,C] tensor
  // made N,C,H,W (a "source", perm 0,3,1,2): both become NhwcView, which moves no value.
  auto transpose_perm = [&](const NodeDef& n, std::initializer_list<int64_t> want) {
    if (n.op() != "Onnx>Transpose" || !is_float(n) || n.input_size() != 1) return false;
    const auto& perm = n.attr().at("perm").list();
    if (perm.i_size() != static_cast<int>(want.size())) return false;
    int k = 0;
    for (int64_t p : want) {
      if (perm.i(k++) != p) return false;
    }
    return true;
  };
  auto is_sink = [&](const NodeDef& n) { return transpose_perm(n, {0, 2, 3, 1}); };
  auto is_source = [&](const NodeDef& n) { return transpose_perm(n, {0, 3, 1, 2}); };
  // A float Mul of a 4-D tensor of known channels C and a constant of shape [C,1,1] or
  // [1,C,1,1] (ConvNeXt's layer scale): the tensor's input index and the scale, as [C].
  auto find_channel_scale = [&](const NodeDef& n) -> std::optional<std::pair<int, Tensor>> {
    if (n.op() != "Mul" || !is_float(n) || n.input_size() != 2 || by_name.contains(n.name() + "/scale") ||
        by_name.contains(n.name() + "/shift")) {
      return std::nullopt;
    }
    for (int i = 0; i < 2; ++i) {
      std::optional<Tensor> v = ConstValue(by_name, n.input(1 - i));
      auto shape = graph->shapes.find(Canonical(n.input(i)));
      if (!v || v->dtype() != DT_FLOAT || shape == graph->shapes.end() || shape->second.rank() != 4) continue;
      const int64_t c = shape->second.dim(1);
      const bool per_channel = c > 1 && v->NumElements() == c &&
                               ((v->dims() == 3 && v->dim_size(0) == c) || (v->dims() == 4 && v->dim_size(0) == 1 &&
                                                                           v->dim_size(1) == c));
      if (!per_channel) continue;
      Tensor scale(DT_FLOAT, TensorShape({c}));
      std::copy_n(v->flat<float>().data(), c, scale.flat<float>().data());
      return std::make_pair(i, std::move(scale));
    }
    return std::nullopt;
  };
  absl::flat_hash_map<std::string, std::pair<int, Tensor>> channel_scales;  // Looked up once.
  for (const NodeDef& n : def.node()) {
    if (auto scale = find_channel_scale(n)) channel_scales.emplace(n.name(), *std::move(scale));
  }
  auto channel_scale = [&](const NodeDef& n) -> const std::pair<int, Tensor>* {
    auto it = channel_scales.find(n.name());
    return it == channel_scales.end() ? nullptr : &it->second;
  };
  // Whether input `i` of candidate `n` carries the layout (the rest, Clip's bounds or a
  // BatchNormalization's statistics, are per-tensor or per-channel).
  auto carries = [&](const NodeDef& n, int i) {
    if (is_source(n)) return false;
    if (const auto* scale = channel_scale(n)) return i == scale->first;
    return is_concat(n) || is_binary(n) ? i < n.input_size() : i == 0;
  };
  absl::flat_hash_set<std::string> candidates;
  for (const NodeDef& n : def.node()) {
    if (IsFloatConv2D(n, by_name) || is_pool(n) || is_concat(n) || is_binary(n) || is_global_pool(n) ||
        is_unary(n) || batch_norm_affine(n) || is_resize(n) || is_shuffle(n) || channel_slice(n) || is_sink(n) ||
        is_source(n)) {
      candidates.insert(n.name());
    }
  }
  auto nhwc_ok = [&](const std::string& tensor) {
    auto id = ParseTensorName(tensor);
    if (!id.ok() || id->index != 0 || !candidates.contains(id->node) || is_sink(*by_name.at(id->node))) return false;
    const std::string t = TensorId{id->node, 0}.ToString();
    auto it = consumers.find(t);
    if (protected_tensors.contains(t) || it == consumers.end() || it->second.empty()) return false;
    for (const auto& [c, index] : it->second) {
      if (!candidates.contains(c->name()) || !carries(*c, index)) return false;
    }
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const NodeDef& n : def.node()) {
      if (!candidates.contains(n.name()) || n.op() == "Onnx>Conv") continue;
      // A global pool's output is the same in either order, so any node may read it; a sink's
      // is channels-last, in plain order.
      bool ok = n.op() == "Onnx>GlobalAveragePool" || is_sink(n) || nhwc_ok(TensorId{n.name(), 0}.ToString());
      for (int i = 0; ok && i < n.input_size(); ++i) ok = !carries(n, i) || nhwc_ok(n.input(i));
      if (!ok) {
        candidates.erase(n.name());
        changed = true;
      }
    }
  }
  // Each Conv's sides, decided before any reader is rewritten.
  absl::flat_hash_map<std::string, std::pair<bool, bool>> conv_sides;  // (input, output) NHWC.
  for (const NodeDef& n : def.node()) {
    if (candidates.contains(n.name()) && n.op() == "Onnx>Conv") {
      conv_sides[n.name()] = {nhwc_ok(n.input(0)), nhwc_ok(TensorId{n.name(), 0}.ToString())};
    }
  }
  std::vector<NodeDef> added;
  absl::flat_hash_set<std::string> statistics;  // What the normalizations read before.
  // A one-input NHWC node replacing `n` under its name and device: `op` of float `input`, with
  // constant inputs after it named n's name plus their suffix.
  auto nhwc_node = [&](const NodeDef& n, const char* op, const std::string& input,
                       std::initializer_list<std::pair<const char*, const Tensor*>> constants) {
    NodeDef r;
    r.set_name(n.name());
    r.set_op(op);
    r.set_device(n.device());
    r.add_input(input);
    for (const auto& [suffix, value] : constants) {
      const std::string name = n.name() + suffix;
      added.push_back(ConstNode(name, n.device(), *value));
      r.add_input(name);
    }
    (*r.mutable_attr())["T"].set_type(DT_FLOAT);
    return r;
  };
  for (NodeDef& n : *def.mutable_node()) {
    if (!candidates.contains(n.name())) continue;
    if (n.op() == "Onnx>Conv") {
      const auto [in, out] = conv_sides.at(n.name());
      if (out) (*n.mutable_attr())["output_layout"].set_s("NHWC");
      if (in) (*n.mutable_attr())["input_layout"].set_s("NHWC");
      rewritten += out || in;
      continue;
    }
    ++rewritten;
    if (is_unary(n)) continue;  // As it is.
    if (is_sink(n) || is_source(n)) {
      NodeDef view = nhwc_node(n, "NhwcView", n.input(0), {});
      (*view.mutable_attr())["channels_last"].set_b(is_sink(n));
      n = std::move(view);
      continue;
    }
    if (const auto* scale = channel_scale(n)) {  // Mul by a per-channel constant: a channel affine.
      const int64_t c = scale->second.NumElements();
      Tensor shift(DT_FLOAT, TensorShape({c}));
      std::fill_n(shift.flat<float>().data(), c, 0.0f);
      statistics.insert(ParseTensorName(n.input(1 - scale->first))->node);
      n = nhwc_node(n, "ChannelAffineNhwc", n.input(scale->first), {{"/scale", &scale->second}, {"/shift", &shift}});
      continue;
    }
    if (n.op() == "Onnx>MaxPool" || n.op() == "Onnx>AveragePool" || n.op() == "Onnx>Resize" ||
        n.op() == "ChannelShuffle") {
      (*n.mutable_attr())["layout"].set_s("NHWC");
    } else if (n.op() == "Add") {
      n.set_op("AddNhwc");
    } else if (n.op() == "Mul") {
      n.set_op("MulNhwc");
    } else if (n.op() == "Onnx>GlobalAveragePool") {
      n.set_op("GlobalAveragePoolNhwc");
    } else if (n.op() == "Onnx>Slice") {
      const auto [begin, end] = *channel_slice(n);
      NodeDef slice = nhwc_node(n, "SliceChannelsNhwc", n.input(0), {});
      (*slice.mutable_attr())["begin"].set_i(begin);
      (*slice.mutable_attr())["end"].set_i(end);
      n = std::move(slice);
    } else if (n.op() == "Onnx>BatchNormalization") {
      auto [scale, shift] = *batch_norm_affine(n);
      for (int k = 1; k < 5; ++k) statistics.insert(ParseTensorName(n.input(k))->node);
      n = nhwc_node(n, "ChannelAffineNhwc", n.input(0), {{"/scale", &scale}, {"/shift", &shift}});
    } else {
      NodeDef cat;
      cat.set_name(n.name());
      cat.set_op("ConcatChannelsNhwc");
      cat.set_device(n.device());
      *cat.mutable_input() = n.input();
      (*cat.mutable_attr())["N"].set_i(n.input_size());
      (*cat.mutable_attr())["T"].set_type(DT_FLOAT);
      n = cat;
    }
  }
  // A Relu that alone reads a ChannelAffineNhwc (DenseNet's BN -> Relu) runs in the same pass.
  absl::flat_hash_map<std::string, std::string> renamed;
  for (NodeDef& n : *def.mutable_node()) {
    if (n.op() != "Relu" || n.input_size() != 1 || !candidates.contains(n.name())) continue;
    auto id = ParseTensorName(n.input(0));
    if (!id.ok() || id->index != 0) continue;
    auto it = by_name.find(id->node);
    const std::string in = TensorId{id->node, 0}.ToString(), out = TensorId{n.name(), 0}.ToString();
    if (it == by_name.end() || it->second->op() != "ChannelAffineNhwc" || consumers[in].size() != 1 ||
        protected_tensors.contains(out)) {
      continue;
    }
    (*it->second->mutable_attr())["relu"].set_b(true);
    renamed[out] = in;
  }
  if (!renamed.empty()) Rewire(&def, renamed, {});
  for (NodeDef& n : added) *def.add_node() = std::move(n);
  DropUnreadConsts(graph, statistics);
  return rewritten;
}

absl::StatusOr<int> RemoveDeadNodes(OnnxGraph* graph) {
  GraphDef& def = graph->graph;
  absl::flat_hash_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : def.node()) by_name[n.name()] = &n;
  // Roots: what the outputs name, the inputs (a feed of an unread input must still find its
  // node) and stateful nodes, which run for their effects.
  std::vector<std::string> stack;
  for (const auto& ends : {graph->inputs, graph->outputs}) {
    for (const auto& e : ends) {
      auto id = ParseTensorName(e.tensor);
      if (id.ok()) stack.push_back(std::string(id->node));
    }
  }
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

namespace {

// Pattern matching for the fusions below: what the nodes torch exports spell out.

// The node whose output 0 `tensor` is, if it is a float `op`.
NodeDef* FloatProducer(const GraphIndex& index, const std::string& tensor, const char* op) {
  auto id = ParseTensorName(tensor);
  if (!id.ok() || id->index != 0) return nullptr;
  auto it = index.by_name.find(id->node);
  if (it == index.by_name.end()) return nullptr;
  NodeDef* n = it->second;
  if (n->op() != op) return nullptr;
  auto t = n->attr().find("T");
  return t != n->attr().end() && t->second.type() == DT_FLOAT ? n : nullptr;
}

// Whether a fusion may drop `n`: its output 0 is read by exactly `reads` data inputs and is no
// graph output.
bool Internal(const GraphIndex& index, const NodeDef& n, int reads) {
  const std::string out = TensorId{n.name(), 0}.ToString();
  auto it = index.consumers.find(out);
  return it != index.consumers.end() && it->second == reads && !index.protected_tensors.contains(out);
}

// The one node reading output 0 of `n` (once), if it is a float `op`.
NodeDef* SoleReader(const GraphIndex& index, const NodeDef& n, const char* op) {
  if (!Internal(index, n, 1)) return nullptr;
  NodeDef* r = index.readers.at(TensorId{n.name(), 0}.ToString())[0];
  if (r->op() != op) return nullptr;
  auto t = r->attr().find("T");
  return t != r->attr().end() && t->second.type() == DT_FLOAT ? r : nullptr;
}

// The value of a one-element numeric constant (Pow's exponent may be an integer) of rank 0 or
// 1, so that it broadcasts without raising the rank of a tensor of rank 1 or more.
std::optional<double> ConstNumber(const GraphIndex& index, const std::string& tensor) {
  std::optional<Tensor> v = ConstValue(index.by_name, tensor);
  if (!v || v->NumElements() != 1 || v->dims() > 1) return std::nullopt;
  switch (v->dtype()) {
    case DT_FLOAT: return v->flat<float>()[0];
    case DT_DOUBLE: return v->flat<double>()[0];
    case DT_INT32: return v->flat<int32_t>()[0];
    case DT_INT64: return static_cast<double>(v->flat<int64_t>()[0]);
    default: return std::nullopt;
  }
}

// Whether `tensor` is a one-element constant within float rounding of `want`.
bool ConstNear(const GraphIndex& index, const std::string& tensor, double want) {
  std::optional<double> v = ConstNumber(index, tensor);
  return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want);
}

bool SameTensor(const std::string& a, const std::string& b) { return Canonical(a) == Canonical(b); }

// A fused pattern's nodes: those in `span` go (into `dropped`), `kept` becomes the fused node
// under its own name; what any of them read may now be unread.
void DropFusedSpan(const std::vector<NodeDef*>& span, const NodeDef* kept, absl::flat_hash_set<std::string>* dropped,
                   absl::flat_hash_set<std::string>* maybe_unread) {
  for (const NodeDef* n : span) {
    dropped->insert(n->name());
    for (const std::string& in : n->input()) maybe_unread->insert(ParseTensorName(in)->node);
  }
  for (const std::string& in : kept->input()) maybe_unread->insert(ParseTensorName(in)->node);
}

// Of a two-input node, the index of the input that `pred` accepts (the first if both do), or -1.
int InputWhere(const NodeDef& n, const std::function<bool(const std::string&)>& pred) {
  if (n.input_size() != 2) return -1;
  for (int i = 0; i < 2; ++i) {
    if (pred(n.input(i))) return i;
  }
  return -1;
}

// The axis a ReduceMean with keepdims reduces, if it reduces exactly one (from its constant axes
// input), as a negative index when `rank` is unknown (-1).
std::optional<int64_t> ReducedAxis(const GraphIndex& index, const NodeDef& mean, int rank) {
  auto keepdims = mean.attr().find("keepdims");  // Its default is true.
  if (mean.input_size() != 2 || (keepdims != mean.attr().end() && !keepdims->second.b())) return std::nullopt;
  std::optional<Tensor> axes = ConstValue(index.by_name, mean.input(1));
  if (!axes || axes->dtype() != DT_INT64 || axes->NumElements() != 1) return std::nullopt;
  int64_t axis = axes->flat<int64_t>()[0];
  if (rank >= 0 && axis >= 0) axis -= rank;
  return axis;
}

// A per-element constant of the normalized axis (LayerNormalization's scale or bias) from the
// constant `tensor` that an element-wise op applied over the last axis of length `n`: one
// value or n, in a shape that broadcasts over the last axis only.
std::optional<Tensor> PerElement(const GraphIndex& index, const std::string& tensor, int64_t n, int rank) {
  std::optional<Tensor> v = ConstValue(index.by_name, tensor);
  if (!v || v->dtype() != DT_FLOAT || v->dims() > rank) return std::nullopt;
  if (v->NumElements() != n && v->NumElements() != 1) return std::nullopt;
  for (int i = 0; i + 1 < v->dims(); ++i) {
    if (v->dim_size(i) != 1) return std::nullopt;
  }
  Tensor out(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) out.flat<float>()[i] = v->flat<float>()[v->NumElements() == 1 ? 0 : i];
  return out;
}

}  // namespace

absl::StatusOr<int> FuseLayerNorms(OnnxGraph* graph) {
  int fused = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped, maybe_unread;
  std::vector<NodeDef> added;
  for (NodeDef& div : *graph->graph.mutable_node()) {
    // Div(d, Sqrt(Add(ReduceMean(d * d), eps))) with d = Sub(x, ReduceMean(x)).
    if (div.op() != "Div" || div.input_size() != 2 || div.attr().at("T").type() != DT_FLOAT) continue;
    NodeDef* sub = FloatProducer(index, div.input(0), "Sub");
    NodeDef* sqrt = FloatProducer(index, div.input(1), "Sqrt");
    if (sub == nullptr || sqrt == nullptr || !Internal(index, *sqrt, 1)) continue;
    NodeDef* add_eps = FloatProducer(index, sqrt->input(0), "Add");
    if (add_eps == nullptr || !Internal(index, *add_eps, 1)) continue;
    const int eps_at = InputWhere(*add_eps, [&](const std::string& t) { return ConstNumber(index, t).has_value(); });
    if (eps_at < 0) continue;
    const double epsilon = *ConstNumber(index, add_eps->input(eps_at));
    NodeDef* var = FloatProducer(index, add_eps->input(1 - eps_at), "Onnx>ReduceMean");
    NodeDef* mean = FloatProducer(index, sub->input(1), "Onnx>ReduceMean");
    if (var == nullptr || mean == nullptr || !Internal(index, *var, 1) || !Internal(index, *mean, 1) ||
        !SameTensor(mean->input(0), sub->input(0))) {
      continue;
    }
    NodeDef* square = FloatProducer(index, var->input(0), "Pow");
    int d_reads = 2;  // The square's and the Div's.
    if (square != nullptr) {
      if (!SameTensor(square->input(0), div.input(0)) || !ConstNear(index, square->input(1), 2.0)) continue;
    } else {
      square = FloatProducer(index, var->input(0), "Mul");
      if (square == nullptr || !SameTensor(square->input(0), div.input(0)) ||
          !SameTensor(square->input(1), div.input(0))) {
        continue;
      }
      d_reads = 3;
    }
    if (!Internal(index, *square, 1) || !Internal(index, *sub, d_reads)) continue;
    // Both means over the last axis, whose length must be known for the scale and bias.
    const std::string x = sub->input(0);
    auto x_shape = graph->shapes.find(Canonical(x));
    if (x_shape == graph->shapes.end() || x_shape->second.rank() < 1) continue;
    const int rank = x_shape->second.rank();
    const int64_t n = x_shape->second.dim(rank - 1);
    const std::optional<int64_t> axis = ReducedAxis(index, *mean, rank);
    if (n < 1 || !axis || *axis != -1 || ReducedAxis(index, *var, rank) != axis) continue;
    // Then, optionally, Mul by a constant scale and Add of a constant bias.
    const auto other_input = [](const NodeDef& n, const NodeDef& of) {
      return InputWhere(n, [&](const std::string& t) { return !SameTensor(t, of.name()); });
    };
    std::optional<Tensor> scale, bias;
    NodeDef* mul = SoleReader(index, div, "Mul");
    if (mul != nullptr) {
      const int at = other_input(*mul, div);
      if (at < 0 || !(scale = PerElement(index, mul->input(at), n, rank))) mul = nullptr;
    }
    NodeDef* add = mul != nullptr ? SoleReader(index, *mul, "Add") : nullptr;
    if (add != nullptr) {
      const int at = other_input(*add, *mul);
      if (at < 0 || !(bias = PerElement(index, add->input(at), n, rank))) add = nullptr;
    }
    NodeDef* last = add != nullptr ? add : mul != nullptr ? mul : &div;
    const std::string scale_name = absl::StrCat(last->name(), "/layer_norm_scale");
    const std::string bias_name = absl::StrCat(last->name(), "/layer_norm_bias");
    if (index.by_name.contains(scale_name) || index.by_name.contains(bias_name)) continue;
    if (!scale) {
      scale = Tensor(DT_FLOAT, TensorShape({n}));
      for (int64_t i = 0; i < n; ++i) scale->flat<float>()[i] = 1.0f;
    }
    std::vector<NodeDef*> span;
    for (NodeDef* d : {mean, sub, square, var, add_eps, sqrt, &div, mul, add}) {
      if (d != nullptr && d != last) span.push_back(d);
    }
    // The last node becomes the normalization under its own name (output 0 is y).
    DropFusedSpan(span, last, &dropped, &maybe_unread);
    NodeDef ln;
    ln.set_name(last->name());
    ln.set_op("Onnx>LayerNormalization");
    ln.set_device(last->device());
    ln.add_input(x);
    ln.add_input(scale_name);
    added.push_back(ConstNode(scale_name, last->device(), *scale));
    auto& attr = *ln.mutable_attr();
    attr["Tb"].mutable_list();
    if (bias) {
      ln.add_input(bias_name);
      added.push_back(ConstNode(bias_name, last->device(), *bias));
      attr["Tb"].mutable_list()->add_type(DT_FLOAT);
    }
    attr["T"].set_type(DT_FLOAT);
    attr["U"].set_type(DT_FLOAT);
    attr["axis"].set_i(-1);
    attr["epsilon"].set_f(static_cast<float>(epsilon));
    attr["stash_type"].set_i(1);
    *last = std::move(ln);
    ++fused;
  }
  if (fused == 0) return 0;
  Rewire(&graph->graph, {}, dropped);
  for (NodeDef& n : added) *graph->graph.add_node() = std::move(n);
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

namespace {

// The x of torch's tanh GELU inside Tanh: Mul(sqrt(2/pi), Add(x, Mul(0.044715, x^3))), each
// Mul and Add in either order; the nodes it spans go to `span`.
std::optional<std::string> TanhGeluArgument(const GraphIndex& index, const NodeDef& tanh,
                                            std::vector<NodeDef*>* span) {
  NodeDef* scaled = FloatProducer(index, tanh.input(0), "Mul");
  if (scaled == nullptr || !Internal(index, *scaled, 1)) return std::nullopt;
  const int k_at = InputWhere(*scaled, [&](const std::string& t) { return ConstNear(index, t, 0.7978845608028654); });
  if (k_at < 0) return std::nullopt;
  NodeDef* sum = FloatProducer(index, scaled->input(1 - k_at), "Add");
  if (sum == nullptr || !Internal(index, *sum, 1)) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    NodeDef* cubic = FloatProducer(index, sum->input(1 - i), "Mul");
    if (cubic == nullptr || !Internal(index, *cubic, 1)) continue;
    const int c_at = InputWhere(*cubic, [&](const std::string& t) { return ConstNear(index, t, 0.044715); });
    if (c_at < 0) continue;
    const std::string& x = sum->input(i);
    const std::string& cube_out = cubic->input(1 - c_at);
    const auto is_x = [&](const std::string& t) { return SameTensor(t, x); };
    // x^3 as Pow(x, 3), or as torch writes it, Mul(x, Mul(x, x)) in either order.
    if (NodeDef* pow = FloatProducer(index, cube_out, "Pow")) {
      if (!Internal(index, *pow, 1) || !is_x(pow->input(0)) || !ConstNear(index, pow->input(1), 3.0)) continue;
      span->insert(span->end(), {scaled, sum, cubic, pow});
      return x;
    }
    NodeDef* cube = FloatProducer(index, cube_out, "Mul");
    const int x_at = cube == nullptr ? -1 : InputWhere(*cube, is_x);
    NodeDef* square = x_at < 0 ? nullptr : FloatProducer(index, cube->input(1 - x_at), "Mul");
    if (square == nullptr || !Internal(index, *cube, 1) || !Internal(index, *square, 1) ||
        !is_x(square->input(0)) || !is_x(square->input(1))) {
      continue;
    }
    span->insert(span->end(), {scaled, sum, cubic, cube, square});
    return x;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<int> FuseGelus(OnnxGraph* graph) {
  int fused = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped, maybe_unread;
  for (NodeDef& core : *graph->graph.mutable_node()) {
    // Erf(x / sqrt(2)) (or x * 1/sqrt(2)), or Tanh of the tanh form's argument.
    const bool erf = core.op() == "Erf";
    if ((!erf && core.op() != "Tanh") || core.input_size() != 1 || core.attr().at("T").type() != DT_FLOAT) continue;
    std::vector<NodeDef*> span = {&core};
    std::optional<std::string> x;
    if (erf) {
      if (NodeDef* div = FloatProducer(index, core.input(0), "Div")) {
        if (Internal(index, *div, 1) && ConstNear(index, div->input(1), M_SQRT2)) x = div->input(0);
        span.push_back(div);
      } else if (NodeDef* mul = FloatProducer(index, core.input(0), "Mul")) {
        const int at = InputWhere(*mul, [&](const std::string& t) { return ConstNear(index, t, M_SQRT1_2); });
        if (at >= 0 && Internal(index, *mul, 1)) x = mul->input(1 - at);
        span.push_back(mul);
      }
    } else {
      x = TanhGeluArgument(index, core, &span);
    }
    // x of rank 0 would take the rank of a [1] constant.
    auto x_shape = x ? graph->shapes.find(Canonical(*x)) : graph->shapes.end();
    if (x_shape == graph->shapes.end() || x_shape->second.rank() < 1) continue;
    // Then Add(core, 1), and the product of that, x and 0.5 in any of the three groupings.
    NodeDef* one_plus = SoleReader(index, core, "Add");
    if (one_plus == nullptr ||
        InputWhere(*one_plus, [&](const std::string& t) { return ConstNear(index, t, 1.0); }) < 0) {
      continue;
    }
    span.push_back(one_plus);
    NodeDef* product = SoleReader(index, *one_plus, "Mul");
    if (product == nullptr) continue;
    const std::string& other = product->input(SameTensor(product->input(0), one_plus->name()) ? 1 : 0);
    const auto is_half = [&](const std::string& t) { return ConstNear(index, t, 0.5); };
    const auto is_x = [&](const std::string& t) { return SameTensor(t, *x); };
    NodeDef* y = nullptr;
    if (is_x(other)) {  // (x * (1 + erf)) * 0.5
      y = SoleReader(index, *product, "Mul");
      if (y != nullptr && InputWhere(*y, is_half) < 0) y = nullptr;
      span.push_back(product);
    } else if (is_half(other)) {  // x * ((1 + erf) * 0.5)
      y = SoleReader(index, *product, "Mul");
      if (y != nullptr && InputWhere(*y, is_x) < 0) y = nullptr;
      span.push_back(product);
    } else if (NodeDef* half_x = FloatProducer(index, other, "Mul")) {  // (x * 0.5) * (1 + erf)
      if (Internal(index, *half_x, 1) && InputWhere(*half_x, is_half) >= 0 && InputWhere(*half_x, is_x) >= 0) {
        y = product;
        span.push_back(half_x);
      }
    }
    if (y == nullptr) continue;
    DropFusedSpan(span, y, &dropped, &maybe_unread);
    NodeDef gelu;
    gelu.set_name(y->name());
    gelu.set_op("Onnx>Gelu");
    gelu.set_device(y->device());
    gelu.add_input(*x);
    (*gelu.mutable_attr())["T"].set_type(DT_FLOAT);
    (*gelu.mutable_attr())["approximate"].set_s(erf ? "none" : "tanh");
    *y = std::move(gelu);
    ++fused;
  }
  if (fused == 0) return 0;
  Rewire(&graph->graph, {}, dropped);
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

absl::StatusOr<int> FoldTransposesIntoMatMuls(OnnxGraph* graph) {
  int folded = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped;
  for (NodeDef& mm : *graph->graph.mutable_node()) {
    if (mm.op() != "BatchMatMulV2" || mm.input_size() != 2 || mm.attr().at("T").type() != DT_FLOAT ||
        mm.attr().at("adj_y").b()) {
      continue;
    }
    NodeDef* t = FloatProducer(index, mm.input(1), "Onnx>Transpose");
    if (t == nullptr || !Internal(index, *t, 1) || dropped.contains(t->name())) continue;
    auto shape = graph->shapes.find(Canonical(t->input(0)));
    if (shape == graph->shapes.end() || shape->second.rank() < 2) continue;
    const int rank = shape->second.rank();
    std::vector<int64_t> perm(t->attr().at("perm").list().i().begin(), t->attr().at("perm").list().i().end());
    if (perm.empty()) {
      for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int>(perm.size()) != rank) continue;
    // Transpose(y, perm) is Transpose(y, perm') with its last two axes swapped, perm' = perm with
    // its last two entries swapped. Worth it when perm moves y's innermost axis off the end and
    // perm' keeps it there: rows then copy whole (or not at all, when perm' is the identity).
    if (perm[rank - 2] != rank - 1) continue;
    std::swap(perm[rank - 2], perm[rank - 1]);
    bool identity = true;
    for (int i = 0; i < rank; ++i) identity = identity && perm[i] == i;
    (*mm.mutable_attr())["adj_y"].set_b(true);
    if (identity) {
      mm.set_input(1, t->input(0));
      dropped.insert(t->name());
    } else {
      auto* list = (*t->mutable_attr())["perm"].mutable_list();
      list->clear_i();
      for (int64_t p : perm) list->add_i(p);
      std::vector<int64_t> dims;
      for (int i = 0; i < rank; ++i) dims.push_back(shape->second.dim(perm[i]));
      graph->shapes[Canonical(t->name())] = PartialShape(dims);
    }
    ++folded;
  }
  if (!dropped.empty()) Rewire(&graph->graph, {}, dropped);
  return folded;
}

absl::StatusOr<int> FuseConvResiduals(OnnxGraph* graph) {
  int fused = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_map<std::string, std::string> renamed;  // Add output -> the Conv's.
  auto known_shape = [&](const std::string& tensor) -> const PartialShape* {
    auto it = graph->shapes.find(Canonical(tensor));
    return it == graph->shapes.end() || !it->second.IsFullyDefined() ? nullptr : &it->second;
  };
  for (NodeDef& add : *def.mutable_node()) {
    if ((add.op() != "Add" && add.op() != "AddNhwc") || add.input_size() != 2 || add.attr().at("T").type() != DT_FLOAT ||
        SameTensor(add.input(0), add.input(1))) {
      continue;
    }
    const PartialShape* out_shape = known_shape(TensorId{add.name(), 0}.ToString());
    for (int i = 0; i < 2 && out_shape != nullptr; ++i) {
      NodeDef* conv = FloatProducer(index, add.input(i), "Onnx>Conv");
      if (conv == nullptr || !Internal(index, *conv, 1)) continue;
      auto& attrs = *conv->mutable_attr();
      if ((attrs.contains("activation") && !attrs.at("activation").s().empty()) ||
          (attrs.contains("Tr") && attrs.at("Tr").list().type_size() > 0)) {
        continue;
      }
      // No broadcasting: the Conv's output, the other operand and the sum have one shape.
      const PartialShape* conv_shape = known_shape(add.input(i));
      const PartialShape* other_shape = known_shape(add.input(1 - i));
      if (conv_shape == nullptr || other_shape == nullptr || !(*conv_shape == *out_shape) ||
          !(*other_shape == *out_shape)) {
        continue;
      }
      // The residual goes after X, W and the bias, before any control inputs.
      const int at = 2 + attrs.at("Tb").list().type_size();
      conv->add_input(add.input(1 - i));
      for (int k = conv->input_size() - 1; k > at; --k) conv->mutable_input()->SwapElements(k, k - 1);
      attrs["Tr"].mutable_list()->add_type(DT_FLOAT);
      const std::string conv_out = TensorId{conv->name(), 0}.ToString(), add_out = TensorId{add.name(), 0}.ToString();
      if (!index.protected_tensors.contains(add_out)) renamed[add_out] = conv_out;
      graph->shapes[conv_out] = *out_shape;
      ForwardAs(&add, conv_out);
      ++fused;
      break;
    }
  }
  Rewire(&def, renamed, {});
  // The activation after the sum (ResNet's Relu) now follows the Conv directly.
  if (fused > 0) SL_RETURN_IF_ERROR(FuseConvActivations(graph).status());
  return fused;
}

const std::vector<OptimizerPass>& OptimizerPasses() {
  static const auto* passes = new std::vector<OptimizerPass>{
      {"constant_folding", "evaluate nodes of constant inputs (and Shape of static shapes) into Consts",
       FoldConstants},
      {"remove_dead_nodes", "drop nodes no output, input or stateful node needs", RemoveDeadNodes},
      {"fuse_layer_norm", "fuse LayerNorms spelled out as ReduceMean, Sub, Pow, Sqrt, Div, Mul and Add",
       FuseLayerNorms},
      {"fuse_gelu", "fuse GELUs spelled out with Erf or Tanh into Gelu nodes", FuseGelus},
      {"fuse_matmul_add", "fuse MatMuls of constant 2-D weights and the Adds of a constant bias into Gemms",
       FuseMatMulAdds},
      {"fold_transpose_matmul", "fold a Transpose that swaps MatMul's right operand's last two axes into adj_y",
       FoldTransposesIntoMatMuls},
      {"fold_pads", "fold zero-filled spatial Pads into the Convs and AveragePools that read them", FoldPads},
      {"fold_batch_norms", "fold inference BatchNormalizations into the Convs, Gemms and MatMuls they follow",
       FoldBatchNormsIntoConvs},
      {"fuse_conv_activations", "fuse Relu, LeakyRelu, Clip, HardSwish, HardSigmoid, Sigmoid and Swish into Convs",
       FuseConvActivations},
      {"fuse_channel_shuffle",
       "fuse Reshape [N,g,C/g,H,W], Transpose of axes 1 and 2 and Reshape back into one ChannelShuffle",
       FuseChannelShuffles},
      {"reduce_mean_to_global_pool",
       "turn ReduceMeans over the spatial axes of 4-D tensors into GlobalAveragePools (and a Flatten)",
       ReduceMeansToGlobalPools},
      {"nhwc_layout",
       "keep tensors between Convs in NHWC through pools, Concats, Adds, Muls, element-wise functions and "
       "inference BatchNormalizations",
       UseNhwcBetweenConvs},
      {"fuse_conv_residual",
       "fuse an Add of a Conv's output and a tensor of its shape (a residual connection) into the Conv, and the "
       "activation after it",
       FuseConvResiduals},
  };
  return *passes;
}

absl::StatusOr<std::vector<OptimizerPassReport>> OptimizeOnnxGraph(OnnxGraph* graph,
                                                                   const std::vector<std::string>& disabled) {
  for (const std::string& name : disabled) {
    bool known = false;
    for (const OptimizerPass& p : OptimizerPasses()) known = known || name == p.name;
    if (!known) {
      std::vector<std::string> names;
      for (const OptimizerPass& p : OptimizerPasses()) names.push_back(p.name);
      return absl::InvalidArgumentError(
          absl::StrCat("no optimizer pass '", name, "'; the passes are ", absl::StrJoin(names, ", ")));
    }
  }
  std::vector<OptimizerPassReport> report;
  for (const OptimizerPass& p : OptimizerPasses()) {
    if (std::find(disabled.begin(), disabled.end(), p.name) != disabled.end()) continue;
    SL_ASSIGN_OR_RETURN(int rewrites, p.run(graph), "optimizer pass ", p.name);
    report.push_back({p.name, rewrites, graph->graph.node_size()});
  }
  return report;
}

}  // namespace sluice
