#include "frontend/onnx/optimize.h"

#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/node_def_util.h"
#include "framework/status.h"

namespace sluice {
namespace {

// The scalar value of a float Const node, if `tensor` names one.
std::optional<float> ConstScalar(const absl::flat_hash_map<std::string, NodeDef*>& by_name,
                                 const std::string& tensor) {
  auto id = ParseTensorName(tensor);
  if (!id.ok()) return std::nullopt;
  auto it = by_name.find(id->node);
  if (it == by_name.end() || it->second->op() != "Const") return std::nullopt;
  auto value = Tensor::FromProto(it->second->attr().at("value").tensor());
  if (!value.ok() || value->dtype() != DT_FLOAT || value->NumElements() != 1) return std::nullopt;
  return value->flat<float>()[0];
}

}  // namespace

absl::Status FuseConvActivations(OnnxGraph* graph) {
  GraphDef& def = graph->graph;
  absl::flat_hash_map<std::string, NodeDef*> by_name;
  absl::flat_hash_map<std::string, int> consumers;  // Tensor ("node:k") -> data consumers.
  for (NodeDef& n : *def.mutable_node()) {
    by_name[n.name()] = &n;
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (id.ok() && id->index != kControlSlot) ++consumers[TensorId{id->node, id->index}.ToString()];
    }
  }
  absl::flat_hash_set<std::string> protected_tensors;
  for (const auto& out : graph->outputs) {
    auto id = ParseTensorName(out.tensor);
    if (id.ok()) protected_tensors.insert(TensorId{id->node, id->index}.ToString());
  }
  for (NodeDef& act : *def.mutable_node()) {
    if ((act.op() != "Relu" && act.op() != "Clip") || act.input_size() == 0) continue;
    auto src = ParseTensorName(act.input(0));
    if (!src.ok() || src->index != 0) continue;
    auto conv_it = by_name.find(src->node);
    if (conv_it == by_name.end()) continue;
    NodeDef* conv = conv_it->second;
    const std::string conv_out = TensorId{conv->name(), 0}.ToString();
    if (conv->op() != "Conv" || conv->attr().at("T").type() != DT_FLOAT ||
        consumers[conv_out] != 1 || protected_tensors.contains(conv_out) ||
        (conv->attr().contains("activation") && !conv->attr().at("activation").s().empty())) {
      continue;
    }
    AttrValue params;
    params.mutable_list();  // An empty list for Relu.
    if (act.op() == "Clip") {
      float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
      // Inputs: input, then min and max when present (which ones is in Tmin/Tmax).
      int next = 1;
      bool constant = true;
      for (const char* which : {"Tmin", "Tmax"}) {
        if (act.attr().at(which).list().type_size() == 0) continue;
        auto v = ConstScalar(by_name, act.input(next++));
        if (!v) {
          constant = false;
          break;
        }
        (std::string(which) == "Tmin" ? lo : hi) = *v;
      }
      if (!constant) continue;
      params.mutable_list()->add_f(lo);
      params.mutable_list()->add_f(hi);
    }
    (*conv->mutable_attr())["activation"].set_s(act.op());
    (*conv->mutable_attr())["activation_params"] = params;
    // The activation node now forwards the fused result under its own name.
    NodeDef identity;
    identity.set_name(act.name());
    identity.set_op("Identity");
    identity.set_device(act.device());
    identity.add_input(act.input(0));
    (*identity.mutable_attr())["T"].set_type(DT_FLOAT);
    act = identity;
  }
  return absl::OkStatus();
}

}  // namespace sluice
