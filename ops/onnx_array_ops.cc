// Tensor manipulation ops with ONNX semantics (names, attrs and defaults follow the ONNX
// operators; optional ONNX inputs are list(type) inputs holding zero or one tensor).
// Kernels: kernels/array_ops.cc, gather_scatter_ops.cc, pad_op.cc, shape_ops.cc.
#include <limits>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/status.h"
#include "ops/onnx_shape_fns.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

absl::Status ShapeOfShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) {
    int64_t dims[] = {-1};
    c->set_output(0, PartialShape(dims));
    return absl::OkStatus();
  }
  int64_t start = 0, end = 0;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "start", &start));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "end", &end));
  const int64_t rank = in.rank();
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return v < 0 ? int64_t{0} : (v > rank ? rank : v);
  };
  start = clamp(start);
  end = clamp(end);
  int64_t dims[] = {end > start ? end - start : 0};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status TransposeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, in);
    return absl::OkStatus();
  }
  std::vector<int64_t> perm;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "perm", &perm));
  const int rank = in.rank();
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != rank) {
    return c->Error(absl::StrCat("perm has ", perm.size(), " entries for an input of rank ", rank));
  }
  DimVector dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) return c->Error(absl::StrCat("perm entry ", p, " out of range"));
    dims.push_back(in.dim(static_cast<int>(p)));
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// ONNX Reshape with a known `shape` input: 0 copies the input's dim (unless allowzero), one -1
// is what the element count leaves when the input's shape is fully known.
absl::Status ReshapeShape(InferenceContext* c) {
  const Tensor* shape = c->input_tensor(1);
  if (shape == nullptr || shape->dtype() != DT_INT64 || shape->dims() != 1) {
    const PartialShape& s = c->input(1);
    if (s.rank() == 1 && s.dim(0) >= 0) c->set_output(0, PartialShape(std::vector<int64_t>(s.dim(0), -1)));
    return absl::OkStatus();
  }
  int64_t allowzero = 0;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "allowzero", &allowzero));
  const PartialShape& in = c->input(0);
  std::vector<int64_t> dims;
  int infer = -1;
  int64_t known = 1;  // Product of the output dims other than the -1.
  for (int64_t i = 0; i < shape->NumElements(); ++i) {
    int64_t v = shape->flat<int64_t>()[i];
    if (v == 0 && allowzero == 0) v = !in.unknown_rank() && i < in.rank() ? in.dim(static_cast<int>(i)) : -2;
    if (v == -1) {
      if (infer >= 0) return c->Error("shape has more than one -1");
      infer = static_cast<int>(i);
    } else if (v < -1 && v != -2) {
      return c->Error(absl::StrCat("shape has a dim of ", v));
    }
    if (v == -2) v = -1;  // A copied dim that is not known.
    if (v >= 0 && known >= 0 && !CheckedMul(known, v, &known)) known = -1;
    if (v < 0 && static_cast<int>(i) != infer) known = -1;
    dims.push_back(v);
  }
  if (infer >= 0) {
    dims[infer] = -1;
    int64_t total = 1;
    bool full = in.IsFullyDefined();
    for (int i = 0; full && i < in.rank(); ++i) full = CheckedMul(total, in.dim(i), &total);
    if (full && known > 0 && total % known == 0) dims[infer] = total / known;
  }
  c->set_output(0, PartialShape(absl::MakeConstSpan(dims)));
  return absl::OkStatus();
}

}  // namespace

// ---- Shape changes without data movement.

REGISTER_OP("Onnx>Reshape")
    .Input("data: T")
    .Input("shape: int64")
    .Output("reshaped: T")
    .Attr("T: type")
    .Attr("allowzero: int = 0")
    .SetShapeFn(ReshapeShape)
    .Doc("ONNX Reshape: 0 copies the input dim (unless allowzero), -1 is inferred.");

REGISTER_OP("Onnx>Flatten")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("axis: int = 1")
    .SetShapeFn(onnx_shape_fn::Flatten)
    .Doc("ONNX Flatten: a matrix of dims [0, axis) by [axis, rank).");

REGISTER_OP("Onnx>Squeeze")
    .Input("data: T")
    .Input("axes: Taxes")
    .Output("squeezed: T")
    .Attr("T: type")
    .Attr("Taxes: list({int64}) >= 0")
    .SetShapeFn(onnx_shape_fn::Squeeze)
    .Doc("ONNX Squeeze; without axes every dim of size 1 goes.");

REGISTER_OP("Onnx>Unsqueeze")
    .Input("data: T")
    .Input("axes: int64")
    .Output("expanded: T")
    .Attr("T: type")
    .SetShapeFn(onnx_shape_fn::Unsqueeze)
    .Doc("ONNX Unsqueeze: axes index the output.");

// ---- Reordering and copying.

REGISTER_OP("Onnx>Transpose")
    .Input("data: T")
    .Output("transposed: T")
    .Attr("T: type")
    .Attr("perm: list(int) = []")
    .SetShapeFn(TransposeShape)
    .Doc("ONNX Transpose; an empty perm reverses the dims.");

REGISTER_OP("Onnx>Concat")
    .Input("inputs: N * T")
    .Output("concat_result: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int")
    .SetShapeFn(onnx_shape_fn::Concat);

REGISTER_OP("Onnx>Split")
    .Input("input: T")
    .Input("split: Tsplit")
    .Output("outputs: num_outputs * T")
    .Attr("T: type")
    .Attr("Tsplit: list({int64}) >= 0")
    .Attr("num_outputs: int >= 1")
    .Attr("axis: int = 0")
    .Doc("ONNX Split; without `split` the axis is divided equally among the outputs.");

