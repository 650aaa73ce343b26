// Converters for matrix products, convolution, pooling, normalization and Dropout.
#include <cmath>

#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

AttrValue Bool(bool b) {
  AttrValue v;
  v.set_b(b);
  return v;
}
AttrValue Float(float f) {
  AttrValue v;
  v.set_f(f);
  return v;
}
AttrValue Int(int64_t i) {
  AttrValue v;
  v.set_i(i);
  return v;
}

// numpy matmul: 1-D operands are vectors, which TensorFlow's BatchMatMulV2 alone refuses.
absl::Status ConvertMatMul(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["vector_operands"] = Bool(true);
  return ctx->EmitGeneric("BatchMatMulV2", extra);
}

// Indices are computed only when the node asks for them.
absl::Status ConvertMaxPool(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["produce_indices"] = Bool(ctx->has_output(1));
  return ctx->EmitGeneric("", extra);
}

// Gemm 1 and 6 had `broadcast`; C broadcasting unidirectionally covers both settings.
absl::Status ConvertGemmBroadcastAttr(OnnxNodeContext* ctx) {
  return ctx->EmitGeneric("", {}, {"broadcast"});
}

// LpPool-1 and GlobalLpPool-1 took p as a float; the kernels (like the later versions) take
// a whole number, so a fractional, infinite or huge p is refused rather than cast.
absl::Status ConvertLpPoolFloatP(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(float p, ctx->GetFloat("p", 2.0f));
  if (!(p >= 1.0f && p <= 1e6f) || p != std::floor(p)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute p is ", p, "; this version's p must be a whole number from 1 to 10^6"));
  }
  AttrMap extra;
  extra["p"] = Int(static_cast<int64_t>(p));
  return ctx->EmitGeneric("", extra);
}

absl::Status ConvertBatchNorm(OnnxNodeContext* ctx) {
  const int v = ctx->since_version();
  AttrMap extra;
  bool training;
  if (v < 7) {
    SL_ASSIGN_OR_RETURN(int64_t is_test, ctx->GetInt("is_test", 0));
    training = is_test == 0;
  } else if (v < 14) {
    training = ctx->has_output(1) || ctx->has_output(2) || ctx->has_output(3) || ctx->has_output(4);
  } else {
    SL_ASSIGN_OR_RETURN(int64_t mode, ctx->GetInt("training_mode", 0));
    training = mode != 0;
  }
  extra["training_mode"] = Bool(training);
  if (v < 9) {
    SL_ASSIGN_OR_RETURN(int64_t spatial, ctx->GetInt("spatial", 1));
    extra["spatial"] = Bool(spatial != 0);
  }
  return ctx->EmitGeneric("", extra, {"consumed_inputs", "is_test", "spatial", "training_mode"});
}

absl::Status ConvertInstanceNorm1(OnnxNodeContext* ctx) {
  return ctx->EmitGeneric("", {}, {"consumed_inputs"});
}

// Dropout 1 and 6: is_test (default 0: training) and ratio are attributes.
absl::Status ConvertDropoutIsTest(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t is_test, ctx->GetInt("is_test", 0));
  SL_ASSIGN_OR_RETURN(float ratio, ctx->GetFloat("ratio", 0.5f));
  std::string r = ctx->AddConst(Tensor::Scalar<float>(ratio), "ratio");
  std::string t = ctx->AddConst(Tensor::Scalar<bool>(is_test == 0), "training_mode");
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Dropout", {{ctx->input(0)}, {r}, {t}}, {}));
  return ctx->SetOutputs(out);
}

// Dropout 7 and 10 always run in inference mode; ratio is an attribute.
absl::Status ConvertDropoutInference(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(float ratio, ctx->GetFloat("ratio", 0.5f));
  AttrMap extra;
  extra["default_ratio"] = Float(ratio);
  return ctx->EmitGeneric("", extra, {"ratio"});
}

// MatMul-9 and 13 widened types only.
REGISTER_ONNX_CONVERTER("", "MatMul", 1, 13, ConvertMatMul);
// Gemm-7 dropped `broadcast`; 9 widened types; 11 made C optional; 13 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Gemm", 1, 6, ConvertGemmBroadcastAttr);
REGISTER_ONNX_CONVERTER("", "Gemm", 7, 13, EmitGeneric);
// Conv-11 changed only the documentation of auto_pad.
// Conv: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Conv", 1, 22, EmitGeneric);
// ConvTranspose: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "ConvTranspose", 1, 22, EmitGeneric);
// MaxPool-8 added storage_order and Indices, 10 ceil_mode and dilations, 12 int8/uint8.
// MaxPool: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "MaxPool", 1, 22, ConvertMaxPool);
// AveragePool-7 added count_include_pad, 10 ceil_mode.
// AveragePool: 19 added dilations; 22 bfloat16.
REGISTER_ONNX_CONVERTER("", "AveragePool", 1, 22, EmitGeneric);
// LpPool-2 made p an int.
REGISTER_ONNX_CONVERTER("", "LpPool", 1, 1, ConvertLpPoolFloatP);
REGISTER_ONNX_CONVERTER("", "LpPool", 2, 11, EmitGeneric);
// Col2Im is new in 18.
REGISTER_ONNX_CONVERTER("", "Col2Im", 18, 18, EmitGeneric);
// DeformConv-19 is new; 22 only widened the types (bfloat16).
REGISTER_ONNX_CONVERTER("", "DeformConv", 19, 22, EmitGeneric);
// LpPool-18 added ceil_mode and dilations.
// LpPool: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "LpPool", 18, 22, EmitGeneric);
// GlobalAveragePool: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "GlobalAveragePool", 1, 22, EmitGeneric);
// GlobalMaxPool: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "GlobalMaxPool", 1, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "GlobalLpPool", 1, 1, ConvertLpPoolFloatP);
// GlobalLpPool: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "GlobalLpPool", 2, 22, EmitGeneric);
// MaxUnpool: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "MaxUnpool", 9, 22, EmitGeneric);
// BatchNormalization-1: consumed_inputs, is_test, spatial; 6: dropped consumed_inputs;
// 7: dropped is_test (training when the statistics outputs are requested); 9: dropped spatial;
// 14: training_mode attr, outputs Y, running_mean, running_var; 15: separate types per input.
REGISTER_ONNX_CONVERTER("", "BatchNormalization", 1, 15, ConvertBatchNorm);
// InstanceNormalization-6 dropped consumed_inputs.
REGISTER_ONNX_CONVERTER("", "InstanceNormalization", 1, 1, ConvertInstanceNorm1);
// InstanceNormalization: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "InstanceNormalization", 6, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "LRN", 1, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "LayerNormalization", 17, 17, EmitGeneric);
// Dropout-7 removed is_test (always inference); 10 typed the mask bool; 12 moved ratio and
// training_mode to inputs and added seed.
REGISTER_ONNX_CONVERTER("", "Dropout", 1, 6, ConvertDropoutIsTest);
REGISTER_ONNX_CONVERTER("", "Dropout", 7, 10, ConvertDropoutInference);
// Dropout: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Dropout", 12, 22, EmitGeneric);

}  // namespace
}  // namespace sluice
