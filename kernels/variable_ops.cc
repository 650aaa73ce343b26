// ReadVariable, AssignVariable and DestroyVariable: the device's VariableStore, by the shared_name attr.
#include "framework/device.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

class ReadVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(Tensor value, ctx->device()->variables()->Read(name_));
    if (value.dtype() != ctx->expected_output_dtype(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable '", name_, "' holds ", DataTypeString(value.dtype()), ", read as ",
          DataTypeString(ctx->expected_output_dtype(0))));
    }
    return ctx->set_output(0, value);
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string name_;
};

class AssignVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    return ctx->device()->variables()->Assign(name_, ctx->input(0));
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string name_;
};

class DestroyVariableOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* c) override { return c->GetAttr("shared_name", &name_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    return ctx->device()->variables()->Erase(name_);
  }
  bool IsExpensive() const override { return false; }

 private:
  std::string name_;
};

REGISTER_KERNEL_BUILDER(Name("ReadVariable").Device(DEVICE_CPU), ReadVariableOp);
REGISTER_KERNEL_BUILDER(Name("DestroyVariable").Device(DEVICE_CPU), DestroyVariableOp);
REGISTER_KERNEL_BUILDER(Name("AssignVariable").Device(DEVICE_CPU), AssignVariableOp);

}  // namespace
}  // namespace sluice
