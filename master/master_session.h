// One client session on the master: its graph and the client graphs built for it, one per
// (feeds, fetches, targets) signature.
//
//   MasterSession session(handle, &workers, devices, config);
//   SL_RETURN_IF_ERROR(session.Create(graph_def));
//   SL_RETURN_IF_ERROR(session.Run(request, &response));  // Builds, registers, runs.
//
// Threading: a client graph is built (rewrite feeds/fetches, prune, place, partition) under
// the session's mutex, which guards the graph and the cache only. Registering the partitions
// on the workers happens outside it, on all workers in parallel, and steps run without it,
// so a slow worker never stalls a Run of a signature that is already registered.
#ifndef SLUICE_MASTER_MASTER_SESSION_H_
#define SLUICE_MASTER_MASTER_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/graph.h"
#include "master/client_graph.h"
#include "master/master.h"

namespace sluice {

class MasterSession {
 public:
  MasterSession(std::string handle, const WorkerCache* workers,
                std::vector<DeviceAttributes> devices, ConfigProto config);
  ~MasterSession();

  // Takes the graph by value: a caller done with its GraphDef moves it in, and the weights are
  // then held once.
  absl::Status Create(GraphDef graph);
  absl::Status Extend(const GraphDef& graph);
  absl::Status Run(const RunStepArgs& request, RunStepResponse* response);
  absl::Status Run(const RunStepRequest& request, RunStepResponse* response) {
    return Run(RunStepArgs::Of(request), response);
  }
  absl::Status Close();

 private:
  // The canonical feeds, fetches and targets of a request, and the cache key they make.
  struct Signature {
    std::vector<std::string> feeds;    // Sorted "node:index" names.
    std::vector<std::string> fetches;  // Sorted, unique, and not fed.
    std::vector<std::string> targets;  // Sorted node names.
    std::string key;
  };

  // What a Run of one exact request shape does (the feed, fetch and target names as the
  // caller spelled them, in order): its client graph, which of the graph's feeds each fed
  // value is, and where each fetched value comes from. A repeated Run looks it up instead of
  // canonicalizing, sorting and joining its names again.
  struct RunPlan {
    std::vector<std::string> feeds;  // As requested.
    std::vector<std::string> fetches;
    std::vector<std::string> targets;
    std::shared_ptr<ClientGraph> graph;
    // Per requested feed: its index in graph->feeds(), or -1 when pruned away (the value is
    // accepted and ignored).
    std::vector<int> feed_slot;
    // Per requested fetch: >= 0, its index in graph->fetches(); < 0, a fed tensor, answered
    // with the value of requested feed -1 - fetch_source.
    std::vector<int> fetch_source;
  };

  // The plan of the request's shape, built (with its client graph, registered) on first use.
  absl::StatusOr<std::shared_ptr<const RunPlan>> GetOrBuildPlan(const RunStepArgs& req)
      ABSL_LOCKS_EXCLUDED(mu_, plans_mu_);
  absl::StatusOr<std::shared_ptr<const RunPlan>> BuildPlan(const RunStepArgs& req,
                                                           size_t shape_hash)
      ABSL_LOCKS_EXCLUDED(mu_, plans_mu_);

  // Stages of Run: canonical signature (in BuildPlan), then build under mu_ (rewrite feeds and
  // fetches, prune, place, partition), register outside it, run.
  absl::StatusOr<std::shared_ptr<ClientGraph>> GetOrBuildClientGraph(const Signature& sig)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status RefreshDevicesIfStale() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::shared_ptr<ClientGraph>> BuildClientGraph(const Signature& sig)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts every node on a device, keeping stateful nodes where they were first placed.
  absl::Status Place(const absl::flat_hash_map<std::string, PartialShape>& feed_shapes,
                     Graph* graph) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops a client graph whose registration failed, so the next Run builds it anew.
  void Forget(const std::string& key, const std::shared_ptr<ClientGraph>& graph,
              const absl::Status& why) ABSL_LOCKS_EXCLUDED(mu_);
  // After an error that a lost or restarted worker explains: drops every client graph, so
  // the next Run lists the devices again and registers its graphs anew.
  void ForgetAllClientGraphs() ABSL_LOCKS_EXCLUDED(mu_);

  const std::string handle_;
  const WorkerCache* const workers_;
  const ConfigProto config_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // The session's graph with its large constants hoisted into constants_
  // (framework/hoisted_constants.h): per-signature graphs and partitions copy only the small
  // rest, and in-process workers share the constants' buffers.
  GraphDef graph_def_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const HoistedConstants> constants_ ABSL_GUARDED_BY(mu_);
  // The cluster's devices; listed again after a step suggests a worker was lost or restarted
  // (a restarted worker has new incarnations, and none of the graphs registered before).
  std::vector<DeviceAttributes> devices_ ABSL_GUARDED_BY(mu_);
  bool devices_stale_ ABSL_GUARDED_BY(mu_) = false;
  // By signature key. A client graph may still be registering; Run waits for that outside mu_.
  absl::flat_hash_map<std::string, std::shared_ptr<ClientGraph>> cache_ ABSL_GUARDED_BY(mu_);
  // Plans by a hash of the request's names; one whose names differ is a miss. Written under
  // mu_ and plans_mu_ (a plan is kept only while its client graph is in cache_), read under
  // plans_mu_ alone, so a Run of a known shape never waits for another signature's build.
  static constexpr size_t kMaxPlans = 1024;  // Beyond it the plans are forgotten, not the graphs.
  absl::Mutex plans_mu_ ABSL_ACQUIRED_AFTER(mu_);
  absl::flat_hash_map<size_t, std::shared_ptr<const RunPlan>> plans_ ABSL_GUARDED_BY(plans_mu_);
  // Where each stateful node was first placed; later signatures put it there too.
  absl::flat_hash_map<std::string, std::string> stateful_devices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_MASTER_MASTER_SESSION_H_
