// Identity, IdentityN and NoOp: forward or order, never copy.
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

class IdentityOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    for (int i = 0; i < ctx->num_inputs(); ++i) SL_RETURN_IF_ERROR(ctx->set_output(i, ctx->input(i)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class NoOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) const override { return absl::OkStatus(); }
  bool IsExpensive() const override { return false; }
};

REGISTER_KERNEL_BUILDER(Name("Identity").Device(DEVICE_CPU), IdentityOp);
REGISTER_KERNEL_BUILDER(Name("IdentityN").Device(DEVICE_CPU), IdentityOp);
REGISTER_KERNEL_BUILDER(Name("StopGradient").Device(DEVICE_CPU), IdentityOp);
REGISTER_KERNEL_BUILDER(Name("NoOp").Device(DEVICE_CPU), NoOp);

}  // namespace
}  // namespace sluice
