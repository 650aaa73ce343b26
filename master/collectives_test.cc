// TensorFlow's collective ops in a step over three CPU devices: results against sums computed
// here, bitwise agreement between members and reruns, and every kind of misuse refused with
// the group and the member named, within the timeout where it can only show at run time.
#include "master/collectives.h"

#include <cmath>

#include "absl/time/clock.h"
#include "framework/node_attr.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "master/session.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Cpu(int i) { return absl::StrCat("/device:CPU:", i); }

struct Builder {
  GraphDef def;

  NodeDef* Add(const std::string& name, const std::string& op, std::vector<std::string> inputs, int cpu) {
    NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op(op);
    for (auto& in : inputs) n->add_input(in);
    n->set_device(Cpu(cpu));
    return n;
  }
  std::string Int(const std::string& name, int32_t v, int cpu) {
    NodeDef* n = Add(name, "Const", {}, cpu);
    AddNodeAttr("dtype", DT_INT32, n);
    AddNodeAttr("value", Tensor::Scalar<int32_t>(v), n);
    return name;
  }
  std::string Input(const std::string& name, DataType dt, int cpu) {
    NodeDef* n = Add(name, "Placeholder", {}, cpu);
    AddNodeAttr("dtype", dt, n);
    return name;
  }
  // A member: its keys are constants on its own device.
  NodeDef* Member(const std::string& name, const std::string& op, const std::string& input, int size, int group,
                  int instance, int cpu, DataType dt = DT_FLOAT) {
    std::vector<std::string> in;
    if (!input.empty()) in.push_back(input);
    in.push_back(Int(name + "/size", size, cpu));
    in.push_back(Int(name + "/group", group, cpu));
    in.push_back(Int(name + "/instance", instance, cpu));
    NodeDef* n = Add(name, op, in, cpu);
    AddNodeAttr("T", dt, n);
    return n;
  }
  NodeDef* Reduce(const std::string& name, const std::string& input, int size, int group, int instance, int cpu,
                  const std::string& merge = "Add", const std::string& final_op = "Id", DataType dt = DT_FLOAT) {
    NodeDef* n = Member(name, "CollectiveReduceV2", input, size, group, instance, cpu, dt);
    AddNodeAttr("merge_op", merge, n);
    AddNodeAttr("final_op", final_op, n);
    AddNodeAttr("Nordering_token", int64_t{0}, n);
    return n;
  }
};

std::unique_ptr<Session> Make(const GraphDef& def) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 3;
  auto s = NewSession(options);
  EXPECT_OK(s);
  EXPECT_OK((*s)->Create(def));
  return std::move(*s);
}

Tensor Floats(std::vector<float> v) { return Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size())})); }

TEST(CollectivesTest, AllReduceMeanOverThreeDevicesIsTheSameOnEveryMember) {
  Builder b;
  for (int i = 0; i < 3; ++i) {
    b.Reduce(absl::StrCat("r", i), b.Input(absl::StrCat("x", i), DT_FLOAT, i), 3, 1, 7, i, "Add", "Div");
  }
  auto session = Make(b.def);
  // Seven values over three members: chunks of 2, 2 and 3.
  const std::vector<std::vector<float>> x = {{1.5f, -2, 3, 0.1f, 5, 6, 7}, {0.3f, 2, -3, 4, 1e-3f, 6, 70}, {1, 1, 1, 1, 1, 1, 1}};
  std::vector<Tensor> out, again;
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x0", Floats(x[0])}, {"x1", Floats(x[1])}, {"x2", Floats(x[2])}};
  ASSERT_OK(session->Run(feeds, {"r0", "r1", "r2"}, {}, &out));
  ASSERT_OK(session->Run(feeds, {"r0", "r1", "r2"}, {}, &again));
  ASSERT_EQ(out.size(), 3u);
  for (int e = 0; e < 7; ++e) {
    const double mean = (static_cast<double>(x[0][e]) + x[1][e] + x[2][e]) / 3;
    EXPECT_NEAR(out[0].flat<float>()[e], mean, 1e-5 * std::max(1.0, std::fabs(mean))) << e;
    for (int m = 1; m < 3; ++m) {
      EXPECT_EQ(std::memcmp(&out[m].flat<float>()[e], &out[0].flat<float>()[e], sizeof(float)), 0) << m << " " << e;
    }
    EXPECT_EQ(std::memcmp(&again[1].flat<float>()[e], &out[1].flat<float>()[e], sizeof(float)), 0) << e;
  }
}

