// ONNX Pad: constant, reflect, edge and wrap modes, negative pads crop, optional axes. Also
// TensorFlow's Pad, PadV2 (a constant_values input) and MirrorPad (REFLECT, SYMMETRIC), whose
// paddings are a [rank, 2] input of non-negative (before, after) rows; and MirrorPadGrad, which
// folds MirrorPad's borders back.
#include <algorithm>

#include "framework/checked_size.h"
#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/tf_kernel_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap, kSymmetric };

// Source coordinate for output coordinate `o` of a dim of size `n` padded by `before`;
// -1 where the constant goes.
int64_t SourceIndex(int64_t o, int64_t n, int64_t before, PadMode mode) {
  int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
    case PadMode::kWrap: {  // The other end continues: [a b c] pads as ... b c | a b c | a b ...
      i %= n;
      return i < 0 ? i + n : i;
    }
    case PadMode::kSymmetric: {  // The edge repeats: [a b c] pads as ... b a | a b c | c b ...
      const int64_t period = 2 * n;
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - 1 - i;
    }
  }
  return -1;
}

class PadOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    const std::string& op = ctx->def().op();
    if (op == "Pad" || op == "PadV2" || op == "MirrorPad") {
      tf_ = true;
      has_value_ = op == "PadV2";
      if (op != "MirrorPad") return absl::OkStatus();
      std::string mode;
      SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
      if (mode != "REFLECT" && mode != "SYMMETRIC") {
        return absl::InvalidArgumentError(absl::StrCat("MirrorPad: unknown mode '", mode, "'"));
      }
      mode_ = mode == "REFLECT" ? PadMode::kReflect : PadMode::kSymmetric;
      return absl::OkStatus();
    }
    std::string mode;
    SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
    if (mode == "constant") {
      mode_ = PadMode::kConstant;
    } else if (mode == "reflect") {
      mode_ = PadMode::kReflect;
    } else if (mode == "edge") {
      mode_ = PadMode::kEdge;
    } else if (mode == "wrap") {
      mode_ = PadMode::kWrap;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("Pad: unknown mode '", mode, "'"));
    }
    SL_ASSIGN_OR_RETURN(int nv, ListArgSize(ctx, "Tvalue"));
    SL_ASSIGN_OR_RETURN(int na, ListArgSize(ctx, "Taxes"));
    has_value_ = nv > 0;
    has_axes_ = na > 0;
    return absl::OkStatus();
  }

  // TensorFlow's paddings: a [rank, 2] integer input of (before, after) rows, non-negative;
  // MirrorPad's at most dim - 1 (REFLECT) or dim (SYMMETRIC).
  absl::Status TfPaddings(OpKernelContext* ctx, DimVector* before, DimVector* after) const {
    const Tensor& in = ctx->input(0);
    const Tensor& p = ctx->input(1);
    const std::string& op = type_string();
    if (p.dims() != 2 || p.dim_size(0) != in.dims() || p.dim_size(1) != 2) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": paddings must have shape [", in.dims(), ", 2], got ",
                                                     p.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IndexValues(p, absl::StrCat(op, ": paddings")));
    const int64_t most_extra = mode_ == PadMode::kReflect ? 1 : 0;
    for (int d = 0; d < in.dims(); ++d) {
      (*before)[d] = v[2 * d];
      (*after)[d] = v[2 * d + 1];
      if (v[2 * d] < 0 || v[2 * d + 1] < 0) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": paddings of dim ", d, " are negative: ", v[2 * d],
                                                       ", ", v[2 * d + 1]));
      }
      if (op == "MirrorPad" && std::max(v[2 * d], v[2 * d + 1]) > in.dim_size(d) - most_extra) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": paddings ", v[2 * d], ", ", v[2 * d + 1], " of dim ", d, " must be at most ",
            in.dim_size(d) - most_extra, " in ", mode_ == PadMode::kReflect ? "REFLECT" : "SYMMETRIC",
            " mode (input ", in.shape().DebugString(), ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    DimVector before(rank, 0), after(rank, 0);
    const Tensor* value = has_value_ ? &ctx->input(2) : nullptr;
    if (tf_) {
      SL_RETURN_IF_ERROR(TfPaddings(ctx, &before, &after));
    } else {
      SL_RETURN_IF_ERROR(OnnxPads(ctx, &before, &after, &value));
    }
    if (value != nullptr && (value->dtype() != in.dtype() || value->NumElements() != 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          type_string(), ": constant_value must be one element of the data type ", DataTypeString(in.dtype()),
          ", got ", value->DebugString()));
    }
    return PadWith(ctx, before, after, value);
  }

 private:
  // ONNX's pads (input 1, [begin..., end...] over the axes input or every dim); the optional
  // constant_value is input 2.
  absl::Status OnnxPads(OpKernelContext* ctx, DimVector* before_out, DimVector* after_out,
                        const Tensor** value_out) const {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    const Tensor& pads_t = ctx->input(1);
    const int64_t* pads = pads_t.data<int64_t>();
    int next = 2;
    const Tensor* value = has_value_ ? &ctx->input(next++) : nullptr;
    std::vector<int64_t> axes;
    if (has_axes_) {
      SL_ASSIGN_OR_RETURN(axes, IndexValues(ctx->input(next++), "Pad: axes"));
    } else {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads_t.NumElements() != 2 * static_cast<int64_t>(axes.size())) {
      return absl::InvalidArgumentError(absl::StrCat("Pad: pads has ", pads_t.NumElements(),
                                                     " entries, expected 2 * ", axes.size()));
    }
    DimVector& before = *before_out;
    DimVector& after = *after_out;
    const int64_t n_axes = static_cast<int64_t>(axes.size());
    for (int64_t i = 0; i < n_axes; ++i) {
      SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axes[i], rank, "Pad: axis"));
      before[axis] = pads[i];
      after[axis] = pads[i + n_axes];
    }
    *value_out = value;
    return absl::OkStatus();
  }

  // Output 0: `in` grown (or, for negative pads, cropped) by `before` and `after` per dim.
  absl::Status PadWith(OpKernelContext* ctx, const DimVector& before, const DimVector& after,
                       const Tensor* value) const {
    const Tensor& in = ctx->input(0);
    const int rank = in.dims();
    TensorShape out_shape;
    for (int d = 0; d < rank; ++d) {
      const int64_t n = in.dim_size(d);
      int64_t o;
      if (!CheckedAdd(n, before[d], &o) || !CheckedAdd(o, after[d], &o)) {
        return absl::InvalidArgumentError(absl::StrCat("Pad: pads ", before[d], " and ", after[d],
                                                       " overflow dim ", d, " of ", in.shape().DebugString()));
      }
      if (o < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Pad: pads crop dim ", d, " of ",
                                                       in.shape().DebugString(), " below 0"));
      }
      if (mode_ != PadMode::kConstant && n == 0 && o > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Pad: cannot pad the empty dim ", d, " in reflect, edge or wrap mode"));
      }
      out_shape.AddDim(o);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    if (rank == 0) return VisitElements(in.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      *static_cast<E*>(out->raw_data()) = *static_cast<const E*>(in.raw_data());
      return absl::OkStatus();
    });
    // Per dim, the source coordinate of each output coordinate (-1: constant).
    std::vector<std::vector<int64_t>> src(rank);
    for (int d = 0; d < rank; ++d) {
      for (int64_t o = 0; o < out_shape.dim_size(d); ++o) {
        src[d].push_back(SourceIndex(o, in.dim_size(d), before[d], mode_));
      }
    }
    const DimVector strides = RowMajorStrides(in.shape());
    const int64_t inner = out_shape.dim_size(rank - 1);
    const int64_t rows = out->NumElements() / inner;
    // The last dim's contiguous middle [lo, hi) copies in one run.
    const std::vector<int64_t>& last = src[rank - 1];
    int64_t lo = 0, hi = 0;
    while (lo < inner && last[lo] != 0) ++lo;
    hi = lo;
    while (hi < inner && last[hi] == hi - lo) ++hi;
    return VisitElements(in.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E fill = value != nullptr ? *static_cast<const E*>(value->raw_data()) : E();
      const E* s = static_cast<const E*>(in.raw_data());
      E* dst = static_cast<E*>(out->raw_data());
      ParallelForIfLarge(ctx, rows, out->NumElements(), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          E* row = dst + r * inner;
          int64_t off = 0;
          bool constant_row = false;
          for (int64_t rest = r, d = rank - 2; d >= 0; --d) {
            const int64_t i = src[d][rest % out_shape.dim_size(d)];
            rest /= out_shape.dim_size(d);
            if (i < 0) constant_row = true;
            off += i * strides[d];
          }
          if (constant_row) {
            std::fill(row, row + inner, fill);
            continue;
          }
          const E* in_row = s + off;
          for (int64_t j = 0; j < lo; ++j) row[j] = last[j] < 0 ? fill : in_row[last[j]];
          std::copy(in_row, in_row + (hi - lo), row + lo);
          for (int64_t j = hi; j < inner; ++j) row[j] = last[j] < 0 ? fill : in_row[last[j]];
        }
      });
      return absl::OkStatus();
    });
  }

  PadMode mode_ = PadMode::kConstant;
  bool tf_ = false;
  bool has_value_ = false;
  bool has_axes_ = false;
};

