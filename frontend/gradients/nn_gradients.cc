// Gradient functions of convolution, pooling, BatchNormalization and Dropout, through the
// backward ops of ops/nn_gradient_ops.cc; and of the convolution and average-pooling backward
// ops themselves (each is linear, so its gradient is the forward op again), for gradients of
// gradients.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::ListSize;
using gradient_util::CopyAttrs;
using gradient_util::NodeAttr;
using gradient_util::ScalarConst;

AttrMap ConvAttrs(const GradientNode& n) {
  return CopyAttrs(n, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
}

// dY before a fused activation (the importer fuses Relu and Clip into Conv): Relu passes
// where Y > 0, Clip where min < Y < max.
absl::StatusOr<std::string> BeforeActivation(GradientBuilder* b, const GradientNode& n, const std::string& dy) {
  SL_ASSIGN_OR_RETURN(std::string activation, NodeAttr<std::string>(n, "activation", ""));
  const std::string& y = n.outputs[0];
  if (activation.empty()) return dy;
  if (activation == "Relu") return b->Binary("ReluGrad", dy, y);
  if (activation != "Clip") return absl::UnimplementedError(absl::StrCat("Conv activation '", activation, "'"));
  SL_ASSIGN_OR_RETURN(std::vector<float> params, NodeAttr<std::vector<float>>(n, "activation_params", {}));
  if (params.size() != 2) return absl::InvalidArgumentError("a Clip activation needs [min, max]");
  const DataType dt = b->Dtype(y);
  SL_ASSIGN_OR_RETURN(std::string lo, ScalarConst(b, dt, params[0]));
  SL_ASSIGN_OR_RETURN(std::string hi, ScalarConst(b, dt, params[1]));
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string above, b->Binary("Onnx>Greater", y, lo));
  SL_ASSIGN_OR_RETURN(std::string below, b->Binary("Onnx>Less", y, hi));
  SL_ASSIGN_OR_RETURN(std::string inside, b->Binary("Onnx>And", above, below));
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>Where", {{inside}, {dy}, {zero}}));
  return out[0];
}

// dB: dY summed over all dims but the channels, as SumToShape(dY, [M, 1, ..., 1]).
absl::StatusOr<std::string> BiasGrad(GradientBuilder* b, const std::string& dy, const std::string& w,
                                     const std::string& bias) {
  AttrMap spatial;
  spatial["start"] = Attr(int64_t{2});
  SL_ASSIGN_OR_RETURN(std::string kernel, b->Unary("Onnx>Shape", w, spatial));
  SL_ASSIGN_OR_RETURN(std::string rank, b->Unary("Onnx>Shape", kernel));
  AttrMap ones;
  ones["value"] = Attr(Tensor::FromVector<int64_t>({1}, TensorShape({1})));
  ones["dtype"] = Attr(DT_INT64);
  SL_ASSIGN_OR_RETURN(auto unit, b->Add("Onnx>ConstantOfShape", {{rank}}, ones));
  SL_ASSIGN_OR_RETURN(std::string channels, b->Unary("Onnx>Shape", bias));
  AttrMap concat;
  concat["axis"] = Attr(int64_t{0});
  SL_ASSIGN_OR_RETURN(auto target, b->Add("Onnx>Concat", {{channels, unit[0]}}, concat));
  SL_ASSIGN_OR_RETURN(std::string summed, b->Binary("SumToShape", dy, target[0]));
  return b->Binary("Onnx>Reshape", summed, channels);
}

absl::Status ConvGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &w = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string dy, BeforeActivation(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string x_shape, b->Unary("Onnx>Shape", x));
  SL_ASSIGN_OR_RETURN(std::string w_shape, b->Unary("Onnx>Shape", w));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("ConvBackpropInput", {{dy}, {w}, {x_shape}}, ConvAttrs(n)));
  SL_ASSIGN_OR_RETURN(auto dw, b->Add("ConvBackpropFilter", {{x}, {dy}, {w_shape}}, ConvAttrs(n)));
  (*dxs)[0] = dx[0];
  (*dxs)[1] = dw[0];
  // Then the bias and a fused residual (added before the activation), when present.
  SL_ASSIGN_OR_RETURN(DataTypeVector tb, NodeAttr(n, "Tb", DataTypeVector{}));
  SL_ASSIGN_OR_RETURN(DataTypeVector tr, NodeAttr(n, "Tr", DataTypeVector{}));
  if (!tb.empty()) {
    SL_ASSIGN_OR_RETURN((*dxs)[2], BiasGrad(b, dy, w, n.inputs[2]));
  }
  if (!tr.empty()) (*dxs)[2 + tb.size()] = dy;
  return absl::OkStatus();
}

