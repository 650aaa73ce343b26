// Gradient functions of LayerNormalization, InstanceNormalization and ConvTranspose.
//
// The normalizations are written with forward ops over a view of X as rows of the normalized
// elements (LayerNormalization: Flatten at axis; InstanceNormalization: [N, C, spatial]):
// with xhat = (x - mean) / sqrt(var + eps) and g = dy * scale along a row,
//   dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps),
// dscale = sum(dy * xhat) and dB = sum(dy) over everything scale and B broadcast across.
// ConvTranspose is the adjoint of Conv with respect to its input, so its gradients are a Conv
// and a ConvBackpropFilter with the roles of image and output swapped.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::Int64Const;
using gradient_util::NodeAttr;
using gradient_util::ReshapeLike;
using gradient_util::ScalarConst;

struct Rows {
  std::string xhat, inv;  // Normalized rows and 1 / sqrt(var + eps), kept as [..., 1].
  std::string axes;       // The axis of the rows' elements, for ReduceMean.
};

absl::StatusOr<std::string> MeanAlong(GradientBuilder* b, const std::string& t, const std::string& axes) {
  AttrMap attrs;
  attrs["keepdims"] = Attr(true);
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>ReduceMean", {{t}, {axes}}, attrs));
  return out[0];
}

// The statistics of `x` along `axis` (the forward op's, recomputed in the forward's precision).
absl::StatusOr<Rows> Normalize(GradientBuilder* b, const std::string& x, int64_t axis, float epsilon) {
  Rows r;
  SL_ASSIGN_OR_RETURN(r.axes, Int64Const(b, {axis}));
  SL_ASSIGN_OR_RETURN(std::string mean, MeanAlong(b, x, r.axes));
  SL_ASSIGN_OR_RETURN(std::string centered, b->Binary("Sub", x, mean));
  SL_ASSIGN_OR_RETURN(std::string sq, b->Binary("Mul", centered, centered));
  SL_ASSIGN_OR_RETURN(std::string var, MeanAlong(b, sq, r.axes));
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string eps, ScalarConst(b, dt, epsilon));
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string shifted, b->Binary("Add", var, eps));
  SL_ASSIGN_OR_RETURN(std::string stddev, b->Unary("Sqrt", shifted));
  SL_ASSIGN_OR_RETURN(r.inv, b->Binary("Div", one, stddev));
  SL_ASSIGN_OR_RETURN(r.xhat, b->Binary("Mul", centered, r.inv));
  return r;
}

// dx over the rows of `r`, given g = dy * scale viewed the same way.
absl::StatusOr<std::string> RowsGrad(GradientBuilder* b, const Rows& r, const std::string& g) {
  SL_ASSIGN_OR_RETURN(std::string m1, MeanAlong(b, g, r.axes));
  SL_ASSIGN_OR_RETURN(std::string gx, b->Binary("Mul", g, r.xhat));
  SL_ASSIGN_OR_RETURN(std::string m2, MeanAlong(b, gx, r.axes));
  SL_ASSIGN_OR_RETURN(std::string t1, b->Binary("Sub", g, m1));
  SL_ASSIGN_OR_RETURN(std::string t2, b->Binary("Mul", r.xhat, m2));
  SL_ASSIGN_OR_RETURN(std::string d, b->Binary("Sub", t1, t2));
  return b->Binary("Mul", d, r.inv);
}

absl::Status OnlyY(const GradientNode& n, const Dxs& dys) {
  for (size_t k = 1; k < dys.size(); ++k) {
    if (!dys[k].empty()) {
      return absl::UnimplementedError(
          absl::StrCat("gradients through ", n.def->op(), "'s statistics outputs; only Y is differentiable"));
    }
  }
  return absl::OkStatus();
}

// Inputs X, Scale, then B when present; Scale and B broadcast over X's dims from axis on.
absl::Status LayerNormGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_RETURN_IF_ERROR(OnlyY(n, dys));
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", -1));
  SL_ASSIGN_OR_RETURN(float epsilon, NodeAttr<float>(n, "epsilon", 1e-5f));
  const std::string &x = n.inputs[0], &scale = n.inputs[1], &dy = dys[0];
  AttrMap flatten;
  flatten["axis"] = Attr(axis);
  SL_ASSIGN_OR_RETURN(std::string x2, b->Unary("Onnx>Flatten", x, flatten));
  SL_ASSIGN_OR_RETURN(Rows r, Normalize(b, x2, 1, epsilon));
  SL_ASSIGN_OR_RETURN(std::string xhat, ReshapeLike(b, r.xhat, x));
  SL_ASSIGN_OR_RETURN(std::string g, b->Binary("Mul", dy, scale));
  SL_ASSIGN_OR_RETURN(std::string g2, b->Unary("Onnx>Flatten", g, flatten));
  SL_ASSIGN_OR_RETURN(std::string dx2, RowsGrad(b, r, g2));
  SL_ASSIGN_OR_RETURN((*dxs)[0], ReshapeLike(b, dx2, x));
  SL_ASSIGN_OR_RETURN(std::string ds, b->Binary("Mul", dy, xhat));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(ds, scale));
  if (n.inputs.size() > 2) {
    SL_ASSIGN_OR_RETURN((*dxs)[2], b->SumLike(dy, n.inputs[2]));
  }
  return absl::OkStatus();
}

