// A Session whose master runs in a `sluice serve` process, reached over gRPC. Linking this
// library registers the "grpc://" session kind: NewSession returns one for a
// "grpc://host:port" target, and callers use the Session interface only.
//
//   SessionOptions options;
//   options.target = "grpc://127.0.0.1:2222";
//   SL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
#ifndef SLUICE_RPC_GRPC_SESSION_H_
#define SLUICE_RPC_GRPC_SESSION_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "master/session.h"

namespace sluice {

// Deadline of CreateSession, ExtendSession and ListDevices.
inline constexpr absl::Duration kMasterControlTimeout = absl::Seconds(60);
// Deadline of CloseSession: closing is best effort, and a client exiting after an error
// should not wait long for a master that is gone.
inline constexpr absl::Duration kMasterCloseTimeout = absl::Seconds(5);
// Deadline of a step when neither RunOptions.timeout_in_ms nor the session's
// operation_timeout_in_ms gives one.
inline constexpr absl::Duration kDefaultStepTimeout = absl::Hours(1);

// INVALID_ARGUMENT unless the target is "grpc://host:port". Connects on first use.
absl::StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options);

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_SESSION_H_
