// TensorFlow's array ops, with TensorFlow's names, inputs and attrs (written for Sluice from
// TensorFlow's documented signatures). Placeholder, PlaceholderWithDefault, Const, Identity and
// IdentityN are in array_ops.cc; the ONNX array ops are "Onnx>..." in onnx_array_ops.cc.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/status.h"
#include "framework/strided_slice.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {
namespace {

// Output i is a vector as long as input i's rank (Shape, ShapeN).
absl::Status ShapeOfEachInput(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    const PartialShape& in = c->input(i);
    int64_t dims[] = {in.unknown_rank() ? -1 : in.rank()};
    c->set_output(i, PartialShape(dims));
  }
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  // Copied from one object, not a temporary: see UnknownShape.
  static const PartialShape* const scalar = new PartialShape(PartialShape::Scalar());
  c->set_output(0, *scalar);
  return absl::OkStatus();
}

// The values of input i when it is a known integer constant.
std::optional<std::vector<int64_t>> ConstInts(InferenceContext* c, int i) {
  const Tensor* t = c->input_tensor(i);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> v;
  switch (t->dtype()) {
    case DT_INT16: for (int16_t x : t->flat<int16_t>()) v.push_back(x); break;
    case DT_INT32: for (int32_t x : t->flat<int32_t>()) v.push_back(x); break;
    case DT_INT64: for (int64_t x : t->flat<int64_t>()) v.push_back(x); break;
    default: return std::nullopt;
  }
  return v;
}

// The shape of unknown rank, copied from one object: GCC flags copying a PartialShape()
// temporary's unused inline storage as uninitialized (see BroadcastShapes).
const PartialShape& UnknownShape() {
  static const PartialShape* const unknown = new PartialShape();
  return *unknown;
}

// Sets output i to a shape of `rank` unknown dims (unknown rank when rank < 0).
void SetUnknownDims(InferenceContext* c, int i, int rank) {
  if (rank < 0) {
    c->set_output(i, UnknownShape());
  } else {
    c->set_output(i, PartialShape(std::vector<int64_t>(rank, -1)));
  }
}

