#include "optimizer/passes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "framework/checked_size.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "optimizer/rewrite_util.h"

namespace sluice {

namespace {

// The axis a ReduceMean with keepdims reduces, if it reduces exactly one (from its constant axes
// input), as a negative index when `rank` is unknown (-1).
std::optional<int64_t> ReducedAxis(const GraphIndex& index, const NodeDef& mean, int rank) {
  auto keepdims = mean.attr().find("keepdims");  // Its default is true.
  if (mean.input_size() != 2 || (keepdims != mean.attr().end() && !keepdims->second.b())) return std::nullopt;
  std::optional<Tensor> axes = ConstValue(index.by_name, index.hoisted, mean.input(1));
  if (!axes || axes->dtype() != DT_INT64 || axes->NumElements() != 1) return std::nullopt;
  int64_t axis = axes->flat<int64_t>()[0];
  if (rank >= 0 && axis >= 0) axis -= rank;
  return axis;
}

// A per-element constant of the normalized axis (LayerNormalization's scale or bias) from the
// constant `tensor` that an element-wise op applied over the last axis of length `n`: one
// value or n, in a shape that broadcasts over the last axis only.
std::optional<Tensor> PerElement(const GraphIndex& index, const std::string& tensor, int64_t n, int rank) {
  std::optional<Tensor> v = ConstValue(index.by_name, index.hoisted, tensor);
  if (!v || v->dtype() != DT_FLOAT || v->dims() > rank) return std::nullopt;
  if (v->NumElements() != n && v->NumElements() != 1) return std::nullopt;
  for (int i = 0; i + 1 < v->dims(); ++i) {
    if (v->dim_size(i) != 1) return std::nullopt;
  }
  Tensor out(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) out.flat<float>()[i] = v->flat<float>()[v->NumElements() == 1 ? 0 : i];
  return out;
}

}  // namespace

absl::StatusOr<int> FuseLayerNorms(GraphItem* graph) {
  int fused = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped, maybe_unread;
  std::vector<NodeDef> added;
  for (NodeDef& div : *graph->graph.mutable_node()) {
    // Div(d, Sqrt(Add(ReduceMean(d * d), eps))) with d = Sub(x, ReduceMean(x)).
    if (div.op() != "Div" || div.input_size() != 2 || div.attr().at("T").type() != DT_FLOAT) continue;
    NodeDef* sub = FloatProducer(index, div.input(0), "Sub");
    NodeDef* sqrt = FloatProducer(index, div.input(1), "Sqrt");
    if (sub == nullptr || sqrt == nullptr || !Internal(index, *sqrt, 1)) continue;
    NodeDef* add_eps = FloatProducer(index, sqrt->input(0), "Add");
    if (add_eps == nullptr || !Internal(index, *add_eps, 1)) continue;
    const int eps_at = InputWhere(*add_eps, [&](const std::string& t) { return ConstNumber(index, t).has_value(); });
    if (eps_at < 0) continue;
    const double epsilon = *ConstNumber(index, add_eps->input(eps_at));
    NodeDef* var = FloatProducer(index, add_eps->input(1 - eps_at), "Onnx>ReduceMean");
    NodeDef* mean = FloatProducer(index, sub->input(1), "Onnx>ReduceMean");
    if (var == nullptr || mean == nullptr || !Internal(index, *var, 1) || !Internal(index, *mean, 1) ||
        !SameTensor(mean->input(0), sub->input(0))) {
      continue;
    }
    NodeDef* square = FloatProducer(index, var->input(0), "Pow");
    int d_reads = 2;  // The square's and the Div's.
    if (square != nullptr) {
      if (!SameTensor(square->input(0), div.input(0)) || !ConstNear(index, square->input(1), 2.0)) continue;
    } else {
      square = FloatProducer(index, var->input(0), "Mul");
      if (square == nullptr || !SameTensor(square->input(0), div.input(0)) ||
          !SameTensor(square->input(1), div.input(0))) {
        continue;
      }
      d_reads = 3;
    }
    if (!Internal(index, *square, 1) || !Internal(index, *sub, d_reads)) continue;
    // Both means over the last axis, whose length must be known for the scale and bias.
    const std::string x = sub->input(0);
    auto x_shape = graph->shapes.find(Canonical(x));
    if (x_shape == graph->shapes.end() || x_shape->second.rank() < 1) continue;
    const int rank = x_shape->second.rank();
    const int64_t n = x_shape->second.dim(rank - 1);
    const std::optional<int64_t> axis = ReducedAxis(index, *mean, rank);
    if (n < 1 || !axis || *axis != -1 || ReducedAxis(index, *var, rank) != axis) continue;
    // Then, optionally, Mul by a constant scale and Add of a constant bias.
    const auto other_input = [](const NodeDef& n, const NodeDef& of) {
      return InputWhere(n, [&](const std::string& t) { return !SameTensor(t, of.name()); });
    };
    std::optional<Tensor> scale, bias;
    NodeDef* mul = SoleReader(index, div, "Mul");
    if (mul != nullptr) {
      const int at = other_input(*mul, div);
      if (at < 0 || !(scale = PerElement(index, mul->input(at), n, rank))) mul = nullptr;
    }
    NodeDef* add = mul != nullptr ? SoleReader(index, *mul, "Add") : nullptr;
    if (add != nullptr) {
      const int at = other_input(*add, *mul);
      if (at < 0 || !(bias = PerElement(index, add->input(at), n, rank))) add = nullptr;
    }
    NodeDef* last = add != nullptr ? add : mul != nullptr ? mul : &div;
    const std::string scale_name = absl::StrCat(last->name(), "/layer_norm_scale");
    const std::string bias_name = absl::StrCat(last->name(), "/layer_norm_bias");
    if (index.by_name.contains(scale_name) || index.by_name.contains(bias_name)) continue;
    if (!scale) {
      scale = Tensor(DT_FLOAT, TensorShape({n}));
      for (int64_t i = 0; i < n; ++i) scale->flat<float>()[i] = 1.0f;
    }
    std::vector<NodeDef*> span;
    for (NodeDef* d : {mean, sub, square, var, add_eps, sqrt, &div, mul, add}) {
      if (d != nullptr && d != last) span.push_back(d);
    }
    // The last node becomes the normalization under its own name (output 0 is y).
    DropFusedSpan(span, last, &dropped, &maybe_unread);
    NodeDef ln;
    ln.set_name(last->name());
    ln.set_op("Onnx>LayerNormalization");
    ln.set_device(last->device());
    ln.add_input(x);
    ln.add_input(scale_name);
    added.push_back(ConstNode(scale_name, last->device(), *scale));
    auto& attr = *ln.mutable_attr();
    attr["Tb"].mutable_list();
    if (bias) {
      ln.add_input(bias_name);
      added.push_back(ConstNode(bias_name, last->device(), *bias));
      attr["Tb"].mutable_list()->add_type(DT_FLOAT);
    }
    attr["T"].set_type(DT_FLOAT);
    attr["U"].set_type(DT_FLOAT);
    attr["axis"].set_i(-1);
    attr["epsilon"].set_f(static_cast<float>(epsilon));
    attr["stash_type"].set_i(1);
    *last = std::move(ln);
    ++fused;
  }
  if (fused == 0) return 0;
  Rewire(&graph->graph, {}, dropped);
  for (NodeDef& n : added) *graph->graph.add_node() = std::move(n);
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

namespace {

// The x of torch's tanh GELU inside Tanh: Mul(sqrt(2/pi), Add(x, Mul(0.044715, x^3))), each
// Mul and Add in either order; the nodes it spans go to `span`.
std::optional<std::string> TanhGeluArgument(const GraphIndex& index, const NodeDef& tanh,
                                            std::vector<NodeDef*>* span) {
  NodeDef* scaled = FloatProducer(index, tanh.input(0), "Mul");
  if (scaled == nullptr || !Internal(index, *scaled, 1)) return std::nullopt;
  const int k_at = InputWhere(*scaled, [&](const std::string& t) { return ConstNear(index, t, 0.7978845608028654); });
  if (k_at < 0) return std::nullopt;
  NodeDef* sum = FloatProducer(index, scaled->input(1 - k_at), "Add");
  if (sum == nullptr || !Internal(index, *sum, 1)) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    NodeDef* cubic = FloatProducer(index, sum->input(1 - i), "Mul");
    if (cubic == nullptr || !Internal(index, *cubic, 1)) continue;
    const int c_at = InputWhere(*cubic, [&](const std::string& t) { return ConstNear(index, t, 0.044715); });
    if (c_at < 0) continue;
    const std::string& x = sum->input(i);
    const std::string& cube_out = cubic->input(1 - c_at);
    const auto is_x = [&](const std::string& t) { return SameTensor(t, x); };
    // x^3 as Pow(x, 3), or as torch writes it, Mul(x, Mul(x, x)) in either order.
    if (NodeDef* pow = FloatProducer(index, cube_out, "Pow")) {
      if (!Internal(index, *pow, 1) || !is_x(pow->input(0)) || !ConstNear(index, pow->input(1), 3.0)) continue;
      span->insert(span->end(), {scaled, sum, cubic, pow});
      return x;
    }
    NodeDef* cube = FloatProducer(index, cube_out, "Mul");
    const int x_at = cube == nullptr ? -1 : InputWhere(*cube, is_x);
    NodeDef* square = x_at < 0 ? nullptr : FloatProducer(index, cube->input(1 - x_at), "Mul");
    if (square == nullptr || !Internal(index, *cube, 1) || !Internal(index, *square, 1) ||
        !is_x(square->input(0)) || !is_x(square->input(1))) {
      continue;
    }
    span->insert(span->end(), {scaled, sum, cubic, cube, square});
    return x;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<int> FuseGelus(GraphItem* graph) {
  int fused = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped, maybe_unread;
  for (NodeDef& core : *graph->graph.mutable_node()) {
    // Erf(x / sqrt(2)) (or x * 1/sqrt(2)), or Tanh of the tanh form's argument.
    const bool erf = core.op() == "Erf";
    if ((!erf && core.op() != "Tanh") || core.input_size() != 1 || core.attr().at("T").type() != DT_FLOAT) continue;
    std::vector<NodeDef*> span = {&core};
    std::optional<std::string> x;
    if (erf) {
      if (NodeDef* div = FloatProducer(index, core.input(0), "Div")) {
        if (Internal(index, *div, 1) && ConstNear(index, div->input(1), M_SQRT2)) x = div->input(0);
        span.push_back(div);
      } else if (NodeDef* mul = FloatProducer(index, core.input(0), "Mul")) {
        const int at = InputWhere(*mul, [&](const std::string& t) { return ConstNear(index, t, M_SQRT1_2); });
        if (at >= 0 && Internal(index, *mul, 1)) x = mul->input(1 - at);
        span.push_back(mul);
      }
    } else {
      x = TanhGeluArgument(index, core, &span);
    }
    // x of rank 0 would take the rank of a [1] constant.
    auto x_shape = x ? graph->shapes.find(Canonical(*x)) : graph->shapes.end();
    if (x_shape == graph->shapes.end() || x_shape->second.rank() < 1) continue;
    // Then Add(core, 1), and the product of that, x and 0.5 in any of the three groupings.
    NodeDef* one_plus = SoleReader(index, core, "Add");
    if (one_plus == nullptr ||
        InputWhere(*one_plus, [&](const std::string& t) { return ConstNear(index, t, 1.0); }) < 0) {
      continue;
    }
    span.push_back(one_plus);
    NodeDef* product = SoleReader(index, *one_plus, "Mul");
    if (product == nullptr) continue;
    const std::string& other = product->input(SameTensor(product->input(0), one_plus->name()) ? 1 : 0);
    const auto is_half = [&](const std::string& t) { return ConstNear(index, t, 0.5); };
    const auto is_x = [&](const std::string& t) { return SameTensor(t, *x); };
    NodeDef* y = nullptr;
    if (is_x(other)) {  // (x * (1 + erf)) * 0.5
      y = SoleReader(index, *product, "Mul");
      if (y != nullptr && InputWhere(*y, is_half) < 0) y = nullptr;
      span.push_back(product);
    } else if (is_half(other)) {  // x * ((1 + erf) * 0.5)
      y = SoleReader(index, *product, "Mul");
      if (y != nullptr && InputWhere(*y, is_x) < 0) y = nullptr;
      span.push_back(product);
    } else if (NodeDef* half_x = FloatProducer(index, other, "Mul")) {  // (x * 0.5) * (1 + erf)
      if (Internal(index, *half_x, 1) && InputWhere(*half_x, is_half) >= 0 && InputWhere(*half_x, is_x) >= 0) {
        y = product;
        span.push_back(half_x);
      }
    }
    if (y == nullptr) continue;
    DropFusedSpan(span, y, &dropped, &maybe_unread);
    NodeDef gelu;
    gelu.set_name(y->name());
    gelu.set_op("Onnx>Gelu");
    gelu.set_device(y->device());
    gelu.add_input(*x);
    (*gelu.mutable_attr())["T"].set_type(DT_FLOAT);
    (*gelu.mutable_attr())["approximate"].set_s(erf ? "none" : "tanh");
    *y = std::move(gelu);
    ++fused;
  }
  if (fused == 0) return 0;
  Rewire(&graph->graph, {}, dropped);
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

}  // namespace sluice
