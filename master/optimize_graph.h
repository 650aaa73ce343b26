// The master's optimization stage: the optimizer's passes (optimizer/) over a client graph once
// it is placed, before it is partitioned, whatever way the graph arrived.
//
//   SL_ASSIGN_OR_RETURN(OptimizedGraph o, OptimizePlacedGraph(*graph, config, ends, constants));
//   graph = std::move(o.graph);   // partition this one, with o.constants
#ifndef SLUICE_MASTER_OPTIMIZE_GRAPH_H_
#define SLUICE_MASTER_OPTIMIZE_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "framework/graph.h"
#include "framework/hoisted_constants.h"
#include "optimizer/meta_optimizer.h"
#include "proto/config.pb.h"

namespace sluice {

// What the passes must keep and may assume about a client graph.
struct GraphEnds {
  std::vector<std::string> fetches;     // Tensors the client fetches.
  std::vector<std::string> keep_nodes;  // Fetch _Sends and targets.
  absl::flat_hash_map<std::string, PartialShape> feed_shapes;  // Fed tensor -> its placeholder's shape.
};

struct OptimizedGraph {
  std::unique_ptr<Graph> graph;  // Every node placed.
  // The hoisted values its Consts read: `constants` itself when the passes made no large Const.
  std::shared_ptr<const HoistedConstants> constants;
  std::vector<OptimizerPassReport> report;
};

// Runs the passes `config` leaves on over `placed` (each node's device assigned), whose hoisted
// Consts live in `constants`. A node a pass made without a device goes where its first input is.
absl::StatusOr<OptimizedGraph> OptimizePlacedGraph(const Graph& placed, const RewriterConfig& config,
                                                   const GraphEnds& ends,
                                                   std::shared_ptr<const HoistedConstants> constants,
                                                   const std::string& default_device);

}  // namespace sluice

#endif  // SLUICE_MASTER_OPTIMIZE_GRAPH_H_
