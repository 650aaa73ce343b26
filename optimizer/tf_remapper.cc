// TensorFlow's spelling of the computations the ONNX-named fusions match (Grappler's
// remapper): Conv2D + BiasAdd + FusedBatchNormV3 + Relu, MatMul + BiasAdd. A graph built with
// TensorFlow's op names gets the same fused oneDNN convolutions and Gemms as its ONNX twin.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"
#include "optimizer/passes.h"
#include "optimizer/rewrite_util.h"

namespace sluice {
namespace {

std::string StringAttr(const NodeDef& n, const char* name, const std::string& fallback) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? fallback : it->second.s();
}

std::vector<int64_t> IntsAttr(const NodeDef& n, const char* name) {
  auto it = n.attr().find(name);
  if (it == n.attr().end()) return {};
  return std::vector<int64_t>(it->second.list().i().begin(), it->second.list().i().end());
}

// Whether output k > 0 of `n` is read by anything or fetched.
bool ExtraOutputsRead(const GraphIndex& index, const NodeDef& n, int outputs) {
  for (int k = 1; k < outputs; ++k) {
    const std::string t = TensorId{n.name(), k}.ToString();
    auto it = index.consumers.find(t);
    if ((it != index.consumers.end() && it->second > 0) || index.protected_tensors.contains(t)) return true;
  }
  return false;
}

// A float constant of `n` values, if `tensor` is one.
std::optional<Tensor> ConstVector(const GraphIndex& index, const std::string& tensor, int64_t n) {
  std::optional<Tensor> v = ConstValue(index.by_name, index.hoisted, tensor);
  if (!v || v->dtype() != DT_FLOAT || v->dims() != 1 || v->dim_size(0) != n) return std::nullopt;
  return v;
}

// What follows a Conv2D in one chain: bias and normalization folded per output channel, then
// an activation, each read only by the next.
struct ConvChain {
  std::vector<NodeDef*> span;  // BiasAdd, FusedBatchNormV3, activation, as present.
  std::vector<float> scale, shift;  // y = conv * scale + shift, per output channel.
  std::string activation;
  std::vector<float> activation_params;
};

ConvChain FollowConv(const GraphIndex& index, NodeDef* conv, const std::string& format, int64_t out_c) {
  ConvChain chain;
  chain.scale.assign(out_c, 1.0f);
  chain.shift.assign(out_c, 0.0f);
  NodeDef* last = conv;
  if (NodeDef* bias = SoleReader(index, *last, "BiasAdd")) {
    std::optional<Tensor> b = bias->input_size() == 2 && SameTensor(bias->input(0), last->name())
                                  ? ConstVector(index, bias->input(1), out_c)
                                  : std::nullopt;
    if (b && StringAttr(*bias, "data_format", "NHWC") == format) {
      for (int64_t o = 0; o < out_c; ++o) chain.shift[o] += b->flat<float>()[o];
      chain.span.push_back(bias);
      last = bias;
    }
  }
  if (NodeDef* bn = SoleReader(index, *last, "FusedBatchNormV3")) {
    auto training = bn->attr().find("is_training");
    auto u = bn->attr().find("U");
    std::optional<Tensor> v[4];
    bool ok = bn->input_size() == 5 && SameTensor(bn->input(0), last->name()) &&
              (training == bn->attr().end() || !training->second.b()) &&
              (u == bn->attr().end() || u->second.type() == DT_FLOAT) &&
              StringAttr(*bn, "data_format", "NHWC") == format && !ExtraOutputsRead(index, *bn, 6);
    for (int k = 0; ok && k < 4; ++k) ok = (v[k] = ConstVector(index, bn->input(k + 1), out_c)).has_value();
    if (ok) {
      auto eps_attr = bn->attr().find("epsilon");
      const double eps = eps_attr == bn->attr().end() ? 1e-4 : eps_attr->second.f();
      for (int64_t o = 0; o < out_c; ++o) {
        const double s = v[0]->flat<float>()[o] / std::sqrt(static_cast<double>(v[3]->flat<float>()[o]) + eps);
        chain.scale[o] = static_cast<float>(chain.scale[o] * s);
        chain.shift[o] = static_cast<float>((chain.shift[o] - v[2]->flat<float>()[o]) * s + v[1]->flat<float>()[o]);
      }
      chain.span.push_back(bn);
      last = bn;
    }
  }
  for (const char* op : {"Relu", "Relu6", "LeakyRelu"}) {
    NodeDef* act = SoleReader(index, *last, op);
    if (act == nullptr || act->input_size() != 1) continue;
    if (std::string(op) == "Relu") chain.activation = "Relu";
    if (std::string(op) == "Relu6") {
      chain.activation = "Clip";
      chain.activation_params = {0.0f, 6.0f};
    }
    if (std::string(op) == "LeakyRelu") {
      auto alpha = act->attr().find("alpha");
      chain.activation = "LeakyRelu";
      chain.activation_params = {alpha == act->attr().end() ? 0.2f : alpha->second.f()};
    }
    chain.span.push_back(act);
    break;
  }
  return chain;
}

NodeDef View(const std::string& name, const std::string& device, const std::string& input, bool channels_last) {
  NodeDef v;
  v.set_name(name);
  v.set_op("NhwcView");
  v.set_device(device);
  v.add_input(input);
  (*v.mutable_attr())["T"].set_type(DT_FLOAT);
  (*v.mutable_attr())["channels_last"].set_b(channels_last);
  return v;
}

std::string FreshName(const GraphIndex& index, const absl::flat_hash_set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int i = 1; index.by_name.contains(name) || taken.contains(name); ++i) name = absl::StrCat(base, "_", i);
  return name;
}

}  // namespace

