#include "optimizer/passes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
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

// W' = W * s and b' = (b - mean) * s + shift per output channel (W's first axis), s = scale /
// sqrt(var + epsilon): a BatchNormalization after a convolution of weights W and bias b (none:
// null). False when the shapes or dtypes do not fit.
bool FoldNormalizationIntoWeights(const Tensor& w, const Tensor* bias, const Tensor& scale, const Tensor& shift,
                                  const Tensor& mean, const Tensor& var, float epsilon, Tensor* new_w,
                                  Tensor* new_b) {
  if (w.dims() < 1 || w.dtype() != DT_FLOAT) return false;
  const int64_t m = w.dim_size(0);
  bool shapes_fit = m > 0 && w.NumElements() % m == 0 &&
                    (bias == nullptr || (bias->dtype() == DT_FLOAT && bias->NumElements() == m));
  for (const Tensor* t : {&scale, &shift, &mean, &var}) {
    shapes_fit = shapes_fit && t->dtype() == DT_FLOAT && t->NumElements() == m;
  }
  if (!shapes_fit) return false;
  const int64_t per_channel = w.NumElements() / m;
  *new_w = Tensor(DT_FLOAT, w.shape());
  *new_b = Tensor(DT_FLOAT, TensorShape({m}));
  for (int64_t o = 0; o < m; ++o) {
    const double factor = scale.flat<float>()[o] / std::sqrt(double{var.flat<float>()[o]} + epsilon);
    for (int64_t i = 0; i < per_channel; ++i) {
      new_w->flat<float>()[o * per_channel + i] = static_cast<float>(w.flat<float>()[o * per_channel + i] * factor);
    }
    const double b0 = bias != nullptr ? bias->flat<float>()[o] : 0.0;
    new_b->flat<float>()[o] = static_cast<float>((b0 - mean.flat<float>()[o]) * factor + shift.flat<float>()[o]);
  }
  return true;
}


// Points `conv` at new weights `w_name` and bias `b_name`; a Conv without a bias gets one, its
// list input right after W, before any control inputs.
void UseFoldedWeights(NodeDef* conv, const std::string& w_name, const std::string& b_name, bool has_bias) {
  conv->set_input(1, w_name);
  if (has_bias) {
    conv->set_input(2, b_name);
    return;
  }
  conv->add_input(b_name);
  for (int i = conv->input_size() - 1; i > 2; --i) conv->mutable_input()->SwapElements(i, i - 1);
  AttrValue tb;
  tb.mutable_list()->add_type(DT_FLOAT);
  (*conv->mutable_attr())["Tb"] = tb;
}

// Clip's bounds: its min and max inputs where Tmin/Tmax say it has them, as float constants
// (infinite where absent). False when a present bound is not a constant.
bool ClipBounds(const GraphIndex& index, const HoistedConstants* hoisted, const NodeDef& clip, float* lo, float* hi) {
  *lo = -std::numeric_limits<float>::infinity();
  *hi = std::numeric_limits<float>::infinity();
  int next = 1;
  for (const char* which : {"Tmin", "Tmax"}) {
    auto it = clip.attr().find(which);
    if (it == clip.attr().end() || it->second.list().type_size() == 0) continue;
    if (next >= clip.input_size()) return false;
    auto v = ConstScalar(index.by_name, hoisted, clip.input(next++));
    if (!v) return false;
    (std::string(which) == "Tmin" ? *lo : *hi) = *v;
  }
  return true;
}

// Whether a Conv is plain enough to fold constants into: no fused activation and no fused
// residual input (Tr), which a fold would wrongly scale or offset. Its bias, if any, is the
// input Tb names (after W).
bool FoldableConv(const NodeDef& conv) {
  auto list_size = [&](const char* name) {
    auto it = conv.attr().find(name);
    return it == conv.attr().end() ? 0 : it->second.list().type_size();
  };
  auto activation = conv.attr().find("activation");
  return list_size("Tr") == 0 && conv.input_size() >= 2 + list_size("Tb") &&
         (activation == conv.attr().end() || activation->second.s().empty());
}

// The per-output-channel values of a constant that multiplies or adds to a Conv's output of
// `rank` dims and `channels` channels (axis 1) without changing its shape: one value, or
// `channels` along axis 1 with every other axis 1 (shapes [C,1,1], [1,C,1,1], ...).
std::optional<std::vector<float>> PerChannel(const Tensor& c, int rank, int64_t channels) {
  if (c.dtype() != DT_FLOAT || c.dims() > rank) return std::nullopt;
  std::vector<float> out(channels);
  if (c.NumElements() == 1) {
    std::fill(out.begin(), out.end(), c.flat<float>()[0]);
    return out;
  }
  const int channel_axis = c.dims() - (rank - 1);  // Axis 1 of the output, aligned from the right.
  if (channel_axis < 0) return std::nullopt;
  for (int d = 0; d < c.dims(); ++d) {
    if (c.dim_size(d) != (d == channel_axis ? channels : 1)) return std::nullopt;
  }
  std::copy(c.flat<float>().data(), c.flat<float>().data() + channels, out.begin());
  return out;
}

