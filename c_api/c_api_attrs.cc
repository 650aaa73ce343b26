// TF_OperationGetAttr*: an operation's attr values, read from its NodeDef (which has every
// attr set, defaults included), into caller-sized buffers as TensorFlow's C API does. A
// missing attr is NOT_FOUND, an attr of another kind INVALID_ARGUMENT.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_attr.h"
#include "framework/status.h"
#include "framework/types.h"
#include "proto/attr_value.pb.h"

namespace sluice {
namespace {

// The attr `attr_name` of `oper`, NOT_FOUND when it has none. `fn` names the caller in errors.
absl::StatusOr<const AttrValue*> FindAttr(TF_Operation* oper, const char* attr_name,
                                          absl::string_view fn) {
  if (oper == nullptr) return NullArgument(fn, "oper");
  if (attr_name == nullptr) return NullArgument(fn, "attr_name");
  const auto& attrs = oper->node->def().attr();
  auto it = attrs.find(attr_name);
  if (it == attrs.end()) {
    return absl::NotFoundError(absl::StrCat(fn, ": operation '", oper->node->name(),
                                            "' has no attr named '", attr_name, "'"));
  }
  return &it->second;
}

// INVALID_ARGUMENT naming what the attr holds and what the caller wanted.
absl::Status WrongKind(TF_Operation* oper, const char* attr_name, const AttrValue& value,
                       absl::string_view want, absl::string_view fn) {
  return absl::InvalidArgumentError(absl::StrCat(fn, ": attr '", attr_name, "' of operation '",
                                                 oper->node->name(), "' is ",
                                                 AttrValueTypeName(value), ", not ", want));
}

// The attr as a single value of kind `want` (an AttrValue::ValueCase).
absl::StatusOr<const AttrValue*> FindScalar(TF_Operation* oper, const char* attr_name,
                                            AttrValue::ValueCase want, absl::string_view want_name,
                                            absl::string_view fn) {
  SL_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(oper, attr_name, fn));
  if (v->value_case() != want) return WrongKind(oper, attr_name, *v, want_name, fn);
  return v;
}

// Elements of each kind a list holds.
int ListSizeOf(const AttrValue::ListValue& l, TF_AttrType kind) {
  switch (kind) {
    case TF_ATTR_STRING: return l.s_size();
    case TF_ATTR_INT: return l.i_size();
    case TF_ATTR_FLOAT: return l.f_size();
    case TF_ATTR_BOOL: return l.b_size();
    case TF_ATTR_TYPE: return l.type_size();
    case TF_ATTR_SHAPE: return l.shape_size();
    case TF_ATTR_TENSOR: return l.tensor_size();
    case TF_ATTR_FUNC: return l.func_size();
    default: return 0;
  }
}

constexpr TF_AttrType kListKinds[] = {TF_ATTR_STRING, TF_ATTR_INT,   TF_ATTR_FLOAT,
                                      TF_ATTR_BOOL,   TF_ATTR_TYPE,  TF_ATTR_SHAPE,
                                      TF_ATTR_TENSOR, TF_ATTR_FUNC};

// The attr as a list whose elements are of kind `want` (an empty list is a list of any kind).
absl::StatusOr<const AttrValue::ListValue*> FindList(TF_Operation* oper, const char* attr_name,
                                                     TF_AttrType want,
                                                     absl::string_view want_name,
                                                     absl::string_view fn) {
  SL_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(oper, attr_name, fn));
  if (v->value_case() != AttrValue::kList) return WrongKind(oper, attr_name, *v, want_name, fn);
  for (TF_AttrType kind : kListKinds) {
    if (kind != want && ListSizeOf(v->list(), kind) > 0) {
      return WrongKind(oper, attr_name, *v, want_name, fn);
    }
  }
  return &v->list();
}

