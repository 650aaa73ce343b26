// Converters of ONNX's ai.onnx.ml domain (ops/onnx_ml_ops.cc): ArrayFeatureExtractor,
// Binarizer, LabelEncoder and TreeEnsemble.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

constexpr char kMl[] = "ai.onnx.ml";

Tensor StringVector(const std::vector<std::string>& v) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  auto f = t.flat<tstring>();
  for (size_t i = 0; i < v.size(); ++i) f[i] = v[i];
  return t;
}

Tensor FloatVector(const std::vector<float>& v) {
  return Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

// A tensor attr, or the first present of its list spellings (`<base>_floats`, `_int64s`,
// `_strings`), as a 1-D tensor; nullopt when none is present.
absl::StatusOr<std::optional<Tensor>> ListOrTensor(OnnxNodeContext* ctx, const std::string& base) {
  if (ctx->attr(base + "_tensor") != nullptr) {
    SL_ASSIGN_OR_RETURN(Tensor t, ctx->GetTensor(base + "_tensor"));
    return std::optional<Tensor>(t);
  }
  if (ctx->attr(base + "_strings") != nullptr) {
    std::vector<std::string> v;
    for (const std::string& s : ctx->attr(base + "_strings")->strings()) v.push_back(s);
    return std::optional<Tensor>(StringVector(v));
  }
  if (ctx->attr(base + "_int64s") != nullptr) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts(base + "_int64s"));
    return std::optional<Tensor>(Int64Vector(v));
  }
  if (ctx->attr(base + "_floats") != nullptr) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetFloats(base + "_floats"));
    return std::optional<Tensor>(FloatVector(v));
  }
  return std::optional<Tensor>();
}

absl::Status EmitLabelEncoder(OnnxNodeContext* ctx, const Tensor& keys, const Tensor& values, const Tensor& fallback) {
  AttrMap attrs;
  attrs["keys"] = MakeAttr(keys);
  attrs["values"] = MakeAttr(values);
  attrs["default_value"] = MakeAttr(fallback);
  SetAttrValue(values.dtype(), &attrs["TV"]);  // An output type: AddNode infers only the inputs'.
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("LabelEncoder", {{ctx->input(0)}}, attrs));
  return ctx->SetOutputs(out);
}

// LabelEncoder-2 mapped keys_* to values_* (floats, int64s or strings), with default_float,
// default_int64 and default_string; 4 added keys_tensor, values_tensor and default_tensor
// (and so any of string, int64, int32, int16, float, double).
absl::Status ConvertLabelEncoder2(OnnxNodeContext* ctx) {
  SL_ASSIGN_OR_RETURN(std::optional<Tensor> keys, ListOrTensor(ctx, "keys"));
  SL_ASSIGN_OR_RETURN(std::optional<Tensor> values, ListOrTensor(ctx, "values"));
  if (!keys || !values) return ctx->Error("needs one keys_* and one values_* attribute");
  if (keys->dims() != 1 || values->dims() != 1) return ctx->Error("keys and values must be 1-D");
  Tensor fallback;
  if (ctx->attr("default_tensor") != nullptr) {
    SL_ASSIGN_OR_RETURN(fallback, ctx->GetTensor("default_tensor"));
    if (fallback.NumElements() != 1) return ctx->Error("default_tensor must have one element");
    SL_ASSIGN_OR_RETURN(fallback, fallback.Reshaped(TensorShape({1})));
  } else {
    switch (values->dtype()) {
      case DT_STRING: {
        SL_ASSIGN_OR_RETURN(std::string s, ctx->GetString("default_string", std::string("_Unused")));
        fallback = StringVector({s});
        break;
      }
      case DT_INT64: {
        SL_ASSIGN_OR_RETURN(int64_t i, ctx->GetInt("default_int64", -1));
        fallback = Int64Vector({i});
        break;
      }
      case DT_FLOAT: {
        SL_ASSIGN_OR_RETURN(float f, ctx->GetFloat("default_float", -0.0f));
        fallback = FloatVector({f});
        break;
      }
      default: {
        // values_tensor without default_tensor: ONNX's default is a zero of the values' type.
        fallback = Tensor(values->dtype(), TensorShape({1}));
        if (values->dtype() != DT_STRING) std::memset(fallback.raw_data(), 0, DataTypeSize(values->dtype()));
        break;
      }
    }
  }
  if (fallback.dtype() != values->dtype()) {
    return ctx->Error(absl::StrCat("the default is ", DataTypeString(fallback.dtype()), " but the values are ",
                                   DataTypeString(values->dtype())));
  }
  if (keys->dtype() != ctx->input_dtype(0)) {
    return ctx->Error(absl::StrCat("the keys are ", DataTypeString(keys->dtype()), " but input '", ctx->node().input(0),
                                   "' is ", DataTypeString(ctx->input_dtype(0))));
  }
  return EmitLabelEncoder(ctx, *keys, *values, fallback);
}