// Conv -> Mul by a per-channel constant -> Add of one (either or both; the order exported models
// use for a normalization folded by hand, as PaddleOCR's detector has 28 times): W' = W * s,
// b' = b * s + t, the Mul and Add forwarded to the Conv.
int FoldConvAffines(GraphItem* graph) {
  int folded = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_map<std::string, std::string> renamed;
  absl::flat_hash_set<std::string> maybe_unread;
  std::vector<NodeDef> added;
  // The constant operand of a two-input float `op` node reading `from`, if it is per-channel.
  auto operand = [&](NodeDef* n, const std::string& from, int rank, int64_t channels,
                     std::vector<float>* values) -> int {
    if (n == nullptr || n->input_size() != 2) return -1;
    const int at = InputWhere(*n, [&](const std::string& t) { return SameTensor(t, from); });
    if (at < 0) return -1;
    std::optional<Tensor> c = ConstValue(index.by_name, graph->hoisted, n->input(1 - at));
    if (!c) return -1;
    std::optional<std::vector<float>> v = PerChannel(*c, rank, channels);
    if (!v) return -1;
    *values = *std::move(v);
    return 1 - at;
  };
  for (NodeDef& conv : *def.mutable_node()) {
    if (conv.op() != "Onnx>Conv" || conv.attr().at("T").type() != DT_FLOAT || !FoldableConv(conv) || !OnCpu(conv)) {
      continue;
    }
    const bool has_bias = conv.attr().at("Tb").list().type_size() > 0;
    std::optional<Tensor> w = ConstValue(index.by_name, graph->hoisted, conv.input(1));
    if (!w || w->dtype() != DT_FLOAT || w->dims() < 3) continue;
    std::optional<Tensor> bias;
    if (has_bias) {
      bias = ConstValue(index.by_name, graph->hoisted, conv.input(2));
      if (!bias || bias->dtype() != DT_FLOAT || bias->NumElements() != w->dim_size(0)) continue;
    }
    const int rank = w->dims();
    const int64_t channels = w->dim_size(0);
    const std::string conv_out = TensorId{conv.name(), 0}.ToString();
    std::vector<float> scale(channels, 1.0f), shift(channels, 0.0f);
    std::vector<NodeDef*> chain;  // The Mul and/or Add folded, in order.
    std::string last = conv_out;
    NodeDef* mul = SoleReader(index, conv, "Mul");
    if (mul != nullptr && operand(mul, conv_out, rank, channels, &scale) >= 0) {
      chain.push_back(mul);
      last = TensorId{mul->name(), 0}.ToString();
    }
    NodeDef* add = SoleReader(index, chain.empty() ? conv : *chain.back(), "Add");
    if (add != nullptr && operand(add, last, rank, channels, &shift) >= 0) chain.push_back(add);
    if (chain.empty()) continue;
    const std::string w_name = conv.name() + "/affine_weights", b_name = conv.name() + "/affine_bias";
    if (index.by_name.contains(w_name) || index.by_name.contains(b_name)) continue;
    Tensor new_w(DT_FLOAT, w->shape()), new_b(DT_FLOAT, TensorShape({channels}));
    const int64_t per_channel = w->NumElements() / channels;
    for (int64_t o = 0; o < channels; ++o) {
      for (int64_t i = 0; i < per_channel; ++i) {
        new_w.flat<float>()[o * per_channel + i] = w->flat<float>()[o * per_channel + i] * scale[o];
      }
      const float b0 = bias ? bias->flat<float>()[o] : 0.0f;
      new_b.flat<float>()[o] = b0 * scale[o] + shift[o];
    }
    for (int i = 1; i < (has_bias ? 3 : 2); ++i) maybe_unread.insert(ParseTensorName(conv.input(i))->node);
    for (NodeDef* n : chain) {
      for (const std::string& in : n->input()) maybe_unread.insert(ParseTensorName(in)->node);
    }
    added.push_back(ConstNode(w_name, conv.device(), new_w));
    added.push_back(ConstNode(b_name, conv.device(), new_b));
    UseFoldedWeights(&conv, w_name, b_name, has_bias);
    for (NodeDef* n : chain) {
      const std::string out = TensorId{n->name(), 0}.ToString();
      if (!index.protected_tensors.contains(out)) renamed[out] = conv_out;
      // Each forwards the Conv's result under its own name (a graph output keeps it).
      ForwardAs(n, conv_out);
    }
    ++folded;
  }
  Rewire(&def, renamed, {});
  for (NodeDef& n : added) *def.add_node() = std::move(n);
  DropUnreadConsts(graph, maybe_unread);
  return folded;
}
}  // namespace

