// Gradient functions of TensorFlow's math ops (ops/tf_math_ops.cc, ops/math_ops.cc), following
// the gradient definitions TensorFlow documents for them: the reductions with axes from the
// `reduction_indices` input, MatMul with transpose_a/transpose_b, Maximum and Minimum,
// SquaredDifference, FloorMod, Rsqrt, TensorFlow's forms of the activations (Softmax and
// LogSoftmax share ONNX's, in math_gradients.cc); the unary ops TensorFlow and ONNX share by
// name (Sin, Reciprocal, Sign...); and the ops TensorFlow declares not differentiable. Integer
// gradients are none, as in TensorFlow.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::CastTo;
using gradient_util::ExpandLike;
using gradient_util::FloatOnly;
using gradient_util::Int64Const;
using gradient_util::NodeAttr;
using gradient_util::ProductOfOthers;
using gradient_util::ScalarConst;

absl::StatusOr<std::string> Select(GradientBuilder* b, const std::string& cond, const std::string& t,
                                   const std::string& e) {
  SL_ASSIGN_OR_RETURN(auto out, b->Add("SelectV2", {{cond}, {t}, {e}}));
  return out[0];
}

// ---- Reductions: Sum, Mean, Max, Min, Prod over `reduction_indices`, keep_dims or not.

// reduction_indices (int32 or int64, a scalar or a vector, negative counted from the end) as
// an int64 vector, which the ONNX reductions and ScatterElements take as they are.
absl::StatusOr<std::string> AxesVector(GradientBuilder* b, const std::string& indices) {
  SL_ASSIGN_OR_RETURN(std::string as64, CastTo(b, indices, DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string flat, Int64Const(b, {-1}));
  return b->Binary("Onnx>Reshape", as64, flat);
}

// What a TensorFlow reduction's backward pass works with: its axes, and the output's shape with
// the reduced dims kept as 1 (TensorFlow's reduced_shape), whatever keep_dims was.
struct Reduced {
  std::string axes, kept_shape;
};

absl::StatusOr<Reduced> DescribeReduction(GradientBuilder* b, const GradientNode& n) {
  Reduced r;
  SL_ASSIGN_OR_RETURN(r.axes, AxesVector(b, n.inputs[1]));
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string ones, b->Fill(r.axes, 1.0));
  AttrMap attrs;
  attrs["axis"] = Attr(int64_t{0});
  SL_ASSIGN_OR_RETURN(auto kept, b->Add("Onnx>ScatterElements", {{shape}, {r.axes}, {ones}}, attrs));
  r.kept_shape = kept[0];
  return r;
}

// `t` reshaped to the kept shape (TensorFlow's Reshape: a 0 there is a 0, not "copy").
absl::StatusOr<std::string> ToKept(GradientBuilder* b, const Reduced& r, const std::string& t) {
  return b->Binary("Reshape", t, r.kept_shape);
}

// The ONNX reduction `op` of `t` over the same axes, dims kept; no axes reduce nothing, as in
// TensorFlow.
absl::StatusOr<std::string> ReduceOver(GradientBuilder* b, const Reduced& r, absl::string_view op,
                                       const std::string& t) {
  AttrMap attrs;
  attrs["keepdims"] = Attr(true);
  attrs["noop_with_empty_axes"] = Attr(true);
  SL_ASSIGN_OR_RETURN(auto out, b->Add(op, {{t}, {r.axes}}, attrs));
  return out[0];
}

// dy broadcast back over the reduced dims (TensorFlow tiles it).
absl::StatusOr<std::string> Spread(GradientBuilder* b, const GradientNode& n, const Reduced& r,
                                   const std::string& dy) {
  SL_ASSIGN_OR_RETURN(std::string kept, ToKept(b, r, dy));
  return ExpandLike(b, kept, n.inputs[0]);
}

absl::Status SumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Reduced r, DescribeReduction(b, n));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Spread(b, n, r, dys[0]));
  return absl::OkStatus();
}

