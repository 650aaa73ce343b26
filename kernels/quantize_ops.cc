// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ONNX semantics): per-tensor,
// per-axis or blocked scales and zero points, rounding half to even with saturation for
// integer types; 8-bit floats round to nearest even with ONNX's `saturate`.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/quantize_util.h"

namespace sluice {
namespace {

// The scale and (when given) the zero point of a (de)quantization of `x`, where each element
// finds its own.
struct QuantParams {
  AxisLayout layout;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;  // One per scale; zeros without a zero point.
};

// Checks the parameters' shapes against x (and block_size) and reads them. A zero point of an
// 8-bit float type must be zero (ONNX's reference refuses others), and is read as none.
absl::StatusOr<QuantParams> ReadQuantParams(const char* op, const Tensor& x, const Tensor& scale,
                                            const Tensor* zero_point, int64_t axis, int64_t block_size) {
  QuantParams p;
  SL_ASSIGN_OR_RETURN(p.layout, AxisLayout::Make(x.shape(), axis, scale.shape(), block_size), op);
  SL_ASSIGN_OR_RETURN(p.scales, ReadScale(scale, "the scale"), op);
  p.zero_points.assign(p.scales.size(), 0);
  if (zero_point == nullptr) return p;
  if (zero_point->shape() != scale.shape() &&
      !(zero_point->NumElements() == 1 && scale.NumElements() == 1)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": the zero point ", zero_point->shape().DebugString(),
                                                   " does not match the scale ", scale.shape().DebugString()));
  }
  bool is_float8 = false;
  VisitDataType(zero_point->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat8<T>) {
      is_float8 = true;
      for (const T& v : zero_point->flat<T>()) {
        if (static_cast<float>(v) != 0.0f) {
          p.zero_points.clear();
          return;
        }
      }
    }
  });
  if (is_float8) {
    if (p.zero_points.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": an 8-bit float zero point must be 0"));
    }
    return p;
  }
  SL_ASSIGN_OR_RETURN(p.zero_points, ReadQuantized(*zero_point, "the zero point"), op);
  return p;
}

// x / scale as numpy computes it: float32 for float x, float64 for int32 x, and rounded to
// x's type for half and bfloat16 x (whose scales share their type).
template <typename T1>
auto Quotient(T1 x, float scale) {
  if constexpr (std::is_same_v<T1, int32_t>) {
    return static_cast<double>(x) / static_cast<double>(scale);
  } else if constexpr (std::is_same_v<T1, float>) {
    return x / scale;
  } else {
    return static_cast<float>(T1(static_cast<float>(x) / scale));
  }
}

