// Two tasks of a cluster in one process, each a GrpcServer on its own loopback port, reached
// by a client through "grpc://": every call crosses gRPC, tensors between tasks go by
// RecvTensor.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "framework/node_attr.h"
#include "framework/rendezvous.h"
#include "framework/tensor_sequence.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "rpc/grpc_server.h"
#include "master/session.h"
#include "master/test_graphs.h"
#include "proto/master_service.grpc.pb.h"
#include "proto/worker_service.grpc.pb.h"
#include "rpc/cluster_spec.h"
#include "rpc/grpc_util.h"
#include "rpc/grpc_worker.h"
#include "rpc/test_cluster.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::EndsWith;
using ::testing::Not;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  return def;
}

constexpr char kTask0[] = "/job:worker/replica:0/task:0";
constexpr char kTask1[] = "/job:worker/replica:0/task:1";

// x (fed, task 0) -> MatMul with w (task 1) -> Relu (task 0) -> y; z = Neg(y) on task 1.
constexpr char kSplitMlp[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w" op: "Const" device: "/job:worker/task:1" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
                float_val: 1 float_val: -1 float_val: 2 float_val: 1 } } } }
  node { name: "xw" op: "MatMul" input: "x" input: "w" device: "/job:worker/task:1"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Relu" input: "xw" device: "/job:worker/replica:0/task:0/device:CPU:0"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "z" op: "Neg" input: "y" device: "/job:worker/task:1"
         attr { key: "T" value { type: DT_FLOAT } } }
)";

// A 64 MiB tensor made on task 1 and summed on task 0.
constexpr char kLargeTensorGraph[] = R"(
    node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 1 } } int64_val: 16777216 } } } }
    node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
    node { name: "big" op: "Onnx>Expand" input: "one" input: "dims" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "sum" op: "Onnx>ReduceSum" input: "big" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Taxes" value { list { } } }
           attr { key: "keepdims" value { b: false } } }
)";

class GrpcClusterTest : public ::testing::Test {
 protected:
  // RecvTensor chunk size of the servers; small to exercise chunked transfers.
  virtual uint64_t ChunkBytes() const { return kMaxRecvTensorChunkBytes; }
  virtual int64_t MaxRequestBytes() const { return kDefaultMaxRequestBytes; }
  // Whether big tensors between the tasks (one process, so one machine) are copied from the
  // sender's memory; off, they cross gRPC as between machines.
  virtual bool SameHost() const { return true; }

  // Both tasks on port 0; each learns the other's address once both listen.
  void SetUp() override {
    GrpcServerOptions options;
    options.num_cpu_devices = 2;
    options.inter_op_threads = 2;
    options.intra_op_threads = 1;
    options.recv_tensor_chunk_bytes = ChunkBytes();
    options.max_request_bytes = MaxRequestBytes();
    options.same_host_recv_tensor = SameHost();
    auto servers = StartLoopbackTasks(2, options);
    ASSERT_OK(servers);
    servers_ = *std::move(servers);
    auto cluster = ParseClusterSpec(absl::StrCat("worker=", servers_[0]->address(), ",", servers_[1]->address()));
    ASSERT_OK(cluster);
    for (auto& server : servers_) ASSERT_OK(server->CompleteCluster(*cluster));
  }

  // kLargeTensorGraph, run `runs` times: 64 MiB made on task 1, summed on task 0.
  void ExpectLargeTensorSums(int runs) {
    auto session = Connect(0);
    ASSERT_OK(session->Create(Parse(kLargeTensorGraph)));
    for (int i = 0; i < runs; ++i) {
      std::vector<Tensor> out;
      absl::Status s = session->Run({}, {"sum"}, {}, &out);
      ASSERT_OK(s);
      EXPECT_FLOAT_EQ(out[0].scalar<float>(), 16777216.0f);
    }
  }

  std::unique_ptr<Session> Connect(int task, ConfigProto config = ConfigProto()) {
    SessionOptions options;
    options.target = servers_[task]->target();
    options.config = config;
    auto s = NewSession(options);
    EXPECT_OK(s);
    return std::move(*s);
  }

  // Waits (at most `limit`) until no RunGraph call runs on either task.
  bool NoGraphRunsWithin(absl::Duration limit) {
    const absl::Time end = absl::Now() + limit;
    while (absl::Now() < end) {
      if (servers_[0]->worker()->NumRunningGraphs() == 0 &&
          servers_[1]->worker()->NumRunningGraphs() == 0) {
        return true;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  std::vector<std::unique_ptr<GrpcServer>> servers_;
};

TEST_F(GrpcClusterTest, ListsEveryDeviceOfTheCluster) {
  std::vector<DeviceAttributes> devices;
  ASSERT_OK(Connect(1)->ListDevices(&devices));
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name());
  // The master's own task first.
  EXPECT_THAT(names, ::testing::ElementsAre(absl::StrCat(kTask1, "/device:CPU:0"),
                                            absl::StrCat(kTask1, "/device:CPU:1"),
                                            absl::StrCat(kTask0, "/device:CPU:0"),
                                            absl::StrCat(kTask0, "/device:CPU:1")));
}

TEST_F(GrpcClusterTest, RunsAGraphSplitAcrossTasks) {
  for (int master_task : {0, 1}) {
    auto session = Connect(master_task);
    ASSERT_OK(session->Create(Parse(kSplitMlp)));
    for (int i = 0; i < 3; ++i) {
      std::vector<Tensor> out;
      RunOptions options;
      options.set_output_partition_graphs(true);
      RunMetadata metadata;
      Tensor x = Tensor::FromVector<float>({1, 2 + float(i)}, TensorShape({1, 2}));
      absl::Status s = session->Run(options, {{"x", x}}, {"y", "z:0"}, {}, &out, &metadata);
      ASSERT_OK(s);
      ASSERT_EQ(out.size(), 2u);
      // xw = [1 + 2*(2+i), -1 + (2+i)]
      EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 5 + 2 * i);
      EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 1 + i);
      EXPECT_FLOAT_EQ(out[1].flat<float>()[0], -(5 + 2 * i));
      EXPECT_EQ(metadata.partition_graphs_size(), 2);  // One per task.
    }
    EXPECT_OK(session->Close());
  }
}

