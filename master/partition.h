// Splits a placed graph by device. Every data edge between devices becomes a _Send on the
// source device and a _Recv on the destination (one pair per tensor and destination device);
// every control edge between devices becomes a _Send/_Recv of a dummy scalar whose _Recv
// carries the control dependency.
//
//   SL_ASSIGN_OR_RETURN(auto partitions, PartitionByDevice(*graph, incarnation_of));
//   for (auto& [device, graph_def] : partitions) { ... }
#ifndef SLUICE_MASTER_PARTITION_H_
#define SLUICE_MASTER_PARTITION_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "framework/graph.h"
#include "proto/graph.pb.h"

namespace sluice {

using IncarnationFn = std::function<uint64_t(const std::string& device)>;

absl::StatusOr<std::map<std::string, GraphDef>> PartitionByDevice(const Graph& graph,
                                                                   const IncarnationFn& incarnation);

}  // namespace sluice

#endif  // SLUICE_MASTER_PARTITION_H_
