// How graph rewrites above the kernels (the ONNX optimizer's constant folding) run one node on
// constant inputs without depending on the kernels layer: the kernels install the evaluator
// (kernels/node_evaluator.cc, linked with //kernels:cpu_kernels), so a binary that has kernels
// folds constants and one that has none simply folds nothing.
//
//   NodeEvaluator eval = GetNodeEvaluator();
//   if (eval != nullptr) {
//     absl::StatusOr<std::vector<Tensor>> out = eval(node, inputs, /*memory_limit_bytes=*/64 << 20);
//   }
#ifndef SLUICE_OPS_NODE_EVALUATOR_H_
#define SLUICE_OPS_NODE_EVALUATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "proto/node_def.pb.h"

namespace sluice {

// Runs `node`'s CPU kernel once on `inputs` (one per data input, in order) outside any step
// and returns its outputs. Allocations past `memory_limit_bytes` fail the evaluation with
// RESOURCE_EXHAUSTED. Thread-safe.
using NodeEvaluator = absl::StatusOr<std::vector<Tensor>> (*)(const NodeDef& node, const std::vector<Tensor>& inputs,
                                                              uint64_t memory_limit_bytes);

// Installs the process's evaluator (at static initialization, by the kernels layer).
void SetNodeEvaluator(NodeEvaluator evaluator);
// The installed evaluator; null when no kernels are linked.
NodeEvaluator GetNodeEvaluator();

}  // namespace sluice

#endif  // SLUICE_OPS_NODE_EVALUATOR_H_
