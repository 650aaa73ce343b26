#include "master/placement_policy.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "framework/device_name.h"
#include "framework/hoisted_constants.h"
#include "framework/node_attr.h"
#include "framework/status.h"
#include "master/placer.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

bool WantsDevice(const Node& node) {
  return node.def().device().empty() && !node.def().attr().contains(kColocateWithInputAttr);
}

double Elements(const PartialShape& s) {
  if (s.unknown_rank()) return 1;
  double n = 1;
  for (int64_t d : s.dims()) n *= d >= 0 ? static_cast<double>(d) : 1.0;
  return n;
}

// The devices stages go to, in (job, task, id) order.
absl::StatusOr<std::vector<std::string>> StageDevices(const std::vector<DeviceAttributes>& devices) {
  std::vector<std::tuple<std::string, int, std::string, int, std::string>> all;
  bool has_worker_job = false;
  for (const auto& d : devices) {
    SL_ASSIGN_OR_RETURN(DeviceName n, DeviceName::Parse(d.name()));
    has_worker_job |= n.job == "worker";
    all.emplace_back(n.job, n.task, n.type, n.id, d.name());
  }
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  for (const auto& [job, task, type, id, name] : all) {
    if (!has_worker_job || job == "worker") out.push_back(name);
  }
  return out;
}

// Constants whose values shape inference sees (shapes, axes, pads are small); bigger ones
// (weights) only show their shapes, so that costing a graph copies no weights.
constexpr int64_t kMaxInferenceConstElements = 4096;

// Output shapes of convolutions and pools, which have no shape functions yet; without them a
// CNN's cost would be its weights alone, all in the last layers. N,C,spatial inputs only.
PartialShape WindowedOutputShape(const Node& n, const PartialShape& x, const PartialShape* w) {
  const std::string& op = n.type_string();
  if (x.unknown_rank() || x.rank() < 3) return PartialShape();
  std::vector<int64_t> out(x.dims().begin(), x.dims().end());
  if (op == "Onnx>GlobalAveragePool" || op == "Onnx>GlobalMaxPool") {
    for (int i = 2; i < x.rank(); ++i) out[i] = 1;
    return PartialShape(absl::Span<const int64_t>(out));
  }
  const int spatial = x.rank() - 2;
  std::vector<int64_t> kernel, strides, pads, dilations;
  std::string auto_pad;
  AttrSlice attrs(n.def());
  GetNodeAttrOr(attrs, "kernel_shape", std::vector<int64_t>(), &kernel).IgnoreError();
  GetNodeAttrOr(attrs, "strides", std::vector<int64_t>(), &strides).IgnoreError();
  GetNodeAttrOr(attrs, "pads", std::vector<int64_t>(), &pads).IgnoreError();
  GetNodeAttrOr(attrs, "dilations", std::vector<int64_t>(), &dilations).IgnoreError();
  GetNodeAttrOr(attrs, "auto_pad", std::string("NOTSET"), &auto_pad).IgnoreError();
  if (op == "Onnx>Conv") {
    if (w == nullptr || w->rank() != x.rank()) return PartialShape();
    out[1] = w->dim(0);
    if (kernel.empty()) kernel.assign(w->dims().begin() + 2, w->dims().end());
  }
  if (static_cast<int>(kernel.size()) != spatial) return PartialShape();
  for (int i = 0; i < spatial; ++i) {
    const int64_t in = x.dim(2 + i);
    const int64_t stride = i < static_cast<int>(strides.size()) ? strides[i] : 1;
    const int64_t dilation = i < static_cast<int>(dilations.size()) ? dilations[i] : 1;
    int64_t pad = static_cast<int>(pads.size()) == 2 * spatial ? pads[i] + pads[spatial + i] : 0;
    if (in < 0 || stride < 1) {
      out[2 + i] = -1;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[2 + i] = (in + stride - 1) / stride;
    } else {
      if (auto_pad == "VALID") pad = 0;
      out[2 + i] = std::max<int64_t>(0, (in + pad - dilation * (kernel[i] - 1) - 1) / stride + 1);
    }
  }
  return PartialShape(absl::Span<const int64_t>(out));
}