// The sum's gradient divided by how many elements each output averaged: size(x) / size(y).
absl::Status MeanGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Reduced r, DescribeReduction(b, n));
  SL_ASSIGN_OR_RETURN(std::string spread, Spread(b, n, r, dys[0]));
  const DataType dt = b->Dtype(dys[0]);
  SL_ASSIGN_OR_RETURN(std::string in_size, b->Unary("Onnx>Size", n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string out_size, b->Unary("Onnx>Size", n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string in_f, CastTo(b, in_size, dt));
  SL_ASSIGN_OR_RETURN(std::string out_f, CastTo(b, out_size, dt));
  SL_ASSIGN_OR_RETURN(std::string ratio, b->Binary("RealDiv", out_f, in_f));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", spread, ratio));
  return absl::OkStatus();
}

// Max and Min: dy goes to the elements equal to the result, split evenly among ties
// (TensorFlow's indicators / num_selected).
absl::Status ExtremeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Reduced r, DescribeReduction(b, n));
  const std::string& x = n.inputs[0];
  SL_ASSIGN_OR_RETURN(std::string y, ToKept(b, r, n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string dy, ToKept(b, r, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string eq, b->Binary("Equal", x, y));
  SL_ASSIGN_OR_RETURN(std::string indicators, CastTo(b, eq, b->Dtype(x)));
  SL_ASSIGN_OR_RETURN(std::string selected, ReduceOver(b, r, "Onnx>ReduceSum", indicators));
  SL_ASSIGN_OR_RETURN(std::string share, b->Binary("RealDiv", indicators, selected));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", share, dy));
  return absl::OkStatus();
}

// The product of the other elements of each group, without dividing by zero: y / x where x is
// not 0; where it is, the product of the group's nonzero elements if x is its only zero, else 0.
absl::Status ProdGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Reduced r, DescribeReduction(b, n));
  SL_ASSIGN_OR_RETURN(std::string local,
                      ProductOfOthers(b, n.inputs[0], [&](const char* op, const std::string& t) {
                        return ReduceOver(b, r, op, t);
                      }));
  SL_ASSIGN_OR_RETURN(std::string spread, Spread(b, n, r, dys[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", spread, local));
  return absl::OkStatus();
}

// ---- Matrix products.

absl::StatusOr<std::string> MatMul(GradientBuilder* b, const std::string& p, const std::string& q, bool tp,
                                   bool tq) {
  AttrMap attrs;
  attrs["transpose_a"] = Attr(tp);
  attrs["transpose_b"] = Attr(tq);
  return b->Binary("MatMul", p, q, attrs);
}

// TensorFlow's _MatMulGrad: each operand's gradient is itself a MatMul of dy and the other
// operand, transposed to match how the operand was read.
absl::Status MatMulGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(bool ta, NodeAttr<bool>(n, "transpose_a", false));
  SL_ASSIGN_OR_RETURN(bool tb, NodeAttr<bool>(n, "transpose_b", false));
  const std::string &a = n.inputs[0], &bm = n.inputs[1], &g = dys[0];
  if (!ta && !tb) {
    SL_ASSIGN_OR_RETURN((*dxs)[0], MatMul(b, g, bm, false, true));
    SL_ASSIGN_OR_RETURN((*dxs)[1], MatMul(b, a, g, true, false));
  } else if (!ta && tb) {
    SL_ASSIGN_OR_RETURN((*dxs)[0], MatMul(b, g, bm, false, false));
    SL_ASSIGN_OR_RETURN((*dxs)[1], MatMul(b, g, a, true, false));
  } else if (ta && !tb) {
    SL_ASSIGN_OR_RETURN((*dxs)[0], MatMul(b, bm, g, false, true));
    SL_ASSIGN_OR_RETURN((*dxs)[1], MatMul(b, a, g, false, false));
  } else {
    SL_ASSIGN_OR_RETURN((*dxs)[0], MatMul(b, bm, g, true, true));
    SL_ASSIGN_OR_RETURN((*dxs)[1], MatMul(b, g, a, true, true));
  }
  return absl::OkStatus();
}

// ---- Binary element-wise ops (broadcasting: each gradient summed back to its operand's shape).

// Maximum and Minimum: dy goes to x where the selector holds (x >= y, x <= y; x wins ties, as in
// TensorFlow), to y elsewhere.
template <const char* kSelector>
absl::Status MaximumMinimumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &y = n.inputs[1], &dy = dys[0];
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, b->Dtype(dy), 0.0));
  SL_ASSIGN_OR_RETURN(std::string xmask, b->Binary(kSelector, x, y));
  SL_ASSIGN_OR_RETURN(std::string gx, Select(b, xmask, dy, zero));
  SL_ASSIGN_OR_RETURN(std::string gy, Select(b, xmask, zero, dy));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(gx, x));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(gy, y));
  return absl::OkStatus();
}
constexpr char kGreaterEqual[] = "GreaterEqual";
constexpr char kLessEqual[] = "LessEqual";