absl::StatusOr<int> FoldBatchNormsIntoConvs(GraphItem* graph) {
  int folded = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  auto& by_name = index.by_name;
  auto& consumers = index.consumers;
  const auto& protected_tensors = index.protected_tensors;
  absl::flat_hash_map<std::string, std::string> renamed;  // BN output -> Conv output.
  absl::flat_hash_set<std::string> maybe_unread;
  std::vector<NodeDef> added;
  // BatchNormalization of a [rows, N] Gemm or MatMul output normalizes its N columns: B's
  // columns (rows when transB) scale by scale / sqrt(var + epsilon) and C becomes the
  // normalized bias. The producer becomes (or stays) a Gemm with constant B and C.
  auto fold_into_gemm = [&](NodeDef& bn, NodeDef* producer) {
    std::optional<Tensor> b, c;
    float alpha = 1, beta = 1;
    int64_t trans_a = 0, trans_b = 0;
    std::string a_in;
    const std::string out = TensorId{producer->name(), 0}.ToString();
    if (producer->op() == "BatchMatMulV2") {
      if (ConstWeightMatMul(*graph, index, bn.input(0), &b) != producer) return false;
    } else {
      const auto& pa = producer->attr();
      if (pa.at("T").type() != DT_FLOAT || producer->input_size() < 2 || consumers[out] != 1 ||
          protected_tensors.contains(out)) {
        return false;
      }
      b = ConstValue(by_name, graph->hoisted, producer->input(1));
      alpha = pa.at("alpha").f();
      beta = pa.at("beta").f();
      trans_a = pa.at("transA").i();
      trans_b = pa.at("transB").i();
      if (producer->input_size() > 2) {
        c = ConstValue(by_name, graph->hoisted, producer->input(2));
        if (!c || c->dtype() != DT_FLOAT) return false;
      }
    }
    if (!b || b->dtype() != DT_FLOAT || b->dims() != 2) return false;
    a_in = producer->input(0);
    const int64_t n = b->dim_size(trans_b ? 0 : 1), k = b->dim_size(trans_b ? 1 : 0);
    // C must be one row (or one value): a full [rows, N] C would stay per row.
    if (c && !(c->NumElements() == 1 ||
               (c->NumElements() == n && (c->dims() == 1 || (c->dims() == 2 && c->dim_size(0) == 1))))) {
      return false;
    }
    std::optional<Tensor> scale = ConstValue(by_name, graph->hoisted, bn.input(1)), shift = ConstValue(by_name, graph->hoisted, bn.input(2)),
                          mean = ConstValue(by_name, graph->hoisted, bn.input(3)), var = ConstValue(by_name, graph->hoisted, bn.input(4));
    if (!scale || !shift || !mean || !var) return false;
    for (const Tensor* t : {&*scale, &*shift, &*mean, &*var}) {
      if (t->dtype() != DT_FLOAT || t->NumElements() != n) return false;
    }
    const std::string w_name = producer->name() + "/folded_weights", b_name = producer->name() + "/folded_bias";
    if (by_name.contains(w_name) || by_name.contains(b_name)) return false;
    const double epsilon = bn.attr().at("epsilon").f();
    Tensor new_w(DT_FLOAT, b->shape()), new_c(DT_FLOAT, TensorShape({n}));
    for (int64_t j = 0; j < n; ++j) {
      const double factor = scale->flat<float>()[j] / std::sqrt(double{var->flat<float>()[j]} + epsilon);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t at = trans_b ? j * k + i : i * n + j;
        new_w.flat<float>()[at] = static_cast<float>(b->flat<float>()[at] * factor);
      }
      const double c0 = c ? double{beta} * c->flat<float>()[c->NumElements() == 1 ? 0 : j] : 0.0;
      new_c.flat<float>()[j] = static_cast<float>((c0 - mean->flat<float>()[j]) * factor + shift->flat<float>()[j]);
    }
    for (int i = 1; i < producer->input_size() && i < 3; ++i) {
      maybe_unread.insert(ParseTensorName(producer->input(i))->node);
    }
    for (int i = 1; i < 5; ++i) maybe_unread.insert(ParseTensorName(bn.input(i))->node);
    added.push_back(ConstNode(w_name, producer->device(), new_w));
    added.push_back(ConstNode(b_name, producer->device(), new_c));
    MakeGemm(producer, a_in, w_name, b_name, alpha, 1.0f, trans_a, trans_b);
    const std::string bn_out = TensorId{bn.name(), 0}.ToString();
    if (!protected_tensors.contains(bn_out)) renamed[bn_out] = out;
    ForwardAs(&bn, bn.input(0));
    return true;
  };
  for (NodeDef& bn : *def.mutable_node()) {
    if (bn.op() != "Onnx>BatchNormalization" || bn.input_size() != 5) continue;
    const auto& attr = bn.attr();
    if (attr.at("training_mode").b() || !attr.at("spatial").b() || attr.at("T").type() != DT_FLOAT ||
        attr.at("T1").type() != DT_FLOAT || attr.at("T2").type() != DT_FLOAT) {
      continue;
    }
    bool statistics_read = false;  // Outputs 1-4 (training statistics) must be unused.
    for (int k = 1; k < 5; ++k) {
      const std::string t = TensorId{bn.name(), k}.ToString();
      statistics_read = statistics_read || consumers[t] > 0 || protected_tensors.contains(t);
    }
    if (statistics_read) continue;
    auto src = ParseTensorName(bn.input(0));
    if (!src.ok() || src->index != 0 || !by_name.contains(src->node)) continue;
    NodeDef* conv = by_name.at(src->node);
    if (conv->op() == "Onnx>Gemm" || conv->op() == "BatchMatMulV2") {
      folded += fold_into_gemm(bn, conv);
      continue;
    }
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    if (conv->op() != "Onnx>Conv" || conv->attr().at("T").type() != DT_FLOAT || !FoldableConv(*conv) ||
        consumers[conv_out] != 1 || protected_tensors.contains(conv_out)) {
      continue;
    }
    const bool has_bias = conv->attr().at("Tb").list().type_size() > 0;
    std::optional<Tensor> w = ConstValue(by_name, graph->hoisted, conv->input(1));
    std::optional<Tensor> bias = has_bias ? ConstValue(by_name, graph->hoisted, conv->input(2)) : std::nullopt;
    std::optional<Tensor> scale = ConstValue(by_name, graph->hoisted, bn.input(1)), shift = ConstValue(by_name, graph->hoisted, bn.input(2)),
                          mean = ConstValue(by_name, graph->hoisted, bn.input(3)), var = ConstValue(by_name, graph->hoisted, bn.input(4));
    if (!w || !scale || !shift || !mean || !var || (has_bias && !bias)) continue;
    Tensor new_w, new_b;
    if (!FoldNormalizationIntoWeights(*w, bias ? &*bias : nullptr, *scale, *shift, *mean, *var,
                                      attr.at("epsilon").f(), &new_w, &new_b)) {
      continue;
    }
    const std::string w_name = conv->name() + "/folded_weights", b_name = conv->name() + "/folded_bias";
    if (by_name.contains(w_name) || by_name.contains(b_name)) continue;
    // The constants folded in, dropped below unless something else reads them.
    for (int i = 1; i < (has_bias ? 3 : 2); ++i) maybe_unread.insert(ParseTensorName(conv->input(i))->node);
    for (int i = 1; i < 5; ++i) maybe_unread.insert(ParseTensorName(bn.input(i))->node);
    added.push_back(ConstNode(w_name, conv->device(), new_w));
    added.push_back(ConstNode(b_name, conv->device(), new_b));
    UseFoldedWeights(conv, w_name, b_name, has_bias);
    const std::string bn_out = TensorId{bn.name(), 0}.ToString();
    if (!protected_tensors.contains(bn_out)) renamed[bn_out] = conv_out;
    // The normalization forwards the Conv's result under its own name (a graph output).
    ForwardAs(&bn, bn.input(0));
    ++folded;
  }
  Rewire(&def, renamed, {});
  for (NodeDef& n : added) *def.add_node() = std::move(n);
  // Constants no node reads any more (the unfolded weights and statistics) hold no memory.
  DropUnreadConsts(graph, maybe_unread);
  return folded + FoldConvAffines(graph);
}