// Maps `axis` into [0, rank); an error naming `what` when it is out of range.
absl::StatusOr<int> ShapeAxis(InferenceContext* c, int64_t axis, int rank, absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return c->Error(absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Unpack: `num` outputs, each the input without dim `axis`.
absl::Status UnpackShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t axis = 0, num = 0;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "axis", &axis));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "num", &num));
  PartialShape out = UnknownShape();
  if (!in.unknown_rank()) {
    SL_ASSIGN_OR_RETURN(int a, ShapeAxis(c, axis, in.rank(), "Unpack: axis"));
    if (in.dim(a) >= 0 && in.dim(a) != num) {
      return c->Error(absl::StrCat("Unpack: dim ", a, " of ", in.DebugString(), " is not num = ", num));
    }
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.erase(dims.begin() + a);
    out = PartialShape(dims);
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

// Split and SplitV: the input with dim `split_dim` cut into the outputs' sizes.
absl::Status SplitShape(InferenceContext* c) {
  const bool v = c->node().op() == "SplitV";
  const int value = v ? 0 : 1, dim_input = v ? 2 : 0;
  const PartialShape& in = c->input(value);
  const int n = c->num_outputs();
  auto dim_value = ConstInts(c, dim_input);
  if (in.unknown_rank() || !dim_value || dim_value->size() != 1) {
    for (int i = 0; i < n; ++i) SetUnknownDims(c, i, in.rank());
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(int axis, ShapeAxis(c, (*dim_value)[0], in.rank(), "split_dim"));
  const int64_t dim = in.dim(axis);
  std::vector<int64_t> sizes(n, -1);
  if (!v) {
    if (dim >= 0 && dim % n != 0) {
      return c->Error(absl::StrCat("Split: dim ", axis, " of size ", dim, " does not split evenly into ", n));
    }
    if (dim >= 0) sizes.assign(n, dim / n);
  } else if (auto s = ConstInts(c, 1); s && static_cast<int>(s->size()) == n) {
    sizes = *s;
    int unknown = 0;
    int64_t known = 0;
    for (int64_t x : sizes) {
      if (x == -1) ++unknown;
      else if (x < 0 || !CheckedAdd(known, x, &known)) return c->Error("SplitV: bad size_splits");
    }
    if (unknown > 1) return c->Error("SplitV: more than one size in size_splits is -1");
    if (dim >= 0 && (unknown == 0 ? known != dim : known > dim)) {
      return c->Error(absl::StrCat("SplitV: size_splits do not add up to dim ", axis, " of size ", dim));
    }
    for (int64_t& x : sizes) {
      if (x == -1) x = dim >= 0 ? dim - known : -1;
    }
  }
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims[axis] = sizes[i];
    c->set_output(i, PartialShape(dims));
  }
  return absl::OkStatus();
}

// Slice: size[i], or the rest of dim i from begin[i] where size[i] is -1.
absl::Status SliceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  auto begin = ConstInts(c, 1);
  auto size = ConstInts(c, 2);
  if (!size) {
    SetUnknownDims(c, 0, in.rank());
    return absl::OkStatus();
  }
  if (!in.unknown_rank() && static_cast<int>(size->size()) != in.rank()) {
    return c->Error(absl::StrCat("Slice: size has ", size->size(), " entries for an input of rank ", in.rank()));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < size->size(); ++i) {
    int64_t d = (*size)[i];
    if (d < -1) return c->Error(absl::StrCat("Slice: size[", i, "] is ", d));
    if (d == -1) {
      d = (begin && !in.unknown_rank() && in.dim(i) >= 0 && (*begin)[i] >= 0 && (*begin)[i] <= in.dim(i))
              ? in.dim(i) - (*begin)[i]
              : -1;
    }
    dims.push_back(d);
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status StridedSliceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  auto begin = ConstInts(c, 1), end = ConstInts(c, 2), strides = ConstInts(c, 3);
  if (!in.IsFullyDefined() || !begin || !end || !strides) {
    c->set_output(0, UnknownShape());
    return absl::OkStatus();
  }
  StridedSliceMasks m;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "begin_mask", &m.begin));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "end_mask", &m.end));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "ellipsis_mask", &m.ellipsis));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "new_axis_mask", &m.new_axis));
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "shrink_axis_mask", &m.shrink_axis));
  auto plan = PlanStridedSlice(in.dims(), *begin, *end, *strides, m);
  if (!plan.ok()) return c->Error(plan.status().message());
  c->set_output(0, PartialShape(plan->final_shape));
  return absl::OkStatus();
}

