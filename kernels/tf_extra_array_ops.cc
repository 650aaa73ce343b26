// Kernels of the TensorFlow ops in ops/tf_extra_array_ops.cc: UnsortedSegmentSum/Prod/Max/Min,
// ReverseV2, SpaceToBatchND, BatchToSpaceND, LinSpace, Unique, UniqueV2, SparseToDense,
// Bincount and TensorScatterUpdate (Cumprod shares Cumsum's kernel in cumsum_op.cc, Einsum the
// ONNX Einsum kernel in einsum_op.cc). As TensorFlow does on CPU, an index outside its range is
// INVALID_ARGUMENT, checked before anything is written; every size derived from input values
// is overflow-checked (framework/checked_size.h) before anything is allocated.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"
#include "kernels/tf_kernel_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The product of dims of a tensor that exists: it cannot overflow.
int64_t Product(absl::Span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// The values of an integer input of any of TensorFlow's index types, uint16 included (which
// TensorScatterUpdate's Tindices allows and IntValues does not read).
absl::StatusOr<std::vector<int64_t>> AnyIntValues(const Tensor& t, absl::string_view what) {
  if (t.dtype() == DT_UINT16) {
    std::vector<int64_t> v;
    v.reserve(t.NumElements());
    for (uint16_t x : t.flat<uint16_t>()) v.push_back(x);
    return v;
  }
  return IntValues(t, what);
}

// Arithmetic type per element type: half and bfloat16 compute in float.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

// a + b and a * b: integers wrap (as TensorFlow's do), computed in uint64 where wrapping is
// defined (signed overflow, and the int promotion of 16-bit unsigned products, are not).
template <typename A>
A WrapAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename A>
A WrapMul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// T's lowest and highest finite values (Eigen's NumTraits<T>::lowest/highest, which TensorFlow
// gives empty segments of UnsortedSegmentMax/Min).
template <typename T>
T Lowest() {
  if constexpr (std::is_same_v<T, half>) {
    return half(-65504.f);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16(-3.38953139e38f);
  } else {
    return std::numeric_limits<T>::lowest();
  }
}
template <typename T>
T Highest() {
  if constexpr (std::is_same_v<T, half>) {
    return half(65504.f);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16(3.38953139e38f);
  } else {
    return std::numeric_limits<T>::max();
  }
}

// ---- UnsortedSegmentSum, UnsortedSegmentProd, UnsortedSegmentMax, UnsortedSegmentMin.

enum class SegmentReduction { kSum, kProd, kMax, kMin };

// UnsortedSegment<R>(data, segment_ids, num_segments): output[s, ...] reduces every
// data[i..., ...] with segment_ids[i...] == s; segment_ids' shape is a prefix of data's. A
// negative id drops its slice (as TensorFlow does); an id >= num_segments is an error. An empty
// segment is the reduction's identity: 0, 1, or T's lowest / highest value for Max / Min.
template <typename T, SegmentReduction R>
class UnsortedSegmentOp : public OpKernel {
 public:
  using A = Acc<T>;

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    const std::string& op = type_string();
    SL_ASSIGN_OR_RETURN(int64_t num, IntScalar(ctx->input(2), absl::StrCat(op, ": num_segments")));
    if (num < 0) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": num_segments = ", num, " must not be negative"));
    }
    const auto dd = data.shape().dim_sizes();
    const auto id = ids.shape().dim_sizes();
    if (ids.dims() > data.dims() || !std::equal(id.begin(), id.end(), dd.begin())) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": data.shape = ", data.shape().DebugString(),
                                                     " does not start with segment_ids.shape = ",
                                                     ids.shape().DebugString()));
    }
    DimVector out_dims = {num};
    out_dims.insert(out_dims.end(), dd.begin() + ids.dims(), dd.end());
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims), op, ": output shape");
    const int64_t inner = Product(absl::MakeConstSpan(dd.data() + ids.dims(), dd.size() - ids.dims()));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> seg, IntValues(ids, absl::StrCat(op, ": segment_ids")));
    for (size_t i = 0; i < seg.size(); ++i) {
      if (seg[i] >= num) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": segment_ids[", i, "] = ", seg[i],
                                                       " is out of range [0, ", num, ")"));
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out), op);
    const int64_t total = out->NumElements();
    std::vector<A> acc(total, Identity());
    const T* x = data.data<T>();
    for (size_t i = 0; i < seg.size(); ++i) {
      if (seg[i] < 0) continue;
      A* row = acc.data() + seg[i] * inner;
      const T* in = x + static_cast<int64_t>(i) * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const A v = static_cast<A>(in[j]);
        if constexpr (R == SegmentReduction::kSum) {
          row[j] = WrapAdd(row[j], v);
        } else if constexpr (R == SegmentReduction::kProd) {
          row[j] = WrapMul(row[j], v);
        } else if constexpr (R == SegmentReduction::kMax) {
          if (v > row[j]) row[j] = v;
        } else {
          if (v < row[j]) row[j] = v;
        }
      }
    }
    T* o = out->data<T>();
    for (int64_t i = 0; i < total; ++i) o[i] = static_cast<T>(acc[i]);
    return absl::OkStatus();
  }

 private:
  static A Identity() {
    if constexpr (R == SegmentReduction::kSum) return A(0);
    if constexpr (R == SegmentReduction::kProd) return A(1);
    if constexpr (R == SegmentReduction::kMax) return static_cast<A>(Lowest<T>());
    return static_cast<A>(Highest<T>());
  }
};

