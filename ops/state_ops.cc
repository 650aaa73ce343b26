// Variables: tensors that live on a device across steps (framework/variable_store.h). Both
// ops name the variable by attr, and both are stateful, so the master keeps each on the
// device it was first placed on; put a variable's reads and assigns on one device.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("ReadVariable")
    .Output("value: dtype")
    .Attr("shared_name: string")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetIsStateful()
    .SetShapeFn(shape_fn::FromShapeAttr)
    .Doc("The variable's current value; FAILED_PRECONDITION before its first assign.");

REGISTER_OP("AssignVariable")
    .Input("value: dtype")
    .Attr("shared_name: string")
    .Attr("dtype: type")
    .SetIsStateful()
    .Doc("Makes `value` the variable's value (the first assign fixes dtype and shape).");

REGISTER_OP("ApplyGradientDescentVariable")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("shared_name: string")
    .Attr("T: {float, double}")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("variable -= alpha * delta (alpha one value, delta of the variable's shape), written into "
         "the variable's buffer when no tensor read before holds it (the optimizer's "
         "inplace_variable_updates pass makes these of AssignVariable(Sub(ReadVariable, Mul(lr, g)))).");

REGISTER_OP("DestroyVariable")
    .Attr("shared_name: string")
    .SetIsStateful()
    .Doc("Frees the variable's value; NOT_FOUND if it has none.");

}  // namespace sluice