// MirrorPadGrad(input, paddings): the gradient of MirrorPad. `input` has the padded shape; each
// of its elements is added onto the element of the unpadded output it copies (SourceIndex, the
// forward's own rule), so reflected borders fold back onto the elements they mirror.
template <typename T>
class MirrorPadGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string mode;
    SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
    if (mode != "REFLECT" && mode != "SYMMETRIC") {
      return absl::InvalidArgumentError(absl::StrCat("MirrorPadGrad: unknown mode '", mode, "'"));
    }
    mode_ = mode == "REFLECT" ? PadMode::kReflect : PadMode::kSymmetric;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& p = ctx->input(1);
    const int rank = in.dims();
    if (p.dims() != 2 || p.dim_size(0) != rank || p.dim_size(1) != 2) {
      return absl::InvalidArgumentError(absl::StrCat("MirrorPadGrad: paddings must have shape [", rank,
                                                     ", 2], got ", p.shape().DebugString()));
    }
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IndexValues(p, "MirrorPadGrad: paddings"));
    const int64_t most_extra = mode_ == PadMode::kReflect ? 1 : 0;
    TensorShape out_shape;
    for (int d = 0; d < rank; ++d) {
      const int64_t before = v[2 * d], after = v[2 * d + 1], padded = in.dim_size(d);
      const int64_t n = before >= 0 && after >= 0 && before <= padded - after ? padded - before - after : -1;
      if (n < 0 || std::max(before, after) > n - most_extra) {
        return absl::InvalidArgumentError(absl::StrCat(
            "MirrorPadGrad: paddings ", before, ", ", after, " of dim ", d, " do not fit ", in.shape().DebugString(),
            " in ", mode_ == PadMode::kReflect ? "REFLECT" : "SYMMETRIC",
            " mode (each must be non-negative and at most the unpadded size", most_extra ? " - 1" : "", ")"));
      }
      out_shape.AddDim(n);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    if (in.NumElements() == 0) return absl::OkStatus();
    // Per dim, the output coordinate each input coordinate folds onto, as an element offset.
    const DimVector strides = RowMajorStrides(out_shape);
    std::vector<std::vector<int64_t>> target(rank);
    for (int d = 0; d < rank; ++d) {
      for (int64_t i = 0; i < in.dim_size(d); ++i) {
        target[d].push_back(SourceIndex(i, out_shape.dim_size(d), v[2 * d], mode_) * strides[d]);
      }
    }
    const T* src = in.data<T>();
    DimVector index(rank, 0);
    int64_t at = 0;
    for (int d = 0; d < rank; ++d) at += target[d][0];
    for (int64_t k = 0; k < in.NumElements(); ++k) {
      o[at] = WrappingAdd(o[at], src[k]);
      for (int d = rank - 1; d >= 0; --d) {
        at -= target[d][index[d]];
        if (++index[d] < in.dim_size(d)) {
          at += target[d][index[d]];
          break;
        }
        index[d] = 0;
        at += target[d][0];
      }
    }
    return absl::OkStatus();
  }

 private:
  PadMode mode_ = PadMode::kReflect;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>Pad").Device(DEVICE_CPU), PadOp);
REGISTER_KERNEL_BUILDER(Name("Pad").Device(DEVICE_CPU), PadOp);
REGISTER_KERNEL_BUILDER(Name("PadV2").Device(DEVICE_CPU), PadOp);
REGISTER_KERNEL_BUILDER(Name("MirrorPad").Device(DEVICE_CPU), PadOp);

[[maybe_unused]] const bool kMirrorPadGradRegistered = [] {
  RegisterCpuKernelTemplate<MirrorPadGradOp>("MirrorPadGrad", NumericTypes{});
  return true;
}();

}  // namespace
}  // namespace sluice
