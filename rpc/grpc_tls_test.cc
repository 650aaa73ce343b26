// TLS with client certificates: a client whose certificate the cluster's CA signed gets
// through; one without TLS, without a certificate or with another CA's does not.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/tensor.h"
#include "framework/status_matchers.h"
#include "gtest/gtest.h"
#include "proto/master_service.grpc.pb.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_util.h"

namespace sluice {
namespace {

class GrpcTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir();
    const std::string script =
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/sluice/rpc/grpc_tls_test.sh");
    ASSERT_EQ(std::system(absl::StrCat("bash ", script, " ", dir_).c_str()), 0)
        << "openssl could not write the test certificates";
    GrpcSecurity security;
    ASSERT_OK(LoadTls(File("server.pem"), File("server.key"), File("ca.pem"), &security));
    ServerDef def;
    JobDef* job = def.mutable_cluster()->add_job();
    job->set_name("worker");
    (*job->mutable_tasks())[0] = "127.0.0.1:0";
    def.set_job_name("worker");
    def.set_task_index(0);
    GrpcServerOptions options;
    options.security = security;
    SL_ASSERT_OK_AND_ASSIGN(server_, GrpcServer::Create(def, options));
    ASSERT_OK(server_->Start());
  }

  std::string File(const std::string& name) const { return dir_ + "/" + name; }

  grpc::StatusCode ListDevices(std::shared_ptr<grpc::ChannelCredentials> credentials) {
    auto channel = grpc::CreateChannel(server_->address(), credentials);
    auto stub = ::tensorflow::grpc::MasterService::NewStub(channel);
    grpc::ClientContext context;
    SetTimeout(&context, absl::Seconds(20));
    rpc::ListDevicesRequest request;
    rpc::ListDevicesResponse response;
    return stub->ListDevices(&context, request, &response).error_code();
  }

  std::string dir_;
  std::unique_ptr<GrpcServer> server_;
};

TEST_F(GrpcTlsTest, OnlyClientsWithTheClustersCertificatesGetThrough) {
  GrpcSecurity client;
  ASSERT_OK(LoadTls(File("client.pem"), File("client.key"), File("ca.pem"), &client));
  EXPECT_EQ(ListDevices(ChannelCredentials(client)), grpc::StatusCode::OK);

  EXPECT_NE(ListDevices(grpc::InsecureChannelCredentials()), grpc::StatusCode::OK);

  // TLS, but no client certificate.
  grpc::SslCredentialsOptions server_only;
  server_only.pem_root_certs = client.tls_ca_pem;
  EXPECT_NE(ListDevices(grpc::SslCredentials(server_only)), grpc::StatusCode::OK);

  GrpcSecurity stranger;
  ASSERT_OK(LoadTls(File("stranger.pem"), File("stranger.key"), File("ca.pem"), &stranger));
  EXPECT_NE(ListDevices(ChannelCredentials(stranger)), grpc::StatusCode::OK);
}

// Sessions belong to the certificate that created them. Before, any client could run, close
// or (with Reset) close every session, its own or not.
TEST_F(GrpcTlsTest, AClientReachesOnlyItsOwnSessions) {
  GrpcSecurity client, other;
  ASSERT_OK(LoadTls(File("client.pem"), File("client.key"), File("ca.pem"), &client));
  ASSERT_OK(LoadTls(File("other.pem"), File("other.key"), File("ca.pem"), &other));
  auto stub_of = [&](const GrpcSecurity& security) {
    return ::tensorflow::grpc::MasterService::NewStub(
        grpc::CreateChannel(server_->address(), ChannelCredentials(security)));
  };
  auto mine = stub_of(client), theirs = stub_of(other);
  rpc::CreateSessionRequest create;
  NodeDef* c = create.mutable_graph_def()->add_node();
  c->set_name("c");
  c->set_op("Const");
  (*c->mutable_attr())["dtype"].set_type(DT_FLOAT);
  Tensor::Scalar<float>(7.0f).AsProtoTensorContent((*c->mutable_attr())["value"].mutable_tensor());
  rpc::CreateSessionResponse created;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(mine->CreateSession(&context, create, &created).ok());
  }
  auto run = [&](::tensorflow::grpc::MasterService::Stub* stub) {
    rpc::RunStepRequest request;
    request.set_session_handle(created.session_handle());
    request.add_fetch("c:0");
    rpc::RunStepResponse response;
    grpc::ClientContext context;
    SetTimeout(&context, absl::Seconds(20));
    return stub->RunStep(&context, request, &response).error_code();
  };
  EXPECT_EQ(run(mine.get()), grpc::StatusCode::OK);
  EXPECT_EQ(run(theirs.get()), grpc::StatusCode::ABORTED);  // As for an unknown handle.
  {
    rpc::CloseSessionRequest close;
    close.set_session_handle(created.session_handle());
    rpc::CloseSessionResponse closed;
    grpc::ClientContext context;
    EXPECT_EQ(theirs->CloseSession(&context, close, &closed).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    rpc::ResetRequest reset;
    rpc::ResetResponse done;
    grpc::ClientContext context;
    EXPECT_TRUE(theirs->Reset(&context, reset, &done).ok());  // Closes the other's sessions only.
  }
  EXPECT_EQ(run(mine.get()), grpc::StatusCode::OK);
  {
    rpc::ResetRequest reset;
    rpc::ResetResponse done;
    grpc::ClientContext context;
    EXPECT_TRUE(mine->Reset(&context, reset, &done).ok());
  }
  EXPECT_EQ(run(mine.get()), grpc::StatusCode::ABORTED);
}

}  // namespace
}  // namespace sluice
