// WorkerService requests, in process: the first byte picks the method, the rest parses as
// its request, which goes through gRPC's in-process channel to GrpcWorkerService over a
// Worker. State persists between inputs: graphs registered by one input are run or
// deregistered by later ones (requests name the last graph registered unless the selector's
// high bit says to keep the handle they carry), and steps stay until cleaned up.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "proto/worker_service.grpc.pb.h"
#include "rpc/grpc_util.h"
#include "rpc/grpc_worker_service.h"
#include "worker/worker.h"

namespace sluice {
namespace {

// Small chunks, so that RecvTensor's chunked answers are reached by small tensors.
constexpr uint64_t kChunkBytes = 1 << 12;
// A step is cancelled at the call's deadline; a RecvTensor whose tensor never comes waits
// for less.
constexpr auto kRunGraphDeadline = std::chrono::milliseconds(1000);
constexpr auto kRecvTensorDeadline = std::chrono::milliseconds(100);
constexpr auto kCallDeadline = std::chrono::milliseconds(2000);

struct Fixture {
  Fixture()
      : worker(WorkerOptions{.job = "localhost", .task = 0, .num_cpu_devices = 2,
                             .inter_op_threads = 1, .intra_op_threads = 1}),
        service(&worker, kChunkBytes) {
    grpc::ServerBuilder builder;
    ConfigureGrpcServer(&builder);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    stub = tensorflow::grpc::WorkerService::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  }

  Worker worker;
  GrpcWorkerService service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<tensorflow::grpc::WorkerService::Stub> stub;
  std::string last_graph;
};

// Never destroyed: the process ends under libFuzzer without a clean shutdown.
Fixture& GetFixture() {
  static Fixture* fixture = new Fixture;
  return *fixture;
}

void CheckStatus(const char* method, const grpc::Status& s) {
  if (!s.ok() && s.error_message().empty()) {
    std::fprintf(stderr, "worker_service_fuzzer: %s failed with code %d and no message\n", method,
                 static_cast<int>(s.error_code()));
    std::abort();
  }
}

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds deadline) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + deadline);
  return context;
}

template <typename Request>
bool Parse(const uint8_t* data, size_t size, Request* request) {
  return request->ParseFromArray(data, static_cast<int>(size));
}

}  // namespace
}  // namespace sluice

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;  // NOLINT: a file of its own.
  if (size == 0) return 0;
  Fixture& f = GetFixture();
  const bool keep_handle = (data[0] & 0x80) != 0;
  const int method = (data[0] & 0x7f) % 9;
  ++data;
  --size;
  switch (method) {
    case 0: {
      rpc::GetStatusRequest req;
      rpc::GetStatusResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("GetStatus", f.stub->GetStatus(Context(kCallDeadline).get(), req, &resp));
      break;
    }
    case 1: {
      rpc::CreateWorkerSessionRequest req;
      rpc::CreateWorkerSessionResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("CreateWorkerSession", f.stub->CreateWorkerSession(Context(kCallDeadline).get(), req, &resp));
      break;
    }
    case 2: {
      rpc::DeleteWorkerSessionRequest req;
      rpc::DeleteWorkerSessionResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("DeleteWorkerSession", f.stub->DeleteWorkerSession(Context(kCallDeadline).get(), req, &resp));
      break;
    }
    case 3: {
      rpc::RegisterGraphRequest req;
      rpc::RegisterGraphResponse resp;
      if (!Parse(data, size, &req)) return 0;
      grpc::Status s = f.stub->RegisterGraph(Context(kCallDeadline).get(), req, &resp);
      CheckStatus("RegisterGraph", s);
      if (s.ok()) f.last_graph = resp.graph_handle();
      break;
    }
    case 4: {
      rpc::DeregisterGraphRequest req;
      rpc::DeregisterGraphResponse resp;
      if (!Parse(data, size, &req)) return 0;
      if (!keep_handle) req.set_graph_handle(f.last_graph);
      CheckStatus("DeregisterGraph", f.stub->DeregisterGraph(Context(kCallDeadline).get(), req, &resp));
      break;
    }
    case 5: {
      rpc::RunGraphRequest req;
      rpc::RunGraphResponse resp;
      if (!Parse(data, size, &req)) return 0;
      if (!keep_handle) req.set_graph_handle(f.last_graph);
      CheckStatus("RunGraph", f.stub->RunGraph(Context(kRunGraphDeadline).get(), req, &resp));
      break;
    }
    case 6: {
      rpc::CleanupGraphRequest req;
      rpc::CleanupGraphResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("CleanupGraph", f.stub->CleanupGraph(Context(kCallDeadline).get(), req, &resp));
      break;
    }
    case 7: {
      rpc::CleanupAllRequest req;
      rpc::CleanupAllResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("CleanupAll", f.stub->CleanupAll(Context(kCallDeadline).get(), req, &resp));
      break;
    }
    default: {
      rpc::RecvTensorRequest req;
      rpc::RecvTensorResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("RecvTensor", f.stub->RecvTensor(Context(kRecvTensorDeadline).get(), req, &resp));
      break;
    }
  }
  return 0;
}
