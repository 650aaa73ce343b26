#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/shape_inference.h"
#include "optimizer/passes.h"
#include "optimizer/rewrite_util.h"

namespace sluice {
namespace {

// The node whose output 0 `tensor` is, if it has `op`.
NodeDef* Producer(const GraphIndex& index, const std::string& tensor, const char* op) {
  auto id = ParseTensorName(tensor);
  if (!id.ok() || id->index != 0) return nullptr;
  auto it = index.by_name.find(id->node);
  return it != index.by_name.end() && it->second->op() == op ? it->second : nullptr;
}

DataType TypeAttr(const NodeDef& n, const char* name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? DT_INVALID : it->second.type();
}

std::string StringAttr(const NodeDef& n, const char* name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? std::string() : it->second.s();
}

}  // namespace

absl::StatusOr<int> FuseVariableUpdates(GraphItem* graph) {
  GraphIndex index = IndexGraph(graph);
  // Nodes something orders itself after, or that a step runs for themselves: never dropped.
  absl::flat_hash_set<std::string> pinned(graph->keep_nodes.begin(), graph->keep_nodes.end());
  for (const NodeDef& n : graph->graph.node()) {
    for (const std::string& in : n.input()) {
      if (!in.empty() && in[0] == '^') pinned.insert(in.substr(1));
    }
  }
  auto shape_of = [&](const std::string& tensor) -> const PartialShape* {
    auto it = graph->shapes.find(Canonical(tensor));
    return it == graph->shapes.end() || !it->second.IsFullyDefined() ? nullptr : &it->second;
  };
  // A Sub or Mul the rewrite may drop: of a float or double, read once, by data only.
  auto droppable = [&](const NodeDef& n, DataType dtype) {
    return TypeAttr(n, "T") == dtype && n.input_size() == 2 && Internal(index, n, 1) && !pinned.contains(n.name());
  };
  // Of Mul(a, b) = lr * g: {lr, g} when one operand is a single value of rank at most the
  // variable's and the other has the variable's shape, so that the product is g scaled. With
  // `broadcast_ok` (ApplyGradientDescentVariable broadcasts g as Sub did), g's shape may be
  // unknown or broadcast to the variable's.
  auto rate_and_gradient = [&](const NodeDef& mul, const PartialShape& var,
                               bool broadcast_ok) -> std::optional<std::pair<std::string, std::string>> {
    for (int r = 0; r < 2; ++r) {
      const PartialShape* rate = shape_of(mul.input(r));
      const PartialShape* grad = shape_of(mul.input(1 - r));
      if (rate == nullptr || rate->rank() > var.rank()) continue;
      if (!broadcast_ok && (grad == nullptr || !(*grad == var))) continue;
      if (grad != nullptr && !(*grad == var)) {
        absl::StatusOr<PartialShape> both = BroadcastShapes(var, *grad);
        if (!both.ok() || !(*both == var)) continue;
      }
      bool one = true;
      for (int d = 0; d < rate->rank(); ++d) one = one && rate->dim(d) == 1;
      if (one) return std::make_pair(mul.input(r), mul.input(1 - r));
    }
    return std::nullopt;
  };
  absl::flat_hash_set<std::string> dropped;
  int fused = 0;
  for (NodeDef& assign : *graph->graph.mutable_node()) {
    const bool own = assign.op() == "AssignVariable";          // By shared_name.
    const bool tf_assign = assign.op() == "AssignVariableOp";  // By resource handle.
    const bool tf_sub = assign.op() == "AssignSubVariableOp";
    if (!own && !tf_assign && !tf_sub) continue;
    const int value_input = own ? 0 : 1;
    if (assign.input_size() <= value_input || assign.input(value_input).empty() ||
        assign.input(value_input)[0] == '^') {
      continue;
    }
    const DataType dtype = TypeAttr(assign, "dtype");
    if (dtype != DT_FLOAT && dtype != DT_DOUBLE) continue;
    NodeDef* read = nullptr;
    NodeDef* mul = nullptr;
    NodeDef* sub = nullptr;
    if (tf_sub) {
      // AssignSubVariableOp(h, Mul(lr, g)).
      mul = Producer(index, assign.input(1), "Mul");
    } else {
      // Assign(Sub(Read(the same variable), Mul(lr, g))).
      sub = Producer(index, assign.input(value_input), "Sub");
      if (sub == nullptr || !droppable(*sub, dtype)) continue;
      if (own) {
        read = Producer(index, sub->input(0), "ReadVariable");
        if (read == nullptr || StringAttr(*read, "shared_name") != StringAttr(assign, "shared_name") ||
            read->device() != assign.device()) {
          continue;
        }
      } else {
        read = Producer(index, sub->input(0), "ReadVariableOp");
        if (read == nullptr || read->input_size() < 1 || !SameTensor(read->input(0), assign.input(0))) continue;
      }
      mul = Producer(index, sub->input(1), "Mul");
    }
    if (mul == nullptr || TypeAttr(*mul, "T") != dtype || mul->input_size() != 2) continue;
    // The variable's shape: the read's, else (TensorFlow's) the VarHandleOp's shape attr.
    const PartialShape* var = read != nullptr ? shape_of(read->name()) : nullptr;
    std::optional<PartialShape> declared;
    if (var == nullptr && !own) {
      const NodeDef* handle = Producer(index, assign.input(0), "VarHandleOp");
      if (handle != nullptr && handle->attr().contains("shape") && handle->attr().at("shape").has_shape()) {
        declared = PartialShape::FromProto(handle->attr().at("shape").shape());
        if (declared->IsFullyDefined()) var = &*declared;
      }
    }
    if (var == nullptr) continue;
    auto operands = rate_and_gradient(*mul, *var, /*broadcast_ok=*/own);
    if (!operands) continue;
    const bool keep_mul = !droppable(*mul, dtype) || dropped.contains(mul->name());

    NodeDef fused_node;
    fused_node.set_name(assign.name());
    fused_node.set_device(assign.device());
    if (own) {
      fused_node.set_op("ApplyGradientDescentVariable");
      AddNodeAttr("shared_name", StringAttr(assign, "shared_name"), &fused_node);
    } else {
      fused_node.set_op("ResourceApplyGradientDescent");
      fused_node.add_input(assign.input(0));
      AddNodeAttr("use_locking", true, &fused_node);
    }
    AddNodeAttr("T", dtype, &fused_node);
    fused_node.add_input(operands->first);
    fused_node.add_input(operands->second);
    for (const std::string& in : assign.input()) {
      if (!in.empty() && in[0] == '^') fused_node.add_input(in);
    }
    // Every read of the variable that the Sub ordered before the update stays before it.
    if (read != nullptr) fused_node.add_input("^" + read->name());
    if (sub != nullptr) dropped.insert(sub->name());
    if (!keep_mul) dropped.insert(mul->name());
    assign = std::move(fused_node);
    ++fused;
  }
  // ONNX's optimizers: Onnx>Adagrad/Momentum/Adam whose X... and state inputs are reads of
  // variables and whose every output is assigned back to the variable its input read.
  for (NodeDef& opt : *graph->graph.mutable_node()) {
    int states = 0;
    std::string fused_op;
    if (opt.op() == "Onnx>Adagrad") {
      states = 1, fused_op = "ApplyOnnxAdagrad";
    } else if (opt.op() == "Onnx>Momentum") {
      states = 1, fused_op = "ApplyOnnxMomentum";
    } else if (opt.op() == "Onnx>Adam") {
      states = 2, fused_op = "ApplyOnnxAdam";
    } else {
      continue;
    }
    int data_inputs = 0;
    while (data_inputs < opt.input_size() && !opt.input(data_inputs).empty() && opt.input(data_inputs)[0] != '^') {
      ++data_inputs;
    }
    const int total = data_inputs - 2;
    if (total <= 0 || total % (2 + states) != 0) continue;
    const int n = total / (2 + states);
    const int outputs = n * (1 + states);
    // Output k is the new value of the variable input 2 + k (k < n: X) or 2 + n + k (state) read.
    std::vector<std::string> names;
    std::vector<NodeDef*> reads, assigns;
    absl::flat_hash_set<std::string> distinct;
    bool ok = true;
    for (int k = 0; k < outputs && ok; ++k) {
      NodeDef* read = Producer(index, opt.input(k < n ? 2 + k : 2 + n + k), "ReadVariable");
      const std::string out = TensorId{opt.name(), k}.ToString();
      auto readers = index.readers.find(out);
      ok = read != nullptr && readers != index.readers.end() && readers->second.size() == 1 &&
           !index.protected_tensors.contains(out) && !index.protected_tensors.contains(Canonical(out));
      if (!ok) break;
      NodeDef* assign = readers->second[0];
      const std::string name = StringAttr(*read, "shared_name");
      ok = assign->op() == "AssignVariable" && assign->input_size() >= 1 && SameTensor(assign->input(0), out) &&
           StringAttr(*assign, "shared_name") == name && assign->device() == read->device() &&
           read->device() == (reads.empty() ? read->device() : reads[0]->device()) && distinct.insert(name).second &&
           !dropped.contains(assign->name());
      names.push_back(name);
      reads.push_back(read);
      assigns.push_back(assign);
    }
    if (!ok) continue;
    NodeDef fused_node;
    fused_node.set_name(opt.name());
    fused_node.set_op(fused_op);
    fused_node.set_device(reads[0]->device());
    for (int i = 0; i < 2; ++i) fused_node.add_input(opt.input(i));
    for (int i = 0; i < n; ++i) fused_node.add_input(opt.input(2 + n + i));
    for (int i = data_inputs; i < opt.input_size(); ++i) fused_node.add_input(opt.input(i));
    // After every read the optimizer consumed, and whatever each assign waited for.
    for (const NodeDef* read : reads) fused_node.add_input("^" + read->name());
    for (const NodeDef* assign : assigns) {
      for (const std::string& in : assign->input()) {
        if (!in.empty() && in[0] == '^') fused_node.add_input(in);
      }
    }
    for (const auto& [key, value] : opt.attr()) {
      if (key != "N" && key != "M") (*fused_node.mutable_attr())[key] = value;
    }
    AddNodeAttr("N", static_cast<int64_t>(n), &fused_node);
    AddNodeAttr("shared_names", names, &fused_node);
    // Each assign (a step's target) becomes a NoOp after the update, under its own name.
    for (NodeDef* assign : assigns) {
      NodeDef done;
      done.set_name(assign->name());
      done.set_op("NoOp");
      done.set_device(assign->device());
      done.add_input("^" + opt.name());
      *assign = std::move(done);
    }
    opt = std::move(fused_node);
    ++fused;
  }
  if (fused > 0) Rewire(&graph->graph, {}, dropped);
  if (fused > 0) SortTopologically(&graph->graph);
  return fused;
}

}  // namespace sluice
