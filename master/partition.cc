#include "master/partition.h"

#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "framework/node_attr.h"

namespace sluice {
namespace {

void SetSendRecvAttrs(NodeDef* node, const std::string& tensor_name, const std::string& src_device,
                      uint64_t incarnation, const std::string& dst_device) {
  AddNodeAttr("tensor_name", tensor_name, node);
  AddNodeAttr("send_device", src_device, node);
  AddNodeAttr("send_device_incarnation", static_cast<int64_t>(incarnation), node);
  AddNodeAttr("recv_device", dst_device, node);
  AddNodeAttr("client_terminated", false, node);
}

}  // namespace

absl::StatusOr<std::map<std::string, GraphDef>> PartitionByDevice(const Graph& graph,
                                                                   const IncarnationFn& incarnation) {
  std::map<std::string, GraphDef> parts;
  // (source node, output or -1 for control, destination device) -> name of the _Recv there.
  absl::flat_hash_map<std::tuple<std::string, int, std::string>, std::string> recvs;
  int counter = 0;

  auto cut = [&](const Edge* e, const std::string& dst_device) -> std::string {
    const Node* src = e->src;
    const std::string& src_device = src->assigned_device();
    auto key = std::make_tuple(src->name(), e->src_output, dst_device);
    auto it = recvs.find(key);
    if (it != recvs.end()) return it->second;
    const int id = counter++;
    GraphDef& src_part = parts[src_device];
    std::string sent = TensorId{src->name(), e->src_output}.ToString();
    DataType dtype = DT_FLOAT;
    if (e->IsControl()) {
      // A dummy scalar carries the control dependency across.
      NodeDef* dummy = src_part.add_node();
      dummy->set_name(absl::StrCat("_ctrl/", src->name(), "/", id));
      dummy->set_op("Const");
      dummy->set_device(src_device);
      dummy->add_input(absl::StrCat("^", src->name()));
      AddNodeAttr("dtype", DT_FLOAT, dummy);
      AddNodeAttr("value", Tensor::Scalar<float>(0), dummy);
      sent = dummy->name();
    } else {
      dtype = src->output_types()[e->src_output];
    }
    const std::string tensor_name = sent;
    NodeDef* send = src_part.add_node();
    send->set_name(absl::StrCat("_send/", src->name(), "_", e->src_output, "/", id));
    send->set_op("_Send");
    send->set_device(src_device);
    send->add_input(sent);
    AddNodeAttr("T", dtype, send);
    SetSendRecvAttrs(send, tensor_name, src_device, incarnation(src_device), dst_device);

    NodeDef* recv = parts[dst_device].add_node();
    recv->set_name(absl::StrCat("_recv/", src->name(), "_", e->src_output, "/", id));
    recv->set_op("_Recv");
    recv->set_device(dst_device);
    AddNodeAttr("tensor_type", dtype, recv);
    SetSendRecvAttrs(recv, tensor_name, src_device, incarnation(src_device), dst_device);
    recvs[key] = recv->name();
    return recv->name();
  };

  for (const Node* node : graph.nodes()) {
    const std::string& device = node->assigned_device();
    if (device.empty()) {
      return absl::InternalError(absl::StrCat("node '", node->name(), "' was not placed"));
    }
    std::vector<std::string> data(node->num_inputs());
    std::vector<std::string> control;
    for (const Edge* e : node->in_edges()) {
      const bool local = e->src->assigned_device() == device;
      if (e->IsControl()) {
        control.push_back(absl::StrCat("^", local ? e->src->name() : cut(e, device)));
      } else {
        data[e->dst_input] = local ? TensorId{e->src->name(), e->src_output}.ToString()
                                   : cut(e, device);
      }
    }
    NodeDef* nd = parts[device].add_node();
    *nd = node->def();
    nd->set_device(device);
    nd->clear_input();
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (data[i].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", i, " of node '", node->name(), "' is not connected"));
      }
      nd->add_input(data[i]);
    }
    for (auto& c : control) nd->add_input(c);
  }
  for (auto& [device, def] : parts) {
    *def.mutable_library() = graph.library();
    *def.mutable_versions() = graph.versions();
  }
  return parts;
}

}  // namespace sluice
