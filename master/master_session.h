// One client session on the master: its graph and the steps prepared for it.
#ifndef SLUICE_MASTER_MASTER_SESSION_H_
#define SLUICE_MASTER_MASTER_SESSION_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/tensor_shape.h"
#include "master/master.h"

namespace sluice {

class MasterSession {
 public:
  MasterSession(std::string handle, const WorkerCache* workers,
                std::vector<DeviceAttributes> devices, ConfigProto config);
  ~MasterSession();

  absl::Status Create(const GraphDef& graph);
  absl::Status Extend(const GraphDef& graph);
  absl::Status Run(const RunStepRequest& request, RunStepResponse* response);
  absl::Status Close();

 private:
  // The graphs registered for one (feeds, fetches, targets) signature.
  struct PreparedStep {
    struct Part {
      std::string task;
      WorkerInterface* worker;
      std::string graph_handle;
    };
    struct Feed {
      std::string key;
      int part;
      DataType dtype;
      PartialShape shape;  // From the fed Placeholder's shape attr; unknown otherwise.
      std::string node;
    };
    struct Fetch {
      std::string key;
      int part;
    };
    std::vector<Part> parts;
    absl::flat_hash_map<std::string, Feed> feeds;
    absl::flat_hash_map<std::string, Fetch> fetches;
    std::vector<GraphDef> partition_graphs;
  };

  absl::StatusOr<std::shared_ptr<PreparedStep>> Prepare(const std::vector<std::string>& feeds,
                                                        const std::vector<std::string>& fetches,
                                                        const std::vector<std::string>& targets);
  void Deregister(const PreparedStep& step);
  // After an error that a lost or restarted worker explains: drops every prepared step, so the
  // next Run lists the devices again and registers its graphs anew.
  void ForgetPreparedSteps();

  const std::string handle_;
  const WorkerCache* workers_;
  // The cluster's devices; listed again after a step suggests a worker was lost or restarted
  // (a restarted worker has new incarnations, and none of the graphs registered before).
  std::vector<DeviceAttributes> devices_;  // Guarded by mu_ after construction.
  bool devices_stale_ = false;             // Guarded by mu_.
  const ConfigProto config_;
  std::atomic<int64_t> next_step_id_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  GraphDef graph_def_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<PreparedStep>> cache_ ABSL_GUARDED_BY(mu_);
  // Where each stateful node was first placed; later signatures put it there too.
  absl::flat_hash_map<std::string, std::string> stateful_devices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_MASTER_MASTER_SESSION_H_