// dX = ConvBackpropInput(dY, W) is the adjoint of Conv(., W), so <ddX, dX> = <Conv(ddX, W), dY>.
absl::Status ConvBackpropInputGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &dy = n.inputs[0], &w = n.inputs[1];
  SL_ASSIGN_OR_RETURN(auto ddy, b->Add("Onnx>Conv", {{dys[0]}, {w}, {}, {}}, ConvAttrs(n)));
  SL_ASSIGN_OR_RETURN(std::string w_shape, b->Unary("Onnx>Shape", w));
  SL_ASSIGN_OR_RETURN(auto dw, b->Add("ConvBackpropFilter", {{dys[0]}, {dy}, {w_shape}}, ConvAttrs(n)));
  (*dxs)[0] = ddy[0];
  (*dxs)[1] = dw[0];
  return absl::OkStatus();
}

// <ddW, ConvBackpropFilter(X, dY)> = <Conv(X, ddW), dY>.
absl::Status ConvBackpropFilterGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &dy = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string x_shape, b->Unary("Onnx>Shape", x));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("ConvBackpropInput", {{dy}, {dys[0]}, {x_shape}}, ConvAttrs(n)));
  SL_ASSIGN_OR_RETURN(auto ddy, b->Add("Onnx>Conv", {{x}, {dys[0]}, {}, {}}, ConvAttrs(n)));
  (*dxs)[0] = dx[0];
  (*dxs)[1] = ddy[0];
  return absl::OkStatus();
}

absl::Status MaxPoolGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (dys[0].empty()) return absl::OkStatus();  // Only Indices was used: not differentiable.
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>MaxPoolGrad", {{n.inputs[0]}, {dys[0]}},
                                      CopyAttrs(n, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                                                    "strides"})));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

AttrMap AveragePoolAttrs(const GradientNode& n) {
  return CopyAttrs(n, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
}

absl::Status AveragePoolGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", n.inputs[0]));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>AveragePoolGrad", {{dys[0]}, {shape}}, AveragePoolAttrs(n)));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// AveragePoolGrad is the adjoint of AveragePool, and the other way round.
absl::Status AveragePoolGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Onnx>AveragePool", dys[0], AveragePoolAttrs(n)));
  return absl::OkStatus();
}

// dY spread evenly: dY / (spatial size), broadcast over X.
absl::Status GlobalAveragePoolGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  AttrMap to;
  to["to"] = Attr(dt);
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", x));
  SL_ASSIGN_OR_RETURN(std::string spread, b->Binary("Onnx>Expand", dys[0], shape));
  SL_ASSIGN_OR_RETURN(std::string ys, b->Unary("Onnx>Size", n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string xs, b->Unary("Onnx>Size", x));
  SL_ASSIGN_OR_RETURN(std::string yf, b->Unary("Onnx>Cast", ys, to));
  SL_ASSIGN_OR_RETURN(std::string xf, b->Unary("Onnx>Cast", xs, to));
  SL_ASSIGN_OR_RETURN(std::string ratio, b->Binary("Div", yf, xf));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", spread, ratio));
  return absl::OkStatus();
}

