// TensorFlow's ways of describing a cluster, for `sluice serve` and `--target`: the TF_CONFIG
// environment variable that TensorFlow's launchers and Kubernetes operators set, and a
// ClusterDef in protobuf text format.
//
//   SL_ASSIGN_OR_RETURN(TfConfig config, ParseTfConfig(std::getenv("TF_CONFIG")));
//   // config.cluster: {worker: [h0:2222, h1:2222]}, config.task_type "worker", task_index 1
//   SL_ASSIGN_OR_RETURN(ClusterDef cluster, ReadClusterFlag(flag));  // FILE or worker=h:p;...
//   SL_ASSIGN_OR_RETURN(std::string target, TfConfigTarget());       // "grpc://h1:2222"
#ifndef SLUICE_TOOLS_CLUSTER_CONFIG_H_
#define SLUICE_TOOLS_CLUSTER_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"

namespace sluice {

// TF_CONFIG, e.g.
//   {"cluster": {"worker": ["h0:2222", "h1:2222"], "ps": ["h2:2222"]},
//    "task": {"type": "worker", "index": 1}}
struct TfConfig {
  ClusterDef cluster;     // Jobs in name order, tasks 0..n-1 in list order.
  std::string task_type;  // Empty when TF_CONFIG names no task.
  int task_index = -1;    // -1 when TF_CONFIG names no task; 0 when "task" has no "index".
};

// TF_CONFIG's JSON, parsed by protobuf's JSON parser and checked as ParseClusterSpec checks a
// spec (job "localhost" refused, addresses host:port, none given twice). Other top-level keys
// ("environment", ...) are ignored; "rpc_layer", when given, must be "grpc". Errors are
// INVALID_ARGUMENT, their message starting "TF_CONFIG: " and naming the offending key
// (e.g. "TF_CONFIG: cluster.worker[1]: ...", "TF_CONFIG: task.index: ...").
absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view json);

// A ClusterDef in protobuf text format, e.g.
//   job { name: "worker" tasks { key: 0 value: "h0:2222" } tasks { key: 1 value: "h1:2222" } }
// Each job's tasks must be numbered 0..n-1 without gaps. `what` names the text in errors.
absl::StatusOr<ClusterDef> ParseClusterDefText(absl::string_view text, absl::string_view what);

// `sluice serve --cluster ARG`: a regular file holding ClusterDef text, or else a spec
// `worker=host:port,host:port;ps=host:port` (rpc/cluster_spec.h).
absl::StatusOr<ClusterDef> ReadClusterFlag(const std::string& arg);

// The value of TF_CONFIG in the environment; empty when it is unset or blank.
std::string TfConfigFromEnvironment();

// `--target tf_config`: "grpc://ADDRESS" of TF_CONFIG's own task (cluster[task.type][task.index])
// from the environment. INVALID_ARGUMENT when TF_CONFIG is unset, malformed or names no task.
absl::StatusOr<std::string> TfConfigTarget();

}  // namespace sluice

#endif  // SLUICE_TOOLS_CLUSTER_CONFIG_H_
