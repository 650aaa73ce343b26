// A few more of TensorFlow's ops with TensorFlow's names, inputs and attrs, for clients that run
// TensorFlow ops one at a time (TensorFlow.js's Node backend): IsInf, Diag, DepthToSpace (NHWC),
// BroadcastArgs and EluGrad. Kernels: kernels/tf_misc_ops.cc.
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("IsInf")
    .Input("x: T")
    .Output("y: bool")
    .Attr("T: {bfloat16, half, float, double}")
    .SetShapeFn(shape_fn::Unchanged);

// output[i1..ik, i1..ik] = input[i1..ik]; zero elsewhere.
REGISTER_OP("Diag").Input("diagonal: T").Output("output: T").Attr(
    "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}");

// Channels-last: output[b, h * bs + i, w * bs + j, c] = input[b, h, w, (i * bs + j) * C' + c].
REGISTER_OP("DepthToSpace")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("block_size: int >= 2")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'");

// The shape two shapes broadcast to.
REGISTER_OP("BroadcastArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Attr("T: {int32, int64} = DT_INT32");

// Elu's gradient from its output: g where y >= 0, g * (y + 1) where y < 0.
REGISTER_OP("EluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(shape_fn::Unchanged);

}  // namespace sluice
