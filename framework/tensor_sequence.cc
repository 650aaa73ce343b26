#include "framework/tensor_sequence.h"

#include "absl/strings/str_cat.h"
#include "framework/status.h"

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

void VariantToProto(const Tensor& t, TensorProto* proto) {
  for (const Variant& v : t.flat<Variant>()) {
    VariantTensorDataProto* out = proto->add_variant_val();
    if (const auto* seq = dynamic_cast<const TensorSequence*>(v.get())) {
      out->set_type_name(kSequenceTypeName);
      out->set_metadata(DataTypeString(seq->element_dtype()));
      for (const Tensor& e : seq->elements()) e.AsProtoTensorContent(out->add_tensors());
    } else if (const auto* opt = dynamic_cast<const TensorOptional*>(v.get())) {
      out->set_type_name(kOptionalTypeName);
      if (opt->has_value()) opt->value().AsProtoTensorContent(out->add_tensors());
    }
  }
}

absl::StatusOr<Tensor> VariantFromProto(const TensorProto& proto, const TensorShape& shape) {
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DT_VARIANT, shape));
  if (proto.variant_val_size() != t.NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat("TensorProto of variant ", shape.DebugString(),
                                                   " has ", proto.variant_val_size(), " values for ",
                                                   t.NumElements(), " elements"));
  }
  auto out = t.flat<Variant>();
  for (int i = 0; i < proto.variant_val_size(); ++i) {
    const VariantTensorDataProto& v = proto.variant_val(i);
    std::vector<Tensor> tensors;
    for (const TensorProto& e : v.tensors()) {
      auto element = Tensor::FromProto(e);
      SL_RETURN_IF_ERROR(element.status(), "variant value ", i);
      tensors.push_back(*std::move(element));
    }
    if (v.type_name() == kSequenceTypeName) {
      auto dt = DataTypeFromString(v.metadata());
      SL_RETURN_IF_ERROR(dt.status(), "sequence ", i, "'s element type");
      for (const Tensor& e : tensors) {
        if (e.dtype() != *dt) {
          return absl::InvalidArgumentError(absl::StrCat("sequence ", i, " of ", DataTypeString(*dt),
                                                         " holds a ", DataTypeString(e.dtype()), " tensor"));
        }
      }
      out[i] = std::make_shared<const TensorSequence>(*dt, std::move(tensors));
    } else if (v.type_name() == kOptionalTypeName) {
      if (tensors.size() > 1) {
        return absl::InvalidArgumentError(absl::StrCat("optional ", i, " holds ", tensors.size(), " tensors"));
      }
      out[i] = std::make_shared<const TensorOptional>(
          tensors.empty() ? std::nullopt : std::optional<Tensor>(std::move(tensors[0])));
    } else if (!v.type_name().empty()) {
      return absl::UnimplementedError(absl::StrCat("variant value ", i, " is a '", v.type_name(),
                                                   "', which Sluice does not know"));
    }
  }
  return t;
}

}  // namespace sluice
