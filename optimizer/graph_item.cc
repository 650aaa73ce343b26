#include "optimizer/graph_item.h"

#include <functional>
#include <queue>
#include <memory>

#include "absl/container/flat_hash_set.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "ops/op_registry.h"
#include "ops/shape_inference.h"

namespace sluice {
namespace {

// TensorFlow's annotation of a node's output shapes, one per output.
constexpr char kOutputShapesAttr[] = "_output_shapes";

// The dims both shapes agree on; an unknown rank when they contradict each other.
PartialShape Merge(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank()) return b;
  if (b.unknown_rank()) return a;
  if (a.rank() != b.rank()) return PartialShape();
  std::vector<int64_t> dims(a.dims().begin(), a.dims().end());
  for (int i = 0; i < a.rank(); ++i) {
    if (b.dim(i) < 0) continue;
    if (dims[i] >= 0 && dims[i] != b.dim(i)) return PartialShape();
    dims[i] = b.dim(i);
  }
  return PartialShape(absl::MakeConstSpan(dims));
}

std::string Key(const std::string& node, int k) { return TensorId{node, k}.ToString(); }

}  // namespace

void SortTopologically(GraphDef* graph) {
  const int n = graph->node_size();
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < n; ++i) index[graph->node(i).name()] = i;
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> readers(n);
  for (int i = 0; i < n; ++i) {
    for (const std::string& in : graph->node(i).input()) {
      auto id = ParseTensorName(in);
      if (!id.ok()) continue;
      auto it = index.find(id->node);
      if (it == index.end() || it->second == i) continue;
      ++pending[i];
      readers[it->second].push_back(i);
    }
  }
  // Kahn's algorithm, taking the ready node that came first in the given order (a min-heap of
  // indices): a sorted graph keeps its order exactly, and a node that came too early (a feed's
  // _Recv the master appended) moves up to just before its first reader, the rest in place.
  std::vector<int> order;
  order.reserve(n);
  std::vector<bool> placed(n, false);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  int next_unready = 0;
  while (static_cast<int>(order.size()) < n) {
    if (ready.empty()) {
      // A cycle (a loop's back edge): the first node not yet placed goes next.
      while (placed[next_unready]) ++next_unready;
      pending[next_unready] = 0;
      ready.push(next_unready);
    }
    const int i = ready.top();
    ready.pop();
    if (placed[i]) continue;
    placed[i] = true;
    order.push_back(i);
    for (int r : readers[i]) {
      if (--pending[r] == 0 && !placed[r]) ready.push(r);
    }
  }
  bool sorted = true;
  for (int i = 0; i < n && sorted; ++i) sorted = order[i] == i;
  if (sorted) return;
  GraphDef out;
  for (int i : order) graph->mutable_node(i)->Swap(out.add_node());
  graph->mutable_node()->Swap(out.mutable_node());
}

void InferItemShapes(GraphItem* item) {
  const auto& feed_shapes = item->feed_shapes;
  auto& shapes = item->shapes;
  shapes.clear();
  // Values of small inline constants, for shape functions that read them (Reshape's shape).
  absl::flat_hash_map<std::string, std::unique_ptr<Tensor>> values;
  auto shape_of = [&](const std::string& tensor) {
    auto id = ParseTensorName(tensor);
    if (!id.ok()) return PartialShape();
    auto it = shapes.find(Key(std::string(id->node), id->index));
    return it == shapes.end() ? PartialShape() : it->second;
  };
  for (const NodeDef& n : item->graph.node()) {
    auto op = OpRegistry::Global()->LookUp(n.op());
    int num_outputs = 0;
    if (!op.ok() || !NumOutputsForNode(n, (*op)->op_def, &num_outputs).ok() || num_outputs <= 0) continue;
    std::vector<PartialShape> out(num_outputs);
    if (n.op() == "Const") {
      auto v = n.attr().find("value");
      if (v != n.attr().end() && v->second.has_tensor()) {
        out[0] = PartialShape::FromProto(v->second.tensor().tensor_shape());
        if (!IsHoisted(n) && out[0].IsFullyDefined() && out[0].rank() <= 1) {
          auto t = Tensor::FromProto(v->second.tensor());
          if (t.ok() && t->NumElements() <= kMaxInlineConstElements) values[n.name()] = std::make_unique<Tensor>(*std::move(t));
        }
      }
    } else if (n.op() == "_Recv") {
      auto name = n.attr().find("tensor_name");
      if (name != n.attr().end()) {
        auto it = feed_shapes.find(name->second.s());
        if (it != feed_shapes.end()) out[0] = it->second;
      }
    } else {
      std::vector<PartialShape> in;
      std::vector<const Tensor*> in_values;
      for (const std::string& input : n.input()) {
        auto id = ParseTensorName(input);
        if (!id.ok() || id->index == kControlSlot) continue;
        in.push_back(shape_of(input));
        auto v = id->index == 0 ? values.find(id->node) : values.end();
        in_values.push_back(v == values.end() ? nullptr : v->second.get());
      }
      NodeDef complete = n;
      AddDefaultsToNodeDef((*op)->op_def, &complete);
      InferenceContext ctx(complete, (*op)->op_def, std::move(in), std::move(in_values), num_outputs);
      if ((*op)->shape_fn(&ctx).ok() && ctx.num_outputs() == num_outputs) out = ctx.outputs();
    }
    auto hints = n.attr().find(kOutputShapesAttr);
    if (hints != n.attr().end() && hints->second.list().shape_size() == num_outputs) {
      for (int k = 0; k < num_outputs; ++k) out[k] = Merge(out[k], PartialShape::FromProto(hints->second.list().shape(k)));
    }
    for (int k = 0; k < num_outputs; ++k) {
      if (!out[k].unknown_rank()) shapes[Key(n.name(), k)] = std::move(out[k]);
    }
  }
  // Fed tensors: their _Recv carries them in the master; a GraphItem built from a GraphDef
  // (tests, tools) names the fed node itself.
  for (const auto& [tensor, shape] : feed_shapes) {
    auto id = ParseTensorName(tensor);
    if (!id.ok() || shape.unknown_rank()) continue;
    const std::string key = Key(std::string(id->node), id->index);
    shapes[key] = Merge(shapes.contains(key) ? shapes[key] : PartialShape(), shape);
  }
}

}  // namespace sluice