// (x - y)^2: dx = 2 (x - y) dy, d(y) = -dx.
absl::Status SquaredDifferenceGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &y = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string two, ScalarConst(b, b->Dtype(x), 2.0));
  SL_ASSIGN_OR_RETURN(std::string diff, b->Binary("Sub", x, y));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", two, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string gx, b->Binary("Mul", scaled, diff));
  SL_ASSIGN_OR_RETURN(std::string gy, b->Unary("Neg", gx));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(gx, x));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(gy, y));
  return absl::OkStatus();
}

// x - floor(x / y) y: dx = dy, d(y) = -floor(x / y) dy (TensorFlow's _FloorModGrad).
absl::Status FloorModGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &y = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string q, b->Binary("FloorDiv", x, y));
  SL_ASSIGN_OR_RETURN(std::string t, b->Binary("Mul", dys[0], q));
  SL_ASSIGN_OR_RETURN(std::string gy, b->Unary("Neg", t));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(dys[0], x));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(gy, y));
  return absl::OkStatus();
}

// ---- Unary math.

// y = x^-1/2: dx = -1/2 y^3 dy.
absl::Status RsqrtGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& y = n.outputs[0];
  SL_ASSIGN_OR_RETURN(std::string k, ScalarConst(b, b->Dtype(y), -0.5));
  SL_ASSIGN_OR_RETURN(std::string y2, b->Binary("Mul", y, y));
  SL_ASSIGN_OR_RETURN(std::string y3, b->Binary("Mul", y2, y));
  SL_ASSIGN_OR_RETURN(std::string local, b->Binary("Mul", k, y3));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], local));
  return absl::OkStatus();
}

// y = 1/x: dx = -y^2 dy.
absl::Status ReciprocalGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& y = n.outputs[0];
  SL_ASSIGN_OR_RETURN(std::string y2, b->Binary("Mul", y, y));
  SL_ASSIGN_OR_RETURN(std::string t, b->Binary("Mul", dys[0], y2));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Neg", t));
  return absl::OkStatus();
}

absl::Status SinGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string c, b->Unary("Cos", n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], c));
  return absl::OkStatus();
}

absl::Status CosGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string s, b->Unary("Sin", n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string t, b->Binary("Mul", dys[0], s));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Neg", t));
  return absl::OkStatus();
}

// dy / cos(x)^2
absl::Status TanGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string c, b->Unary("Cos", n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string c2, b->Binary("Mul", c, c));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("RealDiv", dys[0], c2));
  return absl::OkStatus();
}

absl::Status SinhGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string c, b->Unary("Cosh", n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], c));
  return absl::OkStatus();
}

absl::Status CoshGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string s, b->Unary("Sinh", n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], s));
  return absl::OkStatus();
}

