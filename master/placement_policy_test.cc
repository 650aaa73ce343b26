#include "master/placement_policy.h"

#include "absl/strings/str_cat.h"
#include "framework/hoisted_constants.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::vector<DeviceAttributes> Devices(std::vector<std::string> names) {
  std::vector<DeviceAttributes> out;
  for (auto& n : names) {
    DeviceAttributes d;
    d.set_name(n);
    d.set_device_type("CPU");
    out.push_back(d);
  }
  return out;
}

const std::vector<DeviceAttributes> kCluster = Devices({
    "/job:ps/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:1/device:CPU:1",
    "/job:worker/replica:0/task:1/device:CPU:0",
    "/job:worker/replica:0/task:0/device:CPU:1",
    "/job:worker/replica:0/task:0/device:CPU:0",
});

// x -> m0 -> m1 -> ... -> m7, each m_i = MatMul(prev, w_i) with w_i a [4,4] constant.
GraphDef Chain(int n) {
  GraphDef def;
  NodeDef* x = def.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    NodeDef* w = def.add_node();
    w->set_name(absl::StrCat("w", i));
    w->set_op("Const");
    (*w->mutable_attr())["dtype"].set_type(DT_FLOAT);
    TensorProto* t = (*w->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(DT_FLOAT);
    t->mutable_tensor_shape()->add_dim()->set_size(4);
    t->mutable_tensor_shape()->add_dim()->set_size(4);
    t->add_float_val(1);
    NodeDef* m = def.add_node();
    m->set_name(absl::StrCat("m", i));
    m->set_op("MatMul");
    m->add_input(prev);
    m->add_input(w->name());
    (*m->mutable_attr())["T"].set_type(DT_FLOAT);
    prev = m->name();
  }
  return def;
}

std::unique_ptr<Graph> Build(const GraphDef& def) {
  auto g = Graph::FromGraphDef(def, *OpRegistry::Global());
  EXPECT_OK(g);
  return std::move(*g);
}

std::string DeviceOf(const Graph& g, const std::string& node) { return g.FindNode(node)->def().device(); }

// An op node of float type T reading `inputs`.
NodeDef* AddOp(GraphDef* def, const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef* n = def->add_node();
  n->set_name(name);
  n->set_op(op);
  for (auto& i : inputs) n->add_input(i);
  (*n->mutable_attr())["T"].set_type(DT_FLOAT);
  return n;
}