// ---- ReverseV2.

// ReverseV2(tensor, axis): the tensor with the listed dims (a vector, each in [-rank, rank),
// none twice) reversed: a strided copy with negative strides along them.
class ReverseV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    if (axis_t.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("ReverseV2: axis must be a vector, got shape ", axis_t.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntValues(axis_t, "ReverseV2: axis"));
    std::vector<bool> flip(x.dims(), false);
    for (int64_t a : axes) {
      SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, x.dims(), "ReverseV2: axis"));
      if (flip[axis]) {
        return absl::InvalidArgumentError(absl::StrCat("ReverseV2: axis ", a, " is specified more than once"));
      }
      flip[axis] = true;
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    if (x.NumElements() == 0) return absl::OkStatus();
    DimVector dims(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
    DimVector strides = RowMajorStrides(x.shape());
    int64_t offset = 0;
    for (int d = 0; d < x.dims(); ++d) {
      if (!flip[d]) continue;
      offset += (dims[d] - 1) * strides[d];
      strides[d] = -strides[d];
    }
    return StridedCopyTensor(ctx, x, offset, dims, strides, out);
  }
};

// ---- SpaceToBatchND and BatchToSpaceND.

// The block geometry both ops share: input [batch] + M spatial dims + the rest, with
// block_shape (M values >= 1) and an [M, 2] tensor of non-negative amounts (paddings / crops).
struct BlockGeometry {
  int m = 0;
  std::vector<int64_t> block, before, after;
  int64_t block_product = 1;  // Checked: the product of block.
  int64_t rest = 1;           // Elements per position: the product of the dims after the spatial ones.
};

absl::StatusOr<BlockGeometry> ReadBlockGeometry(OpKernelContext* ctx, absl::string_view op,
                                                absl::string_view amounts) {
  const Tensor& x = ctx->input(0);
  const Tensor& block_t = ctx->input(1);
  const Tensor& amounts_t = ctx->input(2);
  if (block_t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": block_shape must be a vector, got shape ", block_t.shape().DebugString()));
  }
  BlockGeometry g;
  g.m = static_cast<int>(block_t.dim_size(0));
  if (amounts_t.dims() != 2 || amounts_t.dim_size(0) != g.m || amounts_t.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", amounts, " must have shape [", g.m, ", 2], got ",
                                                   amounts_t.shape().DebugString()));
  }
  if (x.dims() < 1 + g.m) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": input of shape ", x.shape().DebugString(),
                                                   " needs rank >= 1 + ", g.m, " (the length of block_shape)"));
  }
  SL_ASSIGN_OR_RETURN(g.block, IntValues(block_t, absl::StrCat(op, ": block_shape")));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> a, IntValues(amounts_t, absl::StrCat(op, ": ", amounts)));
  for (int k = 0; k < g.m; ++k) {
    if (g.block[k] < 1) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": block_shape ", DimsString(g.block),
                                                     " must be positive"));
    }
    if (!CheckedMul(g.block_product, g.block[k], &g.block_product)) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": the product of block_shape ", DimsString(g.block),
                                                     " overflows int64"));
    }
    if (a[2 * k] < 0 || a[2 * k + 1] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", amounts, " ", DimsString(a), " must be non-negative"));
    }
    g.before.push_back(a[2 * k]);
    g.after.push_back(a[2 * k + 1]);
  }
  const auto xd = x.shape().dim_sizes();
  g.rest = Product(absl::MakeConstSpan(xd.data() + 1 + g.m, xd.size() - 1 - g.m));
  return g;
}

