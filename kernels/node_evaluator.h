// Runs one node's kernel on given inputs outside any step: what the kernel test harness
// (kernel_test_util.h) and the optimizer's constant folding (optimizer/constant_folding.cc)
// share.
//
//   SL_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunKernelOnce(device, node, op_def, inputs));
#ifndef SLUICE_KERNELS_NODE_EVALUATOR_H_
#define SLUICE_KERNELS_NODE_EVALUATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/device.h"
#include "framework/tensor.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace sluice {

// Builds the kernel the registry selects for `node` (attrs complete and valid) on `device`
// (not owned), runs it once on `inputs` and returns every output; a kernel that leaves an
// output unset is INTERNAL. No rendezvous, call frame or cancellation: for kernels of
// stateless, non-functional ops.
absl::StatusOr<std::vector<Tensor>> RunKernelOnce(Device* device, const NodeDef& node, const OpDef& op_def,
                                                  absl::Span<const Tensor> inputs);

// RunKernelOnce on a private CPU device without a thread pool, after filling `node`'s default
// attrs and validating it; refuses stateful ops and ops with function attrs. Tensors it
// allocates are charged to a budget of `memory_limit_bytes`.
absl::StatusOr<std::vector<Tensor>> EvaluateNode(const NodeDef& node, const std::vector<Tensor>& inputs,
                                                 uint64_t memory_limit_bytes);

}  // namespace sluice

#endif  // SLUICE_KERNELS_NODE_EVALUATOR_H_
