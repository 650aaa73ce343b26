// Ops that only backward graphs use.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("SumToShape")
    .Input("input: T")
    .Input("shape: int64")
    .Output("output: T")
    .Attr(absl::StrCat("T: ", kFloatOrWideSignedIntTypes))
    .Doc("Sums `input` over the dims numpy broadcasting added or stretched to reach its shape "
         "from `shape`: the gradient of a broadcast operand.");

REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Doc("gradients where features > 0, else 0 (TensorFlow's ReluGrad).");

REGISTER_OP("BatchMatMulSum")
    .Input("x: T")
    .Input("y: T")
    .Input("shape: int64")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Doc("SumToShape(BatchMatMulV2(x, y), shape) without the batched intermediate: the gradient "
         "of a batched product for an operand broadcast over the batch (a weight).");

REGISTER_OP("SigmoidGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {float, double}")
    .Doc("dy * y * (1 - y), y = Sigmoid(x): Sigmoid's gradient from its output (TensorFlow's).");

REGISTER_OP("TanhGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {float, double}")
    .Doc("dy * (1 - y * y), y = Tanh(x): Tanh's gradient from its output (TensorFlow's).");

REGISTER_OP("ClipGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Input("min: T")
    .Input("max: T")
    .Output("backprops: T")
    .Attr("T: {float, double}")
    .Doc("gradients where min < features < max, else 0: Clip's gradient from its output (TensorFlow's "
         "Relu6Grad with other bounds) in one pass. min and max are scalars.");

}  // namespace sluice
