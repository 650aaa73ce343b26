#include "rpc/grpc_server.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "framework/status.h"
#include "rpc/cluster_spec.h"
#include "rpc/grpc_util.h"
#include "worker/remote_rendezvous.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const ServerDef& server_def,
                                                               const GrpcServerOptions& options) {
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  SL_ASSIGN_OR_RETURN(server->address_,
                      TaskAddress(server_def.cluster(), server_def.job_name(), server_def.task_index()));
  const std::string task_name =
      absl::StrCat("/job:", server_def.job_name(), "/replica:0/task:", server_def.task_index());
  server->max_request_bytes_ = options.max_request_bytes;
  GrpcServer* self = server.get();
  WorkerOptions w;
  w.job = server_def.job_name();
  w.task = server_def.task_index();
  w.num_cpu_devices = options.num_cpu_devices;
  w.inter_op_threads = options.inter_op_threads;
  w.intra_op_threads = options.intra_op_threads;
  w.rendezvous_factory = [self, task_name](int64_t step_id) {
    return std::make_shared<RemoteRendezvous>(
        task_name, step_id, [self](const std::string& task) { return self->cache_->GetWorker(task); });
  };
  server->worker_ = std::make_unique<Worker>(w);
  GrpcWorkerOptions worker_rpc = options.worker_rpc;
  worker_rpc.same_host_recv_tensor = worker_rpc.same_host_recv_tensor && options.same_host_recv_tensor;
  server->cache_ = std::make_unique<GrpcWorkerCache>(server_def.cluster(), task_name,
                                                     server->worker_.get(), worker_rpc);
  server->master_ = std::make_unique<Master>(server->cache_.get());
  server->worker_service_ =
      std::make_unique<GrpcWorkerService>(server->worker_.get(), options.recv_tensor_chunk_bytes,
                                          options.same_host_recv_tensor);
  server->master_service_ = std::make_unique<GrpcMasterService>(server->master_.get(), task_name);
  return server;
}

GrpcServer::~GrpcServer() { Stop(); }

absl::Status GrpcServer::Start() {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address_, grpc::InsecureServerCredentials(), &port);
  ConfigureGrpcServer(&builder, max_request_bytes_);
  builder.RegisterService(worker_service_.get());
  builder.RegisterService(master_service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address_, " for ", task_name(),
                                               " (address in use, or not this machine's?)"));
  }
  return absl::OkStatus();
}

void GrpcServer::Stop(absl::Duration grace) {
  if (stopped_ || server_ == nullptr) {
    stopped_ = true;
    return;
  }
  stopped_ = true;
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
