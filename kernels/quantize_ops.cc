// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ONNX semantics): per-tensor or
// per-axis scales and zero points, rounding half to even with saturation.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/quantize_util.h"

namespace sluice {
namespace {

// The scale (and zero point, when given) of a (de)quantization: one value, or a 1-D tensor
// with one value per index along the axis.
absl::Status CheckQuantParams(const char* op, const Tensor& scale, const Tensor* zero_point) {
  if (scale.dims() > 1 || scale.NumElements() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": the scale must be a scalar or a non-empty 1-D tensor, not ", scale.shape().DebugString()));
  }
  if (zero_point != nullptr && zero_point->NumElements() != scale.NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": the zero point ", zero_point->shape().DebugString(),
                                                   " does not match the scale ", scale.shape().DebugString()));
  }
  return absl::OkStatus();
}

// T1: float or int32 input; Q: the quantized output. Divisions follow numpy: float32 for
// float input, float64 for int32.
template <typename T1, typename Q>
class QuantizeLinearOp : public OpKernel {
 public:
  using F = std::conditional_t<std::is_same_v<T1, float>, float, double>;

  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor* zp = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    SL_RETURN_IF_ERROR(CheckQuantParams("QuantizeLinear", scale, zp));
    if (zp != nullptr && zp->dtype() != DataTypeToEnum<Q>::value) {
      return absl::InvalidArgumentError(absl::StrCat("QuantizeLinear: y_zero_point is ", DataTypeString(zp->dtype()),
                                                     " but y is ", DataTypeString(DataTypeToEnum<Q>::value)));
    }
    SL_ASSIGN_OR_RETURN(AxisLayout layout, AxisLayout::Make(x.shape(), axis_, scale.NumElements()));
    std::vector<int32_t> zero_points(scale.NumElements(), 0);
    if (zp != nullptr) {
      SL_ASSIGN_OR_RETURN(zero_points, ReadQuantized(*zp, "y_zero_point"));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const T1* xd = x.data<T1>();
    const float* sd = scale.data<float>();
    Q* yd = y->data<Q>();
    ParallelForElements(ctx, x.NumElements(), 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t p = layout.Index(i);
        yd[i] = SaturateRound<Q>(static_cast<F>(xd[i]) / static_cast<F>(sd[p]), zero_points[p]);
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 1;
};

template <typename T>
class DequantizeLinearOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor* zp = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    SL_RETURN_IF_ERROR(CheckQuantParams("DequantizeLinear", scale, zp));
    if (zp != nullptr && zp->dtype() != x.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("DequantizeLinear: x_zero_point is ", DataTypeString(zp->dtype()),
                                                     " but x is ", DataTypeString(x.dtype())));
    }
    SL_ASSIGN_OR_RETURN(AxisLayout layout, AxisLayout::Make(x.shape(), axis_, scale.NumElements()));
    std::vector<int32_t> zero_points(scale.NumElements(), 0);
    if (zp != nullptr) {
      SL_ASSIGN_OR_RETURN(zero_points, ReadQuantized(*zp, "x_zero_point"));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const T* xd = x.data<T>();
    const float* sd = scale.data<float>();
    float* yd = y->data<float>();
    ParallelForElements(ctx, x.NumElements(), 2, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t p = layout.Index(i);
        yd[i] = static_cast<float>(static_cast<int64_t>(xd[i]) - zero_points[p]) * sd[p];
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 1;
};

// The range [min(x, 0), max(x, 0)] mapped onto [0, 255]: scale = range / 255 and the zero
// point that 0.0 quantizes to. An all-zero (or empty) x gets scale 0 and zero point 0.
class DynamicQuantizeLinearOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const float* xd = x.data<float>();
    const int64_t n = x.NumElements();
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(xd[i])) {
        return absl::InvalidArgumentError("DynamicQuantizeLinear: x holds NaN, which has no quantization range");
      }
      lo = std::min(lo, xd[i]);
      hi = std::max(hi, xd[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zero_point = scale == 0.0f ? 0 : SaturateRound<uint8_t>(0.0f - lo / scale, 0);
    Tensor *y, *y_scale, *y_zp;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, TensorShape(), &y_scale));
    SL_RETURN_IF_ERROR(ctx->allocate_output(2, TensorShape(), &y_zp));
    y_scale->scalar<float>() = scale;
    y_zp->scalar<uint8_t>() = zero_point;
    uint8_t* yd = y->data<uint8_t>();
    ParallelForElements(ctx, n, 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        yd[i] = scale == 0.0f ? zero_point : SaturateRound<uint8_t>(xd[i] / scale, zero_point);
      }
    });
    return absl::OkStatus();
  }
};

#define SL_REGISTER_QUANTIZE(T1, Q)                                                              \
  REGISTER_KERNEL_BUILDER(                                                                       \
      Name("Onnx>QuantizeLinear").Device(DEVICE_CPU).TypeConstraint<T1>("T1").TypeConstraint<Q>("T2"), \
      QuantizeLinearOp<T1, Q>)
SL_REGISTER_QUANTIZE(float, uint8_t);
SL_REGISTER_QUANTIZE(float, int8_t);
SL_REGISTER_QUANTIZE(int32_t, uint8_t);
SL_REGISTER_QUANTIZE(int32_t, int8_t);
#undef SL_REGISTER_QUANTIZE

REGISTER_KERNEL_BUILDER(Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).TypeConstraint<int8_t>("T"),
                        DequantizeLinearOp<int8_t>);
REGISTER_KERNEL_BUILDER(Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).TypeConstraint<uint8_t>("T"),
                        DequantizeLinearOp<uint8_t>);
REGISTER_KERNEL_BUILDER(Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                        DequantizeLinearOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Onnx>DynamicQuantizeLinear").Device(DEVICE_CPU), DynamicQuantizeLinearOp);

}  // namespace
}  // namespace sluice