TEST_F(GrpcClusterTest, ControlEdgesCrossTasks) {
  // b on task 1 waits for a on task 0 through a control edge only.
  auto session = Connect(0);
  ASSERT_TRUE(session->Create(Parse(R"(
    node { name: "a" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
    node { name: "b" op: "Const" input: "^a" device: "/job:worker/task:1"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 4 } } } }
  )")).ok());
  std::vector<Tensor> out;
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  ASSERT_OK(session->Run(options, {}, {"b"}, {}, &out, &metadata));
  EXPECT_FLOAT_EQ(out[0].scalar<float>(), 4);
  int recvs_on_task1 = 0;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      if (n.op() == "_Recv" && absl::StartsWith(n.device(), kTask1)) ++recvs_on_task1;
    }
  }
  EXPECT_EQ(recvs_on_task1, 1);
}

TEST_F(GrpcClusterTest, LargeTensorsCrossTasks) { ExpectLargeTensorSums(1); }

// Large constants are hoisted out of the master's graph (framework/hoisted_constants.h); the
// master's own task shares their buffers and the other task gets them inlined over gRPC.
TEST_F(GrpcClusterTest, LargeConstantsReachEveryTask) {
  constexpr int kN = 5000;  // Past kMaxInlineConstElements.
  std::vector<float> a(kN), b(kN);
  for (int i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i % 97);
    b[i] = static_cast<float>(2 * (i % 89));
  }
  GraphDef g = Parse(R"(
    node { name: "a" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "b" op: "Const" device: "/job:worker/task:1" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "s" op: "Add" input: "a" input: "b" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
  )");
  AddNodeAttr("value", Tensor::FromVector<float>(a, TensorShape({kN})), g.mutable_node(0));
  AddNodeAttr("value", Tensor::FromVector<float>(b, TensorShape({kN})), g.mutable_node(1));
  for (int master_task : {0, 1}) {
    auto session = Connect(master_task);
    ASSERT_OK(session->Create(g));
    std::vector<Tensor> out;
    ASSERT_OK(session->Run({}, {"s", "a", "b"}, {}, &out));
    ASSERT_EQ(out.size(), 3u);
    for (int i = 0; i < kN; ++i) {
      ASSERT_EQ(out[0].flat<float>()[i], a[i] + b[i]) << i;
      ASSERT_EQ(out[1].flat<float>()[i], a[i]) << i;
      ASSERT_EQ(out[2].flat<float>()[i], b[i]) << i;
    }
    EXPECT_OK(session->Close());
  }
}

// The same over gRPC alone, as between tasks on different machines.
class GrpcOnlyClusterTest : public GrpcClusterTest {
  bool SameHost() const override { return false; }
};

TEST_F(GrpcOnlyClusterTest, LargeTensorsCrossTasks) {
  ExpectLargeTensorSums(2);
}

// The same with RecvTensor answers of at most 1 MiB: the 64 MiB tensor takes 64 of them.
class ChunkedGrpcClusterTest : public GrpcClusterTest {
  uint64_t ChunkBytes() const override { return 1 << 20; }
  bool SameHost() const override { return false; }
};

TEST_F(ChunkedGrpcClusterTest, LargeTensorsCrossTasksInChunks) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(Parse(kLargeTensorGraph)));
  for (int i = 0; i < 2; ++i) {
    std::vector<Tensor> out;
    absl::Status s = session->Run({}, {"sum"}, {}, &out);
    ASSERT_OK(s);
    EXPECT_FLOAT_EQ(out[0].scalar<float>(), 16777216.0f);
  }
  // A split model still matches (small tensors go in one answer).
  ASSERT_OK(session->Extend(Parse(kSplitMlp)));
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}}, {"z"},
                           {}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], -5);
}

