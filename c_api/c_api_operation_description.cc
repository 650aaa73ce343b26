// TF_OperationDescription: an operation being described (name, op, device, inputs, attrs)
// before TF_FinishOperation adds it to its graph. The setters have no status of their own, so
// misuse is kept in the description and reported when it is finished.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/status.h"
#include "proto/attr_value.pb.h"

namespace sluice {
namespace {

// Records an attr on a description; problems are kept for TF_FinishOperation.
template <typename Fill>
void SetAttr(TF_OperationDescription* desc, const char* attr_name, Fill fill) {
  if (desc == nullptr) return;
  if (attr_name == nullptr) {
    if (desc->deferred.ok()) desc->deferred = absl::InvalidArgumentError("an attr name is null");
    return;
  }
  AttrValue value;
  absl::Status s = fill(&value);
  if (!s.ok()) {
    if (desc->deferred.ok()) {
      desc->deferred = AddContext(s, absl::StrCat("attr '", attr_name, "'"));
    }
    return;
  }
  (*desc->node_def.mutable_attr())[attr_name] = std::move(value);
}

absl::Status TensorToProto(const TF_Tensor* t, TensorProto* proto) {
  if (t == nullptr) return absl::InvalidArgumentError("the tensor is null");
  SL_ASSIGN_OR_RETURN(Tensor value, ToRuntimeTensor(*t));
  value.AsProtoTensorContent(proto);  // Strings go to string_val.
  return absl::OkStatus();
}

}  // namespace

absl::Status ShapeToProto(const int64_t* dims, int num_dims, TensorShapeProto* proto) {
  if (num_dims < 0) {
    proto->set_unknown_rank(true);
    return absl::OkStatus();
  }
  if (num_dims > 0 && dims == nullptr) return absl::InvalidArgumentError("the dims are null");
  for (int i = 0; i < num_dims; ++i) proto->add_dim()->set_size(dims[i] < 0 ? -1 : dims[i]);
  return absl::OkStatus();
}

}  // namespace sluice

using sluice::DataType;
using sluice::SetStatus;

extern "C" {

TF_OperationDescription* TF_NewOperation(TF_Graph* graph, const char* op_type,
                                         const char* oper_name) {
  auto* desc = new TF_OperationDescription;
  desc->graph = graph;
  if (op_type != nullptr) desc->node_def.set_op(op_type);
  if (oper_name != nullptr) desc->node_def.set_name(oper_name);
  if (graph == nullptr) {
    desc->deferred = sluice::NullArgument("TF_NewOperation", "graph");
  } else if (op_type == nullptr || *op_type == '\0') {
    desc->deferred = absl::InvalidArgumentError(absl::StrCat(
        "TF_NewOperation: the op type of '", oper_name != nullptr ? oper_name : "", "' is empty"));
  } else if (oper_name == nullptr || *oper_name == '\0') {
    desc->deferred = absl::InvalidArgumentError(
        absl::StrCat("TF_NewOperation: an operation of type '", op_type, "' has an empty name"));
  }
  return desc;
}

void TF_SetDevice(TF_OperationDescription* desc, const char* device) {
  if (desc != nullptr) desc->node_def.set_device(device != nullptr ? device : "");
}

void TF_AddInput(TF_OperationDescription* desc, TF_Output input) {
  if (desc != nullptr) desc->input_args.push_back({input});
}

void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs, int num_inputs) {
  if (desc == nullptr) return;
  absl::Status s = sluice::CheckList(inputs, num_inputs);
  if (!s.ok()) {
    if (desc->deferred.ok()) desc->deferred = sluice::AddContext(s, "TF_AddInputList");
    return;
  }
  desc->input_args.emplace_back(inputs, inputs + num_inputs);
}

void TF_ColocateWith(TF_OperationDescription* desc, TF_Operation* op) {
  if (desc == nullptr) return;
  if (op == nullptr) {
    if (desc->deferred.ok()) desc->deferred = sluice::NullArgument("TF_ColocateWith", "op");
    return;
  }
  const std::string group = absl::StrCat("loc:@", op->node->name());
  auto* list = (*desc->node_def.mutable_attr())["_class"].mutable_list();
  for (const std::string& g : list->s()) {
    if (g == group) return;
  }
  list->add_s(group);
}

