// ONNX sequences and optionals: sequence values are scalar `variant` tensors holding a
// TensorSequence, optionals ones holding a TensorOptional (framework/tensor_sequence.h); the
// ops keep the ONNX names (ops/onnx_sequence_ops.cc). Each output's ONNX type is recorded so
// that the nodes reading an element (SequenceAt, ConcatFromSequence, OptionalGetElement) know
// its dtype. SequenceMap has no converter: it expands into its ONNX function body (a Loop).
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/onnx_tensor.h"

namespace sluice {
namespace {

AttrMap TypeAttr(const char* name, DataType dt) {
  AttrMap attrs;
  attrs[name].set_type(dt);
  return attrs;
}

// The ONNX type of a tensor (rank and dims left unknown) or of a sequence or optional value
// (the one recorded for it).
absl::StatusOr<onnx::TypeProto> ValueType(OnnxNodeContext* ctx, int input) {
  onnx::TypeProto type;
  if (ctx->input_dtype(input) == DT_VARIANT) {
    const onnx::TypeProto* known = ctx->input_value_type(input);
    if (known == nullptr) {
      return ctx->Error(absl::StrCat("the type of input ", input, " ('", ctx->node().input(input), "') is unknown"));
    }
    return *known;
  }
  SL_ASSIGN_OR_RETURN(int elem, DataTypeToOnnx(ctx->input_dtype(input)));
  type.mutable_tensor_type()->set_elem_type(elem);
  return type;
}

absl::StatusOr<onnx::TypeProto> SequenceOf(OnnxNodeContext* ctx, int input) {
  onnx::TypeProto type;
  SL_ASSIGN_OR_RETURN(*type.mutable_sequence_type()->mutable_elem_type(), ValueType(ctx, input));
  return type;
}

// The dtype of a value of ONNX type `type` (DT_VARIANT for sequences and optionals).
absl::StatusOr<DataType> DtypeOfType(OnnxNodeContext* ctx, const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return DataTypeFromOnnx(type.tensor_type().elem_type());
  if (type.has_sequence_type() || type.has_optional_type()) return DT_VARIANT;
  return ctx->Unimplemented("values that are maps or sparse tensors are not supported");
}

// The element type of sequence input `input`.
absl::StatusOr<onnx::TypeProto> ElementType(OnnxNodeContext* ctx, int input) {
  const onnx::TypeProto* seq = ctx->input_value_type(input);
  if (seq == nullptr || !seq->has_sequence_type() || !seq->sequence_type().has_elem_type()) {
    return ctx->Error(absl::StrCat("input ", input, " ('", ctx->node().input(input),
                                   "') must be a sequence of known element type"));
  }
  return seq->sequence_type().elem_type();
}

// Binds output 0 to the node's output tensor, with its ONNX type when it is a variant.
absl::Status SetValueOutput(OnnxNodeContext* ctx, const std::vector<std::string>& out,
                            const onnx::TypeProto& type) {
  SL_RETURN_IF_ERROR(ctx->SetOutputs(out));
  if (!type.has_tensor_type()) ctx->SetOutputValueType(0, type);
  return absl::OkStatus();
}

absl::Status ConvertSequenceConstruct(OnnxNodeContext* ctx) {
  std::vector<std::string> inputs;
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    if (ctx->input_dtype(i) != ctx->input_dtype(0)) {
      return ctx->Error(absl::StrCat("input ", i, " is ", DataTypeString(ctx->input_dtype(i)), ", input 0 ",
                                     DataTypeString(ctx->input_dtype(0))));
    }
    inputs.push_back(ctx->input(i));
  }
  SL_ASSIGN_OR_RETURN(onnx::TypeProto type, SequenceOf(ctx, 0));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("SequenceConstruct", {inputs}, {}));
  return SetValueOutput(ctx, out, type);
}

