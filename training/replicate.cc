#include "training/replicate.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/graph.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "ops/op_registry.h"
#include "training/tensor_names.h"

namespace sluice {
namespace {

NodeDef ScalarConst(const std::string& name, DataType dt, double value) {
  NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  AddNodeAttr("dtype", dt, &n);
  Tensor t = dt == DT_DOUBLE ? Tensor::FromVector<double>({value}, TensorShape({}))
                             : Tensor::FromVector<float>({static_cast<float>(value)}, TensorShape({}));
  AddNodeAttr("value", t, &n);
  return n;
}

}  // namespace

absl::Status Replicate(const ReplicaPlan& plan, GraphDef* def,
                       std::function<std::string(const std::string&)>* tensor_of) {
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, Graph::FromGraphDef(*def, *OpRegistry::Global()));
  // The update: everything downstream of a gradient.
  absl::flat_hash_set<std::string> update;
  std::vector<const Node*> stack;
  for (const Node* n : graph->nodes()) {
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControl() &&
          plan.gradients.contains(ShortTensorName(absl::StrCat(e->src->name(), ":", e->src_output)))) {
        if (update.insert(n->name()).second) stack.push_back(n);
      }
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->out_edges()) {
      if (update.insert(e->dst->name()).second) stack.push_back(e->dst);
    }
  }
  // The replicas' work: everything downstream of a split input, short of the update.
  absl::flat_hash_set<std::string> batch;
  for (const std::string& name : plan.split_inputs) {
    const Node* n = graph->FindNode(name);
    if (n != nullptr && batch.insert(name).second) stack.push_back(n);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->out_edges()) {
      if (batch.insert(e->dst->name()).second) stack.push_back(e->dst);
    }
  }
  const int replicas = static_cast<int>(plan.replica_devices.size());
  auto replicated = [&](const std::string& node) {
    return batch.contains(node) && !update.contains(node);
  };
  auto replica_prefix = [](int i) { return absl::StrCat("replica_", i, "/"); };

  GraphDef out;
  *out.mutable_library() = def->library();
  *out.mutable_versions() = def->versions();
  absl::flat_hash_map<std::string, std::string> averages;  // Replicated tensor -> its average.
  auto average = [&](const std::string& tensor) -> absl::StatusOr<std::string> {
    const std::string key = ShortTensorName(tensor);
    auto it = averages.find(key);
    if (it != averages.end()) return it->second;
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(key));
    const Node* src = graph->FindNode(id.node);
    const DataType dt = src->output_types()[id.index];
    if (dt != DT_FLOAT && dt != DT_DOUBLE) {
      return absl::UnimplementedError(absl::StrCat(
          "data-parallel training averages '", key, "' over the replicas, but it is ",
          DataTypeString(dt), " (only float and double can be averaged)"));
    }
    std::string base = absl::StrCat("average/", id.node, "_", id.index);
    NodeDef sum;
    sum.set_name(base + "/sum");
    sum.set_op("AddN");
    sum.set_device(plan.update_device);
    for (int i = 0; i < replicas; ++i) sum.add_input(replica_prefix(i) + key);
    AddNodeAttr("N", replicas, &sum);
    AddNodeAttr("T", dt, &sum);
    NodeDef scale = ScalarConst(base + "/scale", dt, 1.0 / replicas);
    scale.set_device(plan.update_device);
    NodeDef mean;
    mean.set_name(base);
    mean.set_op("Mul");
    mean.set_device(plan.update_device);
    mean.add_input(sum.name());
    mean.add_input(scale.name());
    AddNodeAttr("T", dt, &mean);
    *out.add_node() = std::move(sum);
    *out.add_node() = std::move(scale);
    *out.add_node() = std::move(mean);
    averages[key] = base;
    return base;
  };

  for (const NodeDef& n : def->node()) {
    if (replicated(n.name())) {
      for (int i = 0; i < replicas; ++i) {
        NodeDef copy = n;
        copy.set_name(replica_prefix(i) + n.name());
        copy.set_device(plan.replica_devices[i]);
        if (plan.split_inputs.contains(n.name()) && copy.attr().contains("shape")) {
          // Each replica is fed a share of the batch: its first dimension is not the model's.
          AttrValue& shape = (*copy.mutable_attr())["shape"];
          if (shape.shape().dim_size() > 0) shape.mutable_shape()->mutable_dim(0)->set_size(-1);
        }
        for (std::string& in : *copy.mutable_input()) {
          if (replicated(NodeOf(in))) in = Prefixed(replica_prefix(i), in);
        }
        *out.add_node() = std::move(copy);
      }
      continue;
    }
    NodeDef copy = n;
    copy.set_device(plan.update_device);
    copy.clear_input();
    for (const std::string& in : n.input()) {
      if (!replicated(NodeOf(in))) {
        copy.add_input(in);
      } else if (absl::StartsWith(in, "^")) {
        for (int i = 0; i < replicas; ++i) copy.add_input(Prefixed(replica_prefix(i), in));
      } else {
        SL_ASSIGN_OR_RETURN(std::string avg, average(in), "node '", n.name(), "'");
        copy.add_input(avg);
      }
    }
    *out.add_node() = std::move(copy);
  }
  for (const std::string& t : plan.reported) {
    if (!replicated(NodeOf(t))) continue;
    SL_RETURN_IF_ERROR(average(t).status(), "reported output '", t, "'");
  }
  *def = std::move(out);
  // Replicated tensors that neither an update nor the client reads have no average: "".
  *tensor_of = [update, batch, averages](const std::string& tensor) {
    auto it = averages.find(ShortTensorName(tensor));
    if (it != averages.end()) return it->second;
    const std::string node = NodeOf(tensor);
    return batch.contains(node) && !update.contains(node) ? std::string() : tensor;
  };
  return absl::OkStatus();
}

}  // namespace sluice
