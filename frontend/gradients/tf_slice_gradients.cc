// Gradient functions of TensorFlow's slicing and indexing ops (ops/tf_array_ops.cc,
// ops/tf_math_ops.cc), following the gradient definitions TensorFlow documents for them:
// Slice and Pad undo each other, StridedSlice and MirrorPad have backward ops of their own
// (StridedSliceGrad, MirrorPadGrad), Tile sums over its copies, the gathers scatter-add into
// zeros (ScatterNd, so repeated indices add up), Unpack, Split and SplitV join the gradients
// of their pieces (zeros for pieces nothing used), Cumsum runs the other way and TopKV2 scatters
// back to the chosen positions. Shapes and begins are known only at run time, so the backward
// nodes compute them.
#include <limits>

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
using gradient_util::CopyAttrs;
using gradient_util::NodeAttr;

absl::StatusOr<std::string> Int64Scalar(GradientBuilder* b, int64_t v) {
  return Const(b, Tensor::FromVector<int64_t>({v}, TensorShape({})));
}

// The int64 shape of `t`.
absl::StatusOr<std::string> Shape64(GradientBuilder* b, const std::string& t) { return b->Unary("Onnx>Shape", t); }

// Elements [from, to) of the int64 vector `v`; `from` and `to` are 1-element int64 vectors
// (ONNX Slice clamps an end past the size).
absl::StatusOr<std::string> Part(GradientBuilder* b, const std::string& v, const std::string& from,
                                 const std::string& to) {
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>Slice", {{v}, {from}, {to}, {}, {}}));
  return out[0];
}

// The product of an int64 vector's values, as a 1-element vector (1 for an empty one).
absl::StatusOr<std::string> Product(GradientBuilder* b, const std::string& v) {
  SL_ASSIGN_OR_RETURN(std::string axis, Int64Const(b, {0}));
  AttrMap attrs;
  attrs["keep_dims"] = Attr(true);
  return b->Binary("Prod", v, axis, attrs);
}

// The 1-D tensors `parts` joined.
absl::StatusOr<std::string> Join(GradientBuilder* b, const std::vector<std::string>& parts) {
  SL_ASSIGN_OR_RETURN(std::string axis, Int64Scalar(b, 0));
  SL_ASSIGN_OR_RETURN(auto out, b->Add("ConcatV2", {parts, {axis}}));
  return out[0];
}

absl::StatusOr<std::string> Transposed(GradientBuilder* b, const std::string& t, std::vector<int64_t> perm) {
  SL_ASSIGN_OR_RETURN(std::string p, Int64Const(b, perm));
  return b->Binary("Transpose", t, p);
}

// The gradient reaching output i, or zeros shaped like it where none does.
absl::StatusOr<std::string> OrZeros(GradientBuilder* b, const GradientNode& n, const Dxs& dys, size_t i) {
  if (!dys[i].empty()) return dys[i];
  return b->Fill(n.outputs[i], 0.0);
}

// Slice(x, begin, size): dy padded back to x's shape, begin before and the rest after.
absl::Status SliceGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string begin, CastTo(b, n.inputs[1], DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string x_shape, Shape64(b, n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string dy_shape, Shape64(b, dys[0]));
  SL_ASSIGN_OR_RETURN(std::string rest, b->Binary("Sub", x_shape, begin));
  SL_ASSIGN_OR_RETURN(std::string after, b->Binary("Sub", rest, dy_shape));
  AttrMap axis1;
  axis1["axis"] = Attr(int64_t{1});
  SL_ASSIGN_OR_RETURN(auto paddings, b->Add("Pack", {{begin, after}}, axis1));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Pad", dys[0], paddings[0]));
  return absl::OkStatus();
}

