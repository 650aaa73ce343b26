// RNN, GRU and LSTM.
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

// Version 1 had `output_sequence` (whether Y is produced); Y is always computed now.
absl::Status ConvertRnn1(OnnxNodeContext* ctx) { return ctx->EmitGeneric("", {}, {"output_sequence"}); }

// 7 dropped output_sequence; 14 added layout (batch-major tensors).
REGISTER_ONNX_CONVERTER("", "RNN", 1, 1, ConvertRnn1);
// RNN: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "RNN", 7, 22, EmitGeneric);
// GRU-3 added linear_before_reset.
REGISTER_ONNX_CONVERTER("", "GRU", 1, 1, ConvertRnn1);
// GRU: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "GRU", 3, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "LSTM", 1, 1, ConvertRnn1);
// LSTM: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "LSTM", 7, 22, EmitGeneric);

}  // namespace
}  // namespace sluice
