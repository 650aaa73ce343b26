// Gradient functions of TensorFlow's array ops (ops/tf_array_ops.cc, ops/array_ops.cc), following
// the gradient definitions TensorFlow documents for them. Axes and permutations are inputs
// here, known only when the graph runs, so the backward nodes compute with them (ONNX Slice
// and ScatterElements take axes and indices as tensors) rather than reading them at build time.
#include "frontend/gradients/gradient_util.h"

namespace sluice {
namespace {

using Dxs = std::vector<std::string>;
using gradient_util::Attr;
using gradient_util::CastTo;
using gradient_util::Const;
using gradient_util::FloatOnly;
using gradient_util::Int64Const;
using gradient_util::IsFloat;
using gradient_util::NodeAttr;
using gradient_util::ScalarConst;

// Only between floating types is the gradient cast back; from or to integers and bools there
// is none (TensorFlow's _CastGrad).
absl::Status CastGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const DataType from = b->Dtype(n.inputs[0]);
  if (!IsFloat(from) || !IsFloat(b->Dtype(dys[0]))) return absl::OkStatus();
  AttrMap attrs;
  attrs["DstT"] = Attr(from);
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Unary("Cast", dys[0], attrs));
  return absl::OkStatus();
}

// Reshape, ExpandDims, Squeeze: dy takes the input's shape back (TensorFlow's Reshape, where a
// 0 in the shape is a 0).
absl::Status ReshapeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Shape", n.inputs[0]));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Reshape", dys[0], shape));
  return absl::OkStatus();
}

// dy transposed by the inverse permutation: inverse[perm[i]] = i, scattered at run time.
absl::Status TransposeGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string perm, CastTo(b, n.inputs[1], DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string rank, b->Unary("Onnx>Size", perm));
  SL_ASSIGN_OR_RETURN(std::string zero, Const(b, Tensor::FromVector<int64_t>({0}, TensorShape({}))));
  SL_ASSIGN_OR_RETURN(std::string one, Const(b, Tensor::FromVector<int64_t>({1}, TensorShape({}))));
  SL_ASSIGN_OR_RETURN(auto iota, b->Add("Onnx>Range", {{zero}, {rank}, {one}}));
  AttrMap attrs;
  attrs["axis"] = Attr(int64_t{0});
  SL_ASSIGN_OR_RETURN(auto inverse, b->Add("Onnx>ScatterElements", {{iota[0]}, {perm}, {iota[0]}}, attrs));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Transpose", dys[0], inverse[0]));
  return absl::OkStatus();
}

// Each input's gradient is its slice of dy along the axis: [offset, offset + its size), the
// offsets adding up the sizes before it (TensorFlow's ConcatOffset and Slice). The axis is
// input `axis_at`; the values are the `count` inputs from `first` on.
absl::Status ConcatSlices(GradientBuilder* b, const GradientNode& n, const std::string& dy, size_t axis_at,
                          size_t first, size_t count, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string axis64, CastTo(b, n.inputs[axis_at], DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string one_dim, Int64Const(b, {1}));
  SL_ASSIGN_OR_RETURN(std::string axes, b->Binary("Onnx>Reshape", axis64, one_dim));
  SL_ASSIGN_OR_RETURN(std::string offset, Int64Const(b, {0}));
  for (size_t i = first; i < first + count; ++i) {
    SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", n.inputs[i]));
    SL_ASSIGN_OR_RETURN(std::string size, b->Binary("Onnx>Gather", shape, axes));
    SL_ASSIGN_OR_RETURN(std::string end, b->Binary("AddV2", offset, size));
    SL_ASSIGN_OR_RETURN(auto slice, b->Add("Onnx>Slice", {{dy}, {offset}, {end}, {axes}, {}}));
    (*dxs)[i] = slice[0];
    offset = end;
  }
  return absl::OkStatus();
}

// ConcatV2(values..., axis).
absl::Status ConcatV2Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const size_t values = n.inputs.size() - 1;
  return ConcatSlices(b, n, dys[0], values, 0, values, dxs);
}

