// Kernels of TensorFlow's indexing ops (ops/tf_array_ops.cc): GatherV2, GatherNd, ScatterNd (the
// gathers' gradient), Where and OneHot. As TensorFlow does on CPU, an index outside [0, dim) is INVALID_ARGUMENT (ONNX's
// Gather counts negative indices from the end; these do not), checked before anything is
// written.
#include <algorithm>
#include <type_traits>

#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"
#include "kernels/tf_kernel_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;  // Dims of an existing tensor: no overflow.
  return p;
}

// GatherV2(params, indices, axis): output[p..., i..., q...] = params[p..., indices[i...], q...],
// where the first batch_dims dims of params and indices are shared.
class GatherV2Op : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("batch_dims", &batch_dims_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    SL_ASSIGN_OR_RETURN(int64_t axis_value, IntScalar(ctx->input(2), "GatherV2: axis"));
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_value, params.dims(), "GatherV2: axis"));
    int64_t bd = batch_dims_ < 0 ? batch_dims_ + indices.dims() : batch_dims_;
    if (bd < 0 || bd > indices.dims() || bd > axis) {
      return absl::InvalidArgumentError(absl::StrCat("GatherV2: batch_dims ", batch_dims_, " must be in [0, ",
                                                     "min(axis ", axis, ", indices rank ", indices.dims(), ")]"));
    }
    const auto pd = params.shape().dim_sizes();
    const auto id = indices.shape().dim_sizes();
    for (int d = 0; d < bd; ++d) {
      if (pd[d] != id[d]) {
        return absl::InvalidArgumentError(absl::StrCat("GatherV2: batch dim ", d, " differs between params ",
                                                       params.shape().DebugString(), " and indices ",
                                                       indices.shape().DebugString()));
      }
    }
    const int64_t batch = Product(absl::MakeConstSpan(pd.data(), bd));
    const int64_t outer = Product(absl::MakeConstSpan(pd.data() + bd, axis - bd));
    const int64_t dim = pd[axis];
    const int64_t inner = Product(absl::MakeConstSpan(pd.data() + axis + 1, params.dims() - axis - 1));
    const int64_t n = Product(absl::MakeConstSpan(id.data() + bd, indices.dims() - bd));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IntValues(indices, "GatherV2: indices"));
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= dim) {
        return absl::InvalidArgumentError(absl::StrCat("GatherV2: indices[", i, "] = ", idx[i], " is not in [0, ",
                                                       dim, ") (params ", params.shape().DebugString(), ", axis ",
                                                       axis, ")"));
      }
    }
    DimVector out_dims(pd.begin(), pd.begin() + axis);
    out_dims.insert(out_dims.end(), id.begin() + bd, id.end());
    out_dims.insert(out_dims.end(), pd.begin() + axis + 1, pd.end());
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    return VisitElements(params.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(params.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ParallelForIfLarge(ctx, batch * outer * n, out->NumElements(), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t j = r % n, bo = r / n, bi = bo / outer;  // bo = batch index * outer + o.
          const E* s = src + (bo * dim + idx[bi * n + j]) * inner;
          std::copy(s, s + inner, dst + r * inner);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t batch_dims_ = 0;
};

// GatherNd(params, indices): each index tuple (indices' last dim, k <= rank(params)) picks
// the slice params[i0, ..., ik-1, ...].
class GatherNdOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    if (indices.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("GatherNd: indices must have rank >= 1, got ",
                                                     indices.shape().DebugString()));
    }
    const int64_t k = indices.dim_size(indices.dims() - 1);
    if (k > params.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("GatherNd: index tuples of length ", k,
                                                     " do not fit params of shape ", params.shape().DebugString()));
    }
    const auto pd = params.shape().dim_sizes();
    const auto id = indices.shape().dim_sizes();
    DimVector out_dims(id.begin(), id.end() - 1);
    out_dims.insert(out_dims.end(), pd.begin() + k, pd.end());
    const int64_t tuples = Product(absl::MakeConstSpan(id.data(), indices.dims() - 1));
    const int64_t slice = Product(absl::MakeConstSpan(pd.data() + k, params.dims() - k));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IntValues(indices, "GatherNd: indices"));
    const DimVector strides = RowMajorStrides(params.shape());
    std::vector<int64_t> offsets(tuples);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = idx[t * k + j];
        if (i < 0 || i >= pd[j]) {
          std::vector<int64_t> tuple(idx.begin() + t * k, idx.begin() + (t + 1) * k);
          return absl::InvalidArgumentError(absl::StrCat("GatherNd: index ", DimsString(tuple), " (tuple ", t,
                                                         ") is out of range for params of shape ",
                                                         params.shape().DebugString()));
        }
        off += i * strides[j];
      }
      offsets[t] = off;
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    return VisitElements(params.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(params.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ParallelForIfLarge(ctx, tuples, out->NumElements(), [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) std::copy(src + offsets[t], src + offsets[t] + slice, dst + t * slice);
      });
      return absl::OkStatus();
    });
  }
};

