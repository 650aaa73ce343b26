// The data-parallel rewrite of a training algorithm's GraphDef: a pass from one GraphDef to
// another, run by the trainer when a cluster has several worker tasks.
//
//   ReplicaPlan plan{.split_inputs = {"x"}, .gradients = {"grad_w"}, .reported = {"loss"},
//                    .replica_devices = {w0, w1}, .update_device = ps};
//   std::function<std::string(const std::string&)> tensor_of;
//   SL_RETURN_IF_ERROR(Replicate(plan, &graph_def, &tensor_of));
//   fetch(tensor_of("loss"));  // "average/loss_0": the replicas' mean.
#ifndef SLUICE_TRAINING_REPLICATE_H_
#define SLUICE_TRAINING_REPLICATE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "proto/graph.pb.h"

namespace sluice {

// What the data-parallel rewrite of one algorithm needs to know.
struct ReplicaPlan {
  // The fed inputs split over the replicas; what depends on them is the replicas' work.
  absl::flat_hash_set<std::string> split_inputs;
  // Tensors whose consumers form the update (the Gradient node's outputs).
  absl::flat_hash_set<std::string> gradients;
  // Outputs reported to the client (the loss): averaged over the replicas when replicated.
  std::vector<std::string> reported;
  std::vector<std::string> replica_devices;
  std::string update_device;
};

// Rewrites `def` for data parallelism: the nodes that depend on a split input but not on a
// gradient (forward and backward passes) are copied once per replica ("replica_<i>/<name>",
// on replica i's device); the rest (the optimizer, what reads only weights and scalars) stays
// single, on the update device, and reads the replicas' average wherever it reads a
// replicated tensor. `tensor_of` maps an original tensor name to the one to fetch:
// itself, or its average over the replicas.
absl::Status Replicate(const ReplicaPlan& plan, GraphDef* def,
                       std::function<std::string(const std::string&)>* tensor_of);

}  // namespace sluice

#endif  // SLUICE_TRAINING_REPLICATE_H_
