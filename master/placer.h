// Assigns every node of a graph to a device: an explicit (possibly partial) device request
// first, then the default device, always among devices that have a kernel for the node.
//
//   SL_RETURN_IF_ERROR(PlaceGraph(graph.get(), devices, devices[0].name()));
//   node->assigned_device();   // "/job:localhost/replica:0/task:0/device:CPU:0"
#ifndef SLUICE_MASTER_PLACER_H_
#define SLUICE_MASTER_PLACER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/graph.h"
#include "proto/device_attributes.pb.h"

namespace sluice {

// Nodes that must share a device with their data input 0 (a fetch's _Send) are marked by
// the internal attr kColocateWithInputAttr.
inline constexpr char kColocateWithInputAttr[] = "_colocate_with_input";

absl::Status PlaceGraph(Graph* graph, const std::vector<DeviceAttributes>& devices,
                        const std::string& default_device);

}  // namespace sluice

#endif  // SLUICE_MASTER_PLACER_H_