// sign * dy / sqrt(k + s x^2): Asin (k 1, s -1, +), Acos (1, -1, -), Asinh (1, 1, +),
// Acosh (-1, 1, +).
template <int kSign, int kConst, int kSquare>
absl::Status InverseTrigGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string k, ScalarConst(b, dt, kConst));
  SL_ASSIGN_OR_RETURN(std::string s, ScalarConst(b, dt, kSquare));
  SL_ASSIGN_OR_RETURN(std::string x2, b->Binary("Mul", x, x));
  SL_ASSIGN_OR_RETURN(std::string sx2, b->Binary("Mul", s, x2));
  SL_ASSIGN_OR_RETURN(std::string sum, b->Binary("Add", k, sx2));
  SL_ASSIGN_OR_RETURN(std::string root, b->Unary("Sqrt", sum));
  SL_ASSIGN_OR_RETURN(std::string dx, b->Binary("RealDiv", dys[0], root));
  if (kSign < 0) {
    SL_ASSIGN_OR_RETURN(dx, b->Unary("Neg", dx));
  }
  (*dxs)[0] = dx;
  return absl::OkStatus();
}

// dy / (1 + s x^2): Atan (s 1), Atanh (s -1).
template <int kSquare>
absl::Status InverseTangentGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string s, ScalarConst(b, dt, kSquare));
  SL_ASSIGN_OR_RETURN(std::string x2, b->Binary("Mul", x, x));
  SL_ASSIGN_OR_RETURN(std::string sx2, b->Binary("Mul", s, x2));
  SL_ASSIGN_OR_RETURN(std::string sum, b->Binary("Add", one, sx2));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("RealDiv", dys[0], sum));
  return absl::OkStatus();
}

// Sign is piecewise constant: TensorFlow gives zeros rather than none.
absl::Status SignGrad(GradientBuilder* b, const GradientNode& n, const Dxs&, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Fill(n.inputs[0], 0.0));
  return absl::OkStatus();
}

// ---- TensorFlow's activations, each dy times the slope TensorFlow's *Grad op uses.

// Relu6Grad: dy where 0 < x < 6.
absl::Status Relu6Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string six, ScalarConst(b, dt, 6.0));
  SL_ASSIGN_OR_RETURN(std::string above, b->Binary("Greater", x, zero));
  SL_ASSIGN_OR_RETURN(std::string below, b->Binary("Less", x, six));
  SL_ASSIGN_OR_RETURN(std::string inside, b->Binary("LogicalAnd", above, below));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Select(b, inside, dys[0], zero));
  return absl::OkStatus();
}

// EluGrad: dy (y + 1) where y < 0, dy elsewhere.
absl::Status EluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &y = n.outputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(y);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string negative, b->Binary("Less", y, zero));
  SL_ASSIGN_OR_RETURN(std::string slope, b->Binary("AddV2", y, one));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dy, slope));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Select(b, negative, scaled, dy));
  return absl::OkStatus();
}

// SeluGrad: dy (y + scale alpha) where y < 0, dy scale elsewhere (TensorFlow's fixed constants).
absl::Status SeluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  const std::string &y = n.outputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(y);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string scale, ScalarConst(b, dt, kScale));
  SL_ASSIGN_OR_RETURN(std::string scale_alpha, ScalarConst(b, dt, kScale * kAlpha));
  SL_ASSIGN_OR_RETURN(std::string negative, b->Binary("Less", y, zero));
  SL_ASSIGN_OR_RETURN(std::string slope_neg, b->Binary("AddV2", y, scale_alpha));
  SL_ASSIGN_OR_RETURN(std::string slope, Select(b, negative, slope_neg, scale));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dy, slope));
  return absl::OkStatus();
}

// LeakyReluGrad: dy where x > 0, alpha dy elsewhere.
absl::Status LeakyReluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 0.2f));
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string a, ScalarConst(b, dt, alpha));
  SL_ASSIGN_OR_RETURN(std::string positive, b->Binary("Greater", x, zero));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dys[0], a));
  SL_ASSIGN_OR_RETURN((*dxs)[0], Select(b, positive, dys[0], scaled));
  return absl::OkStatus();
}

