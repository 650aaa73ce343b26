// Converters for text ops (ops/onnx_text_ops.cc).
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

REGISTER_ONNX_CONVERTER("", "StringNormalizer", 10, 10, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "TfIdfVectorizer", 9, 9, EmitGeneric);
// StringConcat, StringSplit and RegexFullMatch are new in 20.
REGISTER_ONNX_CONVERTER("", "StringConcat", 20, 20, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "StringSplit", 20, 20, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "RegexFullMatch", 20, 20, EmitGeneric);

}  // namespace
}  // namespace sluice
