#include "framework/hoisted_constants.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/node_attr.h"
#include "framework/status.h"

namespace sluice {
namespace {

// The Const's value attr when it holds a tensor.
TensorProto* MutableValue(NodeDef* node) {
  auto it = node->mutable_attr()->find("value");
  if (it == node->mutable_attr()->end() || it->second.value_case() != AttrValue::kTensor) return nullptr;
  return it->second.mutable_tensor();
}

}  // namespace

bool IsHoisted(const NodeDef& node) {
  if (node.op() != "Const") return false;
  auto it = node.attr().find(kHoistedAttr);
  return it != node.attr().end() && it->second.value_case() == AttrValue::kB && it->second.b();
}

bool HoistConstant(NodeDef* node, HoistedConstants* table) {
  if (node->op() != "Const" || IsHoisted(*node)) return false;
  TensorProto* value = MutableValue(node);
  if (value == nullptr) return false;
  // The element count the proto claims (a malformed shape is left to the kernel).
  int64_t elements = 1;
  for (const auto& d : value->tensor_shape().dim()) {
    if (d.size() <= 0 || !CheckedMul(elements, d.size(), &elements)) return false;
  }
  if (elements <= kMaxInlineConstElements) return false;
  // Only values the proto itself holds: a compact proto (one float_val filling a shape of
  // 2^29) stays as it is, so that its expansion happens in the Const kernel, under the step's
  // memory budget, and never in the master or on the wire. Every dense encoding (packed
  // values, tensor_content) takes at least half a byte per byte of tensor.
  const int64_t element_bytes = static_cast<int64_t>(std::max<size_t>(DataTypeSize(value->dtype()), 1));
  int64_t tensor_bytes = 0;
  if (!CheckedMul(elements, element_bytes, &tensor_bytes) ||
      static_cast<uint64_t>(tensor_bytes) > 2 * static_cast<uint64_t>(value->ByteSizeLong())) {
    return false;
  }
  absl::StatusOr<Tensor> t = Tensor::FromProto(*value);
  if (!t.ok()) return false;
  // A swap, not Clear(): a cleared proto keeps its strings' capacity, and the weights with it.
  TensorProto small;
  small.set_dtype(value->dtype());
  *small.mutable_tensor_shape() = value->tensor_shape();
  value->Swap(&small);
  (*node->mutable_attr())[kHoistedAttr].set_b(true);
  node->mutable_attr()->erase(kHoistedFromAttr);  // Its value is under its own name now.
  (*table)[node->name()] = *std::move(t);
  return true;
}

void HoistConstants(GraphDef* graph, HoistedConstants* table) {
  for (NodeDef& node : *graph->mutable_node()) HoistConstant(&node, table);
}

absl::Status InlineConstants(const HoistedConstants& table, GraphDef* graph) {
  for (NodeDef& node : *graph->mutable_node()) {
    if (!IsHoisted(node)) continue;
    SL_ASSIGN_OR_RETURN(Tensor value, FindHoistedValue(node, &table));
    TensorProto* proto = MutableValue(&node);
    proto->Clear();
    value.AsProtoTensorContent(proto);
    node.mutable_attr()->erase(kHoistedAttr);
    node.mutable_attr()->erase(kHoistedFromAttr);
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> FindHoistedValue(const NodeDef& node, const HoistedConstants* table) {
  std::string key = node.name();
  auto from = node.attr().find(kHoistedFromAttr);
  if (from != node.attr().end() && from->second.value_case() == AttrValue::kS) key = from->second.s();
  auto it = table == nullptr ? HoistedConstants::const_iterator() : table->find(key);
  if (table == nullptr || it == table->end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Const '", node.name(), "' is marked ", kHoistedAttr,
        " (its value kept outside the graph), but no value was registered with the graph"));
  }
  const Tensor& t = it->second;
  auto attr = node.attr().find("value");
  if (attr != node.attr().end() && attr->second.value_case() == AttrValue::kTensor) {
    const TensorProto& claimed = attr->second.tensor();
    PartialShape shape = PartialShape::FromProto(claimed.tensor_shape());
    if (claimed.dtype() != t.dtype() || !shape.IsCompatibleWith(t.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Const '", node.name(), "': the hoisted value is ", DataTypeString(t.dtype()), " ",
          t.shape().DebugString(), " but the node says ", DataTypeString(claimed.dtype()), " ",
          shape.DebugString()));
    }
  }
  return t;
}

}  // namespace sluice
