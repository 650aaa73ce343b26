// Kernels for tensors in N,H,W,C order between NHWC-layout convolutions.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Per pixel, the inputs' channel vectors one after another.
class ConcatChannelsNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& first = ctx->input(0);
    if (first.dims() != 4) return absl::InvalidArgumentError("ConcatChannelsNhwc needs 4-D inputs");
    int64_t channels = 0;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& t = ctx->input(i);
      if (t.dims() != 4 || t.dim_size(0) != first.dim_size(0) || t.dim_size(2) != first.dim_size(2) ||
          t.dim_size(3) != first.dim_size(3)) {
        return absl::InvalidArgumentError(absl::StrCat("ConcatChannelsNhwc input ", i, " is ",
                                                       t.shape().DebugString(), ", input 0 is ",
                                                       first.shape().DebugString()));
      }
      channels += t.dim_size(1);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(
        0, TensorShape({first.dim_size(0), channels, first.dim_size(2), first.dim_size(3)}), &out));
    const int64_t pixels = first.dim_size(0) * first.dim_size(2) * first.dim_size(3);
    float* dst = out->data<float>();
    for (int64_t p = 0; p < pixels; ++p) {
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const int64_t c = ctx->input(i).dim_size(1);
        std::memcpy(dst, ctx->input(i).data<float>() + p * c, c * sizeof(float));
        dst += c;
      }
    }
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("ConcatChannelsNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), ConcatChannelsNhwcOp);

// Add's numpy broadcasting of the N,C,H,W shapes is the same broadcasting of the N,H,W,C
// views, which is how the values lie; the usual case, equal shapes, adds element by element.
class AddNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 4 || b.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("AddNhwc needs 4-D inputs, got ", a.shape().DebugString(),
                                                     " and ", b.shape().DebugString()));
    }
    auto add = [](float x, float y) { return x + y; };
    if (a.shape() == b.shape()) {
      return ComputeBroadcastBinary<float, float, float>(ctx, a, b, ElementwiseFn::kCost, add);
    }
    auto nhwc_view = [](const Tensor& t) {
      return t.Reshaped(TensorShape({t.dim_size(0), t.dim_size(2), t.dim_size(3), t.dim_size(1)}));
    };
    SL_ASSIGN_OR_RETURN(Tensor a_view, nhwc_view(a));
    SL_ASSIGN_OR_RETURN(Tensor b_view, nhwc_view(b));
    absl::Status s = ComputeBroadcastBinary<float, float, float>(ctx, a_view, b_view, ElementwiseFn::kCost, add);
    if (!s.ok()) return s;
    const Tensor& c = ctx->output(0);
    SL_ASSIGN_OR_RETURN(Tensor c_nchw,
                        c.Reshaped(TensorShape({c.dim_size(0), c.dim_size(3), c.dim_size(1), c.dim_size(2)})));
    return ctx->set_output(0, c_nchw);
  }
};

REGISTER_KERNEL_BUILDER(Name("AddNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), AddNhwcOp);

}  // namespace
}  // namespace sluice
