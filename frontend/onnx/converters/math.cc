// Element-wise math, activations, logic, Cast, reductions, softmax family, CumSum and TopK
// (ops/onnx_math_ops.cc). Most map one to one; older versions are normalized onto the newest
// form here: version-1 `consumed_inputs` is dropped, the opset-1..6 `broadcast`/`axis` pair is
// checked against numpy broadcasting, and attrs that later became inputs become constants.
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace sluice {
namespace {



// Version 1 of most element-wise ops had the meaningless `consumed_inputs`.
absl::Status ConvertDropConsumedInputs(OnnxNodeContext* ctx) {
  return ctx->EmitGeneric("", {}, {"consumed_inputs"});
}

// PRelu before 7 applied a slope of shape [C] per channel (axis 1; torch exported it so);
// 7 made slope broadcast numpy's way, which aligns it with the last axis instead.
absl::Status ConvertPReluPerChannel(OnnxNodeContext* ctx) {
  const PartialShape x = ctx->input_shape(0), slope = ctx->input_shape(1);
  if (x.unknown_rank() || x.rank() < 3 || slope.unknown_rank() || slope.rank() != 1 || slope.dims()[0] == 1) {
    return ctx->EmitGeneric("", {}, {"consumed_inputs"});  // Trailing alignment is axis 1, or a shared slope.
  }
  std::vector<int64_t> channel_shape(x.rank() - 1, 1);  // [C, 1, ..., 1]
  channel_shape[0] = -1;
  std::string shape = ctx->AddConst(Int64Vector(channel_shape), "slope_shape");
  SL_ASSIGN_OR_RETURN(auto per_channel, ctx->AddNode("Reshape", {{ctx->input(1)}, {shape}}, {}, "slope"));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("PRelu", {{ctx->input(0)}, {per_channel[0]}}, {}));
  return ctx->SetOutputs(out);
}

// Binary ops before opset 7 broadcast only with broadcast=1, aligning B at `axis` of A
// (default: trailing). Trailing alignment, and same shapes, are what numpy does.
absl::Status ConvertLegacyBroadcast(OnnxNodeContext* ctx) {
  if (ctx->attr("axis") != nullptr) {
    SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis"));
    PartialShape a = ctx->input_shape(0), b = ctx->input_shape(1);
    if (a.unknown_rank() || b.unknown_rank() || axis != a.rank() - b.rank()) {
      return ctx->Unimplemented(absl::StrCat(
          "broadcasting with axis=", axis, " other than numpy's trailing alignment"));
    }
  }
  return ctx->EmitGeneric("", {}, {"consumed_inputs", "broadcast", "axis"});
}

// Clip-1 and -6 took min and max as float attrs.
absl::Status ConvertClip6(OnnxNodeContext* ctx) {
  std::vector<std::vector<std::string>> args = {{ctx->input(0)}, {}, {}};
  const DataType dt = ctx->input_dtype(0);
  int slot = 1;
  for (const char* bound : {"min", "max"}) {
    if (ctx->attr(bound) != nullptr) {
      SL_ASSIGN_OR_RETURN(float v, ctx->GetFloat(bound));
      SL_ASSIGN_OR_RETURN(Tensor t, ScalarFromFloatAttr(dt, v, bound));
      args[slot].push_back(ctx->AddConst(t, bound));
    }
    ++slot;
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Clip", std::move(args), {}));
  return ctx->SetOutputs(out);
}

// Cast-1 named the target type as a string ("FLOAT").
absl::Status ConvertCast1(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(std::string to, ctx->GetString("to"));
  onnx::TensorProto::DataType onnx_type;
  if (!onnx::TensorProto::DataType_Parse(to, &onnx_type)) {
    return ctx->Error(absl::StrCat("unknown type '", to, "' in attribute 'to'"));
  }
  SL_ASSIGN_OR_RETURN(DataType dt, DataTypeFromOnnx(onnx_type));
  AttrMap extra;
  extra["to"] = MakeAttr(dt);
  return ctx->EmitGeneric("", extra);
}

// Reductions whose axes are an attribute (all but ReduceSum before opset 18, ReduceSum before
// 13): the axes become a constant input. keepdims is an int in ONNX, a bool here.
absl::Status ConvertReduceAxesAttr(OnnxNodeContext* ctx) {
  std::vector<std::string> axes;
  if (ctx->attr("axes") != nullptr) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts("axes"));
    axes.push_back(ctx->AddConst(Int64Vector(v), "axes"));
  }
  SL_ASSIGN_OR_RETURN(int64_t keepdims, ctx->GetInt("keepdims", 1));
  AttrMap attrs;
  attrs["keepdims"] = MakeAttr(keepdims != 0);
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode(ctx->op_type(), {{ctx->input(0)}, axes}, attrs));
  return ctx->SetOutputs(out);
}