// ScatterNd(indices, updates, shape): zeros of `shape`, then each slice of `updates` added at
// its index tuple (indices' last dim, k <= rank), so repeated tuples add up. A tuple out of
// range is INVALID_ARGUMENT, checked before anything is written, unless bad_indices_policy is
// IGNORE (then it is skipped).
template <typename T>
class ScatterNdOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string policy;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "bad_indices_policy", std::string(), &policy));
    if (policy != "" && policy != "DEFAULT" && policy != "ERROR" && policy != "IGNORE") {
      return absl::InvalidArgumentError(absl::StrCat("ScatterNd: unknown bad_indices_policy '", policy, "'"));
    }
    ignore_bad_ = policy == "IGNORE";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntVector(ctx->input(2), -1, "ScatterNd: shape"));
    for (int64_t d : dims) {
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("ScatterNd: shape ", DimsString(dims), " has a negative dim"));
    }
    SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    if (indices.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("ScatterNd: indices must have rank >= 1, got ",
                                                     indices.shape().DebugString()));
    }
    const int64_t k = indices.dim_size(indices.dims() - 1);
    const auto id = indices.shape().dim_sizes();
    DimVector want(id.begin(), id.end() - 1);
    if (k > shape.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("ScatterNd: index tuples of length ", k,
                                                     " do not fit shape ", shape.DebugString()));
    }
    want.insert(want.end(), dims.begin() + k, dims.end());
    if (updates.shape() != TensorShape(want)) {
      return absl::InvalidArgumentError(absl::StrCat("ScatterNd: updates must have shape ", DimsString(want),
                                                     " (indices ", indices.shape().DebugString(), ", shape ",
                                                     shape.DebugString(), "), got ", updates.shape().DebugString()));
    }
    const int64_t tuples = Product(absl::MakeConstSpan(id.data(), indices.dims() - 1));
    const int64_t slice = Product(absl::MakeConstSpan(dims.data() + k, dims.size() - k));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IntValues(indices, "ScatterNd: indices"));
    const DimVector strides = RowMajorStrides(shape);
    std::vector<int64_t> offsets(tuples);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k && off >= 0; ++j) {
        const int64_t i = idx[t * k + j];
        if (i >= 0 && i < dims[j]) {
          off += i * strides[j];
        } else if (ignore_bad_) {
          off = -1;
        } else {
          std::vector<int64_t> tuple(idx.begin() + t * k, idx.begin() + (t + 1) * k);
          return absl::InvalidArgumentError(absl::StrCat("ScatterNd: index ", DimsString(tuple), " (tuple ", t,
                                                         ") is out of range for shape ", shape.DebugString()));
        }
      }
      offsets[t] = off;
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    const T* u = updates.data<T>();
    for (int64_t t = 0; t < tuples; ++t) {
      if (offsets[t] < 0) continue;
      for (int64_t s = 0; s < slice; ++s) o[offsets[t] + s] = WrappingAdd(o[offsets[t] + s], u[t * slice + s]);
    }
    return absl::OkStatus();
  }

 private:
  bool ignore_bad_ = false;
};

