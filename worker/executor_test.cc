#include "worker/executor.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "framework/hoisted_constants.h"
#include "framework/node_attr.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "ops/op_registry.h"
#include "worker/local_rendezvous.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr char kDev[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kClient[] = "/job:localhost/replica:0/task:0/device:CPU:9";

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() : pool_("test", 2) {
    DeviceAttributes attrs;
    attrs.set_name(kDev);
    attrs.set_device_type(DEVICE_CPU);
    attrs.set_incarnation(1);
    device_ = std::make_unique<Device>(attrs, &pool_);
  }

  absl::StatusOr<std::unique_ptr<Executor>> Build(const std::string& text) {
    GraphDef def;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
    return Executor::Create(def, device_.get());
  }

  static std::string Key(const std::string& src, const std::string& dst, const std::string& name) {
    return Rendezvous::CreateKey(src, 1, dst, name, FrameAndIter{});
  }

  ThreadPool pool_;
  std::unique_ptr<Device> device_;
};

// Records which threads ran it; forwards its input.
REGISTER_OP("_TestThreadProbe").Input("x: int32").Output("y: int32");
absl::Mutex probe_mu;
std::vector<std::thread::id>* probe_threads = new std::vector<std::thread::id>();
class ThreadProbeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    {
      absl::MutexLock lock(&probe_mu);
      probe_threads->push_back(std::this_thread::get_id());
    }
    absl::SleepFor(absl::Milliseconds(2));  // Long enough for a second thread to pick up the other.
    return ctx->set_output(0, ctx->input(0));
  }
};
REGISTER_KERNEL_BUILDER(Name("_TestThreadProbe").Device(DEVICE_CPU), ThreadProbeOp);

// Const -> (a, b) -> Add -> _Send to the client.
constexpr char kAddGraph[] = R"(
  node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 2 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 40 } } } }
  node { name: "sum" op: "Add" input: "a" input: "b" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "send" op: "_Send" input: "sum"
         attr { key: "T" value { type: DT_INT32 } }
         attr { key: "tensor_name" value { s: "sum:0" } }
         attr { key: "send_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:0" } }
         attr { key: "send_device_incarnation" value { i: 1 } }
         attr { key: "recv_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:9" } }
         attr { key: "client_terminated" value { b: true } } }
)";

TEST_F(ExecutorTest, RunsAGraphRepeatedlyAndConcurrently) {
  auto exec = Build(kAddGraph);
  ASSERT_OK(exec);
  auto key = *Rendezvous::ParseKey(Key(kDev, kClient, "sum:0"));
  for (int run = 0; run < 3; ++run) {
    LocalRendezvous r;
    Executor::Args args;
    args.rendezvous = &r;
    args.runner = &pool_;
    ASSERT_OK((*exec)->Run(args));
    Tensor out;
    ASSERT_OK(r.Recv(key, &out));
    EXPECT_EQ(out.flat<int32_t>()[0], 41);
    EXPECT_EQ(out.flat<int32_t>()[1], 42);
  }
  // Overlapping runs share the kernels but not their values.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        LocalRendezvous r;
        Executor::Args args;
        args.rendezvous = &r;
        args.runner = &pool_;
        ASSERT_OK((*exec)->Run(args));
        Tensor out;
        ASSERT_OK(r.Recv(key, &out));
        ASSERT_EQ(out.flat<int32_t>()[1], 42);
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST_F(ExecutorTest, StatsAreRecordedPerNode) {
  auto exec = Build(kAddGraph);
  ASSERT_OK(exec);
  LocalRendezvous r;
  DeviceStepStats stats;
  Executor::Args args;
  args.rendezvous = &r;
  args.stats = &stats;
  ASSERT_OK((*exec)->Run(args));
  // The Consts ran once, when the executor was made: each run starts with their values.
  ASSERT_EQ(stats.node_stats_size(), 2);
  EXPECT_EQ(stats.node_stats(0).node_name(), "sum");
  EXPECT_EQ(stats.node_stats(1).node_name(), "send");
}

// Consts without inputs are made once: their values wait in their consumers' inputs, control
// edges out of them count as done, and a consumer that an in-place kernel could take over
// (Add forwards an input it alone holds) never writes into the Const's buffer. A Const with a
// control input still runs in its turn.
TEST_F(ExecutorTest, ConstsAreMadeOnceAndStayIntact) {
  auto exec = Build(R"(
    node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 2 } } } }
    node { name: "twice" op: "Add" input: "a" input: "a" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "gate" op: "NoOp" input: "^a" }
    node { name: "late" op: "Const" input: "^gate" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 100 } } } }
    node { name: "sum" op: "Add" input: "twice" input: "late" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "send" op: "_Send" input: "sum"
           attr { key: "T" value { type: DT_INT32 } }
           attr { key: "tensor_name" value { s: "sum:0" } }
           attr { key: "send_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:0" } }
           attr { key: "send_device_incarnation" value { i: 1 } }
           attr { key: "recv_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:9" } }
           attr { key: "client_terminated" value { b: true } } }
  )");
  ASSERT_OK(exec);
  auto key = *Rendezvous::ParseKey(Key(kDev, kClient, "sum:0"));
  for (int run = 0; run < 3; ++run) {
    LocalRendezvous r;
    DeviceStepStats stats;
    Executor::Args args;
    args.rendezvous = &r;
    args.runner = &pool_;
    args.stats = &stats;
    ASSERT_OK((*exec)->Run(args));
    Tensor out;
    ASSERT_OK(r.Recv(key, &out));
    EXPECT_EQ(out.flat<int32_t>()[0], 102) << run;
    EXPECT_EQ(out.flat<int32_t>()[1], 104) << run;
    std::vector<std::string> ran;
    for (const auto& ns : stats.node_stats()) ran.push_back(ns.node_name());
    std::sort(ran.begin(), ran.end());
    EXPECT_EQ(ran, (std::vector<std::string>{"gate", "late", "send", "sum", "twice"}));
  }
}

