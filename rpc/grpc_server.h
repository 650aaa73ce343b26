// One task of a cluster: a worker for the task's devices and a master, both served over gRPC
// on the task's own address from the cluster spec (and no other).
//
//   ServerDef def;  // cluster, job_name, task_index
//   SL_ASSIGN_OR_RETURN(std::unique_ptr<GrpcServer> server, GrpcServer::Create(def, options));
//   SL_RETURN_IF_ERROR(server->Start());      // clients now use server->target()
//   ...
//   server->Stop();
//
// Tasks on port 0 learn each other's addresses only once all listen: create each with
// options.complete_cluster_later and a cluster naming only itself ("host:0"), Start it, and
// give it the whole cluster (every server's address()) with CompleteCluster.
#ifndef SLUICE_RPC_GRPC_SERVER_H_
#define SLUICE_RPC_GRPC_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rpc/grpc_master_service.h"
#include "rpc/grpc_worker_cache.h"
#include "master/master.h"
#include "proto/tensorflow_server.pb.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_util.h"
#include "rpc/grpc_worker_service.h"
#include "rpc/same_host_transfer.h"
#include "worker/worker.h"

namespace sluice {

struct GrpcServerOptions {
  int num_cpu_devices = 1;
  int inter_op_threads = 0;  // 0: the machine's core count.
  int intra_op_threads = 0;
  GrpcWorkerOptions worker_rpc;
  // RecvTensor answers carry at most this much of a tensor (more goes in further chunks).
  uint64_t recv_tensor_chunk_bytes = kMaxRecvTensorChunkBytes;
  // Big tensors between tasks of one machine are copied straight from the sender's memory
  // (rpc/same_host_transfer.h), both ways: this task's receives and its answers. Off, or
  // with SLUICE_SAME_HOST_RECV_TENSOR=0 in the environment, they go over gRPC like any other.
  bool same_host_recv_tensor = SameHostTransfersEnabledByDefault();
  // Larger requests (RunStep feeds, RunGraph sends) are refused with RESOURCE_EXHAUSTED.
  int64_t max_request_bytes = kDefaultMaxRequestBytes;
  // The cluster spec need name only this task; calls that reach another task wait until
  // CompleteCluster gives the rest (or Stop).
  bool complete_cluster_later = false;
  // Who may call (rpc/grpc_security.h): the server checks it on every call and, when it asks
  // for anything, this process's channels to other tasks present the same. Default: nothing
  // (`sluice serve` refuses that unless told --insecure).
  GrpcSecurity security;
  // Bounds on the sessions clients can open (master/master.h); master.max_graph_nodes also
  // bounds the graphs registered on this task's worker.
  MasterOptions master;
  // Bytes of tensors one session may hold at once on this task (0: only the session's own
  // ConfigProto limit, if any).
  int64_t session_memory_limit_bytes = 0;
};

class PendingWorkerCache;

class GrpcServer {
 public:
  // Checks that the cluster has the task; binds nothing yet.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Create(const ServerDef& server_def,
                                                            const GrpcServerOptions& options);
  ~GrpcServer();

  // Binds the task's address and serves; port 0 binds a free port, which address() then has.
  // UNAVAILABLE when the address cannot be bound.
  absl::Status Start();
  // With complete_cluster_later, once, after Start: the whole cluster, which must give this
  // task address(). FAILED_PRECONDITION otherwise.
  absl::Status CompleteCluster(const ClusterDef& cluster);
  // Refuses new calls, lets calls under way finish for `grace`, then aborts the steps still
  // running and waits for every handler to return. Idempotent.
  void Stop(absl::Duration grace = absl::Seconds(2));

  const std::string& task_name() const { return worker_->task_name(); }
  const std::string& address() const { return address_; }  // "host:port"
  std::string target() const { return "grpc://" + address_; }
  Worker* worker() { return worker_.get(); }

 private:
  GrpcServer() = default;

  ServerDef server_def_;
  std::string address_;
  int64_t max_request_bytes_ = kDefaultMaxRequestBytes;
  GrpcSecurity security_;
  GrpcWorkerOptions worker_rpc_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<PendingWorkerCache> cache_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<GrpcWorkerService> worker_service_;
  std::unique_ptr<GrpcMasterService> master_service_;
  std::unique_ptr<grpc::Server> server_;
  bool stopped_ = false;
};

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_SERVER_H_
