// Gradient functions of the elementwise, activation and matrix ops. Broadcast operands get
// their gradient summed back to their own shape (SumLike).
#include "framework/status.h"
#include "frontend/gradients/gradient_util.h"
#include "frontend/gradients/gradients.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;

absl::Status IdentityGrad(GradientBuilder*, const GradientNode&, const Dxs& dys, Dxs* dxs) {
  (*dxs)[0] = dys[0];
  return absl::OkStatus();
}

absl::Status AddGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(dys[0], n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(dys[0], n.inputs[1]));
  return absl::OkStatus();
}

absl::Status SubGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(dys[0], n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string neg, b->Unary("Neg", dys[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(neg, n.inputs[1]));
  return absl::OkStatus();
}

absl::Status MulGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string da, b->Binary("Mul", dys[0], n.inputs[1]));
  SL_ASSIGN_OR_RETURN(std::string db, b->Binary("Mul", dys[0], n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(da, n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(db, n.inputs[1]));
  return absl::OkStatus();
}

// d(a/b) = da / b - db * a / b^2, computed as -(dy * out) / b for the second term.
absl::Status DivGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string da, b->Binary("Div", dys[0], n.inputs[1]));
  SL_ASSIGN_OR_RETURN(std::string t, b->Binary("Mul", dys[0], n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string t2, b->Binary("Div", t, n.inputs[1]));
  SL_ASSIGN_OR_RETURN(std::string db, b->Unary("Neg", t2));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(da, n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(db, n.inputs[1]));
  return absl::OkStatus();
}

absl::Status NegGrad(GradientBuilder* b, const GradientNode&, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Neg", dys[0]));
  return absl::OkStatus();
}

// From Relu's output (positive exactly where its input is), as TensorFlow does: the input is then
// dead once Relu ran, so Relu writes into its buffer and a convolution's output is not kept
// beside its activation until the backward pass (ResNet-18's training RSS: 764 -> 6xx MB).
absl::Status ReluGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("ReluGrad", dys[0], n.outputs[0]));
  return absl::OkStatus();
}

// dy * y * (1 - y)
absl::Status SigmoidGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (b->Dtype(n.outputs[0]) == DT_FLOAT || b->Dtype(n.outputs[0]) == DT_DOUBLE) {  // One pass.
    SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("SigmoidGrad", n.outputs[0], dys[0]));
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(std::string one, b->Fill(n.outputs[0], 1.0));
  SL_ASSIGN_OR_RETURN(std::string rest, b->Binary("Sub", one, n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string local, b->Binary("Mul", n.outputs[0], rest));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], local));
  return absl::OkStatus();
}

// dy * (1 - y^2)
absl::Status TanhGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (b->Dtype(n.outputs[0]) == DT_FLOAT || b->Dtype(n.outputs[0]) == DT_DOUBLE) {  // One pass.
    SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("TanhGrad", n.outputs[0], dys[0]));
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(std::string one, b->Fill(n.outputs[0], 1.0));
  SL_ASSIGN_OR_RETURN(std::string sq, b->Binary("Mul", n.outputs[0], n.outputs[0]));
  SL_ASSIGN_OR_RETURN(std::string local, b->Binary("Sub", one, sq));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], local));
  return absl::OkStatus();
}

absl::Status ExpGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], n.outputs[0]));
  return absl::OkStatus();
}

absl::Status LogGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Div", dys[0], n.inputs[0]));
  return absl::OkStatus();
}

