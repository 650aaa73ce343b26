// Resize, Upsample and ImageDecoder.
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

AttrValue Str(const char* s) {
  AttrValue v;
  v.set_s(s);
  return v;
}

// Resize-10 and Upsample: x / scale coordinates ("asymmetric"), nearest rounds down; the
// modes were spelled in either case.
absl::Status ConvertResizeOld(OnnxNodeContext* ctx, const std::string& scales) {
  SL_ASSIGN_OR_RETURN(std::string mode, ctx->GetString("mode", std::string("nearest")));
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  AttrMap attrs;
  attrs["mode"].set_s(mode);
  attrs["coordinate_transformation_mode"] = Str("asymmetric");
  attrs["nearest_mode"] = Str("floor");
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Resize", {{ctx->input(0)}, {}, {scales}, {}}, attrs));
  return ctx->SetOutputs(out);
}

absl::Status ConvertResize10(OnnxNodeContext* ctx) { return ConvertResizeOld(ctx, ctx->input(1)); }

absl::Status ConvertUpsample7(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(std::vector<float> scales, ctx->GetFloats("scales"));
  std::string s = ctx->AddConst(Tensor::FromVector<float>(scales, TensorShape({static_cast<int64_t>(scales.size())})), "scales");
  return ConvertResizeOld(ctx, s);
}

absl::Status ConvertUpsample9(OnnxNodeContext* ctx) { return ConvertResizeOld(ctx, ctx->input(1)); }

// ImageDecoder is new in 20.
REGISTER_ONNX_CONVERTER("", "ImageDecoder", 20, 20, EmitGeneric);
// Resize-11 added roi, sizes and the coordinate, cubic and nearest attributes; 13 made roi
// and scales optional.
REGISTER_ONNX_CONVERTER("", "Resize", 10, 10, ConvertResize10);
REGISTER_ONNX_CONVERTER("", "Resize", 11, 13, EmitGeneric);
// Resize-18 added antialias, keep_aspect_ratio_policy and axes; 19 added the coordinate
// transformation mode half_pixel_symmetric. The kernel takes them all as attrs.
REGISTER_ONNX_CONVERTER("", "Resize", 18, 19, EmitGeneric);
// Upsample-7 took scales as an attribute, 9 as an input; 10 deprecated it for Resize.
REGISTER_ONNX_CONVERTER("", "Upsample", 7, 7, ConvertUpsample7);
REGISTER_ONNX_CONVERTER("", "Upsample", 9, 10, ConvertUpsample9);

}  // namespace
}  // namespace sluice
