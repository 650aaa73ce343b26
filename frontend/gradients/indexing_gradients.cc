// Gradient functions of Pad (constant mode), Tile, CumSum, GatherElements, ScatterElements and
// ScatterND, each the forward op's adjoint written with forward ops: a Pad by the negated
// pads, sums over the repeats, a reversed CumSum, scatters and gathers of dy.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::Const;
using gradient_util::Int64Const;
using gradient_util::ListSize;
using gradient_util::NodeAttr;
using gradient_util::ReshapeLike;

// Inputs data, pads, then constant_value and axes when present. Pad by -pads undoes the
// padding (and pads back with zeros what negative pads cropped). The constant value gets
// the dy of every padded position: sum(dy) - sum(dx).
absl::Status PadGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string mode, NodeAttr<std::string>(n, "mode", "constant"));
  if (mode != "constant") {
    return absl::UnimplementedError(absl::StrCat("the gradient of Pad in '", mode, "' mode"));
  }
  const bool has_value = ListSize(n, "Tvalue") > 0, has_axes = ListSize(n, "Taxes") > 0;
  const std::string& dy = dys[0];
  SL_ASSIGN_OR_RETURN(std::string unpad, b->Unary("Neg", n.inputs[1]));
  std::vector<std::string> axes;
  if (has_axes) axes.push_back(n.inputs[2 + (has_value ? 1 : 0)]);
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>Pad", {{dy}, {unpad}, {}, axes}));
  (*dxs)[0] = dx[0];
  if (has_value) {
    AttrMap all;
    all["keepdims"] = Attr(false);
    SL_ASSIGN_OR_RETURN(auto total, b->Add("Onnx>ReduceSum", {{dy}, {}}, all));
    SL_ASSIGN_OR_RETURN(auto kept, b->Add("Onnx>ReduceSum", {{dx[0]}, {}}, all));
    SL_ASSIGN_OR_RETURN(std::string padded, b->Binary("Sub", total[0], kept[0]));
    SL_ASSIGN_OR_RETURN((*dxs)[2], ReshapeLike(b, padded, n.inputs[2]));
  }
  return absl::OkStatus();
}

// Y = Tile(X, r) with X of dims d: dY viewed as [r0, d0, r1, d1, ...] and summed over the
// repeat axes 0, 2, 4, ...
absl::Status TileGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &x = n.inputs[0], &repeats = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string dims, b->Unary("Onnx>Shape", x));
  SL_ASSIGN_OR_RETURN(std::string one, Int64Const(b, {1}));
  SL_ASSIGN_OR_RETURN(std::string r_col, b->Binary("Onnx>Unsqueeze", repeats, one));
  SL_ASSIGN_OR_RETURN(std::string d_col, b->Binary("Onnx>Unsqueeze", dims, one));
  AttrMap concat;
  concat["axis"] = Attr(int64_t{1});
  SL_ASSIGN_OR_RETURN(auto pairs, b->Add("Onnx>Concat", {{r_col, d_col}}, concat));
  SL_ASSIGN_OR_RETURN(std::string flat, Int64Const(b, {-1}));
  SL_ASSIGN_OR_RETURN(std::string interleaved, b->Binary("Onnx>Reshape", pairs[0], flat));
  SL_ASSIGN_OR_RETURN(std::string split, b->Binary("Onnx>Reshape", dys[0], interleaved));
  SL_ASSIGN_OR_RETURN(std::string rank2, b->Unary("Onnx>Size", interleaved));
  SL_ASSIGN_OR_RETURN(std::string start, Const(b, Tensor::FromVector<int64_t>({0}, TensorShape({}))));
  SL_ASSIGN_OR_RETURN(std::string step, Const(b, Tensor::FromVector<int64_t>({2}, TensorShape({}))));
  SL_ASSIGN_OR_RETURN(auto axes, b->Add("Onnx>Range", {{start}, {rank2}, {step}}));
  AttrMap attrs;
  attrs["keepdims"] = Attr(false);
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>ReduceSum", {{split}, {axes[0]}}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// Each y[i] sums x over a range of positions; each x[j] reaches the y of the opposite range:
// the same CumSum of dy in the other direction.
absl::Status CumSumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(bool exclusive, NodeAttr<bool>(n, "exclusive", false));
  SL_ASSIGN_OR_RETURN(bool reverse, NodeAttr<bool>(n, "reverse", false));
  AttrMap attrs;
  attrs["exclusive"] = Attr(exclusive);
  attrs["reverse"] = Attr(!reverse);
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Onnx>CumSum", dys[0], n.inputs[1], attrs));
  return absl::OkStatus();
}

