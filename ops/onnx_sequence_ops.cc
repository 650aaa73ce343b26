// ONNX sequence and optional values and the ops on them. A sequence or an optional is a
// scalar `variant` tensor (framework/tensor_sequence.h); the element dtype of a sequence is
// known to the importer, which gives it to ops that return elements as their T.
// Kernels: kernels/sequence_ops.cc.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Onnx>SequenceConstruct")
    .Input("inputs: N * T")
    .Output("output_sequence: variant")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .SetShapeFn(ScalarShape)
    .Doc("A sequence of the inputs, in order.");

REGISTER_OP("Onnx>SequenceEmpty")
    .Output("output: variant")
    .Attr("dtype: type = DT_FLOAT")
    .SetShapeFn(ScalarShape)
    .Doc("An empty sequence of `dtype` tensors.");

REGISTER_OP("Onnx>SequenceInsert")
    .Input("input_sequence: variant")
    .Input("tensor: T")
    .Input("position: Tpos")
    .Output("output_sequence: variant")
    .Attr("T: type")
    .Attr("Tpos: list({int32, int64}) >= 0")
    .SetShapeFn(ScalarShape)
    .Doc("The sequence with `tensor` inserted before `position` (in [-n, n]; at the end "
         "without one).");

REGISTER_OP("Onnx>SequenceAt")
    .Input("input_sequence: variant")
    .Input("position: I")
    .Output("tensor: T")
    .Attr("T: type")
    .Attr("I: {int32, int64}")
    .Doc("Element `position` (in [-n, n-1]) of the sequence.");

REGISTER_OP("Onnx>SequenceErase")
    .Input("input_sequence: variant")
    .Input("position: Tpos")
    .Output("output_sequence: variant")
    .Attr("Tpos: list({int32, int64}) >= 0")
    .SetShapeFn(ScalarShape)
    .Doc("The sequence without element `position` (in [-n, n-1]; the last without one).");

REGISTER_OP("Onnx>SequenceLength")
    .Input("input_sequence: variant")
    .Output("length: int64")
    .SetShapeFn(ScalarShape)
    .Doc("The number of elements of the sequence.");

REGISTER_OP("Onnx>SplitToSequence")
    .Input("input: T")
    .Input("split: Tsplit")
    .Output("output_sequence: variant")
    .Attr("T: type")
    .Attr("Tsplit: list({int32, int64}) >= 0")
    .Attr("axis: int = 0")
    .Attr("keepdims: int = 1")
    .SetShapeFn(ScalarShape)
    .Doc("`input` split along `axis`: into pieces of the sizes in a 1-D `split`, into pieces "
         "of a scalar `split`'s size (the last may be shorter), or without `split` into "
         "slices of size 1, which lose the axis unless keepdims.");

REGISTER_OP("Onnx>ConcatFromSequence")
    .Input("input_sequence: variant")
    .Output("concat_result: T")
    .Attr("T: type")
    .Attr("axis: int")
    .Attr("new_axis: int = 0")
    .Doc("The elements concatenated along `axis`, or stacked along a new `axis` when "
         "new_axis is 1.");

REGISTER_OP("Onnx>Optional")
    .Input("input: Tin")
    .Output("output: variant")
    .Attr("Tin: list(type) >= 0")
    .SetShapeFn(ScalarShape)
    .Doc("An optional holding `input`, or nothing when there is no input.");

REGISTER_OP("Onnx>OptionalHasElement")
    .Input("input: variant")
    .Output("output: bool")
    .SetShapeFn(ScalarShape)
    .Doc("Whether the optional holds a value.");

REGISTER_OP("Onnx>OptionalGetElement")
    .Input("input: variant")
    .Output("output: T")
    .Attr("T: type")
    .Doc("The value the optional holds (a tensor, or a sequence when T is variant); an error "
         "when it holds none.");

}  // namespace sluice
