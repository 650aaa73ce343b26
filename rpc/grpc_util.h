// Small pieces shared by Sluice's gRPC clients and services: status conversion and channels.
//
//   std::shared_ptr<grpc::Channel> channel = NewGrpcChannel("127.0.0.1:2222");
//   grpc::ClientContext ctx;
//   SetTimeout(&ctx, absl::Seconds(30));
//   SL_RETURN_IF_ERROR(FromGrpcStatus(stub->GetStatus(&ctx, req, &resp)));
#ifndef SLUICE_RPC_GRPC_UTIL_H_
#define SLUICE_RPC_GRPC_UTIL_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace sluice {

// Status messages travel in HTTP/2 trailers, which peers cap at a few KiB (percent-encoded);
// longer messages are cut to this many bytes.
inline constexpr size_t kMaxGrpcStatusMessageBytes = 2048;

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// While calls are under way, a channel pings its peer this often and gives up on the
// connection (its calls fail with UNAVAILABLE) when a ping goes unanswered this long: a task
// that hangs or drops off the network fails its steps within seconds.
inline constexpr int kKeepaliveIntervalMs = 2000;
inline constexpr int kKeepaliveTimeoutMs = 3000;
// After a failed connection a channel tries again within this long (gRPC's default backoff
// grows to two minutes): a restarted task is reached again at once.
inline constexpr int kMaxReconnectBackoffMs = 1000;

// A channel to "host:port" with no message size limit either way (tensors travel in
// messages) and keepalive pings.
// It presents this process's security (ProcessGrpcSecurity), or `security`.
std::shared_ptr<grpc::Channel> NewGrpcChannel(const std::string& address);
struct GrpcSecurity;
std::shared_ptr<grpc::Channel> NewGrpcChannel(const std::string& address, const GrpcSecurity& security);

// Requests a server accepts by default: big enough for feeds of a GiB, small enough that a
// garbage or hostile message is refused (RESOURCE_EXHAUSTED) before it is parsed. Tensors
// between tasks travel in RecvTensor answers, which have no such limit.
inline constexpr int64_t kDefaultMaxRequestBytes = int64_t{1} << 30;

// Server settings to match: requests up to `max_request_bytes` (answers unlimited), and pings
// as often as channels send them.
void ConfigureGrpcServer(grpc::ServerBuilder* builder,
                         int64_t max_request_bytes = kDefaultMaxRequestBytes);

// Deadline = now + timeout (an infinite timeout sets none).
void SetTimeout(grpc::ClientContext* context, absl::Duration timeout);

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_UTIL_H_
