// Constant: the node's value becomes a Sluice Const.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"

namespace sluice {
namespace {

absl::Status ConvertConstant(OnnxNodeContext* ctx) {
  Tensor value;
  if (ctx->attr("value") != nullptr) {
    SL_ASSIGN_OR_RETURN(value, ctx->GetTensor("value"));
  } else if (ctx->attr("value_float") != nullptr) {
    SL_ASSIGN_OR_RETURN(float f, ctx->GetFloat("value_float"));
    value = Tensor::Scalar<float>(f);
  } else if (ctx->attr("value_int") != nullptr) {
    SL_ASSIGN_OR_RETURN(int64_t i, ctx->GetInt("value_int"));
    value = Tensor::Scalar<int64_t>(i);
  } else if (ctx->attr("value_floats") != nullptr) {
    SL_ASSIGN_OR_RETURN(std::vector<float> v, ctx->GetFloats("value_floats"));
    value = Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size())}));
  } else if (ctx->attr("value_ints") != nullptr) {
    SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx->GetInts("value_ints"));
    value = Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
  } else if (ctx->attr("value_string") != nullptr) {
    SL_ASSIGN_OR_RETURN(std::string s, ctx->GetString("value_string"));
    value = Tensor::Scalar<tstring>(s);
  } else if (const auto* a = ctx->attr("value_strings")) {
    value = Tensor(DT_STRING, TensorShape({a->strings_size()}));
    for (int i = 0; i < a->strings_size(); ++i) value.flat<tstring>()[i] = a->strings(i);
  } else if (ctx->attr("sparse_value") != nullptr) {
    return ctx->Unimplemented("sparse constants are not supported");
  } else {
    return ctx->Error("Constant has no value attribute");
  }
  return ctx->SetOutput(0, ctx->AddConst(value, "value"));
}

// 1: value; 9: more types; 11: sparse_value; 12: value_float(s)/int(s)/string(s); 13: bfloat16.
// Constant: 19 added the float8 types, 21 the 4-bit integers.
REGISTER_ONNX_CONVERTER("", "Constant", 1, 21, ConvertConstant);

}  // namespace
}  // namespace sluice
