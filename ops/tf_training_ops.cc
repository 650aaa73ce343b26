// TensorFlow's optimizer updates of variables (the dense ones of training_ops.cc), with
// TensorFlow's names, inputs and attrs, written for Sluice from their documented signatures and
// update rules. Resource forms (ResourceApply*) take VarHandleOp handles; ref forms (Apply*)
// take VariableV2 outputs as Assign does (ops/tf_state_ops.cc) and output the new value. Every
// update is written into the variables' buffers when no tensor read before holds them
// (VariableStore::Update), and is serialized with the other updates (use_locking implied).
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

absl::Status RefOutputIsVar(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

}  // namespace

// var -= alpha * delta.
REGISTER_OP("ResourceApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("var -= alpha * delta.");
REGISTER_OP("ApplyGradientDescent")
    .Input("var: Ref(T)")
    .Input("alpha: T")
    .Input("delta: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(RefOutputIsVar)
    .Doc("var -= alpha * delta; outputs the new value.");

// accum = accum * momentum + grad; var -= lr * accum, or with use_nesterov
// var -= grad * lr + accum * momentum * lr.
REGISTER_OP("ResourceApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("accum = accum * momentum + grad; var -= lr * accum (nesterov: var -= grad * lr + accum * momentum * lr).");
REGISTER_OP("ApplyMomentum")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(RefOutputIsVar)
    .Doc("ResourceApplyMomentum's update of ref variables; outputs var's new value.");

// Keras's form: accum = accum * momentum - lr * grad; var += accum, or with use_nesterov
// var += accum * momentum - lr * grad.
REGISTER_OP("ResourceApplyKerasMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("accum = accum * momentum - lr * grad; var += accum (nesterov: var += accum * momentum - lr * grad).");

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (grad - m) * (1 - beta1);
// v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon), or with use_nesterov
// var -= lr_t * (grad * (1 - beta1) + beta1 * m) / (sqrt(v) + epsilon).
REGISTER_OP("ResourceApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Adam's update of var, m and v.");
REGISTER_OP("ApplyAdam")
    .Input("var: Ref(T)")
    .Input("m: Ref(T)")
    .Input("v: Ref(T)")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(RefOutputIsVar)
    .Doc("ResourceApplyAdam's update of ref variables; outputs var's new value.");

// accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum).
REGISTER_OP("ResourceApplyAdagrad")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("accum += grad^2 (with update_slots); var -= lr * grad / sqrt(accum).");
REGISTER_OP("ApplyAdagrad")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn(RefOutputIsVar)
    .Doc("ResourceApplyAdagrad's update of ref variables; outputs var's new value.");

// accum += grad^2 (when update_slots); var -= lr * grad / (sqrt(accum) + epsilon).
REGISTER_OP("ResourceApplyAdagradV2")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("accum += grad^2 (with update_slots); var -= lr * grad / (sqrt(accum) + epsilon).");
REGISTER_OP("ApplyAdagradV2")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn(RefOutputIsVar)
    .Doc("ResourceApplyAdagradV2's update of ref variables; outputs var's new value.");

}  // namespace sluice
