#include "ops/op_def_builder.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "framework/types.h"
#include "google/protobuf/text_format.h"

namespace sluice {

absl::Status ParseScalarValue(absl::string_view type, absl::string_view text, AttrValue* out);

namespace {

constexpr DataType kNumberTypes[] = {DT_FLOAT,  DT_DOUBLE,  DT_INT32,  DT_UINT8,    DT_INT16,
                                     DT_INT8,   DT_COMPLEX64, DT_INT64, DT_QINT8,   DT_QUINT8,
                                     DT_QINT32, DT_BFLOAT16, DT_QINT16, DT_QUINT16, DT_UINT16,
                                     DT_COMPLEX128, DT_HALF, DT_UINT32, DT_UINT64};
constexpr DataType kRealNumberTypes[] = {DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_INT64, DT_UINT8,
                                         DT_INT16, DT_INT8,   DT_UINT16, DT_HALF,  DT_UINT32,
                                         DT_UINT64, DT_BFLOAT16};

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// An op's name, as TensorFlow allows it: a letter, digit or '.' first, then also '_', '-', '/'
// and '>', the namespace separator of names such as "Onnx>Concat".
bool IsOpName(absl::string_view s) {
  if (s.empty() || !(std::isalnum(static_cast<unsigned char>(s[0])) || s[0] == '.' || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/' || c == '>')) {
      return false;
    }
  }
  return true;
}

bool IsArgName(absl::string_view s) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_')) {
      return false;
    }
  }
  return true;
}

absl::string_view Strip(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

absl::StatusOr<std::string> ParseQuoted(absl::string_view s) {
  s = Strip(s);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    return std::string(s.substr(1, s.size() - 2));
  }
  return absl::InvalidArgumentError(absl::StrCat("expected a quoted string, got '", s, "'"));
}