absl::Status ConvertSequenceEmpty(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(int64_t onnx_dtype, ctx->GetInt("dtype", onnx::TensorProto::FLOAT));
  SL_ASSIGN_OR_RETURN(DataType dt, DataTypeFromOnnx(static_cast<int>(onnx_dtype)));
  onnx::TypeProto type;
  type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(onnx_dtype));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("SequenceEmpty", {}, TypeAttr("dtype", dt)));
  return SetValueOutput(ctx, out, type);
}

absl::Status ConvertSequenceInsert(OnnxNodeContext* ctx) {
  std::vector<std::string> position;
  if (ctx->has_input(2)) position.push_back(ctx->input(2));
  SL_ASSIGN_OR_RETURN(onnx::TypeProto type, ValueType(ctx, 0));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("SequenceInsert", {{ctx->input(0)}, {ctx->input(1)}, position}, {}));
  return SetValueOutput(ctx, out, type);
}

absl::Status ConvertSequenceAt(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(onnx::TypeProto elem, ElementType(ctx, 0));
  SL_ASSIGN_OR_RETURN(DataType dt, DtypeOfType(ctx, elem));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("SequenceAt", {{ctx->input(0)}, {ctx->input(1)}}, TypeAttr("T", dt)));
  return SetValueOutput(ctx, out, elem);
}

absl::Status ConvertSequenceErase(OnnxNodeContext* ctx) {
  std::vector<std::string> position;
  if (ctx->has_input(1)) position.push_back(ctx->input(1));
  SL_ASSIGN_OR_RETURN(onnx::TypeProto type, ValueType(ctx, 0));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("SequenceErase", {{ctx->input(0)}, position}, {}));
  return SetValueOutput(ctx, out, type);
}

absl::Status ConvertSplitToSequence(OnnxNodeContext* ctx) {
  std::vector<std::string> split;
  if (ctx->has_input(1)) split.push_back(ctx->input(1));
  SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis", 0));
  SL_ASSIGN_OR_RETURN(int64_t keepdims, ctx->GetInt("keepdims", 1));
  AttrMap attrs;
  attrs["axis"].set_i(axis);
  attrs["keepdims"].set_i(keepdims);
  SL_ASSIGN_OR_RETURN(onnx::TypeProto type, SequenceOf(ctx, 0));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("SplitToSequence", {{ctx->input(0)}, split}, attrs));
  return SetValueOutput(ctx, out, type);
}

absl::Status ConvertConcatFromSequence(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(onnx::TypeProto elem, ElementType(ctx, 0));
  if (!elem.has_tensor_type()) return ctx->Unimplemented("concatenating a sequence of sequences");
  SL_ASSIGN_OR_RETURN(DataType dt, DtypeOfType(ctx, elem));
  SL_ASSIGN_OR_RETURN(int64_t axis, ctx->GetInt("axis"));
  SL_ASSIGN_OR_RETURN(int64_t new_axis, ctx->GetInt("new_axis", 0));
  AttrMap attrs = TypeAttr("T", dt);
  attrs["axis"].set_i(axis);
  attrs["new_axis"].set_i(new_axis);
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("ConcatFromSequence", {{ctx->input(0)}}, attrs));
  return ctx->SetOutputs(out);
}

absl::Status ConvertOptional(OnnxNodeContext* ctx) {
  onnx::TypeProto type;
  std::vector<std::string> input;
  if (ctx->has_input(0)) {
    SL_ASSIGN_OR_RETURN(*type.mutable_optional_type()->mutable_elem_type(), ValueType(ctx, 0));
    input.push_back(ctx->input(0));
  } else {
    const onnx::AttributeProto* a = ctx->attr("type");
    if (a == nullptr || a->type() != onnx::AttributeProto::TYPE_PROTO) {
      return ctx->Error("an Optional without input needs the attribute 'type'");
    }
    *type.mutable_optional_type()->mutable_elem_type() = a->tp();
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Optional", {input}, {}));
  return SetValueOutput(ctx, out, type);
}

absl::Status ConvertOptionalGetElement(OnnxNodeContext* ctx) {
  const onnx::TypeProto* opt = ctx->input_value_type(0);
  if (opt == nullptr || !opt->has_optional_type()) {
    return ctx->Error(absl::StrCat("input 0 ('", ctx->node().input(0), "') must be an optional of known type"));
  }
  const onnx::TypeProto elem = opt->optional_type().elem_type();
  SL_ASSIGN_OR_RETURN(DataType dt, DtypeOfType(ctx, elem));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("OptionalGetElement", {{ctx->input(0)}}, TypeAttr("T", dt)));
  return SetValueOutput(ctx, out, elem);
}