// Pads past this are not folded (far beyond any real image).
constexpr int64_t kMaxFoldedPad = int64_t{1} << 30;

absl::StatusOr<int> FoldPads(GraphItem* graph) {
  int folded = 0;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_map<std::string, std::string> renamed;  // Pad output -> its input.
  absl::flat_hash_set<std::string> maybe_unread;
  for (NodeDef& pad : *graph->graph.mutable_node()) {
    if (pad.op() != "Onnx>Pad" || pad.attr().at("mode").s() != "constant" || pad.input_size() < 2 ||
        pad.attr().at("Taxes").list().type_size() != 0) {
      continue;
    }
    const std::string out = TensorId{pad.name(), 0}.ToString();
    if (index.protected_tensors.contains(out)) continue;
    std::optional<Tensor> pads = ConstValue(index.by_name, index.hoisted, pad.input(1));
    if (!pads || pads->dtype() != DT_INT64 || pads->NumElements() % 2 != 0 || pads->NumElements() < 6) continue;
    // Zero fill (the default, or a constant zero), before any control inputs.
    if (pad.attr().at("Tvalue").list().type_size() != 0) {
      std::optional<Tensor> value = ConstValue(index.by_name, index.hoisted, pad.input(2));
      if (!value || value->NumElements() != 1 || value->dtype() != DT_FLOAT || value->flat<float>()[0] != 0.0f) continue;
    }
    const int64_t rank = pads->NumElements() / 2;
    const auto p = pads->flat<int64_t>();
    bool spatial_only = p[0] == 0 && p[1] == 0 && p[rank] == 0 && p[rank + 1] == 0, any = false;
    for (int64_t i = 0; i < 2 * rank; ++i) {
      // Non-negative, and small enough that adding the reader's own pads cannot overflow (a
      // hostile model's 2^62 stays a Pad, whose kernel refuses it by name).
      spatial_only = spatial_only && p[i] >= 0 && p[i] <= kMaxFoldedPad;
      any = any || p[i] != 0;
    }
    if (!spatial_only) continue;
    if (any) {
      // The one reader takes the padding into its own pads.
      auto readers = index.readers.find(out);
      if (readers == index.readers.end() || readers->second.size() != 1) continue;
      NodeDef* reader = readers->second[0];
      auto& attrs = *reader->mutable_attr();
      if (Canonical(reader->input(0)) != out || !attrs.contains("auto_pad") || attrs.at("auto_pad").s() != "NOTSET") continue;
      std::vector<int64_t> own(2 * (rank - 2), 0);
      const auto& listed = attrs.at("pads").list();
      if (listed.i_size() != 0 && listed.i_size() != static_cast<int>(own.size())) continue;
      bool own_zero = true, own_ok = true;
      for (int i = 0; i < listed.i_size(); ++i) {
        own[i] = listed.i(i);
        own_ok = own_ok && own[i] >= 0 && own[i] <= kMaxFoldedPad;
        own_zero = own_zero && own[i] == 0;
      }
      if (!own_ok) continue;
      if (reader->op() == "Onnx>AveragePool") {
        // Padded zeros count in the mean: what count_include_pad does, when the pool's own
        // padding (if any) is counted too, and no ceil-mode window overhangs the padding.
        if (attrs.at("ceil_mode").i() != 0 || (!own_zero && attrs.at("count_include_pad").i() == 0)) continue;
        attrs["count_include_pad"].set_i(1);
      } else if (reader->op() != "Onnx>Conv") {
        continue;
      }
      AttrValue merged;
      for (int64_t i = 0; i < rank - 2; ++i) merged.mutable_list()->add_i(own[i] + p[2 + i]);
      for (int64_t i = 0; i < rank - 2; ++i) merged.mutable_list()->add_i(own[rank - 2 + i] + p[rank + 2 + i]);
      attrs["pads"] = merged;
    }
    renamed[out] = pad.input(0);
    for (int i = 1; i < pad.input_size(); ++i) {
      auto id = ParseTensorName(pad.input(i));
      if (id.ok()) maybe_unread.insert(id->node);
    }
    ++folded;
  }
  Rewire(&graph->graph, renamed, {});
  DropUnreadConsts(graph, maybe_unread);
  return folded;
}

