// ONNX ModelProto -> Sluice GraphDef. The model is checked with the ONNX checker, shapes and
// types are inferred with ONNX's shape inference, and each node is converted by the
// converter registered for its (domain, op, version); an op without one whose ONNX schema
// defines a function body is expanded into that body.
//
//   SL_ASSIGN_OR_RETURN(OnnxGraph g, ImportOnnxFile("model.onnx"));
//   session->Create(g.graph);
//   session->Run({{g.inputs[0].tensor, x}}, {g.outputs[0].tensor}, {}, &out);
#ifndef SLUICE_FRONTEND_ONNX_IMPORTER_H_
#define SLUICE_FRONTEND_ONNX_IMPORTER_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "frontend/onnx/converter.h"
#include "onnx/onnx_pb.h"
#include "proto/graph.pb.h"

namespace sluice {

// A graph input or output: its ONNX name and the Sluice tensor that carries it.
struct OnnxValue {
  std::string name;
  std::string tensor;  // "node:k"; feed or fetch this.
  DataType dtype = DT_INVALID;
  PartialShape shape;
  bool has_default = false;  // An input with an initializer: feeding it is optional.
  // The ONNX type; sequences and optionals (dtype DT_VARIANT) are fed and fetched as scalar
  // variant tensors (framework/tensor_sequence.h).
  onnx::TypeProto type;
};

struct OnnxGraph {
  GraphDef graph;
  std::vector<OnnxValue> inputs;   // In graph-input order (initializer-backed ones included).
  std::vector<OnnxValue> outputs;  // In graph-output order.
  // Shapes of tensors ("node:k", canonical: "node" for output 0) of known rank, from ONNX
  // shape inference or a graph input's declaration (feeds are checked against it). Each node
  // of `graph` carries its own as `_output_shapes`, where the master's optimizer reads them.
  absl::flat_hash_map<std::string, PartialShape> shapes;
};

struct OnnxImportOptions {
  bool check = true;         // Run the ONNX checker first.
  bool infer_shapes = true;  // Run ONNX shape inference first.
  // Whether runs feed the shapes the graph inputs declare. The trainer's data-parallel
  // replicas feed slices of the batch instead, so it says false: OnnxGraph::shapes (and the
  // `_output_shapes` annotations) then keep ranks but no sizes.
  bool fixed_input_shapes = true;
};

// What a step of `graph` feeds and fetches: the tensors of its inputs, the shapes runs feed
// (inputs without a default), the tensors of its outputs (for the optimizer's GraphItem).
struct OnnxGraphEnds {
  std::vector<std::string> inputs;
  absl::flat_hash_map<std::string, PartialShape> feed_shapes;
  std::vector<std::string> outputs;
};
OnnxGraphEnds EndsOf(const OnnxGraph& graph);

absl::StatusOr<OnnxGraph> ImportOnnxModel(onnx::ModelProto model, const OnnxImportOptions& options = {});
absl::StatusOr<OnnxGraph> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options = {});

// The import state; converters reach it through OnnxNodeContext.
class OnnxImporter {
 public:
  struct TensorInfo {
    std::string tensor;
    DataType dtype = DT_INVALID;
    // For a sequence or optional (dtype DT_VARIANT): its ONNX type, which says the element
    // types; unset (no value case) when unknown or for tensors.
    onnx::TypeProto type;
  };

  explicit OnnxImporter(std::unordered_map<std::string, int> opsets) : opsets_(std::move(opsets)) {}

  absl::StatusOr<OnnxGraph> Import(onnx::ModelProto* model);

  // Converts one node (expanding functions); `opsets` gives the versions of its domains.
  absl::Status ConvertNode(const onnx::NodeProto& node,
                           const std::unordered_map<std::string, int>& opsets);

  // Looks a name up here, then in enclosing graphs; a subgraph capturing an outer value gets
  // an _Arg for it (see ImportSubgraph).
  const TensorInfo* Find(const std::string& onnx_name);
  void Bind(const std::string& onnx_name, TensorInfo info) { onnx_tensors_[onnx_name] = std::move(info); }
  // The ONNX type of a sequence or optional value: the one recorded when it was bound, else
  // ONNX shape inference's; null when neither is known.
  const onnx::TypeProto* ValueType(const std::string& onnx_name);
  void SetValueType(const std::string& onnx_name, onnx::TypeProto type);
  DataType DtypeOf(const std::string& tensor) const;
  PartialShape OnnxShape(const std::string& onnx_name) const;
  const Tensor* ConstantValue(const std::string& tensor);

  std::string UniqueNodeName(absl::string_view base);
  // Claims `name` as it is; false when a node already has it.
  bool ReserveNodeName(const std::string& name) { return node_names_.insert(name).second; }
  // Whether this imports an If branch or a loop body (a function of the root graph's library).
  bool is_subgraph() const { return parent_ != nullptr; }
  // Appends a node (already validated); records its output dtypes.
  void AppendNode(NodeDef node, const DataTypeVector& output_types);
  std::string AddConst(const Tensor& value, absl::string_view base);
  GraphDef* graph() { return &graph_; }

  // A subgraph (If branch, Loop or Scan body) as a function of the root graph's library.
  // Its arguments: the graph's inputs (typed `formal_types` where given), then
  // `prior_capture_types` (arguments the body ignores, so that bodies of one node can share an
  // argument list), then the outer values it reads, listed in `captured` as this importer's
  // tensors.
  struct Subgraph {
    std::string function;
    std::vector<std::string> captured;
    DataTypeVector captured_types;
    DataTypeVector output_types;
    std::vector<onnx::TypeProto> output_value_types;  // Per output; set for sequences and optionals.
  };
  absl::StatusOr<Subgraph> ImportSubgraph(const onnx::GraphProto& graph, absl::string_view hint,
                                          const DataTypeVector& formal_types,
                                          const DataTypeVector& prior_capture_types = {});

 private:
  absl::Status ExpandFunction(const onnx::NodeProto& node, const onnx::FunctionProto& function,
                              const std::unordered_map<std::string, int>& opsets);

  std::unordered_map<std::string, int> opsets_;
  GraphDef graph_;
  absl::node_hash_map<std::string, TensorInfo> onnx_tensors_;  // Pointer-stable: contexts keep references.
  absl::flat_hash_map<std::string, DataType> sluice_dtypes_;
  absl::flat_hash_map<std::string, PartialShape> onnx_shapes_;
  absl::flat_hash_map<std::string, onnx::TypeProto> onnx_value_types_;  // Inferred, non-tensor only.
  absl::flat_hash_map<std::string, const TensorProto*> const_protos_;
  absl::node_hash_map<std::string, Tensor> const_values_;  // Pointer-stable: constant_input() hands them out.
  absl::flat_hash_set<std::string> node_names_;
  int function_counter_ = 0;

  OnnxImporter* parent_ = nullptr;  // Set for subgraphs.
  OnnxImporter* root_ = this;       // Owns the function library.
  int first_capture_index_ = 0;
  std::vector<std::string> captured_;  // Outer tensors, in _Arg order after the formals.
  DataTypeVector captured_types_;
  absl::flat_hash_set<std::string> function_names_;  // Root only.
};

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_IMPORTER_H_
