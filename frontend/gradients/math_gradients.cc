// Gradient functions of Gemm, the remaining element-wise math and activations, Softmax and
// LogSoftmax, and the reductions; and of the helper ops backward graphs use (so that a
// gradient of a gradient works). Broadcast operands get their gradient summed back to their
// own shape (SumLike).
#include <cmath>
#include <limits>

#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::Int64Const;
using gradient_util::ExpandLike;
using gradient_util::IsFloat;
using gradient_util::KeepReducedDims;
using gradient_util::Kept;
using gradient_util::ListSize;
using gradient_util::NodeAttr;
using gradient_util::ScalarConst;

// Y = alpha A' B' + beta C with A' = transA ? A^T : A (B' likewise). Each operand's gradient
// is itself a Gemm: dA' = alpha dY B'^T, dB' = alpha A'^T dY, transposed back where needed.
absl::Status GemmGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 1.0f));
  SL_ASSIGN_OR_RETURN(float beta, NodeAttr<float>(n, "beta", 1.0f));
  SL_ASSIGN_OR_RETURN(int64_t ta, NodeAttr<int64_t>(n, "transA", 0));
  SL_ASSIGN_OR_RETURN(int64_t tb, NodeAttr<int64_t>(n, "transB", 0));
  const std::string &a = n.inputs[0], &bm = n.inputs[1], &dy = dys[0];
  auto gemm = [&](const std::string& p, const std::string& q, bool tp, bool tq) -> absl::StatusOr<std::string> {
    AttrMap attrs;
    attrs["alpha"] = Attr(alpha);
    attrs["transA"] = Attr(int64_t{tp});
    attrs["transB"] = Attr(int64_t{tq});
    SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>Gemm", {{p}, {q}, {}}, attrs));
    return out[0];
  };
  if (ta == 0) {
    SL_ASSIGN_OR_RETURN((*dxs)[0], gemm(dy, bm, false, tb == 0));
  } else {
    SL_ASSIGN_OR_RETURN((*dxs)[0], gemm(bm, dy, tb != 0, true));
  }
  if (tb == 0) {
    SL_ASSIGN_OR_RETURN((*dxs)[1], gemm(a, dy, ta == 0, false));
  } else {
    SL_ASSIGN_OR_RETURN((*dxs)[1], gemm(dy, a, true, ta != 0));
  }
  if (n.inputs.size() > 2) {
    std::string dc = dy;
    if (beta != 1.0f) {
      SL_ASSIGN_OR_RETURN(std::string k, ScalarConst(b, b->Dtype(dy), beta));
      SL_ASSIGN_OR_RETURN(dc, b->Binary("Mul", dy, k));
    }
    SL_ASSIGN_OR_RETURN((*dxs)[2], b->SumLike(dc, n.inputs[2]));
  }
  return absl::OkStatus();
}

// z = x^e: dx = dy e x^(e-1); de = dy z log(x) where x > 0 (0 elsewhere, where log is not real).
absl::Status PowGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &e = n.inputs[1], &dy = dys[0];
  const DataType dt = b->Dtype(x), et = b->Dtype(e);
  std::string ex = e;
  if (et != dt) {
    AttrMap to;
    to["to"] = Attr(dt);
    SL_ASSIGN_OR_RETURN(ex, b->Unary("Onnx>Cast", e, to));
  }
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string em1, b->Binary("Sub", ex, one));
  SL_ASSIGN_OR_RETURN(std::string p, b->Binary("Pow", x, em1));
  SL_ASSIGN_OR_RETURN(std::string local, b->Binary("Mul", ex, p));
  SL_ASSIGN_OR_RETURN(std::string dx, b->Binary("Mul", dy, local));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(dx, x));
  if (!IsFloat(et)) return absl::OkStatus();
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string positive, b->Binary("Onnx>Greater", x, zero));
  SL_ASSIGN_OR_RETURN(auto safe, b->Add("Onnx>Where", {{positive}, {x}, {one}}));
  SL_ASSIGN_OR_RETURN(std::string log, b->Unary("Log", safe[0]));
  SL_ASSIGN_OR_RETURN(std::string t, b->Binary("Mul", dy, n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string de, b->Binary("Mul", t, log));
  if (et != dt) {
    AttrMap to;
    to["to"] = Attr(et);
    SL_ASSIGN_OR_RETURN(de, b->Unary("Onnx>Cast", de, to));
  }
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(de, e));
  return absl::OkStatus();
}

