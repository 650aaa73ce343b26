// Small conveniences the gradient functions share: constants, attrs, and reading the forward
// node's attrs. Internal to frontend/gradients.
//
//   SL_ASSIGN_OR_RETURN(std::string half, ScalarConst(b, b->Dtype(x), 0.5));
//   SL_ASSIGN_OR_RETURN(std::string axes, Int64Const(b, {-1}));
//   SL_ASSIGN_OR_RETURN(int64_t axis, NodeAttr<int64_t>(n, "axis", -1));
#ifndef SLUICE_FRONTEND_GRADIENTS_GRADIENT_UTIL_H_
#define SLUICE_FRONTEND_GRADIENTS_GRADIENT_UTIL_H_

#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/gradients/gradients.h"

namespace sluice {
namespace gradient_util {

template <typename T>
AttrValue Attr(const T& value) {
  AttrValue a;
  SetAttrValue(value, &a);
  return a;
}

// The forward node's attr `name`, or `fallback` when it has none.
template <typename T>
absl::StatusOr<T> NodeAttr(const GradientNode& n, absl::string_view name, T fallback) {
  T value;
  SL_RETURN_IF_ERROR(GetNodeAttrOr(AttrSlice(*n.def), name, fallback, &value));
  return value;
}

// The forward node's attrs named in `names` (those it has), to give a backward node.
inline AttrMap CopyAttrs(const GradientNode& n, std::initializer_list<const char*> names) {
  AttrMap attrs;
  for (const char* name : names) {
    auto it = n.def->attr().find(name);
    if (it != n.def->attr().end()) attrs[name] = it->second;
  }
  return attrs;
}

// How many tensors the forward node's list(type) attr `name` holds (its optional inputs).
inline int ListSize(const GradientNode& n, absl::string_view name) {
  auto it = n.def->attr().find(std::string(name));
  return it == n.def->attr().end() ? 0 : it->second.list().type_size();
}

inline absl::StatusOr<std::string> Const(GradientBuilder* b, const Tensor& value) {
  AttrMap attrs;
  attrs["value"] = Attr(value);
  attrs["dtype"] = Attr(value.dtype());
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Const", {}, attrs));
  return out[0];
}

// A 0-D constant of a floating type.
inline absl::StatusOr<std::string> ScalarConst(GradientBuilder* b, DataType dt, double value) {
  Tensor t(dt, TensorShape({}));
  bool ok = false;
  VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      t.flat<T>()[0] = static_cast<T>(value);
      ok = true;
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      t.flat<T>()[0] = T(static_cast<float>(value));
      ok = true;
    }
  });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("no gradient for ", DataTypeString(dt)));
  return Const(b, t);
}

inline absl::StatusOr<std::string> Int64Const(GradientBuilder* b, const std::vector<int64_t>& v) {
  return Const(b, Tensor::FromVector<int64_t>(v, TensorShape({static_cast<int64_t>(v.size())})));
}

inline bool IsFloat(DataType dt) {
  return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_HALF || dt == DT_BFLOAT16;
}

// Runs `fn` only when every gradient reaching the node is of a floating type: as in
// TensorFlow, integer (and bool) outputs pass no gradient back.
template <GradientFn fn>
absl::Status FloatOnly(GradientBuilder* b, const GradientNode& n, const std::vector<std::string>& dys,
                       std::vector<std::string>* dxs) {
  for (const std::string& dy : dys) {
    if (!dy.empty() && !IsFloat(b->Dtype(dy))) return absl::OkStatus();
  }
  return fn(b, n, dys, dxs);
}

// `t` reshaped to the shape of `like`.
inline absl::StatusOr<std::string> ReshapeLike(GradientBuilder* b, const std::string& t, const std::string& like) {
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", like));
  return b->Binary("Onnx>Reshape", t, shape);
}

// `t` broadcast to the shape of `like`.
inline absl::StatusOr<std::string> ExpandLike(GradientBuilder* b, const std::string& t, const std::string& like) {
  SL_ASSIGN_OR_RETURN(std::string shape, b->Unary("Onnx>Shape", like));
  return b->Binary("Onnx>Expand", t, shape);
}

// A reduction's output and gradient with the reduced dims kept (as size 1), so that they
// broadcast against the input.
struct Kept {
  std::string y, dy;
};

