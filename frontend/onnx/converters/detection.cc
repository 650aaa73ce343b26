// Converters for detection and spatial sampling ops (ops/onnx_detection_ops.cc).
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

// RoiAlign-10 had no coordinate_transformation_mode; it behaved as 'output_half_pixel'.
absl::Status ConvertRoiAlign10(OnnxNodeContext* ctx) {
  AttrMap extra;
  extra["coordinate_transformation_mode"].set_s("output_half_pixel");
  return ctx->EmitGeneric("", extra);
}

// NonMaxSuppression-11 changed only the documentation.
REGISTER_ONNX_CONVERTER("", "NonMaxSuppression", 10, 11, EmitGeneric);
// RoiAlign-16 added coordinate_transformation_mode, defaulting to 'half_pixel'.
REGISTER_ONNX_CONVERTER("", "RoiAlign", 10, 10, ConvertRoiAlign10);
// RoiAlign: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "RoiAlign", 16, 22, EmitGeneric);
// AffineGrid is new in 20.
REGISTER_ONNX_CONVERTER("", "AffineGrid", 20, 20, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "GridSample", 16, 16, EmitGeneric);
// GridSample-20 took N-D input and renamed modes bilinear and bicubic to linear and cubic;
// 22 only widened the types.
REGISTER_ONNX_CONVERTER("", "GridSample", 20, 22, EmitGeneric);

}  // namespace
}  // namespace sluice
