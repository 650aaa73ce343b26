// Reading and writing node attributes with typed accessors and errors that name the node.
//
//   DataType t;
//   SL_RETURN_IF_ERROR(GetNodeAttr(AttrSlice(node_def), "T", &t));
//   AddNodeAttr("transpose_a", false, &node_def);
#ifndef SLUICE_FRAMEWORK_NODE_ATTR_H_
#define SLUICE_FRAMEWORK_NODE_ATTR_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/tensor.h"
#include "framework/tensor_shape.h"
#include "framework/types.h"
#include "proto/attr_value.pb.h"
#include "proto/node_def.pb.h"

namespace sluice {

using AttrMap = google::protobuf::Map<std::string, AttrValue>;

// A read-only view of a node's attrs, remembering the node's name for error messages.
class AttrSlice {
 public:
  AttrSlice(const NodeDef& node) : attrs_(&node.attr()), node_name_(node.name()) {}  // NOLINT
  AttrSlice(const AttrMap& attrs, absl::string_view node_name)
      : attrs_(&attrs), node_name_(node_name) {}
  const AttrValue* Find(absl::string_view name) const;
  absl::string_view node_name() const { return node_name_; }
  const AttrMap& attrs() const { return *attrs_; }

 private:
  const AttrMap* attrs_;
  absl::string_view node_name_;
};

// The attr type an AttrValue holds, in OpDef spelling: "int", "list(type)", ...
std::string AttrValueTypeName(const AttrValue& value);
// Short text form for messages: 5, DT_FLOAT, [1, 2], "NHWC".
std::string SummarizeAttrValue(const AttrValue& value);
bool AttrValuesEqual(const AttrValue& a, const AttrValue& b);

absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::string* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, int64_t* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, int32_t* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, float* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, bool* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, DataType* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, PartialShape* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, Tensor* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, NameAttrList* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::vector<std::string>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::vector<int64_t>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::vector<int32_t>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::vector<float>* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, DataTypeVector* value);
absl::Status GetNodeAttr(const AttrSlice& attrs, absl::string_view name, std::vector<PartialShape>* value);

// Returns `default_value` when the attr is absent; errors only on a wrong type.
template <typename T>
absl::Status GetNodeAttrOr(const AttrSlice& attrs, absl::string_view name, T default_value, T* value) {
  if (attrs.Find(name) == nullptr) {
    *value = std::move(default_value);
    return absl::OkStatus();
  }
  return GetNodeAttr(attrs, name, value);
}

void SetAttrValue(absl::string_view value, AttrValue* out);
inline void SetAttrValue(const char* value, AttrValue* out) { SetAttrValue(absl::string_view(value), out); }
void SetAttrValue(int64_t value, AttrValue* out);
inline void SetAttrValue(int value, AttrValue* out) { SetAttrValue(static_cast<int64_t>(value), out); }
void SetAttrValue(float value, AttrValue* out);
void SetAttrValue(bool value, AttrValue* out);
void SetAttrValue(DataType value, AttrValue* out);
void SetAttrValue(const PartialShape& value, AttrValue* out);
void SetAttrValue(const TensorShape& value, AttrValue* out);
void SetAttrValue(const Tensor& value, AttrValue* out);
void SetAttrValue(absl::Span<const int64_t> value, AttrValue* out);
void SetAttrValue(absl::Span<const float> value, AttrValue* out);
void SetAttrValue(absl::Span<const std::string> value, AttrValue* out);
void SetAttrValue(absl::Span<const DataType> value, AttrValue* out);

template <typename T>
void AddNodeAttr(absl::string_view name, const T& value, NodeDef* node) {
  SetAttrValue(value, &(*node->mutable_attr())[std::string(name)]);
}

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_NODE_ATTR_H_
