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
// The initializers' current values are kept here and fed to each step.
#ifndef SLUICE_FRONTEND_ONNX_TRAINER_H_
#define SLUICE_FRONTEND_ONNX_TRAINER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx/importer.h"
#include "master/session.h"

namespace sluice {

class OnnxTrainer {
 public:
  static absl::StatusOr<std::unique_ptr<OnnxTrainer>> Load(const std::string& path,
                                                           const SessionOptions& options);

  // Runs the initialization graphs (those a model has) once.
  absl::Status Initialize();
  // One algorithm run per training_info. `feeds` are by ONNX name (the main graph's inputs
  // and any algorithm inputs). Returns the algorithm outputs that no binding consumes (the
  // loss, typically), by name.
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Step(
      const std::vector<std::pair<std::string, Tensor>>& feeds);
  // The model with its initializers set to their current values (training_info kept).
  absl::Status Save(const std::string& path) const;

  const std::map<std::string, Tensor>& initializers() const { return state_; }

 private:
  struct Algorithm {
    OnnxGraph graph;
    std::unique_ptr<Session> session;
    std::map<std::string, std::string> update_binding;  // Initializer -> output.
  };

  onnx::ModelProto model_;
  SessionOptions options_;
  std::map<std::string, Tensor> state_;
  std::vector<Algorithm> algorithms_;
};

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_TRAINER_H_