// dy * 2 / sqrt(pi) * exp(-x^2)
absl::Status ErfGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string& x = n.inputs[0];
  SL_ASSIGN_OR_RETURN(std::string sq, b->Binary("Mul", x, x));
  SL_ASSIGN_OR_RETURN(std::string neg, b->Unary("Neg", sq));
  SL_ASSIGN_OR_RETURN(std::string exp, b->Unary("Exp", neg));
  SL_ASSIGN_OR_RETURN(std::string k, ScalarConst(b, b->Dtype(x), 2.0 / std::sqrt(M_PI)));
  SL_ASSIGN_OR_RETURN(std::string local, b->Binary("Mul", exp, k));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], local));
  return absl::OkStatus();
}

absl::Status AbsGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string sign, b->Unary("Sign", n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], sign));
  return absl::OkStatus();
}

// Slope alpha where x < 0 (the kernel's test), 1 elsewhere.
absl::Status LeakyReluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float alpha, NodeAttr<float>(n, "alpha", 0.01f));
  const DataType dt = b->Dtype(n.inputs[0]);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string k, ScalarConst(b, dt, alpha));
  SL_ASSIGN_OR_RETURN(std::string negative, b->Binary("Onnx>Less", n.inputs[0], zero));
  SL_ASSIGN_OR_RETURN(std::string scaled, b->Binary("Mul", dys[0], k));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>Where", {{negative}, {scaled}, {dys[0]}}));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// dy where x is inside the bounds; a bound gets the dy of the elements it clipped. Floats take
// one ClipGrad pass from Clip's output, strictly inside the bounds (as PyTorch's
// hardtanh_backward from the input: an input on a bound gets none), so the input is dead once
// Clip ran and Clip writes into its buffer; other types compare the input, bounds included.
absl::Status ClipGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &dy = dys[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  auto where = [&](const std::string& cond, const std::string& t, const std::string& f) -> absl::StatusOr<std::string> {
    SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>Where", {{cond}, {t}, {f}}));
    return out[0];
  };
  std::string bound_of[2];  // min and max; empty when absent.
  size_t next = 1;
  for (int k = 0; k < 2; ++k) {
    const bool is_min = k == 0;
    if (ListSize(n, is_min ? "Tmin" : "Tmax") == 0) continue;
    const size_t slot = next++;
    const std::string& v = n.inputs[slot];
    bound_of[k] = v;
    SL_ASSIGN_OR_RETURN(std::string clipped, b->Binary(is_min ? "Onnx>Less" : "Onnx>Greater", x, v));
    SL_ASSIGN_OR_RETURN(std::string dv, where(clipped, dy, zero));
    SL_ASSIGN_OR_RETURN((*dxs)[slot], b->SumLike(dv, v));
  }
  if (bound_of[0].empty() && bound_of[1].empty()) {
    (*dxs)[0] = dy;
    return absl::OkStatus();
  }
  if (dt == DT_FLOAT || dt == DT_DOUBLE) {
    const double unbounded[2] = {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    for (int k = 0; k < 2; ++k) {
      if (bound_of[k].empty()) {
        SL_ASSIGN_OR_RETURN(bound_of[k], ScalarConst(b, dt, unbounded[k]));
      }
    }
    SL_ASSIGN_OR_RETURN(auto out, b->Add("ClipGrad", {{dy}, {n.outputs[0]}, {bound_of[0]}, {bound_of[1]}}));
    (*dxs)[0] = out[0];
    return absl::OkStatus();
  }
  std::string inside;
  for (int k = 0; k < 2; ++k) {
    if (bound_of[k].empty()) continue;
    SL_ASSIGN_OR_RETURN(std::string keep,
                        b->Binary(k == 0 ? "Onnx>GreaterOrEqual" : "Onnx>LessOrEqual", x, bound_of[k]));
    if (inside.empty()) {
      inside = keep;
    } else {
      SL_ASSIGN_OR_RETURN(inside, b->Binary("Onnx>And", inside, keep));
    }
  }
  SL_ASSIGN_OR_RETURN((*dxs)[0], where(inside, dy, zero));
  return absl::OkStatus();
}

// The condition gets no gradient; each branch gets dy where it was chosen.
absl::Status WhereGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &cond = n.inputs[0], &dy = dys[0];
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, b->Dtype(dy), 0.0));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>Where", {{cond}, {dy}, {zero}}));
  SL_ASSIGN_OR_RETURN(auto dy2, b->Add("Onnx>Where", {{cond}, {zero}, {dy}}));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(dx[0], n.inputs[1]));
  SL_ASSIGN_OR_RETURN((*dxs)[2], b->SumLike(dy2[0], n.inputs[2]));
  return absl::OkStatus();
}