// `t` of shape [N, C, ...] as [N, C, spatial].
absl::StatusOr<std::string> ChannelRows(GradientBuilder* b, const std::string& t) {
  SL_ASSIGN_OR_RETURN(std::string shape, Int64Const(b, {0, 0, -1}));
  return b->Binary("Onnx>Reshape", t, shape);
}

// Per channel of [N, C, spatial]: summed over N and the spatial positions.
absl::StatusOr<std::string> SumPerChannel(GradientBuilder* b, const std::string& t3) {
  SL_ASSIGN_OR_RETURN(std::string axes, Int64Const(b, {0, 2}));
  AttrMap attrs;
  attrs["keepdims"] = Attr(false);
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>ReduceSum", {{t3}, {axes}}, attrs));
  return out[0];
}

// Inputs X [N, C, ...], scale [C], B [C]; statistics per (n, c) over the spatial positions.
absl::Status InstanceNormGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(float epsilon, NodeAttr<float>(n, "epsilon", 1e-5f));
  const std::string &x = n.inputs[0], &scale = n.inputs[1];
  SL_ASSIGN_OR_RETURN(std::string x3, ChannelRows(b, x));
  SL_ASSIGN_OR_RETURN(Rows r, Normalize(b, x3, 2, epsilon));
  SL_ASSIGN_OR_RETURN(std::string dy3, ChannelRows(b, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string one, Int64Const(b, {1}));
  SL_ASSIGN_OR_RETURN(std::string column, b->Binary("Onnx>Unsqueeze", scale, one));
  SL_ASSIGN_OR_RETURN(std::string g3, b->Binary("Mul", dy3, column));
  SL_ASSIGN_OR_RETURN(std::string dx3, RowsGrad(b, r, g3));
  SL_ASSIGN_OR_RETURN((*dxs)[0], ReshapeLike(b, dx3, x));
  SL_ASSIGN_OR_RETURN(std::string ds, b->Binary("Mul", dy3, r.xhat));
  SL_ASSIGN_OR_RETURN((*dxs)[1], SumPerChannel(b, ds));
  SL_ASSIGN_OR_RETURN((*dxs)[2], SumPerChannel(b, dy3));
  return absl::OkStatus();
}

// Y = ConvTranspose(X, W) = ConvBackpropInput(X, W) for the Conv with the same strides, pads,
// dilations and group, so dX = Conv(dY, W) and dW = ConvBackpropFilter(dY, X). Extra output
// rows from output_padding receive nothing from X, and the Conv's floor drops them again.
absl::Status ConvTransposeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string auto_pad, NodeAttr<std::string>(n, "auto_pad", "NOTSET"));
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, NodeAttr<std::vector<int64_t>>(n, "output_shape", {}));
  if (!output_shape.empty() || (auto_pad != "NOTSET" && auto_pad != "VALID")) {
    return absl::UnimplementedError("the gradient of ConvTranspose with output_shape or SAME padding");
  }
  AttrMap attrs;
  for (const char* name : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}) {
    auto it = n.def->attr().find(name);
    if (it != n.def->attr().end()) attrs[name] = it->second;
  }
  const std::string &x = n.inputs[0], &w = n.inputs[1], &dy = dys[0];
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>Conv", {{dy}, {w}, {}, {}}, attrs));
  SL_ASSIGN_OR_RETURN(std::string w_shape, b->Unary("Onnx>Shape", w));
  SL_ASSIGN_OR_RETURN(auto dw, b->Add("ConvBackpropFilter", {{dy}, {x}, {w_shape}}, attrs));
  (*dxs)[0] = dx[0];
  (*dxs)[1] = dw[0];
  if (n.inputs.size() > 2) {
    SL_ASSIGN_OR_RETURN(std::string dy3, ChannelRows(b, dy));
    SL_ASSIGN_OR_RETURN((*dxs)[2], SumPerChannel(b, dy3));
  }
  return absl::OkStatus();
}

REGISTER_GRADIENT("Onnx>LayerNormalization", LayerNormGrad);
REGISTER_GRADIENT("Onnx>InstanceNormalization", InstanceNormGrad);
REGISTER_GRADIENT("Onnx>ConvTranspose", ConvTransposeGrad);

}  // namespace
}  // namespace sluice