// Copies `rest`-element runs: out run r comes from input run src(r), or is zeros where src(r)
// is -1 (padding). Element moves are by value for any dtype (strings included).
template <typename Src>
absl::Status CopyRuns(OpKernelContext* ctx, const Tensor& x, int64_t runs, int64_t rest, Tensor* out, Src src) {
  return VisitElements(x.dtype(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    const E* in = static_cast<const E*>(x.raw_data());
    E* o = static_cast<E*>(out->raw_data());
    ParallelForIfLarge(ctx, runs, runs * rest, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t s = src(r);
        if (s < 0) {
          std::fill(o + r * rest, o + (r + 1) * rest, E{});
        } else {
          std::copy(in + s * rest, in + (s + 1) * rest, o + r * rest);
        }
      }
    });
    return absl::OkStatus();
  });
}

// SpaceToBatchND(input, block_shape, paddings): zero-pads the spatial dims, splits each into
// (size / block, block), and moves the block offsets (row-major) to the front of the batch:
// output[(o * batch + b), i..., rest] = padded[b, i_k * block_k + o_k ..., rest].
class SpaceToBatchNDOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(BlockGeometry g, ReadBlockGeometry(ctx, "SpaceToBatchND", "paddings"));
    const auto xd = x.shape().dim_sizes();
    const int64_t batch = xd[0];
    DimVector out_dims(xd.begin(), xd.end());
    if (!CheckedMul(batch, g.block_product, &out_dims[0])) {
      return absl::InvalidArgumentError("SpaceToBatchND: the output batch overflows int64");
    }
    std::vector<int64_t> out_spatial(g.m);
    for (int k = 0; k < g.m; ++k) {
      int64_t padded;
      if (!CheckedAdd(xd[1 + k], g.before[k], &padded) || !CheckedAdd(padded, g.after[k], &padded)) {
        return absl::InvalidArgumentError("SpaceToBatchND: a padded dim overflows int64");
      }
      if (padded % g.block[k] != 0) {
        return absl::InvalidArgumentError(absl::StrCat("SpaceToBatchND: padded dim ", 1 + k, " of size ", padded,
                                                       " (input ", x.shape().DebugString(),
                                                       ") is not divisible by block size ", g.block[k]));
      }
      out_spatial[k] = padded / g.block[k];
      out_dims[1 + k] = out_spatial[k];
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims), "SpaceToBatchND", ": output shape");
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out), "SpaceToBatchND");
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t positions = Product(out_spatial);
    const int64_t runs = out_dims[0] * positions;
    // Input runs per step of each spatial dim, and per batch entry.
    std::vector<int64_t> in_stride(g.m);
    int64_t batch_stride = 1;
    for (int k = g.m - 1; k >= 0; --k) {
      in_stride[k] = batch_stride;
      batch_stride *= xd[1 + k];
    }
    return CopyRuns(ctx, x, runs, g.rest, out, [&](int64_t r) -> int64_t {
      const int64_t ob = r / positions;
      int64_t s_rest = r % positions, o_rest = ob / batch;
      int64_t src = (ob % batch) * batch_stride;
      for (int k = g.m - 1; k >= 0; --k) {
        const int64_t s = s_rest % out_spatial[k], o = o_rest % g.block[k];
        s_rest /= out_spatial[k];
        o_rest /= g.block[k];
        const int64_t p = s * g.block[k] + o - g.before[k];
        if (p < 0 || p >= xd[1 + k]) return -1;  // Padding.
        src += p * in_stride[k];
      }
      return src;
    });
  }
};

