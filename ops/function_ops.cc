// Function arguments and results, and the functional control-flow ops whose bodies are
// functions of the graph's library (ONNX If, Loop and Scan become these).
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc("Argument `index` of the function call this body runs for.");

REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(shape_fn::NoOutputs)
    .Doc("Result `index` of the function call this body runs for.");

// TensorFlow's functional If: the branch's arguments are `input`.
REGISTER_OP("Onnx>If")
    .Input("cond: Tcond")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tcond: type")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("then_branch: func")
    .Attr("else_branch: func")
    .Doc("Runs then_branch(input...) when cond is true (a scalar, or a tensor with one "
         "nonzero element), else else_branch(input...).");

// ONNX Loop. body(iteration, cond, loop_vars..., captured...) returns
// (cond, loop_vars..., scan_outputs...); outputs are the final loop_vars, then each scan output
// stacked over iterations.
REGISTER_OP("Onnx>Loop")
    .Input("max_trip_count: Tm")
    .Input("cond: Tc")
    .Input("loop_vars: Tloop")
    .Input("captured: Tcap")
    .Output("outputs: Tout")
    .Attr("Tm: list(type) >= 0")
    .Attr("Tc: list(type) >= 0")
    .Attr("Tloop: list(type) >= 0")
    .Attr("Tcap: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("body: func");

// ONNX Scan (version 9 and later). body(states..., scan slices..., captured...) returns
// (states..., scan output slices...).
REGISTER_OP("Onnx>Scan")
    .Input("inputs: Tin")
    .Input("captured: Tcap")
    .Output("outputs: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tcap: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("body: func")
    .Attr("num_scan_inputs: int >= 0")
    .Attr("scan_input_axes: list(int) = []")
    .Attr("scan_input_directions: list(int) = []")
    .Attr("scan_output_axes: list(int) = []")
    .Attr("scan_output_directions: list(int) = []")
    .Attr("batch_major: bool = false")
    .Doc("With batch_major (ONNX Scan-8), axis 0 of every input and output is a batch and "
         "each batch entry is scanned on its own.");

}  // namespace sluice