// One branch fails (Add of incompatible shapes) while another waits on a _Recv that nobody
// will ever send: the run must end with that error, not hang.
TEST_F(ExecutorTest, FirstErrorAbortsTheRunAndNamesTheNode) {
  auto exec = Build(R"(
    node { name: "x" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 4 } } } }
    node { name: "y" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 3 } } int_val: 0 } } } }
    node { name: "bad_add" op: "Add" input: "x" input: "y" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "wait" op: "_Recv"
           attr { key: "tensor_type" value { type: DT_FLOAT } }
           attr { key: "tensor_name" value { s: "never:0" } }
           attr { key: "send_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:9" } }
           attr { key: "send_device_incarnation" value { i: 1 } }
           attr { key: "recv_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:0" } } }
    node { name: "after" op: "Relu" input: "wait" attr { key: "T" value { type: DT_FLOAT } } }
  )");
  ASSERT_OK(exec);
  LocalRendezvous r;
  Executor::Args args;
  args.rendezvous = &r;
  args.runner = &pool_;
  absl::Status s = (*exec)->Run(args);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'bad_add' (op 'Add')"));
  EXPECT_THAT(s.message(), HasSubstr("Incompatible shapes"));
}

TEST_F(ExecutorTest, ControlEdgesOrderExecution) {
  // "second" may only run after "first"; with the control edge the graph is valid and runs.
  auto exec = Build(R"(
    node { name: "first" op: "NoOp" }
    node { name: "second" op: "NoOp" input: "^first" }
  )");
  ASSERT_OK(exec);
  LocalRendezvous r;
  Executor::Args args;
  args.rendezvous = &r;
  DeviceStepStats stats;
  args.stats = &stats;
  ASSERT_OK((*exec)->Run(args));
  ASSERT_EQ(stats.node_stats_size(), 2);
  EXPECT_EQ(stats.node_stats(0).node_name(), "first");
  EXPECT_EQ(stats.node_stats(1).node_name(), "second");
}

TEST_F(ExecutorTest, CreationErrorsNameTheNode) {
  auto s = Build(R"(node { name: "r" op: "Relu" input: "r2" attr { key: "T" value { type: DT_FLOAT } } })");
  EXPECT_THAT(s.status().message(), HasSubstr("node 'r'"));
}

// A hoisted Const (framework/hoisted_constants.h) reads its value from the table given to
// Create and sends that very buffer: the weights are held once, not copied into the kernel.
TEST_F(ExecutorTest, HoistedConstsShareTheTablesBuffer) {
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "send" op: "_Send" input: "w"
           attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "tensor_name" value { s: "w:0" } }
           attr { key: "send_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:0" } }
           attr { key: "send_device_incarnation" value { i: 1 } }
           attr { key: "recv_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:9" } }
           attr { key: "client_terminated" value { b: true } } })", &def));
  std::vector<float> values(5000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) - 7;
  AddNodeAttr("value", Tensor::FromVector<float>(values, TensorShape({50, 100})), def.mutable_node(0));
  HoistedConstants table;
  HoistConstants(&def, &table);
  ASSERT_TRUE(IsHoisted(def.node(0)));

  // Without the table the graph does not build, and the error names the node.
  auto missing = Executor::Create(def, device_.get());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("'w'"));

  auto exec = Executor::Create(def, device_.get(), &table);
  ASSERT_OK(exec);
  LocalRendezvous r;
  Executor::Args args;
  args.rendezvous = &r;
  args.runner = &pool_;
  ASSERT_OK((*exec)->Run(args));
  Tensor out;
  ASSERT_OK(r.Recv(*Rendezvous::ParseKey(Key(kDev, kClient, "w:0")), &out));
  EXPECT_EQ(out.shape(), TensorShape({50, 100}));
  EXPECT_EQ(out.flat<float>()[0], -7.0f);
  EXPECT_EQ(out.flat<float>()[4999], 4992.0f);
  EXPECT_EQ(out.raw_data(), table.at("w").raw_data());
}