// dY to the positions equal to the maximum, shared among ties.
absl::Status GlobalMaxPoolGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &y = n.outputs[0];
  AttrMap to;
  to["to"] = Attr(b->Dtype(x));
  SL_ASSIGN_OR_RETURN(std::string eq, b->Binary("Onnx>Equal", x, y));
  SL_ASSIGN_OR_RETURN(std::string mask, b->Unary("Onnx>Cast", eq, to));
  SL_ASSIGN_OR_RETURN(std::string count, b->SumLike(mask, y));
  SL_ASSIGN_OR_RETURN(std::string picked, b->Binary("Mul", mask, dys[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Div", picked, count));
  return absl::OkStatus();
}

// Inputs X, scale, B, mean, var. In training mode Y uses the batch's statistics, so mean and
// var get no gradient and dX includes the path through the statistics.
absl::Status BatchNormGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  for (size_t k = 1; k < dys.size(); ++k) {
    if (!dys[k].empty()) {
      return absl::UnimplementedError("gradients through BatchNormalization's running or saved statistics "
                                      "(outputs 1-4); only Y is differentiable");
    }
  }
  AttrMap attrs = CopyAttrs(n, {"epsilon", "training_mode", "spatial"});
  SL_ASSIGN_OR_RETURN(bool training, NodeAttr<bool>(n, "training_mode", false));
  // Since version 15 the statistics may have their own type; the backward op takes scale's.
  const DataType scale_type = b->Dtype(n.inputs[1]), stats_type = b->Dtype(n.inputs[3]);
  auto cast = [&](const std::string& t, DataType to) -> absl::StatusOr<std::string> {
    if (b->Dtype(t) == to) return t;
    AttrMap a;
    a["to"] = Attr(to);
    return b->Unary("Onnx>Cast", t, a);
  };
  SL_ASSIGN_OR_RETURN(std::string mean, cast(n.inputs[3], scale_type));
  SL_ASSIGN_OR_RETURN(std::string var, cast(n.inputs[4], scale_type));
  SL_ASSIGN_OR_RETURN(auto g, b->Add("Onnx>BatchNormalizationGrad",
                                     {{dys[0]}, {n.inputs[0]}, {n.inputs[1]}, {mean}, {var}}, attrs));
  (*dxs)[0] = g[0];
  (*dxs)[1] = g[1];
  (*dxs)[2] = g[2];
  if (!training) {
    SL_ASSIGN_OR_RETURN((*dxs)[3], cast(g[3], stats_type));
    SL_ASSIGN_OR_RETURN((*dxs)[4], cast(g[4], stats_type));
  }
  return absl::OkStatus();
}

// Inputs data, then ratio and training_mode when present. Y = X * mask * s with s = 1 / (1 -
// ratio) in training mode and 1 otherwise (where the mask is all true).
absl::Status DropoutGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (dys[0].empty()) return absl::OkStatus();  // Only the mask was used.
  const int has_ratio = ListSize(n, "T1"), has_training = ListSize(n, "T2");
  if (has_training == 0) {
    (*dxs)[0] = dys[0];
    return absl::OkStatus();
  }
  const DataType dt = b->Dtype(n.inputs[0]);
  AttrMap to;
  to["to"] = Attr(dt);
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  std::string ratio;
  if (has_ratio) {
    SL_ASSIGN_OR_RETURN(ratio, b->Unary("Onnx>Cast", n.inputs[1], to));
  } else {
    SL_ASSIGN_OR_RETURN(float r, NodeAttr<float>(n, "default_ratio", 0.5f));
    SL_ASSIGN_OR_RETURN(ratio, ScalarConst(b, dt, r));
  }
  std::string training = n.inputs[1 + has_ratio];
  if (b->Dtype(training) != DT_BOOL) {
    AttrMap to_bool;
    to_bool["to"] = Attr(DT_BOOL);
    SL_ASSIGN_OR_RETURN(training, b->Unary("Onnx>Cast", training, to_bool));
  }
  SL_ASSIGN_OR_RETURN(std::string keep, b->Binary("Sub", one, ratio));
  SL_ASSIGN_OR_RETURN(std::string scale, b->Binary("Div", one, keep));
  SL_ASSIGN_OR_RETURN(auto s, b->Add("Onnx>Where", {{training}, {scale}, {one}}));
  SL_ASSIGN_OR_RETURN(std::string mask, b->Unary("Onnx>Cast", n.outputs[1], to));
  SL_ASSIGN_OR_RETURN(std::string kept, b->Binary("Mul", dys[0], mask));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", kept, s[0]));
  return absl::OkStatus();
}

REGISTER_GRADIENT("Onnx>Conv", ConvGrad);
REGISTER_GRADIENT("Onnx>ConvBackpropInput", ConvBackpropInputGrad);
REGISTER_GRADIENT("Onnx>ConvBackpropFilter", ConvBackpropFilterGrad);
REGISTER_GRADIENT("Onnx>MaxPool", MaxPoolGrad);
REGISTER_GRADIENT("Onnx>AveragePool", AveragePoolGrad);
REGISTER_GRADIENT("Onnx>AveragePoolGrad", AveragePoolGradGrad);
REGISTER_GRADIENT("Onnx>GlobalAveragePool", GlobalAveragePoolGrad);
REGISTER_GRADIENT("Onnx>GlobalMaxPool", GlobalMaxPoolGrad);
REGISTER_GRADIENT("Onnx>BatchNormalization", BatchNormGrad);
REGISTER_GRADIENT("Onnx>Dropout", DropoutGrad);

}  // namespace
}  // namespace sluice
