// What every optimizer pass works on: one GraphDef, the master's own graph written out after
// placement (each node's device set), with what the passes must keep and what they may assume.
// Grappler's GrapplerItem plays this role in TensorFlow.
//
//   GraphItem item;
//   item.graph = placed_graph_def;                 // devices assigned
//   item.outputs = {"logits:0"};                   // fetched: keep their names
//   item.feed_shapes = {{"x:0", PartialShape({1, 3, 224, 224})}};
//   InferItemShapes(&item);
//   SL_ASSIGN_OR_RETURN(auto report, RunOptimizer(config.graph_options().rewrite_options(), &item));
#ifndef SLUICE_OPTIMIZER_GRAPH_ITEM_H_
#define SLUICE_OPTIMIZER_GRAPH_ITEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

#include "absl/container/flat_hash_map.h"
#include "framework/hoisted_constants.h"
#include "framework/tensor_shape.h"
#include "proto/graph.pb.h"

namespace sluice {

struct GraphItem {
  // Nodes in topological order (every node after the nodes it reads), as SortTopologically
  // leaves them; passes keep each rewritten node's device.
  GraphDef graph;
  // Fed tensors ("node:k"): their nodes are never dropped.
  std::vector<std::string> inputs;
  // Fetched tensors: a fused-away node whose output is one stays as an Identity of its name.
  std::vector<std::string> outputs;
  // Nodes run for their effect (targets, fetch _Sends): never dropped.
  std::vector<std::string> keep_nodes;
  // Shapes of tensors of known rank, keyed "node" for output 0 and "node:k" otherwise
  // (InferItemShapes fills them). Constant folding folds Shape, Size and Rank of the fully
  // defined ones, so a shape here must be what every run sees: the master's feeds are checked
  // against their placeholders' shapes.
  absl::flat_hash_map<std::string, PartialShape> shapes;
  // The shapes runs feed, by fed tensor: what InferItemShapes starts from.
  absl::flat_hash_map<std::string, PartialShape> feed_shapes;
  // Values of the Consts marked hoisted (framework/hoisted_constants.h); not owned, may be null.
  const HoistedConstants* hoisted = nullptr;
  // How constant folding runs a node once; null means the kernels' EvaluateNode
  // (kernels/node_evaluator.h). Tests watch folding through it.
  using Evaluator = absl::StatusOr<std::vector<Tensor>> (*)(const NodeDef& node, const std::vector<Tensor>& inputs,
                                                            uint64_t memory_limit_bytes);
  Evaluator evaluate = nullptr;
};

// Orders item->graph's nodes so that each comes after the nodes it reads (data and control),
// keeping the given order among independent nodes; nodes on a cycle (a loop's NextIteration)
// keep their relative order after the rest.
void SortTopologically(GraphDef* graph);

// Fills item->shapes: from each node's `_output_shapes` attr (TensorFlow's annotation, which
// the ONNX frontend writes from ONNX's shape inference), refined by the ops' own shape functions
// (REGISTER_OP(...).SetShapeFn) evaluated in graph order with the values of small constants;
// item->feed_shapes gives the shapes of fed tensors (by fed tensor name, "node:k") and of
// _Recv nodes whose tensor_name attr names one. A hint that contradicts its shape function is
// dropped (neither is trusted); nothing here fails a graph. Replaces what item->shapes held.
void InferItemShapes(GraphItem* item);

}  // namespace sluice

#endif  // SLUICE_OPTIMIZER_GRAPH_ITEM_H_
