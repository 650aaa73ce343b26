#include <optional>
#include <string>

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
  if (fused > 0) Rewire(&graph->graph, {}, dropped);
  return fused;
}

}  // namespace sluice
