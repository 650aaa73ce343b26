// Placement options a session carries in ConfigProto.placement, applied by the master before
// the placer: nodes that request no device get one from the device map (first matching rule)
// or else from the policy. What is set here counts as an explicit request, so the placer
// still checks kernels and colocation; explicit devices on nodes always win.
//
// Policy "pipeline": the nodes, in topological order, are cut into contiguous stages of
// balanced estimated cost, one per device of job "worker" (of every job when there is no
// such job), in task and device order. A node's cost is the element count of its outputs
// (from shape inference, feeds shaped by their placeholders, unknown dims as 1), times the
// work per output of each constant weight it reads (the weight's elements over the weight dim
// its output shares, as for MatMul and Conv), plus the elements it reads and writes (weights
// weigh more: they come from memory on every run). A stage also pays for the elements that
// cross its boundaries; the cut minimizes the costliest stage, so it falls between residual
// blocks, where one tensor crosses, rather than inside one. Nodes without inputs (constants,
// feeds) go to the first stage that reads them; a constant that later stages read too gets a
// copy on each ("<name>/stage_<k>"), so that no weight travels between stages on every run.
//
//   PlacementOptions options;
//   options.set_policy("pipeline");
//   SL_ASSIGN_OR_RETURN(*options.mutable_device_map(), ParseDeviceMap(file_text));
//   SL_RETURN_IF_ERROR(ApplyPlacementOptions(options, devices, feed_shapes, graph.get()));
#ifndef SLUICE_MASTER_PLACEMENT_POLICY_H_
#define SLUICE_MASTER_PLACEMENT_POLICY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "framework/graph.h"
#include "framework/tensor_shape.h"
#include "proto/config.pb.h"
#include "proto/device_attributes.pb.h"

namespace sluice {

inline constexpr char kPipelinePolicy[] = "pipeline";

// `feed_shapes`: the shapes of fed tensors ("x:0"), which feed nodes do not carry.
absl::Status ApplyPlacementOptions(const PlacementOptions& options,
                                   const std::vector<DeviceAttributes>& devices,
                                   const absl::flat_hash_map<std::string, PartialShape>& feed_shapes,
                                   Graph* graph);

// A device map file: one rule per line, `PATTERN DEVICE`, where PATTERN is a glob over node
// names (* ? [...]) and DEVICE a full or partial device ("/job:worker/task:1"). Blank lines
// and text after '#' are ignored. Errors give the line number.
absl::StatusOr<std::vector<PlacementOptions::DeviceRule>> ParseDeviceMap(absl::string_view text);

}  // namespace sluice

#endif  // SLUICE_MASTER_PLACEMENT_POLICY_H_