// dy / (2 sqrt(x))
absl::Status SqrtGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string two, b->Fill(n.outputs[0], 2.0));
  SL_ASSIGN_OR_RETURN(std::string denom, b->Binary("Mul", two, n.outputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Div", dys[0], denom));
  return absl::OkStatus();
}

// TensorFlow's Square: d(x^2) = 2x dy.
absl::Status SquareGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string two, b->Fill(n.inputs[0], 2.0));
  SL_ASSIGN_OR_RETURN(std::string two_x, b->Binary("Mul", two, n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", dys[0], two_x));
  return absl::OkStatus();
}

// TensorFlow's StopGradient: nothing flows back.
absl::Status StopGradientGrad(GradientBuilder*, const GradientNode&, const Dxs&, Dxs*) { return absl::OkStatus(); }

AttrMap Adj(bool x, bool y) {
  AttrMap m;
  m["adj_x"].set_b(x);
  m["adj_y"].set_b(y);
  return m;
}

// C = A B (batched): dA = dC B^T, dB = A^T dC, each summed over broadcast batch dims. A 1-D
// operand is viewed as the matrix numpy reads it as (MatMulGradShapes) and reshaped back.
absl::Status BatchMatMulGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  bool adj_x = false, adj_y = false;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(AttrSlice(*n.def), "adj_x", false, &adj_x));
  SL_RETURN_IF_ERROR(GetNodeAttrOr(AttrSlice(*n.def), "adj_y", false, &adj_y));
  const std::string &x = n.inputs[0], &y = n.inputs[1], &g = dys[0];
  if (adj_x || adj_y) {  // Only backward graphs adjoint, and only matrices (TensorFlow's table).
    std::vector<std::string> da, db;
    if (!adj_x) {  // C = A B^T
      SL_ASSIGN_OR_RETURN(da, b->Add("BatchMatMulV2", {{g}, {y}}, Adj(false, false)));
      SL_ASSIGN_OR_RETURN(db, b->Add("BatchMatMulV2", {{g}, {x}}, Adj(true, false)));
    } else if (!adj_y) {  // C = A^T B
      SL_ASSIGN_OR_RETURN(da, b->Add("BatchMatMulV2", {{y}, {g}}, Adj(false, true)));
      SL_ASSIGN_OR_RETURN(db, b->Add("BatchMatMulV2", {{x}, {g}}, Adj(false, false)));
    } else {  // C = A^T B^T
      SL_ASSIGN_OR_RETURN(da, b->Add("BatchMatMulV2", {{y}, {g}}, Adj(true, true)));
      SL_ASSIGN_OR_RETURN(db, b->Add("BatchMatMulV2", {{g}, {x}}, Adj(true, true)));
    }
    SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(da[0], x));
    SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(db[0], y));
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(std::string sx, b->Unary("Onnx>Shape", x));
  SL_ASSIGN_OR_RETURN(std::string sy, b->Unary("Onnx>Shape", y));
  SL_ASSIGN_OR_RETURN(auto shapes, b->Add("MatMulGradShapes", {{sx}, {sy}}));
  SL_ASSIGN_OR_RETURN(std::string x2, b->Binary("Onnx>Reshape", x, shapes[0]));
  SL_ASSIGN_OR_RETURN(std::string y2, b->Binary("Onnx>Reshape", y, shapes[1]));
  SL_ASSIGN_OR_RETURN(std::string g2, b->Binary("Onnx>Reshape", g, shapes[2]));
  std::string da2, db2;
  if (b->Dtype(x) == DT_FLOAT || b->Dtype(x) == DT_DOUBLE) {
    // Each product summed as it is made: a weight's gradient against a batch of activations
    // is one product over the flattened batch, not one per batch then summed.
    SL_ASSIGN_OR_RETURN(auto da, b->Add("BatchMatMulSum", {{g2}, {y2}, {shapes[0]}}, Adj(false, true)));
    SL_ASSIGN_OR_RETURN(auto db, b->Add("BatchMatMulSum", {{x2}, {g2}, {shapes[1]}}, Adj(true, false)));
    da2 = da[0];
    db2 = db[0];
  } else {
    SL_ASSIGN_OR_RETURN(auto da, b->Add("BatchMatMulV2", {{g2}, {y2}}, Adj(false, true)));
    SL_ASSIGN_OR_RETURN(auto db, b->Add("BatchMatMulV2", {{x2}, {g2}}, Adj(true, false)));
    SL_ASSIGN_OR_RETURN(da2, b->Binary("SumToShape", da[0], shapes[0]));
    SL_ASSIGN_OR_RETURN(db2, b->Binary("SumToShape", db[0], shapes[1]));
  }
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Onnx>Reshape", da2, sx));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->Binary("Onnx>Reshape", db2, sy));
  return absl::OkStatus();
}

