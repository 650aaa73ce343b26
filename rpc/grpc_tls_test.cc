// TLS with client certificates: a client whose certificate the cluster's CA signed gets
// through; one without TLS, without a certificate or with another CA's does not.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
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

}  // namespace
}  // namespace sluice
