// TensorFlow's variables, with TensorFlow's names, inputs and attrs (written for Sluice from the
// documented signatures of resource_variable_ops.cc and state_ops.cc). Values live in the
// device's VariableStore (framework/variable_store.h), so they persist across the steps of a
// session; kernels are in kernels/tf_variable_ops.cc.
//
// Resource variables: VarHandleOp makes a scalar `resource` handle naming (container,
// shared_name) on its device; ReadVariableOp, AssignVariableOp, AssignAddVariableOp and
// AssignSubVariableOp act on the variable a handle names, on the handle's device.
//
// Ref variables: Sluice's runtime has no reference edges, so `Ref(T)` args pass values.
// VariableV2 outputs the variable's current value; Assign finds the variable through the node
// that feeds its `ref` input (which must be a VariableV2 on the same device), replaces the
// value and outputs the new one. Unlike TensorFlow, a consumer of VariableV2 sees the value as
// of the moment VariableV2 ran, not later assigns in the same step.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("debug_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("allowed_devices: list(string) = []")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    })
    .Doc("A handle to the variable (container, shared_name) of this device: the same names give "
         "the same variable for the life of the session.");

REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .Doc("The variable's value; FAILED_PRECONDITION naming it while it was never assigned.");

REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .Attr("validate_shape: bool = false")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Makes `value` the variable's value (with validate_shape, of the shape it had).");

REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("variable += value, of the same shape; the variable must have a value.");

REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("variable -= value, of the same shape; the variable must have a value.");

REGISTER_OP("VariableV2")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fn::FromShapeAttr)
    .Doc("The variable's current value (shared_name defaults to the node's name); reading it "
         "before an Assign is FAILED_PRECONDITION naming it.");

REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetAllowsUninitializedInput()
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(1));
      return absl::OkStatus();
    })
    .Doc("Makes `value` the value of the VariableV2 feeding `ref` and outputs it. Updates are "
         "always serialized (use_locking is accepted and implied).");

}  // namespace sluice
