// The data-parallel rewrite as a GraphDef pass: what is copied per replica, what stays single
// on the update device, and where the averages come in.
#include "training/replicate.h"

#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "framework/node_attr.h"
#include "master/session.h"
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

// Two gradients per replica (4 elements and 1: fewer elements than replicas), each read by an
// update: g1 = 2x, g2 = 3z, u1 = g1, u2 = g2, and loss = Sum(x).
constexpr char kTwoGradients[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "z" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
  node { name: "three" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
  node { name: "g1" op: "Mul" input: "x" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "g2" op: "Mul" input: "z" input: "three" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "u1" op: "Identity" input: "g1" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "u2" op: "Identity" input: "g2" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "loss" op: "AddN" input: "x" attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "N" value { i: 1 } } }
)";

// The rewritten graph run on three devices of one process: every replica's update reads the
// mean of the replicas' gradients, bitwise the same on each, whether the gradients share a
// bucket or not.
TEST(ReplicateAllReduceTest, EveryReplicaReadsTheSameMeanOfTheGradients) {
  for (int64_t bucket_bytes : {int64_t{4}, int64_t{1} << 20}) {
    AllReducePlan plan;
    plan.split_inputs = {"x", "z"};
    plan.gradients = {{"g2", 1}, {"g1:0", 4}};
    plan.reported = {"loss"};
    for (int d = 0; d < 3; ++d) plan.replica_devices.push_back(absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", d));
    plan.bucket_bytes = bucket_bytes;
    GraphDef def = Parse(kTwoGradients);
    std::function<std::string(const std::string&)> tensor_of;
    std::function<std::string(const std::string&, int)> replica_tensor;
    ASSERT_OK(ReplicateAllReduce(plan, &def, &tensor_of, &replica_tensor));
    EXPECT_EQ(tensor_of("loss"), "average/loss_0");
    EXPECT_EQ(tensor_of("u1"), "replica_0/u1");
    EXPECT_EQ(replica_tensor("x", 2), "replica_2/x");

    SessionOptions options;
    (*options.config.mutable_device_count())["CPU"] = 3;
    SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
    ASSERT_OK(session->Create(def));
    const float xs[3][4] = {{1, 2, 3, 4}, {0.1f, -5, 7, 1e-3f}, {100, 0, -1, 2.5f}};
    const float zs[3] = {1, 10, -4};
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (int r = 0; r < 3; ++r) {
      feeds.emplace_back(absl::StrCat("replica_", r, "/x"),
                         Tensor::FromVector<float>({xs[r][0], xs[r][1], xs[r][2], xs[r][3]}, TensorShape({2, 2})));
      feeds.emplace_back(absl::StrCat("replica_", r, "/z"), Tensor::FromVector<float>({zs[r]}, TensorShape({1})));
    }
    std::vector<std::string> fetches;
    for (int r = 0; r < 3; ++r) {
      fetches.push_back(absl::StrCat("replica_", r, "/u1"));
      fetches.push_back(absl::StrCat("replica_", r, "/u2"));
    }
    fetches.push_back(tensor_of("loss"));
    std::vector<Tensor> out;
    ASSERT_OK(session->Run(feeds, fetches, {}, &out));
    for (int r = 0; r < 3; ++r) {
      const Tensor& u1 = out[2 * r];
      ASSERT_EQ(u1.shape(), TensorShape({2, 2}));
      for (int k = 0; k < 4; ++k) {
        const float mean = (2 * xs[0][k] + 2 * xs[1][k] + 2 * xs[2][k]) / 3;
        EXPECT_NEAR(u1.flat<float>()[k], mean, 1e-5f * std::max(1.0f, std::abs(mean))) << "replica " << r;
        EXPECT_EQ(u1.flat<float>()[k], out[0].flat<float>()[k]) << "replica " << r << " differs from replica 0";
      }
      EXPECT_NEAR(out[2 * r + 1].flat<float>()[0], (3.0f + 30 - 12) / 3, 1e-5f);
      EXPECT_EQ(out[2 * r + 1].flat<float>()[0], out[1].flat<float>()[0]);
    }
    // The reported loss is the replicas' mean.
    EXPECT_NEAR(out[6].flat<float>()[0], (xs[0][0] + xs[1][0] + xs[2][0]) / 3, 1e-4f);
  }
}

// A gradient of 8 MB over three replicas: several chunks per replica (the ring pipelined).
TEST(ReplicateAllReduceTest, BigGradientsTakeSeveralRoundsOfChunks) {
  constexpr int64_t kElements = 2000000;
  AllReducePlan plan;
  plan.split_inputs = {"x", "z"};
  plan.gradients = {{"g1", kElements}, {"g2", 1}};
  for (int d = 0; d < 3; ++d) plan.replica_devices.push_back(absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", d));
  GraphDef def = Parse(kTwoGradients);
  std::function<std::string(const std::string&)> tensor_of;
  std::function<std::string(const std::string&, int)> replica_tensor;
  ASSERT_OK(ReplicateAllReduce(plan, &def, &tensor_of, &replica_tensor));
  int chunks = 0;
  for (const NodeDef& n : def.node()) chunks += absl::EndsWith(n.name(), "/mean") && absl::StartsWith(n.name(), "allreduce/");
  EXPECT_GT(chunks, 3 + 1);
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 3;
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  ASSERT_OK(session->Create(def));
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (int r = 0; r < 3; ++r) {
    std::vector<float> x(kElements);
    for (int64_t k = 0; k < kElements; ++k) x[k] = static_cast<float>((k * (r + 1)) % 1000) / 7;
    feeds.emplace_back(absl::StrCat("replica_", r, "/x"), Tensor::FromVector<float>(x, TensorShape({1000, 2000})));
    feeds.emplace_back(absl::StrCat("replica_", r, "/z"), Tensor::FromVector<float>({1.0f * r}, TensorShape({1})));
  }
  std::vector<Tensor> out;
  ASSERT_OK(session->Run(feeds, {"replica_0/u1", "replica_2/u1"}, {}, &out));
  ASSERT_EQ(out[0].NumElements(), kElements);
  int wrong = 0;
  for (int64_t k = 0; k < kElements; ++k) {
    float mean = 0;
    for (int r = 0; r < 3; ++r) mean += 2 * (static_cast<float>((k * (r + 1)) % 1000) / 7);
    mean /= 3;
    wrong += std::abs(out[0].flat<float>()[k] - mean) > 1e-4f * std::max(1.0f, std::abs(mean)) ||
             out[0].flat<float>()[k] != out[1].flat<float>()[k];
  }
  EXPECT_EQ(wrong, 0);
}

// Which gradients each bucket holds, from the rewritten graph: bucket k flattens replica 0's
// copy of each of its gradients into "allreduce/bucket_<k>/replica_0/flat_<t>".
std::vector<std::vector<std::string>> BucketsOf(const GraphDef& def) {
  std::vector<std::vector<std::string>> buckets;
  for (const NodeDef& n : def.node()) {
    int k = 0;
    if (!absl::StartsWith(n.name(), "allreduce/bucket_") || !absl::StrContains(n.name(), "/replica_0/flat_") ||
        n.op() != "Reshape") {
      continue;
    }
    const std::string tail = n.name().substr(std::string("allreduce/bucket_").size());
    if (!absl::SimpleAtoi(tail.substr(0, tail.find('/')), &k)) {
      ADD_FAILURE() << "no bucket number in " << n.name();
      continue;
    }
    if (static_cast<int>(buckets.size()) <= k) buckets.resize(k + 1);
    buckets[k].push_back(std::string(absl::StripPrefix(n.input(0), "replica_0/")));
  }
  return buckets;
}

// Buckets are laid out from the end of the backward pass: the gradients made last go into a
// bucket of about a sixteenth of the cap, the ones before into buckets twice as big each time,
// so that little is left to all-reduce when the backward pass ends; a small first bucket joins
// the next.
TEST(ReplicateAllReduceTest, BucketsTaperTowardsTheEndOfTheBackwardPass) {
  GraphDef def;
  NodeDef* x = def.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  AddNodeAttr("dtype", DT_FLOAT, x);
  AllReducePlan plan;
  plan.split_inputs = {"x"};
  constexpr int64_t kMiB = 1 << 20;
  for (int i = 0; i < 9; ++i) {
    NodeDef* g = def.add_node();
    g->set_name(absl::StrCat("g", i));
    g->set_op("Identity");
    g->add_input("x");
    AddNodeAttr("T", DT_FLOAT, g);
    plan.gradients.emplace_back(g->name(), kMiB / 4);  // 1 MiB of floats each, g0 made first.
  }
  plan.replica_devices = {kWorker0, kWorker1};
  plan.bucket_bytes = 8 * kMiB;
  const GraphDef original = def;
  std::function<std::string(const std::string&)> tensor_of;
  std::function<std::string(const std::string&, int)> replica_tensor;
  ASSERT_OK(ReplicateAllReduce(plan, &def, &tensor_of, &replica_tensor));
  // From the end: g8 alone (limit 0.5 MiB), g7 (1 MiB), g6 and g5 (2 MiB), g4..g1 (4 MiB),
  // and g0 alone, under half its 8 MiB limit, joins g1..g4.
  EXPECT_THAT(BucketsOf(def), ElementsAre(ElementsAre("g0", "g1", "g2", "g3", "g4"), ElementsAre("g5", "g6"),
                                          ElementsAre("g7"), ElementsAre("g8")));
  // A cap as large as an int64 holds: one bucket of everything.
  def = original;
  plan.bucket_bytes = std::numeric_limits<int64_t>::max();
  ASSERT_OK(ReplicateAllReduce(plan, &def, &tensor_of, &replica_tensor));
  EXPECT_THAT(BucketsOf(def), ElementsAre(ElementsAre("g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8")));
}

TEST(ReplicateAllReduceTest, RefusesOneReplicaAndIntegerGradients) {
  AllReducePlan plan;
  plan.gradients = {{"count", 16}};
  plan.replica_devices = {kWorker0};
  GraphDef def = Parse(kStep);
  std::function<std::string(const std::string&)> tensor_of;
  std::function<std::string(const std::string&, int)> replica_tensor;
  EXPECT_EQ(ReplicateAllReduce(plan, &def, &tensor_of, &replica_tensor).code(), absl::StatusCode::kInvalidArgument);
  plan.replica_devices = {kWorker0, kWorker1};
  absl::Status s = ReplicateAllReduce(plan, &def, &tensor_of, &replica_tensor);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()), HasSubstr("only float and double"));
}

}  // namespace
}  // namespace sluice