// A float constant of shape `dims` holding one value (placement looks only at its shape).
void AddWeight(GraphDef* def, const std::string& name, std::vector<int64_t> dims) {
  NodeDef* w = def->add_node();
  w->set_name(name);
  w->set_op("Const");
  (*w->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorProto* t = (*w->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  for (int64_t d : dims) t->mutable_tensor_shape()->add_dim()->set_size(d);
  t->add_float_val(0);
}

// A float placeholder of shape `dims`.
void AddPlaceholder(GraphDef* def, const std::string& name, std::vector<int64_t> dims) {
  NodeDef* x = def->add_node();
  x->set_name(name);
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  for (int64_t d : dims) (*x->mutable_attr())["shape"].mutable_shape()->add_dim()->set_size(d);
}

TEST(PipelinePlacementTest, CutsIntoContiguousBalancedStagesOnWorkerDevices) {
  auto g = Build(Chain(8));
  PlacementOptions options;
  options.set_policy("pipeline");
  ASSERT_OK(ApplyPlacementOptions(options, kCluster, {{"x:0", PartialShape(TensorShape({1, 4}))}}, g.get()));
  const std::string stages[] = {"/job:worker/replica:0/task:0/device:CPU:0",
                                "/job:worker/replica:0/task:0/device:CPU:1",
                                "/job:worker/replica:0/task:1/device:CPU:0",
                                "/job:worker/replica:0/task:1/device:CPU:1"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(DeviceOf(*g, absl::StrCat("m", i)), stages[i / 2]) << i;
    EXPECT_EQ(DeviceOf(*g, absl::StrCat("w", i)), stages[i / 2]) << "weights follow their reader";
  }
  EXPECT_EQ(DeviceOf(*g, "x"), stages[0]);
}

TEST(PipelinePlacementTest, WhatConstantsAloneComputeFollowsItsReader) {
  // w3 reaches m3 through an Identity (as ONNX initializers may): both go with m3, so no
  // weight crosses between stages.
  GraphDef def = Chain(4);
  NodeDef* id = def.add_node();
  id->set_name("w3_read");
  id->set_op("Identity");
  id->add_input("w3");
  (*id->mutable_attr())["T"].set_type(DT_FLOAT);
  for (auto& n : *def.mutable_node()) {
    if (n.name() == "m3") n.set_input(1, "w3_read");
  }
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  auto devices = Devices({"/job:worker/replica:0/task:0/device:CPU:0",
                          "/job:worker/replica:0/task:1/device:CPU:0"});
  ASSERT_OK(ApplyPlacementOptions(options, devices, {{"x:0", PartialShape(TensorShape({1, 4}))}}, g.get()));
  EXPECT_EQ(DeviceOf(*g, "m3"), devices[1].name());
  EXPECT_EQ(DeviceOf(*g, "w3_read"), devices[1].name());
  EXPECT_EQ(DeviceOf(*g, "w3"), devices[1].name());
}

// Chain(4) plus m3_plus_w0 = m3 + w0 (with a control edge from w0 too), placed as a pipeline
// on two tasks: w0 is read on both stages, as torch's export shares initializers of equal
// values. `hoisted`: w0 is marked as hoisted out of the graph.
const std::vector<DeviceAttributes> kTwoTasks = Devices({"/job:worker/replica:0/task:0/device:CPU:0",
                                                         "/job:worker/replica:0/task:1/device:CPU:0"});
std::unique_ptr<Graph> SharedWeightOnTwoStages(bool hoisted) {
  GraphDef def = Chain(4);
  NodeDef* add = def.add_node();
  add->set_name("m3_plus_w0");
  add->set_op("Add");
  add->add_input("m3");
  add->add_input("w0");
  add->add_input("^w0");
  (*add->mutable_attr())["T"].set_type(DT_FLOAT);
  for (auto& n : *def.mutable_node()) {
    if (n.name() == "w0" && hoisted) (*n.mutable_attr())[kHoistedAttr].set_b(true);
  }
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  EXPECT_OK(ApplyPlacementOptions(options, kTwoTasks, {{"x:0", PartialShape(TensorShape({1, 4}))}}, g.get()));
  return g;
}

TEST(PipelinePlacementTest, AConstantReadByTwoStagesGetsACopyOnEach) {
  // w0 stays with m0 on the first stage, and m3_plus_w0 reads a copy on its own.
  auto g = SharedWeightOnTwoStages(false);
  const auto& devices = kTwoTasks;
  EXPECT_EQ(DeviceOf(*g, "w0"), devices[0].name());
  EXPECT_EQ(DeviceOf(*g, "m0"), devices[0].name());
  ASSERT_EQ(DeviceOf(*g, "m3_plus_w0"), devices[1].name());
  const Node* copy = g->FindNode("w0/stage_1");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->def().device(), devices[1].name());
  EXPECT_EQ(copy->type_string(), "Const");
  // Every edge from w0 or its copy stays on one device, the control edge included.
  int data = 0, control = 0;
  for (const Node* w : std::vector<const Node*>{g->FindNode("w0"), copy}) {
    for (const Edge* e : w->out_edges()) {
      EXPECT_EQ(e->dst->def().device(), w->def().device()) << e->dst->name();
      (e->IsControl() ? control : data) += 1;
    }
  }
  EXPECT_EQ(data, 2);
  EXPECT_EQ(control, 1);
  // w0 is small and stays in the graph: the copy names no hoisted original.
  EXPECT_FALSE(copy->def().attr().contains(kHoistedFromAttr));
  GraphDef out;
  g->ToGraphDef(&out);
  for (const NodeDef& n : out.node()) {
    if (n.name() == "m3_plus_w0") {
      EXPECT_THAT(n.input(), ::testing::ElementsAre("m3", "w0/stage_1", "^w0/stage_1"));
    }
  }
}

TEST(PipelinePlacementTest, ACopyOfAHoistedConstantNamesTheOriginal) {
  // Big constants are hoisted out of the graph before placement (framework/hoisted_constants.h):
  // a copy carries the marker, and the name of the Const whose table entry holds the value.
  auto g = SharedWeightOnTwoStages(true);
  const Node* copy = g->FindNode("w0/stage_1");
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(IsHoisted(copy->def()));
  EXPECT_EQ(copy->def().attr().at(kHoistedFromAttr).s(), "w0");
}

TEST(PipelinePlacementTest, BalancesEstimatedCostNotNodeCount) {
  // m0 reads a [4,64] weight and m1 a [64,4] one: each 64 times the work of the [4,4] MatMuls.
  GraphDef def = Chain(6);
  auto resize = [&](int node, int rows, int cols) {
    TensorProto* t = (*def.mutable_node(node)->mutable_attr())["value"].mutable_tensor();
    t->mutable_tensor_shape()->mutable_dim(0)->set_size(rows);
    t->mutable_tensor_shape()->mutable_dim(1)->set_size(cols);
  };
  resize(1, 4, 64);  // w0
  resize(3, 64, 4);  // w1
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  ASSERT_TRUE(ApplyPlacementOptions(options, Devices({"/job:worker/replica:0/task:0/device:CPU:0",
                                                      "/job:worker/replica:0/task:1/device:CPU:0"}),
                                    {{"x:0", PartialShape(TensorShape({1, 4}))}}, g.get()).ok());
  // m0 costs 64 outputs x 4 per output, m1 4 x 64, the rest 4 x 4 each: m0 alone is half.
  EXPECT_EQ(DeviceOf(*g, "m0"), "/job:worker/replica:0/task:0/device:CPU:0");
  for (const char* n : {"m1", "m2", "m3", "m4", "m5"}) {
    EXPECT_EQ(DeviceOf(*g, n), "/job:worker/replica:0/task:1/device:CPU:0") << n;
  }
}

TEST(PipelinePlacementTest, ConvolutionsCostTheirWorkNotTheirWeights) {
  // Two 3x3 convolutions of equal work: 64 -> 64 channels at 56x56, then 256 -> 256 at 14x14
  // (16 times the weights, a sixteenth of the positions), each followed by a cheap 1x1 one.
  // Each 3x3 gets its own stage; costed by weights, the second would share the first's.
  GraphDef def;
  AddPlaceholder(&def, "x", {1, 64, 56, 56});
  AddWeight(&def, "w1", {64, 64, 3, 3});
  AddWeight(&def, "w2", {256, 64, 1, 1});
  AddWeight(&def, "w3", {256, 256, 3, 3});
  AddWeight(&def, "w4", {256, 256, 1, 1});
  for (NodeDef* n : {AddOp(&def, "c1", "Onnx>Conv", {"x", "w1"}), AddOp(&def, "c2", "Onnx>Conv", {"c1", "w2"}),
                     AddOp(&def, "c3", "Onnx>Conv", {"c2", "w3"}), AddOp(&def, "c4", "Onnx>Conv", {"c3", "w4"})}) {
    (*n->mutable_attr())["Tb"].mutable_list();
    const bool three = n->name() == "c1" || n->name() == "c3";
    for (int i = 0; i < 4; ++i) (*n->mutable_attr())["pads"].mutable_list()->add_i(three ? 1 : 0);
  }
  // c2 shrinks 56x56 to 14x14 with stride 4 (and a 1x1 kernel).
  for (int i = 0; i < 2; ++i) (*def.mutable_node(6)->mutable_attr())["strides"].mutable_list()->add_i(4);
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  auto devices = Devices({"/job:worker/replica:0/task:0/device:CPU:0",
                          "/job:worker/replica:0/task:1/device:CPU:0"});
  ASSERT_OK(ApplyPlacementOptions(options, devices, {}, g.get()));
  EXPECT_EQ(DeviceOf(*g, "c1"), devices[0].name());
  EXPECT_EQ(DeviceOf(*g, "c3"), devices[1].name());
  EXPECT_EQ(DeviceOf(*g, "c4"), devices[1].name());
}

TEST(PipelinePlacementTest, CutsBetweenResidualBlocksWhereOneTensorCrosses) {
  // Two residual blocks h_k = MatMul(MatMul(h_{k-1}, a_k), b_k) + h_{k-1} of equal work. Equal
  // work alone puts the cut just before h1's Add, where both b1's product and h0 (for the Add)
  // would cross; the cut goes after the Add instead, where only h1 does, for the cost of one
  // cheap Add more on the first stage.
  GraphDef def;
  AddPlaceholder(&def, "x", {64, 512});
  // Two cheap Relus first tip equal work to just before h1's Add.
  AddOp(&def, "r", "Relu", {"x"});
  AddOp(&def, "h0", "Relu", {"r"});
  for (int k = 1; k <= 2; ++k) {
    const std::string h = absl::StrCat("h", k - 1), a = absl::StrCat("a", k), b = absl::StrCat("b", k);
    AddWeight(&def, a + "_w", {512, 512});
    AddWeight(&def, b + "_w", {512, 512});
    AddOp(&def, a, "MatMul", {h, a + "_w"});
    AddOp(&def, b, "MatMul", {a, b + "_w"});
    AddOp(&def, absl::StrCat("h", k), "Add", {b, h});
  }
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  ASSERT_OK(ApplyPlacementOptions(options, kTwoTasks, {}, g.get()));
  for (const char* n : {"r", "h0", "a1", "b1", "h1"}) EXPECT_EQ(DeviceOf(*g, n), kTwoTasks[0].name()) << n;
  for (const char* n : {"a2", "b2", "h2"}) EXPECT_EQ(DeviceOf(*g, n), kTwoTasks[1].name()) << n;
  int crossing = 0;
  for (const Node* n : g->nodes()) {
    for (const Edge* e : n->out_edges()) {
      if (!e->IsControl() && e->src->def().device() != e->dst->def().device()) ++crossing;
    }
  }
  EXPECT_EQ(crossing, 2) << "h1, read by a2 and h2";
}

TEST(PipelinePlacementTest, ShapesTooLargeToCostStillGetAStageEach) {
  // A client's graph may claim any shape: 17 dims of 2^62 elements overflow the cost model's
  // doubles to infinity (and infinity minus infinity to NaN). Every node still gets one of the
  // stages, in order, and nothing is left unplaced.
  GraphDef def;
  AddPlaceholder(&def, "x", std::vector<int64_t>(17, int64_t{1} << 62));
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    AddOp(&def, absl::StrCat("m", i), "Relu", {prev});
    prev = absl::StrCat("m", i);
  }
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  ASSERT_OK(ApplyPlacementOptions(options, kTwoTasks, {}, g.get()));
  int last_stage = 0;
  for (int i = 0; i < 6; ++i) {
    const std::string device = DeviceOf(*g, absl::StrCat("m", i));
    const int stage = device == kTwoTasks[0].name() ? 0 : device == kTwoTasks[1].name() ? 1 : -1;
    ASSERT_GE(stage, 0) << "m" << i << " on '" << device << "'";
    EXPECT_GE(stage, last_stage) << "stages stay contiguous";
    last_stage = stage;
  }
}

