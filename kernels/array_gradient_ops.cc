// Kernels of the backward ops of Slice, Gather and MatMul (ops/array_gradient_ops.cc).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Writes dY into zeros of `shape` at the positions ONNX Slice reads (clamping as Slice does).
template <typename T>
class SliceGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return slice_inputs_.Parse(ctx); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    SL_ASSIGN_OR_RETURN(TensorShape shape, ShapeInput(ctx->input(1), "SliceGrad: shape"));
    const int rank = shape.dims();
    SL_ASSIGN_OR_RETURN(SliceGeometry slice, ComputeSliceGeometry(ctx, 2, slice_inputs_, shape, "SliceGrad"));
    const DimVector& begin = slice.begin;
    const DimVector& step = slice.step;
    const DimVector& count = slice.count;
    if (TensorShape(count) != dy.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("SliceGrad: dY is ", dy.shape().DebugString(), " but the slice of ",
                                                     shape.DebugString(), " is ", TensorShape(count).DebugString()));
    }
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &dx));
    T* out = dx->data<T>();
    std::fill(out, out + dx->NumElements(), T(0));
    if (dy.NumElements() == 0) return absl::OkStatus();
    const DimVector strides = RowMajorStrides(shape);
    int64_t at = 0;
    for (int d = 0; d < rank; ++d) at += begin[d] * strides[d];
    DimVector idx(rank, 0);
    const T* src = dy.data<T>();
    for (int64_t k = 0; k < dy.NumElements(); ++k) {
      out[at] = src[k];
      for (int d = rank - 1; d >= 0; --d) {
        at += step[d] * strides[d];
        if (++idx[d] < count[d]) break;
        at -= step[d] * strides[d] * count[d];
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  SliceInputs slice_inputs_;
};

// dX[outer, indices[j], inner] += dY[outer, j, inner].
template <typename T>
class GatherGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> indices, IndexValues(ctx->input(1), "GatherGrad: indices"));
    SL_ASSIGN_OR_RETURN(TensorShape shape, ShapeInput(ctx->input(2), "GatherGrad: shape"));
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, shape.dims(), "GatherGrad: axis"));
    DimVector want;
    for (int d = 0; d < axis; ++d) want.push_back(shape.dim_size(d));
    for (int d = 0; d < ctx->input(1).dims(); ++d) want.push_back(ctx->input(1).dim_size(d));
    for (int d = axis + 1; d < shape.dims(); ++d) want.push_back(shape.dim_size(d));
    if (TensorShape(want) != dy.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("GatherGrad: dY is ", dy.shape().DebugString(), " but Gather from ",
                                                     shape.DebugString(), " gives ", TensorShape(want).DebugString()));
    }
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape.dim_size(d);
    for (int d = axis + 1; d < shape.dims(); ++d) inner *= shape.dim_size(d);
    const int64_t dim = shape.dim_size(axis), n = static_cast<int64_t>(indices.size());
    for (int64_t& i : indices) SL_RETURN_IF_ERROR(CheckIndex(&i, dim, "GatherGrad: index"));
    Tensor* dx;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &dx));
    T* out = dx->data<T>();
    std::fill(out, out + dx->NumElements(), T(0));
    const T* src = dy.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        T* row = out + (o * dim + indices[j]) * inner;
        const T* from = src + (o * n + j) * inner;
        for (int64_t i = 0; i < inner; ++i) row[i] += from[i];
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

// numpy matmul's shapes with the unit dims of 1-D operands kept.
class MatMulGradShapesOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& xs = ctx->input(0);
    const Tensor& ys = ctx->input(1);
    std::vector<int64_t> x(xs.flat<int64_t>().begin(), xs.flat<int64_t>().end());
    std::vector<int64_t> y(ys.flat<int64_t>().begin(), ys.flat<int64_t>().end());
    if (x.empty() || y.empty()) return absl::InvalidArgumentError("MatMulGradShapes: operands must not be scalars");
    if (x.size() == 1) x.insert(x.begin(), 1);
    if (y.size() == 1) y.push_back(1);
    const size_t xb = x.size() - 2, yb = y.size() - 2, batch = std::max(xb, yb);
    std::vector<int64_t> out(batch);
    for (size_t i = 0; i < batch; ++i) {
      const int64_t a = i + xb >= batch ? x[i + xb - batch] : 1;
      const int64_t b = i + yb >= batch ? y[i + yb - batch] : 1;
      if (a != b && a != 1 && b != 1) {
        return absl::InvalidArgumentError(absl::StrCat("MatMulGradShapes: batch dims ", DimsString(x), " and ",
                                                       DimsString(y), " do not broadcast"));
      }
      out[i] = a == 1 ? b : a;
    }
    out.push_back(x[x.size() - 2]);
    out.push_back(y.back());
    for (int k = 0; k < 3; ++k) {
      const std::vector<int64_t>& v = k == 0 ? x : k == 1 ? y : out;
      Tensor* t;
      SL_RETURN_IF_ERROR(ctx->allocate_output(k, TensorShape({static_cast<int64_t>(v.size())}), &t));
      std::copy(v.begin(), v.end(), t->data<int64_t>());
    }
    return absl::OkStatus();
  }
};

REGISTER_KERNEL_BUILDER(Name("Onnx>SliceGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"), SliceGradOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>SliceGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"), SliceGradOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GatherGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"), GatherGradOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GatherGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"), GatherGradOp<double>);
REGISTER_KERNEL_BUILDER(Name("MatMulGradShapes").Device(DEVICE_CPU), MatMulGradShapesOp);

}  // namespace
}  // namespace sluice
