// Helpers shared by the tensor manipulation kernels (array_ops.cc, gather_scatter_ops.cc,
// pad_op.cc, shape_ops.cc): axis and index checks, dtype-agnostic element access, and one
// strided copy that Transpose, Slice, Expand, Tile and DepthToSpace all reduce to.
//
//   SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, x.dims(), "axis"));
//   return VisitElements(x.dtype(), [&](auto tag) {
//     using E = typename decltype(tag)::type;   // uint8_t..uint64_t, Bytes16 or std::string
//     StridedCopy<E>(ctx, x.data<E>() + offset, dims, strides, out->data<E>());
//     return absl::OkStatus();
//   });   // or, the same in one call: StridedCopyTensor(ctx, x, offset, dims, strides, out)
#ifndef SLUICE_KERNELS_ARRAY_KERNEL_UTIL_H_
#define SLUICE_KERNELS_ARRAY_KERNEL_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/op_kernel.h"
#include "kernels/parallel_for.h"

namespace sluice {

// Maps axis in [-rank, rank) to [0, rank); INVALID_ARGUMENT naming `what` otherwise.
inline absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", axis, " is out of range for rank ",
                                                   rank, " (valid: [", -rank, ", ", rank, "))"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The values of an int32 or int64 tensor, as int64.
inline absl::StatusOr<std::vector<int64_t>> IndexValues(const Tensor& t, absl::string_view what) {
  std::vector<int64_t> v(t.NumElements());
  if (t.dtype() == DT_INT64) {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + v.size(), v.begin());
  } else if (t.dtype() == DT_INT32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + v.size(), v.begin());
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be int32 or int64, got ", DataTypeString(t.dtype())));
  }
  return v;
}

// A shape input (a 1-D int64 tensor of non-negative dims, as the backward ops take) as a
// TensorShape; INVALID_ARGUMENT naming `what` otherwise.
inline absl::StatusOr<TensorShape> ShapeInput(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DT_INT64 || t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a 1-D int64 tensor"));
  }
  DimVector dims(t.flat<int64_t>().begin(), t.flat<int64_t>().end());
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(what, " has a negative dim"));
  }
  return TensorShape(dims);
}

// The value of an index, with negative values counted from `dim`; INVALID_ARGUMENT otherwise.
inline absl::Status CheckIndex(int64_t* index, int64_t dim, absl::string_view what) {
  if (*index < -dim || *index >= dim) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", *index,
                                                   " is out of range for a dimension of size ", dim));
  }
  if (*index < 0) *index += dim;
  return absl::OkStatus();
}

inline std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// How many tensors a list(type) input holds (0 or 1 for optional ONNX inputs).
inline absl::StatusOr<int> ListArgSize(OpKernelConstruction* ctx, absl::string_view attr) {
  DataTypeVector types;
  SL_RETURN_IF_ERROR(ctx->GetAttr(attr, &types));
  return static_cast<int>(types.size());
}

// A 16-byte element (complex128), moved as bytes.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls fn(TypeTag<E>{}) where E moves elements of `dt` by value: an unsigned integer (or
// Bytes16) of the element's size, std::string for strings. Returns what fn returns.
template <typename Fn>
absl::Status VisitElements(DataType dt, Fn&& fn) {
  if (dt == DT_STRING) return fn(TypeTag<std::string>{});
  switch (DataTypeSize(dt)) {
    case 1: return fn(TypeTag<uint8_t>{});
    case 2: return fn(TypeTag<uint16_t>{});
    case 4: return fn(TypeTag<uint32_t>{});
    case 8: return fn(TypeTag<uint64_t>{});
    case 16: return fn(TypeTag<Bytes16>{});
    default:
      return absl::UnimplementedError(
          absl::StrCat("tensors of type ", DataTypeString(dt), " are not supported here"));
  }
}

