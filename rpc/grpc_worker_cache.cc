#include "rpc/grpc_worker_cache.h"

#include "rpc/cluster_spec.h"
#include "rpc/grpc_security.h"
#include "rpc/grpc_util.h"

namespace sluice {

GrpcWorkerCache::GrpcWorkerCache(const ClusterDef& cluster, std::string local_task,
                                 WorkerInterface* local, GrpcWorkerOptions options)
    : local_task_(std::move(local_task)), local_(local) {
  const GrpcSecurity security = ProcessGrpcSecurity();
  for (const auto& [task, address] : TaskAddresses(cluster)) {
    if (task == local_task_ && local_ != nullptr) continue;
    GrpcWorkerOptions task_options = options;
    task_options.peer_address = address;
    // Big tensors come on sealed streams where the channel is TLS (their keys ride in its answers).
    task_options.sealed_stream = options.sealed_stream && security.tls();
    remote_[task] = std::make_unique<GrpcWorker>(task, NewGrpcChannel(address, security), task_options);
  }
}

std::vector<std::string> GrpcWorkerCache::ListWorkers() const {
  std::vector<std::string> names;
  if (local_ != nullptr) names.push_back(local_task_);
  for (const auto& [task, worker] : remote_) names.push_back(task);
  return names;
}

WorkerInterface* GrpcWorkerCache::GetWorker(const std::string& task) const {
  if (local_ != nullptr && task == local_task_) return local_;
  auto it = remote_.find(task);
  return it == remote_.end() ? nullptr : it->second.get();
}

}  // namespace sluice