TEST_F(GrpcClusterTest, ErrorsComeBackWithTheirCodeAndTheStepEndsEverywhere) {
  auto session = Connect(0);
  // x is fed on task 0 but with the wrong shape for the MatMul on task 1.
  ASSERT_OK(session->Create(Parse(kSplitMlp)));
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", Tensor::FromVector<float>({1, 2, 3}, TensorShape({1, 3}))}},
                                {"z"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("xw"));
  // The session still works.
  ASSERT_TRUE(session->Run({{"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}}, {"z"},
                           {}, &out).ok());
}

// Task 1 multiplies a [1024,1024] matrix M (every entry 1/1024, so M.M = M) by itself 16 times,
// a second or so of work; task 0's partition waits for the product while its own branch is
// long done, and then sums it (1024).
std::string SlowWorkerGraph() {
  std::string text = R"(
    node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } }
                  int64_val: 1024 int64_val: 1024 } } } }
    node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 0.0009765625 } } } }
    node { name: "m0" op: "Onnx>Expand" input: "v" input: "dims" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "quick" op: "Neg" input: "v" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } })";
  for (int i = 1; i <= 16; ++i) {
    absl::StrAppend(&text, "node { name: \"m", i, "\" op: \"MatMul\" input: \"m", i - 1, "\" input: \"m0\" ",
                    "device: \"/job:worker/task:1\" attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  }
  absl::StrAppend(&text, R"(
    node { name: "sum" op: "Onnx>ReduceSum" input: "m16" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Taxes" value { list { } } }
           attr { key: "keepdims" value { b: false } } })");
  return text;
}

TEST_F(GrpcClusterTest, APartitionWaitsForASlowWorker) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(Parse(SlowWorkerGraph())));
  std::vector<Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status s = session->Run({}, {"sum", "quick"}, {}, &out);
  ASSERT_OK(s);
  EXPECT_NEAR(out[0].flat<float>()[0], 1024.0f, 0.5f);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[0], -0.0009765625f);
  std::printf("the slow step took %s\n", absl::FormatDuration(absl::Now() - start).c_str());
}

// A sequence made on task 1 and read on task 0, and fetched by the client.
constexpr char kSequenceAcrossTasks[] = R"(
  node { name: "a" op: "Const" device: "/job:worker/task:1" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                float_val: 1 float_val: 2 } } } }
  node { name: "b" op: "Const" device: "/job:worker/task:1" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                float_val: 3 float_val: 4 float_val: 5 } } } }
  node { name: "seq" op: "Onnx>SequenceConstruct" input: "a" input: "b" device: "/job:worker/task:1"
         attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "pos" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 int64_val: 1 } } } }
  node { name: "at" op: "Onnx>SequenceAt" input: "seq" input: "pos" device: "/job:worker/task:0"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "I" value { type: DT_INT64 } } }
  node { name: "len" op: "Onnx>SequenceLength" input: "seq" device: "/job:worker/task:0" }
)";

TEST_F(GrpcClusterTest, SequencesCrossTasks) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(Parse(kSequenceAcrossTasks)));
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"at", "len", "seq"}, {}, &out);
  ASSERT_OK(s);
  EXPECT_EQ(out[0].shape(), TensorShape({3}));
  EXPECT_EQ(out[0].flat<float>()[2], 5);
  EXPECT_EQ(out[1].flat<int64_t>()[0], 2);
  auto seq = GetSequence(out[2], "fetched seq");
  ASSERT_OK(seq);
  ASSERT_EQ((*seq)->size(), 2);
  EXPECT_EQ((*seq)->elements()[0].flat<float>()[1], 2);
}

TEST_F(GrpcClusterTest, TwoClientsAtOnce) {
  std::vector<std::thread> clients;
  std::vector<absl::Status> results(2);
  for (int c = 0; c < 2; ++c) {
    clients.emplace_back([&, c] {
      auto session = Connect(c);
      absl::Status s = session->Create(Parse(kSplitMlp));
      for (int i = 0; s.ok() && i < 20; ++i) {
        std::vector<Tensor> out;
        float v = float(c * 100 + i);
        s = session->Run({{"x", Tensor::FromVector<float>({v, 0}, TensorShape({1, 2}))}}, {"y"}, {}, &out);
        if (s.ok() && out[0].flat<float>()[0] != v) s = absl::InternalError(absl::StrCat("got ", out[0].DebugString()));
      }
      results[c] = s;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_OK(results[0]);
  EXPECT_OK(results[1]);
}

TEST_F(GrpcClusterTest, ServersOnPortZeroGotDistinctPortsAndTakeTheirClusterOnce) {
  EXPECT_NE(servers_[0]->address(), servers_[1]->address());
  EXPECT_THAT(servers_[0]->address(), Not(EndsWith(":0")));
  auto cluster = ParseClusterSpec(absl::StrCat("worker=", servers_[0]->address(), ",", servers_[1]->address()));
  ASSERT_OK(cluster);
  absl::Status again = servers_[0]->CompleteCluster(*cluster);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
}

TEST(GrpcServerTest, CompleteClusterRefusesAClusterWithAnotherAddressForThisTask) {
  ServerDef def;
  JobDef* job = def.mutable_cluster()->add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[0] = "127.0.0.1:0";
  def.set_job_name("worker");
  def.set_task_index(0);
  GrpcServerOptions options;
  options.complete_cluster_later = true;
  auto server = GrpcServer::Create(def, options);
  ASSERT_OK(server);
  ASSERT_OK((*server)->Start());
  auto elsewhere = ParseClusterSpec("worker=127.0.0.1:1");
  ASSERT_OK(elsewhere);
  absl::Status s = (*server)->CompleteCluster(*elsewhere);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr((*server)->address()));
}

TEST_F(GrpcClusterTest, UnreachableMasterIsUnavailable) {
  SessionOptions options;
  options.target = absl::StrCat("grpc://127.0.0.1:", FreePort());
  auto session = NewSession(options);
  ASSERT_OK(session);
  absl::Status s = (*session)->Create(GraphDef());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(options.target));
}

TEST_F(GrpcClusterTest, ASessionOutlivesARestartedWorker) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(Parse(kSplitMlp)));
  auto run = [&] {
    std::vector<Tensor> out;
    absl::Status s = session->Run({{"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}},
                                  {"z"}, {}, &out);
    if (s.ok() && out[0].flat<float>()[0] != -5) s = absl::InternalError(out[0].DebugString());
    return s;
  };
  ASSERT_OK(run());
  auto restart = [&] {
    ServerDef def;
    *def.mutable_cluster() = *ParseClusterSpec(absl::StrCat("worker=", servers_[0]->address(), ",",
                                                            servers_[1]->address()));
    def.set_job_name("worker");
    def.set_task_index(1);
    servers_[1]->Stop();
    servers_[1].reset();
    auto server = GrpcServer::Create(def, GrpcServerOptions());
    ASSERT_OK(server);
    ASSERT_OK((*server)->Start());
    servers_[1] = *std::move(server);
  };
  // Lost during a run: that run fails; once the task is back, the next run works.
  servers_[1]->Stop();
  absl::Status s = run();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(kTask1));
  restart();
  s = run();
  EXPECT_OK(s);
  // Restarted between runs: the first run finds graphs the new worker never had, and the
  // master registers them again for the next.
  restart();
  s = run();
  EXPECT_FALSE(s.ok());
  s = run();
  EXPECT_OK(s);
}