namespace {

// x * Clip(x + 3, 0, 6) / 6 spelled out (PaddleOCR's and older torch exports): Div(Mul(x, c), 6),
// Mul(Mul(x, c), 1/6) or Mul(x, Div(c, 6)) with c = Clip(Add(x, 3), 0, 6), each intermediate
// read once, becomes one HardSwish(x) under the last node's name.
int FuseSpelledHardSwishes(GraphItem* graph) {
  int fused = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped, maybe_unread;
  for (NodeDef& clip : *def.mutable_node()) {
    if (clip.op() != "Onnx>Clip" || clip.attr().at("T").type() != DT_FLOAT || dropped.contains(clip.name())) continue;
    float lo, hi;
    if (!ClipBounds(index, graph->hoisted, clip, &lo, &hi) || lo != 0.0f || hi != 6.0f) continue;
    NodeDef* add = FloatProducer(index, clip.input(0), "Add");
    if (add == nullptr || !Internal(index, *add, 1)) continue;
    const int three = InputWhere(*add, [&](const std::string& t) { return ConstNear(index, t, 3.0); });
    if (three < 0) continue;
    const std::string x = add->input(1 - three), clip_out = TensorId{clip.name(), 0}.ToString();
    // Rank-1 constants ([3], [6]) would raise a scalar x's rank: only where x's rank is known.
    {
      std::optional<Tensor> c3 = ConstValue(index.by_name, graph->hoisted, add->input(three));
      auto x_shape = graph->shapes.find(Canonical(x));
      if (!c3 || (c3->dims() > 0 && (x_shape == graph->shapes.end() || x_shape->second.rank() < 1))) continue;
    }
    NodeDef* last = nullptr;
    std::vector<NodeDef*> span = {add, &clip};
    if (NodeDef* mul = SoleReader(index, clip, "Mul"); mul != nullptr) {
      // Mul(x, c) then a division by 6 (or a product with 1/6).
      const int at = InputWhere(*mul, [&](const std::string& t) { return SameTensor(t, clip_out); });
      if (at >= 0 && SameTensor(mul->input(1 - at), x)) {
        NodeDef* div = SoleReader(index, *mul, "Div");
        NodeDef* sixth = SoleReader(index, *mul, "Mul");
        const std::string mul_out = TensorId{mul->name(), 0}.ToString();
        if (div != nullptr && div->input_size() == 2 && SameTensor(div->input(0), mul_out) &&
            ConstNear(index, div->input(1), 6.0)) {
          last = div;
        } else if (sixth != nullptr &&
                   InputWhere(*sixth, [&](const std::string& t) { return ConstNear(index, t, 1.0 / 6.0); }) >= 0) {
          last = sixth;
        }
        if (last != nullptr) span.push_back(mul);
      }
    } else if (NodeDef* div = SoleReader(index, clip, "Div"); div != nullptr) {
      // Mul(x, c / 6).
      if (div->input_size() == 2 && SameTensor(div->input(0), clip_out) && ConstNear(index, div->input(1), 6.0)) {
        NodeDef* mul = SoleReader(index, *div, "Mul");
        const std::string div_out = TensorId{div->name(), 0}.ToString();
        const int at = mul == nullptr ? -1 : InputWhere(*mul, [&](const std::string& t) { return SameTensor(t, div_out); });
        if (at >= 0 && SameTensor(mul->input(1 - at), x)) {
          last = mul;
          span.push_back(div);
        }
      }
    }
    if (last == nullptr) continue;
    DropFusedSpan(span, last, &dropped, &maybe_unread);
    const std::string device = last->device();
    const std::string name = last->name();
    std::vector<std::string> control;
    for (const std::string& in : last->input()) {
      if (absl::StartsWith(in, "^")) control.push_back(in);
    }
    last->Clear();
    last->set_name(name);
    last->set_op("Onnx>HardSwish");
    last->set_device(device);
    last->add_input(x);
    for (const std::string& c : control) last->add_input(c);
    (*last->mutable_attr())["T"].set_type(DT_FLOAT);
    ++fused;
  }
  if (fused == 0) return 0;
  Rewire(&def, {}, dropped);
  DropUnreadConsts(graph, maybe_unread);
  return fused;
}

// Whether an element-wise product of tensor `x` with constant `c` has x's shape as far as the
// rank goes: c is a scalar, or x's rank is known and at least c's.
bool KeepsRank(const GraphItem& graph, const std::string& x, const Tensor& c) {
  if (c.dims() == 0) return true;
  auto shape = graph.shapes.find(Canonical(x));
  return shape != graph.shapes.end() && shape->second.rank() >= c.dims();
}

// Max(x, c) and Min(x, c) of a float constant c of one value that does not raise x's rank
// become Clip(x, c, ) and Clip(x, , c): an element-wise function of one tensor, which the NHWC
// layout carries and fuse passes know. openWakeWord's embedding model follows each of its 19
// LeakyRelus with Max(y, c); as Max they kept its convolutions NCHW.
int MaxMinOfConstantsToClips(GraphItem* graph) {
  int rewritten = 0;
  GraphIndex index = IndexGraph(graph);
  std::vector<NodeDef> added;
  absl::flat_hash_set<std::string> maybe_unread;
  for (NodeDef& n : *graph->graph.mutable_node()) {
    const bool max = n.op() == "Onnx>Max";
    if ((!max && n.op() != "Onnx>Min") || n.input_size() != 2 || n.attr().at("T").type() != DT_FLOAT) continue;
    for (int c = 0; c < 2; ++c) {
      std::optional<Tensor> v = ConstValue(index.by_name, graph->hoisted, n.input(c));
      // A NaN bound would clip nothing where Max and Min give NaN.
      if (!v || v->dtype() != DT_FLOAT || v->NumElements() != 1 || std::isnan(v->flat<float>()[0])) continue;
      const std::string x = n.input(1 - c);
      if (!KeepsRank(*graph, x, *v)) continue;
      const std::string bound = n.name() + (max ? "/min" : "/max");
      if (index.by_name.contains(bound)) continue;
      added.push_back(ConstNode(bound, n.device(), Tensor::Scalar<float>(v->flat<float>()[0])));
      maybe_unread.insert(ParseTensorName(n.input(c))->node);
      std::vector<std::string> control;
      for (const std::string& in : n.input()) {
        if (absl::StartsWith(in, "^")) control.push_back(in);
      }
      n.set_op("Onnx>Clip");
      n.mutable_input()->Clear();
      n.add_input(x);
      n.add_input(bound);
      for (const std::string& in : control) n.add_input(in);
      n.mutable_attr()->erase("N");
      AttrValue one, none;
      one.mutable_list()->add_type(DT_FLOAT);
      none.mutable_list();
      (*n.mutable_attr())["Tmin"] = max ? one : none;
      (*n.mutable_attr())["Tmax"] = max ? none : one;
      ++rewritten;
      break;
    }
  }
  for (NodeDef& n : added) *graph->graph.add_node() = std::move(n);
  if (rewritten > 0) DropUnreadConsts(graph, maybe_unread);
  return rewritten;
}

}  // namespace