// How many multiply-adds an activation element moved to or from memory is worth in the cost
// model. Two stages on two 1-thread tasks, --concurrency 2, alternating rounds: on a slower
// machine ResNet-50 ran 20.3 runs/s with 0 and 21.7 with 64 (one task alone 15.3); on a Zen 5
// EPYC (AVX-512), where a multiply-add is cheaper against memory, 46.8 with 0, 47.9 with 16,
// 44.7 with 32 and 44.0 with 64 (alone 29.4), 64 giving the first stage 14 ms of each run and
// the second 20. DenseNet-121 (55 runs/s, alone 38), EfficientNet-B0, ResNeXt-50 and Swin-T
// ran the same with 16 as with 64 there.
constexpr double kMacsPerElementMoved = 16;
// The same for an element of a constant (a weight): read from memory on every run, as a
// model's weights outgrow the caches, where activations mostly stay in L2. Fitted to the
// times of ResNet-50's convolutions on the Zen 5 EPYC (~41), it moved the cut from inside
// layer3's first block (stages of 16.0 and 19.0 ms) to after it (17.5 and 16.2), and the
// pipeline from 1.55x one task's runs/s to 1.61x (median of 5 alternating rounds each).
constexpr double kMacsPerWeightElement = 40;

// What a stage pays per element that crosses into or out of it, in multiply-adds: serializing
// it, sealing it for the wire and copying it out on the other side. On a Zen 5 EPYC, ResNet-50's
// two 800 KB cut tensors cost the sending task 1.3 ms of each 35 ms run and the receiving
// task's gRPC threads about as much: some 3 ns an element each side, where the model's
// multiply-adds run at ~120 a ns.
constexpr double kMacsPerElementSent = 256;

struct NodeCosts {
  std::vector<double> work;                       // By node id.
  std::vector<std::vector<double>> out_elements;  // By node id, then output.
};

// Estimated work of each node, and its outputs' sizes, from shapes inferred in topological
// order.
NodeCosts EstimateCosts(const Graph& graph, const std::vector<Node*>& order,
                        const absl::flat_hash_map<std::string, PartialShape>& feed_shapes) {
  std::vector<std::vector<PartialShape>> shapes(graph.num_node_ids());
  std::vector<bool> is_const(graph.num_node_ids(), false);
  std::vector<std::unique_ptr<Tensor>> values(graph.num_node_ids());
  std::vector<double> cost(graph.num_node_ids(), 0);
  for (Node* n : order) {
    const int id = n->id();
    shapes[id].assign(n->num_outputs(), PartialShape());
    if (n->type_string() == "Const") {
      const AttrValue* value = AttrSlice(n->def()).Find("value");
      if (value != nullptr && value->has_tensor()) {
        is_const[id] = true;
        shapes[id][0] = PartialShape::FromProto(value->tensor().tensor_shape());
        if (Elements(shapes[id][0]) <= kMaxInferenceConstElements) {
          auto t = Tensor::FromProto(value->tensor());
          if (t.ok()) values[id] = std::make_unique<Tensor>(*std::move(t));
        }
      }
      continue;
    }
    if (n->type_string() == "_Recv") {
      std::string tensor;
      auto it = GetNodeAttr(AttrSlice(n->def()), "tensor_name", &tensor).ok() ? feed_shapes.find(tensor)
                                                                             : feed_shapes.end();
      if (it != feed_shapes.end()) shapes[id][0] = it->second;
      continue;
    }
    std::vector<PartialShape> in(n->num_inputs());
    std::vector<const Tensor*> in_values(n->num_inputs(), nullptr);
    std::vector<const PartialShape*> weights;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControl()) continue;
      in[e->dst_input] = shapes[e->src->id()][e->src_output];
      in_values[e->dst_input] = values[e->src->id()].get();
      if (is_const[e->src->id()]) weights.push_back(&shapes[e->src->id()][0]);
    }
    auto op = OpRegistry::Global()->LookUp(n->type_string());
    if (op.ok()) {
      InferenceContext ctx(n->def(), (*op)->op_def, in, in_values, n->num_outputs());
      if ((*op)->shape_fn(&ctx).ok()) shapes[id] = ctx.outputs();
    }
    if (!shapes[id].empty() && shapes[id][0].unknown_rank() && !in.empty()) {
      shapes[id][0] = WindowedOutputShape(*n, in[0], weights.empty() ? nullptr : weights[0]);
      // An op without a shape function: most keep their input's shape (normalizations,
      // activations). Unknown, its output would count as one element, and so would everything
      // computed from it: the rest of the model would cost nothing and the cut fall early.
      if (shapes[id][0].unknown_rank()) shapes[id][0] = in[0];
    }
    double out = 0;
    for (const PartialShape& s : shapes[id]) out += Elements(s);
    double per_output = 1;
    const PartialShape first = shapes[id].empty() ? PartialShape() : shapes[id][0];
    for (const PartialShape* w : weights) {
      if (w->rank() < 2) continue;
      // The weight dim the output shares (MatMul's N, Conv's output channels) is not work.
      double shared = 1;
      for (int64_t d : {w->dim(0), w->dim(w->rank() - 1)}) {
        if (d > 0 && !first.unknown_rank() &&
            std::find(first.dims().begin(), first.dims().end(), d) != first.dims().end()) {
          shared = static_cast<double>(d);
          break;
        }
      }
      per_output += Elements(*w) / shared;
    }
    // Moving data costs too: a multiply-add that stays in cache is much cheaper than an
    // element read or written from memory, and the early layers of a CNN (large activations,
    // few channels) run far below peak. Costed by MACs alone they got two thirds of
    // ResNet-50's time into the first of two stages.
    double moved = out, weights_read = 0;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControl() || in_values[e->dst_input] != nullptr) continue;
      (is_const[e->src->id()] ? weights_read : moved) += Elements(in[e->dst_input]);
    }
    cost[id] = std::max(1.0, out * per_output + kMacsPerElementMoved * moved + kMacsPerWeightElement * weights_read);
  }
  NodeCosts costs;
  costs.work = std::move(cost);
  costs.out_elements.resize(graph.num_node_ids());
  for (Node* n : order) {
    for (const PartialShape& s : shapes[n->id()]) costs.out_elements[n->id()].push_back(Elements(s));
  }
  return costs;
}

