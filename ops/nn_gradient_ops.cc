// Ops that only the backward graphs of convolution, pooling and BatchNormalization use. Each
// takes the forward op's attrs (same names and defaults) so a gradient function can copy them.
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// Output 0 has the shape that input `k` (an int64 vector) holds: its values when they are
// known, else as many unknown dims as it has elements. The optimizer's in-place updates need
// a weight gradient's shape.
ShapeFn ShapeOfInput(int k) {
  return [k](InferenceContext* c) {
    const Tensor* dims = c->input_tensor(k);
    if (dims != nullptr && dims->dtype() == DT_INT64 && dims->dims() == 1) {
      std::vector<int64_t> v(dims->NumElements());
      for (int64_t i = 0; i < dims->NumElements(); ++i) {
        v[i] = dims->flat<int64_t>()[i];
        if (v[i] < 0) return c->Error(absl::StrCat("dimension ", i, " of the gradient's shape is ", v[i]));
      }
      c->set_output(0, PartialShape(absl::MakeConstSpan(v)));
    } else if (c->input(k).rank() == 1 && c->input(k).dim(0) >= 0) {
      c->set_output(0, PartialShape(std::vector<int64_t>(c->input(k).dim(0), -1)));
    }
    return absl::OkStatus();
  };
}

// dx has x's shape (input `x`); the other outputs have the shape of input `param`.
ShapeFn LikeInputs(int x, int param) {
  return [x, param](InferenceContext* c) {
    c->set_output(0, c->input(x));
    for (int i = 1; i < c->num_outputs(); ++i) c->set_output(i, c->input(param));
    return absl::OkStatus();
  };
}

}  // namespace

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
    .SetShapeFn(ShapeOfInput(2))
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
    .SetShapeFn(ShapeOfInput(2))
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
    .SetShapeFn(shape_fn::Unchanged)
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
    .SetShapeFn(ShapeOfInput(1))
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
    .SetShapeFn(LikeInputs(1, 2))
    .Doc("The gradients of BatchNormalization's Y. Inference: with respect to X, scale, B, "
         "and the given mean and var. Training: the statistics are the batch's own (mean and "
         "var are ignored) and dX flows through them; dmean and dvar are zeros.");

}  // namespace sluice
