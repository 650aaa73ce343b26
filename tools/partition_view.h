// The master's partitions of a step, drawn with Graphviz: one cluster per device, each _Send
// joined to its _Recv by a dashed edge labelled with the tensor it carries. The partitions are
// the master's own, as a step run with RunOptions.output_partition_graphs returns them in
// RunMetadata.partition_graphs (`sluice convert --dot` runs the model once for them); nothing
// here partitions a graph.
//
//   RunOptions run_options;
//   run_options.set_output_partition_graphs(true);
//   SL_RETURN_IF_ERROR(session->Run(run_options, feeds, fetches, {}, &outputs, &metadata));
//   auto by_device = PartitionsByDevice(metadata.partition_graphs());
//   std::string dot = PartitionsToDot(by_device);   // `dot -Tpng` renders it
#ifndef SLUICE_TOOLS_PARTITION_VIEW_H_
#define SLUICE_TOOLS_PARTITION_VIEW_H_

#include <map>
#include <string>
#include <vector>

#include "google/protobuf/repeated_ptr_field.h"
#include "proto/graph.pb.h"

namespace sluice {

// The nodes of `partition_graphs` grouped by their device (the master registers one GraphDef
// per task, holding the nodes of each of its devices), in their order. Nodes without a device
// go under "".
std::map<std::string, GraphDef> PartitionsByDevice(
    const google::protobuf::RepeatedPtrField<GraphDef>& partition_graphs);

// What a device's partition holds.
struct PartitionCounts {
  std::string device;
  int nodes = 0;
  int sends = 0;  // _Send nodes (to other devices and to the client).
  int recvs = 0;  // _Recv nodes (from other devices and from the client).
};

// One entry per device, in the map's (device name) order.
std::vector<PartitionCounts> CountPartitions(const std::map<std::string, GraphDef>& partitions);

// A Graphviz digraph of `partitions` (by device): a `subgraph cluster_N` labelled with each
// device's name, a box per node ("name\nop"), solid data edges, dotted control edges, and a
// dashed edge from each _Send to the _Recv with the same tensor_name, send_device and
// recv_device attrs, labelled with the tensor name. Client-terminated feeds and fetches
// connect to "client" nodes outside the clusters (one above for feeds, one below for fetches).
std::string PartitionsToDot(const std::map<std::string, GraphDef>& partitions);

}  // namespace sluice

#endif  // SLUICE_TOOLS_PARTITION_VIEW_H_
