// Graph rewrites applied to imported ONNX graphs, each preserving results exactly.
//
//   SL_RETURN_IF_ERROR(FuseConvActivations(&onnx_graph));
#ifndef SLUICE_FRONTEND_ONNX_OPTIMIZE_H_
#define SLUICE_FRONTEND_ONNX_OPTIMIZE_H_

#include "absl/status/status.h"
#include "frontend/onnx/importer.h"

namespace sluice {

// A BatchNormalization in inference mode of a float Conv's output (the Conv read by nothing
// else), with constant weights, bias and statistics, is folded into the Conv: new constant
// weights and bias, scaled per output channel by scale / sqrt(var + epsilon). Readers of the
// normalization read the Conv; a graph output keeps its name through an Identity.
absl::Status FoldBatchNormsIntoConvs(OnnxGraph* graph);

// A float Conv whose only consumer is a Relu, or a Clip with constant bounds, takes the
// activation as its `activation` attr (oneDNN applies it as a post-op); the Relu or Clip
// becomes an Identity so its name and tensor stay. Graph outputs are never fused away.
absl::Status FuseConvActivations(OnnxGraph* graph);

// Tensors between 2-D float Convs (and the max pools, channel Concats, Adds, Muls and global
// average pools among them) stay in NHWC order, oneDNN's own layout for these convolutions, so
// no reorder runs between them: Convs get output_layout / input_layout, MaxPool layout NHWC,
// Concat becomes ConcatChannelsNhwc, Add AddNhwc, Mul MulNhwc, GlobalAveragePool
// GlobalAveragePoolNhwc. A tensor stays NHWC only when its producer and every reader can take it;
// graph outputs stay NCHW.
absl::Status UseNhwcBetweenConvs(OnnxGraph* graph);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_OPTIMIZE_H_
