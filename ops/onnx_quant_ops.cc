// Quantization ops with ONNX semantics: linear (de)quantization and integer / quantized matrix
// products and convolution. Quantized values are int8 or uint8 (int32 for biases and
// accumulators); rounding is half to even, with saturation to the output type. Optional ONNX
// inputs are list(type) args holding zero or one tensor.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

#define SL_CONV_ATTRS                                                              \
  Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")     \
      .Attr("dilations: list(int) = []")                                           \
      .Attr("group: int >= 1 = 1")                                                 \
      .Attr("kernel_shape: list(int) = []")                                        \
      .Attr("pads: list(int) = []")                                                \
      .Attr("strides: list(int) = []")

// T2 is the type of y_zero_point (uint8 without one, or ONNX 21's output_dtype); the
// converter sets it. Ts is the scales' type.
REGISTER_OP("Onnx>QuantizeLinear")
    .Input("x: T1")
    .Input("y_scale: Ts")
    .Input("y_zero_point: Tzp")
    .Output("y: T2")
    .Attr("T1: {float, half, bfloat16, int32}")
    .Attr("Ts: {float, half, bfloat16} = DT_FLOAT")
    .Attr("Tzp: list(type) >= 0")
    .Attr(absl::StrCat("T2: ", kLinearQuantizedTypes, " = DT_UINT8"))
    .Attr("axis: int = 1")
    .Attr("saturate: bool = true")
    .Attr("block_size: int >= 0 = 0")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("y = saturate(round_half_even(x / y_scale) + y_zero_point). A scalar (or one-element) "
         "scale quantizes per tensor; a 1-D one per slice along `axis`; with block_size > 0, one "
         "shaped like x with ceil(x.shape[axis] / block_size) at `axis` quantizes per block. "
         "8-bit float outputs round to nearest even, `saturate` saying whether values out of "
         "range clamp or become inf/NaN; their zero point must be 0.");

REGISTER_OP("Onnx>DequantizeLinear")
    .Input("x: T")
    .Input("x_scale: Ts")
    .Input("x_zero_point: Tzp")
    .Output("y: Ts")
    .Attr(absl::StrCat("T: {int8, uint8, int16, uint16, int4, uint4, int32, float8_e4m3fn, float8_e4m3fnuz, "
                       "float8_e5m2, float8_e5m2fnuz}"))
    .Attr("Ts: {float, half, bfloat16} = DT_FLOAT")
    .Attr("Tzp: list(type) >= 0")
    .Attr("axis: int = 1")
    .Attr("block_size: int >= 0 = 0")
    .SetShapeFn(shape_fn::Unchanged)
    .Doc("y = (x - x_zero_point) * x_scale, per tensor, per slice along `axis` or per block "
         "(as QuantizeLinear), computed in float and rounded to the scale's type.");

REGISTER_OP("Onnx>DynamicQuantizeLinear")
    .Input("x: T1")
    .Output("y: T2")
    .Output("y_scale: float")
    .Output("y_zero_point: T2")
    .Attr("T1: {float}")
    .Attr("T2: {uint8} = DT_UINT8")
    .Doc("Quantizes x to uint8 with the scale and zero point that map [min(x, 0), max(x, 0)] "
         "onto [0, 255].");

REGISTER_OP("Onnx>MatMulInteger")
    .Input("a: T1")
    .Input("b: T2")
    .Input("a_zero_point: Ta")
    .Input("b_zero_point: Tb")
    .Output("y: int32")
    .Attr(absl::StrCat("T1: ", kQuantizedTypes))
    .Attr(absl::StrCat("T2: ", kQuantizedTypes))
    .Attr("Ta: list(type) >= 0")
    .Attr("Tb: list(type) >= 0")
    .Doc("numpy matmul of (a - a_zero_point) and (b - b_zero_point) in int32; zero points per "
         "tensor, per row of a, per column of b.");

REGISTER_OP("Onnx>QLinearMatMul")
    .Input("a: T1")
    .Input("a_scale: TS")
    .Input("a_zero_point: T1")
    .Input("b: T2")
    .Input("b_scale: TS")
    .Input("b_zero_point: T2")
    .Input("y_scale: TS")
    .Input("y_zero_point: T3")
    .Output("y: T3")
    .Attr(absl::StrCat("T1: ", kQuantizedTypes))
    .Attr(absl::StrCat("T2: ", kQuantizedTypes))
    .Attr(absl::StrCat("T3: ", kQuantizedTypes))
    .Attr("TS: {float, half, bfloat16} = DT_FLOAT")
    .Doc("MatMulInteger, rescaled by a_scale * b_scale / y_scale (computed in the scales' type, "
         "as numpy does) and requantized.");

REGISTER_OP("Onnx>ConvInteger")
    .Input("x: T1")
    .Input("w: T2")
    .Input("x_zero_point: Tx")
    .Input("w_zero_point: Tw")
    .Output("y: int32")
    .Attr(absl::StrCat("T1: ", kQuantizedTypes))
    .Attr(absl::StrCat("T2: ", kQuantizedTypes))
    .Attr("Tx: list(type) >= 0")
    .Attr("Tw: list(type) >= 0")
    .SL_CONV_ATTRS
    .Doc("Conv of (x - x_zero_point) and (w - w_zero_point) in int32 (padding reads as the zero "
         "point); w_zero_point per tensor or per output channel.");

REGISTER_OP("Onnx>QLinearConv")
    .Input("x: T1")
    .Input("x_scale: float")
    .Input("x_zero_point: T1")
    .Input("w: T2")
    .Input("w_scale: float")
    .Input("w_zero_point: T2")
    .Input("y_scale: float")
    .Input("y_zero_point: T3")
    .Input("b: T4")
    .Output("y: T3")
    .Attr(absl::StrCat("T1: ", kQuantizedTypes))
    .Attr(absl::StrCat("T2: ", kQuantizedTypes))
    .Attr(absl::StrCat("T3: ", kQuantizedTypes))
    .Attr("T4: list(type) >= 0")
    .SL_CONV_ATTRS
    .Doc("ConvInteger plus the int32 bias b, rescaled by x_scale * w_scale / y_scale (w_scale "
         "per tensor or per output channel) and requantized.");

#undef SL_CONV_ATTRS

}  // namespace sluice
