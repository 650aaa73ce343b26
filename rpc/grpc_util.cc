#include "rpc/grpc_util.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include <grpc/grpc.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/client_interceptor.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "rpc/grpc_security.h"

namespace sluice {
namespace {

// gRPC tears itself down when its last object goes and starts again with the next one, and
// gRPC++ does the same with the completion queue its callback API shares (made with the first
// channel or server that makes or serves a callback call, shut down with the last one). Both
// cycles race with gRPC's own callback threads: an abort in grpc_cq_internal_unref, seen about
// once in 40 runs of //rpc:grpc_cluster_test before the first hold and about once in 100 of
// //rpc:grpc_worker_service_test before the second, in processes that make and drop
// servers and channels in a row (tests; clients that open sessions one after another). So a
// Sluice process holds one reference to gRPC and, through a channel that made one callback
// call and is never destroyed, one to that completion queue, for its whole life.
void HoldCallbackCompletionQueue() {
  static auto* channel = new std::shared_ptr<grpc::Channel>(
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  grpc::GenericStub stub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now());  // Fails at once, connecting nowhere.
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1), response;
  absl::Notification done;
  stub.UnaryCall(&context, "/sluice.Hold/Hold", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status) { done.Notify(); });
  done.WaitForNotification();
}

void KeepGrpcInitialized() {
  static const bool initialized = [] {
    grpc_init();
    HoldCallbackCompletionQueue();
    return true;
  }();
  (void)initialized;
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message(status.message());
  if (message.size() > kMaxGrpcStatusMessageBytes) {
    message.resize(kMaxGrpcStatusMessageBytes);
    message += "... (cut)";
  }
  // absl and gRPC number their codes alike.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const std::string& message = status.error_message();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    // gRPC reports a failed TLS handshake like a peer that is down; say what it means.
    if (absl::StrContains(message, "certificate verify failed")) {
      return absl::UnauthenticatedError(absl::StrCat(
          "the peer's TLS certificate is not one of this cluster: not signed by the CA that this "
          "process's cluster secret (or TLS CA file) gives, or not for the address dialed. A "
          "process without the cluster's secret, or with another secret, answers there; nothing "
          "was sent to it (", message, ")"));
    }
    if (absl::StrContains(message, "not in peer certificate")) {
      return absl::UnauthenticatedError(absl::StrCat(
          "the server's TLS certificate does not name the address dialed: dial a task by the "
          "address its cluster spec gives it (its certificate names that host, its addresses and, "
          "for a loopback host, every loopback name) (", message, ")"));
    }
    if (absl::StrContains(message, "wrong version number")) {
      return absl::UnauthenticatedError(absl::StrCat(
          "the peer does not speak TLS, which this process's cluster secret or TLS files ask "
          "for: an --insecure server, or not a Sluice server; nothing was sent to it (",
          message, ")"));
    }
    if (absl::StrContains(message, "andshake failed") || absl::StrContains(message, "alert")) {
      return absl::UnauthenticatedError(absl::StrCat(
          "the TLS handshake with the peer failed: it did not accept this process's certificate "
          "(another cluster secret or CA), or presented none (", message, ")"));
    }
    // A plaintext client at a TLS port: the server drops the connection at once.
    if (ProcessGrpcSecurity().insecure() && absl::StrContains(message, "failed to connect") &&
        (absl::StrContains(message, "Socket closed") ||
         absl::StrContains(message, "Connection reset"))) {
      return absl::UnauthenticatedError(absl::StrCat(
          "the server closed the connection before any call: it requires TLS, and this process "
          "has no credentials (set SLUICE_CLUSTER_SECRET or SLUICE_CLUSTER_SECRET_FILE to the "
          "cluster's secret, or SLUICE_TLS_CERT, SLUICE_TLS_KEY and SLUICE_TLS_CA) (", message, ")"));
    }
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
}

std::shared_ptr<grpc::Channel> NewGrpcChannel(const std::string& address) {
  return NewGrpcChannel(address, ProcessGrpcSecurity());
}

std::shared_ptr<grpc::Channel> NewGrpcChannel(const std::string& address, const GrpcSecurity& security) {
  KeepGrpcInitialized();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // Each channel gets its own connection, even to an address another channel already uses.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs / 10);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveIntervalMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  // A long step sends no data for a while; keep pinging all the same.
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveIntervalMs);
  // The secret itself is never sent: TLS derived from it proves that this process holds it.
  return grpc::CreateCustomChannel(address, ChannelCredentials(security), args);
}

void ConfigureGrpcServer(grpc::ServerBuilder* builder, int64_t max_request_bytes) {
  KeepGrpcInitialized();
  // gRPC counts message sizes in an int.
  builder->SetMaxReceiveMessageSize(
      static_cast<int>(std::clamp<int64_t>(max_request_bytes, 1, std::numeric_limits<int>::max())));
  builder->SetMaxSendMessageSize(-1);
  // Accept the channels' keepalive pings (by default a server refuses pings this frequent).
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                              kKeepaliveIntervalMs / 2);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
}

void SetTimeout(grpc::ClientContext* context, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return;
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace sluice