TEST(CollectivesTest, MaxMinAndMulOfIntegers) {
  for (const auto& [merge, want] : std::vector<std::pair<std::string, std::vector<int32_t>>>{
           {"Max", {4, 5, 9}}, {"Min", {-1, 3, 0}}, {"Mul", {-8, 60, 0}}}) {
    Builder b;
    for (int i = 0; i < 3; ++i) {
      b.Reduce(absl::StrCat("r", i), b.Input(absl::StrCat("x", i), DT_INT32, i), 3, 2, 1, i, merge, "Id", DT_INT32);
    }
    auto session = Make(b.def);
    std::vector<Tensor> out;
    auto v = [](std::vector<int32_t> d) { return Tensor::FromVector<int32_t>(d, TensorShape({3})); };
    ASSERT_OK(session->Run({{"x0", v({2, 3, 9})}, {"x1", v({-1, 5, 0})}, {"x2", v({4, 4, 1})}}, {"r0", "r1", "r2"}, {}, &out));
    for (int m = 0; m < 3; ++m) {
      for (int e = 0; e < 3; ++e) EXPECT_EQ(out[m].flat<int32_t>()[e], want[e]) << merge << " " << m << " " << e;
    }
    // Fetching two of the three prunes the third: the step says who never joins.
    absl::Status pruned = session->Run({{"x0", v({2, 3, 9})}, {"x2", v({4, 4, 1})}}, {"r0", "r2"}, {}, &out);
    EXPECT_THAT(pruned.message(), AllOf(HasSubstr("only 2 of its 3 members"), HasSubstr("'r2' on")));
  }
}

TEST(CollectivesTest, GatherConcatenatesInRankOrderWithFirstDimsThatDiffer) {
  Builder b;
  const std::vector<int> rows = {1, 2, 0};
  for (int i = 0; i < 3; ++i) {
    NodeDef* n = b.Member(absl::StrCat("g", i), "CollectiveGatherV2", b.Input(absl::StrCat("x", i), DT_FLOAT, i), 3, 3,
                          1, i);
    AddNodeAttr("Nordering_token", int64_t{0}, n);
  }
  auto session = Make(b.def);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x0", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))},
                          {"x1", Tensor::FromVector<float>({3, 4, 5, 6}, TensorShape({2, 2}))},
                          {"x2", Tensor::FromVector<float>({}, TensorShape({0, 2}))}},
                         {"g0", "g1", "g2"}, {}, &out));
  for (const Tensor& t : out) {
    ASSERT_EQ(t.shape(), TensorShape({3, 2}));
    for (int e = 0; e < 6; ++e) EXPECT_EQ(t.flat<float>()[e], e + 1);
  }
}

TEST(CollectivesTest, BroadcastFromOneMemberToTheOthers) {
  Builder b;
  b.Member("send", "CollectiveBcastSendV2", b.Input("x", DT_FLOAT, 1), 3, 4, 1, 1);
  for (int i : {0, 2}) {
    const std::string name = absl::StrCat("recv", i);
    NodeDef* shape = b.Add(name + "/shape", "Const", {}, i);
    AddNodeAttr("dtype", DT_INT32, shape);
    AddNodeAttr("value", Tensor::FromVector<int32_t>({2}, TensorShape({1})), shape);
    NodeDef* n = b.Member(name, "CollectiveBcastRecvV2", "", 3, 4, 1, i);
    n->add_input(name + "/shape");
  }
  auto session = Make(b.def);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Floats({2.5f, -1})}}, {"recv0", "recv2", "send"}, {}, &out));
  for (const Tensor& t : out) {
    ASSERT_EQ(t.shape(), TensorShape({2}));
    EXPECT_EQ(t.flat<float>()[0], 2.5f);
    EXPECT_EQ(t.flat<float>()[1], -1);
  }
}

