#include "master/session.h"

#include <limits>

#include "absl/time/clock.h"
#include "framework/node_attr.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "master/test_graphs.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  return def;
}

// y = relu(x * w + b) with x: [?,2] fed, w: [2,2], b: [2].
constexpr char kMlp[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
  node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
                float_val: 1 float_val: -1 float_val: 2 float_val: 1 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                float_val: 0.5 float_val: -10 } } } }
  node { name: "xw" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "xwb" op: "Add" input: "xw" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Relu" input: "xwb" attr { key: "T" value { type: DT_FLOAT } } }
)";

Tensor Matrix(std::initializer_list<int64_t> shape, std::vector<float> v) {
  return Tensor::FromVector<float>(v, TensorShape(shape));
}

std::unique_ptr<Session> MakeSession(int cpus = 1) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = cpus;
  auto s = NewSession(options);
  EXPECT_OK(s);
  return std::move(*s);
}

TEST(EmbeddedSessionTest, RunsRepeatedlyWithDifferentFeeds) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(Parse(kMlp)));
  // x = [1, 2]: xw = [1*1 + 2*2, 1*-1 + 2*1] = [5, 1]; + b = [5.5, -9]; relu = [5.5, 0].
  // x = [3, -1]: xw = [1, -4]; + b = [1.5, -14]; relu = [1.5, 0].
  // x = [0, 10]: xw = [20, 10]; + b = [20.5, 0]; relu = [20.5, 0].
  const std::vector<std::pair<std::vector<float>, std::vector<float>>> cases = {
      {{1, 2}, {5.5f, 0}}, {{3, -1}, {1.5f, 0}}, {{0, 10}, {20.5f, 0}}};
  for (const auto& [x, want] : cases) {
    std::vector<Tensor> out;
    absl::Status s = session->Run({{"x", Matrix({1, 2}, x)}}, {"y:0"}, {}, &out);
    ASSERT_OK(s);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), TensorShape({1, 2}));
    EXPECT_FLOAT_EQ(out[0].flat<float>()[0], want[0]);
    EXPECT_FLOAT_EQ(out[0].flat<float>()[1], want[1]);
  }
}

TEST(EmbeddedSessionTest, FetchesOfFedTensorsAndIntermediatesAndTargets) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(Parse(kMlp)));
  std::vector<Tensor> out;
  // Feeding an intermediate tensor cuts the graph there: x need not be fed.
  ASSERT_OK(session->Run({{"xw:0", Matrix({1, 2}, {1, 20})}}, {"y", "xw:0", "xwb"}, {}, &out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 1.5f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 10.0f);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[1], 20.0f);  // The fed value itself.
  EXPECT_FLOAT_EQ(out[2].flat<float>()[1], 10.0f);
  // A target runs for its effect; nothing is returned.
  ASSERT_OK(session->Run({{"x", Matrix({1, 2}, {1, 1})}}, {}, {"y"}, &out));
  EXPECT_TRUE(out.empty());
}

TEST(EmbeddedSessionTest, BadFeedsAndFetchesAreClearErrors) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(Parse(kMlp)));
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 2}))}},
                                {"y"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("feed for tensor 'x:0' has dtype int32"));

  s = session->Run({{"x", Matrix({1, 3}, {1, 2, 3})}}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("does not match the shape [?,2] of placeholder 'x'"));

  s = session->Run({}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("You must feed a value for placeholder tensor 'x'"));

  s = session->Run({{"ghost", Matrix({1}, {1})}}, {"y"}, {}, &out);
  EXPECT_THAT(s.message(), HasSubstr("names node 'ghost', which is not in the graph"));
  s = session->Run({{"x", Matrix({1, 2}, {1, 2})}}, {"y:3"}, {}, &out);
  EXPECT_THAT(s.message(), HasSubstr("node 'y' has 1 outputs"));
  s = session->Run({{"x", Matrix({1, 2}, {1, 2})}}, {"nothing"}, {}, &out);
  EXPECT_THAT(s.message(), HasSubstr("not in the graph"));
  // The session still works after errors.
  ASSERT_OK(session->Run({{"x", Matrix({1, 2}, {1, 2})}}, {"y"}, {}, &out));
}

