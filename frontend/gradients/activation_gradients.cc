// Gradient functions of the activations beyond Relu, Sigmoid, Tanh and LeakyRelu: Elu, Selu,
// Celu, Softplus, Softsign, HardSigmoid, HardSwish, ThresholdedRelu and PRelu. Each is dy times
// the local slope, written with forward ops so that gradients of gradients work. At a kink
// the slope of the side the forward kernel's test puts the point on is used.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::NodeAttr;
using gradient_util::ScalarConst;
using gradient_util::Where;

// Elu: x for x > 0, alpha (e^x - 1) elsewhere, whose slope there is y + alpha.
absl::Status EluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 1.0f));
  const std::string &x = n.inputs[0], &y = n.outputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string a, ScalarConst(b, dt, alpha));
  SL_ASSIGN_OR_RETURN(std::string positive, b->Binary("Onnx>Greater", x, zero));
  SL_ASSIGN_OR_RETURN(std::string slope, b->Binary("Add", y, a));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dy, slope));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Where(b, positive, dy, scaled));
  return absl::OkStatus();
}

// Selu: gamma x for x > 0, gamma alpha (e^x - 1) elsewhere (slope y + gamma alpha there).
absl::Status SeluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 1.67326319217681884765625f));
  SL_ASSIGN_OR_RETURN(float gamma, NodeAttr<float>(n, "gamma", 1.05070102214813232421875f));
  const std::string &x = n.inputs[0], &y = n.outputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string g, ScalarConst(b, dt, gamma));
  SL_ASSIGN_OR_RETURN(std::string ga, ScalarConst(b, dt, static_cast<double>(gamma) * alpha));
  SL_ASSIGN_OR_RETURN(std::string positive, b->Binary("Onnx>Greater", x, zero));
  SL_ASSIGN_OR_RETURN(std::string slope_neg, b->Binary("Add", y, ga));
  SL_ASSIGN_OR_RETURN(auto slope, b->Add("Onnx>Where", {{positive}, {g}, {slope_neg}}));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dy, slope[0]));
  return absl::OkStatus();
}

// Celu: max(0, x) + min(0, alpha (e^(x/alpha) - 1)); slope e^(x/alpha) for x <= 0.
absl::Status CeluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 1.0f));
  const std::string &x = n.inputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string a, ScalarConst(b, dt, alpha));
  SL_ASSIGN_OR_RETURN(std::string positive, b->Binary("Onnx>Greater", x, zero));
  SL_ASSIGN_OR_RETURN(std::string scaled_x, b->Binary("Div", x, a));
  SL_ASSIGN_OR_RETURN(std::string slope, b->Unary("Exp", scaled_x));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dy, slope));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Where(b, positive, dy, scaled));
  return absl::OkStatus();
}

// Softplus: log(1 + e^x), slope sigmoid(x).
absl::Status SoftplusGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string s, b->Unary("Sigmoid", n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], s));
  return absl::OkStatus();
}

// Softsign: x / (1 + |x|), slope 1 / (1 + |x|)^2.
absl::Status SoftsignGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& x = n.inputs[0];
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, b->Dtype(x), 1.0));
  SL_ASSIGN_OR_RETURN(std::string abs, b->Unary("Abs", x));
  SL_ASSIGN_OR_RETURN(std::string d, b->Binary("Add", abs, one));
  SL_ASSIGN_OR_RETURN(std::string d2, b->Binary("Mul", d, d));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Div", dys[0], d2));
  return absl::OkStatus();
}

