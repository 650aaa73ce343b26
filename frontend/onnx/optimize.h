// The graph optimizer: a pipeline of passes over imported ONNX graphs (Grappler's shape: each
// pass a function over the whole graph that reports how many rewrites it made). Import runs it
// unless OnnxImportOptions.optimize is false; `sluice convert` prints what each pass did, and
// --no-optimize (or --disable-pass NAME) turns passes off for comparison. Each pass preserves
// results up to float rounding (BatchNormalization folding changes the order of operations).
//
//   SL_ASSIGN_OR_RETURN(auto report, OptimizeOnnxGraph(&onnx_graph, /*disabled=*/{}));
//   for (const auto& r : report) std::printf("%s: %d\n", r.pass.c_str(), r.rewrites);
#ifndef SLUICE_FRONTEND_ONNX_OPTIMIZE_H_
#define SLUICE_FRONTEND_ONNX_OPTIMIZE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx/importer.h"

namespace sluice {

struct OptimizerPass {
  const char* name;     // For --disable-pass and reports.
  const char* summary;  // One line for `sluice convert --help`.
  absl::StatusOr<int> (*run)(OnnxGraph* graph);  // Returns the number of rewrites made.
};

// The passes in pipeline order.
const std::vector<OptimizerPass>& OptimizerPasses();

// Runs every pass not named in `disabled` (an unknown name is INVALID_ARGUMENT listing the
// passes), in order. The report has one row per pass run.
absl::StatusOr<std::vector<OptimizerPassReport>> OptimizeOnnxGraph(OnnxGraph* graph,
                                                                   const std::vector<std::string>& disabled);

// Removes nodes that no graph output reads (directly or through other nodes), except the
// graph's inputs and stateful nodes.
absl::StatusOr<int> RemoveDeadNodes(OnnxGraph* graph);

// A BatchNormalization in inference mode of a float Conv's output (the Conv read by nothing
// else), with constant weights, bias and statistics, is folded into the Conv: new constant
// weights and bias, scaled per output channel by scale / sqrt(var + epsilon). Readers of the
// normalization read the Conv; a graph output keeps its name through an Identity.
absl::StatusOr<int> FoldBatchNormsIntoConvs(OnnxGraph* graph);

// A float Conv whose only consumer is a Relu, LeakyRelu, HardSwish, HardSigmoid, Sigmoid or
// Clip with constant bounds, or that is read only by Mul(y, Sigmoid(y)) (Swish), takes the
// activation as its `activation` attr (oneDNN applies it as a post-op). Readers of the
// activation read the Conv; one that is a graph output stays as an Identity of the Conv, so
// its name and tensor stay.
absl::StatusOr<int> FuseConvActivations(OnnxGraph* graph);

// Tensors between 2-D float Convs (and the max pools, channel Concats, Adds, Muls and global
// average pools among them) stay in NHWC order, oneDNN's own layout for these convolutions, so
// no reorder runs between them: Convs get output_layout / input_layout, MaxPool layout NHWC,
// Concat becomes ConcatChannelsNhwc, Add AddNhwc, Mul MulNhwc, GlobalAveragePool
// GlobalAveragePoolNhwc. A tensor stays NHWC only when its producer and every reader can take it;
// graph outputs stay NCHW.
absl::StatusOr<int> UseNhwcBetweenConvs(OnnxGraph* graph);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_OPTIMIZE_H_
