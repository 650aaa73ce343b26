// Gradient functions of the reductions beyond ReduceSum, ReduceMean, ReduceMax and ReduceMin:
// ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare. The
// output and its gradient are taken back to the input's rank (KeepReducedDims) and broadcast.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::CastTo;
using gradient_util::ExpandLike;
using gradient_util::KeepReducedDims;
using gradient_util::Kept;
using gradient_util::NodeAttr;
using gradient_util::ProductOfOthers;
using gradient_util::ReduceKept;
using gradient_util::ScalarConst;
using gradient_util::Where;

// dx = dy * local, dy broadcast from the reduced shape.
absl::Status Scale(GradientBuilder* b, const GradientNode& n, const Kept& k, const std::string& local, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string spread, ExpandLike(b, k.dy, n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Mul", spread, local));
  return absl::OkStatus();
}

// The product of the others: y / x where x != 0. Where x == 0 it is the product of the
// nonzero elements if x is the group's only zero, else 0, so zeros need no division.
absl::Status ReduceProdGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string local,
                      ProductOfOthers(b, n.inputs[0], [&](const char* op, const std::string& t) {
                        return ReduceKept(b, n, op, t);
                      }));
  return Scale(b, n, k, local, dxs);
}

absl::Status ReduceL1Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string sign, b->Unary("Sign", n.inputs[0]));
  return Scale(b, n, k, sign, dxs);
}

// x / y, and 0 where the norm is 0 (the subgradient of least norm).
absl::Status ReduceL2Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  const std::string& x = n.inputs[0];
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string is_zero, b->Binary("Onnx>Equal", k.y, zero));
  SL_ASSIGN_OR_RETURN(std::string safe, Where(b, is_zero, one, k.y));
  SL_ASSIGN_OR_RETURN(std::string ratio, b->Binary("Div", x, safe));
  SL_ASSIGN_OR_RETURN(std::string local, Where(b, is_zero, zero, ratio));
  return Scale(b, n, k, local, dxs);
}

// y = log(sum x): 1 / sum x = exp(-y).
absl::Status ReduceLogSumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string neg, b->Unary("Neg", k.y));
  SL_ASSIGN_OR_RETURN(std::string inv, b->Unary("Exp", neg));
  return Scale(b, n, k, inv, dxs);
}

// y = log(sum exp x): softmax over the reduced dims, exp(x - y).
absl::Status ReduceLogSumExpGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string d, b->Binary("Sub", n.inputs[0], k.y));
  SL_ASSIGN_OR_RETURN(std::string local, b->Unary("Exp", d));
  return Scale(b, n, k, local, dxs);
}

absl::Status ReduceSumSquareGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(Kept k, KeepReducedDims(b, n, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string two, ScalarConst(b, b->Dtype(n.inputs[0]), 2.0));
  SL_ASSIGN_OR_RETURN(std::string local, b->Binary("Mul", n.inputs[0], two));
  return Scale(b, n, k, local, dxs);
}

REGISTER_GRADIENT("Onnx>ReduceProd", ReduceProdGrad);
REGISTER_GRADIENT("Onnx>ReduceL1", ReduceL1Grad);
REGISTER_GRADIENT("Onnx>ReduceL2", ReduceL2Grad);
REGISTER_GRADIENT("Onnx>ReduceLogSum", ReduceLogSumGrad);
REGISTER_GRADIENT("Onnx>ReduceLogSumExp", ReduceLogSumExpGrad);
REGISTER_GRADIENT("Onnx>ReduceSumSquare", ReduceSumSquareGrad);

}  // namespace
}  // namespace sluice