// HardSigmoid: max(0, min(1, alpha x + beta)), slope alpha where 0 < alpha x + beta < 1.
absl::Status HardSigmoidGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 0.2f));
  SL_ASSIGN_OR_RETURN(float beta, NodeAttr<float>(n, "beta", 0.5f));
  const std::string &x = n.inputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string a, ScalarConst(b, dt, alpha));
  SL_ASSIGN_OR_RETURN(std::string bt, ScalarConst(b, dt, beta));
  SL_ASSIGN_OR_RETURN(std::string ax, b->Binary("Mul", x, a));
  SL_ASSIGN_OR_RETURN(std::string v, b->Binary("Add", ax, bt));
  SL_ASSIGN_OR_RETURN(std::string above, b->Binary("Onnx>Greater", v, zero));
  SL_ASSIGN_OR_RETURN(std::string below, b->Binary("Onnx>Less", v, one));
  SL_ASSIGN_OR_RETURN(std::string inside, b->Binary("Onnx>And", above, below));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dy, a));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Where(b, inside, scaled, zero));
  return absl::OkStatus();
}

// HardSwish: x hardsigmoid(x) with alpha 1/6, beta 1/2: slope 0 below -3, 1 above 3, and
// (2x + 3) / 6 between.
absl::Status HardSwishGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string three, ScalarConst(b, dt, 3.0));
  SL_ASSIGN_OR_RETURN(std::string minus_three, ScalarConst(b, dt, -3.0));
  SL_ASSIGN_OR_RETURN(std::string third, ScalarConst(b, dt, 1.0 / 3.0));
  SL_ASSIGN_OR_RETURN(std::string half, ScalarConst(b, dt, 0.5));
  SL_ASSIGN_OR_RETURN(std::string x3, b->Binary("Mul", x, third));
  SL_ASSIGN_OR_RETURN(std::string middle, b->Binary("Add", x3, half));
  SL_ASSIGN_OR_RETURN(std::string high, b->Binary("Onnx>Greater", x, three));
  SL_ASSIGN_OR_RETURN(std::string low, b->Binary("Onnx>Less", x, minus_three));
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string upper, Where(b, high, one, middle));
  SL_ASSIGN_OR_RETURN(std::string slope, Where(b, low, zero, upper));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dy, slope));
  return absl::OkStatus();
}

// ThresholdedRelu: x where x > alpha, 0 elsewhere.
absl::Status ThresholdedReluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 1.0f));
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string a, ScalarConst(b, dt, alpha));
  SL_ASSIGN_OR_RETURN(std::string above, b->Binary("Onnx>Greater", x, a));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Where(b, above, dys[0], zero));
  return absl::OkStatus();
}

// PRelu: x for x >= 0, slope * x below (slope broadcast to x): dx = dy or dy slope, dslope the
// dy x of the negative elements, summed back to slope's shape.
absl::Status PReluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &slope = n.inputs[1], &dy = dys[0];
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, b->Dtype(x), 0.0));
  SL_ASSIGN_OR_RETURN(std::string negative, b->Binary("Onnx>Less", x, zero));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dy, slope));
  SL_ASSIGN_OR_RETURN(std::string dx, Where(b, negative, scaled, dy));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(dx, x));
  SL_ASSIGN_OR_RETURN(std::string dyx, b->Binary("Mul", dy, x));
  SL_ASSIGN_OR_RETURN(std::string ds, Where(b, negative, dyx, zero));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(ds, slope));
  return absl::OkStatus();
}

REGISTER_GRADIENT("Onnx>Elu", EluGrad);
REGISTER_GRADIENT("Onnx>Selu", SeluGrad);
REGISTER_GRADIENT("Onnx>Celu", CeluGrad);
REGISTER_GRADIENT("Softplus", SoftplusGrad);
REGISTER_GRADIENT("Softsign", SoftsignGrad);
REGISTER_GRADIENT("Onnx>HardSigmoid", HardSigmoidGrad);
REGISTER_GRADIENT("Onnx>HardSwish", HardSwishGrad);
REGISTER_GRADIENT("Onnx>ThresholdedRelu", ThresholdedReluGrad);
REGISTER_GRADIENT("Onnx>PRelu", PReluGrad);

}  // namespace
}  // namespace sluice