absl::StatusOr<int> FuseConvActivations(GraphItem* graph) {
  int fused = MaxMinOfConstantsToClips(graph) + FuseSpelledHardSwishes(graph);
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  auto& by_name = index.by_name;
  auto& consumers = index.consumers;
  const auto& protected_tensors = index.protected_tensors;
  absl::flat_hash_map<std::string, std::string> renamed;
  absl::flat_hash_set<std::string> dropped;  // Nodes no one reads after a fusion (Swish's Sigmoid).
  // The float Conv (with no activation yet) whose output `tensor` is, read by `readers` nodes.
  auto fusable_conv = [&](const std::string& tensor, int readers) -> NodeDef* {
    auto src = ParseTensorName(tensor);
    if (!src.ok() || src->index != 0) return nullptr;
    auto it = by_name.find(src->node);
    if (it == by_name.end()) return nullptr;
    NodeDef* conv = it->second;
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    if (conv->op() != "Onnx>Conv" || conv->attr().at("T").type() != DT_FLOAT || consumers[conv_out] != readers ||
        protected_tensors.contains(conv_out) ||
        (conv->attr().contains("activation") && !conv->attr().at("activation").s().empty())) {
      return nullptr;
    }
    return conv;
  };
  auto float_attr = [](const NodeDef& n, const char* name, float fallback) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? fallback : it->second.f();
  };
  for (NodeDef& act : *def.mutable_node()) {
    if (act.input_size() == 0) continue;
    NodeDef* conv = nullptr;
    // The attr names the activation as ONNX does: "LeakyRelu", not the op "Onnx>LeakyRelu".
    std::string activation(absl::StripPrefix(act.op(), kOnnxOpPrefix));
    AttrValue params;
    params.mutable_list();  // Empty unless the activation has parameters.
    if (act.op() == "Relu" || act.op() == "Onnx>HardSwish" || act.op() == "Sigmoid") {
      conv = fusable_conv(act.input(0), 1);
    } else if (act.op() == "Onnx>LeakyRelu") {
      conv = fusable_conv(act.input(0), 1);
      params.mutable_list()->add_f(float_attr(act, "alpha", 0.01f));
    } else if (act.op() == "Onnx>HardSigmoid") {
      conv = fusable_conv(act.input(0), 1);
      params.mutable_list()->add_f(float_attr(act, "alpha", 0.2f));
      params.mutable_list()->add_f(float_attr(act, "beta", 0.5f));
    } else if (act.op() == "Mul" && act.input_size() == 2 && act.attr().contains("T") &&
               act.attr().at("T").type() == DT_FLOAT) {
      // Swish (SiLU): Mul(y, Sigmoid(y)) of a Conv's y, the Sigmoid read by this Mul only.
      for (int i = 0; i < 2 && conv == nullptr; ++i) {
        auto sig = ParseTensorName(act.input(1 - i));
        if (!sig.ok() || sig->index != 0) continue;
        auto sig_it = by_name.find(sig->node);
        if (sig_it == by_name.end() || sig_it->second->op() != "Sigmoid" || sig_it->second->input_size() != 1) continue;
        const std::string sig_out = TensorId{sig->node, 0}.ToString();
        if (Canonical(sig_it->second->input(0)) != Canonical(act.input(i)) || consumers[sig_out] != 1 ||
            protected_tensors.contains(sig_out)) {
          continue;
        }
        conv = fusable_conv(act.input(i), 2);
        if (conv != nullptr) {
          dropped.insert(sig->node);
          activation = "Swish";
          // The Mul forwards the Conv's output (input 0 below).
          if (i != 0) act.mutable_input()->SwapElements(0, 1);
        }
      }
    } else if (act.op() == "Onnx>Clip") {
      conv = fusable_conv(act.input(0), 1);
      float lo, hi;
      if (!ClipBounds(index, graph->hoisted, act, &lo, &hi)) conv = nullptr;
      params.mutable_list()->add_f(lo);
      params.mutable_list()->add_f(hi);
    }
    if (conv == nullptr) continue;
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    (*conv->mutable_attr())["activation"].set_s(activation);
    (*conv->mutable_attr())["activation_params"] = params;
    // Readers of the activation read the fused Conv directly; unless it is a graph output, the
    // activation node is then dropped (below).
    const std::string act_out = TensorId{act.name(), 0}.ToString();
    if (!protected_tensors.contains(act_out)) renamed[act_out] = conv_out;
    // The activation node now forwards the fused result under its own name.
    ForwardAs(&act, act.input(0));
    ++fused;
  }
  // Activations nobody reads by name any more go away; their readers read the Conv.
  Rewire(&def, renamed, dropped);
  return fused;
}

