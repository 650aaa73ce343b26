// Graph rewrites applied to imported ONNX graphs (in this order, unless
// OnnxImportOptions.optimize is false). Each preserves results up to float rounding
// (BatchNormalization folding changes the order of operations).
//
//   SL_RETURN_IF_ERROR(FoldBatchNormsIntoConvs(&onnx_graph));
//   SL_RETURN_IF_ERROR(FuseConvActivations(&onnx_graph));
//   SL_RETURN_IF_ERROR(UseNhwcBetweenConvs(&onnx_graph));
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

// A float Conv whose only consumer is a Relu, LeakyRelu, HardSwish, HardSigmoid, Sigmoid or
// Clip with constant bounds, or that is read only by Mul(y, Sigmoid(y)) (Swish), takes the
// activation as its `activation` attr (oneDNN applies it as a post-op). Readers of the
// activation read the Conv; one that is a graph output stays as an Identity of the Conv, so
// its name and tensor stay.
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
