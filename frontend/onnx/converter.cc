#include "frontend/onnx/converter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/onnx_tensor.h"
#include "ops/op_registry.h"

namespace sluice {

OnnxConverterRegistry* OnnxConverterRegistry::Global() {
  static auto* registry = new OnnxConverterRegistry();
  return registry;
}

void OnnxConverterRegistry::Register(OnnxConverterEntry entry) { entries_.push_back(std::move(entry)); }

const OnnxConverterEntry* OnnxConverterRegistry::Find(absl::string_view domain, absl::string_view op,
                                                      int version) const {
  for (const auto& e : entries_) {
    if (e.domain == domain && e.op == op && e.first_version <= version && version <= e.last_version) {
      return &e;
    }
  }
  return nullptr;
}

OnnxNodeContext::OnnxNodeContext(OnnxImporter* importer, const onnx::NodeProto& node,
                                 int since_version, std::string base_name)
    : importer_(importer), node_(node), since_version_(since_version), base_name_(std::move(base_name)) {}

const std::string& OnnxNodeContext::input(int i) const {
  static const std::string* empty = new std::string();
  if (!has_input(i)) return *empty;
  return importer_->Find(node_.input(i))->tensor;
}

DataType OnnxNodeContext::input_dtype(int i) const {
  return has_input(i) ? importer_->Find(node_.input(i))->dtype : DT_INVALID;
}

PartialShape OnnxNodeContext::input_shape(int i) const {
  return has_input(i) ? importer_->OnnxShape(node_.input(i)) : PartialShape();
}

const Tensor* OnnxNodeContext::constant_input(int i) const {
  return has_input(i) ? importer_->ConstantValue(input(i)) : nullptr;
}

const onnx::TypeProto* OnnxNodeContext::input_value_type(int i) const {
  if (!has_input(i) || input_dtype(i) != DT_VARIANT) return nullptr;
  return importer_->ValueType(node_.input(i));
}

void OnnxNodeContext::SetOutputValueType(int i, const onnx::TypeProto& type) {
  if (has_output(i)) importer_->SetValueType(node_.output(i), type);
}

const onnx::AttributeProto* OnnxNodeContext::attr(absl::string_view name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::Status OnnxNodeContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(message);
}

absl::Status OnnxNodeContext::Unimplemented(absl::string_view message) const {
  return absl::UnimplementedError(message);
}

#define SL_ONNX_GET_ATTR(NAME, TYPE, ONNX_TYPE, EXPR)                                          \
  absl::StatusOr<TYPE> OnnxNodeContext::NAME(absl::string_view name,                           \
                                             std::optional<TYPE> fallback) const {             \
    const onnx::AttributeProto* a = attr(name);                                                \
    if (a == nullptr) {                                                                        \
      if (fallback.has_value()) return *fallback;                                              \
      return Error(absl::StrCat("missing attribute '", name, "'"));                            \
    }                                                                                          \
    if (a->type() != onnx::AttributeProto::ONNX_TYPE) {                                        \
      return Error(absl::StrCat("attribute '", name, "' should be " #ONNX_TYPE));              \
    }                                                                                          \
    return EXPR;                                                                               \
  }
SL_ONNX_GET_ATTR(GetInt, int64_t, INT, a->i())
SL_ONNX_GET_ATTR(GetFloat, float, FLOAT, a->f())
SL_ONNX_GET_ATTR(GetString, std::string, STRING, a->s())
SL_ONNX_GET_ATTR(GetInts, std::vector<int64_t>, INTS,
                 std::vector<int64_t>(a->ints().begin(), a->ints().end()))
SL_ONNX_GET_ATTR(GetFloats, std::vector<float>, FLOATS,
                 std::vector<float>(a->floats().begin(), a->floats().end()))
#undef SL_ONNX_GET_ATTR

absl::StatusOr<Tensor> OnnxNodeContext::GetTensor(absl::string_view name) const {
  const onnx::AttributeProto* a = attr(name);
  if (a == nullptr || a->type() != onnx::AttributeProto::TENSOR) {
    return Error(absl::StrCat("missing tensor attribute '", name, "'"));
  }
  return TensorFromOnnx(a->t());
}

namespace {

// The Sluice op an ONNX-named op lowers to: its namesake in the Onnx> namespace when there is
// one ("Concat" is "Onnx>Concat"), otherwise the op as named, a TensorFlow op with the same
// meaning ("Add", "Exp").
std::string SluiceOpFor(absl::string_view op) {
  std::string prefixed = absl::StrCat(kOnnxOpPrefix, op);
  if (!absl::StartsWith(op, kOnnxOpPrefix) && OpRegistry::Global()->LookUp(prefixed).ok()) return prefixed;
  return std::string(op);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> OnnxNodeContext::AddNode(
    absl::string_view op, std::vector<std::vector<std::string>> args, AttrMap attrs,
    absl::string_view suffix) {
  const absl::string_view plain = op;  // Names the node: no '>' in node names.
  const std::string sluice_op = SluiceOpFor(op);
  SL_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(sluice_op));
  NodeDef node;
  node.set_name(suffix.empty() && !used_base_
                    ? base_name_
                    : importer_->UniqueNodeName(absl::StrCat(base_name_, "/", suffix.empty() ? plain : suffix)));
  used_base_ = true;
  node.set_op(sluice_op);
  *node.mutable_attr() = attrs;
  SL_ASSIGN_OR_RETURN(DataTypeVector out_types,
                      AddInputsAndComplete(reg->op_def, args,
                                           [&](const std::string& t) { return importer_->DtypeOf(t); }, &node));
  std::vector<std::string> outputs;
  for (size_t k = 0; k < out_types.size(); ++k) {
    outputs.push_back(TensorId{node.name(), static_cast<int>(k)}.ToString());
  }
  importer_->AppendNode(std::move(node), out_types);
  return outputs;
}

std::string OnnxNodeContext::AddConst(const Tensor& value, absl::string_view suffix) {
  return importer_->AddConst(value, absl::StrCat(base_name_, "/", suffix));
}

absl::Status OnnxNodeContext::SetOutput(int i, const std::string& tensor) {
  if (!has_output(i)) return absl::OkStatus();
  importer_->Bind(node_.output(i), {tensor, importer_->DtypeOf(tensor)});
  return absl::OkStatus();
}

absl::Status OnnxNodeContext::SetOutputs(const std::vector<std::string>& tensors) {
  for (int i = 0; i < num_outputs(); ++i) {
    if (!has_output(i)) continue;
    if (i >= static_cast<int>(tensors.size())) {
      return Unimplemented(absl::StrCat("output ", i, " is not produced by Sluice"));
    }
    SL_RETURN_IF_ERROR(SetOutput(i, tensors[i]));
  }
  return absl::OkStatus();
}

namespace {

// One ONNX attribute as the AttrValue of a Sluice attr of type `type`.
absl::Status ConvertAttr(const onnx::AttributeProto& a, const std::string& type, AttrValue* out) {
  auto wrong = [&]() {
    return absl::InvalidArgumentError(absl::StrCat("attribute '", a.name(), "' has ONNX type ",
                                                   onnx::AttributeProto::AttributeType_Name(a.type()),
                                                   ", which does not fit Sluice attr type ", type));
  };
  using A = onnx::AttributeProto;
  if (type == "int") {
    if (a.type() != A::INT) return wrong();
    out->set_i(a.i());
  } else if (type == "bool") {
    if (a.type() != A::INT) return wrong();
    out->set_b(a.i() != 0);
  } else if (type == "float") {
    if (a.type() == A::FLOAT) out->set_f(a.f());
    else if (a.type() == A::INT) out->set_f(static_cast<float>(a.i()));
    else return wrong();
  } else if (type == "string") {
    if (a.type() != A::STRING) return wrong();
    out->set_s(a.s());
  } else if (type == "type") {
    if (a.type() != A::INT) return wrong();
    SL_ASSIGN_OR_RETURN(DataType dt, DataTypeFromOnnx(static_cast<int>(a.i())));
    out->set_type(dt);
  } else if (type == "tensor") {
    if (a.type() != A::TENSOR) return wrong();
    SL_ASSIGN_OR_RETURN(Tensor t, TensorFromOnnx(a.t()));
    t.AsProtoTensorContent(out->mutable_tensor());
  } else if (type == "list(int)") {
    if (a.type() != A::INTS && !(a.type() == A::UNDEFINED)) return wrong();
    auto* l = out->mutable_list();
    for (int64_t v : a.ints()) l->add_i(v);
  } else if (type == "list(float)") {
    if (a.type() != A::FLOATS) return wrong();
    auto* l = out->mutable_list();
    for (float v : a.floats()) l->add_f(v);
  } else if (type == "list(string)") {
    if (a.type() != A::STRINGS) return wrong();
    auto* l = out->mutable_list();
    for (const auto& v : a.strings()) l->add_s(v);
  } else if (type == "list(type)") {
    if (a.type() != A::INTS) return wrong();
    auto* l = out->mutable_list();
    for (int64_t v : a.ints()) {
      SL_ASSIGN_OR_RETURN(DataType dt, DataTypeFromOnnx(static_cast<int>(v)));
      l->add_type(dt);
    }
  } else if (type == "shape") {
    if (a.type() != A::INTS) return wrong();
    for (int64_t v : a.ints()) out->mutable_shape()->add_dim()->set_size(v);
  } else {
    return wrong();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status OnnxNodeContext::EmitGeneric(absl::string_view op_name, AttrMap extra,
                                          const std::vector<std::string>& ignored) {
  const std::string op = SluiceOpFor(op_name.empty() ? absl::string_view(node_.op_type()) : op_name);
  auto reg = OpRegistry::Global()->LookUp(op);
  if (!reg.ok()) {
    if (reg.status().code() == absl::StatusCode::kNotFound) {
      return Unimplemented(absl::StrCat("Sluice has no op '", op, "'"));
    }
    return reg.status();
  }
  const OpDef& def = (*reg)->op_def;

  std::vector<std::vector<std::string>> args;
  int pos = 0;
  for (const auto& arg : def.input_arg()) {
    std::vector<std::string> group;
    if (!arg.number_attr().empty()) {  // Variadic: the rest.
      for (; pos < num_inputs(); ++pos) {
        if (has_input(pos)) group.push_back(input(pos));
      }
    } else if (!arg.type_list_attr().empty()) {  // Optional: zero or one.
      if (has_input(pos)) group.push_back(input(pos));
      ++pos;
    } else {
      if (!has_input(pos)) {
        return Error(absl::StrCat("input ", pos, " ('", arg.name(), "') is required"));
      }
      group.push_back(input(pos++));
    }
    args.push_back(std::move(group));
  }
  for (; pos < num_inputs(); ++pos) {
    if (has_input(pos)) {
      return Unimplemented(absl::StrCat("input ", pos, " is not accepted by Sluice's '", op, "'"));
    }
  }
  AttrMap attrs;
  for (const auto& a : node_.attribute()) {
    if (extra.contains(a.name())) continue;
    if (std::find(ignored.begin(), ignored.end(), a.name()) != ignored.end()) continue;
    const OpDef::AttrDef* attr_def = nullptr;
    for (const auto& d : def.attr()) {
      if (d.name() == a.name()) attr_def = &d;
    }
    if (attr_def == nullptr) {
      return Unimplemented(absl::StrCat("attribute '", a.name(), "' is not supported by Sluice's '", op, "'"));
    }
    SL_RETURN_IF_ERROR(ConvertAttr(a, attr_def->type(), &attrs[a.name()]));
  }
  for (auto& [k, v] : extra) attrs[k] = v;
  SL_ASSIGN_OR_RETURN(std::vector<std::string> outputs, AddNode(op, std::move(args), std::move(attrs)));
  return SetOutputs(outputs);
}

absl::Status EmitGeneric(OnnxNodeContext* ctx) { return ctx->EmitGeneric(); }

Tensor Int64Vector(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

absl::StatusOr<Tensor> ScalarFromFloatAttr(DataType dt, double value, absl::string_view attr) {
  Tensor t;
  absl::Status status = absl::OkStatus();
  VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      // Bounds as doubles: the largest int64 rounds up to 2^63, so the upper test is strict.
      const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      if (!(value >= lo && value < hi + 1.0) || value != std::floor(value)) {
        status = absl::InvalidArgumentError(absl::StrCat("attribute ", attr, " is ", value, ", which is not a value of ",
                                                         DataTypeString(dt), " (the input's type)"));
        return;
      }
      t = Tensor::Scalar<T>(static_cast<T>(value));
    } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      t = Tensor::Scalar<T>(static_cast<T>(value));
    }
  });
  SL_RETURN_IF_ERROR(status);
  if (!t.IsInitialized()) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute ", attr, " cannot be a value of ", DataTypeString(dt), " (the input's type)"));
  }
  return t;
}

}  // namespace sluice
