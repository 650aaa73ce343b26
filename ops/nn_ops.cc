// Neural-network ops.
#include "absl/strings/str_cat.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(absl::StrCat("T: ", kSignedTypes))
    .SetShapeFn(shape_fn::Unchanged);

}  // namespace sluice