// Softmax, LogSoftmax and Hardmax before opset 13 normalize over all dims from `axis` on
// (default 1), as if the input were flattened to 2-D there. When `axis` is the last dim that is
// the opset-13 op; otherwise flatten, normalize rows, and restore the shape.
absl::Status ConvertCoercedSoftmax(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis", 1));
  const PartialShape shape = ctx->input_shape(0);
  AttrMap attrs;
  if (!shape.unknown_rank() && (axis == shape.rank() - 1 || axis == -1)) {
    attrs["axis"] = MakeAttr(int64_t{-1});
    SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode(ctx->op_type(), {{ctx->input(0)}}, attrs));
    return ctx->SetOutputs(out);
  }
  AttrMap flatten_attrs;
  flatten_attrs["axis"] = MakeAttr(axis);
  SL_ASSIGN_OR_RETURN(auto flat, ctx->AddNode("Flatten", {{ctx->input(0)}}, flatten_attrs, "flat"));
  attrs["axis"] = MakeAttr(int64_t{1});
  SL_ASSIGN_OR_RETURN(auto rows, ctx->AddNode(ctx->op_type(), {{flat[0]}}, attrs, "rows"));
  std::string shape_tensor;
  if (shape.IsFullyDefined()) {
    std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
    shape_tensor = ctx->AddConst(Int64Vector(dims), "shape");
  } else {
    SL_ASSIGN_OR_RETURN(auto s, ctx->AddNode("Shape", {{ctx->input(0)}}, {}, "shape"));
    shape_tensor = s[0];
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Reshape", {{rows[0]}, {shape_tensor}}, {}));
  return ctx->SetOutputs(out);
}

// TopK-1 took k as an attribute.
absl::Status ConvertTopK1(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t k, ctx->GetInt("k"));
  SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis", -1));
  std::string k_tensor = ctx->AddConst(Int64Vector({k}), "k");
  AttrMap attrs;
  attrs["axis"] = MakeAttr(axis);
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("TopK", {{ctx->input(0)}, {k_tensor}}, attrs));
  return ctx->SetOutputs(out);
}

}  // namespace

// Unary math. Version 1 had consumed_inputs; 6 dropped it; 13 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Abs", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Abs", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Neg", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Neg", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Exp", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Exp", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Log", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Log", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Sqrt", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Sqrt", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Reciprocal", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Reciprocal", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Ceil", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Ceil", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Floor", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Floor", 6, 13, EmitGeneric);
// Round, Sign, Erf, IsNaN, IsInf, trig and hyperbolic functions: new in 7-11; 13 added types.
// Round: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Round", 11, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Sign", 9, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Erf", 9, 13, EmitGeneric);
// IsNaN: 20 added the float8 types.
REGISTER_ONNX_CONVERTER("", "IsNaN", 9, 20, EmitGeneric);
// IsInf: 20 added bfloat16 and the float8 types.
REGISTER_ONNX_CONVERTER("", "IsInf", 10, 20, EmitGeneric);
// Sin: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Sin", 7, 22, EmitGeneric);
// Cos: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Cos", 7, 22, EmitGeneric);
// Tan: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Tan", 7, 22, EmitGeneric);
// Asin: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Asin", 7, 22, EmitGeneric);
// Acos: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Acos", 7, 22, EmitGeneric);
// Atan: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Atan", 7, 22, EmitGeneric);
// Sinh: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Sinh", 9, 22, EmitGeneric);
// Cosh: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Cosh", 9, 22, EmitGeneric);
// Asinh: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Asinh", 9, 22, EmitGeneric);
// Acosh: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Acosh", 9, 22, EmitGeneric);
// Atanh: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Atanh", 9, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Not", 1, 1, EmitGeneric);