// T1: the input (float, half, bfloat16 or int32); Q: the quantized output.
template <typename T1, typename Q>
class QuantizeLinearOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("saturate", &saturate_));
    return ctx->GetAttr("block_size", &block_size_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor* zp = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    if (zp != nullptr && zp->dtype() != DataTypeToEnum<Q>::value) {
      return absl::InvalidArgumentError(absl::StrCat("QuantizeLinear: y_zero_point is ", DataTypeString(zp->dtype()),
                                                     " but y is ", DataTypeString(DataTypeToEnum<Q>::value)));
    }
    SL_ASSIGN_OR_RETURN(QuantParams p,
                        ReadQuantParams("QuantizeLinear", x, ctx->input(1), zp, axis_, block_size_));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const T1* xd = x.data<T1>();
    Q* yd = y->data<Q>();
    const bool saturate = saturate_;
    ParallelForElements(ctx, x.NumElements(), 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t j = p.layout.Index(i);
        const auto q = Quotient(xd[i], p.scales[j]);
        if constexpr (kIsFloat8<Q>) {
          yd[i] = Q::FromFloat(static_cast<float>(q), saturate);  // The zero point is 0.
        } else {
          yd[i] = SaturateRound<Q>(q, p.zero_points[j]);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 1;
  bool saturate_ = true;
  int64_t block_size_ = 0;
};

// y = (x - x_zero_point) * x_scale in float32, rounded to the scale's type.
template <typename T, typename S>
class DequantizeLinearOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    return ctx->GetAttr("block_size", &block_size_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor* zp = ctx->num_inputs() > 2 ? &ctx->input(2) : nullptr;
    if (zp != nullptr && zp->dtype() != x.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("DequantizeLinear: x_zero_point is ", DataTypeString(zp->dtype()),
                                                     " but x is ", DataTypeString(x.dtype())));
    }
    SL_ASSIGN_OR_RETURN(QuantParams p,
                        ReadQuantParams("DequantizeLinear", x, ctx->input(1), zp, axis_, block_size_));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const T* xd = x.data<T>();
    S* yd = y->data<S>();
    ParallelForElements(ctx, x.NumElements(), 2, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t j = p.layout.Index(i);
        float v;
        if constexpr (kIsFloat8<T>) {
          v = static_cast<float>(xd[i]);
        } else {
          v = static_cast<float>(static_cast<int64_t>(xd[i]) - p.zero_points[j]);
        }
        yd[i] = S(v * p.scales[j]);
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
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

// Every (input, quantized type) pair and every (quantized type, scale type) pair.
template <typename Q>
void RegisterQuantizedType() {
  auto quantize = [](auto tag) {
    using T1 = typename decltype(tag)::type;
    KernelRegistry::Global()->Register(Name("Onnx>QuantizeLinear")
                                           .Device(DEVICE_CPU)
                                           .template TypeConstraint<T1>("T1")
                                           .template TypeConstraint<Q>("T2")
                                           .Build(),
                                       "QuantizeLinearOp", [] { return std::make_unique<QuantizeLinearOp<T1, Q>>(); });
  };
  quantize(TypeTag<float>{});
  quantize(TypeTag<half>{});
  quantize(TypeTag<bfloat16>{});
  quantize(TypeTag<int32_t>{});
  auto dequantize = [](auto tag) {
    using S = typename decltype(tag)::type;
    KernelRegistry::Global()->Register(
        Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).template TypeConstraint<Q>("T").template TypeConstraint<S>("Ts").Build(),
        "DequantizeLinearOp", [] { return std::make_unique<DequantizeLinearOp<Q, S>>(); });
  };
  dequantize(TypeTag<float>{});
  dequantize(TypeTag<half>{});
  dequantize(TypeTag<bfloat16>{});
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterQuantizedType<int8_t>();
  RegisterQuantizedType<uint8_t>();
  RegisterQuantizedType<int16_t>();
  RegisterQuantizedType<uint16_t>();
  RegisterQuantizedType<int4>();
  RegisterQuantizedType<uint4>();
  RegisterQuantizedType<float8_e4m3fn>();
  RegisterQuantizedType<float8_e4m3fnuz>();
  RegisterQuantizedType<float8_e5m2>();
  RegisterQuantizedType<float8_e5m2fnuz>();
  return true;
}();

// int32 (bias) values dequantize too, as in ONNX 10 to 21.
REGISTER_KERNEL_BUILDER(
    Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).TypeConstraint<int32_t>("T").TypeConstraint<float>("Ts"),
    DequantizeLinearOp<int32_t, float>);
REGISTER_KERNEL_BUILDER(
    Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).TypeConstraint<int32_t>("T").TypeConstraint<half>("Ts"),
    DequantizeLinearOp<int32_t, half>);
REGISTER_KERNEL_BUILDER(
    Name("Onnx>DequantizeLinear").Device(DEVICE_CPU).TypeConstraint<int32_t>("T").TypeConstraint<bfloat16>("Ts"),
    DequantizeLinearOp<int32_t, bfloat16>);
REGISTER_KERNEL_BUILDER(Name("Onnx>DynamicQuantizeLinear").Device(DEVICE_CPU), DynamicQuantizeLinearOp);

}  // namespace
}  // namespace sluice
