#include "tools/partition_view.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/config.pb.h"

namespace sluice {
namespace {

constexpr char kD0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kD1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kClient[] = "/job:localhost/replica:0/task:0/device:CPU:0";  // As the master names it.

NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op, const std::string& device,
             std::vector<std::string> inputs = {}) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  n->set_device(device);
  for (const std::string& in : inputs) n->add_input(in);
  return n;
}

// The attrs that pair a _Send with its _Recv.
void Transfer(NodeDef* n, const std::string& tensor, const std::string& from, const std::string& to,
              bool client) {
  (*n->mutable_attr())["tensor_name"].set_s(tensor);
  (*n->mutable_attr())["send_device"].set_s(from);
  (*n->mutable_attr())["recv_device"].set_s(to);
  (*n->mutable_attr())["client_terminated"].set_b(client);
}

// What the master returns in RunMetadata.partition_graphs for x -> relu (on CPU:1) -> neg, x
// fed and neg fetched: one GraphDef for the task, holding the nodes of both devices.
RunMetadata ChainMetadata() {
  RunMetadata metadata;
  GraphDef* task = metadata.add_partition_graphs();
  Transfer(Add(task, "_feed/x_0", "_Recv", kD0), "x:0", kClient, kD0, true);
  Transfer(Add(task, "_send/_feed/x_0_0/0", "_Send", kD0, {"_feed/x_0"}), "_feed/x_0", kD0, kD1, false);
  Transfer(Add(task, "_recv/relu_0/1", "_Recv", kD0), "relu", kD1, kD0, false);
  Add(task, "neg", "Neg", kD0, {"_recv/relu_0/1", "^_feed/x_0"});
  Transfer(Add(task, "_fetch/neg_0", "_Send", kD0, {"neg"}), "neg:0", kD0, kClient, true);
  Transfer(Add(task, "_recv/_feed/x_0_0/0", "_Recv", kD1), "_feed/x_0", kD0, kD1, false);
  Add(task, "relu", "Relu", kD1, {"_recv/_feed/x_0_0/0"});
  Transfer(Add(task, "_send/relu_0/1", "_Send", kD1, {"relu"}), "relu", kD1, kD0, false);
  return metadata;
}

TEST(PartitionViewTest, GroupsTheNodesByDevice) {
  RunMetadata metadata = ChainMetadata();
  // A second task's partition joins the first's map.
  Add(metadata.add_partition_graphs(), "w", "Const", "/job:ps/replica:0/task:0/device:CPU:0");
  const auto parts = PartitionsByDevice(metadata.partition_graphs());
  ASSERT_EQ(parts.size(), 3u);
  ASSERT_TRUE(parts.count(kD0) && parts.count(kD1));
  EXPECT_EQ(parts.at(kD0).node_size(), 5);
  EXPECT_EQ(parts.at(kD0).node(3).name(), "neg");  // In the order the master wrote them.
  EXPECT_EQ(parts.at(kD1).node_size(), 3);
  const std::vector<PartitionCounts> counts = CountPartitions(parts);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].device, "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(counts[0].nodes, 5);
  EXPECT_EQ(counts[0].sends, 2);  // To CPU:1 and to the client.
  EXPECT_EQ(counts[0].recvs, 2);  // From the client and from CPU:1.
  EXPECT_EQ(counts[1].device, kD1);
  EXPECT_EQ(counts[1].nodes, 3);
  EXPECT_EQ(counts[1].sends, 1);
  EXPECT_EQ(counts[1].recvs, 1);
  EXPECT_EQ(counts[2].device, "/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(counts[2].nodes, 1);
  EXPECT_EQ(counts[2].sends + counts[2].recvs, 0);
}

TEST(PartitionViewTest, DotHasAClusterPerDeviceAndDashedTransfers) {
  const std::string dot = PartitionsToDot(PartitionsByDevice(ChainMetadata().partition_graphs()));
  EXPECT_TRUE(absl::StartsWith(dot, "digraph partitions {")) << dot;
  EXPECT_TRUE(absl::EndsWith(dot, "}\n")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, absl::StrCat("subgraph cluster_0 {\n    label=\"", kD0, "\"")))
      << dot;
  EXPECT_TRUE(absl::StrContains(dot, absl::StrCat("subgraph cluster_1 {\n    label=\"", kD1, "\"")))
      << dot;
  EXPECT_FALSE(absl::StrContains(dot, "cluster_2")) << dot;
  // Nodes n0..n4 on CPU:0, n5..n7 on CPU:1, in the partitions' order.
  EXPECT_TRUE(absl::StrContains(dot, "    n6 [label=\"relu\\nRelu\"];")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "    n0 [label=\"_feed/x_0\\n_Recv\", fillcolor=\"#ffe2b8\"];"))
      << dot;
  // Each _Send to the _Recv with its tensor and devices, both ways.
  const std::string transfer = " [style=dashed, color=\"#c05000\", fontcolor=\"#c05000\", label=";
  EXPECT_TRUE(absl::StrContains(dot, absl::StrCat("  n7 -> n2", transfer, "\"relu\"];"))) << dot;
  EXPECT_TRUE(absl::StrContains(dot, absl::StrCat("  n1 -> n5", transfer, "\"_feed/x_0\"];"))) << dot;
  // Data, control and the client.
  EXPECT_TRUE(absl::StrContains(dot, "  n2 -> n3;\n")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "  n0 -> n3 [style=dotted];\n")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "client_feeds -> n0 [style=dashed, label=\"x:0\"]")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "  n4 -> client_fetches [style=dashed, label=\"neg:0\"]")) << dot;
}

TEST(PartitionViewTest, OnlyTheMatchingRecvIsJoined) {
  GraphDef g;
  Transfer(Add(&g, "send", "_Send", kD0, {"a"}), "a", kD0, kD1, false);
  Add(&g, "a", "Const", kD0);
  // Same tensor, but bound for another device: not this _Send's.
  Transfer(Add(&g, "other", "_Recv", kD1), "a", kD0, "/job:localhost/replica:0/task:0/device:CPU:2",
           false);
  RunMetadata metadata;
  *metadata.add_partition_graphs() = g;
  const std::string dot = PartitionsToDot(PartitionsByDevice(metadata.partition_graphs()));
  EXPECT_FALSE(absl::StrContains(dot, "style=dashed")) << dot;
  EXPECT_FALSE(absl::StrContains(dot, "client")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "  n1 -> n0;\n")) << dot;  // a -> send.
}

TEST(PartitionViewTest, QuotesNamesForGraphviz) {
  GraphDef g;
  Add(&g, "a\"b\\c", "Const", kD0);
  RunMetadata metadata;
  *metadata.add_partition_graphs() = g;
  const std::string dot = PartitionsToDot(PartitionsByDevice(metadata.partition_graphs()));
  EXPECT_TRUE(absl::StrContains(dot, "label=\"a\\\"b\\\\c\\nConst\"")) << dot;
}

}  // namespace
}  // namespace sluice
