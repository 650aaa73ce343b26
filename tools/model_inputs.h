// The inputs of one step of an imported ONNX model, made as `sluice run` makes them: from
// --input files (NAME=FILE.pb, or FILE.pb for the next input without a default), or, with no
// --input at all, random values of the declared shapes. `sluice run` and `sluice convert --dot`
// share it, so a model runs the same way under both.
//
//   SL_ASSIGN_OR_RETURN(OnnxStepInputs in, OnnxInputs(graph, args.TakeAll("--input")));
//   session->Run(in.feeds, fetches, {}, &outputs);
#ifndef SLUICE_TOOLS_MODEL_INPUTS_H_
#define SLUICE_TOOLS_MODEL_INPUTS_H_

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "frontend/onnx/importer.h"

namespace sluice {

struct OnnxStepInputs {
  // Graph tensor ("node:k") -> value, in the order the inputs were given.
  std::vector<std::pair<std::string, Tensor>> feeds;
  // The model inputs given random values, in feed order (they are all of `feeds` or none).
  std::vector<std::string> random_inputs;
};

// `inputs`: "NAME=FILE.pb" (the model input NAME) or "FILE.pb" (the next input without a
// default, in graph-input order). Each file holds an ONNX TensorProto (a SequenceProto or
// OptionalProto for inputs of those types). With no `inputs`, every input without a default
// gets RandomTensor values (a fixed seed: the same values each time). Errors: an unknown NAME,
// more files than inputs, an unreadable file.
absl::StatusOr<OnnxStepInputs> OnnxInputs(const OnnxGraph& graph, const std::vector<std::string>& inputs);

// Uniform values in [-1, 1) (small non-negative integers for integer types); unknown dims
// become 1.
absl::StatusOr<Tensor> RandomTensor(DataType dt, const PartialShape& shape, std::mt19937* rng);

}  // namespace sluice

#endif  // SLUICE_TOOLS_MODEL_INPUTS_H_