absl::StatusOr<TF_AttrMetadata> Metadata(TF_Operation* oper, const char* attr_name) {
  constexpr char kFn[] = "TF_OperationGetAttrMetadata";
  SL_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(oper, attr_name, kFn));
  TF_AttrMetadata m;
  m.is_list = 0;
  m.list_size = -1;
  m.type = TF_ATTR_STRING;
  m.total_size = -1;
  switch (v->value_case()) {
    case AttrValue::kS:
      m.total_size = static_cast<int64_t>(v->s().size());
      return m;
    case AttrValue::kI: m.type = TF_ATTR_INT; return m;
    case AttrValue::kF: m.type = TF_ATTR_FLOAT; return m;
    case AttrValue::kB: m.type = TF_ATTR_BOOL; return m;
    case AttrValue::kType: m.type = TF_ATTR_TYPE; return m;
    case AttrValue::kShape:
      m.type = TF_ATTR_SHAPE;
      m.total_size = v->shape().unknown_rank() ? -1 : v->shape().dim_size();
      return m;
    case AttrValue::kTensor: m.type = TF_ATTR_TENSOR; return m;
    case AttrValue::kFunc: m.type = TF_ATTR_FUNC; return m;
    case AttrValue::kPlaceholder: m.type = TF_ATTR_PLACEHOLDER; return m;
    case AttrValue::kList: break;
    case AttrValue::VALUE_NOT_SET:
      return absl::InvalidArgumentError(absl::StrCat(kFn, ": attr '", attr_name,
                                                     "' of operation '", oper->node->name(),
                                                     "' has no value"));
  }
  const AttrValue::ListValue& l = v->list();
  m.is_list = 1;
  m.list_size = 0;
  bool found = false;
  for (TF_AttrType kind : kListKinds) {
    if (ListSizeOf(l, kind) == 0) continue;
    m.type = kind;
    m.list_size = ListSizeOf(l, kind);
    found = true;
    break;
  }
  if (!found) {  // Empty: the kind the OpDef declares.
    for (const OpDef::AttrDef& a : oper->node->op_def().attr()) {
      if (a.name() != attr_name) continue;
      if (!KindOfTypeString(a.type(), &m.type)) {
        return absl::InvalidArgumentError(absl::StrCat(kFn, ": attr '", attr_name,
                                                       "' is an empty list of unknown type '",
                                                       a.type(), "'"));
      }
    }
  }
  if (m.type == TF_ATTR_STRING) {
    m.total_size = 0;
    for (const std::string& s : l.s()) m.total_size += static_cast<int64_t>(s.size());
  } else if (m.type == TF_ATTR_SHAPE) {
    m.total_size = 0;
    for (const TensorShapeProto& s : l.shape()) m.total_size += s.unknown_rank() ? 0 : s.dim_size();
  }
  return m;
}

// Copies the first min(max_values, size) elements of `list` into `values`, converted.
template <typename C, typename List>
void CopyList(const List& list, C* values, int max_values) {
  int n = std::min<int>(max_values, list.size());
  for (int i = 0; i < n; ++i) values[i] = static_cast<C>(list.Get(i));
}

// A tensor attr as a new TF_Tensor.
absl::StatusOr<TF_Tensor*> NewTensorFromProto(const TensorProto& proto) {
  SL_ASSIGN_OR_RETURN(Tensor t, Tensor::FromProto(proto));
  return NewCApiTensor(std::move(t));
}

// The attr names of `oper`, sorted (NodeDef attrs are a map without a stable order).
std::vector<const std::string*> SortedAttrNames(TF_Operation* oper) {
  std::vector<const std::string*> names;
  for (const auto& [name, value] : oper->node->def().attr()) names.push_back(&name);
  std::sort(names.begin(), names.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  return names;
}

}  // namespace

