#include "kernels/node_evaluator.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/memory_budget.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "kernels/kernel_registry.h"
#include "ops/op_registry.h"

namespace sluice {

absl::StatusOr<std::vector<Tensor>> RunKernelOnce(Device* device, const NodeDef& node, const OpDef& op_def,
                                                  absl::Span<const Tensor> inputs) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, KernelRegistry::Global()->CreateOpKernel(device, node, op_def));
  OpKernelContext::Params params;
  params.device = device;
  params.kernel = kernel.get();
  params.inputs = inputs;
  OpKernelContext ctx(params);
  SL_RETURN_IF_ERROR(kernel->Compute(&ctx));
  std::vector<Tensor> outputs(ctx.outputs().begin(), ctx.outputs().end());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].IsInitialized()) {
      return absl::InternalError(absl::StrCat("kernel of ", node.op(), " left output ", i, " unset"));
    }
  }
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> EvaluateNode(const NodeDef& node, const std::vector<Tensor>& inputs,
                                                 uint64_t memory_limit_bytes) {
  SL_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUpOpDef(node.op()));
  if (op_def->is_stateful()) {
    return absl::FailedPreconditionError(absl::StrCat(node.op(), " is stateful: it is not evaluated ahead of a run"));
  }
  for (const auto& attr : op_def->attr()) {
    // Functional ops (If, Loop, Scan) need a step's function runtime.
    if (attr.type() == "func" || attr.type() == "list(func)") {
      return absl::FailedPreconditionError(absl::StrCat(node.op(), " runs functions: it is not evaluated alone"));
    }
  }
  NodeDef complete = node;
  AddDefaultsToNodeDef(*op_def, &complete);
  SL_RETURN_IF_ERROR(ValidateNodeDef(complete, *op_def));
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  Device device(attrs, /*compute_pool=*/nullptr);
  auto budget = std::make_shared<MemoryBudget>(memory_limit_bytes);
  absl::StatusOr<std::vector<Tensor>> out;
  {
    MemoryBudget::Scope scope(budget);
    out = RunKernelOnce(&device, complete, *op_def, inputs);
  }
  if (out.ok() && budget->Exceeded()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(node.op(), " allocated past the evaluation's limit of ", memory_limit_bytes, " bytes"));
  }
  return out;
}

}  // namespace sluice
