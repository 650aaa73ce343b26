// Converters for the signal processing ops of opsets 17 and 20.
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

absl::Status ConvertDft20(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["axis"].set_i(-2);  // Used only when the axis input is absent.
  return ctx->EmitGeneric("", extra);
}

REGISTER_ONNX_CONVERTER("", "DFT", 17, 17, EmitGeneric);
// DFT-20 took axis as an optional input (the last signal dim, -2, when absent) instead of an
// attribute (default 1).
REGISTER_ONNX_CONVERTER("", "DFT", 20, 20, ConvertDft20);
REGISTER_ONNX_CONVERTER("", "STFT", 17, 17, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "MelWeightMatrix", 17, 17, EmitGeneric);

}  // namespace
}  // namespace sluice