bool KindOfTypeString(absl::string_view type, TF_AttrType* kind) {
  static constexpr struct {
    const char* name;
    TF_AttrType kind;
  } kKinds[] = {{"string", TF_ATTR_STRING}, {"int", TF_ATTR_INT},       {"float", TF_ATTR_FLOAT},
                {"bool", TF_ATTR_BOOL},     {"type", TF_ATTR_TYPE},     {"shape", TF_ATTR_SHAPE},
                {"tensor", TF_ATTR_TENSOR}, {"func", TF_ATTR_FUNC}};
  if (absl::ConsumePrefix(&type, "list(")) {
    if (!absl::ConsumeSuffix(&type, ")")) return false;
  }
  for (const auto& k : kKinds) {
    if (type == k.name) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

}  // namespace sluice

using sluice::AttrValue;
using sluice::SetStatus;

// Sets `status` from `expr` (a StatusOr) and returns from the calling function when it failed;
// otherwise declares `lhs` with its value.
#define SL_CAPI_ASSIGN_OR_RETURN(lhs, expr)  \
  auto lhs##_or = (expr);                    \
  if (!lhs##_or.ok()) {                      \
    SetStatus(status, lhs##_or.status());    \
    return;                                  \
  }                                          \
  auto lhs = *std::move(lhs##_or)

extern "C" {

TF_AttrMetadata TF_OperationGetAttrMetadata(TF_Operation* oper, const char* attr_name,
                                            TF_Status* status) {
  auto m = sluice::Metadata(oper, attr_name);
  SetStatus(status, m.status());
  if (m.ok()) return *m;
  TF_AttrMetadata none;
  none.is_list = 0;
  none.list_size = -1;
  none.type = TF_ATTR_STRING;
  none.total_size = -1;
  return none;
}

void TF_OperationGetAttrString(TF_Operation* oper, const char* attr_name, void* value,
                               size_t max_length, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrString";
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kS, "a string", kFn));
  size_t n = std::min(max_length, v->s().size());
  if (n > 0 && value == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "value"));
    return;
  }
  if (n > 0) std::memcpy(value, v->s().data(), n);
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrStringList(TF_Operation* oper, const char* attr_name, void** values,
                                   size_t* lengths, int max_values, void* storage,
                                   size_t storage_size, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrStringList";
  SL_CAPI_ASSIGN_OR_RETURN(
      l, sluice::FindList(oper, attr_name, TF_ATTR_STRING, "a list(string)", kFn));
  int n = std::min(max_values, l->s_size());
  if (n > 0 && (values == nullptr || lengths == nullptr)) {
    SetStatus(status, sluice::NullArgument(kFn, values == nullptr ? "values" : "lengths"));
    return;
  }
  char* next = static_cast<char*>(storage);
  size_t left = storage == nullptr ? 0 : storage_size;
  for (int i = 0; i < n; ++i) {
    const std::string& s = l->s(i);
    if (s.size() > left) {
      SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                            kFn, ": storage of ", storage_size, " bytes is too small for the ",
                            n, " strings of attr '", attr_name, "'")));
      return;
    }
    values[i] = next;
    lengths[i] = s.size();
    if (!s.empty()) std::memcpy(next, s.data(), s.size());
    next += s.size();
    left -= s.size();
  }
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrInt(TF_Operation* oper, const char* attr_name, int64_t* value,
                            TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kI, "an int",
                                                 "TF_OperationGetAttrInt"));
  if (value != nullptr) *value = v->i();
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrIntList(TF_Operation* oper, const char* attr_name, int64_t* values,
                                int max_values, TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_INT, "a list(int)",
                                               "TF_OperationGetAttrIntList"));
  if (values != nullptr) sluice::CopyList(l->i(), values, max_values);
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrFloat(TF_Operation* oper, const char* attr_name, float* value,
                              TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kF, "a float",
                                                 "TF_OperationGetAttrFloat"));
  if (value != nullptr) *value = v->f();
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrFloatList(TF_Operation* oper, const char* attr_name, float* values,
                                  int max_values, TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_FLOAT, "a list(float)",
                                               "TF_OperationGetAttrFloatList"));
  if (values != nullptr) sluice::CopyList(l->f(), values, max_values);
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrBool(TF_Operation* oper, const char* attr_name, unsigned char* value,
                             TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kB, "a bool",
                                                 "TF_OperationGetAttrBool"));
  if (value != nullptr) *value = v->b() ? 1 : 0;
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrBoolList(TF_Operation* oper, const char* attr_name,
                                 unsigned char* values, int max_values, TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_BOOL, "a list(bool)",
                                               "TF_OperationGetAttrBoolList"));
  if (values != nullptr) sluice::CopyList(l->b(), values, max_values);
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrType(TF_Operation* oper, const char* attr_name, TF_DataType* value,
                             TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kType, "a type",
                                                 "TF_OperationGetAttrType"));
  if (value != nullptr) *value = static_cast<TF_DataType>(v->type());
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrTypeList(TF_Operation* oper, const char* attr_name, TF_DataType* values,
                                 int max_values, TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_TYPE, "a list(type)",
                                               "TF_OperationGetAttrTypeList"));
  if (values != nullptr) sluice::CopyList(l->type(), values, max_values);
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrShape(TF_Operation* oper, const char* attr_name, int64_t* value,
                              int num_dims, TF_Status* status) {
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kShape, "a shape",
                                                 "TF_OperationGetAttrShape"));
  const sluice::TensorShapeProto& shape = v->shape();
  if (!shape.unknown_rank() && value != nullptr) {
    int n = std::min(num_dims, shape.dim_size());
    for (int i = 0; i < n; ++i) value[i] = shape.dim(i).size();
  }
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrShapeList(TF_Operation* oper, const char* attr_name, int64_t** dims,
                                  int* num_dims, int num_shapes, int64_t* storage,
                                  int storage_size, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrShapeList";
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_SHAPE, "a list(shape)",
                                               kFn));
  int n = std::min(num_shapes, l->shape_size());
  if (n > 0 && (dims == nullptr || num_dims == nullptr)) {
    SetStatus(status, sluice::NullArgument(kFn, dims == nullptr ? "dims" : "num_dims"));
    return;
  }
  int64_t* next = storage;
  int left = storage == nullptr ? 0 : storage_size;
  for (int i = 0; i < n; ++i) {
    const sluice::TensorShapeProto& shape = l->shape(i);
    int rank = shape.unknown_rank() ? -1 : shape.dim_size();
    num_dims[i] = rank;
    dims[i] = next;
    if (rank <= 0) continue;
    if (rank > left) {
      SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                            kFn, ": storage of ", storage_size, " dims is too small for the ",
                            n, " shapes of attr '", attr_name, "'")));
      return;
    }
    for (int d = 0; d < rank; ++d) *next++ = shape.dim(d).size();
    left -= rank;
  }
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrTensorShapeProto(TF_Operation* oper, const char* attr_name,
                                         TF_Buffer* value, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrTensorShapeProto";
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kShape, "a shape",
                                                 kFn));
  if (value == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "value"));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(v->shape(), value), kFn));
}

