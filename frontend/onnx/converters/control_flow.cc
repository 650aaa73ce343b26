// If, Loop and Scan: subgraphs become functions of the GraphDef's library, and the nodes
// become the functional ops If, Loop and Scan (ops/function_ops.cc). Values a subgraph reads
// from enclosing graphs become extra inputs of the node and extra arguments of the function.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"
#include "frontend/onnx/importer.h"

namespace sluice {
namespace {

AttrValue Func(const std::string& name) {
  AttrValue v;
  v.mutable_func()->set_name(name);
  return v;
}

AttrValue Types(const DataTypeVector& types) {
  AttrValue v;
  SetAttrValue(absl::Span<const DataType>(types.data(), types.size()), &v);
  return v;
}

absl::StatusOr<const onnx::GraphProto*> GraphAttr(OnnxNodeContext* ctx, const char* name) {
  const onnx::AttributeProto* a = ctx->attr(name);
  if (a == nullptr || a->type() != onnx::AttributeProto::GRAPH) {
    return ctx->Error(absl::StrCat("missing graph attribute '", name, "'"));
  }
  return &a->g();
}

// Records the ONNX types of the node's sequence and optional outputs, output i being the
// body's result `first + i`.
void SetValueTypes(OnnxNodeContext* ctx, const OnnxImporter::Subgraph& fn, size_t first) {
  for (size_t i = 0; i + first < fn.output_value_types.size(); ++i) {
    const onnx::TypeProto& type = fn.output_value_types[i + first];
    if (type.value_case() != onnx::TypeProto::VALUE_NOT_SET) ctx->SetOutputValueType(static_cast<int>(i), type);
  }
}

absl::Status ConvertIf(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(const onnx::GraphProto* then_graph, GraphAttr(ctx, "then_branch"));
  SL_ASSIGN_OR_RETURN(const onnx::GraphProto* else_graph, GraphAttr(ctx, "else_branch"));
  OnnxImporter* imp = ctx->importer();
  SL_ASSIGN_OR_RETURN(auto then_fn, imp->ImportSubgraph(*then_graph, ctx->base_name() + "_then", {}));
  // The else branch takes the then branch's captures first (and ignores them).
  SL_ASSIGN_OR_RETURN(auto else_fn, imp->ImportSubgraph(*else_graph, ctx->base_name() + "_else", {},
                                                        then_fn.captured_types));
  if (then_fn.output_types != else_fn.output_types) {
    return ctx->Error("the branches return different types");
  }
  std::vector<std::string> inputs = then_fn.captured;
  inputs.insert(inputs.end(), else_fn.captured.begin(), else_fn.captured.end());
  AttrMap attrs;
  attrs["then_branch"] = Func(then_fn.function);
  attrs["else_branch"] = Func(else_fn.function);
  attrs["Tout"] = Types(then_fn.output_types);
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("If", {{ctx->input(0)}, inputs}, attrs));
  SL_RETURN_IF_ERROR(ctx->SetOutputs(out));
  SetValueTypes(ctx, then_fn, 0);
  return absl::OkStatus();
}

absl::Status ConvertLoop(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(ctx, "body"));
  DataTypeVector formal = {DT_INT64, DT_BOOL};
  std::vector<std::string> vars;
  for (int i = 2; i < ctx->num_inputs(); ++i) {
    if (!ctx->has_input(i)) return ctx->Error(absl::StrCat("loop-carried input ", i, " is missing"));
    vars.push_back(ctx->input(i));
    formal.push_back(ctx->input_dtype(i));
  }
  SL_ASSIGN_OR_RETURN(auto fn, ctx->importer()->ImportSubgraph(*body, ctx->base_name() + "_body", formal));
  if (fn.output_types.size() < 1 + vars.size()) {
    return ctx->Error("the body returns fewer values than cond plus the loop-carried ones");
  }
  DataTypeVector tout(fn.output_types.begin() + 1, fn.output_types.end());
  for (size_t i = 1 + vars.size(); i < fn.output_types.size(); ++i) {
    if (fn.output_types[i] == DT_VARIANT) return ctx->Unimplemented("scan outputs that are sequences or optionals");
  }
  AttrMap attrs;
  attrs["body"] = Func(fn.function);
  attrs["Tout"] = Types(tout);
  std::vector<std::string> m, cond;
  if (ctx->has_input(0)) m.push_back(ctx->input(0));
  if (ctx->has_input(1)) cond.push_back(ctx->input(1));
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Loop", {m, cond, vars, fn.captured}, attrs));
  SL_RETURN_IF_ERROR(ctx->SetOutputs(out));
  SetValueTypes(ctx, fn, 1);
  return absl::OkStatus();
}

