#include "master/partition.h"

#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "master/placer.h"
#include "google/protobuf/text_format.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

constexpr char kD0[] = "/job:w/replica:0/task:0/device:CPU:0";
constexpr char kD1[] = "/job:w/replica:0/task:1/device:CPU:0";

TEST(PartitionTest, OneSendRecvPairPerTensorAndDestination) {
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "a" op: "Const" device: "/job:w/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: "b" op: "Relu" input: "a" device: "/job:w/task:1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "Add" input: "a" input: "a" device: "/job:w/task:1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "d" op: "NoOp" input: "^b" device: "/job:w/task:0" }
  )", &def));
  auto g = Graph::FromGraphDef(def, *OpRegistry::Global());
  ASSERT_OK(g);
  std::vector<DeviceAttributes> devices(2);
  devices[0].set_name(kD0);
  devices[0].set_device_type("CPU");
  devices[0].set_incarnation(11);
  devices[1].set_name(kD1);
  devices[1].set_device_type("CPU");
  devices[1].set_incarnation(22);
  ASSERT_OK(PlaceGraph(g->get(), devices, kD0));
  auto parts = PartitionByDevice(**g, [](const std::string& d) { return d == kD0 ? 11u : 22u; });
  ASSERT_OK(parts);
  ASSERT_EQ(parts->size(), 2u);

  int sends_a = 0, recvs_a = 0, ctrl_recvs = 0;
  for (const auto& [device, part] : *parts) {
    for (const NodeDef& n : part.node()) {
      EXPECT_EQ(n.device(), device);
      if (n.op() == "_Send" && n.attr().at("tensor_name").s() == "a") {
        ++sends_a;
        EXPECT_EQ(device, kD0);
        EXPECT_EQ(n.attr().at("send_device_incarnation").i(), 11);
        EXPECT_EQ(n.attr().at("recv_device").s(), kD1);
      }
      if (n.op() == "_Recv" && n.attr().at("tensor_name").s() == "a") ++recvs_a;
      if (n.op() == "_Recv" && device == kD0) ++ctrl_recvs;
      if (n.name() == "c") {
        // Both inputs of c read the one _Recv of a.
        EXPECT_EQ(n.input(0), n.input(1));
      }
      if (n.name() == "d") {
        ASSERT_EQ(n.input_size(), 1);
        EXPECT_EQ(n.input(0)[0], '^');
        EXPECT_NE(n.input(0), "^b");  // Replaced by the _Recv carrying the control edge.
      }
    }
  }
  EXPECT_EQ(sends_a, 1);
  EXPECT_EQ(recvs_a, 1);
  EXPECT_EQ(ctrl_recvs, 1);
}

}  // namespace
}  // namespace sluice
