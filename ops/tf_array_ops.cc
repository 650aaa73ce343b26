// TensorFlow's array ops, with TensorFlow's names, inputs and attrs (written for Sluice from
// TensorFlow's documented signatures). Placeholder, PlaceholderWithDefault, Const, Identity and
// IdentityN are in array_ops.cc; the ONNX array ops are "Onnx>..." in onnx_array_ops.cc.
#include "absl/strings/str_cat.h"
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
  c->set_output(0, PartialShape(absl::Span<const int64_t>{}));
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

REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32} = DT_INT32");

}  // namespace sluice
