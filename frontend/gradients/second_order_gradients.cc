// Gradient functions of the backward ops MaxPoolGrad and BatchNormalizationGrad (training
// mode), for gradients of gradients through max pooling and batch normalization.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::Int64Const;
using gradient_util::NodeAttr;
using gradient_util::ReshapeLike;
using gradient_util::ScalarConst;

// MaxPoolGrad(x, dy) adds each dy to its window's argmax: linear in dy, and its adjoint reads
// ddx at the argmaxes, which MaxPool's Indices give (flat positions in x, the same first
// maximum MaxPoolGrad picks). Piecewise constant in x: x gets nothing.
absl::Status MaxPoolGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  AttrMap attrs;
  for (const char* name : {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"}) {
    auto it = n.def->attr().find(name);
    if (it != n.def->attr().end()) attrs[name] = it->second;
  }
  attrs["produce_indices"] = Attr(true);
  SL_ASSIGN_OR_RETURN(auto pooled, b->Add("Onnx>MaxPool", {{n.inputs[0]}}, attrs));
  SL_ASSIGN_OR_RETURN(std::string flat, Int64Const(b, {-1}));
  SL_ASSIGN_OR_RETURN(std::string ddx, b->Binary("Onnx>Reshape", dys[0], flat));
  SL_ASSIGN_OR_RETURN(std::string picked, b->Binary("Onnx>Gather", ddx, pooled[1]));
  SL_ASSIGN_OR_RETURN((*dxs)[1], ReshapeLike(b, picked, n.inputs[1]));
  return absl::OkStatus();
}

// BatchNormalizationGrad in training mode, per channel over m = N * spatial elements, with
// xhat = (x - mean) / s, s = sqrt(var + eps), P(t) = t - mean(t) - xhat mean(t xhat) (the
// projection off 1 and xhat, self-adjoint) and g = dy:
//   dx = scale / s P(g),  dscale = sum(g xhat),  dbias = sum(g).
// Given cotangents A (of dx), Bs (of dscale) and Bb (of dbias):
//   g gets     scale / s P(A) + Bs xhat + Bb
//   scale gets sum(A P(g)) / s
//   x gets     Bs / s P(g) - scale / s^2 (mean(A P(g)) xhat + mean(g xhat) P(A) + mean(A xhat) P(g))
// using d xhat = P(dx) / s and d(1/s) = -mean(xhat dx) / s^2.
class BatchNormSecondOrder {
 public:
  explicit BatchNormSecondOrder(GradientBuilder* b) : b_(b) {}

