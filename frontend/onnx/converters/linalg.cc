// Converters for Einsum and Det.
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

REGISTER_ONNX_CONVERTER("", "Einsum", 12, 12, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Det", 11, 11, EmitGeneric);

}  // namespace
}  // namespace sluice
