// Neural-network ops.
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double, int8, int16, int32, int64}")
    .SetShapeFn(shape_fn::Unchanged);

}  // namespace sluice