TEST_F(GrpcClusterTest, StopsWhileAClientIsConnected) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(Parse(kSplitMlp)));
  servers_[1]->Stop();
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}}, {"z"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(kTask1));
}

// x -> six Negs -> Add(n6, r), where r is a stateful RandomUniform that the pipeline policy
// puts beside its reader, in the last stage.
std::string ChainWithStatefulNode() {
  std::string text = R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "r" op: "Onnx>RandomUniform" attr { key: "shape" value { list { i: 1 i: 2 } } }
           attr { key: "seed" value { f: 7 } } })";
  std::string prev = "x";
  for (int i = 1; i <= 6; ++i) {
    absl::StrAppend(&text, "node { name: \"n", i, "\" op: \"Neg\" input: \"", prev,
                    "\" attr { key: \"T\" value { type: DT_FLOAT } } }\n");
    prev = absl::StrCat("n", i);
  }
  absl::StrAppend(&text, "node { name: \"add\" op: \"Add\" input: \"n6\" input: \"r\" ",
                  "attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  return text;
}

// The device of `node` in a run's partition graphs ("" when it is not there).
std::string DeviceOf(const RunMetadata& metadata, const std::string& node) {
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      if (n.name() == node) return n.device();
    }
  }
  return "";
}

TEST_F(GrpcClusterTest, StatefulNodesStayWhereTheyWereFirstPut) {
  ConfigProto config;
  config.mutable_placement()->set_policy("pipeline");
  RunOptions options;
  options.set_output_partition_graphs(true);
  Tensor x = Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}));
  auto device_of_r = [&](Session* session, bool whole_chain) {
    std::vector<Tensor> out;
    RunMetadata metadata;
    absl::Status s = whole_chain ? session->Run(options, {{"x", x}}, {"add"}, {}, &out, &metadata)
                                 : session->Run(options, {}, {"r"}, {}, &out, &metadata);
    EXPECT_OK(s);
    return DeviceOf(metadata, "r");
  };
  // Alone, r goes to the first stage; read at the end of the chain, to the last.
  auto alone = Connect(0, config);
  ASSERT_OK(alone->Create(Parse(ChainWithStatefulNode())));
  const std::string first_stage = device_of_r(alone.get(), false);
  auto session = Connect(0, config);
  ASSERT_OK(session->Create(Parse(ChainWithStatefulNode())));
  const std::string last_stage = device_of_r(session.get(), true);
  ASSERT_FALSE(last_stage.empty());
  ASSERT_NE(first_stage, last_stage) << "the chain does not move r; the test proves nothing";
  // A new signature that alone would put r on the first stage keeps it where it was.
  EXPECT_EQ(device_of_r(session.get(), false), last_stage);
  EXPECT_EQ(device_of_r(session.get(), true), last_stage);
}

