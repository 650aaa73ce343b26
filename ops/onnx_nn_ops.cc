// Neural-network ops with ONNX semantics: convolution, pooling, normalization, Gemm, Dropout.
// Names, attrs and defaults are ONNX's; optional inputs are list(type) args of length 0 or 1.
#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/onnx_shape_fns.h"
#include "ops/op_registry.h"
#include "ops/type_lists.h"

namespace sluice {

REGISTER_OP("Onnx>Gemm")
    .Input("a: T")
    .Input("b: T")
    .Input("c: Tc")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatOrWideIntTypes))
    .Attr("Tc: list(type) >= 0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 1.0")
    .Attr("transA: int = 0")
    .Attr("transB: int = 0")
    .SetShapeFn(onnx_shape_fn::Gemm)
    .Doc("Y = alpha * A' * B' + beta * C, C broadcast to Y.");

// DeformConv-19: Conv whose every kernel tap reads the input at its place moved by `offset`
// (bilinearly, zero outside) and scaled by `mask`. Only 2-D in Sluice's kernel.
REGISTER_OP("Onnx>DeformConv")
    .Input("x: T")
    .Input("w: T")
    .Input("offset: T")
    .Input("b: Tb")
    .Input("mask: Tmask")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("Tb: list(type) >= 0")
    .Attr("Tmask: list(type) >= 0")
    .Attr("dilations: list(int) = []")
    .Attr("group: int = 1")
    .Attr("kernel_shape: list(int) = []")
    .Attr("offset_group: int = 1")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []");

REGISTER_OP("Onnx>Conv")
    .Input("x: T")
    .Input("w: T")
    .Input("b: Tb")
    .Input("residual: Tr")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("Tb: list(type) >= 0")
    .Attr("Tr: list(type) >= 0 = []")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("dilations: list(int) = []")
    .Attr("group: int >= 1 = 1")
    .Attr("kernel_shape: list(int) = []")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Attr("activation: {'', 'Relu', 'Clip', 'LeakyRelu', 'HardSwish', 'HardSigmoid', 'Sigmoid', 'Swish'} = ''")
    .Attr("activation_params: list(float) = []")
    .Attr("input_layout: {'NCHW', 'NHWC'} = 'NCHW'")
    .Attr("output_layout: {'NCHW', 'NHWC'} = 'NCHW'")
    .Doc("With activation, it is applied to Y (a fusion the ONNX importer makes): Relu, "
         "Clip(min, max = activation_params), LeakyRelu(alpha), HardSwish, HardSigmoid(alpha, "
         "beta), Sigmoid, or Swish (Y * Sigmoid(Y)). With a residual (Y's shape and layout; "
         "the importer fuses a residual Add), Y = activation(Conv + residual). With NHWC layouts (2-D float convolutions only) X or Y "
         "keep their N,C,H,W shape but hold their values in N,H,W,C order: the importer sets "
         "them on Conv -> Conv edges so consecutive convolutions skip two layout reorders.");

REGISTER_OP("Onnx>Col2Im")
    .Input("input: T")
    .Input("image_shape: int64")
    .Input("block_shape: int64")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("dilations: list(int) = []")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Doc("ONNX Col2Im (opset 18): sums N x (C * prod(block_shape)) x L sliding blocks into "
         "N x C x image_shape images.");

REGISTER_OP("Onnx>ConvTranspose")
    .Input("x: T")
    .Input("w: T")
    .Input("b: Tb")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("Tb: list(type) >= 0")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("dilations: list(int) = []")
    .Attr("group: int >= 1 = 1")
    .Attr("kernel_shape: list(int) = []")
    .Attr("output_padding: list(int) = []")
    .Attr("output_shape: list(int) = []")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []");

REGISTER_OP("Onnx>MaxPool")
    .Input("x: T")
    .Output("y: T")
    .Output("indices: int64")
    .Attr("T: {half, bfloat16, float, double, int8, uint8}")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("ceil_mode: int = 0")
    .Attr("dilations: list(int) = []")
    .Attr("kernel_shape: list(int)")
    .Attr("pads: list(int) = []")
    .Attr("storage_order: int = 0")
    .Attr("strides: list(int) = []")
    .Attr("produce_indices: bool = true")
    .Attr("layout: {'NCHW', 'NHWC'} = 'NCHW'")
    .Doc("Without produce_indices (set when nothing reads Indices), Indices is an empty tensor. "
         "With layout NHWC (set by the importer between NHWC convolutions; 2-D float, no "
         "Indices), X and Y keep N,C,H,W shapes but hold values in N,H,W,C order.");

