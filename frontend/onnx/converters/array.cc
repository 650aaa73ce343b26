// Tensor manipulation ops (ops/onnx_array_ops.cc). Most map one to one; older versions whose
// attrs later became inputs are normalized onto the newest form here.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

// Input 0 reshaped to 1-D: ONNX's "no axis" for Unique and Compress means the flattened input.
absl::StatusOr<std::string> Flattened(OnnxNodeContext* ctx) {
  std::string shape = ctx->AddConst(Int64Vector({-1}), "flat_shape");
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Reshape", {{ctx->input(0)}, {shape}}, {}, "flatten"));
  return out[0];
}

// Reshape-1 and -4 carried the target shape as an attribute.
absl::Status ConvertReshape1(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(auto shape, ctx->GetInts("shape"));
  std::string s = ctx->AddConst(Int64Vector(shape), "shape");
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Reshape", {{ctx->input(0)}, {s}}, {}));
  return ctx->SetOutputs(out);
}

// Squeeze-1/11 and Unsqueeze-1/11 carried axes as an attribute.
absl::Status ConvertSqueeze1(OnnxNodeContext* ctx) {
  std::vector<std::string> axes;
  if (ctx->attr("axes") != nullptr) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts("axes"));
    axes.push_back(ctx->AddConst(Int64Vector(v), "axes"));
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Squeeze", {{ctx->input(0)}, axes}, {}));
  return ctx->SetOutputs(out);
}

absl::Status ConvertUnsqueeze1(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts("axes"));
  std::string axes = ctx->AddConst(Int64Vector(v), "axes");
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Unsqueeze", {{ctx->input(0)}, {axes}}, {}));
  return ctx->SetOutputs(out);
}

// Concat-1's axis was optional with default 1.
absl::Status ConvertConcat1(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis", 1));
  AttrMap extra;
  extra["axis"] = MakeAttr(axis);
  return ctx->EmitGeneric("", extra);
}

// Split: the sizes are an attribute before 13 (or, in Split-1, optionally input 1), an
// optional input from 13; the number of outputs is the node's.
absl::Status ConvertSplit(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis", 0));
  std::vector<std::string> split;
  if (ctx->since_version() >= 13 || (ctx->since_version() == 1 && ctx->has_input(1))) {
    if (ctx->has_input(1)) split.push_back(ctx->input(1));
  } else if (ctx->attr("split") != nullptr) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts("split"));
    split.push_back(ctx->AddConst(Int64Vector(v), "split"));
  }
  if (ctx->attr("num_outputs") != nullptr) {  // Split-18: equal parts, the last one smaller.
    SL_ASSIGN_OR_RETURN(int64_t n, ctx->GetInt("num_outputs"));
    if (!split.empty()) return ctx->Error("'split' and 'num_outputs' cannot both be given");
    if (n != ctx->num_outputs()) {
      return ctx->Error(absl::StrCat("num_outputs is ", n, " but the node has ", ctx->num_outputs(), " outputs"));
    }
  } else if (ctx->since_version() >= 18 && split.empty()) {
    return ctx->Error("Split-18 needs either the 'split' input or the 'num_outputs' attribute");
  }
  AttrMap attrs;
  attrs["axis"] = MakeAttr(axis);
  attrs["num_outputs"] = MakeAttr(static_cast<int64_t>(ctx->num_outputs()));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Split", {{ctx->input(0)}, split}, attrs));
  return ctx->SetOutputs(out);
}

// Slice-1 carried starts, ends and axes as attributes and had no steps.
absl::Status ConvertSlice1(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(auto starts, ctx->GetInts("starts"));
  SL_ASSIGN_OR_RETURN(auto ends, ctx->GetInts("ends"));
  std::vector<std::string> axes;
  if (ctx->attr("axes") != nullptr) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts("axes"));
    axes.push_back(ctx->AddConst(Int64Vector(v), "axes"));
  }
  std::string s = ctx->AddConst(Int64Vector(starts), "starts");
  std::string e = ctx->AddConst(Int64Vector(ends), "ends");
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Slice", {{ctx->input(0)}, {s}, {e}, axes, {}}, {}));
  return ctx->SetOutputs(out);
}


