// Ops that only order execution.
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("NoOp").SetShapeFn(shape_fn::NoOutputs).Doc("Does nothing; a target for control edges.");

}  // namespace sluice
