#include "framework/node_def_util.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "framework/status.h"

namespace sluice {

std::string TensorId::ToString() const {
  if (index == kControlSlot) return absl::StrCat("^", node);
  if (index == 0) return node;
  return absl::StrCat(node, ":", index);
}

absl::StatusOr<TensorId> ParseTensorName(absl::string_view name) {
  TensorId id;
  if (absl::ConsumePrefix(&name, "^")) {
    if (name.empty()) return absl::InvalidArgumentError("empty control input name '^'");
    id.node = std::string(name);
    id.index = kControlSlot;
    return id;
  }
  size_t colon = name.rfind(':');
  if (colon != absl::string_view::npos) {
    int index;
    if (!absl::SimpleAtoi(name.substr(colon + 1), &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad tensor name '", name, "'"));
    }
    id.index = index;
    name = name.substr(0, colon);
  }
  if (name.empty()) return absl::InvalidArgumentError("empty tensor name");
  id.node = std::string(name);
  return id;
}

namespace {

bool ListTypeMatches(const AttrValue& v, absl::string_view elem) {
  const auto& l = v.list();
  int kinds = (l.s_size() > 0) + (l.i_size() > 0) + (l.f_size() > 0) + (l.b_size() > 0) +
              (l.type_size() > 0) + (l.shape_size() > 0) + (l.tensor_size() > 0) +
              (l.func_size() > 0);
  if (kinds == 0) return true;
  if (kinds > 1) return false;
  if (elem == "string") return l.s_size() > 0;
  if (elem == "int") return l.i_size() > 0;
  if (elem == "float") return l.f_size() > 0;
  if (elem == "bool") return l.b_size() > 0;
  if (elem == "type") return l.type_size() > 0;
  if (elem == "shape") return l.shape_size() > 0;
  if (elem == "tensor") return l.tensor_size() > 0;
  if (elem == "func") return l.func_size() > 0;
  return false;
}

int ListLength(const AttrValue& v) {
  const auto& l = v.list();
  return l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() + l.shape_size() +
         l.tensor_size() + l.func_size();
}

}  // namespace

absl::Status ValidateAttrValue(const AttrValue& value, const OpDef::AttrDef& def) {
  absl::string_view type = def.type();
  if (absl::StartsWith(type, "list(")) {
    absl::string_view elem = type.substr(5, type.size() - 6);
    if (value.value_case() != AttrValue::kList || !ListTypeMatches(value, elem)) {
      return absl::InvalidArgumentError(absl::StrCat("attr '", def.name(), "' has type ",
                                                     AttrValueTypeName(value), ", expected ", type));
    }
    if (def.has_minimum() && ListLength(value) < def.minimum()) {
      return absl::InvalidArgumentError(absl::StrCat("attr '", def.name(), "' has length ",
                                                     ListLength(value), ", less than the minimum ",
                                                     def.minimum()));
    }
    if (elem == "type" && def.allowed_values().list().type_size() > 0) {
      for (int t : value.list().type()) {
        bool ok = false;
        for (int a : def.allowed_values().list().type()) ok |= (a == t);
        if (!ok) {
          return absl::InvalidArgumentError(absl::StrCat(
              "value ", DataTypeString(static_cast<DataType>(t)), " for attr '", def.name(),
              "' is not in the allowed list ", SummarizeAttrValue(def.allowed_values())));
        }
      }
    }
    return absl::OkStatus();
  }
  if (AttrValueTypeName(value) != type) {
    return absl::InvalidArgumentError(absl::StrCat("attr '", def.name(), "' has type ",
                                                   AttrValueTypeName(value), ", expected ", type));
  }
  if (type == "int" && def.has_minimum() && value.i() < def.minimum()) {
    return absl::InvalidArgumentError(absl::StrCat("attr '", def.name(), "' has value ",
                                                   value.i(), ", less than the minimum ",
                                                   def.minimum()));
  }
  const auto& allowed = def.allowed_values().list();
  if (type == "type" && allowed.type_size() > 0) {
    bool ok = false;
    for (int a : allowed.type()) ok |= (a == value.type());
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "value ", DataTypeString(value.type()), " for attr '", def.name(),
          "' is not in the allowed list ", SummarizeAttrValue(def.allowed_values())));
    }
  }
  if (type == "string" && allowed.s_size() > 0) {
    bool ok = false;
    for (const auto& a : allowed.s()) ok |= (a == value.s());
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("value \"", value.s(), "\" for attr '",
                                                     def.name(), "' is not in the allowed list ",
                                                     SummarizeAttrValue(def.allowed_values())));
    }
  }
  return absl::OkStatus();
}

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node) {
  for (const auto& attr : op_def.attr()) {
    if (attr.has_default_value() && !node->attr().contains(attr.name())) {
      (*node->mutable_attr())[attr.name()] = attr.default_value();
    }
  }
}

