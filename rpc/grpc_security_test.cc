// Authentication: a server with a cluster secret answers UNAUTHENTICATED to every method of
// both services unless the call carries the secret, and a cluster whose tasks share it runs
// graphs across tasks (their channels to each other present it).
#include "rpc/grpc_security.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "proto/master_service.grpc.pb.h"
#include "proto/worker_service.grpc.pb.h"
#include "rpc/cluster_spec.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr char kSecret[] = "0123456789abcdef-the-test-secret";

// `c` on task 1, its negation on task 0: the step crosses tasks.
constexpr char kAcrossTasks[] = R"(
  node { name: "c" op: "Const" device: "/job:worker/task:1"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
  node { name: "n" op: "Neg" input: "c" device: "/job:worker/task:0"
         attr { key: "T" value { type: DT_FLOAT } } }
)";

class GrpcSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GrpcSecurity security;
    security.secret = kSecret;
    for (int task = 0; task < 2; ++task) {
      ServerDef def;
      JobDef* job = def.mutable_cluster()->add_job();
      job->set_name("worker");
      (*job->mutable_tasks())[task] = "127.0.0.1:0";
      def.set_job_name("worker");
      def.set_task_index(task);
      GrpcServerOptions options;
      options.complete_cluster_later = true;
      options.security = security;
      SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<GrpcServer> server, GrpcServer::Create(def, options));
      ASSERT_OK(server->Start());
      servers_.push_back(std::move(server));
    }
    SL_ASSERT_OK_AND_ASSIGN(ClusterDef cluster,
                            ParseClusterSpec(absl::StrCat("worker=", servers_[0]->address(), ",",
                                                          servers_[1]->address())));
    for (auto& server : servers_) ASSERT_OK(server->CompleteCluster(cluster));
    // A channel that presents nothing.
    bare_ = grpc::CreateChannel(servers_[0]->address(), grpc::InsecureChannelCredentials());
  }

  // Every method of both services, called with `secret` ("" presents none); their codes.
  std::vector<std::pair<std::string, grpc::StatusCode>> CallEverything(const std::string& secret) {
    auto master = ::tensorflow::grpc::MasterService::NewStub(bare_);
    auto worker = ::tensorflow::grpc::WorkerService::NewStub(bare_);
    std::vector<std::pair<std::string, grpc::StatusCode>> codes;
    auto call = [&](const char* name, auto&& method) {
      grpc::ClientContext context;
      if (!secret.empty()) context.AddMetadata(kClusterSecretMetadataKey, secret);
      SetTimeout(&context, absl::Seconds(30));
      codes.emplace_back(name, method(&context).error_code());
    };
#define SL_CALL(stub, Method)                                             \
  call(#Method, [&](grpc::ClientContext* context) {                       \
    rpc::Method##Request request;                                         \
    rpc::Method##Response response;                                       \
    return stub->Method(context, request, &response);                     \
  })
    SL_CALL(master, CreateSession);
    SL_CALL(master, ExtendSession);
    SL_CALL(master, RunStep);
    SL_CALL(master, CloseSession);
    SL_CALL(master, ListDevices);
    SL_CALL(master, Reset);
    SL_CALL(worker, GetStatus);
    SL_CALL(worker, CreateWorkerSession);
    SL_CALL(worker, DeleteWorkerSession);
    SL_CALL(worker, RegisterGraph);
    SL_CALL(worker, DeregisterGraph);
    SL_CALL(worker, RunGraph);
    SL_CALL(worker, CleanupGraph);
    SL_CALL(worker, CleanupAll);
    SL_CALL(worker, RecvTensor);
#undef SL_CALL
    return codes;
  }

  std::vector<std::unique_ptr<GrpcServer>> servers_;
  std::shared_ptr<grpc::Channel> bare_;
};

TEST_F(GrpcSecurityTest, EveryMethodRefusesCallsWithoutTheSecret) {
  for (const std::string secret : {"", "0123456789abcdef-a-wrong-secret", "0123456789abcdef"}) {
    auto codes = CallEverything(secret);
    ASSERT_EQ(codes.size(), 15u);
    for (const auto& [method, code] : codes) {
      EXPECT_EQ(code, grpc::StatusCode::UNAUTHENTICATED)
          << method << " answered code " << code << " to secret '" << secret << "'";
    }
  }
}

TEST_F(GrpcSecurityTest, CallsWithTheSecretGetThrough) {
  auto codes = CallEverything(kSecret);
  for (const auto& [method, code] : codes) {
    EXPECT_NE(code, grpc::StatusCode::UNAUTHENTICATED) << method;
  }
  // Through the Session API: this process's channels present the secret the servers set, and
  // task 0 fetches `c` from task 1 over its own authenticated channel.
  SessionOptions options;
  options.target = absl::StrCat("grpc://", servers_[0]->address());
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kAcrossTasks, &graph));
  ASSERT_OK(session->Create(graph));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {"n"}, {}, &out));
  EXPECT_EQ(out[0].flat<float>()[0], -3.0f);
}

TEST(GrpcSecurityFilesTest, SecretFilesMustHoldEnoughBytes) {
  const std::string dir = ::testing::TempDir();
  const std::string short_file = dir + "/short_secret", good_file = dir + "/good_secret";
  std::ofstream(short_file) << "abc\n";
  std::ofstream(good_file) << "0123456789abcdefXYZ\n";
  absl::Status s = ReadSecretFile(short_file).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("at least 16"));
  SL_ASSERT_OK_AND_ASSIGN(std::string secret, ReadSecretFile(good_file));
  EXPECT_EQ(secret, "0123456789abcdefXYZ");  // Without the newline.
  EXPECT_EQ(ReadSecretFile(dir + "/missing").status().code(), absl::StatusCode::kNotFound);

  GrpcSecurity tls;
  EXPECT_EQ(LoadTls(good_file, "", good_file, &tls).code(), absl::StatusCode::kInvalidArgument);

  // A FIFO (or a directory) named as the secret is refused at once instead of blocking start.
  const std::string fifo = dir + "/secret_fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadSecretFile(fifo).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadSecretFile(dir).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