TEST(EmbeddedSessionTest, KernelErrorsNameTheNode) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(Parse(R"(
    node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "d" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "q" op: "Add" input: "n" input: "d" attr { key: "T" value { type: DT_INT32 } } }
  )")).ok());
  std::vector<Tensor> out;
  const std::vector<int32_t> two = {1, 2}, three = {1, 2, 3};
  absl::Status s = session->Run({{"n", Tensor::FromVector<int32_t>(two, TensorShape({2}))},
                                 {"d", Tensor::FromVector<int32_t>(three, TensorShape({3}))}},
                                {"q"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'q' (op 'Add')"));
}

TEST(EmbeddedSessionTest, InvalidGraphIsRejectedAtCreate) {
  auto session = MakeSession();
  absl::Status s = session->Create(Parse(R"(node { name: "z" op: "Frobnicate" })"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("node 'z'"));
}

// The MLP split across two CPU devices of one worker: MatMul on CPU:0, Add and Relu on CPU:1.
// The product crosses devices through a _Send/_Recv pair.
TEST(EmbeddedSessionTest, GraphSplitAcrossTwoDevicesCarriesTheTensor) {
  auto session = MakeSession(/*cpus=*/2);
  std::vector<DeviceAttributes> devices;
  ASSERT_OK(session->ListDevices(&devices));
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].name(), "/job:localhost/replica:0/task:0/device:CPU:1");

  GraphDef def = Parse(kMlp);
  for (auto& n : *def.mutable_node()) {
    if (n.name() == "xwb" || n.name() == "y" || n.name() == "b") n.set_device("/device:CPU:1");
    if (n.name() == "xw") n.set_device("/job:localhost/device:CPU:0");
  }
  ASSERT_OK(session->Create(def));
  RunOptions options;
  options.set_output_partition_graphs(true);
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status s = session->Run(options, {{"x", Matrix({1, 2}, {1, 2})}}, {"y"}, {}, &out, &metadata);
  ASSERT_OK(s);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 0.0f);

  // One task, so one registered graph holding both devices' partitions.
  ASSERT_EQ(metadata.partition_graphs_size(), 1);
  int sends = 0, recvs = 0;
  for (const NodeDef& n : metadata.partition_graphs(0).node()) {
    auto tensor_name = n.attr().find("tensor_name");
    if (tensor_name == n.attr().end() || tensor_name->second.s() != "xw") continue;
    if (n.op() == "_Send") {
      ++sends;
      EXPECT_EQ(n.device(), "/job:localhost/replica:0/task:0/device:CPU:0");
      EXPECT_EQ(n.input(0), "xw");
    }
    if (n.op() == "_Recv") {
      ++recvs;
      EXPECT_EQ(n.device(), "/job:localhost/replica:0/task:0/device:CPU:1");
    }
  }
  EXPECT_EQ(sends, 1);
  EXPECT_EQ(recvs, 1);
  // The trace shows the _Recv ran on CPU:1 and the pair's Add consumed it there.
  bool recv_on_1 = false, add_on_1 = false;
  for (const auto& dev : metadata.step_stats().dev_stats()) {
    for (const auto& ns : dev.node_stats()) {
      if (dev.device() != "/job:localhost/replica:0/task:0/device:CPU:1") continue;
      if (ns.timeline_label() == "_Recv" && ns.node_name().find("xw") != std::string::npos) recv_on_1 = true;
      if (ns.node_name() == "xwb") add_on_1 = true;
    }
  }
  EXPECT_TRUE(recv_on_1);
  EXPECT_TRUE(add_on_1);
}

