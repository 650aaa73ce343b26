// Kernels of TensorFlow's slicing ops (ops/tf_array_ops.cc): Slice, StridedSlice (and its
// gradient StridedSliceGrad), Split, SplitV, Unpack and Tile. Each is one strided view of its input copied out
// (array_kernel_util.h's StridedCopy); StridedSlice's index rules are framework/strided_slice.h's,
// shared with its shape function.
#include <algorithm>

#include "framework/checked_size.h"
#include "framework/strided_slice.h"
#include "kernels/kernel_registry.h"
#include "kernels/tf_kernel_util.h"

namespace sluice {
namespace {

// Copies the view of `in` (from `offset`, `dims` with element `strides`) into output `index`
// of shape `out_shape` (the same number of elements as `dims`).
absl::Status CopyView(OpKernelContext* ctx, int index, const Tensor& in, int64_t offset, const DimVector& dims,
                      const DimVector& strides, const TensorShape& out_shape) {
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(index, out_shape, &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  return StridedCopyTensor(ctx, in, offset, dims, strides, out);
}

// Slice(input, begin, size): size[d] elements of dim d from begin[d]; size -1 takes the rest.
class SliceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> begin, IntVector(ctx->input(1), rank, "Slice: begin"));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> size, IntVector(ctx->input(2), rank, "Slice: size"));
    const DimVector in_strides = RowMajorStrides(in.shape());
    DimVector dims(rank);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = in.dim_size(d), b = begin[d];
      const int64_t s = size[d] == -1 ? dim - b : size[d];
      if (b < 0 || b > dim || s < 0 || s > dim - b) {
        return absl::InvalidArgumentError(absl::StrCat("Slice: begin ", b, " and size ", size[d], " do not fit dim ", d,
                                                       " of size ", dim, " (input ", in.shape().DebugString(), ")"));
      }
      dims[d] = s;
      offset += b * in_strides[d];
    }
    return CopyView(ctx, 0, in, offset, dims, in_strides, TensorShape(dims));
  }
};

class StridedSliceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("begin_mask", &masks_.begin));
    SL_RETURN_IF_ERROR(ctx->GetAttr("end_mask", &masks_.end));
    SL_RETURN_IF_ERROR(ctx->GetAttr("ellipsis_mask", &masks_.ellipsis));
    SL_RETURN_IF_ERROR(ctx->GetAttr("new_axis_mask", &masks_.new_axis));
    return ctx->GetAttr("shrink_axis_mask", &masks_.shrink_axis);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> begin, IntVector(ctx->input(1), -1, "StridedSlice: begin"));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> end, IntVector(ctx->input(2), -1, "StridedSlice: end"));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntVector(ctx->input(3), -1, "StridedSlice: strides"));
    SL_ASSIGN_OR_RETURN(StridedSlicePlan p, PlanStridedSlice(in.shape().dim_sizes(), begin, end, strides, masks_));
    const DimVector in_strides = RowMajorStrides(in.shape());
    DimVector dims(p.size.begin(), p.size.end()), view_strides(in.dims());
    int64_t offset = 0;
    for (int d = 0; d < in.dims(); ++d) {
      offset += p.begin[d] * in_strides[d];
      view_strides[d] = p.stride[d] * in_strides[d];  // |stride| < dim where it matters: no overflow.
    }
    return CopyView(ctx, 0, in, offset, dims, view_strides, TensorShape(p.final_shape));
  }

 private:
  StridedSliceMasks masks_;
};