// BatchToSpaceND(input, block_shape, crops): the inverse of SpaceToBatchND: the batch splits
// into (block offsets, batch / prod(block)), each spatial dim grows by its block, then crops:
// output[b, p_k - crop_k ..., rest] = input[(o * out_batch + b), p_k / block_k ..., rest] with
// o_k = p_k % block_k.
class BatchToSpaceNDOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(BlockGeometry g, ReadBlockGeometry(ctx, "BatchToSpaceND", "crops"));
    const auto xd = x.shape().dim_sizes();
    if (xd[0] % g.block_product != 0) {
      return absl::InvalidArgumentError(absl::StrCat("BatchToSpaceND: input batch ", xd[0],
                                                     " is not divisible by the product of block_shape ",
                                                     DimsString(g.block)));
    }
    DimVector out_dims(xd.begin(), xd.end());
    const int64_t out_batch = xd[0] / g.block_product;
    out_dims[0] = out_batch;
    std::vector<int64_t> out_spatial(g.m);
    for (int k = 0; k < g.m; ++k) {
      int64_t full, crop;
      if (!CheckedMul(xd[1 + k], g.block[k], &full) || !CheckedAdd(g.before[k], g.after[k], &crop)) {
        return absl::InvalidArgumentError("BatchToSpaceND: a spatial dim overflows int64");
      }
      if (crop > full) {
        return absl::InvalidArgumentError(absl::StrCat("BatchToSpaceND: crops ", g.before[k], " + ", g.after[k],
                                                       " of dim ", 1 + k, " are more than its size ", full,
                                                       " after the block"));
      }
      out_spatial[k] = full - crop;
      out_dims[1 + k] = out_spatial[k];
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims), "BatchToSpaceND", ": output shape");
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out), "BatchToSpaceND");
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t positions = Product(out_spatial);
    const int64_t runs = out_batch * positions;
    // Input runs per step of each spatial dim and of each block offset.
    std::vector<int64_t> in_stride(g.m), block_stride(g.m);
    int64_t in_positions = 1, block_step = 1;
    for (int k = g.m - 1; k >= 0; --k) {
      in_stride[k] = in_positions;
      in_positions *= xd[1 + k];
      block_stride[k] = block_step;
      block_step *= g.block[k];
    }
    return CopyRuns(ctx, x, runs, g.rest, out, [&](int64_t r) -> int64_t {
      int64_t s_rest = r % positions, block_index = 0, spatial = 0;
      for (int k = g.m - 1; k >= 0; --k) {
        const int64_t p = s_rest % out_spatial[k] + g.before[k];
        s_rest /= out_spatial[k];
        block_index += (p % g.block[k]) * block_stride[k];
        spatial += (p / g.block[k]) * in_stride[k];
      }
      return (block_index * out_batch + r / positions) * in_positions + spatial;
    });
  }
};

// ---- LinSpace.

// LinSpace(start, stop, num): num > 0 evenly spaced values from start to stop, both included
// (num == 1: just start); the last value is stop exactly, as in TensorFlow.
template <typename T>
class LinSpaceOp : public OpKernel {
 public:
  using A = Acc<T>;

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& start_t = ctx->input(0);
    const Tensor& stop_t = ctx->input(1);
    if (start_t.dims() != 0 || stop_t.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("LinSpace: start and stop must be scalars, got shapes ",
                                                     start_t.shape().DebugString(), " and ",
                                                     stop_t.shape().DebugString()));
    }
    if (ctx->input(2).dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("LinSpace: num must be a scalar, got shape ", ctx->input(2).shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(int64_t num, IntScalar(ctx->input(2), "LinSpace: num"));
    if (num <= 0) return absl::InvalidArgumentError(absl::StrCat("LinSpace: num = ", num, " must be positive"));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({num}), &out), "LinSpace");
    const A start = static_cast<A>(start_t.data<T>()[0]), stop = static_cast<A>(stop_t.data<T>()[0]);
    T* o = out->data<T>();
    if (num == 1) {
      o[0] = static_cast<T>(start);
      return absl::OkStatus();
    }
    const A step = (stop - start) / static_cast<A>(num - 1);
    for (int64_t i = 0; i < num - 1; ++i) o[i] = static_cast<T>(start + static_cast<A>(i) * step);
    o[num - 1] = static_cast<T>(stop);
    return absl::OkStatus();
  }
};

