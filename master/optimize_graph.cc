#include "master/optimize_graph.h"

#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

absl::StatusOr<OptimizedGraph> OptimizePlacedGraph(const Graph& placed, const RewriterConfig& config,
                                                   const GraphEnds& ends,
                                                   std::shared_ptr<const HoistedConstants> constants,
                                                   const std::string& default_device) {
  GraphItem item;
  placed.ToGraphDef(&item.graph);
  SortTopologically(&item.graph);
  item.outputs = ends.fetches;
  item.keep_nodes = ends.keep_nodes;
  for (const auto& [name, shape] : ends.feed_shapes) item.inputs.push_back(name);
  item.hoisted = constants.get();
  item.feed_shapes = ends.feed_shapes;
  InferItemShapes(&item);
  OptimizedGraph out;
  SL_ASSIGN_OR_RETURN(out.report, RunOptimizer(config, &item));

  absl::flat_hash_map<std::string, std::string> device_of;
  for (NodeDef& n : *item.graph.mutable_node()) {
    if (n.device().empty()) {
      std::string device = default_device;
      if (n.input_size() > 0) {
        auto id = ParseTensorName(n.input(0));
        auto it = id.ok() ? device_of.find(id->node) : device_of.end();
        if (it != device_of.end()) device = it->second;
      }
      n.set_device(device);
    }
    device_of[n.name()] = n.device();
  }
  // Large Consts the passes made (folded weights) join a copy of the session's table, whose
  // buffers it shares, so the GraphDefs registered on the workers stay small.
  HoistedConstants made;
  HoistConstants(&item.graph, &made);
  if (!made.empty()) {
    auto table = constants == nullptr ? std::make_shared<HoistedConstants>()
                                      : std::make_shared<HoistedConstants>(*constants);
    for (auto& [name, value] : made) (*table)[name] = std::move(value);
    constants = std::move(table);
  }
  out.constants = std::move(constants);
  SL_ASSIGN_OR_RETURN(out.graph, Graph::FromGraphDef(item.graph, *OpRegistry::Global()), "the optimized graph");
  for (Node* n : out.graph->nodes()) n->set_assigned_device(n->def().device());
  return out;
}

}  // namespace sluice