// The Loop runs on task 1, its consumer on task 0 waits for it: the deadline must stop the
// executor of one and the receive of the other. Before, the master aborted only the
// rendezvous, the Loop ran on, and the client saw DEADLINE_EXCEEDED only from its own call's
// deadline, 10 s later.
TEST_F(GrpcClusterTest, ADeadlineStopsTheStepOnEveryTask) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(CountingLoopGraph("/job:worker/task:1", "/job:worker/task:0")));
  RunOptions options;
  options.set_timeout_in_ms(2000);
  std::vector<Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status s = session->Run(options, {{"m", Tensor::Scalar<int64_t>(int64_t{1} << 40)}},
                                {"out"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(NoGraphRunsWithin(absl::Seconds(1)));
  ASSERT_OK(session->Run(options, {{"m", Tensor::Scalar<int64_t>(5)}}, {"out"}, {}, &out,
                         nullptr));
  EXPECT_EQ(out[0].scalar<float>(), -5.0f);
}

// TensorFlow's CollectiveReduceV2 over four devices of two tasks: members on each task pass
// chunks through the workers' RecvTensor; every member gets the mean, bitwise the same.
GraphDef CollectiveGraph(const std::vector<std::string>& devices, int64_t elements, float timeout_seconds,
                         bool crossed = false) {
  GraphDef def;
  auto add = [&](const std::string& name, const std::string& op, std::vector<std::string> in,
                 const std::string& device) {
    NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op(op);
    for (auto& i : in) n->add_input(i);
    n->set_device(device);
    return n;
  };
  auto reduce = [&](const std::string& name, const std::string& input, int group, size_t member) {
    std::vector<std::string> in = {input};
    for (auto [suffix, v] : std::vector<std::pair<std::string, int>>{
             {"/size", static_cast<int>(devices.size())}, {"/group", group}, {"/instance", 1}}) {
      NodeDef* c = add(name + suffix, "Const", {}, devices[member]);
      AddNodeAttr("dtype", DT_INT32, c);
      AddNodeAttr("value", Tensor::Scalar<int32_t>(v), c);
      in.push_back(name + suffix);
    }
    NodeDef* r = add(name, "CollectiveReduceV2", in, devices[member]);
    AddNodeAttr("T", DT_FLOAT, r);
    AddNodeAttr("merge_op", "Add", r);
    AddNodeAttr("final_op", "Div", r);
    AddNodeAttr("Nordering_token", int64_t{0}, r);
    AddNodeAttr("timeout_seconds", timeout_seconds, r);
  };
  for (size_t m = 0; m < devices.size(); ++m) {
    NodeDef* fill = add(absl::StrCat("x", m), "Const", {}, devices[m]);
    AddNodeAttr("dtype", DT_FLOAT, fill);
    std::vector<float> v(elements);
    for (int64_t e = 0; e < elements; ++e) v[e] = static_cast<float>((e % 7) * (m + 1)) * 0.25f;
    AddNodeAttr("value", Tensor::FromVector<float>(v, TensorShape({elements})), fill);
    if (!crossed) {
      reduce(absl::StrCat("r", m), absl::StrCat("x", m), 1, m);
    } else {
      // Member 0 reduces group 1 then 2, member 1 group 2 then 1: each waits for the other.
      const int first = m == 0 ? 1 : 2, second = m == 0 ? 2 : 1;
      reduce(absl::StrCat("a", m), absl::StrCat("x", m), first, m);
      reduce(absl::StrCat("r", m), absl::StrCat("a", m), second, m);
    }
  }
  return def;
}

TEST_F(GrpcClusterTest, CollectiveAllReduceAcrossTasks) {
  const std::vector<std::string> devices = {"/job:worker/task:0/device:CPU:0", "/job:worker/task:0/device:CPU:1",
                                            "/job:worker/task:1/device:CPU:0", "/job:worker/task:1/device:CPU:1"};
  const int64_t elements = (1 << 20) + 3;  // 4 MiB, in chunks that do not divide evenly.
  auto session = Connect(1);
  ASSERT_OK(session->Create(CollectiveGraph(devices, elements, 0)));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {"r0", "r1", "r2", "r3"}, {}, &out));
  ASSERT_EQ(out.size(), 4u);
  for (int64_t e : {int64_t{0}, int64_t{1}, int64_t{6}, elements / 2, elements - 1}) {
    // Members hold (e % 7) * (m + 1) / 4: the mean over m = 1..4 is (e % 7) * 2.5 / 4.
    EXPECT_FLOAT_EQ(out[0].flat<float>()[e], static_cast<float>(e % 7) * 2.5f / 4) << e;
  }
  for (int m = 1; m < 4; ++m) {
    EXPECT_EQ(std::memcmp(out[m].raw_data(), out[0].raw_data(), elements * sizeof(float)), 0) << m;
  }
}

TEST_F(GrpcClusterTest, CollectiveMembersThatNeverMeetTimeOutOnEveryTask) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(
      CollectiveGraph({"/job:worker/task:0/device:CPU:0", "/job:worker/task:1/device:CPU:0"}, 16, 1, true)));
  std::vector<Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status s = session->Run({}, {"r0", "r1"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), HasSubstr("within timeout_seconds"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_TRUE(NoGraphRunsWithin(absl::Seconds(2)));
}

// A client's cancellation (Session::RunCancellable, behind the C API's SL_CancelRun and Python's
// RunOptions.terminate) cancels its RunStep call, and the master ends the step on every task.
TEST_F(GrpcClusterTest, ACancelledRunStopsTheStepOnEveryTask) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(CountingLoopGraph("/job:worker/task:1", "/job:worker/task:0")));
  CancellationManager cancellation;
  absl::Status status;
  std::thread run([&] {
    std::vector<Tensor> out;
    status = session->RunCancellable(RunOptions(), {{"m", Tensor::Scalar<int64_t>(int64_t{1} << 40)}},
                                     {"out"}, {}, &out, nullptr, &cancellation);
  });
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (servers_[1]->worker()->NumRunningGraphs() == 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(servers_[1]->worker()->NumRunningGraphs(), 1) << "the step never started";
  const absl::Time asked = absl::Now();
  cancellation.StartCancel(absl::CancelledError("stopped by the test"));
  run.join();
  EXPECT_LT(absl::Now() - asked, absl::Seconds(1));
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("stopped by the test"));
  EXPECT_TRUE(NoGraphRunsWithin(absl::Seconds(2)));
  // Cancelled before it starts: refused at once.
  std::vector<Tensor> out;
  EXPECT_EQ(session->RunCancellable(RunOptions(), {{"m", Tensor::Scalar<int64_t>(5)}}, {"out"}, {}, &out,
                                    nullptr, &cancellation)
                .code(),
            absl::StatusCode::kCancelled);
  ASSERT_OK(session->Run(RunOptions(), {{"m", Tensor::Scalar<int64_t>(5)}}, {"out"}, {}, &out, nullptr));
  EXPECT_EQ(out[0].scalar<float>(), -5.0f);
}