absl::StatusOr<int> FuseConvResiduals(GraphItem* graph) {
  int fused = 0;
  GraphDef& def = graph->graph;
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_map<std::string, std::string> renamed;  // Add output -> the Conv's.
  auto known_shape = [&](const std::string& tensor) -> const PartialShape* {
    auto it = graph->shapes.find(Canonical(tensor));
    return it == graph->shapes.end() || !it->second.IsFullyDefined() ? nullptr : &it->second;
  };
  for (NodeDef& add : *def.mutable_node()) {
    if ((add.op() != "Add" && add.op() != "AddNhwc") || add.input_size() != 2 || add.attr().at("T").type() != DT_FLOAT ||
        SameTensor(add.input(0), add.input(1))) {
      continue;
    }
    const PartialShape* out_shape = known_shape(TensorId{add.name(), 0}.ToString());
    for (int i = 0; i < 2 && out_shape != nullptr; ++i) {
      NodeDef* conv = FloatProducer(index, add.input(i), "Onnx>Conv");
      if (conv == nullptr || !Internal(index, *conv, 1)) continue;
      auto& attrs = *conv->mutable_attr();
      if ((attrs.contains("activation") && !attrs.at("activation").s().empty()) ||
          (attrs.contains("Tr") && attrs.at("Tr").list().type_size() > 0)) {
        continue;
      }
      // No broadcasting: the Conv's output, the other operand and the sum have one shape.
      const PartialShape* conv_shape = known_shape(add.input(i));
      const PartialShape* other_shape = known_shape(add.input(1 - i));
      if (conv_shape == nullptr || other_shape == nullptr || !(*conv_shape == *out_shape) ||
          !(*other_shape == *out_shape)) {
        continue;
      }
      // The residual goes after X, W and the bias, before any control inputs.
      const int at = 2 + attrs.at("Tb").list().type_size();
      conv->add_input(add.input(1 - i));
      for (int k = conv->input_size() - 1; k > at; --k) conv->mutable_input()->SwapElements(k, k - 1);
      attrs["Tr"].mutable_list()->add_type(DT_FLOAT);
      const std::string conv_out = TensorId{conv->name(), 0}.ToString(), add_out = TensorId{add.name(), 0}.ToString();
      if (!index.protected_tensors.contains(add_out)) renamed[add_out] = conv_out;
      graph->shapes[conv_out] = *out_shape;
      ForwardAs(&add, conv_out);
      ++fused;
      break;
    }
  }
  Rewire(&def, renamed, {});
  // The activation after the sum (ResNet's Relu) now follows the Conv directly.
  if (fused > 0) SL_RETURN_IF_ERROR(FuseConvActivations(graph).status());
  return fused;
}

}  // namespace sluice