// Activations. Version 1 had consumed_inputs; 6 dropped it; 13/14/16 widened the types.
REGISTER_ONNX_CONVERTER("", "Relu", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Relu", 6, 14, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Sigmoid", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Sigmoid", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Tanh", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Tanh", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "LeakyRelu", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "LeakyRelu", 6, 16, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Elu", 1, 5, ConvertDropConsumedInputs);
// Elu: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Elu", 6, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Selu", 1, 5, ConvertDropConsumedInputs);
// Selu: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Selu", 6, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "HardSigmoid", 1, 5, ConvertDropConsumedInputs);
// HardSigmoid: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "HardSigmoid", 6, 22, EmitGeneric);
// Softplus: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Softplus", 1, 22, EmitGeneric);
// Softsign: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Softsign", 1, 22, EmitGeneric);
// ThresholdedRelu: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "ThresholdedRelu", 10, 22, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Shrink", 9, 9, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Celu", 12, 12, EmitGeneric);
// HardSwish: 22 added bfloat16.
REGISTER_ONNX_CONVERTER("", "HardSwish", 14, 22, EmitGeneric);
// Gelu is new in 20 (before it, models spelled it out with Erf or Tanh).
REGISTER_ONNX_CONVERTER("", "Gelu", 20, 20, EmitGeneric);
// PRelu-1 had consumed_inputs; 7 made slope broadcast; 9 and 16 widened the types.
REGISTER_ONNX_CONVERTER("", "PRelu", 1, 6, ConvertPReluPerChannel);
REGISTER_ONNX_CONVERTER("", "PRelu", 7, 16, EmitGeneric);

