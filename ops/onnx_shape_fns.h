// Shape functions of ONNX-named ops whose output shapes depend on constant inputs (axes, pads,
// starts, target shapes) or on several inputs' shapes: what the optimizer's shape inference
// (optimizer/graph_item.h) propagates through models whose shapes ONNX's inference left open.
// Each leaves an output unknown rather than guess: a fully known shape lets constant folding
// turn Shape of it into a constant, so a wrong one would be a wrong result.
#ifndef SLUICE_OPS_ONNX_SHAPE_FNS_H_
#define SLUICE_OPS_ONNX_SHAPE_FNS_H_

#include "absl/status/status.h"
#include "ops/shape_inference.h"

namespace sluice {
namespace onnx_shape_fn {

absl::Status Unsqueeze(InferenceContext* c);       // data, axes
absl::Status Squeeze(InferenceContext* c);         // data, [axes]
absl::Status Concat(InferenceContext* c);          // N inputs, attr axis
absl::Status Slice(InferenceContext* c);           // data, starts, ends, [axes], [steps]
absl::Status Expand(InferenceContext* c);          // input, shape
absl::Status Pad(InferenceContext* c);             // data, pads, [constant_value], [axes]
absl::Status Gather(InferenceContext* c);          // data, indices, attr axis
absl::Status ConstantOfShape(InferenceContext* c);  // shape
absl::Status Range(InferenceContext* c);           // start, limit, delta
absl::Status Flatten(InferenceContext* c);         // input, attr axis
absl::Status Gemm(InferenceContext* c);            // a, b, [c], attrs transA, transB
absl::Status BatchMatMul(InferenceContext* c);     // x, y, attrs adj_x, adj_y (ranks >= 2)
absl::Status GlobalPool(InferenceContext* c);      // x: [N, C, 1, ...]
// Every output has input 0's shape (Dropout's output and mask).
absl::Status AllLikeInput(InferenceContext* c);
// Output 0 has input 0's shape, the others stay unknown (LayerNormalization's statistics).
absl::Status FirstLikeInput(InferenceContext* c);
// BatchNormalization: y like x, the statistics (running and saved mean and variance) like
// input_mean (input 3).
absl::Status BatchNormalization(InferenceContext* c);

}  // namespace onnx_shape_fn
}  // namespace sluice

#endif  // SLUICE_OPS_ONNX_SHAPE_FNS_H_