// A tensor's buffer goes back when its last consumer has run, not at the end of the step: a
// chain of ten Adds keeps at most its current input and output alive, and the step's budget
// (which every buffer allocated by a kernel is charged to) peaks at two of them, not ten.
TEST_F(ExecutorTest, IntermediatesAreReleasedAfterTheirLastConsumer) {
  constexpr int kChain = 10;
  constexpr int64_t kElements = 64 * 1024;
  constexpr uint64_t kBytes = kElements * sizeof(float);
  std::string text;
  for (int i = 1; i <= kChain; ++i) {
    // Both inputs are the same tensor, so no Add can write its output over its input.
    const std::string in = i == 1 ? "c" : "a" + std::to_string(i - 1);
    text += "node { name: 'a" + std::to_string(i) + "' op: 'Add' input: '" + in + "' input: '" + in +
            "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  }
  text += R"(node { name: "send" op: "_Send" input: "a10"
           attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "tensor_name" value { s: "a10:0" } }
           attr { key: "send_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:0" } }
           attr { key: "send_device_incarnation" value { i: 1 } }
           attr { key: "recv_device" value { s: "/job:localhost/replica:0/task:0/device:CPU:9" } }
           attr { key: "client_terminated" value { b: true } } })";
  GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  NodeDef* c = def.add_node();
  c->set_name("c");
  c->set_op("Const");
  AddNodeAttr("dtype", DT_FLOAT, c);
  AddNodeAttr("value", Tensor::FromVector<float>(std::vector<float>(kElements, 1.0f), TensorShape({kElements})), c);
  auto exec = Executor::Create(def, device_.get());
  ASSERT_OK(exec);

  auto budget = std::make_shared<MemoryBudget>(uint64_t{1} << 30);
  LocalRendezvous r;
  Executor::Args args;
  args.rendezvous = &r;
  args.runner = &pool_;
  args.memory_budget = budget;
  ASSERT_OK((*exec)->Run(args));
  EXPECT_GE(budget->peak(), 2 * kBytes);  // Each Add's input and output, both charged.
  EXPECT_LE(budget->peak(), 2 * kBytes + kBytes / 2);
  {
    Tensor out;
    ASSERT_OK(r.Recv(*Rendezvous::ParseKey(Key(kDev, kClient, "a10:0")), &out));
    EXPECT_EQ(out.flat<float>()[kElements - 1], 1024.0f);
    EXPECT_EQ(budget->used(), kBytes);  // Only the fetched output is left.
  }
  EXPECT_EQ(budget->used(), 0u);
}

// With one inter-op thread and a caller that runs nodes, independent expensive nodes run one
// after another on the caller's thread (never two at once, each with all intra-op threads);
// with more inter-op threads, the runner takes some.
TEST_F(ExecutorTest, OneInterOpThreadRunsNodesOneAfterAnother) {
  auto exec = Build(R"(
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
    node { name: "p1" op: "_TestThreadProbe" input: "c" }
    node { name: "p2" op: "_TestThreadProbe" input: "c" }
    node { name: "p3" op: "_TestThreadProbe" input: "c" }
    node { name: "sum" op: "AddN" input: "p1" input: "p2" input: "p3" attr { key: "N" value { i: 3 } }
           attr { key: "T" value { type: DT_INT32 } } }
  )");
  ASSERT_OK(exec);
  for (int inter_op : {1, 3}) {
    SCOPED_TRACE(inter_op);
    ThreadPool runner("inter_op", inter_op);
    {
      absl::MutexLock lock(&probe_mu);
      probe_threads->clear();
    }
    LocalRendezvous r;
    Executor::Args args;
    args.rendezvous = &r;
    args.runner = &runner;
    ASSERT_OK((*exec)->Run(args));
    absl::MutexLock lock(&probe_mu);
    ASSERT_EQ(probe_threads->size(), 3u);
    const int on_caller = std::count(probe_threads->begin(), probe_threads->end(), std::this_thread::get_id());
    if (inter_op == 1) {
      EXPECT_EQ(on_caller, 3);
    } else {
      EXPECT_LT(on_caller, 3);
    }
  }
}

}  // namespace
}  // namespace sluice