// ---- Unique and UniqueV2.

// Element equality and hashing as TensorFlow's hash map compares values: floats by value (so
// 0 and -0 are one value, and each NaN is its own), strings by content.
template <typename T>
struct ElementTraits {
  static bool Equal(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      return static_cast<float>(a) == static_cast<float>(b);
    } else {
      return a == b;
    }
  }
  static size_t Hash(const T& v) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_floating_point_v<T>) {
      const double d = static_cast<double>(static_cast<Acc<T>>(v));
      return d == 0 ? 0 : std::hash<double>()(d);  // 0 and -0 hash alike.
    } else {
      return std::hash<T>()(v);
    }
  }
};

// Unique(x) and UniqueV2(x, axis): the distinct slices of x along an axis (Unique and an empty
// axis: the elements of a vector) in order of first occurrence, and for each slice of x the
// index of its distinct slice.
class UniqueOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const std::string& op = type_string();
    int axis = 0;
    bool has_axis = false;
    if (ctx->num_inputs() > 1) {
      const Tensor& axis_t = ctx->input(1);
      if (axis_t.dims() != 1 || axis_t.NumElements() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": axis must be a vector of at most one value, got shape ",
                                                       axis_t.shape().DebugString()));
      }
      SL_ASSIGN_OR_RETURN(std::vector<int64_t> a, IntValues(axis_t, absl::StrCat(op, ": axis")));
      if (!a.empty()) {
        SL_ASSIGN_OR_RETURN(axis, NormalizeAxis(a[0], x.dims(), absl::StrCat(op, ": axis")));
        has_axis = true;
      }
    }
    if (!has_axis && x.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": x must be a vector when no axis is given, got shape ",
                                                     x.shape().DebugString()));
    }
    const auto xd = x.shape().dim_sizes();
    const int64_t outer = Product(absl::MakeConstSpan(xd.data(), axis));
    const int64_t n = xd[axis];
    const int64_t inner = Product(absl::MakeConstSpan(xd.data() + axis + 1, xd.size() - axis - 1));
    const DataType idx_type = ctx->expected_output_dtype(1);
    if (idx_type == DT_INT32 && n > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": ", n, " slices do not fit out_idx int32"));
    }
    absl::Status status = absl::InvalidArgumentError(
        absl::StrCat(op, ": x of type ", DataTypeString(x.dtype()), " is not supported"));
    VisitDataType(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16> ||
                    std::is_same_v<T, tstring>) {
        status = Run<T>(ctx, x, outer, n, inner, axis);
      }
    });
    return status;
  }

 private:
  template <typename T>
  static absl::Status Run(OpKernelContext* ctx, const Tensor& x, int64_t outer, int64_t n, int64_t inner, int axis) {
    const T* in = x.data<T>();
    // Element e of slice j is at (e / inner) * n * inner + j * inner + e % inner.
    const int64_t slice_size = outer * inner;
    auto at = [&](int64_t j, int64_t e) -> const T& { return in[(e / inner) * n * inner + j * inner + e % inner]; };
    auto hash = [&](int64_t j) {
      size_t h = 0;
      for (int64_t e = 0; e < slice_size; ++e) h = h * 1000003u ^ ElementTraits<T>::Hash(at(j, e));
      return h;
    };
    auto equal = [&](int64_t a, int64_t b) {
      for (int64_t e = 0; e < slice_size; ++e) {
        if (!ElementTraits<T>::Equal(at(a, e), at(b, e))) return false;
      }
      return true;
    };
    std::unordered_map<int64_t, int64_t, decltype(hash), decltype(equal)> first(16, hash, equal);
    std::vector<int64_t> idx(n), uniques;
    for (int64_t j = 0; j < n; ++j) {
      auto [it, inserted] = first.emplace(j, static_cast<int64_t>(uniques.size()));
      if (inserted) uniques.push_back(j);
      idx[j] = it->second;
    }
    TensorShape y_shape = x.shape();
    DimVector yd(y_shape.dim_sizes().begin(), y_shape.dim_sizes().end());
    yd[axis] = static_cast<int64_t>(uniques.size());
    Tensor *y, *idx_t;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(yd), &y));
    SL_RETURN_IF_ERROR(ctx->allocate_output(1, TensorShape({n}), &idx_t));
    T* yo = y->data<T>();
    const int64_t u = static_cast<int64_t>(uniques.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < u; ++k) {
        std::copy(in + (o * n + uniques[k]) * inner, in + (o * n + uniques[k] + 1) * inner, yo + (o * u + k) * inner);
      }
    }
    if (idx_t->dtype() == DT_INT32) {
      std::transform(idx.begin(), idx.end(), idx_t->data<int32_t>(), [](int64_t v) { return static_cast<int32_t>(v); });
    } else {
      std::copy(idx.begin(), idx.end(), idx_t->data<int64_t>());
    }
    return absl::OkStatus();
  }
};

