// Converters for random generators (ops/onnx_random_ops.cc). ONNX's absent seed is Sluice's
// negative default, so the attrs map one to one.
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

// The *Like ops and Bernoulli default `dtype` to the input's type.
absl::Status ConvertDtypeFromInput(OnnxNodeContext* ctx) {
  AttrMap extra;
  if (ctx->attr("dtype") == nullptr) {
    AttrValue dtype;
    dtype.set_type(ctx->input_dtype(0));
    extra["dtype"] = dtype;
  }
  return ctx->EmitGeneric("", extra);
}

// RandomUniform: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "RandomUniform", 1, 22, EmitGeneric);
// RandomNormal: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "RandomNormal", 1, 22, EmitGeneric);
// RandomUniformLike: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "RandomUniformLike", 1, 22, ConvertDtypeFromInput);
// RandomNormalLike: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "RandomNormalLike", 1, 22, ConvertDtypeFromInput);
// Bernoulli: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Bernoulli", 15, 22, ConvertDtypeFromInput);

}  // namespace
}  // namespace sluice