TEST(PipelinePlacementTest, ExplicitDevicesAndTheDeviceMapWin) {
  GraphDef def = Chain(4);
  def.mutable_node(2)->set_device("/job:ps/task:0");  // m0
  auto g = Build(def);
  PlacementOptions options;
  options.set_policy("pipeline");
  auto rules = ParseDeviceMap(R"(
    # the last layer's weights stay on the parameter server
    w3    /job:ps/task:0
    m[23] /job:worker/task:1   # a partial device
    m*    /job:worker/task:0   # never reached for m2, m3
  )");
  ASSERT_OK(rules);
  ASSERT_EQ(rules->size(), 3u);
  for (auto& r : *rules) *options.add_device_map() = r;
  ASSERT_OK(ApplyPlacementOptions(options, kCluster, {}, g.get()));
  EXPECT_EQ(DeviceOf(*g, "m0"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(*g, "m1"), "/job:worker/task:0");
  EXPECT_EQ(DeviceOf(*g, "m2"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf(*g, "m3"), "/job:worker/task:1");
  EXPECT_EQ(DeviceOf(*g, "w3"), "/job:ps/task:0");
  EXPECT_EQ(DeviceOf(*g, "x"), "/job:worker/replica:0/task:0/device:CPU:0");  // The pipeline's first stage.
}

TEST(PipelinePlacementTest, WithoutAWorkerJobEveryDeviceIsAStage) {
  auto g = Build(Chain(2));
  PlacementOptions options;
  options.set_policy("pipeline");
  auto devices = Devices({"/job:localhost/replica:0/task:0/device:CPU:0",
                          "/job:localhost/replica:0/task:0/device:CPU:1"});
  ASSERT_OK(ApplyPlacementOptions(options, devices, {}, g.get()));
  EXPECT_EQ(DeviceOf(*g, "m0"), devices[0].name());
  EXPECT_EQ(DeviceOf(*g, "m1"), devices[1].name());
}

TEST(PlacementOptionsTest, Errors) {
  auto g = Build(Chain(1));
  PlacementOptions options;
  options.set_policy("round-robin");
  absl::Status s = ApplyPlacementOptions(options, kCluster, {}, g.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown placement policy 'round-robin'"));

  auto rules = ParseDeviceMap("a /job:worker\nb\n");
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("line 2"));
  rules = ParseDeviceMap("a /job:worker\n\nb /nonsense:3\n");
  ASSERT_FALSE(rules.ok());
  EXPECT_THAT(std::string(rules.status().message()), HasSubstr("line 3"));
}

}  // namespace
}  // namespace sluice
