#include "rpc/test_cluster.h"

#include "framework/status.h"

namespace sluice {

absl::StatusOr<std::vector<std::unique_ptr<GrpcServer>>> StartLoopbackTasks(int tasks,
                                                                          GrpcServerOptions options) {
  options.complete_cluster_later = true;
  std::vector<std::unique_ptr<GrpcServer>> servers;
  for (int task = 0; task < tasks; ++task) {
    ServerDef def;
    JobDef* job = def.mutable_cluster()->add_job();
    job->set_name("worker");
    (*job->mutable_tasks())[task] = "127.0.0.1:0";
    def.set_job_name("worker");
    def.set_task_index(task);
    SL_ASSIGN_OR_RETURN(std::unique_ptr<GrpcServer> server, GrpcServer::Create(def, options));
    SL_RETURN_IF_ERROR(server->Start());
    servers.push_back(std::move(server));
  }
  return servers;
}

}  // namespace sluice
