// Large constants kept once per process, outside the GraphDefs that name them.
//
// A session's graph travels through many copies: the master keeps it, builds a Graph per
// signature, partitions it into GraphDefs, and each worker splits its part by device and
// builds an executor Graph from it. A ResNet-50's weights rode along in every one of those
// copies (nine at the peak). Hoisting moves the value of each large top-level Const into a
// table of Tensors (their buffers are shared, not copied) and leaves in the NodeDef only the
// value's dtype and shape plus the marker attr "_hoisted"; the table then travels beside the
// graph and the Const kernel reads its Tensor from it.
//
//   HoistedConstants table;
//   HoistConstants(&graph_def, &table);                 // graph_def is now small
//   ... RegisterGraph with graph_def and the table ...
//   InlineConstants(table, &wire_copy);                 // before a GraphDef leaves the process
//
// Small constants (at most kMaxInlineConstElements elements) stay in the graph, where shape
// functions and cost estimates read them. Const nodes inside function bodies are not hoisted.
#ifndef SLUICE_FRAMEWORK_HOISTED_CONSTANTS_H_
#define SLUICE_FRAMEWORK_HOISTED_CONSTANTS_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "framework/tensor.h"
#include "proto/graph.pb.h"

namespace sluice {

// The marker attr of a Const whose value was hoisted into a table.
inline constexpr char kHoistedAttr[] = "_hoisted";
// On a copy of a hoisted Const (the pipeline placement's per-stage copies): the name of the
// Const whose table entry holds its value.
inline constexpr char kHoistedFromAttr[] = "_hoisted_from";
// Constants of at most this many elements stay in the graph (the master's placement reads
// values up to this size for its cost estimates).
inline constexpr int64_t kMaxInlineConstElements = 4096;

// Const node name -> its value.
using HoistedConstants = absl::flat_hash_map<std::string, Tensor>;

// True when `node` is a Const whose value lives in a table.
bool IsHoisted(const NodeDef& node);

// Moves the value of `node` into *table when it is a Const of more than
// kMaxInlineConstElements elements whose value parses and whose proto holds the values (a
// compact proto, one value filling a large shape, stays: it would expand here); otherwise
// leaves it as it is (a value that does not parse fails later, in the Const kernel, as
// before). Returns whether it moved.
bool HoistConstant(NodeDef* node, HoistedConstants* table);

// HoistConstant on every top-level node of *graph.
void HoistConstants(GraphDef* graph, HoistedConstants* table);

// Puts the values of hoisted Consts of *graph back from `table`. A hoisted node that `table`
// does not hold is an error naming it.
absl::Status InlineConstants(const HoistedConstants& table, GraphDef* graph);

// The value of hoisted Const `node` from `table` (null when it is not there), checked against
// the dtype and shape the node kept.
absl::StatusOr<Tensor> FindHoistedValue(const NodeDef& node, const HoistedConstants* table);

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_HOISTED_CONSTANTS_H_
