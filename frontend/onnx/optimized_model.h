// Sluice's optimized ONNX model: what ONNX Runtime's SessionOptions.optimized_model_filepath and
// `sluice convert -o MODEL.onnx` write. As ONNX Runtime's optimized models at its extended
// levels hold its own fused ops and load only in ONNX Runtime, Sluice's holds its optimized
// GraphDef and loads only in Sluice: one node, op "GraphDef" of domain "ai.sluice" (version 1),
// between the original's graph inputs and outputs, with the original's metadata.
//
//   node attributes:  graph    STRING   the serialized GraphDef
//                     inputs   STRINGS  per node input, the Placeholder node it feeds
//                     outputs  STRINGS  per node output, the tensor ("node:k") it is
//
//   SL_ASSIGN_OR_RETURN(onnx::ModelProto header, ...);  // the original, its graph not read
//   SL_ASSIGN_OR_RETURN(onnx::ModelProto wrapped, WrapOptimizedGraph(header, optimized));
//
// Loading runs the node's converter (converters/sluice_graph.cc): it splices the GraphDef's
// nodes into the import under the node's name, each Placeholder named in `inputs` becoming an
// Identity of the graph input that feeds it.
#ifndef SLUICE_FRONTEND_ONNX_OPTIMIZED_MODEL_H_
#define SLUICE_FRONTEND_ONNX_OPTIMIZED_MODEL_H_

#include "absl/status/statusor.h"
#include "frontend/onnx/importer.h"
#include "onnx/onnx_pb.h"

namespace sluice {

inline constexpr char kSluiceOnnxDomain[] = "ai.sluice";

// `model` without its graph's contents (nodes, initializers, values): what the wrapped model
// keeps of it. Cheap to take before the model is moved into ImportOnnxModel.
onnx::ModelProto ModelHeader(const onnx::ModelProto& model);

// The wrapped model of `graph` (the import of the model `header` came from, optimized or not).
// Inputs with a default (initializers) stay inside the graph. RESOURCE_EXHAUSTED when the
// GraphDef is too large for one ONNX file (2 GB).
absl::StatusOr<onnx::ModelProto> WrapOptimizedGraph(const onnx::ModelProto& header, const OnnxGraph& graph);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_OPTIMIZED_MODEL_H_
