// ONNX indexing kernels: Gather, GatherElements, GatherND, ScatterElements (and Scatter, which
// the converter maps onto it), ScatterND. Indices may be negative (counted from the end);
// out-of-range indices are INVALID_ARGUMENT before anything is written.
#include <algorithm>
#include <complex>
#include <type_traits>

#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Indices of `t` as int64, each checked against `dim` and made non-negative.
absl::StatusOr<std::vector<int64_t>> CheckedIndices(const Tensor& t, int64_t dim,
                                                    absl::string_view op) {
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IndexValues(t, absl::StrCat(op, ": indices")));
  for (int64_t& i : v) SL_RETURN_IF_ERROR(CheckIndex(&i, dim, absl::StrCat(op, ": index")));
  return v;
}

class GatherOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, data.dims(), "Gather: axis"));
    const int64_t dim = data.dim_size(axis);
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, CheckedIndices(indices, dim, "Gather"));
    TensorShape out_shape;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) {
      out_shape.AddDim(data.dim_size(d));
      outer *= data.dim_size(d);
    }
    for (int d = 0; d < indices.dims(); ++d) out_shape.AddDim(indices.dim_size(d));
    for (int d = axis + 1; d < data.dims(); ++d) {
      out_shape.AddDim(data.dim_size(d));
      inner *= data.dim_size(d);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t n = static_cast<int64_t>(idx.size());
    return VisitElements(data.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(data.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ParallelForIfLarge(ctx, outer * n, out->NumElements(), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const E* s = src + ((r / n) * dim + idx[r % n]) * inner;
          std::copy(s, s + inner, dst + r * inner);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = 0;
};

// Visits every element of `shape` (row-major) with its offset in a tensor of `strides`, the
// coordinate along `axis` left out: fn(linear_index, offset_without_axis).
template <typename Fn>
void ForEachOffset(const TensorShape& shape, const DimVector& strides, int axis, Fn&& fn) {
  const int rank = shape.dims();
  DimVector index(rank, 0);
  int64_t off = 0;
  const int64_t n = shape.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    fn(i, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (d != axis) off += strides[d];
      if (++index[d] < shape.dim_size(d)) break;
      if (d != axis) off -= strides[d] * shape.dim_size(d);
      index[d] = 0;
    }
  }
}

// indices (and updates) may be smaller than data in every dim but `axis`; never larger.
absl::Status CheckElementsShapes(const Tensor& data, const Tensor& indices, int axis,
                                 absl::string_view op) {
  if (indices.dims() != data.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": indices ", indices.shape().DebugString(),
                                                   " must have the rank of data ",
                                                   data.shape().DebugString()));
  }
  for (int d = 0; d < data.dims(); ++d) {
    if (d != axis && indices.dim_size(d) > data.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": indices ", indices.shape().DebugString(), " exceed data ",
          data.shape().DebugString(), " in dim ", d));
    }
  }
  return absl::OkStatus();
}

class GatherElementsOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, data.dims(), "GatherElements: axis"));
    SL_RETURN_IF_ERROR(CheckElementsShapes(data, indices, axis, "GatherElements"));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                        CheckedIndices(indices, data.dim_size(axis), "GatherElements"));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, indices.shape(), &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const DimVector strides = RowMajorStrides(data.shape());
    return VisitElements(data.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(data.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ForEachOffset(indices.shape(), strides, axis, [&](int64_t i, int64_t off) {
        dst[i] = src[off + idx[i] * strides[axis]];
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = 0;
};

// For GatherND and ScatterND: where each index tuple of `indices` (last dim k) points in
// `data`, after `batch_dims` leading dims shared by both. Offsets are in elements of data.
struct NdPlan {
  std::vector<int64_t> offsets;  // One per tuple.
  int64_t slice = 1;             // Elements per tuple: the product of data dims past b + k.
  TensorShape tuples_shape;      // indices.shape[:-1].
};

absl::StatusOr<NdPlan> MakeNdPlan(const Tensor& data, const Tensor& indices, int64_t batch_dims,
                                  absl::string_view op) {
  if (indices.dims() < 1) return absl::InvalidArgumentError(absl::StrCat(op, ": indices must have rank >= 1"));
  const int64_t k = indices.dim_size(indices.dims() - 1);
  if (batch_dims < 0 || batch_dims >= indices.dims() || batch_dims >= data.dims() ||
      k < 1 || batch_dims + k > data.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": indices ", indices.shape().DebugString(), " with batch_dims ", batch_dims,
        " do not fit data ", data.shape().DebugString()));
  }
  NdPlan plan;
  int64_t batches = 1;
  for (int d = 0; d < batch_dims; ++d) {
    if (indices.dim_size(d) != data.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": batch dim ", d, " differs: indices ",
                                                     indices.shape().DebugString(), ", data ",
                                                     data.shape().DebugString()));
    }
    batches *= data.dim_size(d);
  }
  for (int d = 0; d < indices.dims() - 1; ++d) plan.tuples_shape.AddDim(indices.dim_size(d));
  for (int d = static_cast<int>(batch_dims + k); d < data.dims(); ++d) plan.slice *= data.dim_size(d);
  const DimVector strides = RowMajorStrides(data.shape());
  const int64_t batch_stride = batch_dims > 0 ? strides[batch_dims - 1] : 0;
  const int64_t tuples = plan.tuples_shape.num_elements();
  const int64_t per_batch = batches > 0 ? tuples / batches : 0;
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IndexValues(indices, absl::StrCat(op, ": indices")));
  plan.offsets.resize(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = per_batch > 0 ? (t / per_batch) * batch_stride : 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx[t * k + j];
      const int d = static_cast<int>(batch_dims + j);
      SL_RETURN_IF_ERROR(CheckIndex(&i, data.dim_size(d), absl::StrCat(op, ": index")));
      off += i * strides[d];
    }
    plan.offsets[t] = off;
  }
  return plan;
}

class GatherNDOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    return ctx->GetAttr("batch_dims", &batch_dims_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    SL_ASSIGN_OR_RETURN(NdPlan plan, MakeNdPlan(data, indices, batch_dims_, "GatherND"));
    TensorShape out_shape = plan.tuples_shape;
    const int64_t k = indices.dim_size(indices.dims() - 1);
    for (int d = static_cast<int>(batch_dims_ + k); d < data.dims(); ++d) out_shape.AddDim(data.dim_size(d));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    return VisitElements(data.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(data.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      const int64_t n = static_cast<int64_t>(plan.offsets.size()), s = plan.slice;
      ParallelForIfLarge(ctx, n, out->NumElements(), [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) std::copy(src + plan.offsets[t], src + plan.offsets[t] + s, dst + t * s);
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t batch_dims_ = 0;
};

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

absl::StatusOr<Reduction> ParseReduction(OpKernelConstruction* ctx) {
  std::string r;
  SL_RETURN_IF_ERROR(ctx->GetAttr("reduction", &r));
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", r, "'"));
}

// Arithmetic on half and bfloat16 goes through float.
template <typename T> struct ArithType { using type = T; };
template <> struct ArithType<half> { using type = float; };
template <> struct ArithType<bfloat16> { using type = float; };

// Calls fn(TypeTag<E>{}, combine) with combine(E& dst, const E& src) applying `reduction`.
// Plain assignment moves any dtype as bytes; add and mul need a numeric dtype.
template <typename Fn>
absl::Status VisitScatter(DataType dt, Reduction reduction, absl::string_view op, Fn&& fn) {
  if (reduction == Reduction::kNone) {
    return VisitElements(dt, [&](auto tag) {
      using E = typename decltype(tag)::type;
      return fn(tag, [](E& d, const E& s) { d = s; });
    });
  }
  absl::Status status = absl::InvalidArgumentError(
      absl::StrCat(op, ": reduction needs a numeric type, got ", DataTypeString(dt)));
  VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = typename ArithType<T>::type;
    if constexpr (!std::is_same_v<T, std::string>) {
      switch (reduction) {
        case Reduction::kAdd:
          status = fn(tag, [](T& d, const T& s) { d = T(A(d) + A(s)); });
          break;
        case Reduction::kMul:
          status = fn(tag, [](T& d, const T& s) { d = T(A(d) * A(s)); });
          break;
        case Reduction::kMax:
        case Reduction::kMin:
          // Complex numbers have no order.
          if constexpr (std::is_arithmetic_v<A>) {
            if (reduction == Reduction::kMax) {
              status = fn(tag, [](T& d, const T& s) { d = A(s) > A(d) ? s : d; });
            } else {
              status = fn(tag, [](T& d, const T& s) { d = A(s) < A(d) ? s : d; });
            }
          } else {
            status = absl::InvalidArgumentError(absl::StrCat(
                op, ": reduction max/min needs an ordered type, got ", DataTypeString(dt)));
          }
          break;
        case Reduction::kNone:
          break;
      }
    }
  });
  return status;
}

// The output starts as a copy of data (or data's own buffer when nothing else holds it).
absl::StatusOr<Tensor*> OutputFromData(OpKernelContext* ctx) {
  const Tensor& data = ctx->input(0);
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, data.shape(), &out));
  if (out->raw_data() != data.raw_data() && data.NumElements() > 0) {
    SL_RETURN_IF_ERROR(VisitElements(data.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* s = static_cast<const E*>(data.raw_data());
      std::copy(s, s + data.NumElements(), static_cast<E*>(out->raw_data()));
      return absl::OkStatus();
    }));
  }
  return out;
}

class ScatterElementsOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    SL_ASSIGN_OR_RETURN(reduction_, ParseReduction(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, data.dims(), "ScatterElements: axis"));
    SL_RETURN_IF_ERROR(CheckElementsShapes(data, indices, axis, "ScatterElements"));
    if (updates.shape() != indices.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ScatterElements: updates ", updates.shape().DebugString(),
          " must have the shape of indices ", indices.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                        CheckedIndices(indices, data.dim_size(axis), "ScatterElements"));
    SL_ASSIGN_OR_RETURN(Tensor * out, OutputFromData(ctx));
    if (indices.NumElements() == 0) return absl::OkStatus();
    const DimVector strides = RowMajorStrides(data.shape());
    return VisitScatter(data.dtype(), reduction_, "ScatterElements", [&](auto tag, auto combine) {
      using E = typename decltype(tag)::type;
      const E* upd = static_cast<const E*>(updates.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ForEachOffset(indices.shape(), strides, axis, [&](int64_t i, int64_t off) {
        combine(dst[off + idx[i] * strides[axis]], upd[i]);
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = 0;
  Reduction reduction_ = Reduction::kNone;
};

class ScatterNDOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_ASSIGN_OR_RETURN(reduction_, ParseReduction(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    SL_ASSIGN_OR_RETURN(NdPlan plan, MakeNdPlan(data, indices, 0, "ScatterND"));
    TensorShape want = plan.tuples_shape;
    const int64_t k = indices.dim_size(indices.dims() - 1);
    for (int d = static_cast<int>(k); d < data.dims(); ++d) want.AddDim(data.dim_size(d));
    if (updates.shape() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ScatterND: updates ", updates.shape().DebugString(), " must have shape ",
          want.DebugString(), " (indices.shape[:-1] + data.shape[k:])"));
    }
    SL_ASSIGN_OR_RETURN(Tensor * out, OutputFromData(ctx));
    if (updates.NumElements() == 0) return absl::OkStatus();
    return VisitScatter(data.dtype(), reduction_, "ScatterND", [&](auto tag, auto combine) {
      using E = typename decltype(tag)::type;
      const E* upd = static_cast<const E*>(updates.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      const int64_t s = plan.slice;
      for (size_t t = 0; t < plan.offsets.size(); ++t) {
        for (int64_t j = 0; j < s; ++j) combine(dst[plan.offsets[t] + j], upd[t * s + j]);
      }
      return absl::OkStatus();
    });
  }

 private:
  Reduction reduction_ = Reduction::kNone;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Gather").Device(DEVICE_CPU), GatherOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>GatherElements").Device(DEVICE_CPU), GatherElementsOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>GatherND").Device(DEVICE_CPU), GatherNDOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>ScatterElements").Device(DEVICE_CPU), ScatterElementsOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>ScatterND").Device(DEVICE_CPU), ScatterNDOp);

}  // namespace
}  // namespace sluice
