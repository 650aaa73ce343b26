// Kernels of the ONNX sequence and optional ops (ops/onnx_sequence_ops.cc). Sequences are
// immutable: each op that "changes" one makes a new one, sharing the element tensors.
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/tensor_sequence.h"
#include "kernels/array_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

// A position input (one int32 or int64 element) as int64.
absl::StatusOr<int64_t> Position(const Tensor& t) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("position must have one element, got shape ",
                                                   t.shape().DebugString()));
  }
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IndexValues(t, "position"));
  return v[0];
}

// Maps a position in [-n, n - 1] (or [-n, n] with `one_past_end`) onto [0, n].
absl::StatusOr<int64_t> CheckPosition(int64_t position, int64_t n, bool one_past_end) {
  const int64_t last = one_past_end ? n : n - 1;
  if (position < -n || position > last) {
    return absl::InvalidArgumentError(absl::StrCat("position ", position, " is out of range for a sequence of ", n,
                                                   " tensors (valid: [", -n, ", ", last, "])"));
  }
  return position < 0 ? position + n : position;
}

absl::Status CheckElementDtype(const TensorSequence& seq, const Tensor& t) {
  if (t.dtype() != seq.element_dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot put a ", DataTypeString(t.dtype()),
                                                   " tensor into a sequence of ",
                                                   DataTypeString(seq.element_dtype()), " tensors"));
  }
  return absl::OkStatus();
}

class SequenceConstructOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    std::vector<Tensor> elements(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) elements[i] = ctx->input(i);
    return ctx->set_output(0, MakeSequence(input_types()[0], std::move(elements)));
  }
  bool IsExpensive() const override { return false; }
};

class SequenceEmptyOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override { return ctx->GetAttr("dtype", &dtype_); }
  absl::Status Compute(OpKernelContext* ctx) const override {
    return ctx->set_output(0, MakeSequence(dtype_, {}));
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_FLOAT;
};

class SequenceInsertOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorSequence* seq, GetSequence(ctx->input(0), "input_sequence"));
    const Tensor& tensor = ctx->input(1);
    SL_RETURN_IF_ERROR(CheckElementDtype(*seq, tensor));
    int64_t at = seq->size();
    if (ctx->num_inputs() > 2) {
      SL_ASSIGN_OR_RETURN(int64_t position, Position(ctx->input(2)));
      SL_ASSIGN_OR_RETURN(at, CheckPosition(position, seq->size(), /*one_past_end=*/true));
    }
    std::vector<Tensor> elements = seq->elements();
    elements.insert(elements.begin() + at, tensor);
    return ctx->set_output(0, MakeSequence(seq->element_dtype(), std::move(elements)));
  }
  bool IsExpensive() const override { return false; }
};

class SequenceAtOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorSequence* seq, GetSequence(ctx->input(0), "input_sequence"));
    SL_ASSIGN_OR_RETURN(int64_t position, Position(ctx->input(1)));
    SL_ASSIGN_OR_RETURN(int64_t at, CheckPosition(position, seq->size(), /*one_past_end=*/false));
    return ctx->set_output(0, seq->elements()[at]);
  }
  bool IsExpensive() const override { return false; }
};

class SequenceEraseOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorSequence* seq, GetSequence(ctx->input(0), "input_sequence"));
    int64_t position = -1;
    if (ctx->num_inputs() > 1) {
      SL_ASSIGN_OR_RETURN(position, Position(ctx->input(1)));
    }
    SL_ASSIGN_OR_RETURN(int64_t at, CheckPosition(position, seq->size(), /*one_past_end=*/false));
    std::vector<Tensor> elements = seq->elements();
    elements.erase(elements.begin() + at);
    return ctx->set_output(0, MakeSequence(seq->element_dtype(), std::move(elements)));
  }
  bool IsExpensive() const override { return false; }
};

class SequenceLengthOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorSequence* seq, GetSequence(ctx->input(0), "input_sequence"));
    return ctx->set_output(0, Tensor::Scalar<int64_t>(seq->size()));
  }
  bool IsExpensive() const override { return false; }
};

// Copies rows [begin, begin + count) of axis `axis` of `in` (seen as outer x dim x inner)
// into a new tensor of `shape`.
absl::StatusOr<Tensor> CopyRows(const Tensor& in, int axis, int64_t begin, int64_t count,
                                const TensorShape& shape) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= in.dim_size(i);
  for (int i = axis + 1; i < in.dims(); ++i) inner *= in.dim_size(i);
  const int64_t dim = in.dim_size(axis);
  SL_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(in.dtype(), shape));
  SL_RETURN_IF_ERROR(VisitElements(in.dtype(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    const E* src = in.data<E>();
    E* dst = out.data<E>();
    for (int64_t o = 0; o < outer; ++o) {
      std::copy(src + (o * dim + begin) * inner, src + (o * dim + begin + count) * inner, dst + o * count * inner);
    }
    return absl::OkStatus();
  }));
  return out;
}

class SplitToSequenceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    return ctx->GetAttr("keepdims", &keepdims_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, in.dims(), "axis"));
    const int64_t dim = in.dim_size(axis);
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (ctx->num_inputs() < 2) {
      sizes.assign(dim, 1);
      squeeze = keepdims_ == 0;
    } else {
      const Tensor& split = ctx->input(1);
      SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IndexValues(split, "split"));
      if (split.dims() == 0) {
        if (v[0] <= 0) return absl::InvalidArgumentError(absl::StrCat("split must be positive, got ", v[0]));
        for (int64_t at = 0; at < dim; at += v[0]) sizes.push_back(std::min(v[0], dim - at));
      } else if (split.dims() == 1) {
        int64_t total = 0;
        for (int64_t s : v) {
          if (s < 0) return absl::InvalidArgumentError(absl::StrCat("split has a negative size ", s));
          if (!CheckedAdd(total, s, &total)) {
            return absl::InvalidArgumentError(absl::StrCat("split sizes ", DimsString(v), " overflow int64"));
          }
        }
        if (total != dim) {
          return absl::InvalidArgumentError(absl::StrCat("split sizes ", DimsString(v), " add up to ", total,
                                                         ", not to the size ", dim, " of axis ", axis));
        }
        sizes = std::move(v);
      } else {
        return absl::InvalidArgumentError(absl::StrCat("split must be a scalar or 1-D, got shape ",
                                                       split.shape().DebugString()));
      }
    }
    std::vector<Tensor> elements;
    int64_t begin = 0;
    for (int64_t size : sizes) {
      TensorShape shape = in.shape();
      if (squeeze) {
        shape.RemoveDim(axis);
      } else {
        shape.set_dim(axis, size);
      }
      SL_ASSIGN_OR_RETURN(Tensor piece, CopyRows(in, axis, begin, size, shape));
      elements.push_back(std::move(piece));
      begin += size;
    }
    return ctx->set_output(0, MakeSequence(in.dtype(), std::move(elements)));
  }

 private:
  int64_t axis_ = 0, keepdims_ = 1;
};

class ConcatFromSequenceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    return ctx->GetAttr("new_axis", &new_axis_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorSequence* seq, GetSequence(ctx->input(0), "input_sequence"));
    const std::vector<Tensor>& elements = seq->elements();
    if (elements.empty()) return absl::InvalidArgumentError("cannot concatenate an empty sequence");
    const Tensor& first = elements[0];
    if (first.dtype() != ctx->expected_output_dtype(0)) {
      return absl::InvalidArgumentError(absl::StrCat("the sequence holds ", DataTypeString(first.dtype()),
                                                     " tensors, the node returns ",
                                                     DataTypeString(ctx->expected_output_dtype(0))));
    }
    const int rank = first.dims();
    SL_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, new_axis_ ? rank + 1 : rank, "axis"));
    // With new_axis, each element is one row of the new axis.
    int64_t total = 0;
    for (size_t k = 0; k < elements.size(); ++k) {
      const Tensor& e = elements[k];
      bool same = e.dims() == rank;
      for (int i = 0; same && i < rank; ++i) same = i == axis && !new_axis_ ? true : e.dim_size(i) == first.dim_size(i);
      if (!same) {
        return absl::InvalidArgumentError(absl::StrCat("element ", k, " has shape ", e.shape().DebugString(),
                                                       ", which does not match element 0's ",
                                                       first.shape().DebugString(), " off axis ", axis));
      }
      total += new_axis_ ? 1 : e.dim_size(axis);
    }
    TensorShape shape = first.shape();
    if (new_axis_) {
      shape.InsertDim(axis, total);
    } else {
      shape.set_dim(axis, total);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= shape.dim_size(i);
    for (int i = axis + 1; i < shape.dims(); ++i) inner *= shape.dim_size(i);
    return VisitElements(first.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      E* dst = out->data<E>();
      int64_t row = 0;
      for (const Tensor& e : elements) {
        const int64_t rows = new_axis_ ? 1 : e.dim_size(axis);
        const E* src = e.data<E>();
        for (int64_t o = 0; o < outer; ++o) {
          std::copy(src + o * rows * inner, src + (o + 1) * rows * inner, dst + (o * total + row) * inner);
        }
        row += rows;
      }
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_ = 0, new_axis_ = 0;
};

class OptionalOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    std::optional<Tensor> value;
    if (ctx->num_inputs() > 0) value = ctx->input(0);
    return ctx->set_output(0, MakeOptional(std::move(value)));
  }
  bool IsExpensive() const override { return false; }
};

// ONNX lets a value stand for an optional that holds it (a Loop body may return a sequence
// for a loop-carried optional of sequences): a variant that is not a TensorOptional, a
// sequence, is such a value.
absl::StatusOr<const TensorOptional*> OptionalOrValue(const Tensor& t) {
  if (t.dtype() == DT_VARIANT && GetSequence(t, "input").ok()) return nullptr;
  return GetOptional(t, "input");
}

class OptionalHasElementOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorOptional* opt, OptionalOrValue(ctx->input(0)));
    return ctx->set_output(0, Tensor::Scalar<bool>(opt == nullptr || opt->has_value()));
  }
  bool IsExpensive() const override { return false; }
};

class OptionalGetElementOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    SL_ASSIGN_OR_RETURN(const TensorOptional* opt, OptionalOrValue(ctx->input(0)));
    if (opt == nullptr) return ctx->set_output(0, ctx->input(0));
    if (!opt->has_value()) return absl::InvalidArgumentError("the optional input holds no value");
    return ctx->set_output(0, opt->value());
  }
  bool IsExpensive() const override { return false; }
};

REGISTER_KERNEL_BUILDER(Name("Onnx>SequenceConstruct").Device(DEVICE_CPU), SequenceConstructOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SequenceEmpty").Device(DEVICE_CPU), SequenceEmptyOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SequenceInsert").Device(DEVICE_CPU), SequenceInsertOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SequenceAt").Device(DEVICE_CPU), SequenceAtOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SequenceErase").Device(DEVICE_CPU), SequenceEraseOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SequenceLength").Device(DEVICE_CPU), SequenceLengthOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>SplitToSequence").Device(DEVICE_CPU), SplitToSequenceOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>ConcatFromSequence").Device(DEVICE_CPU), ConcatFromSequenceOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>Optional").Device(DEVICE_CPU), OptionalOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>OptionalHasElement").Device(DEVICE_CPU), OptionalHasElementOp);
REGISTER_KERNEL_BUILDER(Name("Onnx>OptionalGetElement").Device(DEVICE_CPU), OptionalGetElementOp);

}  // namespace
}  // namespace sluice