// The reduction `op` applied to `t` over the axes of reduction node `n`, dims kept.
inline absl::StatusOr<std::string> ReduceKept(GradientBuilder* b, const GradientNode& n,
                                              absl::string_view op, const std::string& t) {
  AttrMap attrs;
  attrs["keepdims"] = Attr(true);
  SL_ASSIGN_OR_RETURN(bool noop, NodeAttr<bool>(n, "noop_with_empty_axes", false));
  attrs["noop_with_empty_axes"] = Attr(noop);
  std::vector<std::string> axes;
  if (n.inputs.size() > 1) axes.push_back(n.inputs[1]);
  SL_ASSIGN_OR_RETURN(auto out, b->Add(op, {{t}, axes}, attrs));
  return out[0];
}

inline absl::StatusOr<Kept> KeepReducedDims(GradientBuilder* b, const GradientNode& n, const std::string& dy) {
  SL_ASSIGN_OR_RETURN(bool keepdims, NodeAttr<bool>(n, "keepdims", true));
  Kept k{n.outputs[0], dy};
  // Without axes everything is reduced (a scalar broadcasts as it is) or nothing is.
  if (keepdims || n.inputs.size() < 2) return k;
  SL_ASSIGN_OR_RETURN(k.y, b->Binary("Onnx>Unsqueeze", n.outputs[0], n.inputs[1]));
  SL_ASSIGN_OR_RETURN(k.dy, b->Binary("Onnx>Unsqueeze", dy, n.inputs[1]));
  return k;
}

inline absl::StatusOr<std::string> Where(GradientBuilder* b, const std::string& cond, const std::string& t,
                                         const std::string& f) {
  SL_ASSIGN_OR_RETURN(auto out, b->Add("Onnx>Where", {{cond}, {t}, {f}}));
  return out[0];
}

// `t` cast to `dt` (itself when it has that type).
inline absl::StatusOr<std::string> CastTo(GradientBuilder* b, const std::string& t, DataType dt) {
  if (b->Dtype(t) == dt) return t;
  AttrMap to;
  to["to"] = Attr(dt);
  return b->Unary("Onnx>Cast", t, to);
}

// d prod / d x for a product over groups: each element's group-mates multiplied, without
// dividing by zero. y / x where x != 0; where x == 0, the product of the group's nonzero
// elements if x is its only zero, else 0. `reduce(op, t)` reduces t over the groups with
// `op` (ReduceProd, ReduceSum), keeping the reduced dims so the result broadcasts onto x.
inline absl::StatusOr<std::string> ProductOfOthers(
    GradientBuilder* b, const std::string& x,
    const std::function<absl::StatusOr<std::string>(const char* op, const std::string& t)>& reduce) {
  const DataType dt = b->Dtype(x);
  SL_ASSIGN_OR_RETURN(std::string zero, ScalarConst(b, dt, 0.0));
  SL_ASSIGN_OR_RETURN(std::string one, ScalarConst(b, dt, 1.0));
  SL_ASSIGN_OR_RETURN(std::string is_zero, b->Binary("Onnx>Equal", x, zero));
  SL_ASSIGN_OR_RETURN(std::string nonzero, Where(b, is_zero, one, x));
  SL_ASSIGN_OR_RETURN(std::string prod, reduce("Onnx>ReduceProd", nonzero));
  SL_ASSIGN_OR_RETURN(std::string zero_flags, CastTo(b, is_zero, dt));
  SL_ASSIGN_OR_RETURN(std::string zeros, reduce("Onnx>ReduceSum", zero_flags));
  SL_ASSIGN_OR_RETURN(std::string no_zero, b->Binary("Onnx>Equal", zeros, zero));
  SL_ASSIGN_OR_RETURN(std::string one_zero, b->Binary("Onnx>Equal", zeros, one));
  SL_ASSIGN_OR_RETURN(std::string others, b->Binary("Div", prod, nonzero));
  SL_ASSIGN_OR_RETURN(std::string at_nonzero, Where(b, no_zero, others, zero));
  SL_ASSIGN_OR_RETURN(std::string at_zero, Where(b, one_zero, prod, zero));
  return Where(b, is_zero, at_zero, at_nonzero);
}

}  // namespace gradient_util
}  // namespace sluice

#endif  // SLUICE_FRONTEND_GRADIENTS_GRADIENT_UTIL_H_
