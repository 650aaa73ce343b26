// A structure-aware mutator for ONNX models: each step keeps the model parseable and
// plausible (known ops, existing value names) while setting something to an extreme: an
// attribute (0, -1, INT64_MIN/MAX, 2^62, NaN, huge or empty lists), a dim (0, -1, huge), an
// element type, an input's wiring, the node list or the opset version.
//
//   std::mt19937 rng(seed);
//   onnx::ModelProto m = SeedOnnxModel(rng());
//   MutateOnnxModel(&m, &rng);
#ifndef SLUICE_FUZZ_ONNX_MUTATOR_H_
#define SLUICE_FUZZ_ONNX_MUTATOR_H_

#include <random>

#include "onnx/onnx_pb.h"

namespace sluice {
namespace fuzz {

// A small valid model, one of a few chosen by `which`: for inputs that do not parse.
onnx::ModelProto SeedOnnxModel(unsigned which);

// One mutation of `model` in place.
void MutateOnnxModel(onnx::ModelProto* model, std::mt19937* rng);

// Copies a node, an initializer or an input of `from` into `into`.
void CrossOverOnnxModels(const onnx::ModelProto& from, onnx::ModelProto* into, std::mt19937* rng);

}  // namespace fuzz
}  // namespace sluice

#endif  // SLUICE_FUZZ_ONNX_MUTATOR_H_
