#include "optimizer/rewrite_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "framework/device_name.h"

namespace sluice {
std::string Canonical(const std::string& t) {
  auto id = ParseTensorName(t);
  return id.ok() ? TensorId{id->node, id->index}.ToString() : t;
}

// The value of a Const node, if `tensor` names one's output.
std::optional<Tensor> ConstValue(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const HoistedConstants* hoisted, const std::string& tensor) {
  auto id = ParseTensorName(tensor);
  if (!id.ok() || id->index != 0) return std::nullopt;
  auto it = by_name.find(id->node);
  if (it == by_name.end() || it->second->op() != "Const" || !it->second->attr().contains("value")) {
    return std::nullopt;
  }
  if (IsHoisted(*it->second)) {
    // A copy: the table's buffers are shared with the session's graph and its other signatures.
    absl::StatusOr<Tensor> shared = FindHoistedValue(*it->second, hoisted);
    if (!shared.ok()) return std::nullopt;
    return shared->DeepCopy();
  }
  auto value = Tensor::FromProto(it->second->attr().at("value").tensor());
  if (!value.ok()) return std::nullopt;
  return *value;
}

// The scalar value of a float Const node, if `tensor` names one.
std::optional<float> ConstScalar(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const HoistedConstants* hoisted, const std::string& tensor) {
  std::optional<Tensor> value = ConstValue(by_name, hoisted, tensor);
  if (!value || value->dtype() != DT_FLOAT || value->NumElements() != 1) return std::nullopt;
  return value->flat<float>()[0];
}

NodeDef ConstNode(const std::string& name, const std::string& device, const Tensor& value) {
  NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  n.set_device(device);
  (*n.mutable_attr())["dtype"].set_type(value.dtype());
  value.AsProtoTensorContent((*n.mutable_attr())["value"].mutable_tensor());
  return n;
}


GraphIndex IndexGraph(GraphItem* graph) {
  GraphIndex index;
  for (NodeDef& n : *graph->graph.mutable_node()) {
    index.by_name[n.name()] = &n;
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (!id.ok() || id->index == kControlSlot) continue;
      const std::string t = TensorId{id->node, id->index}.ToString();
      ++index.consumers[t];
      index.readers[t].push_back(&n);
    }
  }
  for (const auto& out : graph->outputs) index.protected_tensors.insert(Canonical(out));
  index.hoisted = graph->hoisted;
  return index;
}

// Turns a fused-away float node into an Identity of `input` under its own name and device, so
// a graph output it was stays fetchable.
void ForwardAs(NodeDef* node, const std::string& input) {
  NodeDef identity;
  identity.set_name(node->name());
  identity.set_op("Identity");
  identity.set_device(node->device());
  identity.add_input(input);
  (*identity.mutable_attr())["T"].set_type(DT_FLOAT);
  *node = std::move(identity);
}

// Drops the nodes whose output 0 is in `renamed` (its readers read the new tensor instead) and
// the nodes in `dropped`.
void Rewire(GraphDef* def, const absl::flat_hash_map<std::string, std::string>& renamed,
            const absl::flat_hash_set<std::string>& dropped) {
  GraphDef kept;
  for (NodeDef& n : *def->mutable_node()) {
    if (renamed.contains(TensorId{n.name(), 0}.ToString()) || dropped.contains(n.name())) continue;
    for (std::string& in : *n.mutable_input()) {
      auto it = renamed.find(Canonical(in));
      if (it != renamed.end()) in = it->second;
    }
    *kept.add_node() = std::move(n);
  }
  def->mutable_node()->Swap(kept.mutable_node());
}

// Drops the Consts in `candidates` that no node, graph input or graph output reads any more
// (weights a rewrite replaced), so they hold no memory; and the nodes in `dropped`, whose readers
// a rewrite already pointed elsewhere (their own reads do not keep a Const).
void DropUnreadConsts(GraphItem* graph, const absl::flat_hash_set<std::string>& candidates,
                      const absl::flat_hash_set<std::string>& dropped) {
  GraphDef& def = graph->graph;
  absl::flat_hash_set<std::string> read;
  for (const NodeDef& n : def.node()) {
    if (dropped.contains(n.name())) continue;  // Its reads go with it.
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (id.ok()) read.insert(id->node);
    }
  }
  for (const auto& ends : {graph->inputs, graph->outputs}) {
    for (const auto& e : ends) {
      auto id = ParseTensorName(e);
      if (id.ok()) read.insert(id->node);
    }
  }
  absl::flat_hash_set<std::string> unread;
  for (const NodeDef& n : def.node()) {
    if (n.op() == "Const" && candidates.contains(n.name()) && !read.contains(n.name())) unread.insert(n.name());
  }
  unread.insert(dropped.begin(), dropped.end());
  if (!unread.empty()) Rewire(&def, {}, unread);
}

// The node whose output 0 `tensor` is, if it is a float `op`.
NodeDef* FloatProducer(const GraphIndex& index, const std::string& tensor, const char* op) {
  auto id = ParseTensorName(tensor);
  if (!id.ok() || id->index != 0) return nullptr;
  auto it = index.by_name.find(id->node);
  if (it == index.by_name.end()) return nullptr;
  NodeDef* n = it->second;
  if (n->op() != op) return nullptr;
  auto t = n->attr().find("T");
  return t != n->attr().end() && t->second.type() == DT_FLOAT ? n : nullptr;
}