absl::Status RunError(const GraphDef& def, std::vector<std::pair<std::string, Tensor>> feeds,
                      std::vector<std::string> fetches) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 3;
  auto s = NewSession(options);
  if (!s.ok()) return s.status();
  SL_RETURN_IF_ERROR((*s)->Create(def));
  std::vector<Tensor> out;
  return (*s)->Run(feeds, fetches, {}, &out);
}

TEST(CollectivesTest, MisuseIsRefusedNamingTheGroup) {
  {
    Builder b;
    b.Reduce("a", b.Input("x0", DT_FLOAT, 0), 2, 1, 1, 0);
    b.Reduce("b", b.Input("x1", DT_FLOAT, 1), 3, 1, 1, 1);
    absl::Status s = RunError(b.def, {{"x0", Floats({1})}, {"x1", Floats({1})}}, {"a", "b"});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), AllOf(HasSubstr("group 1"), HasSubstr("group sizes disagree"), HasSubstr("'a' says 2"),
                                   HasSubstr("'b' says 3")));
  }
  {
    Builder b;  // A member that never joins.
    b.Reduce("a", b.Input("x0", DT_FLOAT, 0), 3, 1, 1, 0);
    b.Reduce("b", b.Input("x1", DT_FLOAT, 1), 3, 1, 1, 1);
    absl::Status s = RunError(b.def, {{"x0", Floats({1})}, {"x1", Floats({1})}}, {"a", "b"});
    EXPECT_THAT(s.message(), AllOf(HasSubstr("group 1, instance 1"), HasSubstr("only 2 of its 3 members"),
                                   HasSubstr("never join")));
  }
  {
    Builder b;  // Two members of one instance on one device.
    b.Reduce("a", b.Input("x0", DT_FLOAT, 0), 2, 1, 5, 0);
    b.Reduce("b", b.Input("x1", DT_FLOAT, 0), 2, 1, 5, 0);
    absl::Status s = RunError(b.def, {{"x0", Floats({1})}, {"x1", Floats({1})}}, {"a", "b"});
    EXPECT_THAT(s.message(), AllOf(HasSubstr("instance 5"), HasSubstr("duplicate instance key"), HasSubstr("CPU:0")));
  }
  {
    Builder b;  // A reduce meeting a gather.
    b.Reduce("a", b.Input("x0", DT_FLOAT, 0), 2, 1, 1, 0);
    AddNodeAttr("Nordering_token", int64_t{0},
                b.Member("b", "CollectiveGatherV2", b.Input("x1", DT_FLOAT, 1), 2, 1, 1, 1));
    absl::Status s = RunError(b.def, {{"x0", Floats({1})}, {"x1", Floats({1})}}, {"a", "b"});
    EXPECT_THAT(s.message(), AllOf(HasSubstr("members of different ops")));
  }
  {
    Builder b;  // A group key that is not a constant.
    b.Reduce("a", b.Input("x0", DT_FLOAT, 0), 1, 1, 1, 0);
    b.Input("key", DT_INT32, 0);
    for (NodeDef& n : *b.def.mutable_node()) {
      if (n.name() == "a") n.set_input(2, "key");
    }
    absl::Status s = RunError(b.def, {{"x0", Floats({1})}, {"key", Tensor::Scalar<int32_t>(1)}}, {"a"});
    EXPECT_THAT(s.message(), AllOf(HasSubstr("'a'"), HasSubstr("group_key must be a constant")));
  }
  {
    Builder b;  // Members whose tensors differ in shape: found when they meet.
    b.Reduce("a", b.Input("x0", DT_FLOAT, 0), 2, 1, 1, 0);
    b.Reduce("b", b.Input("x1", DT_FLOAT, 1), 2, 1, 1, 1);
    absl::Status s = RunError(b.def, {{"x0", Floats({1, 2, 3})}, {"x1", Floats({1, 2})}}, {"a", "b"});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), AllOf(HasSubstr("group 1"), HasSubstr("shape")));
  }
  {
    Builder b;  // A broadcast receiver expecting another shape.
    b.Member("send", "CollectiveBcastSendV2", b.Input("x", DT_FLOAT, 1), 2, 4, 1, 1);
    NodeDef* shape = b.Add("recv/shape", "Const", {}, 0);
    AddNodeAttr("dtype", DT_INT32, shape);
    AddNodeAttr("value", Tensor::FromVector<int32_t>({3}, TensorShape({1})), shape);
    b.Member("recv", "CollectiveBcastRecvV2", "", 2, 4, 1, 0)->add_input("recv/shape");
    absl::Status s = RunError(b.def, {{"x", Floats({1, 2})}}, {"recv", "send"});
    EXPECT_THAT(s.message(), AllOf(HasSubstr("broadcasts float [2]"), HasSubstr("expects float [3]")));
  }
}

