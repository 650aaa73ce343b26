// MasterService requests, in process: the first byte picks the method, the rest parses as
// its request, which goes through gRPC's in-process channel to GrpcMasterService over a
// Master with one local worker. State persists between inputs, so one input can create a
// session and a later one extend, run or close it: requests name the last session created
// unless the selector's high bit says to keep the handle they carry.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "master/master.h"
#include "master/worker_cache.h"
#include "proto/master_service.grpc.pb.h"
#include "rpc/grpc_master_service.h"
#include "rpc/grpc_util.h"
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
    grpc::ServerBuilder builder;
    ConfigureGrpcServer(&builder);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
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

void CheckStatus(const char* method, const grpc::Status& s) {
  if (!s.ok() && s.error_message().empty()) {
    std::fprintf(stderr, "master_service_fuzzer: %s failed with code %d and no message\n", method,
                 static_cast<int>(s.error_code()));
    std::abort();
  }
}

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + kCallDeadline);
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
  const int method = (data[0] & 0x7f) % 6;
  ++data;
  --size;
  auto context = Context();
  switch (method) {
    case 0: {
      rpc::CreateSessionRequest req;
      rpc::CreateSessionResponse resp;
      if (!Parse(data, size, &req)) return 0;
      const int64_t timeout = req.config().operation_timeout_in_ms();
      if (timeout <= 0 || timeout > kStepTimeoutMs) {
        req.mutable_config()->set_operation_timeout_in_ms(kStepTimeoutMs);
      }
      grpc::Status s = f.stub->CreateSession(context.get(), req, &resp);
      CheckStatus("CreateSession", s);
      if (s.ok()) f.last_handle = resp.session_handle();
      if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) f.master.Reset().IgnoreError();
      break;
    }
    case 1: {
      rpc::ExtendSessionRequest req;
      rpc::ExtendSessionResponse resp;
      if (!Parse(data, size, &req)) return 0;
      if (!keep_handle) req.set_session_handle(f.last_handle);
      CheckStatus("ExtendSession", f.stub->ExtendSession(context.get(), req, &resp));
      break;
    }
    case 2: {
      rpc::RunStepRequest req;
      rpc::RunStepResponse resp;
      if (!Parse(data, size, &req)) return 0;
      if (!keep_handle) req.set_session_handle(f.last_handle);
      int64_t timeout = req.options().timeout_in_ms();
      if (timeout <= 0 || timeout > kStepTimeoutMs) req.mutable_options()->set_timeout_in_ms(kStepTimeoutMs);
      grpc::Status s = f.stub->RunStep(context.get(), req, &resp);
      CheckStatus("RunStep", s);
      if (s.ok() && resp.tensor_size() != req.fetch_size()) {
        std::fprintf(stderr, "master_service_fuzzer: RunStep returned %d tensors for %d fetches\n",
                     resp.tensor_size(), req.fetch_size());
        std::abort();
      }
      break;
    }
    case 3: {
      rpc::CloseSessionRequest req;
      rpc::CloseSessionResponse resp;
      if (!Parse(data, size, &req)) return 0;
      if (!keep_handle) req.set_session_handle(f.last_handle);
      CheckStatus("CloseSession", f.stub->CloseSession(context.get(), req, &resp));
      break;
    }
    case 4: {
      rpc::ListDevicesRequest req;
      rpc::ListDevicesResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("ListDevices", f.stub->ListDevices(context.get(), req, &resp));
      break;
    }
    default: {
      rpc::ResetRequest req;
      rpc::ResetResponse resp;
      if (!Parse(data, size, &req)) return 0;
      CheckStatus("Reset", f.stub->Reset(context.get(), req, &resp));
      break;
    }
  }
  return 0;
}