void TF_OperationGetAttrTensorShapeProtoList(TF_Operation* oper, const char* attr_name,
                                             TF_Buffer** values, int max_values,
                                             TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrTensorShapeProtoList";
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_SHAPE, "a list(shape)",
                                               kFn));
  int n = std::min(max_values, l->shape_size());
  if (n > 0 && values == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "values"));
    return;
  }
  for (int i = 0; i < n; ++i) {
    values[i] = TF_NewBuffer();
    absl::Status s = sluice::MessageToBuffer(l->shape(i), values[i]);
    if (!s.ok()) {
      for (int j = 0; j <= i; ++j) {
        TF_DeleteBuffer(values[j]);
        values[j] = nullptr;
      }
      SetStatus(status, sluice::AddContext(s, kFn));
      return;
    }
  }
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrTensor(TF_Operation* oper, const char* attr_name, TF_Tensor** value,
                               TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrTensor";
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindScalar(oper, attr_name, AttrValue::kTensor,
                                                 "a tensor", kFn));
  if (value == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "value"));
    return;
  }
  auto t = sluice::NewTensorFromProto(v->tensor());
  if (!t.ok()) {
    SetStatus(status, sluice::AddContext(t.status(), absl::StrCat(kFn, ": attr '", attr_name,
                                                                  "'")));
    return;
  }
  *value = *t;
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrTensorList(TF_Operation* oper, const char* attr_name, TF_Tensor** values,
                                   int max_values, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrTensorList";
  SL_CAPI_ASSIGN_OR_RETURN(l, sluice::FindList(oper, attr_name, TF_ATTR_TENSOR,
                                               "a list(tensor)", kFn));
  int n = std::min(max_values, l->tensor_size());
  if (n > 0 && values == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "values"));
    return;
  }
  std::vector<TF_Tensor*> tensors;
  for (int i = 0; i < n; ++i) {
    auto t = sluice::NewTensorFromProto(l->tensor(i));
    if (!t.ok()) {
      for (TF_Tensor* done : tensors) TF_DeleteTensor(done);
      SetStatus(status, sluice::AddContext(t.status(), absl::StrCat(kFn, ": attr '", attr_name,
                                                                    "', tensor ", i)));
      return;
    }
    tensors.push_back(*t);
  }
  std::copy(tensors.begin(), tensors.end(), values);
  SetStatus(status, absl::OkStatus());
}

void TF_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name,
                                   TF_Buffer* output_attr_value, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrValueProto";
  SL_CAPI_ASSIGN_OR_RETURN(v, sluice::FindAttr(oper, attr_name, kFn));
  if (output_attr_value == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "output_attr_value"));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(*v, output_attr_value), kFn));
}

int TF_OperationGetNumAttrs(TF_Operation* oper) {
  return oper == nullptr ? 0 : oper->node->def().attr_size();
}

int TF_OperationGetAttrNameLength(TF_Operation* oper, int i) {
  if (oper == nullptr || i < 0 || i >= oper->node->def().attr_size()) return -1;
  return static_cast<int>(sluice::SortedAttrNames(oper)[i]->size());
}

void TF_OperationGetAttrName(TF_Operation* oper, int i, char* output, TF_Status* status) {
  constexpr char kFn[] = "TF_OperationGetAttrName";
  if (oper == nullptr || output == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, oper == nullptr ? "oper" : "output"));
    return;
  }
  int n = oper->node->def().attr_size();
  if (i < 0 || i >= n) {
    SetStatus(status, absl::OutOfRangeError(absl::StrCat(kFn, ": attr index ", i,
                                                         " is out of range (operation '",
                                                         oper->node->name(), "' has ", n,
                                                         " attrs)")));
    return;
  }
  const std::string& name = *sluice::SortedAttrNames(oper)[i];
  std::memcpy(output, name.data(), name.size());
  SetStatus(status, absl::OkStatus());
}

}  // extern "C"

#undef SL_CAPI_ASSIGN_OR_RETURN