// Where to cut `seq` (the nodes to place, in topological order) into `num_stages` contiguous
// stages: boundaries b[0] = 0 <= b[1] <= ... <= b[num_stages] = seq.size(), stage s holding
// seq[b[s], b[s+1]). Each stage costs its nodes' work plus the elements crossing its two
// boundaries (kMacsPerElementSent each); the cut minimizes the costliest stage, then the
// elements sent. So a cut falls between blocks, where one tensor crosses, rather than inside
// one, where a residual branch's input crosses too, when that costs no balance.
std::vector<int> ChooseStageBoundaries(const std::vector<Node*>& seq, const NodeCosts& costs, int num_stages) {
  const int m = static_cast<int>(seq.size());
  std::vector<double> before(m + 1, 0);  // before[i]: the work of seq[0, i).
  std::vector<int> position(costs.work.size(), -1);  // By node id: its index in seq.
  for (int i = 0; i < m; ++i) {
    before[i + 1] = before[i] + costs.work[seq[i]->id()];
    position[seq[i]->id()] = i;
  }
  // crossing[i]: elements produced in seq[0, i) and read in seq[i, m).
  std::vector<double> crossing(m + 1, 0);
  for (int i = 0; i < m; ++i) {
    const Node* n = seq[i];
    std::vector<int> last(n->num_outputs(), i);
    for (const Edge* e : n->out_edges()) {
      if (e->IsControl() || e->src_output < 0 || e->src_output >= n->num_outputs()) continue;
      const int p = e->dst->id() < static_cast<int>(position.size()) ? position[e->dst->id()] : -1;
      last[e->src_output] = std::max(last[e->src_output], p);
    }
    const auto& elements = costs.out_elements[n->id()];
    for (int k = 0; k < n->num_outputs() && k < static_cast<int>(elements.size()); ++k) {
      if (last[k] == i) continue;
      crossing[i + 1] += elements[k];
      crossing[last[k] + 1] -= elements[k];
    }
  }
  for (int i = 1; i <= m; ++i) crossing[i] += crossing[i - 1];
  crossing[0] = crossing[m] = 0;

  const double total = before[m];
  const double share = total / num_stages;
  // Candidate positions of boundary s: within a quarter of a share of where equal work puts
  // it; at most kMaxCandidates of them, those that cut the fewest elements.
  constexpr size_t kMaxCandidates = 2048;
  std::vector<std::vector<int>> candidates(num_stages + 1);
  std::vector<int> nearest_equal(num_stages + 1, m);  // Where equal work puts each boundary.
  nearest_equal[0] = 0;
  candidates[0] = {0};
  candidates[num_stages] = {m};
  for (int s = 1; s < num_stages; ++s) {
    const double ideal = share * s;
    int nearest = static_cast<int>(std::lower_bound(before.begin(), before.end(), ideal) - before.begin());
    nearest = std::clamp(nearest, 0, m);
    if (nearest > 0 && ideal - before[nearest - 1] < before[nearest] - ideal) --nearest;
    nearest_equal[s] = nearest;
    std::vector<int>& c = candidates[s];
    for (int i = 0; i <= m; ++i) {
      if (std::abs(before[i] - ideal) <= share / 4 || i == nearest) c.push_back(i);
    }
    if (c.size() > kMaxCandidates) {
      std::nth_element(c.begin(), c.begin() + kMaxCandidates, c.end(),
                       [&](int a, int b) { return crossing[a] < crossing[b]; });
      c.resize(kMaxCandidates);
      if (std::find(c.begin(), c.end(), nearest) == c.end()) c.push_back(nearest);
      std::sort(c.begin(), c.end());
    }
  }
  auto stage_cost = [&](int from, int to) {
    return before[to] - before[from] + kMacsPerElementSent * (crossing[from] + crossing[to]);
  };
  // Every stage gets a node where there are enough: a pipeline asked for is not left idle.
  const bool nonempty = m >= num_stages;
  // best[s][k]: the costliest stage, the elements sent and how far the boundaries are from
  // equal work, over stages 0..s-1 with boundary s at candidates[s][k]; from[s][k]: boundary
  // s-1's candidate for that.
  using Score = std::tuple<double, double, double>;
  std::vector<std::vector<Score>> best(num_stages + 1);
  std::vector<std::vector<int>> from(num_stages + 1);
  best[0] = {{0, 0, 0}};
  from[0] = {0};
  for (int s = 1; s <= num_stages; ++s) {
    const std::vector<int>& here = candidates[s];
    const std::vector<int>& prev = candidates[s - 1];
    best[s].assign(here.size(), {std::numeric_limits<double>::infinity(), 0, 0});
    from[s].assign(here.size(), -1);
    for (size_t k = 0; k < here.size(); ++k) {
      for (size_t j = 0; j < prev.size() && (nonempty ? prev[j] < here[k] : prev[j] <= here[k]); ++j) {
        if (from[s - 1][j] < 0) continue;  // Unreachable.
        const auto& [worst, sent, off] = best[s - 1][j];
        const Score score{std::max(worst, stage_cost(prev[j], here[k])), sent + crossing[here[k]],
                          off + std::abs(before[here[k]] - share * s)};
        if (score < best[s][k]) {
          best[s][k] = score;
          from[s][k] = static_cast<int>(j);
        }
      }
    }
  }
  // No candidates reach when the windows leave no room for a node per stage: then equal work.
  if (from[num_stages][0] < 0) return nearest_equal;
  std::vector<int> bounds(num_stages + 1, m);
  int k = 0;  // candidates[num_stages] holds m alone.
  for (int s = num_stages; s >= 1; --s) {
    bounds[s] = candidates[s][k];
    k = from[s][k];
  }
  bounds[0] = 0;
  return bounds;
}