// z = SigmoidGrad(y, dy) = dy * y * (1 - y): dz/d(dy) is SigmoidGrad again, dz/dy = dy (1 - 2y).
absl::Status SigmoidGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (dys[0].empty()) return absl::OkStatus();
  const std::string &y = n.inputs[0], &dy = n.inputs[1], &g = dys[0];
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->Binary("SigmoidGrad", y, g));
  SL_ASSIGN_OR_RETURN(std::string one, gradient_util::ScalarConst(b, b->Dtype(y), 1.0));
  SL_ASSIGN_OR_RETURN(std::string two, gradient_util::ScalarConst(b, b->Dtype(y), 2.0));
  SL_ASSIGN_OR_RETURN(std::string two_y, b->Binary("Mul", y, two));
  SL_ASSIGN_OR_RETURN(std::string slope, b->Binary("Sub", one, two_y));
  SL_ASSIGN_OR_RETURN(std::string gdy, b->Binary("Mul", g, dy));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", gdy, slope));
  return absl::OkStatus();
}

// z = TanhGrad(y, dy) = dy * (1 - y^2): dz/d(dy) is TanhGrad again, dz/dy = -2 dy y.
absl::Status TanhGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (dys[0].empty()) return absl::OkStatus();
  const std::string &y = n.inputs[0], &dy = n.inputs[1], &g = dys[0];
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->Binary("TanhGrad", y, g));
  SL_ASSIGN_OR_RETURN(std::string minus_two, gradient_util::ScalarConst(b, b->Dtype(y), -2.0));
  SL_ASSIGN_OR_RETURN(std::string gdy, b->Binary("Mul", g, dy));
  SL_ASSIGN_OR_RETURN(std::string gdy_y, b->Binary("Mul", gdy, y));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", gdy_y, minus_two));
  return absl::OkStatus();
}

// BatchMatMulSum = SumToShape(BatchMatMulV2(x, y), shape) (what BatchMatMulGrad emits; its own
// gradient is needed for second order): the incoming gradient spread back over the product's
// shape (recomputed, for its shape), then BatchMatMulV2's gradient.
absl::Status BatchMatMulSumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (dys[0].empty()) return absl::OkStatus();
  bool adj_x = false, adj_y = false;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(AttrSlice(*n.def), "adj_x", false, &adj_x));
  SL_RETURN_IF_ERROR(GetNodeAttrOr(AttrSlice(*n.def), "adj_y", false, &adj_y));
  const std::string &x = n.inputs[0], &y = n.inputs[1];
  SL_ASSIGN_OR_RETURN(auto product, b->Add("BatchMatMulV2", {{x}, {y}}, Adj(adj_x, adj_y)));
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", product[0]));
  SL_ASSIGN_OR_RETURN(std::string spread, b->Binary("Onnx>Expand", dys[0], shape));
  GradientNode inner{n.def, {x, y}, {product[0]}};
  Dxs inner_dxs(2);
  SL_RETURN_IF_ERROR(BatchMatMulGrad(b, inner, {spread}, &inner_dxs));
  (*dxs)[0] = inner_dxs[0];
  (*dxs)[1] = inner_dxs[1];
  return absl::OkStatus();
}

REGISTER_GRADIENT("Identity", IdentityGrad);
REGISTER_GRADIENT("Add", AddGrad);
REGISTER_GRADIENT("AddV2", AddGrad);
REGISTER_GRADIENT("Sub", SubGrad);
REGISTER_GRADIENT("Mul", MulGrad);
REGISTER_GRADIENT("Div", DivGrad);
REGISTER_GRADIENT("RealDiv", DivGrad);
REGISTER_GRADIENT("Neg", NegGrad);
REGISTER_GRADIENT("Relu", ReluGrad);
REGISTER_GRADIENT("Sigmoid", SigmoidGrad);
REGISTER_GRADIENT("Tanh", TanhGrad);
REGISTER_GRADIENT("Exp", ExpGrad);
REGISTER_GRADIENT("Log", LogGrad);
REGISTER_GRADIENT("Sqrt", SqrtGrad);
REGISTER_GRADIENT("Square", SquareGrad);
REGISTER_GRADIENT("StopGradient", StopGradientGrad);
REGISTER_GRADIENT("BatchMatMulV2", BatchMatMulGrad);
REGISTER_GRADIENT("BatchMatMulSum", BatchMatMulSumGrad);
REGISTER_GRADIENT("SigmoidGrad", SigmoidGradGrad);
REGISTER_GRADIENT("TanhGrad", TanhGradGrad);

}  // namespace
}  // namespace sluice