TEST(EmbeddedSessionTest, ControlEdgeAcrossDevices) {
  auto session = MakeSession(2);
  ASSERT_TRUE(session->Create(Parse(R"(
    node { name: "first" op: "NoOp" device: "/device:CPU:0" }
    node { name: "c" op: "Const" input: "^first" device: "/device:CPU:1"
           attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 7 } } } }
  )")).ok());
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_OK(session->Run(options, {}, {"c"}, {}, &out, &metadata));
  EXPECT_EQ(out[0].scalar<int64_t>(), 7);
  bool first_ran = false;
  for (const auto& dev : metadata.step_stats().dev_stats()) {
    for (const auto& ns : dev.node_stats()) first_ran |= ns.node_name() == "first";
  }
  EXPECT_TRUE(first_ran);
}

TEST(EmbeddedSessionTest, UnsatisfiableDeviceIsAnError) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(Parse(R"(
    node { name: "c" op: "NoOp" device: "/device:CPU:7" })")).ok());
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {}, {"c"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'c'"));
  EXPECT_THAT(s.message(), HasSubstr("/device:CPU:7"));
}

TEST(EmbeddedSessionTest, ExtendAddsNodesAndClosedSessionRefuses) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(Parse(kMlp)));
  ASSERT_TRUE(session->Extend(Parse(R"(
    node { name: "y2" op: "Mul" input: "y" input: "y" attr { key: "T" value { type: DT_FLOAT } } })")).ok());
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Matrix({1, 2}, {1, 2})}}, {"y2"}, {}, &out));
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 30.25f);
  EXPECT_THAT(session->Extend(Parse(R"(node { name: "y2" op: "NoOp" })")).message(),
              HasSubstr("duplicate node name 'y2'"));
  ASSERT_OK(session->Close());
  EXPECT_EQ(session->Run({}, {"y"}, {}, &out).code(), absl::StatusCode::kFailedPrecondition);
}