// Pad-1 (`paddings`) and Pad-2 (`pads`) carried the pads and the fill value as attributes.
absl::Status ConvertPad2(OnnxNodeContext* ctx) {
  const char* pads_name = ctx->since_version() < 2 ? "paddings" : "pads";
  SL_ASSIGN_OR_RETURN(auto pads, ctx->GetInts(pads_name));
  SL_ASSIGN_OR_RETURN(float value, ctx->GetFloat("value", 0.0f));
  SL_ASSIGN_OR_RETURN(std::string mode, ctx->GetString("mode", "constant"));
  SL_ASSIGN_OR_RETURN(Tensor fill, ScalarFromFloatAttr(ctx->input_dtype(0), value, "value"));
  std::string p = ctx->AddConst(Int64Vector(pads), "pads");
  std::string v = ctx->AddConst(fill, "value");
  AttrMap attrs;
  attrs["mode"] = MakeAttr(mode);
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Pad", {{ctx->input(0)}, {p}, {v}, {}}, attrs));
  return ctx->SetOutputs(out);
}

// The value attr is optional (a float 0); its type is the output's.
absl::Status ConvertConstantOfShape(OnnxNodeContext* ctx) {
  Tensor value = Tensor::FromVector<float>({0.0f}, TensorShape({1}));
  if (ctx->attr("value") != nullptr) {
    SL_ASSIGN_OR_RETURN(value, ctx->GetTensor("value"));
  }
  if (value.NumElements() != 1) return ctx->Error("ConstantOfShape: value must have one element");
  AttrMap attrs;
  attrs["value"] = MakeAttr(value);
  attrs["dtype"] = MakeAttr(value.dtype());
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("ConstantOfShape", {{ctx->input(0)}}, attrs));
  return ctx->SetOutputs(out);
}

// Without an axis, Unique and Compress work on the flattened input.
absl::Status ConvertFlattenWithoutAxis(OnnxNodeContext* ctx) {
  if (ctx->attr("axis") != nullptr) return ctx->EmitGeneric();
  SL_ASSIGN_OR_RETURN(std::string flat, Flattened(ctx));
  std::vector<std::vector<std::string>> args = {{flat}};
  for (int i = 1; i < ctx->num_inputs(); ++i) args.push_back({ctx->input(i)});
  AttrMap attrs;
  for (const char* name : {"sorted"}) {
    if (ctx->attr(name) != nullptr) {
      SL_ASSIGN_OR_RETURN(int64_t v, ctx->GetInt(name));
      attrs[name] = MakeAttr(v);
    }
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode(ctx->op_type(), args, attrs));
  return ctx->SetOutputs(out);
}

// dtype defaults to the input's type.
absl::Status ConvertEyeLike(OnnxNodeContext* ctx) {
  AttrMap extra;
  if (ctx->attr("dtype") == nullptr) extra["dtype"] = MakeAttr(ctx->input_dtype(0));
  return ctx->EmitGeneric("", extra);
}

// Scatter-9/11 is ScatterElements without reduction (deprecated at 11).
absl::Status ConvertScatter(OnnxNodeContext* ctx) { return ctx->EmitGeneric("ScatterElements"); }

// Identity: 13 bfloat16, 14 sequences, 16 optionals (Sluice carries tensors only).
// Identity: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Identity", 1, 21, EmitGeneric);