void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input) {
  if (desc == nullptr) return;
  if (input == nullptr) {
    if (desc->deferred.ok()) desc->deferred = sluice::NullArgument("TF_AddControlInput", "input");
    return;
  }
  desc->control_inputs.push_back(input);
}

void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name, const void* value,
                      size_t length) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    if (value == nullptr && length > 0) return absl::InvalidArgumentError("the value is null");
    v->set_s(std::string(static_cast<const char*>(value), length));
    return absl::OkStatus();
  });
}

void TF_SetAttrStringList(TF_OperationDescription* desc, const char* attr_name,
                          const void* const* values, const size_t* lengths, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    SL_RETURN_IF_ERROR(sluice::CheckList(lengths, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      if (values[i] == nullptr && lengths[i] > 0) {
        return absl::InvalidArgumentError(absl::StrCat("value ", i, " is null"));
      }
      list->add_s(std::string(static_cast<const char*>(values[i]), lengths[i]));
    }
    return absl::OkStatus();
  });
}

void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name, int64_t value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_i(value);
    return absl::OkStatus();
  });
}

void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name,
                       const int64_t* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();  // An empty list is still a list.
    for (int i = 0; i < num_values; ++i) v->mutable_list()->add_i(values[i]);
    return absl::OkStatus();
  });
}

void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name, float value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_f(value);
    return absl::OkStatus();
  });
}

void TF_SetAttrFloatList(TF_OperationDescription* desc, const char* attr_name,
                         const float* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) v->mutable_list()->add_f(values[i]);
    return absl::OkStatus();
  });
}

void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name, unsigned char value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_b(value != 0);
    return absl::OkStatus();
  });
}

void TF_SetAttrBoolList(TF_OperationDescription* desc, const char* attr_name,
                        const unsigned char* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) v->mutable_list()->add_b(values[i] != 0);
    return absl::OkStatus();
  });
}

void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name, TF_DataType value) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->set_type(static_cast<DataType>(value));
    return absl::OkStatus();
  });
}

void TF_SetAttrTypeList(TF_OperationDescription* desc, const char* attr_name,
                        const TF_DataType* values, int num_values) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(values, num_values));
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      v->mutable_list()->add_type(static_cast<DataType>(values[i]));
    }
    return absl::OkStatus();
  });
}

void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name, const int64_t* dims,
                     int num_dims) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    if (num_dims > 0 && dims == nullptr) return absl::InvalidArgumentError("dims is null");
    return sluice::ShapeToProto(dims, num_dims, v->mutable_shape());
  });
}

void TF_SetAttrShapeList(TF_OperationDescription* desc, const char* attr_name,
                         const int64_t* const* dims, const int* num_dims, int num_shapes) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    SL_RETURN_IF_ERROR(sluice::CheckList(dims, num_shapes));
    SL_RETURN_IF_ERROR(sluice::CheckList(num_dims, num_shapes));
    v->mutable_list();
    for (int i = 0; i < num_shapes; ++i) {
      if (num_dims[i] > 0 && dims[i] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("dims of shape ", i, " are null"));
      }
      SL_RETURN_IF_ERROR(sluice::ShapeToProto(dims[i], num_dims[i], v->mutable_list()->add_shape()));
    }
    return absl::OkStatus();
  });
}

void TF_SetAttrTensorShapeProto(TF_OperationDescription* desc, const char* attr_name,
                                const void* proto, size_t proto_len, TF_Status* status) {
  TF_SetAttrTensorShapeProtoList(desc, attr_name, &proto, &proto_len, -1, status);
}