// Between floating types the gradient is cast back; other casts are not differentiable.
absl::Status CastGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const DataType from = b->Dtype(n.inputs[0]);
  if (!IsFloat(from) || !IsFloat(b->Dtype(dys[0]))) return absl::OkStatus();
  AttrMap to;
  to["to"] = Attr(from);
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Onnx>Cast", dys[0], to));
  return absl::OkStatus();
}

absl::StatusOr<std::string> SumAlong(GradientBuilder* b, const std::string& t, int64_t axis) {
  SL_ASSIGN_OR_RETURN(std::string axes, Int64Const(b, {axis}));
  AttrMap attrs;
  attrs["keepdims"] = Attr(true);
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>ReduceSum", {{t}, {axes}}, attrs));
  return out[0];
}

// y = softmax(x): dx = y * (dy - sum(dy * y)) along the axis.
absl::Status SoftmaxGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", -1));
  const std::string& y = n.outputs[0];
  SL_ASSIGN_OR_RETURN(std::string p, b->Binary("Mul", dys[0], y));
  SL_ASSIGN_OR_RETURN(std::string s, SumAlong(b, p, axis));
  SL_ASSIGN_OR_RETURN(std::string d, b->Binary("Sub", dys[0], s));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", y, d));
  return absl::OkStatus();
}

// y = log softmax(x): dx = dy - exp(y) * sum(dy) along the axis.
absl::Status LogSoftmaxGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", -1));
  SL_ASSIGN_OR_RETURN(std::string s, SumAlong(b, dys[0], axis));
  SL_ASSIGN_OR_RETURN(std::string p, b->Unary("Exp", n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string t, b->Binary("Mul", p, s));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Sub", dys[0], t));
  return absl::OkStatus();
}

// size(part) / size(whole) in `dt`: the mean's weight per element.
absl::StatusOr<std::string> SizeRatio(GradientBuilder* b, const std::string& part, const std::string& whole, DataType dt) {
  AttrMap to;
  to["to"] = Attr(dt);
  SL_ASSIGN_OR_RETURN(std::string ps, b->Unary("Onnx>Size", part));
  SL_ASSIGN_OR_RETURN(std::string ws, b->Unary("Onnx>Size", whole));
  SL_ASSIGN_OR_RETURN(std::string pf, b->Unary("Onnx>Cast", ps, to));
  SL_ASSIGN_OR_RETURN(std::string wf, b->Unary("Onnx>Cast", ws, to));
  return b->Binary("Div", pf, wf);
}

absl::Status ReduceSumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], ExpandLike(b, k.dy, n.inputs[0]));
  return absl::OkStatus();
}

