// Training an ONNX model through its TrainingInfoProto: each training_info's initialization
// graph runs once (its outputs assigned to initializers by initialization_binding), then its
// algorithm graph runs once per step, its outputs assigned to initializers by update_binding.
// The algorithm reads the main graph's initializers and inputs by name.
//
//   SL_ASSIGN_OR_RETURN(auto trainer, OnnxTrainer::Load("model.onnx", {}));
//   SL_RETURN_IF_ERROR(trainer->Initialize());
//   for (int i = 0; i < steps; ++i) SL_ASSIGN_OR_RETURN(auto out, trainer->Step(feeds));
//   SL_RETURN_IF_ERROR(trainer->Save("trained.onnx"));
//
// The initializers live in variables on a device (ReadVariable/AssignVariable), so a step
// feeds only data and updates the weights where they are. On a cluster with a "ps" job
// (options.target grpc://...), the variables and the updates live on /job:ps/task:0 and the
// algorithm runs data-parallel: one replica per task of job "worker", each on an equal share
// of every fed input of rank >= 1 (split along dimension 0; scalars go to all). The replicas'
// gradients and reported outputs are averaged, which gives the single-process result when the
// loss is a mean over the batch (BatchNormalization's statistics stay per replica).
// On a cluster without a "ps" job (or with TrainOptions::strategy "allreduce"), every worker
// task holds its own copy of every variable, runs the whole algorithm on its share, and the
// gradients are averaged by a ring all-reduce (training/replicate.h) that starts on each
// bucket as soon as the backward pass has made it; the copies stay bitwise identical.
#ifndef SLUICE_TRAINING_TRAINER_H_
#define SLUICE_TRAINING_TRAINER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx/importer.h"
#include "master/session.h"

namespace sluice {

// How a cluster's workers share a step.
struct TrainOptions {
  // "auto": all-reduce across the worker tasks of a cluster without a "ps" job, the ps path
  // with one; "allreduce" or "ps" to choose.
  std::string strategy = "auto";
  // All-reduce: gradients fused into buckets of about this many bytes.
  int64_t bucket_bytes = int64_t{25} << 20;
  // Inputs (by ONNX name) whose value is the same every step, like `sluice train`'s --feed
  // files. Data-parallel, each replica's share becomes a constant of its task's graph, sent
  // once when the graph is registered instead of with every step (as each worker of a
  // TensorFlow job reads its own input); Step ignores feeds for them. In one process, they are
  // fed as usual.
  std::map<std::string, Tensor> fixed_feeds;
};

class OnnxTrainer {
 public:
  static absl::StatusOr<std::unique_ptr<OnnxTrainer>> Load(const std::string& path,
                                                           const SessionOptions& options,
                                                           const TrainOptions& train = TrainOptions());
  // Frees the variables (on a cluster, the ps task would otherwise keep them).
  ~OnnxTrainer();

  // Runs the initialization graphs (those a model has) once.
  absl::Status Initialize();
  // One algorithm run per training_info. `feeds` are by ONNX name (the main graph's inputs
  // and any algorithm inputs). Returns the algorithm outputs that no binding consumes (the
  // loss, typically), by name.
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Step(
      const std::vector<std::pair<std::string, Tensor>>& feeds);
  // The same, traced: every node's time, in `metadata`'s step_stats.
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> TracedStep(
      const std::vector<std::pair<std::string, Tensor>>& feeds, RunMetadata* metadata);
  // What part of a step a node of the step's graph belongs to: "forward" (what the loss is
  // computed from), "backward" (the gradients), "update" (what the gradients feed: the
  // optimizer, the assigns), "all-reduce", or "other" (variables, transfers, the rest).
  std::string PhaseOf(const std::string& node) const;
  // The initializers' current values, read from their variables.
  absl::StatusOr<std::map<std::string, Tensor>> Initializers();
  // The model with its initializers set to their current values (training_info kept).
  absl::Status Save(const std::string& path);
  // The same model, serialized (a checkpoint's content, training/checkpoint.h).
  absl::StatusOr<std::string> SerializeState();
  // Sets every initializer's variable to its value in the model at `path` (a checkpoint or a
  // saved model): INVALID_ARGUMENT when that model lacks one or has another dtype or shape.
  absl::Status Restore(const std::string& path);

  // Replicas the algorithm runs on (1 unless data-parallel on a cluster).
  int replicas() const { return static_cast<int>(replica_devices_.size()); }
  // "allreduce", "ps" or "" (one replica).
  const std::string& strategy() const { return strategy_; }

 private:
  struct Input {
    std::string name;                  // ONNX name.
    std::vector<std::string> tensors;  // One per replica, or one shared by all.
    bool has_default = false;
    bool broadcast = false;  // Each of `tensors` gets the whole value (not a share of it).
  };
  struct Algorithm {
    std::vector<Input> inputs;                 // Fed per step (variables excluded).
    std::vector<std::string> report_names;     // Outputs no binding consumes ...
    std::vector<std::string> report_tensors;   // ... and where to fetch them.
    std::vector<std::string> assign_nodes;     // The update_binding assigns: run as targets.
  };

  absl::Status Build();
  // Turns the placeholders of input `in` (`tensors`: one per replica, or one all read) into
  // constants of their share of `value` (all of it unless `split`).
  absl::Status MakeResident(const OnnxValue& in, const std::vector<std::string>& tensors, bool split,
                            const Tensor& value, GraphDef* graph) const;
  // Assigns `values` (by initializer name) to their variables.
  absl::Status PushVariables(const std::map<std::string, Tensor>& values);

  // The variable node bases of initializer `name`: one, or one per replica (all-reduce).
  std::vector<std::string> VarCopies(const std::string& name) const;

  onnx::ModelProto model_;
  SessionOptions options_;
  TrainOptions train_;
  std::string strategy_;
  std::unique_ptr<Session> session_;
  // Each initializer's dtype and shape. Their values live in the variables (and model_ keeps
  // only the initializers' names, dtypes and dims): a second and third copy of the weights were
  // 100 MB of ResNet-18's training RSS.
  struct VarSpec {
    DataType type = DT_INVALID;
    TensorShape dims;
    DataType dtype() const { return type; }
    const TensorShape& shape() const { return dims; }
    int64_t NumElements() const { return dims.num_elements(); }
  };
  std::map<std::string, VarSpec> initial_;
  // Each initializer's variable nodes are named "<this>/init", "/assign", "/read" and
  // "/destroy": a valid node name whatever the ONNX name holds ("onnx::Conv_193", "a:0",
  // "^x", "x/"), and unique even where two names escape alike.
  std::map<std::string, std::string> var_nodes_;
  // Nodes of the algorithms (before replication) by phase: "forward" or "update"; the other
  // nodes of an algorithm are "backward".
  std::map<std::string, std::string> phases_;
  std::vector<std::string> algorithm_prefixes_;
  std::string variable_device_;            // Empty: the session's default device.
  std::vector<std::string> replica_devices_;
  std::vector<Algorithm> algorithms_;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_TRAINER_H_