// TensorFlow's NotDifferentiable ops and those whose registered gradient is None (Floor, Ceil,
// Round, FloorDiv, TruncateDiv): nothing flows back, and reaching them is no error.
absl::Status NoGradient(GradientBuilder*, const GradientNode&, const Dxs&, Dxs*) { return absl::OkStatus(); }

REGISTER_GRADIENT("Sum", FloatOnly<SumGrad>);
REGISTER_GRADIENT("Mean", FloatOnly<MeanGrad>);
REGISTER_GRADIENT("Max", FloatOnly<ExtremeGrad>);
REGISTER_GRADIENT("Min", FloatOnly<ExtremeGrad>);
REGISTER_GRADIENT("Prod", FloatOnly<ProdGrad>);
REGISTER_GRADIENT("MatMul", FloatOnly<MatMulGrad>);
REGISTER_GRADIENT("Maximum", FloatOnly<MaximumMinimumGrad<kGreaterEqual>>);
REGISTER_GRADIENT("Minimum", FloatOnly<MaximumMinimumGrad<kLessEqual>>);
REGISTER_GRADIENT("SquaredDifference", FloatOnly<SquaredDifferenceGrad>);
REGISTER_GRADIENT("FloorMod", FloatOnly<FloorModGrad>);
REGISTER_GRADIENT("Rsqrt", RsqrtGrad);
REGISTER_GRADIENT("Reciprocal", ReciprocalGrad);
REGISTER_GRADIENT("Sin", SinGrad);
REGISTER_GRADIENT("Cos", CosGrad);
REGISTER_GRADIENT("Tan", TanGrad);
REGISTER_GRADIENT("Sinh", SinhGrad);
REGISTER_GRADIENT("Cosh", CoshGrad);
REGISTER_GRADIENT("Asin", (InverseTrigGrad<1, 1, -1>));
REGISTER_GRADIENT("Acos", (InverseTrigGrad<-1, 1, -1>));
REGISTER_GRADIENT("Asinh", (InverseTrigGrad<1, 1, 1>));
REGISTER_GRADIENT("Acosh", (InverseTrigGrad<1, -1, 1>));
REGISTER_GRADIENT("Atan", InverseTangentGrad<1>);
REGISTER_GRADIENT("Atanh", InverseTangentGrad<-1>);
REGISTER_GRADIENT("Sign", FloatOnly<SignGrad>);
REGISTER_GRADIENT("Relu6", FloatOnly<Relu6Grad>);
REGISTER_GRADIENT("Elu", EluGrad);
REGISTER_GRADIENT("Selu", SeluGrad);
REGISTER_GRADIENT("LeakyRelu", LeakyReluGrad);
REGISTER_GRADIENT("Floor", NoGradient);
REGISTER_GRADIENT("Ceil", NoGradient);
REGISTER_GRADIENT("Round", NoGradient);
REGISTER_GRADIENT("FloorDiv", NoGradient);
REGISTER_GRADIENT("TruncateDiv", NoGradient);
REGISTER_GRADIENT("Equal", NoGradient);
REGISTER_GRADIENT("NotEqual", NoGradient);
REGISTER_GRADIENT("Less", NoGradient);
REGISTER_GRADIENT("LessEqual", NoGradient);
REGISTER_GRADIENT("Greater", NoGradient);
REGISTER_GRADIENT("GreaterEqual", NoGradient);
REGISTER_GRADIENT("LogicalAnd", NoGradient);
REGISTER_GRADIENT("LogicalOr", NoGradient);
REGISTER_GRADIENT("LogicalNot", NoGradient);
REGISTER_GRADIENT("IsNan", NoGradient);
REGISTER_GRADIENT("IsFinite", NoGradient);
REGISTER_GRADIENT("ArgMax", NoGradient);
REGISTER_GRADIENT("ArgMin", NoGradient);
REGISTER_GRADIENT("All", NoGradient);
REGISTER_GRADIENT("Any", NoGradient);
REGISTER_GRADIENT("Bucketize", NoGradient);

}  // namespace
}  // namespace sluice