// ---- SparseToDense.

// SparseToDense(sparse_indices, output_shape, sparse_values, default_value): default_value
// everywhere but at the listed indices (a scalar: one index into a vector; a vector: one index
// each into a vector; a matrix: one full index per row), which take sparse_values (or its one
// scalar). An index out of range is always an error; with validate_indices the indices must
// also be strictly increasing in row-major order (none repeated).
class SparseToDenseOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("validate_indices", &validate_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& indices = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    const Tensor& values = ctx->input(2);
    const Tensor& default_value = ctx->input(3);
    if (indices.dims() > 2) {
      return absl::InvalidArgumentError(absl::StrCat("SparseToDense: sparse_indices must be a scalar, vector or "
                                                     "matrix, got shape ", indices.shape().DebugString()));
    }
    const int64_t num_elems = indices.dims() > 0 ? indices.dim_size(0) : 1;
    const int64_t num_dims = indices.dims() > 1 ? indices.dim_size(1) : 1;
    if (shape_t.dims() != 1 || shape_t.NumElements() != num_dims) {
      return absl::InvalidArgumentError(absl::StrCat("SparseToDense: output_shape must be a vector of ", num_dims,
                                                     " values (sparse_indices ", indices.shape().DebugString(),
                                                     "), got shape ", shape_t.shape().DebugString()));
    }
    if (!(values.dims() == 0 || (values.dims() == 1 && values.dim_size(0) == num_elems))) {
      return absl::InvalidArgumentError(absl::StrCat("SparseToDense: sparse_values must be a scalar or a vector of ",
                                                     num_elems, " values, got shape ", values.shape().DebugString()));
    }
    if (default_value.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat("SparseToDense: default_value must be a scalar, got shape ",
                                                     default_value.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntValues(shape_t, "SparseToDense: output_shape"));
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("SparseToDense: output_shape ", DimsString(dims), " has a negative dim"));
      }
    }
    SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims), "SparseToDense", ": output_shape");
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, IntValues(indices, "SparseToDense: sparse_indices"));
    const DimVector strides = RowMajorStrides(shape);
    std::vector<int64_t> offsets(num_elems);
    for (int64_t i = 0; i < num_elems; ++i) {
      const int64_t* t = idx.data() + i * num_dims;
      int64_t off = 0;
      for (int64_t j = 0; j < num_dims; ++j) {
        if (t[j] < 0 || t[j] >= dims[j]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "SparseToDense: sparse_indices[", i, "] = ", DimsString(absl::MakeConstSpan(t, num_dims)),
              " is out of bounds: need 0 <= index < ", DimsString(dims)));
        }
        off += t[j] * strides[j];
      }
      // Row-major order of index tuples is the order of their offsets.
      if (validate_ && i > 0 && off <= offsets[i - 1]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SparseToDense: sparse_indices[", i, "] = ", DimsString(absl::MakeConstSpan(t, num_dims)), " is ",
            off == offsets[i - 1] ? "repeated" : "out of order", " (validate_indices needs them strictly increasing)"));
      }
      offsets[i] = off;
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out), "SparseToDense");
    return VisitElements(out->dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      E* o = static_cast<E*>(out->raw_data());
      const E* v = static_cast<const E*>(values.raw_data());
      std::fill(o, o + out->NumElements(), static_cast<const E*>(default_value.raw_data())[0]);
      const bool scalar = values.dims() == 0;
      for (int64_t i = 0; i < num_elems; ++i) o[offsets[i]] = v[scalar ? 0 : i];
      return absl::OkStatus();
    });
  }

 private:
  bool validate_ = true;
};