// A Run's plan is kept per request shape (the names exactly as given, in order): the same
// tensors spelled otherwise, in another order, with other feeds or repeated each get their
// own answer; values are checked on every Run; a name unknown before Extend works after it.
TEST(EmbeddedSessionTest, EachRequestShapeGetsItsOwnAnswer) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(Parse(kMlp)));
  std::vector<Tensor> out;
  const Tensor x = Matrix({1, 2}, {1, 2});     // xw = [5, 1], y = [5.5, 0].
  const Tensor xw = Matrix({1, 2}, {1, 20});  // Fed instead: y = [1.5, 10].
  ASSERT_OK(session->Run({{"x", x}}, {"y"}, {}, &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
  ASSERT_OK(session->Run({{"x:0", x}}, {"xw:0", "y:0"}, {}, &out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.0f);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[0], 5.5f);
  ASSERT_OK(session->Run({{"x:0", x}}, {"y:0", "xw:0"}, {}, &out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[0], 5.0f);
  ASSERT_OK(session->Run({{"x", x}}, {"y", "x", "y"}, {}, &out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[1], 2.0f);  // The fed value itself.
  EXPECT_FLOAT_EQ(out[2].flat<float>()[0], 5.5f);
  ASSERT_OK(session->Run({{"xw", xw}}, {"y"}, {}, &out));
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 10.0f);
  ASSERT_OK(session->Run({{"x", x}}, {"y"}, {}, &out));
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
  // x is pruned away when xw is fed too: its value is accepted and ignored, first or second.
  for (const auto& feeds : std::vector<std::vector<std::pair<std::string, Tensor>>>{
           {{"x", x}, {"xw", xw}}, {{"xw", xw}, {"x", x}}}) {
    ASSERT_OK(session->Run(feeds, {"xwb", "x"}, {}, &out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 1.5f);
    EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 10.0f);
    EXPECT_FLOAT_EQ(out[1].flat<float>()[0], 1.0f);
  }

  // A known shape still checks its values.
  absl::Status s = session->Run({{"x", Matrix({1, 3}, {1, 2, 3})}}, {"y"}, {}, &out);
  EXPECT_THAT(s.message(), HasSubstr("does not match the shape [?,2] of placeholder 'x'"));
  s = session->Run({{"x", Tensor()}}, {"y"}, {}, &out);
  EXPECT_THAT(s.message(), HasSubstr("feed 'x' has no value"));
  for (int i = 0; i < 2; ++i) {
    s = session->Run({{"x", x}, {"x:0", x}}, {"y"}, {}, &out);
    EXPECT_THAT(s.message(), HasSubstr("tensor 'x:0' is fed more than once"));
  }

  // Unknown before Extend, known after; the shapes run before still run.
  s = session->Run({{"x", x}}, {"y2"}, {}, &out);
  EXPECT_THAT(s.message(), HasSubstr("not in the graph"));
  ASSERT_OK(session->Extend(Parse(R"(
    node { name: "y2" op: "Mul" input: "y" input: "y" attr { key: "T" value { type: DT_FLOAT } } })")));
  ASSERT_OK(session->Run({{"x", x}}, {"y2"}, {}, &out));
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 30.25f);
  ASSERT_OK(session->Run({{"x", x}}, {"y"}, {}, &out));
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5.5f);
}

// What one step used is not kept for the next: each traced step reports its own nodes only,
// an untraced one none, and the session holds on to neither feeds nor fetched values.
TEST(EmbeddedSessionTest, RepeatedStepsKeepNothingOfEachOther) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(Parse(kMlp)));
  auto node_stats = [](const RunMetadata& m) {
    int n = 0;
    for (const auto& dev : m.step_stats().dev_stats()) n += dev.node_stats_size();
    return n;
  };
  RunOptions traced;
  traced.set_trace_level(RunOptions::FULL_TRACE);
  std::vector<Tensor> out;
  RunMetadata first, second, untraced;
  ASSERT_OK(session->Run(traced, {{"x", Matrix({1, 2}, {1, 2})}}, {"y"}, {}, &out, &first));
  ASSERT_OK(session->Run(traced, {{"x", Matrix({1, 2}, {1, 2})}}, {"y"}, {}, &out, &second));
  ASSERT_OK(session->Run(RunOptions(), {{"x", Matrix({1, 2}, {1, 2})}}, {"y"}, {}, &out, &untraced));
  EXPECT_GT(node_stats(first), 0);
  EXPECT_EQ(node_stats(second), node_stats(first));
  EXPECT_EQ(untraced.step_stats().dev_stats_size(), 0);

  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Matrix({1, 2}, {1, 2})}};
  ASSERT_OK(session->Run(feeds, {"y"}, {}, &out));
  EXPECT_TRUE(feeds[0].second.RefCountIsOne());
  EXPECT_TRUE(out[0].RefCountIsOne());
}

TEST(EmbeddedSessionTest, ControlEdgesFromAFedNodeWaitForTheFeed) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(Parse(R"(
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "c" op: "Const" input: "^p" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }
  )")).ok());
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"p", Tensor::Scalar<float>(1)}}, {"c"}, {}, &out);
  ASSERT_OK(s);
  EXPECT_EQ(out[0].scalar<float>(), 3.0f);
}

