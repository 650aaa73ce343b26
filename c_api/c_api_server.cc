// Servers through the C API: one task of a cluster (rpc/grpc_server.h's GrpcServer, the server
// `sluice serve` runs) built from a serialized ServerDef, with the credentials of the
// environment (rpc/grpc_security.h) and, as `sluice serve`, none only when asked for.
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/status.h"
#include "proto/tensorflow_server.pb.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_server.h"

// The server and where it is in its life. Start, Stop and Join may come from different
// threads; `mu` orders them.
struct TF_Server {
  std::unique_ptr<sluice::GrpcServer> server;
  absl::Mutex mu;
  bool started ABSL_GUARDED_BY(mu) = false;
  bool stopped ABSL_GUARDED_BY(mu) = false;
  // TF_ServerTarget's string: the address from the ServerDef, then the bound one. Set before
  // the handle is handed out and by TF_ServerStart only.
  std::string target;
};

namespace sluice {
namespace {

// SLUICE_INSECURE=1 (or "true"): serve without credentials, as `sluice serve --insecure`.
bool InsecureRequested() {
  const char* v = std::getenv("SLUICE_INSECURE");
  if (v == nullptr) return false;
  const absl::string_view s(v);
  return s == "1" || s == "true" || s == "TRUE" || s == "yes";
}

absl::StatusOr<TF_Server*> NewServer(const void* proto, size_t proto_len) {
  ServerDef def;
  if ((proto == nullptr && proto_len > 0) || !ParseFromBytes(proto, proto_len, &def)) {
    return absl::InvalidArgumentError("the bytes are not a serialized ServerDef");
  }
  if (!def.protocol().empty() && def.protocol() != "grpc") {
    return absl::InvalidArgumentError(
        absl::StrCat("protocol '", def.protocol(), "' is not supported (only \"grpc\")"));
  }
  def.set_protocol("grpc");
  if (def.job_name().empty()) return absl::InvalidArgumentError("the ServerDef has no job_name");
  if (def.port() < 0 || def.port() > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad port ", def.port(), " (0 to 65535)"));
  }
  // A nonzero port replaces the one in this task's address.
  if (def.port() != 0) {
    for (JobDef& job : *def.mutable_cluster()->mutable_job()) {
      if (job.name() != def.job_name()) continue;
      auto it = job.mutable_tasks()->find(def.task_index());
      if (it == job.mutable_tasks()->end()) break;
      const std::string& address = it->second;
      const size_t colon = address.rfind(':');
      const std::string host = colon == std::string::npos ? address : address.substr(0, colon);
      it->second = absl::StrCat(host, ":", def.port());
    }
  }

  SL_ASSIGN_OR_RETURN(GrpcSecurity security, GrpcSecurityFromEnvironment());
  if (security.insecure() && !InsecureRequested()) {
    return absl::FailedPreconditionError(
        "refusing to serve without credentials: set SLUICE_CLUSTER_SECRET or "
        "SLUICE_CLUSTER_SECRET_FILE, or SLUICE_TLS_CERT, SLUICE_TLS_KEY and SLUICE_TLS_CA, in the "
        "environment of this process and its clients; SLUICE_INSECURE=1 serves anyone who "
        "reaches the port");
  }

  GrpcServerOptions options;
  options.security = std::move(security);
  const ConfigProto& config = def.default_session_config();
  auto cpus = config.device_count().find("CPU");
  if (cpus != config.device_count().end()) {
    if (cpus->second < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("default_session_config.device_count[\"CPU\"] is ", cpus->second, " (at least 1)"));
    }
    options.num_cpu_devices = cpus->second;
  }
  if (config.inter_op_parallelism_threads() < 0 || config.intra_op_parallelism_threads() < 0) {
    return absl::InvalidArgumentError("default_session_config has a negative thread count");
  }
  options.inter_op_threads = config.inter_op_parallelism_threads();
  options.intra_op_threads = config.intra_op_parallelism_threads();
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Create(def, options);
  if (!server.ok()) {
    // A ServerDef that does not name this task is the caller's mistake.
    if (absl::IsInvalidArgument(server.status()) || absl::IsNotFound(server.status())) {
      return absl::InvalidArgumentError(server.status().message());
    }
    return server.status();
  }
  auto handle = std::make_unique<TF_Server>();
  handle->server = *std::move(server);
  handle->target = handle->server->target();
  return handle.release();
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

TF_Server* TF_NewServer(const void* proto, size_t proto_len, TF_Status* status) {
  absl::StatusOr<TF_Server*> server = sluice::NewServer(proto, proto_len);
  if (!server.ok()) {
    SetStatus(status, sluice::AddContext(server.status(), "TF_NewServer"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return *server;
}

void TF_ServerStart(TF_Server* server, TF_Status* status) {
  if (server == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_ServerStart", "server"));
    return;
  }
  absl::MutexLock lock(&server->mu);
  if (server->started || server->stopped) {
    SetStatus(status, absl::FailedPreconditionError(absl::StrCat(
                          "TF_ServerStart: the server was already ",
                          server->stopped ? "stopped" : "started")));
    return;
  }
  absl::Status s = server->server->Start();
  if (s.ok()) {
    server->started = true;
    server->target = server->server->target();
  }
  SetStatus(status, sluice::AddContext(s, "TF_ServerStart"));
}

void TF_ServerStop(TF_Server* server, TF_Status* status) {
  if (server == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_ServerStop", "server"));
    return;
  }
  {
    absl::MutexLock lock(&server->mu);
    if (server->stopped) {
      SetStatus(status, absl::OkStatus());
      return;
    }
  }
  // Outside the lock: Stop waits for the calls under way, and Join waits on the lock.
  server->server->Stop();
  absl::MutexLock lock(&server->mu);
  server->stopped = true;
  SetStatus(status, absl::OkStatus());
}

void TF_ServerJoin(TF_Server* server, TF_Status* status) {
  if (server == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_ServerJoin", "server"));
    return;
  }
  absl::MutexLock lock(&server->mu);
  if (!server->started && !server->stopped) {
    SetStatus(status, absl::FailedPreconditionError(
                          "TF_ServerJoin: the server was never started (TF_ServerStart)"));
    return;
  }
  server->mu.Await(absl::Condition(&server->stopped));
  SetStatus(status, absl::OkStatus());
}

const char* TF_ServerTarget(TF_Server* server) {
  return server == nullptr ? nullptr : server->target.c_str();
}

void TF_DeleteServer(TF_Server* server) {
  if (server == nullptr) return;
  server->server->Stop();  // Idempotent.
  delete server;
}
