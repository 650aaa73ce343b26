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

// A 2-D float Conv: its kernel_shape has two dims, or its weights are a 4-D constant.
bool IsFloatConv2D(const NodeDef& n, const absl::flat_hash_map<std::string, NodeDef*>& by_name) {
  if (n.op() != "Onnx>Conv" || n.attr().at("T").type() != DT_FLOAT || n.input_size() < 2) return false;
  auto ks = n.attr().find("kernel_shape");
  if (ks != n.attr().end() && ks->second.list().i_size() > 0) return ks->second.list().i_size() == 2;
  auto w = ParseTensorName(n.input(1));
  if (!w.ok()) return false;
  auto it = by_name.find(w->node);
  if (it == by_name.end() || it->second->op() != "Const") return false;
  return it->second->attr().at("value").tensor().tensor_shape().dim_size() == 4;
}

// The NHWC layout pass's state: the graph indexed, the candidates (nodes that can read and
// write NHWC) and what the rewrites add.
class NhwcLayout {
 public:
  explicit NhwcLayout(GraphItem* graph) : graph_(graph), def_(graph->graph) {
    for (NodeDef& n : *def_.mutable_node()) by_name_[n.name()] = &n;
    for (NodeDef& n : *def_.mutable_node()) {
      for (int i = 0; i < n.input_size(); ++i) {
        auto id = ParseTensorName(n.input(i));
        if (id.ok() && id->index != kControlSlot) consumers_[TensorId{id->node, id->index}.ToString()].push_back({&n, i});
      }
    }
    for (const auto& out : graph->outputs) protected_.insert(Canonical(out));
    for (const NodeDef& n : def_.node()) {
      if (auto scale = FindChannelScale(n)) channel_scales_.emplace(n.name(), *std::move(scale));
    }
  }

  // Every node that could take NHWC, then (to a fixpoint) only those with NHWC on every side
  // that carries the layout; each Conv's sides are decided before anything is rewritten.
  void ChooseCandidates() {
    for (const NodeDef& n : def_.node()) {
      // A layout for oneDNN's CPU kernels: nodes placed on other device kinds keep theirs.
      if (!OnCpu(n)) continue;
      if (IsFloatConv2D(n, by_name_) || IsPool(n) || IsConcat(n) || IsBinary(n) || IsGlobalPool(n) ||
          IsUnary(n) || BatchNormAffine(n) || IsResize(n) || IsShuffle(n) || ChannelSlice(n) || IsSink(n) ||
          IsSource(n)) {
        candidates_.insert(n.name());
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const NodeDef& n : def_.node()) {
        if (!candidates_.contains(n.name()) || n.op() == "Onnx>Conv") continue;
        // A global pool's output is the same in either order, so any node may read it; a sink's
        // is channels-last, in plain order.
        bool ok = n.op() == "Onnx>GlobalAveragePool" || IsSink(n) || NhwcOk(TensorId{n.name(), 0}.ToString());
        for (int i = 0; ok && i < n.input_size(); ++i) ok = !Carries(n, i) || NhwcOk(n.input(i));
        if (!ok) {
          candidates_.erase(n.name());
          changed = true;
        }
      }
    }
    // Each Conv's sides, decided before any reader is rewritten.
    for (const NodeDef& n : def_.node()) {
      if (candidates_.contains(n.name()) && n.op() == "Onnx>Conv") {
        conv_sides_[n.name()] = {NhwcOk(n.input(0)), NhwcOk(TensorId{n.name(), 0}.ToString())};
      }
    }
  }

