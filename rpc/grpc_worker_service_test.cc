// RecvTensor between a GrpcWorker client and a GrpcWorkerService over loopback: the gRPC path
// (whole and chunked), the same-host path, its fallback, and what each leaves behind.
#include "rpc/grpc_worker_service.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "framework/rendezvous.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"
#include "rpc/grpc_util.h"
#include "rpc/grpc_worker.h"
#include "rpc/same_host_transfer.h"
#include "rpc/tensor_coding.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kChunkBytes = 1 << 20;
constexpr char kDst[] = "/job:worker/replica:0/task:0/device:CPU:0";

Tensor Iota(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  std::iota(t.flat<float>().begin(), t.flat<float>().end(), 0.25f);
  return t;
}

class GrpcWorkerServiceTest : public ::testing::Test {
 protected:
  GrpcWorkerServiceTest()
      : worker_(WorkerOptions{.job = "worker", .task = 1}), service_(&worker_, kChunkBytes) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    ConfigureGrpcServer(&builder);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    address_ = absl::StrCat("127.0.0.1:", port);
    std::vector<DeviceAttributes> devices;
    EXPECT_OK(worker_.GetStatus(&devices));
    src_ = devices[0];
  }
  ~GrpcWorkerServiceTest() override { server_->Shutdown(); }

  // Puts `t` in step `step` under a fresh key, which it returns.
  std::string Send(int64_t step, const Tensor& t) {
    const std::string key = Rendezvous::CreateKey(src_.name(), src_.incarnation(), kDst,
                                                  absl::StrCat("t", next_name_++, ":0"), FrameAndIter{});
    EXPECT_OK(worker_.StepRendezvous(step)->Send(*Rendezvous::ParseKey(key), t));
    return key;
  }

  absl::Status Recv(GrpcWorker* client, int64_t step, const std::string& key, Tensor* out) {
    RecvTensorRequest request{step, key, 0};
    RecvTensorResponse response;
    absl::Notification done;
    absl::Status status;
    client->RecvTensorAsync(&request, &response, [&](const absl::Status& s) {
      status = s;
      done.Notify();
    });
    done.WaitForNotification();
    *out = response.tensor;
    return status;
  }

  std::unique_ptr<GrpcWorker> Client(bool same_host) {
    GrpcWorkerOptions options;
    options.same_host_recv_tensor = same_host;
    options.peer_address = address_;
    return std::make_unique<GrpcWorker>(worker_.task_name(), NewGrpcChannel(address_), options);
  }

  // One raw RecvTensor call; the answer's bytes in `answer`.
  grpc::Status Call(const rpc::RecvTensorRequest& request, grpc::ByteBuffer* answer) {
    grpc::GenericStub stub(NewGrpcChannel(address_));
    grpc::ClientContext context;
    grpc::Slice slice(request.SerializeAsString());
    grpc::ByteBuffer bytes(&slice, 1);
    absl::Notification done;
    grpc::Status status;
    stub.UnaryCall(&context, "/tensorflow.grpc.WorkerService/RecvTensor", grpc::StubOptions(), &bytes,
                   answer, [&](grpc::Status s) {
                     status = s;
                     done.Notify();
                   });
    done.WaitForNotification();
    return status;
  }

  void CleanupGraph(int64_t step) {
    grpc::ServerContext context;
    rpc::CleanupGraphRequest request;
    request.set_step_id(step);
    rpc::CleanupGraphResponse response;
    ASSERT_OK(service_.CleanupGraph(&context, &request, &response));
  }

  Worker worker_;
  GrpcWorkerService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  DeviceAttributes src_;
  int next_name_ = 0;
};

TEST_F(GrpcWorkerServiceTest, TensorsCrossByEitherPath) {
  // Small (one answer), big (chunks over gRPC; copied from memory on the same host).
  for (int64_t n : {int64_t{100}, int64_t{3 << 20} / 4 + 3}) {
    for (bool same_host : {false, true}) {
      auto client = Client(same_host);
      const Tensor t = Iota(n);
      const std::string key = Send(7, t);
      Tensor got;
      absl::Status s = Recv(client.get(), 7, key, &got);
      ASSERT_OK(s);
      ASSERT_EQ(got.AllocatedBytes(), t.AllocatedBytes());
      EXPECT_EQ(0, std::memcmp(got.raw_data(), t.raw_data(), t.AllocatedBytes()));
      EXPECT_EQ(service_.NumTransfersUnderWay(), 0u) << "n=" << n << " same_host=" << same_host;
    }
  }
}