// Calls to task 0's services with requests made by hand, as a retrying or broken client would.
class RawRpcTest : public GrpcClusterTest {
 protected:
  void SetUp() override {
    GrpcClusterTest::SetUp();
    channel_ = NewGrpcChannel(servers_[0]->address());
    master_ = ::tensorflow::grpc::MasterService::NewStub(channel_);
    worker_ = ::tensorflow::grpc::WorkerService::NewStub(channel_);
  }

  // Creates a session on task 0's master holding `graph`; returns its handle.
  std::string CreateSession(const std::string& graph) { return CreateSession(Parse(graph)); }
  std::string CreateSession(const GraphDef& graph) {
    grpc::ClientContext context;
    rpc::CreateSessionRequest request;
    *request.mutable_graph_def() = graph;
    rpc::CreateSessionResponse response;
    grpc::Status s = master_->CreateSession(&context, request, &response);
    EXPECT_OK(s) << s.error_message();
    return response.session_handle();
  }

  // Registers `graph` on task 0's worker by a raw RegisterGraph; returns its handle.
  std::string RegisterGraph(const GraphDef& graph) {
    grpc::ClientContext context;
    rpc::RegisterGraphRequest request;
    *request.mutable_graph_def() = graph;
    rpc::RegisterGraphResponse response;
    grpc::Status s = worker_->RegisterGraph(&context, request, &response);
    EXPECT_OK(s) << s.error_message();
    return response.graph_handle();
  }

  absl::Status RunStep(const rpc::RunStepRequest& request) {
    grpc::ClientContext context;
    rpc::RunStepResponse response;
    return FromGrpcStatus(master_->RunStep(&context, request, &response));
  }

  // Sends `bytes` as the whole request of `method` ("/tensorflow.grpc.WorkerService/RunGraph").
  grpc::Status SendRaw(const std::string& method, const std::string& bytes) {
    grpc::GenericStub generic(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1), response;
    absl::Notification done;
    grpc::Status status;
    generic.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                      [&](grpc::Status s) {
                        status = s;
                        done.Notify();
                      });
    done.WaitForNotification();
    return status;
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::tensorflow::grpc::MasterService::Stub> master_;
  std::unique_ptr<::tensorflow::grpc::WorkerService::Stub> worker_;
};

// A RunStep call that ends early, by its deadline or by the client, without a RunOptions
// timeout: the master sees the call cancelled and cancels the step on every task. Before, the
// server computed on after the client had gone.
class CancelledCallTest : public RawRpcTest {
 protected:
  // Starts a step that would run for hours, waits until task 1 runs it, lets `end` end the
  // call, and returns the call's status.
  absl::Status RunUntilEnded(const std::function<void(grpc::ClientContext*)>& end,
                             absl::Duration call_deadline) {
    rpc::RunStepRequest request;
    request.set_session_handle(
        CreateSession(CountingLoopGraph("/job:worker/task:1", "/job:worker/task:0")));
    NamedTensorProto* m = request.add_feed();
    m->set_name("m:0");
    Tensor::Scalar<int64_t>(int64_t{1} << 40).AsProtoTensorContent(m->mutable_tensor());
    request.add_fetch("out:0");
    grpc::ClientContext context;
    SetTimeout(&context, call_deadline);
    absl::Status status;
    std::thread call([&] {
      rpc::RunStepResponse response;
      status = FromGrpcStatus(master_->RunStep(&context, request, &response));
    });
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (servers_[1]->worker()->NumRunningGraphs() == 0 && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    EXPECT_EQ(servers_[1]->worker()->NumRunningGraphs(), 1) << "the step never started";
    end(&context);
    call.join();
    return status;
  }
};

TEST_F(CancelledCallTest, AClientWhoseDeadlinePassesCancelsTheServersStep) {
  absl::Status s = RunUntilEnded([](grpc::ClientContext*) {}, absl::Seconds(1));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_TRUE(NoGraphRunsWithin(absl::Seconds(2)));
}

TEST_F(CancelledCallTest, AClientThatCancelsCancelsTheServersStep) {
  absl::Status s = RunUntilEnded([](grpc::ClientContext* c) { c->TryCancel(); },
                                 absl::Seconds(60));
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_TRUE(NoGraphRunsWithin(absl::Seconds(2)));
}

constexpr char kConstGraph[] = R"(
  node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
)";

TEST_F(RawRpcTest, ARetriedRunStepIsRefusedNotRunTwice) {
  rpc::RunStepRequest request;
  request.set_session_handle(CreateSession(kConstGraph));
  request.add_fetch("c:0");
  request.set_request_id(77);
  ASSERT_OK(RunStep(request));
  absl::Status s = RunStep(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("request id 77 of RunStep"));
  request.set_request_id(78);
  EXPECT_OK(RunStep(request));
  request.set_request_id(0);  // No id: never tracked.
  EXPECT_OK(RunStep(request));
  EXPECT_OK(RunStep(request));
}