// Tile: each dim times its multiple.
absl::Status TileShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  auto m = ConstInts(c, 1);
  if (in.unknown_rank() || !m) {
    SetUnknownDims(c, 0, in.rank());
    return absl::OkStatus();
  }
  if (static_cast<int>(m->size()) != in.rank()) {
    return c->Error(absl::StrCat("Tile: multiples has ", m->size(), " entries for an input of rank ", in.rank()));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    int64_t d = -1;
    if ((*m)[i] < 0) return c->Error(absl::StrCat("Tile: multiples[", i, "] is negative"));
    if (in.dim(i) >= 0 && !CheckedMul(in.dim(i), (*m)[i], &d)) return c->Error("Tile: the output overflows int64");
    dims.push_back(d);
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// Pad, PadV2 and MirrorPad: each dim grown by its row of paddings ([rank, 2]).
absl::Status PadShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  auto p = ConstInts(c, 1);
  const int rank = in.rank() >= 0 ? in.rank() : (c->input(1).rank() == 2 ? static_cast<int>(c->input(1).dim(0)) : -1);
  if (!p || rank < 0) {
    SetUnknownDims(c, 0, rank);
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(p->size()) != 2 * int64_t{rank}) {
    return c->Error(absl::StrCat("paddings has ", p->size(), " values for an input of rank ", rank));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    const int64_t before = (*p)[2 * i], after = (*p)[2 * i + 1];
    if (before < 0 || after < 0) return c->Error(absl::StrCat("paddings of dim ", i, " are negative"));
    int64_t d = -1;
    if (!in.unknown_rank() && in.dim(i) >= 0 && (!CheckedAdd(in.dim(i), before, &d) || !CheckedAdd(d, after, &d))) {
      return c->Error("paddings overflow int64");
    }
    dims.push_back(d);
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// GatherV2: params[:axis] + indices[batch_dims:] + params[axis + 1:].
absl::Status GatherV2Shape(InferenceContext* c) {
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  auto axis_value = ConstInts(c, 2);
  int64_t batch_dims = 0;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "batch_dims", &batch_dims));
  if (params.unknown_rank() || indices.unknown_rank() || !axis_value || axis_value->size() != 1) {
    c->set_output(0, UnknownShape());
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(int axis, ShapeAxis(c, (*axis_value)[0], params.rank(), "GatherV2: axis"));
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > indices.rank() || batch_dims > axis) {
    return c->Error(absl::StrCat("GatherV2: batch_dims must be in [0, min(axis ", axis, ", indices rank ",
                                 indices.rank(), ")]"));
  }
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin() + batch_dims, indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// GatherNd: indices[:-1] + params[indices[-1]:].
absl::Status GatherNdShape(InferenceContext* c) {
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  if (params.unknown_rank() || indices.unknown_rank() || indices.rank() < 1 || indices.dim(indices.rank() - 1) < 0) {
    c->set_output(0, UnknownShape());
    return absl::OkStatus();
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > params.rank()) {
    return c->Error(absl::StrCat("GatherNd: index tuples of length ", k, " into params of rank ", params.rank()));
  }
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), params.dims().begin() + k, params.dims().end());
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status WhereShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t dims[] = {-1, in.unknown_rank() ? -1 : in.rank()};
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// OneHot: indices' shape with depth inserted at axis (-1: last).
absl::Status OneHotShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t axis = -1;
  SL_RETURN_IF_ERROR(GetNodeAttr(c->attrs(), "axis", &axis));
  if (axis < -1) return c->Error(absl::StrCat("OneHot: axis ", axis, " must be -1 or more"));
  int64_t depth = -1;
  if (auto d = ConstInts(c, 1); d && d->size() == 1) {
    depth = (*d)[0];
    if (depth < 0) return c->Error(absl::StrCat("OneHot: depth ", depth, " is negative"));
  }
  if (in.unknown_rank()) {
    c->set_output(0, UnknownShape());
    return absl::OkStatus();
  }
  if (axis > in.rank()) return c->Error(absl::StrCat("OneHot: axis ", axis, " is past the output's rank"));
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
  dims.insert(axis == -1 ? dims.end() : dims.begin() + axis, depth);
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}


// An output whose shape is the value of integer input i (StridedSliceGrad, ScatterNd): known
// when the input is a constant, else of its length's rank.
absl::Status ShapeFromInput(InferenceContext* c, int i) {
  if (auto v = ConstInts(c, i)) {
    for (int64_t d : *v) {
      if (d < 0) return c->Error(absl::StrCat("the shape input holds a negative dim ", d));
    }
    c->set_output(0, PartialShape(*v));
    return absl::OkStatus();
  }
  const PartialShape& s = c->input(i);
  SetUnknownDims(c, 0, s.rank() == 1 && s.dim(0) >= 0 ? static_cast<int>(s.dim(0)) : -1);
  return absl::OkStatus();
}

// MirrorPadGrad: each dim shrunk by its row of paddings.
absl::Status MirrorPadGradShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  auto p = ConstInts(c, 1);
  if (in.unknown_rank() || !p) {
    SetUnknownDims(c, 0, in.rank());
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(p->size()) != 2 * int64_t{in.rank()}) {
    return c->Error(absl::StrCat("paddings has ", p->size(), " values for an input of rank ", in.rank()));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t before = (*p)[2 * i], after = (*p)[2 * i + 1];
    if (before < 0 || after < 0) return c->Error(absl::StrCat("paddings of dim ", i, " are negative"));
    int64_t d = in.dim(i);
    if (d >= 0) {
      d -= before;
      if (d < after) return c->Error(absl::StrCat("paddings of dim ", i, " are more than its size ", in.dim(i)));
      d -= after;
    }
    dims.push_back(d);
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("StopGradient").Input("input: T").Output("output: T").Attr("T: type")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeOfEachInput);

