// How a master reaches its workers, by task name ("/job:worker/replica:0/task:1"). The
// embedded session holds in-process Workers; the distributed runtime returns gRPC clients.
//
//   LocalWorkerCache cache;
//   cache.Add(worker.task_name(), &worker);
//   WorkerInterface* w = cache.GetWorker("/job:localhost/replica:0/task:0");
#ifndef SLUICE_MASTER_WORKER_CACHE_H_
#define SLUICE_MASTER_WORKER_CACHE_H_

#include <map>
#include <string>
#include <vector>

#include "worker/worker_interface.h"

namespace sluice {

class WorkerCache {
 public:
  virtual ~WorkerCache() = default;
  virtual std::vector<std::string> ListWorkers() const = 0;
  // Null for an unknown task. The cache keeps ownership.
  virtual WorkerInterface* GetWorker(const std::string& task) const = 0;
};

// Workers living in this process; not owned.
class LocalWorkerCache : public WorkerCache {
 public:
  void Add(const std::string& task, WorkerInterface* worker) { workers_[task] = worker; }
  std::vector<std::string> ListWorkers() const override {
    std::vector<std::string> names;
    for (const auto& [name, w] : workers_) names.push_back(name);
    return names;
  }
  WorkerInterface* GetWorker(const std::string& task) const override {
    auto it = workers_.find(task);
    return it == workers_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, WorkerInterface*> workers_;
};

}  // namespace sluice

#endif  // SLUICE_MASTER_WORKER_CACHE_H_
