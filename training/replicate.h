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

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
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

// What the all-reduce rewrite needs to know.
struct AllReducePlan {
  absl::flat_hash_set<std::string> split_inputs;
  // The gradients, in the order the backward pass makes them (the last layer's first), with
  // their element counts.
  std::vector<std::pair<std::string, int64_t>> gradients;
  std::vector<std::string> reported;
  // Tensors written back to variables (update_binding), with their element counts: those
  // computed from the batch but not from a gradient (BatchNormalization's running statistics)
  // are averaged with the gradients, so that every replica writes the same value.
  std::vector<std::pair<std::string, int64_t>> written;
  std::vector<std::string> replica_devices;  // Two or more.
  // Gradients are fused into buckets of up to this many bytes, each all-reduced as soon as
  // its last gradient is made. The buckets made last are smaller (the very last about a
  // sixteenth of this, each one before it twice its successor): nothing overlaps the last
  // bucket's all-reduce.
  int64_t bucket_bytes = int64_t{25} << 20;
};

// Rewrites `def` for all-reduce data parallelism: every node is copied once per replica
// ("replica_<i>/<name>", on replica i's device), variables included (their shared_name gets
// "/replica_<i>": each replica holds its own copy, which the caller assigns alike), and
// wherever a replica reads a gradient it reads the gradient's mean over the replicas instead,
// made by a ring all-reduce over fused buckets: each bucket is flattened and cut into one chunk
// per replica; chunk j is summed along the ring from replica j+1 to replica j (a fixed order),
// scaled there, and every replica gathers the chunks back. Each chunk's mean is computed once,
// so the replicas' weights stay bitwise identical. `tensor_of` maps an original tensor to the
// one to fetch: a reported output's mean over the replicas, replica 0's copy otherwise;
// `replica_tensor` maps (tensor, i) to replica i's: its mean where it was averaged.
absl::Status ReplicateAllReduce(const AllReducePlan& plan, GraphDef* def,
                                std::function<std::string(const std::string&)>* tensor_of,
                                std::function<std::string(const std::string&, int)>* replica_tensor);

}  // namespace sluice

#endif  // SLUICE_TRAINING_REPLICATE_H_
