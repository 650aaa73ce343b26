// Authentication: servers of a cluster with a secret speak TLS only, with certificates each
// process derives from the secret; every method of both services refuses callers without
// such a certificate, and the secret itself never leaves a process (not in metadata, not in
// the handshake), even to a squatter on a dead task's address.
#include "rpc/grpc_security.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/generic/async_generic_service.h"
#include "gtest/gtest.h"
#include "master/session.h"
#include "proto/master_service.grpc.pb.h"
#include "proto/worker_service.grpc.pb.h"
#include "rpc/cluster_spec.h"
#include "rpc/derived_tls.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_util.h"
#include "rpc/test_cluster.h"

namespace sluice {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr char kSecret[] = "0123456789abcdef-the-test-secret";
constexpr char kOtherSecret[] = "0123456789abcdef-another-secret!";
constexpr char kTask1[] = "/job:worker/replica:0/task:1";

GrpcSecurity FromSecret(const std::string& secret, const std::vector<std::string>& names = {}) {
  GrpcSecurity s;
  s.secret = secret;
  EXPECT_OK(UseTlsFromSecret(names, &s));
  return s;
}

// Records every call that reaches it, whatever the method, and answers UNIMPLEMENTED: a
// process that took a dead task's address, with TLS and a certificate of its own making, which
// accepts any client certificate.
class Squatter {
 public:
  Squatter(const std::string& address, const GrpcSecurity& own) {
    grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
    options.pem_key_cert_pairs.push_back({own.tls_key_pem, own.tls_cert_pem});
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(address, grpc::SslServerCredentials(options), &port);
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
    listening_ = server_ != nullptr && port != 0;
  }
  ~Squatter() {
    if (server_ != nullptr) server_->Shutdown();
  }
  bool listening() const { return listening_; }
  std::vector<std::string> Calls() {
    absl::MutexLock lock(&service_.mu);
    return service_.calls;
  }

 private:
  struct Service : grpc::CallbackGenericService {
    grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
      std::string call = context->method();
      for (const auto& [key, value] : context->client_metadata()) {
        call += absl::StrCat(" ", std::string(key.data(), key.size()), "=",
                             std::string(value.data(), value.size()));
      }
      {
        absl::MutexLock lock(&mu);
        calls.push_back(call);
      }
      struct Refuse : grpc::ServerGenericBidiReactor {
        Refuse() { Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "squatter")); }
        void OnDone() override { delete this; }
      };
      return new Refuse();
    }
    absl::Mutex mu;
    std::vector<std::string> calls ABSL_GUARDED_BY(mu);
  };
  Service service_;
  std::unique_ptr<grpc::Server> server_;
  bool listening_ = false;
};

// Takes a port and keeps every byte any client sends to it (no TLS, no HTTP/2: the raw
// stream), closing each connection after its first pause.
class RawRecorder {
 public:
  explicit RawRecorder(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    listening_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 16) == 0;
    if (listening_) thread_ = std::thread([this] { Serve(); });
  }
  ~RawRecorder() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  bool listening() const { return listening_; }
  int connections() const { return connections_; }
  std::string bytes() {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }

 private:
  void Serve() {
    while (!stop_) {
      const int conn = accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      ++connections_;
      timeval timeout{0, 300000};
      setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
      char buffer[65536];
      ssize_t n;
      while ((n = read(conn, buffer, sizeof(buffer))) > 0) {
        absl::MutexLock lock(&mu_);
        bytes_.append(buffer, static_cast<size_t>(n));
      }
      close(conn);
    }
  }
  int fd_ = -1;
  bool listening_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
  absl::Mutex mu_;
  std::string bytes_ ABSL_GUARDED_BY(mu_);
};

class GrpcSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GrpcServerOptions options;
    options.security.secret = kSecret;  // The servers derive their TLS from it.
    SL_ASSERT_OK_AND_ASSIGN(servers_, StartLoopbackTasks(2, options));
    SL_ASSERT_OK_AND_ASSIGN(cluster_, ParseClusterSpec(absl::StrCat(
                                          "worker=", servers_[0]->address(), ",", servers_[1]->address())));
    for (auto& server : servers_) ASSERT_OK(server->CompleteCluster(cluster_));
  }

  void TearDown() override { SetProcessGrpcSecurity(FromSecret(kSecret)); }

  // Every method of both services, called on task 0 over a channel with `credentials`; their
  // statuses. `legacy_secret` is sent the old way, in the metadata.
  std::vector<std::pair<std::string, grpc::Status>> CallEverything(
      std::shared_ptr<grpc::ChannelCredentials> credentials, const std::string& legacy_secret = "") {
    auto channel = grpc::CreateChannel(servers_[0]->address(), credentials);
    auto master = ::tensorflow::grpc::MasterService::NewStub(channel);
    auto worker = ::tensorflow::grpc::WorkerService::NewStub(channel);
    std::vector<std::pair<std::string, grpc::Status>> statuses;
    auto call = [&](const char* name, auto&& method) {
      grpc::ClientContext context;
      if (!legacy_secret.empty()) context.AddMetadata(kLegacyClusterSecretMetadataKey, legacy_secret);
      SetTimeout(&context, absl::Seconds(30));
      statuses.emplace_back(name, method(&context));
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
    return statuses;
  }

  // A session on task 0 with this process's channels presenting `client`, running kNegatedOnTask1.
  absl::Status RunAcrossTasks(const GrpcSecurity& client) {
    SetProcessGrpcSecurity(client);
    SessionOptions options;
    options.target = absl::StrCat("grpc://", servers_[0]->address());
    SL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
    GraphDef graph;
    google::protobuf::TextFormat::ParseFromString(kNegatedOnTask1, &graph);
    SL_RETURN_IF_ERROR(session->Create(graph));
    std::vector<Tensor> out;
    SL_RETURN_IF_ERROR(session->Run({{"x", Tensor::FromVector<float>({3}, TensorShape({1}))}}, {"y"}, {}, &out));
    if (out[0].flat<float>()[0] != 3.0f) return absl::InternalError(out[0].DebugString());
    return absl::OkStatus();
  }

  std::vector<std::unique_ptr<GrpcServer>> servers_;
  ClusterDef cluster_;
};