REGISTER_OP("Onnx>AveragePool")
    .Input("x: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("ceil_mode: int = 0")
    .Attr("count_include_pad: int = 0")
    .Attr("dilations: list(int) = []")
    .Attr("kernel_shape: list(int)")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Attr("layout: {'NCHW', 'NHWC'} = 'NCHW'")
    .Doc("With layout NHWC (set by the importer between NHWC convolutions; 2-D float), X and Y "
         "keep N,C,H,W shapes but hold values in N,H,W,C order.");

REGISTER_OP("Onnx>LpPool")
    .Input("x: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("ceil_mode: int = 0")
    .Attr("dilations: list(int) = []")
    .Attr("kernel_shape: list(int)")
    .Attr("p: int = 2")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []");

REGISTER_OP("Onnx>GlobalAveragePool")
    .Input("x: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .SetShapeFn(onnx_shape_fn::GlobalPool);
REGISTER_OP("Onnx>GlobalMaxPool").Input("x: T").Output("y: T").Attr(absl::StrCat("T: ", kFloatTypes)).SetShapeFn(onnx_shape_fn::GlobalPool);
REGISTER_OP("Onnx>GlobalLpPool")
    .Input("x: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("p: int = 2");

REGISTER_OP("Onnx>MaxUnpool")
    .Input("x: T")
    .Input("i: int64")
    .Input("output_shape: Ts")
    .Output("output: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("Ts: list(type) >= 0")
    .Attr("kernel_shape: list(int)")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []");

// Every version's outputs: Y, the running statistics, and (versions 1-9) the batch's own.
REGISTER_OP("Onnx>BatchNormalization")
    .Input("x: T")
    .Input("scale: T1")
    .Input("b: T1")
    .Input("input_mean: T2")
    .Input("input_var: T2")
    .Output("y: T")
    .Output("running_mean: T2")
    .Output("running_var: T2")
    .Output("saved_mean: T2")
    .Output("saved_var: T2")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr(absl::StrCat("T1: ", kFloatTypes))
    .Attr(absl::StrCat("T2: ", kFloatTypes))
    .Attr("epsilon: float = 1e-5")
    .Attr("momentum: float = 0.9")
    .Attr("training_mode: bool = false")
    .Attr("spatial: bool = true")
    .SetShapeFn(onnx_shape_fn::BatchNormalization)
    .Doc("Inference: statistics from input_mean/input_var. Training: the batch's population "
         "statistics, with running = input * momentum + batch * (1 - momentum).");

REGISTER_OP("Onnx>InstanceNormalization")
    .Input("input: T")
    .Input("scale: T")
    .Input("b: T")
    .Output("output: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("epsilon: float = 1e-5")
    .SetShapeFn(onnx_shape_fn::FirstLikeInput);

REGISTER_OP("Onnx>LayerNormalization")
    .Input("x: T")
    .Input("scale: T")
    .Input("b: Tb")
    .Output("y: T")
    .Output("mean: U")
    .Output("inv_std_dev: U")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("Tb: list(type) >= 0")
    .Attr("U: {float, bfloat16} = DT_FLOAT")
    .Attr("axis: int = -1")
    .Attr("epsilon: float = 1e-5")
    .Attr("stash_type: int = 1")
    .SetShapeFn(onnx_shape_fn::FirstLikeInput);

REGISTER_OP("Onnx>LRN")
    .Input("x: T")
    .Output("y: T")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("alpha: float = 0.0001")
    .Attr("beta: float = 0.75")
    .Attr("bias: float = 1.0")
    .Attr("size: int >= 1")
    .SetShapeFn(onnx_shape_fn::FirstLikeInput);

REGISTER_OP("Onnx>Dropout")
    .Input("data: T")
    .Input("ratio: T1")
    .Input("training_mode: T2")
    .Output("output: T")
    .Output("mask: bool")
    .Attr(absl::StrCat("T: ", kFloatTypes))
    .Attr("T1: list(type) >= 0")
    .Attr("T2: list(type) >= 0")
    .Attr("seed: int = -1")
    .Attr("default_ratio: float = 0.5")
    .SetIsStateful()
    .SetShapeFn(onnx_shape_fn::AllLikeInput)
    .Doc("Identity with an all-true mask unless training_mode is true; then elements are "
         "dropped with probability ratio and the rest scaled by 1 / (1 - ratio). A seed >= 0 "
         "draws the mask numpy draws after np.random.seed(seed); a negative one is random.");

}  // namespace sluice

namespace sluice {

// TensorFlow's batched matrix product: batch dims broadcast, and x and y must have rank >= 2
// (TensorFlow's rule). ONNX MatMul is this op with vector_operands (not one of TensorFlow's
// attrs), which follows numpy matmul instead: a 1-D x is a row vector, a 1-D y a column
// vector, and the unit dim is dropped from the output.
REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr(absl::StrCat("T: ", kFloatOrWideIntTypes))
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Attr("vector_operands: bool = false")
    .SetShapeFn(onnx_shape_fn::BatchMatMul);

}  // namespace sluice

namespace sluice {

// What the importer puts between convolutions that hand over NHWC tensors through a channel
// Concat: inputs and output have N,C,H,W shapes but hold their values in N,H,W,C order.
REGISTER_OP("ConcatChannelsNhwc")
    .Input("inputs: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: {float}");

// A channel shuffle of `groups` groups (ShuffleNet's Reshape to [N, g, C/g, H, W], Transpose
// of axes 1 and 2, Reshape back to `shape` [N, C, H, W], which the optimizer fuses into one
// node): output channel j * g + i is input channel i * (C/g) + j, x read as the first Reshape
// reads it (any shape of N*C*H*W values). Values N,C,H,W or, with layout NHWC, N,H,W,C
// (between NHWC convolutions; x's own shape then says where its values lie).
REGISTER_OP("ChannelShuffle")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float}")
    .Attr("groups: int >= 1")
    .Attr("shape: list(int)")
    .Attr("layout: {'NCHW', 'NHWC'} = 'NCHW'");

// The same values under the other name of their order: channels_last, an N,C,H,W-shaped
// tensor whose values lie N,H,W,C becomes the [N,H,W,C] tensor they are; otherwise an
// [N,H,W,C] tensor becomes N,C,H,W-shaped with its values lying N,H,W,C. Nothing moves (a
// Transpose between layouts that the NHWC layout pass made free).
REGISTER_OP("NhwcView")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float}")
    .Attr("channels_last: bool");

// Channels [begin, end) of an N,C,H,W-shaped tensor whose values lie N,H,W,C (a Slice of axis 1
// between NHWC convolutions, as ShuffleNet splits its channels).
REGISTER_OP("SliceChannelsNhwc")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float}")
    .Attr("begin: int >= 0")
    .Attr("end: int >= 0");

// Add between such convolutions (a residual connection): shapes as Add's, values N,H,W,C.
REGISTER_OP("AddNhwc")
    .Input("a: T")
    .Input("b: T")
    .Output("c: T")
    .Attr("T: {float}");

// Mul between them (a squeeze-and-excitation block's channel scale), as AddNhwc.
REGISTER_OP("MulNhwc")
    .Input("a: T")
    .Input("b: T")
    .Output("c: T")
    .Attr("T: {float}");

// An inference BatchNormalization between them: y = x * scale[c] + shift[c], with the
// statistics folded into the [C] scale and shift; shapes N,C,H,W, values N,H,W,C. With relu,
// max(y, 0) (a Relu that read it, fused).
REGISTER_OP("ChannelAffineNhwc")
    .Input("x: T")
    .Input("scale: T")
    .Input("shift: T")
    .Output("y: T")
    .Attr("T: {float}")
    .Attr("relu: bool = false");

// GlobalAveragePool of an N,C,H,W tensor holding N,H,W,C values; its [N,C,1,1] output is the
// same in either order.
REGISTER_OP("GlobalAveragePoolNhwc")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float}");

}  // namespace sluice