TEST_F(GrpcWorkerServiceTest, SameHostAnswersOnlyTheSameHostWithBigTensors) {
  const Tensor big = Iota(kSameHostMinBytes / 4);
  rpc::RecvTensorRequest request;
  request.set_step_id(3);
  for (const std::string& id : {std::string("another machine"), std::string()}) {
    request.set_rendezvous_key(Send(3, big));
    request.set_same_host_id(id);
    grpc::ByteBuffer answer;
    ASSERT_OK(Call(request, &answer));
    RecvTensorDecoder decoder;
    ASSERT_OK(decoder.Add(answer));
    EXPECT_EQ(decoder.same_host_source(), nullptr);
  }
  request.set_rendezvous_key(Send(3, Iota(kSameHostMinBytes / 4 - 1)));
  request.set_same_host_id(SameHostId());
  grpc::ByteBuffer answer;
  ASSERT_OK(Call(request, &answer));
  RecvTensorDecoder small;
  ASSERT_OK(small.Add(answer));
  EXPECT_EQ(small.same_host_source(), nullptr);
  EXPECT_TRUE(small.done());

  request.set_rendezvous_key(Send(3, big));
  ASSERT_OK(Call(request, &answer));
  RecvTensorDecoder decoder;
  ASSERT_OK(decoder.Add(answer));
  ASSERT_NE(decoder.same_host_source(), nullptr);
  EXPECT_EQ(decoder.same_host_source()->pid(), getpid());
  EXPECT_EQ(decoder.same_host_source()->address(), reinterpret_cast<uint64_t>(big.raw_data()));
  EXPECT_EQ(service_.NumTransfersUnderWay(), 1u);
}

TEST_F(GrpcWorkerServiceTest, ALeaseEndsWithItsReleaseOrItsStep) {
  rpc::RecvTensorRequest request;
  request.set_step_id(5);
  request.set_same_host_id(SameHostId());
  request.set_rendezvous_key(Send(5, Iota(kSameHostMinBytes)));
  grpc::ByteBuffer answer;
  ASSERT_OK(Call(request, &answer));
  RecvTensorDecoder decoder;
  ASSERT_OK(decoder.Add(answer));
  ASSERT_NE(decoder.same_host_source(), nullptr);
  const uint64_t lease = decoder.same_host_source()->lease();

  rpc::RecvTensorRequest release = request;
  release.set_same_host_action(rpc::RecvTensorRequest::SAME_HOST_RELEASE);
  release.set_same_host_lease(lease + 1);  // Not this transfer's.
  grpc::Status s = Call(release, &answer);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(service_.NumTransfersUnderWay(), 1u);
  release.set_same_host_lease(lease);
  EXPECT_OK(Call(release, &answer));
  EXPECT_EQ(service_.NumTransfersUnderWay(), 0u);
  s = Call(release, &answer);  // Once only.
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  // A receiver that never releases (it died, or its step failed): CleanupGraph drops the
  // tensor, and a late release says the copy cannot be trusted.
  const std::string abandoned = Send(5, Iota(kSameHostMinBytes));
  request.set_rendezvous_key(abandoned);
  ASSERT_OK(Call(request, &answer));
  RecvTensorDecoder second;
  ASSERT_OK(second.Add(answer));
  ASSERT_NE(second.same_host_source(), nullptr);
  request.set_rendezvous_key(Send(6, Iota(kSameHostMinBytes)));
  request.set_step_id(6);
  ASSERT_OK(Call(request, &answer));
  EXPECT_EQ(service_.NumTransfersUnderWay(), 2u);
  CleanupGraph(5);
  EXPECT_EQ(service_.NumTransfersUnderWay(), 1u);  // Step 6's stays.
  release = request;
  release.set_step_id(5);
  release.set_rendezvous_key(abandoned);
  release.set_same_host_action(rpc::RecvTensorRequest::SAME_HOST_RELEASE);
  release.set_same_host_lease(second.same_host_source()->lease());
  s = Call(release, &answer);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("cleaned up"));
  CleanupGraph(6);
  EXPECT_EQ(service_.NumTransfersUnderWay(), 0u);
}

