// Converters for linear (de)quantization and the integer / quantized matrix products and
// convolutions.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace sluice {
namespace {

// y takes y_zero_point's type, else output_dtype's (opset 21), else uint8; Sluice's op
// carries it in the attr T2.
absl::Status ConvertQuantizeLinear(OnnxNodeContext* ctx) {
  DataType y_type = DT_UINT8;
  const onnx::AttributeProto* output_dtype = nullptr;
  for (const auto& a : ctx->node().attribute()) {
    if (a.name() == "output_dtype") output_dtype = &a;
  }
  if (output_dtype != nullptr && output_dtype->i() != 0) {
    auto dt = DataTypeFromOnnx(static_cast<int>(output_dtype->i()));
    if (!dt.ok()) return ctx->Error(absl::StrCat("attribute output_dtype: ", dt.status().message()));
    y_type = *dt;
  }
  if (ctx->has_input(2)) {
    if (output_dtype != nullptr && output_dtype->i() != 0 && ctx->input_dtype(2) != y_type) {
      return ctx->Error(absl::StrCat("output_dtype is ", DataTypeString(y_type), " but y_zero_point is ",
                                     DataTypeString(ctx->input_dtype(2))));
    }
    y_type = ctx->input_dtype(2);
  }
  AttrMap extra;
  extra["T2"].set_type(y_type);
  return ctx->EmitGeneric("", extra, {"output_dtype"});
}

// QuantizeLinear-13 and DequantizeLinear-13 added `axis` (1-D scales quantize per axis).
REGISTER_ONNX_CONVERTER("", "QuantizeLinear", 10, 13, ConvertQuantizeLinear);
REGISTER_ONNX_CONVERTER("", "DequantizeLinear", 10, 13, EmitGeneric);
// 19 added the float8 types, float16 and bfloat16 scales and (QuantizeLinear) `saturate`.
REGISTER_ONNX_CONVERTER("", "QuantizeLinear", 19, 19, ConvertQuantizeLinear);
REGISTER_ONNX_CONVERTER("", "DequantizeLinear", 19, 19, EmitGeneric);
// 21 added int4, uint4, int16 and uint16, blocked quantization (`block_size`) and
// QuantizeLinear's `output_dtype`.
REGISTER_ONNX_CONVERTER("", "QuantizeLinear", 21, 21, ConvertQuantizeLinear);
REGISTER_ONNX_CONVERTER("", "DequantizeLinear", 21, 21, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "DynamicQuantizeLinear", 11, 11, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "MatMulInteger", 10, 10, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "QLinearMatMul", 10, 10, EmitGeneric);
// QLinearMatMul-21 let the scales be float16 or bfloat16 (and added float8 types, which
// Sluice's kernel does not take).
REGISTER_ONNX_CONVERTER("", "QLinearMatMul", 21, 21, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ConvInteger", 10, 10, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "QLinearConv", 10, 10, EmitGeneric);

}  // namespace
}  // namespace sluice