// A graph given to a worker directly may carry any group attrs: a device that is no device name
// fails the kernel's creation by name, it does not build a key from it.
TEST(CollectivesTest, DamagedGroupAttrsAreRefusedWhenTheKernelIsMade) {
  NodeDef node;
  node.set_name("r");
  node.set_op("CollectiveReduceV2");
  for (const char* in : {"x", "size", "group", "instance"}) node.add_input(in);
  AddNodeAttr("T", DT_FLOAT, &node);
  AddNodeAttr("merge_op", "Add", &node);
  AddNodeAttr("final_op", "Id", &node);
  AddNodeAttr("Nordering_token", int64_t{0}, &node);
  AddNodeAttr("timeout_seconds", 0.0f, &node);
  AddNodeAttr("_collective_devices", std::vector<std::string>{"no;such;device", "/job:a/replica:0/task:0/device:CPU:0"},
              &node);
  AddNodeAttr("_collective_incarnations", std::vector<int64_t>{1, 2}, &node);
  AddNodeAttr("_collective_rank", int64_t{1}, &node);
  // Through a session the master replaces the attrs; a lone kernel keeps them.
  auto op = OpRegistry::Global()->LookUp("CollectiveReduceV2");
  ASSERT_OK(op);
  ThreadPool pool("test", 1);
  DeviceAttributes attrs;
  attrs.set_name("/job:a/replica:0/task:0/device:CPU:0");
  attrs.set_device_type(DEVICE_CPU);
  Device device(attrs, &pool);
  auto kernel = KernelRegistry::Global()->CreateOpKernel(&device, node, (*op)->op_def);
  EXPECT_FALSE(kernel.ok());
  EXPECT_THAT(kernel.status().message(), HasSubstr("'no;such;device' is not a device name")) << kernel.status();
  node.mutable_attr()->at("_collective_rank").set_i(7);
  kernel = KernelRegistry::Global()->CreateOpKernel(&device, node, (*op)->op_def);
  EXPECT_THAT(kernel.status().message(), HasSubstr("a damaged group"));
}

// Two groups whose members meet in opposite orders on two devices wait for each other forever;
// timeout_seconds ends the step with the member waited for named.
TEST(CollectivesTest, MembersThatNeverMeetTimeOut) {
  Builder b;
  NodeDef* r1_0 = b.Reduce("r1_0", b.Input("x0", DT_FLOAT, 0), 2, 1, 1, 0);
  NodeDef* r2_0 = b.Reduce("r2_0", "r1_0", 2, 2, 1, 0);
  NodeDef* r2_1 = b.Reduce("r2_1", b.Input("x1", DT_FLOAT, 1), 2, 2, 1, 1);
  NodeDef* r1_1 = b.Reduce("r1_1", "r2_1", 2, 1, 1, 1);
  for (NodeDef* n : {r1_0, r2_0, r2_1, r1_1}) AddNodeAttr("timeout_seconds", 1.0f, n);
  const absl::Time start = absl::Now();
  absl::Status s = RunError(b.def, {{"x0", Floats({1})}, {"x1", Floats({1})}}, {"r2_0", "r1_1"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("within timeout_seconds"), HasSubstr("CPU:")));
}

}  // namespace
}  // namespace sluice