// StridedSliceGrad(shape, begin, end, strides, dy): zeros of `shape` with dy written where
// StridedSlice of that shape reads (each element at most once, so writes never collide).
class StridedSliceGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("begin_mask", &masks_.begin));
    SL_RETURN_IF_ERROR(ctx->GetAttr("end_mask", &masks_.end));
    SL_RETURN_IF_ERROR(ctx->GetAttr("ellipsis_mask", &masks_.ellipsis));
    SL_RETURN_IF_ERROR(ctx->GetAttr("new_axis_mask", &masks_.new_axis));
    return ctx->GetAttr("shrink_axis_mask", &masks_.shrink_axis);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(0), -1, "StridedSliceGrad: shape"));
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat("StridedSliceGrad: shape ", DimsString(dims),
                                                       " has a negative dim"));
      }
    }
    SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> begin, IntVector(ctx->input(1), -1, "StridedSliceGrad: begin"));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> end, IntVector(ctx->input(2), -1, "StridedSliceGrad: end"));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntVector(ctx->input(3), -1, "StridedSliceGrad: strides"));
    SL_ASSIGN_OR_RETURN(StridedSlicePlan p, PlanStridedSlice(dims, begin, end, strides, masks_));
    const Tensor& dy = ctx->input(4);
    if (dy.shape() != TensorShape(p.final_shape)) {
      return absl::InvalidArgumentError(absl::StrCat("StridedSliceGrad: dy has shape ", dy.shape().DebugString(),
                                                     ", the slice of ", shape.DebugString(), " is ",
                                                     DimsString(p.final_shape)));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
    const int rank = shape.dims();
    const DimVector out_strides = RowMajorStrides(shape);
    DimVector steps(rank);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      offset += p.begin[d] * out_strides[d];
      steps[d] = p.stride[d] * out_strides[d];
    }
    return VisitElements(dy.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      E* o = static_cast<E*>(out->raw_data());
      std::fill(o, o + out->NumElements(), E());  // All-zero bytes: 0 of every number type.
      const E* src = static_cast<const E*>(dy.raw_data());
      const int64_t n = dy.NumElements();
      if (n == 0) return absl::OkStatus();
      // An odometer over the slice's per-dim sizes, walking dy in order.
      DimVector index(rank, 0);
      int64_t at = offset;
      for (int64_t k = 0; k < n; ++k) {
        o[at] = src[k];
        for (int d = rank - 1; d >= 0; --d) {
          at += steps[d];
          if (++index[d] < p.size[d]) break;
          at -= steps[d] * p.size[d];
          index[d] = 0;
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  StridedSliceMasks masks_;
};

// Piece `shape` of `in` from element `offset`, contiguous there, as a view of in's buffer
// (no copy), or an uninitialized tensor where a view does not suit: a string or variant
// tensor, a misaligned start, an empty piece, or a small piece of a big buffer (which the
// view would keep alive: under 64 KiB and a sixteenth of it, or under a thousandth).
Tensor ContiguousView(const Tensor& in, int64_t offset, const TensorShape& shape) {
  const DataType dt = in.dtype();
  if (dt == DT_STRING || dt == DT_VARIANT || dt == DT_RESOURCE || in.buffer() == nullptr) return Tensor();
  const size_t size = DataTypeSize(dt);
  const size_t bytes = static_cast<size_t>(shape.num_elements()) * size;
  // The whole buffer counts: `in` may itself be a view of a bigger one.
  const size_t kept = in.buffer()->size();
  if (size == 0 || bytes == 0 || (bytes < (size_t{64} << 10) && bytes * 16 < kept) || bytes * 1024 < kept) {
    return Tensor();
  }
  auto view = TensorBuffer::View(in.buffer(), static_cast<size_t>(offset) * size, bytes);
  return view == nullptr ? Tensor() : Tensor(dt, shape, std::move(view));
}

// Writes `in` cut along `axis` into pieces of `sizes` as outputs 0, 1, ...; with `drop_axis`
// (Unpack) each piece is one index and loses the axis. Where every dim before `axis` is 1 the
// pieces are contiguous, and aligned ones share the input's buffer (the all-reduce cuts its
// buckets into chunks and back into gradients so, training/replicate.h).
absl::Status SplitInto(OpKernelContext* ctx, const Tensor& in, int axis, const std::vector<int64_t>& sizes,
                       bool drop_axis) {
  const DimVector strides = RowMajorStrides(in.shape());
  DimVector dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
  bool contiguous = true;
  for (int d = 0; d < axis; ++d) contiguous &= dims[d] == 1;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    dims[axis] = sizes[i];
    TensorShape shape(dims);
    if (drop_axis) shape.RemoveDim(axis);
    Tensor view = contiguous ? ContiguousView(in, start * strides[axis], shape) : Tensor();
    if (view.IsInitialized()) {
      SL_RETURN_IF_ERROR(ctx->set_output(static_cast<int>(i), view));
    } else {
      SL_RETURN_IF_ERROR(CopyView(ctx, static_cast<int>(i), in, start * strides[axis], dims, strides, shape));
    }
    start += sizes[i];
  }
  return absl::OkStatus();
}

// Split(split_dim, value) into num_split equal parts; SplitV(value, size_splits, split_dim)
// into the given sizes, one of which may be -1 (the rest).
class SplitOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    v_ = ctx->def().op() == "SplitV";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const char* op = v_ ? "SplitV" : "Split";
    const Tensor& in = ctx->input(v_ ? 0 : 1);
    SL_ASSIGN_OR_RETURN(int64_t split_dim, IntScalar(ctx->input(v_ ? 2 : 0), absl::StrCat(op, ": split_dim")));
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(split_dim, in.dims(), absl::StrCat(op, ": split_dim")));
    const int n = ctx->num_outputs();
    const int64_t dim = in.dim_size(axis);
    std::vector<int64_t> sizes;
    if (!v_) {
      if (dim % n != 0) {
        return absl::InvalidArgumentError(absl::StrCat("Split: dim ", axis, " of ", in.shape().DebugString(),
                                                       " does not split evenly into num_split = ", n, " parts"));
      }
      sizes.assign(n, dim / n);
    } else {
      SL_ASSIGN_OR_RETURN(sizes, IntVector(ctx->input(1), n, "SplitV: size_splits"));
      int rest = -1;
      int64_t known = 0;
      for (int i = 0; i < n; ++i) {
        if (sizes[i] == -1 && rest < 0) {
          rest = i;
        } else if (sizes[i] < 0 || !CheckedAdd(known, sizes[i], &known)) {
          return absl::InvalidArgumentError(absl::StrCat("SplitV: size_splits ", DimsString(sizes),
                                                         " has a negative size (at most one may be -1) or overflows"));
        }
      }
      if (rest >= 0 ? known > dim : known != dim) {
        return absl::InvalidArgumentError(absl::StrCat("SplitV: size_splits ", DimsString(sizes),
                                                       " do not add up to dim ", axis, " of ", in.shape().DebugString()));
      }
      if (rest >= 0) sizes[rest] = dim - known;
    }
    return SplitInto(ctx, in, axis, sizes, false);
  }

 private:
  bool v_ = false;
};

