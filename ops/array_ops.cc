// Ops that create, feed and forward tensors.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

absl::Status ConstShape(InferenceContext* c) {
  const AttrValue* value = c->attrs().Find("value");
  if (value == nullptr || value->value_case() != AttrValue::kTensor) {
    return c->Error("attr 'value' must be a tensor");
  }
  c->set_output(0, PartialShape::FromProto(value->tensor().tensor_shape()));
  return absl::OkStatus();
}

absl::Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn(shape_fn::FromShapeAttr)
    .Doc("A tensor that must be fed when the graph runs.");

REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetShapeFn(shape_fn::FromShapeAttr)
    .Doc("Forwards `input` unless the tensor is fed.");

REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .SetShapeFn(ConstShape)
    .Doc("A constant tensor.");

REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fn::Unchanged);

REGISTER_OP("IdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 1")
    .SetShapeFn(IdentityNShape);

}  // namespace sluice