// Reshape: 5 made the shape an input; 13 bfloat16; 14 added allowzero.
REGISTER_ONNX_CONVERTER("", "Reshape", 1, 4, ConvertReshape1);
// Reshape: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Reshape", 5, 21, EmitGeneric);
// Flatten: 9 more types; 11 negative axis; 13 bfloat16.
// Flatten: 21 added the float8 and 4-bit types.
REGISTER_ONNX_CONVERTER("", "Flatten", 1, 21, EmitGeneric);
// Squeeze/Unsqueeze: 11 negative axes; 13 made axes an input.
REGISTER_ONNX_CONVERTER("", "Squeeze", 1, 12, ConvertSqueeze1);
// Squeeze: 21 added the float8 and 4-bit types.
REGISTER_ONNX_CONVERTER("", "Squeeze", 13, 21, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Unsqueeze", 1, 12, ConvertUnsqueeze1);
// Unsqueeze: 21 added the float8 and 4-bit types.
REGISTER_ONNX_CONVERTER("", "Unsqueeze", 13, 21, EmitGeneric);

// Transpose: 13 bfloat16.
// Transpose: 21 added the float8 and 4-bit types.
REGISTER_ONNX_CONVERTER("", "Transpose", 1, 21, EmitGeneric);
// Concat: 4 made axis required; 11 negative axis; 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "Concat", 1, 3, ConvertConcat1);
REGISTER_ONNX_CONVERTER("", "Concat", 4, 13, EmitGeneric);
// Split: 2 split only as attr; 11 negative axis; 13 split became an input; 18 added
// num_outputs (equal parts, the last smaller when the axis does not divide).
REGISTER_ONNX_CONVERTER("", "Split", 1, 13, ConvertSplit);
REGISTER_ONNX_CONVERTER("", "Split", 18, 18, ConvertSplit);
// Slice: 10 made starts/ends/axes inputs and added steps; 11 negative indices; 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "Slice", 1, 9, ConvertSlice1);
REGISTER_ONNX_CONVERTER("", "Slice", 10, 13, EmitGeneric);
// Expand: 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "Expand", 8, 13, EmitGeneric);
// Tile: 6 made repeats an input (Tile-1, with tiles and axis, is in legacy.cc); 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "Tile", 6, 13, EmitGeneric);
// Pad: 2 renamed paddings to pads; 11 made pads and the value inputs; 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "Pad", 1, 10, ConvertPad2);
REGISTER_ONNX_CONVERTER("", "Pad", 11, 13, EmitGeneric);
// Pad-18 added the optional axes input (which pads name which axes).
// Pad: 19 added mode 'wrap'; 21 the float8 and 4-bit types.
REGISTER_ONNX_CONVERTER("", "Pad", 18, 21, EmitGeneric);
// DepthToSpace: 11 added mode; 13 bfloat16. SpaceToDepth: 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "DepthToSpace", 1, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "SpaceToDepth", 1, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Trilu", 14, 14, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReverseSequence", 10, 10, EmitGeneric);
// Compress: 11 negative axis.
REGISTER_ONNX_CONVERTER("", "Compress", 9, 11, ConvertFlattenWithoutAxis);

// Gather: 11 negative indices; 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "Gather", 1, 13, EmitGeneric);
// GatherElements, GatherND: 13 bfloat16 (GatherND-12 added batch_dims).
REGISTER_ONNX_CONVERTER("", "GatherElements", 11, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "GatherND", 11, 13, EmitGeneric);
// ScatterElements, ScatterND: 13 bfloat16; 16 added reduction.
REGISTER_ONNX_CONVERTER("", "ScatterElements", 11, 16, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ScatterND", 11, 16, EmitGeneric);
// ScatterElements, ScatterND: 18 added reductions max and min.
REGISTER_ONNX_CONVERTER("", "ScatterElements", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ScatterND", 18, 18, EmitGeneric);
// Scatter: 11 negative indices (and deprecation in favour of ScatterElements).
REGISTER_ONNX_CONVERTER("", "Scatter", 9, 11, ConvertScatter);
// NonZero: 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "NonZero", 9, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Unique", 11, 11, ConvertFlattenWithoutAxis);
// OneHot: 11 negative axis and indices.
REGISTER_ONNX_CONVERTER("", "OneHot", 9, 11, EmitGeneric);

// Shape: 13 bfloat16; 15 added start and end. Size: 13 bfloat16.
// Shape: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Shape", 1, 21, EmitGeneric);
// Size: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Size", 1, 21, EmitGeneric);
// ConstantOfShape: 20 added the float8 types and bfloat16, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "ConstantOfShape", 9, 21, ConvertConstantOfShape);
REGISTER_ONNX_CONVERTER("", "Range", 11, 11, EmitGeneric);
// EyeLike: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "EyeLike", 9, 22, ConvertEyeLike);

}  // namespace
}  // namespace sluice
