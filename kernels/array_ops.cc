// ONNX data-movement kernels that work on any dtype by moving elements: Transpose, Concat,
// Split, Slice, Expand, Tile, DepthToSpace, SpaceToDepth, Trilu, ReverseSequence, Compress.
#include <algorithm>

#include "absl/strings/strip.h"
#include "framework/checked_size.h"
#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// Copies the strided view of `in` into a newly allocated output `out_shape`.
absl::Status CopyView(OpKernelContext* ctx, int output, const Tensor& in, int64_t offset,
                      const TensorShape& out_shape, const DimVector& strides) {
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(output, out_shape, &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  DimVector dims(out_shape.dim_sizes().begin(), out_shape.dim_sizes().end());
  return StridedCopyTensor(ctx, in, offset, dims, strides, out);
}

class TransposeOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    perm_input_ = ctx->def().attr().contains("Tperm");  // TensorFlow's: perm is input 1.
    return perm_input_ ? absl::OkStatus() : ctx->GetAttr("perm", &perm_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> perm = perm_;
    if (perm_input_) {
      if (ctx->input(1).dims() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("Transpose: perm must be a vector, got shape ",
                                                       ctx->input(1).shape().DebugString()));
      }
      SL_ASSIGN_OR_RETURN(perm, IndexValues(ctx->input(1), "Transpose: perm"));
    }
    if (perm.empty()) {
      for (int i = in.dims() - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int>(perm.size()) != in.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("Transpose: perm ", DimsString(perm),
                                                     " does not fit an input of rank ", in.dims()));
    }
    std::vector<bool> seen(in.dims(), false);
    TensorShape out_shape;
    for (int64_t p : perm) {
      if (p < 0 || p >= in.dims() || seen[p]) {
        return absl::InvalidArgumentError(
            absl::StrCat("Transpose: perm ", DimsString(perm), " is not a permutation"));
      }
      seen[p] = true;
      out_shape.AddDim(in.dim_size(static_cast<int>(p)));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    return TransposeInto(ctx, in, perm, out);
  }

 private:
  std::vector<int64_t> perm_;
  bool perm_input_ = false;
};

// Shapes [outer, axis, inner] of `shape` around `axis`.
void SplitAround(const TensorShape& shape, int axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int i = 0; i < axis; ++i) *outer *= shape.dim_size(i);
  for (int i = axis + 1; i < shape.dims(); ++i) *inner *= shape.dim_size(i);
}

// Joins `inputs` along `axis` into output 0; `op` names the op in errors. With `stack`, each
// input is one slice of a new axis (TensorFlow's Pack): all shapes equal, the output's rank one
// more.
absl::Status ConcatTensors(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs, int64_t axis_value,
                           bool stack, absl::string_view op) {
  if (inputs.empty()) return absl::InvalidArgumentError(absl::StrCat(op, ": no inputs"));
  const Tensor& first = *inputs[0];
  SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_value, first.dims() + (stack ? 1 : 0),
                                              absl::StrCat(op, ": axis")));
  TensorShape out_shape = first.shape();
  if (stack) out_shape.InsertDim(axis, 1);
  int64_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    bool ok = t.dims() == first.dims();
    for (int d = 0; ok && d < t.dims(); ++d) ok = (!stack && d == axis) || t.dim_size(d) == first.dim_size(d);
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input ", i, " has shape ", t.shape().DebugString(),
                       ", which does not match input 0's ", first.shape().DebugString(),
                       stack ? "" : absl::StrCat(" outside axis ", axis)));
    }
    total += stack ? 1 : t.dim_size(axis);
  }
  out_shape.set_dim(axis, total);
  Tensor* out;
  SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  int64_t outer, inner;
  SplitAround(out_shape, axis, &outer, &inner);
  const int64_t out_row = total * inner;
  return VisitElements(first.dtype(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    E* o = static_cast<E*>(out->raw_data());
    ParallelForIfLarge(ctx, outer, out->NumElements(), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        E* dst = o + r * out_row;
        for (const Tensor* t : inputs) {
          const int64_t run = (stack ? 1 : t->dim_size(axis)) * inner;
          const E* src = static_cast<const E*>(t->raw_data()) + r * run;
          std::copy(src, src + run, dst);
          dst += run;
        }
      }
    });
    return absl::OkStatus();
  });
}

