// Ops that only the backward graphs of Slice, Gather and MatMul use.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("Onnx>SliceGrad")
    .Input("dy: T")
    .Input("shape: int64")
    .Input("starts: Tind")
    .Input("ends: Tind")
    .Input("axes: Taxes")
    .Input("steps: Tsteps")
    .Output("dx: T")
    .Attr("T: {float, double}")
    .Attr("Tind: {int32, int64}")
    .Attr("Taxes: list({int32, int64}) >= 0")
    .Attr("Tsteps: list({int32, int64}) >= 0")
    .Doc("Zeros of `shape` with dy written where Slice(zeros, starts, ends, axes, steps) reads: "
         "the gradient of Slice.");

REGISTER_OP("Onnx>GatherGrad")
    .Input("dy: T")
    .Input("indices: Tind")
    .Input("shape: int64")
    .Output("dx: T")
    .Attr("T: {float, double}")
    .Attr("Tind: {int32, int64}")
    .Attr("axis: int = 0")
    .Doc("Zeros of `shape` with each slice of dy added at the index Gather read it from "
         "(repeated indices accumulate): the gradient of Gather.");

REGISTER_OP("MatMulGradShapes")
    .Input("x_shape: int64")
    .Input("y_shape: int64")
    .Output("x2: int64")
    .Output("y2: int64")
    .Output("out2: int64")
    .Doc("For BatchMatMulV2(x, y): x's shape with a 1-D x read as [1, K], y's with a 1-D y read "
         "as [K, 1], and the product's shape before numpy drops those unit dims. Backward "
         "graphs reshape to these so that 1-D operands need no special case.");

}  // namespace sluice
