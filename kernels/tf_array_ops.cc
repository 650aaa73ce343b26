// Kernels of TensorFlow's small array ops (ops/tf_array_ops.cc) that have no ONNX kernel to
// share: Shape, ShapeN, Size, Rank, ExpandDims, Squeeze, Fill, ZerosLike and OnesLike; and
// Bucketize (ops/tf_math_ops.cc). Reshape, Transpose, ConcatV2, Concat, Pack, Cast, Range,
// SelectV2 and StopGradient share the ONNX ops' kernels.
#include <algorithm>

#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Writes `values` into output `index` as a vector of the output's type (int32 or int64); a
// value an int32 cannot hold is an error, as in TensorFlow.
absl::Status SetIndexVector(OpKernelContext* ctx, int index, absl::Span<const int64_t> values, bool scalar) {
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(
      index, scalar ? TensorShape() : TensorShape({static_cast<int64_t>(values.size())}), &out));
  if (out->dtype() == DT_INT32) {
    int32_t* o = out->data<int32_t>();
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("value ", values[i], " does not fit out_type int32; use out_type int64"));
      }
      o[i] = static_cast<int32_t>(values[i]);
    }
  } else {
    std::copy(values.begin(), values.end(), out->data<int64_t>());
  }
  return absl::OkStatus();
}

// Shape and ShapeN: output i is input i's shape.
class ShapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const auto& dims = ctx->input(i).shape().dim_sizes();
      SL_RETURN_IF_ERROR(SetIndexVector(ctx, i, absl::MakeConstSpan(dims.data(), dims.size()), false));
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class SizeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const int64_t n = ctx->input(0).NumElements();
    return SetIndexVector(ctx, 0, {n}, true);
  }
  bool IsExpensive() const override { return false; }
};

class RankOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(), &out));
    out->data<int32_t>()[0] = ctx->input(0).dims();
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// ExpandDims(input, dim): a unit dim inserted at `dim` (in [-rank - 1, rank]).
class ExpandDimsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& dim = ctx->input(1);
    if (dim.NumElements() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("ExpandDims: dim must hold one value, got shape ", dim.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> d, IndexValues(dim, "ExpandDims: dim"));
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(d[0], in.dims() + 1, "ExpandDims: dim"));
    TensorShape shape = in.shape();
    shape.InsertDim(axis, 1);
    SL_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(shape));
    return ctx->set_output(0, out);
  }
  bool IsExpensive() const override { return false; }
};

// Squeeze: removes the listed unit dims, or every unit dim when none is listed.
class SqueezeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("squeeze_dims", &dims_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    std::vector<bool> drop(in.dims(), dims_.empty());
    for (int64_t d : dims_) {
      SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(d, in.dims(), "Squeeze: squeeze_dims"));
      if (in.dim_size(axis) != 1) {
        return absl::InvalidArgumentError(absl::StrCat("Squeeze: cannot squeeze dim ", d, " of shape ",
                                                       in.shape().DebugString(), ", which is not 1"));
      }
      drop[axis] = true;
    }
    TensorShape shape;
    for (int i = 0; i < in.dims(); ++i) {
      if (!(drop[i] && in.dim_size(i) == 1)) shape.AddDim(in.dim_size(i));
    }
    SL_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(shape));
    return ctx->set_output(0, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  std::vector<int64_t> dims_;
};

// Fill(dims, value): a tensor of shape `dims` holding `value` (a scalar) everywhere.
class FillOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dims = ctx->input(0);
    const Tensor& value = ctx->input(1);
    if (dims.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Fill: dims must be a vector, got shape ",
                                                     dims.shape().DebugString()));
    }
    if (value.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Fill: value must be a scalar, got shape ",
                                                     value.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> d, IndexValues(dims, "Fill: dims"));
    for (int64_t v : d) {
      if (v < 0) return absl::InvalidArgumentError(absl::StrCat("Fill: dims ", DimsString(d), " has a negative dim"));
    }
    SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(d));
    return FillWith(ctx, shape, value);
  }

  // Output 0 of `shape` filled with the scalar `value`.
  static absl::Status FillWith(OpKernelContext* ctx, const TensorShape& shape, const Tensor& value) {
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
    return VisitElements(value.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E v = static_cast<const E*>(value.raw_data())[0];
      E* o = static_cast<E*>(out->raw_data());
      std::fill(o, o + out->NumElements(), v);
      return absl::OkStatus();
    });
  }
};

// ZerosLike and OnesLike: input 0's shape and dtype, filled with 0 or 1 (false/true for bool,
// "" for strings under ZerosLike).
template <int kValue>
class FillLikeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    absl::Status status = absl::InvalidArgumentError(
        absl::StrCat(type_string(), " does not support ", DataTypeString(x.dtype())));
    VisitDataType(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, tstring>) {
        if (kValue == 0) status = absl::OkStatus();  // Default-constructed: empty strings.
      } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16> ||
                           std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        T* o = out->data<T>();
        std::fill(o, o + out->NumElements(), static_cast<T>(kValue));
        status = absl::OkStatus();
      }
    });
    return status;
  }
  bool IsExpensive() const override { return false; }
};

// Bucketize: for each value, the number of boundaries at or below it.
template <typename T>
class BucketizeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("boundaries", &boundaries_));
    if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
      return absl::InvalidArgumentError("Bucketize: boundaries must be sorted");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    const T* px = x.data<T>();
    int32_t* po = out->data<int32_t>();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      po[i] = static_cast<int32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(),
                                                    static_cast<double>(px[i])) -
                                   boundaries_.begin());
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> boundaries_;
};

REGISTER_KERNEL_BUILDER(Name("Shape").Device(DEVICE_CPU), ShapeOp);
REGISTER_KERNEL_BUILDER(Name("ShapeN").Device(DEVICE_CPU), ShapeOp);
REGISTER_KERNEL_BUILDER(Name("Size").Device(DEVICE_CPU), SizeOp);
REGISTER_KERNEL_BUILDER(Name("Rank").Device(DEVICE_CPU), RankOp);
REGISTER_KERNEL_BUILDER(Name("ExpandDims").Device(DEVICE_CPU), ExpandDimsOp);
REGISTER_KERNEL_BUILDER(Name("Squeeze").Device(DEVICE_CPU), SqueezeOp);
REGISTER_KERNEL_BUILDER(Name("Fill").Device(DEVICE_CPU), FillOp);
REGISTER_KERNEL_BUILDER(Name("ZerosLike").Device(DEVICE_CPU), FillLikeOp<0>);
REGISTER_KERNEL_BUILDER(Name("OnesLike").Device(DEVICE_CPU), FillLikeOp<1>);
REGISTER_KERNEL_BUILDER(Name("Bucketize").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), BucketizeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Bucketize").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), BucketizeOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("Bucketize").Device(DEVICE_CPU).TypeConstraint<float>("T"), BucketizeOp<float>);
REGISTER_KERNEL_BUILDER(Name("Bucketize").Device(DEVICE_CPU).TypeConstraint<double>("T"), BucketizeOp<double>);

}  // namespace
}  // namespace sluice