TEST_F(RawRpcTest, ARetriedRunGraphIsRefusedNotRunTwice) {
  const std::string graph = RegisterGraph(Parse(absl::StrCat(R"(
    node { name: "c" op: "Const" device: ")", kTask0, R"(/device:CPU:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } })")));
  auto run_graph = [&](int64_t step_id, int64_t request_id) {
    grpc::ClientContext context;
    rpc::RunGraphRequest request;
    request.set_graph_handle(graph);
    request.set_step_id(step_id);
    request.set_request_id(request_id);
    rpc::RunGraphResponse response;
    return FromGrpcStatus(worker_->RunGraph(&context, request, &response));
  };
  ASSERT_OK(run_graph(1001, 5));
  absl::Status s = run_graph(1001, 5);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("request id 5 of RunGraph"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kTask0));
  EXPECT_OK(run_graph(1002, 6));
}

TEST_F(RawRpcTest, ARetriedRecvTensorIsRefused) {
  rpc::RecvTensorRequest request;
  request.set_step_id(1);
  request.set_request_id(9);
  // A key whose source device has another incarnation: refused either way, but the second
  // time for being a repeat.
  request.set_rendezvous_key(Rendezvous::CreateKey(absl::StrCat(kTask0, "/device:CPU:0"), 12345,
                                                   kClientDevice, "x:0", FrameAndIter{}));
  grpc::Status first = SendRaw("/tensorflow.grpc.WorkerService/RecvTensor", request.SerializeAsString());
  EXPECT_THAT(first.error_message(), HasSubstr("another incarnation"));
  grpc::Status again = SendRaw("/tensorflow.grpc.WorkerService/RecvTensor", request.SerializeAsString());
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_THAT(again.error_message(), HasSubstr("request id 9 of RecvTensor"));
}

// A partition waiting for a value its master will never send.
NodeDef NeverSentRecv() {
  NodeDef recv;
  recv.set_name("wait");
  recv.set_op("_Recv");
  recv.set_device(absl::StrCat(kTask0, "/device:CPU:0"));
  AddNodeAttr("tensor_type", DT_FLOAT, &recv);
  AddNodeAttr("tensor_name", "never:0", &recv);
  AddNodeAttr("send_device", kClientDevice, &recv);
  AddNodeAttr("send_device_incarnation", static_cast<int64_t>(kClientIncarnation), &recv);
  AddNodeAttr("recv_device", recv.device(), &recv);
  AddNodeAttr("client_terminated", true, &recv);
  return recv;
}