// Binary ops: before 7 broadcasting took broadcast/axis attrs; 7 switched to numpy rules;
// later versions only widened the types.
REGISTER_ONNX_CONVERTER("", "Add", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Add", 7, 14, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Sub", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Sub", 7, 14, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Mul", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Mul", 7, 14, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Div", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Div", 7, 14, EmitGeneric);
// Pow-12 let the exponent have its own type; 13 and 15 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Pow", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Pow", 7, 15, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Mod", 10, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "BitShift", 11, 11, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "And", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "And", 7, 7, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Or", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Or", 7, 7, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Xor", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Xor", 7, 7, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Equal", 1, 6, ConvertLegacyBroadcast);
// Equal: 19 added string.
REGISTER_ONNX_CONVERTER("", "Equal", 7, 19, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Greater", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Greater", 7, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Less", 1, 6, ConvertLegacyBroadcast);
REGISTER_ONNX_CONVERTER("", "Less", 7, 13, EmitGeneric);
// The Bitwise ops are new in 18.
REGISTER_ONNX_CONVERTER("", "BitwiseAnd", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "BitwiseOr", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "BitwiseXor", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "BitwiseNot", 18, 18, EmitGeneric);
// GreaterOrEqual and LessOrEqual are new in 12; 16 added bfloat16.
REGISTER_ONNX_CONVERTER("", "GreaterOrEqual", 12, 16, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "LessOrEqual", 12, 16, EmitGeneric);

// Variadic: version 1 had consumed_inputs; 6 needed equal shapes (a case of 8's numpy
// broadcasting); 12 and 13 widened the types.
REGISTER_ONNX_CONVERTER("", "Max", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Max", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Min", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Min", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Sum", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Sum", 6, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Mean", 1, 5, ConvertDropConsumedInputs);
REGISTER_ONNX_CONVERTER("", "Mean", 6, 13, EmitGeneric);

// Where-16 added bfloat16.
REGISTER_ONNX_CONVERTER("", "Where", 9, 16, EmitGeneric);
// Clip-11 turned the min and max attrs into optional inputs; 12 and 13 widened the types.
REGISTER_ONNX_CONVERTER("", "Clip", 1, 10, ConvertClip6);
REGISTER_ONNX_CONVERTER("", "Clip", 11, 13, EmitGeneric);

// Cast-6 made `to` a type enum (it was a string); 9 and 13 added string and bfloat16.
REGISTER_ONNX_CONVERTER("", "Cast", 1, 5, ConvertCast1);
REGISTER_ONNX_CONVERTER("", "Cast", 6, 13, EmitGeneric);
// Cast-19 added the float8 types and `saturate` (what out-of-range values become in them).
REGISTER_ONNX_CONVERTER("", "Cast", 19, 19, EmitGeneric);
// Cast-21 added int4 and uint4 (rounded and clamped to their range).
REGISTER_ONNX_CONVERTER("", "Cast", 21, 21, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "CastLike", 15, 15, EmitGeneric);
// CastLike-19 and 21: as Cast-19 (float8, saturate) and Cast-21 (int4, uint4).
REGISTER_ONNX_CONVERTER("", "CastLike", 19, 19, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "CastLike", 21, 21, EmitGeneric);

// Reductions: 11 allowed negative axes; 12 widened ReduceMax/ReduceMin types; ReduceSum-13 took
// axes as an input and added noop_with_empty_axes (the others do so at 18, the same op).
REGISTER_ONNX_CONVERTER("", "ReduceSum", 1, 12, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceSum", 13, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceMean", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceMax", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceMin", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceProd", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceL1", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceL2", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceLogSum", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceLogSumExp", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceSumSquare", 1, 13, ConvertReduceAxesAttr);
REGISTER_ONNX_CONVERTER("", "ReduceMean", 18, 18, EmitGeneric);
// ReduceMax: 20 added bool.
REGISTER_ONNX_CONVERTER("", "ReduceMax", 18, 20, EmitGeneric);
// ReduceMin: 20 added bool.
REGISTER_ONNX_CONVERTER("", "ReduceMin", 18, 20, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceProd", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceL1", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceL2", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceLogSum", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceLogSumExp", 18, 18, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ReduceSumSquare", 18, 18, EmitGeneric);
// ArgMax/ArgMin: 11 allowed negative axes, 12 added select_last_index, 13 bfloat16.
REGISTER_ONNX_CONVERTER("", "ArgMax", 1, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "ArgMin", 1, 13, EmitGeneric);

// Softmax family: 13 changed "flatten to 2-D at axis (default 1)" to "along axis (default -1)".
REGISTER_ONNX_CONVERTER("", "Softmax", 1, 12, ConvertCoercedSoftmax);
REGISTER_ONNX_CONVERTER("", "Softmax", 13, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "LogSoftmax", 1, 12, ConvertCoercedSoftmax);
REGISTER_ONNX_CONVERTER("", "LogSoftmax", 13, 13, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "Hardmax", 1, 12, ConvertCoercedSoftmax);
REGISTER_ONNX_CONVERTER("", "Hardmax", 13, 13, EmitGeneric);

// CumSum-14 added half and bfloat16.
REGISTER_ONNX_CONVERTER("", "CumSum", 11, 14, EmitGeneric);
// TopK-10 took K as an input; 11 added largest and sorted, and negative axes.
REGISTER_ONNX_CONVERTER("", "TopK", 1, 9, ConvertTopK1);
REGISTER_ONNX_CONVERTER("", "TopK", 10, 11, EmitGeneric);

}  // namespace sluice