// num_shapes -1: one shape, not a list (TF_SetAttrTensorShapeProto).
void TF_SetAttrTensorShapeProtoList(TF_OperationDescription* desc, const char* attr_name,
                                    const void* const* protos, const size_t* proto_lens,
                                    int num_shapes, TF_Status* status) {
  const char* fn = num_shapes < 0 ? "TF_SetAttrTensorShapeProto" : "TF_SetAttrTensorShapeProtoList";
  if (desc == nullptr || attr_name == nullptr) {
    SetStatus(status, sluice::NullArgument(fn, desc == nullptr ? "desc" : "attr_name"));
    return;
  }
  const int n = num_shapes < 0 ? 1 : num_shapes;
  absl::Status s = sluice::CheckList(protos, n);
  if (s.ok()) s = sluice::CheckList(proto_lens, n);
  sluice::AttrValue value;
  if (num_shapes >= 0) value.mutable_list();
  for (int i = 0; s.ok() && i < n; ++i) {
    sluice::TensorShapeProto* shape =
        num_shapes < 0 ? value.mutable_shape() : value.mutable_list()->add_shape();
    if (!sluice::ParseFromBytes(protos[i], proto_lens[i], shape)) {
      s = absl::InvalidArgumentError(absl::StrCat("shape ", i, " is not a valid serialized TensorShapeProto"));
    } else if (shape->dim_size() > 254) {
      s = absl::InvalidArgumentError(absl::StrCat("shape ", i, " has ", shape->dim_size(),
                                                  " dims, over TensorFlow's 254"));
    }
  }
  if (!s.ok()) {
    SetStatus(status, sluice::AddContext(s, absl::StrCat(fn, ": attr '", attr_name, "'")));
    return;
  }
  (*desc->node_def.mutable_attr())[attr_name] = std::move(value);
  SetStatus(status, absl::OkStatus());
}

void TF_SetAttrFuncName(TF_OperationDescription* desc, const char* attr_name, const char* value,
                        size_t length) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    if (value == nullptr && length > 0) return absl::InvalidArgumentError("the name is null");
    v->mutable_func()->set_name(std::string(value != nullptr ? value : "", length));
    return absl::OkStatus();
  });
}

void TF_SetAttrPlaceholder(TF_OperationDescription* desc, const char* attr_name,
                           const char* placeholder) {
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    if (placeholder == nullptr) return absl::InvalidArgumentError("the placeholder is null");
    v->set_placeholder(placeholder);
    return absl::OkStatus();
  });
}

void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* value,
                      TF_Status* status) {
  if (desc == nullptr || attr_name == nullptr || value == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_SetAttrTensor", desc == nullptr ? "desc"
                                                               : attr_name == nullptr
                                                                   ? "attr_name"
                                                                   : "value"));
    return;
  }
  // A malformed string tensor is reported here, as TensorFlow does, and by TF_FinishOperation.
  absl::Status result;
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    result = sluice::TensorToProto(value, v->mutable_tensor());
    return result;
  });
  SetStatus(status, sluice::AddContext(
                        result, absl::StrCat("TF_SetAttrTensor: attr '", attr_name, "'")));
}

void TF_SetAttrTensorList(TF_OperationDescription* desc, const char* attr_name,
                          TF_Tensor* const* values, int num_values, TF_Status* status) {
  if (desc == nullptr || attr_name == nullptr) {
    SetStatus(status,
              sluice::NullArgument("TF_SetAttrTensorList", desc == nullptr ? "desc" : "attr_name"));
    return;
  }
  absl::Status result = sluice::CheckList(values, num_values);
  for (int i = 0; result.ok() && i < num_values; ++i) {
    if (values[i] == nullptr) {
      result = absl::InvalidArgumentError(absl::StrCat("tensor ", i, " is null"));
    }
  }
  if (!result.ok()) {
    SetStatus(status, sluice::AddContext(result, "TF_SetAttrTensorList"));
    return;
  }
  sluice::SetAttr(desc, attr_name, [&](sluice::AttrValue* v) {
    v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      result = sluice::AddContext(
          sluice::TensorToProto(values[i], v->mutable_list()->add_tensor()),
          absl::StrCat("tensor ", i));
      SL_RETURN_IF_ERROR(result);
    }
    return absl::OkStatus();
  });
  SetStatus(status, sluice::AddContext(
                        result, absl::StrCat("TF_SetAttrTensorList: attr '", attr_name, "'")));
}

void TF_SetAttrValueProto(TF_OperationDescription* desc, const char* attr_name,
                          const void* proto, size_t proto_len, TF_Status* status) {
  if (desc == nullptr || attr_name == nullptr) {
    SetStatus(status,
              sluice::NullArgument("TF_SetAttrValueProto", desc == nullptr ? "desc" : "attr_name"));
    return;
  }
  sluice::AttrValue value;
  if (!sluice::ParseFromBytes(proto, proto_len, &value)) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          "TF_SetAttrValueProto: attr '", attr_name,
                          "': the bytes are not a valid serialized AttrValue")));
    return;
  }
  (*desc->node_def.mutable_attr())[attr_name] = std::move(value);
  SetStatus(status, absl::OkStatus());
}

}  // extern "C"