absl::Status ArgTypes(const AttrSlice& attrs, const OpDef::ArgDef& arg, DataTypeVector* types) {
  types->clear();
  if (!arg.type_list_attr().empty()) {
    return GetNodeAttr(attrs, arg.type_list_attr(), types);
  }
  DataType dt = arg.type();
  if (!arg.type_attr().empty()) SL_RETURN_IF_ERROR(GetNodeAttr(attrs, arg.type_attr(), &dt));
  int64_t n = 1;
  if (!arg.number_attr().empty()) {
    SL_RETURN_IF_ERROR(GetNodeAttr(attrs, arg.number_attr(), &n));
    if (n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("attr '", arg.number_attr(), "' of node '", attrs.node_name(),
                       "' is negative: ", n));
    }
  }
  types->assign(n, dt);
  return absl::OkStatus();
}

absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op_def, DataTypeVector* inputs,
                               DataTypeVector* outputs) {
  AttrSlice attrs(node);
  DataTypeVector t;
  inputs->clear();
  outputs->clear();
  for (const auto& arg : op_def.input_arg()) {
    SL_RETURN_IF_ERROR(ArgTypes(attrs, arg, &t));
    inputs->insert(inputs->end(), t.begin(), t.end());
  }
  for (const auto& arg : op_def.output_arg()) {
    SL_RETURN_IF_ERROR(ArgTypes(attrs, arg, &t));
    outputs->insert(outputs->end(), t.begin(), t.end());
  }
  return absl::OkStatus();
}

absl::Status NumOutputsForNode(const NodeDef& node, const OpDef& op_def, int* num_outputs) {
  DataTypeVector in, out;
  SL_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &in, &out));
  *num_outputs = static_cast<int>(out.size());
  return absl::OkStatus();
}

absl::Status ValidateNodeDef(const NodeDef& node, const OpDef& op_def) {
  SL_RETURN_IF_ERROR(ValidateNodeDefAttrs(node, op_def));
  auto err = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name(), "' (op '", op_def.name(), "'): ", what));
  };
  int data_inputs = 0;
  bool seen_control = false;
  for (const auto& in : node.input()) {
    if (absl::StartsWith(in, "^")) {
      seen_control = true;
    } else {
      if (seen_control) return err(absl::StrCat("data input '", in, "' after control inputs"));
      ++data_inputs;
    }
  }
  DataTypeVector in_types, out_types;
  SL_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &in_types, &out_types));
  if (data_inputs != static_cast<int>(in_types.size())) {
    return err(absl::StrCat("expected ", in_types.size(), " inputs but has ", data_inputs));
  }
  return absl::OkStatus();
}