  absl::Status Build(const GradientNode& n, const Dxs& dys, Dxs* dxs) {
    SL_ASSIGN_OR_RETURN(bool training, NodeAttr<bool>(n, "training_mode", false));
    SL_ASSIGN_OR_RETURN(bool spatial, NodeAttr<bool>(n, "spatial", true));
    if (!training || !spatial) {
      return absl::UnimplementedError("second-order gradients of BatchNormalization outside spatial training mode");
    }
    for (size_t k = 3; k < dys.size(); ++k) {
      if (!dys[k].empty()) return absl::UnimplementedError("gradients through BatchNormalizationGrad's dmean and dvar");
    }
    SL_ASSIGN_OR_RETURN(float epsilon, NodeAttr<float>(n, "epsilon", 1e-5f));
    const std::string &dy = n.inputs[0], &x = n.inputs[1], &scale = n.inputs[2];
    dt_ = b_->Dtype(x);
    SL_ASSIGN_OR_RETURN(rows_shape_, Int64Const(b_, {0, 0, -1}));
    SL_ASSIGN_OR_RETURN(axes_, Int64Const(b_, {0, 2}));
    SL_ASSIGN_OR_RETURN(std::string x3, b_->Binary("Onnx>Reshape", x, rows_shape_));
    SL_ASSIGN_OR_RETURN(std::string g, b_->Binary("Onnx>Reshape", dy, rows_shape_));
    SL_ASSIGN_OR_RETURN(std::string one_axis, Int64Const(b_, {1}));
    SL_ASSIGN_OR_RETURN(std::string gamma, b_->Binary("Onnx>Unsqueeze", scale, one_axis));  // [C, 1]
    // Statistics.
    SL_ASSIGN_OR_RETURN(std::string mu, Mean(x3));
    SL_ASSIGN_OR_RETURN(std::string xc, b_->Binary("Sub", x3, mu));
    SL_ASSIGN_OR_RETURN(std::string sq, b_->Binary("Mul", xc, xc));
    SL_ASSIGN_OR_RETURN(std::string var, Mean(sq));
    SL_ASSIGN_OR_RETURN(std::string eps, ScalarConst(b_, dt_, epsilon));
    SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b_, dt_, 1.0));
    SL_ASSIGN_OR_RETURN(std::string shifted, b_->Binary("Add", var, eps));
    SL_ASSIGN_OR_RETURN(std::string s, b_->Unary("Sqrt", shifted));
    SL_ASSIGN_OR_RETURN(inv_, b_->Binary("Div", one, s));
    SL_ASSIGN_OR_RETURN(xhat_, b_->Binary("Mul", xc, inv_));
    SL_ASSIGN_OR_RETURN(std::string gamma_inv, b_->Binary("Mul", gamma, inv_));  // scale / s
    SL_ASSIGN_OR_RETURN(std::string pg, P(g));

    std::vector<std::string> dg_terms, dx_terms;
    std::string dscale;
    if (!dys[0].empty()) {
      SL_ASSIGN_OR_RETURN(std::string a, b_->Binary("Onnx>Reshape", dys[0], rows_shape_));
      SL_ASSIGN_OR_RETURN(std::string pa, P(a));
      SL_ASSIGN_OR_RETURN(std::string t, b_->Binary("Mul", gamma_inv, pa));
      dg_terms.push_back(t);
      // scale: sum(A P(g)) / s, per channel.
      SL_ASSIGN_OR_RETURN(std::string apg, b_->Binary("Mul", a, pg));
      SL_ASSIGN_OR_RETURN(std::string sum_apg, Sum(apg));
      SL_ASSIGN_OR_RETURN(std::string ds, b_->Binary("Mul", sum_apg, inv_));
      SL_ASSIGN_OR_RETURN(dscale, ToChannels(ds));
      // x: -scale / s^2 (mean(A P(g)) xhat + mean(g xhat) P(A) + mean(A xhat) P(g)).
      SL_ASSIGN_OR_RETURN(std::string m1, Mean(apg));
      SL_ASSIGN_OR_RETURN(std::string gx, b_->Binary("Mul", g, xhat_));
      SL_ASSIGN_OR_RETURN(std::string m2, Mean(gx));
      SL_ASSIGN_OR_RETURN(std::string ax, b_->Binary("Mul", a, xhat_));
      SL_ASSIGN_OR_RETURN(std::string m3, Mean(ax));
      SL_ASSIGN_OR_RETURN(std::string u1, b_->Binary("Mul", m1, xhat_));
      SL_ASSIGN_OR_RETURN(std::string u2, b_->Binary("Mul", m2, pa));
      SL_ASSIGN_OR_RETURN(std::string u3, b_->Binary("Mul", m3, pg));
      SL_ASSIGN_OR_RETURN(auto u, b_->Add("Onnx>Sum", {{u1, u2, u3}}));
      SL_ASSIGN_OR_RETURN(std::string k, b_->Binary("Mul", gamma_inv, inv_));
      SL_ASSIGN_OR_RETURN(std::string scaled, b_->Binary("Mul", k, u[0]));
      SL_ASSIGN_OR_RETURN(std::string neg, b_->Unary("Neg", scaled));
      dx_terms.push_back(neg);
    }
    if (!dys[1].empty()) {
      SL_ASSIGN_OR_RETURN(std::string bs, b_->Binary("Onnx>Unsqueeze", dys[1], one_axis));  // [C, 1]
      SL_ASSIGN_OR_RETURN(std::string t, b_->Binary("Mul", bs, xhat_));
      dg_terms.push_back(t);
      SL_ASSIGN_OR_RETURN(std::string k, b_->Binary("Mul", bs, inv_));
      SL_ASSIGN_OR_RETURN(std::string u, b_->Binary("Mul", k, pg));
      dx_terms.push_back(u);
    }
    if (!dys[2].empty()) {
      SL_ASSIGN_OR_RETURN(std::string bb, b_->Binary("Onnx>Unsqueeze", dys[2], one_axis));  // Broadcast by Total.
      dg_terms.push_back(bb);
    }
    if (!dg_terms.empty()) {
      SL_ASSIGN_OR_RETURN(std::string dg, Total(dg_terms, g));
      SL_ASSIGN_OR_RETURN((*dxs)[0], ReshapeLike(b_, dg, dy));
    }
    if (!dx_terms.empty()) {
      SL_ASSIGN_OR_RETURN(std::string d, Total(dx_terms, x3));
      SL_ASSIGN_OR_RETURN((*dxs)[1], ReshapeLike(b_, d, x));
    }
    if (!dscale.empty()) (*dxs)[2] = dscale;
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::string> Reduce(absl::string_view op, const std::string& t) {
    AttrMap attrs;
    attrs["keepdims"] = Attr(true);
    SL_ASSIGN_OR_RETURN(auto out, b_->Add(op, {{t}, {axes_}}, attrs));
    return out[0];
  }
  absl::StatusOr<std::string> Mean(const std::string& t) { return Reduce("Onnx>ReduceMean", t); }
  absl::StatusOr<std::string> Sum(const std::string& t) { return Reduce("Onnx>ReduceSum", t); }

  absl::StatusOr<std::string> P(const std::string& t) {
    SL_ASSIGN_OR_RETURN(std::string m, Mean(t));
    SL_ASSIGN_OR_RETURN(std::string tx, b_->Binary("Mul", t, xhat_));
    SL_ASSIGN_OR_RETURN(std::string mx, Mean(tx));
    SL_ASSIGN_OR_RETURN(std::string c, b_->Binary("Sub", t, m));
    SL_ASSIGN_OR_RETURN(std::string r, b_->Binary("Mul", xhat_, mx));
    return b_->Binary("Sub", c, r);
  }

  // [1, C, 1] -> [C].
  absl::StatusOr<std::string> ToChannels(const std::string& t) {
    SL_ASSIGN_OR_RETURN(std::string flat, Int64Const(b_, {-1}));
    return b_->Binary("Onnx>Reshape", t, flat);
  }

  // The terms added and broadcast to `like`'s shape.
  absl::StatusOr<std::string> Total(const std::vector<std::string>& terms, const std::string& like) {
    std::string sum = terms[0];
    if (terms.size() > 1) {
      SL_ASSIGN_OR_RETURN(auto out, b_->Add("Onnx>Sum", {terms}));
      sum = out[0];
    }
    return gradient_util::ExpandLike(b_, sum, like);
  }

  GradientBuilder* b_;
  DataType dt_ = DT_INVALID;
  std::string rows_shape_, axes_, inv_, xhat_;
};

absl::Status BatchNormGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  BatchNormSecondOrder second(b);
  return second.Build(n, dys, dxs);
}

REGISTER_GRADIENT("Onnx>MaxPoolGrad", MaxPoolGradGrad);
REGISTER_GRADIENT("Onnx>BatchNormalizationGrad", BatchNormGradGrad);

}  // namespace
}  // namespace sluice