// Where(input): the coordinates of the true (non-zero) elements, row-major, as int64
// [num_true, rank].
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> hits;
    absl::Status status = absl::InvalidArgumentError(
        absl::StrCat("Where: input of type ", DataTypeString(in.dtype()), " is not supported"));
    VisitDataType(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T>) {
        const T* p = in.data<T>();
        for (int64_t i = 0; i < in.NumElements(); ++i) {
          if (p[i] != T(0)) hits.push_back(i);
        }
        status = absl::OkStatus();
      } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        const T* p = in.data<T>();
        for (int64_t i = 0; i < in.NumElements(); ++i) {
          if (static_cast<float>(p[i]) != 0.0f) hits.push_back(i);
        }
        status = absl::OkStatus();
      }
    });
    SL_RETURN_IF_ERROR(status);
    const int rank = in.dims();
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({static_cast<int64_t>(hits.size()), rank}), &out));
    int64_t* o = out->data<int64_t>();
    for (int64_t h : hits) {
      for (int d = rank - 1; d >= 0; --d) {
        o[d] = h % in.dim_size(d);
        h /= in.dim_size(d);
      }
      o += rank;
    }
    return absl::OkStatus();
  }
};

// OneHot(indices, depth, on_value, off_value): a new dim of size depth at `axis` (-1: last),
// on_value where its index equals the index value, off_value elsewhere (everywhere for an
// index outside [0, depth)).
class OneHotOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& indices = ctx->input(0);
    SL_ASSIGN_OR_RETURN(int64_t depth, IntScalar(ctx->input(1), "OneHot: depth"));
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    if (depth < 0) return absl::InvalidArgumentError(absl::StrCat("OneHot: depth ", depth, " is negative"));
    if (on.NumElements() != 1 || off.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("OneHot: on_value and off_value must be scalars, got shapes ",
                                                     on.shape().DebugString(), " and ", off.shape().DebugString()));
    }
    if (axis_ < -1 || axis_ > indices.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("OneHot: axis ", axis_, " must be -1 or in [0, ",
                                                     indices.dims(), "]"));
    }
    const int axis = axis_ == -1 ? indices.dims() : static_cast<int>(axis_);
    DimVector dims(indices.shape().dim_sizes().begin(), indices.shape().dim_sizes().end());
    const int64_t prefix = Product(absl::MakeConstSpan(dims.data(), axis));
    const int64_t suffix = Product(absl::MakeConstSpan(dims.data() + axis, dims.size() - axis));
    dims.insert(dims.begin() + axis, depth);
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IntValues(indices, "OneHot: indices"));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    return VisitElements(on.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E on_v = *static_cast<const E*>(on.raw_data()), off_v = *static_cast<const E*>(off.raw_data());
      E* o = static_cast<E*>(out->raw_data());
      std::fill(o, o + out->NumElements(), off_v);
      for (int64_t p = 0; p < prefix; ++p) {
        for (int64_t s = 0; s < suffix; ++s) {
          const int64_t i = idx[p * suffix + s];
          if (i >= 0 && i < depth) o[(p * depth + i) * suffix + s] = on_v;
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = -1;
};

REGISTER_KERNEL_BUILDER(Name("GatherV2").Device(DEVICE_CPU), GatherV2Op);
REGISTER_KERNEL_BUILDER(Name("GatherNd").Device(DEVICE_CPU), GatherNdOp);
REGISTER_KERNEL_BUILDER(Name("Where").Device(DEVICE_CPU), WhereOp);
REGISTER_KERNEL_BUILDER(Name("OneHot").Device(DEVICE_CPU), OneHotOp);

[[maybe_unused]] const bool kScatterNdRegistered = [] {
  RegisterCpuKernelTemplate<ScatterNdOp>("ScatterNd", NumericTypes{});
  return true;
}();

}  // namespace
}  // namespace sluice
