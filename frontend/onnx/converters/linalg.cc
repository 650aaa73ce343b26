// Converters for Einsum and Det.
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

REGISTER_ONNX_CONVERTER("", "Einsum", 12, 12, EmitGeneric);
// Det: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Det", 11, 22, EmitGeneric);

}  // namespace
}  // namespace sluice
