// WorkerService requests, in process: the first byte picks the method, the rest parses as
// its request, which goes through gRPC's in-process channel to GrpcWorkerService over a
// Worker. State persists between inputs: graphs registered by one input are run or
// deregistered by later ones (requests name the last graph registered unless the selector's
// high bit says to keep the handle they carry), and steps stay until cleaned up.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz/service_fuzz.h"
#include "proto/worker_service.grpc.pb.h"
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
    server = fuzz::StartInProcessServer(&service);
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

}  // namespace
}  // namespace sluice

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;  // NOLINT: a file of its own.
  using fuzz::CallWithParsedRequest;
  if (size == 0) return 0;
  Fixture& f = GetFixture();
  const bool keep_handle = (data[0] & 0x80) != 0;
  const int method = (data[0] & 0x7f) % 9;
  ++data;
  --size;
  auto stub = f.stub.get();
  switch (method) {
    case 0:
      CallWithParsedRequest<rpc::GetStatusRequest, rpc::GetStatusResponse>(
          "GetStatus", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->GetStatus(context, *req, resp); });
      break;
    case 1:
      CallWithParsedRequest<rpc::CreateWorkerSessionRequest, rpc::CreateWorkerSessionResponse>(
          "CreateWorkerSession", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->CreateWorkerSession(context, *req, resp); });
      break;
    case 2:
      CallWithParsedRequest<rpc::DeleteWorkerSessionRequest, rpc::DeleteWorkerSessionResponse>(
          "DeleteWorkerSession", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->DeleteWorkerSession(context, *req, resp); });
      break;
    case 3:
      CallWithParsedRequest<rpc::RegisterGraphRequest, rpc::RegisterGraphResponse>(
          "RegisterGraph", data, size, kCallDeadline, [&](auto* context, auto* req, auto* resp) {
            grpc::Status s = stub->RegisterGraph(context, *req, resp);
            if (s.ok()) f.last_graph = resp->graph_handle();
            return s;
          });
      break;
    case 4:
      CallWithParsedRequest<rpc::DeregisterGraphRequest, rpc::DeregisterGraphResponse>(
          "DeregisterGraph", data, size, kCallDeadline, [&](auto* context, auto* req, auto* resp) {
            if (!keep_handle) req->set_graph_handle(f.last_graph);
            return stub->DeregisterGraph(context, *req, resp);
          });
      break;
    case 5:
      CallWithParsedRequest<rpc::RunGraphRequest, rpc::RunGraphResponse>(
          "RunGraph", data, size, kRunGraphDeadline, [&](auto* context, auto* req, auto* resp) {
            if (!keep_handle) req->set_graph_handle(f.last_graph);
            return stub->RunGraph(context, *req, resp);
          });
      break;
    case 6:
      CallWithParsedRequest<rpc::CleanupGraphRequest, rpc::CleanupGraphResponse>(
          "CleanupGraph", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->CleanupGraph(context, *req, resp); });
      break;
    case 7:
      CallWithParsedRequest<rpc::CleanupAllRequest, rpc::CleanupAllResponse>(
          "CleanupAll", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->CleanupAll(context, *req, resp); });
      break;
    default:
      CallWithParsedRequest<rpc::RecvTensorRequest, rpc::RecvTensorResponse>(
          "RecvTensor", data, size, kRecvTensorDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->RecvTensor(context, *req, resp); });
      break;
  }
  return 0;
}