absl::Status ConvertScan9(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(ctx, "body"));
  SL_ASSIGN_OR_RETURN(int64_t num_scan, ctx->GetInt("num_scan_inputs"));
  const int n = ctx->num_inputs();
  if (num_scan < 0 || num_scan > n) return ctx->Error("num_scan_inputs is out of range");
  std::vector<std::string> inputs;
  DataTypeVector formal;
  for (int i = 0; i < n; ++i) {
    inputs.push_back(ctx->input(i));
    formal.push_back(ctx->input_dtype(i));
  }
  SL_ASSIGN_OR_RETURN(auto fn, ctx->importer()->ImportSubgraph(*body, ctx->base_name() + "_body", formal));
  AttrMap attrs;
  attrs["body"] = Func(fn.function);
  attrs["Tout"] = Types(fn.output_types);
  attrs["num_scan_inputs"].set_i(num_scan);
  for (const char* list : {"scan_input_axes", "scan_input_directions", "scan_output_axes", "scan_output_directions"}) {
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx->GetInts(list, std::vector<int64_t>{}));
    SetAttrValue(absl::Span<const int64_t>(v), &attrs[list]);
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Scan", {inputs, fn.captured}, attrs));
  return ctx->SetOutputs(out);
}

// Scan-8: sequence_lens first, then batch-major states and scan inputs; `directions` for the
// scan inputs.
absl::Status ConvertScan8(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(ctx, "body"));
  SL_ASSIGN_OR_RETURN(int64_t num_scan, ctx->GetInt("num_scan_inputs"));
  if (ctx->has_input(0)) {
    const Tensor* lens = ctx->constant_input(0);
    if (lens == nullptr) return ctx->Unimplemented("Scan-8 with sequence_lens that are not constant");
    for (int64_t i = 0; i < lens->NumElements(); ++i) {
      if (lens->flat<int32_t>()[i] != lens->flat<int32_t>()[0]) {
        return ctx->Unimplemented("Scan-8 with sequences of different lengths");
      }
    }
  }
  std::vector<std::string> inputs;
  DataTypeVector formal;
  for (int i = 1; i < ctx->num_inputs(); ++i) {
    inputs.push_back(ctx->input(i));
    formal.push_back(ctx->input_dtype(i));
  }
  SL_ASSIGN_OR_RETURN(auto fn, ctx->importer()->ImportSubgraph(*body, ctx->base_name() + "_body", formal));
  AttrMap attrs;
  attrs["body"] = Func(fn.function);
  attrs["Tout"] = Types(fn.output_types);
  attrs["num_scan_inputs"].set_i(num_scan);
  attrs["batch_major"].set_b(true);
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> dirs, ctx->GetInts("directions", std::vector<int64_t>{}));
  SetAttrValue(absl::Span<const int64_t>(dirs), &attrs["scan_input_directions"]);
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("Scan", {inputs, fn.captured}, attrs));
  return ctx->SetOutputs(out);
}

// If-11 allowed outputs of different shapes; 13 sequences; 16 optionals (types only: both are
// variant tensors to If).
// If: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "If", 1, 21, ConvertIf);
// Loop-11 made M and cond truly optional; 13 sequences; 16 optionals.
// Loop: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Loop", 1, 21, ConvertLoop);
// Scan-9 dropped the batch axis and sequence_lens and added axes and directions.
REGISTER_ONNX_CONVERTER("", "Scan", 8, 8, ConvertScan8);
// Scan: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Scan", 9, 21, ConvertScan9);

}  // namespace
}  // namespace sluice
