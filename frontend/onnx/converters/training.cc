// Optimizers of ai.onnx.preview.training.
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

constexpr char kTraining[] = "ai.onnx.preview.training";

absl::Status ConvertOptimizer(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["M"].set_i(ctx->num_outputs());
  return ctx->EmitGeneric("", extra);
}

// Version 1 is the only one.
REGISTER_ONNX_CONVERTER(kTraining, "Adagrad", 1, 1, ConvertOptimizer);
REGISTER_ONNX_CONVERTER(kTraining, "Momentum", 1, 1, ConvertOptimizer);
REGISTER_ONNX_CONVERTER(kTraining, "Adam", 1, 1, ConvertOptimizer);

}  // namespace
}  // namespace sluice