// StridedSlice: StridedSliceGrad puts dy where the slice read, zeros elsewhere.
absl::Status StridedSliceGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string shape, Shape64(b, n.inputs[0]));
  std::vector<std::string> args = {shape};
  for (int i = 1; i <= 3; ++i) {
    SL_ASSIGN_OR_RETURN(std::string v, CastTo(b, n.inputs[i], DT_INT64));
    args.push_back(v);
  }
  AttrMap attrs = CopyAttrs(n, {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"});
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("StridedSliceGrad", {{args[0]}, {args[1]}, {args[2]}, {args[3]}, {dys[0]}}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// Pad and PadV2: the part of dy where x went, from paddings[:, 0] on; paddings and PadV2's
// constant get none (as in TensorFlow).
absl::Status PadGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string paddings, CastTo(b, n.inputs[1], DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string zero, Int64Scalar(b, 0));
  AttrMap axis1;
  axis1["axis"] = Attr(int64_t{1});
  SL_ASSIGN_OR_RETURN(std::string begin, b->Binary("Onnx>Gather", paddings, zero, axis1));
  SL_ASSIGN_OR_RETURN(std::string size, Shape64(b, n.inputs[0]));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Slice", {{dys[0]}, {begin}, {size}}));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// MirrorPad: MirrorPadGrad folds the reflected borders back onto the elements they copied.
absl::Status MirrorPadGradFn(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("MirrorPadGrad", dys[0], n.inputs[1], CopyAttrs(n, {"mode"})));
  return absl::OkStatus();
}

// Tile: dy seen as [m0, d0, m1, d1, ...] (m the multiples, d x's dims), summed over the m axes.
absl::Status TileGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string dims, Shape64(b, n.inputs[0]));
  SL_ASSIGN_OR_RETURN(std::string multiples, CastTo(b, n.inputs[1], DT_INT64));
  AttrMap axis1;
  axis1["axis"] = Attr(int64_t{1});
  SL_ASSIGN_OR_RETURN(auto pairs, b->Add("Pack", {{multiples, dims}}, axis1));
  SL_ASSIGN_OR_RETURN(std::string flat, Int64Const(b, {-1}));
  SL_ASSIGN_OR_RETURN(std::string split_shape, b->Binary("Reshape", pairs[0], flat));
  SL_ASSIGN_OR_RETURN(std::string split, b->Binary("Reshape", dys[0], split_shape));
  SL_ASSIGN_OR_RETURN(std::string twice_rank, b->Unary("Onnx>Size", split_shape));
  SL_ASSIGN_OR_RETURN(std::string zero, Int64Scalar(b, 0));
  SL_ASSIGN_OR_RETURN(std::string two, Int64Scalar(b, 2));
  SL_ASSIGN_OR_RETURN(auto axes, b->Add("Onnx>Range", {{zero}, {twice_rank}, {two}}));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Sum", split, axes[0]));
  return absl::OkStatus();
}

