// Ops that only the backward graphs of convolution, pooling and BatchNormalization use. Each
// takes the forward op's attrs (same names and defaults) so a gradient function can copy them.
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

REGISTER_OP("Onnx>ConvBackpropInput")
    .Input("dy: T")
    .Input("w: T")
    .Input("x_shape: int64")
    .Output("dx: T")
    .Attr("T: {float, double}")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("dilations: list(int) = []")
    .Attr("group: int >= 1 = 1")
    .Attr("kernel_shape: list(int) = []")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Doc("The gradient of Conv's Y with respect to X (of shape x_shape), given dY and W: the "
         "adjoint of the convolution, col2im of W^T dY per image and group.");

REGISTER_OP("Onnx>ConvBackpropFilter")
    .Input("x: T")
    .Input("dy: T")
    .Input("w_shape: int64")
    .Output("dw: T")
    .Attr("T: {float, double}")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("dilations: list(int) = []")
    .Attr("group: int >= 1 = 1")
    .Attr("kernel_shape: list(int) = []")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Doc("The gradient of Conv's Y with respect to W (of shape w_shape), given X and dY: "
         "dY im2col(X)^T summed over the batch, per group.");

REGISTER_OP("Onnx>MaxPoolGrad")
    .Input("x: T")
    .Input("dy: T")
    .Output("dx: T")
    .Attr("T: {float, double}")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("ceil_mode: int = 0")
    .Attr("dilations: list(int) = []")
    .Attr("kernel_shape: list(int)")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Doc("Each dY value added to the X position its window's maximum came from (the first "
         "maximum in window order, as MaxPool picks it).");

REGISTER_OP("Onnx>AveragePoolGrad")
    .Input("dy: T")
    .Input("x_shape: int64")
    .Output("dx: T")
    .Attr("T: {float, double}")
    .Attr("auto_pad: {'NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'} = 'NOTSET'")
    .Attr("ceil_mode: int = 0")
    .Attr("count_include_pad: int = 0")
    .Attr("dilations: list(int) = []")
    .Attr("kernel_shape: list(int)")
    .Attr("pads: list(int) = []")
    .Attr("strides: list(int) = []")
    .Doc("Each dY value spread evenly over the X positions of its window (divided by the "
         "count AveragePool divided by).");

REGISTER_OP("Onnx>BatchNormalizationGrad")
    .Input("dy: T")
    .Input("x: T")
    .Input("scale: U")
    .Input("mean: U")
    .Input("var: U")
    .Output("dx: T")
    .Output("dscale: U")
    .Output("dbias: U")
    .Output("dmean: U")
    .Output("dvar: U")
    .Attr("T: {float, double}")
    .Attr("U: {float, double}")
    .Attr("epsilon: float = 1e-5")
    .Attr("training_mode: bool = false")
    .Attr("spatial: bool = true")
    .Doc("The gradients of BatchNormalization's Y. Inference: with respect to X, scale, B, "
         "and the given mean and var. Training: the statistics are the batch's own (mean and "
         "var are ignored) and dX flows through them; dmean and dvar are zeros.");

}  // namespace sluice