// Simplifies a strided view: drops dims of size 1 and merges a dim into the next one when
// the source is contiguous across them. Dims and strides are in elements, outermost first.
inline void CoalesceStridedDims(DimVector* dims, DimVector* strides) {
  DimVector d, s;
  for (size_t i = 0; i < dims->size(); ++i) {
    if ((*dims)[i] == 1) continue;
    if (!d.empty() && s.back() == (*strides)[i] * (*dims)[i]) {
      d.back() *= (*dims)[i];
      s.back() = (*strides)[i];
      continue;
    }
    d.push_back((*dims)[i]);
    s.push_back((*strides)[i]);
  }
  *dims = std::move(d);
  *strides = std::move(s);
}

// Writes the view of `src` with `dims` and (possibly zero or negative) `src_strides` to the
// contiguous `dst`, row-major. Contiguous innermost runs are copied as blocks.
template <typename E>
void StridedCopy(OpKernelContext* ctx, const E* src, DimVector dims, DimVector src_strides,
                 E* dst) {
  CoalesceStridedDims(&dims, &src_strides);
  const int rank = static_cast<int>(dims.size());
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t inner = dims[rank - 1];
  const int64_t inner_stride = src_strides[rank - 1];
  int64_t outer = 1;
  for (int i = 0; i < rank - 1; ++i) outer *= dims[i];
  if (rank >= 2 && inner_stride != 0 && inner_stride != 1) {
    // A gather along the innermost dim (a transpose): walk the last two dims in square tiles
    // so that both the reads and the writes stay in cache.
    constexpr int64_t kTile = 32;
    const int64_t rows = dims[rank - 2], row_stride = src_strides[rank - 2];
    const int64_t planes = outer / rows, row_blocks = (rows + kTile - 1) / kTile;
    ParallelForIfLarge(ctx, planes * row_blocks, outer * inner, [&](int64_t begin, int64_t end) {
      for (int64_t w = begin; w < end; ++w) {
        const int64_t plane = w / row_blocks, r0 = (w % row_blocks) * kTile;
        const int64_t r1 = std::min(rows, r0 + kTile);
        int64_t src_off = 0;
        for (int64_t rest = plane, d = rank - 3; d >= 0; --d) {
          src_off += (rest % dims[d]) * src_strides[d];
          rest /= dims[d];
        }
        E* out = dst + plane * rows * inner;
        for (int64_t c0 = 0; c0 < inner; c0 += kTile) {
          const int64_t c1 = std::min(inner, c0 + kTile);
          for (int64_t r = r0; r < r1; ++r) {
            const E* in = src + src_off + r * row_stride;
            for (int64_t c = c0; c < c1; ++c) out[r * inner + c] = in[c * inner_stride];
          }
        }
      }
    });
    return;
  }
  ParallelForIfLarge(ctx, outer, outer * inner, [&](int64_t begin, int64_t end) {
    DimVector index(rank, 0);
    int64_t src_off = 0;
    for (int64_t rest = begin, d = rank - 2; d >= 0; --d) {
      index[d] = rest % dims[d];
      rest /= dims[d];
      src_off += index[d] * src_strides[d];
    }
    for (int64_t o = begin; o < end; ++o) {
      E* out = dst + o * inner;
      const E* in = src + src_off;
      if (inner_stride == 1) {
        std::copy(in, in + inner, out);
      } else if (inner_stride == 0) {
        std::fill(out, out + inner, *in);
      } else {  // Rank 1 only: other gathers take the tiled path above.
        for (int64_t i = 0; i < inner; ++i) out[i] = in[i * inner_stride];
      }
      for (int d = rank - 2; d >= 0; --d) {  // Odometer over the outer dims.
        src_off += src_strides[d];
        if (++index[d] < dims[d]) break;
        src_off -= src_strides[d] * dims[d];
        index[d] = 0;
      }
    }
  });
}

// StridedCopy of `in`'s elements from `offset` on into `out`, whatever their dtype.
inline absl::Status StridedCopyTensor(OpKernelContext* ctx, const Tensor& in, int64_t offset,
                                      const DimVector& dims, const DimVector& strides, Tensor* out) {
  return VisitElements(in.dtype(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    StridedCopy<E>(ctx, static_cast<const E*>(in.raw_data()) + offset, dims, strides,
                   static_cast<E*>(out->raw_data()));
    return absl::OkStatus();
  });
}