  // Rewrites the candidates into their NHWC ops; returns how many it rewrote.
  int Rewrite() {
    int rewritten = 0;
    for (NodeDef& n : *def_.mutable_node()) {
      if (!candidates_.contains(n.name())) continue;
      if (n.op() == "Onnx>Conv") {
        const auto [in, out] = conv_sides_.at(n.name());
        if (out) (*n.mutable_attr())["output_layout"].set_s("NHWC");
        if (in) (*n.mutable_attr())["input_layout"].set_s("NHWC");
        rewritten += out || in;
        continue;
      }
      ++rewritten;
      if (IsUnary(n)) continue;  // As it is.
      if (IsSink(n) || IsSource(n)) {
        NodeDef view = NhwcNode(n, "NhwcView", n.input(0), {});
        (*view.mutable_attr())["channels_last"].set_b(IsSink(n));
        n = std::move(view);
        continue;
      }
      if (const auto* scale = ChannelScale(n)) {  // Mul by a per-channel constant: a channel affine.
        const int64_t c = scale->second.NumElements();
        Tensor shift(DT_FLOAT, TensorShape({c}));
        std::fill_n(shift.flat<float>().data(), c, 0.0f);
        statistics_.insert(ParseTensorName(n.input(1 - scale->first))->node);
        n = NhwcNode(n, "ChannelAffineNhwc", n.input(scale->first), {{"/scale", &scale->second}, {"/shift", &shift}});
        continue;
      }
      if (n.op() == "Onnx>MaxPool" || n.op() == "Onnx>AveragePool" || n.op() == "Onnx>Resize" ||
          n.op() == "ChannelShuffle") {
        (*n.mutable_attr())["layout"].set_s("NHWC");
      } else if (n.op() == "Add") {
        n.set_op("AddNhwc");
      } else if (n.op() == "Mul") {
        n.set_op("MulNhwc");
      } else if (n.op() == "Onnx>GlobalAveragePool") {
        n.set_op("GlobalAveragePoolNhwc");
      } else if (n.op() == "Onnx>Slice") {
        const auto [begin, end] = *ChannelSlice(n);
        NodeDef slice = NhwcNode(n, "SliceChannelsNhwc", n.input(0), {});
        (*slice.mutable_attr())["begin"].set_i(begin);
        (*slice.mutable_attr())["end"].set_i(end);
        n = std::move(slice);
      } else if (n.op() == "Onnx>BatchNormalization") {
        auto [scale, shift] = *BatchNormAffine(n);
        for (int k = 1; k < 5; ++k) statistics_.insert(ParseTensorName(n.input(k))->node);
        n = NhwcNode(n, "ChannelAffineNhwc", n.input(0), {{"/scale", &scale}, {"/shift", &shift}});
      } else {
        NodeDef cat;
        cat.set_name(n.name());
        cat.set_op("ConcatChannelsNhwc");
        cat.set_device(n.device());
        *cat.mutable_input() = n.input();
        (*cat.mutable_attr())["N"].set_i(n.input_size());
        (*cat.mutable_attr())["T"].set_type(DT_FLOAT);
        n = cat;
      }
    }
    return rewritten;
  }

  // A Relu that alone reads a ChannelAffineNhwc (DenseNet's BN -> Relu) runs in the same pass;
  // then the added constants join the graph and the statistics nothing reads any more go.
  void Finish() {
    absl::flat_hash_map<std::string, std::string> renamed;
    for (NodeDef& n : *def_.mutable_node()) {
      if (n.op() != "Relu" || n.input_size() != 1 || !candidates_.contains(n.name())) continue;
      auto id = ParseTensorName(n.input(0));
      if (!id.ok() || id->index != 0) continue;
      auto it = by_name_.find(id->node);
      const std::string in = TensorId{id->node, 0}.ToString(), out = TensorId{n.name(), 0}.ToString();
      if (it == by_name_.end() || it->second->op() != "ChannelAffineNhwc" || consumers_[in].size() != 1 ||
          protected_.contains(out)) {
        continue;
      }
      (*it->second->mutable_attr())["relu"].set_b(true);
      renamed[out] = in;
    }
    if (!renamed.empty()) Rewire(&def_, renamed, {});
    for (NodeDef& n : added_) *def_.add_node() = std::move(n);
    DropUnreadConsts(graph_, statistics_);
  }

 private:
  bool Read(const std::string& tensor) const {
    auto it = consumers_.find(tensor);
    return it != consumers_.end() && !it->second.empty();
  }

