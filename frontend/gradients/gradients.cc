#include "frontend/gradients/gradients.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"

namespace sluice {

GradientRegistry* GradientRegistry::Global() {
  static auto* registry = new GradientRegistry();
  return registry;
}

GradientFn GradientRegistry::Find(absl::string_view op) const {
  auto it = fns_.find(op);
  return it == fns_.end() ? nullptr : it->second;
}

std::vector<std::string> GradientRegistry::Ops() const {
  std::vector<std::string> ops;
  for (const auto& [op, fn] : fns_) ops.push_back(op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

absl::StatusOr<std::string> GradientBuilder::Unary(absl::string_view op, const std::string& x, AttrMap attrs) {
  SL_ASSIGN_OR_RETURN(auto out, Add(op, {{x}}, std::move(attrs)));
  return out[0];
}

absl::StatusOr<std::string> GradientBuilder::Binary(absl::string_view op, const std::string& a,
                                                    const std::string& b, AttrMap attrs) {
  SL_ASSIGN_OR_RETURN(auto out, Add(op, {{a}, {b}}, std::move(attrs)));
  return out[0];
}

absl::StatusOr<std::string> GradientBuilder::SumLike(const std::string& t, const std::string& like) {
  SL_ASSIGN_OR_RETURN(std::string shape, Unary("Onnx>Shape", like));
  return Binary("SumToShape", t, shape);
}

absl::StatusOr<std::string> GradientBuilder::Fill(const std::string& like, double value) {
  SL_ASSIGN_OR_RETURN(std::string shape, Unary("Onnx>Shape", like));
  const DataType dt = Dtype(like);
  Tensor v(dt, TensorShape({1}));
  bool ok = VisitDataType(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      v.flat<T>()[0] = static_cast<T>(value);
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      v.flat<T>()[0] = T(static_cast<float>(value));
    }
  });
  if (!ok || dt == DT_STRING) return absl::InvalidArgumentError(absl::StrCat("no gradient for ", DataTypeString(dt)));
  AttrMap attrs;
  SetAttrValue(v, &attrs["value"]);
  attrs["dtype"].set_type(dt);
  SL_ASSIGN_OR_RETURN(auto out, Add("Onnx>ConstantOfShape", {{shape}}, attrs));
  return out[0];
}

namespace {

std::string Canonical(const std::string& t) {
  auto id = ParseTensorName(t);
  return id.ok() ? TensorId{id->node, id->index}.ToString() : t;
}

struct Forward {
  const NodeDef* def;
  std::vector<std::string> inputs;                  // Canonical data inputs.
  std::vector<std::vector<std::string>> arg_groups;  // The same, grouped per OpDef input arg.
  int num_outputs = 0;
};

absl::StatusOr<Forward> Describe(const NodeDef& n) {
  Forward f;
  f.def = &n;
  SL_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(n.op()));
  DataTypeVector in, out;
  SL_RETURN_IF_ERROR(InOutTypesForNode(n, reg->op_def, &in, &out));
  f.num_outputs = static_cast<int>(out.size());
  int next = 0;
  for (const std::string& i : n.input()) {
    if (!i.empty() && i[0] == '^') continue;
    f.inputs.push_back(Canonical(i));
  }
  for (const auto& arg : reg->op_def.input_arg()) {
    DataTypeVector types;
    SL_RETURN_IF_ERROR(ArgTypes(AttrSlice(n), arg, &types));
    std::vector<std::string> group;
    for (size_t k = 0; k < types.size() && next < static_cast<int>(f.inputs.size()); ++k) group.push_back(f.inputs[next++]);
    f.arg_groups.push_back(group);
  }
  return f;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SymbolicGradients(
    GradientBuilder* b, const GraphDef& graph, const std::string& y_name,
    const std::vector<std::string>& xs, const std::vector<std::string>& zs,
    const absl::flat_hash_map<std::string, std::string>& substitutions) {
  return SymbolicGradients(b, graph, std::vector<std::string>{y_name}, {}, xs, zs, substitutions);
}

absl::StatusOr<std::vector<std::string>> SymbolicGradients(
    GradientBuilder* b, const GraphDef& graph, const std::vector<std::string>& y_names,
    const std::vector<std::string>& seeds, const std::vector<std::string>& xs,
    const std::vector<std::string>& zs,
    const absl::flat_hash_map<std::string, std::string>& substitutions) {
  if (y_names.empty()) return absl::InvalidArgumentError("no y to differentiate");
  if (!seeds.empty() && seeds.size() != y_names.size()) {
    return absl::InvalidArgumentError(absl::StrCat(y_names.size(), " ys but ", seeds.size(), " initial gradients"));
  }
  const std::string y_name = absl::StrJoin(y_names, ", ");  // For error paths.
  absl::flat_hash_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph.node()) by_name[n.name()] = &n;
  absl::flat_hash_set<std::string> sources;
  for (const auto& x : xs) sources.insert(Canonical(x));
  for (const auto& z : zs) sources.insert(Canonical(z));
  std::vector<std::string> ys;
  for (const auto& y : y_names) ys.push_back(Canonical(y));
  auto producer = [&](const std::string& t) -> const NodeDef* {
    auto id = ParseTensorName(t);
    if (!id.ok()) return nullptr;
    auto it = by_name.find(id->node);
    return it == by_name.end() ? nullptr : it->second;
  };