// Where ONNX Slice reads in a tensor of `shape`: per dim, the first index, the step and how
// many elements. Dims the slice does not name keep begin 0, step 1, their whole size.
struct SliceGeometry {
  DimVector begin, step, count;
};

// Which of Slice's optional inputs (axes, steps: list(type) args of length 0 or 1) a node has;
// Slice and SliceGrad parse them once in Init.
struct SliceInputs {
  bool has_axes = false, has_steps = false;

  absl::Status Parse(OpKernelConstruction* ctx) {
    SL_ASSIGN_OR_RETURN(int na, ListArgSize(ctx, "Taxes"));
    SL_ASSIGN_OR_RETURN(int ns, ListArgSize(ctx, "Tsteps"));
    has_axes = na > 0;
    has_steps = ns > 0;
    return absl::OkStatus();
  }
};

// Reads starts and ends from inputs `first` and `first + 1`, then axes and steps when present,
// and applies ONNX's rules: negative indices count from the end, then clamp (to [0, dim] for
// positive steps, [-1, dim - 1] for negative ones). Errors name `op`.
inline absl::StatusOr<SliceGeometry> ComputeSliceGeometry(OpKernelContext* ctx, int first,
                                                          const SliceInputs& inputs, const TensorShape& shape,
                                                          absl::string_view op) {
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> starts, IndexValues(ctx->input(first), absl::StrCat(op, ": starts")));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> ends, IndexValues(ctx->input(first + 1), absl::StrCat(op, ": ends")));
  std::vector<int64_t> axes, steps;
  int next = first + 2;
  if (inputs.has_axes) {
    SL_ASSIGN_OR_RETURN(axes, IndexValues(ctx->input(next++), absl::StrCat(op, ": axes")));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (inputs.has_steps) {
    SL_ASSIGN_OR_RETURN(steps, IndexValues(ctx->input(next++), absl::StrCat(op, ": steps")));
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": starts, ends, axes and steps must have the same length, got ",
                                                   starts.size(), ", ", ends.size(), ", ", axes.size(), ", ",
                                                   steps.size()));
  }
  const int rank = shape.dims();
  SliceGeometry g{DimVector(rank, 0), DimVector(rank, 1),
                  DimVector(shape.dim_sizes().begin(), shape.dim_sizes().end())};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axes[i], rank, absl::StrCat(op, ": axis")));
    if (seen[axis]) return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", axis, " repeats"));
    seen[axis] = true;
    const int64_t dim = shape.dim_size(axis), s = steps[i];
    if (s == 0) return absl::InvalidArgumentError(absl::StrCat(op, ": step is 0"));
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t n;
    if (dim == 0) {
      b = 0;
      n = 0;
    } else if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      n = e > b ? (e - b - 1) / s + 1 : 0;  // No overflow for huge steps.
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      n = b > e ? (s < -dim ? 1 : (b - e - 1) / (-s) + 1) : 0;
    }
    g.begin[axis] = b;
    g.step[axis] = s;
    g.count[axis] = n;
  }
  return g;
}

// Row-major strides (in elements) of `shape`.
inline DimVector RowMajorStrides(const TensorShape& shape) {
  DimVector strides(shape.dims(), 1);
  for (int i = shape.dims() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape.dim_size(i + 1);
  return strides;
}

// Writes the transpose of `in` by `perm` into `out` (already allocated with the permuted shape).
inline absl::Status TransposeInto(OpKernelContext* ctx, const Tensor& in,
                                  absl::Span<const int64_t> perm, Tensor* out) {
  if (in.NumElements() == 0) return absl::OkStatus();
  DimVector in_strides = RowMajorStrides(in.shape());
  DimVector dims, strides;
  for (int64_t p : perm) {
    dims.push_back(in.dim_size(static_cast<int>(p)));
    strides.push_back(in_strides[p]);
  }
  return StridedCopyTensor(ctx, in, 0, dims, strides, out);
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_ARRAY_KERNEL_UTIL_H_
