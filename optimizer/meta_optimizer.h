// The meta-optimizer: runs the optimizer's passes (passes.h) over a GraphItem in pipeline order,
// each unless the session's RewriterConfig turns it off, and reports what each did. The master
// runs it on every client graph after placement and before partitioning, however the graph
// arrived (ONNX import, the C API, a GraphDef file, the trainer, a remote CreateSession).
//
//   SL_ASSIGN_OR_RETURN(std::vector<OptimizerPassReport> report,
//                       RunOptimizer(config.graph_options().rewrite_options(), &item));
//   for (const auto& r : report) std::printf("%s: %d\n", r.pass.c_str(), r.rewrites);
#ifndef SLUICE_OPTIMIZER_META_OPTIMIZER_H_
#define SLUICE_OPTIMIZER_META_OPTIMIZER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "optimizer/graph_item.h"
#include "proto/config.pb.h"

namespace sluice {

// One row of the optimizer's report.
struct OptimizerPassReport {
  std::string pass;
  int rewrites = 0;
  int nodes_after = 0;  // The graph's node count once the pass ran.
};

struct OptimizerPass {
  const char* name;     // For RewriterConfig.optimizers / disabled_passes and reports.
  const char* summary;  // One line for `sluice convert --help`.
  // The RewriterConfig toggle that covers it: "constant_folding", "dependency_optimization",
  // "arithmetic_optimization", "remapping" or "layout_optimizer".
  const char* toggle;
  absl::StatusOr<int> (*run)(GraphItem* item);  // Returns the number of rewrites made.
};

// The passes in pipeline order.
const std::vector<OptimizerPass>& OptimizerPasses();

// INVALID_ARGUMENT, listing the passes, when `config` names a pass that does not exist.
absl::Status CheckRewriterConfig(const RewriterConfig& config);

// Whether `config` leaves pass `pass` on.
bool PassEnabled(const RewriterConfig& config, const OptimizerPass& pass);

// Runs every pass `config` leaves on, in order; an empty report when disable_meta_optimizer
// is set. A pass that fails fails the whole run, with the pass's name.
absl::StatusOr<std::vector<OptimizerPassReport>> RunOptimizer(const RewriterConfig& config, GraphItem* item);

// Optimizes a client graph as the master would on one CPU device, for tools that write the
// optimized graph out (`sluice convert`, ONNX Runtime's optimized_model_filepath): `inputs` are
// the fed tensors, `feed_shapes` the shapes runs feed (omit the free ones), `outputs` the
// fetched tensors. The graph is left as imported when disable_meta_optimizer is set.
absl::StatusOr<std::vector<OptimizerPassReport>> OptimizeGraphDef(
    const RewriterConfig& config, const std::vector<std::string>& inputs,
    const absl::flat_hash_map<std::string, PartialShape>& feed_shapes, const std::vector<std::string>& outputs,
    GraphDef* graph);

}  // namespace sluice

#endif  // SLUICE_OPTIMIZER_META_OPTIMIZER_H_
