// AddN: the sum of N tensors of one shape (no broadcasting), accumulated in float for half and
// bfloat16.
#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
class AddNOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    using C = typename sluice::Compute<T>::type;
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      if (ctx->input(i).shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AddN inputs must have one shape: input 0 is ", first.shape().DebugString(),
            ", input ", i, " is ", ctx->input(i).shape().DebugString()));
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, first.shape(), &out));
    T* po = out->data<T>();
    for (int64_t j = 0, n = first.NumElements(); j < n; ++j) {
      C sum = C(first.data<T>()[j]);
      for (int i = 1; i < ctx->num_inputs(); ++i) sum += C(ctx->input(i).data<T>()[j]);
      po[j] = T(sum);
    }
    return absl::OkStatus();
  }
};

#define SL_REGISTER_ADDN(T) \
  REGISTER_KERNEL_BUILDER(Name("AddN").Device(DEVICE_CPU).TypeConstraint<T>("T"), AddNOp<T>)
SL_REGISTER_ADDN(float);
SL_REGISTER_ADDN(double);
SL_REGISTER_ADDN(half);
SL_REGISTER_ADDN(bfloat16);
SL_REGISTER_ADDN(int32_t);
SL_REGISTER_ADDN(int64_t);

}  // namespace
}  // namespace sluice