absl::StatusOr<int> FuseTfConvolutions(GraphItem* graph) {
  GraphIndex index = IndexGraph(graph);
  std::vector<NodeDef> added;
  absl::flat_hash_set<std::string> dropped, maybe_unread, names;
  int fused = 0;
  for (NodeDef& conv : *graph->graph.mutable_node()) {
    auto t = conv.attr().find("T");
    if (conv.op() != "Conv2D" || conv.input_size() != 2 || t == conv.attr().end() || t->second.type() != DT_FLOAT ||
        !OnCpu(conv) || dropped.contains(conv.name())) {
      continue;
    }
    const std::string format = StringAttr(conv, "data_format", "NHWC");
    const bool nhwc = format == "NHWC";
    if (!nhwc && format != "NCHW") continue;
    const int h = nhwc ? 1 : 2, w = nhwc ? 2 : 3, c = nhwc ? 3 : 1;
    const std::vector<int64_t> strides = IntsAttr(conv, "strides");
    std::vector<int64_t> dilations = IntsAttr(conv, "dilations");
    if (dilations.empty()) dilations = {1, 1, 1, 1};
    if (strides.size() != 4 || dilations.size() != 4 || strides[0] != 1 || strides[c] != 1 || dilations[0] != 1 ||
        dilations[c] != 1) {
      continue;
    }
    std::optional<Tensor> filter = ConstValue(index.by_name, index.hoisted, conv.input(1));
    auto x_shape = graph->shapes.find(Canonical(conv.input(0)));
    if (!filter || filter->dtype() != DT_FLOAT || filter->dims() != 4 || x_shape == graph->shapes.end() ||
        x_shape->second.rank() != 4) {
      continue;
    }
    const int64_t kh = filter->dim_size(0), kw = filter->dim_size(1), in_c = filter->dim_size(2),
                  out_c = filter->dim_size(3), channels = x_shape->second.dim(c);
    if (in_c <= 0 || out_c <= 0 || channels <= 0 || channels % in_c != 0 || out_c % (channels / in_c) != 0) continue;
    const std::string padding = StringAttr(conv, "padding", "");
    std::vector<int64_t> pads;
    if (padding == "EXPLICIT") {
      const std::vector<int64_t> e = IntsAttr(conv, "explicit_paddings");
      if (e.size() != 8) continue;
      pads = {e[2 * h], e[2 * w], e[2 * h + 1], e[2 * w + 1]};
    } else if (padding != "SAME" && padding != "VALID") {
      continue;
    }
    ConvChain chain = FollowConv(index, &conv, format, out_c);
    if (chain.span.empty()) continue;  // Nothing to fuse: Conv2D runs on oneDNN as it is.

    // Weights [kh, kw, in, out] -> [out, in, kh, kw], scaled per output channel.
    Tensor oihw(DT_FLOAT, TensorShape({out_c, in_c, kh, kw}));
    const float* f = filter->flat<float>().data();
    float* o = oihw.flat<float>().data();
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x)
        for (int64_t i = 0; i < in_c; ++i)
          for (int64_t k = 0; k < out_c; ++k) {
            o[((k * in_c + i) * kh + y) * kw + x] = f[((y * kw + x) * in_c + i) * out_c + k] * chain.scale[k];
          }
    Tensor bias(DT_FLOAT, TensorShape({out_c}));
    for (int64_t k = 0; k < out_c; ++k) bias.flat<float>()[k] = chain.shift[k];

    NodeDef* last = chain.span.back();
    const std::string out_name = last->name(), device = conv.device();
    const std::string w_name = FreshName(index, names, conv.name() + "/fused_weights");
    names.insert(w_name);
    const std::string b_name = FreshName(index, names, conv.name() + "/fused_bias");
    names.insert(b_name);
    added.push_back(ConstNode(w_name, device, oihw));
    added.push_back(ConstNode(b_name, device, bias));
    NodeDef fused_conv;
    fused_conv.set_op("Onnx>Conv");
    fused_conv.set_device(device);
    std::string x = conv.input(0);
    if (nhwc) {
      const std::string view_in = FreshName(index, names, conv.name() + "/nchw_view");
      names.insert(view_in);
      added.push_back(View(view_in, device, x, /*channels_last=*/false));
      x = view_in;
    }
    fused_conv.add_input(x);
    fused_conv.add_input(w_name);
    fused_conv.add_input(b_name);
    auto& attr = *fused_conv.mutable_attr();
    attr["T"].set_type(DT_FLOAT);
    attr["Tb"].mutable_list()->add_type(DT_FLOAT);
    attr["Tr"].mutable_list();
    attr["group"].set_i(channels / in_c);
    for (int64_t v : {kh, kw}) attr["kernel_shape"].mutable_list()->add_i(v);
    for (int64_t v : {strides[h], strides[w]}) attr["strides"].mutable_list()->add_i(v);
    for (int64_t v : {dilations[h], dilations[w]}) attr["dilations"].mutable_list()->add_i(v);
    attr["auto_pad"].set_s(padding == "SAME" ? "SAME_UPPER" : padding == "VALID" ? "VALID" : "NOTSET");
    auto* pad_list = attr["pads"].mutable_list();
    for (int64_t v : pads) pad_list->add_i(v);
    attr["activation"].set_s(chain.activation);
    auto* params = attr["activation_params"].mutable_list();
    for (float p : chain.activation_params) params->add_f(p);
    attr["input_layout"].set_s(nhwc ? "NHWC" : "NCHW");
    attr["output_layout"].set_s(nhwc ? "NHWC" : "NCHW");

    // The chain's last node keeps its name (its readers and fetches stay as they are).
    for (NodeDef* n : chain.span) {
      for (const std::string& in : n->input()) maybe_unread.insert(ParseTensorName(in)->node);
      if (n != last) dropped.insert(n->name());
    }
    maybe_unread.insert(ParseTensorName(conv.input(1))->node);
    dropped.insert(conv.name());
    if (nhwc) {
      fused_conv.set_name(FreshName(index, names, out_name + "/fused_conv"));
      names.insert(fused_conv.name());
      *last = View(out_name, device, fused_conv.name(), /*channels_last=*/true);
    } else {
      fused_conv.set_name(out_name);
      *last = fused_conv;
      fused_conv.Clear();
    }
    if (!fused_conv.name().empty()) added.push_back(std::move(fused_conv));
    ++fused;
  }
  if (fused == 0) return 0;
  for (NodeDef& n : added) *graph->graph.add_node() = std::move(n);
  DropUnreadConsts(graph, maybe_unread, dropped);
  SortTopologically(&graph->graph);
  return fused;
}

