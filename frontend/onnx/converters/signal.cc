// Converters for the signal processing ops of opset 17.
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

REGISTER_ONNX_CONVERTER("", "DFT", 17, 17, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "STFT", 17, 17, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "MelWeightMatrix", 17, 17, EmitGeneric);

}  // namespace
}  // namespace sluice