// GatherV2(params, indices, axis) with batch_dims B: params seen as [batch, outer, dim, inner]
// and dy as [batch, outer, n, inner]; dy[b, o, j, i] adds into dx[b, o, indices[b, j], i]. The
// scatter is one ScatterNd of dy transposed to [batch, n, outer, inner] at (b, indices[b, j]),
// so repeated indices add up (TensorFlow's IndexedSlices, made dense). indices and axis get none.
absl::Status GatherV2Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  const std::string &params = n.inputs[0], &indices = n.inputs[1];
  SL_ASSIGN_OR_RETURN(int64_t batch_dims, NodeAttr<int64_t>(n, "batch_dims", 0));
  SL_ASSIGN_OR_RETURN(std::string ps, Shape64(b, params));
  SL_ASSIGN_OR_RETURN(std::string is, Shape64(b, indices));
  SL_ASSIGN_OR_RETURN(std::string rank, b->Unary("Onnx>Size", ps));
  SL_ASSIGN_OR_RETURN(std::string axis64, CastTo(b, n.inputs[2], DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string axis_n, b->Binary("FloorMod", axis64, rank));  // -1 counts from the end.
  SL_ASSIGN_OR_RETURN(std::string one_dim, Int64Const(b, {1}));
  SL_ASSIGN_OR_RETURN(std::string axis, b->Binary("Onnx>Reshape", axis_n, one_dim));
  SL_ASSIGN_OR_RETURN(std::string after_axis, b->Binary("AddV2", axis, one_dim));
  SL_ASSIGN_OR_RETURN(std::string bd, Int64Const(b, {batch_dims}));
  if (batch_dims < 0) {  // Counted from the end of indices' dims.
    SL_ASSIGN_OR_RETURN(std::string indices_rank, b->Unary("Onnx>Shape", is));
    SL_ASSIGN_OR_RETURN(bd, b->Binary("AddV2", bd, indices_rank));
  }
  SL_ASSIGN_OR_RETURN(std::string start, Int64Const(b, {0}));
  SL_ASSIGN_OR_RETURN(std::string end, Int64Const(b, {std::numeric_limits<int64_t>::max()}));
  SL_ASSIGN_OR_RETURN(std::string batch_dims_of_params, Part(b, ps, start, bd));
  SL_ASSIGN_OR_RETURN(std::string outer_dims, Part(b, ps, bd, axis));
  SL_ASSIGN_OR_RETURN(std::string dim, Part(b, ps, axis, after_axis));
  SL_ASSIGN_OR_RETURN(std::string inner_dims, Part(b, ps, after_axis, end));
  SL_ASSIGN_OR_RETURN(std::string index_dims, Part(b, is, bd, end));
  SL_ASSIGN_OR_RETURN(std::string batch, Product(b, batch_dims_of_params));
  SL_ASSIGN_OR_RETURN(std::string outer, Product(b, outer_dims));
  SL_ASSIGN_OR_RETURN(std::string inner, Product(b, inner_dims));
  SL_ASSIGN_OR_RETURN(std::string count, Product(b, index_dims));

  SL_ASSIGN_OR_RETURN(std::string dy_shape, Join(b, {batch, outer, count, inner}));
  SL_ASSIGN_OR_RETURN(std::string dy4, b->Binary("Reshape", dys[0], dy_shape));
  SL_ASSIGN_OR_RETURN(std::string updates, Transposed(b, dy4, {0, 2, 1, 3}));
  // Coordinates (b, indices[b, j]) as [batch, n, 2].
  SL_ASSIGN_OR_RETURN(std::string index_shape, Join(b, {batch, count}));
  SL_ASSIGN_OR_RETURN(std::string indices64, CastTo(b, indices, DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string idx, b->Binary("Reshape", indices64, index_shape));
  SL_ASSIGN_OR_RETURN(std::string scalar_shape, Int64Const(b, {}));
  SL_ASSIGN_OR_RETURN(std::string batch_scalar, b->Binary("Onnx>Reshape", batch, scalar_shape));
  SL_ASSIGN_OR_RETURN(std::string zero, Int64Scalar(b, 0));
  SL_ASSIGN_OR_RETURN(std::string one, Int64Scalar(b, 1));
  SL_ASSIGN_OR_RETURN(auto iota, b->Add("Onnx>Range", {{zero}, {batch_scalar}, {one}}));
  SL_ASSIGN_OR_RETURN(std::string column, Int64Const(b, {-1, 1}));
  SL_ASSIGN_OR_RETURN(std::string iota_column, b->Binary("Onnx>Reshape", iota[0], column));
  SL_ASSIGN_OR_RETURN(std::string batch_index, b->Binary("Onnx>Expand", iota_column, index_shape));
  AttrMap axis2;
  axis2["axis"] = Attr(int64_t{2});
  SL_ASSIGN_OR_RETURN(auto coords, b->Add("Pack", {{batch_index, idx}}, axis2));

  SL_ASSIGN_OR_RETURN(std::string scattered_shape, Join(b, {batch, dim, outer, inner}));
  SL_ASSIGN_OR_RETURN(auto scattered, b->Add("ScatterNd", {{coords[0]}, {updates}, {scattered_shape}}));
  SL_ASSIGN_OR_RETURN(std::string back, Transposed(b, scattered[0], {0, 2, 1, 3}));
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Reshape", back, ps));
  return absl::OkStatus();
}

// GatherNd(params, indices): dy scatter-added at the same index tuples (ScatterNd).
absl::Status GatherNdGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(std::string indices, CastTo(b, n.inputs[1], DT_INT64));
  SL_ASSIGN_OR_RETURN(std::string shape, Shape64(b, n.inputs[0]));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("ScatterNd", {{indices}, {dys[0]}, {shape}}));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// Unpack: the outputs' gradients stacked back along the axis.