TEST_F(GrpcWorkerServiceTest, AReceiverThatCannotReadGetsTheBytesOverGrpc) {
  GrpcWorkerOptions options;
  options.same_host_recv_tensor = true;
  int reads = 0;
  options.same_host_read = [&](int64_t, uint64_t, void*, uint64_t) {
    ++reads;
    return absl::PermissionDeniedError("not allowed here");
  };
  options.peer_address = address_;
  GrpcWorker client(worker_.task_name(), NewGrpcChannel(address_), options);
  for (int i = 0; i < 2; ++i) {
    const Tensor t = Iota((3 << 20) / 4);  // Chunked over gRPC once the read fails.
    const std::string key = Send(9, t);
    Tensor got;
    absl::Status s = Recv(&client, 9, key, &got);
    ASSERT_OK(s);
    ASSERT_EQ(got.AllocatedBytes(), t.AllocatedBytes());
    EXPECT_EQ(0, std::memcmp(got.raw_data(), t.raw_data(), t.AllocatedBytes()));
    EXPECT_EQ(service_.NumTransfersUnderWay(), 0u);
  }
  EXPECT_EQ(reads, 1) << "a refused read is not tried again";
}

TEST_F(GrpcWorkerServiceTest, ACopyTheSenderDroppedMeanwhileIsAnError) {
  GrpcWorkerOptions options;
  options.same_host_recv_tensor = true;
  options.same_host_read = [&](int64_t pid, uint64_t address, void* dst, uint64_t bytes) {
    CleanupGraph(11);  // The step ends on the sender while the receiver copies.
    return ReadFromSameHost(pid, address, dst, bytes);
  };
  options.peer_address = address_;
  GrpcWorker client(worker_.task_name(), NewGrpcChannel(address_), options);
  const std::string key = Send(11, Iota(kSameHostMinBytes));
  Tensor got;
  absl::Status s = Recv(&client, 11, key, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("cleaned up"));
  EXPECT_EQ(service_.NumTransfersUnderWay(), 0u);
}

// An answer names a pid and an address in it; a process that took over a task's address could
// name any process of the user. The receiver reads only from the process the kernel says listens
// on the task's address: here none does, so the pid in the answer (this process, which holds
// the tensor) is not read, and the bytes come over gRPC.
TEST_F(GrpcWorkerServiceTest, SameHostReadsOnlyFromTheProcessListeningOnTheTasksAddress) {
  EXPECT_OK(VerifySameHostListener(getpid(), address_));
  EXPECT_EQ(VerifySameHostListener(getppid(), address_).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(VerifySameHostListener(getpid(), "127.0.0.1").code(), absl::StatusCode::kPermissionDenied);

  GrpcWorkerOptions options;
  options.same_host_recv_tensor = true;
  int reads = 0;
  options.same_host_read = [&](int64_t pid, uint64_t address, void* dst, uint64_t bytes) {
    ++reads;
    return ReadFromSameHost(pid, address, dst, bytes);
  };
  options.peer_address = "127.0.0.1:1";  // Where the client believes the task is: nobody there.
  GrpcWorker client(worker_.task_name(), NewGrpcChannel(address_), options);
  const Tensor t = Iota(kSameHostMinBytes);
  const std::string key = Send(12, t);
  Tensor got;
  ASSERT_OK(Recv(&client, 12, key, &got));
  ASSERT_EQ(got.AllocatedBytes(), t.AllocatedBytes());
  EXPECT_EQ(0, std::memcmp(got.raw_data(), t.raw_data(), t.AllocatedBytes()));
  EXPECT_EQ(reads, 0) << "read the memory of a process that does not listen on the task's address";

  // The task's real address: the kernel confirms this process listens there, and the bytes
  // are copied from its memory.
  options.peer_address = address_;
  GrpcWorker verified(worker_.task_name(), NewGrpcChannel(address_), options);
  const std::string key2 = Send(13, t);
  ASSERT_OK(Recv(&verified, 13, key2, &got));
  EXPECT_EQ(0, std::memcmp(got.raw_data(), t.raw_data(), t.AllocatedBytes()));
  EXPECT_EQ(reads, 1);
}

}  // namespace
}  // namespace sluice
