// Checking a NodeDef against its OpDef, filling defaults, and computing its input/output
// types. Every error names the node.
//
//   AddDefaultsToNodeDef(op_def, &node);
//   SL_RETURN_IF_ERROR(ValidateNodeDef(node, op_def));
//   DataTypeVector in, out;
//   SL_RETURN_IF_ERROR(InOutTypesForNode(node, op_def, &in, &out));
#ifndef SLUICE_FRAMEWORK_NODE_DEF_UTIL_H_
#define SLUICE_FRAMEWORK_NODE_DEF_UTIL_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/node_attr.h"
#include "framework/types.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace sluice {

// The slot of a control edge ("^node") in edge lists.
inline constexpr int kControlSlot = -1;

struct TensorId {
  std::string node;
  int index = 0;  // kControlSlot for "^node".
  std::string ToString() const;  // "node:1", "node" for index 0, "^node" for control.
};
// Parses "node", "node:k" or "^node"; errors on empty names or bad indices.
absl::StatusOr<TensorId> ParseTensorName(absl::string_view name);

// Checks that `value` fits `attr_def` (type, allowed values, minimum).
absl::Status ValidateAttrValue(const AttrValue& value, const OpDef::AttrDef& attr_def);

// Unknown attrs (other than "_"-prefixed ones), missing attrs, wrong attr types, values outside
// the allowed set, and the wrong number of data inputs are errors naming the node.
absl::Status ValidateNodeDef(const NodeDef& node, const OpDef& op_def);
// The same checks except the number of inputs (for nodes whose edges are added later).
absl::Status ValidateNodeDefAttrs(const NodeDef& node, const OpDef& op_def);

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node);

// Types of one arg (several for list args) given the node's attrs.
absl::Status ArgTypes(const AttrSlice& attrs, const OpDef::ArgDef& arg, DataTypeVector* types);
absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op_def, DataTypeVector* inputs,
                               DataTypeVector* outputs);
absl::Status NumOutputsForNode(const NodeDef& node, const OpDef& op_def, int* num_outputs);

// Sets the type, number and type-list attrs an op's input args refer to from the types of the
// inputs given per arg, as TensorFlow's op constructors do ("T" from the first input). Attrs
// already set must agree with the inputs.
absl::Status InferAttrsFromInputTypes(const OpDef& op_def,
                                      const std::vector<DataTypeVector>& arg_types, NodeDef* node);

// Finishes `node` (name, op and attrs already set) as an instance of `op_def` reading `args`,
// the data inputs grouped per input arg, whose dtypes `dtype_of` gives (DT_INVALID for an
// unknown tensor): adds the inputs, infers the type attrs, adds defaults and validates.
// Returns the node's output types. What graph builders (the ONNX importer, TF_AddGradients)
// do for each node they make.
absl::StatusOr<DataTypeVector> AddInputsAndComplete(const OpDef& op_def,
                                                    const std::vector<std::vector<std::string>>& args,
                                                    absl::FunctionRef<DataType(const std::string&)> dtype_of,
                                                    NodeDef* node);

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_NODE_DEF_UTIL_H_
