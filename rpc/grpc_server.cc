#include "rpc/grpc_server.h"

#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "framework/status.h"
#include "rpc/cluster_spec.h"
#include "rpc/derived_tls.h"
#include "rpc/grpc_util.h"
#include "worker/remote_rendezvous.h"

namespace sluice {

// The server's workers once its cluster is known. Until then (complete_cluster_later) calls
// wait; Stop releases them with no workers. Set once, so returned pointers stay valid.
class PendingWorkerCache : public WorkerCache {
 public:
  // False when already settled.
  bool Set(std::unique_ptr<WorkerCache> cache) {
    absl::MutexLock lock(&mu_);
    if (settled_) return false;
    cache_ = std::move(cache);
    settled_ = true;
    return true;
  }
  void Release() { Set(nullptr); }

  std::vector<std::string> ListWorkers() const override {
    const WorkerCache* cache = Wait();
    return cache == nullptr ? std::vector<std::string>() : cache->ListWorkers();
  }
  WorkerInterface* GetWorker(const std::string& task) const override {
    const WorkerCache* cache = Wait();
    return cache == nullptr ? nullptr : cache->GetWorker(task);
  }

 private:
  const WorkerCache* Wait() const {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&settled_));
    return cache_.get();
  }

  mutable absl::Mutex mu_;
  bool settled_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<WorkerCache> cache_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const ServerDef& server_def,
                                                               const GrpcServerOptions& options) {
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  server->server_def_ = server_def;
  SL_ASSIGN_OR_RETURN(server->address_,
                      TaskAddress(server_def.cluster(), server_def.job_name(), server_def.task_index()));
  const std::string task_name =
      absl::StrCat("/job:", server_def.job_name(), "/replica:0/task:", server_def.task_index());
  server->max_request_bytes_ = options.max_request_bytes;
  server->security_ = options.security;
  // With a secret, this task's certificate names its address as the cluster gives it: what
  // every peer and client dials and checks.
  SL_RETURN_IF_ERROR(UseTlsFromSecret({HostOfAddress(server->address_)}, &server->security_),
                     task_name);
  // This task's channels to the others present what it asks of its own callers.
  if (!server->security_.insecure()) SetProcessGrpcSecurity(server->security_);
  GrpcServer* self = server.get();
  WorkerOptions w;
  w.job = server_def.job_name();
  w.task = server_def.task_index();
  w.num_cpu_devices = options.num_cpu_devices;
  w.inter_op_threads = options.inter_op_threads;
  w.intra_op_threads = options.intra_op_threads;
  w.session_memory_limit_bytes = options.session_memory_limit_bytes;
  w.max_graph_nodes = options.master.max_graph_nodes;
  // RunGraph comes on a gRPC callback thread: a long node held there would starve the server
  // of the threads that deliver its cancellation (and every other call).
  w.return_before_running_nodes = true;
  w.rendezvous_factory = [self, task_name](int64_t step_id) {
    return std::make_shared<RemoteRendezvous>(
        task_name, step_id, [self](const std::string& task) { return self->cache_->GetWorker(task); });
  };
  server->worker_ = std::make_unique<Worker>(w);
  server->worker_rpc_ = options.worker_rpc;
  server->worker_rpc_.same_host_recv_tensor =
      server->worker_rpc_.same_host_recv_tensor && options.same_host_recv_tensor;
  server->cache_ = std::make_unique<PendingWorkerCache>();
  if (!options.complete_cluster_later) {
    server->cache_->Set(std::make_unique<GrpcWorkerCache>(server_def.cluster(), task_name,
                                                          server->worker_.get(), server->worker_rpc_));
  }
  server->master_ = std::make_unique<Master>(server->cache_.get(), options.master);
  server->worker_service_ =
      std::make_unique<GrpcWorkerService>(server->worker_.get(), options.recv_tensor_chunk_bytes,
                                          options.same_host_recv_tensor);
  server->master_service_ = std::make_unique<GrpcMasterService>(server->master_.get(), task_name);
  server->worker_service_->set_security(server->security_);
  server->master_service_->set_security(server->security_);
  return server;
}

GrpcServer::~GrpcServer() { Stop(); }

absl::Status GrpcServer::Start() {
  if (security_.tls() && worker_rpc_.sealed_stream) {
    // Big tensors to TLS peers go on sealed streams from a port of this host; without one
    // (it cannot be bound), they go in gRPC's TLS frames, slower but as safe.
    if (absl::Status s = worker_service_->StartSealedStreams(HostOfAddress(address_)); !s.ok()) {
      std::fprintf(stderr, "sluice: %s: no sealed streams: %s\n", task_name().c_str(),
                   StatusToString(s).c_str());
    }
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address_, ServerCredentials(security_), &port);
  ConfigureGrpcServer(&builder, max_request_bytes_);
  builder.RegisterService(worker_service_.get());
  builder.RegisterService(master_service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address_, " for ", task_name(),
                                               " (address in use, or not this machine's?)"));
  }
  address_ = absl::StrCat(address_.substr(0, address_.rfind(':')), ":", port);  // Port 0 resolved.
  return absl::OkStatus();
}

absl::Status GrpcServer::CompleteCluster(const ClusterDef& cluster) {
  SL_ASSIGN_OR_RETURN(std::string address,
                      TaskAddress(cluster, server_def_.job_name(), server_def_.task_index()));
  if (address != address_) {
    return absl::FailedPreconditionError(absl::StrCat("the cluster gives ", task_name(), " the address ",
                                                      address, ", but it listens on ", address_));
  }
  if (!cache_->Set(std::make_unique<GrpcWorkerCache>(cluster, task_name(), worker_.get(), worker_rpc_))) {
    return absl::FailedPreconditionError(absl::StrCat(task_name(), " has its cluster already"));
  }
  return absl::OkStatus();
}

void GrpcServer::Stop(absl::Duration grace) {
  if (stopped_ || server_ == nullptr) {
    stopped_ = true;
    return;
  }
  stopped_ = true;
  cache_->Release();  // Calls still waiting for the cluster go on, finding no other task.
  absl::Notification down;
  std::thread shutdown([&] {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
    down.Notify();
  });
  // Steps still running at the end of the grace period are aborted, so that the handlers
  // waiting for them (RunStep, RunGraph) return.
  if (!down.WaitForNotificationWithTimeout(grace)) {
    do {
      worker_->AbortAllSteps(absl::UnavailableError(absl::StrCat(task_name(), " is shutting down")));
    } while (!down.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  }
  shutdown.join();
  server_->Wait();
}

}  // namespace sluice