  // Nodes between the sources and y, in topological order (post-order from y).
  absl::flat_hash_map<std::string, Forward> info;
  absl::flat_hash_map<std::string, bool> depends;  // Node name -> depends on a source.
  absl::flat_hash_map<std::string, std::string> consumer;  // For error paths: node -> who needs it.
  std::vector<std::string> order;
  std::vector<std::pair<const NodeDef*, bool>> stack;
  absl::flat_hash_set<std::string> visited;
  for (size_t i = ys.size(); i-- > 0;) {
    if (sources.contains(ys[i])) continue;
    const NodeDef* top = producer(ys[i]);
    if (top == nullptr) return absl::InvalidArgumentError(absl::StrCat("y '", y_names[i], "' is not in the graph"));
    stack.push_back({top, false});
  }
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      const Forward& f = info.at(n->name());
      bool dep = false;
      for (const auto& t : f.inputs) {
        if (sources.contains(t)) {
          dep = true;
        } else if (const NodeDef* p = producer(t); p != nullptr && depends[p->name()]) {
          dep = true;
        }
      }
      depends[n->name()] = dep;
      order.push_back(n->name());
      continue;
    }
    if (!visited.insert(n->name()).second) continue;
    SL_ASSIGN_OR_RETURN(Forward f, Describe(*n));
    stack.push_back({n, true});
    for (const auto& t : f.inputs) {
      if (sources.contains(t)) continue;
      const NodeDef* p = producer(t);
      if (p != nullptr && !visited.contains(p->name())) {
        consumer.emplace(p->name(), n->name());
        stack.push_back({p, false});
      }
    }
    info.emplace(n->name(), std::move(f));
  }

  // With substitutions, recompute the dependent nodes from the substituted values.
  absl::flat_hash_map<std::string, std::string> value;  // Forward tensor -> tensor to use.
  for (const auto& [from, to] : substitutions) value[Canonical(from)] = to;
  auto use = [&](const std::string& t) {
    auto it = value.find(t);
    return it == value.end() ? t : it->second;
  };
  absl::flat_hash_map<std::string, std::vector<std::string>> outputs;  // Node -> its output tensors.
  for (const std::string& name : order) {
    const Forward& f = info.at(name);
    std::vector<std::string> outs;
    for (int k = 0; k < f.num_outputs; ++k) outs.push_back(TensorId{name, k}.ToString());
    bool changed = false;
    for (const auto& t : f.inputs) changed |= use(t) != t;
    if (depends[name] && changed) {
      std::vector<std::vector<std::string>> args;
      for (const auto& group : f.arg_groups) {
        std::vector<std::string> g;
        for (const auto& t : group) g.push_back(use(t));
        args.push_back(g);
      }
      AttrMap attrs = f.def->attr();
      SL_ASSIGN_OR_RETURN(outs, b->Add(f.def->op(), args, attrs));
      for (int k = 0; k < f.num_outputs; ++k) value[TensorId{name, k}.ToString()] = outs[k];
    }
    outputs[name] = outs;
  }

  absl::flat_hash_map<std::string, std::vector<std::string>> partials;
  auto sum = [&](const std::string& t) -> absl::StatusOr<std::string> {
    auto it = partials.find(t);
    if (it == partials.end() || it->second.empty()) return std::string();
    if (it->second.size() == 1) return it->second[0];
    SL_ASSIGN_OR_RETURN(auto out, b->Add("AddN", {it->second}));
    return out[0];
  };
  for (size_t i = 0; i < ys.size(); ++i) {
    std::string seed = seeds.empty() ? "" : seeds[i];
    if (seed.empty()) {
      SL_ASSIGN_OR_RETURN(seed, b->Fill(use(ys[i]), 1.0));
    }
    partials[use(ys[i])].push_back(seed);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::string& name = *it;
    if (!depends[name]) continue;
    const Forward& f = info.at(name);
    std::vector<std::string> dys;
    bool any = false;
    for (const auto& t : outputs[name]) {
      SL_ASSIGN_OR_RETURN(std::string d, sum(t));
      any |= !d.empty();
      dys.push_back(d);
    }
    if (!any) continue;
    GradientFn fn = GradientRegistry::Global()->Find(f.def->op());
    if (fn == nullptr) {
      std::vector<std::string> path = {name};
      for (auto c = consumer.find(name); c != consumer.end(); c = consumer.find(c->second)) path.push_back(c->second);
      return absl::UnimplementedError(absl::StrCat("op '", f.def->op(), "' (node '", name,
                                                   "') has no gradient; path from y: ", y_name, " <- ",
                                                   absl::StrJoin(path.rbegin(), path.rend(), " <- ")));
    }
    GradientNode node;
    node.def = f.def;
    for (const auto& t : f.inputs) node.inputs.push_back(use(t));
    node.outputs = outputs[name];
    std::vector<std::string> dxs(node.inputs.size());
    SL_RETURN_IF_ERROR(fn(b, node, dys, &dxs), "gradient of node '", name, "' (op '", f.def->op(), "')");
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      const std::string& t = f.inputs[i];
      const NodeDef* p = producer(t);
      const bool differentiable = sources.contains(t) || (p != nullptr && depends[p->name()]);
      if (!dxs[i].empty() && differentiable) partials[use(t)].push_back(dxs[i]);
    }
  }
  std::vector<std::string> result;
  for (const auto& x : xs) {
    const std::string t = use(Canonical(x));
    SL_ASSIGN_OR_RETURN(std::string g, sum(t));
    if (g.empty()) {
      SL_ASSIGN_OR_RETURN(g, b->Fill(t, 0.0));
    }
    result.push_back(g);
  }
  return result;
}

}  // namespace sluice