// Whether a fusion may drop `n`: its output 0 is read by exactly `reads` data inputs and is no
// graph output.
bool Internal(const GraphIndex& index, const NodeDef& n, int reads) {
  const std::string out = TensorId{n.name(), 0}.ToString();
  auto it = index.consumers.find(out);
  return it != index.consumers.end() && it->second == reads && !index.protected_tensors.contains(out);
}

// The one node reading output 0 of `n` (once), if it is a float `op`.
NodeDef* SoleReader(const GraphIndex& index, const NodeDef& n, const char* op) {
  if (!Internal(index, n, 1)) return nullptr;
  NodeDef* r = index.readers.at(TensorId{n.name(), 0}.ToString())[0];
  if (r->op() != op) return nullptr;
  auto t = r->attr().find("T");
  return t != r->attr().end() && t->second.type() == DT_FLOAT ? r : nullptr;
}

// The value of a one-element numeric constant (Pow's exponent may be an integer) of rank 0 or
// 1, so that it broadcasts without raising the rank of a tensor of rank 1 or more.
std::optional<double> ConstNumber(const GraphIndex& index, const std::string& tensor) {
  std::optional<Tensor> v = ConstValue(index.by_name, index.hoisted, tensor);
  if (!v || v->NumElements() != 1 || v->dims() > 1) return std::nullopt;
  switch (v->dtype()) {
    case DT_FLOAT: return v->flat<float>()[0];
    case DT_DOUBLE: return v->flat<double>()[0];
    case DT_INT32: return v->flat<int32_t>()[0];
    case DT_INT64: return static_cast<double>(v->flat<int64_t>()[0]);
    default: return std::nullopt;
  }
}

// Whether `tensor` is a one-element constant within float rounding of `want`.
bool ConstNear(const GraphIndex& index, const std::string& tensor, double want) {
  std::optional<double> v = ConstNumber(index, tensor);
  return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want);
}

bool SameTensor(const std::string& a, const std::string& b) { return Canonical(a) == Canonical(b); }

// A fused pattern's nodes: those in `span` go (into `dropped`), `kept` becomes the fused node
// under its own name; what any of them read may now be unread.
void DropFusedSpan(const std::vector<NodeDef*>& span, const NodeDef* kept, absl::flat_hash_set<std::string>* dropped,
                   absl::flat_hash_set<std::string>* maybe_unread) {
  for (const NodeDef* n : span) {
    dropped->insert(n->name());
    for (const std::string& in : n->input()) maybe_unread->insert(ParseTensorName(in)->node);
  }
  for (const std::string& in : kept->input()) maybe_unread->insert(ParseTensorName(in)->node);
}

// Of a two-input node, the index of the input that `pred` accepts (the first if both do), or -1.
int InputWhere(const NodeDef& n, const std::function<bool(const std::string&)>& pred) {
  if (n.input_size() != 2) return -1;
  for (int i = 0; i < 2; ++i) {
    if (pred(n.input(i))) return i;
  }
  return -1;
}

// The 2-D float BatchMatMulV2 (ONNX MatMul) of a rank-2 A (any rank >= 2 if `batched_ok`) and
// a constant 2-D B whose output `tensor` is, read by that one node and not a graph output; B's
// value in `b`.
NodeDef* ConstWeightMatMul(const GraphItem& graph, const GraphIndex& index, const std::string& tensor,
                           std::optional<Tensor>* b, bool batched_ok) {
  auto src = ParseTensorName(tensor);
  if (!src.ok() || src->index != 0) return nullptr;
  auto it = index.by_name.find(src->node);
  if (it == index.by_name.end()) return nullptr;
  NodeDef* mm = it->second;
  const std::string out = TensorId{mm->name(), 0}.ToString();
  auto readers = index.consumers.find(out);
  if (mm->op() != "BatchMatMulV2" || mm->input_size() != 2 || mm->attr().at("T").type() != DT_FLOAT ||
      mm->attr().at("adj_x").b() || mm->attr().at("adj_y").b() || readers == index.consumers.end() ||
      readers->second != 1 || index.protected_tensors.contains(out)) {
    return nullptr;
  }
  auto a_shape = graph.shapes.find(Canonical(mm->input(0)));
  if (a_shape == graph.shapes.end() || a_shape->second.rank() < 2 || (a_shape->second.rank() > 2 && !batched_ok)) {
    return nullptr;
  }
  *b = ConstValue(index.by_name, index.hoisted, mm->input(1));
  if (!*b || (*b)->dtype() != DT_FLOAT || (*b)->dims() != 2) return nullptr;
  return mm;
}

// Turns `node` (keeping its name and device) into Gemm(a, b, c) with the given attrs.
void MakeGemm(NodeDef* node, const std::string& a, const std::string& b, const std::string& c, float alpha,
              float beta, int64_t trans_a, int64_t trans_b) {
  NodeDef gemm;
  gemm.set_name(node->name());
  gemm.set_op("Onnx>Gemm");
  gemm.set_device(node->device());
  gemm.add_input(a);
  gemm.add_input(b);
  gemm.add_input(c);
  auto& attr = *gemm.mutable_attr();
  attr["T"].set_type(DT_FLOAT);
  attr["Tc"].mutable_list()->add_type(DT_FLOAT);
  attr["alpha"].set_f(alpha);
  attr["beta"].set_f(beta);
  attr["transA"].set_i(trans_a);
  attr["transB"].set_i(trans_b);
  *node = std::move(gemm);
}


bool OnCpu(const NodeDef& node) {
  if (node.device().empty()) return true;
  absl::StatusOr<DeviceName> name = DeviceName::Parse(node.device());
  return !name.ok() || name->type.empty() || name->type == "CPU";
}

}  // namespace sluice