absl::Status ValidateNodeDefAttrs(const NodeDef& node, const OpDef& op_def) {
  auto err = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name(), "' (op '", op_def.name(), "'): ", what));
  };
  if (node.op() != op_def.name()) {
    return err(absl::StrCat("NodeDef op '", node.op(), "' does not match the OpDef"));
  }
  for (const auto& [name, value] : node.attr()) {
    if (absl::StartsWith(name, "_")) continue;  // Internal attrs (colocation, ...).
    const OpDef::AttrDef* def = nullptr;
    for (const auto& a : op_def.attr()) {
      if (a.name() == name) def = &a;
    }
    if (def == nullptr) return err(absl::StrCat("unknown attr '", name, "'"));
    absl::Status s = ValidateAttrValue(value, *def);
    if (!s.ok()) return err(s.message());
  }
  for (const auto& a : op_def.attr()) {
    if (!node.attr().contains(a.name())) return err(absl::StrCat("missing attr '", a.name(), "'"));
  }
  DataTypeVector in_types, out_types;
  absl::Status s = InOutTypesForNode(node, op_def, &in_types, &out_types);
  if (!s.ok()) return err(s.message());
  return absl::OkStatus();
}

absl::Status InferAttrsFromInputTypes(const OpDef& op_def,
                                      const std::vector<DataTypeVector>& arg_types, NodeDef* node) {
  if (arg_types.size() != static_cast<size_t>(op_def.input_arg_size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node->name(), "' (op '", op_def.name(), "'): expected ",
        op_def.input_arg_size(), " input args but got ", arg_types.size()));
  }
  auto set_or_check = [&](const std::string& attr, const AttrValue& value) -> absl::Status {
    auto it = node->attr().find(attr);
    if (it == node->attr().end()) {
      (*node->mutable_attr())[attr] = value;
      return absl::OkStatus();
    }
    if (!AttrValuesEqual(it->second, value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node->name(), "' (op '", op_def.name(), "'): inconsistent values for attr '",
          attr, "': ", SummarizeAttrValue(it->second), " vs ", SummarizeAttrValue(value)));
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const auto& arg = op_def.input_arg(i);
    const DataTypeVector& types = arg_types[i];
    AttrValue v;
    if (!arg.type_list_attr().empty()) {
      SetAttrValue(absl::Span<const DataType>(types.data(), types.size()), &v);
      SL_RETURN_IF_ERROR(set_or_check(arg.type_list_attr(), v));
      continue;
    }
    if (!arg.number_attr().empty()) {
      v.set_i(static_cast<int64_t>(types.size()));
      SL_RETURN_IF_ERROR(set_or_check(arg.number_attr(), v));
    } else if (types.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node->name(), "' (op '", op_def.name(), "'): input '", arg.name(),
          "' takes one tensor but got ", types.size()));
    }
    for (DataType dt : types) {
      if (!arg.type_attr().empty()) {
        AttrValue t;
        t.set_type(dt);
        SL_RETURN_IF_ERROR(set_or_check(arg.type_attr(), t));
      } else if (arg.type() != dt) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", node->name(), "' (op '", op_def.name(), "'): input '", arg.name(),
            "' expects ", DataTypeString(arg.type()), " but got ", DataTypeString(dt)));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DataTypeVector> AddInputsAndComplete(const OpDef& op_def,
                                                    const std::vector<std::vector<std::string>>& args,
                                                    absl::FunctionRef<DataType(const std::string&)> dtype_of,
                                                    NodeDef* node) {
  std::vector<DataTypeVector> arg_types;
  for (const auto& group : args) {
    DataTypeVector types;
    for (const std::string& t : group) {
      DataType dt = dtype_of(t);
      if (dt == DT_INVALID) return absl::InternalError(absl::StrCat("unknown tensor '", t, "'"));
      types.push_back(dt);
      node->add_input(t);
    }
    arg_types.push_back(types);
  }
  SL_RETURN_IF_ERROR(InferAttrsFromInputTypes(op_def, arg_types, node));
  AddDefaultsToNodeDef(op_def, node);
  SL_RETURN_IF_ERROR(ValidateNodeDef(*node, op_def));
  DataTypeVector in_types, out_types;
  SL_RETURN_IF_ERROR(InOutTypesForNode(*node, op_def, &in_types, &out_types));
  return out_types;
}

}  // namespace sluice
