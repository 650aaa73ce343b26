// The master's side of TensorFlow's collective ops (CollectiveReduceV2, CollectiveGatherV2,
// CollectiveBcastSendV2/RecvV2): once a step's graph is placed, the members of each group are
// found (nodes with one group_key, one per device) and checked, and every member learns the
// group's devices in rank order, their incarnations and its own rank, as the attrs
// `_collective_devices`, `_collective_incarnations` and `_collective_rank` its kernel reads.
// TensorFlow's collective param resolver does this at run time between the members; here the
// master sees every member of a step, so misuse fails before anything runs, naming the group:
//
//   group sizes that disagree; more members of an instance than the group size, or fewer (a
//   member that never joins); two members of an instance on one device (a duplicate instance
//   key); an instance whose members differ in op (a reduce meeting a gather) or a broadcast
//   without exactly one sender; a group_size, group_key or instance_key that is not a constant.
//
// Members run on the devices of the group in the order of their names (rank 0 first).
#ifndef SLUICE_MASTER_COLLECTIVES_H_
#define SLUICE_MASTER_COLLECTIVES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "framework/graph.h"

namespace sluice {

// Whether `op` is one of the collective ops above.
bool IsCollectiveOp(const std::string& op);

// Checks and annotates the placed `graph`'s collective nodes (see above); INVALID_ARGUMENT
// naming the group, instance and nodes at fault.
absl::Status ResolveCollectives(Graph* graph, const std::function<uint64_t(const std::string&)>& incarnation_of);

}  // namespace sluice

#endif  // SLUICE_MASTER_COLLECTIVES_H_