TEST_F(RawRpcTest, AStepWhoseMasterWentAwayIsCleanedUp) {
  GraphDef waiting;
  *waiting.add_node() = NeverSentRecv();
  const std::string graph = RegisterGraph(waiting);
  grpc::ClientContext context;
  rpc::RunGraphRequest request;
  request.set_graph_handle(graph);
  request.set_step_id(4242);
  rpc::RunGraphResponse response;
  absl::Notification done;
  grpc::Status status;
  worker_->async()->RunGraph(&context, &request, &response, [&](grpc::Status s) {
    status = s;
    done.Notify();
  });
  Worker* worker = servers_[0]->worker();
  for (int i = 0; i < 500 && worker->NumSteps() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_EQ(worker->NumSteps(), 1u);
  // What the worker sees when its master dies: the call is cancelled, no CleanupGraph follows.
  context.TryCancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  for (int i = 0; i < 500 && worker->NumSteps() != 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(worker->NumSteps(), 0u);
}

// A step's abort can come before its RunGraph is sent (a deadline or a client gone at that
// very moment). Before, the abort found no call to cancel and was lost: the partition then ran
// for as long as it liked (in a soak run, Loops of hours that took a task's CPU).
TEST_F(RawRpcTest, AnAbortBeforeTheRunGraphIsNotLost) {
  GraphDef waiting;
  *waiting.add_node() = NeverSentRecv();
  const std::string graph = RegisterGraph(waiting);
  GrpcWorker client(kTask0, channel_);
  client.AbortStep(4343, absl::DeadlineExceededError("step 4343 did not finish within 1 ms"));
  RunGraphRequest request;
  request.graph_handle = graph;
  request.step_id = 4343;
  RunGraphResponse response;
  absl::Notification done;
  absl::Status status;
  client.RunGraphAsync(&request, &response, [&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10))) << "the aborted step ran";
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  Worker* worker = servers_[0]->worker();
  for (int i = 0; i < 500 && worker->NumRunningGraphs() != 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(worker->NumRunningGraphs(), 0);
}

// RunGraph comes on one of gRPC's callback threads. Before, the worker ran the step's first
// expensive node there: a Loop of hours held the thread, and with a few such steps no thread
// was left to deliver their cancellation, or any other call (a soak run saw the task stop
// answering). Now RunGraphAsync returns at once and the nodes run on the worker's pool.
TEST_F(GrpcClusterTest, RunGraphReturnsBeforeItsNodesRun) {
  Worker* worker = servers_[1]->worker();
  GraphDef graph = CountingLoopGraph("", "");
  const std::string device = absl::StrCat(kTask1, "/device:CPU:0");
  for (NodeDef& node : *graph.mutable_node()) {
    node.set_device(device);
    if (node.name() == "m") {  // The trip count, as a constant: 2^40.
      node.set_op("Const");
      node.clear_attr();
      AddNodeAttr("dtype", DT_INT64, &node);
      AddNodeAttr("value", Tensor::Scalar<int64_t>(int64_t{1} << 40), &node);
    }
  }
  RegisterGraphRequest reg;
  reg.graph_def = graph;
  RegisterGraphResponse reg_response;
  ASSERT_OK(worker->RegisterGraph(reg, &reg_response));
  RunGraphRequest request;
  request.graph_handle = reg_response.graph_handle;
  request.step_id = 5151;
  RunGraphResponse response;
  absl::Notification done;
  absl::Status status;
  std::thread caller([&] {
    worker->RunGraphAsync(&request, &response, [&](const absl::Status& s) {
      status = s;
      done.Notify();
    });
  });
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (worker->NumRunningGraphs() == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
  absl::SleepFor(absl::Milliseconds(200));  // The Loop is under way by now.
  EXPECT_FALSE(done.HasBeenNotified());
  absl::Notification joined;
  std::thread stopper([&] {  // Whatever happens below, the step ends.
    joined.WaitForNotificationWithTimeout(absl::Seconds(3));
    worker->AbortStep(5151, absl::CancelledError("test over"));
  });
  caller.join();  // Before, this waited for the Loop: until the stopper aborted it.
  const bool returned_while_running = !done.HasBeenNotified();
  joined.Notify();
  stopper.join();
  EXPECT_TRUE(returned_while_running) << "RunGraphAsync returned only when the step was over";
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  worker->CleanupGraph(5151);
}

TEST_F(RawRpcTest, GarbagePayloadsGetErrorsAndTheServerGoesOn) {
  const std::string garbage = "\xff\xff\xff\xff\x0f not a protobuf \x01\x02";
  for (const char* method :
       {"/tensorflow.grpc.WorkerService/RunGraph", "/tensorflow.grpc.WorkerService/RecvTensor",
        "/tensorflow.grpc.WorkerService/RegisterGraph", "/tensorflow.grpc.MasterService/RunStep",
        "/tensorflow.grpc.MasterService/CreateSession"}) {
    grpc::Status s = SendRaw(method, garbage);
    EXPECT_FALSE(s.ok()) << method;
    EXPECT_NE(s.error_code(), grpc::StatusCode::UNAVAILABLE) << method << ": " << s.error_message();
  }
  grpc::ClientContext context;
  rpc::GetStatusRequest request;
  rpc::GetStatusResponse response;
  EXPECT_OK(worker_->GetStatus(&context, request, &response));
  EXPECT_EQ(response.device_attributes_size(), 2);
}

TEST_F(RawRpcTest, AFeedClaimingAHugeShapeIsRefusedBeforeAllocating) {
  rpc::RunStepRequest request;
  request.set_session_handle(CreateSession(kConstGraph));
  request.add_fetch("y:0");
  NamedTensorProto* feed = request.add_feed();
  feed->set_name("x:0");
  TensorProto* t = feed->mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);  // 4 TiB of floats ...
  t->add_float_val(1);                                               // ... in 5 bytes.
  absl::Status s = RunStep(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("feed 'x:0'"));

  // Below the 1 TiB any tensor may hold, a compact feed still may not fill more than
  // kMaxCompactWireTensorBytes; one that carries every value is the way to send more.
  t->mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 27);  // 512 MiB of floats.
  s = RunStep(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("compact"));
}

// TensorFlow's clients send "one value fills the shape" tensors (make_tensor_proto of a
// scalar with a shape): the last value repeats.
TEST_F(RawRpcTest, TensorFlowsCompactFeedsAreAccepted) {
  rpc::RunStepRequest request;
  request.set_session_handle(CreateSession(kConstGraph));
  request.add_fetch("y:0");
  NamedTensorProto* feed = request.add_feed();
  feed->set_name("x:0");
  TensorProto* t = feed->mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(2);
  t->mutable_tensor_shape()->add_dim()->set_size(3);
  t->add_float_val(1);
  t->add_float_val(4);  // [1, 4, 4, 4, 4, 4]
  grpc::ClientContext context;
  rpc::RunStepResponse response;
  ASSERT_OK(master_->RunStep(&context, request, &response));
  ASSERT_EQ(response.tensor_size(), 1);
  SL_ASSERT_OK_AND_ASSIGN(Tensor y, Tensor::FromProto(response.tensor(0).tensor()));
  ASSERT_EQ(y.shape(), TensorShape({2, 3}));
  const std::vector<float> want = {-1, -4, -4, -4, -4, -4};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.flat<float>()[i], want[i]) << i;
}

class SmallRequestLimitTest : public GrpcClusterTest {
 protected:
  int64_t MaxRequestBytes() const override { return int64_t{1} << 20; }
};

TEST_F(SmallRequestLimitTest, OversizedRequestsAreRefused) {
  auto session = Connect(0);
  ASSERT_OK(session->Create(Parse(kConstGraph)));
  std::vector<Tensor> out;
  auto feed = [&](int64_t n) {
    Tensor x = *Tensor::Allocate(DT_FLOAT, TensorShape({n}));
    std::fill_n(x.flat<float>().data(), n, 2.0f);
    return session->Run({{"x", x}}, {"y"}, {}, &out);
  };
  absl::Status s = feed(512 * 1024);  // 2 MiB.
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  s = feed(64 * 1024);  // 256 KiB.
  ASSERT_OK(s);
  EXPECT_EQ(out[0].flat<float>()[0], -2.0f);
}

}  // namespace
}  // namespace sluice