// ---- Bincount.

// Bincount(arr, size, weights): bins[i] sums weights[j] (or counts 1 when weights is empty)
// over the j with arr[j] == i; values of arr at or past size are left out, negative ones are an
// error (as in TensorFlow's CPU kernel).
template <typename T>
class BincountOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& arr = ctx->input(0);
    const Tensor& weights = ctx->input(2);
    if (ctx->input(1).dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Bincount: size must be a scalar, got shape ", ctx->input(1).shape().DebugString()));
    }
    const int64_t size = ctx->input(1).data<int32_t>()[0];
    if (size < 0) return absl::InvalidArgumentError(absl::StrCat("Bincount: size = ", size, " must be non-negative"));
    const bool weighted = weights.NumElements() > 0;
    if (weighted && weights.shape() != arr.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("Bincount: weights must have arr's shape ",
                                                     arr.shape().DebugString(), " or no elements, got ",
                                                     weights.shape().DebugString()));
    }
    const int32_t* a = arr.data<int32_t>();
    for (int64_t i = 0; i < arr.NumElements(); ++i) {
      if (a[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Bincount: arr[", i, "] = ", a[i], " is negative"));
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({size}), &out), "Bincount");
    T* o = out->data<T>();
    std::fill(o, o + size, T(0));
    const T* w = weighted ? weights.data<T>() : nullptr;
    for (int64_t i = 0; i < arr.NumElements(); ++i) {
      if (a[i] < size) o[a[i]] = WrapAdd(o[a[i]], weighted ? w[i] : T(1));
    }
    return absl::OkStatus();
  }
};

// ---- TensorScatterUpdate.

