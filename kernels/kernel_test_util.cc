#include "kernels/kernel_test_util.h"

#include "framework/node_def_util.h"
#include "ops/op_registry.h"

namespace sluice {

KernelTester::KernelTester(std::string op) {
  node_.set_name("test_node");
  node_.set_op(std::move(op));
  pool_ = std::make_unique<ThreadPool>("kernel_test", 2);
  DeviceAttributes attrs;
  attrs.set_name("/job:localhost/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  device_ = std::make_unique<Device>(attrs, pool_.get());
}

absl::Status KernelTester::Run() {
  SL_ASSIGN_OR_RETURN(const OpRegistrationData* op, OpRegistry::Global()->LookUp(node_.op()));
  const OpDef& op_def = op->op_def;
  // Group inputs per arg: list args (N * T, list(type)) take all remaining inputs.
  std::vector<DataTypeVector> arg_types(op_def.input_arg_size());
  size_t next = 0;
  for (int a = 0; a < op_def.input_arg_size(); ++a) {
    const auto& arg = op_def.input_arg(a);
    bool is_list = !arg.number_attr().empty() || !arg.type_list_attr().empty();
    size_t take = is_list ? inputs_.size() - next - (op_def.input_arg_size() - 1 - a) : 1;
    for (size_t j = 0; j < take && next < inputs_.size(); ++j) arg_types[a].push_back(inputs_[next++].dtype());
  }
  node_.clear_input();
  for (size_t i = 0; i < inputs_.size(); ++i) node_.add_input("in" + std::to_string(i));
  SL_RETURN_IF_ERROR(InferAttrsFromInputTypes(op_def, arg_types, &node_));
  AddDefaultsToNodeDef(op_def, &node_);
  SL_RETURN_IF_ERROR(ValidateNodeDef(node_, op_def));
  SL_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateOpKernel(device_.get(), node_, op_def));
  OpKernelContext::Params params;
  params.device = device_.get();
  params.kernel = kernel.get();
  params.inputs = inputs_;
  OpKernelContext ctx(params);
  SL_RETURN_IF_ERROR(kernel->Compute(&ctx));
  outputs_.assign(ctx.outputs().begin(), ctx.outputs().end());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (!outputs_[i].IsInitialized()) {
      return absl::InternalError("kernel left output " + std::to_string(i) + " unset");
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