TEST_F(GrpcSecurityTest, EveryMethodRefusesCallersWithoutACertificateOfTheCluster) {
  const GrpcSecurity ours = FromSecret(kSecret), theirs = FromSecret(kOtherSecret);
  grpc::SslCredentialsOptions no_certificate;  // Trusts the server; presents nothing.
  no_certificate.pem_root_certs = ours.tls_ca_pem;
  const std::vector<std::pair<std::string, std::shared_ptr<grpc::ChannelCredentials>>> strangers = {
      {"plaintext", grpc::InsecureChannelCredentials()},
      {"another secret's certificate", ChannelCredentials(theirs)},
      {"no client certificate", grpc::SslCredentials(no_certificate)},
  };
  for (const auto& [who, credentials] : strangers) {
    auto statuses = CallEverything(credentials, /*legacy_secret=*/kSecret);
    ASSERT_EQ(statuses.size(), 15u);
    for (const auto& [method, status] : statuses) {
      // Refused by the transport: no handler ran, so no handler's code comes back.
      EXPECT_THAT(status.error_code(),
                  AnyOf(grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::UNAUTHENTICATED))
          << who << ": " << method << " answered " << status.error_message();
    }
  }
}

TEST_F(GrpcSecurityTest, CallsWithTheClustersCertificateGetThroughAndTheOldSecretHeaderDoesNot) {
  auto statuses = CallEverything(ChannelCredentials(FromSecret(kSecret)));
  for (const auto& [method, status] : statuses) {
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method << ": " << status.error_message();
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE) << method << ": " << status.error_message();
  }
  // A client of before derived TLS sends the secret itself: refused by every method, with
  // what to do.
  statuses = CallEverything(ChannelCredentials(FromSecret(kSecret)), kSecret);
  for (const auto& [method, status] : statuses) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_THAT(status.error_message(), HasSubstr("Upgrade the client")) << method;
  }
  // Through the Session API: task 0 fetches `c` from task 1 over its own channel, which
  // presents task 0's certificate.
  EXPECT_OK(RunAcrossTasks(FromSecret(kSecret)));
}

TEST_F(GrpcSecurityTest, ClientsWithAnotherSecretOrNoneGetAClearError) {
  absl::Status s = RunAcrossTasks(FromSecret(kOtherSecret));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("certificate")) << s;
  s = RunAcrossTasks(GrpcSecurity());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("SLUICE_CLUSTER_SECRET")) << s;
}

TEST_F(GrpcSecurityTest, ASquatterOnADeadTasksAddressGetsNoSecretAndNoCall) {
  SetProcessGrpcSecurity(FromSecret(kSecret));
  SessionOptions options;
  options.target = absl::StrCat("grpc://", servers_[0]->address());
  SL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kNegatedOnTask1, &graph));
  ASSERT_OK(session->Create(graph));
  std::vector<Tensor> out;
  const std::vector<std::pair<std::string, Tensor>> feed = {{"x", Tensor::FromVector<float>({3}, TensorShape({1}))}};
  ASSERT_OK(session->Run(feed, {"y"}, {}, &out));
  ASSERT_EQ(out[0].flat<float>()[0], 3.0f);

  // Task 1 dies; a process without the secret takes its address, with a certificate for that
  // address from a CA of its own, and accepts any client.
  const std::string address = servers_[1]->address();
  servers_[1]->Stop();
  {
    Squatter squatter(address, FromSecret(kOtherSecret, {"127.0.0.1"}));
    ASSERT_TRUE(squatter.listening()) << address;
    absl::Status s = session->Run(feed, {"y"}, {}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(kTask1)) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("certificate is not one of this cluster")) << s;
    EXPECT_THAT(squatter.Calls(), ::testing::IsEmpty());
  }
  // And one that records the raw bytes of every connection: TLS handshakes, no secret.
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  RawRecorder recorder(port);
  ASSERT_TRUE(recorder.listening());
  // The channel waits out its reconnect backoff before it dials again.
  for (int i = 0; i < 100 && recorder.connections() == 0; ++i) {
    EXPECT_FALSE(session->Run(feed, {"y"}, {}, &out).ok());
    absl::SleepFor(absl::Milliseconds(50));
  }
  absl::SleepFor(absl::Milliseconds(500));  // Until the recorder has read what came.
  EXPECT_GT(recorder.connections(), 0);
  const std::string bytes = recorder.bytes();
  EXPECT_GT(bytes.size(), 0u);
  EXPECT_EQ(bytes.find(kSecret), std::string::npos);
  EXPECT_EQ(bytes.find("sluice-cluster-secret"), std::string::npos);
  EXPECT_EQ(bytes.find("PRI * HTTP/2.0"), std::string::npos) << "a plaintext HTTP/2 preface";
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
