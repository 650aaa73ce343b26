// Const, Placeholder and PlaceholderWithDefault.
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

class ConstOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    if (IsHoisted(ctx->def())) {
      // The value was kept outside the graph (framework/hoisted_constants.h); its buffer is
      // shared with the table, not copied.
      SL_ASSIGN_OR_RETURN(value_, FindHoistedValue(ctx->def(), ctx->hoisted_constants()));
    } else {
      SL_RETURN_IF_ERROR(ctx->GetAttr("value", &value_));
    }
    DataType dtype;
    SL_RETURN_IF_ERROR(ctx->GetAttr("dtype", &dtype));
    if (dtype != value_.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("attr 'dtype' is ", DataTypeString(dtype),
                                                     " but 'value' holds ",
                                                     DataTypeString(value_.dtype())));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) const override { return ctx->set_output(0, value_); }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

// Reached only when the placeholder was not fed (feeds replace it before execution).
class PlaceholderOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("dtype", &dtype_));
    return ctx->GetAttr("shape", &shape_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    return absl::InvalidArgumentError(absl::StrCat(
        "You must feed a value for placeholder tensor '", name(), "' with dtype ",
        DataTypeString(dtype_), shape_.unknown_rank() ? "" : " and shape ",
        shape_.unknown_rank() ? "" : shape_.DebugString()));
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
};

class PlaceholderWithDefaultOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    return ctx->set_output(0, ctx->input(0));
  }
  bool IsExpensive() const override { return false; }
};

REGISTER_KERNEL_BUILDER(Name("Const").Device(DEVICE_CPU), ConstOp);
REGISTER_KERNEL_BUILDER(Name("Placeholder").Device(DEVICE_CPU), PlaceholderOp);
REGISTER_KERNEL_BUILDER(Name("PlaceholderWithDefault").Device(DEVICE_CPU), PlaceholderWithDefaultOp);

}  // namespace
}  // namespace sluice
