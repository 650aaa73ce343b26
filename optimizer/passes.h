// The optimizer's passes, one per concern, each a function over a whole GraphItem that returns
// how many rewrites it made (Grappler's GraphOptimizers). The meta-optimizer
// (meta_optimizer.h) runs them in order; each preserves results up to float rounding
// (BatchNormalization folding changes the order of operations). Patterns written with ONNX's
// op names (Onnx>Conv, BatchMatMulV2, ...) are what the ONNX frontend emits.
//
//   GraphItem item = ...;                    // graph_item.h
//   SL_ASSIGN_OR_RETURN(int folded, FoldConstants(&item));
#ifndef SLUICE_OPTIMIZER_PASSES_H_
#define SLUICE_OPTIMIZER_PASSES_H_

#include "absl/status/statusor.h"
#include "optimizer/graph_item.h"

namespace sluice {

// Constant folding (Grappler's): a node of a deterministic, stateless op whose data inputs are
// all Consts (folded ones included, so chains fold) is run once by its kernel (through the
// kernel registry, kernels/node_evaluator.h) and becomes a Const of
// the result under its own name; outputs past the first become Consts "NODE/folded_K". Shape,
// Size and Rank of a tensor whose shape is static (GraphItem::shapes) fold without
// their input. Left as they are: nodes whose evaluation fails (they fail at run time as
// before), results over 64 MiB or over 4x their inputs' bytes (and over 1 MiB), nodes with
// control inputs, and variant or resource values. The Consts only folded nodes read go.
// Folding runs in rounds, shapes inferred again after each (InferItemShapes), while a round
// folds something: shape arithmetic that needs a folded shape to be known folds too.
absl::StatusOr<int> FoldConstants(GraphItem* graph);

// Removes nodes that no graph output reads (directly or through other nodes), except the
// graph's inputs, its keep_nodes (a step's targets) and stateful nodes.
absl::StatusOr<int> RemoveDeadNodes(GraphItem* graph);

// LayerNorm as torch exports it below opset 17, over the last axis of a float x whose length
// is known: d = Sub(x, ReduceMean(x)); Div(d, Sqrt(Add(ReduceMean(Pow(d, 2) or Mul(d, d)),
// eps))), then optionally Mul by a constant scale and Add of a constant bias (one value or one
// per element, either operand order), becomes one LayerNormalization under the last node's name.
// Every node in between must be read only inside the pattern. Statistics then accumulate in
// double, as the kernel does.
absl::StatusOr<int> FuseLayerNorms(GraphItem* graph);

// GELU spelled out, float: Erf(x / sqrt(2)) or Erf(x * (1 / sqrt(2))), or torch's tanh form
// Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)) with x^3 as Pow(x, 3) or Mul(x, Mul(x, x)); then
// Add 1 and Mul by x and 0.5 in any grouping and operand order. It becomes one Gelu
// (approximate "none" or "tanh") under the last Mul's name; x must have a known rank above 0.
absl::StatusOr<int> FuseGelus(GraphItem* graph);

// A float MatMul of a rank-2 A and a constant 2-D B, read only by an Add of a constant bias
// that broadcasts as one row ([N], [1, N], [1] or a scalar), becomes one Gemm (one BLAS call
// with beta = 1) under the Add's name; the MatMul goes. A of rank above 2 ([B, S, K], a
// transformer's linear layer) is reshaped to its rows first, Reshape(Gemm(Reshape(A, [-1, K]),
// B, C), [B, S, N]) under the Add's name, when at most one of its leading dims is unknown.
absl::StatusOr<int> FuseMatMulAdds(GraphItem* graph);

// A float MatMul's right operand made by a Transpose (read by nothing else) that moves its
// input's innermost axis to second-to-last (attention's K^T: [S, B*H, d] -> [B*H, d, S], or
// [B*H, S, d] -> [B*H, d, S]) reads the Transpose with its last two axes left in place and
// sets adj_y, so BLAS reads the matrix transposed; the Transpose goes when nothing else is left
// of it. The strided gather becomes whole-row copies or nothing.
absl::StatusOr<int> FoldTransposesIntoMatMuls(GraphItem* graph);

// A Pad of constant zeros on spatial axes only (N and C unpadded) is folded into the one Conv
// or AveragePool that reads it (auto_pad NOTSET): their pads grow by the Pad's, and the pool
// counts padded cells (count_include_pad 1) as the padded zeros counted before; a pool with
// ceil_mode, or with its own uncounted padding, keeps the Pad. A Pad of all-zero pads goes,
// whatever reads it.
absl::StatusOr<int> FoldPads(GraphItem* graph);

// A BatchNormalization in inference mode of a float Conv's output (the Conv read by nothing
// else), with constant weights, bias and statistics, is folded into the Conv: new constant
// weights and bias, scaled per output channel by scale / sqrt(var + epsilon). Readers of the
// normalization read the Conv; a graph output keeps its name through an Identity. The same
// holds for a float Gemm with constant B (and C, if any, of one row) or a 2-D MatMul with a
// constant right operand, scaled per output column; the MatMul becomes a Gemm.
absl::StatusOr<int> FoldBatchNormsIntoConvs(GraphItem* graph);

// A float Conv whose only consumer is a Relu, LeakyRelu, HardSwish, HardSigmoid, Sigmoid or
// Clip with constant bounds, or that is read only by Mul(y, Sigmoid(y)) (Swish), takes the
// activation as its `activation` attr (oneDNN applies it as a post-op). Readers of the
// activation read the Conv; one that is a graph output stays as an Identity of the Conv, so
// its name and tensor stay.
absl::StatusOr<int> FuseConvActivations(GraphItem* graph);

// A channel shuffle spelled as Reshape(x [N,C,H,W] -> [N,g,C/g,H,W]), Transpose(perm 0,2,1,3,4),
// Reshape back to [N,C,H,W] (ShuffleNet's), shapes known and the intermediates read by nothing
// else, becomes one ChannelShuffle node, which the NHWC layout keeps in the convolutions' layout.
absl::StatusOr<int> FuseChannelShuffles(GraphItem* graph);

// A float ReduceMean over exactly the spatial axes (2 and 3) of a 4-D tensor is a
// GlobalAveragePool (followed by a Flatten when keepdims is 0), which the NHWC layout keeps in
// the convolutions' layout (MnasNet's and EfficientNet's heads spell it as ReduceMean).
absl::StatusOr<int> ReduceMeansToGlobalPools(GraphItem* graph);

// Tensors between 2-D float Convs (and the pools, channel Concats, Adds, Muls, global average
// pools, element-wise functions of one tensor and inference BatchNormalizations among them) stay
// in NHWC order, oneDNN's own layout for these convolutions, so no reorder runs between them:
// Convs get output_layout / input_layout, MaxPool, AveragePool and Resize (nearest or linear, of
// H and W only) layout NHWC, Concat becomes
// ConcatChannelsNhwc, a Slice of channels SliceChannelsNhwc, ChannelShuffle layout NHWC, Add
// AddNhwc, Mul MulNhwc (a Mul by a per-channel constant ChannelAffineNhwc), a Transpose
// between channels-last [N,H,W,C] and N,C,H,W (ConvNeXt's) NhwcView, which moves no value,
// GlobalAveragePool GlobalAveragePoolNhwc, a
// BatchNormalization of constant statistics ChannelAffineNhwc; Relu, Sigmoid, Clip and the other
// element-wise functions stay as they are (they do not care how values lie). A tensor stays
// NHWC only when its producer and every reader can take it; graph outputs stay NCHW.
absl::StatusOr<int> UseNhwcBetweenConvs(GraphItem* graph);

// An Add (or AddNhwc) of a float Conv's output (read by nothing else, no activation yet) and
// another tensor of the same known shape, with no broadcasting, becomes the Conv's residual
// input: oneDNN adds it as a sum post-op, in place in the residual's buffer when nothing else
// reads it, so ResNet's skip connection costs no pass of its own. The activation after the Add
// then fuses into the Conv as FuseConvActivations does. Runs after the layout pass, so the
// residual is in the Conv output's layout.
absl::StatusOr<int> FuseConvResiduals(GraphItem* graph);

// TensorFlow's spelling (Grappler's remapper): a float Conv2D (NHWC or NCHW) of a constant
// filter whose output is read only by a BiasAdd of a constant, an inference FusedBatchNormV3 of
// constant statistics (its other outputs unread) and/or a Relu, Relu6 or LeakyRelu, each read
// only by the next, becomes one Onnx>Conv with the bias and normalization folded into its
// weights and the activation fused, under the last node's name. An NHWC one reads and writes
// its values where they lie, through NhwcViews (no value moves). CPU-placed nodes only.
absl::StatusOr<int> FuseTfConvolutions(GraphItem* graph);

// A float MatMul of a constant 2-D right operand read only by a BiasAdd of a constant row
// becomes one Onnx>Gemm (transposes as attrs) under the BiasAdd's name.
absl::StatusOr<int> FuseTfMatMulBiasAdds(GraphItem* graph);

// An optimizer's update spelled out, W - lr * g assigned back to W, becomes one in-place update:
// AssignVariable(Sub(ReadVariable(v), Mul(lr, g))) of the same variable on the same device
// becomes ApplyGradientDescentVariable(lr, g), and TensorFlow's AssignVariableOp(h,
// Sub(ReadVariableOp(h), Mul(lr, g))) or AssignSubVariableOp(h, Mul(lr, g)) becomes
// ResourceApplyGradientDescent(h, lr, g), under the assign's name, for float and double. lr
// must be a single value (of known shape, rank at most the variable's) and g of the variable's
// known shape (for AssignVariable, any shape that broadcasts to it, known or not: the kernel
// broadcasts as Sub did), in either operand order; the Sub (and the Mul) must be read by
// nothing else. The
// update then writes into the variable's buffer instead of allocating a new value per step, and
// stays ordered after the read the Sub consumed.
absl::StatusOr<int> FuseVariableUpdates(GraphItem* graph);

}  // namespace sluice

#endif  // SLUICE_OPTIMIZER_PASSES_H_
