#include "tools/partition_view.h"

#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"

namespace sluice {
namespace {

std::string AttrString(const NodeDef& n, const char* name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? "" : it->second.s();
}

bool ClientTerminated(const NodeDef& n) {
  auto it = n.attr().find("client_terminated");
  return it != n.attr().end() && it->second.b();
}

// `s` inside a Graphviz double-quoted string.
std::string Escaped(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", Escaped(s), "\""); }

}  // namespace

std::map<std::string, GraphDef> PartitionsByDevice(
    const google::protobuf::RepeatedPtrField<GraphDef>& partition_graphs) {
  std::map<std::string, GraphDef> by_device;
  for (const GraphDef& graph : partition_graphs) {
    for (const NodeDef& n : graph.node()) *by_device[n.device()].add_node() = n;
  }
  return by_device;
}

std::vector<PartitionCounts> CountPartitions(const std::map<std::string, GraphDef>& partitions) {
  std::vector<PartitionCounts> counts;
  for (const auto& [device, graph] : partitions) {
    PartitionCounts c;
    c.device = device;
    c.nodes = graph.node_size();
    for (const NodeDef& n : graph.node()) {
      c.sends += n.op() == "_Send";
      c.recvs += n.op() == "_Recv";
    }
    counts.push_back(std::move(c));
  }
  return counts;
}

std::string PartitionsToDot(const std::map<std::string, GraphDef>& partitions) {
  std::string dot =
      "digraph partitions {\n"
      "  graph [fontname=\"Helvetica\", fontsize=11];\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", "
      "fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  // Graphviz ids "n<k>", in partition order; node names are unique across partitions.
  absl::flat_hash_map<std::string, std::string> id_of;
  bool has_client = false;
  int cluster = 0;
  for (const auto& [device, graph] : partitions) {
    absl::StrAppend(&dot, "  subgraph cluster_", cluster++, " {\n    label=", Quoted(device),
                    ";\n    style=\"rounded,filled\";\n    fillcolor=\"#eef3fb\";\n");
    for (const NodeDef& n : graph.node()) {
      const std::string id = absl::StrCat("n", id_of.size());
      id_of[n.name()] = id;
      const bool transfer = n.op() == "_Send" || n.op() == "_Recv";
      has_client = has_client || (transfer && ClientTerminated(n));
      absl::StrAppend(&dot, "    ", id, " [label=\"", Escaped(n.name()), "\\n", Escaped(n.op()), "\"",
                      transfer ? ", fillcolor=\"#ffe2b8\"" : "", "];\n");
    }
    dot += "  }\n";
  }
  // The client twice, where the eye looks for it: feeds above the graph, fetches below.
  if (has_client) {
    dot += "  client_feeds [label=\"client\", shape=ellipse, fillcolor=\"#dddddd\"];\n";
    dot += "  client_fetches [label=\"client\", shape=ellipse, fillcolor=\"#dddddd\"];\n";
  }
  // _Recv ids by (send device, recv device, tensor name): what pairs it with its _Send.
  absl::flat_hash_map<std::tuple<std::string, std::string, std::string>, std::string> recv_of;
  for (const auto& [device, graph] : partitions) {
    for (const NodeDef& n : graph.node()) {
      if (n.op() != "_Recv") continue;
      const std::string tensor = AttrString(n, "tensor_name");
      if (ClientTerminated(n)) {
        absl::StrAppend(&dot, "  client_feeds -> ", id_of[n.name()], " [style=dashed, label=",
                        Quoted(tensor), "];\n");
        continue;
      }
      recv_of[{AttrString(n, "send_device"), AttrString(n, "recv_device"), tensor}] = id_of[n.name()];
    }
  }
  for (const auto& [device, graph] : partitions) {
    for (const NodeDef& n : graph.node()) {
      const std::string& id = id_of[n.name()];
      for (const std::string& input : n.input()) {
        auto tid = ParseTensorName(input);
        if (!tid.ok()) continue;
        auto src = id_of.find(tid->node);
        if (src == id_of.end()) continue;
        absl::StrAppend(&dot, "  ", src->second, " -> ", id);
        if (tid->index == kControlSlot) {
          dot += " [style=dotted]";
        } else if (tid->index > 0) {
          absl::StrAppend(&dot, " [label=\":", tid->index, "\"]");
        }
        dot += ";\n";
      }
      if (n.op() != "_Send") continue;
      const std::string tensor = AttrString(n, "tensor_name");
      if (ClientTerminated(n)) {
        absl::StrAppend(&dot, "  ", id, " -> client_fetches [style=dashed, label=", Quoted(tensor), "];\n");
        continue;
      }
      auto recv = recv_of.find({AttrString(n, "send_device"), AttrString(n, "recv_device"), tensor});
      if (recv == recv_of.end()) continue;
      absl::StrAppend(&dot, "  ", id, " -> ", recv->second,
                      " [style=dashed, color=\"#c05000\", fontcolor=\"#c05000\", label=",
                      Quoted(tensor), "];\n");
    }
  }
  dot += "}\n";
  return dot;
}

}  // namespace sluice
