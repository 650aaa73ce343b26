// Converters for linear (de)quantization and the integer / quantized matrix products and
// convolutions.
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

// y takes y_zero_point's type, uint8 without one; Sluice's op carries it in the attr T2.
absl::Status ConvertQuantizeLinear(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["T2"].set_type(ctx->has_input(2) ? ctx->input_dtype(2) : DT_UINT8);
  return ctx->EmitGeneric("", extra);
}

// QuantizeLinear-13 and DequantizeLinear-13 added `axis` (1-D scales quantize per axis).
REGISTER_ONNX_CONVERTER("", "QuantizeLinear", 10, 13, ConvertQuantizeLinear);
REGISTER_ONNX_CONVERTER("", "DequantizeLinear", 10, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "DynamicQuantizeLinear", 11, 11, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "MatMulInteger", 10, 10, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "QLinearMatMul", 10, 10, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ConvInteger", 10, 10, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "QLinearConv", 10, 10, EmitGeneric);

}  // namespace
}  // namespace sluice