  // Nodes that can read and write NHWC. 2-D float convolutions convert at their edges; every
  // other candidate must have NHWC on both sides, so candidates_ are dropped until every
  // remaining one does. `LayoutInputs` is how many leading inputs carry the layout (the rest,
  // Clip's bounds or a BatchNormalization's statistics, are per-tensor or per-channel).
  static bool IsFloat(const NodeDef& n) { return n.attr().contains("T") && n.attr().at("T").type() == DT_FLOAT; }
  bool IsPool(const NodeDef& n) const {
    if ((n.op() != "Onnx>AveragePool" && n.op() != "Onnx>MaxPool") || !IsFloat(n) ||
        n.attr().at("kernel_shape").list().i_size() != 2) {
      return false;
    }
    if (n.op() == "Onnx>AveragePool") return true;
    return n.op() == "Onnx>MaxPool" && !n.attr().at("produce_indices").b() && n.attr().at("storage_order").i() == 0;
  }
  bool IsConcat(const NodeDef& n) const {
    return n.op() == "Onnx>Concat" && IsFloat(n) && (n.attr().at("axis").i() == 1 || n.attr().at("axis").i() == -3);
  }
  // Element-wise Add and Mul of two such tensors (residual connections, squeeze-and-excitation
  // scales) and global average pools (whose [N,C,1,1] output is the same in either order).
  bool IsBinary(const NodeDef& n) const { return (n.op() == "Add" || n.op() == "Mul") && IsFloat(n); }
  bool IsGlobalPool(const NodeDef& n) const { return n.op() == "Onnx>GlobalAveragePool" && IsFloat(n); }
  // Element-wise functions of one tensor do not care how its values lie.
  bool IsUnary(const NodeDef& n) const {
    static const auto* ops = new absl::flat_hash_set<std::string>{
        "Relu", "Sigmoid", "Tanh", "Elu", "Selu", "Neg", "Abs", "Onnx>HardSwish", "Onnx>HardSigmoid",
        "Onnx>LeakyRelu", "Onnx>Clip", "Onnx>Gelu", "Identity"};
    return ops->contains(n.op()) && IsFloat(n) && n.input_size() >= 1;
  }
  // An inference BatchNormalization of constant statistics whose extra outputs nobody reads:
  // a per-channel scale and shift (ChannelAffineNhwc).
  std::optional<std::pair<Tensor, Tensor>> BatchNormAffine(const NodeDef& n) const {
    if (n.op() != "Onnx>BatchNormalization" || !IsFloat(n) || n.input_size() != 5 ||
        n.attr().at("training_mode").b() || n.attr().at("T1").type() != DT_FLOAT ||
        n.attr().at("T2").type() != DT_FLOAT) {
      return std::nullopt;
    }
    for (int k = 1; k < 5; ++k) {
      if (Read(TensorId{n.name(), k}.ToString())) return std::nullopt;
    }
    std::optional<Tensor> v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = ConstValue(by_name_, graph_->hoisted, n.input(k + 1));
      if (!v[k] || v[k]->dtype() != DT_FLOAT || v[k]->dims() != 1 ||
          v[k]->NumElements() != v[0]->NumElements()) {
        return std::nullopt;
      }
    }
    if (by_name_.contains(n.name() + "/scale") || by_name_.contains(n.name() + "/shift")) return std::nullopt;
    const int64_t c = v[0]->NumElements();
    const float eps = n.attr().at("epsilon").f();
    Tensor scale(DT_FLOAT, TensorShape({c})), shift(DT_FLOAT, TensorShape({c}));
    for (int64_t i = 0; i < c; ++i) {
      const double s = v[0]->flat<float>()[i] / std::sqrt(static_cast<double>(v[3]->flat<float>()[i]) + eps);
      scale.flat<float>()[i] = static_cast<float>(s);
      shift.flat<float>()[i] = static_cast<float>(v[1]->flat<float>()[i] - s * v[2]->flat<float>()[i]);
    }
    return std::make_pair(std::move(scale), std::move(shift));
  }
  // A nearest or linear Resize of H and W only (N and C known and kept), not tf_crop_and_resize.
  bool IsResize(const NodeDef& n) const {
    if (n.op() != "Onnx>Resize" || !IsFloat(n) || n.attr().at("antialias").i() != 0 ||
        n.attr().at("mode").s() == "cubic" ||  // Cubic taps of a kept dim are not one tap.
        n.attr().at("coordinate_transformation_mode").s() == "tf_crop_and_resize") {
      return false;
    }
    auto in = graph_->shapes.find(Canonical(n.input(0)));
    auto out = graph_->shapes.find(TensorId{n.name(), 0}.ToString());
    if (in == graph_->shapes.end() || out == graph_->shapes.end() || in->second.rank() != 4 ||
        out->second.rank() != 4) {
      return false;
    }
    return in->second.dim(0) >= 0 && in->second.dim(0) == out->second.dim(0) && in->second.dim(1) >= 0 &&
           in->second.dim(1) == out->second.dim(1);
  }
  bool IsShuffle(const NodeDef& n) const { return n.op() == "ChannelShuffle" && IsFloat(n); }
  // A Slice of channels [begin, end) of a 4-D float tensor of known channels, step 1.
  std::optional<std::pair<int64_t, int64_t>> ChannelSlice(const NodeDef& n) const {
    if (n.op() != "Onnx>Slice" || !IsFloat(n) || n.input_size() < 4 || n.input_size() > 5) return std::nullopt;
    auto in = graph_->shapes.find(Canonical(n.input(0)));
    if (in == graph_->shapes.end() || in->second.rank() != 4 || in->second.dim(1) < 0) return std::nullopt;
    auto int_values = [&](const std::string& tensor) -> std::optional<std::vector<int64_t>> {
      std::optional<Tensor> v = ConstValue(by_name_, graph_->hoisted, tensor);
      if (!v || v->dims() != 1) return std::nullopt;
      std::vector<int64_t> out;
      for (int64_t i = 0; i < v->NumElements(); ++i) {
        if (v->dtype() == DT_INT64) out.push_back(v->flat<int64_t>()[i]);
        else if (v->dtype() == DT_INT32) out.push_back(v->flat<int32_t>()[i]);
        else return std::nullopt;
      }
      return out;
    };
    auto starts = int_values(n.input(1)), ends = int_values(n.input(2)), axes = int_values(n.input(3));
    if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
        ((*axes)[0] != 1 && (*axes)[0] != -3)) {
      return std::nullopt;
    }
    if (n.input_size() == 5) {
      auto steps = int_values(n.input(4));
      if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
    }
    const int64_t c = in->second.dim(1);
    auto clamp = [c](int64_t v) { return std::min(std::max(v < 0 ? v + c : v, int64_t{0}), c); };
    const int64_t begin = clamp((*starts)[0]), end = std::max(begin, clamp((*ends)[0]));
    return std::make_pair(begin, end);
  }
  // A 4-D float Transpose between channels-last and N,C,H,W order (ConvNeXt's blocks permute to
  // [N,H,W,C] for their LayerNorm and Linears and back): from an NHWC tensor to [N,H,W,C] (a
  // "sink", perm 0,2,3,1) its values already lie that way, and so do those of a [N,H,W,C] tensor
  // made N,C,H,W (a "source", perm 0,3,1,2): both become NhwcView, which moves no value.
  static bool TransposePerm(const NodeDef& n, std::initializer_list<int64_t> want) {
    if (n.op() != "Onnx>Transpose" || !IsFloat(n) || n.input_size() != 1) return false;
    const auto& perm = n.attr().at("perm").list();
    if (perm.i_size() != static_cast<int>(want.size())) return false;
    int k = 0;
    for (int64_t p : want) {
      if (perm.i(k++) != p) return false;
    }
    return true;
  }
  static bool IsSink(const NodeDef& n) { return TransposePerm(n, {0, 2, 3, 1}); }
  static bool IsSource(const NodeDef& n) { return TransposePerm(n, {0, 3, 1, 2}); }
  // A float Mul of a 4-D tensor of known channels C and a constant of shape [C,1,1] or
  // [1,C,1,1] (ConvNeXt's layer scale): the tensor's input index and the scale, as [C].
  std::optional<std::pair<int, Tensor>> FindChannelScale(const NodeDef& n) const {
    if (n.op() != "Mul" || !IsFloat(n) || n.input_size() != 2 || by_name_.contains(n.name() + "/scale") ||
        by_name_.contains(n.name() + "/shift")) {
      return std::nullopt;
    }
    for (int i = 0; i < 2; ++i) {
      std::optional<Tensor> v = ConstValue(by_name_, graph_->hoisted, n.input(1 - i));
      auto shape = graph_->shapes.find(Canonical(n.input(i)));
      if (!v || v->dtype() != DT_FLOAT || shape == graph_->shapes.end() || shape->second.rank() != 4) continue;
      const int64_t c = shape->second.dim(1);
      const bool per_channel = c > 1 && v->NumElements() == c &&
                               ((v->dims() == 3 && v->dim_size(0) == c) || (v->dims() == 4 && v->dim_size(0) == 1 &&
                                                                           v->dim_size(1) == c));
      if (!per_channel) continue;
      Tensor scale(DT_FLOAT, TensorShape({c}));
      std::copy_n(v->flat<float>().data(), c, scale.flat<float>().data());
      return std::make_pair(i, std::move(scale));
    }
    return std::nullopt;
  }
  const std::pair<int, Tensor>* ChannelScale(const NodeDef& n) const {
    auto it = channel_scales_.find(n.name());
    return it == channel_scales_.end() ? nullptr : &it->second;
  }
  // Whether input `i` of candidate `n` carries the layout (the rest, Clip's bounds or a
  // BatchNormalization's statistics, are per-tensor or per-channel).
  bool Carries(const NodeDef& n, int i) const {
    if (IsSource(n)) return false;
    if (const auto* scale = ChannelScale(n)) return i == scale->first;
    return IsConcat(n) || IsBinary(n) ? i < n.input_size() : i == 0;
  }

  // Whether `tensor` may stay NHWC: its producer and every reader are candidates that carry it.
  bool NhwcOk(const std::string& tensor) const {
    auto id = ParseTensorName(tensor);
    if (!id.ok() || id->index != 0 || !candidates_.contains(id->node) || IsSink(*by_name_.at(id->node))) return false;
    const std::string t = TensorId{id->node, 0}.ToString();
    auto it = consumers_.find(t);
    if (protected_.contains(t) || it == consumers_.end() || it->second.empty()) return false;
    for (const auto& [c, index] : it->second) {
      if (!candidates_.contains(c->name()) || !Carries(*c, index)) return false;
    }
    return true;
  }

  // A one-input NHWC node replacing `n` under its name and device: `op` of float `input`, with
  // constant inputs after it named n's name plus their suffix.
  NodeDef NhwcNode(const NodeDef& n, const char* op, const std::string& input,
                   std::initializer_list<std::pair<const char*, const Tensor*>> constants) {
    NodeDef r;
    r.set_name(n.name());
    r.set_op(op);
    r.set_device(n.device());
    r.add_input(input);
    for (const auto& [suffix, value] : constants) {
      const std::string name = n.name() + suffix;
      added_.push_back(ConstNode(name, n.device(), *value));
      r.add_input(name);
    }
    (*r.mutable_attr())["T"].set_type(DT_FLOAT);
    return r;
  }

  GraphItem* graph_;
  GraphDef& def_;
  absl::flat_hash_map<std::string, NodeDef*> by_name_;
  // Tensor -> (consumer, input index) for data inputs.
  absl::flat_hash_map<std::string, std::vector<std::pair<NodeDef*, int>>> consumers_;
  absl::flat_hash_set<std::string> protected_;
  absl::flat_hash_map<std::string, std::pair<int, Tensor>> channel_scales_;  // Looked up once.
  absl::flat_hash_set<std::string> candidates_;
  absl::flat_hash_map<std::string, std::pair<bool, bool>> conv_sides_;  // (input, output) NHWC.
  std::vector<NodeDef> added_;
  absl::flat_hash_set<std::string> statistics_;  // What the normalizations read before.
};

}  // namespace

absl::StatusOr<int> UseNhwcBetweenConvs(GraphItem* graph) {
  NhwcLayout layout(graph);
  layout.ChooseCandidates();
  const int rewritten = layout.Rewrite();
  layout.Finish();
  return rewritten;
}

}  // namespace sluice
