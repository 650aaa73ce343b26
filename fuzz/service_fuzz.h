// What the gRPC service fuzzers share: their service on an in-process server, and one call per
// input whose request is the input's bytes.
//
//   auto server = StartInProcessServer(&service);
//   auto stub = tensorflow::grpc::WorkerService::NewStub(server->InProcessChannel({}));
//   CallWithParsedRequest<rpc::GetStatusRequest, rpc::GetStatusResponse>(
//       "GetStatus", data, size, kDeadline,
//       [&](auto* context, auto* request, auto* response) { return stub->GetStatus(context, *request, response); });
#ifndef SLUICE_FUZZ_SERVICE_FUZZ_H_
#define SLUICE_FUZZ_SERVICE_FUZZ_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "rpc/grpc_util.h"

namespace sluice::fuzz {

// `service` on a server that listens on no port: clients reach it by its in-process channel.
inline std::unique_ptr<grpc::Server> StartInProcessServer(grpc::Service* service) {
  grpc::ServerBuilder builder;
  ConfigureGrpcServer(&builder);
  builder.RegisterService(service);
  return builder.BuildAndStart();
}

// Parses `data` as a Request; if it parses, runs call(context, &request, &response) with a
// context that ends at `deadline`. `call` may change the request before calling and read the
// response after. A call that fails without saying why is a finding: the process aborts.
template <typename Request, typename Response, typename Call>
void CallWithParsedRequest(const char* method, const uint8_t* data, size_t size,
                           std::chrono::milliseconds deadline, Call&& call) {
  Request request;
  Response response;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  const grpc::Status status = call(&context, &request, &response);
  if (!status.ok() && status.error_message().empty()) {
    std::fprintf(stderr, "service fuzzer: %s failed with code %d and no message\n", method,
                 static_cast<int>(status.error_code()));
    std::abort();
  }
}

}  // namespace sluice::fuzz

#endif  // SLUICE_FUZZ_SERVICE_FUZZ_H_