TEST(NewSessionTest, UnknownTargets) {
  SessionOptions options;
  options.target = "carrier-pigeon://home";
  EXPECT_EQ(NewSession(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// v = p (init); each step reads v and assigns v + 1 (inc).
constexpr char kCounter[] = R"(
  node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "init" op: "AssignVariable" input: "p" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shared_name" value { s: "v" } } }
  node { name: "read" op: "ReadVariable" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shared_name" value { s: "v" } } }
  node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
  node { name: "next" op: "Add" input: "read" input: "one" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "inc" op: "AssignVariable" input: "next" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shared_name" value { s: "v" } } }
  node { name: "destroy" op: "DestroyVariable" attr { key: "shared_name" value { s: "v" } } }
)";

TEST(EmbeddedSessionTest, VariablesKeepTheirValuesAcrossRuns) {
  auto session = MakeSession(2);
  ASSERT_OK(session->Create(Parse(kCounter)));
  std::vector<Tensor> out;
  // Read before any assign: an error naming the variable.
  absl::Status s = session->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("variable 'v'"));
  ASSERT_OK(session->Run({{"p", Tensor::FromVector<float>({5}, TensorShape({}))}}, {}, {"init"}, &out));
  for (float want : {5.0f, 6.0f, 7.0f}) {
    // The step's read is what inc adds one to, so it sees the value before the assign.
    ASSERT_OK(session->Run({}, {"read"}, {"inc"}, &out));
    EXPECT_EQ(out[0].flat<float>()[0], want);
  }
  ASSERT_OK(session->Run({}, {"read"}, {}, &out));
  EXPECT_EQ(out[0].flat<float>()[0], 8.0f);
  // Another dtype or shape for an existing variable is refused, naming it.
  s = session->Run({{"p", Tensor::FromVector<float>({1, 2}, TensorShape({2}))}}, {}, {"init"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("variable 'v'"));
  // Destroyed, it is gone; destroying it again is NOT_FOUND.
  ASSERT_OK(session->Run({}, {}, {"destroy"}, &out));
  EXPECT_EQ(session->Run({}, {"read"}, {}, &out).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(session->Run({}, {}, {"destroy"}, &out).code(), absl::StatusCode::kNotFound);
}

Tensor TripCount(int64_t m) { return Tensor::Scalar<int64_t>(m); }

// Before deadlines reached the kernels, the Loop ran inline in Run and the step returned OK
// once it had finished: hours here.
TEST(EmbeddedSessionTest, ADeadlineStopsALoopThatWouldRunForHours) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(CountingLoopGraph("", "")));
  RunOptions options;
  options.set_timeout_in_ms(2000);
  std::vector<Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status s = session->Run(options, {{"m", TripCount(int64_t{1} << 40)}}, {"out"}, {}, &out,
                                nullptr);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 'loop'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("did not finish within 2000 ms"));
  EXPECT_LT(took, absl::Seconds(3));
  // The session goes on: the next step of the same signature runs.
  ASSERT_OK(session->Run(options, {{"m", TripCount(3)}}, {"out"}, {}, &out, nullptr));
  EXPECT_EQ(out[0].scalar<float>(), -3.0f);
}

TEST(EmbeddedSessionTest, TheConfigsOperationTimeoutBoundsEveryStep) {
  SessionOptions options;
  options.config.set_operation_timeout_in_ms(300);
  auto session = NewSession(options);
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(CountingLoopGraph("", "")));
  std::vector<Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status s = (*session)->Run({{"m", TripCount(int64_t{1} << 40)}}, {"out"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

// ONNX runs the body while iteration < M: a negative M runs it never (so does ONNX Runtime),
// where it used to mean "no M" and ran forever.
TEST(EmbeddedSessionTest, ALoopWithANegativeTripCountRunsNoIteration) {
  auto session = MakeSession();
  ASSERT_OK(session->Create(CountingLoopGraph("", "")));
  RunOptions options;
  options.set_timeout_in_ms(60000);  // Only so that a regression fails instead of hanging.
  std::vector<Tensor> out;
  for (int64_t m : {int64_t{-1}, int64_t{-5}, std::numeric_limits<int64_t>::min()}) {
    ASSERT_OK(session->Run(options, {{"m", TripCount(m)}}, {"out"}, {}, &out, nullptr));
    EXPECT_EQ(out[0].scalar<float>(), 0.0f) << m;
  }
  ASSERT_OK(session->Run(options, {{"m", TripCount(0)}}, {"out"}, {}, &out, nullptr));
  EXPECT_EQ(out[0].scalar<float>(), 0.0f);
  ASSERT_OK(session->Run(options, {{"m", TripCount(4)}}, {"out"}, {}, &out, nullptr));
  EXPECT_EQ(out[0].scalar<float>(), -4.0f);
}

// y = -fill(shape): a tensor as large as the fed shape says.
constexpr char kFill[] = R"(
  node { name: "shape" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } }
  node { name: "fill" op: "Onnx>ConstantOfShape" input: "shape" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 2 } } } }
  node { name: "y" op: "Neg" input: "fill" attr { key: "T" value { type: DT_FLOAT } } }
)";