absl::StatusOr<int> FuseTfMatMulBiasAdds(GraphItem* graph) {
  GraphIndex index = IndexGraph(graph);
  absl::flat_hash_set<std::string> dropped, maybe_unread;
  int fused = 0;
  for (NodeDef& mm : *graph->graph.mutable_node()) {
    auto t = mm.attr().find("T");
    if (mm.op() != "MatMul" || mm.input_size() != 2 || t == mm.attr().end() || t->second.type() != DT_FLOAT ||
        dropped.contains(mm.name())) {
      continue;
    }
    NodeDef* bias_add = SoleReader(index, mm, "BiasAdd");
    if (bias_add == nullptr || bias_add->input_size() != 2 || !SameTensor(bias_add->input(0), mm.name())) continue;
    auto attr_b = [&](const char* name) {
      auto it = mm.attr().find(name);
      return it != mm.attr().end() && it->second.b();
    };
    const bool ta = attr_b("transpose_a"), tb = attr_b("transpose_b");
    std::optional<Tensor> b = ConstValue(index.by_name, index.hoisted, mm.input(1));
    if (!b || b->dtype() != DT_FLOAT || b->dims() != 2) continue;
    const int64_t n = b->dim_size(tb ? 0 : 1);
    if (!ConstVector(index, bias_add->input(1), n)) continue;
    const std::string a = mm.input(0), weights = mm.input(1), c = bias_add->input(1);
    MakeGemm(bias_add, a, weights, c, 1.0f, 1.0f, ta ? 1 : 0, tb ? 1 : 0);
    dropped.insert(mm.name());
    ++fused;
  }
  if (fused == 0) return 0;
  DropUnreadConsts(graph, maybe_unread, dropped);
  return fused;
}

}  // namespace sluice