// ONNX's Concat (axis an attr), TensorFlow's ConcatV2 (axis the last input) and Concat (axis
// the first input), and TensorFlow's Pack (a new axis, an attr).
class ConcatOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    const std::string& op = ctx->def().op();
    if (op == "ConcatV2") {
      axis_input_ = kLast;
    } else if (op == "Concat") {
      axis_input_ = kFirst;
    } else {
      stack_ = op == "Pack";
      SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    int64_t axis = axis_;
    int begin = 0, end = ctx->num_inputs();
    if (axis_input_ != kNone) {
      const int at = axis_input_ == kFirst ? begin++ : --end;
      const Tensor& a = ctx->input(at);
      if (a.NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(type_string(), ": axis must be a scalar, got shape ",
                                                       a.shape().DebugString()));
      }
      SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IndexValues(a, "axis"));
      axis = v[0];
    }
    std::vector<const Tensor*> inputs;
    for (int i = begin; i < end; ++i) inputs.push_back(&ctx->input(i));
    // TensorFlow's legacy scalars: its Concat ops join scalars along axis 0 into a vector, as
    // Pack would (tfjs-node relies on it); ONNX's Concat has no such case.
    const bool legacy_scalars = axis_input_ != kNone && axis == 0 && !inputs.empty() && inputs[0]->dims() == 0;
    return ConcatTensors(ctx, inputs, axis, stack_ || legacy_scalars, absl::StripPrefix(type_string(), "Onnx>"));
  }

 private:
  enum AxisInput { kNone, kFirst, kLast };
  AxisInput axis_input_ = kNone;
  bool stack_ = false;
  int64_t axis_ = 0;
};

class SplitOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    SL_ASSIGN_OR_RETURN(int n, ListArgSize(ctx, "Tsplit"));
    has_split_ = n > 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, in.dims(), "Split: axis"));
    const int n = ctx->num_outputs();
    const int64_t dim = in.dim_size(axis);
    std::vector<int64_t> sizes;
    if (has_split_) {
      const Tensor& split = ctx->input(1);
      sizes.assign(split.flat<int64_t>().begin(), split.flat<int64_t>().end());
      int64_t sum = 0;
      for (int64_t s : sizes) {
        if (s < 0) return absl::InvalidArgumentError("Split: negative split size");
        // Wrapped, sizes such as {INT64_MAX, INT64_MAX, 3} would pass as summing to 1.
        if (!CheckedAdd(sum, s, &sum)) {
          return absl::InvalidArgumentError(
              absl::StrCat("Split: split ", DimsString(sizes), " overflows int64"));
        }
      }
      if (static_cast<int>(sizes.size()) != n || sum != dim) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Split: split ", DimsString(sizes), " must have one entry per output (", n,
            ") and sum to the axis dim ", dim));
      }
    } else {
      // Equal parts; as in later opsets, the last part is smaller when dim does not divide.
      const int64_t part = (dim + n - 1) / n;
      for (int i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * part, 0, part));
    }
    int64_t outer, inner;
    SplitAround(in.shape(), axis, &outer, &inner);
    const int64_t in_row = dim * inner;
    int64_t start = 0;
    for (int i = 0; i < n; ++i) {
      TensorShape shape = in.shape();
      shape.set_dim(axis, sizes[i]);
      Tensor* out;
      SL_RETURN_IF_ERROR(ctx->allocate_output(i, shape, &out));
      const int64_t run = sizes[i] * inner;
      if (out->NumElements() > 0) {
        SL_RETURN_IF_ERROR(VisitElements(in.dtype(), [&](auto tag) {
          using E = typename decltype(tag)::type;
          const E* src = static_cast<const E*>(in.raw_data()) + start * inner;
          E* dst = static_cast<E*>(out->raw_data());
          ParallelForIfLarge(ctx, outer, outer * run, [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) std::copy(src + r * in_row, src + r * in_row + run, dst + r * run);
          });
          return absl::OkStatus();
        }));
      }
      start += sizes[i];
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
  bool has_split_ = false;
};

class SliceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return slice_inputs_.Parse(ctx); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    SL_ASSIGN_OR_RETURN(SliceGeometry slice, ComputeSliceGeometry(ctx, 1, slice_inputs_, in.shape(), "Slice"));
    const DimVector& begin = slice.begin;
    const DimVector& step = slice.step;
    const TensorShape out_shape(slice.count);
    DimVector in_strides = RowMajorStrides(in.shape());
    int64_t offset = 0;
    DimVector strides(rank);
    for (int d = 0; d < rank; ++d) {
      strides[d] = in_strides[d] * step[d];
      if (out_shape.dim_size(d) > 0) offset += begin[d] * in_strides[d];
    }
    return CopyView(ctx, 0, in, offset, out_shape, strides);
  }

 private:
  SliceInputs slice_inputs_;
};

absl::StatusOr<DimVector> ShapeValues(const Tensor& t, absl::string_view what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be 1-D, got ", t.shape().DebugString()));
  }
  return DimVector(t.flat<int64_t>().begin(), t.flat<int64_t>().end());
}

class ExpandOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(DimVector shape, ShapeValues(ctx->input(1), "Expand: shape"));
    const int rank = std::max<int>(in.dims(), static_cast<int>(shape.size()));
    DimVector in_strides = RowMajorStrides(in.shape());
    DimVector dims(rank), strides(rank);
    for (int d = 0; d < rank; ++d) {
      const int di = d - (rank - in.dims());
      const int ds = d - (rank - static_cast<int>(shape.size()));
      const int64_t a = di >= 0 ? in.dim_size(di) : 1;
      const int64_t b = ds >= 0 ? shape[ds] : 1;
      if (a != b && a != 1 && b != 1) {
        return absl::InvalidArgumentError(absl::StrCat("Expand: cannot broadcast ",
                                                       in.shape().DebugString(), " to ",
                                                       DimsString(shape)));
      }
      if (b < 0) return absl::InvalidArgumentError("Expand: negative dim in shape");
      dims[d] = a == 1 ? b : a;
      strides[d] = (di >= 0 && a != 1) ? in_strides[di] : 0;
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(dims));
    return CopyView(ctx, 0, in, 0, out_shape, strides);
  }
};

class TileOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(DimVector repeats, ShapeValues(ctx->input(1), "Tile: repeats"));
    if (static_cast<int>(repeats.size()) != in.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("Tile: repeats ", DimsString(repeats),
                                                     " must have one entry per input dim (",
                                                     in.dims(), ")"));
    }
    // The output as [r0, d0, r1, d1, ...] reading the input with stride 0 over each r.
    DimVector in_strides = RowMajorStrides(in.shape());
    DimVector view_dims, strides, out_dims;
    for (int d = 0; d < in.dims(); ++d) {
      if (repeats[d] < 0) return absl::InvalidArgumentError("Tile: negative repeat");
      view_dims.push_back(repeats[d]);
      view_dims.push_back(in.dim_size(d));
      strides.push_back(0);
      strides.push_back(in_strides[d]);
      int64_t out_dim;
      if (!CheckedMul(repeats[d], in.dim_size(d), &out_dim)) {
        return absl::InvalidArgumentError(absl::StrCat("Tile: repeats ", DimsString(repeats), " of ",
                                                       in.shape().DebugString(), " overflow int64"));
      }
      out_dims.push_back(out_dim);
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    return StridedCopyTensor(ctx, in, 0, view_dims, strides, out);
  }
};

// DepthToSpace and SpaceToDepth are a reshape to 6-D, a transpose and a reshape back.
class DepthSpaceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("blocksize", &block_));
    if (block_ <= 0) return absl::InvalidArgumentError("blocksize must be positive");
    to_space_ = ctx->def().op() == "Onnx>DepthToSpace";
    if (to_space_) {
      std::string mode;
      SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
      crd_ = mode == "CRD";
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const char* op = to_space_ ? "DepthToSpace" : "SpaceToDepth";
    if (in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input must be 4-D (NCHW), got ", in.shape().DebugString()));
    }
    const int64_t n = in.dim_size(0), c = in.dim_size(1), h = in.dim_size(2), w = in.dim_size(3);
    const int64_t b = block_;
    TensorShape view, out_shape;
    std::vector<int64_t> perm;
    if (to_space_) {
      if (c % (b * b) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": channels ", c,
                                                       " are not a multiple of blocksize^2"));
      }
      const int64_t oc = c / (b * b);
      if (crd_) {
        view = TensorShape({n, oc, b, b, h, w});
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        view = TensorShape({n, b, b, oc, h, w});
        perm = {0, 3, 4, 1, 5, 2};
      }
      out_shape = TensorShape({n, oc, h * b, w * b});
    } else {
      if (h % b != 0 || w % b != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": height and width ", h, "x", w, " are not multiples of blocksize ", b));
      }
      view = TensorShape({n, c, h / b, b, w / b, b});
      perm = {0, 3, 5, 1, 2, 4};
      out_shape = TensorShape({n, c * b * b, h / b, w / b});
    }
    SL_ASSIGN_OR_RETURN(Tensor v, in.Reshaped(view));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    return TransposeInto(ctx, v, perm, out);
  }

 private:
  int64_t block_ = 1;
  bool to_space_ = true;
  bool crd_ = false;
};

class TriluOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    int64_t upper = 1;
    SL_RETURN_IF_ERROR(ctx->GetAttr("upper", &upper));
    upper_ = upper != 0;
    SL_ASSIGN_OR_RETURN(int n, ListArgSize(ctx, "Tk"));
    has_k_ = n > 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    if (in.dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Trilu: input must have rank >= 2, got ", in.shape().DebugString()));
    }
    int64_t k = 0;
    if (has_k_) {
      const Tensor& kt = ctx->input(1);
      if (kt.NumElements() != 1) return absl::InvalidArgumentError("Trilu: k must be a scalar");
      k = kt.data<int64_t>()[0];
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t rows = in.dim_size(in.dims() - 2), cols = in.dim_size(in.dims() - 1);
    const int64_t mats = in.NumElements() / (rows * cols);
    // Beyond the matrix, every k keeps all or nothing: clamped, row + k + 1 cannot overflow
    // (a k of INT64_MAX did; found by the structured fuzzer).
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    return VisitElements(in.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(in.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ParallelForIfLarge(ctx, mats * rows, in.NumElements(), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t row = r % rows;
          // upper keeps columns j >= row + k; lower keeps j <= row + k.
          const int64_t edge = std::clamp<int64_t>(upper_ ? row + k : row + k + 1, 0, cols);
          const E* s = src + r * cols;
          E* d = dst + r * cols;
          const int64_t keep_from = upper_ ? edge : 0, keep_to = upper_ ? cols : edge;
          std::fill(d, d + cols, E());
          std::copy(s + keep_from, s + keep_to, d + keep_from);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  bool upper_ = true;
  bool has_k_ = false;
};

class ReverseSequenceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("batch_axis", &batch_axis_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("time_axis", &time_axis_));
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0))) {
      return absl::InvalidArgumentError(
          "ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order");
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& lens = ctx->input(1);
    if (in.dims() < 2) {
      return absl::InvalidArgumentError("ReverseSequence: input must have rank >= 2");
    }
    const int64_t batch = in.dim_size(batch_axis_), time = in.dim_size(time_axis_);
    if (lens.dims() != 1 || lens.dim_size(0) != batch) {
      return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: sequence_lens must be [",
                                                     batch, "], got ", lens.shape().DebugString()));
    }
    for (int64_t l : lens.flat<int64_t>()) {
      if (l < 0 || l > time) {
        return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: sequence length ", l,
                                                       " is outside [0, ", time, "]"));
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const int64_t inner = in.NumElements() / (batch * time);
    DimVector strides = RowMajorStrides(in.shape());
    const int64_t bs = strides[batch_axis_], ts = strides[time_axis_];
    return VisitElements(in.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(in.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens.data<int64_t>()[b];
        for (int64_t t = 0; t < time; ++t) {
          const int64_t from = t < len ? len - 1 - t : t;
          std::copy(src + b * bs + from * ts, src + b * bs + from * ts + inner, dst + b * bs + t * ts);
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  int64_t batch_axis_ = 1;
  int64_t time_axis_ = 0;
};

class CompressOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("axis", &axis_); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& cond = ctx->input(1);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, in.dims(), "Compress: axis"));
    if (cond.dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Compress: condition must be 1-D, got ", cond.shape().DebugString()));
    }
    const int64_t dim = in.dim_size(axis);
    // ONNX allows a shorter condition: the entries past its end are dropped.
    const int64_t n = std::min(dim, cond.NumElements());
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < n; ++i) {
      if (cond.data<bool>()[i]) keep.push_back(i);
    }
    TensorShape out_shape = in.shape();
    out_shape.set_dim(axis, static_cast<int64_t>(keep.size()));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    int64_t outer, inner;
    SplitAround(in.shape(), axis, &outer, &inner);
    return VisitElements(in.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* src = static_cast<const E*>(in.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i : keep) {
          const E* s = src + (o * dim + i) * inner;
          dst = std::copy(s, s + inner, dst);
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Transpose").Device(DEVICE_CPU), TransposeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Concat").Device(DEVICE_CPU), ConcatOp);
REGISTER_KERNEL_BUILDER(Name("ConcatV2").Device(DEVICE_CPU), ConcatOp);
REGISTER_KERNEL_BUILDER(Name("Concat").Device(DEVICE_CPU), ConcatOp);
REGISTER_KERNEL_BUILDER(Name("Pack").Device(DEVICE_CPU), ConcatOp);
REGISTER_KERNEL_BUILDER(Name("Transpose").Device(DEVICE_CPU), TransposeOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Split").Device(DEVICE_CPU), SplitOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Slice").Device(DEVICE_CPU), SliceOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Expand").Device(DEVICE_CPU), ExpandOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Tile").Device(DEVICE_CPU), TileOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>DepthToSpace").Device(DEVICE_CPU), DepthSpaceOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SpaceToDepth").Device(DEVICE_CPU), DepthSpaceOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Trilu").Device(DEVICE_CPU), TriluOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>ReverseSequence").Device(DEVICE_CPU), ReverseSequenceOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Compress").Device(DEVICE_CPU), CompressOp);

}  // namespace
}  // namespace sluice
