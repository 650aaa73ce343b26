// The workers of a cluster as a master sees them: its own task's worker in-process, every
// other task through a GrpcWorker (channels connect on first use).
//
//   SL_ASSIGN_OR_RETURN(ClusterDef cluster, ParseClusterSpec("worker=h0:2222,h1:2222"));
//   GrpcWorkerCache cache(cluster, worker.task_name(), &worker);
//   Master master(&cache);
#ifndef SLUICE_RPC_GRPC_WORKER_CACHE_H_
#define SLUICE_RPC_GRPC_WORKER_CACHE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "master/worker_cache.h"
#include "proto/cluster.pb.h"
#include "rpc/grpc_worker.h"

namespace sluice {

class GrpcWorkerCache : public WorkerCache {
 public:
  // `local` (not owned; may be null) serves `local_task` without RPCs.
  GrpcWorkerCache(const ClusterDef& cluster, std::string local_task, WorkerInterface* local,
                  GrpcWorkerOptions options = GrpcWorkerOptions());

  // The local task first (its devices are the default ones), then the others by name.
  std::vector<std::string> ListWorkers() const override;
  WorkerInterface* GetWorker(const std::string& task) const override;

 private:
  const std::string local_task_;
  WorkerInterface* const local_;
  std::map<std::string, std::unique_ptr<GrpcWorker>> remote_;
};

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_WORKER_CACHE_H_
