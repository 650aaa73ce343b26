// MasterService requests, in process: the first byte picks the method, the rest parses as
// its request, which goes through gRPC's in-process channel to GrpcMasterService over a
// Master with one local worker. State persists between inputs, so one input can create a
// session and a later one extend, run or close it: requests name the last session created
// unless the selector's high bit says to keep the handle they carry.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz/service_fuzz.h"
#include "master/master.h"
#include "master/worker_cache.h"
#include "proto/master_service.grpc.pb.h"
#include "rpc/grpc_master_service.h"
#include "worker/worker.h"

namespace sluice {
namespace {

// Bounds on one input's work: a step's own timeout, and the call's deadline above it.
constexpr int64_t kStepTimeoutMs = 1000;
constexpr auto kCallDeadline = std::chrono::milliseconds(3000);

MasterOptions BoundedMasterOptions() {
  MasterOptions options;
  options.max_sessions = 16;
  return options;
}

struct Fixture {
  Fixture()
      : worker(WorkerOptions{.job = "localhost", .task = 0, .num_cpu_devices = 2,
                             .inter_op_threads = 1, .intra_op_threads = 1}),
        master(&cache, BoundedMasterOptions()),
        service(&master, worker.task_name()) {
    cache.Add(worker.task_name(), &worker);
    server = fuzz::StartInProcessServer(&service);
    stub = tensorflow::grpc::MasterService::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  }

  Worker worker;
  LocalWorkerCache cache;
  Master master;
  GrpcMasterService service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<tensorflow::grpc::MasterService::Stub> stub;
  std::string last_handle;
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
  const int method = (data[0] & 0x7f) % 6;
  ++data;
  --size;
  auto stub = f.stub.get();
  switch (method) {
    case 0:
      CallWithParsedRequest<rpc::CreateSessionRequest, rpc::CreateSessionResponse>(
          "CreateSession", data, size, kCallDeadline, [&](auto* context, auto* req, auto* resp) {
            const int64_t timeout = req->config().operation_timeout_in_ms();
            if (timeout <= 0 || timeout > kStepTimeoutMs) {
              req->mutable_config()->set_operation_timeout_in_ms(kStepTimeoutMs);
            }
            grpc::Status s = stub->CreateSession(context, *req, resp);
            if (s.ok()) f.last_handle = resp->session_handle();
            if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) f.master.Reset().IgnoreError();
            return s;
          });
      break;
    case 1:
      CallWithParsedRequest<rpc::ExtendSessionRequest, rpc::ExtendSessionResponse>(
          "ExtendSession", data, size, kCallDeadline, [&](auto* context, auto* req, auto* resp) {
            if (!keep_handle) req->set_session_handle(f.last_handle);
            return stub->ExtendSession(context, *req, resp);
          });
      break;
    case 2:
      CallWithParsedRequest<rpc::RunStepRequest, rpc::RunStepResponse>(
          "RunStep", data, size, kCallDeadline, [&](auto* context, auto* req, auto* resp) {
            if (!keep_handle) req->set_session_handle(f.last_handle);
            const int64_t timeout = req->options().timeout_in_ms();
            if (timeout <= 0 || timeout > kStepTimeoutMs) req->mutable_options()->set_timeout_in_ms(kStepTimeoutMs);
            grpc::Status s = stub->RunStep(context, *req, resp);
            if (s.ok() && resp->tensor_size() != req->fetch_size()) {
              std::fprintf(stderr, "master_service_fuzzer: RunStep returned %d tensors for %d fetches\n",
                           resp->tensor_size(), req->fetch_size());
              std::abort();
            }
            return s;
          });
      break;
    case 3:
      CallWithParsedRequest<rpc::CloseSessionRequest, rpc::CloseSessionResponse>(
          "CloseSession", data, size, kCallDeadline, [&](auto* context, auto* req, auto* resp) {
            if (!keep_handle) req->set_session_handle(f.last_handle);
            return stub->CloseSession(context, *req, resp);
          });
      break;
    case 4:
      CallWithParsedRequest<rpc::ListDevicesRequest, rpc::ListDevicesResponse>(
          "ListDevices", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->ListDevices(context, *req, resp); });
      break;
    default:
      CallWithParsedRequest<rpc::ResetRequest, rpc::ResetResponse>(
          "Reset", data, size, kCallDeadline,
          [&](auto* context, auto* req, auto* resp) { return stub->Reset(context, *req, resp); });
      break;
  }
  return 0;
}