// OptionalHasElement-18 also takes a tensor or sequence (which has an element) or no input
// (which has none); only an optional needs a look at run time.
absl::Status ConvertOptionalHasElement18(OnnxNodeContext* ctx) {
  const onnx::TypeProto* type = ctx->has_input(0) ? ctx->input_value_type(0) : nullptr;
  if (type != nullptr && type->has_optional_type()) return ctx->EmitGeneric();
  if (ctx->has_input(0) && type == nullptr && ctx->input_dtype(0) == DT_VARIANT) {
    return ctx->Error(absl::StrCat("input 0 ('", ctx->node().input(0), "') is of unknown type"));
  }
  return ctx->SetOutput(0, ctx->AddConst(Tensor::Scalar<bool>(ctx->has_input(0)), "has_element"));
}

// OptionalGetElement-18 passes a tensor or sequence through.
absl::Status ConvertOptionalGetElement18(OnnxNodeContext* ctx) {
  const onnx::TypeProto* type = ctx->input_value_type(0);
  if (type != nullptr && type->has_optional_type()) return ConvertOptionalGetElement(ctx);
  if (type == nullptr && ctx->input_dtype(0) == DT_VARIANT) {
    return ctx->Error(absl::StrCat("input 0 ('", ctx->node().input(0), "') is of unknown type"));
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Identity", {{ctx->input(0)}}, {}));
  SL_RETURN_IF_ERROR(ctx->SetOutputs(out));
  if (type != nullptr) ctx->SetOutputValueType(0, *type);
  return absl::OkStatus();
}

// Sequence ops came in opset 11 and have not changed since (SequenceMap, 17, is a function).
REGISTER_ONNX_CONVERTER("", "SequenceConstruct", 11, 17, ConvertSequenceConstruct);
REGISTER_ONNX_CONVERTER("", "SequenceEmpty", 11, 17, ConvertSequenceEmpty);
REGISTER_ONNX_CONVERTER("", "SequenceInsert", 11, 17, ConvertSequenceInsert);
REGISTER_ONNX_CONVERTER("", "SequenceAt", 11, 17, ConvertSequenceAt);
REGISTER_ONNX_CONVERTER("", "SequenceErase", 11, 17, ConvertSequenceErase);
REGISTER_ONNX_CONVERTER("", "SequenceLength", 11, 17, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "SplitToSequence", 11, 17, ConvertSplitToSequence);
REGISTER_ONNX_CONVERTER("", "ConcatFromSequence", 11, 17, ConvertConcatFromSequence);
// Optionals came in opset 15; 18 let OptionalHasElement and OptionalGetElement take plain
// tensors and sequences (and OptionalHasElement no input).
REGISTER_ONNX_CONVERTER("", "Optional", 15, 17, ConvertOptional);
REGISTER_ONNX_CONVERTER("", "OptionalHasElement", 15, 17, EmitGeneric);
REGISTER_ONNX_CONVERTER("", "OptionalGetElement", 15, 17, ConvertOptionalGetElement);
REGISTER_ONNX_CONVERTER("", "OptionalHasElement", 18, 18, ConvertOptionalHasElement18);
REGISTER_ONNX_CONVERTER("", "OptionalGetElement", 18, 18, ConvertOptionalGetElement18);

}  // namespace
}  // namespace sluice