REGISTER_OP("Onnx>Slice")
    .Input("data: T")
    .Input("starts: Tind")
    .Input("ends: Tind")
    .Input("axes: Taxes")
    .Input("steps: Tsteps")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tind: {int32, int64}")
    .Attr("Taxes: list({int32, int64}) >= 0")
    .Attr("Tsteps: list({int32, int64}) >= 0")
    .SetShapeFn(onnx_shape_fn::Slice)
    .Doc("ONNX Slice (opset 10+): clamped starts/ends, negative steps.");

REGISTER_OP("Onnx>Expand")
    .Input("input: T")
    .Input("shape: int64")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(onnx_shape_fn::Expand)
    .Doc("ONNX Expand: broadcast `input` against `shape`.");

REGISTER_OP("Onnx>Tile")
    .Input("input: T")
    .Input("repeats: int64")
    .Output("output: T")
    .Attr("T: type");

REGISTER_OP("Onnx>Pad")
    .Input("data: T")
    .Input("pads: int64")
    .Input("constant_value: Tvalue")
    .Input("axes: Taxes")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tvalue: list(type) >= 0")
    .Attr("Taxes: list({int32, int64}) >= 0")
    .Attr("mode: {'constant', 'reflect', 'edge', 'wrap'} = 'constant'")
    .SetShapeFn(onnx_shape_fn::Pad)
    .Doc("ONNX Pad (opset 11+ inputs; axes as in opset 18).");

REGISTER_OP("Onnx>DepthToSpace")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("blocksize: int")
    .Attr("mode: {'DCR', 'CRD'} = 'DCR'");

REGISTER_OP("Onnx>SpaceToDepth")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("blocksize: int");

REGISTER_OP("Onnx>Trilu")
    .Input("input: T")
    .Input("k: Tk")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tk: list({int64}) >= 0")
    .Attr("upper: int = 1")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Onnx>ReverseSequence")
    .Input("input: T")
    .Input("sequence_lens: int64")
    .Output("y: T")
    .Attr("T: type")
    .Attr("batch_axis: int = 1")
    .Attr("time_axis: int = 0")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Onnx>Compress")
    .Input("input: T")
    .Input("condition: bool")
    .Output("output: T")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .Doc("ONNX Compress along `axis` (the converter flattens when ONNX gives no axis).");

// ---- Indexing.

REGISTER_OP("Onnx>Gather")
    .Input("data: T")
    .Input("indices: Tind")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tind: {int32, int64}")
    .Attr("axis: int = 0")
    .SetShapeFn(onnx_shape_fn::Gather);

REGISTER_OP("Onnx>GatherElements")
    .Input("data: T")
    .Input("indices: Tind")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tind: {int32, int64}")
    .Attr("axis: int = 0");

REGISTER_OP("Onnx>GatherND")
    .Input("data: T")
    .Input("indices: int64")
    .Output("output: T")
    .Attr("T: type")
    .Attr("batch_dims: int = 0");

REGISTER_OP("Onnx>ScatterElements")
    .Input("data: T")
    .Input("indices: Tind")
    .Input("updates: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tind: {int32, int64}")
    .Attr("axis: int = 0")
    .Attr("reduction: {'none', 'add', 'mul', 'max', 'min'} = 'none'")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Onnx>ScatterND")
    .Input("data: T")
    .Input("indices: int64")
    .Input("updates: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("reduction: {'none', 'add', 'mul', 'max', 'min'} = 'none'")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Onnx>NonZero")
    .Input("x: T")
    .Output("y: int64")
    .Attr("T: type");

REGISTER_OP("Onnx>Unique")
    .Input("x: T")
    .Output("y: T")
    .Output("indices: int64")
    .Output("inverse_indices: int64")
    .Output("counts: int64")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .Attr("sorted: int = 1")
    .Doc("ONNX Unique along `axis` (the converter flattens when ONNX gives no axis).");

REGISTER_OP("Onnx>OneHot")
    .Input("indices: T1")
    .Input("depth: T2")
    .Input("values: T3")
    .Output("output: T3")
    .Attr("T1: realnumbertype")
    .Attr("T2: realnumbertype")
    .Attr("T3: type")
    .Attr("axis: int = -1");

// ---- Shapes and generated tensors.

REGISTER_OP("Onnx>Shape")
    .Input("data: T")
    .Output("shape: int64")
    .Attr("T: type")
    .Attr("start: int = 0")
    .Attr(absl::StrCat("end: int = ", std::numeric_limits<int64_t>::max()))
    .SetShapeFn(ShapeOfShape)
    .Doc("ONNX Shape; `end` defaults to the rank (any value past it clamps).");

REGISTER_OP("Onnx>Size")
    .Input("data: T")
    .Output("size: int64")
    .Attr("T: type")
    .SetShapeFn(ScalarShape);

REGISTER_OP("Onnx>ConstantOfShape")
    .Input("input: int64")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .SetShapeFn(onnx_shape_fn::ConstantOfShape)
    .Doc("ONNX ConstantOfShape; `value` is a one-element tensor of `dtype`.");

REGISTER_OP("Onnx>Range")
    .Input("start: T")
    .Input("limit: T")
    .Input("delta: T")
    .Output("output: T")
    .Attr("T: {float, double, int16, int32, int64}")
    .SetShapeFn(onnx_shape_fn::Range);

REGISTER_OP("Onnx>EyeLike")
    .Input("input: T1")
    .Output("output: dtype")
    .Attr("T1: type")
    .Attr("dtype: type")
    .Attr("k: int = 0")
    .Doc("ONNX EyeLike; the converter fills `dtype` from the input when ONNX leaves it out.");

}  // namespace sluice