absl::Status PlacePipeline(const std::vector<DeviceAttributes>& devices,
                           const absl::flat_hash_map<std::string, PartialShape>& feed_shapes,
                           Graph* graph) {
  SL_ASSIGN_OR_RETURN(std::vector<std::string> stages, StageDevices(devices));
  if (stages.empty()) return absl::FailedPreconditionError("no devices to place a pipeline on");
  SL_ASSIGN_OR_RETURN(std::vector<Node*> order, graph->TopologicalOrder());
  const NodeCosts costs = EstimateCosts(*graph, order, feed_shapes);
  // Followers go where they are first read instead of being costed: nodes without inputs
  // (constants, feeds) and what is computed from constants alone (an Identity on a weight),
  // so that weights are never sent from one stage to the next.
  std::vector<bool> from_constants(graph->num_node_ids(), false), follower(graph->num_node_ids(), false);
  for (Node* n : order) {
    bool all = !n->in_edges().empty();
    for (const Edge* e : n->in_edges()) all = all && from_constants[e->src->id()];
    from_constants[n->id()] = n->type_string() == "Const" || all;
    follower[n->id()] = WantsDevice(*n) && (n->in_edges().empty() || from_constants[n->id()]);
  }
  std::vector<Node*> seq;
  for (Node* n : order) {
    if (WantsDevice(*n) && !follower[n->id()]) seq.push_back(n);
  }
  std::vector<int> stage(graph->num_node_ids(), -1);
  const int num_stages = static_cast<int>(stages.size());
  const std::vector<int> bounds = ChooseStageBoundaries(seq, costs, num_stages);
  for (int s = 0; s < num_stages; ++s) {
    for (int i = bounds[s]; i < bounds[s + 1]; ++i) {
      stage[seq[i]->id()] = s;
      seq[i]->mutable_def()->set_device(stages[s]);
    }
  }
  auto stage_of = [&](const Node* consumer) {
    if (consumer->id() < static_cast<int>(stage.size()) && stage[consumer->id()] >= 0) return stage[consumer->id()];
    // A consumer placed otherwise: its stage by its device (num_stages: none).
    auto d = std::find(stages.begin(), stages.end(), consumer->def().device());
    return d == stages.end() ? num_stages : static_cast<int>(d - stages.begin());
  };
  // Followers, consumers first.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    if (!follower[n->id()]) continue;
    int first = num_stages;
    for (const Edge* e : n->out_edges()) first = std::min(first, stage_of(e->dst));
    stage[n->id()] = first == num_stages ? 0 : first;
    n->mutable_def()->set_device(stages[stage[n->id()]]);
    if (n->type_string() != "Const" || !n->in_edges().empty()) continue;
    // A constant that later stages read too (an exporter's shared initializer) gets a copy
    // on each of them, so that no run sends it from one stage to the next.
    std::map<int, std::vector<const Edge*>> later;
    for (const Edge* e : n->out_edges()) {
      const int s = stage_of(e->dst);
      if (s != stage[n->id()] && s < num_stages) later[s].push_back(e);
    }
    for (const auto& [s, edges] : later) {
      NodeDef copy = n->def();
      std::string name = absl::StrCat(n->name(), "/stage_", s);
      while (graph->FindNode(name) != nullptr) absl::StrAppend(&name, "_");
      copy.set_name(name);
      copy.set_device(stages[s]);
      // A hoisted value (framework/hoisted_constants.h) stays in one table entry, the original's.
      if (IsHoisted(copy) && !copy.attr().contains(kHoistedFromAttr)) {
        (*copy.mutable_attr())[kHoistedFromAttr].set_s(n->name());
      }
      SL_ASSIGN_OR_RETURN(Node * c, graph->AddNode(std::move(copy)));
      for (const Edge* e : edges) {
        Node* dst = e->dst;
        const int src_output = e->src_output, dst_input = e->dst_input;
        const bool control = e->IsControl();
        graph->RemoveEdge(e);
        if (control) {
          graph->AddControlEdge(c, dst);
        } else {
          SL_RETURN_IF_ERROR(graph->AddEdge(c, src_output, dst, dst_input));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyPlacementOptions(const PlacementOptions& options,
                                   const std::vector<DeviceAttributes>& devices,
                                   const absl::flat_hash_map<std::string, PartialShape>& feed_shapes,
                                   Graph* graph) {
  if (!options.policy().empty() && options.policy() != kPipelinePolicy) {
    return absl::InvalidArgumentError(absl::StrCat("unknown placement policy '", options.policy(),
                                                   "' (known: pipeline)"));
  }
  for (Node* n : graph->nodes()) {
    if (!WantsDevice(*n)) continue;
    for (const auto& rule : options.device_map()) {
      if (fnmatch(rule.pattern().c_str(), n->name().c_str(), 0) == 0) {
        n->mutable_def()->set_device(rule.device());
        break;
      }
    }
  }
  if (options.policy() == kPipelinePolicy) return PlacePipeline(devices, feed_shapes, graph);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PlacementOptions::DeviceRule>> ParseDeviceMap(absl::string_view text) {
  std::vector<PlacementOptions::DeviceRule> rules;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    std::vector<absl::string_view> words = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    if (words.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device map line ", line_number, ": expected PATTERN DEVICE, got '",
          absl::StripAsciiWhitespace(line), "'"));
    }
    auto device = DeviceName::Parse(words[1]);
    if (!device.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("device map line ", line_number, ": ",
                                                     device.status().message()));
    }
    PlacementOptions::DeviceRule rule;
    rule.set_pattern(std::string(words[0]));
    rule.set_device(std::string(words[1]));
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace sluice