// Concat(concat_dim, values...).
absl::Status ConcatGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return ConcatSlices(b, n, dys[0], 0, 1, n.inputs.size() - 1, dxs);
}

// Pack stacks its inputs along a new axis: input i's gradient is dy at index i of that axis
// (TensorFlow unstacks dy). A negative axis counts from the end of the output, as dy's does.
absl::Status PackGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", 0));
  AttrMap attrs;
  attrs["axis"] = Attr(axis);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    SL_ASSIGN_OR_RETURN(std::string index,
                        Const(b, Tensor::FromVector<int64_t>({static_cast<int64_t>(i)}, TensorShape({}))));
    SL_ASSIGN_OR_RETURN((*dxs)[i], b->Binary("Onnx>Gather", dys[0], index, attrs));
  }
  return absl::OkStatus();
}

// The condition gets none; t gets dy where it was chosen, e elsewhere, each summed back to its
// own shape (SelectV2 broadcasts all three).
absl::Status SelectV2Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &cond = n.inputs[0], &dy = dys[0];
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, b->Dtype(dy), 0.0));
  SL_ASSIGN_OR_RETURN(auto dt, b->Add("SelectV2", {{cond}, {dy}, {zero}}));
  SL_ASSIGN_OR_RETURN(auto de, b->Add("SelectV2", {{cond}, {zero}, {dy}}));
  SL_ASSIGN_OR_RETURN((*dxs)[1], b->SumLike(dt[0], n.inputs[1]));
  SL_ASSIGN_OR_RETURN((*dxs)[2], b->SumLike(de[0], n.inputs[2]));
  return absl::OkStatus();
}

// Fill(dims, value): every element is the value, so it gets the sum of dy; dims get none.
absl::Status FillGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  AttrMap attrs;
  attrs["keepdims"] = Attr(false);
  SL_ASSIGN_OR_RETURN(auto sum, b->Add("Onnx>ReduceSum", {{dys[0]}, {}}, attrs));
  (*dxs)[1] = sum[0];
  return absl::OkStatus();
}

// Each output's gradient goes to its own input.
absl::Status IdentityNGrad(GradientBuilder*, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  for (size_t i = 0; i < n.inputs.size() && i < dys.size(); ++i) (*dxs)[i] = dys[i];
  return absl::OkStatus();
}

// Shapes, sizes, ranks and values that do not depend on the input's values.
absl::Status NoGradient(GradientBuilder*, const GradientNode&, const Dxs&, Dxs*) { return absl::OkStatus(); }

REGISTER_GRADIENT("Cast", CastGrad);
REGISTER_GRADIENT("Reshape", FloatOnly<ReshapeGrad>);
REGISTER_GRADIENT("ExpandDims", FloatOnly<ReshapeGrad>);
REGISTER_GRADIENT("Squeeze", FloatOnly<ReshapeGrad>);
REGISTER_GRADIENT("Transpose", FloatOnly<TransposeGrad>);
REGISTER_GRADIENT("ConcatV2", FloatOnly<ConcatV2Grad>);
REGISTER_GRADIENT("Concat", FloatOnly<ConcatGrad>);
REGISTER_GRADIENT("Pack", FloatOnly<PackGrad>);
REGISTER_GRADIENT("SelectV2", FloatOnly<SelectV2Grad>);
REGISTER_GRADIENT("Fill", FloatOnly<FillGrad>);
REGISTER_GRADIENT("IdentityN", IdentityNGrad);
REGISTER_GRADIENT("PlaceholderWithDefault", IdentityNGrad);
REGISTER_GRADIENT("ZerosLike", NoGradient);
REGISTER_GRADIENT("OnesLike", NoGradient);
REGISTER_GRADIENT("Shape", NoGradient);
REGISTER_GRADIENT("ShapeN", NoGradient);
REGISTER_GRADIENT("Size", NoGradient);
REGISTER_GRADIENT("Rank", NoGradient);
REGISTER_GRADIENT("Range", NoGradient);

}  // namespace
}  // namespace sluice
