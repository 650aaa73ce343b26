// The data-parallel rewrite as a GraphDef pass: what is copied per replica, what stays single
// on the update device, and where the averages come in.
#include "training/replicate.h"

#include "absl/container/flat_hash_map.h"
#include "framework/status_matchers.h"
#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kWorker0[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1/device:CPU:0";
constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";

// x [N,2] fed; w a weight; y = x w; loss = y * y; g = Identity(y) stands for the gradient of w;
// w_new = w - g * lr is the update. `count` is an int computed from the batch.
constexpr char kStep[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 8 } dim { size: 2 } } } } }
  node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } dim { size: 2 } } } } }
  node { name: "lr" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.1 } } } }
  node { name: "y" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "loss" op: "Mul" input: "y" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "g" op: "Identity" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "step" op: "Mul" input: "g" input: "lr" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "w_new" op: "Sub" input: "w" input: "step" input: "^loss"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "count" op: "Onnx>Cast" input: "x" attr { key: "T1" value { type: DT_FLOAT } }
         attr { key: "to" value { type: DT_INT32 } } }
)";

GraphDef Parse(const char* text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  return def;
}

absl::flat_hash_map<std::string, NodeDef> ByName(const GraphDef& def) {
  absl::flat_hash_map<std::string, NodeDef> nodes;
  for (const NodeDef& n : def.node()) nodes[n.name()] = n;
  return nodes;
}

ReplicaPlan TwoReplicas() {
  ReplicaPlan plan;
  plan.split_inputs = {"x"};
  plan.gradients = {"g"};
  plan.reported = {"loss:0"};
  plan.replica_devices = {kWorker0, kWorker1};
  plan.update_device = kPs;
  return plan;
}

TEST(ReplicateTest, CopiesTheBatchWorkPerReplicaAndKeepsTheUpdateSingle) {
  GraphDef def = Parse(kStep);
  std::function<std::string(const std::string&)> tensor_of;
  ASSERT_OK(Replicate(TwoReplicas(), &def, &tensor_of));
  auto nodes = ByName(def);

  // What depends on x short of the update runs once per replica, on that replica's device.
  for (const char* name : {"x", "y", "loss", "g"}) {
    EXPECT_FALSE(nodes.contains(name)) << name << " should have been replicated";
    for (int i = 0; i < 2; ++i) {
      const std::string copy = absl::StrCat("replica_", i, "/", name);
      ASSERT_TRUE(nodes.contains(copy)) << copy;
      EXPECT_EQ(nodes[copy].device(), i == 0 ? kWorker0 : kWorker1);
    }
  }
  EXPECT_THAT(nodes["replica_1/y"].input(), ElementsAre("replica_1/x", "w"));
  // A replica's placeholder takes a share of the batch: its first dimension is open.
  EXPECT_EQ(nodes["replica_0/x"].attr().at("shape").shape().dim(0).size(), -1);
  EXPECT_EQ(nodes["replica_0/x"].attr().at("shape").shape().dim(1).size(), 2);

  // The update is single, on the update device, and reads the replicas' mean of g.
  for (const char* name : {"w", "lr", "step", "w_new"}) {
    ASSERT_TRUE(nodes.contains(name)) << name;
    EXPECT_EQ(nodes[name].device(), kPs) << name;
  }
  EXPECT_THAT(nodes["step"].input(), ElementsAre("average/g_0", "lr"));
  EXPECT_EQ(nodes["average/g_0/sum"].op(), "AddN");
  EXPECT_THAT(nodes["average/g_0/sum"].input(), ElementsAre("replica_0/g", "replica_1/g"));
  SL_ASSERT_OK_AND_ASSIGN(
      Tensor scale, Tensor::FromProto(nodes["average/g_0/scale"].attr().at("value").tensor()));
  EXPECT_EQ(scale.flat<float>()[0], 0.5f);
  EXPECT_EQ(nodes["average/g_0"].op(), "Mul");
  // A control input on replicated work waits for every replica.
  EXPECT_THAT(nodes["w_new"].input(),
              ElementsAre("w", "step", "^replica_0/loss", "^replica_1/loss"));

  // Fetch names: the reported loss and the gradient have averages; single tensors are
  // themselves; replicated tensors nobody averaged have none.
  EXPECT_EQ(tensor_of("loss"), "average/loss_0");
  EXPECT_EQ(tensor_of("g:0"), "average/g_0");
  EXPECT_EQ(tensor_of("w_new"), "w_new");
  EXPECT_EQ(tensor_of("y"), "");
}

TEST(ReplicateTest, RefusesToAverageWhatIsNotFloatingPoint) {
  GraphDef def = Parse(kStep);
  ReplicaPlan plan = TwoReplicas();
  plan.reported = {"count"};
  std::function<std::string(const std::string&)> tensor_of;
  absl::Status s = Replicate(plan, &def, &tensor_of);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()), HasSubstr("reported output 'count'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("int32"));
}

TEST(ReplicateTest, WithoutSplitInputsNothingIsReplicated) {
  GraphDef def = Parse(kStep);
  ReplicaPlan plan = TwoReplicas();
  plan.split_inputs.clear();
  std::function<std::string(const std::string&)> tensor_of;
  ASSERT_OK(Replicate(plan, &def, &tensor_of));
  auto nodes = ByName(def);
  EXPECT_EQ(nodes.size(), 9u);
  for (const auto& [name, n] : nodes) EXPECT_EQ(n.device(), kPs) << name;
  EXPECT_EQ(tensor_of("loss"), "loss");
}

}  // namespace
}  // namespace sluice
