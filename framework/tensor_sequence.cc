#include "framework/tensor_sequence.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// The one element of a scalar DT_VARIANT tensor, or null with the reason in *error.
const VariantValue* VariantScalar(const Tensor& t, absl::string_view what, absl::Status* error) {
  if (t.dtype() != DT_VARIANT || t.NumElements() != 1) {
    *error = absl::InvalidArgumentError(absl::StrCat(
        what, " must be a sequence or optional value, got a ", DataTypeString(t.dtype()), " tensor of shape ",
        t.shape().DebugString()));
    return nullptr;
  }
  const Variant& v = t.flat<Variant>()[0];
  if (v == nullptr) *error = absl::InvalidArgumentError(absl::StrCat(what, " holds no value"));
  return v.get();
}

}  // namespace

std::string TensorSequence::DebugString() const {
  std::string out = absl::StrCat("sequence<", DataTypeString(element_dtype_), ">[");
  for (size_t i = 0; i < elements_.size() && i < 4; ++i) {
    absl::StrAppend(&out, i ? ", " : "", elements_[i].DebugString(4));
  }
  if (elements_.size() > 4) absl::StrAppend(&out, ", ... (", elements_.size(), " in all)");
  return out + "]";
}

std::string TensorOptional::DebugString() const {
  return value_.has_value() ? absl::StrCat("optional(", value_->DebugString(4), ")") : "optional(none)";
}

Tensor MakeSequence(DataType element_dtype, std::vector<Tensor> elements) {
  Tensor t(DT_VARIANT, TensorShape());
  t.flat<Variant>()[0] = std::make_shared<const TensorSequence>(element_dtype, std::move(elements));
  return t;
}

Tensor MakeOptional(std::optional<Tensor> value) {
  Tensor t(DT_VARIANT, TensorShape());
  t.flat<Variant>()[0] = std::make_shared<const TensorOptional>(std::move(value));
  return t;
}

absl::StatusOr<const TensorSequence*> GetSequence(const Tensor& t, absl::string_view what) {
  absl::Status error;
  const VariantValue* v = VariantScalar(t, what, &error);
  if (v == nullptr) return error;
  const auto* seq = dynamic_cast<const TensorSequence*>(v);
  if (seq == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a sequence, got ", v->DebugString()));
  }
  return seq;
}

absl::StatusOr<const TensorOptional*> GetOptional(const Tensor& t, absl::string_view what) {
  absl::Status error;
  const VariantValue* v = VariantScalar(t, what, &error);
  if (v == nullptr) return error;
  const auto* opt = dynamic_cast<const TensorOptional*>(v);
  if (opt == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an optional, got ", v->DebugString()));
  }
  return opt;
}

}  // namespace sluice