// LabelEncoder-1 mapped between strings and their positions in classes_strings: a string
// input gives int64 positions (default_int64 when absent), an int64 input the strings
// (default_string when out of range).
absl::Status ConvertLabelEncoder1(OnnxNodeContext* ctx) {
  std::vector<std::string> classes;
  if (const onnx::AttributeProto* a = ctx->attr("classes_strings")) {
    for (const std::string& s : a->strings()) classes.push_back(s);
  }
  std::vector<int64_t> positions(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) positions[i] = static_cast<int64_t>(i);
  if (ctx->input_dtype(0) == DT_STRING) {
    SL_ASSIGN_OR_RETURN(int64_t d, ctx->GetInt("default_int64", -1));
    return EmitLabelEncoder(ctx, StringVector(classes), Int64Vector(positions), Int64Vector({d}));
  }
  SL_ASSIGN_OR_RETURN(std::string d, ctx->GetString("default_string", std::string("_Unused")));
  return EmitLabelEncoder(ctx, Int64Vector(positions), StringVector(classes), StringVector({d}));
}

// The tensor attribute `name` as a 1-D tensor of `dt` (an absent one as empty).
absl::StatusOr<Tensor> TreeTensor(OnnxNodeContext* ctx, const std::string& name, DataType dt, bool required) {
  if (ctx->attr(name) == nullptr) {
    if (required) return ctx->Error(absl::StrCat("needs attribute ", name));
    return Tensor(dt, TensorShape({0}));
  }
  SL_ASSIGN_OR_RETURN(Tensor t, ctx->GetTensor(name));
  if (t.dtype() != dt) {
    return ctx->Error(absl::StrCat("attribute ", name, " is ", DataTypeString(t.dtype()), "; it must be ",
                                   DataTypeString(dt), " like input '", ctx->node().input(0), "'"));
  }
  return t.Reshaped(TensorShape({t.NumElements()}));
}

// TreeEnsemble-5 (ai.onnx.ml 5) is the first version. nodes_modes is a uint8 tensor; the
// split, weight and membership tensors have the input's type.
absl::Status ConvertTreeEnsemble5(OnnxNodeContext* ctx) {
  const DataType dt = ctx->input_dtype(0);
  if (dt != DT_FLOAT && dt != DT_DOUBLE) {
    return ctx->Unimplemented(absl::StrCat("input of type ", DataTypeString(dt), " (float and double only)"));
  }
  AttrMap attrs;
  for (const char* name : {"leaf_weights", "nodes_splits", "membership_values"}) {
    SL_ASSIGN_OR_RETURN(Tensor t, TreeTensor(ctx, name, dt, std::string(name) != "membership_values"));
    attrs[name] = MakeAttr(t);
  }
  SL_ASSIGN_OR_RETURN(Tensor modes, ctx->GetTensor("nodes_modes"));
  std::vector<int64_t> mode_list;
  if (modes.dtype() != DT_UINT8) return ctx->Error("attribute nodes_modes must be a uint8 tensor");
  for (int64_t i = 0; i < modes.NumElements(); ++i) mode_list.push_back(modes.flat<uint8_t>()[i]);
  attrs["nodes_modes"] = MakeAttr(mode_list);
  for (const char* name : {"leaf_targetids", "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids",
                           "nodes_trueleafs", "nodes_truenodeids", "tree_roots"}) {
    SL_ASSIGN_OR_RETURN(auto v, ctx->GetInts(name));
    attrs[name] = MakeAttr(v);
  }
  SL_ASSIGN_OR_RETURN(auto missing, ctx->GetInts("nodes_missing_value_tracks_true", std::vector<int64_t>{}));
  attrs["nodes_missing_value_tracks_true"] = MakeAttr(missing);
  for (const char* name : {"aggregate_function", "post_transform", "n_targets"}) {
    if (ctx->attr(name) == nullptr) continue;  // The op's defaults are ONNX's; n_targets is required there.
    SL_ASSIGN_OR_RETURN(int64_t v, ctx->GetInt(name));
    SetAttrValue(v, &attrs[name]);
  }
  SL_ASSIGN_OR_RETURN(auto out, ctx->AddNode("TreeEnsemble", {{ctx->input(0)}}, attrs));
  return ctx->SetOutputs(out);
}

// ArrayFeatureExtractor-1 and Binarizer-1 are the only versions.
REGISTER_ONNX_CONVERTER(kMl, "ArrayFeatureExtractor", 1, 1, EmitGeneric);
REGISTER_ONNX_CONVERTER(kMl, "Binarizer", 1, 1, EmitGeneric);
REGISTER_ONNX_CONVERTER(kMl, "LabelEncoder", 1, 1, ConvertLabelEncoder1);
REGISTER_ONNX_CONVERTER(kMl, "LabelEncoder", 2, 4, ConvertLabelEncoder2);
REGISTER_ONNX_CONVERTER(kMl, "TreeEnsemble", 5, 5, ConvertTreeEnsemble5);

}  // namespace
}  // namespace sluice
