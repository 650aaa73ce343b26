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

namespace sluice {

absl::StatusOr<int> FuseChannelShuffles(GraphItem* graph) {
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

absl::StatusOr<int> ReduceMeansToGlobalPools(GraphItem* graph) {
  int rewritten = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  std::vector<NodeDef> added;
  for (NodeDef& n : *def.mutable_node()) {
    if (n.op() != "Onnx>ReduceMean" || n.attr().at("T").type() != DT_FLOAT || n.input_size() < 2) continue;
    auto in_shape = graph->shapes.find(Canonical(n.input(0)));
    if (in_shape == graph->shapes.end() || in_shape->second.rank() != 4) continue;
    std::optional<Tensor> axes = ConstValue(index.by_name, index.hoisted, n.input(1));
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

}  // namespace sluice
