// ONNX shape kernels: Reshape, Flatten, Squeeze and Unsqueeze share the input's buffer; Shape,
// Size, ConstantOfShape, Range and EyeLike make small or generated tensors.
#include <cmath>
#include <limits>

#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

absl::Status ForwardReshaped(OpKernelContext* ctx, const Tensor& in, const TensorShape& shape) {
  SL_ASSIGN_OR_RETURN(Tensor out, in.Reshaped(shape));
  return ctx->set_output(0, out);
}

class ReshapeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    if (ctx->def().attr().contains("Tshape")) {  // TensorFlow's Reshape: a 0 is a 0.
      allowzero_ = true;
      return absl::OkStatus();
    }
    int64_t allowzero = 0;
    SL_RETURN_IF_ERROR(ctx->GetAttr("allowzero", &allowzero));
    allowzero_ = allowzero != 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& shape = ctx->input(1);
    if (shape.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Reshape: shape must be 1-D, got ", shape.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> values, IndexValues(shape, "Reshape: shape"));
    DimVector dims(values.begin(), values.end());
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
      if (dims[i] == 0 && !allowzero_) {
        if (i >= in.dims()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Reshape: shape ", DimsString(dims), " copies dim ", i, " (a 0) but the input ",
              in.shape().DebugString(), " has only ", in.dims(), " dims"));
        }
        dims[i] = in.dim_size(i);
      }
      if (dims[i] == -1) {
        if (infer >= 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("Reshape: shape ", DimsString(dims), " has more than one -1"));
        }
        infer = i;
      } else if (dims[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Reshape: shape ", DimsString(dims), " has a negative dim"));
      } else {
        known *= dims[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || in.NumElements() % known != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Reshape: cannot infer the -1 in ", DimsString(dims), " for an input of ",
            in.NumElements(), " elements ", in.shape().DebugString()));
      }
      dims[infer] = in.NumElements() / known;
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
    if (out_shape.num_elements() != in.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Reshape: cannot reshape ", in.shape().DebugString(), " (", in.NumElements(),
          " elements) to ", out_shape.DebugString(), " (", out_shape.num_elements(), " elements)"));
    }
    return ForwardReshaped(ctx, in, out_shape);
  }
  bool IsExpensive() const override { return false; }

 private:
  bool allowzero_ = false;
};

class FlattenOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    // axis may equal the rank (everything goes to the outer dim).
    int64_t axis = axis_ < 0 ? axis_ + in.dims() : axis_;
    if (axis < 0 || axis > in.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("Flatten: axis ", axis_,
                                                     " is out of range for rank ", in.dims()));
    }
    int64_t outer = 1;
    for (int i = 0; i < axis; ++i) outer *= in.dim_size(i);
    int64_t inner = 1;
    for (int i = static_cast<int>(axis); i < in.dims(); ++i) inner *= in.dim_size(i);
    return ForwardReshaped(ctx, in, TensorShape({outer, inner}));
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t axis_ = 1;
};

class SqueezeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(int n, ListArgSize(ctx, "Taxes"));
    has_axes_ = n > 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    std::vector<bool> drop(in.dims(), false);
    if (has_axes_) {
      const Tensor& axes = ctx->input(1);
      for (int64_t a : axes.flat<int64_t>()) {
        SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, in.dims(), "Squeeze: axis"));
        if (in.dim_size(axis) != 1) {
          return absl::InvalidArgumentError(absl::StrCat("Squeeze: dim ", axis, " of ",
                                                         in.shape().DebugString(), " is not 1"));
        }
        drop[axis] = true;
      }
    } else {
      for (int i = 0; i < in.dims(); ++i) drop[i] = in.dim_size(i) == 1;
    }
    TensorShape out;
    for (int i = 0; i < in.dims(); ++i) {
      if (!drop[i]) out.AddDim(in.dim_size(i));
    }
    return ForwardReshaped(ctx, in, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  bool has_axes_ = false;
};

class UnsqueezeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& axes = ctx->input(1);
    const int out_rank = in.dims() + static_cast<int>(axes.NumElements());
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : axes.flat<int64_t>()) {
      SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, out_rank, "Unsqueeze: axis"));
      if (inserted[axis]) {
        return absl::InvalidArgumentError(absl::StrCat("Unsqueeze: axis ", a, " repeats"));
      }
      inserted[axis] = true;
    }
    TensorShape out;
    for (int i = 0, next = 0; i < out_rank; ++i) out.AddDim(inserted[i] ? 1 : in.dim_size(next++));
    return ForwardReshaped(ctx, in, out);
  }
  bool IsExpensive() const override { return false; }
};

class ShapeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("start", &start_));
    return ctx->GetAttr("end", &end_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const int64_t rank = in.dims();
    auto clamp = [rank](int64_t v) {
      if (v < 0) v += rank;
      return std::clamp<int64_t>(v, 0, rank);
    };
    const int64_t start = clamp(start_), end = std::max(start, clamp(end_));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({end - start}), &out));
    for (int64_t i = start; i < end; ++i) out->data<int64_t>()[i - start] = in.dim_size(i);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t start_ = 0;
  int64_t end_ = std::numeric_limits<int64_t>::max();
};

class SizeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(), &out));
    out->scalar<int64_t>() = ctx->input(0).NumElements();
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// A shape given as a 1-D int64 tensor of non-negative dims.
absl::StatusOr<TensorShape> ShapeFromTensor(const Tensor& t, absl::string_view op) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": the shape input must be 1-D, got ", t.shape().DebugString()));
  }
  auto shape = TensorShape::FromDims(t.flat<int64_t>());
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": bad shape ", DimsString(t.flat<int64_t>()),
                                                   ": ", shape.status().message()));
  }
  return shape;
}

class ConstantOfShapeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("value", &value_));
    DataType dtype;
    SL_RETURN_IF_ERROR(ctx->GetAttr("dtype", &dtype));
    if (value_.dtype() != dtype || value_.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConstantOfShape: value must be one element of ", DataTypeString(dtype), ", got ",
          value_.DebugString()));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(TensorShape shape, ShapeFromTensor(ctx->input(0), "ConstantOfShape"));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    return VisitElements(value_.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E v = *static_cast<const E*>(value_.raw_data());
      E* o = static_cast<E*>(out->raw_data());
      ParallelForIfLarge(ctx, out->NumElements(), out->NumElements(),
                         [&](int64_t b, int64_t e) { std::fill(o + b, o + e, v); });
      return absl::OkStatus();
    });
  }

 private:
  Tensor value_;
};

class RangeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    for (int i = 0; i < 3; ++i) {
      if (ctx->input(i).NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Range: start, limit and delta must be scalars, input ", i, " is ",
            ctx->input(i).shape().DebugString()));
      }
    }
    absl::Status status;
    VisitDataType(ctx->input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T>) status = Fill<T>(ctx);
    });
    return status;
  }

 private:
  template <typename T>
  static absl::Status Fill(OpKernelContext* ctx) {
    const T start = ctx->input(0).data<T>()[0];
    const T limit = ctx->input(1).data<T>()[0];
    const T delta = ctx->input(2).data<T>()[0];
    if (delta == T(0)) return absl::InvalidArgumentError("Range: delta is 0");
    // ONNX: max(ceil((limit - start) / delta), 0) elements.
    const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                               static_cast<double>(delta));
    if (!(n < 1e15)) return absl::InvalidArgumentError("Range: too many elements");
    const int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({count}), &out));
    T* o = out->data<T>();
    for (int64_t i = 0; i < count; ++i) o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    return absl::OkStatus();
  }
};

class EyeLikeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("k", &k_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    if (in.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("EyeLike: input must be 2-D, got ", in.shape().DebugString()));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    const int64_t rows = in.dim_size(0), cols = in.dim_size(1);
    absl::Status status = absl::UnimplementedError(
        absl::StrCat("EyeLike: no output of type ", DataTypeString(out->dtype())));
    VisitDataType(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, std::string>) {
        T* o = out->data<T>();
        std::fill(o, o + rows * cols, T(0));
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t c = r + k_;
          if (c >= 0 && c < cols) o[r * cols + c] = T(1);
        }
        status = absl::OkStatus();
      }
    });
    return status;
  }

 private:
  int64_t k_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Reshape").Device(DEVICE_CPU), ReshapeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Flatten").Device(DEVICE_CPU), FlattenOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Squeeze").Device(DEVICE_CPU), SqueezeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Unsqueeze").Device(DEVICE_CPU), UnsqueezeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Shape").Device(DEVICE_CPU), ShapeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Size").Device(DEVICE_CPU), SizeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>ConstantOfShape").Device(DEVICE_CPU), ConstantOfShapeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Range").Device(DEVICE_CPU), RangeOp);
REGISTER_KERNEL_BUILDER(Name("Reshape").Device(DEVICE_CPU), ReshapeOp);
REGISTER_KERNEL_BUILDER(Name("Range").Device(DEVICE_CPU), RangeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>EyeLike").Device(DEVICE_CPU), EyeLikeOp);

}  // namespace
}  // namespace sluice
