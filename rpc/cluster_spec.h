// Cluster specs as written on the command line: jobs separated by ';', each `NAME=ADDR,ADDR`
// with tasks numbered from 0 in order, each address `host:port`.
//
//   SL_ASSIGN_OR_RETURN(ClusterDef cluster, ParseClusterSpec("worker=h0:2222,h1:2222;ps=h2:2222"));
//   SL_ASSIGN_OR_RETURN(std::string address, TaskAddress(cluster, "worker", 1));  // "h1:2222"
//   for (auto& [task, address] : TaskAddresses(cluster)) { ... }  // "/job:ps/replica:0/task:0"
#ifndef SLUICE_RPC_CLUSTER_SPEC_H_
#define SLUICE_RPC_CLUSTER_SPEC_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "proto/cluster.pb.h"

namespace sluice {

// Job "localhost" is refused: rendezvous keys use it for the client's end of feeds and fetches.
absl::StatusOr<ClusterDef> ParseClusterSpec(absl::string_view spec);

// The spec back in command-line form, jobs in their order, tasks by index.
std::string ClusterSpecString(const ClusterDef& cluster);

// NOT_FOUND when the cluster has no such job or task.
absl::StatusOr<std::string> TaskAddress(const ClusterDef& cluster, absl::string_view job, int task);

// Every task's full name ("/job:J/replica:0/task:T") and address.
std::map<std::string, std::string> TaskAddresses(const ClusterDef& cluster);

}  // namespace sluice

#endif  // SLUICE_RPC_CLUSTER_SPEC_H_
