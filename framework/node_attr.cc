#include "framework/node_attr.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/status.h"

namespace sluice {

const AttrValue* AttrSlice::Find(absl::string_view name) const {
  auto it = attrs_->find(std::string(name));
  return it == attrs_->end() ? nullptr : &it->second;
}

std::string AttrValueTypeName(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    case AttrValue::kList: {
      const auto& l = v.list();
      if (l.s_size()) return "list(string)";
      if (l.i_size()) return "list(int)";
      if (l.f_size()) return "list(float)";
      if (l.b_size()) return "list(bool)";
      if (l.type_size()) return "list(type)";
      if (l.shape_size()) return "list(shape)";
      if (l.tensor_size()) return "list(tensor)";
      if (l.func_size()) return "list(func)";
      return "list(?)";  // An empty list matches any list type.
    }
    case AttrValue::VALUE_NOT_SET: return "<unset>";
  }
  return "<unknown>";
}

std::string SummarizeAttrValue(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return absl::StrCat("\"", v.s(), "\"");
    case AttrValue::kI: return absl::StrCat(v.i());
    case AttrValue::kF: return absl::StrCat(v.f());
    case AttrValue::kB: return v.b() ? "true" : "false";
    case AttrValue::kType: return DataType_Name(v.type());
    case AttrValue::kShape: return PartialShape::FromProto(v.shape()).DebugString();
    case AttrValue::kTensor: return "<tensor>";
    case AttrValue::kFunc: return v.func().name();
    case AttrValue::kPlaceholder: return absl::StrCat("$", v.placeholder());
    case AttrValue::kList: {
      const auto& l = v.list();
      std::vector<std::string> parts;
      for (const auto& s : l.s()) parts.push_back(absl::StrCat("\"", s, "\""));
      for (auto i : l.i()) parts.push_back(absl::StrCat(i));
      for (auto f : l.f()) parts.push_back(absl::StrCat(f));
      for (auto b : l.b()) parts.push_back(b ? "true" : "false");
      for (auto t : l.type()) parts.push_back(DataType_Name(static_cast<DataType>(t)));
      for (const auto& s : l.shape()) parts.push_back(PartialShape::FromProto(s).DebugString());
      for (const auto& f : l.func()) parts.push_back(f.name());
      if (l.tensor_size()) parts.push_back(absl::StrCat(l.tensor_size(), " tensors"));
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case AttrValue::VALUE_NOT_SET: return "<unset>";
  }
  return "<unknown>";
}

bool AttrValuesEqual(const AttrValue& a, const AttrValue& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

namespace {

absl::StatusOr<const AttrValue*> FindTyped(const AttrSlice& attrs, absl::string_view name,
                                           AttrValue::ValueCase want, absl::string_view want_name) {
  const AttrValue* v = attrs.Find(name);
  if (v == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("node '", attrs.node_name(), "' has no attr named '", name, "'"));
  }
  // An empty list is a valid value for every list type.
  if (v->value_case() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attr '", name, "' of node '", attrs.node_name(), "' has type ", AttrValueTypeName(*v),
        ", expected ", want_name));
  }
  return v;
}

}  // namespace

#define SL_GET_SCALAR_ATTR(TYPE, CASE, NAME, EXPR)                                        \
  absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, TYPE* value) { \
    SL_ASSIGN_OR_RETURN(const AttrValue* v, FindTyped(attrs, name, AttrValue::CASE, NAME)); \
    *value = EXPR;                                                                        \
    return absl::OkStatus();                                                              \
  }
SL_GET_SCALAR_ATTR(std::string, kS, "string", v->s())
SL_GET_SCALAR_ATTR(int64_t, kI, "int", v->i())
SL_GET_SCALAR_ATTR(int32_t, kI, "int", static_cast<int32_t>(v->i()))
SL_GET_SCALAR_ATTR(float, kF, "float", v->f())
SL_GET_SCALAR_ATTR(bool, kB, "bool", v->b())
SL_GET_SCALAR_ATTR(DataType, kType, "type", v->type())
SL_GET_SCALAR_ATTR(PartialShape, kShape, "shape", PartialShape::FromProto(v->shape()))
SL_GET_SCALAR_ATTR(NameAttrList, kFunc, "func", v->func())
#undef SL_GET_SCALAR_ATTR

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, Tensor* value) {
  SL_ASSIGN_OR_RETURN(const AttrValue* v, FindTyped(attrs, name, AttrValue::kTensor, "tensor"));
  SL_ASSIGN_OR_RETURN(*value, Tensor::FromProto(v->tensor()));
  return absl::OkStatus();
}

#define SL_GET_LIST_ATTR(TYPE, FIELD, NAME, CONVERT)                                      \
  absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, TYPE* value) { \
    SL_ASSIGN_OR_RETURN(const AttrValue* v, FindTyped(attrs, name, AttrValue::kList, NAME)); \
    value->clear();                                                                       \
    for (const auto& x : v->list().FIELD()) value->push_back(CONVERT);                    \
    return absl::OkStatus();                                                              \
  }
SL_GET_LIST_ATTR(std::vector<std::string>, s, "list(string)", x)
SL_GET_LIST_ATTR(std::vector<int64_t>, i, "list(int)", x)
SL_GET_LIST_ATTR(std::vector<int32_t>, i, "list(int)", static_cast<int32_t>(x))
SL_GET_LIST_ATTR(std::vector<float>, f, "list(float)", x)
SL_GET_LIST_ATTR(DataTypeVector, type, "list(type)", static_cast<DataType>(x))
SL_GET_LIST_ATTR(std::vector<PartialShape>, shape, "list(shape)", PartialShape::FromProto(x))
#undef SL_GET_LIST_ATTR

void SetAttrValue(absl::string_view value, AttrValue* out) { out->set_s(std::string(value)); }
void SetAttrValue(int64_t value, AttrValue* out) { out->set_i(value); }
void SetAttrValue(float value, AttrValue* out) { out->set_f(value); }
void SetAttrValue(bool value, AttrValue* out) { out->set_b(value); }
void SetAttrValue(DataType value, AttrValue* out) { out->set_type(value); }
void SetAttrValue(const PartialShape& value, AttrValue* out) { value.AsProto(out->mutable_shape()); }
void SetAttrValue(const TensorShape& value, AttrValue* out) { value.AsProto(out->mutable_shape()); }
void SetAttrValue(const Tensor& value, AttrValue* out) {
  value.AsProtoTensorContent(out->mutable_tensor());
}
void SetAttrValue(absl::Span<const int64_t> value, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (auto v : value) l->add_i(v);
}
void SetAttrValue(absl::Span<const float> value, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (auto v : value) l->add_f(v);
}
void SetAttrValue(absl::Span<const std::string> value, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (const auto& v : value) l->add_s(v);
}
void SetAttrValue(absl::Span<const DataType> value, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (auto v : value) l->add_type(v);
}

}  // namespace sluice