// TensorScatterUpdate(tensor, indices, updates): a copy of tensor with the slice at each index
// tuple (indices' last dim, k <= rank) replaced by its slice of updates, whose shape must be
// indices.shape[:-1] + tensor.shape[k:]. A repeated tuple takes its last update. A tuple out
// of range is INVALID_ARGUMENT, checked before anything is written, unless bad_indices_policy is
// IGNORE (then it is skipped).
class TensorScatterUpdateOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string policy;
    SL_RETURN_IF_ERROR(GetNodeAttrOr(ctx->attrs(), "bad_indices_policy", std::string(), &policy));
    if (policy != "" && policy != "DEFAULT" && policy != "ERROR" && policy != "IGNORE") {
      return absl::InvalidArgumentError(absl::StrCat("TensorScatterUpdate: unknown bad_indices_policy '", policy, "'"));
    }
    ignore_bad_ = policy == "IGNORE";
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& tensor = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    if (tensor.dims() < 1) {
      return absl::InvalidArgumentError("TensorScatterUpdate: tensor must be at least 1-D, got a scalar");
    }
    if (indices.dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("TensorScatterUpdate: indices must have rank >= 1, got shape ",
                                                     indices.shape().DebugString()));
    }
    const int64_t k = indices.dim_size(indices.dims() - 1);
    if (k > tensor.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("TensorScatterUpdate: index tuples of length ", k,
                                                     " do not fit tensor of shape ", tensor.shape().DebugString()));
    }
    const auto id = indices.shape().dim_sizes();
    const auto td = tensor.shape().dim_sizes();
    DimVector want(id.begin(), id.end() - 1);
    want.insert(want.end(), td.begin() + k, td.end());
    if (updates.shape() != TensorShape(want)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorScatterUpdate: updates must have shape indices.shape[:-1] + tensor.shape[", k, ":] = ",
          DimsString(want), " (indices ", indices.shape().DebugString(), ", tensor ", tensor.shape().DebugString(),
          "), got ", updates.shape().DebugString()));
    }
    const int64_t tuples = Product(absl::MakeConstSpan(id.data(), indices.dims() - 1));
    const int64_t slice = Product(absl::MakeConstSpan(td.data() + k, td.size() - k));
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> idx, AnyIntValues(indices, "TensorScatterUpdate: indices"));
    const DimVector strides = RowMajorStrides(tensor.shape());
    std::vector<int64_t> offsets(tuples);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k && off >= 0; ++j) {
        const int64_t i = idx[t * k + j];
        if (i >= 0 && i < td[j]) {
          off += i * strides[j];
        } else if (ignore_bad_) {
          off = -1;
        } else {
          return absl::InvalidArgumentError(absl::StrCat(
              "TensorScatterUpdate: index ", DimsString(absl::MakeConstSpan(idx.data() + t * k, k)), " (tuple ", t,
              ") is out of range for tensor of shape ", tensor.shape().DebugString()));
        }
      }
      offsets[t] = off;
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, tensor.shape(), &out));
    return VisitElements(tensor.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* in = static_cast<const E*>(tensor.raw_data());
      const E* u = static_cast<const E*>(updates.raw_data());
      E* o = static_cast<E*>(out->raw_data());
      std::copy(in, in + tensor.NumElements(), o);
      for (int64_t t = 0; t < tuples; ++t) {
        if (offsets[t] >= 0) std::copy(u + t * slice, u + (t + 1) * slice, o + offsets[t]);
      }
      return absl::OkStatus();
    });
  }

 private:
  bool ignore_bad_ = false;
};

template <SegmentReduction R>
void RegisterUnsortedSegment(const char* op) {
  RegisterCpuKernels(op, "T", NumericTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<UnsortedSegmentOp<typename decltype(t)::type, R>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnsortedSegment<SegmentReduction::kSum>("UnsortedSegmentSum");
  RegisterUnsortedSegment<SegmentReduction::kProd>("UnsortedSegmentProd");
  RegisterUnsortedSegment<SegmentReduction::kMax>("UnsortedSegmentMax");
  RegisterUnsortedSegment<SegmentReduction::kMin>("UnsortedSegmentMin");
  RegisterCpuKernelTemplate<LinSpaceOp>("LinSpace", FloatTypes{});
  RegisterCpuKernelTemplate<BincountOp>("Bincount", TypeList<int32_t, int64_t, float, double>{});
  return true;
}();

REGISTER_KERNEL_BUILDER(Name("ReverseV2").Device(DEVICE_CPU), ReverseV2Op);
REGISTER_KERNEL_BUILDER(Name("SpaceToBatchND").Device(DEVICE_CPU), SpaceToBatchNDOp);
REGISTER_KERNEL_BUILDER(Name("BatchToSpaceND").Device(DEVICE_CPU), BatchToSpaceNDOp);
REGISTER_KERNEL_BUILDER(Name("Unique").Device(DEVICE_CPU), UniqueOp);
REGISTER_KERNEL_BUILDER(Name("UniqueV2").Device(DEVICE_CPU), UniqueOp);
REGISTER_KERNEL_BUILDER(Name("SparseToDense").Device(DEVICE_CPU), SparseToDenseOp);
REGISTER_KERNEL_BUILDER(Name("TensorScatterUpdate").Device(DEVICE_CPU), TensorScatterUpdateOp);

}  // namespace
}  // namespace sluice