REGISTER_OP("ShapeN")
    .Input("input: N * T")
    .Output("output: N * out_type")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeOfEachInput);

REGISTER_OP("Size")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ScalarShape);

REGISTER_OP("Rank").Input("input: T").Output("output: int32").Attr("T: type").SetShapeFn(ScalarShape);

REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: type")
    .Attr("DstT: type")
    .Attr("Truncate: bool = false")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = DT_INT32");

REGISTER_OP("ExpandDims")
    .Input("input: T")
    .Input("dim: Tdim")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tdim: {int32, int64} = DT_INT32");

REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) >= 0 = []");

REGISTER_OP("ConcatV2")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32");

REGISTER_OP("Concat")
    .Input("concat_dim: int32")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type");

REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0");

REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32");

REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {int32, int64} = DT_INT32");

REGISTER_OP("ZerosLike").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(shape_fn::Unchanged);
REGISTER_OP("OnesLike").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("SelectV2")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fn::BroadcastAll);

// TensorFlow's older Select: `condition` has t's shape, is a scalar, or is a vector that picks
// whole rows (along the first dim) of t and e, which have one shape. No broadcasting.
REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(1));
      return absl::OkStatus();
    });

REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32} = DT_INT32");

REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 0")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(UnpackShape);

REGISTER_OP("Split")
    .Input("split_dim: int32")
    .Input("value: T")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .SetShapeFn(SplitShape);

REGISTER_OP("SplitV")
    .Input("value: T")
    .Input("size_splits: Tlen")
    .Input("split_dim: int32")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Attr("Tlen: {int8, int32, int64} = DT_INT64")
    .SetShapeFn(SplitShape);

REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .SetShapeFn(SliceShape);

REGISTER_OP("StridedSlice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int16, int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceShape);

REGISTER_OP("StridedSliceGrad")
    .Input("shape: Index")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Input("dy: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromInput(c, 0); })
    .Doc("The gradient of StridedSlice: zeros of `shape` with dy where StridedSlice(zeros, begin, "
         "end, strides) reads, under the same masks.");

REGISTER_OP("MirrorPadGrad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .SetShapeFn(MirrorPadGradShape)
    .Doc("The gradient of MirrorPad: `input` (of the padded shape) with each padded element "
         "added onto the element it mirrors, cropped to the unpadded shape.");

REGISTER_OP("ScatterNd")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Input("shape: Tindices")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("bad_indices_policy: string = ''")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromInput(c, 2); })
    .Doc("Zeros of `shape` with each slice of `updates` added at its index tuple (indices' last "
         "dim); repeated indices add up. An index out of range is an error.");

REGISTER_OP("Tile")
    .Input("input: T")
    .Input("multiples: Tmultiples")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tmultiples: {int32, int64} = DT_INT32")
    .SetShapeFn(TileShape);

REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadShape);

REGISTER_OP("PadV2")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Input("constant_values: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadShape);

REGISTER_OP("MirrorPad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .SetShapeFn(PadShape);

REGISTER_OP("GatherV2")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Input("axis: Taxis")
    .Output("output: Tparams")
    .Attr("batch_dims: int = 0")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("Taxis: {int32, int64}")
    .SetShapeFn(GatherV2Shape);

REGISTER_OP("GatherNd")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .SetShapeFn(GatherNdShape);

REGISTER_OP("Where")
    .Input("input: T")
    .Output("index: int64")
    .Attr(absl::StrCat("T: ", kNumericOrBoolTypes, " = DT_BOOL"))
    .SetShapeFn(WhereShape);

REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Output("output: T")
    .Attr("axis: int = -1")
    .Attr("T: type")
    .Attr("TI: {uint8, int8, int32, int64} = DT_INT64")
    .SetShapeFn(OneHotShape);

}  // namespace sluice