// Unpack(value): the num slices of `value` along `axis`, each without that axis.
class UnpackOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, in.dims(), "Unpack: axis"));
    const int n = ctx->num_outputs();
    if (in.dim_size(axis) != n) {
      return absl::InvalidArgumentError(absl::StrCat("Unpack: dim ", axis, " of ", in.shape().DebugString(),
                                                     " is not num = ", n));
    }
    return SplitInto(ctx, in, axis, std::vector<int64_t>(n, 1), true);
  }

 private:
  int64_t axis_ = 0;
};

// Tile(input, multiples): the input repeated multiples[d] times along each dim d.
class TileOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> m, IntVector(ctx->input(1), in.dims(), "Tile: multiples"));
    // The output as [m0, d0, m1, d1, ...], reading the input with stride 0 over each m.
    const DimVector in_strides = RowMajorStrides(in.shape());
    DimVector view_dims, strides, out_dims;
    for (int d = 0; d < in.dims(); ++d) {
      int64_t o;
      if (m[d] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Tile: multiples ", DimsString(m), " has a negative entry"));
      }
      if (!CheckedMul(m[d], in.dim_size(d), &o)) {
        return absl::InvalidArgumentError(absl::StrCat("Tile: multiples ", DimsString(m), " of ",
                                                       in.shape().DebugString(), " overflow int64"));
      }
      view_dims.insert(view_dims.end(), {m[d], in.dim_size(d)});
      strides.insert(strides.end(), {0, in_strides[d]});
      out_dims.push_back(o);
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    return CopyView(ctx, 0, in, 0, view_dims, strides, out_shape);
  }
};

REGISTER_KERNEL_BUILDER(Name("Slice").Device(DEVICE_CPU), SliceOp);
REGISTER_KERNEL_BUILDER(Name("StridedSlice").Device(DEVICE_CPU), StridedSliceOp);
REGISTER_KERNEL_BUILDER(Name("StridedSliceGrad").Device(DEVICE_CPU), StridedSliceGradOp);
REGISTER_KERNEL_BUILDER(Name("Split").Device(DEVICE_CPU), SplitOp);
REGISTER_KERNEL_BUILDER(Name("SplitV").Device(DEVICE_CPU), SplitOp);
REGISTER_KERNEL_BUILDER(Name("Unpack").Device(DEVICE_CPU), UnpackOp);
REGISTER_KERNEL_BUILDER(Name("Tile").Device(DEVICE_CPU), TileOp);

}  // namespace
}  // namespace sluice
