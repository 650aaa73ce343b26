// Resize and Upsample.
#include "absl/strings/str_cat.h"
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

// Resize-18 added antialias, keep_aspect_ratio_policy and axes. The kernel has none of them, so
// a node that needs one fails by name; their defaults (and axes naming every dim in order) are
// Resize-13.
absl::Status ConvertResize18(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t antialias, ctx->GetInt("antialias", 0));
  SL_ASSIGN_OR_RETURN(std::string mode, ctx->GetString("mode", std::string("nearest")));
  if (antialias != 0 && mode != "nearest") {
    return ctx->Unimplemented(absl::StrCat("attribute antialias=", antialias, " with mode '", mode,
                                           "' (no antialiasing filter in Sluice's Resize)"));
  }
  SL_ASSIGN_OR_RETURN(std::string policy, ctx->GetString("keep_aspect_ratio_policy", std::string("stretch")));
  if (policy != "stretch" && ctx->has_input(3)) {
    return ctx->Unimplemented(absl::StrCat("attribute keep_aspect_ratio_policy='", policy, "'"));
  }
  if (ctx->attr("axes") != nullptr) {
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx->GetInts("axes"));
    const PartialShape shape = ctx->input_shape(0);
    bool all_in_order = !shape.unknown_rank() && static_cast<int64_t>(axes.size()) == shape.rank();
    for (size_t i = 0; all_in_order && i < axes.size(); ++i) {
      all_in_order = axes[i] == static_cast<int64_t>(i) || axes[i] == static_cast<int64_t>(i) - shape.rank();
    }
    if (!all_in_order) {
      return ctx->Unimplemented("attribute axes other than every dim in order");
    }
  }
  return ctx->EmitGeneric("", {}, {"antialias", "keep_aspect_ratio_policy", "axes"});
}

// Resize-11 added roi, sizes and the coordinate, cubic and nearest attributes; 13 made roi
// and scales optional.
REGISTER_ONNX_CONVERTER("", "Resize", 10, 10, ConvertResize10);
REGISTER_ONNX_CONVERTER("", "Resize", 11, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Resize", 18, 18, ConvertResize18);
// Upsample-7 took scales as an attribute, 9 as an input; 10 deprecated it for Resize.
REGISTER_ONNX_CONVERTER("", "Upsample", 7, 7, ConvertUpsample7);
REGISTER_ONNX_CONVERTER("", "Upsample", 9, 10, ConvertUpsample9);

}  // namespace
}  // namespace sluice