// dY added into zeros at the positions GatherElements read (repeats accumulate).
absl::Status GatherElementsGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  SL_ASSIGN_OR_RETURN(std::string zeros, b->Fill(n.inputs[0], 0.0));
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  attrs["reduction"] = Attr(std::string("add"));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>ScatterElements", {{zeros}, {n.inputs[1]}, {dys[0]}}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// Inputs data, indices, updates. Without a reduction the written positions of data are
// overwritten (their dy is zeroed for data) and updates get the dy there; with 'add' data
// passes dy through. `scatter` and `gather` are the op pair (ScatterElements and
// GatherElements, or ScatterND and GatherND), `attrs` their shared attrs.
absl::Status ScatterGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs, absl::string_view scatter,
                         absl::string_view gather, const AttrMap& attrs) {
  SL_ASSIGN_OR_RETURN(std::string reduction, NodeAttr<std::string>(n, "reduction", "none"));
  const std::string &indices = n.inputs[1], &updates = n.inputs[2], &dy = dys[0];
  if (reduction == "none") {
    SL_ASSIGN_OR_RETURN(std::string zeros, b->Fill(updates, 0.0));
    AttrMap none = attrs;
    none["reduction"] = Attr(std::string("none"));
    SL_ASSIGN_OR_RETURN(auto dd, b->Add(scatter, {{dy}, {indices}, {zeros}}, none));
    (*dxs)[0] = dd[0];
  } else if (reduction == "add") {
    (*dxs)[0] = dy;
  } else {
    return absl::UnimplementedError(absl::StrCat("the gradient of ", scatter, " with reduction '", reduction, "'"));
  }
  SL_ASSIGN_OR_RETURN(auto du, b->Add(gather, {{dy}, {indices}}, attrs));
  (*dxs)[2] = du[0];
  return absl::OkStatus();
}

absl::Status ScatterElementsGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  return ScatterGrad(b, n, dys, dxs, "Onnx>ScatterElements", "Onnx>GatherElements", attrs);
}

absl::Status ScatterNDGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return ScatterGrad(b, n, dys, dxs, "Onnx>ScatterND", "Onnx>GatherND", {});
}

// GatherND reads dy's positions; its gradient writes them back, accumulating repeats.
absl::Status GatherNDGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t batch_dims, NodeAttr<int64_t>(n, "batch_dims", 0));
  if (batch_dims != 0) return absl::UnimplementedError("the gradient of GatherND with batch_dims");
  SL_ASSIGN_OR_RETURN(std::string zeros, b->Fill(n.inputs[0], 0.0));
  AttrMap attrs;
  attrs["reduction"] = Attr(std::string("add"));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>ScatterND", {{zeros}, {n.inputs[1]}, {dys[0]}}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

REGISTER_GRADIENT("Onnx>Pad", PadGrad);
REGISTER_GRADIENT("Onnx>Tile", TileGrad);
REGISTER_GRADIENT("Onnx>CumSum", CumSumGrad);
REGISTER_GRADIENT("Onnx>GatherElements", GatherElementsGrad);
REGISTER_GRADIENT("Onnx>ScatterElements", ScatterElementsGrad);
REGISTER_GRADIENT("Onnx>ScatterND", ScatterNDGrad);
REGISTER_GRADIENT("Onnx>GatherND", GatherNDGrad);

}  // namespace
}  // namespace sluice