// Splits "a, b, c" at top-level commas (ignoring commas inside quotes, [] or {}).
std::vector<absl::string_view> SplitList(absl::string_view s) {
  std::vector<absl::string_view> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(Strip(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  absl::string_view last = Strip(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

// Parses the text of one value of element type `elem` ("int", "type", ...) into `list`.
absl::Status AddListValue(absl::string_view elem, absl::string_view text,
                          AttrValue::ListValue* list) {
  AttrValue v;
  SL_RETURN_IF_ERROR(ParseScalarValue(elem, text, &v));
  if (elem == "string") list->add_s(v.s());
  else if (elem == "int") list->add_i(v.i());
  else if (elem == "float") list->add_f(v.f());
  else if (elem == "bool") list->add_b(v.b());
  else if (elem == "type") list->add_type(v.type());
  else if (elem == "shape") *list->add_shape() = v.shape();
  else if (elem == "tensor") *list->add_tensor() = v.tensor();
  else return absl::InvalidArgumentError(absl::StrCat("no default values for list(", elem, ")"));
  return absl::OkStatus();
}

}  // namespace

// Parses a default value of a non-list attr type.
absl::Status ParseScalarValue(absl::string_view type, absl::string_view text, AttrValue* out) {
  text = Strip(text);
  if (type == "string") {
    SL_ASSIGN_OR_RETURN(std::string s, ParseQuoted(text));
    out->set_s(s);
  } else if (type == "int") {
    int64_t i;
    if (!absl::SimpleAtoi(text, &i)) return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an int"));
    out->set_i(i);
  } else if (type == "float") {
    float f;
    if (!absl::SimpleAtof(text, &f)) return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a float"));
    out->set_f(f);
  } else if (type == "bool") {
    if (text == "true") out->set_b(true);
    else if (text == "false") out->set_b(false);
    else return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a bool"));
  } else if (type == "type") {
    SL_ASSIGN_OR_RETURN(DataType dt, DataTypeFromString(text));
    out->set_type(dt);
  } else if (type == "shape") {
    if (absl::StartsWith(text, "[")) {
      if (!absl::EndsWith(text, "]")) return absl::InvalidArgumentError("unterminated shape");
      auto* shape = out->mutable_shape();
      for (absl::string_view d : SplitList(text.substr(1, text.size() - 2))) {
        int64_t size;
        if (!absl::SimpleAtoi(d, &size)) return absl::InvalidArgumentError(absl::StrCat("bad dim '", d, "'"));
        shape->add_dim()->set_size(size);
      }
    } else if (!google::protobuf::TextFormat::ParseFromString(
                   std::string(absl::StripSuffix(absl::StripPrefix(text, "{"), "}")),
                   out->mutable_shape())) {
      return absl::InvalidArgumentError(absl::StrCat("bad shape '", text, "'"));
    }
  } else if (type == "tensor") {
    if (!google::protobuf::TextFormat::ParseFromString(
            std::string(absl::StripSuffix(absl::StripPrefix(text, "{"), "}")), out->mutable_tensor())) {
      return absl::InvalidArgumentError(absl::StrCat("bad tensor '", text, "'"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("attrs of type ", type, " take no default"));
  }
  return absl::OkStatus();
}

namespace {

// Parses "{float, int32}" or "{'a', 'b'}" into allowed values; sets *type to "type" or "string".
absl::Status ParseAllowedSet(absl::string_view text, std::string* type, AttrValue* allowed) {
  text = Strip(text);
  if (text == "numbertype" || text == "realnumbertype") {
    *type = "type";
    if (text == "numbertype") {
      for (DataType dt : kNumberTypes) allowed->mutable_list()->add_type(dt);
    } else {
      for (DataType dt : kRealNumberTypes) allowed->mutable_list()->add_type(dt);
    }
    return absl::OkStatus();
  }
  if (!absl::StartsWith(text, "{") || !absl::EndsWith(text, "}")) {
    return absl::InvalidArgumentError(absl::StrCat("bad allowed set '", text, "'"));
  }
  auto items = SplitList(text.substr(1, text.size() - 2));
  if (items.empty()) return absl::InvalidArgumentError("empty allowed set");
  bool strings = items[0].front() == '\'' || items[0].front() == '"';
  *type = strings ? "string" : "type";
  for (absl::string_view item : items) {
    if (strings) {
      SL_ASSIGN_OR_RETURN(std::string s, ParseQuoted(item));
      allowed->mutable_list()->add_s(s);
    } else {
      SL_ASSIGN_OR_RETURN(DataType dt, DataTypeFromString(item));
      allowed->mutable_list()->add_type(dt);
    }
  }
  return absl::OkStatus();
}

bool IsScalarAttrType(absl::string_view t) {
  return t == "string" || t == "int" || t == "float" || t == "bool" || t == "type" ||
         t == "shape" || t == "tensor" || t == "func";
}

absl::Status ParseAttrSpec(absl::string_view spec, OpDef::AttrDef* attr) {
  std::vector<absl::string_view> name_rest = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (name_rest.size() != 2) return absl::InvalidArgumentError("expected 'name: type'");
  absl::string_view name = Strip(name_rest[0]);
  if (!IsIdentifier(name)) return absl::InvalidArgumentError(absl::StrCat("bad attr name '", name, "'"));
  attr->set_name(std::string(name));
  absl::string_view rest = Strip(name_rest[1]);

  // Split off "= default" (an '=' outside braces, quotes and brackets; not part of ">=").
  absl::string_view type_text = rest, default_text;
  bool has_default = false;
  {
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i < rest.size(); ++i) {
      char c = rest[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '{' || c == '[' || c == '(') {
        ++depth;
      } else if (c == '}' || c == ']' || c == ')') {
        --depth;
      } else if (c == '=' && depth == 0 && (i == 0 || rest[i - 1] != '>')) {
        type_text = Strip(rest.substr(0, i));
        default_text = Strip(rest.substr(i + 1));
        has_default = true;
        break;
      }
    }
  }

  // Optional ">= N".
  size_t ge = type_text.find(">=");
  if (ge != absl::string_view::npos) {
    int64_t min;
    if (!absl::SimpleAtoi(Strip(type_text.substr(ge + 2)), &min)) {
      return absl::InvalidArgumentError("bad minimum after '>='");
    }
    attr->set_has_minimum(true);
    attr->set_minimum(min);
    type_text = Strip(type_text.substr(0, ge));
  }

  std::string type;
  if (absl::StartsWith(type_text, "list(") && absl::EndsWith(type_text, ")")) {
    absl::string_view inner = Strip(type_text.substr(5, type_text.size() - 6));
    std::string elem(inner);
    if (!IsScalarAttrType(inner)) {
      SL_RETURN_IF_ERROR(ParseAllowedSet(inner, &elem, attr->mutable_allowed_values()));
    }
    type = absl::StrCat("list(", elem, ")");
  } else if (IsScalarAttrType(type_text)) {
    type = std::string(type_text);
  } else {
    SL_RETURN_IF_ERROR(ParseAllowedSet(type_text, &type, attr->mutable_allowed_values()));
  }
  attr->set_type(type);
  if (attr->has_minimum() && type != "int" && !absl::StartsWith(type, "list(")) {
    return absl::InvalidArgumentError("'>=' applies only to int and list attrs");
  }

  if (has_default) {
    AttrValue* d = attr->mutable_default_value();
    if (absl::StartsWith(type, "list(")) {
      if (!absl::StartsWith(default_text, "[") || !absl::EndsWith(default_text, "]")) {
        return absl::InvalidArgumentError(absl::StrCat("list default '", default_text, "' needs []"));
      }
      std::string elem = type.substr(5, type.size() - 6);
      d->mutable_list();
      for (absl::string_view item : SplitList(default_text.substr(1, default_text.size() - 2))) {
        SL_RETURN_IF_ERROR(AddListValue(elem, item, d->mutable_list()));
      }
    } else {
      SL_RETURN_IF_ERROR(ParseScalarValue(type, default_text, d));
    }
    SL_RETURN_IF_ERROR(ValidateAttrValue(*d, *attr));
  }
  return absl::OkStatus();
}

const OpDef::AttrDef* FindAttr(const OpDef& op, absl::string_view name) {
  for (const auto& a : op.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::Status ParseArgSpec(absl::string_view spec, const OpDef& op, OpDef::ArgDef* arg) {
  std::vector<absl::string_view> name_rest = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (name_rest.size() != 2) return absl::InvalidArgumentError("expected 'name: type'");
  absl::string_view name = Strip(name_rest[0]);
  if (!IsArgName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad arg name '", name, "' (lower case, digits and '_')"));
  }
  arg->set_name(std::string(name));
  absl::string_view type = Strip(name_rest[1]);
  if (absl::StartsWith(type, "Ref(") && absl::EndsWith(type, ")")) {
    arg->set_is_ref(true);
    type = Strip(type.substr(4, type.size() - 5));
  }
  size_t star = type.find('*');
  if (star != absl::string_view::npos) {
    absl::string_view number = Strip(type.substr(0, star));
    const OpDef::AttrDef* n = FindAttr(op, number);
    if (n == nullptr || n->type() != "int") {
      return absl::InvalidArgumentError(absl::StrCat("'", number, "' must be an int attr"));
    }
    arg->set_number_attr(std::string(number));
    type = Strip(type.substr(star + 1));
  }
  if (const OpDef::AttrDef* a = FindAttr(op, type)) {
    if (a->type() == "type") {
      arg->set_type_attr(std::string(type));
    } else if (a->type() == "list(type)" && arg->number_attr().empty()) {
      arg->set_type_list_attr(std::string(type));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("attr '", type, "' has type ", a->type(),
                                                     ", not a type usable for an arg"));
    }
    return absl::OkStatus();
  }
  auto dt = DataTypeFromString(type);
  if (!dt.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", type, "' is neither a type nor a type attr of the op"));
  }
  arg->set_type(*dt);
  return absl::OkStatus();
}

}  // namespace

OpDefBuilder::OpDefBuilder(std::string op_name) { op_def_.set_name(std::move(op_name)); }

OpDefBuilder& OpDefBuilder::Input(std::string spec) { inputs_.push_back(std::move(spec)); return *this; }
OpDefBuilder& OpDefBuilder::Output(std::string spec) { outputs_.push_back(std::move(spec)); return *this; }
OpDefBuilder& OpDefBuilder::Attr(std::string spec) { attrs_.push_back(std::move(spec)); return *this; }
OpDefBuilder& OpDefBuilder::SetIsStateful() { op_def_.set_is_stateful(true); return *this; }
OpDefBuilder& OpDefBuilder::SetIsCommutative() { op_def_.set_is_commutative(true); return *this; }
OpDefBuilder& OpDefBuilder::SetIsAggregate() { op_def_.set_is_aggregate(true); return *this; }
OpDefBuilder& OpDefBuilder::SetAllowsUninitializedInput() {
  op_def_.set_allows_uninitialized_input(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsDistributedCommunication() {
  op_def_.set_is_distributed_communication(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) { shape_fn_ = std::move(fn); return *this; }
OpDefBuilder& OpDefBuilder::Doc(std::string summary) { op_def_.set_summary(std::move(summary)); return *this; }

absl::Status OpDefBuilder::Finalize(OpRegistrationData* out) const {
  OpDef op = op_def_;
  std::vector<std::string> errors;
  if (!IsOpName(op.name())) errors.push_back(absl::StrCat("bad op name '", op.name(), "'"));
  for (const std::string& spec : attrs_) {
    OpDef::AttrDef attr;
    absl::Status s = ParseAttrSpec(spec, &attr);
    if (!s.ok()) {
      errors.push_back(absl::StrCat("Attr(\"", spec, "\"): ", s.message()));
    } else if (FindAttr(op, attr.name()) != nullptr) {
      errors.push_back(absl::StrCat("Attr(\"", spec, "\"): duplicate attr '", attr.name(), "'"));
    } else {
      *op.add_attr() = attr;
    }
  }
  auto parse_args = [&](const std::vector<std::string>& specs, bool input) {
    for (const std::string& spec : specs) {
      OpDef::ArgDef arg;
      absl::Status s = ParseArgSpec(spec, op, &arg);
      const char* kind = input ? "Input" : "Output";
      if (!s.ok()) {
        errors.push_back(absl::StrCat(kind, "(\"", spec, "\"): ", s.message()));
        continue;
      }
      auto& args = input ? *op.mutable_input_arg() : *op.mutable_output_arg();
      for (const auto& other : args) {
        if (other.name() == arg.name()) {
          errors.push_back(absl::StrCat(kind, "(\"", spec, "\"): duplicate name '", arg.name(), "'"));
        }
      }
      *args.Add() = arg;
    }
  };
  parse_args(inputs_, true);
  parse_args(outputs_, false);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("REGISTER_OP(\"", op.name(), "\"): ", absl::StrJoin(errors, "; ")));
  }
  out->op_def = std::move(op);
  out->shape_fn = shape_fn_ ? shape_fn_ : ShapeFn(shape_fn::Unknown);
  return absl::OkStatus();
}

}  // namespace sluice