absl::Status ReduceMeanGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string spread, ExpandLike(b, k.dy, n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string ratio, SizeRatio(b, n.outputs[0], n.inputs[0], b->Dtype(dys[0])));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", spread, ratio));
  return absl::OkStatus();
}

// dy shared equally among the elements equal to the extreme (TensorFlow's convention for ties).
absl::Status ReduceExtremeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  const std::string& x = n.inputs[0];
  AttrMap to;
  to["to"] = Attr(b->Dtype(x));
  SL_ASSIGN_OR_RETURN(std::string eq, b->Binary("Onnx>Equal", x, k.y));
  SL_ASSIGN_OR_RETURN(std::string mask, b->Unary("Onnx>Cast", eq, to));
  SL_ASSIGN_OR_RETURN(std::string count, gradient_util::ReduceKept(b, n, "Onnx>ReduceSum", mask));
  SL_ASSIGN_OR_RETURN(std::string picked, b->Binary("Mul", mask, k.dy));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Div", picked, count));
  return absl::OkStatus();
}

absl::Status AddNGrad(GradientBuilder*, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  for (size_t i = 0; i < n.inputs.size(); ++i) (*dxs)[i] = dys[0];
  return absl::OkStatus();
}

// ONNX Sum broadcasts its inputs together.
absl::Status SumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    SL_ASSIGN_OR_RETURN((*dxs)[i], b->SumLike(dys[0], n.inputs[i]));
  }
  return absl::OkStatus();
}

// SumToShape(t, shape) sums broadcast dims away; its adjoint broadcasts them back.
absl::Status SumToShapeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], ExpandLike(b, dys[0], n.inputs[0]));
  return absl::OkStatus();
}

// ReluGrad(g, f) = g where f > 0: linear in g, piecewise constant in f.
absl::Status ReluGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("ReluGrad", dys[0], n.inputs[1]));
  return absl::OkStatus();
}

// Ops whose outputs are shapes, sizes, or constants given a shape: nothing flows back.
absl::Status NoGradient(GradientBuilder*, const GradientNode&, const Dxs&, Dxs*) { return absl::OkStatus(); }

REGISTER_GRADIENT("Onnx>Gemm", GemmGrad);
REGISTER_GRADIENT("Pow", PowGrad);
REGISTER_GRADIENT("Erf", ErfGrad);
REGISTER_GRADIENT("Abs", AbsGrad);
REGISTER_GRADIENT("Onnx>LeakyRelu", LeakyReluGrad);
REGISTER_GRADIENT("Onnx>Clip", ClipGrad);
REGISTER_GRADIENT("Onnx>Where", WhereGrad);
REGISTER_GRADIENT("Onnx>Cast", CastGrad);
REGISTER_GRADIENT("Onnx>Softmax", SoftmaxGrad);
REGISTER_GRADIENT("Onnx>LogSoftmax", LogSoftmaxGrad);
// TensorFlow's have no axis attr and work on the last axis: the fallback of both.
REGISTER_GRADIENT("Softmax", SoftmaxGrad);
REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGrad);
REGISTER_GRADIENT("Onnx>ReduceSum", ReduceSumGrad);
REGISTER_GRADIENT("Onnx>ReduceMean", ReduceMeanGrad);
REGISTER_GRADIENT("Onnx>ReduceMax", ReduceExtremeGrad);
REGISTER_GRADIENT("Onnx>ReduceMin", ReduceExtremeGrad);
REGISTER_GRADIENT("AddN", AddNGrad);
REGISTER_GRADIENT("Onnx>Sum", SumGrad);
REGISTER_GRADIENT("SumToShape", SumToShapeGrad);
REGISTER_GRADIENT("ReluGrad", ReluGradGrad);
REGISTER_GRADIENT("Onnx>Shape", NoGradient);
REGISTER_GRADIENT("Onnx>Size", NoGradient);
REGISTER_GRADIENT("Onnx>ConstantOfShape", NoGradient);
REGISTER_GRADIENT("MatMulGradShapes", NoGradient);

}  // namespace
}  // namespace sluice
