// Test helpers: in-process tasks of job "worker" on loopback ports, and a graph that crosses
// them both ways.
#ifndef SLUICE_RPC_TEST_CLUSTER_H_
#define SLUICE_RPC_TEST_CLUSTER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "rpc/grpc_server.h"

namespace sluice {

// x (fed, on task 0) is negated on task 1 and again on task 0 into y (= x).
inline constexpr char kNegatedOnTask1[] = R"(
  node { name: "x" op: "Placeholder" device: "/job:worker/task:0"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "n" op: "Neg" input: "x" device: "/job:worker/task:1"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Neg" input: "n" device: "/job:worker/task:0"
         attr { key: "T" value { type: DT_FLOAT } } }
)";

// `tasks` started servers on 127.0.0.1 port 0 with `options` (complete_cluster_later is set:
// give each its cluster with CompleteCluster once their addresses are known).
absl::StatusOr<std::vector<std::unique_ptr<GrpcServer>>> StartLoopbackTasks(int tasks,
                                                                          GrpcServerOptions options);

}  // namespace sluice

#endif  // SLUICE_RPC_TEST_CLUSTER_H_
