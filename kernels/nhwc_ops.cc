// Kernels for tensors in N,H,W,C order between NHWC-layout convolutions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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

// Add's and Mul's numpy broadcasting of the N,C,H,W shapes is the same broadcasting of the
// N,H,W,C views, which is how the values lie; the usual case, equal shapes, goes element by
// element.
template <typename Fn>
class BinaryNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 4 || b.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(type_string(), " needs 4-D inputs, got ", a.shape().DebugString(),
                                                     " and ", b.shape().DebugString()));
    }
    if (a.shape() == b.shape()) {
      return ComputeBroadcastBinary<float, float, float>(ctx, a, b, ElementwiseFn::kCost, Fn());
    }
    auto nhwc_view = [](const Tensor& t) {
      return t.Reshaped(TensorShape({t.dim_size(0), t.dim_size(2), t.dim_size(3), t.dim_size(1)}));
    };
    SL_ASSIGN_OR_RETURN(Tensor a_view, nhwc_view(a));
    SL_ASSIGN_OR_RETURN(Tensor b_view, nhwc_view(b));
    absl::Status s = ComputeBroadcastBinary<float, float, float>(ctx, a_view, b_view, ElementwiseFn::kCost, Fn());
    if (!s.ok()) return s;
    const Tensor& c = ctx->output(0);
    SL_ASSIGN_OR_RETURN(Tensor c_nchw,
                        c.Reshaped(TensorShape({c.dim_size(0), c.dim_size(3), c.dim_size(1), c.dim_size(2)})));
    return ctx->set_output(0, c_nchw);
  }
};

struct AddFloats {
  float operator()(float x, float y) const { return x + y; }
};
struct MulFloats {
  float operator()(float x, float y) const { return x * y; }
};

REGISTER_KERNEL_BUILDER(Name("AddNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), BinaryNhwcOp<AddFloats>);
REGISTER_KERNEL_BUILDER(Name("MulNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"), BinaryNhwcOp<MulFloats>);

// The mean of each image's channel vectors, pixel by pixel (each channel sums its pixels in
// the same order as the N,C,H,W kernel does).
class GlobalAveragePoolNhwcOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("GlobalAveragePoolNhwc needs a 4-D input, got ",
                                                     x.shape().DebugString()));
    }
    const int64_t n = x.dim_size(0), c = x.dim_size(1), pixels = x.dim_size(2) * x.dim_size(3);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({n, c, 1, 1}), &y));
    const float* xd = x.data<float>();
    float* yd = y->data<float>();
    std::vector<float> sum(c);
    for (int64_t b = 0; b < n; ++b) {
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t p = 0; p < pixels; ++p) {
        const float* v = xd + (b * pixels + p) * c;
        for (int64_t ch = 0; ch < c; ++ch) sum[ch] += v[ch];
      }
      for (int64_t ch = 0; ch < c; ++ch) yd[b * c + ch] = pixels > 0 ? sum[ch] / static_cast<float>(pixels) : NAN;
    }
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("GlobalAveragePoolNhwc").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        GlobalAveragePoolNhwcOp);

}  // namespace
}  // namespace sluice