Tensor Shape2(int64_t rows, int64_t cols) { return Tensor::FromVector<int64_t>({rows, cols}, TensorShape({2})); }

// Before, a session could allocate until the process ran out of memory.
TEST(EmbeddedSessionTest, AMemoryLimitFailsTheNodeThatAllocatesPastIt) {
  SessionOptions options;
  options.config.mutable_resource_limits()->set_memory_limit_bytes(1 << 20);
  auto session = NewSession(options);
  ASSERT_OK(session);
  ASSERT_OK((*session)->Create(Parse(kFill)));
  std::vector<Tensor> out;
  ASSERT_OK((*session)->Run({{"shape", Shape2(128, 128)}}, {"y"}, {}, &out));  // 64 KiB twice.
  EXPECT_EQ(out[0].flat<float>()[0], -2.0f);
  absl::Status s = (*session)->Run({{"shape", Shape2(1024, 1024)}}, {"y"}, {}, &out);  // 4 MiB.
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 'fill'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("memory limit of 1048576 bytes"));
  // What the failed step held was given back: the session goes on.
  ASSERT_OK((*session)->Run({{"shape", Shape2(256, 256)}}, {"y"}, {}, &out));
  EXPECT_EQ(out[0].NumElements(), 256 * 256);
}

TEST(EmbeddedSessionTest, AGraphOverTheNodeLimitIsRefused) {
  SessionOptions options;
  options.config.mutable_resource_limits()->set_max_graph_nodes(4);
  auto session = NewSession(options);
  ASSERT_OK(session);
  absl::Status s = (*session)->Create(Parse(kMlp));  // 6 nodes.
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("6 nodes"));
  ASSERT_OK((*session)->Create(Parse(kFill)));  // 3 nodes.
  s = (*session)->Extend(Parse(R"(node { name: "z1" op: "Neg" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
                                 node { name: "z2" op: "Neg" input: "z1" attr { key: "T" value { type: DT_FLOAT } } })"));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

// Large constants are hoisted out of the session's graph (framework/hoisted_constants.h);
// each signature, and nodes added by Extend, still see their values.
TEST(EmbeddedSessionTest, LargeConstantsServeEverySignatureAndExtend) {
  constexpr int kN = 6000;
  std::vector<float> w(kN);
  for (int i = 0; i < kN; ++i) w[i] = 0.25f * (i % 101);
  GraphDef g = Parse(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  )");
  AddNodeAttr("value", Tensor::FromVector<float>(w, TensorShape({kN})), g.mutable_node(1));
  auto session = MakeSession();
  ASSERT_OK(session->Create(std::move(g)));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Tensor::Scalar<float>(2)}}, {"y"}, {}, &out));
  for (int i = 0; i < kN; ++i) ASSERT_EQ(out[0].flat<float>()[i], 2 * w[i]) << i;
  ASSERT_OK(session->Run({}, {"w"}, {}, &out));  // Another signature.
  for (int i = 0; i < kN; ++i) ASSERT_EQ(out[0].flat<float>()[i], w[i]) << i;

  GraphDef more = Parse(R"(
    node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "z" op: "Add" input: "w" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
  )");
  std::vector<float> v(kN, -1.0f);
  AddNodeAttr("value", Tensor::FromVector<float>(v, TensorShape({kN})), more.mutable_node(0));
  ASSERT_OK(session->Extend(more));
  ASSERT_OK(session->Run({}, {"z", "w"}, {}, &out));
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(out[0].flat<float>()[i], w[i] - 1) << i;
    ASSERT_EQ(out[1].flat<float>()[i], w[i]) << i;
  }
}

}  // namespace
}  // namespace sluice
