// Gradient functions of the tensor manipulation ops: reshapes (the gradient takes the input's
// shape back), Transpose, Concat/Split (each other's adjoints), Slice and Gather (written
// back into zeros by SliceGrad and GatherGrad), Expand; and of SliceGrad and GatherGrad
// themselves, for gradients of gradients.
#include <limits>

#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::ListSize;
using gradient_util::NodeAttr;
using gradient_util::ReshapeLike;

// Reshape, Flatten, Squeeze, Unsqueeze: only the layout of the shape changed.
absl::Status ReshapeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], ReshapeLike(b, dys[0], n.inputs[0]));
  return absl::OkStatus();
}

// The inverse permutation; without perm, Transpose reverses the dims, its own inverse.
absl::Status TransposeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> perm, NodeAttr<std::vector<int64_t>>(n, "perm", {}));
  AttrMap attrs;
  if (!perm.empty()) {
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      const int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(perm.size()) : perm[i];
      if (p < 0 || p >= static_cast<int64_t>(perm.size())) return absl::InvalidArgumentError("Transpose perm out of range");
      inverse[p] = static_cast<int64_t>(i);
    }
    attrs["perm"] = Attr(absl::Span<const int64_t>(inverse));
  }
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Onnx>Transpose", dys[0], attrs));
  return absl::OkStatus();
}

// dy split along the axis into pieces as long as each input was there.
absl::Status ConcatGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  std::vector<std::string> sizes;
  AttrMap range;
  range["start"] = Attr(axis);
  if (axis != -1) range["end"] = Attr(axis + 1);  // -1 runs to the end: the default.
  for (const std::string& x : n.inputs) {
    SL_ASSIGN_OR_RETURN(std::string s, b->Unary("Onnx>Shape", x, range));
    sizes.push_back(s);
  }
  AttrMap concat;
  concat["axis"] = Attr(int64_t{0});
  SL_ASSIGN_OR_RETURN(auto split, b->Add("Onnx>Concat", {sizes}, concat));
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  attrs["num_outputs"] = Attr(static_cast<int64_t>(n.inputs.size()));
  SL_ASSIGN_OR_RETURN(auto pieces, b->Add("Onnx>Split", {{dys[0]}, {split[0]}}, attrs));
  for (size_t i = 0; i < n.inputs.size(); ++i) (*dxs)[i] = pieces[i];
  return absl::OkStatus();
}

// The outputs' gradients concatenated back; an output nothing reached contributes zeros.
absl::Status SplitGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  std::vector<std::string> parts;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (!dys[k].empty()) {
      parts.push_back(dys[k]);
    } else {
      SL_ASSIGN_OR_RETURN(std::string zeros, b->Fill(n.outputs[k], 0.0));
      parts.push_back(zeros);
    }
  }
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>Concat", {parts}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// Inputs: data, starts, ends, then axes and steps when present.
absl::Status SliceGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", n.inputs[0]));
  std::vector<std::vector<std::string>> args = {{dys[0]}, {shape}, {n.inputs[1]}, {n.inputs[2]}, {}, {}};
  size_t next = 3;
  if (ListSize(n, "Taxes") > 0) args[4].push_back(n.inputs[next++]);
  if (ListSize(n, "Tsteps") > 0) args[5].push_back(n.inputs[next++]);
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>SliceGrad", std::move(args)));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// SliceGrad is linear in dy; its adjoint is the Slice itself.
absl::Status SliceGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  std::vector<std::vector<std::string>> args = {{dys[0]}, {n.inputs[2]}, {n.inputs[3]}, {}, {}};
  size_t next = 4;
  if (ListSize(n, "Taxes") > 0) args[3].push_back(n.inputs[next++]);
  if (ListSize(n, "Tsteps") > 0) args[4].push_back(n.inputs[next++]);
  SL_ASSIGN_OR_RETURN(auto d, b->Add("Onnx>Slice", std::move(args)));
  (*dxs)[0] = d[0];
  return absl::OkStatus();
}

absl::Status GatherGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", n.inputs[0]));
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>GatherGrad", {{dys[0]}, {n.inputs[1]}, {shape}}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

absl::Status GatherGradGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Onnx>Gather", dys[0], n.inputs[1], attrs));
  return absl::OkStatus();
}

absl::Status ExpandGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->SumLike(dys[0], n.inputs[0]));
  return absl::OkStatus();
}

REGISTER_GRADIENT("Onnx>Reshape", ReshapeGrad);
REGISTER_GRADIENT("Onnx>Flatten", ReshapeGrad);
REGISTER_GRADIENT("Onnx>Squeeze", ReshapeGrad);
REGISTER_GRADIENT("Onnx>Unsqueeze", ReshapeGrad);
REGISTER_GRADIENT("Onnx>Transpose", TransposeGrad);
REGISTER_GRADIENT("Onnx>Concat", ConcatGrad);
REGISTER_GRADIENT("Onnx>Split", SplitGrad);
REGISTER_GRADIENT("Onnx>Slice", SliceGrad);
REGISTER_GRADIENT("Onnx>SliceGrad", SliceGradGrad);
REGISTER_GRADIENT("Onnx>Gather", GatherGrad);
REGISTER_GRADIENT("Onnx>GatherGrad", GatherGradGrad);
REGISTER_GRADIENT("Onnx>Expand", ExpandGrad);

}  // namespace
}  // namespace sluice