absl::Status UnpackGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < dys.size(); ++i) {
    SL_ASSIGN_OR_RETURN(std::string d, OrZeros(b, n, dys, i));
    parts.push_back(d);
  }
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Pack", {parts}, CopyAttrs(n, {"axis"})));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

// Split(split_dim, value) and SplitV(value, size_splits, split_dim): the pieces' gradients
// concatenated along split_dim; split_dim and size_splits get none.
absl::Status SplitPieces(GradientBuilder* b, const GradientNode& n, const Dxs& dys, size_t value_at,
                         size_t dim_at, Dxs* dxs) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < dys.size(); ++i) {
    SL_ASSIGN_OR_RETURN(std::string d, OrZeros(b, n, dys, i));
    parts.push_back(d);
  }
  if (parts.size() == 1) {
    (*dxs)[value_at] = parts[0];
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("ConcatV2", {parts, {n.inputs[dim_at]}}));
  (*dxs)[value_at] = dx[0];
  return absl::OkStatus();
}

absl::Status SplitGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return SplitPieces(b, n, dys, 1, 0, dxs);
}

absl::Status SplitVGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  return SplitPieces(b, n, dys, 0, 2, dxs);
}

// Cumsum: each input element reaches the outputs after it (before it, reversed), so dy is
// summed the other way, exclusive as the forward was.
absl::Status CumsumGrad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  SL_ASSIGN_OR_RETURN(bool reverse, NodeAttr<bool>(n, "reverse", false));
  AttrMap attrs = CopyAttrs(n, {"exclusive"});
  attrs["reverse"] = Attr(!reverse);
  SL_ASSIGN_OR_RETURN((*dxs)[0], b->Binary("Cumsum", dys[0], n.inputs[1], attrs));
  return absl::OkStatus();
}

// TopKV2: the values' gradient goes back to the positions they were taken from along the last
// dim (distinct in each row); the indices output and k pass nothing back.
absl::Status TopKV2Grad(GradientBuilder* b, const GradientNode& n, const Dxs& dys, Dxs* dxs) {
  if (dys[0].empty() || !IsFloat(b->Dtype(dys[0]))) return absl::OkStatus();
  SL_ASSIGN_OR_RETURN(std::string zeros, b->Fill(n.inputs[0], 0.0));
  SL_ASSIGN_OR_RETURN(std::string indices, CastTo(b, n.outputs[1], DT_INT64));
  AttrMap attrs;
  attrs["axis"] = Attr(int64_t{-1});
  attrs["reduction"] = Attr(std::string("add"));
  SL_ASSIGN_OR_RETURN(auto dx, b->Add("Onnx>ScatterElements", {{zeros}, {indices}, {dys[0]}}, attrs));
  (*dxs)[0] = dx[0];
  return absl::OkStatus();
}

absl::Status NoGradient(GradientBuilder*, const GradientNode&, const Dxs&, Dxs*) { return absl::OkStatus(); }

REGISTER_GRADIENT("Slice", FloatOnly<SliceGrad>);
REGISTER_GRADIENT("StridedSlice", FloatOnly<StridedSliceGradFn>);
REGISTER_GRADIENT("Pad", FloatOnly<PadGrad>);
REGISTER_GRADIENT("PadV2", FloatOnly<PadGrad>);
REGISTER_GRADIENT("MirrorPad", FloatOnly<MirrorPadGradFn>);
REGISTER_GRADIENT("Tile", FloatOnly<TileGrad>);
REGISTER_GRADIENT("GatherV2", FloatOnly<GatherV2Grad>);
REGISTER_GRADIENT("GatherNd", FloatOnly<GatherNdGrad>);
REGISTER_GRADIENT("Unpack", FloatOnly<UnpackGrad>);
REGISTER_GRADIENT("Split", FloatOnly<SplitGrad>);
REGISTER_GRADIENT("SplitV", FloatOnly<SplitVGrad>);
REGISTER_GRADIENT("Cumsum", FloatOnly<CumsumGrad>);
REGISTER_GRADIENT("TopKV2", TopKV2Grad);
// TensorFlow declares these not differentiable: their outputs are indices or one-hot codes.
REGISTER_GRADIENT("OneHot", NoGradient);
REGISTER_GRADIENT("Where", NoGradient);

}  // namespace
}  // namespace sluice
